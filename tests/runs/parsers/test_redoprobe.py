"""The JSON-lines parser, on what the real redoprobe writes (a loopback run made here) and on the
histogram arithmetic worked by hand."""

import json

import pytest

from redolab.runs.parsers.redoprobe import (
    ProbeOutputError,
    ack_percentiles,
    histogram_percentile,
    interval_series,
    parse_line,
    run_metrics,
)
from tests.redoprobe.conftest import redoprobe, run_client, start_server  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def sync_run(redoprobe, tmp_path_factory):  # noqa: F811
    """A real two-stream SYNC run over loopback with a write directory: (client lines, end event)."""
    write_dir = tmp_path_factory.mktemp("standby")
    server = start_server(redoprobe, "--once", "--write-dir", str(write_dir))
    client = run_client(
        redoprobe,
        server.port,
        "--mode",
        "sync",
        "--conns",
        "2",
        "--message-size",
        "64K",
        "--duration",
        "1.5",
        "--interval",
        "0.5",
    )
    assert client.returncode == 0, client.stderr
    server.finish()
    lines = [line for line in client.stdout.splitlines() if line.strip()]
    return lines, next(e["data"] for e in client.events if e["event"] == "end")


def test_the_series_add_up_to_what_the_probe_reported(sync_run):
    lines, end = sync_run
    series = interval_series(lines)
    intervals = [json.loads(line)["data"] for line in lines if json.loads(line)["event"] == "interval"]
    assert len(series["end_seconds"]) == len(intervals) >= 2
    assert series["end_seconds"] == sorted(series["end_seconds"])
    assert len(series["streams"]) == 2  # one series per connection
    for index, interval in enumerate(intervals):
        seconds = interval["end_seconds"] - interval["start_seconds"]
        per_stream = sum(rates[index] for rates in series["streams"].values()) * seconds
        assert per_stream == pytest.approx(sum(s["bytes"] for s in interval["streams"]))
        assert series["bytes_per_second"][index] == interval["bytes_per_second"]
    assert all(rtt is None or rtt > 0 for rtt in series["rtt_us"])

    metrics = run_metrics(lines)
    ack = end["ack_latency_us"]
    assert metrics.ack_count == ack["count"] > 0
    assert metrics.ack_avg_seconds == pytest.approx(ack["avg"] / 1e6)
    assert ack["min"] / 1e6 <= metrics.ack_p50_seconds <= metrics.ack_p95_seconds <= metrics.ack_p99_seconds
    assert metrics.ack_p99_seconds <= ack["max"] / 1e6
    assert metrics.server_write_seconds == end["server_write_seconds"] > 0
    assert metrics.write_seconds_per_message == pytest.approx(end["server_write_seconds"] / ack["count"])


def test_percentiles_interpolate_within_a_bucket():
    # 10 acknowledgements: 4 in [100, 199] us, 6 in [200, 399] us
    histogram = [{"from_us": 200, "to_us": 399, "count": 6}, {"from_us": 100, "to_us": 199, "count": 4}]
    assert histogram_percentile(histogram, 40) == pytest.approx(199)  # the 4th of 10 ends the first bucket
    assert histogram_percentile(histogram, 50) == pytest.approx(200 + 199 * 1 / 6)
    assert histogram_percentile(histogram, 99, low=150, high=350) == 350  # kept within the measured max
    assert histogram_percentile([], 50) is None
    assert ack_percentiles({"histogram": histogram, "min": 120, "max": 390})["p50"] == pytest.approx(
        (200 + 199 / 6) / 1e6
    )


@pytest.mark.parametrize(
    "line",
    ["", "not json", "[1, 2]", '{"event": "bogus", "data": {}}', '{"event": "start"}', '{"event": "end", "data": 3}'],
)
def test_a_line_that_is_not_an_event_is_refused(line):
    with pytest.raises(ProbeOutputError):
        parse_line(line)
