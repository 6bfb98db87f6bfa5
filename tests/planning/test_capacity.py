"""One capacity, one label (issue 32, item 4): which run stands for a stream or the link, where it
comes from, the left-out runs a missing figure names, and the verdict that only the upper bound
(every thread peaking at once) fails. Pure: no database."""

from dataclasses import replace

import pytest

from redolab.core.units import format_byte_rate
from redolab.planning.card import MISSING, PARTIAL, PASS
from redolab.planning.facts import LOOPBACK, MEASURED, Excluded
from redolab.planning.plan import build_plan
from redolab.planning.service import Selection
from redolab.redo.requirement import ImportSeries, requirement
from redolab.runs.parsers.redoprobe import RunMetrics
from tests.planning.test_plan import MIB, facts, history, run
from tests.planning.test_requirement import row

GBIT = 1e9  # bits per second
SYNC_WRITE = RunMetrics(rtt_min_seconds=0.0001, ack_count=1000, ack_avg_seconds=0.0002, server_write_seconds=2.0)


def loopback_runs(count=12):
    return [run(n, node=1, rate_mib=3715.56, loopback=True) for n in range(1, count + 1)]


def left_out(runs):
    """As the service leaves them out by default (Selection.run_choice's reason)."""
    return [Excluded(r, Selection().run_choice(r)[1]) for r in runs]


def test_left_out_loopback_runs_are_named_where_they_would_fill_a_figure():
    """12 loopback ASYNC runs and a loopback SYNC run with a standby write, left out by default: the
    plan says they exist, why they are left out and how to include them, not 'no ASYNC run yet'."""
    sync = run(13, mode="sync", sync_write=True, loopback=True, metrics=SYNC_WRITE)
    excluded = left_out([*loopback_runs(), sync])
    plan = build_plan(
        facts=facts(link_bits_per_second=None, link_rtt_seconds=None),
        requirement=history(),
        runs=[],
        excluded=excluded,
    )
    instantiation, commit = plan.card("instantiation"), plan.card("commit")
    said = " ".join(instantiation.missing)
    assert "12 ASYNC runs (#1 to #12) exist but are left out: loopback" in said
    assert "tick them in the evidence list" in said and "no ASYNC run yet" not in said
    writes = next(m for m in commit.missing if m.startswith("no standby write measurement"))
    assert "1 SYNC with a standby write run (#13) exists but is left out: loopback" in writes
    assert commit.status == MISSING and commit.headline == f"Missing: {commit.missing[0]}"
    for card in plan.cards:  # the headline's item is not listed again under it
        assert card.headline.removeprefix("Missing: ") not in card.more_missing
    # with the nominal link standing in, the working says which runs were left out
    nominal = build_plan(facts=facts(), requirement=history(), runs=[], excluded=excluded)
    assert any(
        "no ASYNC run chosen (12 ASYNC runs (#1 to #12) exist" in w for w in nominal.card("instantiation").working
    )
    assert any("stands in for a measurement: 12 ASYNC runs" in w for w in nominal.card("transport").working)


def test_runs_left_out_by_tag_or_choice_say_how_to_include_them():
    tagged = replace(run(7, mode="sync", sync_write=True, metrics=SYNC_WRITE), tags=("wan-test",))
    chosen_elsewhere = run(8, node=2)
    selection = Selection(runs=frozenset(), exclude_tags=frozenset({"wan-test"}))
    excluded = [Excluded(r, selection.run_choice(r)[1]) for r in (tagged, chosen_elsewhere)]
    plan = build_plan(facts=facts(link_rtt_seconds=None), requirement=history(), runs=[], excluded=excluded)
    writes = plan.card("commit").missing[0]
    assert "(#7) exists but is left out: tagged wan-test; untick wan-test under 'Leave out runs tagged'" in writes
    send = next(m for m in plan.card("commit").missing if "send time" in m)
    assert "(#8) exists but is left out: not chosen; tick it in the evidence list" in send


def test_a_sync_run_without_synchronous_writes_is_named():
    unsynced = run(5, mode="sync", sync_write=False, metrics=SYNC_WRITE)
    plan = build_plan(facts=facts(), requirement=history(), runs=[unsynced])
    assert "run #5 wrote to a standby directory without synchronous write" in plan.card("commit").missing[0]


def test_a_run_over_the_link_beats_a_faster_loopback_run_and_may_exceed_the_nominal_link():
    over_link = run(2, node=1, rate_mib=150)  # above the 1 Gbit/s nominal link: a run over it says more
    plan = build_plan(
        facts=facts(link_bits_per_second=GBIT), requirement=history(), runs=[*loopback_runs(1), over_link]
    )
    stream = plan.card("transport").result.threads[0].stream
    assert stream.run is over_link and stream.origin == MEASURED and stream.bytes_per_second == 150 * MIB
    assert not plan.card("transport").loopback


def test_a_loopback_run_without_a_nominal_link_is_marked_not_capped():
    plan = build_plan(facts=facts(link_bits_per_second=None), requirement=None, runs=loopback_runs(1))
    buffers = plan.card("buffers")
    assert buffers.result.bandwidth.origin == LOOPBACK and buffers.loopback
    assert buffers.result.bandwidth_bits_per_second == pytest.approx(3715.56 * MIB * 8)
    assert buffers.badge == "info (loopback)" and buffers.headline.startswith("Loopback, not the link: ")


def test_a_loopback_round_trip_stands_in_only_without_a_run_over_the_link():
    metrics = RunMetrics(rtt_min_seconds=0.00005, ack_count=0, ack_avg_seconds=None, server_write_seconds=None)
    fast = replace(loopback_runs(1)[0], metrics=metrics)
    wan = run(2, node=1, rate_mib=50)  # rtt_min 10.2 ms
    plan = build_plan(facts=facts(link_rtt_seconds=None), requirement=None, runs=[fast, wan])
    assert plan.card("buffers").result.rtt.seconds == pytest.approx(0.0102)
    alone = build_plan(facts=facts(link_rtt_seconds=None), requirement=None, runs=[fast])
    assert alone.card("buffers").result.rtt.loopback and alone.card("buffers").loopback
    assert any("round trip of a loopback run" in w for w in alone.card("buffers").working)


def mixed_history(headroom=0.3):
    """Thread 1 from a file with times (22.2 MiB/s most of the time, 77.8 MiB/s at its peak), thread 2 from
    a paste without times peaking at 14.47 MiB/s: their sum is 92.27 MiB/s, 119.95 MiB/s with headroom."""
    timed = [row(1, n * 600, 600, 600 * (77.8 if n == 5 else 22.2)) for n in range(40)]
    untimed = [row(2, 0, 100, 1447, timed=False), row(2, 0, 100, 500, timed=False)]
    return requirement(
        [ImportSeries(1, "timed.csv", timed), ImportSeries(2, "paste.txt", untimed)], headroom_ratio=headroom
    )


def test_only_the_upper_bound_above_the_link_is_undecided_not_a_pass():
    req = mixed_history()
    assert req.upper_bound_bytes_per_second == pytest.approx(92.27 * MIB)
    assert req.upper_bound_required_bytes_per_second == pytest.approx(92.27 * MIB * 1.3)  # 119.95 MiB/s
    plan = build_plan(facts=facts(link_bits_per_second=GBIT), requirement=req, runs=[])
    transport = plan.card("transport")
    assert transport.result.undecided and transport.status == PARTIAL
    assert "undecided if every thread peaked at once" in transport.headline
    decide = next(m for m in transport.missing if m.startswith("whether the threads peak together"))
    assert format_byte_rate(92.27 * MIB * 1.3) in decide and "times for thread 2" in decide
    assert "FIRST_TIME and NEXT_TIME" in decide and "connection sweep" in decide
    assert dict(transport.rows)["Upper bound: every thread peaking at once"].startswith("undecided: needs up to")
    assert transport.values["upper_bound"]["undecided"] is True
    roomy = build_plan(facts=facts(link_bits_per_second=1.01 * 92.27 * MIB * 1.3 * 8), requirement=req, runs=[])
    assert roomy.card("transport").status == PASS and not roomy.card("transport").result.undecided
    assert dict(roomy.card("transport").rows)["Upper bound: every thread peaking at once"].startswith("pass")


def test_percentiles_come_from_timed_series_only():
    """A paste without times adds no percentile: the summed p95 is the timed file's own, and a peak
    raised by a log without times is said to be one."""
    timed = [row(t, n * 600, 600, 600 * (60 if n == 5 else 20) / t) for t in (1, 2) for n in range(100)]
    alone = requirement([ImportSeries(1, "timed.csv", timed)], headroom_ratio=0.3)
    untimed = [row(1, 99_999, 10, 1000, timed=False)]  # 100 MiB/s, above the 90 MiB/s the timed threads reach
    mixed = requirement(
        [ImportSeries(1, "timed.csv", timed), ImportSeries(2, "paste.txt", untimed)], headroom_ratio=0.3
    )
    assert mixed.summed_peak_bytes_per_second == pytest.approx(100 * MIB)
    for percent in (95, 99):
        assert mixed.summed_percentile(percent) == alone.summed_percentile(percent)
        assert mixed.summed_percentile(percent) < mixed.summed_peak_bytes_per_second
    assert mixed.untimed_peak == 1 and "without times" in mixed.summed_how
    assert "timed series only" in mixed.percentile_basis and "without times" in mixed.percentile_basis
    assert mixed.to_json()["summed"]["peak_without_times_thread"] == 1
    no_overlap = mixed_history()
    assert no_overlap.summed_percentile(95) is None
    assert no_overlap.percentile_basis == "no percentiles: no times for thread 2"


@pytest.mark.parametrize(
    ("pieces", "p95", "p99", "said"),
    [
        (10, False, False, "10 intervals: too few for a p95 (20 needed) or a p99 (100 needed); time-weighted"),
        (19, False, False, "19 intervals: too few for a p95 (20 needed) or a p99 (100 needed); time-weighted"),
        (20, True, False, "20 intervals: too few for a p99 (100 needed); time-weighted"),
        (100, True, True, "time-weighted"),
    ],
)
def test_a_percentile_needs_one_sample_in_its_tail(pieces, p95, p99, said):
    """Ten samples' "p95" and "p99" were both their highest, read as a bug: a p-th percentile needs one
    piece in (100 - p) % above it (p95: 20, p99: 100), and the basis says how many there were."""
    rows = [row(1, n * 600, 600, 600 * (60 if n == 3 else 10 + n % 7)) for n in range(pieces)]  # one burst
    req = requirement([ImportSeries(1, "few.csv", rows)], headroom_ratio=0.3)
    assert (req.summed_percentile(95) is not None, req.summed_percentile(99) is not None) == (p95, p99)
    assert req.percentile_basis.startswith(said)
    for percent in (95, 99):  # the one burst is above any percentile there are samples for
        found = req.summed_percentile(percent)
        assert found is None or found < req.summed_peak_bytes_per_second


def test_too_few_intervals_are_counted_in_words():
    """Issue 58.5: the basis read "n = 0" and "n = 1"; a DBA reads intervals, and none as none."""
    from redolab.redo.analytics import too_few_for

    assert too_few_for(0, (95, 99)) == "no intervals: too few for a p95 (20 needed) or a p99 (100 needed)"
    assert too_few_for(1, (95,)) == "1 interval: too few for a p95 (20 needed)"
    assert too_few_for(1234, (99.99,)) == "1,234 intervals: too few for a p99.99 (10,000 needed)"
    assert too_few_for(100, (95, 99)) is None


def test_the_summary_carries_the_percentile_basis_and_the_bound_with_headroom():
    from redolab.redo.analysis import RedoSummary

    req = mixed_history()
    summary = RedoSummary.of(req, {})
    assert summary.summed.percentile_basis == req.percentile_basis
    assert summary.summed.upper_bound_required_bytes_per_second == req.upper_bound_required_bytes_per_second
    assert RedoSummary.from_json(req, summary.to_json()).summed == summary.summed


def test_the_requirement_table_gives_the_bound_with_its_headroom():
    from redolab.core.templating import templates

    plan = build_plan(facts=facts(link_bits_per_second=GBIT), requirement=mixed_history(), runs=[])
    html = templates.get_template("planning/_requirement.html").render(plan=plan)
    assert f"up to {format_byte_rate(92.27 * MIB)} if every thread peaked at once" in html
    assert f"{format_byte_rate(92.27 * MIB * 1.3)} with the 30 % headroom" in html


def test_the_lag_chart_names_what_each_thread_was_drained_at():
    import json

    from redolab.charts.plan import lag_figure

    plan = build_plan(facts=facts(link_bits_per_second=GBIT), requirement=history(), runs=loopback_runs(1))
    lag = plan.card("lag")
    drains = {
        t.need.thread: f"drained at {format_byte_rate(t.stream.bytes_per_second)}, {t.stream.label}"
        for t in lag.result.replayed
    }
    series = {1: [(row(1, 0, 1, 1).start, 0.0), (row(1, 60, 1, 1).start, 2.5)]}
    names = [trace["name"] for trace in json.loads(lag_figure(series, "UTC", drains))["data"]]
    assert names == [
        "thread 1 (drained at 119.21 MiB/s, loopback run #1: this machine, not the link, capped at the nominal link)"
    ]


def test_threads_timed_in_different_periods_are_decided_by_an_overlapping_history():
    later = 86400 * 700
    rows = [row(1, n * 600, 600, 600 * 60) for n in range(6)] + [
        row(2, later + n * 600, 600, 600 * 50) for n in range(6)
    ]
    req = requirement([ImportSeries(1, "apart.csv", rows)], headroom_ratio=0.3)
    plan = build_plan(facts=facts(link_bits_per_second=100 * MIB * 8), requirement=req, runs=[])
    transport = plan.card("transport")
    assert transport.result.undecided and transport.status == PARTIAL
    decide = next(m for m in transport.missing if m.startswith("whether the threads peak together"))
    assert "every thread's times over the same period" in decide and "thread(s)" not in decide
