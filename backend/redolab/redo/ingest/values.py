"""Dates and numbers as DBAs export them. Errors name the line, the column and the format."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from redolab.redo.ingest.months import ENGLISH, SET_AMERICAN, MonthReader
from redolab.redo.parsers import RedoInputError

_MONTHS = ENGLISH
_TIME = r"(?:[ T]+(?P<h>\d{1,2})[:.](?P<mi>\d{2})(?:[:.](?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?\s*(?P<ampm>[AaPp][Mm])?)?"
_ZONE = r"\s*(?P<zone>Z|[+-]\d{2}:?\d{2}|UTC)?"
_MON = r"\d{0,2}[^\W\d_][^\s/:-]{0,23}"  # a letter, after the month's digits in '12月', then no separator
_PATTERNS = [
    (
        "DD-MON-YY HH24:MI:SS",
        # MON in any NLS_DATE_LANGUAGE: 'DEC', 'Дек', 'déc.', 'ธ.ค.', '12月' (no separator in it, at most 26 long)
        re.compile(rf"^(?P<d>\d{{1,2}})[-/ ](?P<mon>{_MON})[-/ ](?P<y>\d{{2}}|\d{{4}}){_TIME}{_ZONE}$"),
    ),
    ("YYYY-MM-DD HH24:MI:SS", re.compile(rf"^(?P<y>\d{{4}})[-/](?P<m>\d{{1,2}})[-/](?P<d>\d{{1,2}}){_TIME}{_ZONE}$")),
    ("DD/MM/YYYY HH24:MI:SS", re.compile(rf"^(?P<d>\d{{1,2}})[/.](?P<m>\d{{1,2}})[/.](?P<y>\d{{4}}){_TIME}{_ZONE}$")),
]


_MONTH_DIGITS = {
    name: f"{number:02d}" for month, number in _MONTHS.items() for name in (month, month.title(), month.lower())
}
_from_iso = datetime.fromisoformat


def _fixed_width(text: str, digits: dict[str, str] = _MONTH_DIGITS) -> datetime | None:
    """Fast path for the two commonest exports: 'DD-MON-YY HH24:MI:SS' and 'YYYY-MM-DD HH24:MI:SS',
    rewritten as ISO 8601 for the C parser (which also refuses impossible dates such as 31-FEB).
    `digits`: the three-character month names the column reads ('JAN' or, learnt, 'ДЕК') -> '01'."""
    try:
        if len(text) == 18 and text[2] == "-" and text[6] == "-" and text[9] == " " and text[12] == ":" == text[15]:
            century = "20" if text[7] < "5" else "19"  # Oracle's RR: 00-49 -> 20xx, 50-99 -> 19xx
            return _from_iso(f"{century}{text[7:9]}-{digits[text[3:6]]}-{text[0:2]}{text[9:]}+00:00")
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
        self._months = MonthReader()  # month names of another NLS_DATE_LANGUAGE, settled by the column's values
        # the fast path's three-character month names: English's, then those learnt ('ДЕК' -> '12'); English's
        # go once the column's dates settle a language without them (Finnish MAR is marraskuu, November)
        self._digits: dict[str, str] = dict(_MONTH_DIGITS)
        self._english = True

    def parse(self, text: str, line: int) -> datetime:
        cached = self._recent.get(text)
        if cached is not None:
            return cached
        value = _fixed_width(text, self._digits)
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
                    value = _build(match, self._months)
                except _UnknownMonth as error:
                    raise RedoInputError(
                        f"line {line}, {self.column}: '{text}' is not a date in {name}: {error}; {SET_AMERICAN}"
                    ) from None
                except ValueError:
                    break
                self.format = self.format or name
                self._learn(match.groupdict().get("mon"), value)
                return value
        expected = self.format or "a date such as DD-MON-YY HH24:MI:SS, YYYY-MM-DD HH24:MI:SS or DD/MM/YYYY HH24:MI:SS"
        raise RedoInputError(f"line {line}, {self.column}: '{text}' is not a date in {expected}")

    def _learn(self, mon: str | None, value: datetime) -> None:
        if not mon:
            return
        if self._english and not self._months.english:  # JAN, MAR, ... are not English months in this column
            self._digits = {name: digits for name, digits in self._digits.items() if name not in _MONTH_DIGITS}
            self._english = False
            self._recent.clear()
        if len(mon) == 3 and mon not in self._digits and len(self._digits) < 64:
            self._digits[mon] = f"{value.month:02d}"


class _UnknownMonth(ValueError):
    """The month name is no month in any NLS_DATE_LANGUAGE, or not one the column's other dates settle."""


def _month(parts: dict, months: MonthReader | None) -> int:
    if not parts.get("mon"):
        return int(parts["m"])
    english = _MONTHS.get(parts["mon"].upper()) if months is None or months.english else None
    if english is not None:
        return english
    try:
        return (months or MonthReader()).month(parts["mon"])
    except ValueError as error:
        raise _UnknownMonth(str(error)) from None


def _build(match: re.Match, months: MonthReader | None = None) -> datetime:
    parts = match.groupdict()
    year = int(parts["y"])
    if year < 100:  # Oracle's RR: 00-49 -> 20xx, 50-99 -> 19xx
        year += 2000 if year < 50 else 1900
    month = _month(parts, months)
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


def parse_number(text: str, *, line: int, column: str, numbers: NumberFormat | None = None) -> float:
    """A non-negative number. With `numbers` (the file's separators) it is read by them
    ("1.234,5" with a decimal comma); without, the separators of the English default ("1,234.5",
    ".70")."""
    if numbers is not None and numbers.decimal == ",":
        return numbers.parse(text, line=line, column=column)
    try:  # the common case, plain digits, without the regex
        value = float(text)
    except ValueError:
        if numbers is not None:
            return numbers.parse(text, line=line, column=column)
        cleaned = text.strip()
        if not cleaned or not _NUMBER.match(cleaned) or cleaned in (".", "+"):
            raise RedoInputError(f"line {line}, {column}: '{text}' is not a number") from None
        return float(cleaned.replace(",", "").replace("_", "").replace(" ", ""))
    if value < 0 or value != value or value in (float("inf"),):
        raise RedoInputError(f"line {line}, {column}: '{text}' is not a size or count (negative or not finite)")
    return value


# -- decimal and group separators (Oracle's NLS_NUMERIC_CHARACTERS: "decimal_character group_separator",
# two different single-byte characters, neither a digit nor + - < >; either may be a space) ----------
DECIMAL_CHOICES = ("auto", "point", "comma")
_SPACES = " \u00a0\u202f"  # a space group separator; pasted output turns it into a no-break space
CHOOSE_DECIMAL = (
    "choose the decimal separator (point or comma) and preview again, or send decimal=point or decimal=comma"
)


@dataclass(frozen=True)
class NumberFormat:
    """How a file writes its numbers: the decimal character, the group separator (None: none
    seen), and where that was learnt ("file", "choice", "groups": only group separators seen, or
    "default")."""

    decimal: str = "."
    group: str | None = None
    source: str = "default"

    @property
    def nls(self) -> str:
        group = self.group or ("," if self.decimal == "." else ".")
        return f"'{self.decimal}{group}'"

    def describe(self) -> str:
        """What the preview says, e.g. "decimal comma, as NLS_NUMERIC_CHARACTERS ',.' (seen in the file)"."""
        name = "decimal comma" if self.decimal == "," else "decimal point"
        group = {None: "", " ": ", groups of digits split by spaces"}.get(
            self.group, f", '{self.group}' between groups of digits"
        )
        whence = {
            "file": "seen in the file",
            "choice": "as chosen",
            "default": "no separator in the file",
            "groups": "whole numbers only: no decimal character in the file",
        }[self.source]
        return f"{name}{group}, as NLS_NUMERIC_CHARACTERS {self.nls} ({whence})"

    def parse(self, text: str, *, line: int, column: str) -> float:
        cleaned = text.strip()
        match = _SHAPE.match(cleaned)
        kind = _shape_of(match, cleaned) if match else None
        value = None if kind is None else _value_as(match, self.decimal)
        if value is None:
            written = "decimal comma" if self.decimal == "," else "decimal point"
            raise RedoInputError(
                f"line {line}, {column}: '{text}' is not a number written with a {written} "
                f"(NLS_NUMERIC_CHARACTERS {self.nls}); if the file uses the other separator, {CHOOSE_DECIMAL}"
            )
        if value < 0 or value != value or value == float("inf"):
            raise RedoInputError(f"line {line}, {column}: '{text}' is not a size or count (negative or not finite)")
        return value


POINT = NumberFormat()

# digits with at most one kind of mark between them, then optionally the other mark and digits, and
# an exponent: '1,234,567', '1.234,5', ',3', '7,8', '1 234,5', '1.5E+09'
_SHAPE = re.compile(
    r"^[+]?(?P<int>\d{1,3}(?:(?P<g>[.,'_ \u00a0\u202f])\d{3})(?:(?P=g)\d{3})*|\d*)"
    r"(?:(?P<dec>[.,])(?P<frac>\d*))?(?P<exp>[eE][+-]?\d{1,3})?$",
    re.ASCII,
)


def _shape_of(match: re.Match, text: str) -> str | None:
    if not any(ch.isdigit() for ch in text):
        return None
    group, decimal = match["g"], match["dec"]
    if group and decimal and group == decimal:
        return None  # '1,234,5': a group and a decimal of the same character
    return "number"


def _value_as(match: re.Match, decimal: str) -> float | None:
    """The value when `decimal` is the decimal character, else None (the marks contradict it)."""
    group, mark, whole, fraction = match["g"], match["dec"], match["int"], match["frac"] or ""
    if group == decimal or (mark and mark != decimal):
        if mark or group != decimal or whole.count(group) != 1:
            return None
        # '1,234' read with a decimal comma: the 'group' was the decimal
        head, tail = whole.split(group)
        whole, mark, fraction = head, group, tail
    digits = whole.translate(_NO_GROUPS)
    if not digits and not fraction:
        return None
    return float(f"{digits or '0'}.{fraction or '0'}{match['exp'] or ''}")


_NO_GROUPS = str.maketrans("", "", ".,'_ \u00a0\u202f")


def detect_numbers(samples: list[tuple[int, str, str, bool]], chosen: str = "auto") -> NumberFormat:
    """The file's separators from its numeric values (line, column, text, integer_only), or the
    user's `chosen` one ('point', 'comma'). A file that could be either (only '1,234'-like values)
    is refused, naming the first such value: the user chooses."""
    if chosen == "point":
        return NumberFormat(".", None, "choice")
    if chosen == "comma":
        return NumberFormat(",", None, "choice")
    votes: dict[str, tuple[int, str, str]] = {}
    ambiguous: tuple[int, str, str] | None = None
    groups: set[str] = set()
    for line, column, text, integer_only in samples:
        cleaned = text.strip()
        match = _SHAPE.match(cleaned)
        if not match or not _shape_of(match, cleaned):
            continue
        if match["g"]:
            groups.add(match["g"])
        verdict = _verdict(match, integer_only)
        if verdict == "?":
            ambiguous = ambiguous or (line, column, text)
        elif verdict:
            votes.setdefault(verdict, (line, column, text))
    return _decide(votes, ambiguous, groups)


def _verdict(match: re.Match, integer_only: bool) -> str | None:
    """'.' or ',' when the value shows its decimal character, '?' when it could be either, None
    when it shows none ('1234')."""
    group, mark, whole, fraction = match["g"], match["dec"], match["int"], match["frac"]
    if group and mark:
        return mark  # '1.234,5', '1,234.5'
    if group in (".", ","):
        if whole.startswith("0"):
            return group  # '0,500': no group separator follows a leading zero
        if whole.count(group) > 1:
            return "," if group == "." else "."  # a decimal character comes once: these are groups
        return ("," if group == "." else ".") if integer_only else "?"
    if group:
        return None  # '1 234': a space group says nothing of the decimal character
    if mark and (fraction is None or len(fraction) != 3 or not whole or len(whole) > 3):
        return mark  # ',3', '7,8', '12,34', '1234,567': no group is written that way
    return None


def _decide(votes: dict, ambiguous: tuple[int, str, str] | None, groups: set[str]) -> NumberFormat:
    if len(votes) == 2:
        (l1, c1, t1), (l2, c2, t2) = votes["."], votes[","]
        raise RedoInputError(
            f"numbers are written both with a decimal point (line {l1}, {c1}: '{t1}') and with a decimal "
            f"comma (line {l2}, {c2}: '{t2}'): export the file again with one NLS_NUMERIC_CHARACTERS setting"
        )
    if votes:
        decimal = next(iter(votes))
        group = next((g for g in sorted(groups) if g != decimal), None)
        return NumberFormat(decimal, _spaced(group), "file")
    if ambiguous is not None:
        line, column, text = ambiguous
        raise RedoInputError(
            f"line {line}, {column}: '{text}' could be a number with a group separator or with a decimal "
            f"{'comma' if ',' in text else 'point'}, and no other value in the file tells which: {CHOOSE_DECIMAL}"
        )
    group = next(iter(sorted(groups)), None)
    return NumberFormat(".", _spaced(group), "groups" if group else "default")


def _spaced(group: str | None) -> str | None:
    """A no-break or narrow space between groups is a space group separator."""
    return " " if group is not None and group in _SPACES else group
