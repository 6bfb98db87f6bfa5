"""JSON API: environments and their hosts."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from redolab.auth.deps import ApiAdmin, ApiOperator, current_api_user
from redolab.core.deps import PageDep, SessionDep
from redolab.core.openapi import error_responses
from redolab.environments import credentials, service, trust
from redolab.environments.credentials import CredentialCreate, CredentialPublic
from redolab.environments.schemas import (
    DatabaseAccessUpdate,
    EnvironmentCreate,
    EnvironmentPublic,
    EnvironmentsPublic,
    EnvironmentUpdate,
    HostCreate,
    HostPublic,
    HostsPublic,
    HostUpdate,
)
from redolab.remote.transport import TransportError

router = APIRouter(prefix="/api/v1/environments", tags=["environments"], dependencies=[Depends(current_api_user)])


def _as_request_error(error: ValidationError) -> RequestValidationError:
    """A validation failure of merged data reads like one of the request body (422)."""
    return RequestValidationError([{**item, "loc": ("body", *item["loc"])} for item in error.errors(include_url=False)])


@router.get("")
def list_environments(
    session: SessionDep,
    page: PageDep,
) -> EnvironmentsPublic:
    """Environments by name, a page at a time; `count` is how many there are in all."""
    environments = service.list_environments(session=session, limit=page.limit, offset=page.offset)
    data = [EnvironmentPublic.model_validate(environment) for environment in environments]
    return EnvironmentsPublic(data=data, count=service.count_environments(session=session))


@router.post("", status_code=status.HTTP_201_CREATED)
def create_environment(session: SessionDep, user: ApiOperator, env_in: EnvironmentCreate) -> EnvironmentPublic:
    """Create an environment.

    Sizes, rates and durations are numbers in base units (bytes, bit/s, seconds) or text with
    units ("2 TiB", "10 Gbit/s", "25 ms").
    """
    environment = service.create_environment(session=session, env_in=env_in)
    return EnvironmentPublic.model_validate(environment).model_copy(update={"unit_readings": env_in.unit_readings})


@router.get("/{environment_id}")
def read_environment(session: SessionDep, environment_id: int) -> EnvironmentPublic:
    """One environment."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    return EnvironmentPublic.model_validate(environment)


@router.patch("/{environment_id}")
def update_environment(
    session: SessionDep, user: ApiOperator, environment_id: int, env_in: EnvironmentUpdate
) -> EnvironmentPublic:
    """Change some fields; the result is validated whole."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    try:
        service.update_environment(session=session, environment=environment, env_in=env_in)
    except ValidationError as error:
        raise _as_request_error(error) from None
    return EnvironmentPublic.model_validate(environment).model_copy(update={"unit_readings": env_in.unit_readings})


@router.delete("/{environment_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_environment(session: SessionDep, user: ApiOperator, environment_id: int) -> None:
    """Delete an environment and everything in it; one that holds SSH credentials or measured runs
    needs the admin role (403 names what it holds)."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    try:
        service.delete_environment(session=session, environment=environment, role=user.role)
    except PermissionError as error:
        raise HTTPException(status.HTTP_403_FORBIDDEN, str(error)) from None


@router.get("/{environment_id}/hosts")
def list_hosts(session: SessionDep, environment_id: int) -> HostsPublic:
    """The hosts of an environment, primaries first, by node number."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    data = [HostPublic.model_validate(host) for host in environment.hosts]
    return HostsPublic(data=data, count=len(data))


@router.post("/{environment_id}/hosts", status_code=status.HTTP_201_CREATED)
def create_host(session: SessionDep, user: ApiAdmin, environment_id: int, host_in: HostCreate) -> HostPublic:
    """Add a host."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    host = service.create_host(session=session, environment=environment, host_in=host_in)
    return HostPublic.model_validate(host)


@router.get("/{environment_id}/hosts/{host_id}")
def read_host(session: SessionDep, environment_id: int, host_id: int) -> HostPublic:
    """One host."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    return HostPublic.model_validate(host)


@router.patch("/{environment_id}/hosts/{host_id}")
def update_host(
    session: SessionDep, user: ApiAdmin, environment_id: int, host_id: int, host_in: HostUpdate
) -> HostPublic:
    """Change some fields of a host."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    try:
        service.update_host(session=session, host=host, host_in=host_in)
    except ValidationError as error:
        raise _as_request_error(error) from None
    return HostPublic.model_validate(host)


@router.put("/{environment_id}/hosts/{host_id}/database-access")
def set_database_access(
    request: Request,
    session: SessionDep,
    user: ApiAdmin,
    environment_id: int,
    host_id: int,
    access_in: DatabaseAccessUpdate,
) -> HostPublic:
    """How collections reach the primary's database (admin role, like credentials); the password is
    stored encrypted and never returned."""
    host = _host(session, environment_id, host_id)
    service.set_database_access(
        session=session, host=host, access_in=access_in, secret_key=request.app.state.secret_key
    )
    return HostPublic.model_validate(host)


@router.delete("/{environment_id}/hosts/{host_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_host(session: SessionDep, user: ApiAdmin, environment_id: int, host_id: int) -> None:
    """Remove a host."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    host = service.get_host(session=session, environment=environment, host_id=host_id)
    service.delete_host(session=session, host=host)


def _host(session, environment_id: int, host_id: int):
    environment = service.get_environment(session=session, environment_id=environment_id)
    return service.get_host(session=session, environment=environment, host_id=host_id)


@router.get("/{environment_id}/credentials")
def list_credentials(session: SessionDep, user: ApiAdmin, environment_id: int) -> list[CredentialPublic]:
    """The environment's SSH credentials, without their secrets (admin role)."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    return [credentials.public(c) for c in environment.credentials]


@router.post("/{environment_id}/credentials", status_code=status.HTTP_201_CREATED)
def create_credential(
    request: Request,
    session: SessionDep,
    user: ApiAdmin,
    environment_id: int,
    credential_in: CredentialCreate,
) -> CredentialPublic:
    """Add an SSH credential: an uploaded key (stored encrypted), a key file path, or the agent."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    credential = credentials.create_credential(
        session=session,
        environment=environment,
        credential_in=credential_in,
        secret_key=request.app.state.secret_key,
    )
    return credentials.public(credential)


@router.delete("/{environment_id}/credentials/{credential_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_credential(session: SessionDep, user: ApiAdmin, environment_id: int, credential_id: int) -> None:
    """Remove a credential; hosts using it are left without one."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    credential = credentials.get_credential(session=session, environment=environment, credential_id=credential_id)
    credentials.delete_credential(session=session, credential=credential)


@router.post("/{environment_id}/hosts/{host_id}/host-key/scan", responses=error_responses(409, 502, 503))
async def scan_host_key(
    request: Request, session: SessionDep, user: ApiAdmin, environment_id: int, host_id: int
) -> dict:
    """The SSH host key the host offers now (nothing is pinned yet)."""
    host = _host(session, environment_id, host_id)
    try:
        with request.app.state.host_checks.taken(user.id, host):
            return await trust.scan_host_key(host)
    except TransportError as error:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(error)) from None


class HostKeyAccept(BaseModel):
    fingerprint: str


@router.put("/{environment_id}/hosts/{host_id}/host-key", responses=error_responses(409, 502, 503))
async def accept_host_key(
    request: Request, session: SessionDep, user: ApiAdmin, environment_id: int, host_id: int, accept: HostKeyAccept
) -> HostPublic:
    """Pin the host key whose SHA256 fingerprint the user accepted (or pasted)."""
    host = _host(session, environment_id, host_id)
    try:
        with request.app.state.host_checks.taken(user.id, host):
            await trust.accept_host_key(session=session, host=host, fingerprint=accept.fingerprint)
    except TransportError as error:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(error)) from None
    return HostPublic.model_validate(host)


@router.delete("/{environment_id}/hosts/{host_id}/host-key")
def forget_host_key(session: SessionDep, user: ApiAdmin, environment_id: int, host_id: int) -> HostPublic:
    """Unpin the host key (the host must be verified again before anything runs there)."""
    host = _host(session, environment_id, host_id)
    return HostPublic.model_validate(trust.forget_host_key(session=session, host=host))


@router.post("/{environment_id}/hosts/{host_id}/test", responses=error_responses(409, 503))
async def test_connection(
    request: Request, session: SessionDep, user: ApiOperator, environment_id: int, host_id: int
) -> dict:
    """Reachable, authenticated, uname, architecture, probe present and current, MTU, buffers."""
    host = _host(session, environment_id, host_id)
    with request.app.state.host_checks.taken(user.id, host):
        return await trust.test_connection(host, secret_key=request.app.state.secret_key)
