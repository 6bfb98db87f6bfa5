#!/usr/bin/env python3
"""What the one requirement model costs against the single analysis it replaced (same rows).

Builds a two-thread RAC history of per-log rows (a log every ~2 minutes per thread, so 100,000 logs
are ~70 days) plus an hourly SYSMETRIC import of the same period, then times, in one run:
- `analyze` over every row together (what the plan used before: one pass, one basis), and
- `requirement` (finest basis per thread, the summed series where the threads overlap, the peak
  windows, the lag-replay series),
and builds the plan from the requirement. Prints seconds and rows per second; asserts nothing.

    python3 -m uv run python bench/plan_requirement.py [--logs 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from redolab.planning.plan import Facts, build_plan
from redolab.redo.analytics import analyze
from redolab.redo.dedupe import unique
from redolab.redo.requirement import ImportSeries, requirement
from redolab.redo.schemas import RedoInterval

MIB = 1024 * 1024
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def history(logs: int) -> list[ImportSeries]:
    rng = random.Random(7)  # noqa: S311  (a repeatable synthetic history, not a secret)
    rows, hourly = [], []
    for thread in (1, 2):
        clock = T0 + timedelta(seconds=rng.randint(0, 60))
        for sequence in range(logs // 2):
            seconds = rng.randint(60, 180)
            end = clock + timedelta(seconds=seconds)
            rows.append(
                RedoInterval(
                    line=sequence,
                    thread=thread,
                    start=clock,
                    end=end,
                    seconds=None,
                    bytes=rng.uniform(100, 2000) * MIB,
                    kind="log",
                    sequence=sequence + 1,
                )
            )
            clock = end
        last = clock
        hour = T0
        while hour < last:
            hourly.append(
                RedoInterval(
                    line=0,
                    thread=thread,
                    start=hour,
                    end=hour + timedelta(hours=1),
                    seconds=None,
                    bytes=rng.uniform(1, 20) * MIB * 3600,
                    kind="rate",
                    peak_bytes_per_second=rng.uniform(20, 40) * MIB,
                )
            )
            hour += timedelta(hours=1)
    return [ImportSeries(1, "archived_logs.csv", rows), ImportSeries(2, "sysmetric.tsv", hourly)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    imports = history(args.logs)
    count = sum(len(i.intervals) for i in imports)
    facts = Facts(
        platform="dataguard",
        transport_mode="ASYNC",
        database_bytes=10 * 1024**4,
        primary_nodes=2,
        standby_nodes=2,
        instantiation_goal_seconds=48 * 3600,
        headroom_percent=30,
        apply_overhead_percent=30,
        link_bits_per_second=1e10,
        link_rtt_seconds=0.02,
    )
    old, new, plan = [], [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        analyze(unique((r for i in imports for r in i.intervals), Counter()), headroom_ratio=0.3)
        old.append(time.perf_counter() - started)
        started = time.perf_counter()
        req = requirement(imports, headroom_ratio=0.3)
        new.append(time.perf_counter() - started)
        started = time.perf_counter()
        build_plan(facts=facts, requirement=req, runs=[])
        plan.append(time.perf_counter() - started)
    print(f"rows: {count:,} ({args.logs:,} logs, {count - args.logs:,} SYSMETRIC hours), best of {args.repeat}")
    print(f"analyze (one basis, before):   {min(old):.2f} s  {count / min(old):,.0f} rows/s")
    print(f"requirement (this model):      {min(new):.2f} s  {count / min(new):,.0f} rows/s")
    print(f"ratio requirement / analyze:   {min(new) / min(old):.2f}")
    print(f"build_plan from it (5 cards):  {min(plan):.2f} s (lag replay of both threads, nominal link)")


if __name__ == "__main__":
    main()
