"""What a run must pass before it is queued on a shared server (issue 33), and where it stands once
queued: the queue caps of its owner and host pair, and a write directory on "This machine" kept
inside the configured root with room for what the probe may write there."""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.config import Settings, get_settings
from redolab.core.errors import FieldError
from redolab.core.units import MIB, format_bytes, format_count
from redolab.environments.models import Host, HostTransport
from redolab.jobs.admission import QueueCaps, QueuePlace, check_queue_caps, hold_queue_lock, queue_place
from redolab.jobs.models import Job

# redoprobe's --write-wrap default (redoprobe/main.c): each stream's file grows to this, then wraps.
PROBE_WRITE_WRAP_BYTES = 512 * MIB


def owner_of(requested_by: str) -> str:
    """The user a request counts against: a schedule's occurrence ("ann (schedule #3)") and a watch's
    check ("ann (watch #4)") are ann's."""
    for marker in (" (schedule #", " (watch #"):
        requested_by = requested_by.split(marker, 1)[0]
    return requested_by


def admit(
    session: Session, *, requested_by: str, client: Host, server: Host, caps: QueueCaps | None = None, adding: int = 1
) -> None:
    """Take the queue lock and refuse (429) a job past its owner's or its host pair's cap (`adding`:
    the jobs the request queues for its owner at once, as a rehearsal's runs). The caller writes its
    rows next and commits (which releases the lock), or rolls back."""
    hold_queue_lock(session)
    check_queue_caps(
        session,
        owner=owner_of(requested_by),
        client_host_id=client.id,
        server_host_id=server.id,
        pair_name=f"Hosts {client.name} and {server.name}",
        caps=caps or QueueCaps.of(get_settings()),
        adding=adding,
    )


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_local_write_dir(
    *, server: Host, write_dir: str | None, conns: int, settings: Settings | None = None, free_bytes=None
) -> None:
    """On "This machine" the probe's server writes into the server's own disk: the directory must
    be inside REDOLAB_LOCAL_WRITE_ROOT, and connections x the wrap size must fit its free space
    (422 naming both). It is then made, if missing (no one has a shell there to make it). Other
    hosts are the team's own: their write_dir is checked by the probe."""
    if not write_dir or server.transport is not HostTransport.local:
        return
    root = (settings or get_settings()).resolved_local_write_root
    path = Path(write_dir).resolve()
    if path != root and root not in path.parents:
        raise FieldError(
            "write_dir",
            f"On This machine the probe writes only inside {root} (REDOLAB_LOCAL_WRITE_ROOT): "
            f"give a directory there, e.g. {root}/standby-redo.",
            422,
        )
    needed = conns * PROBE_WRITE_WRAP_BYTES
    free = (free_bytes or (lambda p: shutil.disk_usage(p).free))(_existing_ancestor(path))
    if needed > free:
        raise FieldError(
            "write_dir",
            f"{format_count(conns, 'connection')} x {format_bytes(PROBE_WRITE_WRAP_BYTES)} "
            "(the probe's wrap size per stream) "
            f"= {format_bytes(needed)} would be written under {root}, which has {format_bytes(free)} free: "
            "use fewer connections, or free space there.",
            422,
        )
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def place_of(session: Session, *, run_id: int | None = None, sweep_id: int | None = None) -> QueuePlace | None:
    """Where a queued run or sweep stands (None when it is not waiting)."""
    condition = Job.run_id == run_id if run_id is not None else Job.sweep_id == sweep_id
    return queue_place(session, session.scalar(select(Job).where(condition)))
