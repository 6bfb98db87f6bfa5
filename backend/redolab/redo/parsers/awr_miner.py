"""AWR Miner capture files (awr-hist-<dbid>-<name>-<snap>-<snap>.out).

The capture is one SQL*Plus spool of many sections, each between `~~BEGIN-<NAME>~~` and
`~~END-<NAME>~~` (REPHEADER/REPFOOTER, so both repeat at every 50,000-line page). Redo comes from
the MAIN-METRICS section: one row per snapshot and instance (`snap`, `dur_m` minutes, `end` as
YY/MM/DD HH24:MI, `inst`), with `redo_mb_s`, the snapshot's average of 'Redo Generated Per Sec' in
MiB/s rounded to 0.1 (DBA_HIST_SYSMETRIC_SUMMARY; the script exports no maximum for redo). The other
sections (SYSSTAT, memory, SQL, waits) carry no redo rate and are named as not used.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from redolab.redo.ingest.values import POINT, NumberFormat, detect_numbers
from redolab.redo.parsers import RedoInputError, Table
from redolab.redo.parsers.sqlplus import read_sqlplus

HEADERS = ["SNAP_ID", "INSTANCE_NUMBER", "BEGIN_TIME", "END_TIME", "METRIC_NAME", "AVERAGE"]
MIB = 1024 * 1024
_SECTION = re.compile(r"^\s*~~(BEGIN|END)-([A-Z0-9-]+)~~\s*$")
_END_TIME = re.compile(r"^(\d{2,4})/(\d{1,2})/(\d{1,2}) (\d{1,2}):(\d{2})(?::(\d{2}))?$")


@dataclass
class MinerTable(Table):
    """MAIN-METRICS as rows of plain numbers, with how the capture wrote them (NLS_NUMERIC_CHARACTERS
    of the session that spooled it: ',3' is 0.3 MiB/s under ',.')."""

    numbers: NumberFormat = POINT


def looks_like_awr_miner(text: str) -> bool:
    return "~~BEGIN-" in text and ("~~END-" in text or "AWR_MINER_VER" in text or "MAIN-METRICS" in text)


def sections(lines: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Section name -> its (line number, text) lines, every page of it, markers left out."""
    found: dict[str, list[tuple[int, str]]] = {}
    current = None
    for number, line in enumerate(lines, 1):
        marker = _SECTION.match(line.rstrip("\r\n"))
        if marker:
            current = marker.group(2) if marker.group(1) == "BEGIN" else None
            if current:
                found.setdefault(current, [])
            continue
        if current:
            found[current].append((number, line.rstrip("\r\n")))
    return found


def _time(text: str, number: int) -> datetime:
    match = _END_TIME.match(text.strip())
    if not match:
        raise RedoInputError(f"line {number}, end: '{text}' is not a time in YY/MM/DD HH24:MI, as AWR Miner writes it")
    year, month, day, hour, minute, second = (int(g or 0) for g in match.groups())
    year += 2000 if year < 100 else 0
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise RedoInputError(f"line {number}, end: '{text}' is not a valid date") from None


def read_awr_miner(lines: list[str], *, decimal: str = "auto") -> Table:
    found = sections(lines)
    metrics = found.get("MAIN-METRICS")
    if not metrics:
        names = ", ".join(found) or "none"
        raise RedoInputError(
            f"this AWR Miner capture has no MAIN-METRICS section (sections found: {names}); "
            "the redo rate is in MAIN-METRICS: capture again with the whole awr_miner.sql"
        )
    # Every page repeats the heading: read each page's block with the SQL*Plus reader.
    table = read_sqlplus([text for _, text in metrics])
    numbers = [number for number, _ in metrics]
    columns = {name.strip().lower(): i for i, name in enumerate(table.headers)}
    missing = [name for name in ("snap", "dur_m", "end", "inst", "redo_mb_s") if name not in columns]
    if missing:
        raise RedoInputError(
            f"the MAIN-METRICS section (line {numbers[0]}) has no column {', '.join(missing)}; "
            f"it has {', '.join(table.headers)}"
        )
    used = {"snap", "dur_m", "end", "inst", "redo_mb_s"}
    ignored_sections = sorted(name for name in found if name != "MAIN-METRICS")
    notes = [
        "AWR Miner capture: the redo rate is MAIN-METRICS' redo_mb_s, each snapshot's average of 'Redo Generated "
        "Per Sec' in MiB/s rounded to 0.1 MiB/s (no maximum: peaks within a snapshot are averaged away)",
        f"AWR Miner sections not used (no redo rate in them): {', '.join(ignored_sections)}"
        if ignored_sections
        else "",
        f"MAIN-METRICS columns not used: {', '.join(h for h in table.headers if h.strip().lower() not in used)}",
    ]

    read = [(numbers[index - 1] if 0 < index <= len(numbers) else index, values) for index, values in table.rows]
    written = _numbers_written(read, columns, decimal)

    def rows() -> Iterator[tuple[int, list[str]]]:
        for number, values in read:
            end = _time(values[columns["end"]], number)
            minutes = values[columns["dur_m"]].strip()
            duration = written.parse(minutes, line=number, column="dur_m")
            if not 0 < duration <= 7 * 24 * 60:
                raise RedoInputError(f"line {number}, dur_m: {minutes} minutes is not a snapshot length (0 to 7 days)")
            begin = end - timedelta(minutes=duration)
            average = _mib_per_second(values[columns["redo_mb_s"]], number, written)
            yield (
                number,
                [
                    values[columns["snap"]],
                    values[columns["inst"]],
                    begin.isoformat(sep=" "),
                    end.isoformat(sep=" "),
                    "Redo Generated Per Sec",
                    average,
                ],
            )

    return MinerTable(
        "awr-miner", HEADERS, rows(), [note for note in notes if note], fixed_layout=True, numbers=written
    )


def _numbers_written(read: list[tuple[int, list[str]]], columns: dict[str, int], decimal: str) -> NumberFormat:
    """How the capture writes numbers, from every MAIN-METRICS value but the time (snap and inst are
    whole numbers), or the user's choice."""
    integers = {"snap", "inst"}
    positions = [(i, name, name in integers) for name, i in columns.items() if name != "end"]
    samples = [
        (number, name, values[i], integer)
        for number, values in read
        for i, name, integer in positions
        if i < len(values)
    ]
    return detect_numbers(samples, decimal)


def _mib_per_second(text: str, number: int, written: NumberFormat) -> str:
    text = text.strip()
    if not text:
        return ""
    return repr(written.parse(text, line=number, column="redo_mb_s") * MIB)
