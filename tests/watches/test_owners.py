"""Watches have owners (issue 57, item 4): stopping, silencing and deleting a watch is its owner's or an
admin's; a silence over a day is an admin's; its receivers are told of a silence and a deletion; a deleted
watch keeps its history for admins; stop and start never make checks come sooner than the interval."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from redolab.auth.models import Role
from redolab.core.db import utcnow
from redolab.watches import service
from redolab.watches.models import Notification, WatchCheck
from redolab.watches.schemas import WatchCreate
from tests.factories import PASSWORD, make_user
from tests.watches.test_watches import local_pair, receiver


def bearer(client, username: str) -> dict[str, str]:
    token = client.post("/api/v1/auth/token", data={"username": username, "password": PASSWORD}).json()
    return {"Authorization": f"Bearer {token['access_token']}"}


@pytest.fixture
def watched(session):
    for name, role in (("olga", Role.operator), ("bob", Role.operator), ("ada", Role.admin), ("vic", Role.viewer)):
        make_user(session, name, role=role)
    environment, primary, standby = local_pair(session)
    ops = receiver(session)
    watch = service.create_watch(
        session=session, environment=environment, requested_by="olga",
        watch_in=WatchCreate(name="DG link", client_host_id=primary.id, server_host_id=standby.id,
                             duration_seconds=1, every_seconds=900, receiver_ids=[ops.id]),
    )  # fmt: skip
    return watch


def in_hours(hours: float) -> str:
    return (utcnow() + timedelta(hours=hours)).isoformat()


def test_another_operator_cannot_stop_silence_or_delete_it(anonymous, watched):
    bob, url = bearer(anonymous, "bob"), f"/api/v1/watches/{watched.id}"
    for method, path, body in (("post", "/stop", None), ("post", "/silence", {"until": in_hours(2)}),
                               ("delete", "/silence", None), ("delete", "", None)):  # fmt: skip
        response = anonymous.request(method.upper(), url + path, json=body, headers=bob)
        assert response.status_code == 403, (method, path, response.text)
        assert "Only olga" in response.text  # names who can
    assert anonymous.get(url, headers=bob).json()["active"] is True  # nothing changed
    assert anonymous.post(url + "/stop", headers=bearer(anonymous, "vic")).status_code == 403  # viewers never


def test_the_owner_silences_for_a_day_an_admin_for_longer_and_receivers_are_told(session, anonymous, watched):
    olga, ada, url = bearer(anonymous, "olga"), bearer(anonymous, "ada"), f"/api/v1/watches/{watched.id}/silence"
    refused = anonymous.post(url, json={"until": in_hours(30), "reason": "upgrade"}, headers=olga)
    assert refused.status_code == 403 and "longer than a day is an admin" in refused.text
    assert anonymous.post(url, json={"until": in_hours(20), "reason": "upgrade"}, headers=olga).status_code == 200
    assert anonymous.post(url, json={"until": in_hours(24 * 20), "reason": "move"}, headers=ada).status_code == 200
    notices = session.scalars(
        select(Notification).where(Notification.watch_id == watched.id).order_by(Notification.id)
    ).all()
    assert [n.transition for n in notices] == [-1, -2] and {n.status for n in notices} == {"pending"}
    assert notices[0].payload["event"] == "redolab.watch.silenced"
    assert (
        notices[0].payload["notice"].startswith("Watch silenced until ")
        and "by olga: upgrade" in notices[0].payload["notice"]
    )
    assert "by ada: move" in notices[1].payload["notice"]


def test_deleting_keeps_the_history_for_admins_and_tells_the_receivers(session, anonymous, watched):
    session.add(WatchCheck(watch_id=watched.id, status="judged", verdict="ok", reason="kept"))
    session.commit()
    olga, ada, url = bearer(anonymous, "olga"), bearer(anonymous, "ada"), f"/api/v1/watches/{watched.id}"
    assert anonymous.delete(url, headers=olga).status_code == 204
    assert anonymous.get(url, headers=olga).status_code == 404  # gone for everyone but admins
    listing = anonymous.get(f"/api/v1/environments/{watched.environment_id}/watches", headers=olga).json()
    assert listing == []
    kept = anonymous.get(url, headers=ada).json()
    assert kept["deleted_by"] == "olga" and kept["deleted_at"] and kept["active"] is False
    assert [c["reason"] for c in anonymous.get(url + "/checks", headers=ada).json()] == ["kept"]
    told = session.scalars(select(Notification).where(Notification.watch_id == watched.id)).all()
    assert [n.payload["event"] for n in told] == ["redolab.watch.deleted"]


def test_start_never_checks_sooner_than_the_interval(session, anonymous, watched):
    last = utcnow() - timedelta(seconds=100)
    session.add(WatchCheck(watch_id=watched.id, at=last, status="skipped", reason="busy"))
    session.commit()
    olga, url = bearer(anonymous, "olga"), f"/api/v1/watches/{watched.id}"
    assert anonymous.post(url + "/stop", headers=olga).status_code == 200
    assert anonymous.post(url + "/start", headers=olga).status_code == 200
    session.expire_all()
    watch = service.get_watch(session=session, watch_id=watched.id)
    assert watch.next_at >= last + timedelta(seconds=900) - timedelta(seconds=1)  # not now: 800 s from now
