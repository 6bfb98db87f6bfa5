"""API authentication: the OAuth2 password flow returns a bearer token."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.security import OAuth2PasswordRequestForm
from pydantic import BaseModel

from redolab.auth.service import authenticate
from redolab.core.deps import ApiUser, SessionDep, SettingsDep
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
    return UserPublic(id=user.id, username=user.username)
