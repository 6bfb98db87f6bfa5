"""`redolab collect`: collect redo history and facts from an environment's primary database."""

from __future__ import annotations

import time

import typer

from redolab.cli.database import environment_named
from redolab.cli.output import emit, fail
from redolab.core.units import format_count


def collect(
    env: str = typer.Option(..., "--env", help="The environment whose primary database is read."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the collection to end (a worker must be running)."),
    as_json: bool = typer.Option(False, "--json", help="Print the collection as JSON."),
    user: str = typer.Option("cli", help="Recorded as who requested the collection."),
    compressibility: bool = typer.Option(
        False,
        "--compressibility",
        help="Also compress a few archived logs of the worst and a typical hour on the host, read-only "
        "(Oracle; nice 19, up to 256 MiB of each of 8 logs): their zlib ratio and CPU s/GiB.",
    ),
) -> None:
    """Queue a collection: the shipped read-only scripts run on the primary host over SSH."""
    from redolab.collect import service
    from redolab.collect.schemas import CollectionPublic
    from redolab.core.errors import FieldError

    with environment_named(env) as (session, environment):
        try:
            collection = service.queue_collection(
                session=session, environment=environment, requested_by=user, compressibility=compressibility
            )
        except FieldError as error:
            fail(error.message)
        if not as_json:
            typer.echo(f"collection {collection.id} queued on {collection.host_name} ({collection.database_kind})")
        while wait and not collection.status.finished:
            time.sleep(0.5)
            session.expire_all()
            collection = service.get_collection(session=session, collection_id=collection.id)
        emit(
            as_json,
            lambda: CollectionPublic.model_validate(collection).model_dump(mode="json"),
            _lines(collection) if wait else (),
        )
        status = collection.status.value
    if wait and status != "succeeded":
        raise typer.Exit(1)


def _lines(collection):
    yield f"collection {collection.id}: {collection.status.value}"
    if collection.failure_message:
        yield f"  {collection.failure_message}"
        if collection.failure_hint:
            yield f"  what to do: {collection.failure_hint}"
    for step, count in (collection.row_counts or {}).items():
        yield f"  {step}: {format_count(count, 'row')}"
    if collection.import_id:
        yield f"  imported as import #{collection.import_id}"
    for note in collection.notes or []:
        yield f"  {note}"
