"""Open an export, detect its format, and hand back a table (streaming for large files).

The heading is looked for where real exports put it: after blank lines, `""` lines, report titles
and SQL*Plus prompts; a heading that is the query's own select expression (`PKEY||','||DBID`) is
split into names. A file that is none of the formats gets a message saying what was seen.
"""

from __future__ import annotations

import codecs
import io
import re
from itertools import chain, islice
from pathlib import Path
from typing import IO

from redolab.redo.parsers import RedoInputError, Table, db2, dma
from redolab.redo.parsers.awr_miner import looks_like_awr_miner, read_awr_miner
from redolab.redo.parsers.awr_report import looks_like_awr_report, read_awr_report
from redolab.redo.parsers.delimited import DELIMITERS, field_count, is_skippable, read_delimited, split_expression
from redolab.redo.parsers.sqlplus import read_sqlplus, underline_at

FORMATS = (
    "auto",
    "csv",
    "semicolon",
    "pipe",
    "tab",
    "sqlplus",
    "awr-report",
    "awr-miner",
    "db2-snapshot",
    "db2-archive-listing",
    "db2logscan",
)
DB2PD_HADR_HERE = (
    "this is `db2pd -db DBNAME -hadr` output, HADR monitoring, not log history: import it under HADR monitoring "
    "on the environment page (or POST /api/v1/environments/{id}/hadr)"
)
_DELIMITER_OF = {"csv": ",", "semicolon": ";", "pipe": "|", "tab": "\t"}
_SAMPLE_LINES = 80
_AGREEING_LINES = 10


def _text_stream(source: IO[bytes]) -> io.TextIOWrapper:
    """UTF-8, with or without a byte-order mark (Excel's "CSV UTF-8": not part of the first heading), or
    UTF-16 with its mark (Windows tools' "Unicode" output, a SQL*Plus spool from PowerShell)."""
    head = source.peek(2)[:2] if hasattr(source, "peek") else b""
    utf16 = head in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    return io.TextIOWrapper(source, encoding="utf-16" if utf16 else "utf-8-sig", errors="replace", newline="")


def read_table(
    source: IO[bytes],
    fmt: str = "auto",
    *,
    log_file_pages: int | None = None,
    decimal: str = "auto",
    name: str = "",
) -> Table:
    """Detect (or take) the format and return the table; large delimited files stream.
    `log_file_pages`: Db2's LOGFILSIZ, for an archived log listing without file sizes; `decimal`: the
    user's decimal character for a reader that converts numbers itself (AWR Miner); `name`: the file's
    name as the user knows it (a DMA collector's names its query and version)."""
    if fmt not in FORMATS:
        raise RedoInputError(f"unknown format '{fmt}': use one of {', '.join(FORMATS)}")
    # Non-breaking spaces arrive with output pasted from web pages and mail. float(), int() and strip()
    # take them as spaces already; the readers that cut columns by position replace them (sqlplus, AWR).
    text = _text_stream(source)
    sample = [line.replace("\xa0", " ") for line in islice(text, _SAMPLE_LINES)]
    lines = chain(sample, text)
    joined = "".join(sample)
    found = db2.detect(joined) if fmt == "auto" else fmt if fmt.startswith("db2") else None
    if found == "db2pd-hadr":
        raise RedoInputError(DB2PD_HADR_HERE)
    if found == "db2-snapshot":
        return db2.read_snapshots(list(lines))
    if found == "db2logscan":
        return db2.read_logscan(list(lines))
    if found == "db2-archive-listing":
        return db2.read_listing(list(lines), log_file_pages)
    if fmt == "awr-miner" or (fmt == "auto" and looks_like_awr_miner(joined)):
        return read_awr_miner([line.replace("\xa0", " ") for line in lines], decimal=decimal)
    if fmt == "awr-report" or (fmt == "auto" and looks_like_awr_report(joined)):
        return read_awr_report("".join(lines).replace("\xa0", " "))
    forced = _DELIMITER_OF.get(fmt)
    heading = locate_heading(sample, forced)
    underline = underline_at(sample)
    # SQL*Plus output whose numbers carry thousands separators splits on commas below its dashed
    # underline: a delimited heading counts only when it stands above the underline's heading.
    in_sqlplus = underline is not None and (heading is None or heading[0] >= underline - 1)
    if fmt == "sqlplus" or (fmt == "auto" and in_sqlplus):
        return read_sqlplus([line.replace("\xa0", " ") for line in lines])
    if heading is None:
        raise RedoInputError(describe_unrecognised(sample))
    at, delimiter, names = heading

    def complete(cut: list[str], width: int) -> tuple[list[str], str] | None:
        found = dma.complete_heading(name, cut, width)
        why = dma.refusal(name, cut, width) if found is None else None
        if why:
            raise RedoInputError(f"line {at + 1}: {why}")
        return found

    if names is not None and delimiter == "," and _spaced_commas(sample[at + 1 :]):
        # DMA 2.0.1 to 2.0.3 wrote ' , ' between fields: under NLS_NUMERIC_CHARACTERS ',.' a value's
        # decimal comma has no space around it, so the fields are split at ' , ' alone
        lines, delimiter = (line.replace(" , ", SPACED_COMMA) for line in lines), SPACED_COMMA
    return read_delimited(lines, delimiter, skip=at, names=names, complete=complete)


SPACED_COMMA = "\x1f"  # the unit separator: never in an export's text, stands for ' , ' between fields


def _spaced_commas(rows: list[str]) -> bool:
    """Every row of the sample has the same number, at least one, of ' , ' between its fields."""
    counts = {line.count(" , ") for line in rows if not is_skippable(line.rstrip("\r\n"))}
    return len(counts) == 1 and min(counts) > 0


def locate_heading(sample: list[str], delimiter: str | None = None) -> tuple[int, str, list[str] | None] | None:
    """(line index, delimiter, names of an expression heading) of the first line that a delimiter
    splits into two or more fields with most of the following lines agreeing; titles, prompts,
    blank and `""` lines before it are passed over."""
    lines = [line.rstrip("\r\n") for line in sample]
    for index, line in enumerate(lines):
        if is_skippable(line):
            continue
        expression = split_expression(line)
        if expression is not None:
            if delimiter is None or delimiter == expression[0]:
                return index, expression[0], expression[1]
            continue
        following = [other for other in lines[index + 1 :] if not is_skippable(other)][:_AGREEING_LINES]
        best = None
        for candidate in (delimiter,) if delimiter else tuple(DELIMITERS):
            width = field_count(line, candidate)
            if width < 2:
                continue
            agreeing = sum(1 for other in following if field_count(other, candidate) == width)
            if (not following or agreeing * 2 >= len(following)) and (best is None or width > best[1]):
                best = (candidate, width)
        if best is not None:
            return index, best[0], None
    return None


_ORATCPTEST = re.compile(r"oratcptest|\[Requesting a test\]|Avg\. throughput", re.IGNORECASE)
# [ \t]* before the brace, not \s*: from every blank line, \s* ran over all the blank lines after it.
_IPERF3 = re.compile(r'^[ \t]*\{\s*"(start|intervals|end|error)"|"iperf_version"|"sum_received"', re.MULTILINE)


def describe_unrecognised(sample: list[str]) -> str:
    """What was seen in a file no reader took, and what would work."""
    text = "".join(sample)
    if _ORATCPTEST.search(text):
        return (
            "this is oratcptest output, a network test result, not redo history: import it on the "
            "Experiments section (Import oratcptest or iperf3 results) or with `redolab import-results`"
        )
    if _IPERF3.search(text):
        return (
            "this is an iperf3 JSON result, a network test, not redo history: import it on the "
            "Experiments section (Import oratcptest or iperf3 results) or with `redolab import-results`"
        )
    seen = [line.strip() for line in sample if not is_skippable(line.rstrip("\r\n"))]
    if not seen:
        return "the file is empty (or holds only blank lines): export the query's rows with their heading"
    first = seen[0][:80]
    return (
        f"no table was found: the first line with text is '{first}', and no comma, semicolon, pipe or tab "
        "splits it and the lines after it into the same columns; it is not SQL*Plus output (a heading with a "
        "dashed underline), an AWR report or an AWR Miner capture. Export V$ARCHIVED_LOG (THREAD#, SEQUENCE#, "
        "FIRST_TIME, NEXT_TIME, BLOCKS, BLOCK_SIZE) or a volume per hour as CSV with a heading line, or choose "
        "the format by hand"
    )


def open_table(
    path: Path, fmt: str = "auto", *, log_file_pages: int | None = None, decimal: str = "auto", name: str = ""
) -> tuple[Table, IO[bytes]]:
    handle = open(path, "rb")  # noqa: SIM115  (closed by the caller after streaming)
    try:
        return read_table(handle, fmt, log_file_pages=log_file_pages, decimal=decimal, name=name), handle
    except Exception:
        handle.close()
        raise
