"""The environment page as a workspace: Plan, History, Experiments, and Hosts & credentials, each
section from its own area's context; the section fragments htmx swaps in place."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Depends, Request, status
from starlette.responses import Response

from redolab.auth.deps import current_html_user
from redolab.core.deps import SessionDep
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.planning.card import MISSING
from redolab.planning.service import environment_plan
from redolab.redo import service as redo_service
from redolab.redo.analysis import stored_analysis
from redolab.runs import service as run_service
from redolab.web.collect import collect_context
from redolab.web.environments import credentials_context, hosts_context, load_environment
from redolab.web.experiments import experiments_context
from redolab.web.hadr import hadr_context
from redolab.web.planning import plan_context, selection_from
from redolab.web.preflight import preflight_context
from redolab.web.redo import history_context
from redolab.web.rehearsals import rehearsals_context
from redolab.web.watches import watches_context

router = APIRouter(dependencies=[Depends(current_html_user)])


@router.get("/environments/{environment_id}")
def show_environment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The environment workspace: facts, then Plan, History, Experiments, Hosts & credentials."""
    return environment_page(request, session, load_environment(session, environment_id))


@dataclass(frozen=True)
class FirstStep:
    """One step of a new environment's checklist, ticked by what exists."""

    key: str
    label: str
    done: bool
    href: str  # the step's form on the page; its section when the user may not use the form
    who: str = ""  # who does it, when not the current user ("an admin")


def first_steps(context: dict, user) -> list[FirstStep]:
    """Import history, add hosts, verify host keys, run, read the plan: ticked from the page's own
    context; for a step the user's role cannot take, who can."""
    admin, operator = bool(user and user.is_admin), bool(user and user.can_operate)
    hosts = list(context["hosts"])
    roles = {host.role.value for host in hosts}
    over_ssh = [host for host in hosts if host.transport.value != "local"]
    ran = any(run.status.value == "succeeded" for run in context["matching_runs"])
    plan, can_run = context["plan"], operator and bool(context["host_options"])
    operators = "an operator or an admin"
    keys_label = "Verify the hosts' SSH keys" + (" (not needed on this machine)" if hosts and not over_ssh else "")
    return [
        FirstStep(
            "history",
            "Import the redo history",
            bool(context["imports"]),
            "#redo-upload-panel" if operator else "#history",
            "" if operator else operators,
        ),
        FirstStep(
            "hosts",
            "Add the primary and standby hosts",
            {"primary", "standby"} <= roles,
            "#host-panel-form" if admin else "#hosts",
            "" if admin else "an admin",
        ),
        FirstStep(
            "keys",
            keys_label,
            bool(hosts) and all(h.host_key_fingerprint for h in over_ssh),
            "#hosts",
            "" if admin else "an admin",
        ),
        FirstStep(
            "run",
            "Run an experiment between them",
            ran,
            "#run-panel" if can_run else "#experiments",
            "" if operator else operators,
        ),
        # the plan answers from measurements once there is redo history and a run: an import alone (the
        # nominal link judged) leaves the step open
        FirstStep(
            "plan",
            "Read the plan",
            bool(context["imports"]) and ran and plan.card("transport").status != MISSING,
            "#plan",
        ),
    ]


def environment_page(request: Request, session, environment, *, status_code: int = 200, **forms) -> Response:
    """The whole environment page; `forms` refills the Experiments forms (values and errors). The
    stored redo analysis is read once, here, for the sections that show it (History and Plan)."""
    history = stored_analysis(session=session, environment=environment)
    context = {
        **hosts_context(environment),
        **experiments_context(session, environment, **forms),
        **credentials_context(),
        **history_context(session, environment, history=history),
        **collect_context(session, environment, request.app.state.settings.upload_dir),
        **rehearsals_context(session, environment),
        **watches_context(session, environment),
        **preflight_context(session, environment),
        **hadr_context(session, environment),
        **plan_context(
            session,
            environment,
            selection_from(request),
            history=history,
            show_evidence=request.query_params.get("evidence") == "1",
        ),
    }
    context["first_steps"] = open_steps(first_steps(context, getattr(request.state, "user", None)))
    return render(request, "environments/detail.html", context, status_code=status_code)


def open_steps(steps: list[FirstStep]) -> list[FirstStep]:
    """The checklist while a step is open; none once every step is done."""
    return steps if not all(step.done for step in steps) else []


@router.get("/environments/{environment_id}/first-steps")
def show_first_steps(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The first-steps checklist, as the fragment that reloads itself when hosts change (empty once
    every step is done). A plain browser request goes to the checklist on the whole page."""
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment_id}#first-steps")
    environment = load_environment(session, environment_id)
    context = {
        "environment": environment,
        "hosts": environment.hosts,
        "host_options": environment.hosts,
        "imports": redo_service.list_imports(session=session, environment=environment),
        "matching_runs": run_service.list_runs(session=session, environment=environment),
        "plan": environment_plan(session=session, environment=environment),
    }
    context["first_steps"] = open_steps(first_steps(context, request.state.user))
    return render(request, "environments/detail.html", context, block="first_steps")


@router.get("/environments/{environment_id}/experiments")
def show_experiments(
    request: Request, session: SessionDep, environment_id: int, tag: str = "", mtu: str = ""
) -> Response:
    """The Experiments section (run and sweep forms, runs, sweeps), as a fragment; ?tag= and
    ?mtu= filter the lists. A plain browser request goes to the section on the whole page."""
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment_id}#experiments")
    environment = load_environment(session, environment_id)
    context = {"environment": environment, **experiments_context(session, environment, tag=tag, mtu=mtu)}
    return render(request, "environments/detail.html", context, block="experiments")


def experiments_form_error(request, session, environment, **forms) -> Response:
    """The Experiments section again with a form's errors and what was typed (422); the whole page
    when the form was posted without htmx."""
    if not is_htmx(request):
        return environment_page(request, session, environment, status_code=422, **forms)
    context = {"environment": environment, **experiments_context(session, environment, **forms)}
    return render(
        request,
        "environments/detail.html",
        context,
        block="experiments",
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )
