"""Words the plan's writers share (pure): a rate in both units, a verdict with where its capacity
comes from, and the runs left out of the plan that would measure what a card is missing."""

from __future__ import annotations

from redolab.core.units import format_byte_rate, format_byte_rate_in_mbit
from redolab.planning.facts import Capacity, Excluded
from redolab.planning.transport import Verdict

LOAD_SHARED = "a load beside a SYNC run: it shared the path with that run"  # why a `load` run is left out
LOOPBACK_LEFT_OUT = "not the link"  # how Selection.run_choice starts the reason of an unticked loopback run


def rate(bytes_per_second: float) -> str:
    """A rate as a redo volume per second and as a link rate."""
    return f"{format_byte_rate(bytes_per_second)} ({format_byte_rate_in_mbit(bytes_per_second)})"


def capacity_text(capacity: Capacity) -> str:
    """A capacity with where it comes from: 'nominal link 119.21 MiB/s (1,000 Mbit/s)', 'loopback run #4:
    this machine, not the link, capped at the nominal link: 119.21 MiB/s (...)'."""
    said = f"{capacity.label}: {rate(capacity.bytes_per_second)}"
    if capacity.capped_from_bytes_per_second is not None:
        said += f" (measured {format_byte_rate(capacity.capped_from_bytes_per_second)} on this machine)"
    return said


def verdict_text(verdict: Verdict, capacity: Capacity) -> str:
    word = "pass" if verdict.passed else "SHORT"
    return (
        f"{word}: needs {rate(verdict.required_bytes_per_second)}, {capacity_text(capacity)}, margin "
        f"{format_byte_rate(verdict.margin_bytes_per_second)} ({verdict.margin_percent:+,.1f} %)"
    )


def _ids(ids: list[int]) -> str:
    ids = sorted(ids)
    if len(ids) > 4:
        return f"#{ids[0]} to #{ids[-1]}"
    return ", ".join(f"#{i}" for i in ids)


def _why(excluded: Excluded) -> tuple[str, str]:
    """(group, how to include) for one left-out run; {them} is "them" or "it" by the group's count."""
    why = excluded.why
    if why.startswith(LOOPBACK_LEFT_OUT):
        return (
            "loopback (both ends on this machine, not the link)",
            "tick {them} in the evidence list to use {them} as a stand-in, capped at the nominal link",
        )
    if why.startswith("left out: tagged"):
        tags = why.removeprefix("left out: tagged ").split(" (")[0]
        shared = f" ({LOAD_SHARED})" if "load" in tags.split(", ") else ""
        return f"tagged {tags}{shared}", f"untick {tags} under 'Leave out runs tagged'"
    return "not chosen", "tick {them} in the evidence list"


def left_out(excluded: list[Excluded], what: str) -> str:
    """'12 ASYNC runs (#1 to #12) exist but are left out: loopback (...); tick them ...', or '' when
    no left-out run would measure `what`."""
    groups: dict[tuple[str, str], list[int]] = {}
    for item in excluded:
        groups.setdefault(_why(item), []).append(item.run.id)
    said = []
    for (group, include), ids in groups.items():
        many = len(ids) > 1
        said.append(
            f"{len(ids)} {what} run{'s' if many else ''} ({_ids(ids)}) exist{'' if many else 's'} but "
            f"{'are' if many else 'is'} left out: {group}; {include.replace('{them}', 'them' if many else 'it')}"
        )
    return "; ".join(said)


def with_left_out(item: str, excluded: list[Excluded], what: str) -> str:
    """A missing item, followed by the left-out runs that would fill it."""
    found = left_out(excluded, what)
    return f"{item} ({found})" if found else item
