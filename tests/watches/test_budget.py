"""Notifications with a budget (issue 57, item 2): a flapping watch with four receivers sends each of them at
most the hourly budget, names itself flapping, and folds the rest into one digest per receiver once the
receiver's last hour has room again."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from redolab.core.config import get_settings
from redolab.core.db import utcnow
from redolab.environments.models import Environment
from redolab.watches import service
from redolab.watches.budget import BUDGET_PER_HOUR, COUNTED, FLAPPING_CHANGES, release_digests
from redolab.watches.messages import email_message, queue_notifications
from redolab.watches.models import Notification, Watch, WatchState
from redolab.watches.schemas import WatchCreate
from tests.watches.test_watches import local_pair, receiver

CHANGES = 30  # a link flapping every two minutes for an hour


def flapping_watch(session):
    environment, primary, standby = local_pair(session)
    receivers = [receiver(session, f"r{i}") for i in range(4)]
    watch = service.create_watch(
        session=session, environment=environment, requested_by="alice",
        watch_in=WatchCreate(name="flappy", client_host_id=primary.id, server_host_id=standby.id,
                             duration_seconds=1, every_seconds=60, receiver_ids=[r.id for r in receivers]),
    )  # fmt: skip
    states = [WatchState.failing, WatchState.ok]
    for number in range(1, CHANGES + 1):
        queue_notifications(
            session=session, watch=watch, environment=session.get(Environment, watch.environment_id), check=None,
            from_state=states[number % 2], to_state=states[(number + 1) % 2], transition=number,
            settings=get_settings(),
        )  # fmt: skip
        session.commit()
    return watch, receivers


def rows(session, watch: Watch) -> list[Notification]:
    return list(session.scalars(select(Notification).where(Notification.watch_id == watch.id)))


def test_each_receiver_gets_at_most_the_budget_and_the_rest_is_folded(session):
    watch, receivers = flapping_watch(session)
    found = rows(session, watch)
    for each in receivers:
        mine = [row for row in found if row.receiver_id == each.id]
        assert len(mine) == CHANGES
        sent = sorted(row.transition for row in mine if row.status in COUNTED)
        assert sent == list(range(1, BUDGET_PER_HOUR + 1))  # the first twelve, in order
        assert {row.status for row in mine if row.transition > BUDGET_PER_HOUR} == {"folded"}
    fourth = next(row for row in found if row.transition == FLAPPING_CHANGES)
    assert fourth.payload["flapping"] is True and fourth.payload["changes_last_hour"] == FLAPPING_CHANGES
    assert not next(row for row in found if row.transition == 1).payload["flapping"]
    subject = email_message(fourth.payload, get_settings(), "ops@example.net")["Subject"]
    assert f"FLAPPING ({FLAPPING_CHANGES} changes in the last hour)" in subject


def test_one_digest_per_receiver_once_the_hour_has_room(session):
    watch, receivers = flapping_watch(session)
    assert release_digests(session) == 0  # the receivers' last hour is full
    later = utcnow() + timedelta(minutes=61)
    assert release_digests(session, later) == len(receivers)
    assert release_digests(session, later) == 0  # each row moves once
    found = rows(session, watch)
    for each in receivers:
        mine = {row.transition: row for row in found if row.receiver_id == each.id}
        digest = mine[CHANGES]
        assert digest.status == "pending" and digest.payload["folded"]["changes"] == CHANGES - BUDGET_PER_HOUR
        assert {mine[n].status for n in range(BUDGET_PER_HOUR + 1, CHANGES)} == {"digested"}
    body = email_message(digest.payload, get_settings(), "ops@example.net").get_content()
    assert f"{CHANGES - BUDGET_PER_HOUR} changes since" in body
