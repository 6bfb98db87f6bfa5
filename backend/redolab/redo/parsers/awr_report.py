"""AWR reports (text or HTML): the snapshot interval, 'redo size' and 'redo writes' totals from
Instance Activity Stats (or the Load Profile's redo size per second), and the instance number.

Linear in the input: the report is cut into lines first (HTML by a single pass over its tags), each
line capped at MAX_LINE characters, and every pattern reads one line, anchored or after a literal,
with no quantifier that can cross a line nor two unbounded ones over the same characters. A 60 KB
report of blank lines once took 28 s in `^\\s*redo size` (from every blank line, \\s* ran to the end).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from redolab.redo.ingest.months import ENGLISH, SET_AMERICAN, resolve
from redolab.redo.parsers import RedoInputError, Table

HEADERS = ["INSTANCE_NUMBER", "SNAP_ID", "BEGIN_TIME", "END_TIME", "REDO_SIZE", "REDO_WRITES"]
MAX_LINE = 4096  # an AWR text line is under 200 characters; an HTML row joined to one line under 2,000
# DD-MON-YY HH24:MI:SS, MON in the report's NLS_DATE_LANGUAGE ('10-Дек-17', '10-déc.-17', '10-12月-17')
_SNAP_AT = r"Snap:[ \t]+(\d{1,12})[ \t]+((\d{1,2})-([^\s-]{1,26})-(\d{2,4})[ \t]+(\d{1,2}:\d{2}:\d{2}))"
_BEGIN = re.compile(r"Begin " + _SNAP_AT)
_END = re.compile(r"End " + _SNAP_AT)
_SNAP_LINE = re.compile(r"(?:Begin|End) Snap:")
_NUMBER = r"(\d[\d,.]{0,40})"
_REDO_SIZE = re.compile(r"redo size[ \t]{2,}" + _NUMBER, re.IGNORECASE)
_REDO_WRITES = re.compile(r"redo writes[ \t]{2,}" + _NUMBER, re.IGNORECASE)
_PER_SECOND = re.compile(r"Redo size(?: \(bytes\))?:?[ \t]+" + _NUMBER, re.IGNORECASE)
_ELAPSED = re.compile(r"Elapsed:[ \t]+" + _NUMBER + r"[ \t]*\(mins\)")
_INSTANCE_HEADING = re.compile(r"Inst(?:ance)? ?Num", re.IGNORECASE)
_INSTANCE_CELL = re.compile(r"Inst(?:ance)? ?Num(?:ber)?", re.IGNORECASE)
_RULE = re.compile(r"[\s-]*")  # fullmatch: a blank line or the dashes under a text heading
_CELLS = re.compile(r"\s{2,}")  # split: runs of the one character class, no backtracking
_BLOCK_ENDS = frozenset(("p", "h2", "h3", "br", "pre"))
_TAG_NAME = re.compile(r"/?([A-Za-z][A-Za-z0-9]{0,15})")


def looks_like_awr_report(text: str) -> bool:
    head = text[:20000].lower()
    return "workload repository report" in head or "begin snap:" in head


def _number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:  # '3.774.873.600': a report made under NLS_NUMERIC_CHARACTERS ',.'
        raise RedoInputError(
            f"'{text[:40]}' is not a number as an AWR report with NLS_NUMERIC_CHARACTERS '.,' writes it; "
            "run awrrpt.sql after ALTER SESSION SET NLS_NUMERIC_CHARACTERS = '.,'"
        ) from None


def html_lines(text: str) -> list[str]:
    """HTML tables as text lines: one line per row, cells separated by two spaces; text outside cells
    line by line. One pass over the tags (html.parser rescans an unclosed `<a<a<a…` from every `<`:
    80,000 of them took 20 s)."""
    lines: list[str] = []
    row: list[str] = []
    cell: list[str] | None = None
    pieces = text.split("<")
    for index, piece in enumerate(pieces):
        tag, closed, data = piece.partition(">")
        if index == 0 or not closed:  # text before the first tag, or a '<' that opens no tag
            tag, data = "", piece if index == 0 else "<" + piece
        name = _TAG_NAME.match(tag)
        word = name.group(1).lower() if name else ""
        ending, empty = tag.startswith("/"), tag.endswith("/")
        if word in ("td", "th"):
            if ending and cell is not None:
                row.append(" ".join(html.unescape("".join(cell)).split()))
            cell = None if ending else []
        elif word == "tr":
            if ending:
                lines.append("  ".join(row))
            row = []
        elif word in _BLOCK_ENDS and (ending or empty):
            lines.append("")
        if cell is not None:
            cell.append(data)
        elif data:
            lines.extend(html.unescape(data).splitlines())
    return lines


def report_lines(text: str) -> list[str]:
    """The report's lines (an HTML report's rows as lines), each cut to MAX_LINE characters: what is
    read sits at the start of its line, and a longer line (an HTML cell of SQL text) is not looked into."""
    if "<html" in text[:2000].lower() or "<table" in text[:20000].lower():
        lines = html_lines(text)
    else:
        lines = text.splitlines()
    return [line[:MAX_LINE].replace("\xa0", " ") for line in lines]


def _first(pattern: re.Pattern, lines: list[str], *, anchored: bool = False) -> re.Match | None:
    """The first line's match: at the line's first non-blank character when `anchored`, else anywhere."""
    if anchored:
        return next((found for line in lines if (found := pattern.match(line.lstrip()))), None)
    return next((found for line in lines if (found := pattern.search(line))), None)


def _instance(lines: list[str]) -> int:
    """The instance number under the 'Inst Num' heading (the next line, past one blank or dashed line)."""
    at = next((i for i, line in enumerate(lines) if _INSTANCE_HEADING.search(line)), None)
    if at is None or at + 1 >= len(lines):
        return 1
    heading, value_at = lines[at], at + 1
    if _RULE.fullmatch(lines[value_at]) and value_at + 1 < len(lines):
        value_at += 1
    values_line = lines[value_at]
    cells, values = _CELLS.split(heading.strip()), _CELLS.split(values_line.strip())
    named = [i for i, c in enumerate(cells) if _INSTANCE_CELL.fullmatch(c)]
    if named and len(values) == len(cells):  # HTML: one cell per column
        candidate = values[named[0]]
    else:  # text: the value sits under the heading
        column = _INSTANCE_HEADING.search(heading).start()
        candidate = values_line[max(0, column - 2) :]
    digits = re.search(r"\d{1,9}", candidate)  # an instance number, not a 150,000-digit run
    return int(digits.group()) if digits else 1


def _redo_bytes(lines: list[str], notes: list[str]) -> float:
    size = _first(_REDO_SIZE, lines, anchored=True)
    if size:
        return _number(size.group(1))
    per_second = _first(_PER_SECOND, lines)
    if not per_second:
        raise RedoInputError("this AWR report shows neither the 'redo size' statistic nor the Load Profile's redo size")
    elapsed = _first(_ELAPSED, lines)
    if not elapsed:
        raise RedoInputError("this AWR report has a redo size per second but no 'Elapsed: N (mins)' to scale it")
    notes.append("redo size taken from the Load Profile (per second x elapsed time)")
    return _number(per_second.group(1)) * _number(elapsed.group(1)) * 60


def _snapshot_lines(lines: list[str]) -> tuple[re.Match, re.Match]:
    begin, end = _first(_BEGIN, lines), _first(_END, lines)
    if begin and end:
        return begin, end
    at = next((i for i, line in enumerate(lines) if _SNAP_LINE.search(line)), None)
    if at is None:
        raise RedoInputError("this AWR report has no 'Begin Snap:' / 'End Snap:' lines with their times")
    raise RedoInputError(
        f"line {at + 1}: '{lines[at].strip()[:120]}' has no snapshot time as DD-MON-YY HH24:MI:SS after its "
        f"snapshot number; {SET_AMERICAN}"
    )


def _times(begin: re.Match, end: re.Match, lines: list[str], notes: list[str]) -> tuple[str, str]:
    """The snapshot times: as written when the months are English (NLS_DATE_LANGUAGE AMERICAN, the
    default), else as YYYY-MM-DD HH24:MI:SS with the months read in the report's language, the two
    dates read together (a month name of two languages is settled by the other date)."""
    if begin.group(4).upper() in ENGLISH and end.group(4).upper() in ENGLISH:
        return begin.group(2), end.group(2)
    try:
        months, language = resolve([begin.group(4), end.group(4)])
    except ValueError as error:
        at = next((i for i, line in enumerate(lines) if _SNAP_LINE.search(line)), 0)
        raise RedoInputError(
            f"line {at + 1}: snapshot times '{begin.group(2)}' and '{end.group(2)}': {error}; {SET_AMERICAN}"
        ) from None
    notes.append(f"snapshot times read with the month names of NLS_DATE_LANGUAGE {language}")
    return _iso(begin, months[0]), _iso(end, months[1])


def _iso(match: re.Match, month: int) -> str:
    year = int(match.group(5))
    if year < 100:  # Oracle's RR: 00-49 -> 20xx, 50-99 -> 19xx
        year += 2000 if year < 50 else 1900
    hours, minutes, seconds = match.group(6).split(":")
    return f"{year:04d}-{month:02d}-{int(match.group(3)):02d} {int(hours):02d}:{minutes}:{seconds}"


def read_awr_report(text: str) -> Table:
    lines = report_lines(text)
    begin, end = _snapshot_lines(lines)
    notes: list[str] = []
    begin_time, end_time = _times(begin, end, lines, notes)
    redo_bytes = _redo_bytes(lines, notes)
    writes = _first(_REDO_WRITES, lines, anchored=True)
    row = [
        str(_instance(lines)),
        begin.group(1),
        begin_time,
        end_time,
        str(redo_bytes),
        writes.group(1) if writes else "",
    ]
    rows: Iterator[tuple[int, list[str]]] = iter([(1, row)])
    return Table("awr-report", HEADERS, rows, notes, fixed_layout=True)
