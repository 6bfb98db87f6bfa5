"""Random plans (hypothesis): no two cards contradict, and every badge matches its headline.

The rules, for every plan:
- a thread whose stream is short of its requirement on the transport card is never "never behind" on
  the lag replay, and a thread the transport card passes is never behind or short there;
- all threads together never need less than the largest single thread;
- a card's badge and its headline say the same thing (FAIL: short, over, behind or queueing; PASS:
  none of those; MISSING: "Missing: ..."; PARTIAL: "Partly measured: ...");
- every card reads one capacity per stream and says where it comes from: a loopback run chosen as
  evidence is marked on every card that uses it and never carries more than the nominal link; the
  risks never call a used loopback run "left out";
- when only the upper bound (every thread peaking at once, with headroom) is above what the link
  carries, the transport verdict is not a plain PASS and says it is undecided;
- a missing item never repeats the headline;
- with several destinations and shared links, the first answer (the transport card) is the worst of its
  own link, every hop, every shared link and every destination's own streams: a part that fails fails it
  and is named in its headline, it passes only when every part passes, the answer, the JSON and the
  Destinations section agree, and a changed answer changes the report's document id.

The generators cover every choice a user makes: loopback runs chosen or left out (and named where they
would fill a gap), timed and untimed imports mixed, a link just below or just above the bound, and up to
three destinations (fed by the primary or cascaded, links absent, just below or above one copy, or ample,
runs over each) behind up to two shared links (just below or above the copies crossing them, or unset).
"""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from redolab.planning.answer import answers
from redolab.planning.card import show_time
from redolab.planning.copy_time import CopySettings, Datafile
from redolab.planning.plan import (
    FAIL,
    INFO,
    MISSING,
    PARTIAL,
    PASS,
    WARN,
    DestinationCards,
    Excluded,
    Facts,
    build_plan,
    with_topology,
)
from redolab.planning.report import document_id
from redolab.planning.service import hop_capacity
from redolab.planning.topology import STATUS_ORDER, HopFact, SharedLinkFact, TopologyFacts, plan_topology
from redolab.redo.requirement import ImportSeries, requirement
from redolab.redo.schemas import RedoInterval
from redolab.runs.measured import MeasuredRun
from redolab.runs.parsers.redoprobe import RunMetrics

MIB = 1024 * 1024
T0 = datetime(2024, 3, 1, tzinfo=UTC)
BAD_WORDS = ("short", "over the", "behind", "at risk", "queue")
_FILES = (Datafile(1, "BIG", 4 * 1024**4, True), *(Datafile(2 + k, "DATA", 60 * 1024**3, False) for k in range(100)))
# the instantiation copy: not set (the seed's estimate), set without a datafile list, set with one and a
# small archive destination
COPIES = (None, CopySettings(4), CopySettings(8, 2, 64 * 1024**3, 2**30, _FILES))


@st.composite
def histories(draw):
    """One to three threads over up to three imports: per-log rows with or without times, hourly
    volumes, SYSMETRIC averages with maxima, in periods that may overlap or lie years apart."""
    imports = []
    for number in range(1, draw(st.integers(1, 3)) + 1):
        kind = draw(st.sampled_from(["log", "log-untimed", "period", "rate"]))
        offset = draw(st.sampled_from([0, 3600, 86400 * 700]))  # same day, an hour later, two years later
        rows = []
        for thread in draw(st.lists(st.integers(1, 3), min_size=1, max_size=3, unique=True)):
            clock = offset + draw(st.integers(0, 1800))
            for sequence in range(draw(st.integers(1, 6))):
                seconds = draw(st.sampled_from([60, 300, 900, 3600])) if kind != "period" else 3600
                mib = draw(st.floats(0.5, 4000, allow_nan=False))
                start = T0 + timedelta(seconds=clock)
                timed = kind != "log-untimed"
                rows.append(
                    RedoInterval(
                        line=sequence,
                        thread=thread,
                        start=start if timed else None,
                        end=start + timedelta(seconds=seconds) if timed else None,
                        seconds=None if timed else seconds,
                        bytes=mib * MIB,
                        kind=kind.removesuffix("-untimed"),
                        sequence=sequence + 1 if kind.startswith("log") else None,
                        peak_bytes_per_second=(mib * MIB / seconds) * draw(st.floats(1, 5)) if kind == "rate" else None,
                    )
                )
                clock += seconds + draw(st.sampled_from([0, 0, 30, 7200]))
        imports.append(ImportSeries(number, f"import{number}.csv", rows))
    return imports


@st.composite
def run_sets(draw):
    runs = []
    for number in range(1, draw(st.integers(0, 5)) + 1):
        node = draw(st.integers(1, 3))
        runs.append(
            MeasuredRun(
                id=number,
                label="",
                client_node=node,
                server_node=node,
                mode=draw(st.sampled_from(["async", "async", "sync"])),
                conns=draw(st.sampled_from([1, 1, 4])),
                message_bytes=1 * MIB,
                bytes_per_second=draw(st.floats(0.1, 500)) * MIB,
                sync_write=draw(st.booleans()),
                loopback=draw(st.booleans()),
                mtu_bytes=None,
                metrics=RunMetrics(
                    rtt_min_seconds=0.01,
                    ack_count=100,
                    ack_avg_seconds=0.012,
                    server_write_seconds=draw(st.sampled_from([None, 0.2])),
                ),
                created_at=T0 + timedelta(days=number),
            )
        )
    return runs


@st.composite
def facts(draw):
    return Facts(
        platform="dataguard",
        transport_mode=draw(st.sampled_from(["ASYNC", "SYNC", "FASTSYNC"])),
        database_bytes=draw(st.sampled_from([None, 10 * 1024**4])),
        primary_nodes=3,
        standby_nodes=3,
        instantiation_goal_seconds=draw(st.sampled_from([None, 3600.0, 48 * 3600.0])),
        headroom_percent=draw(st.sampled_from([0.0, 30.0, 100.0])),
        apply_overhead_percent=30.0,
        link_bits_per_second=draw(st.sampled_from([None, 1e8, 1e10, "below bound", "above bound"])),
        link_rtt_seconds=draw(st.sampled_from([None, 0.025])),
        copy=draw(st.sampled_from(COPIES)),
    )


def check_badge(card) -> None:
    text = card.headline.lower().replace("never behind", "keeps up")
    if card.status == MISSING:
        assert card.headline.startswith("Missing: "), card
    elif card.status == PARTIAL:
        assert "partly measured: " in text, card
    elif card.status == FAIL:
        assert any(word in text for word in BAD_WORDS), card
    elif card.status == WARN:
        assert "at risk" in text or "short of the requirement" in text, card
    elif card.status in (PASS, INFO):
        assert not any(word in text for word in BAD_WORDS), card
        assert "missing" not in text and "partly" not in text, card
    if card.nominal and card.status != MISSING:
        assert "nominal" in card.badge and card.headline.startswith("Nominal"), card
    if card.loopback and card.status != MISSING:
        assert "loopback" in card.badge and "loopback" in card.headline.split(":")[0].lower(), card
    assert card.headline.removeprefix("Missing: ") not in card.more_missing, card


def link_for(environment, req):
    """The drawn link, or one just below / above the upper bound with headroom (or the summed need)."""
    link = environment.link_bits_per_second
    if not isinstance(link, str):
        return environment
    bound = req.upper_bound_required_bytes_per_second if req else None
    need = bound or (req.summed_required_bytes_per_second if req else 100e6 / 8)
    return replace(environment, link_bits_per_second=need * 8 * (0.999 if link == "below bound" else 1.001))


def check_capacities(plan, runs, link) -> None:
    """One capacity per stream, marked where it comes from; loopback never above the link."""
    used_loopback = any(r.loopback for r in runs)
    for card in plan.cards:
        values = card.values
        capacities = [t.get("capacity") for t in values.get("threads", [])]
        capacities += [values.get("summed", {}).get("capacity"), values.get("window_capacity")]
        capacities.append(values.get("send_capacity"))
        for capacity in filter(None, capacities):
            if capacity["origin"] == "loopback":
                assert card.loopback, card
                if link:
                    assert capacity["bytes_per_second"] <= link / 8 * (1 + 1e-12), card
            if capacity["origin"] == "nominal":
                assert card.nominal, card
    assert not any("left out of the verdicts" in r for r in plan.risks)
    if used_loopback:
        event("loopback run chosen")
        assert any("Loopback run" in r for r in plan.risks)


def check_bound(plan) -> None:
    transport = plan.card("transport")
    keep_up = transport.result
    if keep_up is None or keep_up.bound is None:
        return
    assert keep_up.bound.required_bytes_per_second == plan.requirement.upper_bound_required_bytes_per_second
    event(f"upper bound {'undecided' if keep_up.undecided else 'decided'}")
    if keep_up.undecided:
        assert transport.status not in (PASS, INFO) and "undecided" in transport.headline, transport
        assert any("whether the threads peak together" in m for m in transport.missing)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), run_sets(), facts(), st.booleans())
def test_no_two_cards_contradict(imports, runs, environment, loopback_chosen):
    req = requirement(imports, headroom_ratio=environment.headroom_percent / 100)
    timed = {any(r.start is not None for r in i.intervals) for i in imports}
    if timed == {True, False}:
        event("timed and untimed imports mixed")
    environment = link_for(environment, req)
    used = [r for r in runs if loopback_chosen or not r.loopback]
    left = [Excluded(r, "not the link: both ends on this machine (loopback)") for r in runs if r not in used]
    plan = build_plan(facts=environment, requirement=req, runs=used, excluded=left)
    for card in plan.cards:
        check_badge(card)
    check_capacities(plan, used, environment.link_bits_per_second)
    check_bound(plan)
    if req is None:
        return
    largest = max(t.required_bytes_per_second for t in req.threads.values())
    assert req.summed_required_bytes_per_second >= largest * (1 - 1e-12)
    transport, lag = plan.card("transport"), plan.card("lag")
    verdicts = {t["thread"]: t for t in transport.values.get("threads", [])}
    for replayed in lag.values.get("threads", []):
        verdict = verdicts[replayed["thread"]]  # the lag card judges no thread the transport card does not
        assert verdict["required_bytes_per_second"] == replayed["required_bytes_per_second"]
        assert verdict["available_bytes_per_second"] == replayed["drain_bytes_per_second"]
        if verdict["passed"]:
            assert replayed["state"] == "keeps up" and replayed["max_backlog_bytes"] == 0
        else:
            assert replayed["state"] in ("behind", "short")
    if lag.status == PASS:
        assert all(verdicts[t["thread"]]["passed"] for t in lag.values["threads"])
    if transport.status == PASS:
        assert lag.status in (PASS, PARTIAL, MISSING)
        assert not any("fall behind" in r for r in plan.risks)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(histories(), facts(), st.sampled_from(["below bound", "above bound"]))
def test_the_upper_bound_alone_above_the_link_is_never_a_plain_pass(imports, environment, side):
    """Timed and untimed threads on the nominal link, just below or just above the bound with headroom."""
    req = requirement(imports, headroom_ratio=environment.headroom_percent / 100)
    bound = req.upper_bound_required_bytes_per_second if req else None
    assume(bound is not None and bound > req.summed_required_bytes_per_second * 1.01)
    environment = link_for(replace(environment, link_bits_per_second=side), req)
    plan = build_plan(facts=environment, requirement=req, runs=[])
    transport = plan.card("transport")
    check_badge(transport)
    check_bound(plan)
    summed = transport.result.summed.verdict
    assert transport.result.undecided == (side == "below bound" and summed.passed)
    if side == "above bound":
        assert transport.result.bound.passed and "undecided" not in transport.headline


KEPT = ("transport", "instantiation", "lag")  # an ASYNC destination's own cards
LINK_SIDES = {"below": 0.999, "above": 1.001, "ample": 10.0}  # of the copies a hop or a shared link carries


def own_cards(destination: int, name: str, plan) -> DestinationCards:
    return DestinationCards(destination, name, "ASYNC", tuple(c for c in plan.cards if c.key in KEPT))


def hop_of(ident, name, feeds_from, hop_facts, runs) -> HopFact:
    """A destination's hop as planning.service judges it: its nominal link, its best ASYNC run."""
    best, rtt = hop_capacity(hop_facts, runs)
    return HopFact(
        ident, name, "cascaded" if feeds_from else "standby", "ASYNC", feeds_from,
        nominal_bits_per_second=hop_facts.link_bits_per_second, rtt_seconds=rtt,
        measured_bytes_per_second=best.bytes_per_second if best else None,
    )  # fmt: skip


def draw_topology(data, req, environment, used):
    """The first destination mirrors the environment's link and runs; up to two more and two shared links."""
    need = req.summed_required_bytes_per_second if req else 100e6 / 8
    plan = build_plan(facts=environment, requirement=req, runs=used)
    hops, own = [hop_of(1, "standby", None, environment, used)], [own_cards(1, "standby", plan)]
    for ident in range(2, 2 + data.draw(st.integers(0, 2), label="more destinations")):
        side = data.draw(st.sampled_from([None, *LINK_SIDES]), label=f"hop {ident} link")
        hop_facts = replace(environment, link_bits_per_second=side and need * 8 * LINK_SIDES[side])
        runs = [r for r in data.draw(run_sets(), label=f"runs over hop {ident}") if not r.loopback]
        feeds_from = data.draw(st.sampled_from([None, *range(1, ident)]), label=f"hop {ident} fed from")
        hops.append(hop_of(ident, f"dr{ident}", feeds_from, hop_facts, runs))
        own.append(own_cards(ident, f"dr{ident}", build_plan(facts=hop_facts, requirement=req, runs=runs)))
    links = []
    for ident in range(1, 1 + data.draw(st.integers(0, 2), label="shared links")):
        crossing = data.draw(st.lists(st.sampled_from([h.id for h in hops]), min_size=1, unique=True))
        side = data.draw(st.sampled_from([None, *LINK_SIDES]), label=f"shared link {ident}")
        nominal = side and need * len(crossing) * 8 * LINK_SIDES[side]
        links.append(SharedLinkFact(ident, f"wan{ident}", tuple(crossing), nominal_bits_per_second=nominal))
    required = req.summed_required_bytes_per_second if req else None
    topology = plan_topology(TopologyFacts("dataguard", None, required, tuple(hops), tuple(links)))
    return plan, topology, tuple(own)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), run_sets(), facts(), st.data())
def test_the_first_answer_never_contradicts_the_topology(imports, runs, environment, data):
    req = requirement(imports, headroom_ratio=environment.headroom_percent / 100)
    environment = link_for(environment, req)
    used = [r for r in runs if not r.loopback]
    alone, topology, own = draw_topology(data, req, environment, used)
    plan = with_topology(alone, topology, own)
    transport, before = plan.card("transport"), alone.card("transport")
    for card in plan.cards:
        check_badge(card)
    check_capacities(plan, used, environment.link_bits_per_second)
    check_bound(plan)
    assert STATUS_ORDER.index(transport.status) >= STATUS_ORDER.index(before.status)  # never better than its link
    others = [next(c for c in d.cards if c.key == "transport") for d in own[1:]]
    failing = [v for v in (*topology.hops, *topology.shared_links) if v.status == FAIL]
    failing += [c for c in others if c.status == FAIL]
    event(f"{len(topology.hops)} destinations, {len(topology.shared_links)} shared links: {transport.status}")
    if failing:
        assert transport.status == FAIL, (transport.headline, [f.headline for f in failing])
    for link in topology.shared_links:
        if link.status == FAIL:
            event("a shared link fails")
            assert f"shared link {link.name}:" in transport.headline, transport.headline
    for hop in topology.hops[1:]:
        if hop.status == FAIL:
            assert f"hop {hop.path}:" in transport.headline, transport.headline
    if transport.status == PASS:
        judged = [v for v in (*topology.hops[1:], *topology.shared_links) if v.required_bytes_per_second is not None]
        assert all(v.status == PASS for v in judged) and all(c.status == PASS for c in others)
    answer = answers(plan, lambda moment: show_time(moment, "UTC"))[0]
    assert (answer.status, answer.badge) == (transport.status, transport.badge)
    if transport.status == FAIL and transport.result is not None:
        assert "margin -" in answer.number, answer.number  # the figure is a shortfall
    if transport.nominal and transport.status != MISSING:
        assert answer.to_measure, answer  # the run that would measure the nominal part
    body = plan.to_json()
    assert body["cards"]["transport"]["status"] == transport.status
    assert [link["status"] for link in body["topology"]["shared_links"]] == [v.status for v in topology.shared_links]
    if transport.status != before.status:
        unjudged = replace(plan, cards=[before if c.key == "transport" else c for c in plan.cards])
        assert document_id(environment, plan) != document_id(environment, unjudged)
