"""The one error of the evidence readers: the user's label for the text, the line, and what was expected."""

from __future__ import annotations

import re

# C0 and C1 control characters (tabs and line ends are split or expanded before any text is kept): pasted
# terminal output may carry escape sequences, which are never shown back raw.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LABEL_CHARACTERS = 120


def printable(text: str, limit: int = 300) -> str:
    """`text` without control characters, cut to `limit` characters (an ellipsis says it was cut)."""
    cleaned = _CONTROL.sub("", text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


class EvidenceError(ValueError):
    """Pasted evidence that cannot be read: `source` (the user's own label), the 1-based `line`
    (0 for the text as a whole) and what was `expected` there."""

    def __init__(self, source: str, line: int, expected: str) -> None:
        self.source = printable(source, _LABEL_CHARACTERS) or "the pasted text"
        self.line = line
        self.expected = expected
        where = f"line {line}" if line else "the text"
        super().__init__(f"{self.source}, {where}: expected {expected}")
