"""Helpers to request a run and execute it the way the worker does."""

from __future__ import annotations

import asyncio
import itertools
import json
import shlex
from pathlib import Path

from redolab.core.db import make_sessionmaker
from redolab.runs import service
from redolab.runs.command import PID_PREFIX
from redolab.runs.models import Run
from redolab.runs.schemas import RunCreate
from redolab.worker import Worker

# A run a test asks for is paced unless the test says how (rate_bits_per_second=None: full speed): at
# full speed on loopback the probes took both cores for the run's length (tests/runs' SSH and failure
# tests: 70 CPU-s unpaced, 44 paced).
TEST_RATE_BITS_PER_SECOND = 400_000_000


def request_run(session, environment, client, server, **fields) -> Run:
    values = {
        "client_host_id": client.id,
        "server_host_id": server.id,
        "duration_seconds": 2,
        "interval_seconds": 0.5,
        **fields,
    }
    if not any(key in fields for key in ("rate_bits_per_second", "delay_us", "reverse")):
        values["rate_bits_per_second"] = TEST_RATE_BITS_PER_SECOND
    return service.create_run(
        session=session, environment=environment, run_in=RunCreate(**values), requested_by="alice"
    )


def execute_next(engine, secret_key: str) -> bool:
    """Claim and run the next job with a real Worker; True when a job ran."""
    worker = Worker(make_sessionmaker(engine), secret_key=secret_key)
    return asyncio.run(worker.run_once())


def reload(session, run: Run) -> Run:
    session.expire_all()
    return session.get(Run, run.id)


def execute_in_background(engine, secret_key: str):
    """Run the next job in a thread (the test thread plays the user or the failure)."""
    import threading

    thread = threading.Thread(target=execute_next, args=(engine, secret_key), daemon=True)
    thread.start()
    return thread


def wait_for_intervals(session, run: Run, count: int = 1, timeout: float = 30) -> None:
    import time

    from sqlalchemy import func, select

    from redolab.runs.models import RunEvent

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session.expire_all()
        seen = session.scalar(
            select(func.count()).where(
                RunEvent.run_id == run.id, RunEvent.role == "client", RunEvent.event == "interval"
            )
        )
        if seen >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"run {run.id} produced no interval within {timeout} s: {reload(session, run).failure_reason}")


def descendants(pid: int) -> list[int]:
    """All processes below `pid` (from /proc), e.g. the sshd sessions of the test server."""
    from pathlib import Path

    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


# -- runs from captured probe output ------------------------------------------------------------
# A test that reads what runs measured (plans, pages, exports) can use the JSON lines a real probe
# printed once, under tests/fixtures/probe_output/, instead of measuring again: `execute_captured`
# runs the job with the real Worker on the local transport (settings captured, probe deployed,
# every line parsed and stored, summary and job status written as always); only the two probe
# processes print the captured lines (`cat`) instead of measuring. Each captured file records the
# command it came from, and the replay refuses a command that differs (other than the binary's
# path, the port and the write directory): when the probe's options change, capture again.
PROBE_OUTPUT = Path(__file__).parent / "fixtures" / "probe_output"
_VARYING = {"--port": "PORT", "--write-dir": "DIR"}


def normalised_command(argv) -> list[str]:
    """A probe command without what differs between two runs of it (binary path, port, directory)."""
    argv = [str(a) for a in argv]
    if argv[:3] == PID_PREFIX:
        argv = argv[3:]
    out = [Path(argv[0]).name.split("-")[0]]  # redoprobe, or redoprobe-0.1.0-<sha> deployed over SSH
    for before, token in itertools.pairwise(argv):
        out.append(_VARYING.get(before, token))
    return out


def captured_lines(path: Path) -> tuple[list[str], list[str]]:
    """(command, probe output lines) of a captured file: its first line is {"command": [...]}."""
    first, *lines = path.read_text().splitlines()
    return json.loads(first)["command"], [line for line in lines if line.strip()]


def write_captured(path: Path, command: str, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = json.dumps({"command": normalised_command(shlex.split(command))})
    path.write_text("\n".join([header, *lines]) + "\n")


def execute_captured(engine, secret_key: str, client: Path, server: Path) -> bool:
    """execute_next, with the probes replaced by the captured output in `client` and `server`."""
    from redolab.remote.local import LocalTransport

    original = LocalTransport.start
    files = {"client": client, "server": server}

    async def start(self, argv):
        argv = [str(a) for a in argv]
        command = normalised_command(argv)
        role = command[1] if command[0] == "redoprobe" and len(command) > 1 else None
        if role not in files:
            return await original(self, argv)
        expected, _ = captured_lines(files[role])
        assert command == expected, (
            f"the {role} command changed since {files[role].name} was captured: capture again "
            f"(see tests/fixtures/probe_output/README)\nnow:      {command}\ncaptured: {expected}"
        )
        path = str(files[role])
        if role == "client":  # as the worker starts it: the shell prints its PID, then `exec`s the replay
            return await original(self, [*PID_PREFIX, "sed", "1d", path])
        # the server's start event names its PID, which the worker ends at clean-up: the replaying
        # process's own, written into the line (`exec` keeps the shell's PID)
        script = 'exec sed -e 1d -e "2s/\\"pid\\":[0-9]*/\\"pid\\":$$/" "$0"'
        return await original(self, ["sh", "-c", script, path])

    LocalTransport.start = start
    try:
        return execute_next(engine, secret_key)
    finally:
        LocalTransport.start = original


def work_until(engine, secret_key: str, finished, timeout: float = 40, what: str = "the work") -> None:
    """Run a real Worker in a thread until `finished()` is true (looked at every 0.2 s)."""
    import time

    worker = Worker(make_sessionmaker(engine), secret_key=secret_key)
    thread = worker.start_thread()
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if finished():
                return
            time.sleep(0.2)
    finally:
        worker.stopping.set()
        thread.join(20)
    raise AssertionError(f"{what} did not finish")
