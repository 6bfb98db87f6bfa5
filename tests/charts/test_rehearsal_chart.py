"""The rehearsal figure: cumulative bytes, backlog and lag from the rehearsal's measured series (as
rehearsals.results.measured stores it), the model's lag on the same axes, units on every axis, SVG
traces only (the CSP forbids WebGL)."""

import json
from datetime import timedelta

import pytest

from redolab.charts.rehearsals import rehearsal_figure, rehearsal_series
from redolab.core.downsample import RUN_POINTS
from redolab.core.units import MIB
from redolab.planning.rehearsal_model import predict_rehearsal
from redolab.rehearsals.window import choose_window
from tests.figures import values
from tests.rehearsals.history import T0, requirement_of, row


def series_of(points) -> dict:
    """The stored shape: one list per key over the interval ends, bytes cumulative."""
    keys = ("end_seconds", "generated_bytes", "sent_bytes", "received_bytes", "backlog_bytes", "lag_seconds")
    return {key: [point[i] for point in points] for i, key in enumerate(keys)}


# (end, cumulative generated, sent, received, backlog, lag)
POINTS = [
    (2.0, 4 * MIB, 2 * MIB, 2 * MIB, 3 * MIB, 1.5),  # out of order on purpose: drawn in time order
    (1.0, 2 * MIB, MIB, MIB, MIB, 0.5),
    (3.0, 4 * MIB, 4 * MIB, 4 * MIB, MIB, 0.5),
]
SERIES = series_of(POINTS)


def prediction():
    req = requirement_of([row(1, 60 * i, 60, 120 if i < 5 else 30) for i in range(15)])
    return predict_rehearsal(req, choose_window(req, (T0, T0 + timedelta(minutes=15))), drain_bytes_per_second=MIB)


def test_three_panels_with_units_and_the_model_on_the_measured_axes():
    figure = json.loads(rehearsal_figure(SERIES, prediction()))
    traces = {trace["name"]: trace for trace in figure["data"]}
    assert {t["type"] for t in figure["data"]} == {"scatter"}
    assert "scattergl" not in json.dumps(figure["data"])  # (the theme lists defaults for every type)
    assert values(traces["generated (MiB)"]["y"]) == [2, 4, 4]  # cumulative
    assert values(traces["received (MiB)"]["y"]) == [1, 2, 4]
    assert values(traces["generated (MiB)"]["x"]) == [1, 2, 3]
    assert values(traces["backlog, measured (MiB)"]["y"]) == [1, 3, 1]
    assert values(traces["lag, measured (s)"]["y"]) == [0.5, 1.5, 0.5]
    assert traces["lag, model (s)"]["yaxis"] == traces["lag, measured (s)"]["yaxis"] == "y3"
    assert traces["backlog, model (MiB)"]["yaxis"] == traces["backlog, measured (MiB)"]["yaxis"] == "y2"
    assert max(values(traces["lag, model (s)"]["y"])) == pytest.approx(300)
    assert max(values(traces["backlog, model (MiB)"]["y"])) == pytest.approx(300)
    layout = figure["layout"]
    titles = [layout[axis]["title"]["text"] for axis in ("yaxis", "yaxis2", "yaxis3")]
    assert titles == ["cumulative (MiB)", "backlog (MiB)", "transport lag (s)"]
    assert layout["xaxis3"]["title"]["text"] == "time from the start of the replay (s)"


def test_without_a_model_only_the_measurement_is_drawn_and_a_missing_value_is_a_gap():
    gap = series_of([*POINTS, (4.0, 5 * MIB, None, None, None, None)])
    figure = json.loads(rehearsal_figure(gap))
    names = [trace["name"] for trace in figure["data"]]
    assert names == ["generated (MiB)", "sent (MiB)", "received (MiB)", "backlog, measured (MiB)", "lag, measured (s)"]
    lag = values(figure["data"][-1]["y"])
    assert lag[:3] == [0.5, 1.5, 0.5] and lag[3] != lag[3]  # NaN: not a zero
    assert values(figure["data"][0]["y"])[-1] == 5
    series = rehearsal_series({**SERIES, "end_seconds": [None, 1.0, 3.0]})
    assert series["end_seconds"].tolist() == [1, 3]  # a point without an end is not drawn
    assert series["lag_seconds"].tolist() == [0.5, 0.5]  # and the others stay with their own end


def test_a_result_without_bytes_sent_draws_the_rest():
    older = {key: values for key, values in SERIES.items() if key != "sent_bytes"}
    figure = json.loads(rehearsal_figure(older))
    traces = {trace["name"]: values(trace["y"]) for trace in figure["data"]}
    assert traces["received (MiB)"] == [1, 2, 4]
    assert all(v != v for v in traces["sent (MiB)"])


def test_an_hour_of_one_second_intervals_is_thinned_keeping_the_worst_lag():
    hour = series_of([(float(s), s * MIB, s * MIB, s * MIB, 0, 100.0 if s == 1234 else 0.25) for s in range(1, 3601)])
    figure = json.loads(rehearsal_figure(hour))
    lag = figure["data"][-1]
    assert len(values(lag["x"])) <= RUN_POINTS + 2 and max(values(lag["y"])) == 100.0
    assert values(figure["data"][0]["y"])[-1] == 3600  # the cumulative total survives the thinning


def test_the_backlogs_peak_survives_the_thinning_where_the_lags_is_elsewhere():
    """A day of one-second intervals: the lag peaks at one moment and the backlog at another (a slow
    drain of a big burst); both peaks are drawn, as the page's figures state them, and the time axis
    writes 86,400 s, not 86.4k."""
    day = series_of(
        [
            (float(s), s * MIB, s * MIB, s * MIB, 900 * MIB if s == 50_000 else MIB, 300.0 if s == 1234 else 0.25)
            for s in range(1, 86_401)
        ]
    )
    figure = json.loads(rehearsal_figure(day))
    backlog = next(t for t in figure["data"] if t["name"] == "backlog, measured (MiB)")
    lag = next(t for t in figure["data"] if t["name"] == "lag, measured (s)")
    assert max(values(backlog["y"])) == 900 and max(values(lag["y"])) == 300.0
    assert len(values(lag["x"])) <= 2 * (RUN_POINTS + 2)
    layout = figure["layout"]
    assert all(layout[axis].get("tickformat") == "," for axis in ("xaxis", "xaxis3", "yaxis2", "yaxis3")), layout
