"""Notifications of watch state changes (issue 37 item 2): a real SMTP server (aiosmtpd, plain and
STARTTLS with a login) receives the alert mail; a local HTTP receiver checks the webhook's signature and
payload, the Slack and Teams formats, retries with backoff, redirects not followed, time limits, and that
two workers send each notification once. Receivers are an admin's; their secret is never shown again."""

from __future__ import annotations

import contextlib
import datetime as dt
import email
import email.policy
import hashlib
import hmac
import html
import http.client
import ipaddress
import json
import logging
import re
import smtplib
import socket
import ssl
import threading
import time
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import SecretStr
from sqlalchemy import func, select

from redolab.auth.models import Role
from redolab.core.db import make_sessionmaker, utcnow
from redolab.core.security import decrypt_secret, encrypt_secret
from redolab.core.units import MIB
from redolab.main import create_app
from redolab.watches import delivery, messages, notify, receivers, receivers_api, results, targets
from redolab.watches.models import CheckStatus, Notification, NotificationReceiver, Verdict, Watch, WatchCheck
from redolab.watches.schemas_receivers import ReceiverCreate, ReceiverPublic, shown_url
from tests.factories import PASSWORD, make_environment, make_user
from tests.margins import measured_within

MEASURED = 40 * MIB  # 40 MiB/s = 335.5 Mbit/s
REQUIRED = 50e6  # 47.68 MiB/s = 400 Mbit/s
PAYLOAD_KEYS = {
    "event", "environment", "watch", "transition", "from_state", "to_state", "state_label",
    "measured_bytes_per_second", "required_bytes_per_second", "required_basis", "measured", "required",
    "headroom_ratio", "silenced_until", "at", "links",
}  # fmt: skip
QUEUED_KEYS = PAYLOAD_KEYS | {"changes_last_hour", "flapping"}  # a queued change says how often it changed


# ------------------------------------------------------------------------------------------- fixtures


@pytest.fixture
def app(settings, engine):
    """The app with the receivers' routes (included here until main.py includes them)."""
    app = create_app(settings)
    if not any(getattr(route, "path", "") == "/api/v1/notification-receivers" for route in app.routes):
        app.include_router(receivers_api.router)
    return app


@pytest.fixture
def settings(settings, hook):
    """The receivers here are servers on 127.0.0.1, which redolab refuses unless REDOLAB_WEBHOOK_ALLOW
    names them: the allow list names the hook server and the discard port (9)."""
    return settings.model_copy(update={"webhook_allow": [hook.url, "http://127.0.0.1:9/"]})


def allowing(settings, *urls):
    return settings.model_copy(update={"webhook_allow": [*settings.webhook_allow, *urls]})


@pytest.fixture
def sessions(engine):
    return make_sessionmaker(engine)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HookServer(ThreadingHTTPServer):
    """A webhook receiver on 127.0.0.1: keeps every request (path, headers, body); answers `status`."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _HookHandler)
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.status = 200
        self.location = None
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"

    def bodies(self) -> list[dict]:
        return [json.loads(body) for _, _, body in self.requests]


class _HookHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:
            self.server.requests.append((self.path, dict(self.headers), body))
        self.send_response(self.server.status)
        if self.server.location:
            self.send_header("Location", self.server.location)
        self.send_header("Content-Length", "18")
        self.end_headers()
        self.wfile.write(b"receiver-body-text")  # never kept by redolab

    def log_message(self, *args):
        pass


@pytest.fixture
def hook():
    server = HookServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], EmailMessage]] = []

    async def handle_DATA(self, server, session, envelope):
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), parsed))
        return "250 OK"


@pytest.fixture
def mailbox():
    from aiosmtpd.controller import Controller

    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=_free_port())
    controller.start()
    box.port = controller.port
    yield box
    controller.stop()


def make_watch(session, *, receiver_ids, check: bool = True, **fields):
    environment = make_environment(session, name="prod-east")
    watch = Watch(environment_id=environment.id, name="nightly", path_label="p1 -> s1", requested_by="alice",
                  receiver_ids=receiver_ids, **fields)  # fmt: skip
    session.add(watch)
    session.flush()
    made = None
    if check:
        made = WatchCheck(
            watch_id=watch.id, status=CheckStatus.judged, run_ids=[17], verdict=Verdict.failing,
            measured_bytes_per_second=MEASURED, required_bytes_per_second=REQUIRED,
            required_basis="thread 1's peak + headroom (the busiest thread)",
        )  # fmt: skip
        session.add(made)
    session.commit()
    return environment, watch, made


def add_receiver(session, settings, secret_key, **fields):
    values = {"name": f"hook-{fields.get('kind', 'webhook')}", "kind": "webhook", **fields}
    return receivers.create_receiver(session=session, receiver_in=ReceiverCreate(**values), created_by="alice",
                                     secret_key=secret_key, settings=settings)  # fmt: skip


def queue(session, settings, environment, watch, check, *, transition=1, from_state="ok", to_state="failing"):
    rows = messages.queue_notifications(session=session, watch=watch, environment=environment, check=check,
                                      from_state=from_state, to_state=to_state, transition=transition,
                                      settings=settings)  # fmt: skip
    session.commit()
    return rows


def reread(session, notification_id) -> Notification:
    session.expire_all()
    return session.get(Notification, notification_id)


# ------------------------------------------------------------------------------------- payload, queue


def test_payload_carries_the_documented_keys(session, settings):
    environment, watch, check = make_watch(session, receiver_ids=[])
    settings = settings.model_copy(update={"public_url": "https://redolab.example.com/"})
    payload = messages.notification_payload(watch=watch, environment=environment, check=check, from_state="ok",
                                          to_state="failing", settings=settings)  # fmt: skip
    assert set(payload) == PAYLOAD_KEYS - {"transition"}
    assert payload["event"] == "redolab.watch.state_changed"
    assert payload["environment"] == {"id": environment.id, "name": "prod-east"}
    assert payload["watch"] == {"id": watch.id, "name": "nightly", "path": "p1 -> s1"}
    assert (payload["from_state"], payload["to_state"], payload["state_label"]) == ("ok", "failing", "FAILING")
    assert payload["measured"] == "40 MiB/s (335.5 Mbit/s)"
    assert payload["required"] == "47.68 MiB/s (400 Mbit/s)"
    assert payload["headroom_ratio"] == pytest.approx(MEASURED / REQUIRED - 1)
    assert payload["links"] == {
        "watch": f"https://redolab.example.com/watches/{watch.id}",
        "run": "https://redolab.example.com/runs/17",
        "plan": f"https://redolab.example.com/environments/{environment.id}#plan",
    }
    assert dt.datetime.fromisoformat(payload["at"]).utcoffset() == dt.timedelta(0)
    json.dumps(payload)  # plain values only
    # a change no check decided (a silence ending): no figures, no run
    bare = messages.notification_payload(watch=watch, environment=environment, check=None, from_state="failing",
                                       to_state="ok", settings=settings)  # fmt: skip
    assert bare["measured"] is None and bare["headroom_ratio"] is None and bare["links"]["run"] is None
    assert bare["state_label"] == "OK"


def test_one_row_per_receiver_and_transition_even_when_queued_twice(session, settings, secret_key):
    first = add_receiver(session, settings, secret_key, name="one", url="http://127.0.0.1:9/a").receiver
    second = add_receiver(session, settings, secret_key, name="two", kind="email", email_to="dba@example.com").receiver
    environment, watch, check = make_watch(session, receiver_ids=[first.id, second.id, 999_999])
    rows = queue(session, settings, environment, watch, check, transition=1)
    assert sorted(row.receiver_id for row in rows) == sorted([first.id, second.id])  # 999999 is gone
    assert {row.status for row in rows} == {"pending"}
    assert rows[0].payload["transition"] == 1 and set(rows[0].payload) == QUEUED_KEYS
    again = queue(session, settings, environment, watch, check, transition=1)  # a second worker, say
    assert [row.id for row in again] == [row.id for row in rows]
    assert session.scalar(select(func.count()).select_from(Notification)) == 2
    queue(session, settings, environment, watch, check, transition=2, from_state="failing", to_state="ok")
    assert session.scalar(select(func.count()).select_from(Notification)) == 4


def test_a_silenced_watch_queues_silenced_rows_that_are_never_sent(session, sessions, settings, secret_key, hook):
    receiver = add_receiver(session, settings, secret_key, url=hook.url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id],
                                           silenced_until=utcnow() + dt.timedelta(hours=1))  # fmt: skip
    (row,) = queue(session, settings, environment, watch, check)
    assert row.status == "silenced"
    assert row.payload["silenced_until"] is not None
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 0
    assert hook.requests == []


@pytest.mark.parametrize(
    ("changes", "sent"),
    [
        ([("ok", "failing")], "failing"),  # failed during maintenance and still failing: news after it
        ([("ok", "failing"), ("failing", "ok")], None),  # back to what the receivers heard: no news
        ([("ok", "failing"), ("failing", "at_risk")], "at_risk"),  # only the newest is told
    ],
)
def test_a_silence_that_ends_tells_the_newest_change_once(session, sessions, settings, secret_key, hook, changes, sent):
    receiver = add_receiver(session, settings, secret_key, url=hook.url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id],
                                           silenced_until=utcnow() + dt.timedelta(hours=1))  # fmt: skip
    for transition, (old, new) in enumerate(changes, start=1):
        queue(session, settings, environment, watch, check, transition=transition, from_state=old, to_state=new)
    assert messages.release_ended_silences(session) == 0  # still silenced: nothing moves
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 0
    watch.silenced_until = utcnow() - dt.timedelta(seconds=1)
    session.commit()
    with sessions() as one, sessions() as other:  # two workers' loops: each row moves once
        released = messages.release_ended_silences(one) + messages.release_ended_silences(other)
    assert released == (1 if sent else 0)
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == released
    told = [json.loads(body)["to_state"] for _path, _headers, body in hook.requests]
    assert told == ([sent] if sent else [])
    session.expire_all()
    statuses = session.scalars(select(Notification.status).order_by(Notification.transition)).all()
    assert "silenced" not in statuses and statuses.count("delivered") == len(told)
    assert messages.release_ended_silences(session) == 0  # nothing left to release


# ---------------------------------------------------------------------------------------------- webhook


def test_webhook_is_signed_over_its_exact_body(session, sessions, settings, secret_key, hook):
    created = add_receiver(session, settings, secret_key, url=hook.url)
    secret = created.signing_secret
    assert secret and len(secret) >= 40
    environment, watch, check = make_watch(session, receiver_ids=[created.receiver.id])
    (row,) = queue(session, settings, environment, watch, check, transition=3)
    before = int(time.time())
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 1
    ((path, headers, body),) = hook.requests
    assert path == "/hook"
    assert headers["Content-Type"] == "application/json"
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Redolab-Signature"], expected)
    assert before <= int(headers["X-Redolab-Timestamp"]) <= time.time() + 1
    assert headers["X-Redolab-Event"] == "redolab.watch.state_changed"
    assert headers["X-Redolab-Notification"] == str(row.id)
    payload = json.loads(body)
    assert set(payload) == QUEUED_KEYS
    assert payload["transition"] == 3 and payload["watch"]["path"] == "p1 -> s1"
    assert payload["measured_bytes_per_second"] == MEASURED and payload["required_bytes_per_second"] == REQUIRED
    stored = reread(session, row.id)
    assert (stored.status, stored.attempts, stored.last_result) == ("delivered", 1, "HTTP 200")
    assert stored.delivered_at is not None and stored.claimed_by is None
    assert "receiver-body-text" not in stored.last_result  # the status only, never the answer's body


def test_slack_and_teams_formats(session, sessions, settings, secret_key, hook):
    environment, watch, check = make_watch(session, receiver_ids=[])
    payload = messages.notification_payload(watch=watch, environment=environment, check=check, from_state="ok",
                                          to_state="failing", settings=settings)  # fmt: skip
    content_type, body = messages.render("slack", payload)
    slack = json.loads(body)
    assert content_type == "application/json"
    assert "FAILING" in slack["text"] and "prod-east" in slack["text"]
    assert "p1 -&gt; s1" in slack["text"]  # Slack's escaping of <, > and &
    assert all(block["type"] in ("header", "section") for block in slack["blocks"])
    assert slack["blocks"][0]["text"]["type"] == "plain_text" and len(slack["blocks"][0]["text"]["text"]) <= 150
    texts = " ".join(block["text"]["text"] for block in slack["blocks"])
    assert "40 MiB/s (335.5 Mbit/s)" in texts and "47.68 MiB/s (400 Mbit/s)" in texts
    assert f"<{payload['links']['run']}|The run>" in texts

    _, body = messages.render("teams", payload)
    teams = json.loads(body)
    assert teams["type"] == "message"
    (attachment,) = teams["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] and card["body"][0]["type"] == "TextBlock"
    facts = {fact["title"]: fact["value"] for fact in card["body"][1]["facts"]}
    assert facts["Path"] == "p1 -> s1" and facts["Measured"] == "40 MiB/s (335.5 Mbit/s)"
    assert {action["url"] for action in card["actions"]} == {url for url in payload["links"].values() if url}

    # sent as such to a Slack receiver, unsigned (its URL is its secret)
    slack_receiver = add_receiver(session, settings, secret_key, name="chat", kind="slack", url=hook.url)
    assert slack_receiver.signing_secret is None
    watch.receiver_ids = [slack_receiver.receiver.id]
    session.commit()
    queue(session, settings, environment, watch, check)
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 1
    ((_, headers, body),) = hook.requests
    assert "X-Redolab-Signature" not in headers and set(json.loads(body)) == {"text", "blocks"}


@pytest.mark.parametrize(
    "name",
    [
        "[Reset your password](https://evil.example/login)", "**URGENT** _call_ ~me~ `now`", "- item", "1. first",
        "# heading", "> quoted", "<https://evil.example>", "a\\[b](c)", "+ plus", "12) twelve", "db_01 *prod*",
    ],
)  # fmt: skip
def test_teams_cards_show_names_as_text_not_markdown(session, settings, name):
    """Teams reads Markdown in a card's TextBlock and facts: a watch named "[Reset](https://evil)" was a link."""
    from markdown_it import MarkdownIt

    environment, watch, check = make_watch(session, receiver_ids=[])
    environment.name, watch.name, watch.path_label = name, name, f"{name} -> s1"
    payload = messages.notification_payload(watch=watch, environment=environment, check=check, from_state="ok",
                                          to_state="failing", settings=settings)  # fmt: skip
    card = json.loads(messages.render("teams", payload)[1])["attachments"][0]["content"]
    texts = [card["body"][0]["text"]] + [fact["value"] for fact in card["body"][1]["facts"]]
    markdown = MarkdownIt("commonmark")
    for text in texts:
        rendered = markdown.render(text)
        assert not re.search(r"<(a|strong|em|code|ul|ol|li|h\d|blockquote)\b", rendered), (text, rendered)
    shown = {fact["title"]: html.unescape(re.sub(r"<[^>]+>", "", markdown.render(fact["value"]))).strip()
             for fact in card["body"][1]["facts"]}  # fmt: skip
    assert shown["Environment"] == name and shown["Watch"] == name and shown["Path"] == f"{name} -> s1"
    assert shown["Measured"] == "40 MiB/s (335.5 Mbit/s)"  # redolab's own text is left as it is


def test_a_failing_receiver_is_retried_with_backoff_then_given_up(session, sessions, settings, secret_key, hook):
    hook.status = 500
    receiver = add_receiver(session, settings, secret_key, url=hook.url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    (row,) = queue(session, settings, environment, watch, check)
    now = utcnow()
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1", now=now) == 1
    stored = reread(session, row.id)
    assert (stored.status, stored.attempts, stored.last_result) == ("pending", 1, "HTTP 500")
    assert abs(stored.next_attempt_at - (now + dt.timedelta(seconds=30))) < dt.timedelta(milliseconds=5)
    # not due before its time
    early = now + dt.timedelta(seconds=29)
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1", now=early) == 0
    later = stored.next_attempt_at
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1", now=later) == 1
    stored = reread(session, row.id)
    assert (stored.status, stored.attempts) == ("pending", 2)
    assert abs(stored.next_attempt_at - (later + dt.timedelta(minutes=2))) < dt.timedelta(milliseconds=5)
    for _ in range(4):  # attempts 3 .. 6
        delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1",
                           now=reread(session, row.id).next_attempt_at)  # fmt: skip
    stored = reread(session, row.id)
    assert (stored.status, stored.attempts, stored.last_result) == ("failed", 6, "HTTP 500")
    assert len(hook.requests) == 6
    assert [notify.backoff(n).total_seconds() for n in range(1, 6)] == [30, 120, 600, 1800, 7200]


def test_a_redirect_is_not_followed(session, sessions, settings, secret_key, hook):
    hook.status, hook.location = 302, hook.url.replace("/hook", "/elsewhere")
    receiver = add_receiver(session, settings, secret_key, url=hook.url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    (row,) = queue(session, settings, environment, watch, check)
    delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1")
    assert [path for path, _, _ in hook.requests] == ["/hook"]  # /elsewhere never asked
    stored = reread(session, row.id)
    assert (stored.status, stored.attempts, stored.last_result) == ("pending", 1, "redirect not followed (HTTP 302)")


@pytest.fixture
def silent_port():
    """A port that accepts connections (the kernel's backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


@pytest.fixture
def trickle_port():
    """A receiver that answers one byte every 0.2 s, forever: no single wait times out."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        clients = []
        while not stop.is_set():
            with contextlib.suppress(OSError):
                clients.append(listener.accept()[0])
            for client in clients:
                with contextlib.suppress(OSError):
                    client.send(b"H")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(5)
    listener.close()


BANNER = b"SSH-2.0-OpenSSH_9.6p1 Debian-3 <a href=//evil.example>look</a>\r\n"


@pytest.fixture
def banner_port():
    """An SSH server's port as a receiver: it greets every connection with its banner and reads on."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        clients = []
        while not stop.is_set():
            with contextlib.suppress(OSError):
                client, _ = listener.accept()
                client.sendall(BANNER)
                clients.append(client)
        for client in clients:
            client.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(5)
    listener.close()


def test_a_peers_bytes_never_reach_the_result_nor_the_page(
    session, sessions, settings, secret_key, banner_port, browser_client
):
    """A webhook aimed at an SSH port got "BadStatusLine: SSH-2.0-..." as its result, shown on the watch
    page to every viewer; mail to it kept the banner in the SMTP error. Now: fixed words only."""
    url = f"http://127.0.0.1:{banner_port}/hook"
    settings = settings.model_copy(update={
        "webhook_allow": [url], "smtp_host": "127.0.0.1", "smtp_port": banner_port, "smtp_starttls": False,
        "notification_timeout_seconds": 2.0,
    })  # fmt: skip
    hook = add_receiver(session, settings, secret_key, url=url).receiver
    mail = add_receiver(session, settings, secret_key, name="dba", kind="email", email_to="dba@example.com").receiver
    environment, watch, check = make_watch(session, receiver_ids=[hook.id, mail.id])
    queue(session, settings, environment, watch, check)
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 2
    session.expire_all()
    stored = {row.receiver_id: row.last_result for row in session.scalars(select(Notification))}
    assert stored == {hook.id: "not an HTTP answer", mail.id: "not an SMTP answer"}
    # a result stored before results were fixed words: the page shows the error's name, not the banner
    (old,) = queue(session, settings, environment, watch, check, transition=2, to_state="ok")[:1]
    old.last_result = "BadStatusLine: " + BANNER.decode().strip()
    session.commit()
    page = browser_client.get(f"/watches/{watch.id}")
    assert "BadStatusLine (the receiver&#39;s answer is not shown)" in page.text
    assert page.status_code == 200 and "not an HTTP answer" in page.text
    assert "SSH-2.0" not in page.text and "OpenSSH" not in page.text and "evil.example" not in page.text


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (http.client.BadStatusLine("SSH-2.0-OpenSSH_9.6"), "not an HTTP answer"),
        (http.client.RemoteDisconnected("Remote end closed"), "the receiver closed the connection without an answer"),
        (ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] peer said SSH-2.0"), "TLS error"),
        (socket.gaierror(-2, "Name or service not known"), "host name not found"),
        (ConnectionResetError(104, "Connection reset by peer"), "connection reset"),
        (OSError(113, "No route to host: SSH-2.0"), "network error (EHOSTUNREACH)"),
        (smtplib.SMTPConnectError(-1, b"SSH-2.0-OpenSSH_9.6"), "not an SMTP answer"),
        (smtplib.SMTPServerDisconnected("SSH-2.0-OpenSSH_9.6"), "the SMTP server closed the connection"),
        (smtplib.SMTPResponseException(554, b"SSH-2.0 go away"), "SMTP 554"),
    ],
)
def test_errors_are_fixed_words(error, words):
    text = results.error_text(error, timeout=5.0)
    assert text == words and "SSH" not in text


@pytest.mark.parametrize("where", ["dead", "silent", "trickle"])
def test_a_receiver_that_does_not_answer_costs_at_most_the_timeout(
    request, where, session, sessions, settings, secret_key
):
    port = {"dead": _free_port, "silent": lambda: request.getfixturevalue("silent_port"),
            "trickle": lambda: request.getfixturevalue("trickle_port")}[where]()  # fmt: skip
    settings = allowing(settings, f"http://127.0.0.1:{port}/").model_copy(update={"notification_timeout_seconds": 1.0})
    receiver = add_receiver(session, settings, secret_key, url=f"http://127.0.0.1:{port}/hook").receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    expected = {"dead": "connection refused", "silent": "timed out after 1 s", "trickle": "timed out after 1 s"}
    transitions = iter(range(1, 3))

    def delivered() -> float:
        (row,) = queue(session, settings, environment, watch, check, transition=next(transitions))
        started = time.monotonic()
        assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 1
        elapsed = time.monotonic() - started
        stored = reread(session, row.id)
        assert stored.status == "pending" and stored.attempts == 1
        assert stored.last_result == expected[where]
        return elapsed

    # The trickle answers a byte every 0.2 s forever: only a deadline over the whole attempt ends it.
    # The margin is the delivery's own bookkeeping (claim, decrypt, record): 1.2 s on a loaded machine,
    # more on a busier one, when a second notification is delivered before that fails.
    measured_within(delivered, lambda elapsed: [f"{elapsed:.2f} s (< 1 s timeout + 2 s)"] * (elapsed >= 1.0 + 2.0),
                    f"a {where} receiver")  # fmt: skip


def test_two_workers_send_each_notification_once(session, sessions, settings, secret_key, hook):
    receiver = add_receiver(session, settings, secret_key, url=hook.url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    ids = [queue(session, settings, environment, watch, check, transition=n)[0].id for n in range(1, 13)]
    start = threading.Barrier(2)
    attempted = []

    def work(name):
        start.wait()
        attempted.append(delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id=name))

    workers = [threading.Thread(target=work, args=(f"worker-{n}",)) for n in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    for _ in range(12):  # a poll sends a receiver at most PER_RECEIVER rows, newest first: the rest next time
        attempted.append(delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w3"))
        if not attempted[-1]:
            break
    sent = sorted(int(headers["X-Redolab-Notification"]) for _, headers, _ in hook.requests)
    assert sent == sorted(ids)  # every one, none twice
    assert sum(attempted) == 12
    session.expire_all()
    assert {row.status for row in session.scalars(select(Notification))} == {"delivered"}


def test_a_row_left_sending_by_a_dead_worker_is_sent_again(session, sessions, settings, secret_key, hook):
    receiver = add_receiver(session, settings, secret_key, url=hook.url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    (row,) = queue(session, settings, environment, watch, check)
    row.status, row.claimed_by, row.next_attempt_at = "sending", "dead-worker", utcnow() - dt.timedelta(minutes=11)
    fresh = queue(session, settings, environment, watch, check, transition=2)[0]
    fresh.status, fresh.claimed_by, fresh.next_attempt_at = "sending", "busy-worker", utcnow() - dt.timedelta(minutes=1)
    session.commit()
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w2") == 1
    assert reread(session, row.id).status == "delivered"
    assert reread(session, row.id).attempts == 2  # the interrupted attempt counts
    assert reread(session, fresh.id).status == "sending"  # still within its worker's time


def test_a_removed_receiver_is_not_told_and_leaves_its_watches(session, sessions, settings, secret_key, hook):
    receiver = add_receiver(session, settings, secret_key, url=hook.url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    (row,) = queue(session, settings, environment, watch, check)
    receivers.delete_receiver(session=session, receiver=receiver)
    session.expire_all()
    assert session.get(Watch, watch.id).receiver_ids == []
    stored = reread(session, row.id)
    assert (stored.status, stored.last_result, stored.receiver_id) == ("failed", "the receiver was removed", None)
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 0
    assert hook.requests == []


# ------------------------------------------------------------------------------------------------- mail


def _assert_alert_mail(box: Mailbox, environment, watch, *, to: str) -> None:
    ((mail_from, rcpt_tos, message),) = box.messages
    assert mail_from == "redolab@example.com" and rcpt_tos == [to]
    assert message["To"] == to and message["From"] == "redolab@example.com"
    assert message["Subject"] == "[redolab] FAILING (was OK): prod-east, p1 -> s1"
    body = message.get_content()
    for label, text in (
        ("Environment", "prod-east"), ("Path", "p1 -> s1"), ("State", "FAILING (was OK)"),
        ("Measured", "40 MiB/s (335.5 Mbit/s)"), ("Required", "47.68 MiB/s (400 Mbit/s), thread 1's peak"),
        ("The watch", f"https://redolab.example.com/watches/{watch.id}"),
        ("The run", "https://redolab.example.com/runs/17"),
        ("The plan", f"https://redolab.example.com/environments/{environment.id}#plan"),
    ):  # fmt: skip
        assert re.search(rf"^{label}: +{re.escape(text)}", body, re.MULTILINE), (label, text, body)


def test_alert_mail_over_plain_smtp(session, sessions, settings, secret_key, mailbox):
    settings = settings.model_copy(update={
        "smtp_host": "127.0.0.1", "smtp_port": mailbox.port, "smtp_starttls": False,
        "smtp_from": "redolab@example.com", "public_url": "https://redolab.example.com",
    })  # fmt: skip
    receiver = add_receiver(session, settings, secret_key, name="dba", kind="email", email_to="dba@example.com")
    assert receiver.signing_secret is None and receiver.receiver.encrypted_secret is None
    environment, watch, check = make_watch(session, receiver_ids=[receiver.receiver.id])
    (row,) = queue(session, settings, environment, watch, check)
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 1
    _assert_alert_mail(mailbox, environment, watch, to="dba@example.com")
    stored = reread(session, row.id)
    assert (stored.status, stored.last_result) == ("delivered", "SMTP 250")


def _self_signed(tmp_path):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "redolab test SMTP")])
    # Valid on any day: OpenSSL checks it against the kernel's clock, not this process's (which a test may
    # have moved, tests/frozen_date.py); 9999-12-31 23:59:59 is RFC 5280's "no well-defined expiration".
    since, until = dt.datetime(2000, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(since).not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                    x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = tmp_path / "smtp.crt", tmp_path / "smtp.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return cert_path, key_path


@pytest.mark.parametrize("stored", ["plain", "encrypted"])
def test_alert_mail_over_starttls_with_a_login(session, sessions, settings, secret_key, tmp_path, monkeypatch,
                                               caplog, stored):  # fmt: skip
    """The login after STARTTLS, with REDOLAB_SMTP_PASSWORD as set or stored encrypted (what `redolab
    secret encrypt` prints, tests/test_cli.py): decrypted only to log in, never logged."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    cert_path, key_path = _self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert_path, key_path)
    logins = []

    def authenticator(server, smtp_session, envelope, mechanism, auth_data):
        logins.append((auth_data.login, auth_data.password, smtp_session.ssl is not None))
        return AuthResult(success=auth_data.password == b"smtp-pass-6f1e")

    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=_free_port(), tls_context=server_tls,
                            require_starttls=True, authenticator=authenticator, auth_require_tls=True)  # fmt: skip
    controller.start()
    try:
        # The client verifies the server's certificate: trusted here as a private CA would be
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_path))
        password = "smtp-pass-6f1e"
        if stored == "encrypted":
            password = notify.ENCRYPTED_PREFIX + encrypt_secret(password, secret_key=secret_key)
        settings = settings.model_copy(update={
            "smtp_host": "127.0.0.1", "smtp_port": controller.port, "smtp_starttls": True,
            "smtp_user": "redolab", "smtp_password": SecretStr(password), "smtp_from": "redolab@example.com",
            "public_url": "https://redolab.example.com",
        })  # fmt: skip
        receiver = add_receiver(
            session, settings, secret_key, name="oncall", kind="email", email_to="oncall@example.com"
        )
        environment, watch, check = make_watch(session, receiver_ids=[receiver.receiver.id])
        (row,) = queue(session, settings, environment, watch, check)
        caplog.set_level(logging.DEBUG)
        assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 1
        _assert_alert_mail(box, environment, watch, to="oncall@example.com")
        assert logins == [(b"redolab", b"smtp-pass-6f1e", True)]  # logged in only after STARTTLS
        assert (reread(session, row.id).status, reread(session, row.id).last_result) == ("delivered", "SMTP 250")
        assert "smtp-pass-6f1e" not in caplog.text
        if stored == "encrypted":  # another secret key cannot decrypt it: said, nothing sent, no login
            (again,) = queue(session, settings, environment, watch, check, transition=9, to_state="ok")
            assert delivery.deliver_due(sessions, settings=settings, secret_key="another key " * 4, worker_id="w1") == 1
            assert "REDOLAB_SMTP_PASSWORD cannot be decrypted" in reread(session, again.id).last_result
            assert len(logins) == 1 and len(box.messages) == 1

        # a certificate the client does not trust: refused, nothing sent
        monkeypatch.delenv("SSL_CERT_FILE")
        monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "no-such-dir"))
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-file"))
        (other,) = queue(session, settings, environment, watch, check, transition=2, from_state="failing",
                         to_state="ok")  # fmt: skip
        delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1")
        stored = reread(session, other.id)
        assert stored.status == "pending" and stored.last_result.startswith("TLS certificate not trusted")
        assert len(box.messages) == 1
    finally:
        controller.stop()


# -------------------------------------------------------------------------------------------------- API


def _token(client, username) -> dict[str, str]:
    response = client.post("/api/v1/auth/token", data={"username": username, "password": PASSWORD})
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def test_receivers_are_an_admins(api_client, session):
    make_user(session, "olga", role=Role.operator)
    operator = _token(api_client, "olga")
    body = {"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}
    assert api_client.get("/api/v1/notification-receivers", headers=operator).status_code == 403
    response = api_client.post("/api/v1/notification-receivers", json=body, headers=operator)
    assert response.status_code == 403
    assert "admin" in response.json()["detail"]
    created = api_client.post("/api/v1/notification-receivers", json=body)
    assert created.status_code == 201
    receiver_id = created.json()["id"]
    assert api_client.post(f"/api/v1/notification-receivers/{receiver_id}/test", headers=operator).status_code == 403
    assert api_client.delete(f"/api/v1/notification-receivers/{receiver_id}", headers=operator).status_code == 403
    assert api_client.delete(f"/api/v1/notification-receivers/{receiver_id}").status_code == 204
    assert api_client.delete(f"/api/v1/notification-receivers/{receiver_id}").status_code == 404


def test_the_signing_secret_is_shown_once_and_stored_encrypted(api_client, session, secret_key, hook, caplog):
    caplog.set_level(logging.DEBUG)
    body = {"name": "Alerts", "kind": "webhook", "url": hook.url + "/T0/B0/token?x=1"}
    response = api_client.post("/api/v1/notification-receivers", json=body)
    assert response.status_code == 201, response.text
    created = response.json()
    secret = created["signing_secret"]
    assert secret and created["signed"] is True
    assert created["url"] == f"{hook.url}/…?…"  # the hook's path and query may be its token

    listed = api_client.get("/api/v1/notification-receivers")
    assert listed.status_code == 200
    assert listed.json()["count"] == 1 and "signing_secret" not in listed.json()["data"][0]
    assert secret not in listed.text
    stored = session.scalars(select(NotificationReceiver)).one()
    assert secret not in stored.encrypted_secret
    assert decrypt_secret(stored.encrypted_secret, secret_key=secret_key) == secret
    assert secret not in ReceiverPublic.of(stored).model_dump_json()

    # a given secret is not echoed either
    given = "given-secret-1234567890"
    body = {"name": "given", "kind": "webhook", "url": hook.url, "signing_secret": given}
    response = api_client.post("/api/v1/notification-receivers", json=body)
    assert response.status_code == 201 and response.json()["signing_secret"] is None
    assert given not in response.text and given not in api_client.get("/api/v1/notification-receivers").text

    # the test message: signed, sent at once, only the status comes back; nothing queued
    tested = api_client.post(f"/api/v1/notification-receivers/{response.json()['id']}/test")
    assert tested.status_code == 200
    assert tested.json() == {"delivered": True, "result": "HTTP 200"}
    ((_, headers, body),) = hook.requests
    assert headers["X-Redolab-Event"] == "redolab.receiver.test"
    assert headers["X-Redolab-Signature"] == messages.signature(given, body)
    assert json.loads(body)["event"] == "redolab.receiver.test"
    assert session.scalar(select(func.count()).select_from(Notification)) == 0
    assert secret not in caplog.text and given not in caplog.text


def test_a_test_message_reports_the_receivers_status(api_client, hook):
    hook.status = 404
    made = api_client.post("/api/v1/notification-receivers", json={"name": "gone", "kind": "teams", "url": hook.url})
    tested = api_client.post(f"/api/v1/notification-receivers/{made.json()['id']}/test")
    assert tested.status_code == 200
    assert tested.json() == {"delivered": False, "result": "HTTP 404"}
    assert json.loads(hook.requests[0][2])["type"] == "message"


def test_a_url_outside_the_allow_list_is_refused_naming_the_setting(app, api_client):
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow": ["https://hooks.slack.com/"]})
    body = {"name": "inside", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}
    response = api_client.post("/api/v1/notification-receivers", json=body)
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "url"] and "REDOLAB_WEBHOOK_ALLOW" in error["msg"]
    allowed = {"name": "slack", "kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}
    assert api_client.post("/api/v1/notification-receivers", json=allowed).status_code == 201
    # mail is not a request to a URL: the allow-list does not apply
    mail = {"name": "mail", "kind": "email", "email_to": "dba@example.com"}
    assert api_client.post("/api/v1/notification-receivers", json=mail).status_code == 201


def test_allow_list_entries_compare_scheme_host_port_and_normalised_path():
    """A string prefix let https://example.com/hooks/../admin through "https://example.com/hooks/"."""
    allow = ["https://hooks.slack.com", "https://example.com/hooks/", "http://127.0.0.1:8080/in"]
    for inside in ("https://hooks.slack.com/services/x", "https://HOOKS.Slack.com./x", "https://hooks.slack.com:443/x",
                   "https://example.com/hooks/a", "https://example.com/hooks", "https://example.com/hooks/a/../b",
                   "http://127.0.0.1:8080/in/hook"):  # fmt: skip
        assert targets.named_by(inside, allow), inside
    for outside in (
        "https://hooks.slack.com.evil.example/x", "https://example.com/hooksmith", "http://hooks.slack.com/x",
        "https://hooks.slack.com:8443/x", "https://example.com/hooks/../admin", "https://example.com/hooks/%2e%2e/admin",
        "https://example.com/hooks/..%2Fadmin", "https://example.com/hooks/..\\admin", "https://example.com/hooks/./../x",
        "http://127.0.0.1:8081/in/hook", "http://127.1:8080/in/hook", "http://127.0.0.1:8080/inside",
    ):  # fmt: skip
        assert not targets.named_by(outside, allow), outside
    assert not targets.named_by("http://anything/", [])  # an empty list names nothing


def test_the_allow_list_is_checked_when_read(settings):
    for entry in ("hooks.slack.com", "ftp://example.com/", "https://u:p@example.com/", "https://example.com/?a=1"):
        with pytest.raises(ValueError, match="REDOLAB_WEBHOOK_ALLOW"):
            type(settings)(webhook_allow=[entry], _env_file=None)


INWARD = [
    "http://127.0.0.1:{port}/hook", "http://127.1:{port}/hook", "http://0x7f.1:{port}/hook",
    "http://2130706433:{port}/hook", "http://0177.0.0.1:{port}/hook", "http://[::1]:{port}/hook",
    "http://[::ffff:127.0.0.1]:{port}/hook", "http://localhost:{port}/hook", "http://0.0.0.0:{port}/hook",
    "http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x", "http://10.0.0.5/x", "http://172.16.3.4/x",
    "http://192.168.1.1/x", "http://[fc00::1]/x", "http://100.64.0.1/x", "http://[2002:7f00:1::]/x",
    "http://[64:ff9b::a00:5]/x", "http://224.0.0.1/x",
]  # fmt: skip


@pytest.mark.parametrize("spelling", INWARD)
def test_inward_targets_are_refused_without_an_allow_list(app, api_client, spelling):
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow": []})
    url = spelling.format(port=8000)
    response = api_client.post("/api/v1/notification-receivers", json={"name": "in", "kind": "webhook", "url": url})
    assert response.status_code == 422, url
    assert "loopback, private or link-local" in response.text and "REDOLAB_WEBHOOK_ALLOW" in response.text


def test_a_public_address_or_an_unresolved_name_is_accepted(app, api_client):
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow": []})
    for n, url in enumerate(("http://8.8.8.8/hook", "https://hooks.invalid/x")):  # .invalid: checked at each send
        body = {"name": f"out {n}", "kind": "webhook", "url": url}
        assert api_client.post("/api/v1/notification-receivers", json=body).status_code == 201, url


def test_test_on_loopback_is_refused_without_an_allow_list(app, api_client, hook):
    """Test was a port scanner: any loopback port's answer (or its refusal) came back."""
    made = api_client.post("/api/v1/notification-receivers", json={"name": "hook", "kind": "webhook", "url": hook.url})
    assert made.status_code == 201  # the allow list named it then
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow": []})
    tested = api_client.post(f"/api/v1/notification-receivers/{made.json()['id']}/test")
    assert tested.status_code == 200
    assert tested.json()["delivered"] is False and tested.json()["result"].startswith("refused: the host is a loopback")
    assert hook.requests == []  # nothing was sent
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow": ["https://hooks.slack.com/"]})
    tested = api_client.post(f"/api/v1/notification-receivers/{made.json()['id']}/test")
    assert tested.json()["result"] == "refused: the URL is under no entry of REDOLAB_WEBHOOK_ALLOW"
    assert hook.requests == []


@pytest.fixture
def resolver(monkeypatch):
    """Host names of the tests' choosing: each resolves to the addresses given, and every lookup is counted."""
    real, names, asked = socket.getaddrinfo, {}, []

    def getaddrinfo(host, port, *args, **kwargs):
        asked.append(host)
        if host in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host].pop(0), port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names, asked


def test_a_name_that_resolves_inward_is_refused(app, api_client, resolver, session, sessions, settings, secret_key):
    names, _ = resolver
    names["inside.example"] = ["10.0.0.5"]
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow": []})
    body = {"name": "in", "kind": "webhook", "url": "https://inside.example/hook"}
    assert api_client.post("/api/v1/notification-receivers", json=body).status_code == 422


def test_the_connection_goes_to_the_address_checked(resolver, session, sessions, settings, secret_key, hook):
    """DNS rebinding: a name public when checked, loopback when connected. The check's answer is the one
    connected to; the name is never resolved a second time."""
    names, asked = resolver
    port = hook.server_address[1]
    url = f"http://rebind.example:{port}/hook"
    receiver = add_receiver(session, allowing(settings, url), secret_key, url=url).receiver
    names["rebind.example"] = ["127.0.0.1", "10.9.9.9"]  # the second answer would be the rebinding one
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    (row,) = queue(session, settings, environment, watch, check)
    assert delivery.deliver_due(sessions, settings=allowing(settings, url), secret_key=secret_key, worker_id="w1") == 1
    assert reread(session, row.id).last_result == "HTTP 200" and len(hook.requests) == 1
    assert asked.count("rebind.example") == 1 and names["rebind.example"] == ["10.9.9.9"]
    assert hook.requests[0][1]["Host"] == f"rebind.example:{port}"  # the URL's host, as the receiver expects
    # and at send time, without the allow list, the name's inward answer is refused
    names["rebind.example"] = ["127.0.0.1"]
    (again,) = queue(session, settings, environment, watch, check, transition=2, to_state="ok")
    delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1")
    assert reread(session, again.id).last_result.startswith("refused:") and len(hook.requests) == 1


def test_https_to_the_checked_address_still_verifies_the_urls_host(
    session, sessions, settings, secret_key, tmp_path, monkeypatch, hook
):
    """The connection goes to the address checked, and TLS still checks the certificate against the
    URL's host name (SNI and verification): a certificate for localhost passes, an untrusted one fails."""
    cert_path, key_path = _self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert_path, key_path)
    hook.socket = server_tls.wrap_socket(hook.socket, server_side=True)
    url = f"https://localhost:{hook.server_address[1]}/hook"
    settings = allowing(settings, url)
    receiver = add_receiver(session, settings, secret_key, url=url).receiver
    environment, watch, check = make_watch(session, receiver_ids=[receiver.id])
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_path))
    (row,) = queue(session, settings, environment, watch, check)
    delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1")
    assert reread(session, row.id).last_result == "HTTP 200" and len(hook.requests) == 1
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-file"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "no-such-dir"))
    (other,) = queue(session, settings, environment, watch, check, transition=2, to_state="ok")
    delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1")
    assert reread(session, other.id).last_result.startswith("TLS certificate not trusted")
    assert len(hook.requests) == 1


def test_every_spelling_of_an_inward_address_is_inward():
    for text in ("127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "::ffff:10.1.1.1", "0.0.0.0", "::",  # noqa: S104
                 "169.254.1.1", "fe80::1", "10.1.1.1", "172.31.255.255", "192.168.0.1", "fd12::1", "100.127.0.1",
                 "2002:a00:1::", "64:ff9b::7f00:1", "::7f00:1", "fec0::1", "ff02::1", "255.255.255.255"):  # fmt: skip
        assert targets.inward(ipaddress.ip_address(text)), text
    for text in ("8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "172.32.0.1", "100.128.0.1"):
        assert not targets.inward(ipaddress.ip_address(text)), text


@pytest.mark.parametrize(
    "body, where",
    [
        ({"kind": "webhook", "url": "ftp://example.com/x"}, "http"),
        ({"kind": "webhook", "url": "https://user:pw@example.com/hook"}, "user name and password"),
        ({"kind": "webhook", "url": "https:///hook"}, "host"),
        ({"kind": "webhook"}, "needs its URL"),
        ({"kind": "slack", "url": "https://example.com/x", "signing_secret": "s" * 20}, "Only a webhook"),
        ({"kind": "webhook", "url": "https://example.com/x", "signing_secret": "short"}, "signing secret"),
        ({"kind": "email", "email_to": "DBA <dba@example.com>"}, "plain mail address"),
        ({"kind": "email", "email_to": "a@example.com, b@example.com"}, "plain mail address"),
        ({"kind": "email", "url": "https://example.com/x"}, "email_to"),
        ({"kind": "pager", "url": "https://example.com/x"}, "webhook"),
    ],
)
def test_unusable_receivers_are_refused(api_client, body, where):
    response = api_client.post("/api/v1/notification-receivers", json={"name": "r", **body})
    assert response.status_code == 422
    assert where in response.text


def test_receiver_names_are_compared_as_people_read_them(api_client):
    first = {"name": "DBA Team", "kind": "email", "email_to": "dba@example.com"}
    assert api_client.post("/api/v1/notification-receivers", json=first).status_code == 201
    for alike in ("dba team", "ＤＢＡ Team", "DBA  TEAM"):
        response = api_client.post("/api/v1/notification-receivers", json={**first, "name": alike})
        assert response.status_code == 409, alike
        assert "DBA Team" in response.json()["detail"][0]["msg"]
    for unseen in ("\u3164", "DBA\u200b Team"):  # a filler only; a zero-width space
        assert api_client.post("/api/v1/notification-receivers", json={**first, "name": unseen}).status_code == 422


def test_shown_urls_stop_after_the_first_path_segment():
    assert shown_url("https://hooks.slack.com/services/T0/B0/secret") == "https://hooks.slack.com/services/…"
    assert shown_url("http://127.0.0.1:8080/hook") == "http://127.0.0.1:8080/hook"
    assert shown_url("https://example.com/hook?token=abc") == "https://example.com/hook?…"
    assert shown_url(None) is None


def test_a_silent_receiver_delays_only_itself_and_its_breaker_opens(
    session, sessions, settings, secret_key, hook, silent_port
):
    """Issue 57, item 3: each receiver in its own thread, newest change first; a receiver that times out
    three times in a row is skipped for BREAKER_SECONDS (failing_until), its rows left pending."""
    mute = f"http://127.0.0.1:{silent_port}/hook"
    settings = allowing(settings.model_copy(update={"notification_timeout_seconds": 1.0}), hook.url, mute)
    healthy = add_receiver(session, settings, secret_key, url=hook.url).receiver
    silent = add_receiver(session, settings, secret_key, url=mute, name="mute")
    silent = silent.receiver
    environment, watch, check = make_watch(session, receiver_ids=[healthy.id, silent.id])
    for n in range(1, 5):
        queue(session, settings, environment, watch, check, transition=n)
    session.commit()
    started = time.monotonic()
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1", wait=False) == 8
    deadline = time.monotonic() + 10  # one after the other they would take 3 s: three 1 s timeouts first
    while len(hook.requests) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    healthy_done = time.monotonic() - started
    transitions = [json.loads(body)["transition"] for _, _, body in hook.requests]
    assert transitions == [4, 3, 2, 1], transitions  # every change, newest first
    assert healthy_done < 2.0, f"the healthy receiver waited {healthy_done:.2f} s behind the silent one's 1 s timeouts"
    while time.monotonic() < deadline:  # the silent one's thread: three timeouts, then its breaker opens
        session.expire_all()
        if session.get(NotificationReceiver, silent.id).failing_until is not None:
            break
        time.sleep(0.1)
    session.expire_all()
    assert session.get(NotificationReceiver, silent.id).failures_in_row == delivery.BREAKER_FAILURES
    mute = [row for row in session.scalars(select(Notification).where(Notification.receiver_id == silent.id))]
    assert sorted(row.attempts for row in mute) == [0, 1, 1, 1]  # the fourth was never tried: skipped
    assert delivery.deliver_due(sessions, settings=settings, secret_key=secret_key, worker_id="w1") == 0
