"""Redo exports as a database with another NLS_NUMERIC_CHARACTERS would have written them, and
headings as SQL*Plus cuts them: the re-renderings the locale property and the fuzzer use.

Oracle's NLS_NUMERIC_CHARACTERS is "decimal_character group_separator": two different single-byte
characters, neither a digit nor + - < >, either may be a space (Oracle Database Reference). The
setting changes the characters a number is written with, never its format model: a value written
without group separators stays without them, one with them ('1,887,436,800', a G or ',' in the
format) gets the new group separator, and SQL*Plus keeps writing 0.3 as '.3' (',3' under ',.').
SQL*Plus right-aligns numbers in their column, so a value written shorter keeps its column width.
"""

from __future__ import annotations

import csv
import io
import re

from redolab.redo.ingest.reader import locate_heading
from redolab.redo.parsers.sqlplus import underline_at

# a number as the English default writes it: '1,887,436,800', '12.5', '.0038', '1.5E+09'
_ENGLISH = re.compile(r"^(?P<int>\d{1,3}(?:,\d{3})+|\d*)(?:\.(?P<frac>\d*))?(?P<exp>[eE][+-]?\d{1,3})?$")
_TOKEN = re.compile(r"\S+")
GROUPS = (".", " ", None)  # with a decimal comma: '.', a space, or none written


def comma_number(text: str, group: str | None) -> str:
    """`text` (a number in the English default) with a decimal comma and `group` between groups of
    digits (where the original had them); anything else unchanged."""
    match = _ENGLISH.match(text)
    if not match or not any(ch.isdigit() for ch in text) or ("," not in text and "." not in text):
        return text
    whole = match["int"]
    if "," in whole:
        digits = whole.replace(",", "")
        whole = digits if group is None else _grouped(digits, group)
    fraction = "" if match["frac"] is None else "," + match["frac"]
    return whole + fraction + (match["exp"] or "")


def _grouped(digits: str, group: str) -> str:
    head = len(digits) % 3 or 3
    return group.join([digits[:head], *(digits[i : i + 3] for i in range(head, len(digits), 3))])


def render_comma_decimals(data: bytes, group: str | None, *, semicolons: bool = False) -> bytes | None:
    """The export as written under NLS_NUMERIC_CHARACTERS ',.' (or ', ', or without groups), or
    None for a layout this cannot re-render (an AWR report, a Db2 listing). A comma-separated file
    gets its numbers quoted, or (`semicolons`) ';' between fields, as spreadsheets of those locales
    write it."""
    text = data.decode("utf-8-sig")
    lines = text.splitlines(keepends=True)
    sample = lines[:80]
    underline = underline_at(sample)
    heading = locate_heading(sample)
    if underline is not None and (heading is None or heading[0] >= underline - 1):
        return "".join(_fixed_width(line, group) for line in lines).encode()
    if heading is None:
        return None
    at, delimiter, names = heading
    out = lines[: at + 1] if names is not None or not semicolons or delimiter != "," else lines[:at]
    target = ";" if semicolons and delimiter == "," and names is None else delimiter
    for line in lines[len(out) :]:
        out.append(_delimited(line, delimiter, target, group))
    return "".join(out).encode()


def _fixed_width(line: str, group: str | None) -> str:
    """Each number re-written in place, right-aligned in the width it had."""
    pieces, last = [], 0
    for match in _TOKEN.finditer(line):
        new = comma_number(match.group(), group)
        if new != match.group():
            start = match.start() - max(0, len(new) - len(match.group()))
            pieces.append(line[last:start] + new.rjust(match.end() - start))
            last = match.end()
    return "".join(pieces) + line[last:]


def _delimited(line: str, delimiter: str, target: str, group: str | None) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    if not body.strip():
        return line
    fields = next(csv.reader([body], delimiter=delimiter))
    rendered = []
    for field in fields:
        stripped = field.strip()
        new = comma_number(stripped, group)
        rendered.append(field.replace(stripped, new, 1) if new != stripped else field)
    if rendered == fields and target == delimiter:
        return line
    if delimiter == "," and " , " in body:  # DMA 2.0.1 to 2.0.3: ' , ' between fields, numbers unquoted
        return ",".join(rendered) + ending
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=target, lineterminator="").writerow(rendered)
    return buffer.getvalue() + ending


def cut_heading(data: bytes, fraction: float) -> bytes:
    """The first heading line (a select expression, a SQL*Plus heading above its dashes, or a
    delimited heading) cut at `fraction` of its length, as SQL*Plus cuts a heading longer than the
    column or the line."""
    text = data.decode("utf-8-sig", errors="replace")
    lines = text.splitlines(keepends=True)
    sample = lines[:80]
    underline = underline_at(sample)
    heading = locate_heading(sample)
    if underline is not None and (heading is None or heading[0] >= underline - 1):
        at = next((i for i in range(underline - 1, -1, -1) if lines[i].strip()), None)
    else:
        at = heading[0] if heading is not None else None
    if at is None:
        return data
    body = lines[at].rstrip("\r\n")
    cut = max(1, int(len(body) * fraction))
    lines[at] = body[:cut] + lines[at][len(body) :]
    return "".join(lines).encode()
