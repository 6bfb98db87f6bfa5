"""The Paths page: every watched path's state at a glance, as a grid per environment (from host by
to host, as perfSONAR's MaDDash draws its mesh): green OK, amber AT RISK, red FAILING, grey not yet
known, each cell with its last check's measured and required rates and the rule that coloured it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from fastapi import APIRouter, Depends, Request
from sqlalchemy import func, select
from starlette.responses import Response

from redolab.auth.deps import current_html_user
from redolab.core.deps import SessionDep
from redolab.core.templating import render
from redolab.core.units import format_byte_rate
from redolab.environments.models import Environment, Host
from redolab.watches.models import CheckStatus, Watch, WatchCheck

router = APIRouter(dependencies=[Depends(current_html_user)])

EVERY_NODE = "every node"  # the row and column of a watch of all node pairs at once (summed)


@dataclass(frozen=True)
class PathCell:
    """One watch drawn in its cell: its state, its last judged check and the rule its colour follows."""

    watch: Watch
    state: str  # the WatchState value: ok, at_risk, failing, unknown
    state_label: str
    measured_bytes_per_second: float | None
    required_bytes_per_second: float | None
    checked_at: datetime | None
    rule: str


@dataclass(frozen=True)
class PathGrid:
    """An environment's watched paths: senders as rows, receivers as columns, cells by (row, column)."""

    environment: Environment
    senders: list[str]
    receivers: list[str]
    cells: dict[tuple[str, str], list[PathCell]]


def rule_of(watch: Watch, required: float | None) -> str:
    """The rule behind a cell's colour, in words and with its numbers (bytes/s shown in MiB/s)."""
    margin = f"{watch.margin_ratio * 100:g} %"
    agree = "the last check" if watch.of_n == 1 else f"{watch.agree_m} of the last {watch.of_n} checks"
    if required is None:
        return f"Not yet known until {agree} {'is' if watch.of_n == 1 else 'are'} judged against a requirement."
    at_risk = required * (1 + watch.margin_ratio)
    return (
        f"Green: at least {format_byte_rate(at_risk)} (required + {margin}); amber: under that; "
        f"red: under the {format_byte_rate(required)} required; in {agree}."
    )


def _last_judged(session, watch_ids: list[int]) -> dict[int, WatchCheck]:
    if not watch_ids:
        return {}
    newest = (
        select(func.max(WatchCheck.id))
        .where(WatchCheck.watch_id.in_(watch_ids), WatchCheck.status == CheckStatus.judged)
        .group_by(WatchCheck.watch_id)
    )
    return {check.watch_id: check for check in session.scalars(select(WatchCheck).where(WatchCheck.id.in_(newest)))}


def path_grids(session) -> list[PathGrid]:
    """Every environment with a watch (deleted watches left out), its grid of watched paths."""
    watches = list(session.scalars(select(Watch).where(Watch.deleted_at.is_(None)).order_by(Watch.id)))
    last = _last_judged(session, [watch.id for watch in watches])
    host_ids = {i for watch in watches for i in (watch.client_host_id, watch.server_host_id) if i is not None}
    names = dict(session.execute(select(Host.id, Host.name).where(Host.id.in_(host_ids))).all()) if host_ids else {}
    grids: dict[int, PathGrid] = {}
    for watch in watches:
        environment = session.get(Environment, watch.environment_id)
        grid = grids.setdefault(environment.id, PathGrid(environment, [], [], {}))
        sender, receiver = _ends(watch, names)
        if sender not in grid.senders:
            grid.senders.append(sender)
        if receiver not in grid.receivers:
            grid.receivers.append(receiver)
        check = last.get(watch.id)
        required = check.required_bytes_per_second if check is not None else watch.threshold_bytes_per_second
        grid.cells.setdefault((sender, receiver), []).append(
            PathCell(
                watch=watch,
                state=watch.state.value,
                state_label=watch.state.label,
                measured_bytes_per_second=check.measured_bytes_per_second if check is not None else None,
                required_bytes_per_second=required,
                checked_at=check.at if check is not None else None,
                rule=rule_of(watch, required),
            )
        )
    return sorted(grids.values(), key=lambda grid: grid.environment.name.casefold())


def _ends(watch: Watch, names: dict[int, str]) -> tuple[str, str]:
    """The cell's row and column: the sending and the receiving host (a removed host by its path label)."""
    if watch.all_node_pairs:
        return EVERY_NODE, EVERY_NODE
    label_from, _, label_to = watch.path_label.partition(" -> ")
    return names.get(watch.client_host_id, label_from), names.get(watch.server_host_id, label_to or "?")


@router.get("/paths")
def show_paths(request: Request, session: SessionDep) -> Response:
    """The Paths page: every watched path's state, one grid per environment."""
    return render(request, "paths/paths.html", {"grids": path_grids(session)})
