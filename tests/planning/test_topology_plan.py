"""Several destinations in the plan (issue 38): each hop judged from the runs over it, a shared link
against the sum of its hops, on the page and in the JSON; and no destination's transport card
contradicts its hop's verdict."""

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.environments import destinations
from redolab.environments.schemas_destinations import DestinationCreate, SharedLinkCreate
from redolab.planning.plan import FAIL, PASS, build_plan
from redolab.planning.service import environment_plan, hop_capacity
from redolab.planning.topology import HopFact, TopologyFacts, plan_topology
from redolab.redo import service as redo_service
from tests.factories import make_environment, make_host
from tests.planning.test_plan import facts, history, run
from tests.planning.test_plan_service import stored_run

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
MIB = 1024 * 1024


def two_destinations(session):
    """The first destination (migrated shape) and a second one fed by the primary, a standby node on
    each, the archived-log fixture imported; returns (environment, primary, near standby, remote standby)."""
    environment = make_environment(session, name="two hops", platform="dataguard", transport_mode="ASYNC")
    remote = destinations.create_destination(
        session=session,
        environment=environment,
        destination_in=DestinationCreate(name="remote", kind="standby", transport="ASYNC", link_rtt_seconds="40 ms"),
    )
    primary = make_host(session, environment, role="primary", name="p1")
    near = make_host(session, environment, role="standby", name="near1")
    far = make_host(session, environment, role="standby", name="remote1", destination_id=remote.id)
    redo_service.import_file(
        session=session,
        environment=environment,
        path=FIXTURES / "gv_archived_log.csv",
        filename="gv_archived_log.csv",
        imported_by="alice",
    )
    return environment, primary, near, far, remote


def test_a_shared_uplink_fails_with_two_copies_although_each_hop_passes(session, browser_client, api_client):
    environment, primary, near, far, remote = two_destinations(session)
    required = environment_plan(session=session, environment=environment).requirement.summed_required_bytes_per_second
    stored_run(session, environment, primary, near, conns=4, bytes_per_second=1.5 * required)
    remote_run = stored_run(session, environment, primary, far, conns=4, bytes_per_second=1.2 * required)
    first = environment.first_destination
    session.expire_all()
    before = browser_client.get(f"/environments/{environment.id}/plan/report.json").json()
    assert before["answers"][0]["status"] != FAIL  # two hops, each carrying its copy: no shared link yet
    destinations.create_shared_link(
        session=session,
        environment=environment,
        link_in=SharedLinkCreate(
            name="uplink", destination_ids=[first.id, remote.id], bandwidth_bits_per_second=int(1.5 * required * 8)
        ),
    )
    session.expire_all()
    plan = environment_plan(session=session, environment=environment)
    hops = {v.name: v for v in plan.topology.hops}
    assert hops[first.name].status == PASS and hops["remote"].status == PASS
    assert hops["remote"].capacity_bytes_per_second == 1.2 * required  # the run over its own hop, not the other
    (uplink,) = plan.topology.shared_links
    assert uplink.required_bytes_per_second == 2 * required and uplink.status == FAIL
    assert "although each hop alone passes" in uplink.headline
    assert plan.topology.copies_from_primary == 2 and plan.topology.status == FAIL
    # the first answer is judged over every hop and shared link: the uplink fails it, by name (issue 55)
    transport = plan.card("transport")
    assert transport.status == FAIL and "shared link uplink: carries 2 copies" in transport.headline

    cards = {d.name: {c.key: c for c in d.cards} for d in plan.destination_cards}
    assert set(cards) == {first.name, "remote"}
    assert set(cards["remote"]) == {"transport", "instantiation", "lag"}  # ASYNC: no commit card
    own = cards[first.name]["transport"]  # the first destination's own card: its hop alone carries its copy
    assert own.status != FAIL and own is not transport and "uplink" not in own.headline
    assert cards[first.name]["lag"] is plan.card("lag")  # its other cards are the plan's
    remote_transport = cards["remote"]["transport"]
    assert remote_transport.status != FAIL and remote_transport.sources[0].url.endswith(
        f"/runs/{remote_run.id}"
    )  # judged on its own hop's run
    body = api_client.get(f"/api/v1/environments/{environment.id}/plan").json()
    assert body["topology"]["shared_links"][0]["status"] == FAIL
    assert body["cards"]["transport"]["status"] == FAIL and "uplink" in body["cards"]["transport"]["headline"]
    assert [d["name"] for d in body["topology"]["destinations"]] == [first.name, "remote"]
    assert {h["name"]: h["status"] for h in body["topology"]["hops"]} == {first.name: PASS, "remote": PASS}
    page = browser_client.get(f"/environments/{environment.id}")
    assert page.status_code == 200
    assert 'id="topology-diagram"' in page.text and 'id="shared-link-' in page.text
    assert f'id="destination-{remote.id}"' in page.text
    assert "primary → remote" in page.text and "MiB/s" in page.text and "40 ms" in page.text
    card = re.search(r'<article class="card (\w+)[^"]*" id="plan-transport"(.*?)</article>', page.text, re.S)
    assert card.group(1) == FAIL and "shared link uplink: carries 2 copies" in card.group(2)
    assert 'class="topology-shared-link" data-status="fail"' in page.text  # the diagram draws it with its verdict
    report = browser_client.get(f"/environments/{environment.id}/plan/report")  # what the PDF prints
    assert report.status_code == 200 and 'id="topology-diagram"' in report.text
    assert "although each hop alone passes" in report.text
    answer = re.search(r'<tr id="answer-transport" data-status="(\w+)">(.*?)</tr>', report.text, re.S)
    assert answer.group(1) == FAIL and "Shared link uplink: margin" in answer.group(2)  # page 1
    after = browser_client.get(f"/environments/{environment.id}/plan/report.json").json()
    assert after["answers"][0]["status"] == FAIL and after["answers"][0]["number"].startswith("Shared link uplink")
    assert after["document_id"] != before["document_id"]  # another answer, another id


def test_one_destination_shows_no_destinations_block(session, browser_client):
    environment = make_environment(session, name="one hop")
    plan = environment_plan(session=session, environment=environment)
    assert len(plan.topology.hops) == 1 and plan.topology.shared_links == ()
    assert 'id="destinations"' not in browser_client.get(f"/environments/{environment.id}").text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    single=st.lists(st.floats(1, 200), min_size=0, max_size=2),
    many=st.lists(st.floats(1, 200), min_size=0, max_size=2),
    nominal=st.one_of(st.none(), st.floats(1e6, 4e9)),
)
def test_no_hop_verdict_contradicts_its_destinations_transport_card(single, many, nominal):
    """For any runs over the hop: a hop that fails (nothing measured carries one copy) fails the
    destination's transport card, and a transport card that passes passes the hop."""
    hop_facts = facts(link_bits_per_second=nominal)
    runs = [run(i + 1, node=1 + i % 2, rate_mib=rate) for i, rate in enumerate(single)]
    runs += [run(10 + i, node=1, conns=4, rate_mib=rate) for i, rate in enumerate(many)]
    requirement = history()
    card = build_plan(facts=hop_facts, requirement=requirement, runs=runs).card("transport")
    best, rtt = hop_capacity(hop_facts, runs)
    hop = HopFact(
        id=1,
        name="standby",
        kind="standby",
        transport="ASYNC",
        feeds_from=None,
        nominal_bits_per_second=nominal,
        rtt_seconds=rtt,
        measured_bytes_per_second=best.bytes_per_second if best else None,
    )
    topology = plan_topology(
        TopologyFacts(
            platform="dataguard",
            protection_mode=None,
            hops=(hop,),
            required_bytes_per_second=requirement.summed_required_bytes_per_second,
        )
    )
    (verdict,) = topology.hops
    if verdict.status == FAIL:
        assert card.status == FAIL, (verdict.headline, card.headline)
    if card.status == PASS:
        assert verdict.status == PASS, (verdict.headline, card.headline)


def test_each_destination_is_instantiated_over_its_own_hop(session):
    """A cascaded standby is copied from the standby that feeds it, over that hop: its instantiation
    card reads the run over its own hop, not the primary's."""
    environment, primary, near, far, remote = two_destinations(session)
    environment.database_size_bytes = 10 * 1024**4
    cascade = destinations.create_destination(
        session=session,
        environment=environment,
        destination_in=DestinationCreate(name="cascade", kind="cascaded", transport="ASYNC", feeds_from=remote.id),
    )
    leaf = make_host(session, environment, role="standby", name="leaf1", destination_id=cascade.id)
    stored_run(session, environment, primary, near, conns=8, bytes_per_second=400 * MIB)
    stored_run(session, environment, primary, far, conns=8, bytes_per_second=100 * MIB)
    over_its_hop = stored_run(session, environment, far, leaf, conns=8, bytes_per_second=25 * MIB)
    session.expire_all()
    plan = environment_plan(session=session, environment=environment)
    copies = {d.name: next(c for c in d.cards if c.key == "instantiation") for d in plan.destination_cards}
    assert copies[environment.first_destination.name] is plan.card("instantiation")
    hours = {name: card.values["total_hours"] for name, card in copies.items()}
    size = 10 * 1024**4
    assert hours["remote"] == pytest.approx(size / (100 * MIB) / 3600, rel=0.35)  # overhead included
    assert hours["cascade"] == pytest.approx(4 * hours["remote"])  # a quarter of the rate: four times as long
    assert copies["cascade"].sources[0].url.endswith(f"/runs/{over_its_hop.id}")
