"""Charts for a change document (issue 58): every figure carries its title block in its layout (so a PNG
or SVG saved from plotly's toolbar keeps it), names every trace, leaves a cell without data blank,
names what a histogram counts, and never draws an axis of microseconds or a plateau after one point."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from redolab.charts import TitleBlock
from redolab.charts.redo import distribution_figure, heatmap_figure, profile_figure, rate_figure
from redolab.charts.rehearsals import rehearsal_figure
from redolab.charts.runs import latency_histogram_figure, tcp_info_figure, throughput_figure
from redolab.charts.sweeps import buffer_figure, connections_figure
from redolab.charts.watches import watch_figure
from redolab.core.units import MIB
from redolab.redo.requirement import ImportSeries, requirement
from redolab.redo.schemas import RedoInterval
from redolab.redo.stored import heatmap_cells, history_charts

T0 = datetime(2022, 1, 17, 8, 0, tzinfo=UTC)  # a Monday
BLOCK = TitleBlock(
    what="Throughput received, run #7",
    environment="<b>ERP</b> prod",
    hosts="p1 → s1",
    period="measured 2022-01-17 08:00–08:01 UTC (60 s)",
    measured="ASYNC · 1 connection · 1 MiB messages · buffer autotuned",
)
SERIES = {
    "end_seconds": [1.0, 2.0],
    "bytes_per_second": [100 * MIB, 120 * MIB],
    "streams": {0: [100 * MIB, 120 * MIB]},
    "rtt_us": [250, 300],
    "snd_cwnd": [40, 60],
    "retransmits": [0, 3],
}


def _row(thread: int, start_s: float, seconds: float, mib: float, kind: str = "log") -> RedoInterval:
    start = T0 + timedelta(seconds=start_s)
    return RedoInterval(
        line=1, thread=thread, start=start, end=start + timedelta(seconds=seconds), seconds=None,
        bytes=mib * MIB, kind=kind, sequence=int(start.timestamp()) if kind == "log" else None,
    )  # fmt: skip


def _history(kind: str = "log"):
    rows = [_row(1, 0, 600, 600, kind), _row(2, 0, 600, 300, kind), _row(1, 600, 600, 900, kind)]
    req = requirement([ImportSeries(1, "awr.csv", rows)], headroom_ratio=0.3)
    return req, history_charts(req, "UTC")


def _title(figure: dict) -> str:
    return figure["layout"]["title"]["text"]


def test_the_title_block_says_what_where_and_when_escaped_in_the_layout():
    figure = json.loads(throughput_figure(SERIES, duration_seconds=2, title=BLOCK))
    text = _title(figure)
    assert text.startswith("<b>Throughput received, run #7</b><br>")
    assert "&lt;b&gt;ERP&lt;/b&gt; prod · p1 → s1" in text  # the user's name is text, not markup
    assert "measured 2022-01-17 08:00–08:01 UTC (60 s)" in text and "ASYNC · 1 connection" in text
    assert figure["layout"]["title"]["automargin"] is True and figure["layout"]["margin"]["t"] >= BLOCK.height
    untitled = json.loads(throughput_figure(SERIES, duration_seconds=2))
    assert "title" not in untitled["layout"]
    assert figure["layout"]["height"] - untitled["layout"]["height"] == BLOCK.height - 30  # the plot keeps its size
    loopback = TitleBlock(what="x", hosts="here → here", loopback=True)
    assert loopback.lines() == ["x", "here → here", "This machine (loopback): the probe, not the link"]


def test_every_chart_takes_its_title_block_and_names_its_traces():
    req, charts = _history()
    measured = {"end_seconds": [1.0, 2.0], "generated_bytes": [MIB, 2 * MIB], "received_bytes": [MIB, 2 * MIB]}
    check = SimpleNamespace(at=T0, measured_bytes_per_second=50 * MIB, required_bytes_per_second=40 * MIB)
    point = {"x": 1, "median": 10 * MIB, "low": 10 * MIB, "high": 10 * MIB, "rates": [10 * MIB]}
    documents = [
        throughput_figure(SERIES, title=BLOCK),
        tcp_info_figure(SERIES, BLOCK),
        latency_histogram_figure([{"from_us": 128, "to_us": 255, "count": 9}], BLOCK),
        connections_figure([{"name": "ladder", "points": [point]}], title=BLOCK),
        buffer_figure(
            [{"name": "1 connection", "points": [point]}], axis_title="socket buffer (KiB, MiB)", title=BLOCK
        ),
        rehearsal_figure(measured, None, BLOCK),
        watch_figure([check], ["ok"], [], title=BLOCK),
        rate_figure(charts, req, "UTC", BLOCK),
        heatmap_figure(charts, "UTC", BLOCK),
        distribution_figure(charts, {"log": 3}, BLOCK),
    ]
    for document in documents:
        figure = json.loads(document)
        assert _title(figure).startswith("<b>Throughput received, run #7</b>")
        assert all(trace.get("name") for trace in figure["data"]), [t.get("name") for t in figure["data"]]
        for axis in (key for key in figure["layout"] if key.startswith(("xaxis", "yaxis"))):
            if figure["layout"][axis].get("title"):  # every axis named carries its unit or what it counts
                assert "(" in figure["layout"][axis]["title"]["text"], figure["layout"][axis]["title"]
    assert profile_figure(charts, BLOCK) is None  # no hour-of-day rows: nothing drawn


def test_the_summed_line_is_named_once_in_the_legend():
    req, charts = _history()
    figure = json.loads(rate_figure(charts, req, "UTC"))
    summed = [trace for trace in figure["data"] if trace["legendgroup"] == "summed"]
    assert summed and [trace["name"] for trace in summed] == ["all threads, summed where they overlap"] * len(summed)
    assert [trace["showlegend"] for trace in summed].count(True) == 1
    assert "all threads" in summed[0]["hovertemplate"]


def test_heat_map_cells_without_data_are_blank_not_zero():
    cells = heatmap_cells([(T0, T0 + timedelta(hours=2), 3 * MIB)], "UTC")
    assert cells[0][8] == cells[0][9] == 3 * MIB and cells[0][10] is None and cells[3][8] is None
    charts = SimpleNamespace(heatmap=cells)
    trace = json.loads(heatmap_figure(charts, "UTC"))["data"][0]
    assert trace["z"][0][8] == 3 and trace["z"][0][10] is None  # null: plotly leaves the cell blank
    assert trace["hoverongaps"] is False and sum(z is None for day in trace["z"] for z in day) == 7 * 24 - 2


def test_the_histogram_says_what_it_counts():
    _, charts = _history("snapshot")
    figure = json.loads(distribution_figure(charts, {"snapshot": 3}))
    assert figure["data"][0]["name"] == "snapshot intervals"
    assert figure["layout"]["yaxis"]["title"]["text"] == "snapshot intervals (count)"
    assert "snapshot intervals" in figure["data"][0]["hovertemplate"]
    mixed = json.loads(distribution_figure(charts, {"log": 5, "snapshot": 9}))
    assert mixed["layout"]["yaxis"]["title"]["text"] == "rows (snapshot intervals, archived logs) (count)"
    logs = json.loads(distribution_figure(charts, {"log": 5}))
    assert logs["layout"]["yaxis"]["title"]["text"] == "archived logs (count)"


def test_a_watch_with_one_check_gets_an_hour_not_a_millisecond():
    check = SimpleNamespace(at=T0, measured_bytes_per_second=50 * MIB, required_bytes_per_second=40 * MIB)
    one = json.loads(watch_figure([check], ["ok"], []))
    first, last = (datetime.fromisoformat(end) for end in one["layout"]["xaxis"]["range"])
    assert last - first == timedelta(hours=1) and first < T0 < last
    daily = json.loads(watch_figure([check], ["ok"], [], T0 + timedelta(minutes=5), every_seconds=86400))
    first, last = (datetime.fromisoformat(end) for end in daily["layout"]["xaxis"]["range"])
    assert last - first == timedelta(days=1)
    window = (T0 - timedelta(days=7), T0 + timedelta(minutes=1))
    week = json.loads(watch_figure([check], ["ok"], [], window=window))
    assert week["layout"]["xaxis"]["range"] == [window[0].isoformat(), window[1].isoformat()]
    assert week["layout"]["uirevision"] == "watch"  # the user's zoom survives the page's refresh


def test_a_long_range_draws_at_most_its_points_and_every_band():
    checks = [
        SimpleNamespace(at=T0 + timedelta(minutes=15 * i), measured_bytes_per_second=(50 - (i == 700) * 20) * MIB,
                        required_bytes_per_second=40 * MIB)
        for i in range(2000)
    ]  # fmt: skip
    states = ["ok"] * 700 + ["failing"] * 3 + ["ok"] * 1297
    figure = json.loads(watch_figure(checks, states, []))
    measured = figure["data"][1]["y"]
    assert len(measured) <= 502 and 30 in measured  # the dip is kept
    assert len(figure["layout"]["shapes"]) == 3  # OK, FAILING, OK: bands from every check


def test_no_plateau_after_the_first_point_and_a_best_count_is_not_a_plateau():
    point = {"x": 1, "median": 10 * MIB, "low": 10 * MIB, "high": 10 * MIB, "rates": [10 * MIB]}
    first = json.loads(connections_figure([{"name": "live", "points": [point]}]))
    assert not any("plateau" in a["text"] for a in first["layout"].get("annotations", []))
    ended = json.loads(connections_figure([{"name": "done", "points": [point]}], plateau=1, reached=False))
    assert [a["text"] for a in ended["layout"]["annotations"]] == ["best at 1 connection"]
