"""JSON API: an environment's destinations (standby, far sync, cascaded standby) and the shared links
their hops cross. Reading needs a login; changing needs the admin role, as hosts do."""

from __future__ import annotations

from fastapi import APIRouter, Depends, status

from redolab.auth.deps import ApiAdmin, current_api_user
from redolab.core.deps import SessionDep
from redolab.environments import destinations, service
from redolab.environments.schemas_destinations import (
    DestinationCreate,
    DestinationPublic,
    DestinationsPublic,
    DestinationUpdate,
    SharedLinkCreate,
    SharedLinkPublic,
    SharedLinksPublic,
    SharedLinkUpdate,
)

router = APIRouter(prefix="/api/v1", tags=["destinations"], dependencies=[Depends(current_api_user)])


@router.get("/environments/{environment_id}/destinations")
def list_destinations(session: SessionDep, environment_id: int) -> DestinationsPublic:
    """The environment's destinations by position; the first is the one its transport and link mirror."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    data = [DestinationPublic.of(d) for d in destinations.list_destinations(environment=environment)]
    return DestinationsPublic(data=data, count=len(data))


@router.post("/environments/{environment_id}/destinations", status_code=status.HTTP_201_CREATED)
def create_destination(
    session: SessionDep, user: ApiAdmin, environment_id: int, destination_in: DestinationCreate
) -> DestinationPublic:
    """Add a destination after the others. Bandwidth and RTT are numbers (bit/s, seconds) or text with
    a unit ("1 Gbit/s", "40 ms")."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    destination = destinations.create_destination(
        session=session, environment=environment, destination_in=destination_in
    )
    return DestinationPublic.of(destination, destination_in.unit_readings)


@router.get("/destinations/{destination_id}")
def read_destination(session: SessionDep, destination_id: int) -> DestinationPublic:
    """One destination, with its hosts' ids."""
    return DestinationPublic.of(destinations.get_destination(session=session, destination_id=destination_id))


@router.put("/destinations/{destination_id}")
def update_destination(
    session: SessionDep, user: ApiAdmin, destination_id: int, destination_in: DestinationUpdate
) -> DestinationPublic:
    """Change a destination: fields left out keep their value; the result is checked whole. Changing
    the first destination's transport or link changes the environment's as well."""
    destination = destinations.get_destination(session=session, destination_id=destination_id)
    destinations.update_destination(session=session, destination=destination, destination_in=destination_in)
    return DestinationPublic.of(destination, destination_in.unit_readings)


@router.delete("/destinations/{destination_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_destination(session: SessionDep, user: ApiAdmin, destination_id: int) -> None:
    """Delete a destination no host, no other destination and no shared link still needs (409 names them)."""
    destination = destinations.get_destination(session=session, destination_id=destination_id)
    destinations.delete_destination(session=session, destination=destination)


@router.get("/environments/{environment_id}/shared-links")
def list_shared_links(session: SessionDep, environment_id: int) -> SharedLinksPublic:
    """The physical links the environment's hops share."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    data = [SharedLinkPublic.of(link) for link in destinations.list_shared_links(environment=environment)]
    return SharedLinksPublic(data=data, count=len(data))


@router.post("/environments/{environment_id}/shared-links", status_code=status.HTTP_201_CREATED)
def create_shared_link(
    session: SessionDep, user: ApiAdmin, environment_id: int, link_in: SharedLinkCreate
) -> SharedLinkPublic:
    """Declare that the hops into `destination_ids` (each: the hop that delivers redo into it) cross one link."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    link = destinations.create_shared_link(session=session, environment=environment, link_in=link_in)
    return SharedLinkPublic.of(link, link_in.unit_readings)


@router.get("/shared-links/{shared_link_id}")
def read_shared_link(session: SessionDep, shared_link_id: int) -> SharedLinkPublic:
    """One shared link."""
    return SharedLinkPublic.of(destinations.get_shared_link(session=session, shared_link_id=shared_link_id))


@router.put("/shared-links/{shared_link_id}")
def update_shared_link(
    session: SessionDep, user: ApiAdmin, shared_link_id: int, link_in: SharedLinkUpdate
) -> SharedLinkPublic:
    """Change a shared link: fields left out keep their value; destination_ids replaces the hops."""
    link = destinations.get_shared_link(session=session, shared_link_id=shared_link_id)
    destinations.update_shared_link(session=session, link=link, link_in=link_in)
    return SharedLinkPublic.of(link, link_in.unit_readings)


@router.delete("/shared-links/{shared_link_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_shared_link(session: SessionDep, user: ApiAdmin, shared_link_id: int) -> None:
    """Delete a shared link (its destinations stay)."""
    link = destinations.get_shared_link(session=session, shared_link_id=shared_link_id)
    destinations.delete_shared_link(session=session, link=link)
