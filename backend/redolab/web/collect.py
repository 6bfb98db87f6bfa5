"""The "Collect from the database" section of the environment page: the primary host's database access
(admin), the queries shown before anything runs, Collect (operator), the last collections with their
result, and the facts read beside the environment's values with Apply."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from redolab.auth.deps import AdminUser, OperatorUser, current_html_user
from redolab.collect import scripts, service
from redolab.collect.models import CollectionStatus
from redolab.core.deps import FormDep, SessionDep
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.environments.models import HostRole
from redolab.environments.schemas import DAILY_SECONDS, DatabaseAccessUpdate, EnvironmentUpdate
from redolab.environments.service import get_environment, set_database_access, update_environment
from redolab.jobs.queue import wake_local_worker

router = APIRouter(dependencies=[Depends(current_html_user)])

ACCESS_FIELDS = (
    "db_kind",
    "db_os_user",
    "oracle_home",
    "oracle_sid",
    "db_connect",
    "db_user",
    "db2_sqllib",
    "db2_database",
)
SCHEDULES = [
    ("", "Off"),
    (str(6 * 3600), "Every 6 hours"),
    (str(DAILY_SECONDS), "Daily"),
    (str(7 * DAILY_SECONDS), "Weekly"),
]
KINDS = [("", "Not set up"), ("oracle", "Oracle (SQL*Plus)"), ("db2", "Db2 (CLP, db2pd)")]


def shown_scripts(kind: str | None, licensed: bool) -> list[scripts.ShippedScript]:
    """The scripts a collection from this kind of database sends, in order (AWR only when licensed)."""
    if kind == "db2":
        names = list(scripts.DB2_SCRIPTS)
    else:
        names = ["oracle_session_csv", *(n for n in scripts.ORACLE_STEPS if n not in scripts.OPTIONAL_STEPS)]
        names += ["oracle_awr"] if licensed else []
    return [scripts.SCRIPTS[name] for name in names]


def collect_context(session, environment, upload_dir, *, values=None, errors=None) -> dict:
    primaries = [host for host in environment.hosts if host.role is HostRole.primary]
    host = next((h for h in primaries if h.db_kind), primaries[0] if primaries else None)
    collections = service.list_collections(session=session, environment=environment)
    staged = {
        c.id: service.staged_pieces(session=session, collection=c, upload_dir=upload_dir)
        for c in collections
        if c.staged
    }
    latest = next((c for c in collections if c.status is CollectionStatus.succeeded and c.facts), None)
    current = {field: getattr(host, field) or "" for field in ACCESS_FIELDS} if host else {}
    return {
        "collect_host": host,
        "collections": collections,
        "staged": staged,
        "collect_active": any(not c.status.finished for c in collections),
        "facts_collection": latest,
        "fact_changes": service.offered_changes(environment, latest) if latest else {},
        "collect_scripts": shown_scripts(host.db_kind if host else None, environment.diagnostics_pack_licensed),
        "access_values": values or current,
        "access_errors": errors or {},
        "access_kinds": KINDS,
        "collect_schedules": SCHEDULES,
        "collect_schedule": {"collect_every_seconds": str(environment.collect_every_seconds or "")},
    }


def _section(request, session, environment, *, status_code=200, **form) -> Response:
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment.id}#collect")
    context = {
        "environment": environment,
        **collect_context(session, environment, request.app.state.settings.upload_dir, **form),
    }
    return render(request, "environments/detail.html", context, block="collect", status_code=status_code)


@router.get("/environments/{environment_id}/collect")
def show_collect(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The section as a fragment; it polls itself only while a collection is queued or running."""
    return _section(request, session, get_environment(session=session, environment_id=environment_id))


@router.post("/environments/{environment_id}/collect")
def start_collection(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Collect now (operator role); with "Preview before importing" the rows wait for a preview; with
    "Measure compressibility" a few archived logs are compressed on the host too (Oracle)."""
    environment = get_environment(session=session, environment_id=environment_id)
    with form_errors(session) as errors:
        review = request.app.state.settings.upload_dir if form.get("review") == "on" else None
        service.queue_collection(
            session=session,
            environment=environment,
            requested_by=user.username,
            review_upload_dir=review,
            compressibility=form.get("compressibility") == "on",
        )
        wake_local_worker(request.app)
    status = 422 if errors else 200
    return _section(
        request,
        session,
        environment,
        status_code=status,
        errors={"__all__": " ".join(errors.values())} if errors else None,
    )


@router.post("/environments/{environment_id}/collect/access")
def save_database_access(
    request: Request, session: SessionDep, user: AdminUser, environment_id: int, form: FormDep
) -> Response:
    """The primary host's database access (admin role); a password field left empty keeps the stored one."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    host = next((h for h in environment.hosts if h.role is HostRole.primary), None)
    with form_errors(session) as errors:
        fields = {k: values.get(k) or None for k in ACCESS_FIELDS}
        access_in = DatabaseAccessUpdate(
            **fields, password=values.get("password") or None, clear_password=values.get("clear_password") == "on"
        )
        if host is None:
            errors["__all__"] = "Add a primary host first."
        else:
            set_database_access(
                session=session, host=host, access_in=access_in, secret_key=request.app.state.secret_key
            )
    values.pop("password", None)  # never sent back into the page
    return _section(
        request,
        session,
        environment,
        status_code=422 if errors else 200,
        values=values if errors else None,
        errors=errors or None,
    )


@router.post("/environments/{environment_id}/collect/settings")
def save_collect_settings(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """The Diagnostics Pack tick and the collection schedule."""
    environment = get_environment(session=session, environment_id=environment_id)
    values = form_data(form)
    every = values.get("collect_every_seconds") or None
    with form_errors(session) as errors:
        update_environment(
            session=session,
            environment=environment,
            env_in=EnvironmentUpdate(
                diagnostics_pack_licensed=values.get("diagnostics_pack_licensed") == "on", collect_every_seconds=every
            ),
        )
    return _section(request, session, environment, status_code=422 if errors else 200, errors=errors or None)


@router.post("/collections/{collection_id}/cancel")
def cancel_collection(request: Request, session: SessionDep, user: OperatorUser, collection_id: int) -> Response:
    collection = service.get_collection(session=session, collection_id=collection_id)
    service.cancel_collection(session=session, collection=collection)
    environment = get_environment(session=session, environment_id=collection.environment_id)
    return _section(request, session, environment)


@router.post("/collections/{collection_id}/apply-facts")
def apply_collection_facts(request: Request, session: SessionDep, user: OperatorUser, collection_id: int) -> Response:
    """Write the facts read into the environment (the user confirmed them beside the current values)."""
    collection = service.get_collection(session=session, collection_id=collection_id)
    with form_errors(session) as errors:
        service.apply_facts(session=session, collection=collection)
    environment = get_environment(session=session, environment_id=collection.environment_id)
    return _section(request, session, environment, status_code=409 if errors else 200, errors=errors or None)
