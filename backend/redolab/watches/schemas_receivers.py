"""API schemas of notification receivers (admins set them): where a watch's state changes are sent.

A webhook's signing secret goes in once (or redolab makes one) and comes back once, in the answer to
the create (ReceiverCreated); ReceiverPublic never carries it, and shows the URL only up to its first
path segment (a Slack or Teams hook URL holds its token in the path)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, SecretStr, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from redolab.core.fields import OneLine, VisibleName, blank_to_none
from redolab.core.schema_rules import HOST_NAME, PRINTABLE_LINE, TextPattern, absent, document, given, when_equals
from redolab.watches.models import NotificationReceiver

ReceiverKind = Literal["webhook", "slack", "teams", "email"]
URL_KINDS = ("webhook", "slack", "teams")
MIN_SECRET_LENGTH = 16

_LOCAL_PART = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}")
_DOMAIN_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
# What the document says of url and email_to (narrower than url_problem and email_problem accept): a host
# name whose last label starts with a letter (no address literal), a port, a path of printable ASCII.
URL_PATTERN = rf"^https?://{HOST_NAME}(:[1-9][0-9]{{0,3}})?(/[!-~]*)?$"
EMAIL_PATTERN = rf"^{_LOCAL_PART.pattern}@{HOST_NAME}$"
SECRET_PATTERN = rf"^[!-~][ -~]{{{MIN_SECRET_LENGTH - 2},254}}[!-~]$"

# Compared by name_key (case, width and invisible characters aside); never only blank or filler.
ReceiverName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    OneLine,
    VisibleName,
    TextPattern(PRINTABLE_LINE),
]
ReceiverUrl = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=2000), OneLine, TextPattern(URL_PATTERN)
]
EmailAddress = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=320), OneLine, TextPattern(EMAIL_PATTERN)
]


def url_problem(url: str) -> str | None:
    """Why `url` cannot receive notifications (None: it can): http(s) only, a host, no user or
    password in it (a credential in a URL ends up in logs and proxies: use the signing secret)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError on a port that is not a number in range)
    except ValueError:
        return "This is not a URL: write it as https://host/path."
    if parts.scheme not in ("http", "https"):
        return "Use an http:// or https:// URL."
    if not parts.hostname:
        return "The URL needs a host name: https://host/path."
    if "@" in parts.netloc:
        return "Leave the user name and password out of the URL: a webhook is authenticated by its signing secret."
    if any(ch.isspace() for ch in url):
        return "A URL has no spaces: encode them as %20."
    return None


def email_problem(address: str) -> str | None:
    """Why `address` is not one plain mail address (None: it is): local@domain, no display name,
    no list, no comments."""
    local, at, domain = address.rpartition("@")
    labels = domain.split(".")
    if not at or not _LOCAL_PART.fullmatch(local) or not all(_DOMAIN_LABEL.fullmatch(label) for label in labels):
        return "Give one plain mail address such as dba-team@example.com (no name, no list)."
    return None


class ReceiverCreate(BaseModel):
    """A webhook (`url`; signed with `signing_secret`, which redolab makes when left out), a Slack or
    Teams incoming webhook (`url`), or a mail address (`email_to`, sent through REDOLAB_SMTP_HOST)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=document(
            when_equals(
                "kind",
                URL_KINDS,
                then={"allOf": [given("url"), absent("email_to")]},
                otherwise={"allOf": [given("email_to"), absent("url", "signing_secret")]},
            ),
            when_equals("kind", ("slack", "teams"), then=absent("signing_secret")),
        ),
    )

    name: ReceiverName
    kind: ReceiverKind
    url: ReceiverUrl | None = None
    email_to: EmailAddress | None = None
    signing_secret: Annotated[SecretStr | None, TextPattern(SECRET_PATTERN)] = (
        None  # webhook only; shown back once when redolab makes it
    )

    @model_validator(mode="before")
    @classmethod
    def _blanks_are_absent(cls, data):
        if isinstance(data, dict):
            return {
                key: blank_to_none(value) if key in ("url", "email_to", "signing_secret") else value
                for key, value in data.items()
            }
        return data

    @model_validator(mode="after")
    def _fits_kind(self) -> ReceiverCreate:
        if self.kind in URL_KINDS:
            if self.url is None:
                raise PydanticCustomError("url_required", "A {kind} receiver needs its URL.", {"kind": self.kind})
            if self.email_to is not None:
                raise PydanticCustomError(
                    "email_to_unused", "A {kind} receiver takes a URL, not email_to.", {"kind": self.kind}
                )
            if problem := url_problem(self.url):
                raise PydanticCustomError("url", "url: {problem}", {"problem": problem})
        else:
            if self.email_to is None:
                raise PydanticCustomError("email_to_required", "An email receiver needs email_to (one address).")
            if self.url is not None:
                raise PydanticCustomError("url_unused", "An email receiver takes email_to, not a URL.")
            if problem := email_problem(self.email_to):
                raise PydanticCustomError("email_to", "email_to: {problem}", {"problem": problem})
        if self.signing_secret is not None:
            secret = self.signing_secret.get_secret_value()
            if self.kind != "webhook":
                raise PydanticCustomError(
                    "signing_secret_unused",
                    "Only a webhook receiver is signed: Slack and Teams check no signature (their URL is the secret).",
                )
            if not MIN_SECRET_LENGTH <= len(secret) <= 256 or not secret.isprintable() or secret != secret.strip():
                raise PydanticCustomError(
                    "signing_secret",
                    "The signing secret needs {least} to 256 printable characters without spaces at the ends "
                    "(or leave it out and redolab makes one).",
                    {"least": MIN_SECRET_LENGTH},
                )
        return self


def shown_url(url: str | None) -> str | None:
    """The URL as lists show it: scheme, host and first path segment; what follows ("/…", "?…") may
    be the hook's token."""
    if url is None:
        return None
    parts = urlsplit(url)
    segments = parts.path.split("/")
    first = "/".join(segments[:2])  # "" and the first segment
    more = "/…" if len(segments) > 2 and any(segments[2:]) else ""
    query = "?…" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{first}{more}{query}"


class ReceiverPublic(BaseModel):
    """Everything about a receiver except its secret (and its URL's path beyond the first segment)."""

    id: int
    name: str
    kind: ReceiverKind
    url: str | None  # shortened: shown_url
    email_to: str | None
    signed: bool  # a webhook with a signing secret (X-Redolab-Signature)
    created_by: str
    created_at: datetime

    @classmethod
    def of(cls, receiver: NotificationReceiver) -> ReceiverPublic:
        return cls(
            id=receiver.id,
            name=receiver.name,
            kind=receiver.kind,
            url=shown_url(receiver.url),
            email_to=receiver.email_to,
            signed=receiver.encrypted_secret is not None,
            created_by=receiver.created_by,
            created_at=receiver.created_at,
        )


class ReceiverCreated(ReceiverPublic):
    """The answer to a create: the webhook's signing secret, this once and never again."""

    signing_secret: str | None


class ReceiversPublic(BaseModel):
    data: list[ReceiverPublic]
    count: int


class ReceiverTestResult(BaseModel):
    """A test message sent at once (nothing queued): whether the receiver took it, and its status only."""

    delivered: bool
    result: str  # "HTTP 200", "SMTP 250", "redirect not followed (HTTP 302)", "timed out after 5 s"
