"""The `redolab` command: serve, worker, db upgrade, user create/list."""

from __future__ import annotations

import secrets
import sys

import typer

from redolab import __version__
from redolab.core.config import ConfigError, get_settings

app = typer.Typer(help="redolab: plan a database standby build with measured numbers.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
user_app = typer.Typer(help="Dashboard users.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(user_app, name="user")


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


def _engine():
    from redolab.core.db import make_engine

    return make_engine(get_settings().resolved_database_url)


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
) -> None:
    """Run the dashboard (and, later, its in-process worker)."""
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
    upgrade(application.state.engine)
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
    uvicorn.run(application, host=bind, port=port, proxy_headers=False, log_level="info")


@app.command()
def worker() -> None:
    """Run a worker for experiment jobs."""
    typer.echo("redolab worker: no jobs yet (experiment runs arrive with the probe orchestration).")


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
) -> None:
    """Create a user; the password is prompted for (or read from stdin), never taken from argv."""
    from redolab.auth.service import create_user
    from redolab.core.db import make_sessionmaker
    from redolab.core.errors import FieldError
    from redolab.core.migrate import upgrade

    password = _read_password(password_stdin)
    engine = _engine()
    upgrade(engine)
    with make_sessionmaker(engine)() as session:
        try:
            user = create_user(session=session, username=username, password=password)
        except FieldError as error:
            _fail(error.message)
    engine.dispose()
    typer.echo(f"user '{user.username}' created")


@user_app.command("list")
def user_list() -> None:
    """List the users."""
    from redolab.auth.service import list_users
    from redolab.core.db import make_sessionmaker

    engine = _engine()
    with make_sessionmaker(engine)() as session:
        for user in list_users(session=session):
            typer.echo(f"{user.username}\tcreated {user.created_at:%Y-%m-%d %H:%M} UTC")
    engine.dispose()
