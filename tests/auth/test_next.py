"""The page after login (issue 32, item 8): `next` is reduced to a path on this site. A browser
drops tabs and newlines from a URL, strips leading controls and spaces and reads a backslash as a
slash, so "/<tab>/evil.example" went to evil.example through HX-Redirect or Location."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redolab.web.auth import DEFAULT_NEXT, local_next
from tests.conftest import migrated_sqlite
from tests.factories import PASSWORD

SITE = "https://redolab.example/login"


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """HTTP behaviour, the same on either database: these tests run once, on SQLite."""
    return migrated_sqlite(tmp_path_factory)


def _as_a_browser_reads(location: str) -> str:
    """The host a browser goes to for a Location or HX-Redirect value on SITE (WHATWG URL parsing:
    leading and trailing C0 controls and spaces stripped, tabs and newlines removed anywhere, a
    backslash a slash in http(s) URLs)."""
    cleaned = re.sub(r"[\t\n\r]", "", location.strip("".join(map(chr, range(0x21)))))
    return urlsplit(urljoin(SITE, cleaned.replace("\\", "/"))).hostname or ""


HOSTILE = [
    "/\t/evil.example/phish",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "\t//evil.example",
    " //evil.example",
    "//evil.example",
    "///evil.example",
    "/\\/evil.example",
    "\\\\evil.example",
    "/\x00/evil.example",
    "/\x7f/evil.example",
    "https://evil.example/",
    "https:evil.example",
    "javascript:alert(1)",
    "//[evil",
    "evil.example",
    "",
]


@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize("htmx", [False, True], ids=["form", "htmx"])
def test_login_never_sends_the_browser_off_site(anonymous, user, hostile, htmx):
    anonymous.get("/login")
    headers = {"HX-Request": "true"} if htmx else {}
    answer = anonymous.post(
        "/login", data={"username": user.username, "password": PASSWORD, "next": hostile}, headers=headers
    )
    assert answer.status_code == (200 if htmx else 303), answer.text
    location = answer.headers["HX-Redirect" if htmx else "location"]
    assert _as_a_browser_reads(location) == "redolab.example", location
    assert location == DEFAULT_NEXT


@pytest.mark.parametrize(
    ("given_next", "expected"),
    [
        ("/environments/3?tab=runs", "/environments/3?tab=runs"),
        ("/runs/5#chart", "/runs/5"),
        ("/runs/\t5", "/runs/5"),
        ("/environments/é €", "/environments/%C3%A9%20%E2%82%AC"),  # a header is Latin-1: encoded
        ("/%2F%2Fevil.example", "/%2F%2Fevil.example"),  # a path on this site, as written
        ("/\\evil.example", "/evil.example"),  # the backslash removed: a path on this site
    ],
)
def test_a_local_next_is_kept_as_a_path_on_this_site(anonymous, user, given_next, expected):
    anonymous.get("/login")
    answer = anonymous.post(
        "/login",
        data={"username": user.username, "password": PASSWORD, "next": given_next},
        headers={"HX-Request": "true"},
    )
    assert answer.status_code == 200
    assert answer.headers["HX-Redirect"] == expected


def test_the_login_page_carries_only_the_reduced_next(anonymous):
    page = anonymous.get("/login", params={"next": "/\t/evil.example/phish"})
    assert page.status_code == 200
    assert 'value="/environments"' in page.text and "evil.example" not in page.text


_PIECES = [*"/\\\t\n\r \x00\x0b\x7f:@.?#%[]é€ae-", "//", "\\\\", "http:", "evil.example"]
_URLISH = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


@given(raw=st.one_of(_URLISH, st.text()))
def test_every_next_stays_on_this_site(raw):
    """For any text: a path on this site, ASCII (it goes into a header), never scheme-relative."""
    reduced = local_next(raw)
    assert reduced.startswith("/") and not reduced.startswith("//")
    assert reduced.isascii() and reduced.isprintable() and "\\" not in reduced and " " not in reduced
    assert _as_a_browser_reads(reduced) == "redolab.example"
