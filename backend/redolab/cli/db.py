"""`redolab db`: the database schema."""

from __future__ import annotations

import typer

from redolab.cli.database import engine

db_app = typer.Typer(help="Database schema.", no_args_is_help=True)


@db_app.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Create or upgrade the database schema."""
    from redolab.core.migrate import upgrade

    database = engine()
    upgrade(database, revision)
    database.dispose()
    typer.echo(f"database upgraded to {revision}")
