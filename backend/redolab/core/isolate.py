"""Heavy work in a process of its own, with limits the kernel enforces.

Reading an upload (unpacking an archive, parsing every line) can take seconds of CPU and hundreds of
MiB. Done in a web process it would hold one of the few threads that answer every page and /healthz,
and Python runs one thread at a time. So it runs in a child process forked from a clean server
process (multiprocessing's 'forkserver': no threads, locks or database connections inherited from
the web process, and the modules the work needs loaded once in that server), under RLIMIT_CPU
(seconds of CPU: the kernel sends SIGXCPU, then SIGKILL) and RLIMIT_AS (address space: an allocation
beyond it fails with MemoryError). The caller's thread only waits on a pipe.

Whatever the work raises in the child is raised again in the caller (it must pickle: the readers'
errors do); a limit reached raises ChildLimitReached naming the limit and its setting.
"""

from __future__ import annotations

import ast
import contextlib
import multiprocessing
import pickle
import resource
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_POLL_SECONDS = 0.25
_CPU_GRACE_SECONDS = 2  # from the soft CPU limit (SIGXCPU) to the hard one (SIGKILL)
_context_lock = threading.Lock()
_forkserver: Any = None
_process_lock = threading.Lock()  # starting, polling and closing child objects: one thread at a time


@dataclass(frozen=True)
class ChildLimits:
    """Bounds on one child: CPU seconds, address space in bytes (0: none), wall-clock seconds."""

    cpu_seconds: int
    memory_bytes: int
    wall_seconds: float


class ChildLimitReached(Exception):
    """The child was stopped by a limit: `limit` is 'cpu', 'memory' or 'time'."""

    def __init__(self, limit: str, limits: ChildLimits) -> None:
        super().__init__(limit, limits)  # both in args: it pickles
        self.limit, self.limits = limit, limits


class ChildCrashed(RuntimeError):
    """The child ended without an answer, or raised something that could not be sent back."""


def _context(preload: tuple[str, ...]):
    """The forkserver context. The server is one per process: the modules named by the first
    caller are loaded in it once; a child needing others imports them itself (slower, as correct)."""
    global _forkserver
    with _context_lock:
        if _forkserver is None:
            _forkserver = multiprocessing.get_context("forkserver")
            _forkserver.set_forkserver_preload([*preload, *main_script_imports()])
        return _forkserver


def main_script_imports() -> list[str]:
    """The modules the main script imports at its top level, when it was started as a file.

    Every child runs that script again, as `__mp_main__`, before the work (multiprocessing's spawn
    preparation; the forkserver's own preload of `__main__` never receives the script's path on
    Python 3.11). For `redolab serve` the script is the `redolab` console script, whose one import
    (`redolab.cli`, with typer and every command module) cost each preview child 0.33 s of CPU.
    Loaded once in the forkserver instead, the script's second run in a child finds them imported."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(getattr(main, "__spec__", None), "name", None):
        return []  # run as a module (`python -m`) or interactively: the children do not run it again
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def limit_this_process(limits: ChildLimits) -> None:
    """Apply `limits` to the calling process (a child that is about to do the heavy work)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a child killed by SIGXCPU leaves no core file
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime)  # a forked child starts at 0; a reused one does not
    cpu = spent + max(int(limits.cpu_seconds), 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + _CPU_GRACE_SECONDS))
    if limits.memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))


def _child(sender, limits: ChildLimits, function: Callable, args: Sequence, kwargs: dict) -> None:
    try:
        limit_this_process(limits)
        answer = ("ok", function(*args, **kwargs))
    except MemoryError:
        answer = ("memory", None)
    except Exception as error:  # sent back to be raised again in the caller
        answer = ("raise", error)
    try:
        payload = pickle.dumps(answer)
    except MemoryError:
        payload = pickle.dumps(("memory", None))
    except Exception as error:  # an answer that cannot be pickled: a bug, named
        payload = pickle.dumps(("crash", f"{type(error).__name__}: {error}\n{traceback.format_exc()}"))
    try:
        sender.send_bytes(payload)
    finally:
        sender.close()


def run_limited(
    function: Callable,
    *args,
    limits: ChildLimits,
    preload: Sequence[str] = (),
    **kwargs,
):
    """`function(*args, **kwargs)` in a child process under `limits`; its result, or what it raised.
    `function` and its arguments must pickle (a module-level function, plain values). Blocks the
    calling thread (waiting on a pipe, holding no lock); ChildLimitReached when a limit stops it."""
    context = _context(tuple(preload))
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, limits, function, args, kwargs), daemon=True)
    with _process_lock:
        child.start()
    sender.close()
    started = time.monotonic()
    deadline = started + limits.wall_seconds
    try:
        while not receiver.poll(_POLL_SECONDS):  # the answer, or the end of the pipe when the child died
            if time.monotonic() > deadline:
                child.kill()
                raise ChildLimitReached("time", limits)
        try:
            kind, value = pickle.loads(receiver.recv_bytes())  # noqa: S301  (our own child, over its pipe)
        except (EOFError, OSError):
            raise _stopped(_exit_code(child), limits, time.monotonic() - started) from None
    finally:
        receiver.close()
        _reap(child)
    if kind == "ok":
        return value
    if kind == "memory":
        raise ChildLimitReached("memory", limits)
    if kind == "raise":
        raise value
    raise ChildCrashed(value)


def _stopped(exitcode: int | None, limits: ChildLimits, elapsed: float) -> Exception:
    if exitcode == -signal.SIGXCPU or (exitcode == -signal.SIGKILL and elapsed >= limits.cpu_seconds):
        return ChildLimitReached("cpu", limits)  # the soft CPU limit, or the hard one after it
    if exitcode in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT):  # the kernel's OOM killer, C code
        return ChildLimitReached("memory", limits)
    return ChildCrashed(f"the child process ended without an answer (exit code {exitcode})")


def _exit_code(child) -> int | None:
    with _process_lock:
        child.join(timeout=5)
        return child.exitcode


def _reap(child) -> None:
    """Wait for the child's end (kill it after 5 s) and release its resources. Under the lock, as is
    every start: multiprocessing polls every live child object from whichever thread starts the next,
    and a child closed meanwhile by another thread would fail that start."""
    with _process_lock:
        child.join(timeout=5)
        if child.is_alive():
            child.kill()
            child.join(timeout=5)
        with contextlib.suppress(ValueError):  # still running after a kill: left to the OS
            child.close()
