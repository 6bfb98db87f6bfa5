"""Login, logout and the one-time first-user setup (HTML)."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, status
from starlette.responses import Response

from redolab.auth.service import authenticate, count_users, create_user
from redolab.core.deps import SessionDep, current_html_user
from redolab.core.errors import FieldError
from redolab.core.responses import redirect, safe_next
from redolab.core.templating import render

public_router = APIRouter()
router = APIRouter(dependencies=[Depends(current_html_user)])


def _log_in(request: Request, user_id: int) -> None:
    request.session.clear()  # a fresh session at every login: no session fixation
    request.session["user_id"] = user_id


@public_router.get("/login")
def show_login(request: Request, session: SessionDep, next: str | None = None) -> Response:
    """The login page."""
    context = {"next": safe_next(next), "errors": {}, "no_users": count_users(session=session) == 0}
    return render(request, "auth/login.html", context)


@public_router.post("/login")
def log_in(
    request: Request,
    session: SessionDep,
    username: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "",
) -> Response:
    """Check the password and start a session."""
    user = authenticate(session=session, username=username.strip(), password=password)
    if user is None:
        context = {
            "next": safe_next(next),
            "username": username,
            "errors": {"password": "Wrong user name or password."},
            "no_users": False,
        }
        return render(
            request,
            "auth/login.html",
            context,
            block="form",
            status_code=status.HTTP_401_UNAUTHORIZED,
        )
    _log_in(request, user.id)
    return redirect(request, safe_next(next))


@router.post("/logout")
def log_out(request: Request) -> Response:
    """End the session."""
    request.session.clear()
    return redirect(request, "/login")


def _setup_token_ok(request: Request, session, token: str) -> bool:
    expected = getattr(request.app.state, "setup_token", None)
    return bool(expected and token) and secrets.compare_digest(expected, token) and count_users(session=session) == 0


@public_router.get("/setup")
def show_setup(request: Request, session: SessionDep, token: str = "") -> Response:
    """Create the first user, with the one-time link printed by `redolab serve`."""
    if not _setup_token_ok(request, session, token):
        return render(request, "auth/setup_closed.html", status_code=status.HTTP_404_NOT_FOUND)
    return render(request, "auth/setup.html", {"token": token, "errors": {}})


@public_router.post("/setup")
def complete_setup(
    request: Request,
    session: SessionDep,
    token: Annotated[str, Form()] = "",
    username: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    password_again: Annotated[str, Form()] = "",
) -> Response:
    """Create the first user and log them in; the link stops working afterwards."""
    if not _setup_token_ok(request, session, token):
        return render(request, "auth/setup_closed.html", status_code=status.HTTP_404_NOT_FOUND)
    errors: dict[str, str] = {}
    if password != password_again:
        errors["password_again"] = "The two passwords differ."  # noqa: S105
    else:
        try:
            user = create_user(session=session, username=username, password=password)
        except FieldError as error:
            errors[error.field] = error.message
    if errors:
        context = {"token": token, "username": username, "errors": errors}
        return render(request, "auth/setup.html", context, block="form", status_code=422)
    request.app.state.setup_token = None
    _log_in(request, user.id)
    return redirect(request, "/environments")
