"""The `redolab` command run inside the test process, or as a real process, with the same answer.

A `redolab` process costs 1-5 s of CPU (the interpreter, the imports, Alembic's scripts), most of it
what the test process has loaded already. `invoke` runs the same typer app (redolab.cli:app) through
typer's CliRunner as `run_process` runs the installed entry point: the environment of
tests.services.redolab_env (every inherited REDOLAB_* variable removed, REDOLAB_DATA_DIR and the
extras set), the data directory as the working directory (Settings reads ./.env from there), standard
input from `stdin`, and stdout, stderr and the exit code kept apart. What differs, and stays with the
tests of the process itself: the settings are read afresh for each command here (get_settings is
cached per process), argon2 hashes with the test process's cheap parameters (tests/conftest.py),
stdin is never a terminal, and an exception the command does not handle fails the test where a
process would print a traceback and exit 1 (no test expects one). A command still running after
`timeout` seconds fails the test as subprocess.run's timeout does (a `--wait` whose job never ends),
by SIGALRM in the main thread; not `serve` once uvicorn runs (its loop outlives the alarm): a test of
`serve` in this process stops uvicorn.run from being reached (tests/test_cli.py no_server).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.services import REDOLAB, redolab_env


@dataclass
class Completed:
    """What a test reads of a finished command (subprocess.CompletedProcess's names)."""

    returncode: int
    stdout: str
    stderr: str


@contextmanager
def _deadline(seconds: float, what: str):
    """TimeoutError in the main thread once `seconds` have passed (elsewhere: no deadline)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"{what} still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def invoke(data_dir: Path, *args: str, stdin: str | None = None, timeout: float = 60, **env: str) -> Completed:
    """`redolab *args` in this process, as `run_process` would run it."""
    from typer.testing import CliRunner

    from redolab.cli import app
    from redolab.core.config import get_settings

    environment: dict[str, str | None] = {name: None for name in os.environ if name.startswith("REDOLAB_")}
    environment.update(REDOLAB_DATA_DIR=str(data_dir), **env)
    here = os.getcwd()
    get_settings.cache_clear()
    os.chdir(data_dir)
    try:
        with _deadline(timeout, f"redolab {' '.join(args)}"):
            result = CliRunner().invoke(app, list(args), input=stdin, env=environment, catch_exceptions=False)
    finally:
        os.chdir(here)
        get_settings.cache_clear()  # the next command, or test, reads its own environment
    return Completed(result.exit_code, result.stdout, result.stderr)


def run_process(data_dir: Path, *args: str, stdin: str | None = None, **env: str) -> Completed:
    """`redolab *args` as a shell runs it: the installed entry point, a process of its own."""
    result = subprocess.run(
        [str(REDOLAB), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=redolab_env(data_dir, **env),
        cwd=data_dir,
        timeout=60,
    )
    return Completed(result.returncode, result.stdout, result.stderr)
