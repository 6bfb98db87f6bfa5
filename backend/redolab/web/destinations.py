"""The destinations page of an environment: its destinations (standby, far sync instance, cascaded
standby) in position order and the shared links their hops cross. Everyone reads it; admins add and
delete both (the same services as the JSON API, environments.destinations)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from starlette.responses import PlainTextResponse, Response

from redolab.auth.deps import AdminUser, current_html_user
from redolab.core.deps import FormDep, SessionDep
from redolab.core.errors import FieldError
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import is_htmx, remember_unit_readings, render
from redolab.environments import destinations, service
from redolab.environments.models import TRANSPORT_MODES, DestinationKind, Environment, HadrRole, Platform
from redolab.environments.schemas_destinations import DestinationCreate, SharedLinkCreate

router = APIRouter(dependencies=[Depends(current_html_user)])

UNPROCESSABLE = status.HTTP_422_UNPROCESSABLE_CONTENT
DESTINATION_FIELDS = (
    "name",
    "kind",
    "transport",
    "feeds_from",
    "hadr_role",
    "link_bandwidth_bits_per_second",
    "link_rtt_seconds",
    "notes",
)
LINK_FIELDS = ("name", "bandwidth_bits_per_second", "notes")


def _page_path(environment: Environment) -> str:
    return f"/environments/{environment.id}/destinations"


def _destination_defaults(environment: Environment) -> dict[str, str]:
    """A new destination as the service would default it: a standby, fed by the primary, ASYNC (on Db2
    HADR an auxiliary in SUPERASYNC, the principal existing from the environment's creation)."""
    if environment.platform is Platform.hadr:
        return {"kind": DestinationKind.standby.value, "transport": "SUPERASYNC", "hadr_role": HadrRole.auxiliary.value}
    return {"kind": DestinationKind.standby.value, "transport": "ASYNC", "feeds_from": ""}


def _choices(environment: Environment) -> dict:
    """The selects' options: the kinds and transports of the environment's platform; feeds_from (Data
    Guard; HADR standbys are all fed by the primary) and hadr_role (HADR only)."""
    hadr = environment.platform is Platform.hadr
    kinds = [DestinationKind.standby] if hadr else list(DestinationKind)
    return {
        "hadr": hadr,
        "kind_options": [(kind.value, kind.label) for kind in kinds],
        "transport_options": [(mode.value, mode.label) for mode in TRANSPORT_MODES[environment.platform]],
        "feeds_options": [("", "the primary")] + [(str(d.id), d.name) for d in environment.destinations],
        "hadr_role_options": [(role.value, role.label) for role in HadrRole] if hadr else [],
    }


def _page(request: Request, environment: Environment, *, status_code: int = 200, **extra) -> Response:
    context = {
        "environment": environment,
        "destinations": destinations.list_destinations(environment=environment),
        "shared_links": destinations.list_shared_links(environment=environment),
        "destination_values": _destination_defaults(environment),
        "destination_errors": {},
        "link_values": {"destination_ids": []},
        "link_errors": {},
        "refusal": None,  # a delete the service refused (409): said at the top of the page
        **_choices(environment),
        **extra,
    }
    return render(request, "destinations/page.html", context, status_code=status_code)


def _placed(errors: dict[str, str], shown: dict) -> dict[str, str]:
    """Each error next to its field; one about a field the form does not show goes above the button."""
    return {(field if field in shown else "__all__"): message for field, message in errors.items()}


@router.get("/environments/{environment_id}/destinations")
def show_destinations(request: Request, session: SessionDep, environment_id: int) -> Response:
    """The destinations and shared links of an environment (everyone reads; admins change them)."""
    return _page(request, service.get_environment(session=session, environment_id=environment_id))


def _done(request: Request, environment: Environment) -> Response:
    """After a change: the page again. From htmx a reload (HX-Refresh): a redirect to this same page
    and its #anchor would only scroll, not show the change."""
    if is_htmx(request):
        return Response(status_code=status.HTTP_200_OK, headers={"HX-Refresh": "true"})
    return redirect(request, _page_path(environment) + "#destinations")


@router.post("/environments/{environment_id}/destinations")
def create_destination(
    request: Request, session: SessionDep, admin: AdminUser, environment_id: int, form: FormDep
) -> Response:
    """Add a destination after the others; bandwidth and RTT are typed with a unit ("1 Gbit/s", "40 ms")."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    values = {field: value for field, value in form_data(form).items() if field in DESTINATION_FIELDS}
    with form_errors(session) as errors:
        destination_in = DestinationCreate.model_validate(values)
        destinations.create_destination(session=session, environment=environment, destination_in=destination_in)
    if errors:
        placed = _placed(errors, values)
        return _page(
            request, environment, status_code=UNPROCESSABLE, destination_values=values, destination_errors=placed
        )
    remember_unit_readings(request, list(destination_in.unit_readings.values()), _page_path(environment))
    return _done(request, environment)


@router.post("/destinations/{destination_id}/delete")
def delete_destination(request: Request, session: SessionDep, admin: AdminUser, destination_id: int) -> Response:
    """Delete a destination; one a host, another destination or a shared link still needs is refused (409)."""
    destination = destinations.get_destination(session=session, destination_id=destination_id)
    environment = destination.environment
    try:
        destinations.delete_destination(session=session, destination=destination)
    except FieldError as error:
        if is_htmx(request):  # htmx shows a refusal's text beside the button (app.js), not a whole page
            return PlainTextResponse(error.message, status_code=error.status_code)
        return _page(request, environment, status_code=error.status_code, refusal=error.message)
    return _done(request, environment)


@router.post("/environments/{environment_id}/shared-links")
def create_shared_link(
    request: Request, session: SessionDep, admin: AdminUser, environment_id: int, form: FormDep
) -> Response:
    """Declare that the ticked destinations' hops cross one physical link of that nominal bandwidth."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    values = {field: value for field, value in form_data(form).items() if field in LINK_FIELDS}
    ticked = [value for value in form.getlist("destination_ids") if isinstance(value, str)]
    with form_errors(session) as errors:
        if not ticked:
            raise FieldError("destination_ids", "Tick the destinations whose hops cross this link (one at least).", 422)
        link_in = SharedLinkCreate.model_validate({**values, "destination_ids": ticked})
        destinations.create_shared_link(session=session, environment=environment, link_in=link_in)
    if errors:
        kept = {**values, "destination_ids": ticked}
        placed = _placed(errors, kept)
        return _page(request, environment, status_code=UNPROCESSABLE, link_values=kept, link_errors=placed)
    remember_unit_readings(request, list(link_in.unit_readings.values()), _page_path(environment))
    return _done(request, environment)


@router.post("/shared-links/{shared_link_id}/delete")
def delete_shared_link(request: Request, session: SessionDep, admin: AdminUser, shared_link_id: int) -> Response:
    """Delete a shared link (its destinations stay)."""
    link = destinations.get_shared_link(session=session, shared_link_id=shared_link_id)
    environment = service.get_environment(session=session, environment_id=link.environment_id)
    destinations.delete_shared_link(session=session, link=link)
    return _done(request, environment)
