"""Figures are pure: stored numbers in, plotly JSON out, in the display units (MiB/s, µs, s)."""

import json

import pytest

from redolab.charts.runs import latency_histogram_figure, tcp_info_figure, throughput_figure
from redolab.charts.sweeps import buffer_figure, connections_figure
from redolab.core.units import MIB
from tests.figures import values

SERIES = {
    "end_seconds": [1.0, 2.0],
    "bytes_per_second": [100 * MIB, 120 * MIB],
    "streams": {0: [60 * MIB, 70 * MIB], 1: [40 * MIB, 50 * MIB]},
    "rtt_us": [250, 300],
    "snd_cwnd": [40, 60],
    "retransmits": [0, 3],
}


def _point(x, *rates):
    ordered = sorted(rates)
    return {"x": x, "median": ordered[len(ordered) // 2], "low": ordered[0], "high": ordered[-1], "rates": list(rates)}


def test_throughput_is_drawn_in_mib_per_second_with_each_stream():
    figure = json.loads(throughput_figure(SERIES, duration_seconds=2))
    names = [trace["name"] for trace in figure["data"]]
    assert names == ["stream 0", "stream 1", "total"]
    total = figure["data"][-1]
    assert values(total["y"]) == [100, 120]
    assert values(total["customdata"]) == pytest.approx([838.8608, 1006.63296])  # Mbit/s
    assert figure["layout"]["yaxis"]["title"]["text"] == "throughput (MiB/s)"
    assert figure["layout"]["xaxis"]["range"] == [0, 2]
    single = json.loads(throughput_figure({**SERIES, "streams": {0: SERIES["bytes_per_second"]}}))
    assert [trace["name"] for trace in single["data"]] == ["total"]  # one stream: no duplicate line


def test_tcp_info_and_latency_figures_carry_their_units():
    tcp = json.loads(tcp_info_figure(SERIES))
    assert [values(trace["y"]) for trace in tcp["data"]] == [[250, 300], [40, 60], [0, 3]]
    assert tcp["layout"]["yaxis"]["title"]["text"] == "RTT (µs)"
    # counts are never negative: no axis from -1 to 1 when nothing was retransmitted, one tick per count
    quiet = json.loads(tcp_info_figure({**SERIES, "retransmits": [0, 0]}))
    assert [quiet["layout"][axis]["rangemode"] for axis in ("yaxis", "yaxis2", "yaxis3")] == ["nonnegative"] * 3
    assert quiet["layout"]["yaxis3"]["dtick"] == 1 and quiet["layout"]["yaxis3"]["tickformat"] == ","
    busy = json.loads(tcp_info_figure({**SERIES, "retransmits": [1815, 20_000]}))
    assert "dtick" not in busy["layout"]["yaxis3"]
    histogram = json.loads(latency_histogram_figure([{"from_us": 128, "to_us": 255, "count": 9}]))
    assert histogram["data"][0]["x"] == ["128–255 µs"] and histogram["data"][0]["y"] == [9]


def test_the_connection_ladder_marks_its_plateau_and_the_requirement():
    series = [{"name": "ladder", "points": [_point(1, 50 * MIB, 52 * MIB), _point(2, 90 * MIB), _point(4, 91 * MIB)]}]
    figure = json.loads(connections_figure(series, plateau=2, required_bytes_per_second=80 * MIB))
    median = figure["data"][0]
    assert median["x"] == [1, 2, 4] and median["y"] == [52, 90, 91]
    assert median["error_y"]["arrayminus"] == [2, 0, 0]  # the spread of the repetitions
    assert figure["data"][1]["name"] == "ladder: each repetition"
    texts = [a["text"] for a in figure["layout"]["annotations"]]
    assert "plateau from 2 connections" in texts
    assert "redo the link must carry: 80.0 MiB/s" in texts


def test_buffer_sizes_are_labelled_in_binary_units_on_a_log_axis():
    series = [{"name": "1 connection", "points": [_point(262144, 10 * MIB), _point(4 * MIB, 40 * MIB)]}]
    figure = json.loads(buffer_figure(series, axis_title="socket buffer"))
    assert figure["layout"]["xaxis"]["type"] == "log"
    assert figure["layout"]["xaxis"]["ticktext"] == ["256 KiB", "4 MiB"]


def test_runs_over_time_are_a_line_per_mode_never_joined():
    from datetime import UTC, datetime

    from redolab.charts.sweeps import series_over_time_figure

    at = [datetime(2026, 3, 4, h, tzinfo=UTC) for h in (9, 10, 11)]
    figure = json.loads(
        series_over_time_figure([("ASYNC runs", at[:2], [100 * MIB, None]), ("SYNC runs", at[2:], [20 * MIB])])
    )
    assert [trace["name"] for trace in figure["data"]] == ["ASYNC runs", "SYNC runs"]
    assert [values(trace["y"]) for trace in figure["data"]] == [[100], [20]]  # a failed run is no point
    assert figure["data"][1]["x"] == ["2026-03-04T11:00:00+00:00"]
