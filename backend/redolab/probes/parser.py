"""Reading redoprobe's JSON lines (pure functions, tested on captured output)."""

from __future__ import annotations

import json
from dataclasses import dataclass

EVENTS = frozenset({"start", "interval", "end", "error"})


class ProbeOutputError(ValueError):
    """A line is not a redoprobe event."""


@dataclass(frozen=True)
class ProbeEvent:
    event: str
    data: dict
    line: str


def parse_line(line: str) -> ProbeEvent:
    try:
        document = json.loads(line)
    except json.JSONDecodeError:
        raise ProbeOutputError(f"not a JSON event: {line[:120]!r}") from None
    if not isinstance(document, dict) or document.get("event") not in EVENTS:
        raise ProbeOutputError(f"not a redoprobe event: {line[:120]!r}")
    data = document.get("data")
    if not isinstance(data, dict):
        raise ProbeOutputError(f"event without data: {line[:120]!r}")
    return ProbeEvent(document["event"], data, line)


def interval_series(lines: list[str]) -> dict:
    """Per-interval throughput (total and per stream) and TCP_INFO over time, for charts."""
    series: dict = {
        "end_seconds": [],
        "bytes_per_second": [],
        "streams": {},
        "rtt_us": [],
        "snd_cwnd": [],
        "retransmits": [],
    }
    for line in lines:
        event = parse_line(line)
        if event.event != "interval":
            continue
        data = event.data
        seconds = data["end_seconds"] - data["start_seconds"]
        series["end_seconds"].append(data["end_seconds"])
        series["bytes_per_second"].append(data["bytes_per_second"])
        streams = data.get("streams", [])
        for stream in streams:
            rate = stream["bytes"] / seconds if seconds > 0 else 0
            series["streams"].setdefault(stream["id"], []).append(rate)
        rtts = [s["rtt_us"] for s in streams if "rtt_us" in s]
        series["rtt_us"].append(max(rtts) if rtts else None)
        series["snd_cwnd"].append(sum(s.get("snd_cwnd", 0) for s in streams) if streams else None)
        series["retransmits"].append(sum(s.get("retransmits", 0) for s in streams))
    return series


@dataclass(frozen=True)
class RunMetrics:
    """What planning needs from a run's stored client events (units in the names)."""

    rtt_min_seconds: float | None
    ack_count: int
    ack_avg_seconds: float | None
    server_write_seconds: float | None


def run_metrics(lines: list[str]) -> RunMetrics:
    """Minimum TCP_INFO round-trip time over all intervals and streams, and from the end event the
    acknowledgement latency (sync mode) and the server's total write time (with --write-dir)."""
    rtt_min_us, end = None, {}
    for line in lines:
        event = parse_line(line)
        if event.event == "interval":
            for stream in event.data.get("streams", []):
                rtt = stream.get("rtt_us")
                if rtt and (rtt_min_us is None or rtt < rtt_min_us):
                    rtt_min_us = rtt
        elif event.event == "end":
            end = event.data
    ack = end.get("ack_latency_us") or {}
    count = ack.get("count") or 0
    return RunMetrics(
        rtt_min_seconds=rtt_min_us / 1e6 if rtt_min_us else None,
        ack_count=count,
        ack_avg_seconds=ack["avg"] / 1e6 if count and "avg" in ack else None,
        server_write_seconds=end.get("server_write_seconds"),
    )
