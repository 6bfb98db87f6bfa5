"""Execute one run: connect, deploy, capture settings, start server and client, store every
event as it arrives, and make sure no probe is left running on either host."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.db import utcnow
from redolab.environments.connect import connect_host
from redolab.environments.models import Host
from redolab.remote.deploy import ProbeInstall, ensure_probe, probe_file_name
from redolab.remote.hostinfo import capture_settings
from redolab.remote.transport import RemoteProcess, Transport, TransportError, shell_join
from redolab.runs.command import PID_PREFIX, ProbeParameters, client_argv, server_argv
from redolab.runs.models import Run, RunEvent, RunStatus
from redolab.runs.parsers.redoprobe import ProbeEvent, ProbeOutputError, parse_line
from redolab.runs.service import store_summary

log = logging.getLogger("redolab.runner")

START_TIMEOUT_SECONDS = 20
WATCH_SECONDS = 0.5


class RunFailed(Exception):
    """Ends a run as failed; the message is what the user reads."""


@dataclass
class Started:
    """A probe process we started, and how to make sure it is gone."""

    role: str
    host: Host
    transport: Transport
    process: RemoteProcess
    pid: int | None = None


@dataclass
class RunExecution:
    sessions: sessionmaker
    secret_key: str
    run_id: int
    heartbeat: Callable[[], None] = lambda: None
    shutting_down: Callable[[], bool] = lambda: False
    started: list[Started] = field(default_factory=list)
    transports: list[Transport] = field(default_factory=list)
    seq: int = 0
    outcome: tuple[RunStatus, str | None] | None = None
    phases: list[tuple[str, float]] = field(default_factory=list)

    def _mark(self, phase: str) -> None:
        """Note when a phase ended; logged once per run, to see where set-up time goes."""
        self.phases.append((phase, time.monotonic()))

    # -- database -------------------------------------------------------------------------
    def _update(self, **values) -> None:
        with self.sessions() as session:
            run = session.get(Run, self.run_id)
            for key, value in values.items():
                setattr(run, key, value)
            session.commit()

    def _record(self, role: str, event: ProbeEvent) -> None:
        self.seq += 1
        with self.sessions() as session:
            session.add(RunEvent(run_id=self.run_id, seq=self.seq, role=role, event=event.event, line=event.line))
            run = session.get(Run, self.run_id)
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
            session.commit()

    def _cancel_requested(self) -> bool:
        with self.sessions() as session:
            return bool(session.scalar(select(Run.cancel_requested).where(Run.id == self.run_id)))

    def _load(self, session: Session) -> tuple[Run, Host, Host]:
        run = session.get(Run, self.run_id)
        if run.client_host is None or run.server_host is None:
            raise RunFailed("a host of this run was deleted before it started")
        # touch the relationships used after the session closes
        for host in (run.client_host, run.server_host):
            _ = host.credential
        return run, run.client_host, run.server_host

    # -- the run --------------------------------------------------------------------------
    async def execute(self) -> tuple[RunStatus, str | None]:
        self._update(status=RunStatus.running, started_at=utcnow())
        try:
            await self._execute()
        except (RunFailed, TransportError) as error:  # expected failures: their message is for the user
            self._finish(RunStatus.failed, str(error))
        except Exception as error:  # a bug must still end the run and clean up
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
        self._update(status=status, failure_reason=reason, finished_at=utcnow())
        with self.sessions() as session:  # what the plan and the lists read, so no page reads the intervals
            store_summary(session=session, run=session.get(Run, self.run_id))
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
            parameters = _probe_parameters(run)
        client_t, server_t = await self._connect(client_host, server_host)
        client_probe, server_probe = await self._deploy_and_capture(client_host, client_t, server_host, server_t)
        if self._cancel_requested():
            raise RunFailed("cancelled before the probes started")

        server_cmd = server_argv(server_probe.path, parameters)
        self._update(server_command=shell_join(server_cmd))
        server = Started("server", server_host, server_t, await server_t.start(server_cmd))
        self.started.append(server)
        server_lines = server.process.lines()
        start = await self._first_event(server, server_lines)
        server.pid, port = start.data.get("pid"), start.data["port"]
        self._mark("server listening")

        client_cmd = client_argv(client_probe.path, parameters, server_address=server_host.probe_address, port=port)
        self._update(client_command=shell_join(client_cmd))
        client = Started("client", client_host, client_t, await client_t.start(PID_PREFIX + client_cmd))
        self.started.append(client)
        client_lines = client.process.lines()
        client.pid = await self._read_pid(client, client_lines)
        self._mark("client started")

        await self._follow(client, client_lines, server, server_lines)

    async def _connect(self, client_host: Host, server_host: Host) -> tuple[Transport, Transport]:
        """Both hosts at once; if either fails, the other connection is closed and the error raised."""
        client_t, server_t = await asyncio.gather(
            connect_host(client_host, secret_key=self.secret_key),
            connect_host(server_host, secret_key=self.secret_key),
            return_exceptions=True,
        )
        for transport in (client_t, server_t):
            if isinstance(transport, BaseException):
                for other in (client_t, server_t):
                    if not isinstance(other, BaseException):
                        await other.close()
                raise transport
        self.transports = [client_t, server_t]
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
            probe_version=client_probe.version, probe_sha256=client_probe.sha256,
            client_settings=client_settings, server_settings=server_settings,
        )  # fmt: skip
        return client_probe, server_probe

    async def _first_event(self, started: Started, lines) -> ProbeEvent:
        try:
            line = await asyncio.wait_for(anext(lines), START_TIMEOUT_SECONDS)
        except (TimeoutError, StopAsyncIteration):
            detail = (await started.process.stderr_text()).strip()
            raise RunFailed(f"redoprobe server on {started.host.name} did not start: {detail or 'no output'}") from None
        event = self._parse(started, line)
        self._record(started.role, event)
        if event.event == "error":
            raise RunFailed(f"redoprobe server on {started.host.name}: {event.data.get('message')}")
        return event

    async def _read_pid(self, started: Started, lines) -> int | None:
        try:
            return int(await asyncio.wait_for(anext(lines), START_TIMEOUT_SECONDS))
        except (TimeoutError, StopAsyncIteration, ValueError):
            raise RunFailed(f"redoprobe client on {started.host.name} did not start") from None

    def _parse(self, started: Started, line: str) -> ProbeEvent:
        try:
            return parse_line(line)
        except ProbeOutputError as error:
            raise RunFailed(f"redoprobe on {started.host.name} printed something unexpected: {error}") from None

    async def _pump(self, started: Started, lines, seen: dict) -> None:
        try:
            async for line in lines:
                if not line.strip():
                    continue
                event = self._parse(started, line)
                self._record(started.role, event)
                if event.event == "interval" and started.role == "client" and "interval" not in seen.get("client", {}):
                    self._mark("first interval stored")
                seen.setdefault(started.role, {})[event.event] = event
        except RunFailed:
            raise
        except Exception as error:  # asyncssh raises its own exceptions when a connection drops
            seen.setdefault(started.role, {})["lost"] = str(error) or type(error).__name__
            return
        await asyncio.sleep(0.2)  # let the transport notice a dropped connection
        if not started.transport.connected:
            seen.setdefault(started.role, {})["lost"] = "connection lost"

    async def _follow(self, client: Started, client_lines, server: Started, server_lines) -> None:
        seen: dict = {}
        client_task = asyncio.create_task(self._pump(client, client_lines, seen))
        server_task = asyncio.create_task(self._pump(server, server_lines, seen))
        cancelled_by: str | None = None
        while not client_task.done():
            await asyncio.wait({client_task}, timeout=WATCH_SECONDS)
            self.heartbeat()
            if cancelled_by is None and (self._cancel_requested() or self.shutting_down()):
                cancelled_by = "user" if not self.shutting_down() else "shutdown"
                await self._signal(client, "TERM")
        await client_task
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(server_task), 15)
        if not server_task.done():
            server_task.cancel()
        self._decide(client, server, seen, cancelled_by)

    def _decide(self, client: Started, server: Started, seen: dict, cancelled_by: str | None) -> None:
        client_seen, server_seen = seen.get("client", {}), seen.get("server", {})
        if cancelled_by == "user":
            self._finish(RunStatus.cancelled, "cancelled by the user; the intervals measured so far are kept")
        elif cancelled_by == "shutdown":
            self._finish(
                RunStatus.failed,
                "redolab was stopped during the run; the intervals measured so far are kept",
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
            self._finish(
                RunStatus.failed,
                f"the SSH connection to {client.host.name} dropped mid-run ({client_seen['lost']}); "
                "the intervals received so far are kept",
            )
        else:
            self._finish(
                RunStatus.failed,
                f"redoprobe client on {client.host.name} stopped without a result (was it killed?); "
                "the intervals received so far are kept",
            )

    # -- leave nothing behind -------------------------------------------------------------
    async def _signal(self, started: Started, signal_name: str) -> bool:
        if started.pid is None:
            return False
        with contextlib.suppress(TransportError):
            result = await started.transport.run(["kill", f"-{signal_name}", str(started.pid)], timeout=10)
            return result.exit_status == 0
        return False

    async def _alive(self, started: Started, transport: Transport) -> bool:
        result = await transport.run(["kill", "-0", str(started.pid)], timeout=10)
        return result.exit_status == 0

    async def _clean_up(self) -> str:
        """End every probe we started (by PID), reconnecting if the connection dropped."""
        problems = []
        for started in reversed(self.started):
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(started.process.wait(), 5)
            if started.pid is None:
                continue
            try:
                transport = started.transport
                try:
                    alive = await self._alive(started, transport)
                except TransportError:
                    transport = await connect_host(started.host, secret_key=self.secret_key)
                    self.transports.append(transport)
                    alive = await self._alive(started, transport)
                for signal_name in ("TERM", "KILL"):
                    if not alive:
                        break
                    await transport.run(["kill", f"-{signal_name}", str(started.pid)], timeout=10)
                    for _ in range(20):
                        # reaps a local child (a zombie still answers kill -0), else just waits
                        with contextlib.suppress(TimeoutError, Exception):
                            await asyncio.wait_for(started.process.wait(), 0.1)
                        if not (alive := await self._alive(started, transport)):
                            break
                if alive:
                    problems.append(f"redoprobe (pid {started.pid}) is still running on {started.host.name}.")
            except TransportError as error:
                problems.append(
                    f"could not confirm that redoprobe (pid {started.pid}) ended on {started.host.name} "
                    f"({error}); it stops by itself at its --max-duration cap."
                )
            with contextlib.suppress(Exception):
                started.process.terminate()
                await asyncio.wait_for(started.process.wait(), 2)
        return " ".join(problems)


def _probe_parameters(run: Run) -> ProbeParameters:
    return ProbeParameters(
        mode=run.mode.value, conns=run.conns, message_bytes=run.message_bytes,
        sockbuf_bytes=run.sockbuf_bytes, duration_seconds=run.duration_seconds,
        interval_seconds=run.interval_seconds, delay_us=run.delay_us,
        rate_bits_per_second=run.rate_bits_per_second, write_dir=run.write_dir,
        sync_write=run.sync_write, congestion=run.congestion,
        fq_rate_bits_per_second=run.fq_rate_bits_per_second, zerocopy=run.zerocopy, reverse=run.reverse,
    )  # fmt: skip
