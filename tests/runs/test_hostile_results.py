"""Hostile result files that answered 500 (issue 32, item 9): an iperf3 congestion window divided
by a segment size so small that the quotient overflowed a float, and an oratcptest -freq file dated
at the end of year 9999 whose repetition after midnight left the calendar. Both are refused now
with a 422 naming the file and the field, and nothing is stored; the near cases still import."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# -- numbers longer than any oratcptest writes (fuzz seed 3201, input 2920: a 500) ------------------
ASYNC = (DATA / "oratcptest_async.txt").read_text()  # one test as oratcptest 2.x prints it
PASTED = (DATA / "oratcptest_pasted.txt").read_text()  # the same fields joined into one line
DIGITS = "9" * 133_038  # over the 4,300 digits int() converts, as the fuzzer's field was


@pytest.mark.parametrize(
    ("line", "value", "field"),
    [
        (3, "1 Mbyte", "Message payload"),
        (6, "1", "Number of connections"),
        (10, "20 seconds", "Statistics interval"),
        (11, "2 minutes", "Test duration"),
        (18, "71.322 Mbytes", "throughput"),
        (25, "4194304", "socket send buffer"),  # the granted buffer after "Test finished": the 500
        (26, "73.209 Mbytes", "Avg. throughput"),
    ],
)
def test_a_number_longer_than_oratcptest_writes_is_refused_naming_its_line(line, value, field):
    lines = ASYNC.splitlines()
    assert value in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(value, DIGITS + value, 1)
    with pytest.raises(ResultFileError) as refused:
        read_results("\n".join(lines), "oratcptest", test_date=date(2026, 3, 4))
    message = str(refused.value)
    assert message.startswith(f"line {line}: {field}: '999999999999…' is {len(DIGITS) + len(value):,} characters")
    assert message.endswith("not a number oratcptest writes (at most 40 characters)") and len(message) < 200


def test_a_socket_send_buffer_in_the_header_longer_than_a_number_is_refused():
    text = ASYNC.replace("Socket send buffer     = (system default)", f"Socket send buffer     = 4{'0' * 60}")
    with pytest.raises(ResultFileError, match=r"^line 7: Socket send buffer: '400000000000…' is 61 characters"):
        read_results(text, "oratcptest", test_date=date(2026, 3, 4))


def test_the_longest_real_numbers_still_import():
    """A 64-bit byte count (20 digits) is refused by the bounds, naming the field, not by its length;
    a 19-digit buffer within 1 EiB imports."""
    text = ASYNC.replace("Socket send buffer     = (system default)", "Socket send buffer     = 1152921504606846976")
    (run,) = read_results(text, "oratcptest", test_date=date(2026, 3, 4))
    assert run.sockbuf_bytes == 2**60
    too_big = ASYNC.replace("Socket send buffer = 4194304", "Socket send buffer = 18446744073709551615")
    with pytest.raises(ResultFileError, match=r"sndbuf_granted_bytes is 36893488147419103230, outside 0 to 1 EiB"):
        read_results(too_big, "oratcptest", test_date=date(2026, 3, 4))


def test_a_huge_field_answers_422_naming_the_file_and_line_and_stores_nothing(api_client, session):
    text = ASYNC.replace("Socket send buffer = 4194304", f"Socket send buffer ={DIGITS} 4194304")
    answer = _import(api_client, session, "async.txt", text)
    assert answer.status_code == 422, answer.text[:300]
    message = answer.json()["detail"][0]["msg"]
    assert message.startswith("async.txt: line 25: socket send buffer: '999999999999…' is 133,038 characters")
    assert session.query(Run).count() == 0


@settings(max_examples=60, deadline=None)
@given(
    layout=st.sampled_from([ASYNC, PASTED, FREQ]),
    where=st.integers(0, 10_000),
    filler=st.sampled_from(["9", "0", "1.", " ", "A", '"', "-", "\n"]),
    length=st.sampled_from([41, 4_301, 140_000]),
)
def test_a_huge_field_anywhere_is_read_or_refused_with_a_line(layout, where, filler, length):
    """Property: a field of 41 characters to 137 KiB put anywhere in oratcptest output is read within the
    bounds or refused with a ResultFileError (a 422), never another exception."""
    numbers = [match.start() for match in re.finditer(r"\d", layout)]
    at = numbers[where % len(numbers)]
    text = layout[:at] + filler * (length // len(filler)) + layout[at:]
    try:
        runs = read_results(text, "oratcptest", test_date=date(2026, 3, 4))
    except ResultFileError as error:
        assert len(str(error)) < 400
        return
    assert all(0 < run.bytes_per_second <= 10**12 and run.message_bytes <= 2**60 for run in runs)
