"""The log disk model (pure): a write of `size` bytes takes size / rate + overhead (seed 001,
simhadr `-disk RATE OVERHEAD`). From two or more write sizes the line is fitted by least squares;
simhadr's own convention (the MB/s of the largest writes as the rate, the time per write of the
smallest as the overhead) is kept alongside, because that is what the seed passes to `simhadr -disk`.
Units: bytes, seconds, bytes per second."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Disk:
    rate_bytes_per_second: float
    overhead_seconds: float

    def write_seconds(self, size: float) -> float:
        return size / self.rate_bytes_per_second + self.overhead_seconds


@dataclass(frozen=True)
class DiskPoint:
    write_bytes: float
    seconds_per_write: float


@dataclass(frozen=True)
class DiskFit:
    fitted: Disk  # least squares over every size
    simhadr: Disk  # the seed's convention: largest writes' rate, smallest writes' time
    points: tuple[DiskPoint, ...]


def fit_disk(points: list[DiskPoint]) -> DiskFit:
    """time = size / rate + overhead through the points (two or more write sizes)."""
    sizes = sorted({p.write_bytes for p in points})
    if len(sizes) < 2:
        raise ValueError("a disk fit needs writes of at least two sizes (e.g. 4 KiB and 1 MiB)")
    n = len(points)
    mean_x = sum(p.write_bytes for p in points) / n
    mean_y = sum(p.seconds_per_write for p in points) / n
    sxx = sum((p.write_bytes - mean_x) ** 2 for p in points)
    slope = sum((p.write_bytes - mean_x) * (p.seconds_per_write - mean_y) for p in points) / sxx
    if slope <= 0:
        raise ValueError(
            "larger writes did not take longer than small ones (the disk's cache answered, or the sizes are too "
            "close): test with O_DSYNC writes of 4 KiB and at least 1 MiB"
        )
    overhead = max(0.0, mean_y - slope * mean_x)
    smallest = min(points, key=lambda p: p.write_bytes)
    largest = max(points, key=lambda p: p.write_bytes)
    simhadr = Disk(largest.write_bytes / largest.seconds_per_write, smallest.seconds_per_write)
    return DiskFit(Disk(1 / slope, overhead), simhadr, tuple(sorted(points, key=lambda p: p.write_bytes)))
