"""oratcptest client output (text), as the tool prints it and as users paste it."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

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


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _size(value: str, text: str, position: int, what: str) -> int:
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


def read_oratcptest(text: str, *, test_date: date) -> list[ImportedRun]:
    """oratcptest client output: one test, or several (each from "[Requesting a test]"), each
    perhaps repeated (-freq). Lines may also arrive joined into one (pasted from a web page): the
    fields are found by their names."""
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
        runs += _oratcptest_test(text, start, end, number, len(starts), test_date, line_at)
    if len(runs) > MAX_TESTS_PER_FILE:
        raise ResultFileError(f"{len(runs)} tests in one file: at most {MAX_TESTS_PER_FILE}")
    return runs


def _oratcptest_test(
    text: str, start: int, end: int, number: int, count: int, test_date: date, line_at: Callable[[int], int]
) -> list[ImportedRun]:
    """One requested test: its header, then one result or, with -freq, one per repetition (each
    from "The server is ready" to its "Avg. throughput")."""
    block = text[start:end]
    first_line = line_at(start)
    name = f"test {number} (from line {first_line})" if count > 1 else "the test"

    def at(position: int) -> int:
        return line_at(start + position)

    averages = list(_AVERAGE.finditer(block))
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
    header = block[:header_end]
    found = {key: pattern.search(header) for key, pattern in _HEADER.items()}
    for key, label in (("payload", "Message payload"), ("conns", "Number of connections"), ("mode", "Transport mode")):
        if found[key] is None:
            raise ResultFileError(f"{name} has no '{label} = …' line before its first measurement", first_line)

    mode_text = found["mode"][1].upper()
    if mode_text not in ("ASYNC", "SYNC"):
        raise ResultFileError(
            f"Transport mode '{found['mode'][1]}' is neither ASYNC nor SYNC", at(found["mode"].start())
        )
    conns = int(found["conns"][1])
    if not 1 <= conns <= 1024:
        raise ResultFileError(f"Number of connections {conns} is outside 1-1024", at(found["conns"].start()))
    payload = _size(found["payload"][1], text, start + found["payload"].start(), "Message payload")
    if payload <= 0:
        raise ResultFileError("Message payload is 0 bytes", at(found["payload"].start()))
    sockbuf = None
    if found["sockbuf"] and not found["sockbuf"][1].startswith("("):
        raw = found["sockbuf"][1]
        sockbuf = (
            int(raw) if raw.isdigit() else _size(raw, text, start + found["sockbuf"].start(), "Socket send buffer")
        )

    def duration(key: str, label: str) -> float | None:
        if found[key] is None:
            return None
        try:
            return parse_duration(found[key][1])
        except UnitError as error:
            raise ResultFileError(f"{label}: {error}", at(found[key].start())) from None

    interval = duration("interval", "Statistics interval")
    test_duration = duration("duration", "Test duration")
    delay_us = 0
    if found["delay"] and found["delay"][1].upper() != "NO":
        delay_us = round((duration("delay", "Delay between messages") or 0) * 1e6)
    notes = []
    if found["disk"] and found["disk"][1].upper() == "YES":
        notes.append("The oratcptest server wrote what it received to disk (Disk write = YES).")
    repeated = len(averages) > 1

    runs, day, last_start = [], 0, None
    for index, average in enumerate(averages):
        segment_from = header_end if index == 0 else averages[index - 1].end()
        segment_to = average.start()
        samples = list(_SAMPLE.finditer(block, segment_from, segment_to))
        clocks = [_seconds_of(sample, at) for sample in samples]
        ready = _READY.search(block, segment_from, segment_to)
        step = interval or 0.0
        if ready is not None:
            base = _seconds_of(ready, at)
        elif clocks:
            base = clocks[0] - step
        else:
            base = None
        if base is not None:
            if last_start is not None and base + day * 86400 < last_start:
                day += 1  # a repetition after midnight
            last_start = base + day * 86400
        intervals = _oratcptest_intervals(text, start, samples, clocks, base, step)
        average_rate = float(_size(f"{average[1]} {average[2]}", text, start + average.start(), "Avg. throughput"))
        finished = _FINISHED.search(block, segment_from, segment_to)
        granted = None
        granted_match = _GRANTED.search(block, finished.end(), segment_to) if finished else None
        if granted_match is not None:
            raw = granted_match[1]
            reported = int(raw) if raw.isdigit() else _size(raw, text, start + granted_match.start(), "socket buffer")
            granted = 2 * reported  # oratcptest prints half of what the kernel allocated (seed 000)
        measured = intervals[-1]["end_seconds"] if intervals else None
        started_at = None
        if base is not None:
            started_at = datetime.combine(test_date, time(0), tzinfo=UTC) + timedelta(seconds=last_start)
        runs.append(
            ImportedRun(
                source=RunSource.oratcptest,
                mode=ProbeMode.sync if mode_text == "SYNC" else ProbeMode.async_,
                conns=conns,
                message_bytes=payload,
                sockbuf_bytes=sockbuf,
                duration_seconds=test_duration or measured or 0.0,
                interval_seconds=interval or first_step(intervals),
                delay_us=delay_us,
                bytes_per_second=average_rate,
                seconds=measured,
                sndbuf_granted_bytes=granted,
                started_at=started_at,
                probe_version="oratcptest",
                notes=" ".join(
                    [*notes, f"Repetition {index + 1} of {len(averages)} of a repeated test (-freq)."]
                    if repeated
                    else notes
                ),
                intervals=intervals,
                text=(header + block[segment_from : average.end()] if repeated else block).strip("\n"),
                first_line=first_line if index == 0 else at((ready or (samples or [average])[0]).start()),
            )
        )
    return runs


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
