"""Watches end to end on "This machine" hosts: checks fired by the worker's schedule, real redoprobe runs
judged against the requirement (or a threshold), the state moving only after M of N, one notification
row per change and receiver however many workers judge, skipped checks never failing, refusals 4xx."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy import func, select

from redolab.core.db import make_sessionmaker, utcnow
from redolab.core.units import MIB
from redolab.runs.models import Run, RunEvent, RunStatus
from redolab.watches import service
from redolab.watches.models import (
    CheckStatus,
    Notification,
    NotificationReceiver,
    Verdict,
    Watch,
    WatchCheck,
    WatchState,
)
from redolab.watches.schemas import WatchCreate, check_run
from tests.execution import execute_next
from tests.factories import make_environment, make_host


def local_pair(session, nodes: int = 1):
    environment = make_environment(session, primary_rac_nodes=nodes, standby_rac_nodes=nodes)
    for role in ("primary", "standby"):
        for node in range(1, nodes + 1):
            make_host(session, environment, name=f"{role[0]}{node}", transport="local", role=role, node_number=node)
    session.refresh(environment)
    primary = next(h for h in environment.hosts if h.role.value == "primary")
    standby = next(h for h in environment.hosts if h.role.value == "standby")
    return environment, primary, standby


def receiver(session, name: str = "ops") -> NotificationReceiver:
    found = NotificationReceiver(name=name, kind="webhook", url="http://127.0.0.1:9/hook", created_by="admin")
    session.add(found)
    session.commit()
    return found


def check_once(session, engine, secret_key, watch_id: int) -> WatchCheck:
    """Fire the watch's next check now and run its runs through the worker (which judges it)."""
    sessions = make_sessionmaker(engine)
    session.execute(Watch.__table__.update().where(Watch.id == watch_id).values(next_at=utcnow()))
    session.commit()
    assert service.fire_due_watches(sessions) == 1
    while execute_next(engine, secret_key):
        pass
    session.expire_all()
    return session.scalars(
        select(WatchCheck).where(WatchCheck.watch_id == watch_id).order_by(WatchCheck.id.desc())
    ).first()


def test_a_threshold_above_the_link_fails_after_two_of_three_and_recovers(session, engine, secret_key):
    environment, primary, standby = local_pair(session)
    ops = receiver(session)
    watch = service.create_watch(
        session=session,
        environment=environment,
        requested_by="alice",
        watch_in=WatchCreate(
            name="loopback",
            client_host_id=primary.id,
            server_host_id=standby.id,
            duration_seconds=1,
            every_seconds=60,
            threshold_bytes_per_second=1e12 - 1,
            receiver_ids=[ops.id],
        ),
    )
    first = check_once(session, engine, secret_key, watch.id)
    assert first.status is CheckStatus.judged and first.verdict is Verdict.failing, first.reason
    assert first.measured_bytes_per_second > 10 * MIB and first.required_bytes_per_second == 1e12 - 1
    assert session.get(Run, first.run_ids[0]).requested_by == f"alice (watch #{watch.id})"
    session.refresh(watch)
    assert watch.state is WatchState.unknown  # one verdict is not yet M
    check_once(session, engine, secret_key, watch.id)
    session.refresh(watch)
    assert watch.state is WatchState.failing and watch.transitions == 1
    sent = session.scalars(select(Notification).where(Notification.watch_id == watch.id)).all()
    assert [(n.from_state, n.to_state, n.receiver_id, n.transition) for n in sent] == [
        ("unknown", "failing", ops.id, 1)
    ]
    assert sent[0].payload["to_state"] == "failing"
    # the threshold lowered under the link: two OK checks recover, one more notification
    session.execute(Watch.__table__.update().where(Watch.id == watch.id).values(threshold_bytes_per_second=MIB))
    session.commit()
    check_once(session, engine, secret_key, watch.id)
    session.refresh(watch)
    assert watch.state is WatchState.failing  # one OK of the last three: not yet
    check_once(session, engine, secret_key, watch.id)
    session.refresh(watch)
    assert watch.state is WatchState.ok and watch.transitions == 2
    changes = session.scalars(
        select(Notification.to_state).where(Notification.watch_id == watch.id).order_by(Notification.id)
    ).all()
    assert changes == ["failing", "ok"]


def test_a_busy_host_skips_the_check_and_never_fails(session, engine, secret_key):
    from tests.execution import request_run

    environment, primary, standby = local_pair(session)
    watch = service.create_watch(
        session=session,
        environment=environment,
        requested_by="alice",
        watch_in=WatchCreate(
            name="busy",
            client_host_id=primary.id,
            server_host_id=standby.id,
            duration_seconds=1,
            every_seconds=60,
            threshold_bytes_per_second=1e12 - 1,
            agree_m=1,
            of_n=1,
        ),
    )
    request_run(session, environment, primary, standby, duration_seconds=1)  # holds the hosts (queued)
    session.execute(Watch.__table__.update().where(Watch.id == watch.id).values(next_at=utcnow()))
    session.commit()
    assert service.fire_due_watches(make_sessionmaker(engine)) == 1
    session.expire_all()
    (check,) = session.scalars(select(WatchCheck).where(WatchCheck.watch_id == watch.id)).all()
    assert check.status is CheckStatus.skipped and check.verdict is Verdict.skipped
    assert "busy with run #" in check.reason
    session.refresh(watch)
    assert watch.state is WatchState.unknown and watch.transitions == 0


def a_check_whose_run_failed(session, engine, code: str | None, message: str | None):
    """A watch (1 of 1 over 10 MiB/s) whose check fired and whose run failed, its client's error event
    carrying `code` (None: no error event, as when SSH failed); not judged yet."""
    environment, primary, standby = local_pair(session)
    watch = service.create_watch(
        session=session,
        environment=environment,
        requested_by="alice",
        watch_in=WatchCreate(
            name="down",
            client_host_id=primary.id,
            server_host_id=standby.id,
            duration_seconds=1,
            every_seconds=60,
            threshold_bytes_per_second=10 * MIB,
            agree_m=1,
            of_n=1,
        ),
    )
    session.execute(Watch.__table__.update().where(Watch.id == watch.id).values(next_at=utcnow()))
    session.commit()
    assert service.fire_due_watches(make_sessionmaker(engine)) == 1
    session.expire_all()
    check = session.scalars(select(WatchCheck).where(WatchCheck.watch_id == watch.id)).one()
    (run,) = [session.get(Run, i) for i in check.run_ids]
    run.status, run.failure_reason = RunStatus.failed, f"redoprobe client on {primary.name}: {message or 'ssh: gone'}"
    if code is not None:
        line = json.dumps({"event": "error", "data": {"role": "client", "message": message, "code": code}})
        session.add(RunEvent(run_id=run.id, seq=1, role="client", event="error", line=line))
    session.commit()
    return watch, check, run


@pytest.mark.parametrize(
    ("code", "message", "verdict"),
    [
        ("timeout", "connect to 10.0.0.2 port 5201: Connection timed out", Verdict.failing),
        ("connect", "connect to 10.0.0.2 port 5201: Connection refused", Verdict.failing),
        ("peer_lost", "the server went away after 3.0 s", Verdict.failing),
        ("resolve", "cannot resolve standby.example", Verdict.skipped),  # a name, not the link
        (None, None, Verdict.skipped),  # no error from the client: an SSH failure, redolab stopped
    ],
)
def test_a_link_that_carries_nothing_fails_and_other_failures_skip(session, engine, secret_key, code, message, verdict):
    """A link that is down measures 0 bytes/s: FAILING after M of N like a slow one (the check said
    "skipped" for every failed run, so a dead link never alerted). A failure that is not the link's
    (its client never said the connection failed) stays skipped."""
    watch, _, run = a_check_whose_run_failed(session, engine, code, message)
    judged = service.judge_run(session=session, run_id=run.id)
    assert judged is not None and judged.verdict is verdict, (judged.verdict, judged.reason)
    session.refresh(watch)
    if verdict is Verdict.failing:
        assert judged.status is CheckStatus.judged and judged.measured_bytes_per_second == 0
        assert f"run #{run.id}: the link did not carry it ({message}), 0 bytes/s" in judged.reason
        assert watch.state is WatchState.failing
    else:
        assert judged.status is CheckStatus.skipped and "not measured" in judged.reason
        assert watch.state is WatchState.unknown


def test_the_verdict_and_the_state_it_leads_to_are_one_transaction(session, engine, monkeypatch):
    """A worker that fails between judging a check and moving the watch's state leaves neither: the
    check is still running and is judged again, rather than a verdict whose state change never came."""
    watch, check, run = a_check_whose_run_failed(session, engine, "peer_lost", "the server went away")

    def dies(**_):
        raise RuntimeError("the worker died here")

    with make_sessionmaker(engine)() as own:
        monkeypatch.setattr(service, "queue_notifications", dies)
        with pytest.raises(RuntimeError):
            service.judge_run(session=own, run_id=run.id)
        own.rollback()
    session.expire_all()
    assert session.get(WatchCheck, check.id).status is CheckStatus.running  # not judged: judged again below
    assert session.get(Watch, watch.id).state is WatchState.unknown
    monkeypatch.undo()
    judged = service.judge_run(session=session, run_id=run.id)
    assert judged.verdict is Verdict.failing and session.get(Watch, watch.id).state is WatchState.failing


def test_two_workers_judging_at_once_notify_once(session, engine, secret_key):
    environment, primary, standby = local_pair(session)
    ops, pager = receiver(session, "ops"), receiver(session, "pager")
    watch = service.create_watch(
        session=session,
        environment=environment,
        requested_by="alice",
        watch_in=WatchCreate(
            name="race",
            client_host_id=primary.id,
            server_host_id=standby.id,
            duration_seconds=1,
            every_seconds=60,
            threshold_bytes_per_second=1e12 - 1,
            agree_m=1,
            of_n=1,
            receiver_ids=[ops.id, pager.id],
        ),
    )
    session.execute(Watch.__table__.update().where(Watch.id == watch.id).values(next_at=utcnow()))
    session.commit()
    assert service.fire_due_watches(make_sessionmaker(engine)) == 1
    assert execute_next(engine, secret_key)  # the run ran and was judged: reset the judgement and judge twice at once
    session.expire_all()
    check = session.scalars(select(WatchCheck).where(WatchCheck.watch_id == watch.id)).one()
    session.execute(WatchCheck.__table__.update().values(status=CheckStatus.running, verdict=None))
    session.execute(Notification.__table__.delete())
    session.execute(Watch.__table__.update().values(state=WatchState.unknown, transitions=0))
    session.commit()
    gate = threading.Barrier(2)

    def judge():
        sessions = make_sessionmaker(engine)
        with sessions() as own:
            gate.wait(timeout=10)
            service.judge_run(session=own, run_id=check.run_ids[0])

    threads = [threading.Thread(target=judge) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    session.expire_all()
    assert session.get(Watch, watch.id).transitions == 1
    rows = session.scalars(select(Notification).where(Notification.watch_id == watch.id)).all()
    assert sorted(n.receiver_id for n in rows) == sorted([ops.id, pager.id])  # one per receiver, once


def test_fired_once_per_occurrence_by_two_workers(session, engine):
    environment, primary, standby = local_pair(session)
    watch = service.create_watch(
        session=session,
        environment=environment,
        requested_by="alice",
        watch_in=WatchCreate(
            name="once", client_host_id=primary.id, server_host_id=standby.id, duration_seconds=1, every_seconds=60
        ),
    )
    now = utcnow() + timedelta(seconds=1)
    gate, fired = threading.Barrier(2), []

    def fire():
        gate.wait(timeout=10)
        fired.append(service.fire_due_watches(make_sessionmaker(engine), now))

    threads = [threading.Thread(target=fire) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(fired) == [0, 1]
    assert session.scalar(select(func.count(WatchCheck.id)).where(WatchCheck.watch_id == watch.id)) == 1


def test_refusals_name_what_and_write_nothing(api_client, session):
    environment, primary, standby = local_pair(session)
    url = f"/api/v1/environments/{environment.id}/watches"
    base = {"name": "w", "client_host_id": primary.id, "server_host_id": standby.id}
    for body, words in (
        ({**base, "every_seconds": "30 s"}, "once a minute"),
        ({**base, "duration_seconds": "5 min", "every_seconds": "5 min"}, "30 s shorter"),
        ({**base, "agree_m": 3, "of_n": 2}, "M cannot be more than N"),
        ({"name": "w"}, "client and the server"),
        ({**base, "receiver_ids": [999]}, "Receiver #999"),
        ({**base, "threshold_bytes_per_second": "40"}, "unit"),
        ({**base, "sockbuf_bytes": 1}, "4 KiB"),  # accepted once, and then never checked
        ({**base, "sockbuf_bytes": "4095 B"}, "4 KiB"),
        ({**base, "duration_seconds": "50 ms"}, "0.1 s"),  # its run's interval would be below the probe's
        ({**base, "duration_seconds": ""}, "cannot be left empty"),  # was min(1.0, None): a 500
        ({**base, "every_seconds": None}, "cannot be left empty"),
    ):
        refused = api_client.post(url, json=body)
        assert refused.status_code == 422, (body, refused.text)
        assert words in refused.text, (body, refused.text)
    assert session.scalar(select(func.count(Watch.id))) == 0
    made = api_client.post(url, json={**base, "threshold_bytes_per_second": "40 MiB/s"})
    assert made.status_code == 201, made.text
    assert made.json()["threshold_bytes_per_second"] == 40 * MIB and made.json()["state"] == "unknown"
    page = api_client.get(f"/api/v1/watches/{made.json()['id']}/checks")
    assert page.status_code == 200 and page.json() == []


def test_every_node_pair_stores_no_host_pair_it_was_sent(api_client, session):
    """Schemathesis sent all_node_pairs with host ids of no host: they were stored, and the foreign key
    refused the insert (a 500). Every node pair reads its hosts from the environment; ids sent with it
    are not the watch's."""
    environment, _primary, _standby = local_pair(session)
    url = f"/api/v1/environments/{environment.id}/watches"
    body = {"name": "w", "all_node_pairs": True, "client_host_id": 2147483646, "server_host_id": 2147483647}
    made = api_client.post(url, json=body)
    assert made.status_code == 201, made.text
    assert (made.json()["client_host_id"], made.json()["server_host_id"]) == (None, None)
    assert made.json()["path_label"] == "all node pairs (1)"


# What a watch accepts, its checks' runs accept: the run is built by one function for both. Blank text and
# null are "not given" to the unit parser (Schemathesis sent duration_seconds "": a TypeError, a 500).
NOT_GIVEN = st.sampled_from(["", None])
WATCH_FIELDS = st.fixed_dictionaries(
    {
        "name": st.text(min_size=1, max_size=120).filter(lambda name: name.isprintable() and name.strip()),
        "conns": st.integers(-1, 2000),
        "message_bytes": st.integers(-1, 300 * MIB) | NOT_GIVEN,
        # each boundary has a strategy of its own: one wide range rarely reaches the small values
        "sockbuf_bytes": st.none() | st.integers(-1, 8192) | st.integers(0, 2 * 1024 * MIB),
        "duration_seconds": st.floats(-1, 1, allow_nan=False) | st.floats(0, 400, allow_nan=False) | NOT_GIVEN,
        "every_seconds": st.floats(0, 90000, allow_nan=False) | st.just(86400.0) | NOT_GIVEN,
    }
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(fields=WATCH_FIELDS)
def test_every_watch_the_api_accepts_has_runs_the_run_schema_accepts(fields):
    try:
        watch_in = WatchCreate(client_host_id=1, server_host_id=2, **fields)
    except ValidationError:
        return
    check_run(watch_in, client_host_id=1, server_host_id=2)  # raises if the run's schema refuses it


def test_a_stored_watch_the_run_schema_refuses_is_skipped_with_the_reason(session, engine):
    """A watch stored before its fields were checked against the run's (a 1-byte socket buffer): each check
    is skipped with the run's own words, never an error that leaves the watch without checks."""
    environment, primary, standby = local_pair(session)
    watch = Watch(environment_id=environment.id, name="tiny", client_host_id=primary.id, server_host_id=standby.id,
                  path_label="p1 -> s1", sockbuf_bytes=1, duration_seconds=1, every_seconds=60,
                  requested_by="alice", next_at=utcnow())  # fmt: skip
    session.add(watch)
    session.commit()
    assert service.fire_due_watches(make_sessionmaker(engine)) == 1
    session.expire_all()
    (check,) = session.scalars(select(WatchCheck).where(WatchCheck.watch_id == watch.id))
    assert check.status is CheckStatus.skipped and "4 KiB" in check.reason, check.reason
    assert session.scalar(select(func.count(Run.id))) == 0
