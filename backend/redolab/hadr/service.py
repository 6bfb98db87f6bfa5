"""HADR monitoring imports (db2pd -hadr captures) and what they show; the calculator for an environment.

Monitoring: per capture the role, state, sync mode, log gap, standby receive buffer and both log
positions. The primary's log position over time is the log generation rate. A congested connection
is diagnosed as seed 001 does: with the standby's receive buffer full (>= 90 % in the nearest standby
capture within 30 s) the standby is not keeping up (slow replay or a slow standby disk); with room in
the buffer, the network is not carrying the log rate.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.disktest.fit import Disk, DiskPoint, fit_disk
from redolab.disktest.service import latest_disk
from redolab.environments.models import Environment, HostRole
from redolab.hadr import db2pd
from redolab.hadr.calculator import Network, calculate, receive_buffer_pages
from redolab.hadr.models import HadrImport, HadrSample
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
    text = data.decode("utf-8-sig", errors="replace")
    try:
        parsed = db2pd.parse(text.splitlines())
    except RedoInputError as error:
        raise FieldError("file", f"{filename}: {error}", 422) from None
    samples = _timed_samples(parsed, ZoneInfo(environment.time_zone or "UTC"), filename)
    times = [at for _, at in samples]
    notes = [
        f"{len(samples):,} HADR pair(s) in the captures, layout {', '.join(sorted(parsed.layouts))}; times read in "
        f"{environment.time_zone}."
    ]
    if parsed.passed_over:
        notes.append(f"{parsed.passed_over:,} line(s) outside any capture were passed over (separators, comments).")
    record = HadrImport(
        environment_id=environment.id, filename=filename[:255], sha256=digest, layouts=sorted(parsed.layouts),
        captures=len(samples), notes=notes, time_zone=environment.time_zone,
        first_time=datetime.fromtimestamp(min(times), UTC), last_time=datetime.fromtimestamp(max(times), UTC),
        imported_by=imported_by,
    )  # fmt: skip
    record.samples = [_stored_sample(sample, at) for sample, at in samples]
    session.add(record)
    session.commit()
    return record


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
    )


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


@dataclass
class Monitoring:
    samples: list[tuple[datetime, HadrSample, str]]  # (time, sample, file name)
    rates: list[tuple[datetime, datetime, float]] = field(default_factory=list)  # primary log generation, bytes/s
    flags: list[Flag] = field(default_factory=list)
    peak_log_gap_bytes: float | None = None
    peak_rate_bytes_per_second: float | None = None
    receive_buffer_pages: int | None = None

    def to_json(self) -> dict:
        return {
            "captures": len(self.samples),
            "peak_log_gap_bytes": self.peak_log_gap_bytes,
            "peak_log_rate_bytes_per_second": self.peak_rate_bytes_per_second,
            "standby_receive_buffer_pages": self.receive_buffer_pages,
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
            "samples": [
                {
                    "at": at.isoformat(),
                    "file": name,
                    "line": s.line,
                    "member": s.member,
                    "role": s.role,
                    "state": s.state,
                    "sync_mode": s.sync_mode,
                    "connect_status": s.connect_status,
                    "log_gap_bytes": s.log_gap_bytes,
                    "standby_recv_buf_percent": s.recv_buf_percent,
                    "primary_log_file": s.primary_file,
                    "primary_log_position": s.primary_position,
                    "standby_log_file": s.standby_file,
                    "standby_log_position": s.standby_position,
                }
                for at, s, name in self.samples
            ],
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
    gaps = [s.log_gap_bytes for _, s, _ in rows if s.log_gap_bytes is not None]
    result.peak_log_gap_bytes = max(gaps) if gaps else None
    # the log generation rate: the primary's position between captures taken on the primary (its own view)
    primary_view = [(at, s) for at, s, _ in rows if s.role == "PRIMARY" and s.primary_position is not None]
    if len(primary_view) < 2:
        primary_view = [(at, s) for at, s, _ in rows if s.primary_position is not None]
    last: dict[tuple, tuple[datetime, int]] = {}
    for at, sample in primary_view:
        key = (sample.member, sample.standby_id)
        before = last.get(key)
        last[key] = (at, sample.primary_position)
        if before is None or at <= before[0] or sample.primary_position < before[1]:
            continue
        result.rates.append((before[0], at, (sample.primary_position - before[1]) / (at - before[0]).total_seconds()))
    result.peak_rate_bytes_per_second = max((rate for *_, rate in result.rates), default=None)
    standby_buffers = [(at, s) for at, s, _ in rows if s.recv_buf_percent is not None]
    for at, sample, name in rows:
        if sample.connect_status == "CONGESTED":
            near = [
                (abs((other_at - at).total_seconds()), other)
                for other_at, other in standby_buffers
                if abs((other_at - at).total_seconds()) <= PAIRING_SECONDS
                and (sample.standby_id is None or other.standby_id in (None, sample.standby_id))
            ]
            if not near:
                diagnosis = UNKNOWN
            else:
                percent = min(near, key=lambda item: item[0])[1].recv_buf_percent
                diagnosis = SLOW_REPLAY if percent >= FULL_BUFFER_PERCENT else NETWORK
            result.flags.append(Flag(at, sample.line, name, "congested", diagnosis))
        elif sample.recv_buf_percent is not None and sample.recv_buf_percent >= FULL_BUFFER_PERCENT:
            result.flags.append(Flag(at, sample.line, name, f"receive buffer {sample.recv_buf_percent:.0f} % full",
                                     SLOW_REPLAY))  # fmt: skip
    pages = [s.recv_buf_pages for _, s, _ in rows if s.recv_buf_pages]
    result.receive_buffer_pages = max(pages) if pages else None
    return result


# -- the calculator for an environment ------------------------------------------------------------
@dataclass
class CalculatorInputs:
    network: object | None  # hadr.calculator.Network
    network_basis: str
    primary: object | None  # disktest.fit.Disk
    primary_basis: str
    standby: object | None
    standby_basis: str
    missing: list[str]


def calculator_inputs(*, session: Session, environment: Environment) -> CalculatorInputs:
    """The network from the fastest one-stream run primary -> standby (its minimum RTT, else the
    environment's link RTT); each disk from the role's latest disk test, else the standby's from SYNC
    runs with a write directory (time per acknowledged message at each message size). As
    hadrCalculator does, one disk measured stands for both when the other is not. Names what is missing."""
    missing: list[str] = []
    runs = [run for run in measured_runs(session=session, environment=environment) if run.conns == 1]
    over_link = [run for run in runs if not run.loopback]
    chosen = over_link or runs
    network, network_basis = None, ""
    if chosen:
        streaming = [run for run in chosen if run.mode == "async"]  # a SYNC run's rate includes its waits
        best = max(streaming or chosen, key=lambda run: run.bytes_per_second)
        rtt = best.metrics.rtt_min_seconds or environment.link_rtt_seconds
        if rtt is None:
            missing.append("the round trip time: set the link RTT on the environment, or run a test that reports it")
        else:
            network = Network(best.bytes_per_second, rtt)
            network_basis = f"{best.source.label}; RTT {rtt * 1000:,.3f} ms"
            if best.loopback:
                network_basis += " (a loopback run on the redolab machine, not the standby link)"
            if best.mode != "async":
                network_basis += " (a SYNC run: its rate includes the waits for acknowledgements; use an ASYNC run)"
    else:
        missing.append("a measured network: run a one-stream test from the primary to the standby")
    disks: dict = {}
    for role in (HostRole.primary, HostRole.standby):
        disk, where = latest_disk(environment, role)
        if disk is not None:
            disks[role] = (disk, f"disk test on {where}")
    if HostRole.standby not in disks:
        points = [
            DiskPoint(run.message_bytes, run.metrics.write_seconds_per_message)
            for run in runs if run.mode == "sync" and run.sync_write and run.metrics.write_seconds_per_message
        ]  # fmt: skip
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
        missing.append(
            "a log disk: run a disk test on the standby (or primary) host, or a SYNC run with a write directory"
        )
        return CalculatorInputs(network, network_basis, None, "", None, "", missing)
    primary = disks.get(HostRole.primary) or (
        disks[HostRole.standby][0],
        disks[HostRole.standby][1] + " (the primary's disk taken as the standby's, as hadrCalculator does)",
    )
    standby = disks.get(HostRole.standby) or (primary[0], primary[1] + " (the standby's disk taken as the primary's)")
    return CalculatorInputs(network, network_basis, primary[0], primary[1], standby[0], standby[1], missing)


def environment_calculator(*, session: Session, environment: Environment):
    """(Calculator or None, inputs): every interval of the environment's log history against every mode."""
    inputs = calculator_inputs(session=session, environment=environment)
    intervals = environment_intervals(session=session, environment=environment)
    if not intervals:
        inputs.missing.insert(
            0, "log history: import MON_GET_TRANSACTION_LOG captures, an archived log listing or db2logscan output"
        )
    if inputs.missing:
        return None, inputs
    return calculate(intervals, network=inputs.network, primary=inputs.primary, standby=inputs.standby), inputs


def hadr_settings(*, session: Session, environment: Environment, requirement) -> dict:
    """Db2 settings from the data (for the plan's settings): DB2_HADR_BUF_SIZE from the largest log gap
    seen or a second of the peak log rate, HADR_SYNCMODE from the calculator when it can be computed."""
    watched = monitoring(session=session, environment=environment)
    calculator, _ = environment_calculator(session=session, environment=environment)
    peak = requirement.summed_peak_bytes_per_second if requirement is not None else None
    gap = watched.peak_log_gap_bytes if watched else None
    if peak is None and watched is not None:
        peak = watched.peak_rate_bytes_per_second
    buffer = None
    if gap or peak:
        buffer = receive_buffer_pages(
            peak_log_gap_bytes=gap, peak_rate_bytes_per_second=peak, headroom_ratio=environment.headroom_percent / 100
        )
    return {"hadr_buffer": buffer, "hadr_syncmode": calculator.advice() if calculator else None}


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
