"""oratcptest client output (text), as the tool prints it and as users paste it."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from redolab.core import fields
from redolab.core.units import UnitError, parse_duration, parse_size
from redolab.runs.models import ProbeMode, RunSource
from redolab.runs.parsers.results import MAX_TESTS_PER_FILE, ImportedRun, ResultFileError, first_step

# -- oratcptest ---------------------------------------------------------------------------------
_SIZE = r"[0-9]+(?:\.[0-9]+)?\s*[KMG]?bytes?"


_CLOCK = r"\(\s*([0-9]{1,2}):([0-9]{2}):([0-9]{2})\s*\)"


_HEADER = {
    "payload": re.compile(rf"(?i)Message payload\s*=\s*({_SIZE})"),
    "conns": re.compile(r"(?i)Number of connections\s*=\s*([0-9]+)"),
    "sockbuf": re.compile(rf"(?i)Socket send buffer\s*=\s*(\(system default\)|{_SIZE}|[0-9]+\b)"),
    "mode": re.compile(r"(?i)Transport mode\s*=\s*([A-Z]+)"),
    "interval": re.compile(r"(?i)Statistics interval\s*=\s*([0-9.]+\s*[a-z]+)"),
    "duration": re.compile(r"(?i)Test duration\s*=\s*([0-9.]+\s*[a-z]+)"),
    "delay": re.compile(r"(?i)Delay between messages\s*=\s*(NO|[0-9.]+\s*[a-zµ]+)"),
    "disk": re.compile(r"(?i)Disk write\s*=\s*([A-Z]+)"),
}


_READY = re.compile(rf"(?i){_CLOCK}\s*The server is ready")


_SAMPLE = re.compile(rf"{_CLOCK}\s+([0-9]+(?:\.[0-9]+)?)\s*([KMG]?bytes)/s")


_FINISHED = re.compile(rf"(?i){_CLOCK}\s*Test finished")


_AVERAGE = re.compile(r"(?i)Avg\.\s+(?:aggregate\s+)?throughput\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*([KMG]?bytes)/s")


_GRANTED = re.compile(rf"(?i)(?:Avg\.\s+)?socket send buffer\s*=\s*({_SIZE}|[0-9]+\b)")


_REQUEST = re.compile(r"(?i)\[\s*Requesting a test\s*\]")


_SERVER_ONLY = re.compile(r"(?i)The test terminated\.\s*The socket receive buffer was")


# The longest number oratcptest writes (a 64-bit byte count, or a rate with three decimals and its
# unit) is about 30 characters; a longer one is a mangled file, refused before converting it (an
# integer of over 4,300 digits is a ValueError, and the message would echo it whole).
_MAX_NUMBER_CHARS = 40


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _short(value: str, what: str, line: int) -> str:
    """The value, refused if longer than any number oratcptest writes (naming the line)."""
    if len(value) > _MAX_NUMBER_CHARS:
        raise ResultFileError(
            f"{what}: '{value[:12]}…' is {len(value):,} characters long, not a number oratcptest writes "
            f"(at most {_MAX_NUMBER_CHARS} characters)",
            line,
        )
    return value


def _whole(value: str, what: str, line: int) -> int:
    """A whole number written without a unit (a count, a socket buffer in bytes)."""
    return int(_short(value, what, line))


def _size(value: str, text: str, position: int, what: str) -> int:
    if len(value) > _MAX_NUMBER_CHARS:  # the line counted only then: this runs for every interval line
        _short(value, what, _line_of(text, position))
    try:
        return parse_size(value)
    except UnitError as error:
        raise ResultFileError(f"{what}: {error}", _line_of(text, position)) from None


def _seconds_of(match: re.Match, line_at: Callable[[int], int]) -> int:
    """Seconds since midnight of a "(hh:mm:ss)" match; the line is counted only for an error
    (counting it for every interval would make a long log quadratic)."""
    hours, minutes, seconds = (int(match[i]) for i in (1, 2, 3))
    if hours > 23 or minutes > 59 or seconds > 59:
        raise ResultFileError(f"'({match[1]}:{match[2]}:{match[3]})' is not a time of day", line_at(match.start()))
    return hours * 3600 + minutes * 60 + seconds


def _command_start(text: str, position: int) -> int:
    """A test starts at its "java -jar oratcptest.jar …" line when that comes just before it."""
    line_start = text.rfind("\n", 0, position) + 1
    if "oratcptest" in text[line_start:position]:
        return line_start
    previous = text.rfind("\n", 0, max(line_start - 1, 0)) + 1
    if line_start > 0 and "oratcptest" in text[previous:line_start]:
        return previous
    return position


def read_oratcptest(text: str, *, test_date: date, message_bytes: int | None = None) -> list[ImportedRun]:
    """oratcptest client output: one test, or several (each from "[Requesting a test]"), each
    perhaps repeated (-freq). Lines may also arrive joined into one (pasted from a web page): the
    fields are found by their names. `test_date` is the day of the first test (UTC), within the
    years the bounds allow, so that a repetition days later is still a date. `message_bytes` is the
    message size given on the form, used only by a test without its "Message payload" line."""
    if not fields.FIRST_YEAR <= test_date.year <= fields.LAST_YEAR:
        raise ResultFileError(
            f"the test date {test_date.isoformat()} is outside the years {fields.FIRST_YEAR} to {fields.LAST_YEAR}: "
            "give the day the tests ran",
            field="test_date",
        )
    starts = [_command_start(text, m.start()) for m in _REQUEST.finditer(text)] or [0]
    starts[0] = 0  # whatever precedes the first test belongs to it
    if len(starts) > MAX_TESTS_PER_FILE:
        raise ResultFileError(f"{len(starts)} tests in one file: at most {MAX_TESTS_PER_FILE}")
    newlines = [match.start() for match in re.finditer("\n", text)]

    def line_at(position: int) -> int:  # one index of the file's lines, not a count per lookup
        return bisect_left(newlines, position) + 1

    runs = []
    for number, start in enumerate(starts, 1):
        end = starts[number] if number < len(starts) else len(text)
        runs += _oratcptest_test(text, start, end, number, len(starts), (test_date, message_bytes), line_at)
    if len(runs) > MAX_TESTS_PER_FILE:
        raise ResultFileError(f"{len(runs)} tests in one file: at most {MAX_TESTS_PER_FILE}")
    return runs


@dataclass(frozen=True)
class _Test:
    """One requested test: where it is in the file."""

    text: str  # the whole file
    start: int  # where the test starts in it
    block: str  # the test's text
    header_end: int  # where its first measurement starts in the block
    first_line: int
    line_at: Callable[[int], int]
    test_date: date
    message_bytes: int | None = None  # given on the form for output trimmed of its "Message payload" line

    def at(self, position: int) -> int:
        """The file's line of a position in the test's block."""
        return self.line_at(self.start + position)


@dataclass(frozen=True)
class _Header:
    """A test's settings from its header lines: what every repetition (-freq) of it shares."""

    mode: ProbeMode
    conns: int
    payload: int
    sockbuf: int | None
    interval: float | None
    duration: float | None
    delay_us: int
    notes: list[str]


class _StartClock:
    """The repetitions' start times in seconds after midnight of the test date: a start earlier than
    the one before is on the next day."""

    def __init__(self) -> None:
        self.day, self.last = 0, None

    def since_midnight(self, clock: float) -> float:
        if self.last is not None and clock + self.day * 86400 < self.last:
            self.day += 1  # a repetition after midnight
        self.last = clock + self.day * 86400
        return self.last


def _oratcptest_test(
    text: str, start: int, end: int, number: int, count: int, given: tuple, line_at: Callable[[int], int]
) -> list[ImportedRun]:
    """One requested test: its header, then one result or, with -freq, one per repetition (each
    from "The server is ready" to its "Avg. throughput")."""
    block = text[start:end]
    first_line = line_at(start)
    name = f"test {number} (from line {first_line})" if count > 1 else "the test"
    averages = list(_AVERAGE.finditer(block))
    if len(averages) > MAX_TESTS_PER_FILE:  # before reading any: each repetition may be a day later
        raise ResultFileError(f"{name} has {len(averages)} repetitions: at most {MAX_TESTS_PER_FILE}", first_line)
    if not averages:
        if _SERVER_ONLY.search(block):
            raise ResultFileError(
                "this is oratcptest server output (it only gives the receive buffer): import the client's "
                "output, the one that ends with 'Avg. throughput = … Mbytes/s'"
            )
        raise ResultFileError(
            f"{name} has no 'Avg. throughput = … Mbytes/s' line: the output is cut short, or the test failed",
            first_line,
        )
    header_end = (_READY.search(block) or _SAMPLE.search(block) or averages[0]).start()
    test = _Test(text, start, block, header_end, first_line, line_at, *given)
    header = _read_header(test, name)
    clock = _StartClock()
    return [_repetition(test, header, averages, index, clock) for index in range(len(averages))]


def _read_header(test: _Test, name: str) -> _Header:
    """The test's settings from its header lines (before the first measurement)."""
    header = test.block[: test.header_end]
    found = {key: pattern.search(header) for key, pattern in _HEADER.items()}
    if found["payload"] is None and test.message_bytes is None:
        raise ResultFileError(
            f"{name} has no 'Message payload = …' line before its first measurement (the output was trimmed?): "
            "give the message size the test used (oratcptest's -length, e.g. 1 MiB) in Message size",
            test.first_line,
            field="message_bytes",
        )
    for key, label in (("conns", "Number of connections"), ("mode", "Transport mode")):
        if found[key] is None:
            raise ResultFileError(f"{name} has no '{label} = …' line before its first measurement", test.first_line)

    mode_text = found["mode"][1].upper()
    if mode_text not in ("ASYNC", "SYNC"):
        raise ResultFileError(
            f"Transport mode '{found['mode'][1]}' is neither ASYNC nor SYNC", test.at(found["mode"].start())
        )
    conns = _whole(found["conns"][1], "Number of connections", test.at(found["conns"].start()))
    if not 1 <= conns <= 1024:
        raise ResultFileError(f"Number of connections {conns} is outside 1-1024", test.at(found["conns"].start()))
    notes = []
    if found["payload"] is None:
        payload = test.message_bytes
        notes.append(f"The output has no 'Message payload' line: {payload:,} bytes per message, as given on import.")
    else:
        payload = _size(found["payload"][1], test.text, test.start + found["payload"].start(), "Message payload")
        if payload <= 0:
            raise ResultFileError("Message payload is 0 bytes", test.at(found["payload"].start()))
    sockbuf = None
    if found["sockbuf"] and not found["sockbuf"][1].startswith("("):
        raw = found["sockbuf"][1]
        sockbuf = (
            _whole(raw, "Socket send buffer", test.at(found["sockbuf"].start()))
            if raw.isdigit()
            else _size(raw, test.text, test.start + found["sockbuf"].start(), "Socket send buffer")
        )
    interval = _duration(found["interval"], "Statistics interval", test.at)
    duration = _duration(found["duration"], "Test duration", test.at)
    delay_us = 0
    if found["delay"] and found["delay"][1].upper() != "NO":
        delay_us = round((_duration(found["delay"], "Delay between messages", test.at) or 0) * 1e6)
    if found["disk"] and found["disk"][1].upper() == "YES":
        notes.append("The oratcptest server wrote what it received to disk (Disk write = YES).")
    mode = ProbeMode.sync if mode_text == "SYNC" else ProbeMode.async_
    return _Header(mode, conns, payload, sockbuf, interval, duration, delay_us, notes)


def _duration(found: re.Match | None, label: str, at: Callable[[int], int]) -> float | None:
    """A header's duration in seconds; None when the header has no such line."""
    if found is None:
        return None
    _short(found[1], label, at(found.start()))
    try:
        return parse_duration(found[1])
    except UnitError as error:
        raise ResultFileError(f"{label}: {error}", at(found.start())) from None


def _repetition(test: _Test, header: _Header, averages: list[re.Match], index: int, clock: _StartClock) -> ImportedRun:
    """The run of one repetition: its interval lines up to its "Avg. throughput" line."""
    average = averages[index]
    segment_from = test.header_end if index == 0 else averages[index - 1].end()
    segment_to = average.start()
    samples = list(_SAMPLE.finditer(test.block, segment_from, segment_to))
    clocks = [_seconds_of(sample, test.at) for sample in samples]
    ready = _READY.search(test.block, segment_from, segment_to)
    step = header.interval or 0.0
    if ready is not None:
        base = _seconds_of(ready, test.at)
    elif clocks:
        base = clocks[0] - step
    else:
        base = None
    since_midnight = None if base is None else clock.since_midnight(base)
    intervals = _oratcptest_intervals(test.text, test.start, samples, clocks, base, step)
    where = test.start + average.start()
    average_rate = float(_size(f"{average[1]} {average[2]}", test.text, where, "Avg. throughput"))
    granted = _granted_sndbuf(test, segment_from, segment_to)
    measured = intervals[-1]["end_seconds"] if intervals else None
    started_at = None
    if since_midnight is not None:
        started_at = datetime.combine(test.test_date, time(0), tzinfo=UTC) + timedelta(seconds=since_midnight)
    repeated = len(averages) > 1
    return ImportedRun(
        source=RunSource.oratcptest,
        mode=header.mode,
        conns=header.conns,
        message_bytes=header.payload,
        sockbuf_bytes=header.sockbuf,
        duration_seconds=header.duration or measured or 0.0,
        interval_seconds=header.interval or first_step(intervals),
        delay_us=header.delay_us,
        bytes_per_second=average_rate,
        seconds=measured,
        sndbuf_granted_bytes=granted,
        started_at=started_at,
        probe_version="oratcptest",
        notes=" ".join(
            [*header.notes, f"Repetition {index + 1} of {len(averages)} of a repeated test (-freq)."]
            if repeated
            else header.notes
        ),
        intervals=intervals,
        text=(
            test.block[: test.header_end] + test.block[segment_from : average.end()] if repeated else test.block
        ).strip("\n"),
        first_line=test.first_line if index == 0 else test.at((ready or (samples or [average])[0]).start()),
    )


def _granted_sndbuf(test: _Test, segment_from: int, segment_to: int) -> int | None:
    """The send buffer the kernel granted, from the line after "Test finished" (if any), in bytes."""
    finished = _FINISHED.search(test.block, segment_from, segment_to)
    granted_match = _GRANTED.search(test.block, finished.end(), segment_to) if finished else None
    if granted_match is None:
        return None
    raw = granted_match[1]
    where = test.start + granted_match.start()
    reported = (
        _whole(raw, "socket send buffer", test.at(granted_match.start()))
        if raw.isdigit()
        else (_size(raw, test.text, where, "socket buffer"))
    )
    return 2 * reported  # oratcptest prints half of what the kernel allocated (seed 000)


def _oratcptest_intervals(
    text: str, start: int, samples: list[re.Match], clocks: list[int], base: int | None, step: float
) -> list[dict]:
    """Interval lines as redoprobe interval data: seconds since the test began (past midnight too)."""
    intervals, previous_end, day = [], 0.0, 0
    for sample, clock in zip(samples, clocks, strict=True):
        if base is not None and clock + day * 86400 - base < previous_end:
            day += 1  # the test ran past midnight
        end_seconds = float(clock + day * 86400 - base) if base is not None else previous_end + step
        start_seconds = max(previous_end, end_seconds - step) if step else previous_end
        rate = float(_size(f"{sample[4]} {sample[5]}", text, start + sample.start(), "throughput"))
        seconds = end_seconds - start_seconds
        intervals.append(
            {
                "start_seconds": start_seconds,
                "end_seconds": end_seconds,
                "bytes": round(rate * seconds),
                "bytes_per_second": rate,
            }
        )
        previous_end = end_seconds
    return intervals
