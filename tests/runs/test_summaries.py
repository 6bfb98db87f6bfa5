"""Run summaries: stored when a run ends (measured or imported) and by the migration that added
them; the plan reads them, never the intervals."""

from pathlib import Path

from alembic import command
from sqlalchemy import delete, select

from redolab.core.db import make_engine, make_sessionmaker
from redolab.core.migrate import alembic_config, upgrade
from redolab.runs.models import RunEvent, RunStatus, RunSummary
from redolab.runs.parsers.redoprobe import run_metrics
from redolab.runs.service import measured_runs, read_measured_runs, run_lines
from tests.execution import execute_next, reload, request_run
from tests.web.test_runs import local_env

DATA = Path(__file__).parent / "data"


def _client_lines(session, run):
    return [line for line in run_lines(session=session, run=run, role="client") if '"event":"start"' not in line]


def test_a_finished_run_is_summarised_and_the_plan_reads_only_the_summary(session, engine, secret_key):
    environment, primary, standby = local_env(session)
    run = request_run(session, environment, primary, standby, mode="sync", conns=2, duration_seconds=1.5)
    assert execute_next(engine, secret_key)
    run = reload(session, run)
    assert run.status is RunStatus.succeeded, run.failure_reason
    summary = session.get(RunSummary, run.id)
    expected = run_metrics(_client_lines(session, run))
    assert summary is not None and summary.damaged is None
    assert summary.interval_count == expected.interval_count >= 2
    assert summary.rtt_min_seconds == expected.rtt_min_seconds and summary.rtt_median_seconds >= summary.rtt_min_seconds
    assert summary.ack_count == expected.ack_count > 0 and summary.ack_p99_seconds >= summary.ack_p50_seconds > 0

    # loopback runs are measured runs too (left out of the plan by its selection, not here)
    before = {m.id: m.metrics for m in measured_runs(session=session, environment=environment)}
    session.execute(delete(RunEvent).where(RunEvent.run_id == run.id))  # the intervals are gone...
    session.commit()
    session.expire_all()
    after = {m.id: m.metrics for m in read_measured_runs(session=session, environment=environment)}
    assert after == before and after[run.id].ack_count == expected.ack_count  # ...and nothing changed


def test_imported_runs_are_summarised_when_stored(api_client, session):
    environment, primary, standby = local_env(session)
    with open(DATA / "iperf3_two_streams.json", "rb") as file:
        response = api_client.post(
            f"/api/v1/environments/{environment.id}/runs/import",
            data={"client_host_id": primary.id, "server_host_id": standby.id},
            files=[("files", ("iperf3_two_streams.json", file, "application/json"))],
        )
    assert response.status_code == 201, response.text
    run_id = response.json()["data"][0]["id"]
    session.expire_all()
    summary = session.get(RunSummary, run_id)
    intervals = session.scalars(select(RunEvent.line).where(RunEvent.run_id == run_id)).all()
    assert summary.interval_count == len(intervals) > 0
    assert summary.rtt_min_seconds == run_metrics(list(intervals)).rtt_min_seconds is not None


def test_the_migration_summarises_the_runs_stored_before_it(tmp_path):
    """Runs stored before the summaries existed get theirs from the migration, from their own lines."""
    url = f"sqlite:///{tmp_path}/old.db"
    engine = make_engine(url)
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        environment, primary, standby = local_env(session)
        run = request_run(session, environment, primary, standby, mode="sync", duration_seconds=1)
    assert execute_next(engine, "local hosts need no credential key")
    with make_sessionmaker(engine)() as session:
        run = reload(session, run)
        expected = session.get(RunSummary, run.id)
        expected = {c.name: getattr(expected, c.name) for c in RunSummary.__table__.columns}
        lines = _client_lines(session, run)
    config = alembic_config()
    with engine.begin() as connection:  # back to the revision before run summaries...
        config.attributes["connection"] = connection
        command.downgrade(config, "d5d7e4f61154")
    with make_sessionmaker(engine)() as session:
        assert "run_summaries" not in engine.dialect.get_table_names(session.connection())
    upgrade(engine)  # ...and up again: the migration backfills
    with make_sessionmaker(engine)() as session:
        summary = session.get(RunSummary, run.id)
        assert {c.name: getattr(summary, c.name) for c in RunSummary.__table__.columns} == expected
        assert summary.interval_count == run_metrics(lines).interval_count >= 2
    engine.dispose()
