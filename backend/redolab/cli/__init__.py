"""The `redolab` command: serve, worker, db upgrade, user, secret, run, redo, plan, lab.

One module per sub-app (db, user, redo, plan, lab), the top-level commands in serve (serve, worker)
and experiments (run, import-results); output (errors, JSON or text) and database (sessions, an
environment by name) are what the commands share. Each command imports what it uses inside its
function, so `redolab --help` starts fast."""

from __future__ import annotations

import typer

from redolab import __version__
from redolab.cli import collect, experiments, rehearse, serve
from redolab.cli.db import db_app
from redolab.cli.lab import lab_app
from redolab.cli.plan import plan_app
from redolab.cli.redo import redo_app
from redolab.cli.secret import secret_app
from redolab.cli.user import user_app

app = typer.Typer(help="redolab: plan a database standby build with measured numbers.", no_args_is_help=True)
app.command()(serve.serve)
app.command()(serve.worker)
app.command("run")(experiments.run_experiment)
app.command("import-results")(experiments.import_results)
app.command("rehearse")(rehearse.rehearse)
app.command("collect")(collect.collect)
app.add_typer(redo_app, name="redo")
app.add_typer(lab_app, name="lab")
app.add_typer(plan_app, name="plan")
app.add_typer(db_app, name="db")
app.add_typer(user_app, name="user")
app.add_typer(secret_app, name="secret")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print the version."),
) -> None:
    """redolab: plan a database standby build with measured numbers."""
