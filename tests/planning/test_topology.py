"""The plan of several standbys (planning.topology): hand-computed topologies, then properties that hold
for every topology, broken ones (dangling ids, cycles) included."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.core.units import format_duration
from redolab.hadr.calculator import DEFAULT_FLUSH_BYTES
from redolab.planning.card import FAIL, INFO, MISSING, PASS
from redolab.planning.facts import MEASURED, NOMINAL
from redolab.planning.topology import (
    ASYNC,
    AUXILIARY,
    CASCADED,
    COMMIT_MODEL,
    DATAGUARD,
    FAR_SYNC,
    FASTSYNC,
    FASTSYNC_IN_MAX_PROTECTION,
    HADR,
    MAX_AVAILABILITY,
    MAX_PERFORMANCE,
    MAX_PROTECTION,
    NEARSYNC,
    PRINCIPAL,
    STANDBY,
    STATUS_ORDER,
    SUPERASYNC,
    SYNC,
    HopFact,
    SharedLinkFact,
    TopologyFacts,
    plan_topology,
)
from redolab.planning.transport import commit_impact
from redolab.planning.writer import NO_HISTORY

MIB = 1024 * 1024
REQUIRED = 48 * MIB


def facts(*hops, links=(), platform=DATAGUARD, mode=MAX_AVAILABILITY, required=REQUIRED, **more) -> TopologyFacts:
    return TopologyFacts(platform, mode, required, tuple(hops), tuple(links), **more)


def problems_of(*hops, **kwargs) -> tuple[str, ...]:
    return plan_topology(facts(*hops, **kwargs)).problems


# -- examples --------------------------------------------------------------------------------------
def test_maa_shape_far_sync_close_to_the_primary_and_a_remote_standby_fed_by_it():
    far_sync = HopFact(1, "fs1", FAR_SYNC, SYNC, None, nominal_bits_per_second=10_000_000_000, rtt_seconds=0.002)
    remote = HopFact(
        2, "dr1", STANDBY, ASYNC, 1, rtt_seconds=0.040, measured_bytes_per_second=100 * MIB, measured_label="run #12"
    )
    plan = plan_topology(facts(far_sync, remote, commit_write_bytes=16384, standby_write_seconds=0.0005))

    assert plan.problems == ()
    assert plan.copies_from_primary == 1
    near, far = plan.hops
    assert (near.source, near.basis, near.capacity_bytes_per_second) == ("primary", NOMINAL, 1.25e9)
    assert (far.source, far.basis, far.capacity_bytes_per_second) == ("fs1", MEASURED, 100 * MIB)
    assert near.status == far.status == PASS
    assert far.headline == (
        "fs1 → dr1: needs 48 MiB/s (402.7 Mbit/s), measured 100 MiB/s (838.9 Mbit/s) (run #12): "
        "pass, margin 52 MiB/s (+108.3 %)"
    )
    assert plan.protection.status == PASS
    assert plan.protection.headline == "Maximum Availability holds: the primary sends SYNC to fs1 (far sync)"
    assert plan.status == PASS
    assert plan.headline.startswith("Every hop carries its copy (2 destinations, 1 copy from the primary)")

    # The far sync advice is the SYNC commit card's model: added = write + send + RTT.
    (advice,) = plan.far_sync
    via = commit_impact(write_bytes=16384, write_seconds=0.0005, throughput_bytes_per_second=1.25e9, rtt_seconds=0.002)
    straight = commit_impact(
        write_bytes=16384, write_seconds=0.0005, throughput_bytes_per_second=100 * MIB, rtt_seconds=0.040
    )
    assert advice.near.added_seconds == pytest.approx(via.added_seconds("SYNC"))
    assert advice.near.added_seconds == pytest.approx(0.0005 + 16384 / 1.25e9 + 0.002)
    assert advice.remote[0].added_seconds == pytest.approx(straight.added_seconds("SYNC"))
    saved = straight.added_seconds("SYNC") - via.added_seconds("SYNC")
    assert advice.saved_seconds == pytest.approx(saved)
    assert advice.sentence == (
        f"With SYNC to far sync fs1 (2 ms away), each commit waits about {format_duration(via.added_seconds('SYNC'))}; "
        f"with SYNC straight to dr1 (40 ms), it would wait about {format_duration(straight.added_seconds('SYNC'))}: "
        f"the far sync saves about {format_duration(saved)} per commit"
    )
    assert advice.working == (  # every input known: only the model and the remote RTT's stand-in
        COMMIT_MODEL,
        "each remote hop's RTT (from the far sync) stands in for the primary's round trip to it",
    )


def test_far_sync_advice_says_which_rtt_is_missing_and_what_stands_in():
    far_sync = HopFact(1, "fs1", FAR_SYNC, FASTSYNC, None)
    remote = HopFact(2, "dr1", STANDBY, ASYNC, 1, rtt_seconds=0.030)
    (advice,) = plan_topology(facts(far_sync, remote)).far_sync
    assert advice.near.impact is None and advice.saved_seconds is None
    assert advice.sentence == (
        "With FASTSYNC to far sync fs1, the commit cost is unknown (no RTT); with FASTSYNC straight to dr1 (30 ms), "
        "it would wait about 30 ms"
    )
    # FASTSYNC is modelled as NEARSYNC; no write size: the 16-page flush stands in, as on the commit card
    (straight,) = advice.remote
    assert straight.impact.write_bytes == DEFAULT_FLUSH_BYTES and not straight.send_known
    assert straight.added_seconds == pytest.approx(straight.impact.added_seconds(NEARSYNC))
    assert straight.added_seconds == pytest.approx(0.030)  # no capacity, no write time: the round trip alone
    assert any("16-page flush" in line for line in advice.working)
    assert any("send time is left out" in line for line in advice.working)
    assert any("lower bounds" in line for line in advice.working)


def test_remote_sync_without_a_far_sync_gets_the_cost_of_its_round_trip():
    remote = HopFact(1, "dr1", STANDBY, SYNC, None, rtt_seconds=0.040, measured_bytes_per_second=100 * MIB)
    near = HopFact(2, "dr2", STANDBY, SYNC, None, rtt_seconds=0.001, measured_bytes_per_second=100 * MIB)
    plan = plan_topology(facts(remote, near, commit_write_bytes=16384, standby_write_seconds=0.0005))
    (advice,) = plan.far_sync  # only the remote one: 1 ms is no reason for a far sync
    impact = commit_impact(
        write_bytes=16384, write_seconds=0.0005, throughput_bytes_per_second=100 * MIB, rtt_seconds=0.040
    )
    assert advice.far_sync is None and advice.near is None
    assert advice.remote[0].added_seconds == pytest.approx(impact.added_seconds("SYNC"))
    added = format_duration(impact.added_seconds("SYNC"))
    assert advice.sentence.startswith(f"SYNC straight to dr1 (40 ms away) makes each commit wait about {added}")
    assert f"the far sync's round trip plus about {format_duration(0.0005 + 16384 / (100 * MIB))}" in advice.sentence


def test_two_direct_destinations_over_one_uplink_each_hop_passes_the_uplink_fails():
    dr1 = HopFact(1, "dr1", STANDBY, SYNC, None, measured_bytes_per_second=60 * MIB)
    dr2 = HopFact(2, "dr2", STANDBY, ASYNC, None, measured_bytes_per_second=60 * MIB)
    uplink = SharedLinkFact(7, "uplink", (1, 2), measured_bytes_per_second=80 * MIB, measured_label="run #14")
    plan = plan_topology(facts(dr1, dr2, links=(uplink,)))

    assert [h.status for h in plan.hops] == [PASS, PASS]
    assert plan.copies_from_primary == 2
    (link,) = plan.shared_links
    assert link.hop_names == ("dr1", "dr2")
    assert link.required_bytes_per_second == 2 * REQUIRED
    assert (link.capacity_bytes_per_second, link.basis, link.status) == (80 * MIB, MEASURED, FAIL)
    assert link.headline == (
        "carries 2 copies: 2 x 48 MiB/s = 96 MiB/s needed, 80 MiB/s measured (671.1 Mbit/s): "
        "FAIL although each hop alone passes"
    )
    assert plan.status == FAIL
    assert plan.headline == f"Fails: shared link uplink {link.headline}"


def test_a_nominal_shared_link_that_carries_its_copies():
    dr1 = HopFact(1, "dr1", STANDBY, SYNC, None, nominal_bits_per_second=1_000_000_000)
    dr2 = HopFact(2, "dr2", STANDBY, ASYNC, None, nominal_bits_per_second=1_000_000_000)
    uplink = SharedLinkFact(7, "uplink", (1, 2, 2, 99), nominal_bits_per_second=10_000_000_000)
    plan = plan_topology(facts(dr1, dr2, links=(uplink,)))
    (link,) = plan.shared_links
    assert link.hop_names == ("dr1", "dr2")  # each hop once; the unknown id is a problem
    assert (link.capacity_bytes_per_second, link.basis, link.status) == (1.25e9, NOMINAL, PASS)
    assert "2 x 48 MiB/s = 96 MiB/s needed, 1,192.09 MiB/s nominal (10,000 Mbit/s): pass" in link.headline
    assert plan.problems == ("shared link uplink lists destination #99, not one of the environment's",)


def test_cascaded_standby_fed_by_a_standby():
    dr1 = HopFact(1, "dr1", STANDBY, SYNC, None, nominal_bits_per_second=10**9, rtt_seconds=0.001)
    dr2 = HopFact(2, "dr2", CASCADED, ASYNC, 1, nominal_bits_per_second=10**8)
    plan = plan_topology(facts(dr1, dr2))
    assert plan.problems == ()
    assert plan.copies_from_primary == 1
    assert [h.path for h in plan.hops] == ["primary → dr1", "dr1 → dr2"]
    # 100 Mbit/s is 11.92 MiB/s: short of one copy
    assert plan.hops[1].status == FAIL
    assert plan.hops[1].headline.startswith("dr1 → dr2: needs 48 MiB/s (402.7 Mbit/s), nominal 11.92 MiB/s")
    assert "FAIL, short by 36.08 MiB/s" in plan.hops[1].headline
    assert plan.headline == f"Fails: {plan.hops[1].headline}"


def test_no_history_and_no_capacity_are_missing_not_failed():
    plan = plan_topology(facts(HopFact(1, "dr1", STANDBY, SYNC, None), required=None))
    (hop,) = plan.hops
    assert hop.status == MISSING and hop.required_bytes_per_second is None
    assert hop.headline == f"primary → dr1: {NO_HISTORY}"
    assert plan.status == MISSING and plan.headline == f"Missing: {NO_HISTORY}"
    plan = plan_topology(facts(HopFact(1, "dr1", STANDBY, SYNC, None)))
    assert plan.hops[0].headline == (
        "primary → dr1: needs 48 MiB/s (402.7 Mbit/s), no capacity: set its nominal bandwidth or run an "
        "experiment over it"
    )
    assert plan.hops[0].missing == (
        "no capacity for the hop primary → dr1: set its nominal bandwidth or run an experiment over it",
    )
    assert plan.headline == f"Missing: {plan.hops[0].missing[0]}"
    empty = plan_topology(facts(mode=MAX_PERFORMANCE))
    assert empty.status == MISSING and empty.copies_from_primary == 0
    assert empty.headline == "Missing: no destination yet: add the standby the primary ships redo to"


def test_hadr_principal_and_two_auxiliaries():
    hops = (
        HopFact(1, "principal", STANDBY, NEARSYNC, None, nominal_bits_per_second=10**10, hadr_role=PRINCIPAL),
        HopFact(2, "aux1", STANDBY, SUPERASYNC, None, nominal_bits_per_second=10**10, hadr_role=AUXILIARY),
        HopFact(3, "aux2", STANDBY, SUPERASYNC, None, nominal_bits_per_second=10**10, hadr_role=AUXILIARY),
    )
    plan = plan_topology(facts(*hops, platform=HADR, mode=None))
    assert plan.problems == ()
    assert plan.copies_from_primary == 3
    assert plan.protection.status == PASS
    assert plan.protection.headline == (
        "HADR_SYNCMODE NEARSYNC to the principal standby principal; aux1, aux2 receive SUPERASYNC (auxiliaries)"
    )
    assert plan.far_sync == ()
    assert plan.status == PASS


def test_hadr_auxiliary_not_superasync_fails_the_protection_check():
    hops = (
        HopFact(1, "p", STANDBY, SYNC, None, hadr_role=PRINCIPAL),
        HopFact(2, "a", STANDBY, ASYNC, None, hadr_role=AUXILIARY),
    )
    plan = plan_topology(facts(*hops, platform=HADR, mode=None))
    assert plan.protection.status == FAIL
    assert "a ASYNC is declared" in plan.protection.headline
    assert plan.problems == (
        "auxiliary standby a is declared ASYNC: Db2 ships to auxiliaries in SUPERASYNC only; declare it SUPERASYNC",
    )


@pytest.mark.parametrize(
    ("mode", "transports", "status"),
    [
        (MAX_AVAILABILITY, (ASYNC,), FAIL),
        (MAX_AVAILABILITY, (FASTSYNC,), PASS),
        (MAX_PROTECTION, (FASTSYNC,), FAIL),
        (MAX_PROTECTION, (SYNC, SYNC), PASS),
        (MAX_PERFORMANCE, (ASYNC,), PASS),
        (None, (ASYNC,), INFO),
    ],
)
def test_protection_mode_against_the_transports_the_primary_sends(mode, transports, status):
    hops = [HopFact(i, f"dr{i}", STANDBY, t, None) for i, t in enumerate(transports, 1)]
    assert plan_topology(facts(*hops, mode=mode)).protection.status == status


def test_protection_fails_with_sync_only_behind_a_cascade_and_names_fastsync_under_max_protection():
    hops = (HopFact(1, "dr1", STANDBY, ASYNC, None), HopFact(2, "dr2", CASCADED, SYNC, 1))
    check = plan_topology(facts(*hops)).protection
    assert check.status == FAIL
    assert check.headline == (
        "Maximum Availability needs a SYNC or FASTSYNC destination fed by the primary (a far sync counts); "
        "the primary sends ASYNC only"
    )
    check = plan_topology(facts(HopFact(1, "dr1", STANDBY, FASTSYNC, None), mode=MAX_PROTECTION)).protection
    assert check.headline.endswith(f"(a far sync counts); dr1: {FASTSYNC_IN_MAX_PROTECTION}")
    one = plan_topology(facts(HopFact(1, "dr1", STANDBY, SYNC, None), mode=MAX_PROTECTION)).protection
    assert one.status == PASS and "keep two SYNC destinations: with one, the primary stalls" in one.headline


def test_every_topology_problem_is_named():
    fs = HopFact(1, "fs1", FAR_SYNC, SYNC, None)
    assert problems_of(fs) == (
        "far sync fs1 feeds no destination: a far sync only forwards: add the remote standby it feeds",
    )
    assert problems_of(
        HopFact(1, "dr1", STANDBY, ASYNC, None),
        HopFact(2, "fs1", FAR_SYNC, ASYNC, 1),
        HopFact(3, "dr3", STANDBY, ASYNC, 2),
    ) == ("far sync fs1 is fed by dr1: a far sync receives redo from the primary only",)
    assert problems_of(HopFact(1, "fs1", FAR_SYNC, SYNC, None), HopFact(2, "dr2", CASCADED, ASYNC, 1)) == (
        "dr2 is a cascaded standby fed by fs1, a far sync: a far sync feeds standbys; a standby or a cascaded standby "
        "feeds cascaded standbys",
    )
    assert problems_of(HopFact(1, "dr1", CASCADED, ASYNC, None)) == (
        "dr1 is a cascaded standby without a source: set the destination that forwards redo to it",
    )
    dangling = plan_topology(facts(HopFact(1, "dr1", CASCADED, ASYNC, 9), mode=None))
    assert dangling.problems == ("dr1 is fed from destination #9, not one of the environment's",)
    assert dangling.hops[0].path == "unknown destination #9 → dr1"
    assert problems_of(HopFact(1, "dr1", STANDBY, ASYNC, None), HopFact(2, "dr2", CASCADED, SYNC, 1)) == (
        "dr2 is fed SYNC by dr1: a standby or a far sync forwards redo ASYNC only; only the primary sends SYNC or "
        "FASTSYNC",
    )
    cycle = (HopFact(1, "a", CASCADED, ASYNC, 2), HopFact(2, "b", CASCADED, ASYNC, 1))
    assert problems_of(*cycle, mode=None) == (
        "a → b → a: fed from each other in a cycle; no redo from the primary reaches them",
    )
    assert problems_of(HopFact(1, "a", CASCADED, ASYNC, 1), mode=None) == (
        "a → a: fed from itself; no redo from the primary reaches it",
    )
    hadr = dict(platform=HADR, mode=None)
    assert problems_of(
        HopFact(1, "p", STANDBY, SYNC, None, hadr_role=PRINCIPAL),
        HopFact(2, "fs", FAR_SYNC, SUPERASYNC, None, hadr_role=AUXILIARY),
        HopFact(3, "c", CASCADED, SUPERASYNC, 1, hadr_role=AUXILIARY),
        HopFact(4, "x", STANDBY, SUPERASYNC, None, hadr_role=AUXILIARY),
        **hadr,
    ) == (
        "Db2 HADR has no far sync: fs must be a principal or auxiliary standby",
        "Db2 HADR does not cascade: c must receive its logs from the primary",
        "Db2 HADR has at most 2 auxiliary standbys, not 3: fs, c, x",
    )
    sync_and_fastsync = (HopFact(1, "dr1", STANDBY, SYNC, None), HopFact(2, "dr2", STANDBY, FASTSYNC, None))
    assert problems_of(*sync_and_fastsync, mode=MAX_PROTECTION) == (f"dr2: {FASTSYNC_IN_MAX_PROTECTION}",)


def test_a_problem_fails_the_topology_although_every_hop_passes():
    plan = plan_topology(facts(HopFact(1, "fs1", FAR_SYNC, SYNC, None, nominal_bits_per_second=10**10)))
    assert plan.hops[0].status == PASS and plan.protection.status == PASS
    assert plan.status == FAIL
    assert plan.headline == (
        "Fails: 1 topology problem: far sync fs1 feeds no destination: a far sync only forwards: add the remote "
        "standby it feeds"
    )


# -- properties ------------------------------------------------------------------------------------
ODD = (float("nan"), float("inf"), -1.0, 0.0)
rates = st.one_of(st.none(), st.floats(1, 1e10), st.sampled_from(ODD))
times = st.one_of(st.none(), st.floats(0, 0.5), st.sampled_from(ODD))
hop_facts = st.builds(
    HopFact,
    id=st.integers(1, 6),
    name=st.sampled_from(["", "dr1", "dr2", "fs", "x y"]),
    kind=st.sampled_from([STANDBY, FAR_SYNC, CASCADED, "bogus"]),
    transport=st.sampled_from([SYNC, FASTSYNC, ASYNC, NEARSYNC, SUPERASYNC, "BOGUS"]),
    feeds_from=st.one_of(st.none(), st.integers(0, 8)),  # 0, 7 and 8 never exist: dangling ids
    nominal_bits_per_second=st.one_of(st.none(), st.integers(-10, 10**11)),
    rtt_seconds=times,
    measured_bytes_per_second=rates,
    measured_label=st.sampled_from(["", "run #3, 4 connections"]),
    hadr_role=st.sampled_from([None, PRINCIPAL, AUXILIARY, "bogus"]),
)
link_facts = st.builds(
    SharedLinkFact,
    id=st.integers(1, 3),
    name=st.sampled_from(["", "uplink", "wan"]),
    hops=st.lists(st.integers(0, 8), max_size=5).map(tuple),
    nominal_bits_per_second=st.one_of(st.none(), st.integers(0, 10**11)),
    measured_bytes_per_second=rates,
    measured_label=st.sampled_from(["", "run #9"]),
)
topologies = st.builds(
    TopologyFacts,
    platform=st.sampled_from([DATAGUARD, DATAGUARD, HADR, "bogus"]),
    protection_mode=st.sampled_from([None, MAX_PERFORMANCE, MAX_AVAILABILITY, MAX_PROTECTION, "bogus"]),
    required_bytes_per_second=st.one_of(st.none(), st.floats(1, 1e10), st.sampled_from(ODD)),
    hops=st.lists(hop_facts, max_size=7).map(tuple),
    shared_links=st.lists(link_facts, max_size=3).map(tuple),
    commit_write_bytes=st.one_of(st.none(), st.floats(1, 1e7), st.sampled_from(ODD)),
    standby_write_seconds=st.one_of(st.none(), st.floats(0, 0.1), st.sampled_from(ODD)),
)


@settings(max_examples=200, deadline=None)
@given(topologies)
def test_any_topology_is_planned_without_raising(given_facts):
    plan = plan_topology(given_facts)
    assert plan.status in STATUS_ORDER
    assert plan.headline
    assert len(plan.hops) == len(given_facts.hops) and len(plan.shared_links) == len(given_facts.shared_links)
    assert plan.copies_from_primary == sum(1 for h in given_facts.hops if h.feeds_from is None)
    assert all(v.headline for v in (*plan.hops, *plan.shared_links)) and plan.protection.headline
    assert all(advice.sentence for advice in plan.far_sync)
    assert len(set(plan.problems)) == len(plan.problems)


@settings(max_examples=200, deadline=None)
@given(topologies)
def test_a_shared_link_needs_the_sum_of_its_hops_requirements(given_facts):
    plan = plan_topology(given_facts)
    known = {h.id for h in given_facts.hops}
    for fact, link in zip(given_facts.shared_links, plan.shared_links, strict=True):
        assert [h.hop.id for h in link.hops] == list(dict.fromkeys(i for i in fact.hops if i in known))
        requirements = [h.required_bytes_per_second for h in link.hops]
        if link.hops and None not in requirements:
            assert link.required_bytes_per_second == sum(requirements)
        else:
            assert link.required_bytes_per_second is None


def _fails(required, capacity) -> bool:
    return required is not None and capacity is not None and capacity < required


@settings(max_examples=200, deadline=None)
@given(topologies)
def test_no_verdict_contradicts_another(given_facts):
    plan = plan_topology(given_facts)
    for verdict in (*plan.hops, *plan.shared_links):
        required, capacity = verdict.required_bytes_per_second, verdict.capacity_bytes_per_second
        assert (verdict.status == FAIL) == _fails(required, capacity)
        assert (verdict.status == MISSING) == (required is None or capacity is None)
        assert verdict.status in (PASS, FAIL, MISSING)
        for number in (required, capacity):
            assert number is None or (math.isfinite(number) and number > 0)
        assert (verdict.basis is None) == (capacity is None)
        assert ("FAIL" in verdict.headline) == (verdict.status == FAIL)  # the headline says what the badge says
    judged = [v.status for v in (*plan.hops, *plan.shared_links)] + [plan.protection.status]
    if FAIL in judged or plan.problems:
        assert plan.status == FAIL
        assert plan.headline.startswith("Fails: ")
    else:
        assert plan.status != FAIL
    direct = [h for h in given_facts.hops if h.feeds_from is None]
    if given_facts.platform == DATAGUARD:
        needs = {MAX_AVAILABILITY: (SYNC, FASTSYNC), MAX_PROTECTION: (SYNC,)}.get(given_facts.protection_mode)
        unmet = needs is not None and not any(h.transport in needs for h in direct)
        assert (plan.protection.status == FAIL) == unmet
    elif given_facts.platform == HADR:
        wrong = any(h.hadr_role == AUXILIARY and h.transport != SUPERASYNC for h in given_facts.hops)
        assert (plan.protection.status == FAIL) == wrong
    else:
        assert plan.protection.status == INFO
