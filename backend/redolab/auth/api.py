"""API authentication: the OAuth2 password flow returns a bearer token."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.security import OAuth2PasswordRequestForm
from pydantic import BaseModel, SecretStr

from redolab.auth import service
from redolab.auth.models import Role, User
from redolab.auth.service import authenticate
from redolab.core.deps import ApiAdmin, ApiUser, SessionDep, SettingsDep
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


@public_router.post("/auth/token")
def create_token(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    form: Annotated[OAuth2PasswordRequestForm, Depends()],
) -> Token:
    """Exchange a user name and password for a bearer token."""
    user = authenticate(session=session, username=form.username, password=form.password)
    if user is None:
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="Wrong user name or password.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    token = create_access_token(
        subject=user.username,
        secret_key=request.app.state.secret_key,
        max_age_seconds=settings.token_max_age_seconds,
    )
    return Token(access_token=token, expires_in=settings.token_max_age_seconds)


@router.get("/users/me")
def read_current_user(user: ApiUser) -> UserPublic:
    """The user the request is authenticated as."""
    return UserPublic(id=user.id, username=user.username, role=user.role)


class TokenCreate(BaseModel):
    name: str


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
    return [UserWithRole(id=u.id, username=u.username, role=u.role) for u in service.list_users(session=session)]


@router.post("/users", status_code=status.HTTP_201_CREATED)
def create_user(session: SessionDep, admin: ApiAdmin, user_in: UserCreate) -> UserWithRole:
    """Add a user with a role (admin role)."""
    user = service.create_user(
        session=session,
        username=user_in.username,
        password=user_in.password.get_secret_value(),
        role=user_in.role,
    )
    return UserWithRole(id=user.id, username=user.username, role=user.role)


@router.put("/users/{user_id}/role")
def set_user_role(session: SessionDep, admin: ApiAdmin, user_id: int, role_in: UserRole) -> UserWithRole:
    """Change a user's role (admin role)."""
    user = session.get(User, user_id)
    if user is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"User {user_id} does not exist.")
    service.set_role(session=session, user=user, role=role_in.role)
    return UserWithRole(id=user.id, username=user.username, role=user.role)
