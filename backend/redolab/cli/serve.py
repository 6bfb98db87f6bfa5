"""The long-running processes: `redolab serve` (the dashboard) and `redolab worker` (experiment jobs)."""

from __future__ import annotations

import os
import secrets

import typer

from redolab.cli.database import engine
from redolab.cli.output import fail
from redolab.core.config import ConfigError, get_settings


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

    from redolab.core.migrate import upgrade
    from redolab.main import create_app, tune_garbage_collector

    settings = get_settings()
    bind = host or settings.bind
    port = port or settings.port
    if workers > 1 and _backend(settings.database_url) != "postgresql":  # before the app is built
        fail(
            f"--workers {workers}: several web processes need PostgreSQL (SQLite has one writer, and each "
            "process would take the others' running jobs for orphans). Set REDOLAB_DATABASE_URL="
            "postgresql+psycopg://user:password@host/redolab, or serve with one process."
        )
    try:
        application = create_app(settings)
    except ConfigError as error:
        fail(str(error))
    upgrade(application.state.engine)  # once, here: the web processes find the schema current
    _port_free(bind, port)  # before a setup link is printed: with the port taken it would be another server's
    token = _setup_token(application, bind, port)
    proxies = settings.forwarded_allow_ips.strip()
    if workers > 1:  # each process builds its own app (engine, pool, worker) from the environment
        if token:
            os.environ["REDOLAB_SETUP_TOKEN"] = token  # the same one-time link works in every process
        application.state.engine.dispose()
        application = "redolab.main:create_served_app"
    else:
        tune_garbage_collector()
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


def _port_free(bind: str, port: int) -> None:
    """Refuse at once, saying how to choose another port, when something listens on bind:port already."""
    import socket

    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no owner
        try:
            probe.bind((bind, port))
        except OSError as error:
            fail(
                f"port {port} on {bind} is in use ({error.strerror}): another server answers there. Choose "
                f"another port: REDOLAB_PORT={port + 1} make run (or redolab serve --port {port + 1})."
            )


def _setup_token(application, bind: str, port: int) -> str | None:
    """With no user yet: a one-time setup token, set on the app and printed as a link; else None."""
    from redolab.auth.service import count_users

    with application.state.sessionmaker() as session:
        if count_users(session=session) != 0:
            return None
    token = secrets.token_urlsafe(24)
    application.state.setup_token = token
    shown = "127.0.0.1" if bind in ("0.0.0.0", "::") else bind  # noqa: S104
    typer.echo(
        "\nNo user exists yet. Create the first one with this one-time link:\n"
        f"    http://{shown}:{port}/setup?token={token}\n"
        "(or, in another terminal in this directory: python3 -m uv run redolab user create admin)\n",
    )
    return token


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
        fail(str(error))
    database = engine()
    job_worker = Worker(make_sessionmaker(database), secret_key=secret_key)
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signal_number, lambda *_: job_worker.stopping.set())
    typer.echo(f"redolab worker {job_worker.worker_id}: waiting for jobs (Ctrl-C stops after the current run)")
    asyncio.run(job_worker.run_forever())
    database.dispose()


def _backend(url: str) -> str:
    """The database URL's backend ("sqlite", "postgresql"); "" when it is no URL (create_app says why)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).get_backend_name()
    except ArgumentError:
        return ""
