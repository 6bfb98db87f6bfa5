"""What a rehearsal keeps: its schedule once (its runs name it with the connections they replay, and
replay exactly those connections' slots), each user's stored schedules under a cap checked before
anything is written, and an admin's delete of a finished rehearsal that frees the room."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.auth.models import Role
from redolab.core.errors import FieldError
from redolab.rehearsals.models import Rehearsal
from redolab.rehearsals.schedule import parse_schedule, render
from redolab.remote.local import LocalTransport
from redolab.runs.models import ReplaySchedule, Run, RunStatus
from redolab.runs.probes import replay_text, schedule_part, schedule_path, upload_schedule
from tests.factories import PASSWORD, make_user
from tests.rehearsals.test_rehearsal_runs import archived_log_csv, count, import_history, local_env


def rehearse(api_client, environment, **body):
    created = api_client.post(f"/api/v1/environments/{environment.id}/rehearsals", json={"speedup": 600, **body})
    assert created.status_code == 201, created.text
    return created.json()


def test_a_schedule_is_stored_once_and_each_node_pair_replays_its_threads(api_client, session):
    environment = local_env(session, nodes=2)
    import_history(api_client, environment, archived_log_csv(threads=2, burst_mib=150))
    body = rehearse(api_client, environment)
    assert count(session, ReplaySchedule) == 1
    rehearsal = session.get(Rehearsal, body["id"])
    stored = rehearsal.schedule
    text = api_client.get(body["schedule_url"])
    assert text.text == stored.text and stored.text_bytes == len(stored.text.encode())
    assert text.headers["X-Schedule-SHA256"] == hashlib.sha256(stored.text.encode()).hexdigest() == stored.sha256
    whole = parse_schedule(stored.text)
    assert len(whole.connections) == 2 and whole.threads == (1, 2)
    for connection, run in enumerate(rehearsal.runs):
        assert run.replay_schedule is None  # no copy of its own
        assert run.replay_schedule_id == stored.id and run.replay_connections == [connection]
        part = parse_schedule(replay_text(session, run))  # what the runner uploads to the client host
        assert part.connections == (whole.connections[connection],)
        assert sum(size for _, size in part.connections[0]) > 0


def test_one_pair_names_the_whole_schedule_and_a_lost_schedule_fails_the_run(api_client, session):
    environment = local_env(session)
    import_history(api_client, environment, archived_log_csv())
    body = rehearse(api_client, environment)
    rehearsal = session.get(Rehearsal, body["id"])
    (run,) = rehearsal.runs
    assert run.replay_connections is None and replay_text(session, run) == rehearsal.schedule.text
    run.replay_schedule_id = None  # as after its schedule's row went
    try:
        replay_text(session, run)
    except LookupError as gone:
        assert f"rehearsal #{rehearsal.id}" in str(gone)
    else:
        raise AssertionError("a rehearsal's run without its schedule must not replay nothing")
    session.rollback()


slots = st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(slots, min_size=1, max_size=5).flatmap(
        lambda sizes: st.tuples(st.just(sizes), st.permutations(range(len(sizes))), st.integers(1, len(sizes)))
    )
)
def test_a_part_replays_exactly_its_connections_renumbered(case):
    sizes, order, taken = case
    connections = tuple(tuple((k * 0.1, size) for k, size in enumerate(c)) for c in sizes)
    header = ["# redolab rehearsal schedule", f"# threads: {' '.join(str(t + 1) for t in range(len(sizes)))}"]
    text = render(header, connections, 0.1)  # a header naming the whole schedule's threads: not the part's
    chosen = list(order[:taken])
    whole, part = parse_schedule(text), parse_schedule(schedule_part(text, chosen))
    assert part.connections == tuple(whole.connections[c] for c in chosen)
    assert schedule_part(text, None) == text


def test_a_users_schedules_are_capped_before_anything_is_written(api_client, app, session):
    environment = local_env(session)
    import_history(api_client, environment, archived_log_csv())
    first = rehearse(api_client, environment)
    kept = session.get(Rehearsal, first["id"]).schedule.text_bytes
    api_client.post(f"/api/v1/rehearsals/{first['id']}/cancel")
    before = (count(session, Rehearsal), count(session, Run), count(session, ReplaySchedule))
    app.state.settings = app.state.settings.model_copy(update={"rehearsal_schedules_per_user_bytes": kept + 10})
    over = api_client.post(f"/api/v1/environments/{environment.id}/rehearsals", json={"speedup": 600})
    assert over.status_code == 413, over.text
    detail = str(over.json())
    assert "REDOLAB_REHEARSAL_SCHEDULES_PER_USER_BYTES" in detail and "this rehearsal's schedule is" in detail
    app.state.settings = app.state.settings.model_copy(update={"rehearsal_schedules_per_user_bytes": kept})
    full = api_client.post(f"/api/v1/environments/{environment.id}/rehearsals", json={"speedup": 600})
    assert full.status_code == 413 and "this rehearsal's schedule is" not in str(full.json())  # before building
    session.expire_all()
    assert (count(session, Rehearsal), count(session, Run), count(session, ReplaySchedule)) == before


def test_an_admin_deletes_a_finished_rehearsal_and_frees_its_room(api_client, app, session):
    environment = local_env(session)
    import_history(api_client, environment, archived_log_csv())
    body = rehearse(api_client, environment)
    url = f"/api/v1/rehearsals/{body['id']}"
    busy = api_client.delete(url)
    assert busy.status_code == 409 and "cancel it first" in busy.text  # still queued
    api_client.post(f"{url}/cancel")
    make_user(session, "otto", role=Role.operator)
    with TestClient(app, follow_redirects=False) as operator:
        token = operator.post("/api/v1/auth/token", data={"username": "otto", "password": PASSWORD})
        operator.headers["Authorization"] = f"Bearer {token.json()['access_token']}"
        refused = operator.delete(url)
    assert refused.status_code == 403 and "admin role" in refused.text
    session.expire_all()
    assert session.get(Rehearsal, body["id"]).runs[0].status is RunStatus.cancelled
    assert api_client.delete(url).status_code == 204
    session.expire_all()
    assert (count(session, Rehearsal), count(session, Run), count(session, ReplaySchedule)) == (0, 0, 0)
    assert api_client.get(url).status_code == 404


def test_a_list_of_rehearsals_reads_their_runs_in_one_query(api_client, session, engine):
    from sqlalchemy import event

    from redolab.rehearsals import service

    environment = local_env(session)
    import_history(api_client, environment, archived_log_csv())

    def statements() -> int:
        seen = []

        def counted(*_) -> None:
            seen.append(1)

        event.listen(engine, "before_cursor_execute", counted)
        try:
            session.expire_all()
            rehearsals = service.list_rehearsals(session=session, environment=environment)
            states = [service.status(r) for r in rehearsals]
        finally:
            event.remove(engine, "before_cursor_execute", counted)
        assert all(state is RunStatus.cancelled for state in states)
        return len(seen)

    counts = []
    for _ in range(3):
        body = rehearse(api_client, environment)
        api_client.post(f"/api/v1/rehearsals/{body['id']}/cancel")
        counts.append(statements())
    assert counts[0] == counts[1] == counts[2] <= 3, counts


def test_a_caller_without_settings_is_capped_by_the_process_settings(api_client, app, session, monkeypatch):
    """The CLI creates rehearsals without passing settings: the cap is the process's, not none."""
    from redolab.rehearsals import service, storage

    environment = local_env(session)
    import_history(api_client, environment, archived_log_csv())
    tiny = app.state.settings.model_copy(update={"rehearsal_schedules_per_user_bytes": 1024})
    monkeypatch.setattr(storage, "get_settings", lambda: tiny)
    request = service.RehearsalRequest(speedup=600, window="worst-60m")
    with pytest.raises(FieldError) as refused:
        service.create_rehearsal(session=session, environment=environment, request=request, requested_by="alice")
    assert refused.value.status_code == 413 and "REDOLAB_REHEARSAL_SCHEDULES_PER_USER_BYTES" in str(refused.value)
    session.rollback()
    assert count(session, Rehearsal) == 0 and count(session, ReplaySchedule) == 0


def test_two_runs_numbered_alike_on_one_host_keep_their_own_schedules(tmp_path):
    """Run ids repeat across databases that share a client host and user (two redolab instances, the
    test suite's workers). Named for the run id alone, the second upload replaced the first's schedule
    before its client read it, and that run replayed the other's bytes (seen as 900 of 1,800 MiB)."""
    probe = str(tmp_path / "redoprobe")
    first, second = schedule_path(probe, 1), schedule_path(probe, 1)
    transport = LocalTransport()
    asyncio.run(upload_schedule(transport, first, "0 0 100\n"))
    asyncio.run(upload_schedule(transport, second, "0 0 200\n"))
    assert Path(first).parent == Path(second).parent == tmp_path
    assert Path(first).read_text() == "0 0 100\n" and Path(second).read_text() == "0 0 200\n"
