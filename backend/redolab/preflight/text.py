"""Pasted text as lines: size caps, byte-order marks, CRLF, tabs and no-break spaces, before any pattern runs.

Every pattern of the evidence readers runs on one line at a time, and a line is at most MAX_LINE_CHARACTERS
long, so no pattern can span lines or run away on a long one.
"""

from __future__ import annotations

import codecs

from redolab.preflight.errors import EvidenceError

MAX_TEXT_BYTES = 1024 * 1024  # 1 MiB: VALIDATE DATABASE VERBOSE of a 16-thread RAC is a few KiB
MAX_LINE_CHARACTERS = 4000


def read_text(data: bytes, *, source: str) -> str:
    """Uploaded bytes as text: UTF-8 (with or without a byte-order mark) or UTF-16 with its mark, as
    Windows tools save it. Anything else is refused rather than guessed."""
    if len(data) > MAX_TEXT_BYTES:
        raise EvidenceError(source, 0, f"at most {MAX_TEXT_BYTES // 1024} KiB of text")
    encoding = "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise EvidenceError(source, line, "text in UTF-8 or UTF-16 (with its byte-order mark)") from None


def split_lines(text: str, *, source: str) -> list[str]:
    """The text's lines, numbered from 1 by their index + 1: a leading byte-order mark dropped, CRLF and CR
    line ends read as LF, tabs expanded to 8 columns and no-break spaces read as spaces (pasted from mail
    and web pages). Trailing blanks are kept: a terminal that cut a line on a space left it there.
    Refuses text over 1 MiB, a line over 4,000 characters and UTF-16 read as 8-bit text."""
    if len(text) > MAX_TEXT_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        raise EvidenceError(source, 0, f"at most {MAX_TEXT_BYTES // 1024} KiB of text")
    if "\x00" in text[:4096]:
        raise EvidenceError(source, 1, "text, not UTF-16 bytes read as 8-bit characters: save it as UTF-8")
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if len(line) > MAX_LINE_CHARACTERS:
            raise EvidenceError(source, index + 1, f"a line of at most {MAX_LINE_CHARACTERS:,} characters")
    return [line.expandtabs(8).replace("\xa0", " ") for line in lines]
