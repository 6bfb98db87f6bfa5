"""A destination or shared link that another request deletes (or whose environment it deletes) between
this request's lookup and its lock: the answer is a 404 naming it, not a 500 (the bench's DELETE
/destinations/{id} met one) nor a silent 204 for a row already gone. Sequential sessions stand for the
two requests: the second's lookup happens before the first commits."""

from __future__ import annotations

import pytest

from redolab.core.db import make_sessionmaker
from redolab.core.errors import NotFound
from redolab.environments import destinations, service
from redolab.environments.models import Environment
from redolab.environments.schemas_destinations import (
    DestinationCreate,
    DestinationUpdate,
    SharedLinkCreate,
    SharedLinkUpdate,
)
from tests.factories import make_environment

pytestmark = pytest.mark.both_backends  # the lock is a row lock on PostgreSQL, the write lock on SQLite


@pytest.fixture
def three(session):
    """An environment with three destinations (so the middle one may be deleted) and a shared link."""
    environment = make_environment(session)
    for name in ("london", "paris"):
        destinations.create_destination(
            session=session, environment=environment, destination_in=DestinationCreate(name=name)
        )
    ids = [d.id for d in environment.destinations]
    destinations.create_shared_link(
        session=session, environment=environment, link_in=SharedLinkCreate(name="wan", destination_ids=ids[1:])
    )
    return environment.id, ids, environment.shared_links[0].id


def _deleted(sessions, environment_id: int, destination_id: int | None) -> None:
    with sessions() as other:
        if destination_id is None:
            service.delete_environment(session=other, environment=other.get(Environment, environment_id))
        else:
            found = destinations.get_destination(session=other, destination_id=destination_id)
            destinations.delete_destination(session=other, destination=found)


@pytest.mark.parametrize("gone", ["the destination", "its environment"])
@pytest.mark.parametrize("write", ["delete", "update"])
def test_a_destination_deleted_meanwhile_is_a_404(engine, three, gone, write):
    environment_id, ids, _ = three
    sessions = make_sessionmaker(engine)
    with sessions() as mine:
        destination = destinations.get_destination(session=mine, destination_id=ids[1])  # found: not a 404 yet
        _deleted(sessions, environment_id, ids[1] if gone == "the destination" else None)
        with pytest.raises(NotFound, match=f"Destination {ids[1]} does not exist"):
            if write == "delete":
                destinations.delete_destination(session=mine, destination=destination)
            else:
                update = DestinationUpdate(notes="moved")
                destinations.update_destination(session=mine, destination=destination, destination_in=update)


@pytest.mark.parametrize("write", ["delete", "update"])
def test_a_shared_link_whose_environment_was_deleted_meanwhile_is_a_404(engine, three, write):
    environment_id, _, link_id = three
    sessions = make_sessionmaker(engine)
    with sessions() as mine:
        link = destinations.get_shared_link(session=mine, shared_link_id=link_id)
        _deleted(sessions, environment_id, None)
        with pytest.raises(NotFound, match=f"Shared link {link_id} does not exist"):
            if write == "delete":
                destinations.delete_shared_link(session=mine, link=link)
            else:
                update = SharedLinkUpdate(notes="moved")
                destinations.update_shared_link(session=mine, link=link, link_in=update)
