"""Sweeps, the pure part: the grid, when a connection sweep has reached its plateau, the value of
a grid point over its repetitions, seed 000's table, and the sysctl commands of a kernel sweep.

Seed 000, "Determine Existing Throughput for Multiple Processes": raise the connection count by
two until the aggregate throughput does not increase for three consecutive values, and note the
count that achieved the best throughput. "Determine Optimal Maximum Socket Buffer Size": set the
tcp_rmem/tcp_wmem maximum on both hosts, let autotuning grow the buffers, and repeat.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

MAX_POINTS = 64
MAX_CONNS = 1024


def connection_steps(start: int, maximum: int, step: int | None = None) -> list[int]:
    """The connection counts to try, in order: start, then start + step, ... up to maximum.

    Without a step, the seed's ladder: start, then every even count above it (1, 2, 4, 6, ...)."""
    if start < 1 or maximum < start:
        raise ValueError("the connection sweep needs 1 <= start <= maximum")
    values = [start]
    while True:
        current = values[-1]
        following = current + step if step else (current + 2 if current % 2 == 0 else current + 1)
        if following > maximum:
            return values
        values.append(following)


@dataclass(frozen=True)
class Plateau:
    best: int | None  # the connection count that set the best throughput (the plateau's start)
    reached: bool  # `patience` consecutive values did not improve on it by more than the threshold


def find_plateau(points: list[tuple[int, float]], *, threshold_percent: float = 5.0, patience: int = 3) -> Plateau:
    """points: (connection count, throughput) in the order run. A value improves when it beats the
    best so far by more than threshold_percent; after `patience` values in a row that do not, the
    sweep has reached its plateau and stops."""
    best_conns, best_rate, misses = None, 0.0, 0
    for conns, rate in points:
        if best_conns is None or rate > best_rate * (1 + threshold_percent / 100):
            best_conns, best_rate, misses = conns, rate, 0
        else:
            misses += 1
            if misses >= patience:
                return Plateau(best_conns, True)
    return Plateau(best_conns, False)


@dataclass(frozen=True)
class PointValue:
    median: float
    low: float
    high: float
    count: int

    @property
    def spread_percent(self) -> float:
        """(high - low) / median, in percent: how far apart the repetitions were."""
        return 100 * (self.high - self.low) / self.median if self.median else 0.0


def point_value(rates: list[float]) -> PointValue | None:
    """A grid point's value: the median of its repetitions, with their range as the spread."""
    rates = [r for r in rates if r is not None]
    if not rates:
        return None
    return PointValue(statistics.median(rates), min(rates), max(rates), len(rates))


@dataclass(frozen=True)
class SeedRow:
    """One row of seed 000's table for one buffer size (a kernel maximum or an explicit size)."""

    buffer_bytes: int
    single_bytes_per_second: float | None  # one connection
    aggregate_bytes_per_second: float | None  # the best over the connection counts tried
    parallelism: int | None  # the connection count that gave it


def seed_table(points: dict[tuple[int, int], PointValue]) -> list[SeedRow]:
    """points: (buffer bytes, connections) -> value. One row per buffer size, smallest first."""
    rows = []
    for size in sorted({size for size, _ in points}):
        at_size = {conns: value for (s, conns), value in points.items() if s == size}
        single = at_size.get(1)
        best_conns = max(at_size, key=lambda c: at_size[c].median)
        rows.append(
            SeedRow(
                buffer_bytes=size,
                single_bytes_per_second=single.median if single else None,
                aggregate_bytes_per_second=at_size[best_conns].median,
                parallelism=best_conns,
            )
        )
    return rows
