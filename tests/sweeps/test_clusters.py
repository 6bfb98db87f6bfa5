"""Cluster runs: node n -> node n at the same time on "This machine" hosts, the sum, reverse."""

from redolab.runs.models import RunStatus
from redolab.sweeps import clusters
from redolab.sweeps.models import Cluster
from tests.execution import work_until
from tests.factories import make_environment, make_host
from tests.margins import measured_within

HTMX = {"HX-Request": "true"}


def two_node_env(session):
    environment = make_environment(session, primary_rac_nodes=2, standby_rac_nodes=2)
    for role in ("primary", "standby"):
        for node in (1, 2):
            make_host(session, environment, name=f"{role[0]}{node}", transport="local", role=role, node_number=node)
    session.refresh(environment)
    return environment


def run_worker_until(engine, secret_key, session, cluster_id, timeout=40):
    def finished() -> bool:
        session.expire_all()
        cluster = session.get(Cluster, cluster_id)
        return bool(cluster.runs) and all(run.status.finished for run in cluster.runs)

    work_until(engine, secret_key, finished, timeout, what="the cluster run")
    return session.get(Cluster, cluster_id)


def test_cluster_run_pairs_nodes_sums_and_reverses(browser_client, session, engine, secret_key):
    environment = two_node_env(session)
    page = browser_client.get(f"/environments/{environment.id}")
    assert "Run on both node pairs at once" in page.text
    form = {"duration_seconds": "2 s", "interval_seconds": "0.5 s", "rate_bits_per_second": "100 Mbit/s",
            "conns": "1", "label": "rac"}  # fmt: skip

    def together() -> tuple[int, float, float, float, str]:
        """(cluster id, seconds between the starts, carried at once, the pairs' averages added up, its page)."""
        created = browser_client.post(f"/environments/{environment.id}/clusters", data=form)
        assert created.status_code == 303, created.text
        cluster_id = int(created.headers["location"].rsplit("/", 1)[1])
        cluster = run_worker_until(engine, secret_key, session, cluster_id)
        pairs = [(run.client_host_name, run.server_host_name) for run in cluster.runs]
        assert pairs == [("p1", "s1"), ("p2", "s2")]
        assert all(run.status is RunStatus.succeeded for run in cluster.runs)
        starts = sorted(run.started_at for run in cluster.runs)
        averages = sum(run.bytes_per_second for run in cluster.runs)
        session.refresh(cluster)
        at_once = clusters.at_once_rate(cluster.together, cluster.runs)  # stored when the last pair ended
        assert at_once < 1.1 * averages, (at_once, averages)  # paced alike: at once never more than both paces
        shown = browser_client.get(f"/clusters/{cluster_id}")
        return cluster_id, (starts[1] - starts[0]).total_seconds(), at_once, averages, shown.text

    # at the same time, not one after the other, and so carrying at once what they carried each: a
    # loaded machine can start the pairs apart or starve one, then the cluster runs once more
    def misses(result) -> list[str]:
        _, spread, at_once, averages, page = result
        missed = [f"started {spread:.2f} s apart (< 1 s)"] if spread >= 1.0 else []
        if "overlap-warning" in page:  # more than a tenth of the 2 s apart
            missed.append(f"the page warns they did not overlap ({spread:.2f} s apart)")
        if at_once <= 0.7 * averages:
            missed.append(f"at once {at_once / 1e6:.2f} MB/s (> 0.7 x the averages' {averages / 1e6:.2f} MB/s)")
        return missed

    cluster_id, _, at_once, _, page = measured_within(together, misses, "a cluster run of 2 node pairs")
    assert "Carried at once over the" in page
    from redolab.core.units import format_byte_rate

    assert format_byte_rate(at_once) in page.split('id="cluster-total"')[1]
    live = browser_client.get(f"/clusters/{cluster_id}/live", headers={"HX-Request": "true"})
    assert live.status_code == 200 and "<html" not in live.text and 'id="cluster-live"' in live.text
    assert 'hx-trigger="every' not in live.text  # finished: the block stops polling by itself
    reversed_page = browser_client.post(f"/clusters/{cluster_id}/reverse")
    assert reversed_page.status_code == 303
    reverse_id = int(reversed_page.headers["location"].rsplit("/", 1)[1])
    reverse = run_worker_until(engine, secret_key, session, reverse_id)
    assert [(r.client_host_name, r.server_host_name) for r in reverse.runs] == [("s1", "p1"), ("s2", "p2")]
    assert reverse.reverse is True and reverse.template["label"] == "rac"


def test_cluster_run_needs_matching_nodes(browser_client, session):
    environment = make_environment(session)
    make_host(session, environment, name="p1", transport="local", role="primary", node_number=1)
    make_host(session, environment, name="s2", transport="local", role="standby", node_number=2)
    response = browser_client.post(f"/environments/{environment.id}/clusters", data={}, headers=HTMX)
    assert response.status_code == 422 and "same node numbers" in response.text
    assert session.query(Cluster).count() == 0
