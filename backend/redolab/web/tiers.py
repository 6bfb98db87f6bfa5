"""The Link tiers panel of the environment page: the links the environment's buyer can order, with
their monthly prices (the same services as the JSON API, environments.tiers). Everyone reads it;
operators add and delete tiers, as they edit the environment's other facts."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from starlette.responses import Response

from redolab.auth.deps import OperatorUser, current_html_user
from redolab.core.deps import FormDep, SessionDep
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, remember_unit_readings, render
from redolab.environments import service, tiers
from redolab.environments.models import Environment
from redolab.environments.schemas_tiers import LinkTierCreate

router = APIRouter(dependencies=[Depends(current_html_user)])

TIER_FIELDS = ("name", "bits_per_second", "monthly_price", "currency")


def _section(request: Request, environment: Environment, *, status_code: int = 200, values=None, errors=None):
    context = {"environment": environment, "tier_values": values or {}, "tier_errors": errors or {}}
    return render(request, "environments/_tiers.html", context, status_code=status_code)


def _done(request: Request, environment: Environment) -> Response:
    if is_htmx(request):
        return _section(request, environment)
    return redirect(request, f"/environments/{environment.id}#link-tiers")


@router.get("/environments/{environment_id}/link-tiers")
def show_link_tiers(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The panel as a fragment; a browser without htmx goes to the environment page."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    if not is_htmx(request):
        return redirect(request, f"/environments/{environment.id}#link-tiers")
    return _section(request, environment)


@router.post("/environments/{environment_id}/link-tiers")
def create_link_tier(
    request: Request, session: SessionDep, user: OperatorUser, environment_id: int, form: FormDep
) -> Response:
    """Add a tier from the form; its errors are shown beside their fields (422)."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    values = {field: value for field, value in form_data(form).items() if field in TIER_FIELDS}
    with form_errors(session) as errors:
        tier_in = LinkTierCreate.model_validate(values)
        tiers.create_tier(session=session, environment=environment, tier_in=tier_in)
    if errors:
        placed = {(field if field in TIER_FIELDS else "__all__"): message for field, message in errors.items()}
        unprocessable = status.HTTP_422_UNPROCESSABLE_CONTENT
        return _section(request, environment, status_code=unprocessable, values=values, errors=placed)
    remember_unit_readings(request, list(tier_in.unit_readings.values()), f"/environments/{environment.id}")
    return _done(request, environment)


@router.delete("/environments/{environment_id}/link-tiers/{tier_id}")
def delete_link_tier(request: Request, session: SessionDep, user: OperatorUser, environment_id: int, tier_id: int):
    """Delete one of the environment's tiers."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    tier = tiers.get_tier(session=session, tier_id=tier_id)
    if tier.environment_id != environment.id:
        return Response(status_code=status.HTTP_404_NOT_FOUND)
    tiers.delete_tier(session=session, tier=tier)
    session.refresh(environment)
    return _done(request, environment)
