"""Schedules: occurrences fired by the worker's clock (given here), skipped when the hosts are
busy or when redolab was down, ended at their date or by Stop; the page's chart over time."""

from datetime import timedelta

import pytest
from pydantic import ValidationError
from sqlalchemy import select

from redolab.core.db import make_sessionmaker, utcnow
from redolab.jobs.models import Job, JobStatus
from redolab.runs.models import Run, RunStatus
from redolab.runs.schemas import RunCreate
from redolab.sweeps.models import ScheduleStatus
from redolab.sweeps.schedules import Repeat, create_schedule, fire_due, stop_schedule
from tests.execution import execute_next
from tests.web.test_runs import local_env
from tests.web.test_sweeps import figure_in


def hourly(session, environment, primary, standby, hours=3):
    return create_schedule(
        session=session,
        environment=environment,
        item=RunCreate(
            client_host_id=primary.id,
            server_host_id=standby.id,
            duration_seconds=0.5,
            interval_seconds=0.25,
            label="hourly",
        ),
        repeat=Repeat(every_seconds="1 h", until=utcnow() + timedelta(hours=hours, minutes=30)),
        requested_by="alice",
    )


def runs_of(session, schedule):
    session.expire_all()
    return list(session.scalars(select(Run).where(Run.schedule_id == schedule.id).order_by(Run.id)))


def finish_jobs(session):
    for job in session.scalars(select(Job).where(Job.status == JobStatus.queued)):
        job.status = JobStatus.done
    session.commit()


def test_occurrences_skip_when_busy_and_end_at_the_date(session, engine):
    environment, primary, standby = local_env(session)
    before = utcnow()
    schedule = hourly(session, environment, primary, standby)
    made = utcnow() - before  # the first occurrence and the next one were both set meanwhile
    sessions = make_sessionmaker(engine)
    first = runs_of(session, schedule)
    assert len(first) == 1 and first[0].requested_by == f"alice (schedule #{schedule.id})"
    due = schedule.next_at
    assert abs(due - first[0].created_at - timedelta(hours=1)) <= made, (due - first[0].created_at, made)

    assert fire_due(sessions, now=due - timedelta(seconds=1)) == 0  # not yet
    assert fire_due(sessions, now=due) == 0  # the first run still holds the hosts (queued)
    session.refresh(schedule)
    assert schedule.skipped[-1]["reason"] == f"skipped: the hosts were busy with run #{first[0].id}"
    assert schedule.next_at == due + timedelta(hours=1)

    finish_jobs(session)
    assert fire_due(sessions, now=due + timedelta(hours=1, minutes=5)) == 1
    assert len(runs_of(session, schedule)) == 2
    finish_jobs(session)
    # redolab down for a while: the hours gone by are skipped, not caught up; past the end: finished
    assert fire_due(sessions, now=due + timedelta(hours=3, minutes=10)) == 0
    session.refresh(schedule)
    assert schedule.skipped[-1]["reason"] == "1 occurrence missed while redolab was not running"
    assert schedule.status is ScheduleStatus.finished
    assert fire_due(sessions, now=due + timedelta(hours=10)) == 0


def test_stop_and_limits(session, engine):
    environment, primary, standby = local_env(session)
    schedule = hourly(session, environment, primary, standby)
    stop_schedule(session=session, schedule=schedule)
    finish_jobs(session)
    assert fire_due(make_sessionmaker(engine), now=schedule.next_at + timedelta(minutes=1)) == 0
    assert len(runs_of(session, schedule)) == 1
    with pytest.raises(ValidationError, match="at most once a minute"):
        Repeat(every_seconds="10 s", until=utcnow() + timedelta(hours=1))
    with pytest.raises(ValidationError, match="in the future"):
        Repeat(every_seconds="1 h", until=utcnow() - timedelta(minutes=1))


def test_schedule_from_the_form_and_its_chart_over_time(browser_client, session, engine, secret_key):
    environment, primary, standby = local_env(session)
    until = (utcnow() + timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M")
    form = {"client_host_id": primary.id, "server_host_id": standby.id, "duration_seconds": "0.5 s",
            "interval_seconds": "0.25 s", "rate_bits_per_second": "100 Mbit/s", "label": "over the day"}  # fmt: skip
    bad = browser_client.post(f"/environments/{environment.id}/runs", data={**form, "repeat_every": "5 s",
                              "repeat_until": until}, headers={"HX-Request": "true"})  # fmt: skip
    assert bad.status_code == 422 and "at most once a minute" in bad.text
    created = browser_client.post(
        f"/environments/{environment.id}/runs", data={**form, "repeat_every": "1 h", "repeat_until": until}
    )
    assert created.status_code == 303 and created.headers["location"].startswith("/schedules/")
    url = created.headers["location"]
    schedule_id = int(url.rsplit("/", 1)[1])
    assert execute_next(engine, secret_key)  # the first occurrence, for real
    sessions = make_sessionmaker(engine)
    from redolab.sweeps.models import Schedule

    schedule = session.get(Schedule, schedule_id)
    assert fire_due(sessions, now=schedule.next_at) == 1
    assert execute_next(engine, secret_key)  # the second
    page = browser_client.get(url)
    assert "over the day" in page.text and "every 60 min until" in " ".join(page.text.split())
    runs = runs_of(session, schedule)
    assert [run.status for run in runs] == [RunStatus.succeeded] * 2
    figure = figure_in(page.text, "over-time-chart")
    assert len(figure["data"][0]["y"]) == 2
    for y, run in zip(figure["data"][0]["y"], runs, strict=True):
        assert y == pytest.approx(run.bytes_per_second / 1048576)
    stopped = browser_client.post(f"{url}/stop")
    assert stopped.status_code == 303
    session.refresh(schedule)
    assert schedule.status is ScheduleStatus.stopped
    listing = browser_client.get(f"/environments/{environment.id}")
    assert f'href="/schedules/{schedule_id}"' in listing.text


def test_the_worker_fires_due_occurrences(session, engine, secret_key):
    """`redolab serve`'s worker loop checks the schedules by itself and runs what is due."""
    import time

    from redolab.worker import Worker

    environment, primary, standby = local_env(session)
    schedule = hourly(session, environment, primary, standby)
    assert execute_next(engine, secret_key)  # the first occurrence; the hosts are free again
    schedule.next_at = utcnow() - timedelta(seconds=1)  # as if an hour had gone by
    session.commit()
    worker = Worker(make_sessionmaker(engine), secret_key=secret_key)
    thread = worker.start_thread()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            runs = runs_of(session, schedule)
            if len(runs) == 2 and all(run.status.finished for run in runs):
                break
            time.sleep(0.2)
    finally:
        worker.stopping.set()
        thread.join(20)
    assert [run.status for run in runs_of(session, schedule)] == [RunStatus.succeeded] * 2
