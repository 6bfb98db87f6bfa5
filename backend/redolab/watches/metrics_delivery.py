"""What /metrics says about notifications (issue 57, item 3): how old the oldest notification not yet
delivered is, how many wait, and how many receivers are skipped by their circuit breaker, so an alert
fires when alerts themselves are stuck (deploy/prometheus/redolab-alerts.yml)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redolab.watches.models import Notification, NotificationReceiver

WAITING = ("pending", "sending")  # queued or being sent: not delivered, not given up, not silenced or folded


@dataclass(frozen=True)
class DeliveryFigures:
    oldest_undelivered_age_seconds: float  # 0 when nothing waits
    undelivered: int
    failing_receivers: int


def delivery_figures(session: Session, now: datetime) -> DeliveryFigures:
    failing = select(func.count(NotificationReceiver.id)).where(NotificationReceiver.failing_until > now)
    oldest, count, failing = session.execute(  # one statement: a scrape's statements are counted
        select(func.min(Notification.created_at), func.count(Notification.id), failing.scalar_subquery()).where(
            Notification.status.in_(WAITING)
        )
    ).one()
    age = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
    return DeliveryFigures(age, count or 0, failing or 0)


class DeliveryCollector(Collector):
    def __init__(self, figures: DeliveryFigures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[GaugeMetricFamily]:
        figures = self.figures
        for name, text, value in (
            ("redolab_notifications_oldest_undelivered_age_seconds",
             "Seconds since the oldest notification still waiting to be delivered was queued (0: none waits).",
             figures.oldest_undelivered_age_seconds),
            ("redolab_notifications_undelivered", "Notifications queued or being sent.", figures.undelivered),
            ("redolab_notification_receivers_failing",
             "Receivers skipped for now: their last attempts failed in a row (their circuit breaker is open).",
             figures.failing_receivers),
        ):  # fmt: skip
            family = GaugeMetricFamily(name, text)
            family.add_metric((), float(value))
            yield family
