"""The Db2 HADR standby's replay from db2pd -hadr captures (pure): how fast it replays when it has log
waiting, and the most log received but not yet replayed, which a takeover replays before the standby
opens. Units: bytes, seconds.

STANDBY_REPLAY_LOG_POS is the standby's replay position in the log stream and STANDBY_RECV_REPLAY_GAP
the log it has received (in its receive buffer and, with HADR_SPOOL_LIMIT, its spool) but not replayed
(IBM Db2 monitor elements, MON_GET_HADR). Between two captures of one pair the replay advanced by the
difference of the positions. Only where the gap was above zero at both captures was replay busy the
whole time: that difference over the time is the rate replay can sustain. Where it never waited, replay
kept up with everything it got, and the captures show only a lower bound of what it can do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from redolab.hadr.pairs import pair_key


@dataclass(frozen=True)
class Replay:
    busy_rate_bytes_per_second: float | None  # the fastest replay while it had log waiting at both ends
    busy_between: tuple[datetime, datetime] | None
    seen_rate_bytes_per_second: float | None  # the fastest replay between any two captures: a lower bound
    largest_gap_bytes: int | None  # STANDBY_RECV_REPLAY_GAP, the largest captured
    largest_gap_at: datetime | None
    spool_limit_pages: int | None  # HADR_SPOOL_LIMIT as captured (0: no spooling, -1: unlimited)

    def to_json(self) -> dict:
        return {
            "busy_rate_bytes_per_second": self.busy_rate_bytes_per_second,
            "seen_rate_bytes_per_second": self.seen_rate_bytes_per_second,
            "largest_recv_replay_gap_bytes": self.largest_gap_bytes,
            "largest_recv_replay_gap_at": self.largest_gap_at.isoformat() if self.largest_gap_at else None,
            "spool_limit_pages": self.spool_limit_pages,
        }


def replay_of(rows) -> Replay | None:
    """From (time, sample) rows in time order (HadrSample or db2pd.Sample); None without replay fields."""
    timed = [(at, s) for at, s in rows if getattr(s, "replay_position", None) is not None]
    gaps = [(s.recv_replay_gap_bytes, at) for at, s in rows if getattr(s, "recv_replay_gap_bytes", None) is not None]
    if not timed and not gaps:
        return None
    busy, busy_between, seen = None, None, None
    last: dict = {}
    for at, sample in timed:
        key = (pair_key(sample), sample.standby_id, sample.role)
        before = last.get(key)
        last[key] = (at, sample)
        if before is None or at <= before[0] or sample.replay_position <= before[1].replay_position:
            continue
        rate = (sample.replay_position - before[1].replay_position) / (at - before[0]).total_seconds()
        seen = max(seen or 0.0, rate)
        if (
            (before[1].recv_replay_gap_bytes or 0) > 0
            and (sample.recv_replay_gap_bytes or 0) > 0
            and rate > (busy or 0)
        ):
            busy, busy_between = rate, (before[0], at)
    largest = max(gaps, key=lambda pair: pair[0], default=(None, None))
    limits = [s.spool_limit_pages for _, s in rows if getattr(s, "spool_limit_pages", None) is not None]
    return Replay(busy, busy_between, seen, largest[0], largest[1], limits[-1] if limits else None)
