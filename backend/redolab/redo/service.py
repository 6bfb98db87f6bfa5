"""Redo history: import an upload (all or nothing, staged in batches), list, delete, analyse."""

from __future__ import annotations

import marshal
import pickle
import signal
import tempfile
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from redolab.core.db import get_or_404, memo
from redolab.core.errors import FieldError
from redolab.core.isolate import ChildLimits, limit_this_process
from redolab.core.security import file_sha256
from redolab.core.units import format_count
from redolab.environments.models import Environment
from redolab.redo.analytics import Analysis, analyze, summary_json
from redolab.redo.dedupe import unique
from redolab.redo.ingest.mapping import clean_mapping, options_of
from redolab.redo.ingest.pipeline import Reading, in_zone, prepare, read_sources, reading_kind
from redolab.redo.models import ImportStatus, RedoImport, RedoRow
from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval
from redolab.redo.uploads import EXPIRED

BATCH_ROWS = 20_000


# -- import ---------------------------------------------------------------------------------------
# An import is staged: its record is `importing` while its rows are written in batches, each batch a
# transaction of its own (the database's write lock is held for one batch, never for the whole file),
# and nothing reads it; it becomes `ready`, visible with every row, in one short transaction at the
# end. A bad line anywhere removes the staged rows and the record: every row or none.
Progress = Callable[[int], None]  # rows written so far


def begin_import(
    *, session: Session, environment: Environment, path: Path, filename: str, mapping: dict | None, imported_by: str
) -> RedoImport:
    """The staged record of an import (committed, not yet visible), after the duplicate check."""
    try:
        digest = file_sha256(path)
    except FileNotFoundError:
        raise FieldError("upload_token", EXPIRED, 422) from None
    earlier = session.scalar(
        select(RedoImport).where(RedoImport.environment_id == environment.id, RedoImport.sha256 == digest)
    )
    if earlier is not None:
        if earlier.status == ImportStatus.importing:
            raise FieldError("file", f"This file is being imported right now as import #{earlier.id}.", 409)
        raise FieldError(
            "file",
            f"This file was already imported as import #{earlier.id} ('{earlier.filename}', "
            f"{earlier.created_at:%Y-%m-%d %H:%M} UTC): nothing was imported twice.",
        )
    record = RedoImport(
        environment_id=environment.id,
        filename=filename[:255],
        sha256=digest,
        format="",
        kind="",
        mapping=clean_mapping(mapping) or {},
        rows_read=0,
        rows_kept=0,
        dropped={},
        warnings=[],
        threads=[],
        imported_by=imported_by,
        time_zone=environment.time_zone,
        status=ImportStatus.importing,
    )
    session.add(record)
    try:
        session.commit()
    except IntegrityError:  # the same file, sent twice at once: the other request staged it first
        session.rollback()
        raise FieldError("file", "This file is being imported right now by another request.", 409) from None
    return record


def fill_import(
    *,
    session: Session,
    record: RedoImport,
    path: Path,
    fmt: str = "auto",
    progress: Progress | None = None,
    before_visible: Callable[[Session, RedoImport], None] | None = None,
    limits: ChildLimits | None = None,
) -> RedoImport:
    """Write the staged import's rows, batch by batch, then make it visible: `before_visible` runs in
    that last transaction (the stored analysis is written with it). On a bad line the staged rows and
    the record are removed and the RedoInputError goes on."""
    statement = _insert_statement(session.connection())
    elsewhere = path.stat().st_size >= PIPELINE_MIN_BYTES
    mapping = record.mapping or None
    written = 0
    zone = record.time_zone or "UTC"
    try:
        if elsewhere:  # the child process reads under `limits` (RLIMIT_CPU, RLIMIT_AS)
            batches = _parse_elsewhere(path, record.filename, fmt, mapping, record.id, zone, limits=limits)
        else:
            batches = _parse_here(path, record.filename, fmt, mapping, record.id, zone)
        for batch in batches:
            if isinstance(batch, dict):
                totals = batch
                continue
            session.connection().exec_driver_sql(statement, batch)  # the driver's executemany, no per-row Python
            session.commit()  # one batch per transaction: other writers wait for a batch, not the file
            written += len(batch)
            if progress is not None:
                progress(written)
    except BaseException:
        session.rollback()
        discard_staged(session=session, import_id=record.id)
        raise
    record.format, record.kind, record.mapping = totals["format"], totals["kind"], totals["mapping"]
    record.rows_read, record.rows_kept, record.dropped = totals["rows_read"], totals["kept"], totals["dropped"]
    record.warnings, record.threads, record.notes = totals["warnings"], totals["threads"], totals["notes"]
    record.first_time, record.last_time = totals["first"], totals["last"]
    try:
        if before_visible is not None:
            # No flush while it reads and computes: the record's new fields, flushed by its first
            # query, would take SQLite's one write lock for the whole analysis (53 s for a million
            # rows, every other write failing "database is locked"); they are written at the commit.
            with session.no_autoflush:
                before_visible(session, record)
        record.status = ImportStatus.ready
        session.commit()
    except BaseException:
        session.rollback()
        discard_staged(session=session, import_id=record.id)
        raise
    return record


def discard_staged(*, session: Session, import_id: int) -> None:
    """Remove a staged import: its rows in batches (short transactions), then its record."""
    while True:
        ids = list(session.scalars(select(RedoRow.id).where(RedoRow.import_id == import_id).limit(BATCH_ROWS)))
        if not ids:
            break
        session.execute(delete(RedoRow).where(RedoRow.id.in_(ids)))
        session.commit()
    session.execute(delete(RedoImport).where(RedoImport.id == import_id, RedoImport.status == ImportStatus.importing))
    session.commit()


def import_file(
    *,
    session: Session,
    environment: Environment,
    path: Path,
    filename: str,
    fmt: str = "auto",
    mapping: dict | None = None,
    imported_by: str,
    progress: Progress | None = None,
    before_visible: Callable[[Session, RedoImport], None] | None = None,
) -> RedoImport:
    """Stage, fill and show an import here and now (the CLI, small uploads; large ones are jobs):
    every row or none, a bad line anywhere (in any member of an archive) stores nothing."""
    mapping = clean_mapping(mapping)
    record = begin_import(
        session=session,
        environment=environment,
        path=path,
        filename=filename,
        mapping=mapping,
        imported_by=imported_by,
    )
    return fill_import(
        session=session, record=record, path=path, fmt=fmt, progress=progress, before_visible=before_visible
    )


def estimate_rows(path: Path) -> int | None:
    """About how many rows a plain text upload holds (its line count), for a progress figure; None for
    an archive, whose members are counted as they are read."""
    with open(path, "rb") as source:
        head = source.read(4)
        if head.startswith((b"PK\x03\x04", b"\x1f\x8b")):
            return None
        source.seek(0)
        return sum(block.count(b"\n") for block in iter(lambda: source.read(1 << 20), b"")) or None


# Above this size the file is parsed in a second process while this one inserts: both cores work.
PIPELINE_MIN_BYTES = 8 * 1024 * 1024


def _parse_here(path: Path, filename: str, fmt: str, mapping: dict | None, import_id: int, zone: str = "UTC"):
    """Yield batches of row tuples, then a dict of totals (see import_file)."""
    reading = Reading()
    kept, threads, first, last = 0, set(), None, None
    batch: list[tuple] = []
    with tempfile.TemporaryDirectory(prefix="redolab-import-") as workdir:
        sources, reading.skipped = prepare(path, filename, Path(workdir), fmt=fmt, mapping=mapping)
        single = sources[0].path == path
        intervals = read_sources(sources, fmt=fmt, mapping=mapping if single else options_of(mapping), reading=reading)
        for interval in in_zone(intervals, zone):
            row = _row(import_id, interval)
            batch.append(row)
            threads.add(row[_THREAD])
            start = row[_START]  # epoch seconds: cheaper to compare than datetimes, a million times
            if start is not None:
                first = start if first is None or start < first else first
                end = row[_END] or start
                last = end if last is None or end > last else last
            if len(batch) >= BATCH_ROWS:
                kept += len(batch)
                yield batch
                batch = []
    if batch:
        kept += len(batch)
        yield batch
    used = [f"Read from the archive: {', '.join(reading.used)}."] if not single else []
    yield {
        "format": ", ".join(sorted(set(reading.formats)))[:50],
        "kind": reading_kind(reading),
        "mapping": reading.mapping if single else {},
        "rows_read": reading.rows_read,
        "kept": kept,
        "dropped": dict(reading.dropped),
        "warnings": [*used, *reading.warnings],
        "threads": sorted(threads),
        "first": _from_epoch(first),
        "last": _from_epoch(last),
        "notes": _read_notes(reading),
    }


def _read_notes(reading: Reading) -> list[str]:
    """What an import keeps of how its file was read (the preview's notes and ignored columns)."""
    several = len(reading.ignored) > 1
    ignored = [
        f"Ignored (present, not read){' in ' + name if several else ''}: {', '.join(columns)}."
        for name, columns in reading.ignored.items()
    ]
    return [*reading.notes, *ignored]


def _parse_in_child(
    path: str, filename: str, fmt: str, mapping: dict | None, import_id: int, zone: str, pipe, limits=None
) -> None:
    """The second process: parse and send batches (marshal: row tuples of plain numbers and strings,
    cheaper than pickle for a million rows), then the totals; a RedoInputError is sent as its message.
    Under `limits` (ChildLimits) the kernel stops it past its CPU seconds; memory past its bound fails."""
    try:
        if limits is not None:
            limit_this_process(limits)
        for item in _parse_here(Path(path), filename, fmt, mapping, import_id, zone):
            if isinstance(item, list):
                pipe.send_bytes(b"B" + marshal.dumps(item))
            else:
                pipe.send_bytes(b"T" + pickle.dumps(item))
    except RedoInputError as error:
        pipe.send_bytes(b"E" + str(error).encode())
    except MemoryError:
        memory = getattr(limits, "memory_bytes", 0) >> 20
        pipe.send_bytes(
            b"E" + f"reading the file needed more than {memory} MiB (REDOLAB_PREVIEW_MEMORY_BYTES)".encode()
        )
    except Exception as error:  # never leave the parent waiting
        pipe.send_bytes(b"E" + f"internal error while reading the file: {type(error).__name__}: {error}".encode())
    finally:
        pipe.close()


def _parse_elsewhere(
    path: Path, filename: str, fmt: str, mapping: dict | None, import_id: int, zone: str = "UTC", *, limits=None
):
    """Like _parse_here, with the parsing in a spawned process (no inherited threads or connections)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_parse_in_child, args=(str(path), filename, fmt, mapping, import_id, zone, sender, limits), daemon=True
    )
    child.start()
    sender.close()
    try:
        while True:
            try:
                message = receiver.recv_bytes()
            except EOFError:
                child.join(timeout=10)
                if limits is not None and child.exitcode in (-signal.SIGXCPU, -signal.SIGKILL):
                    raise RedoInputError(
                        f"reading the file used more than {limits.cpu_seconds} s of CPU (REDOLAB_PREVIEW_CPU_SECONDS), "
                        "the most one import may use: split it into smaller files and import them one by one"
                    ) from None
                raise RedoInputError(
                    "the process reading the file stopped unexpectedly; nothing was imported"
                ) from None
            tag, body = message[:1], message[1:]
            if tag == b"E":
                raise RedoInputError(body.decode())
            if tag == b"B":
                yield marshal.loads(body)  # noqa: S302  (as above: our own child)
                continue
            yield pickle.loads(body)  # noqa: S301  (our own child process, over a pipe it was handed)
            return
    finally:
        receiver.close()
        child.join(timeout=10)
        if child.is_alive():
            child.kill()


_COLUMNS = (
    "import_id",
    "kind",
    "thread",
    "sequence",
    "resetlogs",
    "start_epoch_seconds",
    "end_epoch_seconds",
    "seconds",
    "bytes",
    "writes",
    "peak_bytes_per_second",
    "hour_of_day",
    "percentile_bytes_per_second",
)
_THREAD, _START, _END = map(_COLUMNS.index, ("thread", "start_epoch_seconds", "end_epoch_seconds"))


def _insert_statement(connection) -> str:
    placeholder = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    columns, values = ", ".join(_COLUMNS), ", ".join([placeholder] * len(_COLUMNS))
    return f"INSERT INTO redo_rows ({columns}) VALUES ({values})"  # noqa: S608  (constants only, no input)


def _row(import_id: int, interval: RedoInterval) -> tuple:
    """One row in _COLUMNS order."""
    return (
        import_id,
        interval.kind,
        interval.thread,
        interval.sequence,
        interval.resetlogs,
        interval.start.timestamp() if interval.start else None,
        interval.end.timestamp() if interval.end else None,
        interval.seconds,
        interval.bytes,
        interval.writes,
        interval.peak_bytes_per_second,
        interval.hour,
        interval.percentile_bytes_per_second,
    )


def list_imports(*, session: Session, environment: Environment) -> list[RedoImport]:
    """The environment's visible imports (not those still being written); read once per transaction
    while it does not write (core.db.memo)."""
    query = (
        select(RedoImport)
        .where(RedoImport.environment_id == environment.id, RedoImport.status == ImportStatus.ready)
        .order_by(RedoImport.id)
    )
    return list(memo(session, ("imports", environment.id), lambda: list(session.scalars(query))))


def get_import(*, session: Session, environment: Environment, import_id: int) -> RedoImport:
    return get_or_404(
        session,
        RedoImport,
        import_id,
        what="Redo import",
        environment=environment,
        only=lambda record: record.status == ImportStatus.ready,
    )


def delete_import(*, session: Session, record: RedoImport) -> None:
    session.execute(delete(RedoRow).where(RedoRow.import_id == record.id))
    session.delete(record)
    session.commit()


def _from_epoch(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


# -- analysis of everything imported --------------------------------------------------------------


# What a stored row holds, in the order stored_interval reads it.
STORED_COLUMNS = (
    RedoRow.kind,
    RedoRow.thread,
    RedoRow.sequence,
    RedoRow.resetlogs,
    RedoRow.start_epoch_seconds,
    RedoRow.end_epoch_seconds,
    RedoRow.seconds,
    RedoRow.bytes,
    RedoRow.writes,
    RedoRow.peak_bytes_per_second,
    RedoRow.hour_of_day,
    RedoRow.percentile_bytes_per_second,
)


def stored_interval(r) -> RedoInterval:
    """A stored row (selected with STORED_COLUMNS) as the interval the analytics read."""
    return RedoInterval(
        line=0,
        thread=r.thread,
        start=_from_epoch(r.start_epoch_seconds),
        end=_from_epoch(r.end_epoch_seconds),
        seconds=r.seconds,
        bytes=r.bytes,
        kind=r.kind,
        sequence=r.sequence,
        resetlogs=r.resetlogs,
        writes=r.writes,
        peak_bytes_per_second=r.peak_bytes_per_second,
        hour=r.hour_of_day,
        percentile_bytes_per_second=r.percentile_bytes_per_second,
    )


def environment_analysis(
    *, session: Session, environment: Environment, imports=None, intervals=None
) -> tuple[Analysis, dict] | None:
    """All imports together (a log present in two imports counts once), read from their rows (or
    `intervals`, those rows already read, in import and row order): for the stored analysis
    (planning.stored), computed when the imports change."""
    if imports is None:
        imports = list_imports(session=session, environment=environment)
    if not imports:
        return None
    dropped: Counter = Counter()
    if intervals is None:
        query = (
            select(*STORED_COLUMNS)
            .where(RedoRow.import_id.in_([i.id for i in imports]))
            .order_by(RedoRow.import_id, RedoRow.id)
        )
        intervals = (stored_interval(r) for r in session.execute(query).yield_per(10_000))
    rows = intervals  # read only: dedupe and analyze change no interval
    analysis = analyze(unique(rows, dropped), headroom_ratio=environment.headroom_percent / 100)
    dropped.pop("", None)  # unique() reports the rows it read under ""; only real drops remain
    warnings = sorted({w for i in imports for w in i.warnings})
    if dropped:
        repeated = sum(dropped.values())
        warnings.append(f"{format_count(repeated, 'row')} found in more than one import: counted once.")
    summary = summary_json(
        analysis,
        fmt=", ".join(sorted({i.format for i in imports})),
        rows_read=sum(i.rows_read for i in imports),
        dropped=Counter({k: v for i in imports for k, v in i.dropped.items()}) + dropped,
        warnings=warnings,
    )
    return analysis, summary


def environment_intervals(*, session: Session, environment: Environment) -> list[RedoInterval]:
    """Every imported interval with a time span (a log or period present in two imports counts once)."""
    query = (
        select(*STORED_COLUMNS)
        .join(RedoImport, RedoImport.id == RedoRow.import_id)
        .where(RedoImport.environment_id == environment.id, RedoImport.status == ImportStatus.ready)
        .order_by(RedoRow.import_id, RedoRow.id)
    )
    rows = (stored_interval(r) for r in session.execute(query).yield_per(10_000))
    return [interval for interval in unique(rows, Counter()) if interval.rate is not None and interval.start]
