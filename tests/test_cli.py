"""The `redolab` command. Most commands run in this process through typer's CliRunner
(tests/cli_runner.py: the same app, environment, working directory and standard input as the installed
command; a `redolab` process costs 1-5 s of CPU, mostly imports this process has done already). A
real process where the process is the point: `--version` (the installed entry point starts),
`db upgrade` (Alembic's scripts loaded by the command itself), the first `user create` on a new data
directory with its password piped in, `secret encrypt` reading a pipe, and `redolab worker`, which
runs what the commands queue and stops on SIGTERM. `redolab serve` runs as a process in the browser
and served tests (tests/services.py start_redolab); here only its refusals of a production
configuration, which come before it binds a port."""

import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import inspect, select
from sqlalchemy.engine import make_url

from redolab.auth.service import get_user_by_username
from redolab.core.db import make_engine, make_sessionmaker
from redolab.core.security import verify_password
from tests.cli_runner import invoke, run_process
from tests.conftest import migrated_sqlite
from tests.factories import make_user
from tests.services import REDOLAB, redolab_env


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> Path:
    """A SQLite database at the current schema, upgraded as `redolab db upgrade` does it (that command is
    test_db_upgrade_creates_the_schema's): the tests of other commands start from a copy of it rather
    than from an upgrade of their own (Alembic's scripts: 1.5 s of CPU in this process, 4 s in a new one)."""
    return Path(make_url(migrated_sqlite(tmp_path_factory)).database)


def upgraded(data_dir: Path, schema: Path) -> None:
    shutil.copy(schema, data_dir / "redolab.db")


def lab_one(data_dir: Path, schema: Path) -> None:
    """The schema, and an environment "lab one" with "This machine" hosts p1 (primary) and s1 (standby)."""
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host

    upgraded(data_dir, schema)
    engine = make_engine(f"sqlite:///{data_dir / 'redolab.db'}")
    with make_sessionmaker(engine)() as session:
        environment = create_environment(session=session, env_in=EnvironmentCreate(name="lab one"))
        for role, name in (("primary", "p1"), ("standby", "s1")):
            create_host(
                session=session, environment=environment, host_in=HostCreate(role=role, name=name, transport="local")
            )
    engine.dispose()


def _user(data_dir, username):
    engine = make_engine(f"sqlite:///{data_dir / 'redolab.db'}")
    with make_sessionmaker(engine)() as session:
        user = get_user_by_username(session=session, username=username)
    engine.dispose()
    return user


def test_version(tmp_path):
    result = run_process(tmp_path, "--version")
    assert result.returncode == 0
    assert result.stdout.strip() == "0.1.0"


def test_db_upgrade_creates_the_schema(tmp_path):
    result = run_process(tmp_path, "db", "upgrade")
    assert result.returncode == 0, result.stderr
    engine = make_engine(f"sqlite:///{tmp_path / 'redolab.db'}")
    assert {"environments", "hosts", "users"} <= set(inspect(engine).get_table_names())
    engine.dispose()


def test_user_create_reads_password_from_stdin(tmp_path):
    """The first user as a process on a new data directory (the schema created), the others in this one."""
    result = run_process(tmp_path, "user", "create", "bob", "--password-stdin", stdin="a long enough pass\n")
    assert result.returncode == 0, result.stderr
    assert "user 'bob' created (admin: the first user is an admin" in result.stdout  # as the setup link
    assert "a long enough pass" not in result.stdout + result.stderr
    user = _user(tmp_path, "bob")
    assert verify_password("a long enough pass", user.password_hash)
    second = invoke(tmp_path, "user", "create", "carl", "--role", "viewer", stdin="a long enough pass\n")
    assert "user 'carl' created (viewer)" in second.stdout, second.stderr
    third = invoke(tmp_path, "user", "create", "dora", stdin="a long enough pass\n")
    assert "user 'dora' created (operator)" in third.stdout, third.stderr
    listing = invoke(tmp_path, "user", "list")
    assert listing.stdout.startswith("bob\tadmin\t") and "carl\tviewer\t" in listing.stdout


def test_user_create_never_takes_password_from_argv(tmp_path):
    result = invoke(tmp_path, "user", "create", "bob", "--password", "secret-in-argv")
    assert result.returncode == 2
    assert _user(tmp_path, "bob") is None if (tmp_path / "redolab.db").exists() else True


@pytest.mark.parametrize(
    ("username", "password", "message"),
    [("bob", "short", "at least 12 characters"), ("bad name!", "long enough password", "1 to 64")],
)
def test_user_create_refuses_bad_input(tmp_path, schema, username, password, message):
    upgraded(tmp_path, schema)  # what the command would create first (test_user_create_reads_password_from_stdin)
    result = invoke(tmp_path, "user", "create", username, stdin=password + "\n")
    assert result.returncode == 1
    assert message in result.stderr
    assert _user(tmp_path, username) is None


def test_duplicate_user_refused(tmp_path, schema):
    upgraded(tmp_path, schema)
    engine = make_engine(f"sqlite:///{tmp_path / 'redolab.db'}")
    with make_sessionmaker(engine)() as session:
        make_user(session, "bob")
    engine.dispose()
    again = invoke(tmp_path, "user", "create", "bob", stdin="another long password\n")
    assert again.returncode == 1
    assert "already exists" in again.stderr


def test_user_lifecycle_commands(tmp_path, schema):
    """Each command once (a CLI process takes 1.5-3 s; `user create` has tests of its own above); the
    rules behind them are tested in tests/security/test_sessions.py."""
    from redolab.auth.models import Role, UserSession

    upgraded(tmp_path, schema)
    engine = make_engine(f"sqlite:///{tmp_path / 'redolab.db'}")
    with make_sessionmaker(engine)() as session:  # an admin, and bob, logged in somewhere
        make_user(session, "root1", role=Role.admin)
        bob = make_user(session, "bob", role=Role.operator)
        session.add(UserSession(user_id=bob.id, key_hash="0" * 64))
        session.commit()
    engine.dispose()
    changed = invoke(tmp_path, "user", "password", "bob", "--password-stdin", stdin="violet tractor sonnet\n")
    assert changed.returncode == 0 and "1 session ended" in changed.stdout, changed.stderr
    assert verify_password("violet tractor sonnet", _user(tmp_path, "bob").password_hash)
    assert invoke(tmp_path, "user", "disable", "bob").returncode == 0
    assert _user(tmp_path, "bob").disabled_at is not None
    assert invoke(tmp_path, "user", "enable", "bob").returncode == 0
    assert _user(tmp_path, "bob").disabled_at is None
    assert "0 sessions of 'bob' ended" in invoke(tmp_path, "user", "end-sessions", "bob").stdout
    last = invoke(tmp_path, "user", "delete", "root1")
    assert last.returncode == 1 and "last active admin" in last.stderr
    assert invoke(tmp_path, "user", "delete", "bob").returncode == 0
    assert _user(tmp_path, "bob") is None


def test_run_command_refuses_unknown_names(tmp_path, schema):
    upgraded(tmp_path, schema)
    result = invoke(tmp_path, "run", "--env", "nope", "--client", "a", "--server", "b")
    assert result.returncode == 1
    assert "no environment named 'nope'" in result.stderr


def test_user_create_refuses_unknown_role(tmp_path):
    result = invoke(tmp_path, "user", "create", "bob", "--role", "god", stdin="long enough password\n")
    assert result.returncode == 1
    assert "--role must be viewer, operator or admin" in result.stderr


@pytest.fixture
def no_server(monkeypatch):
    """`redolab serve` in this process must refuse before it serves: were it to get as far as uvicorn,
    the test fails rather than serving (a process would listen until its timeout)."""
    monkeypatch.setattr("uvicorn.run", lambda *args, **kwargs: pytest.fail("redolab serve started serving"))


def test_production_refuses_weak_secret(tmp_path, no_server):
    result = invoke(tmp_path, "serve", REDOLAB_ENV="production", REDOLAB_SECRET_KEY="changeme")
    assert result.returncode == 1
    assert "REDOLAB_SECRET_KEY is too weak" in result.stderr
    assert "changeme" not in result.stderr


def test_production_requires_secret(tmp_path, no_server):
    result = invoke(tmp_path, "serve", REDOLAB_ENV="production")
    assert result.returncode == 1
    assert "REDOLAB_SECRET_KEY is required" in result.stderr


def test_secret_encrypt_prints_what_the_mail_sender_decrypts(tmp_path):
    """`redolab secret encrypt` reads the secret from stdin (never argv) and prints the value to set;
    redolab decrypts it with the same key only to log in (tests/watches/test_notify.py sends with it).
    The first as a process reading a pipe, the refusal of an empty line in this one."""
    from redolab.core.config import Settings
    from redolab.watches.notify import ENCRYPTED_PREFIX, smtp_password

    key = "a secret key for this test only, long enough"
    result = run_process(tmp_path, "secret", "encrypt", stdin="smtp-pass-6f1e\n", REDOLAB_SECRET_KEY=key)
    assert result.returncode == 0, result.stderr
    value = result.stdout.strip()
    assert value.startswith(ENCRYPTED_PREFIX) and "smtp-pass-6f1e" not in value + result.stderr
    settings = Settings(smtp_user="redolab", smtp_password=value)
    assert smtp_password(settings, key) == "smtp-pass-6f1e"
    with pytest.raises(ValueError, match="cannot be decrypted"):
        smtp_password(settings, "another key, as long as the first one")
    empty = invoke(tmp_path, "secret", "encrypt", stdin="\n", REDOLAB_SECRET_KEY=key)
    assert empty.returncode == 1 and "no secret on standard input" in empty.stderr


@pytest.fixture(scope="module")
def lab_with_worker(tmp_path_factory, schema):
    """A data directory with "lab one" (lab_one) and a real `redolab worker` on it, shared by the tests
    that wait for a run or a rehearsal (a worker process takes some 3 s of CPU to start). At the end the
    worker, waiting for jobs, stops on SIGTERM with exit code 0, or this fixture fails."""
    data_dir = tmp_path_factory.mktemp("lab")
    lab_one(data_dir, schema)
    worker = subprocess.Popen(
        [str(REDOLAB), "worker"], env=redolab_env(data_dir), cwd=data_dir, stdout=subprocess.PIPE, text=True
    )
    try:
        assert "waiting for jobs" in worker.stdout.readline()
        yield data_dir
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=15) == 0, "redolab worker did not stop on SIGTERM with exit code 0"
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        worker.stdout.close()


def test_run_command_waits_for_a_worker(lab_with_worker):
    """`redolab run --wait --json` on "This machine" hosts, executed by a real `redolab worker`."""
    import json

    result = invoke(
        lab_with_worker,
        "run",
        "--env",
        "lab one",
        "--client",
        "p1",
        "--server",
        "s1",
        "--duration",
        "1 s",
        "--interval",
        "0.5 s",
        "--conns",
        "2",
        "--wait",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["status"] == "succeeded" and record["conns"] == 2
    assert record["bytes_received"] == record["bytes_sent"] > 0


def test_rehearse_command_replays_the_worst_minute_and_reports_the_lag(tmp_path, lab_with_worker):
    """`redolab rehearse --wait --json` after `redolab redo import`: a two-thread per-log history whose
    second thread (512 bytes a log) is too quiet to carry a whole byte at the scale asked, replayed by a real `redolab
    worker` on "This machine" hosts; the queued line says what was left out, and a bad scale is refused
    naming its field."""
    import json
    from datetime import datetime, timedelta

    lines, t0 = ["THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE"], datetime(2025, 3, 4, 12, 0)
    for thread, blocks in ((1, 2048 * 600), (2, 1)):  # 600 MiB and 512 bytes per 10-minute log
        for n in range(3):
            start, end = t0 + timedelta(minutes=10 * n), t0 + timedelta(minutes=10 * (n + 1))
            lines.append(f"{thread},{100 + n},{start:%Y-%m-%d %H:%M:%S},{end:%Y-%m-%d %H:%M:%S},{blocks},512")
    (tmp_path / "arch.csv").write_text("\n".join(lines) + "\n")
    imported = invoke(lab_with_worker, "redo", "import", "--env", "lab one", str(tmp_path / "arch.csv"))
    assert imported.returncode == 0, imported.stderr
    refused = invoke(lab_with_worker, "rehearse", "--env", "lab one", "--scale", "2000")
    assert refused.returncode == 1 and "scale" in refused.stderr and "1000" in refused.stderr, refused.stderr
    rehearse = ("rehearse", "--env", "lab one", "--window", "worst-1m", "--scale", "0.005", "--speedup", "30", "--wait")
    shown = invoke(lab_with_worker, *rehearse)
    result = invoke(lab_with_worker, *rehearse, "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["status"] == "succeeded" and record["threads"] == [1] and record["compressed"] is True
    assert record["notes"] == ["thread 2 has no redo in the window after scale 0.005: not in the replay"]
    assert record["result"]["bytes_received"] == record["schedule_bytes"] == round(600 * 1024 * 1024 / 10 * 0.005)
    assert record["result"]["max_lag_seconds"] >= 0 and record["result"]["drained"] is True
    assert shown.returncode == 0, shown.stderr
    assert "note: thread 2 has no redo in the window after scale 0.005" in shown.stdout
    assert "maximum transport lag" in shown.stdout and "after the last scheduled byte" in shown.stdout


def lab_one_with_half_an_hour(tmp_path, schema) -> None:
    """ "lab one" with three 10-minute logs of one thread imported (`redolab redo import`)."""
    lab_one(tmp_path, schema)
    lines = ["THREAD#,SEQUENCE#,FIRST_TIME,NEXT_TIME,BLOCKS,BLOCK_SIZE"]
    lines += [
        f"1,{100 + n},2025-03-04 12:{10 * n:02d}:00,2025-03-04 12:{10 * n + 10:02d}:00,2048,512" for n in range(3)
    ]
    (tmp_path / "arch.csv").write_text("\n".join(lines) + "\n")
    imported = invoke(tmp_path, "redo", "import", "--env", "lab one", str(tmp_path / "arch.csv"))
    assert imported.returncode == 0, imported.stderr


def test_rehearse_command_past_the_queue_cap_is_refused_naming_the_cap(tmp_path, schema):
    """With REDOLAB_MAX_QUEUED_PER_USER=1 and no worker, the first rehearsal stays queued and the second is
    refused by the cap (429): an error line naming the cap and exit 1, not a traceback (in this process an
    exception the command lets out fails the test: tests/cli_runner.py)."""
    lab_one_with_half_an_hour(tmp_path, schema)
    rehearse = ("rehearse", "--env", "lab one", "--window", "worst-1m")
    queued = invoke(tmp_path, *rehearse, REDOLAB_MAX_QUEUED_PER_USER="1")
    assert queued.returncode == 0 and "queued" in queued.stdout, queued.stderr
    refused = invoke(tmp_path, *rehearse, REDOLAB_MAX_QUEUED_PER_USER="1")
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.startswith("error: You have 1 runs and sweeps queued"), refused.stderr
    assert "REDOLAB_MAX_QUEUED_PER_USER=1" in refused.stderr and "Traceback" not in refused.stderr


def test_rehearse_command_caps_at_a_tier_and_names_a_bad_cap(tmp_path, schema):
    """`--cap 200Mbit/s`: the queued rehearsal is paced at the tier's IP rate (1500 of 1538 wire bytes) for its
    one thread and says so; `--cap fast` is refused naming the field."""
    import json

    lab_one_with_half_an_hour(tmp_path, schema)
    rehearse = ("rehearse", "--env", "lab one", "--window", "worst-1m")
    queued = invoke(tmp_path, *rehearse, "--cap", "200Mbit/s", "--json")
    assert queued.returncode == 0, queued.stderr
    record = json.loads(queued.stdout)
    assert record["cap_bits_per_second"] == 200_000_000
    assert any(note.startswith("paced at 195.06 Mbit/s of IP packets") for note in record["notes"]), record["notes"]
    refused = invoke(tmp_path, *rehearse, "--cap", "fast")
    assert refused.returncode == 1 and "cap_bits_per_second" in refused.stderr, refused.stderr


def test_rehearse_command_at_a_tier_queues_the_tier_below_first(tmp_path, schema):
    """`--tier "200 Mbit/s"`: two rehearsals queued, at 100 Mbit/s (the what-if's tier below) and at 200
    Mbit/s behind it, each capped and labelled; a tier the what-if does not list is refused naming those it
    does, and --tier with --cap is refused before anything is queued."""
    lab_one_with_half_an_hour(tmp_path, schema)
    rehearse = ("rehearse", "--env", "lab one", "--window", "worst-1m")
    both = invoke(tmp_path, *rehearse, "--tier", "200 Mbit/s", "--cap", "1Gbit/s")
    assert both.returncode == 1 and "--tier and --cap: give one" in both.stderr, both.stderr
    unknown = invoke(tmp_path, *rehearse, "--tier", "fast")
    assert unknown.returncode == 1 and "tier: 'fast' is not a tier the what-if lists" in unknown.stderr
    assert "200 Mbit/s" in unknown.stderr, unknown.stderr
    shown = invoke(tmp_path, *rehearse, "--tier", "200 Mbit/s")
    assert shown.returncode == 0, shown.stderr
    queued = [line.split(":")[0] for line in shown.stdout.splitlines() if "queued" in line]
    assert queued == ["rehearsal 1 queued at 100 Mbit/s", "rehearsal 2 queued at 200 Mbit/s"], shown.stdout
    from redolab.rehearsals.models import Rehearsal

    engine = make_engine(f"sqlite:///{tmp_path / 'redolab.db'}")
    with make_sessionmaker(engine)() as session:
        made = session.scalars(select(Rehearsal).order_by(Rehearsal.id)).all()
        assert [(r.cap_label, r.cap_bits_per_second, r.label) for r in made] == [
            ("100 Mbit/s", 100_000_000, "at 100 Mbit/s"),
            ("200 Mbit/s", 200_000_000, "at 200 Mbit/s"),
        ]
    engine.dispose()


def test_run_command_names_bad_options(tmp_path, schema):
    upgraded(tmp_path, schema)
    engine = make_engine(f"sqlite:///{tmp_path / 'redolab.db'}")
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host

    with make_sessionmaker(engine)() as session:
        environment = create_environment(session=session, env_in=EnvironmentCreate(name="e"))
        create_host(
            session=session, environment=environment, host_in=HostCreate(role="primary", name="p", transport="local")
        )
    engine.dispose()
    result = invoke(tmp_path, "run", "--env", "e", "--client", "p", "--server", "p", "--message-size", "1 Mb")
    assert result.returncode == 1
    assert "message_bytes: Message size: '1 Mb' looks like bits" in result.stderr  # the option and the field


def test_import_results_command(tmp_path, schema):
    """`redolab import-results`: every test of the files becomes a run; a bad file imports nothing."""
    from redolab.runs.models import Run

    data = Path(__file__).parent / "runs" / "data"
    lab_one(tmp_path, schema)
    engine = make_engine(f"sqlite:///{tmp_path / 'redolab.db'}")
    base = ("import-results", "--env", "lab one", "--client", "p1", "--server", "s1", "--date", "2026-03-04")
    bad = invoke(tmp_path, *base, str(data / "oratcptest_async.txt"), str(data / "oratcptest_server.txt"))
    assert bad.returncode == 1
    assert "oratcptest_server.txt: this is oratcptest server output" in bad.stderr
    assert "nothing was imported" in bad.stderr
    good = invoke(tmp_path, *base, str(data / "oratcptest_two_tests.txt"), str(data / "iperf3_two_streams.json"))
    assert good.returncode == 0, good.stderr
    assert "oratcptest from oratcptest_two_tests.txt, 4 connections, 195 MiB/s" in good.stdout
    with make_sessionmaker(engine)() as session:
        runs = session.query(Run).order_by(Run.id).all()
        assert [(r.source.value, r.conns) for r in runs] == [("oratcptest", 1), ("oratcptest", 4), ("iperf3", 2)]
    engine.dispose()


def test_emit_prints_only_the_chosen_form(capsys):
    """Every --json command prints through one helper: JSON with --json, else the text lines, each
    computed only when chosen."""
    from redolab.cli.output import emit

    def lines():
        yield "a"
        yield "b"

    emit(False, lambda: pytest.fail("the JSON was computed for the text form"), lines())
    emit(True, lambda: {"x": 1}, (pytest.fail("the text was computed for --json") for _ in "x"))
    assert capsys.readouterr().out == 'a\nb\n{\n  "x": 1\n}\n'


def test_run_command_queues_a_sync_run_under_load(tmp_path, schema):
    """`redolab run --load-conns N`: the SYNC run and its ASYNC load queued together, tagged as the API
    tags them; a SYNC run of several connections is refused naming the rule; --help says what it does."""
    import re

    from redolab.runs.models import Run

    upgraded(tmp_path, schema)
    engine = make_engine(f"sqlite:///{tmp_path / 'redolab.db'}")
    from redolab.environments.schemas import EnvironmentCreate, HostCreate
    from redolab.environments.service import create_environment, create_host

    with make_sessionmaker(engine)() as session:
        environment = create_environment(session=session, env_in=EnvironmentCreate(name="e"))
        for role, name in (("primary", "p"), ("standby", "s")):
            create_host(session=session, environment=environment, host_in=HostCreate(role=role, name=name,
                                                                                       transport="local"))  # fmt: skip
    common = ("run", "--env", "e", "--client", "p", "--server", "s", "--duration", "2 s", "--interval", "1 s")
    result = invoke(tmp_path, *common, "--load-conns", "3", "--label", "commits")
    assert result.returncode == 0, result.stderr
    sync_id, load_id = (int(line.split()[1]) for line in result.stdout.splitlines())
    assert result.stdout.splitlines()[1] == f"run {load_id} queued with it: the ASYNC load, 3 connections"
    with make_sessionmaker(engine)() as session:
        sync, load = session.get(Run, sync_id), session.get(Run, load_id)
        assert (sync.mode.value, sync.conns, sync.message_bytes) == ("sync", 1, 8192)
        assert {"under-load", f"load-run:{load_id}"} <= set(sync.tags)
        assert (load.mode.value, load.conns, load.duration_seconds, load.tags) == ("async", 3, 4.0, ["load"])
    engine.dispose()
    refused = invoke(tmp_path, *common, "--conns", "2", "--load-conns", "3", "--json")
    assert refused.returncode == 1 and "one SYNC connection" in refused.stderr, refused.stderr
    shown = invoke(tmp_path, "run", "--help")
    assert "--load-conns" in shown.stdout and "SYNC under load" in re.sub(r"[\s│]+", " ", shown.stdout)
