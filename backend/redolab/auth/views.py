"""Login, logout and the one-time first-user setup (HTML)."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, status
from starlette.responses import Response

from redolab.auth import service
from redolab.auth.models import Role
from redolab.auth.service import authenticate, count_users, create_user
from redolab.core.deps import AdminUser, SessionDep, current_html_user
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
            user = create_user(session=session, username=username, password=password, role=Role.admin)
        except FieldError as error:
            errors[error.field] = error.message
    if errors:
        context = {"token": token, "username": username, "errors": errors}
        return render(request, "auth/setup.html", context, block="form", status_code=422)
    request.app.state.setup_token = None
    _log_in(request, user.id)
    return redirect(request, "/environments")


@router.get("/account")
def show_account(request: Request, session: SessionDep) -> Response:
    """Your API tokens."""
    tokens = service.list_api_tokens(session=session, user=request.state.user)
    return render(request, "auth/account.html", {"tokens": tokens, "new_token": None, "errors": {}})


@router.post("/account/tokens")
async def create_token(request: Request, session: SessionDep) -> Response:
    """Create an API token; its value is shown this once."""
    name = (await request.form()).get("name", "")
    user = request.state.user
    try:
        _row, token = service.create_api_token(session=session, user=user, name=str(name))
    except FieldError as error:
        tokens = service.list_api_tokens(session=session, user=user)
        context = {"tokens": tokens, "new_token": None, "errors": {error.field: error.message}}
        return render(request, "auth/account.html", context, block="tokens", status_code=422)
    tokens = service.list_api_tokens(session=session, user=user)
    return render(request, "auth/account.html", {"tokens": tokens, "new_token": token, "errors": {}}, block="tokens")


@router.delete("/account/tokens/{token_id}")
def revoke_token(request: Request, session: SessionDep, token_id: int) -> Response:
    """Revoke one of your tokens."""
    user = request.state.user
    service.revoke_api_token(session=session, user=user, token_id=token_id)
    tokens = service.list_api_tokens(session=session, user=user)
    return render(request, "auth/account.html", {"tokens": tokens, "new_token": None, "errors": {}}, block="tokens")


def _users_page(request, session, status_code=200, **context) -> Response:
    context = {"users": service.list_users(session=session), "roles": list(Role), "errors": {}, "values": {}, **context}
    return render(request, "auth/users.html", context, block="users", status_code=status_code)


@router.get("/users")
def list_users(request: Request, session: SessionDep, admin: AdminUser) -> Response:
    """Users and their roles (admin)."""
    return _users_page(request, session)


@router.post("/users")
async def create_user_view(request: Request, session: SessionDep, admin: AdminUser) -> Response:
    """Add a user with a role (admin)."""
    form = await request.form()
    values = {"username": str(form.get("username", "")), "role": str(form.get("role", "operator"))}
    try:
        role = Role(values["role"])
        service.create_user(
            session=session, username=values["username"], password=str(form.get("password", "")), role=role
        )
    except ValueError:
        return _users_page(request, session, 422, values=values, errors={"role": "Choose viewer, operator or admin."})
    except FieldError as error:
        return _users_page(request, session, 422, values=values, errors={error.field: error.message})
    return _users_page(request, session)


@router.post("/users/{user_id}/role")
async def change_role(request: Request, session: SessionDep, admin: AdminUser, user_id: int) -> Response:
    """Change a user's role (admin); an admin cannot demote themselves (someone must stay admin)."""
    from redolab.auth.models import User

    target = session.get(User, user_id)
    role = str((await request.form()).get("role", ""))
    if target is not None and role in {r.value for r in Role} and target.id != admin.id:
        service.set_role(session=session, user=target, role=Role(role))
    return _users_page(request, session)
