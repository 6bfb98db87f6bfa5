#!/usr/bin/env python3
"""Read a generated file of db2pd -hadr captures (10.1+ layout, primary and standby side of one pair,
every 10 s) and build the pair views and the monitoring chart; print captures/s and the size of the
chart JSON. Prints figures; asserts nothing.

    python3 -m uv run python bench/hadr_captures.py [--captures 5000]
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "backend")]

from tests.hadr.db2pd_writer import Side, render  # noqa: E402

from redolab.charts.hadr import monitoring_figure  # noqa: E402
from redolab.hadr import db2pd  # noqa: E402
from redolab.hadr.pairs import covered, pair_views, stretches  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--captures", type=int, default=5000, help="captures per side")
    args = parser.parse_args()
    start = datetime(2026, 11, 24)
    captures = []
    for number in range(args.captures):
        at = start + timedelta(seconds=10 * number)
        position = 10**10 + number * 4 * 1024 * 1024
        captures.append([Side("PRIMARY", at, primary_pos=position, standby_pos=position - (number % 7) * 65536)])
        captures.append([Side("STANDBY", at + timedelta(seconds=1), primary_pos=position, standby_pos=position)])
    text = render(captures)
    began = time.perf_counter()
    parsed = db2pd.parse(text.splitlines())
    parse_seconds = time.perf_counter() - began
    began = time.perf_counter()
    rows = [(sample.at, sample) for sample in parsed.samples]
    views = pair_views(rows)
    parts = stretches(views)
    watched = SimpleNamespace(
        samples=rows, pairs=views, stretches=parts, spans=covered(parts), rates_by_pair={}, flags=[]
    )
    figure = monitoring_figure(watched)
    view_seconds = time.perf_counter() - began
    print(f"{len(text) / 2**20:,.1f} MiB, {len(parsed.samples):,} samples")
    print(f"parse: {parse_seconds:.2f} s ({len(parsed.samples) / parse_seconds:,.0f} samples/s)")
    print(f"pairs, stretches and chart: {view_seconds:.2f} s; chart JSON {len(figure) / 1024:,.0f} KiB")


if __name__ == "__main__":
    main()
