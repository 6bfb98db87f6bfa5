"""SYNC under load (issue 59, item 4): a SYNC run of commit-sized messages on one connection while an
ASYNC stream run loads the same host pair, queued together so the worker starts them at once (the
jobs of one group may share hosts: jobs.claims). The SYNC run carries UNDER_LOAD and the load run's
number in its tags; the SYNC commit card sets its acknowledgement percentiles beside an idle SYNC run's."""

from __future__ import annotations

import json
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.config import Settings
from redolab.core.errors import FieldError
from redolab.environments.models import Environment
from redolab.jobs.admission import QueueCaps
from redolab.runs.models import ProbeMode, Run, RunEvent
from redolab.runs.schemas import RunCreate
from redolab.runs.service import create_run

UNDER_LOAD = "under-load"  # a SYNC run measured while another run loaded its path
LOAD = "load"  # the run that loaded it
LOAD_OF = "load-run:"  # + the load run's id, on the SYNC run
LOAD_MESSAGE_BYTES = 1024 * 1024  # the stream's writes: copy-shaped (RMAN, archive shipping), not commit-sized
LOAD_LEAD_SECONDS = 2.0  # the load outlasts the SYNC run: its start and end are not judged unloaded
MAX_RUN_SECONDS = 3600  # a run's longest (runs.schemas.RunCreate), the load's too


def load_run_id(tags) -> int | None:
    """The load run's id named in a SYNC run's tags, if it was measured under load."""
    for tag in tags:
        if tag.startswith(LOAD_OF) and tag[len(LOAD_OF) :].isdigit():
            return int(tag[len(LOAD_OF) :])
    return None


def create_sync_under_load(
    *,
    session: Session,
    environment: Environment,
    sync_in: RunCreate,
    load_conns: int,
    requested_by: str,
    caps: QueueCaps | None = None,
    settings: Settings | None = None,
) -> tuple[Run, Run]:
    """Queue the SYNC run (`sync_in`, one connection) and an ASYNC load of `load_conns` connections on
    the same hosts, to start together; (sync run, load run)."""
    if sync_in.mode is not ProbeMode.sync or sync_in.conns != 1:
        raise FieldError("mode", "SYNC under load measures one SYNC connection: mode SYNC, 1 connection.", 422)
    if sync_in.duration_seconds + LOAD_LEAD_SECONDS > MAX_RUN_SECONDS:
        said = f"The load runs {LOAD_LEAD_SECONDS:g} s longer than the SYNC run: at most 59 min 58 s."
        raise FieldError("duration_seconds", said, 422)
    # the run's own fields, already validated (a form's extras such as the load's size are not the run's)
    sync_in = RunCreate.model_construct(**{name: getattr(sync_in, name) for name in RunCreate.model_fields})
    load_in = RunCreate(
        client_host_id=sync_in.client_host_id,
        server_host_id=sync_in.server_host_id,
        mode=ProbeMode.async_,
        conns=load_conns,
        message_bytes=LOAD_MESSAGE_BYTES,
        duration_seconds=sync_in.duration_seconds + LOAD_LEAD_SECONDS,
        interval_seconds=sync_in.interval_seconds,
        label=f"load for SYNC {sync_in.label}".strip(),
        tags=[*sync_in.tags, LOAD],
    )
    group = f"load:{secrets.token_hex(8)}"
    common = {"session": session, "environment": environment, "requested_by": requested_by, "commit": False}
    common |= {"caps": caps, "settings": settings}
    load = create_run(run_in=load_in, together=group, **common)
    sync = create_run(run_in=sync_in, together=group, **common)
    sync.tags = [*sync.tags, UNDER_LOAD, f"{LOAD_OF}{load.id}"]
    session.commit()
    return sync, load


def ack_histogram(session: Session, run_id: int) -> list[dict]:
    """A SYNC run's acknowledgement histogram as its client's end event stored it ([{from_us, to_us,
    count}], power-of-two microsecond buckets); empty when it has none or the line cannot be read."""
    line = session.scalar(
        select(RunEvent.line).where(RunEvent.run_id == run_id, RunEvent.role == "client", RunEvent.event == "end")
    )
    try:
        histogram = json.loads(line)["data"]["ack_latency_us"]["histogram"] if line else []
    except (ValueError, KeyError, TypeError):
        return []
    return [b for b in histogram if isinstance(b, dict) and {"from_us", "to_us", "count"} <= b.keys()]
