"""Results teams already have, read into run records: oratcptest client output (text) and
iperf3 -J files. Pure functions, tested on captured output.

Each test in a file becomes an `ImportedRun` with redolab's units (bytes, seconds, bytes/s) and
its intervals in redoprobe's interval-event shape, so the run page and charts draw them as if
redoprobe had measured them. oratcptest's "Mbytes" are MiB (it prints "1 Mbyte = 1024x1024
bytes"); it reports half the socket buffer the kernel allocated (seed 000), so the granted send
buffer is stored doubled, as Linux's getsockopt (and redoprobe) reports it.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from redolab.core.units import UnitError, parse_duration, parse_size
from redolab.probes.models import ProbeMode, RunSource

FORMATS = ("auto", "oratcptest", "iperf3")
MAX_TESTS_PER_FILE = 200


class ResultFileError(ValueError):
    """A file is not readable oratcptest or iperf3 output; the message names the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass
class ImportedRun:
    source: RunSource
    mode: ProbeMode
    conns: int
    message_bytes: int
    duration_seconds: float
    interval_seconds: float
    bytes_per_second: float
    text: str  # the part of the file this run was read from
    first_line: int
    sockbuf_bytes: int | None = None
    rate_bits_per_second: int | None = None
    delay_us: int = 0
    started_at: datetime | None = None
    seconds: float | None = None
    bytes_sent: int | None = None
    bytes_received: int | None = None
    retransmits: int | None = None
    sndbuf_granted_bytes: int | None = None
    rcvbuf_granted_bytes: int | None = None
    probe_version: str | None = None
    notes: str = ""
    client_settings: dict = field(default_factory=dict)
    server_settings: dict = field(default_factory=dict)
    intervals: list[dict] = field(default_factory=list)  # redoprobe "interval" event data

    @property
    def finished_at(self) -> datetime | None:
        if self.started_at is None:
            return None
        return self.started_at + timedelta(seconds=self.seconds or self.duration_seconds)


def detect_format(text: str) -> RunSource:
    """iperf3 -J is a JSON object; oratcptest prints its parameters and "Mbytes/s" lines."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{"):
        return RunSource.iperf3
    if re.search(r"(?i)Message payload|Mbytes/s|oratcptest|The server is ready|Avg\. (?:aggregate )?throughput", text):
        return RunSource.oratcptest
    raise ResultFileError(
        "neither oratcptest client output (a header with 'Message payload = …' and 'Avg. throughput = … "
        "Mbytes/s') nor iperf3 JSON (iperf3 -J, which starts with '{'); choose the format by hand if it is one"
    )


def read_results(text: str, fmt: str = "auto", *, test_date: date | None = None) -> list[ImportedRun]:
    """Every test in one file. `test_date` dates oratcptest's clock-only times (UTC)."""
    if fmt not in FORMATS:
        raise ResultFileError(f"unknown format '{fmt}': use one of {', '.join(FORMATS)}")
    text = text.replace("\xa0", " ").replace("\r\n", "\n")
    source = detect_format(text) if fmt == "auto" else RunSource(fmt)
    if source is RunSource.iperf3:
        return [read_iperf3(text)]
    if test_date is None:
        raise ResultFileError(
            "oratcptest prints clock times only, no date: give the day the tests ran (the form's Date field, "
            "`--date YYYY-MM-DD` on the command line, `test_date` in the API)"
        )
    return read_oratcptest(text, test_date=test_date)


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
                interval_seconds=interval or _first_step(intervals),
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


def _first_step(intervals: list[dict]) -> float:
    return intervals[0]["end_seconds"] - intervals[0]["start_seconds"] if intervals else 0.0


# -- iperf3 -J ----------------------------------------------------------------------------------
_MAX_NUMBER = 2.0**60  # bytes (1 EiB), bit/s (1.15e18, far above 1 TB/s), seconds: beyond it, not a measurement
_MAX_BITS_PER_SECOND = 8e12  # 1 TB/s


def _number(value, where: str, maximum: float = _MAX_NUMBER) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ResultFileError(f"{where} is {json.dumps(value)[:40]}, not a number")
    if not 0 <= value <= maximum:  # also false for NaN
        raise ResultFileError(f"{where} is {str(value)[:40]}: expected a number from 0 to {maximum:.4g}")
    return float(value)


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _get(document: dict, path: str):
    value = document
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise ResultFileError(
                f"the iperf3 JSON has no '{path}': is this the output of iperf3 -J from a finished test?"
            )
        value = value[key]
    return value


def read_iperf3(text: str) -> ImportedRun:
    """One iperf3 -J document (the client's, or the server's with --json): a finished TCP test."""
    try:
        document = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as error:
        hint = " (iperf3 --json-stream output is not supported: run iperf3 -J)" if text.count("\n{") > 1 else ""
        raise ResultFileError(f"not JSON: {error.msg}{hint}", error.lineno) from None
    except ValueError as error:  # NaN, Infinity
        raise ResultFileError(f"not JSON: {error}") from None
    except RecursionError:
        raise ResultFileError("the JSON is nested too deeply to be an iperf3 -J document") from None
    if not isinstance(document, dict):
        raise ResultFileError("the iperf3 JSON is not an object: is this the output of iperf3 -J?", 1)
    end = document.get("end") or {}
    if document.get("error") and not end.get("sum_received"):
        raise ResultFileError(f"iperf3 reported an error and measured nothing: {document['error']}")
    test = _get(document, "start.test_start")
    protocol = str(test.get("protocol", "TCP")).upper()
    if protocol != "TCP":
        raise ResultFileError(f"a {protocol} test: redo transport runs over TCP, so only TCP tests are imported")
    if test.get("bidir"):
        raise ResultFileError("a bidirectional test (--bidir): import one direction per run")
    sent, received = _get(document, "end.sum_sent"), _get(document, "end.sum_received")
    received_bytes = _number(received.get("bytes"), "end.sum_received.bytes")
    received_seconds = _number(received.get("seconds"), "end.sum_received.seconds")
    if received_seconds <= 0:
        raise ResultFileError("end.sum_received.seconds is 0: the test did not run")
    if received_bytes * 8 / received_seconds > _MAX_BITS_PER_SECOND:
        raise ResultFileError(
            f"end.sum_received is {received_bytes:.4g} bytes in {received_seconds:.4g} s, over 1 TB/s: "
            "not a measurement"
        )
    if received_bytes <= 0:
        raise ResultFileError(
            "end.sum_received.bytes is 0: the receiver counted no data, so the test measured nothing (a firewall, "
            "a wrong address or port?); nothing is imported as a 0 B/s run"
        )
    conns = int(_number(test.get("num_streams", 1), "start.test_start.num_streams"))
    blksize = int(_number(test.get("blksize", 0), "start.test_start.blksize"))
    duration = _number(test.get("duration", 0), "start.test_start.duration") or _number(
        sent.get("seconds"), "end.sum_sent.seconds"
    )
    start = document["start"]
    reverse = bool(test.get("reverse"))
    # The file is the iperf3 server's (-s -J) when it accepted the connection; the host that wrote
    # it sent unless exactly one of "server's file" and "reversed (-R)" holds.
    server_file = "accepted_connection" in start
    local_sends = reverse == server_file

    intervals = []
    mss = start.get("tcp_mss_default") or start.get("tcp_mss")
    mtus = []
    for index, interval in enumerate(document.get("intervals") or []):
        total = interval.get("sum") or {}
        if total.get("omitted"):
            continue  # -O: the warm-up iperf3 itself leaves out of its totals
        begin = _number(total.get("start"), f"intervals[{index}].sum.start")
        finish = _number(total.get("end"), f"intervals[{index}].sum.end")
        streams = []
        for number, stream in enumerate(interval.get("streams") or [], 1):
            one = {"id": number, "bytes": int(_number(stream.get("bytes", 0), f"intervals[{index}].streams.bytes"))}
            for theirs, ours in (("rtt", "rtt_us"), ("rttvar", "rttvar_us"), ("pmtu", "pmtu")):
                if isinstance(stream.get(theirs), int | float):
                    one[ours] = int(stream[theirs])  # iperf3 gives round-trip times in µs, as redoprobe
            if isinstance(stream.get("snd_cwnd"), int | float) and mss:
                one["snd_cwnd"] = round(stream["snd_cwnd"] / mss)  # iperf3 gives bytes, redoprobe segments
            if isinstance(stream.get("retransmits"), int):
                one["retransmits"] = stream["retransmits"]
            if isinstance(stream.get("pmtu"), int):
                mtus.append(stream["pmtu"])
            streams.append(one)
        intervals.append(
            {
                "start_seconds": begin,
                "end_seconds": finish,
                "bytes": int(_number(total.get("bytes", 0), f"intervals[{index}].sum.bytes")),
                "bytes_per_second": _number(
                    total.get("bits_per_second", 0), f"intervals[{index}].sum.bits_per_second", _MAX_BITS_PER_SECOND
                )
                / 8,
                "streams": streams,
            }
        )

    local = {}
    system = str(start.get("system_info") or "").split()
    if len(system) >= 3 and system[0] == "Linux":
        local["kernel"] = system[2]
    sender = {"tcp_congestion_control": end.get("sender_tcp_congestion")} if end.get("sender_tcp_congestion") else {}
    receiver = (
        {"tcp_congestion_control": end.get("receiver_tcp_congestion")} if end.get("receiver_tcp_congestion") else {}
    )
    if mtus:
        sender["mtu_bytes"] = max(mtus)
    client_settings, server_settings = (
        ({**sender, **local}, receiver) if local_sends else (sender, {**receiver, **local})
    )
    timestamp = (start.get("timestamp") or {}).get("timesecs")
    target = test.get("target_bitrate")
    retransmits = _int_or_none(sent.get("retransmits"))
    return ImportedRun(
        source=RunSource.iperf3,
        mode=ProbeMode.async_,
        conns=conns,
        message_bytes=blksize or 128 * 1024,
        sockbuf_bytes=int(start["sock_bufsize"]) if start.get("sock_bufsize") else None,
        duration_seconds=duration,
        interval_seconds=_first_step(intervals) or duration,
        rate_bits_per_second=int(target)
        if isinstance(target, int | float) and 0 < target <= _MAX_BITS_PER_SECOND
        else None,
        bytes_per_second=received_bytes / received_seconds,
        seconds=received_seconds,
        # A receiver's file counts nothing sent (iperf3 writes 0 there).
        bytes_sent=int(_number(sent.get("bytes"), "end.sum_sent.bytes")) if local_sends else None,
        bytes_received=int(received_bytes),
        retransmits=retransmits,
        # The buffers of the socket of the host that wrote the file: kept when it is the sender's.
        sndbuf_granted_bytes=_int_or_none(start.get("sndbuf_actual")) if local_sends else None,
        rcvbuf_granted_bytes=_int_or_none(start.get("rcvbuf_actual")) if local_sends else None,
        started_at=datetime.fromtimestamp(timestamp, UTC) if isinstance(timestamp, int | float) else None,
        probe_version=str(start.get("version") or "iperf3")[:50],
        notes=" ".join(
            note
            for note, applies in (
                ("Reversed (-R): the iperf3 server sent.", reverse),
                ("Read from the iperf3 server's output.", server_file),
            )
            if applies
        ),
        client_settings=client_settings,
        server_settings=server_settings,
        intervals=intervals,
        text=text,
        first_line=1,
    )
