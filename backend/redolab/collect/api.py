"""JSON API: collections from the database (operator role to collect; every route logged in)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.collect import service
from redolab.collect.schemas import CollectionCreate, CollectionPublic, FactsApply
from redolab.core.deps import SessionDep
from redolab.environments import service as environments
from redolab.jobs.queue import wake_local_worker

router = APIRouter(prefix="/api/v1", tags=["collections"], dependencies=[Depends(current_api_user)])


@router.post("/environments/{environment_id}/collections", status_code=status.HTTP_201_CREATED)
def create_collection(
    request: Request, session: SessionDep, user: ApiOperator, environment_id: int, body: CollectionCreate | None = None
) -> CollectionPublic:
    """Queue a collection from the primary host's database (the shipped read-only scripts). With `review`
    the rows are kept as your uploads: `staged[].upload_token` goes to .../redo/preview and .../redo/imports;
    with `compressibility` (Oracle) a few archived logs are also compressed on the host, read-only."""
    environment = environments.get_environment(session=session, environment_id=environment_id)
    collection = service.queue_collection(
        session=session,
        environment=environment,
        requested_by=user.username,
        review_upload_dir=request.app.state.settings.upload_dir if body and body.review else None,
        compressibility=bool(body and body.compressibility),
    )
    wake_local_worker(request.app)
    return CollectionPublic.model_validate(collection)


@router.get("/collections/{collection_id}")
def read_collection(session: SessionDep, collection_id: int) -> CollectionPublic:
    """One collection: status, failure (host, step, what to do), evidence and facts."""
    return CollectionPublic.model_validate(service.get_collection(session=session, collection_id=collection_id))


@router.post("/collections/{collection_id}/cancel")
def cancel_collection(session: SessionDep, user: ApiOperator, collection_id: int) -> CollectionPublic:
    """Cancel: a queued one at once, a running one within a second (nothing is stored)."""
    collection = service.get_collection(session=session, collection_id=collection_id)
    return CollectionPublic.model_validate(service.cancel_collection(session=session, collection=collection))


@router.post("/collections/{collection_id}/apply-facts")
def apply_facts(session: SessionDep, user: ApiOperator, collection_id: int, apply_in: FactsApply) -> CollectionPublic:
    """Write the facts the collection read into its environment (all offered ones, or `fields`)."""
    collection = service.get_collection(session=session, collection_id=collection_id)
    service.apply_facts(session=session, collection=collection, fields=apply_in.fields)
    return CollectionPublic.model_validate(collection)
