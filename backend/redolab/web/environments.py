"""Environment and host pages (HTML + htmx fragments)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, status
from starlette.responses import Response

from redolab.auth.deps import AdminUser, OperatorUser, current_html_user
from redolab.core import units
from redolab.core.deps import FormDep, SessionDep
from redolab.core.errors import FieldError
from redolab.core.fields import unit_readings_of
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.environments import credentials as credential_service
from redolab.environments import crypto, service, trust
from redolab.environments.credentials import CredentialCreate
from redolab.environments.models import (
    TRANSPORT_MODES,
    CredentialKind,
    Environment,
    Host,
    HostRole,
    HostTransport,
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
from redolab.planning.card import show_time
from redolab.planning.encryption import HostCeiling
from redolab.planning.host_facts import message_bytes_for
from redolab.remote.transport import TransportError

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
    "link_reserved_percent": "0",
    "time_zone": "UTC",
}
HOST_DEFAULTS = {"role": "primary", "node_number": "1", "ssh_port": "22", "ssh_user": "oracle", "transport": "ssh"}


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
        "rpo_goal_seconds": units.duration_for_input(environment.rpo_goal_seconds),
        "rto_goal_seconds": units.duration_for_input(environment.rto_goal_seconds),
        "database_release": environment.database_release,
        "apply_rate_bytes_per_second": units.byte_rate_for_input(environment.apply_rate_bytes_per_second),
        "fast_start_failover": "true" if environment.fast_start_failover else "false",
        "advanced_compression_licensed": "true" if environment.advanced_compression_licensed else "false",
        "copy_channels_per_node": _count(environment.copy_channels_per_node),
        "copy_nodes": _count(environment.copy_nodes),
        "copy_section_bytes": units.size_for_input(environment.copy_section_bytes),
        "archive_free_bytes": units.size_for_input(environment.archive_free_bytes),
        "headroom_percent": f"{environment.headroom_percent:g}",
        "apply_overhead_percent": f"{environment.apply_overhead_percent:g}",
        "link_reserved_percent": f"{environment.link_reserved_percent:g}",
        "link_bandwidth_bits_per_second": units.bit_rate_for_input(environment.link_bandwidth_bits_per_second),
        "link_rtt_seconds": units.duration_for_input(environment.link_rtt_seconds),
        "time_zone": environment.time_zone or "UTC",
        "notes": environment.notes,
    }


def _count(value: int | None) -> str:
    return "" if value is None else str(value)


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
        "transport": host.transport.value,
        "credential_id": str(host.credential_id or ""),
        "allow_kernel_changes": host.allow_kernel_changes,
    }


def _environment_form(request, *, environment, values, errors, status_code=200, saved=None) -> Response:
    context = {
        "environment": environment,
        "values": values,
        "errors": errors,
        "readings": unit_readings_of(EnvironmentCreate, values),  # how "1 GB/s" or "20 GB" was read
        "saved": saved,  # saved with such a reading: the form says so instead of leaving at once
        "platform_options": [(platform.value, platform.label) for platform in Platform],
        "protection_options": [("", "— (Db2 HADR)")] + [(mode.value, mode.label) for mode in ProtectionMode],
        "transport_options": _transport_options(environment),
        "yes_no": [("false", "No"), ("true", "Yes")],
    }
    return render(request, "environments/form.html", context, block="form", status_code=status_code)


def _transport_options(environment: Environment | None) -> list[tuple[str, ...]]:
    """An environment's own platform's modes; a new one's all, each with the platforms that have it
    (app.js offers only the chosen platform's: no NEARSYNC for Data Guard)."""
    if environment is not None:
        return [(mode.value, mode.value) for mode in TRANSPORT_MODES[environment.platform]]
    options = []
    for mode in TransportMode:
        owners = [platform for platform in Platform if mode in TRANSPORT_MODES[platform]]
        label = mode.value if len(owners) > 1 else f"{mode.value} ({owners[0].label} only)"
        options.append((mode.value, label, " ".join(platform.value for platform in owners)))
    return options


def load_environment(session, environment_id: int) -> Environment:
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
def create_environment(request: Request, session: SessionDep, user: OperatorUser, form: FormDep) -> Response:
    """Create an environment from the form."""
    values = form_data(form)
    with form_errors() as errors:
        env_in = EnvironmentCreate.model_validate(values)
        environment = service.create_environment(session=session, env_in=env_in)
    if not errors and env_in.unit_readings:
        return _environment_form(request, environment=environment, values=values, errors={}, saved=environment)
    if not errors:
        return redirect(request, f"/environments/{environment.id}")
    return _environment_form(request, environment=None, values=values, errors=errors, status_code=UNPROCESSABLE)


@router.get("/environments/{environment_id}/edit")
def edit_environment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The environment form, filled in."""
    environment = load_environment(session, environment_id)
    values = _environment_form_values(environment)
    return _environment_form(request, environment=environment, values=values, errors={})


@router.post("/environments/{environment_id}/edit")
def update_environment(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Save the environment form (every field is submitted, so it is validated whole)."""
    environment = load_environment(session, environment_id)
    values = form_data(form)
    with form_errors() as errors:
        env_in = EnvironmentUpdate.model_validate(values)
        service.update_environment(session=session, environment=environment, env_in=env_in)
    if not errors and env_in.unit_readings:
        return _environment_form(request, environment=environment, values=values, errors={}, saved=environment)
    if not errors:
        return redirect(request, f"/environments/{environment.id}")
    session.rollback()
    return _environment_form(request, environment=environment, values=values, errors=errors, status_code=UNPROCESSABLE)


def _delete_page(request, session, environment, status_code: int = 200, error: str | None = None) -> Response:
    held = service.contents(session=session, environment=environment)
    context = {"environment": environment, "held": held, "error": error}
    return render(request, "environments/delete.html", context, block="confirm", status_code=status_code)


@router.get("/environments/{environment_id}/delete")
def confirm_delete_environment(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int
) -> Response:
    """What deleting the environment takes with it, and a box to type its name."""
    return _delete_page(request, session, load_environment(session, environment_id))


@router.post("/environments/{environment_id}/delete")
def delete_environment(
    request: Request,
    session: SessionDep,
    user: OperatorUser,
    environment_id: int,
    confirm: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """Delete the environment once its name is typed; one holding credentials or runs needs admin."""
    environment = load_environment(session, environment_id)
    try:
        service.delete_environment(session=session, environment=environment, role=user.role, confirm=confirm)
    except PermissionError as error:
        return _delete_page(request, session, environment, status.HTTP_403_FORBIDDEN, str(error))
    except FieldError as error:
        return _delete_page(request, session, environment, UNPROCESSABLE, error.message)
    return redirect(request, "/environments")


def hosts_context(environment, *, editing=None, values=None, errors=None) -> dict:
    values = values or (_host_form_values(editing) if editing else HOST_DEFAULTS)
    # The first destination is the empty choice: what a standby defaults to, and what a primary
    # (which belongs to none) submits unless another is chosen.
    first_id = environment.destinations[0].id if environment.destinations else None
    if "destination_id" not in values:
        chosen = editing.destination_id if editing else None
        values = {**values, "destination_id": "" if chosen in (None, first_id) else str(chosen)}
    return {
        "environment": environment,
        "hosts": environment.hosts,
        "editing": editing,
        "values": values,
        "errors": errors or {},
        "role_options": [(role.value, role.label) for role in HostRole],
        "transport_options": [(t.value, t.label) for t in HostTransport],
        "credential_options": [("", "— none —")] + [(str(c.id), c.name) for c in environment.credentials],
        "destination_options": [("" if d.id == first_id else str(d.id), d.name) for d in environment.destinations],
        "several_destinations": len(environment.destinations) > 1,  # the hosts table names each standby's
    }


def credentials_context(values=None, errors=None) -> dict:
    return {
        "credential_values": values or {"kind": CredentialKind.uploaded_key.value},
        "credential_errors": errors or {},
        "credential_kinds": [(k.value, k.label) for k in CredentialKind],
    }


def _hosts_section(request, environment, status_code=200, changed=False, **kwargs) -> Response:
    context = hosts_context(environment, **kwargs)
    response = render(request, "environments/detail.html", context, block="hosts", status_code=status_code)
    if changed:  # the experiments form lists the hosts: it refreshes itself on this event
        response.headers["HX-Trigger"] = "hosts-changed"
    return response


@router.get("/environments/{environment_id}/hosts")
def show_hosts(request: Request, session: SessionDep, environment_id: int, edit: int | None = None) -> Response:
    """The hosts section; with ?edit=ID the form is filled with that host. A plain browser request
    goes to the section on the whole page."""
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment_id}#hosts")
    environment = load_environment(session, environment_id)
    editing = None
    if edit is not None:
        editing = service.get_host(session=session, environment=environment, host_id=edit)
    return _hosts_section(request, environment, editing=editing)


@router.post("/environments/{environment_id}/hosts")
def create_host(request: Request, session: SessionDep, user: AdminUser, environment_id: int, form: FormDep) -> Response:
    """Add a host from the inline form."""
    environment = load_environment(session, environment_id)
    values = form_data(form)
    values["allow_kernel_changes"] = "allow_kernel_changes" in values
    with form_errors() as errors:
        service.create_host(session=session, environment=environment, host_in=HostCreate.model_validate(values))
    if not errors:
        session.refresh(environment)
        return _hosts_section(request, environment, changed=True)
    return _hosts_section(request, environment, status_code=UNPROCESSABLE, values=values, errors=errors)


@router.put("/environments/{environment_id}/hosts/{host_id}")
def update_host(
    request: Request, session: SessionDep, user: AdminUser, environment_id: int, host_id: int, form: FormDep
) -> Response:
    """Save the inline host form (admins: it also grants or withdraws kernel changes)."""
    environment = load_environment(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    values = form_data(form)
    values["allow_kernel_changes"] = "allow_kernel_changes" in values
    with form_errors() as errors:
        service.update_host(session=session, host=host, host_in=HostUpdate.model_validate(values))
    if not errors:
        session.refresh(environment)
        return _hosts_section(request, environment, changed=True)
    session.rollback()
    return _hosts_section(request, environment, status_code=UNPROCESSABLE, editing=host, values=values, errors=errors)


@router.delete("/environments/{environment_id}/hosts/{host_id}")
def delete_host(request: Request, session: SessionDep, user: AdminUser, environment_id: int, host_id: int) -> Response:
    """Remove a host."""
    environment = load_environment(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    service.delete_host(session=session, host=host)
    session.refresh(environment)
    return _hosts_section(request, environment, changed=True)


def _panel(request, host, **context) -> Response:
    return render(request, "environments/_host_panel.html", {"host": host, **context})


@router.post("/environments/{environment_id}/hosts/{host_id}/verify")
async def verify_host(request: Request, session: SessionDep, user: AdminUser, environment_id: int, host_id: int):
    """Show the host key the host offers now, to accept (nothing is pinned yet)."""
    environment = load_environment(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    try:
        with request.app.state.host_checks.taken(user.id, host):
            scan = await trust.scan_host_key(host)
    except TransportError as error:
        return _panel(request, host, error=str(error))
    return _panel(request, host, scan=scan, environment=environment)


@router.post("/environments/{environment_id}/hosts/{host_id}/host-key")
async def accept_host_key(request: Request, session: SessionDep, user: AdminUser, environment_id: int, host_id: int):
    """Pin the key whose fingerprint the user accepted or pasted."""
    environment = load_environment(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    fingerprint = form_data(await request.form()).get("fingerprint", "")
    try:
        with request.app.state.host_checks.taken(user.id, host):
            await trust.accept_host_key(session=session, host=host, fingerprint=fingerprint)
    except (FieldError, TransportError) as error:
        message = error.message if isinstance(error, FieldError) else str(error)
        return _panel(request, host, error=message, environment=environment)
    session.refresh(environment)
    response = _hosts_section(request, environment, changed=True)  # the first steps tick "verify keys"
    response.headers["HX-Retarget"] = "#hosts"
    response.headers["HX-Reswap"] = "outerHTML"
    return response


@router.post("/environments/{environment_id}/hosts/{host_id}/test")
async def test_host(request: Request, session: SessionDep, user: OperatorUser, environment_id: int, host_id: int):
    """Test connection: reachable, authenticated, system, probe, MTU, kernel buffers."""
    environment = load_environment(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    with request.app.state.host_checks.taken(user.id, host):
        report = await trust.test_connection(host, secret_key=request.app.state.secret_key)
    return _panel(request, host, report=report)


@router.post("/environments/{environment_id}/hosts/{host_id}/crypto-speed")
async def measure_host_crypto(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, host_id: int
) -> Response:
    """Measure encryption: openssl speed on the host (about 2 s of one core), kept for the transport card."""
    environment = load_environment(session, environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    message_bytes, why = message_bytes_for(environment)
    try:
        with request.app.state.host_checks.taken(user.id, host):
            speed = await crypto.measure_host_crypto(
                session=session, host=host, secret_key=request.app.state.secret_key, message_bytes=message_bytes
            )
    except TransportError as error:
        return _panel(request, host, error=str(error))
    measured = show_time(host.crypto_measured_at, environment.time_zone or "UTC")
    return _panel(request, host, crypto=HostCeiling(host.name, speed, measured), crypto_why=why)


def _credentials_section(request, environment, status_code=200, **kwargs) -> Response:
    context = {"environment": environment, **credentials_context(**kwargs)}
    return render(request, "environments/detail.html", context, block="credentials", status_code=status_code)


@router.post("/environments/{environment_id}/credentials")
def create_credential(request: Request, session: SessionDep, user: AdminUser, environment_id: int, form: FormDep):
    """Add an SSH credential; an uploaded key is encrypted and never shown again."""
    environment = load_environment(session, environment_id)
    values = form_data(form)
    upload = form.get("private_key_file")
    if upload is not None and hasattr(upload, "read"):
        content = upload.file.read().decode(errors="replace")
        if content.strip():
            values["private_key"] = content
    with form_errors() as errors:
        credential_in = CredentialCreate.model_validate(
            {
                "name": values.get("name", ""),
                "kind": values.get("kind", ""),
                "private_key": values.get("private_key") or None,
                "passphrase": values.get("passphrase") or None,
                "key_path": values.get("key_path") or None,
            }
        )
        credential_service.create_credential(
            session=session,
            environment=environment,
            credential_in=credential_in,
            secret_key=request.app.state.secret_key,
        )
    if not errors:
        session.refresh(environment)
        return _credentials_section(request, environment)
    kept = {"name": values.get("name", ""), "kind": values.get("kind", ""), "key_path": values.get("key_path", "")}
    return _credentials_section(request, environment, status_code=UNPROCESSABLE, values=kept, errors=errors)


@router.delete("/environments/{environment_id}/credentials/{credential_id}")
def delete_credential(request: Request, session: SessionDep, user: AdminUser, environment_id: int, credential_id: int):
    """Remove a credential; hosts that used it have none until another is assigned."""
    environment = load_environment(session, environment_id)
    credential = credential_service.get_credential(
        session=session, environment=environment, credential_id=credential_id
    )
    credential_service.delete_credential(session=session, credential=credential)
    session.refresh(environment)
    return _credentials_section(request, environment)
