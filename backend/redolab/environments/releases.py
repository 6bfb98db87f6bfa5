"""Oracle Database releases as a DBA writes them ("19c", "11gR2", "23ai") or V$INSTANCE.VERSION reads
them ("19.0.0.0.0", "11.2.0.4.0"): the release family the settings' defaults and maximums belong to."""

from __future__ import annotations

import re
from dataclasses import dataclass

# "19c", "21c", "23ai", "26ai", "18c"; "11gR2", "12cR1", "10gR2"; "19", "19.21", "11.2.0.4.0"
_NAMED = re.compile(r"(?P<major>\d{1,2})(?:g|c|ai|i)(?:\s?R(?P<minor>\d))?", re.IGNORECASE)
_DOTTED = re.compile(r"(?P<major>\d{1,2})(?:\.(?P<minor>\d{1,2}))?(?:\.\d{1,3}){0,3}")
# before 18c the minor number matters (11.1 and 11.2 differ in the SDU's maximum); after, the year does
_NEEDS_MINOR = (10, 11, 12)
OLDEST, NEWEST = 9, 30


@dataclass(frozen=True, order=True)
class Release:
    major: int
    minor: int = 0

    @property
    def label(self) -> str:
        if self.major in _NEEDS_MINOR:
            return f"{self.major}.{self.minor}"
        return f"{self.major}{'ai' if self.major >= 23 else 'c'}"


def parse_release(text: str) -> Release | None:
    """The release `text` names; None for blank. ValueError (with what would work) for text that names
    no release, or a family that needs its minor number ("12c": 12.1 or 12.2)."""
    text = (text or "").strip()
    if not text:
        return None
    match = _NAMED.fullmatch(text) or _DOTTED.fullmatch(text)
    if match is None:
        raise ValueError(
            f"'{text[:40]}' is not an Oracle release: write it as 19c, 23ai, 11.2 or 11gR2, or as "
            "V$INSTANCE.VERSION says it (19.0.0.0.0)."
        )
    major = int(match["major"])
    if not OLDEST <= major <= NEWEST:
        raise ValueError(f"'{text}' is not an Oracle release redolab knows ({OLDEST} to {NEWEST}).")
    if match["minor"] is None and major in _NEEDS_MINOR:
        raise ValueError(
            f"'{text}' names two releases with different limits: write {major}.1 or {major}.2 "
            f"({major}{'g' if major < 12 else 'c'}R1 or R2)."
        )
    minor = int(match["minor"]) if match["minor"] is not None and major in _NEEDS_MINOR else 0
    return Release(major, minor)


def checked_release(value: str | None) -> str | None:
    """A schema validator: the text as typed (trimmed) when it names a release, blank allowed."""
    if value is None:
        return None
    parse_release(value)
    return value.strip()


def stored_release(text: str) -> Release | None:
    """A stored release (validated when it was saved); None for one an older redolab kept unread."""
    try:
        return parse_release(text)
    except ValueError:
        return None
