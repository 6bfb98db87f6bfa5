"""CSV and other delimited exports (comma, semicolon, pipe, tab; quoted or not; padded fields),
as SQL*Plus spools them too: a blank line or a title before the heading, the heading repeated at
every page, a dashed underline, "N rows selected." at the end, or the select expression itself as
the heading (`PKEY||','||DBID||...`, written by collectors that concatenate their columns)."""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from redolab.redo.parsers import FOOTER, NOISE, RedoInputError, Table

DELIMITERS = ",;|\t"

_UNDERLINE_CHARACTERS = " \t\r\n\f\v-|,;="


def _is_underline(line: str) -> bool:
    """A dashed underline (with separators and blanks): a dash, and nothing else than those. Not a
    pattern: `[..]*-[..]*$` tried every dash of a 60 KB line of dashes and spaces again (11 s)."""
    return "-" in line and not line.strip(_UNDERLINE_CHARACTERS)


# ||'<separator>'|| between the names of a concatenated select expression. No leading \s*: from
# every space of a 200 KiB run of spaces it scanned the run again (minutes); names are stripped after.
_CONCAT = re.compile(r"\|\|\s*'([^']*)'\s*\|\|\s*")


def is_skippable(line: str) -> bool:
    """Lines that are never a heading nor a row: blank, `""`, prompts, comments, row counts."""
    stripped = line.strip()
    return not stripped or stripped in ('""', "''", '"') or bool(NOISE.match(line) or FOOTER.match(line))


def field_count(line: str, delimiter: str) -> int:
    try:
        return len(next(csv.reader([line], delimiter=delimiter)))
    except (csv.Error, StopIteration):
        return 0


def split_expression(line: str) -> tuple[str, list[str]] | None:
    """(delimiter, names) of a heading that is a concatenation expression, else None."""
    if "||" not in line:
        return None
    separators = _CONCAT.findall(line)
    if not separators:
        return None
    delimiter = separators[0].strip() or separators[0]
    if len(delimiter) != 1 or any((s.strip() or s) != delimiter for s in separators):
        return None
    names = [_clean(name) for name in _CONCAT.split(line.strip())[::2]]
    # a heading SQL*Plus cut short ends inside a name or a separator: 'PERC50||', 'PERC50||',', '...||'
    names[-1] = names[-1].rstrip("|' " + delimiter)
    if not names[-1]:
        names.pop()
    return (delimiter, names) if len(names) >= 2 and all(names) else None


def _clean(heading: str) -> str:
    return heading.strip().strip('"').strip()


class _Records:
    """csv.reader whose errors name the line: a field over csv's 128 KiB limit (a quote never
    closed, or a file that is not an export) is the user's input, not a server error."""

    def __init__(self, lines: Iterable[str], delimiter: str, base: int) -> None:
        self.reader, self.base = csv.reader(lines, delimiter=delimiter), base

    @property
    def line_num(self) -> int:
        return self.reader.line_num

    def __iter__(self) -> _Records:
        return self

    def __next__(self) -> list[str]:
        try:
            return next(self.reader)
        except csv.Error as error:
            problem = (
                f"a field longer than {csv.field_size_limit():,} characters (a quote that is never closed, or "
                "text that is not an export's rows)"
                if "field larger" in str(error)
                else f"not readable as delimited text ({error})"
            )
            raise RedoInputError(f"line {self.base + self.reader.line_num}: {problem}") from None


def read_delimited(
    lines: Iterable[str],
    delimiter: str,
    *,
    skip: int = 0,
    names: list[str] | None = None,
    complete: Callable[[list[str], int], tuple[list[str], str] | None] | None = None,
) -> Table:
    """A table from `lines`, whose heading is on line `skip` + 1 (`names` when it is an expression).
    `complete(names, width)`: the whole column list when the expression heading names fewer columns
    than the first row has (SQL*Plus cut it), with a note saying whence, or None."""
    lines = iter(lines)
    passed = "line 1 before the heading was" if skip == 1 else f"lines 1 to {skip} before the heading were"
    notes = [f"{passed} passed over (titles, prompts, blank lines)"] if skip else []
    list(islice(lines, skip))
    if names is not None:
        reader, headers, ahead = _expression_heading(lines, delimiter, skip, names, complete, notes)
        base = header_number = skip + 1
    else:
        reader = _Records(lines, delimiter, skip)  # one reader: line_num follows quoted newlines too
        headers = []
        for fields in reader:
            if any(f.strip() for f in fields):
                headers = [_clean(h) for h in fields]
                break
        if not headers:
            raise RedoInputError("the file is empty: it has no heading line")
        base, ahead = skip, None
        header_number = base + reader.line_num
    width = len(headers)
    repeated = [h.upper() for h in headers]
    # a row can only be the heading again, or its underline, if its first field starts like them
    initials = {"-", " ", '"', repeated[0][:1], repeated[0][:1].lower()} - {""}

    def rows() -> Iterator[tuple[int, list[str]]]:
        for number, fields in itertools.chain([ahead] if ahead else [], ((base + reader.line_num, f) for f in reader)):
            if len(fields) != width:
                line = delimiter.join(fields)
                if is_skippable(line) or _is_underline(line):
                    continue  # blank line, prompt, "N rows selected.", a dashed underline
                raise RedoInputError(
                    f"line {number}: {len(fields)} fields where the heading on line {header_number} "
                    f"has {width}; is a value missing, or does it contain an unquoted {_shown(delimiter)}?"
                    + _comma_hint(delimiter)
                )
            first = fields[0]
            if (
                first
                and first[0] in initials
                and (_is_underline(delimiter.join(fields)) or [_clean(f).upper() for f in fields] == repeated)
            ):
                continue  # the heading's underline, or the heading repeated at a page break
            yield number, fields  # unstripped: int()/float() ignore padding; text fields strip later

    return Table("delimited", headers, rows(), notes)


def _shown(delimiter: str) -> str:
    """A delimiter as a message names it ('\\x1f' stands for the ' , ' of DMA 2.0.1 to 2.0.3)."""
    return "' , '" if delimiter == "\x1f" else "a tab" if delimiter == "\t" else f"'{delimiter}'"


def _comma_hint(delimiter: str) -> str:
    if delimiter != ",":
        return ""
    return (
        " Numbers written with a decimal comma (NLS_NUMERIC_CHARACTERS ',.') split a comma-separated line: "
        "export with ';' between the fields, or with the numbers quoted"
    )


def _expression_heading(lines, delimiter, skip, names, complete, notes):
    """(reader, headers, the first row read ahead) under a select-expression heading; a heading that
    names fewer columns than that row has is completed by `complete` when it can be."""
    next(lines, None)
    reader = _Records(lines, delimiter, skip + 1)
    ahead = _first_record(reader, skip + 1)
    headers = names
    if ahead is not None and complete is not None and len(ahead[1]) > len(names):
        completed = complete(names, len(ahead[1]))
        if completed is not None:
            headers = completed[0]
            notes.append(f"line {skip + 1}: {completed[1]}")
    if headers is names:
        notes.append(f"the heading on line {skip + 1} is a select expression, read as: {', '.join(names)}")
    return reader, headers, ahead


def _first_record(reader: _Records, base: int) -> tuple[int, list[str]] | None:
    """The first record under an expression heading (its line number and fields), read ahead to
    compare its width with the heading's."""
    for fields in reader:
        if any(field.strip() for field in fields):
            return base + reader.line_num, fields
    return None
