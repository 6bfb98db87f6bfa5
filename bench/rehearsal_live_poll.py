#!/usr/bin/env python3
"""What one poll of a live rehearsal costs the web process: the figures computed from every interval
so far and the series thinned for the chart (rehearsals.results.measured + stored), for a day replayed
at recorded speed (86,400 one-second intervals a run), one run and two (two node pairs).

The live block polls once a second for each viewer, the status URL and the plan's card as often as they
are read; the series read from the events is cached between polls (only new lines are parsed), so this
is the rest of a poll. Prints milliseconds per poll (median of --repeat); asserts nothing.

    python3 -m uv run python bench/rehearsal_live_poll.py [--intervals 86400] [--runs 1 2 4] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from redolab.rehearsals.results import RunReplay, RunSeries, copy_series, measured, stored


def day(intervals: int) -> RunSeries:
    series = RunSeries()
    series.end_seconds = [float(i + 1) for i in range(intervals)]
    series.generated = [1_000_000 * (i + 1) for i in range(intervals)]
    series.sent = list(series.generated)
    series.received = [max(0, g - 5_000_000) for g in series.generated]
    series.backlog = [float((i * 7919) % 9_000_000) for i in range(intervals)]
    series.lag = [((i * 104_729) % 5_000) / 1000 for i in range(intervals)]
    return series


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=86_400, help="intervals a run (default 86,400: a day)")
    parser.add_argument("--runs", type=int, nargs="+", default=[1, 2, 4], help="runs at once (default 1 2 4)")
    parser.add_argument("--repeat", type=int, default=7, help="polls timed; the median is printed (default 7)")
    args = parser.parse_args()
    series = day(args.intervals)
    print(f"# {args.intervals:,} intervals a run; median of {args.repeat} polls")
    for runs in args.runs:
        times = []
        for _ in range(args.repeat):
            replays = [RunReplay(k, [k], [], copy_series(series)) for k in range(runs)]
            started = time.perf_counter()
            result = stored(measured(replays))
            times.append(time.perf_counter() - started)
        kept = len(result["series"]["end_seconds"])
        print(f"{runs} run(s): {statistics.median(times) * 1000:7.1f} ms a poll; {kept:,} moments drawn")


if __name__ == "__main__":
    main()
