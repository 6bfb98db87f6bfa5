"""HADR monitoring imports (db2pd -hadr captures) and what they show; the calculator for an environment.

Monitoring: per capture the role, state, sync mode, log gap, standby receive buffer and both log
positions. The primary's log position over time is the log generation rate. A congested connection
is diagnosed as seed 001 does: with the standby's receive buffer full (>= 90 % in the nearest standby
capture within 30 s) the standby is not keeping up (slow replay or a slow standby disk); with room in
the buffer, the network is not carrying the log rate.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.core.units import format_count
from redolab.disktest.fit import Disk, DiskPoint, fit_disk
from redolab.disktest.service import latest_disk
from redolab.environments.models import Environment, HostRole
from redolab.hadr import db2pd, recommend
from redolab.hadr.calculator import calculate, receive_buffer_pages
from redolab.hadr.models import HadrImport, HadrSample
from redolab.hadr.network import measured_network, nominal_network
from redolab.hadr.pairs import PairView, covered, pair_key, pair_views, stretches
from redolab.hadr.serialise import pair_json, sample_json
from redolab.redo.parsers import RedoInputError
from redolab.redo.service import environment_intervals
from redolab.runs.service import measured_runs

MAX_CAPTURE_BYTES = 64 * 1024 * 1024
FULL_BUFFER_PERCENT = 90.0
PAIRING_SECONDS = 30.0
SLOW_REPLAY = (
    "slow replay on the standby: its receive buffer is full, so the standby is not taking log as fast as the "
    "primary makes it (a database-wide transaction such as a reorg, or a slow standby log disk). A larger "
    "DB2_HADR_BUF_SIZE absorbs the peak; log spooling (HADR_SPOOL_LIMIT) lets the standby keep receiving"
)
NETWORK = (
    "the network: the standby's receive buffer has room, so the link (bandwidth, or socket buffers below the "
    "bandwidth-delay product: DB2_HADR_SOSNDBUF / SORCVBUF) does not carry the log rate"
)
UNKNOWN = "unknown: no standby capture within 30 s shows its receive buffer; capture the standby with the primary"


def import_captures(
    *, session: Session, environment: Environment, path: Path, filename: str, imported_by: str
) -> HadrImport:
    """Store every capture or none; a bad line anywhere is a 422 naming the file and the line."""
    data = path.read_bytes()
    if len(data) > MAX_CAPTURE_BYTES:
        raise FieldError("file", f"{filename} is larger than 64 MiB, the most a db2pd capture file may be.", 413)
    digest = hashlib.sha256(data).hexdigest()
    earlier = session.scalar(
        select(HadrImport).where(HadrImport.environment_id == environment.id, HadrImport.sha256 == digest)
    )
    if earlier is not None:
        raise FieldError(
            "file", f"{filename} was already imported as HADR import #{earlier.id}: nothing was imported twice."
        )
    utf16 = data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)  # Windows tools' "Unicode" output
    text = data.decode("utf-16" if utf16 else "utf-8-sig", errors="replace")
    try:
        parsed = db2pd.parse(text.splitlines())
    except RedoInputError as error:
        raise FieldError("file", f"{filename}: {error}", 422) from None
    samples = _timed_samples(parsed, ZoneInfo(environment.time_zone or "UTC"), filename)
    times = [at for _, at in samples]
    notes = [_pairs_note(parsed.samples, parsed.layouts, environment.time_zone)]
    if parsed.passed_over:
        lines = format_count(parsed.passed_over, "line")
        were = "was" if parsed.passed_over == 1 else "were"
        notes.append(f"{lines} outside any capture {were} passed over (separators, comments).")
    notes.extend(parsed.notes)  # how captures without '-- Date' (before 10.1) were dated
    record = HadrImport(
        environment_id=environment.id,
        filename=filename[:255],
        sha256=digest,
        layouts=sorted(parsed.layouts),
        captures=len(samples),
        notes=notes,
        time_zone=environment.time_zone,
        first_time=datetime.fromtimestamp(min(times), UTC),
        last_time=datetime.fromtimestamp(max(times), UTC),
        imported_by=imported_by,
    )
    record.samples = [_stored_sample(sample, at) for sample, at in samples]
    session.add(record)
    session.commit()
    return record


def _pairs_note(samples: list[db2pd.Sample], layouts: set[str], zone: str) -> str:
    """'1 HADR pair (primary and standby sides) in 6 captures': the two sides of one pair count once."""
    views = pair_views([(sample.at, sample) for sample in samples])
    pairs = "; ".join(
        f"{view.label} ({view.sides_text}, {format_count(len(view.samples), 'capture')})" for view in views[:5]
    )
    more = f"; and {len(views) - 5:,} more" if len(views) > 5 else ""
    noun = "HADR pair" if len(views) == 1 else "HADR pairs"
    return f"{len(views):,} {noun}: {pairs}{more}. Layout {', '.join(sorted(layouts))}; times read in {zone}."


def _timed_samples(parsed: db2pd.Parsed, zone: ZoneInfo, filename: str) -> list[tuple[db2pd.Sample, float]]:
    """Each sample with its time in seconds since the epoch. Wall-clock times are the database's:
    read in its zone."""
    samples = []
    for sample in parsed.samples:
        at = sample.at
        if at.tzinfo is UTC:
            at = at.replace(tzinfo=zone)
        samples.append((sample, at.timestamp()))
    if any(at < 0 for _, at in samples):
        line = next(s.line for s, at in samples if at < 0)
        raise FieldError("file", f"{filename}: line {line}: a capture dated before 1970", 422)
    return samples


def _stored_sample(s: db2pd.Sample, at: float) -> HadrSample:
    return HadrSample(
        line=s.line,
        at_epoch_seconds=at,
        member=s.member,
        database=s.database[:64],
        role=s.role[:20],
        state=s.state,
        sync_mode=s.sync_mode,
        connect_status=s.connect_status,
        heartbeats_missed=s.heartbeats_missed,
        log_gap_bytes=s.log_gap_bytes,
        recv_buf_percent=s.recv_buf_percent,
        recv_buf_pages=s.recv_buf_pages,
        primary_file=(s.primary_file or "")[:20] or None,
        primary_position=s.primary_position,
        standby_file=(s.standby_file or "")[:20] or None,
        standby_position=s.standby_position,
        standby_id=s.standby_id,
        **{name: getattr(s, name) for name in _COPIED},
    )


_COPIED = (
    "primary_host", "primary_instance", "primary_member", "standby_host", "standby_instance", "standby_member",
    "log_stream_id", "hadr_timeout_seconds", "peer_window_seconds", "peer_wait_limit_seconds",
    "heartbeat_interval_seconds", "heartbeats_expected", "sock_send_requested_bytes", "sock_send_actual_bytes",
    "sock_recv_requested_bytes", "sock_recv_actual_bytes", "wait_current_seconds", "wait_recent_avg_seconds",
    "wait_accumulated_seconds", "wait_count", "replay_position", "recv_replay_gap_bytes", "spool_limit_pages",
)  # fmt: skip


def list_hadr_imports(*, session: Session, environment: Environment) -> list[HadrImport]:
    return list(
        session.scalars(select(HadrImport).where(HadrImport.environment_id == environment.id).order_by(HadrImport.id))
    )


def get_hadr_import(*, session: Session, environment: Environment, import_id: int) -> HadrImport:
    return get_or_404(session, HadrImport, import_id, what="HADR import", environment=environment)


def delete_hadr_import(*, session: Session, record: HadrImport) -> None:
    session.delete(record)
    session.commit()


@dataclass
class Flag:
    at: datetime
    line: int
    filename: str
    what: str  # "congested" or "receive buffer full"
    diagnosis: str


GAP_BASIS = (
    "current gap: PRIMARY_LOG_POS minus STANDBY_LOG_POS at each capture; HADR_LOG_GAP (LogGapRunAvg before 10.1) is "
    "Db2's running average of it, not a gap seen at one moment"
)


@dataclass
class Monitoring:
    samples: list[tuple[datetime, HadrSample, str]]  # (time, sample, file name)
    rates: list[tuple[datetime, datetime, float]] = field(default_factory=list)  # primary log generation, bytes/s
    flags: list[Flag] = field(default_factory=list)
    pairs: list[PairView] = field(default_factory=list)
    stretches: list[tuple[PairView, list]] = field(default_factory=list)  # one series each in the chart
    spans: list[tuple[datetime, datetime]] = field(default_factory=list)  # covered by captures; pauses between
    rates_by_pair: dict[str, list[tuple[datetime, datetime, float]]] = field(default_factory=dict)
    largest_current_gap_bytes: int | None = None  # primary minus standby log position, the largest seen
    largest_running_average_gap_bytes: float | None = None  # HADR_LOG_GAP: a running average
    peak_rate_bytes_per_second: float | None = None
    receive_buffer_pages: int | None = None
    fullest_receive_buffer_percent: float | None = None

    @property
    def warnings(self) -> list[str]:
        """Settings that differ between the primary and the standby side, and per-side warnings."""
        found = []
        for view in self.pairs:
            prefix = f"{view.label}: " if len(self.pairs) > 1 else ""
            found.extend(prefix + mismatch.text for mismatch in view.mismatches)
            found.extend(prefix + warning for warning in view.warnings)
        return found

    def to_json(self) -> dict:
        return {
            "captures": len(self.samples),
            "hadr_pairs": len(self.pairs),
            "log_gap_basis": GAP_BASIS,
            "largest_current_log_gap_bytes": self.largest_current_gap_bytes,
            "largest_running_average_log_gap_bytes": self.largest_running_average_gap_bytes,
            "peak_log_rate_bytes_per_second": self.peak_rate_bytes_per_second,
            "standby_receive_buffer_pages": self.receive_buffer_pages,
            "warnings": self.warnings,
            "pairs": [pair_json(view) for view in self.pairs],
            "log_rates": [
                {"start": start.isoformat(), "end": end.isoformat(), "bytes_per_second": rate}
                for start, end, rate in self.rates
            ],
            "flags": [
                {
                    "at": flag.at.isoformat(),
                    "file": flag.filename,
                    "line": flag.line,
                    "what": flag.what,
                    "diagnosis": flag.diagnosis,
                }
                for flag in self.flags
            ],
            "samples": [sample_json(at, s, name) for at, s, name in self.samples],
        }


def monitoring(*, session: Session, environment: Environment) -> Monitoring | None:
    imports = list_hadr_imports(session=session, environment=environment)
    if not imports:
        return None
    rows = []
    for record in imports:
        for sample in record.samples:
            rows.append((datetime.fromtimestamp(sample.at_epoch_seconds, UTC), sample, record.filename))
    rows.sort(key=lambda row: (row[0], row[1].line))
    result = Monitoring(rows)
    result.pairs = pair_views([(at, sample) for at, sample, _ in rows])
    result.stretches = stretches(result.pairs)
    result.spans = covered(result.stretches)
    gaps = [view.largest_current_gap[0] for view in result.pairs if view.largest_current_gap]
    result.largest_current_gap_bytes = max(gaps) if gaps else None
    averages = [view.largest_running_average_bytes for view in result.pairs if view.largest_running_average_bytes]
    result.largest_running_average_gap_bytes = max(averages) if averages else None
    labels = {view.key: view.label for view in result.pairs}
    for key, start, end, rate in _log_rates(rows):
        result.rates.append((start, end, rate))
        result.rates_by_pair.setdefault(labels.get(key, key.database), []).append((start, end, rate))
    result.rates.sort()
    result.peak_rate_bytes_per_second = max((rate for *_, rate in result.rates), default=None)
    result.flags = _flags(rows)
    pages = [s.recv_buf_pages for _, s, _ in rows if s.recv_buf_pages]
    result.receive_buffer_pages = max(pages) if pages else None
    percents = [s.recv_buf_percent for _, s, _ in rows if s.recv_buf_percent is not None]
    result.fullest_receive_buffer_percent = max(percents) if percents else None
    return result


def _log_rates(rows) -> list[tuple]:
    """The log generation rate: the primary's position between captures of one pair taken on the
    primary (its own view), else on either side."""
    primary_view = [(at, s) for at, s, _ in rows if s.role == "PRIMARY" and s.primary_position is not None]
    if len(primary_view) < 2:
        primary_view = [(at, s) for at, s, _ in rows if s.primary_position is not None]
    rates = []
    last: dict[tuple, tuple[datetime, int]] = {}
    for at, sample in primary_view:
        pair = pair_key(sample)
        key = (pair, sample.member, sample.standby_id)
        before = last.get(key)
        last[key] = (at, sample.primary_position)
        if before is None or at <= before[0] or sample.primary_position < before[1]:
            continue
        rate = (sample.primary_position - before[1]) / (at - before[0]).total_seconds()
        rates.append((pair, before[0], at, rate))
    return rates


def _flags(rows) -> list[Flag]:
    """Congestion with the seed's diagnosis from the nearest standby capture of the same pair, and full buffers."""
    flags = []
    standby_buffers = [(at, s, pair_key(s)) for at, s, _ in rows if s.recv_buf_percent is not None]
    for at, sample, name in rows:
        if sample.connect_status == "CONGESTED":
            key = pair_key(sample)
            near = [
                (abs((other_at - at).total_seconds()), other)
                for other_at, other, other_key in standby_buffers
                if abs((other_at - at).total_seconds()) <= PAIRING_SECONDS and other_key == key
            ]
            if not near:
                diagnosis = UNKNOWN
            else:
                percent = min(near, key=lambda item: item[0])[1].recv_buf_percent
                diagnosis = SLOW_REPLAY if percent >= FULL_BUFFER_PERCENT else NETWORK
            flags.append(Flag(at, sample.line, name, "congested", diagnosis))
        elif sample.recv_buf_percent is not None and sample.recv_buf_percent >= FULL_BUFFER_PERCENT:
            flags.append(
                Flag(at, sample.line, name, f"receive buffer {sample.recv_buf_percent:.0f} % full", SLOW_REPLAY)
            )
    return flags


# -- the calculator for an environment ------------------------------------------------------------
NEEDS_HISTORY = "log history: import MON_GET_TRANSACTION_LOG captures, an archived log listing or db2logscan output"
NEEDS_DISK = "a log disk: run a disk test on the standby (or primary) host, or a SYNC run with a write directory"


@dataclass
class CalculatorInputs:
    network: object | None  # hadr.calculator.Network
    network_basis: str
    primary: object | None  # disktest.fit.Disk
    primary_basis: str
    standby: object | None
    standby_basis: str
    missing: list[str]
    network_run_id: int | None = None  # the measured run the network is from (None: not from a run)


def calculator_inputs(*, session: Session, environment: Environment) -> CalculatorInputs:
    """The network from the fastest one-stream run primary -> standby (its minimum RTT, else the
    environment's link RTT); each disk from the role's latest disk test, else the standby's from SYNC
    runs with a write directory (time per acknowledged message at each message size). As
    hadrCalculator does, one disk measured stands for both when the other is not. Names what is missing."""
    runs = [run for run in measured_runs(session=session, environment=environment) if run.conns == 1]
    network, network_basis, needs, run_id = measured_network(runs, link_rtt_seconds=environment.link_rtt_seconds)
    if network is None and not runs and environment.first_destination is not None:  # as each hop's calculator
        network, network_basis, needs = nominal_network(environment.first_destination)
    missing = [needs] if needs else []
    disks: dict = {}
    for role in (HostRole.primary, HostRole.standby):
        disk, where = latest_disk(environment, role)
        if disk is not None:
            disks[role] = (disk, f"disk test on {where}")
    if HostRole.standby not in disks:
        points = [
            DiskPoint(run.message_bytes, run.metrics.write_seconds_per_message)
            for run in runs
            if run.mode == "sync" and run.sync_write and run.metrics.write_seconds_per_message
        ]
        sizes = {point.write_bytes for point in points}
        if len(sizes) >= 2:
            fit = fit_disk(points)
            disks[HostRole.standby] = (fit.fitted, f"SYNC runs with a write directory at {len(sizes)} message sizes")
        elif points:
            point = points[0]
            disks[HostRole.standby] = (
                Disk(point.write_bytes / point.seconds_per_write, 0.0),
                f"a SYNC run with a write directory at one message size ({point.write_bytes:,} bytes): the per-write "
                "overhead is not known (taken as 0); a disk test at several sizes fits both",
            )
    if not disks:
        missing.append(NEEDS_DISK)
        return CalculatorInputs(network, network_basis, None, "", None, "", missing, run_id)
    primary = disks.get(HostRole.primary) or (
        disks[HostRole.standby][0],
        disks[HostRole.standby][1] + " (the primary's disk taken as the standby's, as hadrCalculator does)",
    )
    standby = disks.get(HostRole.standby) or (primary[0], primary[1] + " (the standby's disk taken as the primary's)")
    return CalculatorInputs(network, network_basis, primary[0], primary[1], standby[0], standby[1], missing, run_id)


def environment_calculator(*, session: Session, environment: Environment):
    """(Calculator or None, inputs): every interval of the environment's log history against every mode."""
    inputs = calculator_inputs(session=session, environment=environment)
    intervals = environment_intervals(session=session, environment=environment)
    if not intervals:
        inputs.missing.insert(0, NEEDS_HISTORY)
    if inputs.missing:
        return None, inputs
    return calculate(intervals, network=inputs.network, primary=inputs.primary, standby=inputs.standby), inputs


def hadr_settings(*, session: Session, environment: Environment, requirement) -> dict:
    """Db2 settings from the data (for the plan's settings): DB2_HADR_BUF_SIZE from the size in use and
    the largest current log gap, a second of the peak log rate or the receive buffer's use, HADR_SYNCMODE
    from the calculator when it can be computed."""
    watched = monitoring(session=session, environment=environment)
    calculator, _ = environment_calculator(session=session, environment=environment)
    return {
        "hadr_buffer": _buffer(watched, requirement, environment),
        "hadr_syncmode": calculator.advice() if calculator else None,
    }


def _buffer(watched: Monitoring | None, requirement, environment: Environment) -> tuple[int, str] | None:
    peak = requirement.summed_peak_bytes_per_second if requirement is not None else None
    if peak is None and watched is not None:
        peak = watched.peak_rate_bytes_per_second
    gap = watched.largest_current_gap_bytes if watched else None
    captured = watched.receive_buffer_pages if watched else None
    if not (gap or peak or captured):
        return None
    fullest = watched.fullest_receive_buffer_percent if watched else None
    headroom = environment.headroom_percent / 100
    return receive_buffer_pages(
        largest_current_gap_bytes=gap,
        peak_rate_bytes_per_second=peak,
        headroom_ratio=headroom,
        captured_pages=captured,
        fullest_percent=fullest,
    )


def hadr_recommendations(
    *, session: Session, environment: Environment, requirement=None, socket_buffer_bytes: int | None = None
) -> list[recommend.Recommendation]:
    """HADR_TIMEOUT, HADR_PEER_WINDOW, DB2_HADR_BUF_SIZE and the socket buffers, each from the values the
    captures show (the plan passes its socket buffer from the bandwidth-delay product)."""
    watched = monitoring(session=session, environment=environment)
    calculator, _ = environment_calculator(session=session, environment=environment)
    return recommendations_from(
        environment=environment,
        watched=watched,
        calculator=calculator,
        requirement=requirement,
        socket_buffer_bytes=socket_buffer_bytes,
    )


def hadr_pairs(*, session: Session, environment: Environment) -> list[PairView]:
    """The HADR pairs the environment's captures show (for the plan's Db2 settings)."""
    watched = monitoring(session=session, environment=environment)
    return watched.pairs if watched else []


def recommendations_from(
    *,
    environment: Environment,
    watched: Monitoring | None,
    calculator,
    requirement=None,
    socket_buffer_bytes: int | None = None,
) -> list[recommend.Recommendation]:
    """The same, from a monitoring view and calculator already computed (the environment page)."""
    views = watched.pairs if watched else []
    mode = (calculator.advice()[0] if calculator else None) or recommend.captured_sync_mode(views)
    return recommend.recommendations(
        views,
        sync_mode=mode or environment.transport_mode.value,
        buffer=_buffer(watched, requirement, environment),
        socket_buffer_bytes=socket_buffer_bytes,
    )


def calculator_json(calculator, inputs) -> dict:
    """The calculator as the API and `redolab plan hadr --json` send it (units in the keys)."""
    if calculator is None:
        return {"complete": False, "missing": inputs.missing}
    mode, why = calculator.advice()
    return {
        "complete": True,
        "network": {
            "bytes_per_second": calculator.network.rate_bytes_per_second,
            "rtt_seconds": calculator.network.rtt_seconds,
            "basis": inputs.network_basis,
        },
        "primary_disk": {
            "bytes_per_second": calculator.primary.rate_bytes_per_second,
            "overhead_seconds": calculator.primary.overhead_seconds,
            "basis": inputs.primary_basis,
        },
        "standby_disk": {
            "bytes_per_second": calculator.standby.rate_bytes_per_second,
            "overhead_seconds": calculator.standby.overhead_seconds,
            "basis": inputs.standby_basis,
        },
        "flush_basis": calculator.flush_basis,
        "intervals_above_limit": calculator.exceeded,
        "worst_rate_over_limit": calculator.worst,
        "hadr_syncmode": {"value": mode, "why": why},
        "intervals": [
            {
                "start": row.start.isoformat() if row.start else None,
                "end": row.end.isoformat() if row.end else None,
                "member": row.member,
                "log_bytes_per_second": row.rate_bytes_per_second,
                "flush_bytes": row.flush_bytes,
                "limits_bytes_per_second": row.limits,
                "levels": {m: {"words": words, "marks": marks} for m, (words, marks) in row.levels.items()},
            }
            for row in calculator.rows
        ],
    }
