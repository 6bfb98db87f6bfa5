"""Experiments between two hosts of an environment: `redolab run` queues a probe run,
`redolab import-results` stores oratcptest or iperf3 results as runs."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import typer

from redolab.cli.database import environment_named, hosts_named
from redolab.cli.output import emit, fail


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
    from redolab.runs import service
    from redolab.runs.schemas import RunCreate, RunPublic

    with environment_named(env) as (session, environment):
        hosts = hosts_named(environment, env, client, server)
        with invalid_input_fails(lambda error: f"{error.field}: {error.message}"):
            run_in = RunCreate(
                client_host_id=hosts[client].id,
                server_host_id=hosts[server].id,
                mode=mode,
                conns=conns,
                message_bytes=message_size,
                sockbuf_bytes=sockbuf,
                duration_seconds=duration,
                interval_seconds=interval,
                rate_bits_per_second=rate,
                write_dir=write_dir,
                sync_write=sync_write,
                label=label,
            )
            run = service.create_run(session=session, environment=environment, run_in=run_in, requested_by=user)
        if not as_json:
            typer.echo(f"run {run.id} queued: {client} -> {server}, {mode}, {conns} connection(s)")
        if wait:
            run = _finished(session, run.id)
        emit(as_json, lambda: RunPublic.model_validate(run).model_dump(mode="json"), _result_lines(run) if wait else ())
        status = run.status.value
    if wait and status != "succeeded":
        raise typer.Exit(1)


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
                f"run {run.id}: {run.source.value} from {run.source_name}, {run.conns} connection(s), "
                f"{format_byte_rate(run.bytes_per_second)}"
            )
