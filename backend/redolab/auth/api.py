"""API authentication: the OAuth2 password flow returns a bearer token."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status
from fastapi.security import OAuth2PasswordRequestForm
from pydantic import BaseModel, SecretStr

from redolab.auth import audit, service
from redolab.auth.deps import ApiAdmin, ApiUser
from redolab.auth.guard import Throttled, check_login
from redolab.auth.models import Role, User
from redolab.core.deps import SessionDep, SettingsDep
from redolab.core.errors import FieldError
from redolab.core.openapi import error_responses
from redolab.core.schema_rules import PRINTABLE_LINE, TextPattern
from redolab.core.security import create_access_token

public_router = APIRouter(prefix="/api/v1", tags=["auth"])
router = APIRouter(prefix="/api/v1", tags=["auth"])


class Token(BaseModel):
    access_token: str
    token_type: str = "bearer"  # noqa: S105
    expires_in: int


class UserPublic(BaseModel):
    id: int
    username: str
    role: Role
    active: bool = True
    disabled_at: datetime | None = None


def _public(user: User) -> UserPublic:
    return UserPublic(
        id=user.id, username=user.username, role=user.role, active=user.active, disabled_at=user.disabled_at
    )


@public_router.post("/auth/token", responses=error_responses(401, 429))
async def create_token(
    request: Request,
    settings: SettingsDep,
    form: Annotated[OAuth2PasswordRequestForm, Depends()],
) -> Token:
    """Exchange a user name and password for a bearer token (throttled like the login page: 429
    with Retry-After after repeated failures)."""
    try:
        user = await check_login(request, form.username, form.password, action="token")
    except Throttled as refused:
        raise HTTPException(
            refused.status_code, refused.reason, headers={"Retry-After": str(refused.retry_after)}
        ) from None
    if user is None:
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="Wrong user name or password.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    token = create_access_token(
        subject=user.bearer_subject,  # the id and a random value: never a later user's
        secret_key=request.app.state.secret_key,
        max_age_seconds=settings.token_max_age_seconds,
        epoch=user.auth_epoch,
    )
    return Token(access_token=token, expires_in=settings.token_max_age_seconds)


@router.get("/users/me")
def read_current_user(user: ApiUser) -> UserPublic:
    """The user the request is authenticated as."""
    return _public(user)


class PasswordChange(BaseModel):
    current_password: SecretStr
    new_password: SecretStr


class SessionsEnded(BaseModel):
    sessions_ended: int


@router.put("/users/me/password")
def change_my_password(session: SessionDep, user: ApiUser, change: PasswordChange) -> SessionsEnded:
    """Change your password: every browser session and bearer token of yours ends (API tokens keep
    working; revoke them under /tokens)."""
    ended = service.change_password(
        session=session,
        user=user,
        current=change.current_password.get_secret_value(),
        new=change.new_password.get_secret_value(),
    )
    return SessionsEnded(sessions_ended=ended)


class TokenCreate(BaseModel):
    # 1 to 100 printable characters on one line, spaces at the ends aside (the service checks)
    name: Annotated[str, TextPattern(PRINTABLE_LINE, max_length=100)]


class ApiTokenPublic(BaseModel):
    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class ApiTokenCreated(ApiTokenPublic):
    token: str  # shown once, never again


class UserCreate(BaseModel):
    username: str
    password: SecretStr
    role: Role = Role.operator


class UserRole(BaseModel):
    role: Role


UserWithRole = UserPublic


@router.get("/tokens")
def list_tokens(session: SessionDep, user: ApiUser) -> list[ApiTokenPublic]:
    """Your API tokens (their values are never shown again)."""
    return [
        ApiTokenPublic.model_validate(t, from_attributes=True)
        for t in service.list_api_tokens(session=session, user=user)
    ]


@router.post("/tokens", status_code=status.HTTP_201_CREATED)
def create_token_for_automation(session: SessionDep, user: ApiUser, token_in: TokenCreate) -> ApiTokenCreated:
    """A long-lived token for scripts; the response is the only time it is shown."""
    row, token = service.create_api_token(session=session, user=user, name=token_in.name)
    return ApiTokenCreated(**ApiTokenPublic.model_validate(row, from_attributes=True).model_dump(), token=token)


@router.delete("/tokens/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(session: SessionDep, user: ApiUser, token_id: int) -> None:
    """Revoke one of your tokens; it stops working at once."""
    if service.revoke_api_token(session=session, user=user, token_id=token_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Token {token_id} is not one of yours.")


@router.get("/users")
def list_users(session: SessionDep, admin: ApiAdmin) -> list[UserWithRole]:
    """All users and their roles (admin role)."""
    return [_public(u) for u in service.list_users(session=session)]


@router.post("/users", status_code=status.HTTP_201_CREATED)
def create_user(session: SessionDep, admin: ApiAdmin, user_in: UserCreate) -> UserWithRole:
    """Add a user with a role (admin role)."""
    user = service.create_user(
        session=session,
        username=user_in.username,
        password=user_in.password.get_secret_value(),
        role=user_in.role,
    )
    return _public(user)


def _conflict(error: FieldError) -> HTTPException:
    """409 (or 403 when the acting admin was demoted or disabled a moment ago)."""
    return HTTPException(error.status_code, error.message)


@router.put("/users/{user_id}/role")
def set_user_role(session: SessionDep, admin: ApiAdmin, user_id: int, role_in: UserRole) -> UserWithRole:
    """Change a user's role (admin role); the last active admin cannot be demoted (409)."""
    user = service.get_user(session=session, user_id=user_id)
    try:
        service.set_role(session=session, user=user, role=role_in.role, by=admin)
    except FieldError as error:
        raise _conflict(error) from None
    return _public(user)


@router.post("/users/{user_id}/disable")
def disable_user(session: SessionDep, admin: ApiAdmin, user_id: int) -> UserWithRole:
    """Disable a user: login is refused and their sessions and tokens stop working (admin role)."""
    user = service.get_user(session=session, user_id=user_id)
    try:
        service.set_disabled(session=session, user=user, disabled=True, by=admin)
    except FieldError as error:
        raise _conflict(error) from None
    return _public(user)


@router.post("/users/{user_id}/enable")
def enable_user(session: SessionDep, admin: ApiAdmin, user_id: int) -> UserWithRole:
    """Let a disabled user log in again (admin role)."""
    user = service.get_user(session=session, user_id=user_id)
    try:
        service.set_disabled(session=session, user=user, disabled=False, by=admin)
    except FieldError as error:
        raise _conflict(error) from None
    return _public(user)


@router.delete("/users/{user_id}/sessions")
def end_user_sessions(session: SessionDep, admin: ApiAdmin, user_id: int) -> SessionsEnded:
    """End every browser session of a user and revoke all their bearer and API tokens (admin role)."""
    user = service.get_user(session=session, user_id=user_id)
    ended = service.end_user_sessions(session=session, user=user, tokens=True)
    return SessionsEnded(sessions_ended=ended)


@router.delete("/users/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_user(session: SessionDep, admin: ApiAdmin, user_id: int) -> None:
    """Delete a user with their sessions and tokens (admin role; not yourself, not the last admin)."""
    user = service.get_user(session=session, user_id=user_id)
    try:
        service.delete_user(session=session, user=user, by=admin)
    except FieldError as error:
        raise _conflict(error) from None


class AuditEventPublic(BaseModel):
    id: int
    at: datetime
    username: str | None
    action: str
    target: str | None
    outcome: str
    status_code: int | None
    client_address: str | None
    detail: str | None


@router.get("/audit")
def read_audit_log(
    session: SessionDep,
    admin: ApiAdmin,
    username: str | None = None,
    action: str | None = None,
    outcome: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: Annotated[int, Query(ge=1, le=audit.MAX_LIMIT)] = 200,
) -> list[AuditEventPublic]:
    """The audit log, newest first (admin role): filter by user, action (substring), outcome
    (ok, failed, refused, throttled) and time."""
    selection = audit.AuditFilter(username, action, outcome, since, until, limit)
    return [AuditEventPublic.model_validate(e, from_attributes=True) for e in audit.list_events(session, selection)]
