"""The plan as the environment page shows it, and the plan report for change approval (HTML to
print, PDF, JSON)."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Depends, Request
from starlette.responses import JSONResponse, Response

from redolab.auth.deps import current_html_user
from redolab.charts.plan import ack_cdf_figure, lag_figure
from redolab.core.deps import SessionDep
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.core.units import format_byte_rate
from redolab.environments.service import get_environment
from redolab.planning.answer import answer_strip
from redolab.planning.card import show_time
from redolab.planning.commit import SyncCommit
from redolab.planning.report import ReportError, plan_report, render_pdf, report_html
from redolab.planning.service import Selection, environment_plan
from redolab.redo.analysis import RedoAnalysis
from redolab.runs.loaded import ack_histogram
from redolab.watches.trend import plan_forecast
from redolab.web.titles import plan_chart_title

router = APIRouter(dependencies=[Depends(current_html_user)])


def selection_from(request: Request) -> Selection:
    """The evidence chosen in the query (chosen=1&import=3&run=7&exclude_tag=x), as the page's form sends it."""
    params = request.query_params
    return parse_selection(
        chosen=params.get("chosen") in ("1", "true", "on"),
        imports=params.getlist("import"),
        runs=params.getlist("run"),
        exclude_tags=params.getlist("exclude_tag"),
        rehearsals=params.getlist("rehearsal"),
    )


def parse_selection(*, chosen: bool, imports, runs, exclude_tags, rehearsals=()) -> Selection:
    """Ids that are not whole numbers are left out (they name no import or run)."""

    def ids(values) -> list[int]:
        return [int(v) for v in values if str(v).strip().isdigit() and len(str(v).strip()) < 12]

    return Selection.parse(
        chosen=chosen,
        imports=ids(imports),
        runs=ids(runs),
        exclude_tags=[t.strip()[:50] for t in exclude_tags],
        rehearsals=ids(rehearsals),
    )


# Longer evidence lists load when opened: 500 runs' rows were 40 % of the page's time and 200 KiB.
EVIDENCE_INLINE = 50


def plan_context(
    session,
    environment,
    selection: Selection | None = None,
    *,
    history: RedoAnalysis | None,
    show_evidence: bool = False,
) -> dict:
    """What the environment page's Plan section needs, from `history` (the stored redo analysis the
    page read). The evidence list is on the page when it is short, when evidence was chosen or
    `show_evidence`; otherwise it loads when opened."""
    selection = selection or Selection()
    plan = environment_plan(session=session, environment=environment, selection=selection, history=history)
    lag = plan.card("lag")
    return {
        **_evidence_context(plan, selection),
        "evidence_open": show_evidence,
        "evidence_inline": show_evidence or bool(selection.query) or len(plan.evidence) <= EVIDENCE_INLINE,
        "lag_figure": _lag_figure(environment, lag, plan.time_zone) if lag.lag_series else None,
        "ack_cdf_figure": _ack_cdf(session, environment, plan.card("commit").result),
        "plan_forecast": plan_forecast(environment=environment, plan=plan, history=history),
        "answer_strip": answer_strip(
            plan, partial(show_time, zone=plan.time_zone), rpo_goal_seconds=environment.rpo_goal_seconds
        ),
    }


def _lag_figure(environment, lag, zone: str) -> str | None:
    """The lag card's chart, its title block naming the period the history covers."""
    times = [moment for points in lag.lag_series.values() for moment, _ in points]
    title = plan_chart_title(
        "ASYNC transport lag: the redo history replayed through the link",
        environment,
        first=min(times, default=None),
        last=max(times, default=None),
    )
    return lag_figure(lag.lag_series, zone, _drains(lag), title)


def _ack_cdf(session, environment, commit) -> str | None:
    """The SYNC commit card's CDF of acknowledgements idle and under load, when both were measured."""
    found = commit.under_load if isinstance(commit, SyncCommit) else None
    if found is None:
        return None
    curves = [
        (f"idle, run #{found.idle.id}", ack_histogram(session, found.idle.id)),
        (f"under load, run #{found.loaded.id}", ack_histogram(session, found.loaded.id)),
    ]
    title = plan_chart_title(
        "SYNC acknowledgement latency, idle and under load",
        environment,
        measured=f"runs #{found.idle.id} (idle) and #{found.loaded.id} (under load), one connection each",
    )
    return ack_cdf_figure(curves, title) if all(histogram for _, histogram in curves) else None


def _drains(lag) -> dict[int, str]:
    """Each replayed thread's drain rate and its capacity's origin, as the lag card says them."""
    return {
        t.need.thread: f"drained at {format_byte_rate(t.stream.bytes_per_second)}, {t.stream.label}"
        for t in lag.result.replayed
    }


@router.get("/environments/{environment_id}/plan/evidence")
def plan_evidence(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The Plan section's evidence list, as the fragment its folded list loads when opened; a plain
    browser request gets the environment page with the list open."""
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment_id}?evidence=1#plan-evidence")
    environment = get_environment(session=session, environment_id=environment_id)
    selection = selection_from(request)
    plan = environment_plan(session=session, environment=environment, selection=selection)
    context = {"environment": environment, **_evidence_context(plan, selection)}
    return render(request, "planning/_evidence.html", context)


def _evidence_context(plan, selection: Selection) -> dict:
    """What the evidence list (planning/_evidence.html) needs besides the environment."""
    return {"plan": plan, "selection": selection, "plan_tags": sorted({t for item in plan.evidence for t in item.tags})}


@router.get("/environments/{environment_id}/plan/report")
def plan_report_page(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The printable plan report: what a change board reads."""
    environment = get_environment(session=session, environment_id=environment_id)
    report = plan_report(
        session=session, environment=environment, selection=selection_from(request), author=request.state.user.username
    )
    return render(request, "planning/report.html", {"report": report})


@router.get("/environments/{environment_id}/plan/report.json")
def plan_report_json(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The plan report as JSON (units in the keys)."""
    environment = get_environment(session=session, environment_id=environment_id)
    report = plan_report(
        session=session, environment=environment, selection=selection_from(request), author=request.state.user.username
    )
    filename = f"redolab-plan-{environment.id}.json"
    return JSONResponse(report.to_json(), headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@router.get("/environments/{environment_id}/plan/report.pdf")
def plan_report_pdf(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The plan report as PDF, printed by headless Chromium from the same HTML."""
    environment = get_environment(session=session, environment_id=environment_id)
    report = plan_report(
        session=session, environment=environment, selection=selection_from(request), author=request.state.user.username
    )
    try:
        pdf = render_pdf(report_html(report))
    except ReportError as error:
        return Response(str(error), status_code=503, media_type="text/plain", headers={"Retry-After": "5"})
    filename = f"redolab-plan-{environment.id}.pdf"
    return Response(
        pdf, media_type="application/pdf", headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )
