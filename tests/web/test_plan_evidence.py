"""The Plan section's evidence list: on the page while short, loaded when opened once it is long
(500 runs' rows were 40 % of the environment page's time and 200 KiB of its HTML)."""

import re

from fastapi.testclient import TestClient

from redolab.web.planning import EVIDENCE_INLINE
from tests.factories import make_environment, make_host, make_measured_run

HTMX = {"HX-Request": "true"}


def _environment(session, runs: int):
    environment = make_environment(session)
    primary = make_host(session, environment, name="p", role="primary", ssh_address="10.0.0.1")
    standby = make_host(session, environment, name="s", role="standby", ssh_address="10.0.0.2")
    made = [
        make_measured_run(
            session, environment.id, primary, standby, 1e6 * (n + 1), label=f"run {n}", tags=[f"t{n % 3}"]
        )
        for n in range(runs)
    ]
    return environment, made


def _boxes(html: str) -> set[str]:
    return set(re.findall(r'id="use-run-(\d+)"', html))


def test_a_short_list_is_on_the_page(browser_client, session):
    environment, runs = _environment(session, 3)
    page = browser_client.get(f"/environments/{environment.id}").text
    assert _boxes(page) == {str(r.id) for r in runs}
    assert "data-evidence-pending" not in page and 'id="evidence-form"' in page


def test_a_long_list_loads_when_opened_and_says_how_long_it_is(browser_client, session):
    count = EVIDENCE_INLINE + 10
    environment, runs = _environment(session, count)
    url = f"/environments/{environment.id}"
    page = browser_client.get(url).text
    assert _boxes(page) == set() and 'id="evidence-form"' not in page
    assert f"Evidence: {count} of {count} used" in page
    assert f"Loading the list of {count} imports and runs" in page
    assert f'hx-get="{url}/plan/evidence"' in page and 'hx-trigger="toggle once"' in page

    fragment = browser_client.get(f"{url}/plan/evidence", headers=HTMX)
    assert fragment.status_code == 200 and "<html" not in fragment.text
    assert _boxes(fragment.text) == {str(r.id) for r in runs}
    assert 'id="evidence-form"' in fragment.text and "Leave out runs tagged" in fragment.text

    # without htmx (no script): the page with the list open
    plain = browser_client.get(f"{url}/plan/evidence", follow_redirects=False)
    assert plain.status_code == 303 and plain.headers["location"] == f"{url}?evidence=1#plan-evidence"
    opened = browser_client.get(f"{url}?evidence=1").text
    assert _boxes(opened) == {str(r.id) for r in runs} and re.search(r'id="plan-evidence" open', opened)

    # chosen evidence: the list is on the page, open, with the choice ticked
    chosen = browser_client.get(f"{url}?chosen=1&run={runs[0].id}").text
    assert _boxes(chosen) == {str(r.id) for r in runs}
    assert f"Evidence: 1 of {count} used (chosen)" in chosen
    assert re.search(rf'id="use-run-{runs[0].id}"[^>]*checked', chosen)
    assert not re.search(rf'id="use-run-{runs[1].id}"[^>]*checked', chosen)


def test_the_evidence_fragment_needs_a_login_and_an_environment(app, browser_client, session):
    environment, _ = _environment(session, 1)
    with TestClient(app, follow_redirects=False) as anonymous:
        fragment = anonymous.get(f"/environments/{environment.id}/plan/evidence", headers=HTMX)
        plain = anonymous.get(f"/environments/{environment.id}/plan/evidence")
    assert fragment.status_code == 401 and "<tr" not in fragment.text
    assert plain.status_code == 303 and plain.headers["location"].startswith("/login")
    assert browser_client.get("/environments/999999/plan/evidence", headers=HTMX).status_code == 404


def test_a_chosen_loopback_run_is_marked_on_the_page_and_left_out_ones_are_named(browser_client, session):
    """Loopback runs left out by default are named where they would fill a figure; ticked, every card
    using one says 'loopback' and none carries more than the nominal link. Each kernel setting is
    shown next to the hosts' captured values, and one every host already exceeds says "keep"."""
    environment = make_environment(
        session, link_bandwidth_bits_per_second=1e9, link_rtt_seconds=0.025, database_size_bytes=2 * 1024**4
    )
    primary = make_host(session, environment, name="here-p", role="primary", transport="local")
    standby = make_host(session, environment, name="here-s", role="standby", transport="local")
    rmem = {"tcp_rmem": [4096, 131072, 33554432]}
    runs = [
        make_measured_run(
            session, environment.id, primary, standby, 3715.56 * 1024 * 1024, client_settings=rmem, server_settings=rmem
        )
        for _ in range(3)
    ]
    url = f"/environments/{environment.id}"
    page = browser_client.get(url).text
    assert f"no ASYNC run chosen (3 ASYNC runs (#{runs[0].id}, " in page and "exist but are left out: loopback" in page
    assert "(keep)" in page and "# keep: net.ipv4.tcp_rmem" in page and "4096 87380 9375000" in page
    missing = re.findall(r"<li>Missing: (.*?)</li>", page, re.S)
    headlines = re.findall(r'<p class="headline">Missing: (.*?)</p>', page, re.S)
    assert not set(missing) & set(headlines)  # "Missing:" never twice for one item
    chosen = browser_client.get(f"{url}?chosen=1&run={runs[0].id}").text
    card = re.search(r'id="plan-instantiation".*?</article>', chosen, re.S).group(0)
    assert "(loopback)</span>" in card and "Loopback, not the link" in card and "Nominal, not measured" not in card
    assert "capped at the nominal link" in card and "119.21 MiB/s (1,000 Mbit/s) (loopback" in card
    buffers = re.search(r'id="plan-buffers".*?</article>', chosen, re.S).group(0)
    assert "3,125,000 bytes (loopback run #" in buffers  # 1 Gbit/s x 25 ms, not 3,715.56 MiB/s x 25 ms
    assert "left out of the verdicts" not in chosen and "Loopback run #" in chosen
