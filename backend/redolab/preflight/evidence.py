"""One checked item of pasted evidence, and the Broker's own warnings and errors, as rows."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from redolab.preflight.errors import printable

PASS, WARN, FAIL, UNKNOWN = "PASS", "WARN", "FAIL", "UNKNOWN"
STATUSES = (PASS, WARN, FAIL, UNKNOWN)


@dataclass(frozen=True)
class EvidenceRow:
    """`check`: what was checked (snake_case, e.g. "ready_for_switchover"); `member`: the database (or
    connect identifier) it is about; `status`: PASS, WARN, FAIL or UNKNOWN; `detail`: what the output says,
    in words (control characters removed); `line`: its 1-based line in the pasted text."""

    check: str
    member: str
    status: str
    detail: str
    line: int


def row(check: str, member: str, status: str, detail: str, line: int) -> EvidenceRow:
    return EvidenceRow(check, printable(member, 128), status, printable(detail), line)


# What the Broker prints about a member ("Warning: standby redo logs not configured for thread 1 on orcl",
# "Error: ORA-16625: cannot reach database", "ORA-16809: multiple warnings detected for the member").
_MESSAGE = re.compile(r"^(Warning|Error):\s?(.*)$", re.IGNORECASE)
_CODE = re.compile(r"^(ORA|DGM|TNS)-\d{4,5}\b")


def broker_message(stripped: str, member: str, line: int) -> EvidenceRow | None:
    """A row for a Broker warning (WARN) or error (FAIL) line, or None when the line is neither."""
    match = _MESSAGE.match(stripped)
    if match:
        status = FAIL if match[1].lower() == "error" else WARN
        return row("broker_message", member, status, f"{match[1].title()}: {match[2]}", line)
    if _CODE.match(stripped):
        return row("broker_message", member, WARN, stripped, line)
    return None


TERMINAL_COLUMNS = 79  # a line this long or longer may have been cut by the terminal, not by DGMGRL


def join_wrapped(
    lines: list[str], index: int, complete: Callable[[str], bool], starts: tuple[str, ...], most: int = 6
) -> tuple[str, int]:
    """The line at `index` with the lines a terminal wrapped it onto, and the index of the last one used.
    A following line is appended while the text is not `complete`, the line before it is as long as a
    terminal's width (a shorter one was not cut), and it is neither blank nor the start of another line
    (`starts`); at most `most` of them. A cut at the width is joined without a space (the space, when the
    cut fell on one, ends the line before)."""
    text, last = lines[index].lstrip(), index
    while (
        not complete(text.strip())
        and last - index < most
        and last + 1 < len(lines)
        and len(lines[last]) >= TERMINAL_COLUMNS
        and lines[last + 1].strip()
        and not lines[last + 1].lstrip().startswith(starts)
    ):
        last += 1
        text += lines[last]
    return text.strip(), last
