"""/metrics (issue 37 item 3): the exposition's values and units on a small made-up dataset, on SQLite and
PostgreSQL; the bearer token (404 off, 401, 200); bounded labels; a real Prometheus server scraping a real
redolab and read back through its HTTP API; the alerting rules checked by promtool."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import textwrap
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx2 as httpx
import pytest
import yaml
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from sqlalchemy import event, insert, select

from redolab.core.db import make_engine, make_sessionmaker, utcnow
from redolab.main import create_app
from redolab.redo.models import RedoImport, StoredAnalysis
from redolab.rehearsals.models import Rehearsal
from redolab.runs.models import Run, RunStatus, RunSummary
from redolab.watches.metrics import CONTENT_TYPE, percentile_cont, read_snapshot, render_metrics
from redolab.watches.models import CheckStatus, Verdict, Watch, WatchCheck, WatchState
from tests import services
from tests.conftest import migrated_sqlite
from tests.factories import make_environment, make_host, make_measured_run
from tests.margins import measured_within

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
TOKEN = "metrics-token-for-tests-0123456789"
MB = 1_000_000


@dataclass(frozen=True)
class Dataset:
    environment: str
    pair: str  # the path of the host pair
    every_pair: str  # the path of the all-node-pairs watch
    last_run_id: int


def populate(session) -> Dataset:
    """Payroll: a primary p1 and a standby s1; four measured runs p1 -> s1 (the newest SYNC, with its p99), a
    failed and a rehearsal run after them (not measurements), a stored analysis (peak 50 MB/s, 65 MB/s
    required), an import two days old, a watch of the pair (judged against its 60 MB/s threshold) and a
    watch of all node pairs (AT RISK, measured by its checks). Billing: nothing yet."""
    now = utcnow()
    environment = make_environment(session, name="Payroll")
    make_environment(session, name="Billing")
    primary = make_host(session, environment, role="primary", name="p1")
    standby = make_host(session, environment, role="standby", name="s1")
    ago = lambda **delta: now - timedelta(**delta)  # noqa: E731
    make_measured_run(session, environment.id, primary, standby, 10 * MB, finished_at=ago(hours=48))
    sync = make_measured_run(
        session, environment.id, primary, standby, 30 * MB, mode="sync", finished_at=ago(minutes=45)
    )
    session.get(RunSummary, sync.id).ack_p99_seconds = 0.004
    make_measured_run(session, environment.id, primary, standby, 100 * MB, finished_at=ago(hours=2))
    last = make_measured_run(session, environment.id, primary, standby, 80 * MB, finished_at=ago(hours=1))
    make_measured_run(session, environment.id, primary, standby, 999 * MB, status=RunStatus.failed,
                      finished_at=ago(minutes=30))  # fmt: skip
    rehearsal = Rehearsal(
        environment_id=environment.id, window_kind="worst-60m", window_start=ago(days=9), window_end=ago(days=8),
        message_bytes=MB, slot_seconds=0.1, schedule_sha256="0" * 64, schedule_bytes=MB, schedule_seconds=60,
        requested_by="alice",
    )  # fmt: skip
    session.add(rehearsal)
    session.flush()
    make_measured_run(session, environment.id, primary, standby, 5 * MB, rehearsal_id=rehearsal.id,
                      finished_at=ago(minutes=20))  # fmt: skip
    session.add(StoredAnalysis(
        environment_id=environment.id, signature="test",
        summary={"peak_bytes_per_second": 50 * MB, "required_bytes_per_second": 65 * MB,
                 "threads": [{"thread": 1, "peak_bytes_per_second": 50 * MB, "required_bytes_per_second": 65 * MB}]},
    ))  # fmt: skip
    session.add(RedoImport(
        environment_id=environment.id, filename="archived_logs.csv", sha256="1" * 64, format="csv", kind="logs",
        mapping={}, rows_read=10, rows_kept=10, dropped={}, warnings=[], threads=[1], imported_by="alice",
        created_at=ago(days=2),
    ))  # fmt: skip
    pair = Watch(environment_id=environment.id, name="pair", client_host_id=primary.id, server_host_id=standby.id,
                 path_label="p1 -> s1", threshold_bytes_per_second=60 * MB, state=WatchState.ok,
                 every_seconds=900, requested_by="alice")  # fmt: skip
    every = Watch(environment_id=environment.id, name="cluster", all_node_pairs=True, path_label="all node pairs (1)",
                  state=WatchState.at_risk, every_seconds=300, requested_by="alice",
                  silenced_until=now + timedelta(hours=1))  # fmt: skip
    session.add_all([pair, every])
    session.flush()
    judged = {"status": CheckStatus.judged, "required_bytes_per_second": 60 * MB}
    session.add_all([
        WatchCheck(watch_id=pair.id, at=ago(hours=1, minutes=1), verdict=Verdict.ok, measured_bytes_per_second=80 * MB,
                   **judged),
        WatchCheck(watch_id=every.id, at=ago(hours=30), verdict=Verdict.ok, measured_bytes_per_second=500 * MB,
                   **judged),
        WatchCheck(watch_id=every.id, at=ago(minutes=20), verdict=Verdict.at_risk, measured_bytes_per_second=64 * MB,
                   sync_p99_seconds=0.002, **judged),
        WatchCheck(watch_id=every.id, at=ago(minutes=10), verdict=Verdict.at_risk, measured_bytes_per_second=62 * MB,
                   **judged),
        WatchCheck(watch_id=every.id, at=ago(minutes=5), status=CheckStatus.skipped, reason="busy host"),
    ])  # fmt: skip
    session.commit()
    return Dataset("Payroll", "p1 -> s1", "all node pairs (1)", last.id)


def samples(body: str) -> dict[tuple[str, frozenset], float]:
    """{(metric name, its labels): value} of an exposition, as Prometheus reads it."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }


def value(found: dict, name: str, **labels) -> float:
    return found[(name, frozenset(labels.items()))]


def test_the_exposition_says_each_figure_in_base_units(session):
    before = utcnow()
    data = populate(session)
    found = samples(render_metrics(session=session).decode())
    # an age is what populate() gave it, grown by the time gone by until the render (however busy the
    # machine), never less
    grown = (utcnow() - before).total_seconds()

    def aged(age: float, given: float) -> bool:
        return given <= age <= given + grown

    pair = {"environment": "Payroll", "path": "p1 -> s1"}
    # the newest ASYNC run: the SYNC one after it measured commit-sized writes awaiting their acknowledgements
    assert value(found, "redolab_path_throughput_bytes_per_second", **pair) == 80 * MB
    # the last 24 h of ASYNC runs: 100 and 80 MB/s (not the SYNC run's 30, the run of 48 h ago, the failed
    # or the rehearsal's)
    assert value(found, "redolab_path_throughput_p5_24h_bytes_per_second", **pair) == pytest.approx(81 * MB)
    assert value(found, "redolab_path_required_bytes_per_second", **pair) == 60 * MB  # the watch's judgement
    assert value(found, "redolab_path_headroom_ratio", **pair) == pytest.approx(80 / 60 - 1)
    assert value(found, "redolab_path_sync_ack_p99_seconds", **pair) == 0.004
    age = value(found, "redolab_path_last_run_age_seconds", **pair)
    assert aged(age, 2700), (age, grown)  # the SYNC run

    every = {"environment": "Payroll", "path": data.every_pair}
    assert value(found, "redolab_path_throughput_bytes_per_second", **every) == 62 * MB  # the last judged check
    assert value(found, "redolab_path_throughput_p5_24h_bytes_per_second", **every) == pytest.approx(62.1 * MB)
    assert value(found, "redolab_path_headroom_ratio", **every) == pytest.approx(62 / 60 - 1)
    assert ("redolab_path_sync_ack_p99_seconds", frozenset(every.items())) not in found  # the last check had none
    age = value(found, "redolab_path_last_run_age_seconds", **every)
    assert aged(age, 600), (age, grown)  # the last judged check began 10 minutes ago

    ids = {name: str(watch_id) for watch_id, name in session.execute(select(Watch.id, Watch.name))}
    cluster = {**every, "watch": "cluster", "watch_id": ids["cluster"]}
    assert value(found, "redolab_watch_state", **cluster, state="at_risk") == 1
    assert {value(found, "redolab_watch_state", **cluster, state=s) for s in ("unknown", "ok", "failing")} == {0}
    assert value(found, "redolab_watch_state", **pair, watch="pair", watch_id=ids["pair"], state="ok") == 1
    assert value(found, "redolab_watch_interval_seconds", **cluster) == 300
    assert value(found, "redolab_watch_silenced", **cluster) == 1
    assert value(found, "redolab_watch_silenced", **pair, watch="pair", watch_id=ids["pair"]) == 0

    assert value(found, "redolab_environment_redo_peak_bytes_per_second", environment="Payroll") == 50 * MB
    assert value(found, "redolab_environment_redo_required_bytes_per_second", environment="Payroll") == 65 * MB
    age = value(found, "redolab_environment_last_import_age_seconds", environment="Payroll")
    assert aged(age, 2 * 86400), (age, grown)
    assert not [key for key in found if ("environment", "Billing") in key[1]]  # nothing measured or imported


def test_without_a_watch_a_path_needs_the_busiest_threads_requirement(session):
    data = populate(session)
    session.query(Watch).delete()
    session.commit()
    found = samples(render_metrics(session=session).decode())
    pair = {"environment": data.environment, "path": data.pair}
    assert value(found, "redolab_path_required_bytes_per_second", **pair) == 65 * MB  # the stored analysis's
    assert value(found, "redolab_path_headroom_ratio", **pair) == pytest.approx(80 / 65 - 1)
    assert not [key for key in found if key[0].startswith("redolab_watch_")]


def test_one_path_is_one_series_whatever_its_runs(session):
    environment = make_environment(session, name="Many")
    primary = make_host(session, environment, role="primary", name="p1")
    standby = make_host(session, environment, role="standby", name="s1")
    now = utcnow()
    session.execute(insert(Run), [
        {"environment_id": environment.id, "client_host_id": primary.id, "server_host_id": standby.id,
         "client_host_name": "p1", "server_host_name": "s1", "mode": "async", "conns": 1, "message_bytes": MB,
         "duration_seconds": 10, "interval_seconds": 1, "requested_by": "alice", "status": RunStatus.succeeded,
         "bytes_per_second": (n + 1) * MB, "label": f"run {n}", "tags": [], "created_at": now - timedelta(minutes=n),
         "finished_at": now - timedelta(minutes=n)}
        for n in range(100)
    ])  # fmt: skip
    session.commit()
    body = render_metrics(session=session).decode()
    for family in text_string_to_metric_families(body):
        if family.name.startswith("redolab_path_throughput"):
            assert len(family.samples) == 1, family
    found = samples(body)
    pair = {"environment": "Many", "path": "p1 -> s1"}
    assert value(found, "redolab_path_throughput_bytes_per_second", **pair) == 1 * MB  # the newest
    assert value(found, "redolab_path_throughput_p5_24h_bytes_per_second", **pair) == pytest.approx(5.95 * MB)
    labels = {name for family in text_string_to_metric_families(body) for s in family.samples for name in s.labels}
    assert labels == {"environment", "path"}  # no run id or label among them


def test_a_scrape_costs_the_same_queries_for_one_environment_or_many(session, engine):
    def statements() -> int:
        count = 0

        def counted(*_):
            nonlocal count
            count += 1

        event.listen(engine, "before_cursor_execute", counted)
        try:
            render_metrics(session=session)
        finally:
            event.remove(engine, "before_cursor_execute", counted)
        return count

    populate(session)
    one = statements()
    for number in range(5):
        environment = make_environment(session, name=f"more {number}")
        hosts = [make_host(session, environment, role=r, name=f"{r} {number}") for r in ("primary", "standby")]
        for _ in range(3):
            make_measured_run(session, environment.id, *hosts, 50 * MB)
    session.expire_all()
    assert statements() == one <= 8


def test_percentile_cont_is_postgresqls():
    assert percentile_cont([1.0], 0.05) == 1.0
    assert percentile_cont([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile_cont([0.0, 10.0], 0.05) == pytest.approx(0.5)


def test_a_scrape_of_an_empty_database_is_well_formed(session):
    snapshot = read_snapshot(session=session)
    assert snapshot.paths == snapshot.watches == snapshot.environments == ()
    assert text_string_to_metric_families(render_metrics(session=session).decode())


# -- the route ----------------------------------------------------------------------------------------
def _client(settings, token: str | None) -> TestClient:
    update = {"metrics_token": SecretStr(token) if token is not None else None}
    return TestClient(create_app(settings.model_copy(update=update)), follow_redirects=False)


def test_metrics_are_off_without_a_token(settings, engine):
    for token in (None, ""):
        with _client(settings, token) as client:
            assert client.get("/metrics").status_code == 404
            assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 404


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", f"Basic {TOKEN}", f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", "Bearer wrong"],
)
def test_metrics_refuse_a_missing_or_wrong_token(settings, engine, authorization):
    headers = {"Authorization": authorization} if authorization is not None else {}
    with _client(settings, TOKEN) as client:
        response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "redolab_" not in response.text


def test_metrics_answer_the_token_without_a_login(settings, session):
    populate(session)
    with _client(settings, TOKEN) as client:
        response = client.get("/metrics", headers={"Authorization": f"bearer {TOKEN}"})
        user_token = client.get("/metrics", headers={"Authorization": "Bearer not-the-metrics-token"})
    assert response.status_code == 200
    assert response.headers["content-type"] == CONTENT_TYPE == "text/plain; version=0.0.4; charset=utf-8"
    assert "redolab_session" not in response.headers.get("set-cookie", "")  # no login session begun
    assert value(samples(response.text), "redolab_path_throughput_bytes_per_second", environment="Payroll",
                 path="p1 -> s1") == 80 * MB  # fmt: skip
    assert user_token.status_code == 401


def test_a_token_beyond_ascii_is_compared_as_its_utf8_bytes(settings, engine):
    token = "jeton-été-0123456789"
    with _client(settings, token) as client:
        right = client.get("/metrics", headers={"Authorization": f"Bearer {token}".encode()})
        wrong = client.get("/metrics", headers={"Authorization": "Bearer jeton-ete-0123456789"})
    assert (right.status_code, wrong.status_code) == (200, 401)


def test_every_watch_has_a_label_set_of_its_own(session):
    """Two watches of one name on one path were told apart by renaming the second "pair (watch N)",
    which another watch could be named: two series with one label set. The watch's id is a label."""
    data = populate(session)
    (pair_watch,) = session.scalars(select(Watch).where(Watch.name == "pair"))
    fields = {"environment_id": pair_watch.environment_id, "path_label": "p1 -> s1", "requested_by": "alice",
              "client_host_id": pair_watch.client_host_id, "server_host_id": pair_watch.server_host_id}  # fmt: skip
    # explicit ids: the one named as the twin would be renamed comes first, as the scrape orders them
    session.add(Watch(id=1000, name="pair (watch 1001)", every_seconds=60, **fields))
    session.add(Watch(id=1001, name="pair", state=WatchState.failing, every_seconds=600, **fields))
    session.commit()
    body = render_metrics(session=session).decode()
    for family in text_string_to_metric_families(body):
        label_sets = [frozenset(sample.labels.items()) for sample in family.samples]
        assert len(label_sets) == len(set(label_sets)), (family.name, label_sets)
    found = samples(body)
    names = dict(session.execute(select(Watch.id, Watch.name)).all())
    watches = [dict(labels) for name, labels in found if name == "redolab_watch_interval_seconds"]
    assert sorted((labels["watch_id"], labels["watch"]) for labels in watches) == sorted(
        (str(watch_id), name) for watch_id, name in names.items()
    )  # each watch once, by its id, under its own name
    pair = {"environment": "Payroll", "path": data.pair}
    assert value(found, "redolab_watch_state", **pair, watch="pair", watch_id="1001", state="failing") == 1


def test_label_values_are_escaped_as_the_format_wants(session):
    environment = make_environment(session, name='Pay "roll" \\ east')
    primary = make_host(session, environment, role="primary", name="p1")
    standby = make_host(session, environment, role="standby", name="s1")
    make_measured_run(session, environment.id, primary, standby, 7 * MB)
    body = render_metrics(session=session).decode()
    assert 'environment="Pay \\"roll\\" \\\\ east"' in body
    assert value(samples(body), "redolab_path_throughput_bytes_per_second", environment='Pay "roll" \\ east',
                 path="p1 -> s1") == 7 * MB  # fmt: skip


# -- a real Prometheus --------------------------------------------------------------------------------
PROMETHEUS_SECONDS = 60  # the deadline for the series to come back at all: some 5 s; 45 s is the margin


def _tool(name: str) -> str:
    found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if found is None:
        services.missing(f"Prometheus ({name})", "install Debian's prometheus package (make test does)")
    return found


def _start_prometheus(binary: str, directory: Path, target: str) -> tuple[subprocess.Popen, str]:
    """Prometheus on a free loopback port, scraping `target` every second with the metrics token."""
    port = services.free_port()
    config = directory / "prometheus.yml"
    config.write_text(textwrap.dedent(f"""\
        global:
          scrape_interval: 1s
          scrape_timeout: 1s
        scrape_configs:
          - job_name: redolab
            metrics_path: /metrics
            authorization:
              type: Bearer
              credentials: {TOKEN}
            static_configs:
              - targets: ["{target}"]
        """))  # fmt: skip
    process = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1h"],
        stdout=subprocess.DEVNULL, stderr=open(directory / "prometheus.log", "w"),  # noqa: SIM115
    )  # fmt: skip
    return process, f"http://127.0.0.1:{port}"


def _query(client: httpx.Client, query: str) -> list[dict]:
    try:
        answer = client.get("/api/v1/query", params={"query": query})
    except httpx.TransportError:
        return []  # not listening yet
    return answer.json()["data"]["result"] if answer.status_code == 200 else []


def _start_redolab(data_dir: Path, port: int, database_url: str) -> subprocess.Popen:
    """`redolab serve` (uvicorn) on `port` with the metrics token in its environment, as an operator sets it."""
    env = services.redolab_env(data_dir, REDOLAB_DATABASE_URL=database_url, REDOLAB_METRICS_TOKEN=TOKEN,
                               REDOLAB_WORKER_ENABLED="false")  # fmt: skip
    return subprocess.Popen(
        [str(services.REDOLAB), "serve", "--port", str(port)],
        env=env,
        cwd=data_dir,
        stdout=open(data_dir / "redolab.log", "w"),
        stderr=subprocess.STDOUT,
    )


def test_a_real_prometheus_scrapes_redolab_and_reads_the_series_back(tmp_path, tmp_path_factory):
    binary = _tool("prometheus")
    url = migrated_sqlite(tmp_path_factory)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        data = populate(session)
        expected = session.get(Run, data.last_run_id).bytes_per_second
    engine.dispose()
    selector = f'redolab_path_throughput_bytes_per_second{{environment="{data.environment}",path="{data.pair}"}}'
    attempts = iter(range(1, 3))

    def scraped() -> float | str:
        """Seconds from the start of both until the series was read back (what the logs said if never)."""
        directory = tmp_path / f"attempt-{next(attempts)}"
        directory.mkdir()
        started = time.monotonic()
        # Prometheus first: it takes its targets some 5 s after it starts, while redolab starts
        port = services.free_port()
        prometheus, prometheus_url = _start_prometheus(binary, directory, f"127.0.0.1:{port}")
        redolab = _start_redolab(directory, port, url)
        try:
            with httpx.Client(base_url=prometheus_url, timeout=5) as client:
                result = []
                while not result and time.monotonic() - started < PROMETHEUS_SECONDS:
                    time.sleep(0.3)
                    result = _query(client, selector)
                read_after = time.monotonic() - started
                up = _query(client, 'up{job="redolab"}')
                state = _query(client, 'redolab_watch_state{watch="cluster"} == 1')
        finally:
            for process in (prometheus, redolab):
                process.terminate()
            for process in (prometheus, redolab):
                process.wait(timeout=10)
        if not result:  # a machine too busy to start both in time: a miss, measured once more
            logs = "\n".join((directory / name).read_text()[-2000:] for name in ("prometheus.log", "redolab.log"))
            return f"no series after {PROMETHEUS_SECONDS} s:\n{logs}"
        assert float(result[0]["value"][1]) == expected == 80 * MB
        assert result[0]["metric"]["job"] == "redolab"
        assert [float(u["value"][1]) for u in up] == [1.0]
        assert [s["metric"]["state"] for s in state] == ["at_risk"]
        return read_after

    # some 5 s on this machine; a busy one starts both processes slower: once more before that fails
    def misses(seconds: float | str) -> list[str]:
        if isinstance(seconds, str):
            return [seconds]
        return [f"read back after {seconds:.1f} s (< 45 s)"] * (seconds >= 45)

    measured_within(scraped, misses, "a real Prometheus scraping redolab")


# -- the deploy files ---------------------------------------------------------------------------------
def test_the_alerting_rules_and_the_example_config_pass_promtool(tmp_path):
    promtool = _tool("promtool")
    rules = DEPLOY / "prometheus/redolab-alerts.yml"
    checked = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # the example scrape config (with its rule file beside it), as an operator would copy both
    shutil.copy(rules, tmp_path / rules.name)
    config = (DEPLOY / "prometheus/prometheus.yml").read_text()
    (tmp_path / "prometheus.yml").write_text(config)
    (tmp_path / "redolab-metrics-token").write_text(TOKEN)
    checked = subprocess.run([promtool, "check", "config", "prometheus.yml"], capture_output=True, text=True,
                             cwd=tmp_path)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


ALERT_TESTS = """\
rule_files: [{rules}]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'redolab_watch_state{{environment="Payroll",path="p1 -> s1",watch="pair",watch_id="1",state="failing"}}'
        values: '0 1x20'
      - series: 'redolab_watch_silenced{{environment="Payroll",path="p1 -> s1",watch="pair",watch_id="1"}}'
        values: '0x20'
      - series: 'redolab_watch_state{{environment="Payroll",path="all node pairs (2)",watch="cluster",watch_id="2",state="at_risk"}}'
        values: '1x70'
      - series: 'redolab_watch_silenced{{environment="Payroll",path="all node pairs (2)",watch="cluster",watch_id="2"}}'
        values: '0x70'
      - series: 'redolab_watch_state{{environment="Billing",path="b1 -> c1",watch="quiet",watch_id="3",state="failing"}}'
        values: '1x20'
      - series: 'redolab_watch_silenced{{environment="Billing",path="b1 -> c1",watch="quiet",watch_id="3"}}'
        values: '1x20'
      # a second watch of the same name on the same path, not silenced: the first one's silence is its own
      - series: 'redolab_watch_state{{environment="Billing",path="b1 -> c1",watch="quiet",watch_id="4",state="failing"}}'
        values: '0 1x20'
      - series: 'redolab_watch_silenced{{environment="Billing",path="b1 -> c1",watch="quiet",watch_id="4"}}'
        values: '0x20'
      - series: 'redolab_path_headroom_ratio{{environment="Payroll",path="p1 -> s1"}}'
        values: '0.05x20'
      - series: 'redolab_path_last_run_age_seconds{{environment="Payroll",path="p1 -> s1"}}'
        values: '100+60x80'
      - series: 'redolab_watch_interval_seconds{{environment="Payroll",path="p1 -> s1",watch="pair",watch_id="1"}}'
        values: '900x80'
      - series: 'redolab_notifications_oldest_undelivered_age_seconds'
        values: '0x10 60+60x40'
    alert_rule_test:
      - eval_time: 5m
        alertname: RedolabWatchFailing
        exp_alerts:
          - exp_labels: {{severity: critical, environment: Payroll, path: "p1 -> s1", watch: pair, watch_id: "1",
                          state: failing}}
            exp_annotations: {{summary: "Payroll: the link p1 -> s1 carries less than the redo requirement"}}
          - exp_labels: {{severity: critical, environment: Billing, path: "b1 -> c1", watch: quiet, watch_id: "4",
                          state: failing}}
            exp_annotations: {{summary: "Billing: the link b1 -> c1 carries less than the redo requirement"}}
      - eval_time: 30m
        alertname: RedolabWatchAtRisk
        exp_alerts: []
      - eval_time: 65m
        alertname: RedolabWatchAtRisk
        exp_alerts:
          - exp_labels: {{severity: warning, environment: Payroll, path: "all node pairs (2)", watch: cluster,
                          watch_id: "2", state: at_risk}}
            exp_annotations: {{summary: "Payroll: the link all node pairs (2) has been AT RISK for an hour"}}
      - eval_time: 20m
        alertname: RedolabHeadroomLow
        exp_alerts:
          - exp_labels: {{severity: warning, environment: Payroll, path: "p1 -> s1"}}
            exp_annotations: {{summary: "Payroll: p1 -> s1 has 5% headroom"}}
      - eval_time: 20m  # a notification waiting 11 minutes: retries back off, not yet stuck
        alertname: RedolabNotificationsStuck
        exp_alerts: []
      - eval_time: 35m
        alertname: RedolabNotificationsStuck
        exp_alerts:
          - exp_labels: {{severity: warning}}
            exp_annotations: {{summary: "redolab has a notification undelivered for 25m 0s"}}
      - eval_time: 50m  # older than twice the 15 min interval, but not yet an hour
        alertname: RedolabWatchStale
        exp_alerts: []
      - eval_time: 70m
        alertname: RedolabWatchStale
        exp_alerts:
          - exp_labels: {{severity: warning, environment: Payroll, path: "p1 -> s1"}}
            exp_annotations: {{summary: "Payroll: no measurement of p1 -> s1 for 1h 11m 40s"}}
"""  # noqa: E501  (a series with all its labels is one line of the YAML)


def test_the_alerts_fire_when_they_should(tmp_path):
    """promtool's unit tests of the rules (their summaries; the longer descriptions left out here)."""
    promtool = _tool("promtool")
    document = yaml.safe_load((DEPLOY / "prometheus/redolab-alerts.yml").read_text())
    for group in document["groups"]:
        for rule in group["rules"]:
            rule["annotations"].pop("description")
    rules = tmp_path / "redolab-alerts.yml"
    rules.write_text(yaml.safe_dump(document))
    tests = tmp_path / "alerts_test.yml"
    tests.write_text(ALERT_TESTS.format(rules=json.dumps(str(rules))))
    checked = subprocess.run([promtool, "test", "rules", str(tests)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_dashboard_and_the_rules_use_only_metrics_redolab_exposes(session):
    populate(session)
    exposed = {family.name for family in text_string_to_metric_families(render_metrics(session=session).decode())}
    dashboard = json.loads((DEPLOY / "grafana/redolab-dashboard.json").read_text())
    rules = yaml.safe_load((DEPLOY / "prometheus/redolab-alerts.yml").read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    expressions += [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    used = {name for expression in expressions for name in re.findall(r"\bredolab_[a-z0-9_]+", expression)}
    assert used and used <= exposed, used - exposed
    assert {"redolab_path_throughput_bytes_per_second", "redolab_path_required_bytes_per_second",
            "redolab_path_headroom_ratio", "redolab_watch_state", "redolab_path_last_run_age_seconds",
            "redolab_environment_redo_peak_bytes_per_second"} <= used  # fmt: skip


def test_metrics_say_how_old_the_oldest_undelivered_notification_is(session):
    """Issue 57, item 3: alerts about alerts: the oldest notification waiting, how many, receivers failing."""
    from datetime import timedelta

    from redolab.core.db import utcnow
    from redolab.watches.models import Notification, NotificationReceiver

    populate(session)
    watch_id = session.scalar(select(Watch.id))
    now = utcnow()
    receiver = NotificationReceiver(name="down", kind="webhook", url="https://hooks.example.net/x", created_by="a",
                                    failing_until=now + timedelta(minutes=3))  # fmt: skip
    session.add(receiver)
    session.flush()
    for transition, age, status in ((101, 1200, "pending"), (102, 60, "sending"), (103, 9000, "delivered")):
        queued = now - timedelta(seconds=age)
        session.add(Notification(watch_id=watch_id, transition=transition, receiver_id=receiver.id, from_state="ok",
                                 to_state="failing", payload={}, status=status, created_at=queued))  # fmt: skip
    session.commit()
    families = {f.name: f for f in text_string_to_metric_families(render_metrics(session=session, now=now).decode())}
    value = lambda name: families[name].samples[0].value  # noqa: E731
    assert value("redolab_notifications_oldest_undelivered_age_seconds") == pytest.approx(1200, abs=1)
    assert value("redolab_notifications_undelivered") == 2 and value("redolab_notification_receivers_failing") == 1
