"""HADR pairs as db2pd -hadr captures show them (pure): which captures belong to one pair, the gap
now and its running average, the HADR wait per log write, and the settings each side reports.

A pair is the log shipping channel IBM identifies by its two ends: PRIMARY_MEMBER_HOST,
PRIMARY_INSTANCE, PRIMARY_MEMBER and STANDBY_MEMBER_HOST, STANDBY_INSTANCE, STANDBY_MEMBER, for one
database. A capture on the primary and one on the standby show the same pair from its two sides:
one pair, counted once. Captures without the hosts (an old capture, a cut one) fall back to the
database and STANDBY_ID.

Figures and their bases (IBM's monitor elements):
- the current gap is PRIMARY_LOG_POS - STANDBY_LOG_POS at one capture; HADR_LOG_GAP is a running
  average of it, shown as such and never as the largest gap;
- the HADR wait per log write is LOG_HADR_WAIT_ACCUMULATED / LOG_HADR_WAIT_COUNT over the database's
  lifetime, or the change of both between two captures (over the captured period), or
  LOG_HADR_WAIT_RECENT_AVG (recent); under MIN_WAIT_COUNT writes no per-write figure is given: a
  count of 1 with minutes accumulated is one stall, not a per-commit cost.
Units: bytes, seconds.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, field
from datetime import datetime

from redolab.core.units import format_count

MIN_WAIT_COUNT = 100  # log writes: fewer give no per-write figure
SERIES_BREAK_SECONDS = (
    3600.0  # captures of one pair further apart than this (and 20 x their spacing) start a new series
)


@dataclass(frozen=True)
class PairKey:
    """The two hosts and members of the channel (hosts lower-case) for one database. Instances are
    not part of it: before 10.1 each side names only the other's instance."""

    database: str
    primary_host: str | None = None
    primary_member: int | None = None
    standby_host: str | None = None
    standby_member: int | None = None
    standby_id: int | None = None  # only when the hosts are not known


def _end(instance: str | None, host: str, member: int | None) -> str:
    text = f"{instance}@{host}" if instance else host
    return text if member is None else f"{text} member {member}"


def pair_key(sample) -> PairKey:
    """The pair a sample shows, the same from the primary's and the standby's side."""
    database = (sample.database or "").upper()
    if sample.primary_host and sample.standby_host:
        return PairKey(
            database,
            sample.primary_host.lower(),
            sample.primary_member,
            sample.standby_host.lower(),
            sample.standby_member,
        )
    return PairKey(database, standby_id=sample.standby_id)


@dataclass(frozen=True)
class Mismatch:
    setting: str
    primary: str
    standby: str
    why: str

    @property
    def text(self) -> str:
        sides = f"{self.primary} on the primary side, {self.standby} on the standby side"
        return f"{self.setting} differs: {sides}. {self.why}"


@dataclass(frozen=True)
class WaitFigure:
    """One HADR wait per log write figure and what it is computed from."""

    basis: str  # "lifetime", "captured period", "recent"
    seconds_per_write: float | None
    writes: int | None
    explanation: str


@dataclass
class PairView:
    key: PairKey
    samples: list = field(default_factory=list)  # (time, sample), in time order
    primary_instance: str | None = None
    standby_instance: str | None = None
    sides: set[str] = field(default_factory=set)
    largest_current_gap: tuple[int, datetime, str] | None = None  # bytes, when, which side
    latest_current_gap_bytes: int | None = None
    largest_running_average_bytes: float | None = None
    latest_running_average_bytes: float | None = None
    waits: list[WaitFigure] = field(default_factory=list)
    settings: dict[str, dict[str, object]] = field(default_factory=dict)  # side -> setting -> latest value
    mismatches: list[Mismatch] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        key = self.key
        if key.primary_host is None or key.standby_host is None:
            which = f"standby {key.standby_id}" if key.standby_id is not None else "its standby"
            return f"{key.database}, {which} (the capture names no hosts)"
        primary = _end(self.primary_instance, key.primary_host, key.primary_member)
        return f"{key.database}: {primary} → {_end(self.standby_instance, key.standby_host, key.standby_member)}"

    @property
    def sides_text(self) -> str:
        if {"PRIMARY", "STANDBY"} <= self.sides:
            return "primary and standby sides"
        if not self.sides:
            return "no side named (HADR_ROLE neither PRIMARY nor STANDBY)"
        return " and ".join(f"{side.lower()} side" for side in sorted(self.sides)) + " only"

    def side_value(self, name: str, prefer: str = "PRIMARY"):
        """A setting as the preferred side reports it, else as the other does."""
        for side in (prefer, "STANDBY" if prefer == "PRIMARY" else "PRIMARY"):
            value = self.settings.get(side, {}).get(name)
            if value is not None:
                return value
        return None


# (label shown, attribute, how the value is written, why a mismatch matters)
COMPARED = (
    ("HADR_TIMEOUT", "hadr_timeout_seconds", "{:,} s",
     "Db2 refuses to connect a pair whose HADR_TIMEOUT differs; set the same value on both databases."),
    ("PEER_WINDOW", "peer_window_seconds", "{:,} s",
     "the primary's HADR_PEER_WINDOW is the one that applies while it is primary; after a takeover the other "
     "one does: set the same value on both."),
    ("HEARTBEAT_INTERVAL", "heartbeat_interval_seconds", "{:,} s",
     "it follows HADR_TIMEOUT and HADR_PEER_WINDOW; a difference means those differ."),
    ("HADR_SYNCMODE", "sync_mode", "{}", "after a takeover the other database's mode applies."),
    ("SOCK_SEND_BUF granted", "sock_send_actual_bytes", "{:,} bytes",
     "after a takeover the other side sends with its buffer: set DB2_HADR_SOSNDBUF (and the kernel limits) alike."),
    ("SOCK_RECV_BUF granted", "sock_recv_actual_bytes", "{:,} bytes",
     "after a takeover the other side receives with its buffer: set DB2_HADR_SORCVBUF (and the kernel limits) "
     "alike."),
)  # fmt: skip
_OTHER_SETTINGS = (
    "sock_send_requested_bytes",
    "sock_recv_requested_bytes",
    "recv_buf_pages",
    "heartbeats_missed",
    "heartbeats_expected",
    "peer_wait_limit_seconds",
)


def pair_views(rows: list[tuple[datetime, object]]) -> list[PairView]:
    """Every pair the samples show, each with its figures, in the order first captured. `rows`:
    (time, sample) in time order."""
    views: dict[PairKey, PairView] = {}
    for at, sample in rows:
        key = pair_key(sample)
        view = views.setdefault(key, PairView(key))
        view.samples.append((at, sample))
        view.primary_instance = sample.primary_instance or view.primary_instance
        view.standby_instance = sample.standby_instance or view.standby_instance
        if sample.role in ("PRIMARY", "STANDBY"):
            view.sides.add(sample.role)
    for view in views.values():
        _gaps(view)
        _latest_settings(view)
        view.mismatches = _mismatches(view)
        view.warnings = _side_warnings(view)
        view.waits = wait_figures(
            [sample for _, sample in view.samples if sample.role == "PRIMARY"] or [sample for _, sample in view.samples]
        )
    return list(views.values())


def _gaps(view: PairView) -> None:
    for at, sample in view.samples:
        gap = sample.current_gap_bytes
        if gap is not None:
            view.latest_current_gap_bytes = gap
            if view.largest_current_gap is None or gap > view.largest_current_gap[0]:
                view.largest_current_gap = (gap, at, sample.role.lower())
        if sample.log_gap_bytes is not None:
            view.latest_running_average_bytes = sample.log_gap_bytes
            view.largest_running_average_bytes = max(view.largest_running_average_bytes or 0.0, sample.log_gap_bytes)


def _latest_settings(view: PairView) -> None:
    for _, sample in view.samples:
        side = view.settings.setdefault(sample.role, {})
        for name in [attribute for _, attribute, _, _ in COMPARED] + list(_OTHER_SETTINGS):
            value = getattr(sample, name, None)
            if value is not None:
                side[name] = value


def _mismatches(view: PairView) -> list[Mismatch]:
    primary, standby = view.settings.get("PRIMARY", {}), view.settings.get("STANDBY", {})
    found = []
    for label, name, shown, why in COMPARED:
        if primary.get(name) is not None and standby.get(name) is not None and primary[name] != standby[name]:
            found.append(Mismatch(label, shown.format(primary[name]), shown.format(standby[name]), why))
    return found


def _side_warnings(view: PairView) -> list[str]:
    """Per side: heartbeats missed, and socket buffers granted below what DB2_HADR_SOSNDBUF / SORCVBUF asked."""
    warnings = []
    for side, values in sorted(view.settings.items()):
        missed, expected = values.get("heartbeats_missed"), values.get("heartbeats_expected")
        if missed:
            share = f" ({missed / expected * 100:.1f} %)" if expected else ""
            warnings.append(
                f"{side.lower()} side: HEARTBEAT_MISSED {missed:,} of HEARTBEAT_EXPECTED {expected or 0:,}{share} "
                "since activation: the link dropped or delayed heartbeats; HADR_TIMEOUT is how long that may last."
            )
        for what, asked, granted, variable in (
            ("send", "sock_send_requested_bytes", "sock_send_actual_bytes", "DB2_HADR_SOSNDBUF"),
            ("receive", "sock_recv_requested_bytes", "sock_recv_actual_bytes", "DB2_HADR_SORCVBUF"),
        ):
            if values.get(asked) and values.get(granted) is not None and values[granted] < values[asked]:
                warnings.append(
                    f"{side.lower()} side: the socket {what} buffer granted ({values[granted]:,} bytes) is below "
                    f"{variable} ({values[asked]:,} bytes): the kernel's maximum (net.core.{what[0]}mem_max) caps it."
                )
    return warnings


def wait_figures(samples: list) -> list[WaitFigure]:
    """The HADR wait per log write: over the lifetime (the latest capture's counters), over the
    captured period (their change between the first and the latest capture) and recent."""
    timed = [s for s in samples if s.wait_count is not None and s.wait_accumulated_seconds is not None]
    if not timed:
        return []
    first, latest = timed[0], timed[-1]
    lifetime = "LOG_HADR_WAIT_ACCUMULATED / LOG_HADR_WAIT_COUNT since the database was activated"
    figures = [_per_write("lifetime", latest.wait_accumulated_seconds, latest.wait_count, lifetime)]
    writes = latest.wait_count - first.wait_count
    waited = latest.wait_accumulated_seconds - first.wait_accumulated_seconds
    if latest is not first and writes >= 0 and waited >= 0:
        figures.append(
            _per_write(
                "captured period",
                waited,
                writes,
                "the change of LOG_HADR_WAIT_ACCUMULATED and LOG_HADR_WAIT_COUNT between the first "
                "and the latest capture",
            )
        )
    recent = latest.wait_recent_avg_seconds
    if recent is not None:
        if latest.wait_count < MIN_WAIT_COUNT:
            why = (
                f"LOG_HADR_WAIT_RECENT_AVG {recent:g} s averages "
                f"{format_count(latest.wait_count, 'log write')} at most: "
                f"under {MIN_WAIT_COUNT} writes, no per-write figure"
            )
            figures.append(WaitFigure("recent", None, latest.wait_count, why))
        else:
            figures.append(
                WaitFigure("recent", recent, None, "LOG_HADR_WAIT_RECENT_AVG, Db2's recent average per log write")
            )
    return figures


def _per_write(basis: str, waited: float, writes: int, source: str) -> WaitFigure:
    if writes >= MIN_WAIT_COUNT:
        return WaitFigure(basis, waited / writes, writes, f"{source}: {waited:,.3f} s over {writes:,} log writes")
    if writes == 0:
        return WaitFigure(basis, None, 0, f"{source}: no log write waited for HADR")
    stall = f"; one write waited {waited:,.3f} s: one stall, not a per-commit cost" if writes == 1 else ""
    return WaitFigure(
        basis,
        None,
        writes,
        f"{source}: {format_count(writes, 'log write')} waited {waited:,.3f} s in all, under {MIN_WAIT_COUNT} writes: "
        f"no per-write figure{stall}",
    )


def series(points: list) -> list[list]:
    """Points (time first) split where the captures stop for long (another day, another month): each
    part is drawn as its own line, never joined across the pause."""
    if len(points) < 3:
        spacing = 0.0
    else:
        spacing = statistics.median((b[0] - a[0]).total_seconds() for a, b in itertools.pairwise(points))
    limit = max(SERIES_BREAK_SECONDS, 20 * spacing)
    parts: list[list] = []
    for point in points:
        if not parts or (point[0] - parts[-1][-1][0]).total_seconds() > limit:
            parts.append([])
        parts[-1].append(point)
    return parts


def stretches(views: list[PairView]) -> list[tuple[PairView, list]]:
    """Every pair's captures in stretches without a long pause: (pair, [(time, sample), ...])."""
    return [(view, part) for view in views for part in series(view.samples)]


def covered(parts: list[tuple[PairView, list]]) -> list[tuple[datetime, datetime]]:
    """The stretches of time some capture covers (every pair's merged), in time order: (from, to)."""
    merged: list[list[datetime]] = []
    for start, end in sorted((part[0][0], part[-1][0]) for _, part in parts):
        if merged and (start - merged[-1][1]).total_seconds() <= SERIES_BREAK_SECONDS:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def pauses(parts: list[tuple[PairView, list]]) -> list[tuple[datetime, datetime]]:
    """The times no stretch of any pair covers, longer than SERIES_BREAK_SECONDS: (from, to)."""
    return [(before[1], after[0]) for before, after in itertools.pairwise(covered(parts))]
