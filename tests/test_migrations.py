"""Alembic: upgrade from empty works on both backends, and the models match the migrations."""

import json
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from fastapi.testclient import TestClient
from sqlalchemy import inspect

from redolab.core.config import Settings
from redolab.core.db import Base, UTCDateTime, make_engine, make_sessionmaker
from redolab.core.migrate import alembic_config, upgrade
from redolab.environments.models import Environment, stored_name_key
from redolab.main import create_app
from redolab.runs.models import RunStatus
from redolab.runs.probes import schedule_part
from tests.conftest import BACKENDS, _fresh_postgres_database


def test_upgrade_creates_every_table(database_url):
    engine = make_engine(database_url)
    tables = set(inspect(engine).get_table_names())
    engine.dispose()
    assert {table.name for table in Base.metadata.sorted_tables} <= tables
    assert "alembic_version" in tables


def test_autogenerate_finds_no_drift(database_url):
    engine = make_engine(database_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diff = compare_metadata(context, Base.metadata)
    engine.dispose()
    assert diff == []


def test_sqlite_keeps_foreign_keys_on_after_an_upgrade(tmp_path):
    """Migrations turn SQLite's foreign keys off (a recreated table's DROP would cascade); no pooled
    connection may keep that after the upgrade."""
    engine = make_engine(f"sqlite:///{tmp_path}/fk.db")
    upgrade(engine)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_app_migrates_an_empty_database_when_it_starts(backend, request, tmp_path):
    """auto_migrate (the default; the other tests' apps start on a database migrated once per session)."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path}/empty.db"
    else:
        url = _fresh_postgres_database(request.getfixturevalue("postgres_server"))
    settings = Settings(
        database_url=url, data_dir=tmp_path / "var", secret_key="k" * 48, worker_enabled=False, _env_file=None
    )
    assert settings.auto_migrate
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").json()["status"] == "ok"
    engine = make_engine(url)
    tables = set(inspect(engine).get_table_names())
    engine.dispose()
    assert {table.name for table in Base.metadata.sorted_tables} | {"alembic_version"} <= tables


# -- c9f4a6e10039: every environment gets its first destination (issue 38) ----------------------------

BEFORE_DESTINATIONS = "b8e3f0d50038"


@pytest.fixture(params=BACKENDS)
def empty_database_url(request, tmp_path) -> str:
    """A database with no tables yet, on each backend (migrated here to a chosen revision)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/redolab.db"
    return _fresh_postgres_database(request.getfixturevalue("postgres_server"))


def _downgrade(engine, revision: str) -> None:
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)
    engine.dispose()


def _rows_before_destinations(connection) -> None:
    """Two environments as the schema before destinations held them, with raw inserts: Data Guard with
    two RAC nodes a side and a link, Db2 HADR with one node a side and no link; a run and an import."""
    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)

    def stamp():
        return sa.column("created_at", UTCDateTime()), sa.column("updated_at", UTCDateTime())

    environments = sa.table(
        "environments",
        *(
            sa.column(name)
            for name in (
                "id",
                "name",
                "description",
                "platform",
                "primary_rac_nodes",
                "standby_rac_nodes",
                "protection_mode",
                "transport_mode",
                "headroom_percent",
                "apply_overhead_percent",
                "link_bandwidth_bits_per_second",
                "link_rtt_seconds",
                "notes",
                "time_zone",
            )
        ),
        *stamp(),
    )
    common = {"description": "", "headroom_percent": 30.0, "apply_overhead_percent": 30.0, "notes": "",
              "time_zone": "UTC", "created_at": now, "updated_at": now}  # fmt: skip
    connection.execute(
        environments.insert(),
        [
            {
                **common,
                "id": 1,
                "name": "sales",
                "platform": "dataguard",
                "primary_rac_nodes": 2,
                "standby_rac_nodes": 2,
                "protection_mode": "max_availability",
                "transport_mode": "SYNC",
                "link_bandwidth_bits_per_second": 10_000_000_000,
                "link_rtt_seconds": 0.025,
            },
            {
                **common,
                "id": 2,
                "name": "db2",
                "platform": "hadr",
                "primary_rac_nodes": 1,
                "standby_rac_nodes": 1,
                "protection_mode": None,
                "transport_mode": "NEARSYNC",
                "link_bandwidth_bits_per_second": None,
                "link_rtt_seconds": None,
            },
        ],
    )
    hosts = sa.table(
        "hosts",
        *(
            sa.column(name)
            for name in ("id", "environment_id", "role", "node_number", "name", "ssh_address", "ssh_port", "ssh_user")
        ),
        *stamp(),
    )
    host = {"ssh_address": "10.0.0.1", "ssh_port": 22, "ssh_user": "oracle", "created_at": now, "updated_at": now}
    connection.execute(
        hosts.insert(),
        [
            {**host, "id": 11, "environment_id": 1, "role": "primary", "node_number": 1, "name": "db1"},
            {**host, "id": 12, "environment_id": 1, "role": "primary", "node_number": 2, "name": "db2"},
            {**host, "id": 13, "environment_id": 1, "role": "standby", "node_number": 1, "name": "sb1"},
            {**host, "id": 14, "environment_id": 1, "role": "standby", "node_number": 2, "name": "sb2"},
            {**host, "id": 21, "environment_id": 2, "role": "primary", "node_number": 1, "name": "p"},
            {**host, "id": 22, "environment_id": 2, "role": "standby", "node_number": 1, "name": "s"},
        ],
    )
    runs = sa.table(
        "runs",
        *(
            sa.column(name)
            for name in (
                "id",
                "environment_id",
                "client_host_id",
                "server_host_id",
                "client_host_name",
                "server_host_name",
                "mode",
                "conns",
                "message_bytes",
                "duration_seconds",
                "interval_seconds",
                "delay_us",
                "sync_write",
                "label",
                "notes",
                "status",
                "cancel_requested",
                "requested_by",
                "bytes_per_second",
            )
        ),
        sa.column("created_at", UTCDateTime()),
        sa.column("tags", sa.JSON()),
    )
    connection.execute(
        runs.insert().values(
            id=7,
            environment_id=1,
            client_host_id=11,
            server_host_id=13,
            client_host_name="db1",
            server_host_name="sb1",
            mode="async",
            conns=1,
            message_bytes=1048576,
            duration_seconds=10.0,
            interval_seconds=1.0,
            delay_us=0,
            sync_write=False,
            label="baseline",
            notes="",
            status="succeeded",
            cancel_requested=False,
            requested_by="alice",
            bytes_per_second=123456789.0,
            created_at=now,
            tags=["wan"],
        )
    )
    imports = sa.table(
        "redo_imports",
        *(
            sa.column(name)
            for name in (
                "id",
                "environment_id",
                "filename",
                "sha256",
                "format",
                "kind",
                "rows_read",
                "rows_kept",
                "imported_by",
            )
        ),
        *(sa.column(name, sa.JSON()) for name in ("mapping", "dropped", "warnings", "threads")),
        sa.column("created_at", UTCDateTime()),
    )
    connection.execute(
        imports.insert().values(
            id=5,
            environment_id=1,
            filename="history.csv",
            sha256="ab" * 32,
            format="csv",
            kind="archived_log",
            rows_read=10,
            rows_kept=9,
            imported_by="alice",
            mapping={},
            dropped=[],
            warnings=[],
            threads=[1, 2],
            created_at=now,
        )
    )


def _one_destination_each(connection) -> dict[int, int]:
    """{environment id: its destination's id}, after checking each has exactly the migrated one."""
    rows = connection.execute(
        sa.text(
            "SELECT id, environment_id, name, kind, transport, hadr_role, position, link_bandwidth_bits_per_second, "
            "link_rtt_seconds, feeds_from_id, name_key FROM destinations ORDER BY environment_id"
        )
    ).all()
    assert [tuple(row[1:10]) for row in rows] == [
        (1, "standby", "standby", "SYNC", None, 1, 10_000_000_000, 0.025, None),
        (2, "standby", "standby", "NEARSYNC", "principal", 1, None, None, None),
    ]
    assert all(row.name_key == stored_name_key("standby") for row in rows)  # the key the application writes
    return {row.environment_id: row.id for row in rows}


def test_every_environment_becomes_one_destination_and_back(empty_database_url):
    engine = make_engine(empty_database_url)
    upgrade(engine, BEFORE_DESTINATIONS)
    with engine.begin() as connection:
        _rows_before_destinations(connection)
    upgrade(engine)
    with engine.connect() as connection:
        first = _one_destination_each(connection)
        hosts = connection.execute(sa.text("SELECT id, destination_id FROM hosts ORDER BY id")).all()
        assert dict(hosts) == {11: None, 12: None, 13: first[1], 14: first[1], 21: None, 22: first[2]}
        run = connection.execute(
            sa.text("SELECT client_host_id, server_host_id, label, bytes_per_second FROM runs WHERE id = 7")
        ).one()
        assert tuple(run) == (11, 13, "baseline", 123456789.0)
        assert connection.execute(sa.text("SELECT rows_kept FROM redo_imports WHERE id = 5")).scalar() == 9
        # the new uniqueness: a primary's node per environment, a standby's per destination
        with pytest.raises(sa.exc.IntegrityError), connection.begin_nested():
            connection.execute(
                sa.text(
                    "INSERT INTO hosts (environment_id, role, node_number, name, ssh_address, ssh_port, ssh_user, "
                    "transport, allow_kernel_changes, created_at, updated_at) VALUES (1, 'primary', 1, 'dup', 'h', 22, "
                    "'u', 'ssh', false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
    # the application reads the migrated rows as its own: the environment mirrors its destination
    with make_sessionmaker(engine)() as session:
        environment = session.get(Environment, 1)
        assert [h.name for h in environment.standby_hosts()] == ["sb1", "sb2"]
        assert environment.first_destination.transport == environment.transport_mode
    engine.dispose()
    # more than one destination: the downgrade refuses and changes nothing
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO destinations"
                " (environment_id, name, kind, transport, position, notes, created_at, updated_at)"
                " VALUES (1, 'far', 'far_sync', 'SYNC', 2, '', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
    with pytest.raises(RuntimeError, match="'sales' \\(2 destinations\\)"):
        _downgrade(engine, BEFORE_DESTINATIONS)
    with engine.begin() as connection:
        assert connection.execute(sa.text("SELECT COUNT(*) FROM destinations")).scalar() == 3
        connection.execute(sa.text("DELETE FROM destinations WHERE name = 'far'"))
    _downgrade(engine, BEFORE_DESTINATIONS)
    inspector = inspect(engine)
    assert "destinations" not in inspector.get_table_names()
    assert "destination_id" not in {column["name"] for column in inspector.get_columns("hosts")}
    assert "uq_hosts_environment_id_role_node_number" in {c["name"] for c in inspector.get_unique_constraints("hosts")}
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT COUNT(*) FROM hosts")).scalar() == 6
        assert connection.execute(sa.text("SELECT server_host_id FROM runs WHERE id = 7")).scalar() == 13
    upgrade(engine)  # and up again
    with engine.connect() as connection:
        _one_destination_each(connection)
    engine.dispose()


# -- a7c3e5f10043: a rehearsal's schedule stored once --------------------------------------------------

BEFORE_STORED_ONCE = "f5c2d0e30042"
BEFORE_CLUSTER_SUMS = "a7c3e5f10043"


def test_rehearsal_schedules_move_to_one_stored_copy_and_back(empty_database_url, tmp_path):
    from tests.factories import PASSWORD, make_user
    from tests.rehearsals.test_rehearsal_runs import archived_log_csv, import_history, local_env

    settings = Settings(
        database_url=empty_database_url,
        data_dir=tmp_path / "var",
        secret_key="k" * 48,
        worker_enabled=False,
        _env_file=None,
    )
    engine = make_engine(empty_database_url)
    with TestClient(create_app(settings)) as client, make_sessionmaker(engine)() as session:
        make_user(session, "alice")
        token = client.post("/api/v1/auth/token", data={"username": "alice", "password": PASSWORD})
        client.headers["Authorization"] = f"Bearer {token.json()['access_token']}"
        made = {}
        for nodes in (1, 2):  # one pair replays the whole schedule, node pairs a thread each
            environment = local_env(session, nodes=nodes)
            import_history(client, environment, archived_log_csv(threads=2, burst_mib=150))
            body = client.post(f"/api/v1/environments/{environment.id}/rehearsals", json={"speedup": 600}).json()
            made[nodes] = (body["id"], client.get(body["schedule_url"]).text)
    engine.dispose()
    _downgrade(engine, BEFORE_STORED_ONCE)
    with engine.connect() as connection:
        for nodes, (rehearsal_id, text) in made.items():
            query = "SELECT schedule_text FROM rehearsals WHERE id = :r"
            assert connection.execute(sa.text(query), {"r": rehearsal_id}).scalar() == text
            runs = connection.execute(
                sa.text("SELECT replay_schedule FROM runs WHERE rehearsal_id = :r ORDER BY id"), {"r": rehearsal_id}
            ).scalars()
            parts = [schedule_part(text, None if nodes == 1 else [c]) for c in range(nodes)]
            assert list(runs) == parts  # each run's text as it was stored before: the whole, or its thread's
    upgrade(engine)
    with engine.connect() as connection:
        stored = dict(connection.execute(sa.text("SELECT id, text FROM replay_schedules")).all())
        assert sorted(stored.values()) == sorted(text for _, text in made.values())
        for nodes, (rehearsal_id, text) in made.items():
            schedule_id = connection.execute(
                sa.text("SELECT schedule_id FROM rehearsals WHERE id = :r"), {"r": rehearsal_id}
            ).scalar()
            assert stored[schedule_id] == text
            runs = connection.execute(
                sa.text(
                    "SELECT replay_schedule, replay_schedule_id, replay_destination_id FROM runs "
                    "WHERE rehearsal_id = :r"
                ),
                {"r": rehearsal_id},
            ).all()
            assert {run.replay_schedule_id for run in runs} == {schedule_id}
            assert all(run.replay_destination_id is not None for run in runs)
            # the whole schedule is named, not copied; a thread's part, kept before, stays (read first)
            assert [run.replay_schedule is None for run in runs] == [nodes == 1] * nodes
    engine.dispose()


def test_cluster_sums_at_once_are_backfilled_from_the_stored_intervals(empty_database_url):
    """A cluster whose pairs all ended before the migration gets what they carried at once, as a pair
    ending stores it; one still running is left to its last pair."""
    from redolab.sweeps.models import Cluster
    from tests.planning.test_topology_plan import two_destinations
    from tests.sweeps.test_hop_runs import _cluster, _pair_run

    engine = make_engine(empty_database_url)
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        environment, primary, near, far, _remote = two_destinations(session)
        now = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
        ended, running = _cluster(session, environment), _cluster(session, environment)
        _pair_run(session, environment, ended, primary, near, 0, started=now, rates=[100.0] * 6 + [50.0] * 54)
        _pair_run(
            session,
            environment,
            ended,
            primary,
            far,
            0,
            started=now + timedelta(seconds=6),
            rates=[50.0] * 54 + [100.0] * 6,
        )
        _pair_run(session, environment, running, primary, near, 80.0, started=now)
        session.get(Cluster, running.id).runs[0].status = RunStatus.running
        session.commit()
        stored = session.get(Cluster, ended.id).together
        ids = (ended.id, running.id)
    assert sum(stored["bytes"].values()) / stored["seconds"] == pytest.approx(100.0)
    engine.dispose()
    _downgrade(engine, BEFORE_CLUSTER_SUMS)
    upgrade(engine)
    with engine.connect() as connection:
        rows = dict(
            connection.execute(
                sa.text("SELECT id, together FROM clusters WHERE id IN (:a, :b)"), {"a": ids[0], "b": ids[1]}
            ).all()
        )
    again = rows[ids[0]] if isinstance(rows[ids[0]], dict) else json.loads(rows[ids[0]])
    assert again["bytes"] == stored["bytes"] and again["seconds"] == pytest.approx(stored["seconds"])
    assert rows[ids[1]] is None
    engine.dispose()


# -- a3e6c8d10045: an environment's own link tiers (issue 55) -------------------------------------------

BEFORE_LINK_TIERS = "b8d4f6a20044"


def test_link_tiers_come_and_go_with_their_revision(empty_database_url):
    """Up: the table with its unique name index per environment; down: gone, the environments kept;
    up again: the table back, empty."""
    from redolab.environments.models import LinkTier
    from tests.factories import make_environment

    engine = make_engine(empty_database_url)
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        environment = make_environment(session, name="tiered")
        session.add(LinkTier(environment_id=environment.id, name="Gold", bits_per_second=10**9, monthly_price=9.5))
        session.commit()
        environment_id = environment.id
    indexes = {index["name"]: index for index in inspect(engine).get_indexes("link_tiers")}
    assert indexes["ix_link_tiers_environment_id_name_key"]["unique"]
    engine.dispose()

    _downgrade(engine, BEFORE_LINK_TIERS)
    assert "link_tiers" not in inspect(engine).get_table_names()
    with engine.connect() as connection:
        names = connection.execute(sa.text("SELECT name FROM environments WHERE id = :i"), {"i": environment_id})
        assert names.scalar() == "tiered"
    engine.dispose()

    upgrade(engine)
    assert "link_tiers" in inspect(engine).get_table_names()
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM link_tiers")).scalar() == 0
    engine.dispose()
