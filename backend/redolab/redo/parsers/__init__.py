"""Readers that turn an export into a table: headers and rows, each row with its line number.

Format detection picks a reader; redo/ingest/mapping.py then maps the columns (whatever they are called)
to redo fields. One error type names the line, the column and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Lines around a query's output that are never a heading nor a row, in SQL*Plus spools and the CSV
# files written from them: "N rows selected.", prompts, echoed commands, errors, comments.
FOOTER = re.compile(r"^\s*(\d+|no) (rows?|record\(s\)) selected\.?\s*$", re.IGNORECASE)  # SQL*Plus, Db2 CLP
NOISE = re.compile(
    r"^\s*(SQL>|SP2-|ORA-\d|Elapsed:|Connected|Disconnected|Session altered|PL/SQL procedure|--|REM\s|#|\d+\s+rows? )",
    re.IGNORECASE,
)


def normalise(name: str) -> str:
    """A heading as the mapping compares it: upper case, letters and digits only."""
    return re.sub(r"[^A-Z0-9]", "", name.upper())


class RedoInputError(ValueError):
    """The input cannot be read; the message names the line and column at fault."""


@dataclass
class Table:
    format: str  # "delimited", "sqlplus", "awr-report"
    headers: list[str]
    rows: Iterator[tuple[int, list[str]]]  # (line number, values) lazily, for large files
    notes: list[str] = field(default_factory=list)
    mapped: Any = None  # a redo.schemas.Mapped already made, for text formats that are no column table (Db2)
    # headers the reader names for rows it builds from a layout of its own (an AWR report, AWR Miner's
    # MAIN-METRICS): no column of the file, so no mapping of them is offered
    fixed_layout: bool = False
