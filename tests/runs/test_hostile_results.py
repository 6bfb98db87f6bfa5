"""Hostile result files that answered 500 (issue 32, item 9): an iperf3 congestion window divided
by a segment size so small that the quotient overflowed a float, and an oratcptest -freq file dated
at the end of year 9999 whose repetition after midnight left the calendar. Both are refused now
with a 422 naming the file and the field, and nothing is stored; the near cases still import."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from redolab.runs.models import Run
from redolab.runs.parsers import read_results
from redolab.runs.parsers.results import ResultFileError
from tests.web.test_runs import local_env

DATA = Path(__file__).parent / "data"
IPERF3 = json.loads((DATA / "iperf3_two_streams.json").read_text())
FREQ = (DATA / "oratcptest_freq.txt").read_text()  # three repetitions, the last after midnight


def _iperf3(mss, cwnd=2**60, key="tcp_mss_default") -> str:
    document = json.loads(json.dumps(IPERF3))
    document["start"].pop("tcp_mss_default", None)
    document["start"][key] = mss
    for interval in document["intervals"]:
        for stream in interval["streams"]:
            stream["snd_cwnd"] = cwnd
    return json.dumps(document)


def _import(api_client, session, name: str, text: str, test_date: str = "2026-03-04"):
    environment, primary, standby = local_env(session)
    return api_client.post(
        f"/api/v1/environments/{environment.id}/runs/import",
        data={"client_host_id": primary.id, "server_host_id": standby.id, "test_date": test_date},
        files=[("files", (name, text.encode(), "application/octet-stream"))],
    )


@pytest.mark.parametrize(
    ("mss", "shown"),
    [(1e-300, "1e-300"), (5e-324, "5e-324"), (0.5, "0.5"), (1460.5, "1460.5"), (-1, "-1"), (70000, "70000")],
)
def test_a_window_over_a_segment_size_below_one_byte_is_refused_naming_the_field(api_client, session, mss, shown):
    answer = _import(api_client, session, "cwnd.json", _iperf3(mss))
    assert answer.status_code == 422, answer.text
    message = answer.json()["detail"][0]["msg"]
    assert message.startswith("cwnd.json: start.tcp_mss_default is ") and shown in message, message
    assert session.query(Run).count() == 0


def test_the_segment_size_iperf3_writes_with_m_is_named_too():
    with pytest.raises(ResultFileError, match=r"^start\.tcp_mss is 1e-300: a segment size is a whole number"):
        read_results(_iperf3(1e-300, key="tcp_mss"), "iperf3")


@pytest.mark.parametrize(("mss", "segments"), [(0, None), (None, None), (1, 2**60), (1448, round(2**60 / 1448))])
def test_a_window_over_a_real_segment_size_still_imports(mss, segments):
    """0 or none: the platform gave iperf3 no segment size, so the window is not counted in segments."""
    (run,) = read_results(_iperf3(mss), "iperf3")
    windows = {stream.get("snd_cwnd") for interval in run.intervals for stream in interval["streams"]}
    assert windows == {segments}


def test_an_oratcptest_freq_file_dated_at_the_end_of_9999_is_refused_naming_the_date(api_client, session):
    answer = _import(api_client, session, "freq.txt", FREQ, test_date="9999-12-31")
    assert answer.status_code == 422, answer.text
    message = answer.json()["detail"][0]["msg"]
    assert message == (
        "freq.txt: the test date 9999-12-31 is outside the years 1970 to 2100: give the day the tests ran"
    ), message
    assert session.query(Run).count() == 0


@pytest.mark.parametrize("day", [date(9999, 12, 31), date(1, 1, 1), date(1969, 12, 31), date(2101, 1, 1)])
def test_a_test_date_outside_the_bounds_is_refused_before_any_repetition_is_dated(day):
    with pytest.raises(ResultFileError, match=rf"the test date {day.isoformat()} is outside the years"):
        read_results(FREQ, "oratcptest", test_date=day)


def test_a_repetition_after_midnight_into_2101_is_refused_by_the_bounds():
    with pytest.raises(ResultFileError, match=r"started_at is 2101-01-01 00:30:00, outside the years 1970 to 2100"):
        read_results(FREQ, "oratcptest", test_date=date(2100, 12, 31))
    runs = read_results(FREQ, "oratcptest", test_date=date(2100, 12, 30))
    assert [run.started_at.isoformat() for run in runs][-1] == "2100-12-31T00:30:00+00:00"


def test_more_repetitions_than_a_file_may_hold_are_refused_before_they_are_dated():
    block = FREQ[FREQ.index("(22:30:00)") : FREQ.index("(23:30:00)")]
    text = FREQ[: FREQ.index("(22:30:00)")] + block * 201
    with pytest.raises(ResultFileError, match=r"the test has 201 repetitions: at most 200"):
        read_results(text, "oratcptest", test_date=date(2026, 3, 4))
