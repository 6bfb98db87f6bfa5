"""A command's output read in a child process under limits, as uploads are for their previews.

What a database host prints is hostile input: decoded and split into lines, text costs many times its
size in Python, and parsing it holds the interpreter. Done in the web process (where the worker's
thread runs collections) it would stall every page and /healthz, and running out of memory would take
the pages down too. So the spool file is read in a child forked from a clean server process under
RLIMIT_CPU and RLIMIT_AS (core.isolate, with the previews' REDOLAB_PREVIEW_* bounds); the web process
only waits, and gets the typed rows or the CollectionError the reader raised.
"""

from __future__ import annotations

from redolab.collect import output
from redolab.collect.errors import CollectionError
from redolab.core.isolate import ChildLimitReached, ChildLimits, run_limited

MIB = 1024 * 1024


def _text(path: str) -> str:
    with open(path, "rb") as source:
        return source.read().decode(errors="replace")


def sqlplus_file(path: str, **said) -> output.Collected:
    """output.read_sqlplus of the output in `path`."""
    return output.read_sqlplus(_text(path), **said)


def db2_file(step: str, path: str, **said) -> list:
    """output.read_db2 of the output in `path`."""
    return output.read_db2(step, _text(path), **said)


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
