"""iperf3 -J output."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from redolab.core import fields
from redolab.runs.models import ProbeMode, RunSource
from redolab.runs.parsers.results import MAX_MTU_BYTES, ImportedRun, ResultFileError, first_step

# -- iperf3 -J ----------------------------------------------------------------------------------
_MAX_NUMBER = 2.0**60  # bytes (1 EiB), bit/s (1.15e18, far above 1 TB/s), seconds: beyond it, not a measurement


_MAX_BITS_PER_SECOND = fields.MAX_BIT_RATE  # 1 TB/s
_MAX_RTT_US = 600e6  # 10 minutes: no TCP connection waits longer
_LATEST_EPOCH = datetime(fields.LAST_YEAR + 1, 1, 1, tzinfo=UTC).timestamp()


def _number(value, where: str, maximum: float = _MAX_NUMBER) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ResultFileError(f"{where} is {json.dumps(value)[:40]}, not a number")
    if not 0 <= value <= maximum:  # also false for NaN
        raise ResultFileError(f"{where} is {str(value)[:40]}: expected a number from 0 to {maximum:.4g}")
    return float(value)


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _int_or_none(value, where: str) -> int | None:
    return int(_number(value, where)) if isinstance(value, int) and not isinstance(value, bool) else None


def _object(value, where: str) -> dict:
    """A JSON object where iperf3 writes one (absent or null: empty); another type is refused."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ResultFileError(f"{where} is {json.dumps(value)[:40]}, not an object as iperf3 -J writes it")
    return value


def _array(value, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ResultFileError(f"{where} is {json.dumps(value)[:40]}, not an array as iperf3 -J writes it")
    return value


def _get(document: dict, path: str):
    value = document
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise ResultFileError(
                f"the iperf3 JSON has no '{path}': is this the output of iperf3 -J from a finished test?"
            )
        value = value[key]
    return _object(value, path)


def read_iperf3(text: str) -> ImportedRun:
    """One iperf3 -J document (the client's, or the server's with --json): a finished TCP test."""
    document = _load(text)
    end = _object(document.get("end"), "end")
    if document.get("error") and not end.get("sum_received"):
        raise ResultFileError(f"iperf3 reported an error and measured nothing: {str(document['error'])[:200]}")
    test = _tcp_test(document)
    sent, received = _get(document, "end.sum_sent"), _get(document, "end.sum_received")
    received_bytes, received_seconds = _received(received)
    conns = int(_number(test.get("num_streams", 1), "start.test_start.num_streams", fields.MAX_NUMBERED))
    blksize = int(_number(test.get("blksize", 0), "start.test_start.blksize"))
    duration = _number(test.get("duration", 0), "start.test_start.duration") or _number(
        sent.get("seconds"), "end.sum_sent.seconds"
    )
    start = _object(document["start"], "start")
    reverse = bool(test.get("reverse"))
    # The file is the iperf3 server's (-s -J) when it accepted the connection; the host that wrote
    # it sent unless exactly one of "server's file" and "reversed (-R)" holds.
    server_file = "accepted_connection" in start
    local_sends = reverse == server_file
    intervals = _intervals(document, _mss(start))
    client_settings, server_settings = _host_settings(start, end, intervals, local_sends)
    started_at = _started_at(start)
    target = test.get("target_bitrate")
    retransmits = sent.get("retransmits")
    retransmits = None if retransmits is None else int(_number(retransmits, "end.sum_sent.retransmits"))
    sockbuf = int(_number(start["sock_bufsize"], "start.sock_bufsize")) if start.get("sock_bufsize") else None
    return ImportedRun(
        source=RunSource.iperf3,
        mode=ProbeMode.async_,
        conns=conns,
        message_bytes=blksize or 128 * 1024,
        sockbuf_bytes=sockbuf,
        duration_seconds=duration,
        interval_seconds=first_step(intervals) or duration,
        rate_bits_per_second=int(target)
        if isinstance(target, int | float) and 0 < target <= _MAX_BITS_PER_SECOND
        else None,
        bytes_per_second=received_bytes / received_seconds,
        seconds=received_seconds,
        bytes_received=int(received_bytes),
        retransmits=retransmits,
        **_sender_counts(start, sent, local_sends),
        started_at=started_at,
        probe_version=str(start.get("version") or "iperf3")[:50],
        notes=_notes(reverse=reverse, server_file=server_file),
        client_settings=client_settings,
        server_settings=server_settings,
        intervals=intervals,
        text=text,
        first_line=1,
    )


def _load(text: str) -> dict:
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
    return document


def _tcp_test(document: dict) -> dict:
    """start.test_start, refused unless it is a one-way TCP test."""
    test = _get(document, "start.test_start")
    protocol = str(test.get("protocol", "TCP")).upper()
    if protocol != "TCP":
        raise ResultFileError(f"a {protocol} test: redo transport runs over TCP, so only TCP tests are imported")
    if test.get("bidir"):
        raise ResultFileError("a bidirectional test (--bidir): import one direction per run")
    return test


def _received(received: dict) -> tuple[float, float]:
    """end.sum_received: the bytes the receiver counted and the seconds it counted them over."""
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
    return received_bytes, received_seconds


def _mss(start: dict) -> float | None:
    """The segment size in bytes, to turn iperf3's congestion window (bytes) into segments; None
    when iperf3 wrote none (absent or 0: the platform did not tell it). A segment is a whole number
    of bytes: a smaller divisor (1e-300) would turn any window into an infinite number of segments."""
    key = "tcp_mss_default" if start.get("tcp_mss_default") else "tcp_mss"
    if not start.get(key):
        return None
    mss = _number(start[key], f"start.{key}", MAX_MTU_BYTES)
    if mss < 1 or not mss.is_integer():
        raise ResultFileError(
            f"start.{key} is {start[key]!r:.40}: a segment size is a whole number of bytes, 1 to {MAX_MTU_BYTES:,}"
        )
    return mss


def _intervals(document: dict, mss: float | None) -> list[dict]:
    """The intervals in redoprobe's form, without -O's warm-up (iperf3 leaves it out of its totals too)."""
    intervals = []
    for index, interval in enumerate(_array(document.get("intervals"), "intervals")):
        total = _object(_object(interval, f"intervals[{index}]").get("sum"), f"intervals[{index}].sum")
        if total.get("omitted"):
            continue
        begin = _number(total.get("start"), f"intervals[{index}].sum.start")
        finish = _number(total.get("end"), f"intervals[{index}].sum.end")
        if finish < begin:
            raise ResultFileError(f"intervals[{index}].sum ends ({finish:g} s) before it starts ({begin:g} s)")
        streams = [
            _stream(stream, f"intervals[{index}].streams[{number - 1}]", number, mss)
            for number, stream in enumerate(_array(interval.get("streams"), f"intervals[{index}].streams"), 1)
        ]
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
    return intervals


def _stream(stream, where: str, number: int, mss: float | None) -> dict:
    """One stream of an interval in redoprobe's form, numbered from 1."""
    stream = _object(stream, where)
    one = {"id": number, "bytes": int(_number(stream.get("bytes", 0), f"{where}.bytes"))}
    for theirs, ours, maximum in (
        ("rtt", "rtt_us", _MAX_RTT_US),
        ("rttvar", "rttvar_us", _MAX_RTT_US),
        ("pmtu", "pmtu", MAX_MTU_BYTES),
    ):
        if stream.get(theirs) is not None:  # iperf3 gives round-trip times in µs, as redoprobe
            one[ours] = int(_number(stream[theirs], f"{where}.{theirs}", maximum))
    if stream.get("snd_cwnd") is not None and mss:
        # iperf3 gives bytes, redoprobe segments
        one["snd_cwnd"] = round(_number(stream["snd_cwnd"], f"{where}.snd_cwnd") / mss)
    if stream.get("retransmits") is not None:
        one["retransmits"] = int(_number(stream["retransmits"], f"{where}.retransmits"))
    return one


def _host_settings(start: dict, end: dict, intervals: list[dict], local_sends: bool) -> tuple[dict, dict]:
    """The client's and the server's settings: congestion control of each, the largest path MTU on
    the sender, and the kernel of the host that wrote the file."""
    local = {}
    system = str(start.get("system_info") or "").split()
    if len(system) >= 3 and system[0] == "Linux":
        local["kernel"] = system[2]
    sender = {"tcp_congestion_control": end.get("sender_tcp_congestion")} if end.get("sender_tcp_congestion") else {}
    receiver = (
        {"tcp_congestion_control": end.get("receiver_tcp_congestion")} if end.get("receiver_tcp_congestion") else {}
    )
    mtus = [stream["pmtu"] for interval in intervals for stream in interval["streams"] if "pmtu" in stream]
    if mtus:
        sender["mtu_bytes"] = max(mtus)
    return ({**sender, **local}, receiver) if local_sends else (sender, {**receiver, **local})


def _started_at(start: dict) -> datetime | None:
    timestamp = _object(start.get("timestamp"), "start.timestamp").get("timesecs")
    if timestamp is None:
        return None
    return datetime.fromtimestamp(_number(timestamp, "start.timestamp.timesecs", _LATEST_EPOCH), UTC)


def _sender_counts(start: dict, sent: dict, local_sends: bool) -> dict:
    """Bytes sent and the granted socket buffers, kept only when the file is the sender's: a
    receiver's file counts nothing sent (iperf3 writes 0 there), and its buffers are the receiver's."""
    if not local_sends:
        return {"bytes_sent": None, "sndbuf_granted_bytes": None, "rcvbuf_granted_bytes": None}
    return {
        "bytes_sent": int(_number(sent.get("bytes"), "end.sum_sent.bytes")),
        "sndbuf_granted_bytes": _int_or_none(start.get("sndbuf_actual"), "start.sndbuf_actual"),
        "rcvbuf_granted_bytes": _int_or_none(start.get("rcvbuf_actual"), "start.rcvbuf_actual"),
    }


def _notes(*, reverse: bool, server_file: bool) -> str:
    return " ".join(
        note
        for note, applies in (
            ("Reversed (-R): the iperf3 server sent.", reverse),
            ("Read from the iperf3 server's output.", server_file),
        )
        if applies
    )
