"""File(s) -> table -> intervals -> de-duplicated intervals, with counts, warnings and what was found.

Every message names the file as the user knows it (an upload's own name, an archive's member as
`archive.zip/member`), never a path on the server.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from redolab.redo.analytics import Analysis, analyze, summary_json
from redolab.redo.archive import Source, expand
from redolab.redo.bounds import bounded
from redolab.redo.dedupe import unique
from redolab.redo.ingest.mapping import DECIMAL, map_table, options_of
from redolab.redo.ingest.reader import open_table
from redolab.redo.parsers import RedoInputError
from redolab.redo.schemas import RedoInterval


@dataclass
class Reading:
    formats: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    rows_read: int = 0
    dropped: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was found: periods, passed-over lines
    ignored: dict[str, list[str]] = field(default_factory=dict)  # file -> columns present but not read
    used: list[str] = field(default_factory=list)  # the files read
    skipped: list[tuple[str, str]] = field(default_factory=list)  # archive members not used, and why
    mapping: dict[str, str] = field(default_factory=dict)  # the last file's mapping, as used
    numbers: dict[str, str] = field(default_factory=dict)  # file -> how it writes numbers (decimal, groups)
    headers: list[str] = field(default_factory=list)  # the last file's headings

    def add(self, items: list[str], into: list[str]) -> None:
        into.extend(item for item in items if item not in into)


def read_sources(
    sources: list[Source], *, fmt: str = "auto", mapping: dict | None = None, reading: Reading
) -> Iterator[RedoInterval]:
    """Stream unique intervals from every source; the first bad line stops everything (all or nothing)."""
    for source in sources:
        handle = None
        try:
            columns = dict(mapping or {})
            pages = columns.pop("log_file_pages", None)  # Db2's LOGFILSIZ: an option, not a column
            decimal = columns.pop(DECIMAL, None) or "auto"  # the user's decimal character: an option too
            table, handle = open_table(
                source.path, fmt, log_file_pages=int(pages) if pages else None, decimal=decimal, name=source.name
            )
            mapped = map_table(table, columns or None, decimal=decimal)
            reading.formats.append(table.format)
            reading.kinds.append(mapped.kind)
            reading.used.append(source.name)
            chosen = {DECIMAL: decimal} if decimal != "auto" else {}
            headers = [] if table.fixed_layout else table.headers  # the mapping form offers the file's own
            reading.mapping, reading.headers = {**mapped.mapping, **chosen}, headers
            numbers = getattr(mapped, "numbers", None)
            if numbers is not None:
                reading.numbers[source.name] = numbers.describe()
            if mapped.ignored:
                reading.ignored[source.name] = mapped.ignored
            whose = f"{source.name.rsplit('/', 1)[-1]}: " if len(sources) > 1 else ""
            reading.add([whose + note for note in table.notes], reading.notes)
            counts: Counter = Counter()
            kept, threads = 0, set()
            dma_archlogs = _query(source.name) == "archlogs"
            for interval in unique(bounded(mapped.intervals), counts, strict=True, ignored_columns=mapped.ignored):
                kept += 1
                if dma_archlogs:
                    threads.add(interval.thread)
                yield interval
            if kept == 0:
                raise RedoInputError(_nothing_read(mapped.kind, mapped.mapping))
            reading.rows_read += counts.pop("", 0)
            reading.dropped.update(counts)
            reading.add([whose + fact for fact in mapped.facts], reading.notes)
            reading.add(mapped.warnings, reading.warnings)
            if dma_archlogs and len(threads) > 1 and "inst_id" not in mapped.mapping:
                reading.add([GV_WITHOUT_INSTANCE], reading.warnings)
        except RedoInputError as error:
            raise RedoInputError(f"{source.name}: {error}") from None
        finally:
            if handle is not None:
                handle.close()


# The DMA collector's archlogs query sums GV$ARCHIVED_LOG grouped by day, hour, thread and destination.
GV_WITHOUT_INSTANCE = (
    "This DMA archlogs file sums GV$ARCHIVED_LOG without INST_ID. On RAC, GV$ARCHIVED_LOG can list each log once "
    "per open instance (every instance reads the same control file), so these volumes may be multiplied by the "
    "number of instances. Compare one hour's MBYTES with V$ARCHIVED_LOG on one instance, or import a "
    "V$ARCHIVED_LOG export, before trusting the peak."
)


def _nothing_read(kind: str, mapping: dict[str, str]) -> str:
    if "stat_name" in mapping:
        return (
            f"no row is redo: {mapping['stat_name']} has no 'Redo Generated Per Sec' (SYSMETRIC), 'redo size' or "
            "'redo writes' (SYSSTAT) row; export those statistics"
        )
    return f"no data rows under the heading ({kind}): the export holds the heading only"


# -- collection archives -------------------------------------------------------------------------
# Google's Database Migration Assessment collector: opdb__<query>__<tag>.(log|csv)
_DMA = re.compile(r"(?:^|/)(opdb|opdbt|manual)__(?P<query>[a-z0-9_]+?)__", re.IGNORECASE)
# awrhistsysmetrichist_rs (collector 1.x, opdbt__): the hourly p90/p95 of every metric pivoted into columns
_DMA_REDO = ("archlogs", "awrhistsysmetrichist", "awrhistsysmetricsumm", "awrhistsysmetrichist_rs")
_DMA_MAYBE = ("dbahistsysstat", "awrhistsysstat")
_AWR_MINER = re.compile(r"(?:^|/)awr-hist-[^/]*\.out$", re.IGNORECASE)


def prepare(
    path: Path, name: str, workdir: Path, *, fmt: str = "auto", mapping: dict | None = None
) -> tuple[list[Source], list[tuple[str, str]]]:
    """The sources to read from an upload: the file itself, or an archive's members that carry
    redo (and the others, each with the reason it was not used). `mapping`'s options (the decimal
    character) apply when a member is tried."""
    members = expand(path, name, workdir)
    if members is None:
        return [Source(path, name)], []
    used, skipped = [], []
    queries = {m.name: _query(m.name) for m in members}
    has_history = any(q == "awrhistsysmetrichist" for q in queries.values())
    for member in members:
        query = queries[member.name]
        if query == "awrhistsysmetricsumm" and has_history:
            skipped.append((member.name, "the same metric per hour of day as the awrhistsysmetrichist file, used"))
        elif query == "awrhistsysmetrichist_rs" and has_history:
            skipped.append((member.name, "the hourly percentiles of the awrhistsysmetrichist file, which is used"))
        elif query in _DMA_REDO or _AWR_MINER.search(member.name):
            used.append(member)  # a redo member that cannot be read stops the import (all or nothing)
        elif query is not None and query not in _DMA_MAYBE:
            skipped.append((member.name, f"collector output '{query}', no redo history"))
        else:
            reason = _try(member, fmt, options_of(mapping))
            (skipped.append((member.name, reason)) if reason else used.append(member))
    if not used:
        listed = "; ".join(f"{n}: {why}" for n, why in skipped[:12]) or "it is empty"
        raise RedoInputError(
            f"{name}: none of its {len(members)} files carries redo history ({listed}). Redo is in the DMA "
            "collector's opdb__archlogs__ and opdb__awrhistsysmetrichist__ files, an AWR Miner awr-hist-*.out "
            "file, or an archived-log or AWR export"
        )
    return used, skipped


def _query(member: str) -> str | None:
    match = _DMA.search(member)
    return match.group("query").lower() if match else None


def _try(member: Source, fmt: str, options: dict | None = None) -> str | None:
    """None when the member reads as redo history, else why not."""
    try:
        for _ in read_sources([member], fmt=fmt, mapping=options, reading=Reading()):
            pass
    except RedoInputError as error:
        return str(error).removeprefix(f"{member.name}: ")
    return None


def analyze_files(paths: list[Path], *, fmt: str = "auto", headroom_ratio: float = 0.30) -> tuple[Analysis, dict]:
    """The CLI's analysis of files on disk (archives expanded into a temporary directory)."""
    reading = Reading()
    with tempfile.TemporaryDirectory(prefix="redolab-") as workdir:
        sources: list[Source] = []
        for number, path in enumerate(paths):
            member_dir = Path(workdir) / str(number)
            member_dir.mkdir()
            used, skipped = prepare(path, path.name, member_dir, fmt=fmt)
            sources.extend(used)
            reading.skipped.extend(skipped)
        analysis = analyze(
            read_sources(sources, fmt=fmt, reading=reading), headroom_ratio=headroom_ratio, keep_points=False
        )
    label = ", ".join(sorted({f"{f}/{k}" for f, k in zip(reading.formats, reading.kinds, strict=True)}))
    return analysis, summarise(analysis, fmt=label, reading=reading)


def summarise(analysis: Analysis, *, fmt: str, reading: Reading) -> dict:
    """The analysis as JSON, with `numbers`: per file read, its decimal and group separators and
    whether the file or the user's choice told them (said there once: the notes leave their "Numbers:"
    line out, which an import keeps among its notes)."""
    said = tuple(f"Numbers: {how}." for how in reading.numbers.values())
    summary = summary_json(
        analysis,
        fmt=fmt,
        rows_read=reading.rows_read,
        dropped=reading.dropped,
        warnings=reading.warnings,
        notes=[note for note in reading.notes if not note.endswith(said)] if said else reading.notes,
        ignored=reading.ignored,
        used=reading.used,
        skipped=reading.skipped,
    )
    summary["numbers"] = dict(reading.numbers)
    return summary


# The old name, for callers with plain paths.
def read_files(paths: list[Path], *, fmt: str = "auto", mapping: dict | None = None, reading: Reading):
    return read_sources([Source(p, p.name) for p in paths], fmt=fmt, mapping=mapping, reading=reading)


def reading_kind(reading: Reading) -> str:
    kinds = sorted(set(reading.kinds))
    return kinds[0] if len(kinds) == 1 else "mixed"


def in_zone(intervals, zone: str):
    """Read the rows' clock times in the database's time zone: exports carry the database's local wall
    clock (Oracle DATE has no zone), which the readers return as if UTC; here they become real UTC."""
    if zone in ("UTC", "", None):
        yield from intervals
        return
    tz = ZoneInfo(zone)
    offsets: dict[datetime, timedelta] = {}  # by quarter hour, where every zone's changes fall

    def convert(moment: datetime | None) -> datetime | None:
        if moment is None:
            return None
        if moment.tzinfo is not UTC:  # written with its own zone ('+02:00', 'Z'): already a real instant
            return moment.astimezone(UTC)
        quarter = moment.replace(minute=moment.minute - moment.minute % 15, second=0, microsecond=0)
        offset = offsets.get(quarter)
        if offset is None:
            # a wall time repeated when clocks go back is read as its first occurrence (fold=0)
            offset = offsets[quarter] = quarter.replace(tzinfo=tz).utcoffset()
        return moment - offset

    for interval in intervals:
        if interval.start is None and interval.end is None:
            yield interval
            continue
        interval.start, interval.end = convert(interval.start), convert(interval.end)
        yield interval
