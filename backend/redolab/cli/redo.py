"""`redolab redo`: analyze redo history exports, or import them into an environment."""

from __future__ import annotations

from pathlib import Path

import typer

from redolab.cli.database import environment_named
from redolab.cli.output import emit, fail

redo_app = typer.Typer(help="Redo history: analyze or import archived-log and AWR exports.", no_args_is_help=True)

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
    from redolab.redo.ingest.pipeline import analyze_files
    from redolab.redo.parsers import RedoInputError

    for path in files:
        if not path.is_file():
            fail(f"{path}: no such file")
    if not 0 <= headroom <= 1000:
        fail("--headroom must be 0..1000 percent")
    try:
        _, summary = analyze_files(files, fmt=fmt, headroom_ratio=headroom / 100)
    except RedoInputError as error:
        fail(str(error))
    emit(as_json, lambda: summary, _analysis_lines(summary, len(files), headroom))


def _analysis_lines(summary: dict, files_given: int, headroom: float):
    """The text form of `redo analyze`: what was read, each thread's peak, what the link must carry."""
    from redolab.core.units import format_byte_rate, format_mbit

    yield f"{summary['rows_read']} rows read ({summary['format']}), {summary['unique_logs']} counted"
    for reason, count in summary["dropped"].items():
        yield f"  dropped {count}: {reason}"
    for note in summary["notes"]:
        yield f"  {note}"
    for name, columns in summary["ignored_columns"].items():
        yield f"  ignored in {name}: {', '.join(columns)}"
    if len(summary["files_used"]) > files_given or summary["files_skipped"]:
        yield f"  read: {', '.join(summary['files_used'])}"
        for skipped in summary["files_skipped"]:
            yield f"  not used: {skipped['file']}: {skipped['reason']}"
    for thread in summary["threads"]:
        at = f" at {thread['peak_at']}" if thread["peak_at"] else ""
        yield (
            f"thread {thread['thread']}: peak {format_byte_rate(thread['peak_bytes_per_second'])}{at}, "
            f"one transport stream must carry {format_byte_rate(thread['required_bytes_per_second'])}"
        )
    if summary["summed"]:
        summed = summary["summed"]
        p95 = summed["p95_bytes_per_second"]
        yield (
            f"all threads: peak {format_byte_rate(summed['peak_bytes_per_second'])} at {summed['peak_at']}"
            + (f", p95 {format_byte_rate(p95)}" if p95 is not None else ", too few samples for a p95")
        )
    required = summary["required_bytes_per_second"]
    yield (
        f"the link must carry {format_byte_rate(required)} = {format_mbit(required * 8 if required else None)} "
        f"(peak + {headroom:g} %)"
    )
    if summary["avg_redo_write_bytes"]:
        yield f"average redo write size: {summary['avg_redo_write_bytes']:,.0f} bytes"
    for warning in summary["warnings"]:
        yield f"warning: {warning}"


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

    with environment_named(env) as (session, environment):
        for path in files:
            if not path.is_file():
                fail(f"{path}: no such file")
            try:
                record = import_now(
                    session=session, environment=environment, path=path, filename=path.name, fmt=fmt, imported_by=user
                )
            except RedoInputError as error:  # its message starts with the file's name
                fail(f"{error}; nothing of this file was imported")
            except FieldError as error:
                fail(f"{path.name}: {error.message}")
            dropped = ", ".join(f"{n} {reason}" for reason, n in record.dropped.items()) or "none dropped"
            counts = f"{record.rows_read:,} rows read, {record.rows_kept:,} kept"
            typer.echo(f"{path.name}: import #{record.id}, {counts} ({dropped})")
