"""The probe processes a run starts, and making sure each is gone: TERM, then KILL, by PID, over
the run's transport or a new connection when that one dropped."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from redolab.environments.connect import connect_host
from redolab.environments.models import Host
from redolab.remote.transport import RemoteProcess, Transport, TransportError
from redolab.runs.models import ReplaySchedule, Run


def schedule_path(probe_path: str, run_id: int) -> str:
    """Where a rehearsal run's schedule goes on the client host: beside the probe, named for the run and
    made unique. Run ids repeat across redolab databases that share a host and user (two instances, a
    test's workers): a name of the run id alone let one run's upload replace another's schedule between
    its upload and its client's start, and that run replayed the other's bytes."""
    return f"{PurePosixPath(probe_path).parent}/schedule-run{run_id}-{secrets.token_hex(8)}.txt"


def schedule_part(text: str, connections: list[int] | None) -> str:
    """What a run replays of a stored schedule: all of it (None), or some connections' lines,
    renumbered from 0 in the order given. The schedule's comment lines describe the whole schedule's
    connections and are left out, but for its first (the format line); one says which part this is."""
    if connections is None:
        return text
    position = {connection: new for new, connection in enumerate(connections)}
    lines = text.splitlines()
    out = [lines[0]] if lines and lines[0].startswith("#") else []
    out.append(
        f"# part: connection{'s' if len(connections) > 1 else ''} {', '.join(map(str, connections))} of the "
        "rehearsal's schedule, renumbered from 0 in that order"
    )
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if fields and int(fields[0]) in position:
            out.append(" ".join([str(position[int(fields[0])]), *fields[1:]]))
    return "\n".join(out) + "\n"


def replay_text(session, run: Run) -> str | None:
    """The schedule a rehearsal's run replays (None: not a rehearsal's run). Raises LookupError when
    it was one and its schedule is gone."""
    if run.replay_schedule is not None:  # stored with the run, before schedules were stored once
        return run.replay_schedule
    stored = session.get(ReplaySchedule, run.replay_schedule_id) if run.replay_schedule_id is not None else None
    if stored is None:
        if run.rehearsal_id is not None:
            raise LookupError(f"the schedule of rehearsal #{run.rehearsal_id} is gone")
        return None
    return schedule_part(stored.text, run.replay_connections)


async def upload_schedule(transport: Transport, remote: str, text: str) -> None:
    """Copy a rehearsal's schedule to the client host (through a local temporary file)."""
    with tempfile.TemporaryDirectory(prefix="redolab-schedule-") as directory:
        local = Path(directory) / "schedule.txt"
        local.write_text(text, encoding="ascii")
        await transport.upload(local, remote)


async def remove_file(transport: Transport, remote: str) -> str | None:
    """Remove a file the run put on a host; what went wrong, for the user, or None."""
    try:
        result = await transport.run(["rm", "-f", remote], timeout=10)
    except TransportError as error:
        return f"could not remove {remote} ({error})."
    return None if result.exit_status == 0 else f"could not remove {remote}."


@dataclass
class Started:
    """A probe process we started, its output lines, and how to make sure it is gone."""

    role: str
    host: Host
    transport: Transport
    process: RemoteProcess
    lines: AsyncIterator[str]
    pid: int | None = None


async def signal_probe(started: Started, signal_name: str) -> bool:
    """Send the probe a signal by PID; True when it was delivered."""
    if started.pid is None:
        return False
    with contextlib.suppress(TransportError):
        result = await started.transport.run(["kill", f"-{signal_name}", str(started.pid)], timeout=10)
        return result.exit_status == 0
    return False


async def probe_alive(started: Started, transport: Transport) -> bool:
    result = await transport.run(["kill", "-0", str(started.pid)], timeout=10)
    return result.exit_status == 0


async def end_probe(started: Started, *, secret_key: str, transports: list[Transport]) -> str | None:
    """Make sure one probe is gone: TERM, then KILL; what is left, for the user, or None."""
    problem = None
    with contextlib.suppress(TimeoutError, Exception):
        await asyncio.wait_for(started.process.wait(), 1)
    if started.pid is not None:
        try:
            transport = started.transport
            try:
                alive = await probe_alive(started, transport)
            except TransportError:
                transport = await connect_host(started.host, secret_key=secret_key)
                transports.append(transport)
                alive = await probe_alive(started, transport)
            for signal_name in ("TERM", "KILL"):
                if not alive:
                    break
                await transport.run(["kill", f"-{signal_name}", str(started.pid)], timeout=10)
                for _ in range(20):
                    # reaps a local child (a zombie still answers kill -0), else just waits
                    with contextlib.suppress(TimeoutError, Exception):
                        await asyncio.wait_for(started.process.wait(), 0.1)
                    if not (alive := await probe_alive(started, transport)):
                        break
            if alive:
                problem = f"redoprobe (pid {started.pid}) is still running on {started.host.name}."
        except TransportError as error:
            problem = (
                f"could not confirm that redoprobe (pid {started.pid}) ended on {started.host.name} "
                f"({error}); it stops by itself at its --max-duration cap."
            )
    with contextlib.suppress(Exception):
        started.process.terminate()
        await asyncio.wait_for(started.process.wait(), 2)
    return problem
