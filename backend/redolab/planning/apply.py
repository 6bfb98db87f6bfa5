"""The apply side (pure): does the standby apply what the link delivers, how far behind the primary its
applied data falls (apply lag), how long a failover must apply before it opens (RTO), and where the RPO
goal lands with Fast-Start Failover. Units: bytes, seconds, bytes per second.

The queue model is the transport lag's (planning.rpo, seed 003): the history's summed redo series
(every thread's redo is applied by the standby) drained first by the link, then by apply. For fluid
queues in tandem, redo generated at a moment is applied when a single queue drained at the smaller of
the two rates would have drained it: the apply lag is the replay at min(link, apply rate), so it is never
below the transport lag of the same series. What waits in the apply stage alone is the difference of the
two backlogs; a failover applies it at the apply rate before the standby opens (the RTO's part that
redolab can size: the role change itself adds its own seconds).

Oracle: the apply rate is V$RECOVERY_PROGRESS "Active Apply Rate" on the standby (KB/sec); with
multi-instance redo apply (MIRA, 12.2 and later on a RAC standby) it is the instances' sum. Db2 HADR:
the standby's replay rate; the receive buffer and spool hold what waits, and a takeover replays it.
FastStartFailoverLagLimit (Broker property, seconds, Maximum Performance only): the observer does not
fail over to a standby that lags more, so it is where the RPO goal lands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redolab.planning import rpo
from redolab.planning.transport import Pieces

FSFO_MIN_LAG_LIMIT_SECONDS = 5  # Broker: FastStartFailoverLagLimit's smallest value (default 30)


@dataclass(frozen=True)
class ApplySide:
    apply_bytes_per_second: float
    apply_source: str  # "entered on the environment" | "pasted V$RECOVERY_PROGRESS (date)"
    peak_bytes_per_second: float  # the summed peak (every thread's redo is applied on the standby)
    required_bytes_per_second: float  # the peak with the plan's headroom
    link_bytes_per_second: float | None  # what the link delivers to the standby (None: not known)
    transport_lag_seconds: float | None  # the summed series' worst lag through the link alone
    apply_lag_seconds: float | None  # the worst lag from generated to applied
    apply_backlog_seconds: float | None  # the worst apply-stage backlog, at the apply rate: failover applies it
    rto_goal_seconds: float | None
    rpo_goal_seconds: float | None

    @property
    def keeps_up(self) -> bool:
        return self.apply_bytes_per_second >= self.peak_bytes_per_second

    @property
    def within_headroom(self) -> bool:
        return self.apply_bytes_per_second >= self.required_bytes_per_second

    @property
    def rto_met(self) -> bool | None:
        if self.rto_goal_seconds is None or self.apply_backlog_seconds is None:
            return None
        return self.apply_backlog_seconds <= self.rto_goal_seconds

    def to_json(self) -> dict:
        return {
            "apply_bytes_per_second": self.apply_bytes_per_second,
            "apply_source": self.apply_source,
            "peak_bytes_per_second": self.peak_bytes_per_second,
            "required_bytes_per_second": self.required_bytes_per_second,
            "link_bytes_per_second": self.link_bytes_per_second,
            "keeps_up": self.keeps_up,
            "transport_lag_seconds": self.transport_lag_seconds,
            "apply_lag_seconds": self.apply_lag_seconds,
            "apply_backlog_seconds": self.apply_backlog_seconds,
            "rto_goal_seconds": self.rto_goal_seconds,
            "rto_met": self.rto_met,
        }


@dataclass(frozen=True)
class Lags:
    transport_seconds: float
    apply_seconds: float
    apply_backlog_seconds: float


def lags(pieces: Pieces, *, link_bytes_per_second: float, apply_bytes_per_second: float) -> Lags:
    """The worst transport lag (the series through the link), the worst apply lag (through the link, then
    apply: a single queue at the smaller rate) and the worst apply-stage backlog in seconds of apply."""
    combined = min(link_bytes_per_second, apply_bytes_per_second)
    through_link, _ = rpo.drained(pieces, link_bytes_per_second, 0.0)
    through_both, _ = rpo.drained(pieces, combined, 0.0)
    waiting = np.maximum(through_both - through_link, 0.0)
    return Lags(
        float(through_link.max(initial=0.0)) / link_bytes_per_second,
        float(through_both.max(initial=0.0)) / combined,
        float(waiting.max(initial=0.0)) / apply_bytes_per_second,
    )


def fsfo_lag_limit(rpo_goal_seconds: float | None) -> int | None:
    """FastStartFailoverLagLimit from the RPO goal (whole seconds, at least the Broker's minimum)."""
    if rpo_goal_seconds is None:
        return None
    return max(FSFO_MIN_LAG_LIMIT_SECONDS, int(rpo_goal_seconds))
