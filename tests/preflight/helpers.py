"""The evidence fixtures and the variants a DBA's tools write them in (LESSONS.md, Inputs)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "preflight"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def bom(text: str) -> str:
    return "\ufeff" + text


def without_prompts(text: str) -> str:
    """The output alone, as copied from below the command (no DGMGRL> lines)."""
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("DGMGRL>"))


def wrapped(text: str, columns: int = 80) -> str:
    """Every line longer than the terminal cut at its width, as a terminal's copy keeps it."""
    out = []
    for line in text.split("\n"):
        while len(line) > columns:
            out.append(line[:columns])
            line = line[columns:]
        out.append(line)
    return "\n".join(out)


def tabbed(text: str) -> str:
    """Indentation written with tabs (output pasted through tools that turn spaces into tabs)."""
    return "\n".join("\t" + line[4:] if line.startswith("    ") else line for line in text.split("\n"))


def essence(rows) -> list[tuple[str, str, str, str]]:
    """A row without its line number: what a variant must keep."""
    return [(r.check, r.member, r.status, r.detail) for r in rows]
