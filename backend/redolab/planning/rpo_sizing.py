"""The link for the RPO of an environment (pure): the stored redo series and the RPO goal through the
lag model (planning.rpo) for all threads together, each thread through its own measured stream, a
list of link tiers and an outage. Units in every JSON key; bytes are redo payload, bits the line rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redolab.core.units import format_bit_rate, format_duration
from redolab.planning import rpo
from redolab.planning.facts import Capacity, Facts, Measurements
from redolab.planning.tiers import Efficiency, catalogue_tiers
from redolab.planning.tiers import efficiency as efficiency_of
from redolab.planning.transport import Pieces, pieces_from_arrays, pieces_of
from redolab.redo.requirement import Requirement, ThreadNeed
from redolab.redo.windows import series_arrays

DEFAULT_OUTAGE_SECONDS = 3600.0
GRANULARITY_SEEN_SECONDS = 60.0  # pieces up to a minute: per-minute data, nothing more to say


@dataclass(frozen=True)
class Target:
    share_of_time: float
    bytes_per_second: float  # redo payload, for the history as recorded
    headroom_ratio: float
    efficiency: float
    reserved_share: float = 0.0  # of the link, kept for other traffic

    @property
    def with_headroom_bytes_per_second(self) -> float:
        return self.bytes_per_second * (1 + self.headroom_ratio)

    @property
    def bits_per_second(self) -> float:
        """The line rate that carries the payload with headroom, after efficiency, with the reserved
        share left to other traffic."""
        return self.with_headroom_bytes_per_second * 8 / self.efficiency / (1 - self.reserved_share)

    def to_json(self) -> dict:
        return {
            "share_of_time": self.share_of_time,
            "bytes_per_second": self.bytes_per_second,
            "with_headroom_bytes_per_second": self.with_headroom_bytes_per_second,
            "bits_per_second": self.bits_per_second,
        }


@dataclass(frozen=True)
class TierResult:
    name: str
    bits_per_second: float
    at: rpo.AtRate  # drained at the tier's payload rate (bits x efficiency x (1 - reserved share) / 8)
    days_with_violations: int
    worst_days: tuple[rpo.ViolationDay, ...]

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "bits_per_second": self.bits_per_second,
            "payload_bytes_per_second": self.at.bytes_per_second,
            "share_of_time_within_rpo": self.at.share_of_time_within_rpo,
            "worst_lag_seconds": self.at.worst_lag_seconds,
            "worst_at": rpo.iso_time(self.at.worst_at),
            "violation_seconds": self.at.violation_seconds,
            "days_with_violations": self.days_with_violations,
            "worst_days": [d.to_json() for d in self.worst_days],
        }


@dataclass(frozen=True)
class ThreadStream:
    """One thread's series through the single stream a run measured from its primary node."""

    thread: int
    stream: Capacity
    needed_bytes_per_second: float  # the least one stream that holds the RPO every moment
    at: rpo.AtRate

    @property
    def holds(self) -> bool:
        return self.at.violation_seconds == 0

    @property
    def why(self) -> str:
        if self.holds:
            return ""
        return (
            f"thread {self.thread} alone needs one stream of {self.needed_bytes_per_second / 2**20:,.2f} MiB/s to "
            f"hold the RPO, and one stream from primary node {self.thread} carries "
            f"{self.stream.bytes_per_second / 2**20:,.2f} MiB/s ({self.stream.label}): each thread ships on one "
            "stream, so no larger link fixes it; raise the stream's own rate (socket buffers to the BDP) or "
            "lower the thread's redo"
        )

    def to_json(self) -> dict:
        return {
            "thread": self.thread,
            "stream_bytes_per_second": self.stream.bytes_per_second,
            "stream": self.stream.to_json(),
            "needed_bytes_per_second": self.needed_bytes_per_second,
            "worst_lag_seconds": self.at.worst_lag_seconds,
            "worst_at": rpo.iso_time(self.at.worst_at),
            "share_of_time_within_rpo": self.at.share_of_time_within_rpo,
            "holds_rpo": self.holds,
            "why": self.why or None,
        }


@dataclass(frozen=True)
class Outage:
    """How long the link or the standby may be down, and the catch-up after `outage_seconds`."""

    rpo_lost_after_seconds: float  # from an empty queue: the redo of the outage's first moment waits
    archive_free_bytes: float | None
    archive_full_after_seconds: float | None
    archive_note: str
    outage_seconds: float
    backlog_bytes: float
    catch_up_bytes_per_second: float | None
    catch_up_seconds: float | None
    catch_up_note: str

    def to_json(self) -> dict:
        return {
            "rpo_lost_after_seconds": self.rpo_lost_after_seconds,
            "archive_free_bytes": self.archive_free_bytes,
            "archive_full_after_seconds": self.archive_full_after_seconds,
            "archive_note": self.archive_note,
            "outage_seconds": self.outage_seconds,
            "backlog_bytes": self.backlog_bytes,
            "catch_up_bytes_per_second": self.catch_up_bytes_per_second,
            "catch_up_seconds": self.catch_up_seconds,
            "catch_up_note": self.catch_up_note,
        }


@dataclass(frozen=True)
class RpoSizing:
    rpo_seconds: float
    granularity_seconds: float
    counted_seconds: float  # the history's time, its gaps left out
    headroom_ratio: float
    efficiency: Efficiency
    targets: tuple[Target, ...]
    at_link: rpo.AtRate | None
    at_link_label: str  # where the link's rate comes from (measured run, nominal link)
    tiers: tuple[TierResult, ...]
    threads: tuple[ThreadStream, ...]
    outage: Outage
    reserved_share: float = 0.0  # of the link, kept for other traffic: links and tiers judged at the rest
    link_bits_per_second: float | None = None  # the judged link's whole rate, for the reserved share's words

    @property
    def reserved_note(self) -> str | None:
        """The reserved share in words ("20 % of the link reserved for other traffic: 800 Mbit/s of
        1 Gbit/s for redo"); None when nothing is reserved."""
        if not self.reserved_share:
            return None
        said = f"{self.reserved_share * 100:g} % of the link reserved for other traffic"
        whole = self.link_bits_per_second
        if whole:
            return f"{said}: {format_bit_rate(whole * (1 - self.reserved_share))} of {format_bit_rate(whole)} for redo"
        return f"{said}: tiers judged at {(1 - self.reserved_share) * 100:g} % of their rate"

    @property
    def every_moment(self) -> Target:
        return self.targets[0]

    @property
    def granularity_note(self) -> str | None:
        return granularity_note(self.granularity_seconds)

    @property
    def streams_short(self) -> list[ThreadStream]:
        return [t for t in self.threads if not t.holds]

    def to_json(self) -> dict:
        at = self.at_link
        return {
            "rpo_seconds": self.rpo_seconds,
            "granularity_seconds": self.granularity_seconds,
            "granularity_note": self.granularity_note,
            "counted_seconds": self.counted_seconds,
            "headroom_ratio": self.headroom_ratio,
            "efficiency_ratio": self.efficiency.ratio,
            "efficiency_basis": self.efficiency.basis,
            "efficiency_measured": self.efficiency.measured,
            "targets": [t.to_json() for t in self.targets],
            "at_link": {**at.to_json(), "label": self.at_link_label} if at is not None else None,
            "tiers": [t.to_json() for t in self.tiers],
            "threads": [t.to_json() for t in self.threads],
            "outage": self.outage.to_json(),
            "reserved_share": self.reserved_share,
            "reserved_note": self.reserved_note,
        }


def granularity_note(seconds: float) -> str | None:
    """What a lag figure from pieces this long cannot see (None for per-minute data or finer)."""
    if seconds <= GRANULARITY_SEEN_SECONDS:
        return None
    minutes = seconds / 60
    said = f"{minutes:g}-minute" if minutes == int(minutes) else format_duration(seconds)
    return (
        f"at {said} granularity: bursts inside a snapshot are not seen; import V$ARCHIVED_LOG or AWR SYSMETRIC "
        "history for per-minute data"
    )


def default_tiers(environment=None) -> tuple[tuple[str, float], ...]:
    """(name, bits per second) of the tiers the what-if weighs: the environment's own, else the
    catalogue's plain steps (planning.tiers)."""
    return tuple((tier.name, float(tier.bits_per_second)) for tier in catalogue_tiers(environment))


def path_efficiency(measured: Measurements) -> Efficiency:
    """The path's efficiency (tiers.efficiency) from the best run over the link, not loopback."""
    run, link = measured.best_aggregate, measured.link_bytes_per_second
    if run is None or run.loopback or not link:
        return efficiency_of(None, None)
    return efficiency_of(run.bytes_per_second, link * 8, run=f"run #{run.id}")


_ARRAYS: dict[int, tuple[list, tuple]] = {}  # id(a thread's series) -> (the series, its arrays)
_ARRAYS_KEPT = 64


def thread_arrays(need: ThreadNeed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A thread's series as arrays (redo.windows.series_arrays): as stored, else made and kept while
    the requirement is (one built in this process, not read back)."""
    if need.replay_arrays is not None:
        return need.replay_arrays
    series = need.replay
    found = _ARRAYS.get(id(series))
    if found is not None and found[0] is series:
        return found[1]
    arrays = series_arrays(series)
    if len(_ARRAYS) >= _ARRAYS_KEPT:
        _ARRAYS.clear()
    _ARRAYS[id(series)] = (series, arrays)
    return arrays


def _cuts(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A thread's bounds in order: pieces that follow each other (logs, samples) cut once between."""
    if np.array_equal(ends[:-1], starts[1:]):
        return np.append(starts, ends[-1:])
    return np.concatenate((starts, ends))


def sorted_union(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct values of arrays that are each sorted or two sorted runs, in order. Threads cut at
    the same times (per-minute samples, AWR snapshots) are merged once, and a stable sort (timsort) of
    a few sorted runs takes a pass or two: a year of minutes on 8 threads in 0.004 s where np.unique
    sorted it all from scratch in 1.2 s (0.05 s against 0.41 s where each thread cuts elsewhere)."""
    distinct: list[np.ndarray] = []
    for part in parts:
        if not any(len(part) == len(seen) and np.array_equal(part, seen) for seen in distinct):
            distinct.append(part)
    merged = np.concatenate(distinct)
    merged.sort(kind="stable")
    keep = np.empty(len(merged), bool)
    keep[:1] = True
    np.not_equal(merged[1:], merged[:-1], out=keep[1:])
    return merged[keep]


def summed_pieces(requirement: Requirement) -> Pieces | None:
    """All threads' series added up over the stretches where every timed thread has data (the
    requirement's spans; the stored requirement keeps the threads' series, not the sum): counted where a
    thread has a piece, the time between stretches a gap."""
    spans = np.array([(s.start.timestamp(), s.end.timestamp()) for s in requirement.spans]).reshape(-1, 2)
    threads = [thread_arrays(n) for n in requirement.threads.values() if n.timed]
    if not len(spans) or not threads:
        return None
    bounds = sorted_union([spans.ravel()] + [_cuts(starts, ends) for starts, ends, _ in threads])
    bounds = bounds[(bounds >= spans[0, 0]) & (bounds <= spans[-1, 1])]
    if len(bounds) < 2:
        return None
    middle = (bounds[:-1] + bounds[1:]) / 2
    span = np.searchsorted(spans[:, 0], middle, "right") - 1
    inside = (span >= 0) & (middle < spans[np.maximum(span, 0), 1])
    total, covered = np.zeros(len(middle)), np.zeros(len(middle), bool)
    for starts, ends, rates in threads:
        k = np.searchsorted(starts, middle, "right") - 1
        hit = (k >= 0) & (middle < ends[np.maximum(k, 0)])
        total += np.where(hit, rates[np.maximum(k, 0)], 0.0)
        covered |= hit
    counted = inside & covered
    return pieces_of(bounds, np.where(counted, total, 0.0), counted)


def _outage(pieces: Pieces, rpo_seconds: float, rate: float | None, free: float | None, seconds: float) -> Outage:
    if free is None:
        full, note = None, "unknown: no free space of the archive destination given (redolab plan rpo --archive-free)"
    else:
        full = rpo.fills_after(pieces, free)
        note = (
            "the worst stretch of the history of that length fills it"
            if full is not None
            else ("the whole history generates less than the free space")
        )
    backlog, catch_up, said = rpo.worst_window(pieces, seconds)[0], None, "no link rate to catch up at"
    if rate is not None:
        backlog, catch_up = rpo.catch_up_seconds(pieces, rate, seconds)
        said = (
            "the backlog drains at the link's rate above the redo that follows; gap resolution ships it over "
            "several archiver connections only with MAX_CONNECTIONS above 1 (else one stream per thread)"
        )
        if catch_up is None:
            said = "does not catch up before the history ends: the link is below the redo that follows"
    span = float(pieces.bounds[-1] - pieces.bounds[0])
    if seconds > span:  # the backlog can hold no more than the history generated
        catch_up, said = (
            None,
            (
                f"the outage ({format_duration(seconds)}) is longer than the history ({format_duration(span)}): "
                "the backlog counts the whole history only; import a longer history or give a shorter outage"
            ),
        )
    return Outage(rpo_seconds, free, full, note, seconds, backlog, rate, catch_up, said)


def _thread_streams(requirement: Requirement, measured: Measurements, rpo_seconds: float) -> tuple[ThreadStream, ...]:
    found = []
    for need in sorted(requirement.threads.values(), key=lambda t: t.thread):
        run = measured.single.get(need.thread)
        pieces = pieces_from_arrays(*thread_arrays(need)) if need.timed and run is not None else None
        if pieces is None:
            continue
        stream = measured.capacity(run)
        needed = rpo.least_for_every_moment(pieces, rpo_seconds)
        at = rpo.at_rate(pieces, stream.bytes_per_second, rpo_seconds)
        found.append(ThreadStream(need.thread, stream, needed, at))
    return tuple(found)


def size_for_rpo(
    pieces: Pieces,
    *,
    rpo_seconds: float,
    headroom_ratio: float,
    efficiency: Efficiency,
    link: Capacity | None,
    tiers: tuple[tuple[str, float], ...] | None = None,
    zone: str = "UTC",
    threads: tuple[ThreadStream, ...] = (),
    archive_free_bytes: float | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
    reserved_share: float = 0.0,
    link_bits_per_second: float | None = None,
) -> RpoSizing:
    """Every figure of the link for the RPO from one summed series (`tiers`: (name, bits per second),
    default_tiers() when not given). `reserved_share` of every link and tier (0 to 0.9) is kept for
    other traffic: redo is judged at the rest."""
    if rpo_seconds <= 0:
        raise ValueError("the RPO must be positive")
    if not 0 <= reserved_share <= 0.9:
        raise ValueError("the reserved share of the link is 0 to 90 %")
    for_redo = 1 - reserved_share
    tiers = default_tiers() if tiers is None else tiers
    every = rpo.least_for_every_moment(pieces, rpo_seconds)
    targets = tuple(
        Target(
            share,
            rpo.least_for_share(pieces, rpo_seconds, share, every),
            headroom_ratio,
            efficiency.ratio,
            reserved_share,
        )
        for share in rpo.SHARES
    )
    rate = link.bytes_per_second * for_redo if link is not None else None
    at_link = rpo.at_rate(pieces, rate, rpo_seconds) if rate is not None else None
    days = rpo.local_days(pieces, zone)
    what_if = []
    for name, bits in tiers:
        payload = bits * efficiency.ratio * for_redo / 8
        drain = rpo.drained(pieces, payload, rpo_seconds)
        count, worst = rpo.violation_days(pieces, payload, rpo_seconds, days, drain)
        what_if.append(TierResult(name, bits, rpo.at_rate(pieces, payload, rpo_seconds, drain), count, tuple(worst)))
    return RpoSizing(
        rpo_seconds,
        rpo.granularity_seconds(pieces),
        rpo.counted_seconds(pieces),
        headroom_ratio,
        efficiency,
        targets,
        at_link,
        link.label if link is not None else "",
        tuple(what_if),
        threads,
        _outage(pieces, rpo_seconds, rate, archive_free_bytes, outage_seconds),
        reserved_share,
        link_bits_per_second if link_bits_per_second else (link.bytes_per_second * 8 if link is not None else None),
    )


_KEPT: dict[tuple, tuple[Requirement, RpoSizing]] = {}  # id(requirement), inputs -> (requirement, sizing)
_KEPT_MAX = 32


def plan_rpo_sizing(
    facts: Facts,
    requirement: Requirement | None,
    measured: Measurements,
    *,
    rpo_seconds: float | None = None,
    tiers=None,
    archive_free_bytes: float | None = None,
    outage_seconds: float = DEFAULT_OUTAGE_SECONDS,
) -> RpoSizing | None:
    """The plan's link for the RPO (the environment's goal unless `rpo_seconds`), at the link the
    transport card judges (measured, else nominal); None without an RPO or a summed series with times.
    Kept per stored requirement and inputs: the plan is shown often, its history changes rarely."""
    goal = rpo_seconds if rpo_seconds is not None else facts.rpo_goal_seconds
    if requirement is None or not goal or not requirement.spans:
        return None
    tiers = tuple(tiers) if tiers is not None else default_tiers()
    link, efficiency = measured.aggregate(), path_efficiency(measured)
    streams = tuple(sorted((t, r.id, r.bytes_per_second) for t, r in measured.single.items()))
    said = (link.bytes_per_second, link.label) if link is not None else None
    reserved = facts.link_reserved_share
    key = (id(requirement), goal, said, efficiency, tiers, facts.time_zone, archive_free_bytes, outage_seconds, streams)
    key += (reserved, facts.link_bits_per_second)
    kept = _KEPT.get(key)
    if kept is not None and kept[0] is requirement:
        return kept[1]
    pieces = summed_pieces(requirement)
    if pieces is None:
        return None
    sizing = size_for_rpo(
        pieces,
        rpo_seconds=goal,
        headroom_ratio=requirement.headroom_ratio,
        efficiency=efficiency,
        link=link,
        tiers=tiers,
        zone=facts.time_zone,
        threads=_thread_streams(requirement, measured, goal),
        archive_free_bytes=archive_free_bytes,
        outage_seconds=outage_seconds,
        reserved_share=reserved,
        link_bits_per_second=facts.link_bits_per_second,
    )
    if len(_KEPT) >= _KEPT_MAX:
        _KEPT.clear()
    _KEPT[key] = (requirement, sizing)
    return sizing
