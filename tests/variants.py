"""A text file as the tools write it on different platforms (LESSONS.md, Inputs): LF, CRLF line ends, a
UTF-8 byte-order mark, UTF-16 with its mark. The variant tests of the readers share these."""

from __future__ import annotations

import codecs

VARIANTS = ("lf", "crlf", "bom", "utf-16")


def encoded(text: str, how: str) -> bytes:
    """`text` (written with LF line ends) as the bytes of the variant `how`."""
    if how == "crlf":
        return text.replace("\r\n", "\n").replace("\n", "\r\n").encode()
    if how == "bom":
        return codecs.BOM_UTF8 + text.encode()
    if how == "utf-16":
        return text.encode("utf-16")
    return text.encode()
