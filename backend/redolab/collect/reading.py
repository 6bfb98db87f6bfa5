"""A command's output read in a child process under limits, as uploads are for their previews.

What a database host prints is hostile input: decoded and split into lines, text costs many times its
size in Python, and parsing it holds the interpreter. Done in the web process (where the worker's
thread runs collections) it would stall every page and /healthz, and running out of memory would take
the pages down too. So the spool file is read in a child forked from a clean server process under
RLIMIT_CPU and RLIMIT_AS (core.isolate, with the previews' REDOLAB_PREVIEW_* bounds); the web process
only waits, and gets the typed rows or the CollectionError the reader raised. The steps that can be a
year long (archived logs) come back as the file their import reads (SpooledRows), not as rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from redolab.collect import output
from redolab.collect.errors import CollectionError
from redolab.core.isolate import ChildLimitReached, ChildLimits, run_limited

MIB = 1024 * 1024


def _text(path: str) -> str:
    with open(path, "rb") as source:
        return source.read().decode(errors="replace")


def lines_of(path: str) -> list[str]:
    """The lines of the output in `path`, decoded one at a time (errors replaced), split at LF, CRLF and
    CR as output._lines splits text: no copy of the whole text is ever held, only the lines."""
    lines: list[str] = []
    with open(path, "rb") as source:
        for raw in source:
            last_ended = raw.endswith(b"\n")
            line = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1] if last_ended else raw
            lines.extend(part.decode(errors="replace") for part in line.split(b"\r"))
        if not lines or last_ended:
            lines.append("")  # the text after the last newline, as str.split gives it
    return lines


@dataclass(frozen=True)
class SpooledRows:
    """A step's rows kept as the file the import reads (`path`, written by the child), never as objects
    in the web process: a year of 32 threads is a million rows, some 500 MiB as Python objects."""

    path: str
    rows: int

    def __len__(self) -> int:
        return self.rows


def sqlplus_file(path: str, **said) -> output.Collected:
    """output.read_sqlplus of the output in `path`; the archived logs as their import CSV."""
    collected = output.read_sqlplus(lines_of(path), **said)
    logs = collected.steps.get("archived_log")
    if logs:
        collected.steps["archived_log"] = _spooled(f"{path}.archived_log.csv", output.to_import_csv(logs), len(logs))
    return collected


def db2_file(step: str, path: str, **said) -> list | SpooledRows:
    """output.read_db2 of the output in `path`; the recovery history as its archived log listing."""
    rows = output.read_db2(step, lines_of(path), **said)
    if step == "db2_archived_logs" and rows:
        return _spooled(f"{path}.listing.txt", output.db2_history_listing(rows), len(rows))
    return rows


def _spooled(path: str, text: str, rows: int) -> SpooledRows:
    with open(path, "w", encoding="utf-8", newline="") as sink:
        sink.write(text)
    return SpooledRows(path, rows)


def db2pd_file(path: str, **said) -> str:
    """output.read_db2pd of the output in `path` (a command run under the small caps)."""
    return output.read_db2pd(_text(path), **said)


def read_isolated(reader, *args, step: str, limits: ChildLimits, **said):
    """`reader(*args, **said)` in a child under `limits`: its result, or the CollectionError it raised;
    a limit reached is a CollectionError naming the limit and its setting."""
    try:
        return run_limited(reader, *args, limits=limits, preload=(__name__,), **said)
    except ChildLimitReached as stopped:
        raise CollectionError(
            "too_large",
            step,
            f"reading the output needed more than {_limit_words(stopped.limit, limits)}: nothing was stored",
            "The output is far beyond what the scripts print: is a login script or another tool printing?",
        ) from None


def _limit_words(limit: str, limits: ChildLimits) -> str:
    if limit == "cpu":
        return f"{limits.cpu_seconds:,} s of CPU (REDOLAB_PREVIEW_CPU_SECONDS)"
    if limit == "memory":
        return f"{limits.memory_bytes // MIB:,} MiB of memory (REDOLAB_PREVIEW_MEMORY_BYTES)"
    return f"{limits.wall_seconds:,} s (REDOLAB_PREVIEW_WALL_SECONDS)"
