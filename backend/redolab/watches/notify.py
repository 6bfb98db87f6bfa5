"""Notifications of a watch's state changes: delivery with retries (the payload, the rows and their
renderings are in watches.messages).

Exactly once. A state change is numbered (Watch.transitions); queue_notifications writes one row per
(watch, transition, receiver) in the caller's transaction (the unique constraint makes a second one
impossible), and watches.delivery claims each row by a conditional update (pending -> sending) before it
sends, so two workers never send one row twice. A row is retried with backoff (30 s, 2 min, 10 min,
30 min, 2 h) and given up after 6 attempts; only the receiver's status is kept ("HTTP 200", "SMTP 250").
A receiver that does not answer costs at most REDOLAB_NOTIFICATION_TIMEOUT_SECONDS per attempt, never a
run's time: delivery runs beside the worker's loop.

Webhook request (kind "webhook"): POST of the payload below as JSON (UTF-8), with the headers

    Content-Type: application/json
    X-Redolab-Event: redolab.watch.state_changed     (redolab.receiver.test for a test message)
    X-Redolab-Notification: <id>                     the same on every retry of one notification
    X-Redolab-Timestamp: <Unix time of this attempt, seconds>
    X-Redolab-Signature: sha256=<hex>                HMAC-SHA256 of the exact request body, keyed by the
                                                     receiver's signing secret (its UTF-8 bytes)

Check it over the raw body before parsing it, in constant time:
    hmac.compare_digest(header, "sha256=" + hmac.new(secret.encode(), body, "sha256").hexdigest())
Redirects are not followed (a 3xx answer is a failed attempt); any 2xx is delivered. Slack and Teams
receivers get the same facts in their own formats (Slack: text + blocks; Teams: an Adaptive Card
message), unsigned: their URL is their secret. Mail goes through REDOLAB_SMTP_HOST (STARTTLS when
REDOLAB_SMTP_STARTTLS, verified against the system's CAs or SSL_CERT_FILE; login when REDOLAB_SMTP_USER).

Payload (event "redolab.watch.state_changed"):

    {"event": "redolab.watch.state_changed",
     "environment": {"id": 2, "name": "prod"},
     "watch": {"id": 3, "name": "nightly", "path": "p1 -> s1"},
     "transition": 4,                        the watch's change number: (watch.id, transition) is unique
     "from_state": "ok", "to_state": "failing",   unknown | ok | at_risk | failing
     "state_label": "FAILING",               NOT YET KNOWN | OK | AT RISK | FAILING
     "measured_bytes_per_second": 41943040.0,      the check's receiver-counted rate (null: no check)
     "required_bytes_per_second": 50000000.0,      what the path must carry (null: no requirement)
     "required_basis": "thread 1's peak + headroom (the busiest thread)",
     "measured": "40 MiB/s (335.5 Mbit/s)", "required": "47.68 MiB/s (400 Mbit/s)",
     "headroom_ratio": -0.161,               measured / required - 1 (null without both)
     "silenced_until": null,                 ISO UTC while the watch is silenced
     "at": "2026-11-26T10:15:00+00:00",      the change, ISO 8601 UTC
     "links": {"watch": "<public_url>/watches/3", "run": "<public_url>/runs/17" (null: no run),
               "plan": "<public_url>/environments/2#plan"}}
"""

from __future__ import annotations

import contextlib
import logging
import smtplib
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

from redolab import __version__
from redolab.core.config import Settings
from redolab.core.security import decrypt_secret
from redolab.core.units import format_duration
from redolab.watches.messages import (  # the message itself; here: sending it
    EVENT,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    email_message,
    render,
    sample_payload,
    signature,
)
from redolab.watches.models import NotificationReceiver
from redolab.watches.results import error_text
from redolab.watches.targets import AddressInfo, checked_addresses, connect_to

log = logging.getLogger("redolab.notify")

BACKOFF_SECONDS = (30, 120, 600, 1800, 7200)  # after attempt 1, 2, ...; attempt 6 failing gives up
MAX_ATTEMPTS = 6
STALE_SENDING = timedelta(minutes=10)  # a claim older than this was left by a worker that died


@dataclass(frozen=True)
class Delivery:
    delivered: bool
    result: str  # the receiver's status only: "HTTP 200", "SMTP 250", "timed out after 5 s"
    final: bool = False  # no point retrying (the receiver was removed)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # urllib then raises HTTPError with the 3xx status


def _tracking(http_class, opened: list, addresses: list[AddressInfo]):
    """http_class whose connections go to the checked `addresses` (the URL's host is not resolved again:
    watches.targets) and are kept in `opened`, so a deadline can shut their sockets. HTTPS still checks
    the certificate against the URL's host name."""

    def connection(*args, **kwargs):
        made = http_class(*args, **kwargs)
        made._create_connection = connect_to(addresses)
        opened.append(made)
        return made

    return connection


class _TrackedHTTP(urllib.request.HTTPHandler):
    def __init__(self, opened: list, addresses: list[AddressInfo]) -> None:
        super().__init__()
        self.opened, self.addresses = opened, addresses

    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_tracking(http_class, self.opened, self.addresses), req, **kwargs)


class _TrackedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, opened: list, addresses: list[AddressInfo]) -> None:
        super().__init__()
        self.opened, self.addresses = opened, addresses

    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_tracking(http_class, self.opened, self.addresses), req, **kwargs)


def _shut(opened: list) -> None:
    for thing in opened:
        sock = thing if isinstance(thing, socket.socket) else getattr(thing, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _within(timeout: float, send: Callable[[list], Delivery]) -> Delivery:
    """Run `send` with a hard deadline: socket timeouts bound each wait, and a receiver that trickles
    its answer has its sockets shut when the deadline passes (the attempt is then a failure)."""
    opened: list = []
    outcome: list[Delivery] = []

    def run() -> None:
        try:
            outcome.append(send(opened))
        except Exception as error:  # a bad receiver is a failed attempt, never a crash
            outcome.append(Delivery(False, error_text(error, timeout)))

    thread = threading.Thread(target=run, name="redolab-notify-send", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        _shut(opened)
        return Delivery(False, f"timed out after {format_duration(timeout)}")
    return outcome[0]


def _post(
    url: str, content_type: str, body: bytes, headers: dict[str, str], *, timeout: float, allow: list[str]
) -> Delivery:
    def send(opened: list) -> Delivery:
        addresses = checked_addresses(url, allow)  # within the deadline: a resolver may take its time
        # No proxy: the connection goes to the addresses just checked, or the check would mean nothing.
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}),
            _TrackedHTTP(opened, addresses),
            _TrackedHTTPS(opened, addresses),
            _NoRedirect(),
        )
        # http(s) only: ReceiverCreate refuses every other scheme
        request = urllib.request.Request(  # noqa: S310
            url, data=body, method="POST", headers={"Content-Type": content_type, **headers}
        )
        try:
            with opener.open(request, timeout=timeout) as response:  # the body is never read: status only
                status = response.status
        except urllib.error.HTTPError as error:  # 3xx (not followed), 4xx, 5xx: its status is the result
            error.close()
            raise
        if 200 <= status < 300:
            return Delivery(True, f"HTTP {status}")
        return Delivery(False, f"HTTP {status}")

    return _within(timeout, send)


def _tls_context() -> ssl.SSLContext:
    """Verified TLS for STARTTLS: the system's CAs, or SSL_CERT_FILE / SSL_CERT_DIR for a private CA."""
    return ssl.create_default_context()


class _TrackedSMTP(smtplib.SMTP):
    """smtplib.SMTP whose socket is kept in `opened` from the moment it connects (before the banner)."""

    def __init__(self, opened: list, *args, **kwargs) -> None:
        self.opened = opened
        super().__init__(*args, **kwargs)

    def _get_socket(self, host, port, timeout):
        sock = super()._get_socket(host, port, timeout)
        self.opened.append(sock)
        return sock


# REDOLAB_SMTP_PASSWORD may be stored encrypted: this prefix and what `redolab secret encrypt` printed
ENCRYPTED_PREFIX = "fernet:"


def smtp_password(settings: Settings, secret_key: str) -> str:
    """REDOLAB_SMTP_PASSWORD as set, decrypted with the secret key when it is stored encrypted
    (ENCRYPTED_PREFIX + a token of `redolab secret encrypt`); ValueError when it cannot be."""
    raw = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
    if raw.startswith(ENCRYPTED_PREFIX):
        return decrypt_secret(raw.removeprefix(ENCRYPTED_PREFIX), secret_key=secret_key)
    return raw


def _mail(message: EmailMessage, settings: Settings, secret_key: str, timeout: float) -> Delivery:
    if not settings.smtp_host:
        return Delivery(False, "no mail server: set REDOLAB_SMTP_HOST")
    try:
        password = smtp_password(settings, secret_key) if settings.smtp_user else ""
    except ValueError:
        return Delivery(
            False,
            "REDOLAB_SMTP_PASSWORD cannot be decrypted with this REDOLAB_SECRET_KEY: "
            "encrypt it again with `redolab secret encrypt`",
        )

    def send(opened: list) -> Delivery:
        smtp = _TrackedSMTP(opened, settings.smtp_host, settings.smtp_port, timeout=timeout)
        try:
            if settings.smtp_starttls:
                smtp.starttls(context=_tls_context())
            if settings.smtp_user:
                smtp.login(settings.smtp_user, password)
            smtp.send_message(message)
            return Delivery(True, "SMTP 250")
        finally:
            try:
                smtp.quit()
            except (smtplib.SMTPException, OSError):
                smtp.close()

    return _within(timeout, send)


@dataclass(frozen=True)
class Target:
    """What a send needs of a receiver, read before any network wait (no session is held meanwhile)."""

    receiver_id: int
    name: str
    kind: str
    url: str | None
    email_to: str | None
    encrypted_secret: str | None

    @classmethod
    def of(cls, receiver: NotificationReceiver) -> Target:
        return cls(
            receiver.id, receiver.name, receiver.kind, receiver.url, receiver.email_to, receiver.encrypted_secret
        )


def send_now(
    target: Target, payload: dict[str, Any], *, notification_id: int | None, settings: Settings, secret_key: str
) -> Delivery:
    timeout = settings.notification_timeout_seconds
    if target.kind == "email":
        if not target.email_to:
            return Delivery(False, "the receiver has no address", final=True)
        return _mail(email_message(payload, settings, target.email_to), settings, secret_key, timeout)
    if target.kind not in ("webhook", "slack", "teams") or not (target.url or "").startswith(("http://", "https://")):
        return Delivery(False, f"a {target.kind} receiver without an http(s) URL cannot be sent to", final=True)
    content_type, body = render(target.kind, payload)
    headers = {"User-Agent": f"redolab/{__version__}", "X-Redolab-Event": str(payload.get("event", EVENT))}
    if notification_id is not None:
        headers["X-Redolab-Notification"] = str(notification_id)
    if target.kind == "webhook" and target.encrypted_secret:
        try:
            secret = decrypt_secret(target.encrypted_secret, secret_key=secret_key)
        except ValueError:
            return Delivery(False, "the signing secret cannot be decrypted: REDOLAB_SECRET_KEY changed")
        headers[TIMESTAMP_HEADER] = str(int(time.time()))
        headers[SIGNATURE_HEADER] = signature(secret, body)
    return _post(target.url, content_type, body, headers, timeout=timeout, allow=settings.webhook_allow)


def send_test(*, receiver: NotificationReceiver, settings: Settings, secret_key: str) -> Delivery:
    """Send a test message to `receiver` at once (nothing is queued); at most the timeout long."""
    return send_now(
        Target.of(receiver),
        sample_payload(receiver=receiver, settings=settings),
        notification_id=None,
        settings=settings,
        secret_key=secret_key,
    )


# -------------------------------------------------------------------------------------------- deliver


def backoff(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt (1: 30 s, 2: 2 min, 3: 10 min, 4: 30 min, 5: 2 h)."""
    return timedelta(seconds=BACKOFF_SECONDS[min(max(attempts, 1), len(BACKOFF_SECONDS)) - 1])
