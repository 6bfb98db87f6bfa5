"""How a command reports: an error and exit code 1, or its result as JSON (--json) or text lines."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import NoReturn

import typer

from redolab.core.terminal import neutralised


def fail(message: str) -> NoReturn:
    """`error: message` on standard error, exit code 1."""
    typer.echo(f"error: {neutralised(message)}", err=True)
    raise typer.Exit(1)


def emit(as_json: bool, document: Callable[[], object], lines: Iterable[str]) -> None:
    """The one way a command prints its result: `document()` as indented JSON with --json, else each of
    `lines` (pass a generator to compute the text only when it is printed; it may raise typer.Exit). Text
    lines may quote what a remote host said: its terminal control characters are neutralised (JSON
    escapes them itself)."""
    if as_json:
        typer.echo(json.dumps(document(), indent=2))
        return
    for line in lines:
        typer.echo(neutralised(line))


def parse_option(parse, text: str, option: str):
    """A unit parse, with the option named in the error."""
    from redolab.core.units import UnitError

    try:
        return parse(text)
    except UnitError as error:
        fail(f"{option}: {error}")
