"""Text a remote source wrote (a database host's output, an SSH peer's message) made safe to print on a
terminal and to store as a message: a host can print escape sequences that clear the screen, retitle
the window, move the cursor over earlier lines or hide text, and `redolab collect --wait` prints what
it said. Every pattern is bounded (linear in the text)."""

from __future__ import annotations

import re

# ECMA-48: CSI (ESC [ or C1 0x9B) parameters, intermediates, a final byte; OSC, DCS, SOS, PM, APC (ESC ]
# P X ^ _, or C1 0x9D 0x90 0x98 0x9E 0x9F) strings up to BEL or ST; any other two-byte ESC sequence.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]{0,64}[ -/]{0,16}[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]{0,4096}(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
# Other C0 and C1 controls (tab and line feed kept), DEL, and the bidirectional overrides and isolates
# that make a terminal show text in another order than it is.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def neutralised(text: str) -> str:
    """`text` with terminal escape sequences removed and every other control character (tab and line
    feed kept) shown as '?'."""
    return _CONTROL.sub("?", _SEQUENCE.sub("", text))
