"""Dates and numbers as DBAs export them. Errors name the line, the column and the format."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from redolab.redo.parsers import RedoInputError

_MONTHS = {
    m: i for i, m in enumerate(["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], 1)
}
_TIME = r"(?:[ T]+(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?\s*(?P<ampm>[AaPp][Mm])?)?"
_ZONE = r"\s*(?:Z|[+-]\d{2}:?\d{2}|UTC)?"
_PATTERNS = [
    (
        "DD-MON-YY HH24:MI:SS",
        re.compile(rf"^(?P<d>\d{{1,2}})[-/ ](?P<mon>[A-Za-z]{{3}})[-/ ](?P<y>\d{{2}}|\d{{4}}){_TIME}{_ZONE}$"),
    ),
    ("YYYY-MM-DD HH24:MI:SS", re.compile(rf"^(?P<y>\d{{4}})[-/](?P<m>\d{{1,2}})[-/](?P<d>\d{{1,2}}){_TIME}{_ZONE}$")),
    ("DD/MM/YYYY HH24:MI:SS", re.compile(rf"^(?P<d>\d{{1,2}})[/.](?P<m>\d{{1,2}})[/.](?P<y>\d{{4}}){_TIME}{_ZONE}$")),
]


class DateColumn:
    """Parses one column's dates; the first value fixes the format used in error messages."""

    def __init__(self, column: str) -> None:
        self.column = column
        self.format: str | None = None

    def parse(self, text: str, line: int) -> datetime:
        for name, pattern in _PATTERNS:
            match = pattern.match(text.strip())
            if match:
                try:
                    value = _build(match)
                except ValueError:
                    break
                self.format = self.format or name
                return value
        expected = self.format or "a date such as DD-MON-YY HH24:MI:SS, YYYY-MM-DD HH24:MI:SS or DD/MM/YYYY HH24:MI:SS"
        raise RedoInputError(f"line {line}, {self.column}: '{text}' is not a date in {expected}")


def _build(match: re.Match) -> datetime:
    parts = match.groupdict()
    year = int(parts["y"])
    if year < 100:  # Oracle's RR: 00-49 -> 20xx, 50-99 -> 19xx
        year += 2000 if year < 50 else 1900
    month = _MONTHS.get(parts["mon"].upper(), 0) if parts.get("mon") else int(parts["m"])
    if month == 0:
        raise ValueError("unknown month")
    hour = int(parts["h"] or 0)
    if parts["ampm"]:
        if not 1 <= hour <= 12:
            raise ValueError("12-hour clock")
        hour = hour % 12 + (12 if parts["ampm"].upper() == "PM" else 0)
    micro = int((parts["f"] or "0")[:6].ljust(6, "0"))
    return datetime(year, month, int(parts["d"]), hour, int(parts["mi"] or 0), int(parts["s"] or 0), micro, tzinfo=UTC)


_NUMBER = re.compile(r"^[+]?(\d[\d,_ ]*)?(\.\d*)?([eE][+-]?\d+)?$")


def parse_number(text: str, *, line: int, column: str) -> float:
    """A non-negative number: thousands separators and no leading zero are fine ("1,234.5", ".70")."""
    cleaned = text.strip()
    if not cleaned or not _NUMBER.match(cleaned) or cleaned in (".", "+"):
        raise RedoInputError(f"line {line}, {column}: '{text}' is not a number")
    return float(cleaned.replace(",", "").replace("_", "").replace(" ", ""))
