"""The plan as the environment page shows it."""

from __future__ import annotations

from redolab.charts.plan import lag_figure
from redolab.planning.service import environment_plan


def plan_context(session, environment) -> dict:
    """What the environment page's Plan section needs."""
    plan = environment_plan(session=session, environment=environment)
    lag = plan.card("lag")
    return {"plan": plan, "lag_figure": lag_figure(lag.lag_series) if lag.lag_series else None}
