"""The Experiments section of the environment page: the run, sweep and import forms with their
defaults, the runs and sweeps listed (filtered by tag and MTU), and queueing what a form asked for."""

from __future__ import annotations

from pydantic import ValidationError

from redolab.core.config import Settings
from redolab.core.errors import FieldError
from redolab.core.forms import field_errors
from redolab.jobs.admission import QueueCaps
from redolab.runs import service as run_service
from redolab.runs.schemas import RunCreate
from redolab.sweeps import service as sweep_service
from redolab.sweeps.clusters import hop_pairs, node_pairs
from redolab.sweeps.compare import mtu_of
from redolab.sweeps.schedules import Repeat, create_schedule, list_schedules
from redolab.sweeps.schemas import SweepCreate

SWEEP_DEFAULTS = {
    "kind": "connections",
    "mode": "async",
    "message_bytes": "1 MiB",
    "duration_seconds": "20 s",
    "interval_seconds": "2 s",
    "conns_start": "1",
    "conns_step": "",
    "conns_max": "16",
    "threshold_percent": "5",
    "sizes": "256 KiB, 1 MiB, 4 MiB, 16 MiB",
    "conns_values": "1",
    "repetitions": "1",
    "rate_bits_per_second": "",
    "label": "",
    "tags": "",
}

RUN_DEFAULTS = {
    "mode": "async",
    "conns": "1",
    "message_bytes": "1 MiB",
    "sockbuf_bytes": "",
    "duration_seconds": "60 s",
    "interval_seconds": "5 s",
    "delay_us": "0",
    "rate_bits_per_second": "",
    "write_dir": "",
    "label": "",
}


IMPORT_FORMATS = [
    ("auto", "Recognise it"),
    ("oratcptest", "oratcptest client output (text)"),
    ("iperf3", "iperf3 JSON (iperf3 -J)"),
]


RUNS_SHOWN = 50  # the newest runs on the page; filters and the exports reach the rest


def experiments_context(
    session,
    environment,
    *,
    values=None,
    errors=None,
    sweep_values=None,
    sweep_errors=None,
    import_values=None,
    import_errors=None,
    tag="",
    mtu="",
) -> dict:
    """What the environment page's Experiments section needs: the run and sweep forms, and the
    runs and sweeps (filtered by tag and by the MTU they ran at)."""
    hosts = environment.hosts
    primary = next((h for h in hosts if h.role.value == "primary"), None)
    standby = next(iter(environment.standby_hosts()), None)  # the first destination's
    pair = {
        "client_host_id": str(primary.id) if primary else "",
        "server_host_id": str(standby.id) if standby else "",
    }
    runs = run_service.list_runs(session=session, environment=environment)
    sweeps = sweep_service.list_sweeps(session=session, environment=environment)
    tags = sorted({t for item in [*runs, *sweeps] for t in item.tags or []})
    mtus = sorted({m for item in [*runs, *sweeps] if (m := mtu_of(item))})

    def keep(item) -> bool:
        return (not tag or tag in (item.tags or [])) and (not mtu or str(mtu_of(item)) == mtu)

    matching = [run for run in runs if keep(run)]
    return {
        "schedules": list_schedules(session=session, environment=environment),
        "pair_count": len(node_pairs(environment)),
        "hop_count": len({server.destination_id for _, server in hop_pairs(environment)}),
        "runs": matching[:RUNS_SHOWN],
        "matching_runs": matching,  # the newest 200 that pass the filters: what the exports hold
        "sweeps": [sweep for sweep in sweeps if keep(sweep)],
        "filter": {"tag": tag, "mtu": mtu, "tags": tags, "mtus": mtus},
        "run_values": values or {**RUN_DEFAULTS, **pair, **_platform_defaults(environment)},
        "run_errors": errors or {},
        "sweep_values": sweep_values or {**SWEEP_DEFAULTS, **pair},
        "sweep_errors": sweep_errors or {},
        "import_values": import_values or {"format": "auto", "test_date": "", **pair},
        "import_errors": import_errors or {},
        "import_formats": IMPORT_FORMATS,
        "host_options": [(str(h.id), f"{h.name} ({h.role.value} node {h.node_number})") for h in hosts],
    }


def _platform_defaults(environment) -> dict:
    """Db2 teams think in flushes of 4 KiB log pages: simhadr's default flush is 16 pages."""
    return {"message_bytes": "16 pages"} if environment.platform.value == "hadr" else {}


def form_fields(values: dict) -> dict:
    """The submitted form without blanks (so defaults apply) and without the Repeat fields."""
    return {k: v for k, v in values.items() if (v != "" or k == "label") and not k.startswith("repeat_")}


def create_or_schedule(
    session, environment, item: RunCreate | SweepCreate, values: dict, username: str, settings: Settings
) -> str:
    """Queue the run or sweep, or, with "Repeat every" filled in, a schedule of them (its first
    occurrence now), within the caps of `settings`; returns the page to go to."""
    limits = {"caps": QueueCaps.of(settings), "settings": settings}
    if values.get("repeat_every") or values.get("repeat_until"):
        try:
            repeat = Repeat.model_validate(
                {"every_seconds": values.get("repeat_every") or None, "until": values.get("repeat_until") or None}
            )
        except ValidationError as error:  # named after the form's fields
            field, message = next(iter(field_errors(error).items()))
            raise FieldError("repeat_until" if field == "until" else "repeat_every", message, 422) from None
        schedule = create_schedule(
            session=session, environment=environment, item=item, repeat=repeat, requested_by=username, **limits
        )
        return f"/schedules/{schedule.id}"
    if isinstance(item, SweepCreate):
        sweep = sweep_service.create_sweep(
            session=session, environment=environment, sweep_in=item, requested_by=username, **limits
        )
        return f"/sweeps/{sweep.id}"
    run = run_service.create_run(session=session, environment=environment, run_in=item, requested_by=username, **limits)
    return f"/runs/{run.id}"
