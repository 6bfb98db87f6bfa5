"""ASGI middleware that guards every request before any route, session or user is looked at:
the body-size limit, the free-space floor for uploads, ids beyond the database's integers, the login
form's same-origin check, and the security headers."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import anyio
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from redolab.core.db import MAX_ROW_ID
from redolab.core.units import MIB, format_bytes

SMALL_BODY_BYTES = 1 * MIB  # forms and JSON: a private key, a sweep, a mapping

# Content-Security-Policy: redolab's own scripts only (htmx, plotly, app.js; no inline script, no
# eval); plotly and htmx insert <style> elements, hence 'unsafe-inline' for styles only.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int, path: str) -> None:
        super().__init__(
            413,
            f"The request body is larger than the {format_bytes(limit, 0)} allowed for {path}"
            + ("" if limit > SMALL_BODY_BYTES else "; uploads go to the import routes, which take more")
            + ".",
        )


class BodyLimitMiddleware:
    """Refuse a body over its route class's limit while it streams: a Content-Length over the
    limit is answered 413 before a byte is read, a chunked body when the count passes it. This
    runs before the session, the CSRF check and authentication, so anonymous clients cannot make
    the server read or parse more than the limit."""

    def __init__(self, app: ASGIApp, *, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await refuse(scope, send, BodyTooLarge(limit, scope["path"]))
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit, scope["path"])
            return message

        await self.app(scope, counted, send)


class UploadSpaceMiddleware:
    """Refuse an upload before its body is read when it would leave less than `floor_bytes` free on
    the disk of `directory` (the declared length counts; a chunked body is checked at its start and
    again where it is stored). `make_room(bytes)` first removes previews unused for a while (in a
    thread) and returns the bytes it freed; only when that is not enough is the answer 507."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        applies: Callable[[str], bool],
        directory: Path,
        floor_bytes: int,
        make_room: Callable[[int], int] = lambda needed: 0,
    ) -> None:
        self.app, self.applies, self.directory = app, applies, directory
        self.floor_bytes, self.make_room = floor_bytes, make_room

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self.applies(scope["path"]):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        incoming = int(declared) if declared.isdigit() else 0
        short = self.floor_bytes - (self._free() - incoming)
        if short > 0 and await anyio.to_thread.run_sync(self.make_room, short) < short:
            await refuse(scope, send, HTTPException(507, self._message(incoming)))
            return
        await self.app(scope, receive, send)

    def _free(self) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(self.directory).free

    def _message(self, incoming: int) -> str:
        # Answered before the user is known: the floor is named, not how much is free.
        size = f" of {format_bytes(incoming)}" if incoming else ""
        return (
            f"This upload{size} is refused: it would leave less than the {format_bytes(self.floor_bytes)} kept free "
            "on the disk of redolab's data directory (REDOLAB_UPLOAD_FREE_SPACE_FLOOR_BYTES). Nothing was stored: "
            "ask the administrator to free space, then upload it again."
        )


def _beyond_row_ids(text: str) -> bool:
    """A whole number no database row can have as its id (beyond MAX_ROW_ID either way)."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isascii() or not digits.isdigit():
        return False
    digits = digits.lstrip("0")
    return len(digits) > len(str(MAX_ROW_ID)) or int(digits or "0") > MAX_ROW_ID  # no huge int() parsed


class IdBoundsMiddleware:
    """A number beyond the databases' ids (MAX_ROW_ID) names no row: in the path it is answered 404,
    in a query parameter of `query_ids` (those that name rows) 422, before any route runs (the
    database would refuse it in the query, and the error would surface as a 500). Other query
    parameters may be any number (a tag such as 4000000001)."""

    def __init__(self, app: ASGIApp, *, query_ids: frozenset[str]) -> None:
        self.app, self.query_ids = app, query_ids

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if any(_beyond_row_ids(part) for part in scope["path"].split("/")):
                await refuse(scope, send, HTTPException(404, f"Not found: ids run from 1 to {MAX_ROW_ID}."))
                return
            query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            name = next((k for k, value in query if k in self.query_ids and _beyond_row_ids(value.strip())), None)
            if name is not None:
                message = f"An id from 1 to {MAX_ROW_ID} is expected."
                detail = (  # shaped as FastAPI's own validation errors, for API clients
                    [{"loc": ["query", name], "msg": message, "type": "less_than_equal"}]
                    if scope["path"].startswith("/api/")
                    else f"{name}: {message}"
                )
                await refuse(scope, send, HTTPException(422, detail))
                return
        await self.app(scope, receive, send)


async def refuse(scope: Scope, send: Send, error: HTTPException) -> None:
    """Answer from a middleware, before the app: JSON under /api/, plain text elsewhere (shown by
    app.js in the page's error box), with the error's headers (Retry-After)."""
    if scope["path"].startswith("/api/"):
        body, kind = json.dumps({"detail": error.detail}).encode(), b"application/json"
    else:
        body, kind = str(error.detail).encode(), b"text/plain; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in (error.headers or {}).items()]
    await send({"type": "http.response.start", "status": error.status_code, "headers": headers + SECURITY_HEADERS})
    await send({"type": "http.response.body", "body": body})


class SameOriginMiddleware:
    """Login CSRF: a browser posting the login (or setup) form from another site sends that site's
    Origin (or Referer); such a post is refused, so no page can log a visitor in as its author.
    Clients that send neither (curl, the CLI, scripts) are not browsers and cannot be used for it."""

    def __init__(self, app: ASGIApp, *, paths: frozenset[str], trusted: tuple[str, ...] = ()) -> None:
        self.app = app
        self.paths = paths
        self.trusted = {origin.rstrip("/").lower() for origin in trusted}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in self.paths:
            headers = dict(scope["headers"])
            claimed = headers.get(b"origin") or headers.get(b"referer")
            host = headers.get(b"host", b"").decode("latin-1")
            if claimed is not None and not self._same(claimed.decode("latin-1"), host):
                refusal = HTTPException(403, "Cross-site login refused: log in from redolab's own page.")
                await refuse(scope, send, refusal)
                return
        await self.app(scope, receive, send)

    def _same(self, claimed: str, host: str) -> bool:
        parts = urlsplit(claimed)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        return parts.netloc.lower() == host.lower() or origin in self.trusted


class SecurityHeadersMiddleware:
    """CSP, frame-ancestors/X-Frame-Options, nosniff and Referrer-Policy on every response (a
    response that sets its own CSP, such as the printable report or the API docs, keeps it), and
    Cache-Control: no-store unless the response sets its own caching (the static assets do): pages
    and API answers carry tokens, signing secrets shown once, hook URLs and credentials' forms, which
    no browser cache or shared proxy may keep. Set for all rather than per route, so a new route that
    shows a secret cannot forget it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(n, v) for n, v in SECURITY_HEADERS if n not in present]
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", CSP.encode()))
                if b"cache-control" not in present:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def csp_allowing_inline_scripts(html: bytes) -> str:
    """The default CSP plus the SHA-256 of each inline <script> in `html` (Swagger UI's page
    starts itself with one)."""
    import base64
    import hashlib

    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
        for script in _INLINE_SCRIPT.findall(html)
    )
    return CSP.replace("script-src 'self'", f"script-src 'self' {hashes}")
