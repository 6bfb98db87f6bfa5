"""The requirement model: finest basis per thread, summed only where threads overlap, separate
stretches for distant periods, peak windows, and the plan's use of nominal links and loopback runs."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.planning.plan import FAIL, PASS, Facts, build_plan
from redolab.redo.requirement import ImportSeries, requirement
from redolab.redo.schemas import RedoInterval
from redolab.redo.windows import best_window
from redolab.runs.measured import MeasuredRun
from redolab.runs.parsers.redoprobe import RunMetrics
from tests.figures import values

MIB = 1024 * 1024
T0 = datetime(2022, 1, 15, 8, 0, tzinfo=UTC)


def row(thread, start_s, seconds, mib, *, kind="log", base=T0, peak=None, timed=True):
    start = base + timedelta(seconds=start_s)
    end = start + timedelta(seconds=seconds)
    return RedoInterval(
        line=1,
        thread=thread,
        start=start if timed else None,
        end=end if timed else None,
        seconds=None if timed else seconds,
        bytes=mib * MIB,
        kind=kind,
        peak_bytes_per_second=peak,
        sequence=int(start.timestamp()) if kind == "log" else None,
    )


def test_finest_basis_wins_and_the_sum_never_drops_below_a_thread():
    """Seed 000's per-log rates have no times; a SYSMETRIC export of thread 1 has averages and maxima.
    Per thread the per-log rate wins; all threads together need at least thread 2's 54.67 MiB/s."""
    logs = [row(1, 0, 781, 29365.6553, timed=False), row(2, 0, 537, 29359.3403, timed=False)]
    sysmetric = [row(1, 0, 600, 600, kind="rate", peak=5 * MIB), row(1, 600, 600, 1200, kind="rate", peak=3 * MIB)]
    req = requirement(
        [ImportSeries(1, "seed000.csv", logs), ImportSeries(2, "sysmetric.tsv", sysmetric)], headroom_ratio=0.3
    )
    assert req.threads[1].peak_bytes_per_second == pytest.approx(29365.6553 * MIB / 781)
    assert req.threads[1].basis.statistic == "per-log rate"
    assert req.threads[1].replay_basis.imports == ("import #2 (sysmetric.tsv)",)  # times for the replay
    assert req.summed_peak_bytes_per_second == pytest.approx(29359.3403 * MIB / 537)
    assert "thread 2 has no times" in req.summed_how and "(Doc ID 2064368.1)" in req.summed_how
    assert req.upper_bound_bytes_per_second > req.summed_peak_bytes_per_second
    assert "series over time" in " ".join(req.used[2])


def test_disjoint_periods_are_separate_stretches_and_the_sum_is_only_where_threads_overlap():
    later = T0 + timedelta(days=730)
    rows = [row(1, 0, 3600, 3600), row(2, 0, 3600, 7200), row(1, 0, 3600, 36000, base=later)]
    req = requirement([ImportSeries(1, "both.csv", rows)], headroom_ratio=0.3)
    assert len(req.spans) == 1  # 2024 has thread 1 only: no summed series there
    assert req.spans[0].start == T0 and req.spans[0].end == T0 + timedelta(hours=1)
    assert req.summed_peak_bytes_per_second == pytest.approx(10 * MIB)  # raised to thread 1's 2024 peak
    assert "raised to thread 1's own peak" in req.summed_how
    two = requirement(
        [
            ImportSeries(1, "2022.csv", rows[:2]),
            ImportSeries(2, "2024.csv", [row(1, 0, 60, 60, base=later), row(2, 0, 60, 60, base=later)]),
        ],
        headroom_ratio=0.3,
    )
    assert [s.start.year for s in two.spans] == [2022, 2024]  # two series, no line across the gap


def test_peak_windows_are_the_highest_averages_and_only_where_the_data_is_fine_enough():
    # one minute at 60 MiB/s inside ten minutes at 6 MiB/s, logged every minute
    rows = [row(1, 60 * i, 60, 3600 if i == 4 else 360) for i in range(10)]
    req = requirement([ImportSeries(1, "minutes.csv", rows)], headroom_ratio=0.3)
    windows = {w.minutes: w for w in req.windows}
    assert windows[1].bytes_per_second == pytest.approx(60 * MIB)
    assert windows[1].start == T0 + timedelta(minutes=4)
    assert windows[5].bytes_per_second == pytest.approx((3600 + 4 * 360) * MIB / 300)
    assert windows[60].bytes_per_second is None and "no stretch" in windows[60].reason
    hourly = requirement(
        [ImportSeries(1, "hourly.csv", [row(1, 3600 * i, 3600, 3600, kind="period") for i in range(3)])],
        headroom_ratio=0.3,
    )
    assert {w.minutes: w.reason for w in hourly.windows}[15].endswith("too coarse")
    assert best_window([(T0, T0 + timedelta(seconds=10), 5.0)], 60) is None


def run(id, *, node=1, conns=1, rate_mib=10.0, loopback=False, mtu=None):
    return MeasuredRun(
        id=id,
        label="",
        client_node=node,
        server_node=node,
        mode="async",
        conns=conns,
        message_bytes=MIB,
        bytes_per_second=rate_mib * MIB,
        sync_write=False,
        loopback=loopback,
        mtu_bytes=mtu,
        metrics=RunMetrics(rtt_min_seconds=0.01, ack_count=0, ack_avg_seconds=None, server_write_seconds=None),
        created_at=T0 + timedelta(days=id),
    )


def facts(**overrides):
    values = dict(
        platform="dataguard",
        transport_mode="ASYNC",
        database_bytes=1024**4,
        primary_nodes=1,
        standby_nodes=1,
        instantiation_goal_seconds=None,
        headroom_percent=30,
        apply_overhead_percent=30,
        link_bits_per_second=1e9,
        link_rtt_seconds=0.025,
    )
    return Facts(**{**values, **overrides})


def test_before_any_run_the_verdicts_use_the_nominal_link_and_say_so():
    req = requirement([ImportSeries(1, "a.csv", [row(1, 0, 600, 600)])], headroom_ratio=0.3)
    plan = build_plan(facts=facts(), requirement=req, runs=[])
    transport = plan.card("transport")
    assert transport.status == PASS and transport.nominal and transport.badge == "pass (nominal)"
    assert transport.headline.startswith("Nominal, not measured: keeps up")
    assert transport.values["threads"][0]["available_bytes_per_second"] == pytest.approx(1e9 / 8)
    slow = build_plan(facts=facts(link_bits_per_second=5e6), requirement=req, runs=[])
    assert slow.card("transport").status == FAIL and slow.card("lag").status in ("warn", "fail")
    assert plan.card("instantiation").nominal


def test_the_loopback_mtu_never_sets_the_queue_lengths():
    plan = build_plan(facts=facts(), requirement=None, runs=[run(1, loopback=True, mtu=65536)])
    text = "\n".join(s.text for s in plan.snippets)
    assert "txqueuelen 3000" in text  # 3 x BDP at 1500-byte packets; 65,536-byte packets gave 1000
    assert any("loopback" in risk for risk in plan.risks)


def test_distant_periods_are_drawn_side_by_side_on_the_database_clock():
    import json

    from redolab.charts.redo import rate_figure
    from redolab.redo.stored import history_charts

    later = T0 + timedelta(days=730)
    rows = [row(1, 0, 600, 600), row(2, 0, 600, 600), row(1, 0, 600, 600, base=later), row(2, 0, 600, 900, base=later)]
    req = requirement([ImportSeries(1, "two-years.csv", rows)], headroom_ratio=0.3)
    figure = json.loads(rate_figure(history_charts(req, "Europe/Berlin"), req, "Europe/Berlin"))
    assert "xaxis2" in figure["layout"]  # 2022 and 2024 each get a panel
    summed = [t for t in figure["data"] if t["name"].startswith("all threads")]
    assert len(summed) == 2 and {t["xaxis"] for t in summed} == {"x", "x2"}  # no line across the gap
    first = datetime(1970, 1, 1) + timedelta(milliseconds=values(summed[0]["x"])[0])
    assert f"{first:%Y-%m-%dT%H:%M}" == "2022-01-15T09:00"  # 08:00 UTC is 09:00 in Berlin
    assert figure["layout"]["xaxis"]["type"] == "date" and figure["layout"]["xaxis2"]["type"] == "date"
    assert "Europe/Berlin" in json.dumps(figure["layout"])


def _window_by_brute_force(segments, seconds):
    """Every window starting at each second of the series: the highest average (a reference)."""

    def overlap(start, end):
        return sum(rate * max(0.0, (min(e, end) - max(s, start)).total_seconds()) for s, e, rate in segments)

    first, last = segments[0][0], segments[-1][1]
    best = None
    moment = first
    while moment + timedelta(seconds=seconds) <= last:
        average = overlap(moment, moment + timedelta(seconds=seconds)) / seconds
        best = average if best is None or average > best else best
        moment += timedelta(seconds=1)
    return best


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 40), st.floats(0, 1000)), min_size=1, max_size=8),
       st.integers(1, 90))  # fmt: skip
def test_best_window_is_the_highest_average_of_any_window(pieces, seconds):
    segments, clock = [], T0
    for gap, length, rate in pieces:
        start = clock + timedelta(seconds=gap)
        segments.append((start, start + timedelta(seconds=length), rate))
        clock = start + timedelta(seconds=length)
    found = best_window(segments, seconds)
    expected = _window_by_brute_force(segments, seconds)
    if expected is None:
        assert found is None
    else:
        assert found is not None and found[0] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_a_preview_never_needs_less_for_all_threads_than_for_one():
    """The issue's '2.6 MiB/s for all threads, 48.88 for thread 1': a SYSMETRIC maximum above the
    summed averages. The redo analysis a preview and `redo analyze` show follows the same rule."""
    from redolab.redo.analytics import analyze

    rows = [row(1, 0, 600, 600, kind="rate", peak=40 * MIB), row(2, 0, 600, 600, kind="rate", peak=2 * MIB)]
    analysis = analyze(rows, headroom_ratio=0.3)
    assert analysis.summed_peak[0] == pytest.approx(2 * MIB)  # the averages added
    assert analysis.required_bytes_per_second == pytest.approx(40 * MIB * 1.3)
    req = requirement([ImportSeries(1, "sysmetric.tsv", rows)], headroom_ratio=0.3)
    assert req.summed_required_bytes_per_second == pytest.approx(analysis.required_bytes_per_second)


def test_the_evidence_choice_rules():
    from dataclasses import replace

    from redolab.planning.service import Selection

    measured, loopback = replace(run(1), tags=("before",)), run(2, loopback=True)
    assert Selection().run_choice(measured) == (True, "used")
    used, why = Selection().run_choice(loopback)
    assert not used and why.startswith("not the link")
    assert Selection(exclude_tags=frozenset({"before"})).run_choice(measured) == (False, "left out: tagged before")
    assert Selection(runs=frozenset({2})).run_choice(loopback)[0]  # named: used, and said to be loopback
    assert Selection(runs=frozenset({2})).run_choice(measured) == (False, "not chosen")
    chosen = Selection.parse(chosen=True, imports=[3], runs=[], exclude_tags=["x"])
    assert chosen.query == "chosen=1&import=3&exclude_tag=x" and chosen.runs == frozenset()
    assert Selection.parse(chosen=False, imports=[], runs=[7]).imports is None  # only the runs were narrowed


def test_a_missing_weekend_in_a_month_is_not_a_new_panel():
    import json

    from redolab.charts.redo import rate_figure
    from redolab.redo.stored import history_charts

    days = [d for d in range(30) if d % 7 not in (5, 6)]  # weekdays only: two-day gaps
    rows = [row(1, 86400 * d, 3600, 3600) for d in days]
    req = requirement([ImportSeries(1, "month.csv", rows)], headroom_ratio=0.3)
    figure = json.loads(rate_figure(history_charts(req, "UTC"), req))
    assert "xaxis2" not in figure["layout"]
