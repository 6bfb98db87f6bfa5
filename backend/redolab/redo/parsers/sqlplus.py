"""SQL*Plus text output: headings with dashed underlines (the dashes give the column widths),
headings repeated at page breaks, "N rows selected.", prompts and echoed SQL around the output,
values wrapped onto continuation lines, tabs where spaces were, blank first lines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from redolab.redo.parsers import FOOTER, NOISE, RedoInputError, Table

_DASHES = re.compile(r"^\s*-+(\s+-+)*\s*$")


def underline_at(sample_lines: list[str]) -> int | None:
    """Index of the first dashed underline (SQL*Plus's heading separator) in the sample, or None."""
    return next((i for i, line in enumerate(sample_lines) if line.strip() and _DASHES.match(line.expandtabs(8))), None)


def _spans(dash_line: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", dash_line)]


def _cut(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """Slice a fixed-width line at the column starts; a value that runs over a column edge
    (a wide number, a shifted tab) stays with the column it started in."""
    bounds = [start for start, _ in spans[1:]]
    for i, bound in enumerate(bounds):
        while 0 < bound < len(line) and line[bound - 1] != " " and line[bound] != " ":
            bound += 1
        bounds[i] = max(bound, bounds[i - 1] if i else 0)
    edges = [spans[0][0], *bounds, len(line)]
    return [line[edges[i] : edges[i + 1]].strip() for i in range(len(spans))]


def read_sqlplus(lines: Iterable[str]) -> Table:
    lines = [line.rstrip("\r\n").expandtabs(8) for line in lines]
    dash_at, heading_at = None, None
    for i, line in enumerate(lines):
        if _DASHES.match(line):
            above = next((j for j in range(i - 1, -1, -1) if lines[j].strip()), None)
            if above is not None and not _DASHES.match(lines[above]):
                dash_at, heading_at = i, above  # double-spaced output has blank lines in between
                break
    if dash_at is None:
        raise RedoInputError("no SQL*Plus column headings (a line of dashes under the heading line) were found")
    heading_line, dash_line = lines[heading_at], lines[dash_at]
    spans = _spans(dash_line)
    headers = [h for h in _cut(heading_line, spans)]
    if not all(headers):
        headers = heading_line.split()
    if len(headers) != len(spans):
        raise RedoInputError(f"line {dash_at}: {len(headers)} headings but {len(spans)} dashed columns under them")

    def rows() -> Iterator[tuple[int, list[str]]]:
        pending: tuple[int, list[str]] | None = None
        index = dash_at + 1
        while index < len(lines):
            line = lines[index]
            number = index + 1
            index += 1
            if not line.strip() or FOOTER.match(line) or NOISE.match(line):
                continue
            if line == heading_line:
                continue  # heading repeated at a page break (its dashes are skipped below)
            if _DASHES.match(line):
                continue
            values = _cut(line, spans)
            filled = [bool(v) for v in values]
            # A wrapped value: a line that only fills columns the previous row left incomplete.
            if pending and filled.count(True) < len(spans) // 2 + (len(spans) == 1) and not filled[0]:
                merged = [a + b if b else a for a, b in zip(pending[1], values, strict=True)]
                pending = (pending[0], merged)
                continue
            if pending:
                yield pending
            pending = (number, values)
        if pending:
            yield pending

    return Table("sqlplus", headers, rows())
