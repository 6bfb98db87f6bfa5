"""`redolab secret`: a setting's secret stored encrypted (the value never comes from argv)."""

from __future__ import annotations

import sys

import typer

from redolab.cli.output import fail

secret_app = typer.Typer(help="Secrets in settings, stored encrypted.", no_args_is_help=True)


@secret_app.command("encrypt")
def secret_encrypt() -> None:
    """Encrypt a secret with REDOLAB_SECRET_KEY (or the key file in the data directory) and print the
    value to set, e.g. REDOLAB_SMTP_PASSWORD=fernet:...: the password is then stored encrypted in the
    environment or .env file, and decrypted only when a mail is sent. Read from standard input (one
    line), or prompted for without echo; never taken from argv."""
    from redolab.core.config import get_settings
    from redolab.core.security import encrypt_secret
    from redolab.watches.notify import ENCRYPTED_PREFIX

    if not sys.stdin.isatty():
        value = sys.stdin.readline().rstrip("\r\n")
    else:
        value = typer.prompt("Secret", hide_input=True, confirmation_prompt=True)
    if not value:
        fail("no secret on standard input")
    typer.echo(ENCRYPTED_PREFIX + encrypt_secret(value, secret_key=get_settings().resolve_secret_key()))
