"""Open an export, detect its format, and hand back a table (streaming for large files)."""

from __future__ import annotations

import io
from itertools import chain
from pathlib import Path
from typing import IO

from redolab.redo.parsers import RedoInputError, Table
from redolab.redo.parsers.awr_report import looks_like_awr_report, read_awr_report
from redolab.redo.parsers.delimited import read_delimited, sniff_delimiter
from redolab.redo.parsers.sqlplus import looks_like_sqlplus, read_sqlplus

FORMATS = ("auto", "csv", "semicolon", "pipe", "tab", "sqlplus", "awr-report")
_DELIMITER_OF = {"csv": ",", "semicolon": ";", "pipe": "|", "tab": "\t"}
_SAMPLE_LINES = 60


def _text_stream(source: IO[bytes]) -> io.TextIOWrapper:
    return io.TextIOWrapper(source, encoding="utf-8", errors="replace", newline="")


def read_table(source: IO[bytes], fmt: str = "auto") -> Table:
    """Detect (or take) the format and return the table; large delimited files stream."""
    if fmt not in FORMATS:
        raise RedoInputError(f"unknown format '{fmt}': use one of {', '.join(FORMATS)}")
    # Non-breaking spaces arrive with output pasted from web pages and mail: they are spaces.
    text = (line.replace("\xa0", " ") for line in _text_stream(source))
    sample = [line for _, line in zip(range(_SAMPLE_LINES), text, strict=False)]
    lines = chain(sample, text)
    joined = "".join(sample)
    if fmt == "awr-report" or (fmt == "auto" and looks_like_awr_report(joined)):
        return read_awr_report("".join(lines))
    if fmt == "sqlplus" or (
        fmt == "auto" and looks_like_sqlplus(sample) and sniff_delimiter(_data_lines(sample)) is None
    ):
        return read_sqlplus(list(lines))
    delimiter = _DELIMITER_OF.get(fmt) or sniff_delimiter(_data_lines(sample))
    if delimiter is None:
        raise RedoInputError(
            "the format was not recognised: not delimited (comma, semicolon, pipe, tab), not SQL*Plus "
            "output (a heading with a dashed underline), not an AWR report; choose the format by hand"
        )
    return read_delimited(lines, delimiter)


def _data_lines(sample: list[str]) -> list[str]:
    return [line.rstrip("\r\n") for line in sample if line.strip()]


def open_table(path: Path, fmt: str = "auto") -> tuple[Table, IO[bytes]]:
    handle = open(path, "rb")  # noqa: SIM115  (closed by the caller after streaming)
    try:
        return read_table(handle, fmt), handle
    except Exception:
        handle.close()
        raise
