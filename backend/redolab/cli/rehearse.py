"""`redolab rehearse`: replay the worst window of an environment's own redo through its hosts' link
(a rehearsal: one run per host pair, its threads at once) and report the measured transport lag."""

from __future__ import annotations

import typer

from redolab.cli.database import environment_named
from redolab.cli.experiments import invalid_input_fails
from redolab.cli.output import emit, fail


def rehearse(
    env: str = typer.Option(..., "--env", help="Environment name."),
    window: str = typer.Option(
        "worst-60m", help="worst-60m, worst-15m, worst-5m, worst-1m, or FROM..TO (ISO times, the database's zone)."
    ),
    scale: float = typer.Option(1.0, help="Multiply the recorded volumes (1.3: the plan's headroom)."),
    speedup: float = typer.Option(1.0, help="Compress time K times for a quick look (labelled compressed)."),
    mode: str = typer.Option("async", help="async (stream) or sync (each commit-sized write waits for its ack)."),
    message_size: str | None = typer.Option(
        None, help="Bytes per message (default 1 MiB; SYNC: the history's average redo write)."
    ),
    label: str = typer.Option("", help="A label to find the rehearsal again."),
    cap: str | None = typer.Option(
        None, "--cap", help="Cap at a link tier's line rate, e.g. 200Mbit/s (shared by the threads, each paced)."
    ),
    all_destinations: bool = typer.Option(
        False, "--all-destinations", help="Replay to every destination the primary feeds at once (one copy each)."
    ),
    wait: bool = typer.Option(False, "--wait", help="Wait for the rehearsal to end (a worker must be running)."),
    as_json: bool = typer.Option(False, "--json", help="Print the rehearsal as JSON."),
    user: str = typer.Option("cli", help="Recorded as who requested it."),
) -> None:
    """Replay a window of recorded redo through the real link and measure the lag."""
    import time

    from redolab.core.limits import LimitReached
    from redolab.rehearsals import service
    from redolab.rehearsals.public import rehearsal_public
    from redolab.rehearsals.schemas import RehearsalCreate

    with environment_named(env) as (session, environment):
        try:
            with invalid_input_fails(lambda error: f"{error.field}: {error.message}"):
                body = RehearsalCreate(
                    window=window,
                    scale=scale,
                    speedup=speedup,
                    mode=mode,
                    message_bytes=message_size,
                    label=label,
                    across_hops=all_destinations,
                    cap_bits_per_second=cap,
                )
                rehearsal = service.create_rehearsal(
                    session=session, environment=environment, request=service.request_of(body), requested_by=user
                )
        except LimitReached as refused:  # a queue cap (429): a refusal naming the cap, not a crash
            fail(refused.message)
        if not as_json:
            _queued(rehearsal)
        while wait and not service.status(rehearsal).finished:
            time.sleep(0.5)
            session.expire_all()
        public = rehearsal_public(session, rehearsal)
        emit(as_json, lambda: public.model_dump(mode="json"), _lines(public) if wait else ())
    if wait and public.status.value != "succeeded":
        raise typer.Exit(1)


def _queued(rehearsal) -> None:
    typer.echo(
        f"rehearsal {rehearsal.id} queued: {rehearsal.window_label}, threads "
        f"{', '.join(map(str, rehearsal.threads))}, runs {', '.join(str(r.id) for r in rehearsal.runs)}"
    )
    for note in rehearsal.notes or ():
        typer.echo(f"  note: {note}")


def _lines(public):
    from redolab.core.units import format_bytes, format_duration

    yield f"rehearsal {public.id} {public.status.value}" + (" (time compressed)" if public.compressed else "")
    if public.failure_reason:
        yield public.failure_reason
    result = public.result or {}
    if result:
        yield (
            f"maximum transport lag {format_duration(result['max_lag_seconds'])}, maximum backlog "
            f"{format_bytes(result['max_backlog_bytes'])}, "
            + (
                f"drained {format_duration(result['drain_seconds'])} after the last scheduled byte"
                if result.get("drained")
                else "not drained when the replay stopped"
            )
        )
