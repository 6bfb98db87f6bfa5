"""Every validated text field, walked with a trailing newline, an embedded newline and control
characters: refused with 422, or (a trailing newline only) stored trimmed, never stored as sent."""

from __future__ import annotations

import pytest

from tests.factories import make_environment, make_host

ONE_LINE = "one-line"  # the field takes one line; multi-line fields take newlines but no other controls
TEXT = "text"

# (route, a valid payload, field, a valid value, kind)
FIELDS = [
    ("environments", {"name": "env-ok"}, "name", "env-ok", ONE_LINE),
    ("environments", {"name": "env-ok"}, "description", "a description", TEXT),
    ("environments", {"name": "env-ok"}, "notes", "some notes", TEXT),
    ("environments", {"name": "env-ok"}, "time_zone", "Europe/Berlin", ONE_LINE),
    ("hosts", {"role": "primary", "name": "db1", "ssh_address": "db1.example.com", "ssh_user": "oracle"},
     "name", "db1", ONE_LINE),
    ("hosts", {"role": "primary", "name": "db1", "ssh_address": "db1.example.com", "ssh_user": "oracle"},
     "ssh_address", "db1.example.com", ONE_LINE),
    ("hosts", {"role": "primary", "name": "db1", "ssh_address": "db1.example.com", "ssh_user": "oracle"},
     "ssh_user", "oracle", ONE_LINE),
    ("hosts", {"role": "primary", "name": "db1", "ssh_address": "db1.example.com", "ssh_user": "oracle"},
     "data_address", "10.0.0.5", ONE_LINE),
    ("hosts", {"role": "primary", "name": "db1", "ssh_address": "db1.example.com", "ssh_user": "oracle"},
     "data_interface", "eth1", ONE_LINE),
    ("credentials", {"name": "agent", "kind": "agent"}, "name", "agent", ONE_LINE),
    ("runs", {}, "label", "a label", ONE_LINE),
    ("runs", {}, "notes", "run notes", TEXT),
    ("runs", {}, "tags", "mtu9000", ONE_LINE),
    ("runs", {}, "write_dir", "/u01/redo", ONE_LINE),
    ("tokens", {"name": "cron"}, "name", "cron", ONE_LINE),
    ("users", {"username": "walker", "password": "violet tractor sonnet", "role": "viewer"},
     "username", "walker", ONE_LINE),
]  # fmt: skip


def _variants(valid: str, kind: str) -> list[tuple[str, bool]]:
    """(value, may it be stored trimmed): trailing line breaks may be trimmed (or kept, in a
    multi-line field); a control character inside, or a line break inside a one-line field, is refused."""
    head, tail = valid[:2], valid[2:]
    bad = [f"{head}\x00{tail}", f"{head}\x1b[2J{tail}", f"{head}\x7f{tail}", f"{head}\u200e{tail}"]
    if kind == ONE_LINE:
        bad += [f"{head}\n{tail}", f"{head}\r{tail}", f"{head}\t{tail}", f"{head}\u2028{tail}"]
    return [(f"{valid}\n", True), (f"{valid}\u2028", True), *[(value, False) for value in bad]]


@pytest.mark.parametrize(("route", "payload", "field", "valid", "kind"), FIELDS,
                         ids=[f"{r}.{f}" for r, _, f, _, _ in FIELDS])  # fmt: skip
def test_no_field_stores_a_newline_or_control_character(api_client, session, route, payload, field, valid, kind):
    environment = make_environment(session, name="walk")
    urls = {
        "environments": "/api/v1/environments",
        "hosts": f"/api/v1/environments/{environment.id}/hosts",
        "credentials": f"/api/v1/environments/{environment.id}/credentials",
        "runs": f"/api/v1/environments/{environment.id}/runs",
        "tokens": "/api/v1/tokens",
        "users": "/api/v1/users",
    }
    if route == "runs":
        primary = make_host(session, environment, role="primary", name="p", transport="local")
        standby = make_host(session, environment, role="standby", name="s", transport="local")
        payload = {"client_host_id": primary.id, "server_host_id": standby.id}
    for index, (value, may_trim) in enumerate(_variants(valid, kind)):
        if field in ("name", "username"):  # unique names: each try its own
            valid_here = f"{valid}{index}"
            value = value.replace(valid, valid_here) if may_trim else value[:2] + value[2:] + str(index)
        else:
            valid_here = valid
        body = {**payload, field: [value] if field == "tags" else value}
        for unique in ("name", "username"):
            if unique in body and field != unique:
                body[unique] = f"{body[unique]}{index}"
        if route == "hosts":
            body["node_number"] = index + 1
        response = api_client.post(urls[route], json=body)
        if response.status_code in (200, 201):
            stored = response.json().get(field)
            stored = stored[0] if isinstance(stored, list) else stored
            kept = kind == TEXT and stored == value  # a multi-line field may keep its last line break
            assert may_trim and (stored == valid_here or kept), (field, repr(value), repr(stored))
        else:
            assert response.status_code == 422, (field, repr(value), response.status_code, response.text[:200])
