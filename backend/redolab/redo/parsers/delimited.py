"""CSV and other delimited exports (comma, semicolon, pipe, tab; quoted or not; padded fields)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from redolab.redo.parsers import RedoInputError, Table

DELIMITERS = ",;|\t"


def sniff_delimiter(sample_lines: list[str]) -> str | None:
    """The delimiter that splits the heading into the most fields (>1), with most of the following
    lines agreeing (a ragged line is then reported by its number instead of hiding the format)."""
    lines = [line for line in sample_lines if line.strip()][:20]
    best = None
    for delimiter in DELIMITERS:
        counts = [len(next(csv.reader([line], delimiter=delimiter))) for line in lines]
        if not counts or counts[0] < 2:
            continue
        agreeing = sum(1 for c in counts if c == counts[0])
        if agreeing > len(counts) / 2 and (best is None or counts[0] > best[1]):
            best = (delimiter, counts[0])
    return best[0] if best else None


def read_delimited(lines: Iterable[str], delimiter: str) -> Table:
    reader = csv.reader(lines, delimiter=delimiter)  # one reader: line_num follows quoted newlines too
    headers: list[str] = []
    for fields in reader:
        if any(f.strip() for f in fields):
            headers = [h.strip().strip('"').strip() for h in fields]
            break
    if not headers:
        raise RedoInputError("the file is empty")
    header_number = reader.line_num
    width = len(headers)

    def rows() -> Iterator[tuple[int, list[str]]]:
        for fields in reader:
            if len(fields) != width:
                if not any(f.strip() for f in fields):
                    continue  # blank line
                raise RedoInputError(
                    f"line {reader.line_num}: {len(fields)} fields where the heading on line {header_number} "
                    f"has {width}; is a value missing, or does it contain an unquoted '{delimiter}'?"
                )
            yield reader.line_num, fields  # unstripped: int()/float() ignore padding; text fields strip later

    return Table("delimited", headers, rows())
