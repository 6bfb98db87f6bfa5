"""Experiments between two hosts of an environment: `redolab run` queues a probe run,
`redolab import-results` stores oratcptest or iperf3 results as runs."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import typer

from redolab.cli.database import environment_named, hosts_named
from redolab.cli.output import emit, fail
from redolab.core.units import format_count


def run_experiment(
    env: str = typer.Option(..., "--env", help="Environment name."),
    client: str = typer.Option(..., "--client", help="Host that sends (normally a primary node), by name."),
    server: str = typer.Option(..., "--server", help="Host that receives (normally a standby node), by name."),
    mode: str | None = typer.Option(None, help="async or sync (default: async; sync with --load-conns)."),
    conns: int = typer.Option(1, help="Parallel connections."),
    message_size: str | None = typer.Option(
        None, help="Message size, e.g. 1 MiB or 64 KiB (default: 1 MiB; 8 KiB, a commit's, with --load-conns)."
    ),
    sockbuf: str | None = typer.Option(None, help="Explicit socket buffer (default: autotuning), e.g. 4 MiB."),
    duration: str = typer.Option("60 s", help="Test length, e.g. 60 s."),
    interval: str = typer.Option("5 s", help="Report interval."),
    rate: str | None = typer.Option(None, help="Pace to this rate, e.g. 500 Mbit/s."),
    write_dir: str | None = typer.Option(None, help="Server writes what it receives into this directory."),
    sync_write: bool = typer.Option(False, help="With --write-dir: O_DSYNC writes, ack after the write."),
    label: str = typer.Option("", help="A label to find the run again."),
    load_conns: int | None = typer.Option(
        None,
        "--load-conns",
        help="SYNC under load: a SYNC run on one connection (8 KiB messages unless --message-size) and, started "
        "with it on the same hosts, an ASYNC load of this many connections (1 MiB writes, 2 s longer). The SYNC "
        "commit card sets its acknowledgements beside an idle SYNC run's; the load run is tagged load, which the "
        "plan leaves out of the link's evidence by default.",
    ),
    wait: bool = typer.Option(False, "--wait", help="Wait for the run to finish (a worker must be running)."),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON (with --load-conns: both runs)."),
    user: str = typer.Option("cli", help="Recorded as who requested the run."),
) -> None:
    """Queue a probe run between two hosts of an environment (with --load-conns: a SYNC run under load)."""
    from redolab.runs.schemas import RunPublic, RunsPublic

    fields = {"mode": mode, "conns": conns, "message_bytes": message_size, "sockbuf_bytes": sockbuf}
    fields |= {"duration_seconds": duration, "interval_seconds": interval, "rate_bits_per_second": rate}
    fields |= {"write_dir": write_dir, "sync_write": sync_write, "label": label}
    with environment_named(env) as (session, environment):
        hosts = hosts_named(environment, env, client, server)
        fields |= {"client_host_id": hosts[client].id, "server_host_id": hosts[server].id}
        with invalid_input_fails(lambda error: f"{error.field}: {error.message}"):
            runs = _queued(session, environment, fields, load_conns, user)
        if not as_json:
            typer.echo(
                f"run {runs[0].id} queued: {client} -> {server}, {runs[0].mode.value}, "
                f"{format_count(conns, 'connection')}"
            )
            if load_conns is not None:
                typer.echo(f"run {runs[1].id} queued with it: the ASYNC load, {format_count(load_conns, 'connection')}")
        if wait:
            runs = [_finished(session, run.id) for run in runs]

        def as_record():
            if load_conns is None:
                return RunPublic.model_validate(runs[0]).model_dump(mode="json")
            public = [RunPublic.model_validate(run) for run in runs]
            return RunsPublic(data=public, count=len(public)).model_dump(mode="json")

        emit(as_json, as_record, [line for run in runs for line in _result_lines(run)] if wait else ())
        status = runs[0].status.value
    if wait and status != "succeeded":
        raise typer.Exit(1)


def _queued(session, environment, fields: dict, load_conns: int | None, user: str) -> list:
    """The run queued, or (with `load_conns`) the SYNC run and its ASYNC load, started together (runs.loaded)."""
    from redolab.runs import loaded, service
    from redolab.runs.schemas import RunCreate, SyncUnderLoadCreate

    fields = {
        name: value for name, value in fields.items() if value is not None or name not in ("mode", "message_bytes")
    }
    if load_conns is None:
        run_in = RunCreate(**fields)
        return [service.create_run(session=session, environment=environment, run_in=run_in, requested_by=user)]
    sync_in = SyncUnderLoadCreate(**fields, load_conns=load_conns)
    made = loaded.create_sync_under_load(
        session=session, environment=environment, sync_in=sync_in, load_conns=sync_in.load_conns, requested_by=user
    )
    return list(made)


@contextmanager
def invalid_input_fails(field_error_message):
    """A validation error fails the command naming each field; a FieldError with `field_error_message(error)`."""
    from pydantic import ValidationError

    from redolab.core.errors import FieldError
    from redolab.core.forms import field_errors

    try:
        yield
    except ValidationError as error:
        fail("; ".join(f"{field}: {message}" for field, message in field_errors(error).items()))
    except FieldError as error:
        fail(field_error_message(error))


def _finished(session, run_id: int):
    """The run once it has finished, looked at every half second."""
    import time

    from redolab.runs import service

    while True:
        session.expire_all()
        run = service.get_run(session=session, run_id=run_id)
        if run.status.finished:
            return run
        time.sleep(0.5)


def _result_lines(run):
    from redolab.core.units import format_byte_rate, format_mbit

    rate_text = format_byte_rate(run.bytes_per_second)
    bits = format_mbit(run.bytes_per_second * 8 if run.bytes_per_second else None)
    yield f"run {run.id} {run.status.value}: {rate_text} ({bits})"
    if run.failure_reason:
        yield run.failure_reason


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
    from redolab.core.units import format_byte_rate
    from redolab.runs import service
    from redolab.runs.schemas import ResultImport

    with environment_named(env) as (session, environment):
        hosts = hosts_named(environment, env, client, server)
        for path in files:
            if not path.is_file():
                fail(f"{path}: no such file; nothing was imported")
        with invalid_input_fails(lambda error: f"{error.message}; nothing was imported"):
            import_in = ResultImport(
                client_host_id=hosts[client].id,
                server_host_id=hosts[server].id,
                format=fmt,
                test_date=test_date,
                label=label,
                tags=tags,
            )
            runs = service.import_results(
                session=session,
                environment=environment,
                import_in=import_in,
                files=[(path.name, path.read_bytes()[: service.MAX_RESULT_FILE_BYTES + 1]) for path in files],
                requested_by=user,
            )
        for run in runs:
            typer.echo(
                f"run {run.id}: {run.source.value} from {run.source_name}, {format_count(run.conns, 'connection')}, "
                f"{format_byte_rate(run.bytes_per_second)}"
            )
