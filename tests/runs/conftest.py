"""Fixtures for runs: an environment on the test sshd, and the no-leftover check after each test."""

import time

import pytest

from tests.factories import make_ssh_environment
from tests.services import leftover_probes


@pytest.fixture
def ssh_env(session, sshd, secret_key):
    """(environment, primary, standby), both hosts on the test sshd with a pinned key."""
    return make_ssh_environment(session, sshd, secret_key=secret_key)


@pytest.fixture(autouse=True)
def nothing_left_behind():
    """After every run test no redoprobe may be running (probes that end by their caps get 10 s)."""
    yield
    deadline = time.monotonic() + 10
    while leftover_probes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftover_probes() == [], "a redoprobe process outlived its run"
