"""Shared fixtures: a migrated database on SQLite and on a real PostgreSQL, the app, clients.

The suite runs in parallel (scripts/test.sh: pytest-xdist, `-n 4 --dist loadgroup`): every worker is a
process with its own session fixtures (PostgreSQL, sshd, Chromium, each on a free port, in directories
of its own) and marks the probes it starts (services.OWNER_VARIABLE), so that the check that no probe
outlived a test sees only its own. The few tests that look at the whole machine are kept together, and
those that measure through the lab run first on the CPU (GROUPS, MEASURING below).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import os
import secrets
import shutil
import sqlite3
import tempfile
import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from redolab.core.config import Settings
from redolab.core.db import Base, make_engine, make_sessionmaker
from redolab.core.migrate import upgrade
from redolab.main import create_app
from tests import services
from tests.factories import PASSWORD, make_user

pytest_plugins = ["tests.frozen_date", *(["tests.cpu_profile"] if os.environ.get("REDOLAB_CPU_PROFILE") else [])]
BACKENDS = ["sqlite", "postgresql"]

# Where the database can change the answer, a test runs on SQLite (the default deployment) and on a
# real PostgreSQL (the team server); elsewhere on SQLite alone. A module or one test is named here with
# the reason; `@pytest.mark.both_backends` on a test says the same. What differs between the two:
# transactions, locks and claims (SELECT ... FOR UPDATE SKIP LOCKED, advisory locks, conditional
# updates racing), foreign-key cascades, unique constraints, integer and string bounds, JSON and
# binary columns, time zones, migrations, bulk writes of large imports.
BOTH_BACKENDS = {
    "tests/test_migrations.py": "migrations, autogenerate drift, data moved by revisions",
    "tests/core/test_db.py": "engine set-up, UTC datetimes, SQLite's pragmas",
    "tests/jobs/": "claims, SKIP LOCKED, the advisory claim lock, fair-queue caps under races",
    "tests/auth/test_races.py": "one-time links and the last-admin rule as conditional updates",
    "tests/auth/test_roles_tokens.py": "token revocation and role changes",
    "tests/security/test_login_counts_shared.py": "login counters shared by web processes",
    "tests/test_serve_workers.py": "several web processes on one database",
    "tests/security/test_id_bounds.py": "an id beyond the database's integer",
    "tests/security/test_field_walk.py": "string lengths (PostgreSQL enforces VARCHAR(n))",
    "tests/security/test_audit_and_deletion.py": "foreign-key cascades",
    "tests/redo/test_import.py": "all-or-nothing imports, bulk writes",
    "tests/redo/test_import_jobs.py": "large imports in batches, orphaned staged rows",
    "tests/redo/test_preview_jobs.py": "preview jobs claimed and orphaned",
    "tests/runs/test_queue_place_and_paging.py": "queue positions from claims",
    "tests/runs/test_runs_failures.py::test_redolab_restarted_mid_run": "runs orphaned by a stopped worker",
    "tests/runs/test_runs_failures.py::test_worker_killed_during_a_cancel_ends_the_run_cancelled": (
        "a cancel orphaned by a killed worker"
    ),
    "tests/runs/test_runs_failures.py::test_cancel_keeps_samples": "a cancel racing the worker's writes",
    "tests/runs/test_runs_failures.py::test_two_runs_never_share_a_host": "the host claim",
    "tests/sweeps/test_schedules.py": "an occurrence fired once by a conditional update",
    "tests/sweeps/test_hop_runs.py::test_hop_jobs_share_the_primary_with_each_other_only": "jobs claimed together",
    "tests/sweeps/test_hop_runs.py::test_a_run_across_hops_from_the_api_runs_both_at_once": (
        "jobs claimed together across hops"
    ),
    "tests/sweeps/test_hop_runs.py::test_cancel_stops_every_pair": "a cancel as one conditional update",
    "tests/sweeps/test_clusters.py::test_cluster_run_pairs_nodes_sums_and_reverses": (
        "a cluster's sum stored once by the last run"
    ),
    "tests/watches/test_notify.py::test_one_row_per_receiver_and_transition_even_when_queued_twice": "unique index",
    "tests/watches/test_notify.py::test_two_workers_send_each_notification_once": "deliveries claimed once",
    "tests/watches/test_notify.py::test_a_row_left_sending_by_a_dead_worker_is_sent_again": "an orphaned claim",
    "tests/watches/test_notify.py::test_a_removed_receiver_is_not_told_and_leaves_its_watches": "foreign keys",
    "tests/watches/test_notify.py::test_the_signing_secret_is_shown_once_and_stored_encrypted": "a binary column",
    "tests/watches/test_watches.py::test_the_verdict_and_the_state_it_leads_to_are_one_transaction": (
        "a watch's state moved in the verdict's transaction"
    ),
    "tests/watches/test_watches.py::test_two_workers_judging_at_once_notify_once": "conditional updates racing",
    "tests/watches/test_watches.py::test_fired_once_per_occurrence_by_two_workers": "an occurrence fired once",
    "tests/watches/test_metrics.py": "/metrics reads the stored summary's JSON in SQL",
    "tests/collect/test_collect_more.py": "collection schedules fired once",
    "tests/planning/test_stored.py": "the stored analysis: JSON, a pickle, its change mark",
    "tests/rehearsals/test_storage.py": "rehearsal schedules stored as binary",
    "tests/hadr/test_db2pd_fields.py": "db2pd counters beyond 32-bit integers",
    "tests/environments/test_destinations.py::test_the_database_holds_the_node_numbers_unique": "unique index",
    "tests/environments/test_destinations.py::test_deleting_an_environment_removes_its_destinations_and_shared_links": (
        "foreign-key cascades"
    ),
    "tests/environments/test_destinations.py::test_simultaneous_creates_meet_one_after_the_other": "a race",
    "tests/environments/test_destinations.py::test_a_host_added_while_its_destination_is_deleted_is_never_orphaned": (
        "a race"
    ),
    "tests/environments/test_api.py::test_delete_environment_removes_hosts": "foreign-key cascades",
    "tests/environments/test_api.py::test_host_slot_is_unique": "unique index",
    "tests/rehearsals/test_rehearsal_runs.py::test_simultaneous_rehearsals_on_the_same_hosts_queue_exactly_one": (
        "the queue lock under a race"
    ),
}


def _check_names(root, names, table: str) -> None:
    """A name in BOTH_BACKENDS that no longer exists would quietly leave its test on SQLite alone; one
    in LONGEST, its test handed out last again."""
    for key in names:
        path, _, test = key.partition("::")
        if not (root / path).exists() or (test and f"def {test}(" not in (root / path).read_text()):
            raise pytest.UsageError(f"tests/conftest.py {table} names {key}, which does not exist")


def _on_both_backends(item) -> bool:
    if item.get_closest_marker("both_backends"):
        return True
    name = item.nodeid.split("[")[0]
    return any(name == key or name.startswith(key if key.endswith("/") else key + "::") for key in BOTH_BACKENDS)


def pytest_collection_modifyitems(config, items):
    """A test parametrised over the backends runs on PostgreSQL too only where the backend can differ."""
    _check_names(config.rootpath, BOTH_BACKENDS, "BOTH_BACKENDS")
    _check_names(config.rootpath, LONGEST, "LONGEST")
    kept, sqlite_only = [], []
    for item in items:
        backend = getattr(item, "callspec", None) and item.callspec.params.get("database_url")
        (sqlite_only if backend == "postgresql" and not _on_both_backends(item) else kept).append(item)
    if sqlite_only:
        config.hook.pytest_deselected(items=sqlite_only)
        items[:] = kept
    if config.getvalue("dist") == "loadgroup":
        items.sort(key=_longest_rank)  # stable: the rest keep their order


# The longest tests outside the lab, longest first (wall seconds of a 4-worker run on 2 cores). Under
# --dist loadgroup a test that is no group is handed out in collection order, after the groups; in
# that order these came last (tests/test_*.py sort after most directories), and the suite ended with
# three workers idle behind them: 1,034 s in all, the last 200 s on the browser tests alone. Handed out
# first, beside the lab's group, the short tests fill in behind them. (Only under xdist: in one
# process, moving a test away from its module would set its module's fixtures up twice.)
LONGEST = (
    "tests/security/test_fuzz_imports.py::test_no_mutated_file_breaks_a_rule",  # 140-400 s
    "tests/test_browser.py::test_every_page_fits_the_desktop_and_a_phone",  # 62-150 s
    "tests/test_first_hour.py",  # 2 x 30-65 s
    "tests/test_serve_workers.py",  # 40-50 s
    "tests/test_destinations_browser.py",  # 33-60 s
    "tests/test_api_contract.py",  # 31-64 s
    "tests/test_manual.py",  # 36 s
    "tests/security/test_fuzz_imports.py",  # 25-70 s each
    "tests/test_browser.py",  # 20-45 s each
    "tests/test_rehearsal_browser.py",
    "tests/security/test_fuzz_results.py",
    "tests/hadr/test_hadr_browser.py",
    "tests/security/test_linear_readers.py",
    "tests/test_answer_strip_browser.py",
)


def _longest_rank(item) -> int:
    for rank, name in enumerate(LONGEST):
        if item.nodeid == name or item.nodeid.startswith((name + "::", name + "[")):
            return rank
    return len(LONGEST)


# Tests that share one xdist worker: the lab's module fixture brings up machine-wide namespaces with
# fixed names, so two workers must not each bring it up. (An `xdist_group` mark with --dist loadgroup
# does not group on pytest 9.2: xdist 3.8 still renames the node ID, which pytest 9.2 no longer reads,
# pytest-dev/pytest-xdist#1386; the scheduler below groups by this table instead.)
# A module whose tests share a costly module fixture is a group too: test_fair_queues_served starts a
# `redolab serve` per database for its six tests, once on one worker rather than on each.
GROUPS = {
    "tests/lab/test_lab.py": "lab",
    "tests/lab/test_watch_lab.py": "lab",
    "tests/jobs/test_fair_queues_served.py": "fair queues served",
    "tests/test_cli.py": "cli",  # one schema copy and one `redolab worker` for the module's commands
}
# Tests that measure with tight tolerances through the lab's delay line (a process starved by a parallel
# loopback run distorts RTT and rate, seen failing): they run with the CPU first (pytest_runtest_protocol
# below). Tests that look for or kill probes see only their own process's (services.leftover_probes).
# test_hops_lab checks what the physics guarantees of two runs through one rate-limited uplink (with
# another test beside them they started apart and their averages summed to 115 % of the uplink).
MEASURING = (
    "tests/lab/test_lab.py",
    "tests/lab/test_watch_lab.py",
    "tests/lab/test_hops_lab.py",
    "tests/lab/test_load_lab.py",  # SYNC acknowledgements idle and under a load, to the millisecond
    "tests/lab/test_tier_lab.py",  # worst lags within 10 % of the prediction, through the lab's shaper
    # a rehearsal paced at two tiers on loopback: its measured lag within 25 % of the prediction
    "tests/rehearsals/test_tier_rehearsals.py::test_rehearsed_at_two_tiers_through_the_probe_the_card_and_report_show_measured_beside_predicted",
)


def pytest_configure(config):
    config.addinivalue_line("markers", "both_backends: run on SQLite and PostgreSQL (see BOTH_BACKENDS)")
    # A mark of its own for every test process (and xdist worker): the probes it starts inherit it.
    os.environ[services.OWNER_VARIABLE] = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


def pytest_collection_finish(session):
    """What collection imported (the app's modules, the test modules, hypothesis) lives as long as the
    process: gc.freeze() takes it out of every later full collection's scan. On tests/environments
    (182 tests, one process) the collector's CPU fell from 16.0 s to 9.1 s of 83.5 s."""
    gc.freeze()


def pytest_sessionstart(session):
    """Build the probe once before the workers start, so that no two workers run `make` on it at once."""
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return
    from redolab import redoprobe

    with contextlib.suppress(redoprobe.ProbeBuildError):  # the tests that run it report the compiler's output
        redoprobe.build()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup: test by test to whichever worker is free, except GROUPS (and xdist_group
    marks, should xdist's node ID suffix work again), which go to one worker. The MEASURING tests are
    one group (they share the lab), the longest, so it is handed out first and the others fill beside it."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class Grouped(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if _measuring(nodeid):
                return "group measuring"
            group = GROUPS.get(nodeid.split("::")[0])
            return f"group {group}" if group else super()._split_scope(nodeid)

    return Grouped(config, log)


def _measuring(nodeid: str) -> bool:
    return any(nodeid == name or nodeid.startswith((name + "::", name + "@", name + "[")) for name in MEASURING)


# Niceness while a test runs, as root (the lab needs root; elsewhere nothing measures tightly).
MEASURING_NICENESS, OTHER_NICENESS = -10, 10


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """The MEASURING tests measure through the lab while the other workers' tests go on, with the CPU
    first: before its fixtures are set up, a MEASURING test's worker runs at niceness -10 (the lab's
    delay line and sshds it starts, and the probes under them, inherit it) and every other test's at
    +10, CFS weights of 9,548 against 110. Each worker process sets its own niceness, so a test
    beside the lab gets what the lab leaves; with no lab test running the others share the machine
    as before. Until 2026-12-02 they ran alone, holding an exclusive lock: the lab's 250 s of
    waiting on a delay line left the other three workers idle, a quarter of the suite's time."""
    if os.geteuid() == 0 and os.environ.get("PYTEST_XDIST_WORKER"):
        niceness = MEASURING_NICENESS if _measuring(item.nodeid) else OTHER_NICENESS
        os.setpriority(os.PRIO_PROCESS, 0, niceness)


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashing():
    """argon2 with its cheapest parameters inside the test process. Every test user is hashed and
    every login verified, at about 160 ms each with the defaults on a 2-core machine (two minutes of
    the suite). The algorithm, the code paths and the stored format stay the same. Subprocesses
    (the CLI, `redolab serve` in the browser tests) and bench/login_flood.py keep the defaults."""
    from argon2 import PasswordHasher

    from redolab.core import security

    saved = security._hasher, security._DUMMY_HASH
    security._hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    security._DUMMY_HASH = security._hasher.hash("redolab-no-such-user")  # unknown names cost the same
    yield
    security._hasher, security._DUMMY_HASH = saved


@pytest.fixture(scope="session", autouse=True)
def routes_analysed_once():
    """FastAPI (0.165) analyses an included router's routes again for every app, on the first request
    that passes them: each route's parameters and dependencies become pydantic models, about 1 s of CPU
    per app for redolab's routes. Every test builds its own app from the same routers, so that analysis
    was more than half of an API test's CPU (yappi on tests/environments: 33.6 s of 57.9 s). Here a
    route's analysis under the same inclusion is made once per test process and shared by the apps.
    Nothing in it depends on the app except dependency_overrides, which no test sets (one that did
    would see the first app's), and the first app is kept alive by it. `redolab serve` and the CLI, in
    processes of their own, analyse theirs."""
    from fastapi import routing

    analyse = routing._EffectiveRouteContext.from_api_route.__func__
    made: dict[tuple, tuple] = {}

    def from_api_route(cls, *, original_route, include_context):
        key = (
            id(original_route),
            id(include_context.included_router),
            include_context.prefix,
            tuple(include_context.tags),
            tuple((d.dependency, d.use_cache) for d in include_context.dependencies),
            include_context.include_in_schema,
            include_context.max_body_size,
        )
        found = made.get(key)
        if found is None or found[0] is not original_route:
            found = made[key] = (
                original_route,
                analyse(cls, original_route=original_route, include_context=include_context),
            )
        return found[1]

    routing._EffectiveRouteContext.from_api_route = classmethod(from_api_route)
    yield analyse  # FastAPI's own, for a test that needs every app to analyse its routes (test_app_freed)
    routing._EffectiveRouteContext.from_api_route = classmethod(analyse)


@pytest.fixture(scope="session")
def postgres_server():
    import os

    if url := os.environ.get("REDOLAB_TEST_POSTGRES_URL"):
        yield url
        return
    server = services.start_postgres()
    if server is None:
        services.missing("PostgreSQL", "install Debian's postgresql package (make test does)")
    yield server.url
    server.stop()


def _fresh_postgres_database(server_url: str) -> str:
    name = f"redolab_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def migrated(url: str) -> str:
    """The database at `url` brought to the head revision. A SQLite file is a copy of one migrated
    template per test process (Alembic's 30-odd revisions cost 1.5 s of CPU; some 30 modules ask)."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(_sqlite_template()) as source, sqlite3.connect(url.removeprefix("sqlite:///")) as copy:
            source.backup(copy)
        return url
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


@functools.cache
def _sqlite_template() -> str:
    directory = tempfile.mkdtemp(prefix="redolab-template-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = os.path.join(directory, "migrated.db")
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    engine.dispose()
    return path


def migrated_sqlite(tmp_path_factory) -> str:
    """A migrated SQLite database, for a module whose tests are the same on either database
    (it overrides `database_url`)."""
    return migrated(f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'redolab.db'}")


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request, tmp_path_factory) -> str:
    """A migrated, empty database, once per backend."""
    if request.param == "sqlite":
        return migrated_sqlite(tmp_path_factory)
    return migrated(_fresh_postgres_database(request.getfixturevalue("postgres_server")))


@pytest.fixture
def engine(database_url):
    engine = make_engine(database_url)
    yield engine
    with engine.begin() as connection:  # every test starts from empty tables
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
    engine.dispose()


@pytest.fixture
def session(engine):
    with make_sessionmaker(engine)() as session:
        yield session


@pytest.fixture
def settings(database_url, tmp_path) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=tmp_path / "var",
        secret_key=secrets.token_urlsafe(48),
        worker_enabled=False,  # tests run jobs themselves, or start a worker explicitly
        # database_url is migrated once per session; Alembic's check at every app's start (its
        # scripts loaded, the version read) is left to the tests of start-up, `redolab serve` and the CLI
        auto_migrate=False,
        _env_file=None,
    )


@pytest.fixture
def app(settings, engine):
    return create_app(settings)


@pytest.fixture
def anonymous(app):
    with TestClient(app, follow_redirects=False) as client:
        yield client


@pytest.fixture
def user(session):
    return make_user(session, "alice")


def log_in(client: TestClient, username: str, password: str = PASSWORD):
    """Log in through the HTML form; afterwards the client sends the CSRF header like app.js."""
    client.get("/login")
    response = client.post("/login", data={"username": username, "password": password})
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
    return response


@pytest.fixture
def browser_client(app, user):
    """A client with a logged-in session cookie, as the browser has."""
    with TestClient(app, follow_redirects=False) as client:
        response = log_in(client, user.username)
        assert response.status_code == 303
        yield client


@pytest.fixture
def api_client(app, user):
    """A client authenticated with a bearer token only (no cookies)."""
    with TestClient(app, follow_redirects=False) as client:
        response = client.post("/api/v1/auth/token", data={"username": user.username, "password": PASSWORD})
        assert response.status_code == 200, response.text
        client.headers["Authorization"] = f"Bearer {response.json()['access_token']}"
        yield client


@pytest.fixture(scope="session")
def sshd():
    server = services.start_sshd()
    if server is None:
        services.missing("OpenSSH server", "install Debian's openssh-server package (make test does)")
    yield server
    server.stop()


@pytest.fixture
def secret_key(app) -> str:
    return app.state.secret_key


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium driven by Playwright, one per test module (a test gets a fresh context,
    or its module's logged-in one on the shared server: tests/test_browser.py admin_context). Not one
    per session: a running sync Playwright holds an asyncio loop in the thread, so a later test's
    asyncio.run() there would fail. Only one sync Playwright may run in a thread, so every browser test
    uses this one."""
    path = services.chromium_path()
    if path is None:
        services.missing("Chromium", "install Debian's chromium package (make test does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True, args=services.CHROMIUM_ARGS)
        yield browser
        browser.close()
