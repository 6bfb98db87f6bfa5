"""SSH checks of a host (Test connection, the host-key scan and pin, Measure encryption) are capped
before any connection is made: one at a time on a host (409, naming it), REDOLAB_MAX_HOST_CHECKS_PER_USER
for one user and REDOLAB_MAX_CONCURRENT_HOST_CHECKS in the process (503 with Retry-After, naming the
setting). A held check is released when it ends, also by an error."""

from __future__ import annotations

import pytest

from redolab.core.limits import LimitReached
from redolab.environments.host_checks import HostChecks
from tests.factories import make_environment, make_host


def _hosts(session, count: int):
    environment = make_environment(session)
    hosts = [make_host(session, environment, name=f"h{n}", node_number=n + 1, transport="local") for n in range(count)]
    return environment, hosts


def test_one_check_per_host_per_user_and_in_all(session, settings):
    _, (one, two, three) = _hosts(session, 3)
    checks = HostChecks(settings.model_copy(update={"max_concurrent_host_checks": 2}))
    with checks.taken("ann", one):
        with pytest.raises(LimitReached) as same_host, checks.taken("bob", one):
            pass
        assert same_host.value.status_code == 409 and "Host 'h0' is being checked already" in same_host.value.message
        with pytest.raises(LimitReached) as same_user, checks.taken("ann", two):
            pass
        assert same_user.value.status_code == 503 and "REDOLAB_MAX_HOST_CHECKS_PER_USER" in same_user.value.message
        assert "You have 1 host check running already" in same_user.value.message
        with checks.taken("bob", two):
            with pytest.raises(LimitReached) as full, checks.taken("cy", three):
                pass
            assert full.value.status_code == 503 and full.value.headers == {"Retry-After": "5"}
            assert "The server is running 2 host checks already" in full.value.message
            assert "REDOLAB_MAX_CONCURRENT_HOST_CHECKS" in full.value.message
    with pytest.raises(RuntimeError), checks.taken("ann", one):  # an error inside gives back host and slot
        raise RuntimeError("unreachable")
    with checks.taken("ann", one), checks.taken("bob", two):
        assert checks.slots.in_use == 2


def test_a_host_being_checked_is_refused_on_every_route_before_connecting(
    session, app, user, api_client, browser_client
):
    environment, (busy, other) = _hosts(session, 2)
    base = f"/environments/{environment.id}/hosts/{busy.id}"
    with app.state.host_checks.taken("someone else", busy):
        for client, url in (
            (api_client, f"/api/v1{base}/test"),
            (api_client, f"/api/v1{base}/crypto-speed"),
            (api_client, f"/api/v1{base}/host-key/scan"),
            (browser_client, f"{base}/test"),
            (browser_client, f"{base}/crypto-speed"),
            (browser_client, f"{base}/verify"),
        ):
            refused = client.post(url, headers={"HX-Request": "true"})  # the page's buttons are htmx
            assert refused.status_code == 409, (url, refused.text)
            assert "Host 'h0' is being checked already" in refused.text, (url, refused.text)
        pinned = api_client.put(f"/api/v1{base}/host-key", json={"fingerprint": "SHA256:x"})
        assert pinned.status_code == 409, pinned.text
    # the user's own share: a check of another host held in their name
    with app.state.host_checks.taken(user.id, other):
        refused = api_client.post(f"/api/v1{base}/test")
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "5", refused.text
    assert "REDOLAB_MAX_HOST_CHECKS_PER_USER" in refused.text
