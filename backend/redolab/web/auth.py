"""Login, logout and the one-time first-user setup (HTML)."""

from __future__ import annotations

import re
import secrets
from typing import Annotated
from urllib.parse import quote, urlsplit, urlunsplit

import anyio
from fastapi import APIRouter, Depends, Form, Request, status
from starlette.responses import Response

from redolab.auth import audit, service
from redolab.auth.deps import AdminUser, current_html_user
from redolab.auth.guard import Throttled, check_login
from redolab.auth.models import Role, User
from redolab.auth.service import count_users, create_first_user
from redolab.core.deps import SessionDep
from redolab.core.errors import FieldError
from redolab.core.responses import redirect
from redolab.core.templating import render

public_router = APIRouter()
router = APIRouter(dependencies=[Depends(current_html_user)])


DEFAULT_NEXT = "/environments"
# C0 controls, DEL and the backslash: a browser drops tabs and newlines from a URL and reads a
# backslash as a slash, so "/<tab>/evil.example" or "/<backslash>evil.example" leaves the site
_URL_NOISE = re.compile(r"[\x00-\x1f\x7f\\]")
# what stays as it is in a path and query (RFC 3986); everything else is percent-encoded
_URL_SAFE = "/?&=%:@!$'()*+,;~-._"


def local_next(raw: str | None) -> str:
    """The page to go to after login, always one on this site: control characters and backslashes
    removed, then a path (and query) with no scheme and no host; anything else is the default."""
    cleaned = _URL_NOISE.sub("", raw or "")
    if not cleaned.startswith("/") or cleaned.startswith("//"):  # "//host" and "///host" name a host
        return DEFAULT_NEXT
    parts = urlsplit(cleaned)
    if parts.scheme or parts.netloc or not parts.path.startswith("/"):
        return DEFAULT_NEXT
    return quote(urlunsplit(("", "", parts.path, parts.query, "")), safe=_URL_SAFE)


def _log_in(request: Request, session, user: User) -> bool:
    """A fresh server-side session at every login (no session fixation); False when the user was
    disabled since the password was checked."""
    key = service.start_session(session=session, user=user, client_address=audit.client_address(request.scope))
    request.session.clear()
    if key is None:
        return False
    request.session["sid"] = key
    return True


@public_router.get("/login")
def show_login(request: Request, session: SessionDep, next: str | None = None) -> Response:
    """The login page."""
    context = {"next": local_next(next), "errors": {}, "no_users": count_users(session=session) == 0}
    return render(request, "auth/login.html", context)


@public_router.post("/login")
async def log_in(
    request: Request,
    session: SessionDep,
    username: Annotated[str, Form(max_length=1024)] = "",
    password: Annotated[str, Form(max_length=4096)] = "",
    next: Annotated[str, Form(max_length=2048)] = "",
) -> Response:
    """Check the password (throttled, in the bounded hashing pool) and start a session."""
    headers, code = {}, status.HTTP_401_UNAUTHORIZED
    try:
        user = await check_login(request, username, password)
        message = "Wrong user name or password."
    except Throttled as refused:
        user, message, code = None, refused.reason, refused.status_code
        headers = {"Retry-After": str(refused.retry_after)}
    if user is not None and not await anyio.to_thread.run_sync(_log_in, request, session, user):  # a write
        user, message, code = None, "This user is disabled.", status.HTTP_403_FORBIDDEN
    if user is None:
        context = {"next": local_next(next), "username": username, "errors": {"password": message}, "no_users": False}
        response = render(request, "auth/login.html", context, block="form", status_code=code)
        response.headers.update(headers)
        return response
    return redirect(request, local_next(next))


@router.post("/logout")
def log_out(request: Request, session: SessionDep) -> Response:
    """End the session on the server: a copy of the cookie stops working too."""
    key = request.session.get("sid")
    if isinstance(key, str):
        service.end_session(session=session, key=key)
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
            # None: a simultaneous request (of this process or another) made the first user
            user = create_first_user(session=session, username=username, password=password)
        except FieldError as error:
            errors[error.field] = error.message
    if errors:
        context = {"token": token, "username": username, "errors": errors}
        return render(request, "auth/setup.html", context, block="form", status_code=422)
    request.app.state.setup_token = None
    if user is None:
        return render(request, "auth/setup_closed.html", status_code=status.HTTP_404_NOT_FOUND)
    _log_in(request, session, user)
    return redirect(request, DEFAULT_NEXT)


def _account(request: Request, session, block: str | None = None, status_code: int = 200, **context) -> Response:
    user = request.state.user
    context = {
        "tokens": service.list_api_tokens(session=session, user=user),
        "sessions": service.live_sessions(session=session, user=user),
        "new_token": None,
        "ended": None,
        "errors": {},
        **context,
    }
    return render(request, "auth/account.html", context, block=block, status_code=status_code)


@router.get("/account")
def show_account(request: Request, session: SessionDep) -> Response:
    """Your password, your sessions and your API tokens."""
    return _account(request, session)


@router.post("/account/password")
def change_password(
    request: Request,
    session: SessionDep,
    current_password: Annotated[str, Form(max_length=4096)] = "",
    new_password: Annotated[str, Form(max_length=4096)] = "",
    new_password_again: Annotated[str, Form(max_length=4096)] = "",
) -> Response:
    """Change your password; every other session of yours and your bearer tokens end."""
    user, errors, ended = request.state.user, {}, None
    if new_password != new_password_again:
        errors["new_password_again"] = "The two new passwords differ."  # noqa: S105
    else:
        try:
            ended = service.change_password(
                session=session,
                user=user,
                current=current_password,
                new=new_password,
                keep_key=request.session.get("sid"),
            )
        except FieldError as error:
            errors[error.field] = error.message
    return _account(request, session, "password", 422 if errors else 200, errors=errors, ended=ended)


@router.post("/account/sessions/end")
def end_other_sessions(request: Request, session: SessionDep) -> Response:
    """Log out everywhere else."""
    user = request.state.user
    service.end_user_sessions(session=session, user=user, keep_key=request.session.get("sid"))
    return redirect(request, "/account")


@router.post("/account/tokens")
def create_token(request: Request, session: SessionDep, name: Annotated[str, Form(max_length=1000)] = "") -> Response:
    """Create an API token; its value is shown this once."""
    try:
        _row, token = service.create_api_token(session=session, user=request.state.user, name=name)
    except FieldError as error:
        return _account(request, session, "tokens", error.status_code, errors={error.field: error.message})
    return _account(request, session, "tokens", new_token=token)


@router.delete("/account/tokens/{token_id}")
def revoke_token(request: Request, session: SessionDep, token_id: int) -> Response:
    """Revoke one of your tokens."""
    service.revoke_api_token(session=session, user=request.state.user, token_id=token_id)
    return _account(request, session, "tokens")


def _users_page(request, session, status_code=200, **context) -> Response:
    context = {"users": service.list_users(session=session), "roles": list(Role), "errors": {}, "values": {}, **context}
    return render(request, "auth/users.html", context, block="users", status_code=status_code)


@router.get("/users")
def list_users(request: Request, session: SessionDep, admin: AdminUser) -> Response:
    """Users and their roles (admin)."""
    return _users_page(request, session)


@router.post("/users")
def create_user_view(
    request: Request,
    session: SessionDep,
    admin: AdminUser,
    username: Annotated[str, Form(max_length=1000)] = "",
    password: Annotated[str, Form(max_length=4096)] = "",
    role: Annotated[str, Form(max_length=20)] = "operator",
) -> Response:
    """Add a user with a role (admin)."""
    values = {"username": username, "role": role}
    try:
        service.create_user(session=session, username=username, password=password, role=Role(role))
    except ValueError:
        return _users_page(request, session, 422, values=values, errors={"role": "Choose viewer, operator or admin."})
    except FieldError as error:
        return _users_page(request, session, 422, values=values, errors={error.field: error.message})
    return _users_page(request, session, saved=f"Added {username.strip()} as {role}.")


@router.post("/users/{user_id}/role")
def change_role(
    request: Request, session: SessionDep, admin: AdminUser, user_id: int, role: Annotated[str, Form()] = ""
) -> Response:
    """Change a user's role (admin); the last active admin cannot be demoted."""
    target = service.get_user(session=session, user_id=user_id)
    if role not in {r.value for r in Role}:
        return _users_page(request, session, 422, errors={"user": "Choose viewer, operator or admin."})
    try:
        service.set_role(session=session, user=target, role=Role(role), by=admin)
    except FieldError as error:
        return _users_page(request, session, error.status_code, errors={"user": error.message})
    return _users_page(request, session, saved=f"Saved: {target.username} is now {role}.")


@router.post("/users/{user_id}/disable")
def disable_user(request: Request, session: SessionDep, admin: AdminUser, user_id: int) -> Response:
    """Disable a user: login is refused and every session and token of theirs stops working."""
    target = service.get_user(session=session, user_id=user_id)
    try:
        service.set_disabled(session=session, user=target, disabled=True, by=admin)
    except FieldError as error:
        return _users_page(request, session, error.status_code, errors={"user": error.message})
    return _users_page(request, session, saved=f"{target.username} is disabled: their sessions and tokens ended.")


@router.post("/users/{user_id}/enable")
def enable_user(request: Request, session: SessionDep, admin: AdminUser, user_id: int) -> Response:
    """Let a disabled user log in again."""
    target = service.get_user(session=session, user_id=user_id)
    try:
        service.set_disabled(session=session, user=target, disabled=False, by=admin)
    except FieldError as error:
        return _users_page(request, session, error.status_code, errors={"user": error.message})
    return _users_page(request, session, saved=f"{target.username} may log in again (with new tokens).")


@router.post("/users/{user_id}/sessions/end")
def end_user_sessions(request: Request, session: SessionDep, admin: AdminUser, user_id: int) -> Response:
    """End every session of a user and revoke their tokens."""
    target = service.get_user(session=session, user_id=user_id)
    keep = request.session.get("sid") if target.id == admin.id else None
    service.end_user_sessions(session=session, user=target, keep_key=keep, tokens=True)
    return _users_page(request, session)


@router.delete("/users/{user_id}")
def delete_user(request: Request, session: SessionDep, admin: AdminUser, user_id: int) -> Response:
    """Delete a user with their sessions and tokens."""
    target = service.get_user(session=session, user_id=user_id)
    try:
        service.delete_user(session=session, user=target, by=admin)
    except FieldError as error:
        return _users_page(request, session, error.status_code, errors={"user": error.message})
    return _users_page(request, session)


@router.get("/audit")
def show_audit(
    request: Request,
    session: SessionDep,
    admin: AdminUser,
    username: str = "",
    action: str = "",
    outcome: str = "",
) -> Response:
    """The audit log (admin): who logged in, and who changed what, newest first."""
    selection = audit.AuditFilter(username=username or None, action=action or None, outcome=outcome or None)
    events = audit.list_events(session, selection)
    context = {"events": events, "filters": {"username": username, "action": action, "outcome": outcome}}
    return render(request, "auth/audit.html", context)
