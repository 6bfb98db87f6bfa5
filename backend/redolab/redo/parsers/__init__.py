"""Readers that turn an export into a table: headers and rows, each row with its line number.

Format detection picks a reader; redo/mapping.py then maps the columns (whatever they are called)
to redo fields. One error type names the line, the column and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


class RedoInputError(ValueError):
    """The input cannot be read; the message names the line and column at fault."""


@dataclass
class Table:
    format: str  # "delimited", "sqlplus", "awr-report"
    headers: list[str]
    rows: Iterator[tuple[int, list[str]]]  # (line number, values) lazily, for large files
    notes: list[str] = field(default_factory=list)
