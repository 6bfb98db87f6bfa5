"""`redolab user`: dashboard users (the password never comes from argv)."""

from __future__ import annotations

import sys

import typer

from redolab.cli.database import database_session
from redolab.cli.output import fail
from redolab.core.units import format_count

user_app = typer.Typer(help="Dashboard users.", no_args_is_help=True)


def _read_password(password_stdin: bool) -> str:
    if password_stdin or not sys.stdin.isatty():
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            fail("no password on standard input")
        return password
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


@user_app.command("create")
def user_create(
    username: str = typer.Argument(..., help="User name to log in with."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from standard input (one line)."
    ),
    role: str | None = typer.Option(
        None,
        help="viewer (reads), operator (runs experiments) or admin; default operator. The first user is an admin.",
    ),
) -> None:
    """Create a user; the password is prompted for (or read from stdin), never taken from argv. The
    first user is an admin whatever the role asked for (as through the setup link), and says so."""
    from redolab.auth.models import Role
    from redolab.auth.service import create_first_user, create_user
    from redolab.core.errors import FieldError

    if role is not None and role not in {r.value for r in Role}:
        fail(f"--role must be viewer, operator or admin, not '{role}'")
    password = _read_password(password_stdin)
    with database_session(migrate=True) as session:
        try:
            user = create_first_user(session=session, username=username, password=password)
            if user is None:
                user = create_user(session=session, username=username, password=password, role=Role(role or "operator"))
        except FieldError as error:
            fail(error.message)
    if user.role is Role.admin and role != "admin":
        typer.echo(f"user '{user.username}' created (admin: the first user is an admin, to add hosts and users)")
    else:
        typer.echo(f"user '{user.username}' created ({user.role.value})")


@user_app.command("list")
def user_list() -> None:
    """List the users."""
    from redolab.auth.service import list_users

    with database_session() as session:
        for user in list_users(session=session):
            state = "active" if user.active else f"disabled {user.disabled_at:%Y-%m-%d %H:%M} UTC"
            typer.echo(f"{user.username}\t{user.role.value}\t{state}\tcreated {user.created_at:%Y-%m-%d %H:%M} UTC")


def _with_user(username: str, change) -> str:
    """Apply `change(session, user)` to the named user; a FieldError is the command's error."""
    from redolab.auth.service import get_user_by_username
    from redolab.core.errors import FieldError

    with database_session() as session:
        user = get_user_by_username(session=session, username=username)
        if user is None:
            fail(f"no user named '{username}' (redolab user list shows them)")
        try:
            return change(session, user)
        except FieldError as error:
            fail(error.message)


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
    typer.echo(f"password of '{username}' changed; {format_count(ended, 'session')} ended")


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
    typer.echo(f"{format_count(ended, 'session')} of '{username}' ended; their tokens are revoked")


@user_app.command("delete")
def user_delete(username: str = typer.Argument(..., help="The user to delete.")) -> None:
    """Delete a user with their sessions and tokens (not the last admin)."""
    from redolab.auth.service import delete_user

    _with_user(username, lambda s, u: delete_user(session=s, user=u))
    typer.echo(f"user '{username}' deleted")
