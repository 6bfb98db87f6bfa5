"""The Pre-flight panel of the environment page: the configuration judged, one row per check, and the
paste boxes for the Broker's VALIDATE outputs and V$RECOVERY_PROGRESS (the same services as the JSON
API, preflight.service). Everyone reads it; operators paste and delete."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from starlette.responses import Response

from redolab.auth.deps import OperatorUser, current_html_user
from redolab.core.deps import FormDep, SessionDep
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, render
from redolab.environments import service as environments
from redolab.environments.models import Environment
from redolab.preflight import service
from redolab.preflight.schemas import EvidenceCreate

router = APIRouter(dependencies=[Depends(current_html_user)])

FIELDS = ("kind", "label", "text")


def preflight_context(session, environment: Environment, *, values=None, errors=None) -> dict:
    return {
        "preflight": service.preflight(session, environment),
        "preflight_values": values or {"kind": "broker"},
        "preflight_errors": errors or {},
    }


def _section(request: Request, session, environment: Environment, *, status_code: int = 200, values=None, errors=None):
    context = {"environment": environment, **preflight_context(session, environment, values=values, errors=errors)}
    return render(request, "environments/_preflight.html", context, status_code=status_code)


def _done(request: Request, session, environment: Environment) -> Response:
    if is_htmx(request):
        return _section(request, session, environment)
    return redirect(request, f"/environments/{environment.id}#preflight")


@router.post("/environments/{environment_id}/preflight/evidence")
def paste_evidence(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Keep a pasted output as rows of the card; a malformed one is shown beside the box (422)."""
    environment = environments.get_environment(session=session, environment_id=environment_id)
    values = {field: value for field, value in form_data(form).items() if field in FIELDS}
    with form_errors(session) as errors:
        evidence_in = EvidenceCreate.model_validate(values)
        service.add_evidence(
            session, environment, kind=evidence_in.kind, label=evidence_in.label, text=evidence_in.text,
            user=user.username,
        )  # fmt: skip
    if errors:
        placed = {(field if field in FIELDS else "__all__"): message for field, message in errors.items()}
        unprocessable = status.HTTP_422_UNPROCESSABLE_CONTENT
        return _section(request, session, environment, status_code=unprocessable, values=values, errors=placed)
    return _done(request, session, environment)


@router.delete("/environments/{environment_id}/preflight/evidence/{evidence_id}")
def delete_evidence(request: Request, session: SessionDep, user: OperatorUser, environment_id: int, evidence_id: int):
    """Remove a pasted output and its rows."""
    environment = environments.get_environment(session=session, environment_id=environment_id)
    service.delete_evidence(session, service.get_evidence(session, evidence_id, environment))
    session.refresh(environment)
    return _done(request, session, environment)
