"""FastAPI dependencies of the logged-in user: CurrentUser (HTML, redirects to /login), ApiUser
(bearer token), and the role checks OperatorUser, AdminUser, ApiOperator, ApiAdmin."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import OAuth2PasswordBearer
from sqlalchemy.orm import Session

from redolab.auth.models import Role, User
from redolab.auth.service import session_user, user_for_api_token, user_for_bearer
from redolab.core.deps import SessionDep
from redolab.core.security import read_access_token

oauth2_scheme = OAuth2PasswordBearer(tokenUrl="/api/v1/auth/token", auto_error=False)


class LoginRequired(Exception):
    """Raised by HTML routes without a logged-in user; answered with a redirect to /login."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


def _session_user(request: Request, session: Session) -> User | None:
    """The user of the cookie's server-side session (None when it was ended or expired)."""
    key = request.session.get("sid")
    if not isinstance(key, str):
        return None
    settings = request.app.state.settings
    return session_user(
        session=session,
        key=key,
        idle_seconds=settings.session_idle_seconds,
        max_age_seconds=settings.session_max_age_seconds,
    )


def current_html_user(request: Request, session: SessionDep) -> User:
    """The user of the session cookie; HTML routes redirect to the login page without one."""
    user = _session_user(request, session)
    if user is None:
        raise LoginRequired(request.url.path)
    request.state.user = user
    request.state.username = user.username  # read by the audit log after the response
    return user


def current_api_user(
    request: Request,
    session: SessionDep,
    token: Annotated[str | None, Depends(oauth2_scheme)],
) -> User:
    """The user of the bearer token (or, for the browser, of the session cookie)."""
    user = None
    if token and token.startswith("rl_"):
        user = user_for_api_token(session=session, token=token)
    elif token:
        claims = read_access_token(token, secret_key=request.app.state.secret_key)
        # None also when disabled, or the password changed / sessions were ended since it was issued
        user = user_for_bearer(session=session, subject=claims[0], epoch=claims[1]) if claims else None
    elif "redolab_session" in request.cookies:
        user = _session_user(request, session)
    if user is None:
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="Not authenticated: send a bearer token from POST /api/v1/auth/token.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    request.state.user = user
    request.state.username = user.username  # read by the audit log after the response
    return user


current_api_user.error_statuses = (401,)  # type: ignore[attr-defined]  (read by core.openapi)

CurrentUser = Annotated[User, Depends(current_html_user)]


ApiUser = Annotated[User, Depends(current_api_user)]


def _forbidden(user: User, needed: Role) -> HTTPException:
    return HTTPException(
        status_code=status.HTTP_403_FORBIDDEN,
        detail=f"This needs the {needed.value} role; {user.username} is a {user.role.value}.",
    )


def _require(needed: Role, base):
    # A default-value Depends: with postponed annotations FastAPI could not see `base` in a hint.
    def check(user: User = Depends(base)) -> User:
        if not user.role.allows(needed):
            raise _forbidden(user, needed)
        return user

    check.error_statuses = (403,)  # type: ignore[attr-defined]  (read by core.openapi)
    return check


OperatorUser = Annotated[User, Depends(_require(Role.operator, current_html_user))]


AdminUser = Annotated[User, Depends(_require(Role.admin, current_html_user))]


ApiOperator = Annotated[User, Depends(_require(Role.operator, current_api_user))]


ApiAdmin = Annotated[User, Depends(_require(Role.admin, current_api_user))]
