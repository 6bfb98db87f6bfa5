"""Reading redoprobe's JSON lines (pure functions, tested on captured output)."""

from __future__ import annotations

import json
import statistics
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
    except ValueError:  # JSONDecodeError, or an integer of more than 4,300 digits
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
    server_write_seconds: float | None  # the standby's total write time over the run
    ack_p50_seconds: float | None = None
    ack_p95_seconds: float | None = None
    ack_p99_seconds: float | None = None
    rtt_median_seconds: float | None = None  # the median over intervals of the slowest stream's RTT
    interval_count: int = 0

    @property
    def write_seconds_per_message(self) -> float | None:
        """The standby's write time per acknowledged message (SYNC with a write directory)."""
        if self.server_write_seconds is None or not self.ack_count:
            return None
        return self.server_write_seconds / self.ack_count


def histogram_percentile(histogram: list[dict], percent: float, low: float | None = None, high: float | None = None):
    """The `percent` percentile of a log-bucket histogram ([{from_us, to_us, count}]), interpolated within
    its bucket and kept within the measured min and max; microseconds, or None when it is empty."""
    total = sum(b.get("count", 0) for b in histogram)
    if not total:
        return None
    target, seen = total * percent / 100, 0
    for bucket in sorted(histogram, key=lambda b: b["from_us"]):
        count = bucket.get("count", 0)
        if count and seen + count >= target:
            start, end = bucket["from_us"], bucket["to_us"]
            value = start + (end - start) * (target - seen) / count
            if low is not None:
                value = max(value, low)
            if high is not None:
                value = min(value, high)
            return value
        seen += count
    return high


def ack_percentiles(ack: dict) -> dict[str, float | None]:
    """p50/p95/p99 of a run's acknowledgement latency, seconds, from the end event's histogram."""
    histogram = ack.get("histogram") or []
    out = {}
    for p in (50, 95, 99):
        value = histogram_percentile(histogram, p, ack.get("min"), ack.get("max"))
        out[f"p{p}"] = value / 1e6 if value is not None else None
    return out


def _rtt(value) -> bool:
    """A round-trip time in µs that can be one: a number above zero and at most an hour (an integer of
    a thousand digits in a hostile file would overflow the division to seconds)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 3.6e9


def run_metrics(lines: list[str]) -> RunMetrics:
    """Minimum TCP_INFO round-trip time over all intervals and streams, the median over intervals of
    the slowest stream's RTT, and from the end event the acknowledgement latency (sync mode: average
    and p50/p95/p99 from its histogram) and the server's total write time (with --write-dir)."""
    rtt_min_us, end, slowest, intervals = None, {}, [], 0
    for line in lines:
        event = parse_line(line)
        if event.event == "interval":
            intervals += 1
            rtts = [s["rtt_us"] for s in event.data.get("streams", []) if isinstance(s, dict) and _rtt(s.get("rtt_us"))]
            if rtts:
                slowest.append(max(rtts))
                low = min(rtts)
                rtt_min_us = low if rtt_min_us is None or low < rtt_min_us else rtt_min_us
        elif event.event == "end":
            end = event.data
    ack = end.get("ack_latency_us") or {}
    count = ack.get("count") or 0
    percentiles = ack_percentiles(ack) if count else {}
    return RunMetrics(
        rtt_min_seconds=rtt_min_us / 1e6 if rtt_min_us else None,
        ack_count=count,
        ack_avg_seconds=ack["avg"] / 1e6 if count and "avg" in ack else None,
        server_write_seconds=end.get("server_write_seconds"),
        ack_p50_seconds=percentiles.get("p50"),
        ack_p95_seconds=percentiles.get("p95"),
        ack_p99_seconds=percentiles.get("p99"),
        rtt_median_seconds=statistics.median(slowest) / 1e6 if slowest else None,
        interval_count=intervals,
    )
