"""The environment page as a workspace: Plan, History, Experiments, and Hosts & credentials, each
section from its own area's context; the section fragments htmx swaps in place."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from starlette.responses import Response

from redolab.auth.deps import current_html_user
from redolab.core.deps import SessionDep
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.web.environments import credentials_context, hosts_context, load_environment
from redolab.web.experiments import experiments_context
from redolab.web.hadr import hadr_context
from redolab.web.planning import plan_context, selection_from
from redolab.web.redo import history_context

router = APIRouter(dependencies=[Depends(current_html_user)])


@router.get("/environments/{environment_id}")
def show_environment(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The environment workspace: facts, then Plan, History, Experiments, Hosts & credentials."""
    return environment_page(request, session, load_environment(session, environment_id))


def environment_page(request: Request, session, environment, *, status_code: int = 200, **forms) -> Response:
    """The whole environment page; `forms` refills the Experiments forms (values and errors)."""
    context = {
        **hosts_context(environment),
        **experiments_context(session, environment, **forms),
        **credentials_context(),
        **history_context(session, environment),
        **hadr_context(session, environment),
        **plan_context(
            session, environment, selection_from(request), show_evidence=request.query_params.get("evidence") == "1"
        ),
    }
    return render(request, "environments/detail.html", context, status_code=status_code)


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
