"""Pages say what they show (issue 58, item 2): a run, sweep, cluster run, rehearsal, watch or comparison between two
"This machine" hosts carries the "This machine, not the link" banner (and a sweep draws no line of what the
link must carry under its points); the same pages between SSH hosts do not."""

from __future__ import annotations

import pytest

from redolab.runs.models import RunStatus
from redolab.sweeps import service as sweep_service
from redolab.sweeps.models import Cluster
from redolab.sweeps.schemas import SweepCreate
from redolab.watches import service as watch_service
from redolab.watches.schemas import WatchCreate
from tests.factories import make_environment, make_host, make_measured_run
from tests.rehearsals.test_rehearsal_runs import archived_log_csv, import_history, local_env

BANNER = 'id="loopback-banner"'


def pair(environment):
    primary = next(h for h in environment.hosts if h.role.value == "primary")
    standby = next(h for h in environment.hosts if h.role.value == "standby")
    return primary, standby


@pytest.fixture
def local(session):
    return local_env(session, link_bandwidth_bits_per_second=10**9)


def test_a_run_page(session, browser_client, local):
    primary, standby = pair(local)
    run = make_measured_run(session, local.id, primary, standby, bytes_per_second=3.6e9)
    page = " ".join(browser_client.get(f"/runs/{run.id}").text.split())
    assert BANNER in page and "This machine, not the link." in page and "this run are" in page


def test_a_sweep_page_draws_no_requirement_under_loopback_points(session, api_client, browser_client, local):
    import_history(api_client, local, archived_log_csv())
    primary, standby = pair(local)
    sweep = sweep_service.create_sweep(
        session=session, environment=local, requested_by="alice",
        sweep_in=SweepCreate(client_host_id=primary.id, server_host_id=standby.id, conns_max=2),
    )  # fmt: skip
    for point, conns in enumerate((1, 2)):  # its two points, measured
        make_measured_run(session, local.id, primary, standby, bytes_per_second=2e9 * conns, sweep_id=sweep.id,
                          sweep_point=point, conns=conns)  # fmt: skip
    sweep.status = RunStatus.succeeded
    session.commit()
    session.expire_all()
    page = browser_client.get(f"/sweeps/{sweep.id}").text
    assert BANNER in page and 'id="sweep-chart"' in page
    assert "the link must carry" not in page  # the history's requirement is not drawn under loopback points


def test_a_watch_page_and_a_comparison(session, browser_client, local):
    primary, standby = pair(local)
    watch = watch_service.create_watch(
        session=session, environment=local, requested_by="alice",
        watch_in=WatchCreate(name="loop", client_host_id=primary.id, server_host_id=standby.id),
    )  # fmt: skip
    assert BANNER in browser_client.get(f"/watches/{watch.id}").text
    runs = [make_measured_run(session, local.id, primary, standby) for _ in range(2)]
    compare = " ".join(browser_client.get(f"/compare?run={runs[0].id}&run={runs[1].id}").text.split())
    assert BANNER in compare and "this comparison are" in compare


def test_a_rehearsal_on_this_machine_says_it_measures_the_probe(session, api_client, browser_client, local):
    import_history(api_client, local, archived_log_csv())
    created = api_client.post(f"/api/v1/environments/{local.id}/rehearsals", json={"window": "worst-60m"})
    assert created.status_code == 201, created.text
    page = " ".join(browser_client.get(f"/rehearsals/{created.json()['id']}").text.split())
    assert BANNER in page and "measures the probe replaying your redo" in page


def test_the_same_pages_over_ssh_hosts_have_no_banner(session, browser_client, local):
    primary = make_host(session, local, name="db1", role="primary", node_number=2, ssh_address="db1.example.net")
    standby = make_host(session, local, name="db2", role="standby", node_number=2, ssh_address="db2.example.net")
    run = make_measured_run(session, local.id, primary, standby)
    assert BANNER not in browser_client.get(f"/runs/{run.id}").text


@pytest.mark.parametrize("transport", ["local", "ssh"])
def test_a_cluster_run_page_says_this_machine_only_for_local_pairs(session, browser_client, transport):
    """Node n -> node n on "This machine" sums the probe's loopback, not a shared link: the banner; the
    same cluster over SSH hosts has none."""
    environment = make_environment(session, primary_rac_nodes=2, standby_rac_nodes=2)
    for role in ("primary", "standby"):
        for node in (1, 2):
            make_host(session, environment, name=f"{role[0]}{node}", role=role, node_number=node, transport=transport)
    made = browser_client.post(f"/environments/{environment.id}/clusters", data={}, headers={"HX-Request": "true"})
    assert made.status_code in (200, 303), made.text
    cluster = session.query(Cluster).one()
    page = " ".join(browser_client.get(f"/clusters/{cluster.id}").text.split())
    assert (BANNER in page) is (transport == "local")
    assert ("this cluster run are" in page) is (transport == "local")
