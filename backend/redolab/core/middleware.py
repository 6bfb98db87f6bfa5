"""ASGI middleware that guards every request before any route, session or user is looked at:
the body-size limit, the login form's same-origin check, and the security headers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
    response that sets its own CSP, such as the printable report or the API docs, keeps it)."""

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
