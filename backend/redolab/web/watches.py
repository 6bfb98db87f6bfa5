"""Watch pages: the Watches section of the environment page (list and form), the watch page (state,
chart of each check against the requirement with the state bands, the forecast, the checks, the
notifications sent), and silence, stop and start."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from sqlalchemy import select
from starlette.responses import PlainTextResponse, Response

from redolab.auth.deps import OperatorUser, current_html_user
from redolab.charts.watches import watch_figure
from redolab.core.db import utcnow
from redolab.core.deps import FormDep, SessionDep
from redolab.core.errors import FieldError
from redolab.core.forms import form_data, form_errors
from redolab.core.limits import LimitReached
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.environments.models import Environment
from redolab.environments.service import get_environment
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.watches import results, service
from redolab.watches.judge import state_history
from redolab.watches.models import CheckStatus, Notification, NotificationReceiver, WatchCheck
from redolab.watches.schemas import WatchCreate, WatchSilence
from redolab.watches.trend import watch_forecast
from redolab.web.loopback import on_this_machine
from redolab.web.titles import watch_title

router = APIRouter(dependencies=[Depends(current_html_user)])

WATCH_DEFAULTS = {
    "name": "",
    "client_host_id": "",
    "server_host_id": "",
    "every_seconds": "15 min",
    "duration_seconds": "10 s",
    "conns": "1",
    "message_bytes": "1 MiB",
    "threshold_bytes_per_second": "",
    "margin_ratio": "0.10",
    "agree_m": "2",
    "of_n": "3",
}


def watches_context(session, environment: Environment, *, values=None, errors=None) -> dict:
    hosts = sorted(environment.hosts, key=lambda h: (h.role.value, h.node_number))
    return {
        "watches": service.list_watches(session=session, environment=environment),
        "watch_values": values or WATCH_DEFAULTS,
        "watch_errors": errors or {},
        "watch_clients": [("", "—")] + [(str(h.id), f"{h.name} ({h.role.value})") for h in hosts],
        "watch_receivers": session.scalars(select(NotificationReceiver).order_by(NotificationReceiver.name)).all(),
    }


def _section(request, session, environment, *, status_code=200, **form) -> Response:
    context = {"environment": environment, **watches_context(session, environment, **form)}
    return render(request, "environments/detail.html", context, block="watches", status_code=status_code)


@router.get("/environments/{environment_id}/watches")
def show_watches(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The Watches section as a fragment (refreshed when hosts change)."""
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment_id}#watches")
    return _section(request, session, get_environment(session=session, environment_id=environment_id))


@router.post("/environments/{environment_id}/watches")
def create_watch(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Make a watch from the form (operator role); its errors are shown beside their fields."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    fields = {k: v for k, v in values.items() if k in WatchCreate.model_fields and v != "" and k != "receiver_ids"}
    fields["all_node_pairs"] = values.get("all_node_pairs") == "on"
    fields["receiver_ids"] = form.getlist("receiver_ids")  # validated as ids: "²" is a digit to str.isdigit
    settings = request.app.state.settings
    with form_errors(session) as errors:
        watch = service.create_watch(
            session=session,
            environment=environment,
            watch_in=WatchCreate.model_validate(fields),
            requested_by=user.username,
            caps=QueueCaps.of(settings),
        )
    if not errors:
        wake_local_worker(request.app)
        return redirect(request, f"/watches/{watch.id}")
    placed = {(k if k in WATCH_DEFAULTS else "__all__"): v for k, v in errors.items()}
    return _section(request, session, environment, status_code=422, values=values, errors=placed)


BAND_WARM_UP = 20  # judged checks before the first one shown, per `of_n`, replayed for the bands' start


def band_states(session, watch, checks: list, judged: list) -> list[str]:
    """The state after each judged check shown, replayed from the verdicts: the checks before the first
    shown (BAND_WARM_UP x N of them) are replayed first, so the first band is the state the watch was
    in, not "not yet known" again (a state stays until M of N agree)."""
    earlier = (
        session.scalars(
            select(WatchCheck.verdict)
            .where(
                WatchCheck.watch_id == watch.id, WatchCheck.status == CheckStatus.judged, WatchCheck.id < checks[0].id
            )
            .order_by(WatchCheck.id.desc())
            .limit(BAND_WARM_UP * watch.of_n)
        ).all()
        if checks
        else []
    )
    verdicts = [*reversed(earlier), *(c.verdict for c in judged)]
    states = state_history(verdicts, agree_m=watch.agree_m, of_n=watch.of_n)
    return [s.value for s in states[len(earlier) :]]


def _watch_on_this_machine(session, watch, environment) -> bool:
    """One pair: its two hosts; every node pair: every host of the environment."""
    if watch.all_node_pairs:
        return on_this_machine(session, [(host.id, host.id) for host in environment.hosts])
    return on_this_machine(session, [(watch.client_host_id, watch.server_host_id)])


# The watch page's time ranges (perfSONAR's 1 d / 1 w / 1 m / 1 y): the checks of the range are read
# (at most RANGE_CHECKS: a year of checks every 15 min is 35,040) and the chart's axis is the range.
RANGES = {"1d": timedelta(days=1), "1w": timedelta(days=7), "1m": timedelta(days=30), "1y": timedelta(days=365)}
RANGE_CHECKS = 40_000


def _checks_in(session, watch, range_key: str | None) -> tuple[list, tuple | None]:
    """The checks a range shows, oldest first, and the range (None: the last CHECKS_SHOWN checks)."""
    if range_key not in RANGES:
        return service.list_checks(session=session, watch=watch), None
    now = utcnow()
    newest = session.scalars(
        select(WatchCheck)
        .where(WatchCheck.watch_id == watch.id, WatchCheck.at >= now - RANGES[range_key])
        .order_by(WatchCheck.id.desc())
        .limit(RANGE_CHECKS)
    ).all()
    return list(reversed(newest)), (now - RANGES[range_key], now)


def watch_context(session, watch, range_key: str | None = None) -> dict:
    environment = session.get(Environment, watch.environment_id)
    checks, window = _checks_in(session, watch, range_key)
    judged = [c for c in checks if c.status is CheckStatus.judged]
    states = band_states(session, watch, checks, judged)
    skipped = [c.at for c in checks if c.status is CheckStatus.skipped]
    loopback = _watch_on_this_machine(session, watch, environment)
    title = watch_title(watch, environment, judged, loopback=loopback)
    notifications = session.scalars(
        select(Notification).where(Notification.watch_id == watch.id).order_by(Notification.id.desc()).limit(50)
    ).all()
    receivers = {r.id: r.name for r in session.scalars(select(NotificationReceiver))}
    required = service.requirement_now(session, environment, watch)
    return {
        "watch": watch,
        "environment": environment,
        "checks": list(reversed(checks))[:100],
        "figure": watch_figure(
            judged, states, skipped, utcnow(), every_seconds=watch.every_seconds, window=window, title=title
        )
        if checks or window
        else None,
        "range_key": range_key if window else None,
        "ranges": list(RANGES),
        "notifications": notifications,
        "notification_results": {n.id: results.shown_result(n.last_result) for n in notifications},
        "receiver_names": receivers,
        "required": required,
        "forecast": watch_forecast(session=session, environment=environment, watch=watch),
        "silenced": watch.silenced_until is not None and watch.silenced_until > utcnow(),
        "silence_default": (utcnow() + timedelta(hours=2)).strftime("%Y-%m-%d %H:%M"),
        "loopback": loopback,
    }


@router.get("/watches/{watch_id}")
def show_watch(
    request: Request, session: SessionDep, watch_id: int, range_key: Annotated[str | None, Query(alias="range")] = None
) -> Response:
    """The watch page, over the last checks or a time range (?range=1d, 1w, 1m, 1y); it refreshes
    itself while the watch is active."""
    watch = service.get_watch(session=session, watch_id=watch_id, user=getattr(request.state, "user", None))
    block = "live" if is_htmx(request) else None
    return render(request, "watches/watch.html", watch_context(session, watch, range_key), block=block)


@router.post("/watches/{watch_id}/silence")
def silence_watch(request: Request, session: SessionDep, user: OperatorUser, watch_id: int, form: FormDep) -> Response:
    """Silence notifications until a time (UTC), for maintenance; an empty time ends the silence."""
    watch = service.get_watch(session=session, watch_id=watch_id)
    values = form_data(form)
    forbidden = None
    with form_errors(session) as errors:
        silence = WatchSilence.model_validate(values) if values.get("until") else None
        try:
            service.silence_watch(session=session, watch=watch, silence=silence, user=user)
        except FieldError as error:
            forbidden = error if error.status_code == 403 else None
            raise
    if forbidden is not None:
        errors = {"__all__": forbidden.message}
    context = watch_context(session, watch) | {"silence_errors": errors}
    code = 403 if forbidden is not None else 422 if errors else 200
    return render(request, "watches/watch.html", context, status_code=code)


@router.post("/watches/{watch_id}/stop")
def stop_watch(request: Request, session: SessionDep, user: OperatorUser, watch_id: int) -> Response:
    watch = service.get_watch(session=session, watch_id=watch_id)
    try:
        service.set_active(session=session, watch=watch, active=False, user=user)
    except FieldError as refused:
        return _refused(request, session, watch, refused.message, refused.status_code)
    return redirect(request, f"/watches/{watch.id}")


def _refused(request: Request, session, watch, message: str, status_code: int) -> Response:
    if is_htmx(request):  # htmx shows a refusal's text beside the button (app.js), not a whole page
        return PlainTextResponse(message, status_code=status_code)
    context = watch_context(session, watch) | {"silence_errors": {"__all__": message}}
    return render(request, "watches/watch.html", context, status_code=status_code)


@router.post("/watches/{watch_id}/start")
def start_watch(request: Request, session: SessionDep, user: OperatorUser, watch_id: int) -> Response:
    watch = service.get_watch(session=session, watch_id=watch_id)
    try:
        caps = QueueCaps.of(request.app.state.settings)
        service.set_active(session=session, watch=watch, active=True, caps=caps, user=user)
    except (LimitReached, FieldError) as refused:  # the owner's cap of active schedules; not the owner
        return _refused(request, session, watch, refused.message, refused.status_code)
    wake_local_worker(request.app)
    return redirect(request, f"/watches/{watch.id}")
