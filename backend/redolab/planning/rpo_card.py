"""The link for the RPO on the transport card: its rows first, then the peak + headroom figure as
the rule of thumb DBAs know (its verdicts follow). Words only: every figure is planning.rpo_sizing's."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from redolab.core.units import format_bit_rate, format_byte_rate, format_bytes, format_duration
from redolab.planning.card import Card
from redolab.planning.rpo_sizing import RpoSizing
from redolab.planning.wording import rate

Show = Callable[[datetime | None], str]  # a UTC time on the database's clock


def write_rpo(card: Card, sizing: RpoSizing | None, result, show: Show) -> None:
    """The link for the RPO's rows and the peak + headroom figure (the rule of thumb) before the verdict rows."""
    rows = []
    if sizing is None:
        rows.append(("Link for the RPO", "set an RPO goal on the environment (and import a history with times)"))
    else:
        rows += rpo_rows(sizing, show)
        card.working.append(
            f"link for the RPO: the least rate at which no redo waits longer than {format_duration(sizing.rpo_seconds)}"
            " (the lag model's queue: each piece generates evenly, the link drains first in first out), solved "
            "exactly for 100 % of the time and by bisection for 99.9 and 99 %; gaps left out of the time counted; "
            f"x (1 + {sizing.headroom_ratio * 100:g} %) for headroom; line rate = payload x 8 / efficiency "
            f"({sizing.efficiency.basis})"
        )
    req = result.requirement
    rows.append(
        (
            f"Rule of thumb: peak + {result.headroom_percent:g} %",
            f"{rate(req.summed_required_bytes_per_second)} (the verdicts below judge it)",
        )
    )
    card.rows[:0] = rows


def rpo_rows(sizing: RpoSizing, show: Show) -> list[tuple[str, str]]:
    first, rest = sizing.targets[0], sizing.targets[1:]
    others = "; ".join(f"{t.share_of_time * 100:g} %: {format_bit_rate(t.bits_per_second)}" for t in rest)
    rows = [
        (
            f"Link for the RPO of {format_duration(sizing.rpo_seconds)}",
            f"{format_bit_rate(first.bits_per_second)} line rate for 100 % of the time "
            f"({format_byte_rate(first.bytes_per_second)} of redo as recorded, "
            f"{format_byte_rate(first.with_headroom_bytes_per_second)} with headroom); {others}",
        )
    ]
    if sizing.reserved_note:
        said = f"{sizing.reserved_note}; the link and the tiers judged at the rest"
        rows.append(("Reserved for other traffic", said))
    grain = f"; {sizing.granularity_note}" if sizing.granularity_note else ""
    at = sizing.at_link
    if at is not None:
        when = f" at {show(at.worst_at)}" if at.worst_at is not None else ""
        rows.append(
            (
                f"Lag at the link judged ({sizing.at_link_label})",
                f"worst {format_duration(at.worst_lag_seconds)}{when}; within the RPO "
                f"{at.share_of_time_within_rpo * 100:.3g} % of the time{grain}",
            )
        )
    for thread in sizing.threads:
        said = thread.why or (
            f"holds the RPO: worst lag {format_duration(thread.at.worst_lag_seconds)} on its "
            f"{format_byte_rate(thread.stream.bytes_per_second)} stream"
        )
        rows.append((f"Thread {thread.thread}'s own stream", said))
    outage = sizing.outage
    full = (
        f"archive destination full after {format_duration(outage.archive_full_after_seconds)}"
        if outage.archive_full_after_seconds is not None
        else f"archive destination: {outage.archive_note}"
    )
    catch_up = (
        f"catches up {format_duration(outage.catch_up_seconds)} after it"
        if outage.catch_up_seconds is not None
        else outage.catch_up_note
    )
    rows.append(
        (
            "Outage budget",
            f"the RPO is lost {format_duration(outage.rpo_lost_after_seconds)} into an outage; {full}; "
            f"a {format_duration(outage.outage_seconds)} outage over the worst stretch queues "
            f"{format_bytes(outage.backlog_bytes)} and {catch_up}",
        )
    )
    return rows
