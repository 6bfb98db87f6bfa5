"""A rehearsal to every destination at once (issue 38): the primary replays the worst hour to each
destination it feeds at the same time, each receiving the whole schedule (one copy of the redo each);
the runs share the primary, start together, and the result gives each destination's figures, the
first destination's being the rehearsal's (and the plan's)."""

from __future__ import annotations

from redolab.environments import destinations
from redolab.environments.schemas_destinations import DestinationCreate
from redolab.jobs.models import Job
from redolab.rehearsals import service
from redolab.rehearsals.models import Rehearsal
from redolab.runs.models import RunStatus
from tests.factories import make_environment, make_host
from tests.margins import measured_within
from tests.rehearsals.test_rehearsal_runs import MIB, archived_log_csv, import_history, run_until_done


def two_destinations(session):
    environment = make_environment(session, name="rehearse both")
    remote = destinations.create_destination(
        session=session,
        environment=environment,
        destination_in=DestinationCreate(name="remote", kind="standby", transport="ASYNC", link_rtt_seconds="40 ms"),
    )
    make_host(session, environment, role="primary", name="p1", transport="local")
    make_host(session, environment, role="standby", name="near", transport="local")
    make_host(session, environment, role="standby", name="far", transport="local", destination_id=remote.id)
    session.refresh(environment)
    return environment


def test_the_worst_hour_to_both_destinations_at_once(api_client, browser_client, session, engine, secret_key):
    environment = two_destinations(session)
    import_history(api_client, environment, archived_log_csv(burst_mib=300))
    page = browser_client.get(f"/environments/{environment.id}").text
    assert 'id="rh-across_hops"' in page and "To both destinations at once" in page

    def rehearsed() -> tuple[dict, float]:
        created = api_client.post(
            f"/api/v1/environments/{environment.id}/rehearsals",
            json={"window": "worst-60m", "speedup": 600, "across_hops": True},
        )
        assert created.status_code == 201, created.text
        body = created.json()
        assert body["across_hops"] is True and len(body["run_ids"]) == 2
        rehearsal = run_until_done(engine, secret_key, session, body["id"])
        pairs = [(run.client_host_name, run.server_host_name, run.conns) for run in rehearsal.runs]
        assert pairs == [("p1", "near", 1), ("p1", "far", 1)]  # the primary sends to each
        assert all(run.status is RunStatus.succeeded for run in rehearsal.runs), [
            r.failure_reason for r in rehearsal.runs
        ]
        starts = sorted(run.started_at for run in rehearsal.runs)
        return body, (starts[1] - starts[0]).total_seconds()

    # together, though they share the primary: a loaded machine can start them apart, then once more
    body, _ = measured_within(
        rehearsed, lambda done: [f"started {done[1]:.2f} s apart (< 1.5 s)"] * (done[1] >= 1.5), "both destinations"
    )
    result = api_client.get(body["status_url"]).json()["result"]
    assert result["bytes_generated"] == 6 * 300 * MIB  # the first destination's copy: the rehearsal's figures
    by_name = {d["name"]: d for d in result["destinations"]}
    assert list(by_name) == ["standby", "remote"]
    for figures in by_name.values():  # each destination received the whole hour
        assert figures["bytes_generated"] == figures["bytes_received"] == 6 * 300 * MIB
        assert figures["drained"] is True and figures["max_lag_seconds"] is not None
        assert "series" not in figures
    assert result["max_lag_seconds"] == by_name["standby"]["max_lag_seconds"]
    shown = browser_client.get(f"/rehearsals/{body['id']}").text
    assert 'id="summary-destinations"' in shown and 'data-destination="remote"' in shown
    # the host that was "remote"'s moves to the first destination: its run still measured "remote"
    far = next(h for h in environment.hosts if h.name == "far")
    far.destination_id, far.node_number = environment.destinations[0].id, 2
    session.commit()
    rehearsal = session.get(Rehearsal, body["id"])
    rehearsal.result = None  # read from its runs again, as while it ran
    again = service.current_result(session=session, rehearsal=rehearsal)
    session.rollback()
    assert [d["name"] for d in again["destinations"]] == ["standby", "remote"]


def test_to_every_destination_needs_two_and_no_host_pair(api_client, session):
    environment = make_environment(session, name="one destination")
    primary = make_host(session, environment, role="primary", name="p1", transport="local")
    standby = make_host(session, environment, role="standby", name="s1", transport="local")
    import_history(api_client, environment, archived_log_csv(burst_mib=300))
    url = f"/api/v1/environments/{environment.id}/rehearsals"
    response = api_client.post(url, json={"window": "worst-60m", "speedup": 600, "across_hops": True})
    assert response.status_code == 422 and "two or more destinations" in response.text
    both = two_destinations(session)
    import_history(api_client, both, archived_log_csv(burst_mib=300))
    response = api_client.post(
        f"/api/v1/environments/{both.id}/rehearsals",
        json={"window": "worst-60m", "across_hops": True, "client_host_id": primary.id, "server_host_id": standby.id},
    )
    assert response.status_code == 422 and "leave the host pair empty" in response.text
    assert session.query(Rehearsal).count() == 0 and session.query(Job).count() == 0
