"""The redo-growth forecast (issue 37, pure): when does the required redo rate outgrow the link?

From the stored redo analysis's samples, the peak rate of each ISO week (or calendar month) in UTC;
through those peaks a Theil-Sen line (scipy.stats.theilslopes: the median of the pairwise slopes, robust
to a few odd weeks) with its confidence interval; and the date at which the required rate, the trend's
peak x (1 + headroom), reaches the link's measured capacity (the watch's 5th percentile, or the plan's).

Rules, so that the page can say exactly what it shows:
- Fewer than `min_periods` peaks: no trend ("insufficient").
- Growth is detected only when the whole confidence interval of the slope lies above zero; an interval
  that includes zero (or lies below it) reads "no growth detected", whatever the central slope.
- The present required rate is the central line's value now x (1 + headroom); above the capacity it
  is "already_short", which comes before any statement about growth.
- The three lines (central, low and high slope) all pass through the median point of the data
  (median day, median peak): Theil-Sen's own convention, intercept = median(y) - slope x median(x)
  (scipy's method="separate"). The high slope gives the earliest crossing, the low slope the latest;
  the interval reflects the slope's uncertainty only, the level at the median point is taken as known.
  An earliest crossing before `now` is reported as `now` (the central line is not short yet, a faster
  growth might already be).
- A crossing past `now + horizon_days` is not dated ("beyond_horizon", or crossing_latest None).
- Each peak stands at the start of its period, while a growing rate peaks late in it: the line sits up
  to half a period early, so the dates err on the early (safe) side.

Units: bytes per second for rates; slopes in bytes per second per day; messages in MiB/s (per month:
365.25 / 12 days), through redolab.core.units. Times are UTC (a naive datetime is read as UTC).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import numpy as np

from redolab.core.units import MIB, format_byte_rate, ratio_as_percent

CROSSING = "crossing"
NO_GROWTH = "no_growth"
ALREADY_SHORT = "already_short"
INSUFFICIENT = "insufficient"
BEYOND_HORIZON = "beyond_horizon"

PERIODS = ("week", "month")
DAYS_PER_MONTH = 365.25 / 12  # the "per month" of the messages' slopes
SECONDS_PER_DAY = 86400.0
MAX_HORIZON_DAYS = 100 * 365.25  # keeps every date the forecast can name far inside datetime's range
# A first or last period whose samples stop further than this from its edge is partial (complete_only).
_EDGE_DAYS = {"week": 1.0, "month": 3.0}


@dataclass(frozen=True)
class Forecast:
    """The forecast for the plan and the watch page. Rates in bytes per second, slopes in bytes per
    second per day, times in UTC."""

    status: str  # CROSSING | NO_GROWTH | ALREADY_SHORT | INSUFFICIENT | BEYOND_HORIZON
    message: str  # the sentence for the page, units and dates (to the month) included
    periods: int  # how many weekly (or monthly) peaks the trend used
    period: str  # "week" or "month"
    slope_bytes_per_second_per_day: float | None  # Theil-Sen slope of the peak redo rate
    slope_low: float | None  # its confidence interval (bytes/s per day)
    slope_high: float | None
    crossing: datetime | None  # when the required rate (peak x (1 + headroom)) reaches the capacity
    crossing_earliest: datetime | None  # from the high slope; never before `now`
    crossing_latest: datetime | None  # from the low slope; None past the horizon
    capacity_bytes_per_second: float | None
    capacity_basis: str  # e.g. "the watch's 5th percentile over 24 h"
    peak_now_bytes_per_second: float | None = None  # the central line's value at `now`
    required_now_bytes_per_second: float | None = None  # that x (1 + headroom)


def peaks_by_period(
    points: Iterable[tuple[datetime, float]], *, period: str = "week", complete_only: bool = False
) -> list[tuple[datetime, float]]:
    """(start of each ISO week / calendar month in UTC, the highest rate in it), from (time, bytes/s)
    samples, in time order. Periods without samples are absent, not zero.

    complete_only: leave out the first and the last period when the samples stop more than a day (a
    week) or three days (a month) short of its edge: a partial period's peak is low, not a peak."""
    _check_period(period)
    peaks: dict[datetime, float] = {}
    first = last = None
    for index, (moment, rate) in enumerate(points):
        when = _utc(moment, f"sample {index}")
        value = _rate_of(rate, f"sample {index} ({when.isoformat()})")
        start = _period_start(when, period)
        peaks[start] = max(value, peaks.get(start, value))
        first = when if first is None or when < first else first
        last = when if last is None or when > last else last
    ordered = sorted(peaks.items())
    if complete_only and ordered:
        edge = timedelta(days=_EDGE_DAYS[period])
        if first - ordered[0][0] > edge:
            ordered = ordered[1:]
        if ordered and _period_end(ordered[-1][0], period) - last > edge:
            ordered = ordered[:-1]
    return ordered


def forecast_growth(
    peaks: Sequence[tuple[datetime, float]],
    *,
    capacity_bytes_per_second: float | None,
    headroom_ratio: float,
    capacity_basis: str,
    now: datetime,
    min_periods: int = 8,
    period: str = "week",
    confidence: float = 0.90,
    horizon_days: float = 3650,
) -> Forecast:
    """The date the required rate (peak x (1 + headroom), bytes/s) passes the capacity (bytes/s), with
    its interval at `confidence`, from the peaks of `peaks_by_period`. See the module's rules."""
    _check_arguments(
        capacity_bytes_per_second, headroom_ratio, capacity_basis, min_periods, period, confidence, horizon_days
    )
    series = _validated_peaks(peaks)
    now = _utc(now, "now")
    if series and now < series[-1][0]:
        raise ValueError(f"now ({now.isoformat()}) is before the last peak ({series[-1][0].isoformat()})")
    base = {
        "periods": len(series),
        "period": period,
        "capacity_bytes_per_second": capacity_bytes_per_second,
        "capacity_basis": capacity_basis,
    }
    if len(series) < min_periods:
        message = f"Needs at least {min_periods} {period}s of history; there are {len(series)}."
        if capacity_bytes_per_second is None:
            message += f" The link's capacity ({capacity_basis}) is not measured yet either."
        unknown = dict.fromkeys(("slope_bytes_per_second_per_day", "slope_low", "slope_high"))
        return Forecast(
            INSUFFICIENT, message, crossing=None, crossing_earliest=None, crossing_latest=None, **unknown, **base
        )
    fit = _Fit.of(series, now, confidence, headroom_ratio)
    base |= fit.figures()
    trend = (
        f"{_per_month(fit.slope)} (between {_per_month(fit.low)} and {_per_month(fit.high)} at "
        f"{confidence * 100:g} % confidence, from {len(series)} {_PERIODIC[period]} peaks)"
    )
    said = _Said(
        trend, f"{format_byte_rate(fit.peak_now)} + {ratio_as_percent(headroom_ratio)} % headroom", capacity_basis
    )
    judged = _without_crossing(fit, capacity_bytes_per_second, said, base)
    if judged is not None:
        return judged
    return _crossing(fit, capacity_bytes_per_second, headroom_ratio, horizon_days, said, base)


@dataclass(frozen=True)
class _Said:
    trend: str  # the slope and its interval, in words
    level: str  # the trend's value now + headroom, in words
    basis: str  # where the capacity comes from


@dataclass(frozen=True)
class _Fit:
    """The Theil-Sen line through the peaks (days from the first peak -> bytes/s), anchored at the
    median point, with its slope interval, and where it stands now."""

    origin: datetime
    slope: float
    low: float
    high: float
    anchor_day: float
    anchor_rate: float
    now_day: float
    peak_now: float
    required_now: float

    @classmethod
    def of(cls, series: list[tuple[datetime, float]], now: datetime, confidence: float, headroom: float) -> _Fit:
        origin = series[0][0]
        days = np.array([(moment - origin).total_seconds() / SECONDS_PER_DAY for moment, _ in series])
        rates = np.array([rate for _, rate in series])
        # imported here: scipy.stats takes 1.5 s to import, which every CLI process and server worker
        # would pay at start-up for a figure only the plan and the watch page draw
        from scipy.stats import theilslopes

        fit = theilslopes(rates, days, alpha=confidence, method="separate")
        slope, anchor_day, anchor_rate = float(fit.slope), float(np.median(days)), float(np.median(rates))
        now_day = (now - origin).total_seconds() / SECONDS_PER_DAY
        peak_now = max(anchor_rate + slope * (now_day - anchor_day), 0.0)
        return cls(
            origin,
            slope,
            float(fit.low_slope),
            float(fit.high_slope),
            anchor_day,
            anchor_rate,
            now_day,
            peak_now,
            peak_now * (1 + headroom),
        )

    def figures(self) -> dict:
        return {
            "slope_bytes_per_second_per_day": self.slope,
            "slope_low": self.low,
            "slope_high": self.high,
            "peak_now_bytes_per_second": self.peak_now,
            "required_now_bytes_per_second": self.required_now,
        }

    def crossing_day(self, target: float, rate_slope: float) -> float:
        return self.anchor_day + (target - self.anchor_rate) / rate_slope

    def date(self, day: float) -> datetime:
        return self.origin + timedelta(days=day)


def _without_crossing(fit: _Fit, capacity: float | None, said: _Said, base: dict) -> Forecast | None:
    """Already short, no growth, or no capacity to cross: the forecast without a date (None: there is one)."""
    nothing = {"crossing": None, "crossing_earliest": None, "crossing_latest": None}
    if capacity is not None and fit.required_now > capacity:
        message = (
            f"The link is already short: the required rate now, {format_byte_rate(fit.required_now)} "
            f"(trend {said.level}), is above {format_byte_rate(capacity)}, {said.basis}; "
            f"the peak redo rate's trend changes by {said.trend}."
        )
        return Forecast(ALREADY_SHORT, message, **nothing, **base)
    if fit.low <= 0:  # the interval includes zero growth: no growth is detected, whatever the central slope
        message = (
            f"No growth detected: the peak redo rate's trend is {said.trend}; the required rate now is "
            f"{format_byte_rate(fit.required_now)} (trend {said.level})"
        )
        if capacity is None:
            message += f"; the link's capacity ({said.basis}) is not measured yet."
        else:
            message += f", within {format_byte_rate(capacity)}, {said.basis}."
        return Forecast(NO_GROWTH, message, **nothing, **base)
    if capacity is None:
        message = (
            f"No forecast: the link's capacity ({said.basis}) is not measured yet. The peak redo rate "
            f"grows {said.trend}; the required rate now is {format_byte_rate(fit.required_now)} (trend {said.level})."
        )
        return Forecast(INSUFFICIENT, message, **nothing, **base)
    return None


def _crossing(fit: _Fit, capacity: float, headroom: float, horizon_days: float, said: _Said, base: dict) -> Forecast:
    """When the growing required rate meets the capacity: central, earliest and latest, within the horizon."""
    target = capacity / (1 + headroom)  # the peak at which the required rate meets the capacity
    horizon_day = fit.now_day + horizon_days
    central_day = fit.crossing_day(target, fit.slope)
    earliest_day = max(fit.crossing_day(target, fit.high), fit.now_day)
    latest_day = fit.crossing_day(target, fit.low)
    earliest = fit.date(earliest_day) if earliest_day <= horizon_day else None
    earliest_text = "now" if earliest_day == fit.now_day else _month(earliest)
    reaches = (
        f"the required rate, now {format_byte_rate(fit.required_now)} (trend {said.level}), reaches "
        f"{format_byte_rate(capacity)}, {said.basis}"
    )
    if central_day > horizon_day:
        message = (
            f"At the present growth the link suffices past the horizon ({_month(fit.date(horizon_day))}): "
            f"{reaches}, only after that; the peak redo rate grows {said.trend}."
        )
        if earliest is not None:
            when = "now" if earliest_text == "now" else f"around {earliest_text}"
            message += f" At the fastest growth in that interval it stops sufficing {when}."
        return Forecast(
            BEYOND_HORIZON, message, crossing=None, crossing_earliest=earliest, crossing_latest=None, **base
        )
    crossing = fit.date(central_day)
    latest = fit.date(latest_day) if latest_day <= horizon_day else None
    latest_text = _month(latest) if latest is not None else f"past the horizon, {_month(fit.date(horizon_day))}"
    message = (
        f"At the present growth the link stops sufficing around {_month(crossing)} "
        f"(between {earliest_text} and {latest_text}): {reaches}; the peak redo rate grows {said.trend}."
    )
    return Forecast(CROSSING, message, crossing=crossing, crossing_earliest=earliest, crossing_latest=latest, **base)


_PERIODIC = {"week": "weekly", "month": "monthly"}


def _per_month(bytes_per_second_per_day: float) -> str:
    """A slope as MiB/s per month, with two significant digits however small it is."""
    per_month = bytes_per_second_per_day * DAYS_PER_MONTH
    magnitude = abs(per_month) / MIB
    if magnitude < 5e-7:  # below what six decimals show: zero, and never "-0"
        return f"{format_byte_rate(0.0)} per month"
    decimals = min(6, max(2, 1 - math.floor(math.log10(magnitude))))
    return f"{format_byte_rate(per_month, decimals)} per month"


def _month(moment: datetime | None) -> str:
    return "–" if moment is None else f"{moment:%Y-%m}"


def _utc(moment: datetime, what: str) -> datetime:
    if not isinstance(moment, datetime):
        raise ValueError(f"{what}: {moment!r} is not a date and time")
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _rate_of(rate: float, what: str) -> float:
    try:
        value = float(rate)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: the rate {rate!r} is not a number of bytes per second") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what}: the rate {rate!r} is not a finite, non-negative number of bytes per second")
    return value


def _validated_peaks(peaks: Sequence[tuple[datetime, float]]) -> list[tuple[datetime, float]]:
    series = []
    for index, (moment, rate) in enumerate(peaks):
        when = _utc(moment, f"peak {index}")
        series.append((when, _rate_of(rate, f"peak {index} ({when.isoformat()})")))
    series.sort(key=lambda item: item[0])
    for (before, _), (after, _) in pairwise(series):
        if before == after:
            raise ValueError(f"two peaks at {after.isoformat()}: one peak per period")
    return series


def _check_period(period: str) -> None:
    if period not in PERIODS:
        raise ValueError(f"period {period!r} is not one of {', '.join(PERIODS)}")


def _check_arguments(capacity, headroom_ratio, capacity_basis, min_periods, period, confidence, horizon_days):
    _check_period(period)
    if capacity is not None:
        _rate_of(capacity, "the capacity")
    if not math.isfinite(headroom_ratio) or headroom_ratio < 0:
        raise ValueError(f"the headroom ratio {headroom_ratio!r} is not a finite, non-negative ratio")
    if not isinstance(capacity_basis, str) or not capacity_basis.strip():
        raise ValueError("the capacity's basis is missing: say which measurement it is")
    if not isinstance(min_periods, int) or min_periods < 3:
        raise ValueError(f"min_periods {min_periods!r} is below 3: a trend with its interval needs at least 3 peaks")
    if not 0 < confidence < 1:
        raise ValueError(f"the confidence {confidence!r} is not between 0 and 1 (0.90 is 90 %)")
    if not 0 < horizon_days <= MAX_HORIZON_DAYS:
        raise ValueError(f"the horizon of {horizon_days!r} days is not between 0 and {MAX_HORIZON_DAYS:g}")


def _period_start(moment: datetime, period: str) -> datetime:
    midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        return midnight - timedelta(days=moment.weekday())  # ISO weeks start on Monday
    return midnight.replace(day=1)


def _period_end(start: datetime, period: str) -> datetime:
    if period == "week":
        return start + timedelta(days=7)
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
