"""Execute one run: connect, deploy, capture settings, start server and client, store every
event as it arrives, and make sure no probe is left running on either host. A cancel or a shutdown
is watched for from the claim on: in set-up it stops the step under way, during the test it sends
the client TERM and, after a grace, KILL."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.db import utcnow
from redolab.environments.connect import connect_host
from redolab.environments.models import Host
from redolab.remote.deploy import ProbeInstall, ensure_probe, probe_file_name
from redolab.remote.hostinfo import capture_settings
from redolab.remote.transport import OutputLineTooLong, Transport, TransportError, shell_join
from redolab.runs.command import PID_PREFIX, SERVER_GRACE_SECONDS, ProbeParameters, client_argv, server_argv
from redolab.runs.models import Run, RunEvent, RunStatus
from redolab.runs.parsers.redoprobe import ProbeEvent, ProbeOutputError, parse_line
from redolab.runs.probes import (
    Started,
    end_probe,
    remove_file,
    replay_text,
    schedule_path,
    signal_probe,
    upload_schedule,
)
from redolab.runs.service import begin_unless_cancelled, end_not_begun, store_summary

log = logging.getLogger("redolab.runner")

START_TIMEOUT_SECONDS = 20
# How often a running run (and its set-up) looks for a cancel or a shutdown, and heartbeats.
WATCH_SECONDS = 0.5
# A probe sent TERM that is still running after this gets KILL (it wakes on TERM at once and needs
# well under a second to report; more under load, with 1,024 connections).
KILL_GRACE_SECONDS = 5.0
# After the client ends, how long the server may take to print its end event.
SERVER_END_SECONDS = 15.0
# A client still running this long after its duration is stopped (the server's own cap is shorter).
OVERRUN_SECONDS = SERVER_GRACE_SECONDS + 30

T = TypeVar("T")


class RunFailed(Exception):
    """Ends a run as failed; the message is what the user reads."""


class RunCancelled(Exception):
    """Ends a run as cancelled (the user asked during its set-up); the message is what the user reads."""


class RunGone(Exception):
    """The run's row is gone (its environment was deleted meanwhile): stop the probes, write nothing."""


RUN_GONE = "deleted while it ran (its environment was deleted); its probes were stopped"


@dataclass
class RunExecution:
    sessions: sessionmaker
    secret_key: str
    run_id: int
    heartbeat: Callable[[], None] = lambda: None
    shutting_down: Callable[[], bool] = lambda: False
    # A sweep's cancel, which reaches its current run also when the run's own row was not flagged.
    parent_cancelled: Callable[[], bool] = lambda: False
    started: list[Started] = field(default_factory=list)
    transports: list[Transport] = field(default_factory=list)
    seq: int = 0
    outcome: tuple[RunStatus, str | None] | None = None
    phases: list[tuple[str, float]] = field(default_factory=list)
    duration_seconds: float = 0.0
    unreadable: str | None = None  # the first probe output redolab could not read: the run fails
    gone: bool = False  # the run's row was deleted meanwhile (with its environment)
    uploaded: list[tuple[Transport, str]] = field(default_factory=list)  # files to remove at the end

    def _mark(self, phase: str) -> None:
        """Note when a phase ended; logged once per run, to see where set-up time goes."""
        self.phases.append((phase, time.monotonic()))

    # -- database -------------------------------------------------------------------------
    def _update(self, **values) -> None:
        with self.sessions() as session:
            run = session.get(Run, self.run_id)
            if run is None:
                raise RunGone
            for key, value in values.items():
                setattr(run, key, value)
            session.commit()

    def _record(self, role: str, event: ProbeEvent) -> None:
        self.seq += 1
        with self.sessions() as session:
            run = session.get(Run, self.run_id)
            if run is None:
                raise RunGone
            session.add(RunEvent(run_id=self.run_id, seq=self.seq, role=role, event=event.event, line=event.line))
            if role == "client" and event.event == "start":
                run.probe_version = event.data.get("version") or run.probe_version  # what the binary says it is
                run.sndbuf_granted_bytes = event.data.get("sndbuf_granted_bytes")
                run.rcvbuf_granted_bytes = event.data.get("rcvbuf_granted_bytes")
            if role == "client" and event.event == "end":
                run.seconds = event.data.get("seconds")
                run.bytes_sent = event.data.get("bytes_sent")
                run.bytes_received = event.data.get("bytes_received")
                run.bytes_per_second = event.data.get("bytes_per_second")
                run.retransmits = event.data.get("retransmits")
            try:
                session.commit()
            except IntegrityError:  # the run was deleted between the read and the write
                raise RunGone from None

    def _cancel_requested(self) -> bool:
        """A cancel was recorded; also when the run is gone (noted in `gone`)."""
        with self.sessions() as session:
            row = session.execute(select(Run.cancel_requested).where(Run.id == self.run_id)).first()
        self.gone = self.gone or row is None
        return row is None or bool(row[0])

    def _is_gone(self) -> bool:
        with self.sessions() as session:
            self.gone = self.gone or session.get(Run, self.run_id) is None
        return self.gone

    def _begin(self) -> bool:
        with self.sessions() as session:
            return begin_unless_cancelled(session=session, model=Run, item_id=self.run_id)

    def _not_begun(self) -> tuple[RunStatus, str | None]:
        """The run did not begin (cancelled first): nothing ran, and it ends as cancelled."""
        with self.sessions() as session:
            end_not_begun(session=session, model=Run, item_id=self.run_id)
            run = session.get(Run, self.run_id)
            return (run.status, run.failure_reason) if run is not None else (RunStatus.cancelled, RUN_GONE)

    def _load(self, session: Session) -> tuple[Run, Host, Host]:
        run = session.get(Run, self.run_id)
        if run is None:
            raise RunGone
        if run.client_host is None or run.server_host is None:
            raise RunFailed("a host of this run was deleted before it started")
        # touch the relationships used after the session closes
        for host in (run.client_host, run.server_host):
            _ = host.credential
        return run, run.client_host, run.server_host

    # -- the run --------------------------------------------------------------------------
    async def execute(self) -> tuple[RunStatus, str | None]:
        if not self._begin():
            return self._not_begun()
        try:
            await self._execute()
        except RunCancelled as cancel:
            self._finish(RunStatus.cancelled, str(cancel))
        except (RunFailed, TransportError) as error:  # expected failures: their message is for the user
            self._finish(RunStatus.failed, str(error))
        except RunGone:
            self.gone = True
        except Exception as error:  # a bug must still end the run and clean up
            if not self._is_gone():  # a deleted run fails any write: that is no bug
                log.exception("run %s crashed", self.run_id)
            self._finish(RunStatus.failed, f"internal error in redolab: {type(error).__name__}: {error}")
        finally:
            leftovers = await self._clean_up()
            if leftovers:
                status, reason = self.outcome or (RunStatus.failed, None)
                self._finish(status, ((reason or "") + " " + leftovers).strip(), force=True)
            for transport in self.transports:
                with contextlib.suppress(Exception):
                    await transport.close()
        status, reason = self.outcome or (RunStatus.failed, "the run ended without an outcome")
        try:
            if self.gone:
                raise RunGone
            self._update(status=status, failure_reason=reason, finished_at=utcnow())
            with self.sessions() as session:  # what the plan and the lists read, so no page reads the intervals
                run = session.get(Run, self.run_id)
                if run is None:
                    raise RunGone
                store_summary(session=session, run=run)
        except (RunGone, IntegrityError):  # deleted meanwhile: its probes are stopped, nothing to write
            log.warning("run %s: %s", self.run_id, RUN_GONE)
            return RunStatus.cancelled, RUN_GONE
        if self.phases:
            base = self.phases[0][1]
            log.info(
                "run %s %s; set-up: %s",
                self.run_id,
                status.value,
                ", ".join(f"{name} +{t - base:.3f} s" for name, t in self.phases[1:]),
            )
        return status, reason

    def _finish(self, status: RunStatus, reason: str | None, force: bool = False) -> None:
        if self.outcome is None or force:
            self.outcome = (status, reason)

    async def _execute(self) -> None:
        self._mark("claimed")
        with self.sessions() as session:
            run, client_host, server_host = self._load(session)
            parameters = ProbeParameters.of_run(run)
            try:
                schedule = replay_text(session, run)
            except LookupError as gone:
                raise RunFailed(str(gone)) from None
        self.duration_seconds = parameters.duration_seconds
        client_t, server_t = await self._watched(self._connect(client_host, server_host))
        client_probe, server_probe = await self._watched(
            self._deploy_and_capture(client_host, client_t, server_host, server_t)
        )
        self._check_stop()
        if schedule is not None:  # a rehearsal: its schedule goes beside the client's probe
            path = schedule_path(client_probe.path, self.run_id)
            self.uploaded.append((client_t, path))
            await self._watched(upload_schedule(client_t, path, schedule))
            parameters = replace(parameters, schedule_path=path)

        server_cmd = server_argv(server_probe.path, parameters)
        self._update(server_command=shell_join(server_cmd))
        server = await self._start("server", server_host, server_t, server_cmd)
        start = await self._watched(self._first_event(server))
        server.pid, port = start.data.get("pid"), start.data["port"]
        self._mark("server listening")

        client_cmd = client_argv(client_probe.path, parameters, server_address=server_host.probe_address, port=port)
        self._update(client_command=shell_join(client_cmd))
        client = await self._start("client", client_host, client_t, PID_PREFIX + client_cmd)
        client.pid = await self._watched(self._read_pid(client))
        self._mark("client started")

        await self._follow(client, server)

    async def _start(self, role: str, host: Host, transport: Transport, argv: list[str]) -> Started:
        process = await transport.start(argv)
        started = Started(role, host, transport, process, process.lines())
        self.started.append(started)
        return started

    # -- stopping: a cancel, a shutdown ----------------------------------------------------
    def _stop_requested(self) -> str | None:
        """Why the run must stop now: "shutdown" (redolab is stopping), "user" (a cancel), or None."""
        if self.shutting_down():
            return "shutdown"
        if self._cancel_requested() or self.parent_cancelled():
            return "gone" if self.gone else "user"
        return None

    def _check_stop(self) -> None:
        """During set-up: a cancel ends the run as cancelled, a shutdown as failed."""
        stop = self._stop_requested()
        if stop == "gone":
            raise RunGone
        if stop == "user":
            raise RunCancelled("cancelled by the user before the test began")
        if stop == "shutdown":
            raise RunFailed("redolab was stopped before the test began")

    async def _watched(self, step: Awaitable[T]) -> T:
        """A set-up step (connect, deploy, wait for a probe), stopped within WATCH_SECONDS by a
        cancel or a shutdown; heartbeats meanwhile."""
        task = asyncio.ensure_future(step)
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=WATCH_SECONDS)
                self.heartbeat()
                if not task.done():
                    self._check_stop()
            return task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
                if not task.cancelled():
                    task.exception()  # retrieved: the stop is the outcome, not what the step raised then

    async def _connect(self, client_host: Host, server_host: Host) -> tuple[Transport, Transport]:
        """Both hosts at once; each connection is kept as it opens, so it is closed however the
        run ends (a failure of the other host, a cancel during the connect)."""

        async def connect(host: Host) -> Transport:
            transport = await connect_host(host, secret_key=self.secret_key)
            self.transports.append(transport)
            return transport

        client_t, server_t = await asyncio.gather(connect(client_host), connect(server_host), return_exceptions=True)
        for result in (client_t, server_t):
            if isinstance(result, BaseException):
                raise result
        self._mark("connected")
        return client_t, server_t

    async def _deploy_and_capture(
        self, client_host: Host, client_t: Transport, server_host: Host, server_t: Transport
    ) -> tuple[ProbeInstall, ProbeInstall]:
        """Each host's settings and its probe (deployed if missing), stored on the run."""
        # One inspection per host: settings, plus where the probe cache is and what it holds.
        name = probe_file_name()
        client_settings, server_settings = await asyncio.gather(
            capture_settings(
                client_t, peer_address=server_host.probe_address, interface=client_host.data_interface, probe_name=name
            ),
            capture_settings(
                server_t, peer_address=client_host.probe_address, interface=server_host.data_interface, probe_name=name
            ),
        )
        client_probe, server_probe = await asyncio.gather(
            ensure_probe(client_t, client_settings), ensure_probe(server_t, server_settings)
        )
        for settings in (client_settings, server_settings):
            settings.pop("home", None)
            settings.pop("probe_sha256", None)
        self._mark("deployed and captured")
        client_settings["probe_path"] = client_probe.path
        server_settings["probe_path"] = server_probe.path
        self._update(
            probe_version=client_probe.version,
            probe_sha256=client_probe.sha256,
            client_settings=client_settings,
            server_settings=server_settings,
        )
        return client_probe, server_probe

    async def _first_event(self, started: Started) -> ProbeEvent:
        try:
            line = await asyncio.wait_for(anext(started.lines), START_TIMEOUT_SECONDS)
        except (TimeoutError, StopAsyncIteration):
            detail = (await started.process.stderr_text()).strip()
            raise RunFailed(f"redoprobe server on {started.host.name} did not start: {detail or 'no output'}") from None
        event = self._parse(started, line)
        self._record(started.role, event)
        if event.event == "error":
            raise RunFailed(f"redoprobe server on {started.host.name}: {event.data.get('message')}")
        return event

    async def _read_pid(self, started: Started) -> int | None:
        try:
            return int(await asyncio.wait_for(anext(started.lines), START_TIMEOUT_SECONDS))
        except (TimeoutError, StopAsyncIteration, ValueError):
            raise RunFailed(f"redoprobe client on {started.host.name} did not start") from None

    def _parse(self, started: Started, line: str) -> ProbeEvent:
        try:
            return parse_line(line)
        except ProbeOutputError as error:
            raise RunFailed(
                f"redoprobe {started.role} on {started.host.name} printed something unexpected: {error}"
            ) from None

    async def _pump(self, started: Started, seen: dict) -> None:
        """Store each line as it arrives. A line that cannot be read is noted (the run is stopped
        and fails) and the rest of the output is read and dropped: a probe never blocks writing."""
        mine = seen.setdefault(started.role, {})
        try:
            async for line in started.lines:
                if not line.strip():
                    continue
                event = self._parse(started, line)
                self._record(started.role, event)
                if event.event == "interval" and started.role == "client" and "interval" not in mine:
                    self._mark("first interval stored")
                mine[event.event] = event
        except (RunFailed, OutputLineTooLong) as error:
            self.unreadable = self.unreadable or str(error)
            await started.process.drain()
            return
        except RunGone:  # the client is stopped by _watch_client; its output is read and dropped
            self.gone = True
            await started.process.drain()
            return
        except TransportError as error:  # the connection dropped: the transport's words say which
            mine["lost"] = str(error)
            return
        except Exception as error:  # a bug in redolab: the run fails, and the output is still read
            log.exception("run %s: reading redoprobe %s failed", self.run_id, started.role)
            self.unreadable = self.unreadable or (
                f"internal error in redolab reading redoprobe {started.role} on {started.host.name}: "
                f"{type(error).__name__}: {error}"
            )
            await started.process.drain()
            return
        await asyncio.sleep(0.2)  # let the transport notice a dropped connection
        if not started.transport.connected:
            mine["lost"] = f"the SSH connection to {started.host.name} dropped mid-run"

    async def _follow(self, client: Started, server: Started) -> None:
        seen: dict = {}
        client_task = asyncio.create_task(self._pump(client, seen))
        server_task = asyncio.create_task(self._pump(server, seen))
        try:
            stopped_by = await self._watch_client(client, client_task)
            # the client's END ends the server's test; its end event follows at once
            await asyncio.wait({server_task}, timeout=KILL_GRACE_SECONDS if stopped_by else SERVER_END_SECONDS)
        finally:  # nothing reads after this: clean-up drains and ends what is left
            for task in (client_task, server_task):
                task.cancel()
            await asyncio.wait({client_task, server_task})
        self._decide(client, server, seen, stopped_by)

    async def _watch_client(self, client: Started, client_task: asyncio.Task) -> str | None:
        """Wait for the client to end, heartbeating. A cancel ("user"), a shutdown ("shutdown"),
        output redolab cannot read ("unreadable") or a client long past its duration ("overran")
        sends it TERM, and KILL after KILL_GRACE_SECONDS; returns which, or None."""
        loop = asyncio.get_running_loop()
        overrun_at = loop.time() + self.duration_seconds + OVERRUN_SECONDS
        stopped_by, signalled_at, killed = None, 0.0, False
        while not client_task.done():
            await asyncio.wait({client_task}, timeout=WATCH_SECONDS)
            self.heartbeat()
            if client_task.done():
                break
            now = loop.time()
            if stopped_by is None:
                stopped_by = (
                    self._stop_requested()
                    or ("gone" if self.gone else None)
                    or ("unreadable" if self.unreadable else None)
                    or ("overran" if now > overrun_at else None)
                )
                if stopped_by is not None:
                    await signal_probe(client, "TERM")
                    signalled_at = now
            elif now - signalled_at > KILL_GRACE_SECONDS:
                if killed:  # even KILL did not end its output: clean-up says what is left
                    break
                log.warning("run %s: redoprobe client ignored TERM for %.0f s: KILL", self.run_id, KILL_GRACE_SECONDS)
                await signal_probe(client, "KILL")
                signalled_at, killed = now, True
        return stopped_by

    def _decide(self, client: Started, server: Started, seen: dict, stopped_by: str | None) -> None:
        client_seen, server_seen = seen.get("client", {}), seen.get("server", {})
        if stopped_by == "user":
            self._finish(RunStatus.cancelled, "cancelled by the user; the intervals measured so far are kept")
        elif stopped_by == "shutdown":
            self._finish(
                RunStatus.failed,
                "redolab was stopped during the run; the intervals measured so far are kept",
            )
        elif self.unreadable:
            self._finish(RunStatus.failed, f"{self.unreadable}; the intervals received before it are kept")
        elif stopped_by == "overran":
            self._finish(
                RunStatus.failed,
                f"redoprobe client on {client.host.name} was still running {OVERRUN_SECONDS} s after its "
                f"{self.duration_seconds:g} s test and was stopped; the intervals received so far are kept",
            )
        elif "end" in client_seen:
            self._finish(RunStatus.succeeded, None)
        elif "error" in client_seen:
            message = client_seen["error"].data.get("message", "")
            server_error = server_seen.get("error")
            if server_error is not None:
                message += f" (server on {server.host.name}: {server_error.data.get('message')})"
            self._finish(RunStatus.failed, f"redoprobe client on {client.host.name}: {message}")
        elif "lost" in client_seen:
            self._finish(RunStatus.failed, f"{client_seen['lost']}; the intervals received so far are kept")
        else:
            self._finish(
                RunStatus.failed,
                f"redoprobe client on {client.host.name} stopped without a result (was it killed?); "
                "the intervals received so far are kept",
            )

    # -- leave nothing behind -------------------------------------------------------------
    async def _clean_up(self) -> str:
        """End every probe we started (by PID), reconnecting if the connection dropped. Their output
        is read and dropped meanwhile, so none blocks on a full pipe while it stops."""
        drains = [asyncio.create_task(started.process.drain()) for started in self.started]
        try:
            problems = [
                await end_probe(started, secret_key=self.secret_key, transports=self.transports)
                for started in reversed(self.started)
            ]
        finally:
            for drain in drains:
                drain.cancel()
        problems += [await remove_file(transport, path) for transport, path in self.uploaded]
        return " ".join(problem for problem in problems if problem)
