"""The plan's measured runs are kept per process while the database says they are unchanged: for
any sequence of changes, made by another process (its own engine and session), the cached read
equals a fresh read from the database."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select

from redolab.core.db import make_engine, make_sessionmaker
from redolab.environments.models import Environment, HostRole
from redolab.runs import service as run_service
from redolab.runs.models import Run, RunStatus
from redolab.runs.service import EVERY_HOP, measured_runs, measured_stamp, read_measured_runs, store_summary
from tests.factories import make_environment, make_host, make_measured_run

CHANGES = (
    "add", "tag", "label", "fail", "delete", "throughput", "swap roles", "node number", "summary mtu",
    "another environment",
)  # fmt: skip


def _change(session, environment_id: int, what: str, pick: int) -> None:
    """One change as another process makes it: through its own session, committed."""
    environment = session.get(Environment, environment_id)
    hosts = sorted(environment.hosts, key=lambda h: h.role.value)  # primary, standby
    runs = session.scalars(select(Run).where(Run.environment_id == environment_id).order_by(Run.id)).all()
    run = runs[pick % len(runs)] if runs else None
    if what == "add" or run is None:
        make_measured_run(session, environment_id, *hosts, 1e6 * (pick + 1), label=f"added {pick}")
    elif what == "tag":
        run.tags = [*run.tags, f"t{pick}"]
    elif what == "label":
        run.label = f"label {pick}"
    elif what == "fail":
        run.status = RunStatus.failed
    elif what == "delete":
        session.delete(run)
    elif what == "throughput":
        run.bytes_per_second = 2e6 * (pick + 1)
    elif what == "swap roles":  # the hosts trade roles: every run now goes standby -> primary
        primary, standby = hosts
        primary.role, standby.role = HostRole.standby, HostRole.primary
        top = max(h.node_number for h in hosts)  # numbers no host has: every (role, node) stays unique
        primary.node_number, standby.node_number = top + 1, top + 2
    elif what == "node number":
        hosts[pick % 2].node_number = 2 + pick
    elif what == "summary mtu":  # the summary is stored again with another MTU
        run.client_settings = {"mtu_bytes": 9000 - pick}
        session.commit()
        store_summary(session=session, run=run)
    elif what == "another environment":  # no change here: the cache may stay
        other = session.scalars(select(Environment).where(Environment.id != environment_id)).first()
        if other is not None:
            other.description = f"edited {pick}"
    session.commit()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(CHANGES), st.integers(0, 5)), min_size=1, max_size=8))
def test_the_cached_measured_runs_always_equal_a_fresh_read(engine, database_url, changes):
    sessions = make_sessionmaker(engine)
    elsewhere_engine = make_engine(database_url)  # "another process": its own engine and sessions
    elsewhere = make_sessionmaker(elsewhere_engine)
    try:
        with sessions() as session:
            environment = make_environment(session)
            primary = make_host(session, environment, name="p", transport="local", role="primary")
            standby = make_host(session, environment, name="s", transport="local", role="standby")
            for number in range(3):
                make_measured_run(session, environment.id, primary, standby, 1e6 * (number + 1))
            environment_id = environment.id
        for what, pick in changes:
            with sessions() as session:  # this process reads (and caches)
                environment = session.get(Environment, environment_id)
                assert measured_runs(session=session, environment=environment, hop=EVERY_HOP) == read_measured_runs(
                    session=session, environment=environment
                )
            with elsewhere() as session:
                _change(session, environment_id, what, pick)
            with sessions() as session:  # a new request in this process sees the change
                environment = session.get(Environment, environment_id)
                cached = measured_runs(session=session, environment=environment, hop=EVERY_HOP)
                fresh = read_measured_runs(session=session, environment=environment)
                assert cached == fresh, what
                first = environment.first_destination.id if environment.first_destination else None
                planned = [run for run in fresh if run.hop == first]  # the plan's: the first destination's hop
                assert measured_runs(session=session, environment=environment) == planned, what
    finally:
        elsewhere_engine.dispose()
        with sessions() as session:
            session.execute(delete(Run))
            session.execute(delete(Environment))
            session.commit()


def test_every_change_to_a_run_draws_a_new_mark_and_the_cache_is_used_while_none_happens(session, monkeypatch):
    environment = make_environment(session)
    primary = make_host(session, environment, name="p", transport="local", role="primary")
    standby = make_host(session, environment, name="s", transport="local", role="standby")
    session.refresh(environment)
    run = make_measured_run(session, environment.id, primary, standby, 5e6)
    marks = [session.scalar(select(Run.change_mark).where(Run.id == run.id))]
    run.tags = ["wan"]  # any change draws a new mark
    session.commit()
    marks.append(session.scalar(select(Run.change_mark).where(Run.id == run.id)))
    before = measured_stamp(session=session, environment=environment)
    store_summary(session=session, run=run)  # so does storing its summary again
    marks.append(session.scalar(select(Run.change_mark).where(Run.id == run.id)))
    assert len(set(marks)) == 3 and measured_stamp(session=session, environment=environment) != before

    reads = []
    real = run_service.read_measured_runs
    monkeypatch.setattr(run_service, "read_measured_runs", lambda **kw: reads.append(1) or real(**kw))
    first = measured_runs(session=session, environment=environment)
    again = measured_runs(session=session, environment=environment)
    assert first == again and [r.tags for r in first] == [("wan",)] and len(reads) == 1  # the second from the cache
    run.label = "edited"
    session.commit()
    assert [r.label for r in measured_runs(session=session, environment=environment)] == ["edited"]
    assert len(reads) == 2
