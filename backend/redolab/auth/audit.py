"""The audit log: who logged in (or failed to), and who changed what, when and from where.

Every request that changes something (POST, PUT, PATCH, DELETE) by a logged-in user is recorded by
`AuditMiddleware` after it is answered, named by its route (`delete_environment`, `create_run`,
...) with the path it acted on, the ids in that path in words ("environment #3, host #5") and its
outcome. Logins are recorded by the login routes, because their user is not known before. Request
bodies are never recorded, so the log holds no secrets.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import anyio
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from redolab.auth.models import AuditEvent

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# recorded by their routes, with the user name that was tried
SELF_RECORDED = frozenset({"/login", "/api/v1/auth/token", "/setup"})
MAX_LIMIT = 1000


# Audit writes run in one thread of their own: under a flood they queue here instead of taking the
# threads that serve pages and /healthz.
_WRITER = anyio.CapacityLimiter(1)


async def write_later(function, *args) -> None:
    await anyio.to_thread.run_sync(function, *args, limiter=_WRITER)


def client_address(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0])[:64] if client else None


def record(
    session: Session,
    *,
    action: str,
    username: str | None,
    client: str | None,
    target: str | None = None,
    outcome: str = "ok",
    status_code: int | None = None,
    detail: str | None = None,
) -> None:
    session.add(
        AuditEvent(
            username=(username or None) and username[:64],
            action=action[:64],
            target=target and target[:200],
            outcome=outcome,
            status_code=status_code,
            client_address=client,
            detail=detail and detail[:500],
        )
    )
    session.commit()


def outcome_of(status_code: int) -> str:
    if status_code < 400:
        return "ok"
    if status_code in (401, 403):
        return "refused"
    return "failed"


def described(method: str, path_params: dict) -> str:
    """What a change acted on, in words: "POST: environment #3, host #5" (the Target column holds the
    path; the route's template, "/environments/{environment_id}", says nothing a reader can use)."""
    named = [
        f"{name.removesuffix('_id').replace('_', ' ')} #{value}" if name.endswith("_id") else f"{name}: {value}"
        for name, value in path_params.items()
    ]
    return f"{method}: {', '.join(named)}" if named else method


class AuditMiddleware:
    """Records every answered change request of a logged-in user (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, sessions: sessionmaker) -> None:
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in UNSAFE_METHODS or scope["path"] in SELF_RECORDED:
            await self.app(scope, receive, send)
            return
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            username = scope.get("state", {}).get("username")
            route = scope.get("route")
            if username and route is not None:
                await write_later(self._write, scope, username, route, status)

    def _write(self, scope: Scope, username: str, route, status: int) -> None:
        with self.sessions() as session:
            record(
                session,
                action=getattr(route, "name", None) or "request",
                username=username,
                client=client_address(scope),
                target=scope["path"],
                outcome=outcome_of(status),
                status_code=status,
                detail=described(scope["method"], scope.get("path_params") or {}),
            )


@dataclass(frozen=True)
class AuditFilter:
    username: str | None = None
    action: str | None = None
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 200


def list_events(session: Session, selection: AuditFilter) -> list[AuditEvent]:
    """Newest first, filtered; at most `limit` (capped at 1,000) events."""
    query = select(AuditEvent)
    if selection.username:
        query = query.where(AuditEvent.username == selection.username)
    if selection.action:
        query = query.where(AuditEvent.action.contains(selection.action))
    if selection.outcome:
        query = query.where(AuditEvent.outcome == selection.outcome)
    if selection.since:
        query = query.where(AuditEvent.at >= selection.since)
    if selection.until:
        query = query.where(AuditEvent.at < selection.until)
    limit = max(1, min(selection.limit, MAX_LIMIT))
    return list(session.scalars(query.order_by(AuditEvent.id.desc()).limit(limit)))
