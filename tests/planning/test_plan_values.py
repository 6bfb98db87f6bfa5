"""Every number a plan shows comes from one typed value: the requirement table, the cards' rows and
headlines, the JSON values and the report's HTML write the same figure of the card's typed result
(`Card.result`). The checks fail when a card shows a number of its own (see the last tests)."""

import re
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from markupsafe import escape

from redolab.core.units import byte_rate_to_mbit, format_byte_rate, format_byte_rate_in_mbit, format_duration
from redolab.disktest.fit import Disk
from redolab.planning.facts import DiskFact
from redolab.planning.network import SOCKET_BUFFER_RULE
from redolab.planning.plan import build_plan
from redolab.planning.report import Report, report_html
from redolab.planning.results import BufferSizing, CopyTime, KeepUp, LagExposure, SyncCommit
from redolab.planning.service import Selection
from redolab.redo.analysis import RedoSummary
from redolab.redo.analytics import analyze, summary_json
from redolab.redo.requirement import ImportSeries, requirement
from redolab.runs.parsers.redoprobe import RunMetrics
from tests.planning.test_plan import MIB, T0, facts, history, log, run

SYNC_RUN = run(
    9,
    mode="sync",
    sync_write=True,
    message_bytes=16384,
    created_at=T0 + timedelta(days=2),
    metrics=RunMetrics(rtt_min_seconds=0.0101, ack_count=1000, ack_avg_seconds=0.0125, server_write_seconds=2.0),
)
DISK = DiskFact(Disk(200 * MIB, 0.0004), "standby-1:/redo")


LOOPBACK_RUNS = [run(20 + n, node=1 + n % 2, rate_mib=3715.56, loopback=True) for n in range(12)]


def plans():
    """A short thread and a passing one with a SYNC run; the nominal link only; a disk test on a
    platform that commits in NEARSYNC; one thread with AWR write sizes; twelve loopback runs chosen
    on a 1 Gbit/s link with a SYNC run with a standby write."""
    measured = [run(1, node=1, rate_mib=60), run(2, node=2, rate_mib=12), run(3, node=1, conns=4, rate_mib=70)]
    one = requirement(
        [ImportSeries(1, "w.csv", [log(1, 1, 0, 600, 600, writes=1e5), log(1, 2, 600, 60, 900, writes=2e5)])],
        headroom_ratio=0.3,
    )
    return [
        build_plan(facts=facts(transport_mode="SYNC"), requirement=history(), runs=[*measured, SYNC_RUN]),
        build_plan(facts=facts(), requirement=history(), runs=[]),
        build_plan(
            facts=facts(platform="hadr", transport_mode="NEARSYNC", standby_disk=DISK),
            requirement=history(),
            runs=[run(1, node=1, rate_mib=20), run(2, node=2, rate_mib=30)],
        ),
        build_plan(
            facts=facts(primary_nodes=1, standby_nodes=1, time_zone="Europe/Berlin"),
            requirement=one,
            runs=[run(1, rate_mib=5), SYNC_RUN],
        ),
        build_plan(
            facts=facts(transport_mode="SYNC", link_bits_per_second=1e9, link_rtt_seconds=0.025),
            requirement=history(),
            runs=[*LOOPBACK_RUNS, replace(SYNC_RUN, loopback=True)],
        ),
    ]


def report(plan) -> str:
    made = Report(
        title="Plan",
        environment="prod",
        environment_id=1,
        platform="Oracle Data Guard",
        generated_at=datetime(2026, 1, 1, tzinfo=UTC),
        author="alice",
        version="0",
        time_zone=plan.time_zone,
        hosts=[],
        facts=[],
        plan=plan,
        selection=Selection(),
    )
    return report_html(made)


def report_row(html: str, attribute: str) -> str:
    """The requirement table's row (`data-thread="1"`, `id="plan-summed"`) of the report."""
    return re.search(rf"<tr {attribute}>(.*?)</tr>", html, re.S).group(1)


def check_requirement_and_transport(plan, html: str) -> None:
    card, values = plan.card("transport"), plan.to_json()["cards"]["transport"]["values"]
    keep_up: KeepUp = card.result
    assert keep_up.requirement is plan.requirement
    shown = dict(card.rows)
    thread_values = {t["thread"]: t for t in values["threads"]}
    for judged in keep_up.threads:
        need = judged.need
        required = need.required_bytes_per_second  # the one typed value for this thread
        assert need is plan.requirement.threads[need.thread]
        assert format_byte_rate_in_mbit(required) in report_row(html, f'data-thread="{need.thread}"')
        if judged.verdict is None:
            continue
        assert judged.verdict.required_bytes_per_second == required
        assert thread_values[need.thread]["required_bytes_per_second"] == required
        assert thread_values[need.thread]["available_bytes_per_second"] == judged.stream.bytes_per_second
        row = shown[judged.verdict.subject]
        assert f"needs {format_byte_rate(required)} ({format_byte_rate_in_mbit(required)})" in row
        assert str(escape(row)) in html
    summed = plan.requirement.summed_required_bytes_per_second
    assert format_byte_rate_in_mbit(summed) in report_row(html, 'id="plan-summed"')
    if keep_up.summed is not None and keep_up.summed.verdict is not None:
        assert (
            keep_up.summed.verdict.required_bytes_per_second == summed == values["summed"]["required_bytes_per_second"]
        )
        assert f"needs {format_byte_rate(summed)}" in shown[keep_up.summed.verdict.subject]
    for failed in keep_up.failed:  # the headline names the same shortfall
        assert f"needs {format_byte_rate(failed.required_bytes_per_second)}" in card.headline


def check_lag(plan, html: str) -> None:
    card, values = plan.card("lag"), plan.to_json()["cards"]["lag"]["values"]
    lag: LagExposure = card.result
    verdicts = {j.need.thread: j for j in plan.card("transport").result.threads}
    for replayed, shown, (label, _) in zip(lag.replayed, values["threads"], card.rows, strict=True):
        need = replayed.need
        assert replayed.stream == verdicts[need.thread].stream  # the transport card's stream
        assert shown["required_bytes_per_second"] == need.required_bytes_per_second
        assert shown["max_lag_seconds"] == replayed.replay.max_lag_seconds
        assert f"drained at {format_byte_rate(replayed.stream.bytes_per_second)}" in label
    if lag.worst is not None:
        assert f"Up to {format_duration(lag.worst.replay.max_lag_seconds)} of redo at risk" in card.headline
        assert str(escape(card.headline)) in html


def check_instantiation_and_buffers(plan, html: str) -> None:
    card, values = plan.card("instantiation"), plan.to_json()["cards"]["instantiation"]["values"]
    copy: CopyTime = card.result
    total = copy.estimate.total_seconds
    assert values["total_seconds"] == total and values["total_hours"] == copy.estimate.total_hours
    assert dict(card.rows)[f"With {copy.estimate.overhead_percent:g} % apply overhead"] == format_duration(total)
    assert f"about {format_duration(total)}" in card.headline.lower() and str(escape(card.headline)) in html
    card, values = plan.card("buffers"), plan.to_json()["cards"]["buffers"]["values"]
    sizing: BufferSizing = card.result
    socket = sizing.bdp.socket_buffer_bytes
    assert values["socket_buffer_bytes"] == socket == plan.settings_basis.socket_buffer_bytes
    assert dict(card.rows)[f"Socket buffers ({SOCKET_BUFFER_RULE})"].startswith(f"{socket:,} bytes")
    assert card.headline.endswith(f"et socket buffers to {socket:,} bytes ({SOCKET_BUFFER_RULE})")
    snippets = "\n".join(s.text for s in plan.snippets)
    assert f"net.core.rmem_max = {socket}" in snippets and str(escape(snippets.splitlines()[1])) in html


def check_commit(plan, html: str) -> None:
    card, values = plan.card("commit"), plan.to_json()["cards"]["commit"]["values"]
    commit: SyncCommit = card.result
    if commit.impact is None:
        assert values == {} and card.headline.startswith("Missing: ")
        return
    mode = commit.mode
    assert values["modes"][mode]["added_seconds"] == commit.added_seconds
    assert values["write_seconds"] == commit.write_seconds and values["rtt_seconds"] == commit.rtt.seconds
    if mode != "ASYNC":
        assert f"{mode} adds about {format_duration(commit.added_seconds)}" in card.headline
    marked = dict(card.rows)[f"{mode} (this environment)"]
    assert f"+{format_duration(commit.added_seconds)} per commit" in marked and str(escape(marked)) in html
    if commit.queues:
        assert format_byte_rate(commit.ceiling_bytes_per_second) in card.headline


def check_capacity(card, capacity, shown: dict, html: str) -> None:
    """One capacity: the card's marks, its JSON and its words say the same origin and figure."""
    assert shown["origin"] == capacity.origin and shown["label"] == capacity.label
    assert shown["bytes_per_second"] == capacity.bytes_per_second
    assert getattr(card, capacity.origin, True)  # card.nominal / card.loopback set when a figure rests on one
    assert capacity.origin not in ("nominal", "loopback") or f"({card.capacity_basis})" in card.badge
    assert card.badge in html


def check_capacity_labels(plan, html: str) -> None:
    """Every card names where the capacity it reads comes from, in its rows, JSON and the report."""
    transport, values = plan.card("transport"), plan.to_json()["cards"]["transport"]["values"]
    rows, keep_up = dict(transport.rows), transport.result
    by_thread = {t["thread"]: t for t in values["threads"]}
    for judged in keep_up.threads:
        if judged.verdict is not None:
            assert judged.stream.label in rows[judged.verdict.subject]
            check_capacity(transport, judged.stream, by_thread[judged.need.thread]["capacity"], html)
    if keep_up.summed is not None and keep_up.summed.verdict is not None:
        assert keep_up.summed.stream.label in rows[keep_up.summed.verdict.subject]
        check_capacity(transport, keep_up.summed.stream, values["summed"]["capacity"], html)
    lag, lag_values = plan.card("lag"), plan.to_json()["cards"]["lag"]["values"]
    for replayed, shown, (label, _) in zip(lag.result.replayed, lag_values["threads"], lag.rows, strict=True):
        assert replayed.stream.label in label and str(escape(label)) in html
        check_capacity(lag, replayed.stream, shown["capacity"], html)
    buffers = plan.card("buffers")
    if buffers.result.window_stream is not None:
        stream = buffers.result.window_stream
        row = dict(buffers.rows)["Window the best single stream kept in flight"]
        assert row == f"{buffers.result.window_bytes:,} bytes ({stream.label})" and str(escape(row)) in html
        check_capacity(buffers, stream, buffers.values["window_capacity"], html)
    commit = plan.card("commit")
    if commit.result.impact is not None:
        stream = commit.result.stream
        assert any(f"({stream.label})" in line for line in commit.working)
        check_capacity(commit, stream, commit.values["send_capacity"], html)


def check_plan(plan) -> None:
    html = report(plan)
    check_requirement_and_transport(plan, html)
    check_lag(plan, html)
    check_instantiation_and_buffers(plan, html)
    check_commit(plan, html)
    check_capacity_labels(plan, html)


def test_a_chosen_loopback_run_is_one_capped_capacity_on_every_card():
    plan = plans()[4]
    link = 1e9 / 8
    transport, lag, buffers, commit = (plan.card(k) for k in ("transport", "lag", "buffers", "commit"))
    capacities = [t.stream for t in transport.result.threads] + [transport.result.summed.stream]
    capacities += [t.stream for t in lag.result.replayed] + [buffers.result.window_stream, commit.result.stream]
    assert {c.bytes_per_second for c in capacities} == {link}  # 3,715.56 MiB/s capped at the 1 Gbit/s link
    assert {c.capped_from_bytes_per_second for c in capacities} == {3715.56 * MIB}
    for card in (transport, lag, buffers, commit):
        assert card.loopback and card.badge.endswith("(loopback)"), card
        assert card.headline.startswith("Loopback, not the link: ") and "Nominal" not in card.headline
    assert buffers.result.window_bytes == round(link * 0.025)  # not 3,715.56 MiB/s x the WAN round trip
    assert (
        "run #9" in dict(commit.rows)["Measured standby write"]
        and "loopback" in dict(commit.rows)["Measured standby write"]
    )
    assert not any("left out of the verdicts" in r for r in plan.risks)
    assert any(r.startswith("Loopback runs #9, #20, #21") and "and 7 more" in r for r in plan.risks)
    assert plan.to_json()["cards"]["transport"]["loopback"] is True


@pytest.mark.parametrize("number", range(5))
def test_every_card_shows_its_typed_values(number):
    check_plan(plans()[number])


def test_the_check_fails_when_a_row_shows_another_number():
    plan = plans()[0]
    card = plan.card("transport")
    judged = card.result.threads[0]
    # the verdict row comes after the link for the RPO's rows
    at = next(i for i, (subject, _) in enumerate(card.rows) if subject == judged.verdict.subject)
    subject, text = card.rows[at]
    need = judged.need
    other = need.required_bytes_per_second * 1.01  # e.g. a writer that applied the headroom again
    card.rows[at] = (subject, text.replace(format_byte_rate(need.required_bytes_per_second), format_byte_rate(other)))
    with pytest.raises(AssertionError):
        check_plan(plan)


def test_the_check_fails_when_the_json_differs_from_the_typed_value():
    plan = plans()[0]
    card = plan.card("instantiation")
    card.values = {**card.values, "total_seconds": card.values["total_seconds"] + 60}
    with pytest.raises(AssertionError):
        check_plan(plan)
    plan = plans()[0]
    commit = plan.card("commit")
    commit.result = replace(commit.result, rtt=replace(commit.result.rtt, seconds=commit.result.rtt.seconds * 2))
    with pytest.raises(AssertionError):
        check_plan(plan)


def test_the_redo_summary_is_typed_and_sends_the_json_it_was_read_from():
    rows = [log(1, 1, 0, 600, 600), log(1, 2, 600, 100, 4000), log(1, 3, 700, 600, 600),
            log(2, 1, 0, 650, 6500), log(2, 2, 650, 650, 6500)]  # fmt: skip
    req = requirement([ImportSeries(1, "arch.csv", rows)], headroom_ratio=0.3)
    analysis = summary_json(analyze(rows, headroom_ratio=0.3), fmt="csv", rows_read=5, dropped=Counter(), warnings=[])
    summary = RedoSummary.of(req, analysis)
    document = summary.to_json()
    assert list(document) == [*analysis, "requirement"]  # summary_json's keys in its order, then the requirement
    assert [t.required_bytes_per_second for t in summary.threads] == [
        n.required_bytes_per_second for n in sorted(req.threads.values(), key=lambda n: n.thread)
    ]
    assert summary.summed.peak_bytes_per_second == req.summed_peak_bytes_per_second == pytest.approx(50 * MIB)
    assert summary.required_mbit_per_second == byte_rate_to_mbit(req.summed_required_bytes_per_second)
    assert document["required_mbit_per_second"] == summary.required_mbit_per_second
    assert document["threads"][0]["bytes"] == analysis["threads"][0]["bytes"]
    assert document["format"] == "csv" and summary.warnings == analysis["warnings"]
    read = RedoSummary.from_json(req, document)
    assert read.to_json() == document and read.threads == summary.threads and read.summed == summary.summed
