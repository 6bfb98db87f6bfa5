"""The job queue: claims in order, never two jobs on one host at once, orphans failed with a reason
(SQLite and PostgreSQL)."""

from datetime import timedelta

from redolab.core.db import make_sessionmaker, utcnow
from redolab.jobs.claims import claim_next
from redolab.jobs.models import Job, JobStatus
from redolab.runs.models import Run, RunStatus
from redolab.worker import fail_orphans
from tests.execution import request_run
from tests.factories import make_environment, make_host


def _hosts(session):
    environment = make_environment(session)
    p1, p2 = (make_host(session, environment, role="primary", node_number=n, transport="local") for n in (1, 2))
    s1, s2 = (make_host(session, environment, role="standby", node_number=n, transport="local") for n in (1, 2))
    return environment, p1, p2, s1, s2


def test_claims_go_in_order_and_a_busy_host_waits(session, engine):
    environment, p1, p2, s1, s2 = _hosts(session)
    first = request_run(session, environment, p1, s1)
    shares_p1 = request_run(session, environment, p1, s2)  # p1 is busy with the first
    disjoint = request_run(session, environment, p2, s2)
    sessions = make_sessionmaker(engine)

    claimed = claim_next(sessions, "worker-a")
    assert claimed.run_id == first.id and claimed.status is JobStatus.running and claimed.worker_id == "worker-a"
    second = claim_next(sessions, "worker-b")
    assert second.run_id == disjoint.id  # the older job waits for p1; this one's hosts are free
    assert claim_next(sessions, "worker-c") is None  # p1 and s2 are both busy now

    with sessions() as other:
        other.get(Job, claimed.id).status = JobStatus.done
        other.commit()
    assert claim_next(sessions, "worker-c") is None  # s2 is still busy with the disjoint run
    with sessions() as other:
        other.get(Job, second.id).status = JobStatus.done
        other.commit()
    third = claim_next(sessions, "worker-c")
    assert third.run_id == shares_p1.id
    assert claim_next(sessions, "worker-d") is None  # each job is claimed once


def test_orphans_fail_with_the_worker_named_and_fresh_jobs_stay(session, engine):
    environment, p1, p2, s1, s2 = _hosts(session)
    stale = request_run(session, environment, p1, s1)
    fresh = request_run(session, environment, p2, s2)
    sessions = make_sessionmaker(engine)
    stale_job, fresh_job = claim_next(sessions, "worker-gone"), claim_next(sessions, "worker-alive")
    with sessions() as other:
        other.get(Job, stale_job.id).heartbeat_at = utcnow() - timedelta(minutes=5)
        other.get(Run, stale.id).status = RunStatus.running
        other.commit()

    assert fail_orphans(sessions) == 1
    session.expire_all()
    run = session.get(Run, stale.id)
    assert run.status is RunStatus.failed and "worker-gone" in run.failure_reason
    assert session.get(Job, stale_job.id).status is JobStatus.failed
    assert session.get(Job, fresh_job.id).status is JobStatus.running
    assert session.get(Run, fresh.id).status is RunStatus.queued  # its worker heartbeats: untouched
    assert fail_orphans(sessions, older_than_seconds=None) == 1  # at startup with one worker: all of them
