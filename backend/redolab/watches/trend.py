"""The growth forecast on the watch page and the plan: the weekly peaks of the summed redo rate from the
stored requirement, against the link's capacity: the watch's own checks (their 5th percentile over the
last 24 h, else over its last checks), or what the plan's transport card judged against."""

from __future__ import annotations

import threading
import weakref
from dataclasses import replace
from datetime import timedelta

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from redolab.core.db import utcnow
from redolab.environments.models import Environment
from redolab.planning.plan import Plan
from redolab.planning.wording import capacity_text
from redolab.redo.analysis import RedoAnalysis, stored_analysis
from redolab.rehearsals.window import summed_within
from redolab.watches.forecast import Forecast, forecast_growth, peaks_by_period
from redolab.watches.models import CheckStatus, Watch, WatchCheck

RECENT_CHECKS = 20  # the capacity's sample when the last 24 h have too few checks


def watch_capacity(session: Session, watch: Watch) -> tuple[float | None, str]:
    """The 5th percentile of what the watch's checks measured (bytes/s), and its basis in words."""
    judged = select(WatchCheck.measured_bytes_per_second).where(
        WatchCheck.watch_id == watch.id,
        WatchCheck.status == CheckStatus.judged,
        WatchCheck.measured_bytes_per_second.is_not(None),
    )
    day = session.scalars(judged.where(WatchCheck.at >= utcnow() - timedelta(hours=24))).all()
    if len(day) >= 3:
        return float(np.percentile(day, 5)), f"the watch's 5th percentile over 24 h ({len(day):,} checks)"
    recent = session.scalars(judged.order_by(WatchCheck.id.desc()).limit(RECENT_CHECKS)).all()
    if not recent:
        return None, "the watch's checks"  # "the link's capacity (the watch's checks) is not measured yet"
    return float(np.percentile(recent, 5)), f"the watch's 5th percentile over its last {len(recent):,} checks"


# The weekly peaks of each analysis the cache of redo.analysis holds, gone with it.
_PEAKS: weakref.WeakKeyDictionary[RedoAnalysis, tuple[list, float]] = weakref.WeakKeyDictionary()
_PEAKS_LOCK = threading.Lock()


def weekly_peaks(history: RedoAnalysis | None, environment: Environment) -> tuple[list, float]:
    """The weekly peaks of the summed redo rate (all threads added up over time, from `history`, the
    stored analysis of every import; only whole weeks), and the headroom ratio the requirement adds.
    Kept beside the analysis (a new import, headroom or zone makes a new one), so a page pays once."""
    if history is not None:
        with _PEAKS_LOCK:
            found = _PEAKS.get(history)
        if found is not None:
            return found
    requirement = history.requirement if history is not None else None
    points = []
    if requirement is not None:
        segments = [s for need in requirement.threads.values() for s in need.replay]
        if segments:
            start, end = min(s[0] for s in segments), max(s[1] for s in segments)
            points = [(s, rate) for s, _e, rate in summed_within(requirement.threads, start, end)]
    headroom = requirement.headroom_ratio if requirement is not None else environment.headroom_percent / 100
    found = (peaks_by_period(points, period="week", complete_only=True), headroom)
    if history is not None:
        with _PEAKS_LOCK:
            _PEAKS[history] = found
    return found


def forecast_from(peaks: list, *, capacity: float | None, headroom: float, basis: str) -> Forecast:
    """forecast_growth as of now; from the newest peak, said so, when the history reaches past now (an
    import in the wrong time zone, a database host's clock ahead): a forecast cannot start before
    its own data, and the page must still draw."""
    now = utcnow()
    ahead = bool(peaks) and peaks[-1][0] > now
    forecast = forecast_growth(
        peaks,
        capacity_bytes_per_second=capacity,
        headroom_ratio=headroom,
        capacity_basis=basis,
        now=peaks[-1][0] if ahead else now,
    )
    if not ahead:
        return forecast
    warning = (
        f"The redo history runs past today (its last whole week starts {peaks[-1][0]:%Y-%m-%d}): check the "
        "imports' time zone or the database host's clock; this forecast counts from that week. "
    )
    return replace(forecast, message=warning + forecast.message)


def watch_forecast(*, session: Session, environment: Environment, watch: Watch) -> Forecast:
    peaks, headroom = weekly_peaks(stored_analysis(session=session, environment=environment), environment)
    capacity, basis = watch_capacity(session, watch)
    return forecast_from(peaks, capacity=capacity, headroom=headroom, basis=basis)


def plan_forecast(*, environment: Environment, plan: Plan, history: RedoAnalysis | None) -> Forecast:
    """The same forecast against the plan's capacity: what the transport card judged all threads against
    (the link for all threads together, else the single stream), as the card names it. `history`: the
    stored analysis of every import, as the page read it."""
    peaks, headroom = weekly_peaks(history, environment)
    result = plan.card("transport").result
    judged = (result.summed if result is not None and result.summed else None) or (
        result.threads[0] if result is not None and result.threads else None
    )
    stream = judged.stream if judged is not None else None
    capacity = stream.bytes_per_second if stream is not None else None
    basis = f"the plan's {capacity_text(stream)}" if stream is not None else "the plan's runs"
    return forecast_from(peaks, capacity=capacity, headroom=headroom, basis=basis)
