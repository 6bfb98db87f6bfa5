"""Environment and host pages (HTML + htmx fragments)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from pydantic import ValidationError
from starlette.responses import Response

from redolab.core import units
from redolab.core.deps import SessionDep, current_html_user
from redolab.core.errors import FieldError
from redolab.core.forms import field_errors, form_data
from redolab.core.responses import redirect
from redolab.core.templating import render
from redolab.environments import service
from redolab.environments.models import (
    Environment,
    Host,
    HostRole,
    Platform,
    ProtectionMode,
    TransportMode,
)
from redolab.environments.schemas import (
    EnvironmentCreate,
    EnvironmentUpdate,
    HostCreate,
    HostUpdate,
)

router = APIRouter(dependencies=[Depends(current_html_user)])

UNPROCESSABLE = status.HTTP_422_UNPROCESSABLE_CONTENT

ENVIRONMENT_DEFAULTS = {
    "platform": Platform.dataguard.value,
    "protection_mode": ProtectionMode.max_performance.value,
    "transport_mode": "ASYNC",
    "primary_rac_nodes": "1",
    "standby_rac_nodes": "1",
    "headroom_percent": "30",
    "apply_overhead_percent": "30",
}
HOST_DEFAULTS = {"role": "primary", "node_number": "1", "ssh_port": "22", "ssh_user": "oracle"}


def _environment_form_values(environment: Environment) -> dict[str, str]:
    """Stored values as the user would type them (exact units, so saving changes nothing)."""
    return {
        "name": environment.name,
        "description": environment.description,
        "platform": environment.platform.value,
        "database_size_bytes": units.size_for_input(environment.database_size_bytes),
        "primary_rac_nodes": str(environment.primary_rac_nodes),
        "standby_rac_nodes": str(environment.standby_rac_nodes),
        "protection_mode": environment.protection_mode.value if environment.protection_mode else "",
        "transport_mode": environment.transport_mode.value,
        "instantiation_goal_seconds": units.duration_for_input(environment.instantiation_goal_seconds),
        "headroom_percent": f"{environment.headroom_percent:g}",
        "apply_overhead_percent": f"{environment.apply_overhead_percent:g}",
        "link_bandwidth_bits_per_second": units.bit_rate_for_input(environment.link_bandwidth_bits_per_second),
        "link_rtt_seconds": units.duration_for_input(environment.link_rtt_seconds),
        "notes": environment.notes,
    }


def _host_form_values(host: Host) -> dict[str, str]:
    return {
        "role": host.role.value,
        "node_number": str(host.node_number),
        "name": host.name,
        "ssh_address": host.ssh_address,
        "ssh_port": str(host.ssh_port),
        "ssh_user": host.ssh_user,
        "data_address": host.data_address or "",
        "data_interface": host.data_interface or "",
    }


def _environment_form(request, *, environment, values, errors, status_code=200) -> Response:
    context = {
        "environment": environment,
        "values": values,
        "errors": errors,
        "platform_options": [(platform.value, platform.label) for platform in Platform],
        "protection_options": [("", "— (Db2 HADR)")] + [(mode.value, mode.label) for mode in ProtectionMode],
        "transport_options": [(mode.value, mode.value) for mode in TransportMode],
    }
    return render(request, "environments/form.html", context, block="form", status_code=status_code)


def _load(session, environment_id: int) -> Environment:
    return service.get_environment(session=session, environment_id=environment_id)


@router.get("/")
def show_home(request: Request) -> Response:
    """The dashboard starts at the environments list."""
    return redirect(request, "/environments")


@router.get("/environments")
def list_environments(request: Request, session: SessionDep) -> Response:
    """All environments."""
    environments = service.list_environments(session=session)
    return render(request, "environments/list.html", {"environments": environments})


@router.get("/environments/new")
def new_environment(request: Request) -> Response:
    """The empty environment form."""
    return _environment_form(request, environment=None, values=ENVIRONMENT_DEFAULTS, errors={})


@router.post("/environments")
async def create_environment(request: Request, session: SessionDep) -> Response:
    """Create an environment from the form."""
    values = form_data(await request.form())
    try:
        environment = service.create_environment(session=session, env_in=EnvironmentCreate.model_validate(values))
    except ValidationError as error:
        errors = field_errors(error)
    except FieldError as error:
        errors = {error.field: error.message}
    else:
        return redirect(request, f"/environments/{environment.id}")
    return _environment_form(request, environment=None, values=values, errors=errors, status_code=UNPROCESSABLE)


@router.get("/environments/{environment_id}")
def show_environment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The environment hub: facts, hosts, and the sections later work fills in."""
    environment = _load(session, environment_id)
    return render(request, "environments/detail.html", _hosts_context(environment))


@router.get("/environments/{environment_id}/edit")
def edit_environment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The environment form, filled in."""
    environment = _load(session, environment_id)
    values = _environment_form_values(environment)
    return _environment_form(request, environment=environment, values=values, errors={})


@router.post("/environments/{environment_id}/edit")
async def update_environment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """Save the environment form (every field is submitted, so it is validated whole)."""
    environment = _load(session, environment_id)
    values = form_data(await request.form())
    try:
        service.update_environment(
            session=session,
            environment=environment,
            env_in=EnvironmentUpdate.model_validate(values),
        )
    except ValidationError as error:
        errors = field_errors(error)
    except FieldError as error:
        errors = {error.field: error.message}
    else:
        return redirect(request, f"/environments/{environment.id}")
    session.rollback()
    return _environment_form(request, environment=environment, values=values, errors=errors, status_code=UNPROCESSABLE)


@router.delete("/environments/{environment_id}")
def delete_environment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """Delete an environment and its hosts (the page asks for confirmation first)."""
    environment = _load(session, environment_id)
    service.delete_environment(session=session, environment=environment)
    return redirect(request, "/environments")


def _hosts_context(environment, *, editing=None, values=None, errors=None) -> dict:
    return {
        "environment": environment,
        "hosts": environment.hosts,
        "editing": editing,
        "values": values or (_host_form_values(editing) if editing else HOST_DEFAULTS),
        "errors": errors or {},
        "role_options": [(role.value, role.label) for role in HostRole],
    }


def _hosts_section(request, environment, status_code=200, **kwargs) -> Response:
    context = _hosts_context(environment, **kwargs)
    return render(request, "environments/detail.html", context, block="hosts", status_code=status_code)


@router.get("/environments/{environment_id}/hosts")
def show_hosts(request: Request, session: SessionDep, environment_id: int, edit: int | None = None) -> Response:
    """The hosts section; with ?edit=ID the form is filled with that host."""
    environment = _load(session, environment_id)
    editing = None
    if edit is not None:
        editing = service.get_host(session=session, environment=environment, host_id=edit)
    return _hosts_section(request, environment, editing=editing)


@router.post("/environments/{environment_id}/hosts")
async def create_host(request: Request, session: SessionDep, environment_id: int) -> Response:
    """Add a host from the inline form."""
    environment = _load(session, environment_id)
    values = form_data(await request.form())
    try:
        service.create_host(session=session, environment=environment, host_in=HostCreate.model_validate(values))
    except ValidationError as error:
        errors = field_errors(error)
    except FieldError as error:
        errors = {error.field: error.message}
    else:
        return _hosts_section(request, environment)
    return _hosts_section(request, environment, status_code=UNPROCESSABLE, values=values, errors=errors)


@router.put("/environments/{environment_id}/hosts/{host_id}")
async def update_host(request: Request, session: SessionDep, environment_id: int, host_id: int) -> Response:
    """Save the inline host form."""
    environment = _load(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    values = form_data(await request.form())
    try:
        service.update_host(session=session, host=host, host_in=HostUpdate.model_validate(values))
    except ValidationError as error:
        errors = field_errors(error)
    except FieldError as error:
        errors = {error.field: error.message}
    else:
        session.refresh(environment)
        return _hosts_section(request, environment)
    session.rollback()
    return _hosts_section(request, environment, status_code=UNPROCESSABLE, editing=host, values=values, errors=errors)


@router.delete("/environments/{environment_id}/hosts/{host_id}")
def delete_host(request: Request, session: SessionDep, environment_id: int, host_id: int) -> Response:
    """Remove a host."""
    environment = _load(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    service.delete_host(session=session, host=host)
    session.refresh(environment)
    return _hosts_section(request, environment)
