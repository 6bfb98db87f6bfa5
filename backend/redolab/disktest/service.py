"""Disk tests: queue `redoprobe disk` at several write sizes on a host, fit time = size / rate +
overhead, and keep the fit on the host (the Oracle SYNC card and the Db2 calculator read it there)."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from redolab.core.db import get_or_404, utcnow
from redolab.core.errors import FieldError
from redolab.core.schema_rules import ABSOLUTE_DIR, TextPattern
from redolab.core.units import format_bytes
from redolab.disktest.fit import Disk, DiskPoint, fit_disk
from redolab.disktest.models import DiskTest
from redolab.environments.connect import connect_host
from redolab.environments.models import Environment, Host, HostRole
from redolab.jobs.models import Job
from redolab.remote.deploy import ensure_probe, probe_file_name
from redolab.remote.hostinfo import capture_settings
from redolab.remote.transport import TransportError
from redolab.runs.schemas import check_write_dir

KIND = "disk"
DEFAULT_SIZES = (4096, 65536, 1024 * 1024)  # 1 page, a 16-page flush, 256 pages
MAX_SIZES = 8
MAX_WRITE_BYTES = 64 * 1024 * 1024
MAX_SECONDS_PER_SIZE = 60.0


def _check_sizes(sizes: list[int]) -> list[int]:
    unique = sorted(set(sizes))
    if len(unique) < 2:
        raise ValueError("give at least two different write sizes (e.g. 4 KiB and 1 MiB): the fit needs two")
    if len(unique) > MAX_SIZES:
        raise ValueError(f"at most {MAX_SIZES} write sizes")
    if unique[0] < 512 or unique[-1] > MAX_WRITE_BYTES:
        raise ValueError(f"write sizes from 512 bytes to {format_bytes(MAX_WRITE_BYTES)}")
    return unique


class DiskTestCreate(BaseModel):
    host_id: int
    path: Annotated[str, AfterValidator(check_write_dir), TextPattern(ABSOLUTE_DIR, max_length=400)] = Field(
        description="a directory on the log file system"
    )
    # the document states _check_sizes: two to MAX_SIZES different sizes, each in range
    write_sizes: Annotated[list[int], AfterValidator(_check_sizes)] = Field(
        default_factory=lambda: list(DEFAULT_SIZES),
        json_schema_extra={
            "items": {"type": "integer", "minimum": 512, "maximum": MAX_WRITE_BYTES},
            "minItems": 2,
            "maxItems": MAX_SIZES,
            "uniqueItems": True,
        },
    )
    seconds_per_size: float = Field(default=4.0, ge=0.5, le=MAX_SECONDS_PER_SIZE)


def create_disk_test(*, session: Session, environment: Environment, test_in: DiskTestCreate, requested_by: str):
    host = next((h for h in environment.hosts if h.id == test_in.host_id), None)
    if host is None:
        raise FieldError("host_id", f"Host {test_in.host_id} is not a host of environment '{environment.name}'.")
    test = DiskTest(
        environment_id=environment.id,
        host_id=host.id,
        path=test_in.path,
        write_sizes=test_in.write_sizes,
        seconds_per_size=test_in.seconds_per_size,
        status="queued",
        points=[],
        created_by=requested_by,
    )
    session.add(test)
    session.flush()
    job = Job(kind=KIND, disk_test_id=test.id, client_host_id=host.id, server_host_id=host.id)
    session.add(job)
    session.flush()
    test.job_id = job.id
    session.commit()
    return test


def list_disk_tests(*, session: Session, environment: Environment, limit: int = 20) -> list[DiskTest]:
    return list(
        session.scalars(
            select(DiskTest).where(DiskTest.environment_id == environment.id).order_by(DiskTest.id.desc()).limit(limit)
        )
    )


def get_disk_test(*, session: Session, environment: Environment, test_id: int) -> DiskTest:
    return get_or_404(session, DiskTest, test_id, what="Disk test", environment=environment)


def disk_test_json(test: DiskTest) -> dict:
    return {
        "id": test.id,
        "host_id": test.host_id,
        "path": test.path,
        "write_sizes": test.write_sizes,
        "seconds_per_size": test.seconds_per_size,
        "status": test.status,
        "error": test.error,
        "points": test.points,
        "rate_bytes_per_second": test.rate_bytes_per_second,
        "overhead_seconds": test.overhead_seconds,
        "created_by": test.created_by,
        "created_at": test.created_at.isoformat() if test.created_at else None,
        "finished_at": test.finished_at.isoformat() if test.finished_at else None,
    }


def host_disk(host: Host):
    """The host's fitted log disk, or None."""
    if host.disk_rate_bytes_per_second and host.disk_overhead_seconds is not None:
        return Disk(host.disk_rate_bytes_per_second, host.disk_overhead_seconds)
    return None


def latest_disk(environment: Environment, role) -> tuple:
    """(Disk, "host in directory") of the role's most recently measured log disk, or (None, ""); a
    standby's from the first destination's hosts (the one the plan reads)."""
    candidates = environment.standby_hosts() if role is HostRole.standby else environment.hosts
    hosts = [h for h in candidates if h.role is role and host_disk(h) is not None]
    if not hosts:
        return None, ""
    host = max(hosts, key=lambda h: h.disk_measured_at.timestamp() if h.disk_measured_at else 0.0)
    return host_disk(host), f"{host.name} in {host.disk_path}"


def point_from_end(write_bytes: int, data: dict, where: str) -> dict:
    writes, seconds = int(data.get("writes") or 0), float(data.get("seconds") or 0)
    if writes <= 0 or seconds <= 0:
        raise DiskTestFailed(f"{where}: no write finished at {format_bytes(write_bytes)}")
    return {"write_bytes": write_bytes, "writes": writes, "seconds": seconds, "seconds_per_write": seconds / writes}


class DiskTestFailed(Exception):
    pass


class DiskExecution:
    """Runs one disk test (in the worker): one `redoprobe disk` per size, in order, on the host."""

    def __init__(self, sessions: sessionmaker, secret_key: str, test_id: int, heartbeat=lambda: None) -> None:
        self.sessions, self.secret_key, self.test_id, self.heartbeat = sessions, secret_key, test_id, heartbeat

    def _store(self, **values) -> None:
        with self.sessions() as session:
            test = session.get(DiskTest, self.test_id)
            for key, value in values.items():
                setattr(test, key, value)
            session.commit()

    async def execute(self) -> bool:
        with self.sessions() as session:
            test = session.get(DiskTest, self.test_id)
            host = session.get(Host, test.host_id)
            credential = host.credential  # loaded now: the connection reads it after the session closes
            session.expunge(host)
            if credential is not None:
                session.expunge(credential)
            sizes, seconds, path = list(test.write_sizes), test.seconds_per_size, test.path
        self._store(status="running")
        points: list[dict] = []
        transport = None
        try:
            transport = await connect_host(host, secret_key=self.secret_key)
            found = await capture_settings(
                transport, peer_address=host.probe_address, interface=host.data_interface, probe_name=probe_file_name()
            )
            probe = await ensure_probe(transport, found)
            for size in sizes:
                self.heartbeat()
                argv = [probe.path, "disk", path, "--write-size", str(size), "--duration", f"{seconds:g}", "--json"]
                result = await transport.run(argv, timeout=seconds + 60)
                end, error = None, None
                for line in result.stdout.splitlines():
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if event.get("event") == "end":
                        end = event.get("data") or {}
                    elif event.get("event") == "error":
                        error = (event.get("data") or {}).get("message")
                if end is None:
                    reason = error or result.stderr.strip()[:300] or f"exit status {result.exit_status}"
                    raise DiskTestFailed(f"{host.name}: redoprobe disk {path} at {format_bytes(size)} failed: {reason}")
                points.append(point_from_end(size, end, host.name))
                self._store(points=list(points))
            fit = fit_disk([DiskPoint(p["write_bytes"], p["seconds_per_write"]) for p in points])
        except (DiskTestFailed, TransportError, ValueError, OSError) as failure:
            self._store(status="failed", error=str(failure), points=points, finished_at=utcnow())
            return False
        finally:
            if transport is not None:
                await transport.close()
        now = utcnow()
        with self.sessions() as session:
            test = session.get(DiskTest, self.test_id)
            test.status, test.finished_at = "succeeded", now
            test.rate_bytes_per_second, test.overhead_seconds = (
                fit.fitted.rate_bytes_per_second,
                fit.fitted.overhead_seconds,
            )
            row = session.get(Host, test.host_id)
            row.disk_rate_bytes_per_second = fit.fitted.rate_bytes_per_second
            row.disk_overhead_seconds = fit.fitted.overhead_seconds
            row.disk_path, row.disk_measured_at, row.disk_points = path, now, points
            session.commit()
        return True
