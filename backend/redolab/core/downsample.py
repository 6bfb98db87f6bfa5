"""Long series made short enough to draw: MinMaxLTTB (tsdownsample) keeps each stretch's highest
and lowest points and the shape between, so a peak is never thinned away."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from tsdownsample import MinMaxLTTBDownsampler

RUN_POINTS = 1000  # per line on a run's charts (a one-hour run has 3,600 one-second intervals)
HISTORY_POINTS = 1500  # per line on the redo history charts (a year of archived logs is 196,000 rows)

_DOWNSAMPLER = MinMaxLTTBDownsampler()


def keep_indices(x: Sequence[float], y: Sequence[float | None], n_out: int) -> list[int]:
    """The indices of about `n_out` points of (x, y) to draw: every index when there are fewer, else
    MinMaxLTTB's choice plus the highest and the lowest point (LTTB alone may pass over the very peak
    for its neighbour), at most n_out + 2. A missing y counts as 0 for the choice only."""
    if len(y) <= n_out:
        return list(range(len(y)))
    try:  # numbers only (the common case): converted at once, not one by one
        values = np.asarray(y, dtype=float)
        values = np.where(np.isfinite(values), values, 0.0)
    except (TypeError, ValueError):
        values = np.fromiter((v if v is not None and math.isfinite(v) else 0.0 for v in y), float, len(y))
    times = np.asarray(x, dtype=float)
    extremes = {int(np.argmax(values)), int(np.argmin(values))}
    if not np.all(np.diff(times) >= 0):  # MinMaxLTTB needs sorted x; sort, choose, map back
        order = np.argsort(times, kind="stable")
        chosen = _DOWNSAMPLER.downsample(times[order], values[order], n_out=n_out)
        return sorted({int(order[i]) for i in chosen} | extremes)
    return sorted({int(i) for i in _DOWNSAMPLER.downsample(times, values, n_out=n_out)} | extremes)


def keep_indices_of_each(x: Sequence[float], ys: Sequence[Sequence[float | None]], n_out: int) -> list[int]:
    """keep_indices for several series over the same x, joined: each series' peaks are kept (the
    largest backlog need not fall where the largest lag does); at most len(ys) x (n_out + 2)."""
    return sorted(set().union(*(keep_indices(x, y, n_out) for y in ys)))


def take(values: Sequence, indices: list[int]) -> list:
    return [values[i] for i in indices]
