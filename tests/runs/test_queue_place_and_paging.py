"""Issue 33: where a queued run or sweep stands (jobs ahead on its hosts, estimated start) in its
JSON and on its page; the run and sweep lists paged (`limit`, `offset`, the total `count`); a
write_dir on "This machine" kept inside REDOLAB_LOCAL_WRITE_ROOT with room for connections x the
probe's wrap size (422 naming both)."""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from redolab.core.db import make_sessionmaker, utcnow
from redolab.core.errors import FieldError
from redolab.core.units import MIB
from redolab.jobs.claims import claim_next
from redolab.jobs.models import Job
from redolab.runs.models import Run
from redolab.runs.queueing import PROBE_WRITE_WRAP_BYTES, check_local_write_dir
from tests.jobs.test_bulk_cancel import queue
from tests.jobs.test_fair_queues import hourly, run_body, two_pairs


def test_a_queued_run_shows_the_jobs_ahead_and_when_it_should_start(api_client, browser_client, session, engine):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    first, second, third = (queue(session, environment, p1, s1, "ann") for _ in range(3))
    elsewhere = queue(session, environment, p2, s2, "ann")  # other hosts: ahead by id, not in the way
    assert claim_next(make_sessionmaker(engine), "w1").run_id == first.id
    # the first has run 20 s of its planned 70 s (60 s test + 10 s set-up)
    claimed = utcnow() - timedelta(seconds=20)
    session.execute(update(Job).where(Job.run_id == first.id).values(claimed_at=claimed))
    session.commit()
    answers = {run.id: api_client.get(f"/api/v1/runs/{run.id}").json() for run in (second, third, elsewhere)}
    assert answers[second.id]["queue_position"] == 0 and answers[third.id]["queue_position"] == 1
    # the estimates follow from the claim, not from when they were asked (a busy machine answers later)
    start = {key: datetime.fromisoformat(value["estimated_start_at"]) - claimed for key, value in answers.items()}
    assert start[second.id].total_seconds() == pytest.approx(70, abs=0.01)  # 50 s from the claim's +20 s
    assert start[third.id].total_seconds() == pytest.approx(70 + 70, abs=0.01)
    assert answers[elsewhere.id]["queue_position"] == 0
    assert datetime.fromisoformat(answers[elsewhere.id]["estimated_start_at"]) <= utcnow()  # nothing ahead: now
    assert api_client.get(f"/api/v1/runs/{first.id}").json()["queue_position"] is None  # claimed
    asked = utcnow()
    page = browser_client.get(f"/runs/{third.id}")
    answered = utcnow()
    assert "1 run or sweep ahead on these hosts, expected to start around" in page.text
    # with its unit: the 140 s from the claim less the time gone by when the page was drawn (under 120 s)
    shown = re.search(r"\(in about ([\d.]+) s\)", page.text)
    earliest, latest = ((claimed + timedelta(seconds=140) - moment).total_seconds() for moment in (answered, asked))
    assert shown and earliest - 0.01 <= float(shown[1]) <= latest + 0.01, (shown and shown[0], earliest, latest)


def test_a_queued_sweep_shows_its_place_too(api_client, browser_client, session):
    environment, (p1, s1, _, _) = two_pairs(session)
    queue(session, environment, p1, s1, "ann")
    sweep = queue(session, environment, s1, p1, "ann", "sweep")
    document = api_client.get(f"/api/v1/sweeps/{sweep.id}").json()
    assert document["sweep"]["queue_position"] == 1
    assert datetime.fromisoformat(document["sweep"]["estimated_start_at"]) > utcnow() + timedelta(seconds=60)
    page = browser_client.get(f"/sweeps/{sweep.id}")
    assert 'id="sweep-queue"' in page.text and "1 run or sweep ahead" in page.text


@pytest.mark.parametrize("what", ["runs", "sweeps"])
def test_lists_are_paged_with_the_total(api_client, session, what):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    items = [
        queue(session, environment, *pair, f"user{i}", what[:-1]) for i, pair in enumerate([(p1, s1), (p2, s2)] * 3)
    ]
    url = f"/api/v1/environments/{environment.id}/{what}"
    page = api_client.get(url, params={"limit": 4}).json()
    assert page["count"] == 6 and [item["id"] for item in page["data"]] == [item.id for item in items[::-1][:4]]
    rest = api_client.get(url, params={"limit": 4, "offset": 4}).json()
    assert rest["count"] == 6 and [item["id"] for item in rest["data"]] == [items[1].id, items[0].id]
    assert len(api_client.get(url).json()["data"]) == 6  # the default page (100) holds them all
    for params in ({"limit": 0}, {"limit": 501}, {"offset": -1}, {"offset": 2**63}, {"limit": "x"}):
        answer = api_client.get(url, params=params)
        assert answer.status_code == 422, (params, answer.text)
        assert answer.json()["detail"][0]["loc"][:1] == ["query"]


@pytest.fixture
def write_root(tmp_path, settings):
    root = settings.resolved_local_write_root
    root.mkdir(parents=True, exist_ok=True)
    return root


def test_a_write_dir_on_this_machine_stays_inside_the_root(api_client, session, write_root, tmp_path):
    environment, (p1, s1, _, _) = two_pairs(session)
    url = f"/api/v1/environments/{environment.id}/runs"
    for outside in ("/", "/etc", str(tmp_path), f"{write_root}/../elsewhere", f"{write_root}x"):
        refused = api_client.post(url, json=run_body(p1, s1, write_dir=outside))
        assert refused.status_code == 422, (outside, refused.text)
        if refused.json()["detail"][0]["type"] == "invalid":  # the path was safe to read: the root is named
            assert f"only inside {write_root} (REDOLAB_LOCAL_WRITE_ROOT)" in refused.json()["detail"][0]["msg"]
    (write_root / "link").symlink_to("/etc")
    refused = api_client.post(url, json=run_body(p1, s1, write_dir=f"{write_root}/link"))
    assert refused.status_code == 422  # a link out of the root is outside it
    accepted = api_client.post(url, json=run_body(p1, s1, write_dir=f"{write_root}/standby-redo"))
    assert accepted.status_code == 201, accepted.text
    assert (write_root / "standby-redo").is_dir()  # made for the probe, which needs it to exist
    sweep = api_client.post(
        f"/api/v1/environments/{environment.id}/sweeps", json=run_body(s1, p1, write_dir="/tmp", conns_max=2)
    )
    assert sweep.status_code == 422 and "REDOLAB_LOCAL_WRITE_ROOT" in sweep.text
    assert session.scalar(select(func.count()).select_from(Run)) == 1


def test_connections_times_the_wrap_size_must_fit_the_free_space(api_client, session, write_root):
    environment, (p1, s1, _, _) = two_pairs(session)
    free = shutil.disk_usage(write_root).free
    if free >= 1024 * PROBE_WRITE_WRAP_BYTES:
        pytest.skip("this disk has more than 512 GiB free: the API case needs a fuller one")
    refused = api_client.post(
        f"/api/v1/environments/{environment.id}/runs", json=run_body(p1, s1, conns=1024, write_dir=str(write_root))
    )
    assert refused.status_code == 422, refused.text
    message = refused.json()["detail"][0]["msg"]
    assert "1,024 connections x 512 MiB" in message and "= 512 GiB" in message and "free" in message


def test_the_free_space_rule_at_its_edge(session, settings, write_root):
    _, (_, standby, _, _) = two_pairs(session)
    exactly = lambda _path: 8 * PROBE_WRITE_WRAP_BYTES  # noqa: E731
    check_local_write_dir(
        server=standby, write_dir=str(write_root), conns=8, settings=settings, free_bytes=exactly
    )  # fits exactly: accepted
    with pytest.raises(FieldError) as refused:
        check_local_write_dir(
            server=standby, write_dir=str(write_root / "new" / "dir"), conns=9, settings=settings, free_bytes=exactly
        )
    assert refused.value.status_code == 422 and refused.value.field == "write_dir"
    assert "9 connections x 512 MiB (the probe's wrap size per stream) = 4.5 GiB" in refused.value.message
    assert f"would be written under {write_root}, which has 4 GiB free" in refused.value.message
    assert PROBE_WRITE_WRAP_BYTES == 512 * MIB


def test_ssh_hosts_keep_their_own_write_dirs(session, settings):
    from tests.factories import make_environment, make_host

    environment = make_environment(session)
    remote = make_host(session, environment, role="standby", name="far")  # an SSH host: its disk, its rules
    assert check_local_write_dir(server=remote, write_dir="/u02/redoprobe", conns=1024, settings=settings) is None


def test_schedules_are_listed_a_page_at_a_time(api_client, session):
    environment, (p1, s1, p2, s2) = two_pairs(session)
    made = [hourly(session, environment, *pair, user=f"user{i}") for i, pair in enumerate([(p1, s1), (p2, s2)] * 2)]
    url = f"/api/v1/environments/{environment.id}/schedules"
    page = api_client.get(url, params={"limit": 3}).json()
    assert page["count"] == 4 and [item["id"] for item in page["data"]] == [item.id for item in made[::-1][:3]]
    last = api_client.get(url, params={"offset": 3}).json()["data"]
    assert [item["id"] for item in last] == [made[0].id] and last[0]["every_seconds"] == 3600
    assert api_client.get(url, params={"limit": 501}).status_code == 422
