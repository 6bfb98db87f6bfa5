"""AWR reports (text or HTML): the snapshot interval, 'redo size' and 'redo writes' totals from
Instance Activity Stats (or the Load Profile's redo size per second), and the instance number."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from redolab.redo.parsers import RedoInputError, Table

HEADERS = ["INSTANCE_NUMBER", "SNAP_ID", "BEGIN_TIME", "END_TIME", "REDO_SIZE", "REDO_WRITES"]
_SNAP = r"\s+(\d+)\s+(\d{1,2}-[A-Za-z]{3}-\d{2,4}\s+\d{1,2}:\d{2}:\d{2})"


class _Cells(HTMLParser):
    """HTML tables to text lines: one line per row, cells separated by two spaces."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.row: list[str] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self.cell = []
        elif tag == "tr":
            self.row = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr":
            self.lines.append("  ".join(self.row))
        elif tag in ("p", "h2", "h3", "br", "pre"):
            self.lines.append("")

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        else:
            self.lines.extend(data.splitlines())


def looks_like_awr_report(text: str) -> bool:
    return bool(re.search(r"WORKLOAD REPOSITORY report|Begin Snap:", text[:20000], re.IGNORECASE))


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def read_awr_report(text: str) -> Table:
    if "<html" in text[:2000].lower() or "<table" in text[:20000].lower():
        parser = _Cells()
        parser.feed(text)
        text = "\n".join(html.unescape(line) for line in parser.lines)
    begin = re.search(r"Begin Snap:" + _SNAP, text)
    end = re.search(r"End Snap:" + _SNAP, text)
    if not begin or not end:
        raise RedoInputError("this AWR report has no 'Begin Snap:' / 'End Snap:' lines with their times")
    size = re.search(r"^\s*redo size\s{2,}([\d,.]+)", text, re.MULTILINE | re.IGNORECASE)
    writes = re.search(r"^\s*redo writes\s{2,}([\d,.]+)", text, re.MULTILINE | re.IGNORECASE)
    instance = 1
    header = re.search(r"^(.*Inst(?:ance)? ?Num.*)$\n(?:^[\s-]*$\n)?^(.*)$", text, re.MULTILINE | re.IGNORECASE)
    if header:
        cells, values = re.split(r"\s{2,}", header.group(1).strip()), re.split(r"\s{2,}", header.group(2).strip())
        named = [i for i, c in enumerate(cells) if re.fullmatch(r"Inst(?:ance)? ?Num(?:ber)?", c, re.IGNORECASE)]
        if named and len(values) == len(cells):  # HTML: one cell per column
            candidate = values[named[0]]
        else:  # text: the value sits under the heading
            column = re.search(r"Inst(?:ance)? ?Num", header.group(1), re.IGNORECASE).start()
            candidate = header.group(2)[max(0, column - 2) :]
        digits = re.search(r"\d{1,9}", candidate)  # an instance number, not a 150,000-digit run
        if digits:
            instance = int(digits.group())
    notes = []
    if size:
        redo_bytes = _number(size.group(1))
    else:
        per_second = re.search(r"Redo size(?: \(bytes\))?:?\s+([\d,.]+)", text, re.IGNORECASE)
        if not per_second:
            raise RedoInputError(
                "this AWR report shows neither the 'redo size' statistic nor the Load Profile's redo size"
            )
        elapsed = re.search(r"Elapsed:\s+([\d,.]+)\s*\(mins\)", text)
        if not elapsed:
            raise RedoInputError("this AWR report has a redo size per second but no 'Elapsed: N (mins)' to scale it")
        redo_bytes = _number(per_second.group(1)) * _number(elapsed.group(1)) * 60
        notes.append("redo size taken from the Load Profile (per second x elapsed time)")
    row = [
        str(instance),
        begin.group(1),
        begin.group(2),
        end.group(2),
        str(redo_bytes),
        writes.group(1) if writes else "",
    ]
    return Table("awr-report", HEADERS, iter([(1, row)]), notes)
