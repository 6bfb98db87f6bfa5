"""Execute one sweep: its grid point by point, each repetition a run of its own (RunExecution),
the connection sweep stopping at its plateau, and a kernel-maximum sweep's tcp_rmem/tcp_wmem put
back on both hosts however it ends (success, a failed run, cancel, redolab stopping)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from redolab.core.db import utcnow
from redolab.core.units import format_bytes
from redolab.environments.connect import connect_host
from redolab.environments.models import Host
from redolab.remote.kernel import Buffers, kernel_triple, privilege, read_buffers, set_buffers, sysctl_assignments
from redolab.remote.transport import Transport, TransportError, shell_join
from redolab.runs.models import Run, RunStatus
from redolab.runs.runner import RunExecution
from redolab.runs.schemas import RunCreate
from redolab.runs.service import begin_unless_cancelled, end_not_begun
from redolab.sweeps import service
from redolab.sweeps.models import Sweep, SweepKind

log = logging.getLogger("redolab.sweeper")


class SweepFailed(Exception):
    """Ends a sweep as failed; the message is what the user reads."""


def describe_point(kind: SweepKind, value: int, conns: int) -> str:
    plural = "s" if conns != 1 else ""
    if kind is SweepKind.connections:
        return f"{conns} connection{plural}"
    what = "socket buffer" if kind is SweepKind.sockbuf else "tcp_rmem/tcp_wmem maximum"
    return f"{what} {format_bytes(value)}, {conns} connection{plural}"


def restore_commands(original: dict, names: dict[str, str]) -> list[str]:
    """sysctl commands that put each host's values back, for when redolab could not."""
    return [
        f"on {names[role]}: sysctl -w " + shell_join(sysctl_assignments(values["tcp_rmem"], values["tcp_wmem"]))
        for role, values in original.items()
    ]


@dataclass(frozen=True)
class _Plan:
    """What a sweep runs, read before it starts."""

    kind: SweepKind
    grid: list[tuple[int, int]]  # (value, connection count) per point, in the order run
    repetitions: int
    shared: dict  # the RunCreate fields every run of the sweep has
    label: str
    requested_by: str
    environment_id: int
    client: Host
    server: Host
    names: dict[str, str]  # "client" and "server": the hosts' names


@dataclass
class SweepExecution:
    sessions: sessionmaker
    secret_key: str
    sweep_id: int
    heartbeat: Callable[[], None] = lambda: None
    shutting_down: Callable[[], bool] = lambda: False
    # Kernel sweeps: one connection per distinct host ("client" and/or "server") for sysctl, and
    # the prefix that makes sysctl root there ([] or sudo -n).
    kernel_hosts: dict[str, tuple[Host, Transport]] = field(default_factory=dict)
    prefixes: dict[str, list[str]] = field(default_factory=dict)
    original: dict[str, Buffers] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)  # the roles whose values a sysctl may have changed

    def _update(self, **values) -> None:
        with self.sessions() as session:
            sweep = session.get(Sweep, self.sweep_id)
            if sweep is None:  # deleted with its environment meanwhile: nothing to write
                return
            for key, value in values.items():
                setattr(sweep, key, value)
            session.commit()

    def _cancel_requested(self) -> bool:
        with self.sessions() as session:
            row = session.execute(select(Sweep.cancel_requested).where(Sweep.id == self.sweep_id)).first()
        return row is None or bool(row[0])  # gone (its environment deleted): stop as for a cancel

    def _gone(self) -> bool:
        with self.sessions() as session:
            return session.get(Sweep, self.sweep_id) is None

    def _begin(self) -> bool:
        with self.sessions() as session:
            return begin_unless_cancelled(session=session, model=Sweep, item_id=self.sweep_id)

    def _not_begun(self) -> RunStatus:
        """The sweep did not begin (cancelled first): it ran nothing and touched no host."""
        with self.sessions() as session:
            end_not_begun(session=session, model=Sweep, item_id=self.sweep_id)
            sweep = session.get(Sweep, self.sweep_id)
            return sweep.status if sweep is not None else RunStatus.cancelled

    def _stopped(self) -> tuple[RunStatus, str] | None:
        """Checked before anything that starts a run or changes a host: a cancel or a shutdown."""
        if self._cancel_requested():
            return RunStatus.cancelled, "cancelled by the user; the runs finished so far are kept"
        if self.shutting_down():
            return RunStatus.failed, "redolab was stopped during the sweep; the runs finished so far are kept"
        return None

    async def execute(self) -> RunStatus:
        if not self._begin():
            return self._not_begun()
        try:
            status, reason = await self._execute()
        except (SweepFailed, TransportError) as error:
            status, reason = RunStatus.failed, str(error)
        except Exception as error:  # a bug must still end the sweep and restore the kernel values
            if not self._gone():  # a deleted sweep fails any write: that is no bug
                log.exception("sweep %s crashed", self.sweep_id)
            status, reason = RunStatus.failed, f"internal error in redolab: {type(error).__name__}: {error}"
        finally:
            restore_problem = await self._restore()
            for _, transport in self.kernel_hosts.values():
                with contextlib.suppress(Exception):
                    await transport.close()
        if restore_problem:
            status = RunStatus.failed if status is RunStatus.succeeded else status
            reason = f"{reason} {restore_problem}" if reason else restore_problem
        if self._gone():
            log.warning(
                "sweep %s: deleted while it ran (its environment was deleted); its runs were stopped", self.sweep_id
            )
            return RunStatus.cancelled
        self._update(status=status, failure_reason=reason, finished_at=utcnow())
        log.info("sweep %s %s", self.sweep_id, status.value)
        return status

    async def _execute(self) -> tuple[RunStatus, str | None]:
        plan = self._load()
        if plan.kind is SweepKind.kernel_max:
            if stopped := self._stopped():
                return stopped
            await self._prepare_kernel(plan.client, plan.server)
        for index, (value, conns) in enumerate(plan.grid):
            for repetition in range(plan.repetitions):
                self.heartbeat()
                if stopped := self._stopped():  # also before a sysctl: a cancelled sweep changes nothing more
                    return stopped
                if plan.kind is SweepKind.kernel_max and repetition == 0:
                    await self._apply_kernel_max(value)
                run_id = self._add_run(plan, index, value, conns, repetition)
                status, reason = await RunExecution(
                    self.sessions,
                    self.secret_key,
                    run_id,
                    heartbeat=self.heartbeat,
                    shutting_down=self.shutting_down,
                    parent_cancelled=self._cancel_requested,
                ).execute()
                if status is RunStatus.cancelled:
                    return (
                        RunStatus.cancelled,
                        f"cancelled by the user during run #{run_id}; the runs finished so far are kept",
                    )
                if status is RunStatus.failed:
                    return RunStatus.failed, (
                        f"run #{run_id} ({describe_point(plan.kind, value, conns)}) failed: {reason} "
                        "The sweep stopped there; the runs finished so far are kept."
                    )
            if plan.kind is SweepKind.connections and self._plateau_reached():
                return RunStatus.succeeded, None
        return RunStatus.succeeded, None

    def _load(self) -> _Plan:
        with self.sessions() as session:
            sweep = session.get(Sweep, self.sweep_id)
            client, server = sweep.client_host, sweep.server_host
            if client is None or server is None:
                raise SweepFailed("a host of this sweep was deleted before it started")
            for host in (client, server):
                _ = host.credential  # loaded before the session closes
            return _Plan(
                kind=sweep.kind,
                grid=service.sweep_grid(sweep),
                repetitions=sweep.repetitions,
                shared={
                    **sweep.parameters,
                    "client_host_id": client.id,
                    "server_host_id": server.id,
                    "tags": sweep.tags,
                },
                label=sweep.label or f"{sweep.kind.label} #{sweep.id}",
                requested_by=sweep.requested_by,
                environment_id=sweep.environment_id,
                client=client,
                server=server,
                names={"client": client.name, "server": server.name},
            )

    def _add_run(self, plan: _Plan, index: int, value: int, conns: int, repetition: int) -> int:
        """Store the run of one repetition of a grid point (queued); its id."""
        fields = {**plan.shared, "conns": conns, "label": f"{plan.label} · {describe_point(plan.kind, value, conns)}"}
        if plan.kind is SweepKind.sockbuf:
            fields["sockbuf_bytes"] = value
        run = Run(
            environment_id=plan.environment_id,
            client_host_name=plan.names["client"],
            server_host_name=plan.names["server"],
            requested_by=plan.requested_by,
            sweep_id=self.sweep_id,
            sweep_point=index,
            repetition=repetition,
            kernel_max_bytes=value if plan.kind is SweepKind.kernel_max else None,
            **RunCreate.model_validate(fields).model_dump(),
        )
        with self.sessions() as session:
            session.add(run)
            session.commit()
            return run.id

    def _plateau_reached(self) -> bool:
        with self.sessions() as session:
            sweep = session.get(Sweep, self.sweep_id)
            if sweep is None:  # deleted meanwhile: nothing more to run
                return True
            plateau = service.connection_plateau(sweep, service.sweep_points(sweep))
            sweep.best_conns = plateau.best
            session.commit()
            return plateau.reached

    # -- kernel-maximum sweeps --------------------------------------------------------------
    async def _prepare_kernel(self, client: Host, server: Host) -> None:
        hosts = {"client": client} if client.id == server.id else {"client": client, "server": server}
        for role, host in hosts.items():
            if not host.allow_kernel_changes:
                raise SweepFailed(
                    f"redolab may not change kernel settings on {host.name} (an admin allows it under Hosts > Edit)"
                )
            self.kernel_hosts[role] = (host, await connect_host(host, secret_key=self.secret_key))
        for role, (_, transport) in self.kernel_hosts.items():
            self.prefixes[role] = await privilege(transport)  # first: a restore needs it
            self.original[role] = await read_buffers(transport)
        self._update(kernel_original=self.original, kernel_restored=None)

    async def _apply_kernel_max(self, maximum: int) -> None:
        for role, (_, transport) in self.kernel_hosts.items():
            original = self.original[role]
            self.changed.add(role)  # before the sysctl: one that fails halfway may have changed a value
            await set_buffers(
                transport,
                {name: kernel_triple(original[name], maximum) for name in ("tcp_rmem", "tcp_wmem")},
                prefix=self.prefixes[role],
            )

    async def _restore(self) -> str | None:
        """Put the original values back where a sysctl ran; on failure, say how to do it by hand."""
        if not self.original:
            return None
        failed = {}
        for role, values in self.original.items():
            if role not in self.changed:  # nothing was changed there (e.g. cancelled first): nothing to write
                continue
            host, transport = self.kernel_hosts[role]
            try:
                await set_buffers(transport, values, prefix=self.prefixes[role])
            except Exception as error:  # a dropped connection too: say how to do it by hand
                log.warning("sweep %s: restoring the kernel values on %s failed: %s", self.sweep_id, host.name, error)
                failed[role] = values
        self._update(kernel_restored=not failed)
        if not failed:
            return None
        names = {role: self.kernel_hosts[role][0].name for role in failed}
        return "The original tcp_rmem/tcp_wmem could not be put back; run as root: " + "; ".join(
            restore_commands(failed, names)
        )
