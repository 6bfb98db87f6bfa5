"""The `redolab` command: serve, worker, db upgrade, user, run, redo, plan, lab."""

from __future__ import annotations

import os
import secrets
import sys
from contextlib import contextmanager
from pathlib import Path

import typer

from redolab import __version__
from redolab.core.config import ConfigError, get_settings

app = typer.Typer(help="redolab: plan a database standby build with measured numbers.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
user_app = typer.Typer(help="Dashboard users.", no_args_is_help=True)
redo_app = typer.Typer(help="Redo history: analyze or import archived-log and AWR exports.", no_args_is_help=True)
plan_app = typer.Typer(
    help="Planning maths: BDP, TCP window, instantiation time, and an environment's plan.", no_args_is_help=True
)
lab_app = typer.Typer(
    help="The WAN lab: primary and standby hosts in network namespaces with a real RTT, rate and MTU (root).",
    no_args_is_help=True,
)
app.add_typer(redo_app, name="redo")
app.add_typer(lab_app, name="lab")
app.add_typer(plan_app, name="plan")
app.add_typer(db_app, name="db")
app.add_typer(user_app, name="user")


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


def _engine():
    import redolab.models  # noqa: F401 (every table: a foreign key to a model this command never loads still resolves)
    from redolab.core.db import make_engine

    return make_engine(get_settings().resolved_database_url)


@contextmanager
def _environment_named(name: str):
    """(session, environment) for the environment called `name`; a clear error if there is none."""
    from sqlalchemy import inspect, select

    from redolab.core.db import make_sessionmaker
    from redolab.environments.models import Environment

    engine = _engine()
    try:
        if not inspect(engine).has_table("environments"):
            _fail(f"the database {engine.url.render_as_string()} has no redolab tables yet: run `redolab db upgrade`")
        with make_sessionmaker(engine)() as session:
            environment = session.scalar(select(Environment).where(Environment.name == name))
            if environment is None:
                _fail(f"no environment named '{name}'")
            yield session, environment
    finally:
        engine.dispose()


def _hosts_named(environment, env: str, client: str, server: str) -> dict:
    """The environment's hosts by name; fails naming --client or --server when one is not there."""
    hosts = {host.name: host for host in environment.hosts}
    for role, name in (("--client", client), ("--server", server)):
        if name not in hosts:
            _fail(f"{role}: no host named '{name}' in '{env}' (hosts: {', '.join(sorted(hosts)) or 'none'})")
    return hosts


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print the version."),
) -> None:
    """redolab: plan a database standby build with measured numbers."""


@app.command()
def serve(
    host: str | None = typer.Option(None, help="Bind address (default REDOLAB_BIND, 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port (default REDOLAB_PORT, 8000)."),
    workers: int = typer.Option(
        1,
        "--workers",
        min=1,
        max=64,
        envvar="REDOLAB_WEB_WORKERS",
        help="Web processes (more than one needs PostgreSQL). Each runs a job worker too, unless "
        "REDOLAB_WORKER_ENABLED=false (then run `redolab worker` beside them).",
    ),
) -> None:
    """Run the dashboard with its in-process job worker: one process, or --workers N on PostgreSQL."""
    import uvicorn

    from redolab.auth.service import count_users
    from redolab.core.migrate import upgrade
    from redolab.main import create_app

    settings = get_settings()
    bind = host or settings.bind
    port = port or settings.port
    try:
        application = create_app(settings)
    except ConfigError as error:
        _fail(str(error))
    if workers > 1 and application.state.engine.dialect.name != "postgresql":
        _fail(
            f"--workers {workers}: several web processes need PostgreSQL (SQLite has one writer, and each "
            "process would take the others' running jobs for orphans). Set REDOLAB_DATABASE_URL="
            "postgresql+psycopg://user:password@host/redolab, or serve with one process."
        )
    upgrade(application.state.engine)  # once, here: the web processes find the schema current
    with application.state.sessionmaker() as session:
        no_users = count_users(session=session) == 0
    if no_users:
        token = secrets.token_urlsafe(24)
        application.state.setup_token = token
        shown = "127.0.0.1" if bind in ("0.0.0.0", "::") else bind  # noqa: S104
        typer.echo(
            "\nNo user exists yet. Create the first one with this one-time link:\n"
            f"    http://{shown}:{port}/setup?token={token}\n"
            "(or run: redolab user create NAME)\n",
        )
    proxies = settings.forwarded_allow_ips.strip()
    if workers > 1:  # each process builds its own app (engine, pool, worker) from the environment
        if no_users:
            os.environ["REDOLAB_SETUP_TOKEN"] = token  # the same one-time link works in every process
        application.state.engine.dispose()
        application = "redolab.main:create_app"
    uvicorn.run(
        application,
        factory=workers > 1,
        workers=workers if workers > 1 else None,
        host=bind,
        port=port,
        proxy_headers=bool(proxies),  # only behind a proxy named in REDOLAB_FORWARDED_ALLOW_IPS
        forwarded_allow_ips=proxies or None,
        log_level="info",
    )


@app.command()
def worker() -> None:
    """Run a worker for experiment jobs (more workers need PostgreSQL; serve has one built in)."""
    import asyncio
    import signal

    from redolab.core.db import make_sessionmaker
    from redolab.worker import Worker

    settings = get_settings()
    try:
        secret_key = settings.resolve_secret_key()
    except ConfigError as error:
        _fail(str(error))
    engine = _engine()
    job_worker = Worker(make_sessionmaker(engine), secret_key=secret_key)
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signal_number, lambda *_: job_worker.stopping.set())
    typer.echo(f"redolab worker {job_worker.worker_id}: waiting for jobs (Ctrl-C stops after the current run)")
    asyncio.run(job_worker.run_forever())
    engine.dispose()


@app.command("run")
def run_experiment(
    env: str = typer.Option(..., "--env", help="Environment name."),
    client: str = typer.Option(..., "--client", help="Host that sends (normally a primary node), by name."),
    server: str = typer.Option(..., "--server", help="Host that receives (normally a standby node), by name."),
    mode: str = typer.Option("async", help="async or sync."),
    conns: int = typer.Option(1, help="Parallel connections."),
    message_size: str = typer.Option("1 MiB", help="Message size, e.g. 1 MiB or 64 KiB."),
    sockbuf: str | None = typer.Option(None, help="Explicit socket buffer (default: autotuning), e.g. 4 MiB."),
    duration: str = typer.Option("60 s", help="Test length, e.g. 60 s."),
    interval: str = typer.Option("5 s", help="Report interval."),
    rate: str | None = typer.Option(None, help="Pace to this rate, e.g. 500 Mbit/s."),
    write_dir: str | None = typer.Option(None, help="Server writes what it receives into this directory."),
    sync_write: bool = typer.Option(False, help="With --write-dir: O_DSYNC writes, ack after the write."),
    label: str = typer.Option("", help="A label to find the run again."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the run to finish (a worker must be running)."),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON."),
    user: str = typer.Option("cli", help="Recorded as who requested the run."),
) -> None:
    """Queue a probe run between two hosts of an environment."""
    import json
    import time

    from pydantic import ValidationError

    from redolab.core.errors import FieldError
    from redolab.core.forms import field_errors
    from redolab.runs import service
    from redolab.runs.schemas import RunCreate, RunPublic

    with _environment_named(env) as (session, environment):
        hosts = _hosts_named(environment, env, client, server)
        try:
            run_in = RunCreate(
                client_host_id=hosts[client].id, server_host_id=hosts[server].id, mode=mode, conns=conns,
                message_bytes=message_size, sockbuf_bytes=sockbuf, duration_seconds=duration,
                interval_seconds=interval, rate_bits_per_second=rate, write_dir=write_dir,
                sync_write=sync_write, label=label,
            )  # fmt: skip
            run = service.create_run(session=session, environment=environment, run_in=run_in, requested_by=user)
        except ValidationError as error:
            _fail("; ".join(f"{field}: {message}" for field, message in field_errors(error).items()))
        except FieldError as error:
            _fail(f"{error.field}: {error.message}")
        run_id = run.id
        if not as_json:
            typer.echo(f"run {run_id} queued: {client} -> {server}, {mode}, {conns} connection(s)")
        while wait:
            session.expire_all()
            run = service.get_run(session=session, run_id=run_id)
            if run.status.finished:
                break
            time.sleep(0.5)
        if as_json:
            typer.echo(json.dumps(RunPublic.model_validate(run).model_dump(mode="json"), indent=2))
        elif wait:
            from redolab.core.units import format_byte_rate, format_mbit

            rate_text = format_byte_rate(run.bytes_per_second)
            bits = format_mbit(run.bytes_per_second * 8 if run.bytes_per_second else None)
            typer.echo(f"run {run_id} {run.status.value}: {rate_text} ({bits})")
            if run.failure_reason:
                typer.echo(run.failure_reason)
        status = run.status.value
    if wait and status != "succeeded":
        raise typer.Exit(1)


@app.command("import-results")
def import_results(
    files: list[Path] = typer.Argument(..., help="oratcptest client output (text) or iperf3 -J files."),
    env: str = typer.Option(..., "--env", help="Environment name."),
    client: str = typer.Option(..., "--client", help="Host that sent, by name."),
    server: str = typer.Option(..., "--server", help="Host that received, by name."),
    fmt: str = typer.Option("auto", "--format", help="auto, oratcptest or iperf3."),
    test_date: str | None = typer.Option(None, "--date", help="Day of oratcptest's clock times, YYYY-MM-DD (UTC)."),
    label: str = typer.Option("", help="A label for the runs."),
    tags: str = typer.Option("", help="Comma-separated tags."),
    user: str = typer.Option("cli", help="Recorded as who imported."),
) -> None:
    """Store oratcptest or iperf3 results as runs, one per test (all files or none)."""
    from pydantic import ValidationError

    from redolab.core.errors import FieldError
    from redolab.core.forms import field_errors
    from redolab.core.units import format_byte_rate
    from redolab.runs import service
    from redolab.runs.schemas import ResultImport

    with _environment_named(env) as (session, environment):
        hosts = _hosts_named(environment, env, client, server)
        for path in files:
            if not path.is_file():
                _fail(f"{path}: no such file; nothing was imported")
        try:
            import_in = ResultImport(
                client_host_id=hosts[client].id, server_host_id=hosts[server].id, format=fmt,
                test_date=test_date, label=label, tags=tags,
            )  # fmt: skip
            runs = service.import_results(
                session=session,
                environment=environment,
                import_in=import_in,
                files=[(path.name, path.read_bytes()[: service.MAX_RESULT_FILE_BYTES + 1]) for path in files],
                requested_by=user,
            )
        except ValidationError as error:
            _fail("; ".join(f"{field}: {message}" for field, message in field_errors(error).items()))
        except FieldError as error:
            _fail(f"{error.message}; nothing was imported")
        for run in runs:
            typer.echo(
                f"run {run.id}: {run.source.value} from {run.source_name}, {run.conns} connection(s), "
                f"{format_byte_rate(run.bytes_per_second)}"
            )


@db_app.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Create or upgrade the database schema."""
    from redolab.core.migrate import upgrade

    engine = _engine()
    upgrade(engine, revision)
    engine.dispose()
    typer.echo(f"database upgraded to {revision}")


def _read_password(password_stdin: bool) -> str:
    if password_stdin or not sys.stdin.isatty():
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            _fail("no password on standard input")
        return password
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


@user_app.command("create")
def user_create(
    username: str = typer.Argument(..., help="User name to log in with."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from standard input (one line)."
    ),
    role: str = typer.Option("operator", help="viewer (reads), operator (runs experiments) or admin."),
) -> None:
    """Create a user; the password is prompted for (or read from stdin), never taken from argv."""
    from redolab.auth.models import Role
    from redolab.auth.service import create_user
    from redolab.core.db import make_sessionmaker
    from redolab.core.errors import FieldError
    from redolab.core.migrate import upgrade

    if role not in {r.value for r in Role}:
        _fail(f"--role must be viewer, operator or admin, not '{role}'")
    password = _read_password(password_stdin)
    engine = _engine()
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        try:
            user = create_user(session=session, username=username, password=password, role=Role(role))
        except FieldError as error:
            _fail(error.message)
    engine.dispose()
    typer.echo(f"user '{user.username}' created ({user.role.value})")


@user_app.command("list")
def user_list() -> None:
    """List the users."""
    from redolab.auth.service import list_users
    from redolab.core.db import make_sessionmaker

    engine = _engine()
    with make_sessionmaker(engine)() as session:
        for user in list_users(session=session):
            state = "active" if user.active else f"disabled {user.disabled_at:%Y-%m-%d %H:%M} UTC"
            typer.echo(f"{user.username}\t{user.role.value}\t{state}\tcreated {user.created_at:%Y-%m-%d %H:%M} UTC")
    engine.dispose()


def _with_user(username: str, change) -> str:
    """Apply `change(session, user)` to the named user; a FieldError is the command's error."""
    from redolab.auth.service import get_user_by_username
    from redolab.core.db import make_sessionmaker
    from redolab.core.errors import FieldError

    engine = _engine()
    try:
        with make_sessionmaker(engine)() as session:
            user = get_user_by_username(session=session, username=username)
            if user is None:
                _fail(f"no user named '{username}' (redolab user list shows them)")
            try:
                return change(session, user)
            except FieldError as error:
                _fail(error.message)
    finally:
        engine.dispose()


@user_app.command("password")
def user_password(
    username: str = typer.Argument(..., help="Whose password to set."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the new password from standard input (one line)."
    ),
) -> None:
    """Set a user's password; every session and bearer token of theirs ends."""
    from redolab.auth.service import change_password

    password = _read_password(password_stdin)
    ended = _with_user(username, lambda s, u: change_password(session=s, user=u, current=None, new=password))
    typer.echo(f"password of '{username}' changed; {ended:,} session(s) ended")


@user_app.command("disable")
def user_disable(username: str = typer.Argument(..., help="The user to disable.")) -> None:
    """Disable a user: login is refused and their sessions and tokens stop working."""
    from redolab.auth.service import set_disabled

    _with_user(username, lambda s, u: set_disabled(session=s, user=u, disabled=True))
    typer.echo(f"user '{username}' disabled")


@user_app.command("enable")
def user_enable(username: str = typer.Argument(..., help="The user to enable.")) -> None:
    """Let a disabled user log in again."""
    from redolab.auth.service import set_disabled

    _with_user(username, lambda s, u: set_disabled(session=s, user=u, disabled=False))
    typer.echo(f"user '{username}' enabled")


@user_app.command("end-sessions")
def user_end_sessions(username: str = typer.Argument(..., help="Whose sessions to end.")) -> None:
    """End every session of a user and revoke all their bearer and API tokens."""
    from redolab.auth.service import end_user_sessions

    ended = _with_user(username, lambda s, u: end_user_sessions(session=s, user=u, tokens=True))
    typer.echo(f"{ended:,} session(s) of '{username}' ended; their tokens are revoked")


@user_app.command("delete")
def user_delete(username: str = typer.Argument(..., help="The user to delete.")) -> None:
    """Delete a user with their sessions and tokens (not the last admin)."""
    from redolab.auth.service import delete_user

    _with_user(username, lambda s, u: delete_user(session=s, user=u))
    typer.echo(f"user '{username}' deleted")


REDO_FORMATS_HELP = "auto, csv, semicolon, pipe, tab, sqlplus, awr-report or awr-miner."


@redo_app.command("analyze")
def redo_analyze(
    files: list[Path] = typer.Argument(
        ...,
        help="Exports (CSV/delimited, SQL*Plus text, AWR reports, AWR Miner captures, DMA collector files) "
        "or collection archives (.zip, .tar.gz).",
        exists=False,
    ),
    fmt: str = typer.Option("auto", "--format", help=REDO_FORMATS_HELP),
    headroom: float = typer.Option(30.0, "--headroom", help="Headroom on the peak, percent."),
    as_json: bool = typer.Option(False, "--json", help="Print the analysis as JSON."),
) -> None:
    """Peak redo rate per thread and summed, and the rate the link must carry (no database needed)."""
    import json

    from redolab.core.units import format_byte_rate, format_mbit
    from redolab.redo.ingest.pipeline import analyze_files
    from redolab.redo.parsers import RedoInputError

    for path in files:
        if not path.is_file():
            _fail(f"{path}: no such file")
    if not 0 <= headroom <= 1000:
        _fail("--headroom must be 0..1000 percent")
    try:
        _, summary = analyze_files(files, fmt=fmt, headroom_ratio=headroom / 100)
    except RedoInputError as error:
        _fail(str(error))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    typer.echo(f"{summary['rows_read']} rows read ({summary['format']}), {summary['unique_logs']} counted")
    for reason, count in summary["dropped"].items():
        typer.echo(f"  dropped {count}: {reason}")
    for note in summary["notes"]:
        typer.echo(f"  {note}")
    for name, columns in summary["ignored_columns"].items():
        typer.echo(f"  ignored in {name}: {', '.join(columns)}")
    if len(summary["files_used"]) > len(files) or summary["files_skipped"]:
        typer.echo(f"  read: {', '.join(summary['files_used'])}")
        for skipped in summary["files_skipped"]:
            typer.echo(f"  not used: {skipped['file']}: {skipped['reason']}")
    for thread in summary["threads"]:
        at = f" at {thread['peak_at']}" if thread["peak_at"] else ""
        typer.echo(
            f"thread {thread['thread']}: peak {format_byte_rate(thread['peak_bytes_per_second'])}{at}, "
            f"one transport stream must carry {format_byte_rate(thread['required_bytes_per_second'])}"
        )
    if summary["summed"]:
        summed = summary["summed"]
        typer.echo(
            f"all threads: peak {format_byte_rate(summed['peak_bytes_per_second'])} at {summed['peak_at']}, "
            f"p95 {format_byte_rate(summed['p95_bytes_per_second'])}"
        )
    required = summary["required_bytes_per_second"]
    typer.echo(
        f"the link must carry {format_byte_rate(required)} = {format_mbit(required * 8 if required else None)} "
        f"(peak + {headroom:g} %)"
    )
    if summary["avg_redo_write_bytes"]:
        typer.echo(f"average redo write size: {summary['avg_redo_write_bytes']:,.0f} bytes")
    for warning in summary["warnings"]:
        typer.echo(f"warning: {warning}")


@redo_app.command("import")
def redo_import(
    files: list[Path] = typer.Argument(..., help="Exports to store in the environment."),
    env: str = typer.Option(..., "--env", help="Environment name."),
    fmt: str = typer.Option("auto", "--format", help=REDO_FORMATS_HELP),
    user: str = typer.Option("cli", help="Recorded as who imported."),
) -> None:
    """Store exports as redo history of an environment (each file all or nothing, never twice)."""
    from redolab.core.errors import FieldError
    from redolab.redo.imports import import_now
    from redolab.redo.parsers import RedoInputError

    with _environment_named(env) as (session, environment):
        for path in files:
            if not path.is_file():
                _fail(f"{path}: no such file")
            try:
                record = import_now(
                    session=session, environment=environment, path=path, filename=path.name, fmt=fmt, imported_by=user
                )
            except RedoInputError as error:  # its message starts with the file's name
                _fail(f"{error}; nothing of this file was imported")
            except FieldError as error:
                _fail(f"{path.name}: {error.message}")
            dropped = ", ".join(f"{n} {reason}" for reason, n in record.dropped.items()) or "none dropped"
            counts = f"{record.rows_read:,} rows read, {record.rows_kept:,} kept"
            typer.echo(f"{path.name}: import #{record.id}, {counts} ({dropped})")


def _parse_option(parse, text: str, option: str):
    """A unit parse, with the option named in the error."""
    from redolab.core.units import UnitError

    try:
        return parse(text)
    except UnitError as error:
        _fail(f"{option}: {error}")


def _echo_json(document: dict) -> None:
    import json

    typer.echo(json.dumps(document, indent=2))


@plan_app.command("bdp")
def plan_bdp(
    bandwidth: str = typer.Option(..., "--bandwidth", help="Link rate, e.g. 1Gbit/s or 10 Gbit/s."),
    rtt: str = typer.Option(..., "--rtt", help="Round-trip time, e.g. 25ms."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    """Bandwidth-delay product and the recommended socket buffers (3 x BDP, seed 003)."""
    from redolab.core.units import format_bytes, parse_bit_rate, parse_duration
    from redolab.planning.network import bandwidth_delay

    bits = _parse_option(parse_bit_rate, bandwidth, "--bandwidth")
    seconds = _parse_option(parse_duration, rtt, "--rtt")
    try:
        result = bandwidth_delay(bandwidth_bits_per_second=bits, rtt_seconds=seconds)
    except ValueError as error:
        _fail(str(error))
    if as_json:
        _echo_json(
            {
                "bandwidth_bits_per_second": bits,
                "rtt_seconds": seconds,
                "bdp_bytes": result.bdp_bytes,
                "socket_buffer_bytes": result.socket_buffer_bytes,
            }
        )
        return
    typer.echo(f"bandwidth-delay product: {result.bdp_bytes:,} bytes ({format_bytes(result.bdp_bytes)})")
    typer.echo(
        f"socket buffers (3 x BDP): {result.socket_buffer_bytes:,} bytes ({format_bytes(result.socket_buffer_bytes)})"
    )


@plan_app.command("window")
def plan_window(
    send_rate: str = typer.Option(..., "--send-rate", help="Measured send rate, e.g. 2.02MiB/s (MB/s means MiB/s)."),
    rtt: str = typer.Option(..., "--rtt", help="Round-trip time, e.g. 27.7ms."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    """TCP window = send rate x round-trip time (seed 001)."""
    from redolab.core.units import parse_byte_rate, parse_duration
    from redolab.planning.network import tcp_window_bytes

    rate = _parse_option(parse_byte_rate, send_rate, "--send-rate")
    seconds = _parse_option(parse_duration, rtt, "--rtt")
    try:
        window = tcp_window_bytes(send_bytes_per_second=rate, rtt_seconds=seconds)
    except ValueError as error:
        _fail(str(error))
    if as_json:
        _echo_json({"send_bytes_per_second": rate, "rtt_seconds": seconds, "window_bytes": window})
        return
    typer.echo(f"TCP window: {window:,} bytes")


@plan_app.command("instantiation")
def plan_instantiation(
    db_size: str = typer.Option(..., "--db-size", help="Database size, e.g. 100TiB (TB means TiB)."),
    throughput: str = typer.Option(..., "--throughput", help="Aggregate throughput of one node pair, e.g. 300MiB/s."),
    nodes: int = typer.Option(1, "--nodes", min=1, help="Node pairs copying in parallel."),
    overhead: float = typer.Option(
        30.0, "--overhead", min=0, max=1000, help="Apply overhead, percent (seed 000: ~30)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys)."),
) -> None:
    """Instantiation time = size / (throughput per node pair x pairs), plus the apply overhead (seed 000)."""
    from redolab.core.units import format_duration, parse_byte_rate, parse_size
    from redolab.planning.instantiation import instantiation_estimate

    size = _parse_option(parse_size, db_size, "--db-size")
    rate = _parse_option(parse_byte_rate, throughput, "--throughput")
    try:
        result = instantiation_estimate(
            database_bytes=size, throughput_per_pair_bytes_per_second=rate, node_pairs=nodes, overhead_percent=overhead
        )
    except ValueError as error:
        _fail(str(error))
    if as_json:
        _echo_json(
            {
                "database_bytes": size,
                "throughput_per_pair_bytes_per_second": rate,
                "node_pairs": nodes,
                "overhead_percent": overhead,
                "copy_seconds": result.copy_seconds,
                "copy_hours": result.copy_seconds / 3600,
                "total_seconds": result.total_seconds,
                "total_hours": result.total_hours,
            }
        )
        return
    typer.echo(f"copy: {format_duration(result.copy_seconds)}")
    typer.echo(f"with {overhead:g} % apply overhead: {format_duration(result.total_seconds)}")


@plan_app.command("show")
def plan_show(
    env: str = typer.Option(..., "--env", help="Environment name."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON (units in the keys)."),
    imports: list[int] = typer.Option(
        [], "--import", help="Use only these redo imports (repeat); default: every import."
    ),
    runs: list[int] = typer.Option(
        [],
        "--run",
        help="Use only these runs (repeat; a loopback run only when named); default: every run over the link.",
    ),
    exclude_tags: list[str] = typer.Option([], "--exclude-tag", help="Leave out runs with this tag (repeat)."),
    pdf: Path | None = typer.Option(None, "--pdf", help="Also write the plan report as PDF to this file."),
    author: str = typer.Option("redolab CLI", "--author", help="The author named on the PDF report."),
) -> None:
    """The environment's plan: verdicts, estimate, lag replay, commit impact, risks and settings."""
    from redolab.planning.report import ReportError, plan_report, render_pdf, report_html
    from redolab.planning.service import Selection

    selection = Selection.parse(chosen=False, imports=imports, runs=runs, exclude_tags=exclude_tags)
    with _environment_named(env) as (session, environment):
        report = plan_report(session=session, environment=environment, selection=selection, author=author)
        html = report_html(report) if pdf else None
    plan = report.plan
    if pdf:
        try:
            pdf.write_bytes(render_pdf(html))
        except (ReportError, OSError) as error:
            _fail(f"--pdf {pdf}: {error}")
    if as_json:
        _echo_json(report.to_json())
        return
    if pdf:
        typer.echo(f"report written to {pdf}")
    _echo_requirement(plan)
    if as_json:
        _echo_json(plan.to_json())
        return
    for card in plan.cards:
        typer.echo(f"== {card.title} [{card.badge}]")
        if card.headline:
            typer.echo(f"   {card.headline}")
        for label, value in card.rows:
            typer.echo(f"   {label}: {value}")
        for item in card.missing:
            typer.echo(f"   missing: {item}")
        for line in card.working:
            typer.echo(f"   ({line})")
    typer.echo("== Risks")
    for risk in plan.risks or ["none found in the data so far"]:
        typer.echo(f"   - {risk}")
    for snippet in plan.snippets:
        typer.echo(f"== {snippet.title} -> {snippet.target}")
        typer.echo(snippet.text)


@plan_app.command("hadr")
def plan_hadr(
    env: str = typer.Option(..., "--env", help="Environment name (a Db2 HADR environment)."),
    as_json: bool = typer.Option(False, "--json", help="Every interval, as JSON (units in the keys)."),
    rows: int = typer.Option(20, "--rows", min=1, help="Intervals to print: those nearest their SYNC limit."),
) -> None:
    """The hadrCalculator view: every interval of the log history against each sync mode's limit with
    the measured network and log disks, and the HADR_SYNCMODE that keeps up."""
    from redolab.core.units import DB2_PAGE_BYTES, format_byte_rate, format_duration
    from redolab.hadr.calculator import MODES
    from redolab.hadr.service import calculator_json, environment_calculator

    with _environment_named(env) as (session, environment):
        calculator, inputs = environment_calculator(session=session, environment=environment)
    if as_json:
        _echo_json(calculator_json(calculator, inputs))
        return
    if calculator is None:
        for item in inputs.missing:
            typer.echo(f"missing: {item}")
        raise typer.Exit(1)
    c = calculator
    typer.echo(f"network: {format_byte_rate(c.network.rate_bytes_per_second)}, RTT "
               f"{format_duration(c.network.rtt_seconds)} ({inputs.network_basis})")  # fmt: skip
    for name, disk, basis in (
        ("primary", c.primary, inputs.primary_basis),
        ("standby", c.standby, inputs.standby_basis),
    ):
        typer.echo(f"{name} disk: {format_byte_rate(disk.rate_bytes_per_second)} + "
                   f"{format_duration(disk.overhead_seconds, 6)} per write ({basis})")  # fmt: skip
    mode, why = c.advice()
    typer.echo(f"HADR_SYNCMODE {mode}: {why}")
    for name in MODES:
        typer.echo(f"  {name}: {c.exceeded[name]:,} of {len(c.rows):,} intervals above its limit")
    worst = sorted(c.rows, key=lambda r: r.rate_bytes_per_second / r.limits["SYNC"], reverse=True)[:rows]
    for row in sorted(worst, key=lambda r: (r.start, r.member)):
        marks = {m: (" " + row.levels[m][1]) if row.levels[m][1] else "" for m in MODES}
        limits = "  ".join(f"{m} {format_byte_rate(row.limits[m])}{marks[m]}" for m in MODES)
        rate = format_byte_rate(row.rate_bytes_per_second)
        typer.echo(
            f"{row.start:%Y-%m-%d %H:%M:%S} UTC member {row.member}: {rate}, "
            f"flush {row.flush_bytes / DB2_PAGE_BYTES:,.1f} pages | {limits}"
        )


def _echo_requirement(plan) -> None:
    """The evidence and what the link must carry, each figure with its basis (text form of `plan show`)."""
    from redolab.core.units import format_byte_rate

    typer.echo("== Evidence")
    for item in plan.evidence or []:
        typer.echo(f"   [{'x' if item.chosen else ' '}] {item.label}, {item.when}: {item.note}")
    if not plan.evidence:
        typer.echo("   none yet: import redo history and run (or import) tests")
    req = plan.requirement
    if req is None:
        return
    typer.echo(f"== What the link must carry (peak + {req.headroom_ratio * 100:g} %)")
    for need in sorted(req.threads.values(), key=lambda t: t.thread):
        typer.echo(
            f"   thread {need.thread}: {format_byte_rate(need.required_bytes_per_second)} "
            f"(peak {format_byte_rate(need.peak_bytes_per_second)}; {plan.describe(need.basis)})"
        )
    typer.echo(
        f"   all threads: {format_byte_rate(req.summed_required_bytes_per_second)} "
        f"(peak {format_byte_rate(req.summed_peak_bytes_per_second)}; {req.summed_how})"
    )
    for window in req.windows:
        figure = format_byte_rate(window.bytes_per_second) if window.bytes_per_second is not None else window.reason
        typer.echo(f"   highest {window.minutes}-minute average: {figure}")


# -- the lab --------------------------------------------------------------------------------------
def _lab_paths():
    from redolab.lab.control import Paths

    return Paths(get_settings().data_dir)


def _shape_from_options(base, rtt, jitter, loss, rate, mtu, queue):
    """A Shape from the options given (None: keep `base`'s value)."""
    from dataclasses import replace

    from redolab.core.units import parse_bit_rate, parse_duration, parse_percent, parse_size

    changes = {}
    if rtt is not None:
        changes["rtt_seconds"] = _parse_option(parse_duration, rtt, "--rtt")
    if jitter is not None:
        changes["jitter_seconds"] = _parse_option(parse_duration, jitter, "--jitter")
    if loss is not None:
        changes["loss_ratio"] = _parse_option(parse_percent, loss, "--loss")
    if rate is not None:
        changes["rate_bits_per_second"] = int(_parse_option(parse_bit_rate, rate, "--rate"))
    if mtu is not None:
        changes["mtu_bytes"] = mtu
    if queue is not None:
        changes["queue_bytes"] = _parse_option(parse_size, queue, "--queue")
    return replace(base, **changes)


def _lab_session():
    from redolab.core.db import make_sessionmaker
    from redolab.core.migrate import upgrade

    engine = _engine()
    if get_settings().auto_migrate:
        upgrade(engine)
    return engine, make_sessionmaker(engine)()


_RTT = typer.Option(None, "--rtt", help="Round-trip time, e.g. 20ms (default 20 ms).")
_JITTER = typer.Option(None, "--jitter", help="RTT varies by up to this much, e.g. 2ms (default 0 ms).")
_LOSS = typer.Option(None, "--loss", help="Random packet loss each way, e.g. 0.1% (default 0 %).")
_RATE = typer.Option(None, "--rate", help="Link rate each way, e.g. 1Gbit/s; 0 for none (default 1 Gbit/s).")
_MTU = typer.Option(None, "--mtu", help="MTU of the data path in bytes, 1280-9000 (default 1500).")
_QUEUE = typer.Option(None, "--queue", help="Bottleneck buffer, e.g. 256KiB (default 1 ms at the rate).")


@lab_app.command("up")
def lab_up(
    rtt: str | None = _RTT,
    jitter: str | None = _JITTER,
    loss: str | None = _LOSS,
    rate: str | None = _RATE,
    mtu: int | None = _MTU,
    queue: str | None = _QUEUE,
    primary_nodes: int = typer.Option(1, "--primary-nodes", help="Primary hosts (RAC nodes), 1-8."),
    standby_nodes: int = typer.Option(1, "--standby-nodes", help="Standby hosts (RAC nodes), 1-8."),
    env_name: str = typer.Option("lab", "--env", help="The redolab environment the lab registers as."),
) -> None:
    """Build the lab and register it as an environment (hosts, key, pinned host keys)."""
    from redolab.lab import control
    from redolab.lab.register import register
    from redolab.lab.topology import LabError, Shape, plan_lab

    paths = _lab_paths()
    try:
        lab = plan_lab(_shape_from_options(Shape(), rtt, jitter, loss, rate, mtu, queue), primary_nodes,
                       standby_nodes, env_name)  # fmt: skip
        control.up(paths, lab)
    except LabError as error:
        _fail(str(error))
    engine, session = _lab_session()
    try:
        environment = register(session=session, lab=lab, paths=paths, secret_key=get_settings().resolve_secret_key())
        typer.echo(f"lab up: {lab.shape.describe()}; environment '{environment.name}' (#{environment.id})")
    except Exception:
        control.down(paths)  # never leave a lab redolab does not know about
        raise
    finally:
        session.close()
        engine.dispose()
    for host in lab.hosts:
        typer.echo(f"  {host.name}: ssh root@{host.management_address}, data {host.data_address} ({host.namespace})")
    typer.echo("next: open the environment and start a new experiment, or `redolab lab status`")


@lab_app.command("set")
def lab_set(
    rtt: str | None = _RTT,
    jitter: str | None = _JITTER,
    loss: str | None = _LOSS,
    rate: str | None = _RATE,
    mtu: int | None = _MTU,
    queue: str | None = _QUEUE,
) -> None:
    """Change the running lab's RTT, jitter, loss, rate, MTU or queue; the rest stays."""
    from redolab.lab import control
    from redolab.lab.register import update_link
    from redolab.lab.topology import LabError

    paths = _lab_paths()
    try:
        lab = control.running(paths)
        lab = control.change(paths, _shape_from_options(lab.shape, rtt, jitter, loss, rate, mtu, queue))
    except LabError as error:
        _fail(str(error))
    engine, session = _lab_session()
    try:
        update_link(session=session, lab=lab)
    finally:
        session.close()
        engine.dispose()
    typer.echo(f"lab set: {lab.shape.describe()}")


@lab_app.command("status")
def lab_status(as_json: bool = typer.Option(False, "--json", help="Print JSON (units in the keys).")) -> None:
    """Is the lab up, with which shape, hosts, kernel buffer limits and delay-line counters."""
    from redolab.core.units import format_bytes
    from redolab.lab import control

    report = control.status(_lab_paths())
    if as_json:
        _echo_json(report)
        return
    if not report["up"]:
        leftovers = report.get("namespaces") or []
        typer.echo(
            "lab: down" + (f" (namespaces left: {', '.join(leftovers)}; `redolab lab down`)" if leftovers else "")
        )
        return
    typer.echo(f"lab: up, {report['shape']['description']}, queue {format_bytes(report['shape']['queue_bytes'])}")
    typer.echo(f"environment: {report['environment']}")
    for host in report["hosts"]:
        rmem = host.get("tcp_rmem_bytes") or []
        wmem = host.get("tcp_wmem_bytes") or []
        typer.echo(
            f"  {host['name']}: ssh {host['ssh_address']} ({'sshd running' if host['sshd_running'] else 'sshd DOWN'}), "
            f"data {host['data_address']}, tcp_rmem max {format_bytes(rmem[-1]) if rmem else '?'}, "
            f"tcp_wmem max {format_bytes(wmem[-1]) if wmem else '?'}"
        )
    counters = report.get("delayline") or {}
    for direction, numbers in (counters.get("directions") or {}).items():
        typer.echo(
            f"  {direction.replace('_', ' ')}: {numbers['packets']:,} packets, {format_bytes(numbers['bytes'])}, "
            f"{numbers['lost']:,} lost, {numbers['queue_drops']:,} dropped at the bottleneck"
        )


@lab_app.command("down")
def lab_down() -> None:
    """Remove the lab's namespaces, processes and devices (the environment and its runs stay)."""
    from redolab.lab import control
    from redolab.lab.topology import LabError

    try:
        control.require_root()
        removed = control.down(_lab_paths())
    except LabError as error:
        _fail(str(error))
    typer.echo("lab down: " + ("removed " + "; ".join(removed) if removed else "nothing was up"))
