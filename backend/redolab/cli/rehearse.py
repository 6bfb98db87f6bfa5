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
    tier: str | None = typer.Option(
        None,
        "--tier",
        help="Rehearse at a tier the what-if lists (its name) and at the tier below it, each capped at its rate.",
    ),
    all_destinations: bool = typer.Option(
        False, "--all-destinations", help="Replay to every destination the primary feeds at once (one copy each)."
    ),
    wait: bool = typer.Option(False, "--wait", help="Wait for the rehearsal to end (a worker must be running)."),
    as_json: bool = typer.Option(False, "--json", help="Print the rehearsal as JSON."),
    user: str = typer.Option("cli", help="Recorded as who requested it."),
) -> None:
    """Replay a window of recorded redo through the real link and measure the lag."""
    from redolab.core.limits import LimitReached
    from redolab.rehearsals import service
    from redolab.rehearsals.schemas import RehearsalCreate

    if tier is not None and cap is not None:
        fail("--tier and --cap: give one (--tier caps at the tier's rate and rehearses the tier below too)")
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
                made = _create(session, environment, service.request_of(body), tier, user)
        except LimitReached as refused:  # a queue cap (429): a refusal naming the cap, not a crash
            fail(refused.message)
        public = _report(session, made, one=tier is None, wait=wait, as_json=as_json)
    if wait and any(p.status.value != "succeeded" for p in public):
        raise typer.Exit(1)


def _create(session, environment, request, tier: str | None, user: str) -> list:
    """One rehearsal, or with a tier the tier below first and the tier behind it on the same hosts."""
    from redolab.planning.rehearse_tiers import rehearse_at_tier
    from redolab.rehearsals import service

    if tier is None:
        return [service.create_rehearsal(session=session, environment=environment, request=request, requested_by=user)]
    return rehearse_at_tier(session=session, environment=environment, tier=tier, request=request, requested_by=user)


def _report(session, made: list, *, one: bool, wait: bool, as_json: bool) -> list:
    """Print what was queued, wait for it with --wait, and print the rehearsals (one, or a list)."""
    import time

    from redolab.rehearsals import service
    from redolab.rehearsals.public import rehearsal_public

    if not as_json:
        for rehearsal in made:
            _queued(rehearsal)
    while wait and not all(service.status(rehearsal).finished for rehearsal in made):
        time.sleep(0.5)
        session.expire_all()
    public = [rehearsal_public(session, rehearsal) for rehearsal in made]
    documents = [p.model_dump(mode="json") for p in public] if as_json else []
    emit(
        as_json,
        lambda: documents[0] if one else documents,
        (line for p in public for line in _lines(p)) if wait else (),
    )
    return public


def _queued(rehearsal) -> None:
    typer.echo(
        f"rehearsal {rehearsal.id} queued"
        + (f" at {rehearsal.cap_label}" if rehearsal.cap_label else "")
        + f": {rehearsal.window_label}, threads "
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
