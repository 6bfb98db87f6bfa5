"""The schedule the probe replays: every byte of the window kept (whole bytes, the rounding carried),
slots inside the window in time order per connection, the contract's text read back to the same
schedule, and each limit refused by name."""

import hashlib
import math
import re
from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.rehearsals import schedule as schedule_module
from redolab.rehearsals.schedule import (
    MAX_BYTES_PER_SECOND,
    ScheduleFormatError,
    build_schedule,
    parse_schedule,
)
from redolab.rehearsals.window import RehearsalRefused, choose_window, clipped
from tests.rehearsals.history import MIB, T0, bytes_between, histories, requirement_of, row

LINE = re.compile(r"^(0|[1-9][0-9]*) [0-9]+(\.[0-9]+)? [1-9][0-9]*$")  # CONNECTION OFFSET_SECONDS BYTES


def rac_history():
    return [row(t, 600 * i, 600, 300 if (t, i) == (1, 5) else 60 * t) for t in (1, 2) for i in range(12)]


def expected_bytes(req, window, thread, scale):
    """round(the thread's piece bytes inside the window x scale), as the issue states it."""
    pieces = clipped(req.threads[thread].replay, window.start, window.end)
    return round(sum(rate * (e - s).total_seconds() for s, e, rate in pieces) * scale)


def test_a_rac_history_gives_one_connection_per_thread_in_thread_order():
    req = requirement_of(rac_history())
    window = choose_window(req)
    schedule = build_schedule(req, window)
    assert schedule.threads == (1, 2) and len(schedule.connections) == 2
    assert schedule.slot_seconds == 1.0 and schedule.seconds == 3600
    assert schedule.thread_bytes == {1: expected_bytes(req, window, 1, 1.0), 2: expected_bytes(req, window, 2, 1.0)}
    assert schedule.thread_bytes[1] == round(bytes_between(rac_history(), 1, window.start, window.end))
    lines = schedule.text.splitlines()
    header = [line for line in lines if line.startswith("#")]
    assert "# window: worst 60 minutes, 2022-01-15 08:00 to 09:00 UTC" in header
    assert "# threads: 1 2" in header and "# connections: 0 = thread 1, 1 = thread 2" in header
    assert "# scale: 1" in header and any(line.startswith("# granularity: per log (~10 min each)") for line in header)
    body = [line for line in lines if not line.startswith("#")]
    slots, ends = body[:-2], body[-2:]
    assert all(LINE.match(line) for line in slots) and len(slots) == schedule.line_count == 7200
    assert body[:2] == ["0 0 104858", "1 0 209715"]  # 60 MiB and 120 MiB over 600 s, per second
    assert ends == ["0 3600 0", "1 3600 0"]  # where each connection's last slot ends: its width for the probe
    assert schedule.sha256 == hashlib.sha256(schedule.text.encode()).hexdigest()


def test_the_slot_is_a_second_over_ten_minutes_else_a_tenth_and_never_finer():
    req = requirement_of(rac_history())
    five = build_schedule(req, choose_window(req, "worst-5m"))
    assert five.slot_seconds == 0.1 and five.line_count == 2 * 3000
    assert "2 0.1 " not in five.text and "\n0 0.1 " in five.text and "\n0 299.9 " in five.text
    assert build_schedule(req, choose_window(req, "worst-15m")).slot_seconds == 1.0
    with pytest.raises(RehearsalRefused, match=r"slot: 0\.05 s is under the 0\.1 s"):
        build_schedule(req, choose_window(req), slot_seconds=0.05)


def test_the_speedup_is_recorded_for_the_probe_and_not_applied_to_the_text():
    req = requirement_of(rac_history())
    window = choose_window(req)
    fast, real = build_schedule(req, window, speedup=60), build_schedule(req, window)
    assert fast.speedup == 60 and real.speedup == 1
    assert fast.text == real.text and fast.sha256 == real.sha256
    doubled = build_schedule(req, window, scale=2)
    assert doubled.total_bytes == expected_bytes(req, window, 1, 2) + expected_bytes(req, window, 2, 2)


@st.composite
def windows(draw, req):
    """The worst minute, or a period from a minute to an hour that may run past the data."""
    if draw(st.booleans()):
        return choose_window(req, "worst-1m")
    start = T0 + timedelta(seconds=draw(st.integers(0, 3000)), milliseconds=draw(st.integers(0, 999)))
    return choose_window(req, (start, start + timedelta(seconds=draw(st.integers(60, 3600)))))


@settings(max_examples=50, deadline=None)
@given(st.data(), histories(max_threads=3), st.sampled_from([None, 0.1, 0.5, 1.0, 2.5]),
       st.floats(0.001, 1000), st.booleans())  # fmt: skip
def test_every_byte_of_the_window_is_in_the_schedule_once(data, rows, slot, scale, read_back):
    req = requirement_of(rows)
    try:
        window = data.draw(windows(req))
    except RehearsalRefused:
        return  # no minute where every thread has data, or a period without data: refused, tested apart
    schedule = build_schedule(req, window, slot_seconds=slot, scale=scale)
    step = schedule.slot_seconds
    assert step == (slot or (1.0 if window.seconds > 600 else 0.1))
    for thread, slots in zip(schedule.threads, schedule.connections, strict=True):
        assert sum(size for _, size in slots) == expected_bytes(req, window, thread, scale)
        assert sum(size for _, size in slots) == pytest.approx(
            bytes_between(rows, thread, window.start, window.end) * scale, abs=1, rel=1e-9
        )
        offsets = [offset for offset, _ in slots]
        assert offsets == sorted(offsets) and all(0 <= o < window.seconds for o in offsets)
        assert all(math.isclose(o / step, round(o / step), abs_tol=1e-6) for o in offsets)  # on the slot grid
        assert all(isinstance(size, int) and 0 < size <= MAX_BYTES_PER_SECOND * step + 1 for _, size in slots)
    for thread in set(window.threads) - set(schedule.threads):  # left out only with nothing to send, and said
        assert expected_bytes(req, window, thread, scale) == 0
        assert f"thread {thread} has no redo in the window" in " ".join(schedule.notes)
    if read_back:
        assert parse_schedule(schedule.text) == schedule


def test_the_limits_are_refused_by_name():
    req = requirement_of(rac_history())
    window = choose_window(req)
    for arguments, said in (
        ({"scale": 0}, "scale: 0 is outside \\(0, 1000\\]"),
        ({"scale": 1001}, "scale: 1001 is outside"),
        ({"scale": math.nan}, "scale: nan"),
        ({"speedup": 0.5}, "speedup: 0.5 is outside \\[1, 3600\\]"),
        ({"speedup": 3601}, "speedup: 3601 is outside"),
    ):
        with pytest.raises(RehearsalRefused, match=said):
            build_schedule(req, window, **arguments)
    with pytest.raises(RehearsalRefused, match="threads: 1,025 threads, over the 1,024 connections"):
        build_schedule(req, replace(window, threads=tuple(range(1025))))
    with pytest.raises(RehearsalRefused, match="window: 25 h is longer than 24 h"):
        build_schedule(req, replace(window, end=window.start + timedelta(hours=25)))
    fast = requirement_of([row(1, 0, 600, 600 * 1024)])  # 1 GiB/s: 1000 x is over 1 TB/s
    with pytest.raises(RehearsalRefused, match=r"rate: thread 1 at 2022-01-15T08:00:00\+00:00 replays at .* 1000"):
        build_schedule(fast, choose_window(fast, "worst-5m"), scale=1000)
    assert build_schedule(fast, choose_window(fast, "worst-5m"), scale=900).total_bytes == round(900 * 300 * MIB * 1024)


def test_a_thread_without_a_whole_byte_in_the_window_is_left_out_and_said():
    """A thread with nothing to send has no connection (the probe counts connections from the lines,
    and a node pair would run for nothing); the notes and the text's header say so, with the window's."""
    quiet = requirement_of([row(1, 0, 600, 600), row(2, 0, 600, 1)])  # 1 MiB in 10 min x 1e-7: 0.1 byte
    window = choose_window(quiet, "worst-5m")
    assert window.threads == (1, 2)
    tiny = build_schedule(quiet, window, scale=1e-7)
    assert tiny.threads == (1,) and len(tiny.connections) == 1 and "# threads: 1\n" in tiny.text
    assert tiny.notes == ("thread 2 has no redo in the window after scale 1e-07: not in the replay",)
    edges = requirement_of([row(1, 0, 3600, 600), row(2, 0, 60, 1), row(2, 3540, 60, 1)])
    period = build_schedule(edges, choose_window(edges, (T0 + timedelta(minutes=10), T0 + timedelta(minutes=20))))
    assert period.threads == (1,) and period.notes == ("thread 2 has no data in the period: not in the replay",)
    assert "# notes: thread 2 has no data in the period" in period.text
    assert parse_schedule(period.text) == period


def test_a_schedule_too_long_for_its_slot_is_made_coarser_before_it_is_refused(monkeypatch):
    """24 threads for a day: 2,073,600 one-second slots, over 2,000,000 lines; two-second slots fit."""
    rows = [row(t, s, 60, 6) for t in range(1, 25) for s in (0, 86340)]
    req = requirement_of(rows)
    day = build_schedule(req, choose_window(req, (T0, T0 + timedelta(days=1))))
    assert day.slot_seconds == 2.0 and len(day.connections) == 24 and day.line_count == 24 * 60
    assert day.total_bytes == 24 * 2 * 6 * MIB
    monkeypatch.setattr(schedule_module, "MAX_LINES", 10)
    with pytest.raises(RehearsalRefused, match="lines: 24 threads over 24 h need more than 10 lines"):
        build_schedule(req, choose_window(req, (T0, T0 + timedelta(days=1))))


def test_a_schedule_is_read_back_as_the_probe_reads_it():
    text = "# written by hand\n\n0 0 100\n1 0.5 20 # a note\n0 0.5 0\n0 2 7\n"
    schedule = parse_schedule(text, speedup=10)
    assert schedule.connections == (((0.0, 100), (2.0, 7)), ((0.5, 20),))  # "0 0.5 0": an offset, not a slot
    assert schedule.threads == (0, 1) and schedule.total_bytes == 127 and schedule.seconds == 2.0
    assert schedule.slot_seconds is None and schedule.scale == 1.0 and schedule.speedup == 10
    for bad, said in (
        ("0 1\n", "line 1: expected CONNECTION OFFSET_SECONDS BYTES, found 2 field"),
        ("# c\n-1 0 5\n", "line 2: connection '-1' is not a whole number from 0 to 1023"),
        ("1024 0 5\n", "line 1: connection '1024'"),
        ("0 soon 5\n", "line 1: offset 'soon' is not a number of seconds"),
        ("0 inf 5\n", "line 1: offset 'inf'"),
        ("0 1 2.5\n", "line 1: bytes '2.5' is not a whole number"),
        ("0 5 1\n1 1 1\n0 4 1\n", "line 3: connection 0 goes back in time: offset 4 after 5 \\(line 1\\)"),
        ("# threads: 1\n0 0 1\n1 0 1\n", "header: 1 thread named, but connection 1 is used"),
    ):
        with pytest.raises(ScheduleFormatError, match=said):
            parse_schedule(bad)
