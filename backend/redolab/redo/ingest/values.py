"""Dates and numbers as DBAs export them. Errors name the line, the column and the format."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from redolab.redo.parsers import RedoInputError

_MONTHS = {
    m: i for i, m in enumerate(["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], 1)
}
_TIME = r"(?:[ T]+(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?\s*(?P<ampm>[AaPp][Mm])?)?"
_ZONE = r"\s*(?P<zone>Z|[+-]\d{2}:?\d{2}|UTC)?"
_PATTERNS = [
    (
        "DD-MON-YY HH24:MI:SS",
        re.compile(rf"^(?P<d>\d{{1,2}})[-/ ](?P<mon>[A-Za-z]{{3}})[-/ ](?P<y>\d{{2}}|\d{{4}}){_TIME}{_ZONE}$"),
    ),
    ("YYYY-MM-DD HH24:MI:SS", re.compile(rf"^(?P<y>\d{{4}})[-/](?P<m>\d{{1,2}})[-/](?P<d>\d{{1,2}}){_TIME}{_ZONE}$")),
    ("DD/MM/YYYY HH24:MI:SS", re.compile(rf"^(?P<d>\d{{1,2}})[/.](?P<m>\d{{1,2}})[/.](?P<y>\d{{4}}){_TIME}{_ZONE}$")),
]


_MONTH_DIGITS = {
    name: f"{number:02d}" for month, number in _MONTHS.items() for name in (month, month.title(), month.lower())
}
_from_iso = datetime.fromisoformat


def _fixed_width(text: str) -> datetime | None:
    """Fast path for the two commonest exports: 'DD-MON-YY HH24:MI:SS' and 'YYYY-MM-DD HH24:MI:SS',
    rewritten as ISO 8601 for the C parser (which also refuses impossible dates such as 31-FEB)."""
    try:
        if len(text) == 18 and text[2] == "-" and text[6] == "-" and text[9] == " " and text[12] == ":" == text[15]:
            century = "20" if text[7] < "5" else "19"  # Oracle's RR: 00-49 -> 20xx, 50-99 -> 19xx
            return _from_iso(f"{century}{text[7:9]}-{_MONTH_DIGITS[text[3:6]]}-{text[0:2]}{text[9:]}+00:00")
        if len(text) == 19 and text[4] == "-" and text[7] == "-" and text[10] == " " and text[13] == ":" == text[16]:
            return _from_iso(text + "+00:00")
    except (KeyError, ValueError):
        return None  # the regular parser decides, and names the error
    return None


class DateColumn:
    """Parses one column's dates; the first value fixes the format used in error messages."""

    def __init__(self, column: str) -> None:
        self.column = column
        self.format: str | None = None
        self._recent: dict[str, datetime] = {}  # a log's NEXT_TIME is the next log's FIRST_TIME

    def parse(self, text: str, line: int) -> datetime:
        cached = self._recent.get(text)
        if cached is not None:
            return cached
        value = _fixed_width(text)
        if value is None:
            value = self._parse(text, line)
        elif self.format is None:
            self.format = "DD-MON-YY HH24:MI:SS" if text[2] == "-" else "YYYY-MM-DD HH24:MI:SS"
        if len(self._recent) > 64:
            self._recent.clear()
        self._recent[text] = value
        return value

    def _parse(self, text: str, line: int) -> datetime:
        cleaned = text.replace("\xa0", " ").strip()  # a non-breaking space from pasted output is a space
        for name, pattern in _PATTERNS:
            match = pattern.match(cleaned)
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
    zone = _explicit_zone(parts.get("zone"))
    return datetime(year, month, int(parts["d"]), hour, int(parts["mi"] or 0), int(parts["s"] or 0), micro, tzinfo=zone)


def _explicit_zone(text: str | None):
    """A time written with its zone ('Z', 'UTC', '+02:00') keeps it: a tzinfo that is not the UTC
    singleton, so reading in the database's time zone (redo.ingest.pipeline.in_zone) leaves it alone. A time
    without one is the database's wall clock, tagged UTC until then."""
    if not text:
        return UTC
    if text in ("Z", "UTC"):
        return timezone(timedelta(0), text)
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])), text)


_NUMBER = re.compile(r"^[+]?(\d[\d,_ ]*)?(\.\d*)?([eE][+-]?\d+)?$")


def parse_number(text: str, *, line: int, column: str) -> float:
    """A non-negative number: thousands separators and no leading zero are fine ("1,234.5", ".70")."""
    try:  # the common case, plain digits, without the regex
        value = float(text)
    except ValueError:
        cleaned = text.strip()
        if not cleaned or not _NUMBER.match(cleaned) or cleaned in (".", "+"):
            raise RedoInputError(f"line {line}, {column}: '{text}' is not a number") from None
        return float(cleaned.replace(",", "").replace("_", "").replace(" ", ""))
    if value < 0 or value != value or value in (float("inf"),):
        raise RedoInputError(f"line {line}, {column}: '{text}' is not a size or count (negative or not finite)")
    return value
