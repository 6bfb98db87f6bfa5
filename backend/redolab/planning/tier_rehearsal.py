"""The prediction for a rehearsal capped at a link tier (issue 55, item 6), pure: each of its T
connections (one a thread) is paced at the tier's IP rate / T (rehearsals.pacing), so each thread's
redo of the replayed window queues on its own and drains at that share's redo payload (the line rate x
the path's efficiency / 8, planning.tiers). The queue is the what-if's (rpo.at_rate): with one thread
the prediction is the what-if's lag for the window at the tier. Units: bit/s for line rates, bytes/s
for payload, seconds."""

from __future__ import annotations

from dataclasses import dataclass

from redolab.core.units import format_bit_rate, format_byte_rate, format_duration
from redolab.planning import rpo
from redolab.planning.rehearsal_model import replayed_series
from redolab.planning.tiers import Efficiency
from redolab.planning.transport import as_pieces
from redolab.redo.requirement import Requirement
from redolab.rehearsals.pacing import per_connection
from redolab.rehearsals.window import Window
from redolab.runs.measured import Source


@dataclass(frozen=True)
class TierDrain:
    """What each connection of a capped rehearsal carries: the tier's share, as line rate and redo payload."""

    cap_label: str
    cap_bits_per_second: int
    connections: int
    efficiency: Efficiency

    @property
    def share_bits_per_second(self) -> int:
        return per_connection(self.cap_bits_per_second, self.connections) or 0

    @property
    def bytes_per_second(self) -> float:
        """One connection's redo payload: its share of the line rate x efficiency / 8 (the pacing rate,
        share_bits_per_second, counts IP bytes: the same payload, rehearsals.pacing)."""
        return self.cap_bits_per_second / self.connections * self.efficiency.ratio / 8

    @property
    def tier(self) -> str:
        rate = format_bit_rate(self.cap_bits_per_second)
        return f"{self.cap_label} ({rate})" if self.cap_label and self.cap_label != rate else rate

    @property
    def label(self) -> str:
        """As the card says where the drain rate comes from."""
        shared = (
            f"{format_bit_rate(self.share_bits_per_second)} of IP packets a connection, the tier shared by "
            f"{self.connections}"
            if self.connections > 1
            else "one connection"
        )
        return (
            f"the {self.tier} tier, {shared}: {format_byte_rate(self.bytes_per_second)} of redo at "
            f"{self.efficiency.ratio * 100:.1f} % efficiency"
        )

    @property
    def source(self) -> Source:
        return Source(f"link tier {self.tier}")


@dataclass(frozen=True)
class TierLag:
    """The predicted worst lag of the replayed window at the tier: the largest thread's (the standby is
    only as recent as its most lagging thread)."""

    drain: TierDrain
    worst_lag_seconds: float
    worst_thread: int | None
    threads: tuple[tuple[int, rpo.AtRate], ...]


def tier_lag(
    requirement: Requirement,
    window: Window,
    drain: TierDrain,
    *,
    rpo_seconds: float | None,
    scale: float = 1.0,
    speedup: float = 1.0,
) -> TierLag:
    """Each thread's replayed redo (x scale, time / speedup) through rpo.at_rate at one connection's payload."""
    found = []
    for thread in window.threads:
        pieces = as_pieces(replayed_series(requirement, window, thread, scale=scale, speedup=speedup))
        if pieces is not None:
            found.append((thread, rpo.at_rate(pieces, drain.bytes_per_second, rpo_seconds or 1.0)))
    worst = max(found, key=lambda pair: pair[1].worst_lag_seconds, default=None)
    return TierLag(
        drain,
        worst[1].worst_lag_seconds if worst else 0.0,
        worst[0] if worst else None,
        tuple(found),
    )


@dataclass(frozen=True)
class TierRehearsal:
    """A finished capped rehearsal as the Rehearsal card lists it: measured worst lag beside the model's
    at the tier, and whether the RPO goal held."""

    rehearsal_id: int
    lag: TierLag
    measured_worst_lag_seconds: float
    drained: bool
    rpo_goal_seconds: float | None
    at_volumes: str = ""  # ' at x1.3 volumes' when the replay scaled the redo
    speedup: float = 1.0  # above 1: time compressed, K times the redo rate through the same tier

    @property
    def compressed(self) -> bool:
        return self.speedup > 1

    @property
    def held(self) -> bool | None:
        """The RPO held when every byte arrived and the worst lag stayed within the goal (None: no goal)."""
        if self.rpo_goal_seconds is None or self.compressed:
            return None
        return self.drained and self.measured_worst_lag_seconds <= self.rpo_goal_seconds

    @property
    def predicted_held(self) -> bool | None:
        if self.rpo_goal_seconds is None or self.compressed:
            return None
        return self.lag.worst_lag_seconds <= self.rpo_goal_seconds

    def row(self) -> tuple[str, str]:
        drain = self.lag.drain
        measured = format_duration(self.measured_worst_lag_seconds)
        said = (
            f"measured worst lag {measured}{self.at_volumes}"
            if self.drained
            else f"measured: the backlog had not drained when the replay stopped (worst lag {measured} by then)"
        )
        return (
            f"At the {drain.tier} tier (rehearsal #{self.rehearsal_id})",
            f"{said}, predicted {format_duration(self.lag.worst_lag_seconds)} ({drain.label}); {self.verdict}",
        )

    @property
    def verdict(self) -> str:
        """Whether the RPO goal held, and what the model said when it disagrees."""
        if self.rpo_goal_seconds is None:
            return "no RPO goal to judge"
        goal = format_duration(self.rpo_goal_seconds)
        if self.compressed:
            return (
                f"the {goal} RPO not judged: time compressed {self.speedup:g}x ({self.speedup:g} times the redo "
                "rate through the tier), a quick look"
            )
        said = f"the {goal} RPO {'held' if self.held else 'broke'}"
        if self.held != self.predicted_held:
            said += f" (the model said it {'would hold' if self.predicted_held else 'would break'})"
        return said

    def to_json(self) -> dict:
        drain = self.lag.drain
        return {
            "rehearsal_id": self.rehearsal_id,
            "cap_label": drain.cap_label,
            "cap_bits_per_second": drain.cap_bits_per_second,
            "connections": drain.connections,
            "per_connection_bits_per_second": drain.share_bits_per_second,
            "per_connection_payload_bytes_per_second": drain.bytes_per_second,
            "efficiency_ratio": drain.efficiency.ratio,
            "measured_worst_lag_seconds": self.measured_worst_lag_seconds,
            "predicted_worst_lag_seconds": self.lag.worst_lag_seconds,
            "drained": self.drained,
            "rpo_goal_seconds": self.rpo_goal_seconds,
            "rpo_held": self.held,
            "rpo_held_predicted": self.predicted_held,
            "speedup": self.speedup,
        }
