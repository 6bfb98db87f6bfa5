"""get_or_404: one lookup for every service getter, with the 404 message it raises."""

import pytest

from redolab.core.db import get_or_404
from redolab.core.errors import NotFound
from redolab.environments.models import Environment, Host
from tests.factories import make_environment, make_host


def test_a_row_that_exists_is_returned(session):
    environment = make_environment(session)
    assert get_or_404(session, Environment, environment.id, what="Environment") is environment


def test_a_missing_row_is_not_found_by_what_it_is(session):
    with pytest.raises(NotFound, match=r"^Environment 424242 does not exist\.$"):
        get_or_404(session, Environment, 424242, what="Environment")


def test_a_row_of_another_environment_is_not_found_in_this_one(session):
    mine, theirs = make_environment(session), make_environment(session)
    host = make_host(session, theirs)
    assert get_or_404(session, Host, host.id, what="Host", environment=theirs) is host
    with pytest.raises(NotFound, match=rf"^Host {host.id} does not exist in environment '{mine.name}'\.$"):
        get_or_404(session, Host, host.id, what="Host", environment=mine)


def test_a_row_the_getter_does_not_accept_is_not_found(session):
    environment = make_environment(session)
    with pytest.raises(NotFound, match="does not exist"):
        get_or_404(session, Environment, environment.id, what="Environment", only=lambda found: False)
