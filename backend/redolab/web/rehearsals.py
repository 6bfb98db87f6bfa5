"""Rehearsal pages: the Rehearsal section of the environment page (its form and list), the rehearsal
page with its live block, cancel, and the schedule as the probe replayed it."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from redolab.auth.deps import OperatorUser, current_html_user
from redolab.charts.rehearsals import rehearsal_figure
from redolab.core.deps import FormDep, SessionDep
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.environments.service import get_environment
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.planning.rehearse_tiers import rehearse_at_tier
from redolab.planning.service import rehearsal_outcome
from redolab.redo import service as redo_service
from redolab.rehearsals import service
from redolab.rehearsals.models import Rehearsal
from redolab.rehearsals.schemas import RehearsalCreate
from redolab.web.loopback import on_this_machine, runs_on_this_machine
from redolab.web.titles import rehearsal_title

router = APIRouter(dependencies=[Depends(current_html_user)])

PERIOD = "period"
WINDOW_OPTIONS = [
    ("worst-60m", "Worst 60 minutes"),
    ("worst-15m", "Worst 15 minutes"),
    ("worst-5m", "Worst 5 minutes"),
    ("worst-1m", "Worst minute"),
    (PERIOD, "A period you name"),
]
MODE_OPTIONS = [("async", "ASYNC (stream)"), ("sync", "SYNC (ack per message)")]
REHEARSAL_DEFAULTS = {
    "window": "worst-60m",
    "window_from": "",
    "window_to": "",
    "scale": "1",
    "speedup": "1",
    "mode": "async",
    "message_bytes": "",
    "label": "",
}
# The service names a period's unreadable end in its message ("window start: ...", "window end: ...",
# "window: the end ... is not after the start"): shown beside the field that holds it.
_PERIOD_FIELDS = (("window start", "window_from"), ("window end", "window_to"), ("window: the end", "window_to"))


def rehearsals_context(session, environment, *, values=None, errors=None) -> dict:
    """What the environment page's Rehearsal section needs: the form (with what was typed and its
    errors) and the environment's rehearsals with their status."""
    rehearsals = service.list_rehearsals(session=session, environment=environment)
    return {
        "rehearsals": rehearsals,
        "rehearsal_states": {r.id: service.status(r) for r in rehearsals},
        "rehearsal_values": values or REHEARSAL_DEFAULTS,
        "rehearsal_errors": errors or {},
        "window_options": WINDOW_OPTIONS,
        "rehearsal_modes": MODE_OPTIONS,
        "has_history": bool(redo_service.list_imports(session=session, environment=environment)),
        "has_pair": {"primary", "standby"} <= {host.role.value for host in environment.hosts},
        "zone": environment.time_zone or "UTC",
        "direct_destinations": sum(
            1 for d in environment.destinations if d.feeds_from_id is None and environment.standby_hosts(d)
        ),
    }


def window_spec(values: dict) -> str:
    """The window as the service reads it: a worst window's name, or FROM..TO as typed (on the
    database's clock)."""
    if values.get("window") != PERIOD:
        return values.get("window", "")
    return f"{values.get('window_from', '')}..{values.get('window_to', '')}"


def _period_errors(values: dict) -> dict[str, str]:
    """A period needs both ends before the service reads them."""
    if values.get("window") != PERIOD:
        return {}
    said = {"window_from": "Give the start of the period.", "window_to": "Give the end of the period."}
    return {name: message for name, message in said.items() if not values.get(name)}


def _placed(errors: dict[str, str], values: dict) -> dict[str, str]:
    """Errors named after the form's fields: a period's errors beside its from or to field; one the
    form has no field for (no host pair, a host busy) above the button."""
    placed = {}
    for name, message in errors.items():
        if name == "window" and values.get("window") == PERIOD:
            name = next((field for start, field in _PERIOD_FIELDS if message.startswith(start)), "window_from")
        elif name not in REHEARSAL_DEFAULTS:
            name = "__all__"
        placed.setdefault(name, message)
    return placed


def _section(request, session, environment, *, status_code=200, **form) -> Response:
    """The Rehearsal section (htmx), or the section alone on a page of its own (a plain form post)."""
    context = {"environment": environment, **rehearsals_context(session, environment, **form)}
    if is_htmx(request):
        return render(request, "environments/detail.html", context, block="rehearsals", status_code=status_code)
    return render(request, "rehearsals/new.html", context, status_code=status_code)


@router.get("/environments/{environment_id}/rehearsals")
def show_rehearsals(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The Rehearsal section as a fragment (it refreshes when hosts change); a plain browser request
    goes to the section on the whole page."""
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment_id}#rehearsals")
    return _section(request, session, get_environment(session=session, environment_id=environment_id))


@router.post("/environments/{environment_id}/rehearsals")
def create_rehearsal(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Queue a rehearsal from the Rehearsal form; its errors are shown beside their fields."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    errors = _period_errors(values)
    if not errors:
        fields = {k: v for k, v in values.items() if k in RehearsalCreate.model_fields and v != "" and k != "window"}
        settings = request.app.state.settings
        with form_errors(session) as errors:
            body = RehearsalCreate.model_validate({**fields, "window": window_spec(values)})
            rehearsal = service.create_rehearsal(
                session=session,
                environment=environment,
                request=service.request_of(body),
                requested_by=user.username,
                caps=QueueCaps.of(settings),
                settings=settings,
            )
    if not errors:
        wake_local_worker(request.app)
        return redirect(request, f"/rehearsals/{rehearsal.id}")
    placed = _placed(errors, values)
    return _section(request, session, environment, status_code=422, values=values, errors=placed)


@router.post("/environments/{environment_id}/rehearsals/tier")
def rehearse_tier(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Rehearse at this tier (the what-if over link tiers): the worst hour at the tier and the tier below."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    settings = request.app.state.settings
    with form_errors(session) as errors:
        rehearse_at_tier(
            session=session,
            environment=environment,
            tier=str(values.get("tier", "")),
            request=service.RehearsalRequest(),
            requested_by=user.username,
            caps=QueueCaps.of(settings),
            settings=settings,
        )
    if errors:
        said = "; ".join(errors.values())
        return _section(request, session, environment, status_code=422, errors={"__all__": said})
    wake_local_worker(request.app)
    return redirect(request, f"/environments/{environment.id}#rehearsals")


def _progress(rehearsal: Rehearsal, series: dict, interval_count: int) -> dict:
    """How far the replay is on its own clock (the last interval's end: connecting, deploying the probe
    and the warm-up before time zero are not replay), against the schedule's length compressed by the
    speedup (the drain after it is not known in advance); None before the first interval."""
    replay_seconds = rehearsal.schedule_seconds / rehearsal.speedup
    ends = [end for end in series.get("end_seconds") or [] if isinstance(end, int | float)]
    elapsed = float(max(ends)) if ends else None
    percent = min(100.0, 100.0 * (elapsed or 0.0) / replay_seconds) if replay_seconds else 0.0
    return {
        "elapsed_seconds": elapsed,
        "replay_seconds": replay_seconds,
        "progress_percent": percent,
        "interval_count": interval_count,
    }


def _rehearsal_context(session, rehearsal: Rehearsal) -> dict:
    result = service.current_result(session=session, rehearsal=rehearsal)
    environment = get_environment(session=session, environment_id=rehearsal.environment_id)
    beside = rehearsal_outcome(session=session, environment=environment, rehearsal=rehearsal, result=result)
    predicted = beside.prediction  # the model's, for the same window at the plan's single-stream rate
    series = (result or {}).get("series") or {"end_seconds": []}
    loopback = (
        runs_on_this_machine(session, rehearsal.runs)
        if rehearsal.runs
        else on_this_machine(session, [(host.id, host.id) for host in environment.hosts])
    )
    title = rehearsal_title(rehearsal, environment, loopback=loopback)
    return {
        "rehearsal": rehearsal,
        "environment": environment,
        "beside": beside,
        "state": service.status(rehearsal),
        "failure_reason": service.failure(rehearsal),
        "result": result,
        "predicted": predicted,
        "figure": rehearsal_figure(series, predicted, title) if result else None,
        # its runs; before they are made, the environment's hosts it will run between
        "loopback": loopback,
        # a finished rehearsal keeps its series thinned: the count of intervals is said beside it
        **_progress(rehearsal, series, (result or {}).get("series_intervals") or len(series["end_seconds"])),
    }


@router.get("/rehearsals/{rehearsal_id}")
def show_rehearsal(request: Request, session: SessionDep, rehearsal_id: int) -> Response:
    """The rehearsal page: what is replayed, live while it runs, the measured lag afterwards."""
    rehearsal = service.get_rehearsal(session=session, rehearsal_id=rehearsal_id)
    return render(request, "rehearsals/rehearsal.html", _rehearsal_context(session, rehearsal))


@router.get("/rehearsals/{rehearsal_id}/live")
def show_rehearsal_live(request: Request, session: SessionDep, rehearsal_id: int) -> Response:
    """The live block, polled while a run of the rehearsal is queued or running; once every run has
    ended it is the whole record, without a trigger, so polling stops by itself."""
    rehearsal = service.get_rehearsal(session=session, rehearsal_id=rehearsal_id)
    return render(request, "rehearsals/rehearsal.html", _rehearsal_context(session, rehearsal), block="live")


@router.post("/rehearsals/{rehearsal_id}/cancel")
def cancel_rehearsal(request: Request, session: SessionDep, user: OperatorUser, rehearsal_id: int) -> Response:
    """Cancel every run of the rehearsal still queued or running (the intervals so far are kept)."""
    rehearsal = service.get_rehearsal(session=session, rehearsal_id=rehearsal_id)
    service.cancel_rehearsal(session=session, rehearsal=rehearsal)
    return redirect(request, f"/rehearsals/{rehearsal.id}")


@router.get("/rehearsals/{rehearsal_id}/schedule.txt")
def download_schedule(session: SessionDep, rehearsal_id: int) -> Response:
    """The schedule as redoprobe replayed it (`CONNECTION OFFSET_SECONDS BYTES` per slot)."""
    rehearsal = service.get_rehearsal(session=session, rehearsal_id=rehearsal_id)
    headers = {
        "Content-Disposition": f'attachment; filename="redolab-rehearsal-{rehearsal.id}-schedule.txt"',
        "X-Schedule-SHA256": rehearsal.schedule_sha256,
    }
    return Response(rehearsal.schedule_text, media_type="text/plain; charset=utf-8", headers=headers)
