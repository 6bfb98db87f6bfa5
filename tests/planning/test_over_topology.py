"""The first answer never contradicts the topology (issue 55, item 4): two destinations behind one 1 Gbit/s
shared uplink, a 2-node RAC history that needs 101.14 MiB/s with headroom. Each hop alone carries its copy;
the uplink cannot carry two (202.28 MiB/s against 119.21 MiB/s), so "Does the link keep up?" FAILs naming
the uplink on the card, the answer, the report's page 1, the PDF's page 1 and the JSON; the diagram draws
the uplink with its verdict; and the report's document id differs from the one-destination report's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from redolab.planning.card import FAIL, PARTIAL, PASS
from redolab.planning.over_topology import judge_over_topology
from redolab.planning.plan import DestinationCards, build_plan, with_topology
from redolab.planning.report import document_id, report_html
from redolab.planning.topology import ASYNC, DATAGUARD, STANDBY, HopFact, SharedLinkFact, TopologyFacts, plan_topology
from redolab.planning.topology_svg import topology_svg
from redolab.redo.requirement import ImportSeries, requirement
from tests.planning.test_plan import facts, log
from tests.web.test_report import make_report, pdf_tools, printed, squeeze

MIB = 1024 * 1024
GBIT = 10**9
KEPT = ("transport", "instantiation", "lag")  # an ASYNC destination's own cards


def rac_history():
    """Two threads at 38.9 MiB/s each for an hour: together 77.8 MiB/s, x 1.3 = 101.14 MiB/s."""
    logs = [log(thread, s + 1, s * 600, 600, 38.9 * 600) for thread in (1, 2) for s in range(6)]
    return requirement([ImportSeries(1, "arch.csv", logs)], headroom_ratio=0.3)


def plan_of(*, destinations: int = 2, uplink_bits: int | None = GBIT, second_bits: int | None = GBIT):
    """The plan on a 1 Gbit/s link to "standby"; with two destinations "remote" too (its own hop at
    `second_bits`) and, unless `uplink_bits` is None, both behind the shared link "uplink"."""
    environment, history = facts(link_bits_per_second=GBIT), rac_history()
    base = make_report(nominal=True)
    plan = build_plan(facts=environment, requirement=history, runs=[], evidence=base.plan.evidence)
    hops = [HopFact(1, "standby", STANDBY, ASYNC, None, nominal_bits_per_second=GBIT, rtt_seconds=0.01)]
    own = [DestinationCards(1, "standby", ASYNC, tuple(c for c in plan.cards if c.key in KEPT))]
    if destinations == 2:
        hops.append(HopFact(2, "remote", STANDBY, ASYNC, None, nominal_bits_per_second=second_bits, rtt_seconds=0.04))
        remote = build_plan(facts=facts(link_bits_per_second=second_bits), requirement=history, runs=[])
        own.append(DestinationCards(2, "remote", ASYNC, tuple(c for c in remote.cards if c.key in KEPT)))
    links = (SharedLinkFact(7, "uplink", (1, 2), nominal_bits_per_second=uplink_bits),) * (
        destinations == 2 and uplink_bits is not None
    )
    topology = plan_topology(
        TopologyFacts(DATAGUARD, None, history.summed_required_bytes_per_second, tuple(hops), links)
    )
    return with_topology(plan, topology, tuple(own)), environment


def report_of(plan, environment):
    report = replace(make_report(nominal=True), plan=plan)
    return replace(report, document_id=document_id(environment, plan))


def test_the_history_needs_101_14_mib_per_second_and_the_uplink_carries_119_21():
    history = rac_history()
    assert history.summed_required_bytes_per_second / MIB == pytest.approx(101.14)
    assert round(GBIT / 8 / MIB, 2) == 119.21


def test_a_shared_uplink_that_cannot_carry_two_copies_fails_the_first_answer():
    plan, _ = plan_of()
    (uplink,) = plan.topology.shared_links
    assert uplink.status == FAIL and all(h.status == PASS for h in plan.topology.hops)  # each hop alone passes
    card = plan.card("transport")
    assert card.status == FAIL and card.badge == "fail (nominal)"
    assert card.headline.startswith("Nominal, not measured: short: shared link uplink: carries 2 copies")
    assert "202.28 MiB/s needed, 119.21 MiB/s nominal" in card.headline
    assert "the link to standby alone: keeps up" in card.headline  # its own link's verdict, said as such
    rows = dict(card.rows)
    assert rows["Shared link uplink"] == uplink.headline and "pass, margin" in rows["Hop primary → remote"]
    # each destination keeps its own cards, judged on its own hop
    first, remote = ({c.key: c for c in d.cards} for d in plan.destination_cards)
    assert first["transport"].status == PASS and first["transport"] is not card
    assert remote["transport"].status == PASS
    assert plan.risks[0].startswith("Shared link uplink carries 119.21 MiB/s but must carry 202.28 MiB/s")

    values = plan.to_json()["cards"]["transport"]
    assert values["status"] == FAIL and "uplink" in values["headline"]
    parts = {p["name"]: p for p in values["values"]["over_topology"]["parts"]}
    assert parts["Shared link uplink"]["status"] == FAIL
    assert parts["Shared link uplink"]["required_bytes_per_second"] == pytest.approx(2 * 101.14 * MIB)
    assert parts["Shared link uplink"]["capacity_bytes_per_second"] == GBIT / 8
    assert parts["Shared link uplink"]["capacity_basis"] == "nominal"
    assert parts["Hop primary → remote"]["status"] == PASS
    assert plan.to_json()["topology"]["shared_links"][0]["status"] == FAIL  # one verdict, two places


def test_the_answer_names_the_uplink_on_the_reports_page_one(tmp_path):
    plan, environment = plan_of()
    report = report_of(plan, environment)
    answer = report.answers[0]
    assert (answer.key, answer.status, answer.badge) == ("transport", FAIL, "fail (nominal)")
    assert answer.number == "Shared link uplink: margin -41.1 % (needs 202.28 MiB/s, carries 119.21 MiB/s)"
    assert "a cluster run" in answer.to_measure and "uplink" in answer.to_measure
    assert report.to_json()["answers"][0]["status"] == FAIL

    html = report_html(report)
    row = re.search(r'<tr id="answer-transport" data-status="(\w+)">(.*?)</tr>', html, re.S)
    assert row.group(1) == FAIL and "Shared link uplink: margin -41.1 %" in row.group(2)
    assert html.index('id="answer-transport"') < html.index('id="destinations"')  # page 1, then the details


def test_the_pdfs_first_page_says_fail_naming_the_uplink(tmp_path):
    pdf_tools()
    plan, environment = plan_of()
    report = report_of(plan, environment)
    pages, _ = printed(tmp_path, report)
    first = pages[0]
    line = next(line for line in first.splitlines() if "Does the" in line)
    assert "FAIL" in line.upper() and "PASS" not in line.upper(), line
    assert "Shared link uplink: margin -41.1 %" in squeeze(first)
    assert f"Document {report.document_id}" in squeeze(first)
    assert "Hop primary → remote" in squeeze(" ".join(pages))  # the arrow prints (issue 58.5: not "->")


def test_one_destination_or_no_shared_link_leaves_the_answer_as_its_link_says():
    one, _ = plan_of(destinations=1)
    alone = build_plan(facts=facts(link_bits_per_second=GBIT), requirement=rac_history(), runs=[]).card("transport")
    assert one.card("transport").status == PASS and one.card("transport").headline == alone.headline
    assert one.over_topology.parts == ()
    wide, _ = plan_of(uplink_bits=10 * GBIT)  # the uplink carries both copies
    card = wide.card("transport")
    assert card.status == PASS and card.badge == "pass (nominal)"
    assert "Shared link uplink" in dict(card.rows) and "short" not in card.headline.lower()


def test_a_hop_without_a_capacity_leaves_the_answer_partly_measured():
    plan, _ = plan_of(second_bits=None, uplink_bits=None)
    card = plan.card("transport")
    assert card.status == PARTIAL and card.headline.startswith("Nominal, not measured: partly measured: keeps up")
    assert "no capacity for the hop primary → remote: set its nominal bandwidth or run an experiment over it" in (
        card.missing
    )


def test_a_second_hop_that_is_short_fails_the_answer_naming_it():
    plan, _ = plan_of(second_bits=5 * 10**8, uplink_bits=None)  # 59.6 MiB/s for 101.14 MiB/s
    card = plan.card("transport")
    assert card.status == FAIL and "hop primary → remote: needs 101.14 MiB/s" in card.headline


def test_the_diagram_draws_the_shared_link_with_its_verdict():
    plan, _ = plan_of()
    svg = str(topology_svg(plan.topology))
    link = re.search(r'<g class="topology-shared-link" data-status="(\w+)" data-shared-link="7">(.*?)</g>', svg)
    assert link is not None and link.group(1) == FAIL
    drawn = link.group(2)
    assert drawn.count("<circle") == 3  # its mark on both hops and before its line
    assert 'fill="#c62828"' in drawn  # the FAIL colour
    assert "shared link uplink: 2 copies, needs 202.28 MiB/s, carries 119.21 MiB/s (1,000 Mbit/s, nominal)" in drawn
    assert ">FAIL</tspan>" in drawn
    assert "shared link uplink (standby, remote): FAIL" in svg  # and in the words a screen reader reads
    hops = re.findall(r'<g class="topology-hop" data-status="(\w+)">', svg)
    assert hops == [PASS, PASS]  # each hop alone carries its copy
    wide, _ = plan_of(uplink_bits=10 * GBIT)
    assert 'class="topology-shared-link" data-status="pass"' in str(topology_svg(wide.topology))
    one, _ = plan_of(destinations=1)
    assert "topology-shared-link" not in str(topology_svg(one.topology))


def test_the_document_id_is_a_hash_of_what_the_report_says():
    one, environment = plan_of(destinations=1)
    two, _ = plan_of()
    wide, _ = plan_of(uplink_bits=10 * GBIT)
    ids = {document_id(environment, plan) for plan in (one, two, wide)}
    assert len(ids) == 3  # another destination, another verdict: another id
    again, _ = plan_of()
    assert document_id(environment, again) == document_id(environment, two)  # the same answer, the same id
    short = replace(two, cards=[replace(c, headline=c.headline + ".") if c.key == "lag" else c for c in two.cards])
    assert document_id(environment, short) != document_id(environment, two)  # any word it says


def test_the_document_id_does_not_depend_on_the_process():
    """A process with other string hashes (other set orders) gives the same id for the same plan."""
    code = (
        "from tests.planning.test_over_topology import plan_of; from redolab.planning.report import document_id; "
        "plan, env = plan_of(); print(document_id(env, plan))"
    )
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"  # not this process's
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONHASHSEED": seed},
    ).stdout.strip()
    plan, environment = plan_of()
    assert other == document_id(environment, plan)


def test_judging_nothing_beyond_the_link_returns_the_card_itself():
    plan, _ = plan_of(destinations=1)
    card = plan.card("transport")
    assert judge_over_topology(card, None)[0] is card
    assert judge_over_topology(card, plan.topology)[0] is card
    assert json.dumps(plan.to_json()["cards"]["transport"]["values"], default=str).count("over_topology") == 0
