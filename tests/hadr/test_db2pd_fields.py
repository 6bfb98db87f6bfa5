"""db2pd -hadr fields read as IBM documents them: the current gap beside HADR_LOG_GAP's running
average, the HADR wait per log write (lifetime, captured period, recent; none under 100 writes), the
settings of both sides compared, one pair counted once, recommendations from the values in use, and
the chart's series. Captures are written in db2pd's 10.1+ layout by tests/hadr/db2pd_writer.py."""

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.charts.hadr import monitoring_figure
from redolab.core.errors import FieldError
from redolab.hadr import db2pd, recommend, service
from redolab.hadr.calculator import receive_buffer_pages
from redolab.hadr.models import HadrSample
from redolab.hadr.pairs import MIN_WAIT_COUNT, pair_views
from redolab.redo.parsers import RedoInputError
from tests.factories import make_environment
from tests.hadr.db2pd_writer import Side, render

FIXTURES = Path(__file__).parents[1] / "fixtures" / "db2"
BOTH_SIDES = FIXTURES / "db2pd_hadr_111_both_sides.txt"
MIB = 1024 * 1024
T0 = datetime(2026, 11, 24, 9, 0, 0)


def views_of(text: str):
    parsed = db2pd.parse(text.splitlines())
    return pair_views([(sample.at, sample) for sample in parsed.samples])


def test_both_sides_of_one_pair_count_once_with_both_gaps(session):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    record = service.import_captures(
        session=session, environment=environment, path=BOTH_SIDES, filename="salesdb.txt", imported_by="alice"
    )
    assert record.notes[0].startswith(
        "1 HADR pair: SALESDB: db2sales@db2a.example.net member 0 → db2sales@db2b.example.net member 0 "
        "(primary and standby sides, 6 captures)"
    )
    watched = service.monitoring(session=session, environment=environment)
    # the running average (HADR_LOG_GAP) reached 52,428,800 bytes; the positions were 8 MiB apart at most
    assert watched.largest_running_average_gap_bytes == 52_428_800
    assert watched.largest_current_gap_bytes == 8 * MIB
    (view,) = watched.pairs
    assert view.latest_current_gap_bytes == 0 and view.largest_current_gap[2] == "primary"
    body = watched.to_json()
    assert body["hadr_pairs"] == 1 and body["largest_current_log_gap_bytes"] == 8 * MIB
    assert body["largest_running_average_log_gap_bytes"] == 52_428_800
    assert (
        "running average" in body["log_gap_basis"] and "PRIMARY_LOG_POS minus STANDBY_LOG_POS" in body["log_gap_basis"]
    )
    assert body["samples"][0]["current_log_gap_bytes"] == 0
    assert body["samples"][0]["running_average_log_gap_bytes"] == 52_428_800


def test_hadr_wait_per_log_write_names_its_basis():
    (view,) = views_of(BOTH_SIDES.read_text())
    figures = {figure.basis: figure for figure in view.waits}
    # the latest capture's counters: 947.311 s over 2,003,517 writes since activation, 0.47 ms each
    assert figures["lifetime"].seconds_per_write == pytest.approx(947.311 / 2_003_517)
    assert figures["lifetime"].writes == 2_003_517
    # between the first and the latest capture: 123 s over 3,000 writes, 41 ms each: a hundred times the lifetime
    assert figures["captured period"].seconds_per_write == pytest.approx(123.0 / 3000)
    assert figures["recent"].seconds_per_write == pytest.approx(0.041003)
    assert "LOG_HADR_WAIT_ACCUMULATED / LOG_HADR_WAIT_COUNT" in figures["lifetime"].explanation
    assert "LOG_HADR_WAIT_RECENT_AVG" in figures["recent"].explanation


def test_a_lifetime_count_past_two_to_the_31_is_read():
    busy = Side("PRIMARY", T0, wait_count=5_000_000_000, wait_accumulated="2500000.000")
    (view,) = views_of(render([[busy]]))
    assert view.waits[0].seconds_per_write == pytest.approx(0.0005)


@pytest.mark.parametrize("count", [1, 2, MIN_WAIT_COUNT - 1])
def test_a_count_under_the_threshold_gives_no_per_write_figure(count):
    stalled = Side("PRIMARY", T0, wait_count=count, wait_accumulated="311.250", wait_recent_avg="311.250077")
    (view,) = views_of(render([[stalled]]))
    figures = {figure.basis: figure for figure in view.waits}
    assert figures["lifetime"].seconds_per_write is None and figures["recent"].seconds_per_write is None
    assert f"under {MIN_WAIT_COUNT} writes" in figures["lifetime"].explanation
    assert ("one stall, not a per-commit cost" in figures["lifetime"].explanation) == (count == 1)


def test_settings_of_the_two_sides_are_compared_with_both_values():
    (view,) = views_of(BOTH_SIDES.read_text())
    found = {mismatch.setting: mismatch for mismatch in view.mismatches}
    assert set(found) == {"PEER_WINDOW", "SOCK_RECV_BUF granted"}
    assert (found["PEER_WINDOW"].primary, found["PEER_WINDOW"].standby) == ("300 s", "120 s")
    assert (found["SOCK_RECV_BUF granted"].primary, found["SOCK_RECV_BUF granted"].standby) == (
        "131,072 bytes",
        "374,400 bytes",
    )
    assert "300 s on the primary side, 120 s on the standby side" in found["PEER_WINDOW"].text
    assert any("standby side: HEARTBEAT_MISSED 4 of HEARTBEAT_EXPECTED 480 (0.8 %)" in w for w in view.warnings)
    assert view.settings["PRIMARY"]["hadr_timeout_seconds"] == view.settings["STANDBY"]["hadr_timeout_seconds"] == 60


def test_a_buffer_granted_below_the_request_is_a_warning():
    capped = Side("PRIMARY", T0, send_buffer=(4_194_304, 425_984))
    (view,) = views_of(render([[capped]]))
    assert any(
        "send buffer granted (425,984 bytes) is below DB2_HADR_SOSNDBUF (4,194,304 bytes)" in w for w in view.warnings
    )


def test_recommendations_start_from_the_values_in_use():
    views = views_of(BOTH_SIDES.read_text())
    found = {
        r.setting: r
        for r in recommend.recommendations(views, sync_mode="NEARSYNC", buffer=None, socket_buffer_bytes=262_144)
    }
    # heartbeats were missed with a 60 s timeout: raised, and said so
    assert found["HADR_TIMEOUT"].value == 120 and "raised from 60 s" in found["HADR_TIMEOUT"].why
    assert found["HADR_TIMEOUT"].captured == "60 s on both sides"
    # the two peer windows differ: the larger, never the 120 s default below the primary's 300 s
    assert found["HADR_PEER_WINDOW"].value == 300 and "the larger of the values in use" in found["HADR_PEER_WINDOW"].why
    assert found["HADR_PEER_WINDOW"].captured == "300 s on the primary side; 120 s on the standby side"
    assert found["DB2_HADR_SORCVBUF"].value == 262_144
    assert (
        "granted 131,072 bytes on the primary side; 374,400 bytes on the standby side"
        in found["DB2_HADR_SORCVBUF"].captured
    )
    async_mode = {
        r.setting: r for r in recommend.recommendations(views, sync_mode="ASYNC", buffer=None, socket_buffer_bytes=None)
    }
    assert async_mode["HADR_PEER_WINDOW"].value == 300 and "no effect" in async_mode["HADR_PEER_WINDOW"].why


def test_the_receive_buffer_is_never_sized_from_the_running_average(session):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    service.import_captures(
        session=session, environment=environment, path=BOTH_SIDES, filename="s.txt", imported_by="alice"
    )
    pages, why = service.hadr_settings(session=session, environment=environment, requirement=None)["hadr_buffer"]
    # 8 MiB current gap + 30 % = 2,663 pages, below the 4,096 in use: kept, and said so
    assert pages == 4096 and "the size in use (4,096 pages) is kept" in why and "current log gap" in why
    assert "52,428,800" not in why


@settings(max_examples=80, deadline=None)
@given(
    captured=st.integers(1, 1 << 20),
    gap=st.integers(0, 1 << 34),
    average=st.integers(0, 1 << 34),
    rate=st.one_of(st.none(), st.floats(1, 1e9)),
    fullest=st.one_of(st.none(), st.floats(0, 100)),
    headroom=st.floats(0, 1),
)
def test_the_buffer_never_goes_below_the_size_in_use(captured, gap, average, rate, fullest, headroom):
    """Property: DB2_HADR_BUF_SIZE is never below the pages in use, and the running average has no say."""
    pages, why = receive_buffer_pages(
        largest_current_gap_bytes=gap,
        peak_rate_bytes_per_second=rate,
        headroom_ratio=headroom,
        captured_pages=captured,
        fullest_percent=fullest,
    )
    assert pages >= captured and why
    if fullest is not None and fullest >= 90:
        assert pages >= 2 * captured


@settings(max_examples=60, deadline=None)
@given(
    timeouts=st.tuples(st.integers(1, 3600), st.integers(1, 3600)),
    windows=st.tuples(st.integers(0, 3600), st.integers(0, 3600)),
    missed=st.integers(0, 50),
    mode=st.sampled_from(["SYNC", "NEARSYNC", "ASYNC", "SUPERASYNC"]),
    requested=st.integers(0, 1 << 24),
    rule=st.integers(1024, 1 << 26),
)
def test_recommendations_never_go_below_a_value_in_use(timeouts, windows, missed, mode, requested, rule):
    """Property: HADR_TIMEOUT, HADR_PEER_WINDOW and DB2_HADR_SOSNDBUF are never recommended below the
    largest value the captures show."""
    sides = [
        Side("PRIMARY", T0, timeout=timeouts[0], peer_window=windows[0], send_buffer=(requested, 2 * requested)),
        Side("STANDBY", T0 + timedelta(seconds=1), timeout=timeouts[1], peer_window=windows[1],
             heartbeats_missed=missed),
    ]  # fmt: skip
    views = views_of(render([[sides[0]], [sides[1]]]))
    found = {
        r.setting: r for r in recommend.recommendations(views, sync_mode=mode, buffer=None, socket_buffer_bytes=rule)
    }
    assert found["HADR_TIMEOUT"].value >= max(timeouts)
    assert found["HADR_PEER_WINDOW"].value >= max(windows)
    assert found["DB2_HADR_SOSNDBUF"].value >= requested
    assert all(r.why for r in found.values())


@pytest.mark.parametrize(
    "variant",
    [
        {"crlf": True},
        {"indent": "    "},
        {"indent": "\t", "crlf": True},
        {"separator": "#################### {number}"},
    ],
)
def test_every_variant_reads_to_the_same_samples(variant):
    captures = [
        [Side("PRIMARY", T0 + timedelta(minutes=n), primary_pos=10**9 + n * MIB, standby_pos=10**9)] for n in range(3)
    ]
    plain = db2pd.parse(render(captures).splitlines()).samples
    other = db2pd.parse(render(captures, **variant).splitlines()).samples
    assert [
        (s.at, s.current_gap_bytes, s.wait_count, s.sock_send_actual_bytes, s.peer_window_seconds) for s in other
    ] == [(s.at, s.current_gap_bytes, s.wait_count, s.sock_send_actual_bytes, s.peer_window_seconds) for s in plain]
    assert [s.current_gap_bytes for s in other] == [0, MIB, 2 * MIB]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("SOCK_SEND_BUF_REQUESTED,ACTUAL(bytes) = 0, 87040", "SOCK_SEND_BUF_REQUESTED,ACTUAL(bytes) = 0 87040",
         r"line 30, SOCK_SEND_BUF_REQUESTED,ACTUAL\(bytes\): '0 87040' is not 'requested bytes, granted bytes'"),
        ("LOG_HADR_WAIT_ACCUMULATED(seconds) = 824.311", "LOG_HADR_WAIT_ACCUMULATED(seconds) = 824,311",
         r"line 28, LOG_HADR_WAIT_ACCUMULATED\(seconds\): '824,311' is not a number of seconds"),
        ("PEER_WINDOW(seconds) = 300", "PEER_WINDOW(seconds) = -300",
         r"line \d+, PEER_WINDOW\(seconds\): '-300' is negative"),
    ],
)  # fmt: skip
def test_a_malformed_field_names_the_file_line_and_field(session, tmp_path, old, new, message):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    bad = tmp_path / "bad.txt"
    bad.write_text(BOTH_SIDES.read_text().replace(old, new, 1))
    with pytest.raises(FieldError, match="bad.txt: " + message):
        service.import_captures(session=session, environment=environment, path=bad, filename="bad.txt", imported_by="a")
    with pytest.raises(RedoInputError):
        db2pd.parse(bad.read_text().splitlines())


def test_two_databases_months_apart_are_separate_series_with_times(session, tmp_path):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    service.import_captures(
        session=session, environment=environment, path=BOTH_SIDES, filename="nov.txt", imported_by="alice"
    )
    august = tmp_path / "aug.txt"
    base = 5 * 10**9
    captures = [
        [Side("PRIMARY", datetime(2026, 8, 3, 22, n), database="HRDB", primary_pos=base + n * MIB, standby_pos=base)]
        for n in range(4)
    ]
    august.write_text(render(captures))
    service.import_captures(
        session=session, environment=environment, path=august, filename="aug.txt", imported_by="alice"
    )
    watched = service.monitoring(session=session, environment=environment)
    assert [view.key.database for view in watched.pairs] == ["HRDB", "SALESDB"]
    assert len(watched.stretches) == 2 and len(watched.spans) == 2
    figure = json.loads(monitoring_figure(watched, "UTC"))
    assert {trace["type"] for trace in figure["data"]} == {"scatter"}  # never scattergl: range breaks need SVG
    gap_lines = [trace for trace in figure["data"] if trace["name"].endswith("current log gap (MiB)")]
    assert [trace["name"].split(": ")[0] for trace in gap_lines] == [
        "HRDB from 2026-08-03 22:00",
        "SALESDB from 2026-11-24 09:00",
    ]
    assert gap_lines[0]["x"][0].startswith("2026-08-03T22:00") and gap_lines[1]["x"][0].startswith("2026-11-24T09:00")
    # side by side, each span on its own time axis: August's captures on the first, November's on the second
    layout = figure["layout"]
    assert [gap_lines[0]["xaxis"], gap_lines[1]["xaxis"]] == ["x", "x2"]
    assert all(layout[axis]["type"] == "date" and layout[axis]["showticklabels"] for axis in ("xaxis", "xaxis2"))
    titles = [layout[axis]["title"]["text"] for axis in ("xaxis3", "xaxis4")]
    assert titles == ["2026-08-03 (UTC)", "2026-11-24 (UTC)"]
    rates = [trace for trace in figure["data"] if "log generation" in trace["name"]]
    assert len(rates) == 2 and [trace["xaxis"] for trace in rates] == ["x3", "x4"]  # one line per pair and span


@settings(max_examples=150, deadline=None)
@given(
    cut=st.integers(0, 20_000),
    junk=st.text(
        alphabet=st.sampled_from("0123456789-.:,=() SLOG/\n\r\t#x%²NULL_ABCDEFGHIJKLMNOPQRSTUVWXYZ"), max_size=60
    ),
)
def test_a_mutated_capture_reads_or_is_refused_with_a_message(cut, junk):
    """Property: db2pd output cut anywhere or with junk spliced in is read, or refused with a message
    naming a line (RedoInputError), never another exception; what reads keeps its gaps non-negative."""
    text = BOTH_SIDES.read_text()
    cut %= len(text) + 1
    try:
        parsed = db2pd.parse((text[:cut] + junk + text[cut:]).splitlines())
    except RedoInputError as error:
        assert str(error)
        return
    for view in pair_views([(sample.at, sample) for sample in parsed.samples]):
        assert view.largest_current_gap is None or view.largest_current_gap[0] >= 0
        assert all(w.seconds_per_write is None or w.seconds_per_write >= 0 for w in view.waits)


# -- the HADR waits within the import bounds (fuzz seed 3201, input 2106 stored 2147483648 s) ---------
TEN_YEARS = 10 * 365 * 86400  # the import bounds' longest duration, 315,360,000 s
WAITS = {
    "LOG_HADR_WAIT_CUR(seconds)": ("wait_current", "wait_current_seconds"),
    "LOG_HADR_WAIT_RECENT_AVG(seconds)": ("wait_recent_avg", "wait_recent_avg_seconds"),
    "LOG_HADR_WAIT_ACCUMULATED(seconds)": ("wait_accumulated", "wait_accumulated_seconds"),
}


def _line_of(text: str, key: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if line.strip().startswith(key + " "))


@pytest.mark.parametrize("key", list(WAITS))
@pytest.mark.parametrize("value", ["2147483648", "315360000.000001", "999999999999.999999999"])
def test_a_wait_beyond_the_bounds_is_refused_naming_its_line_and_field(key, value):
    text = render([[Side("PRIMARY", T0, **{WAITS[key][0]: value})]])
    with pytest.raises(RedoInputError) as refused:
        db2pd.parse(text.splitlines())
    assert str(refused.value) == (
        f"line {_line_of(text, key)}, {key}: {value} s is over 315,360,000 s (10 years), the most a HADR wait can be"
    )


@pytest.mark.parametrize("key", list(WAITS))
@pytest.mark.parametrize("value", ["0", "0.000598", "315360000", "315360000.000000"])
def test_a_wait_within_the_bounds_is_read_as_written(key, value):
    (sample,) = db2pd.parse(render([[Side("PRIMARY", T0, **{WAITS[key][0]: value})]]).splitlines()).samples
    assert getattr(sample, WAITS[key][1]) == float(value)


def test_a_wait_beyond_the_bounds_answers_with_the_file_and_stores_nothing(session, tmp_path):
    environment = make_environment(session, platform="hadr", transport_mode="NEARSYNC")
    bad = tmp_path / "bad.txt"
    bad.write_text(
        BOTH_SIDES.read_text().replace(
            "LOG_HADR_WAIT_CUR(seconds) = 0.000", "LOG_HADR_WAIT_CUR(seconds) = 2147483648", 1
        )
    )
    line = _line_of(bad.read_text(), "LOG_HADR_WAIT_CUR(seconds)")
    with pytest.raises(
        FieldError, match=rf"^bad\.txt: line {line}, LOG_HADR_WAIT_CUR\(seconds\): 2147483648 s is over"
    ):
        service.import_captures(session=session, environment=environment, path=bad, filename="bad.txt", imported_by="a")
    assert session.query(HadrSample).count() == 0


@settings(max_examples=120, deadline=None)
@given(
    key=st.sampled_from(list(WAITS)),
    whole=st.integers(0, 10**12),
    fraction=st.sampled_from(["", ".0", ".000598", ".999999999"]),
)
def test_every_wait_read_is_within_the_bounds(key, whole, fraction):
    """Property: a wait db2pd could print is read exactly when within 0 to 10 years, and otherwise
    refused naming its line and field; no stored wait is ever beyond the import bounds."""
    value = f"{whole}{fraction}"
    text = render([[Side("PRIMARY", T0, **{WAITS[key][0]: value})]])
    try:
        (sample,) = db2pd.parse(text.splitlines()).samples
    except RedoInputError as error:
        assert float(value) > TEN_YEARS and str(error).startswith(f"line {_line_of(text, key)}, {key}: ")
        return
    assert float(value) <= TEN_YEARS and getattr(sample, WAITS[key][1]) == float(value)
