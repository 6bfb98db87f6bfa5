"""Judging a watch (pure): one check's verdict against what was required, and the watch's state from its
last N verdicts. A state changes only when M of the last N judged checks agree on another state, and
returns to OK the same way; skipped checks (busy host, redolab down, a run that did not measure) are
not verdicts at all. Units: bytes per second."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from redolab.core.units import format_byte_rate
from redolab.watches.models import Verdict, WatchState

_SEVERITY = {Verdict.ok: 0, Verdict.at_risk: 1, Verdict.failing: 2}


@dataclass(frozen=True)
class Required:
    """What a path must carry, and why (the figure's basis, for the page and the notification)."""

    bytes_per_second: float
    basis: str


def required_for(
    *,
    thread_required: Sequence[tuple[int, float]],
    summed_required: float | None,
    all_node_pairs: bool,
    threshold: float | None,
) -> Required | None:
    """The watch's threshold when set; else for all node pairs at once the summed requirement, and for one
    pair the largest thread's (one pair carries one instance's redo). None: no redo history yet."""
    if threshold is not None:
        return Required(threshold, f"the watch's threshold of {format_byte_rate(threshold)}")
    if all_node_pairs and summed_required is not None:
        return Required(summed_required, "the summed peak of every thread + headroom")
    if thread_required:
        thread, largest = max(thread_required, key=lambda item: item[1])
        return Required(largest, f"thread {thread}'s peak + headroom (the busiest thread)")
    return None


def verdict_of(measured: float | None, required: float | None, margin_ratio: float) -> Verdict:
    """FAILING below the requirement, AT RISK below it plus the margin, else OK; no measurement or no
    requirement: skipped."""
    if measured is None or required is None or required <= 0:
        return Verdict.skipped
    if measured < required:
        return Verdict.failing
    if measured / required - 1 < margin_ratio - 1e-9:  # the headroom under the margin (1e-9: float rounding)
        return Verdict.at_risk
    return Verdict.ok


def next_state(current: WatchState, verdicts: Sequence[Verdict], *, agree_m: int, of_n: int) -> WatchState:
    """The state after the last `of_n` judged verdicts (oldest first; skipped ones are left out before
    counting): FAILING when M of them failed, AT RISK when M were at risk or worse, OK when M were OK;
    otherwise the state stays. With fewer than M verdicts the state stays (unknown at first)."""
    judged = [v for v in verdicts if v is not Verdict.skipped][-of_n:]
    if len(judged) < agree_m:
        return current
    failing = sum(1 for v in judged if v is Verdict.failing)
    at_risk = sum(1 for v in judged if _SEVERITY[v] >= 1)
    ok = sum(1 for v in judged if v is Verdict.ok)
    if failing >= agree_m:
        return WatchState.failing
    if at_risk >= agree_m:
        return WatchState.at_risk
    if ok >= agree_m:
        return WatchState.ok
    return current


def state_history(verdicts: Sequence[Verdict | None], *, agree_m: int, of_n: int) -> list[WatchState]:
    """The state after each check (oldest first), replayed from the verdicts as next_state moves it: the
    bands of the watch's chart. Only the last `of_n` judged verdicts count (next_state leaves the skipped
    ones out), so only they are kept: linear in the checks."""
    states, state = [], WatchState.unknown
    recent: deque[Verdict] = deque(maxlen=of_n)
    for verdict in verdicts:
        if verdict is not None and verdict is not Verdict.skipped:
            recent.append(verdict)
        state = next_state(state, list(recent), agree_m=agree_m, of_n=of_n)
        states.append(state)
    return states
