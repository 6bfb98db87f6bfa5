"""The notification receivers page (admin): the list (never a secret; URLs shortened), add a webhook,
Slack, Teams or mail receiver (a webhook's signing secret shown once), send a test, delete."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from redolab.auth.deps import AdminUser, current_html_user
from redolab.core.deps import FormDep, SessionDep
from redolab.core.forms import form_data, form_errors
from redolab.core.responses import redirect
from redolab.core.templating import render
from redolab.watches import notify, receivers
from redolab.watches.schemas_receivers import ReceiverCreate, ReceiverPublic

router = APIRouter(dependencies=[Depends(current_html_user)])

KINDS = [
    ("webhook", "Webhook (signed JSON)"),
    ("slack", "Slack incoming webhook"),
    ("teams", "Teams incoming webhook"),
    ("email", "Mail"),
]
DEFAULTS = {"name": "", "kind": "webhook", "url": "", "email_to": ""}


def _page(request, session, *, status_code=200, **extra) -> Response:
    context = {
        "receivers": [ReceiverPublic.of(r) for r in receivers.list_receivers(session=session)],
        "receiver_kinds": KINDS,
        "receiver_values": DEFAULTS,
        "receiver_errors": {},
        **extra,
    }
    return render(request, "watches/receivers.html", context, status_code=status_code)


@router.get("/notification-receivers")
def show_receivers(request: Request, session: SessionDep, admin: AdminUser) -> Response:
    """Where watches send their state changes (admin)."""
    return _page(request, session)


@router.post("/notification-receivers")
def add_receiver(request: Request, session: SessionDep, admin: AdminUser, form: FormDep) -> Response:
    """Add a receiver; a webhook's generated signing secret is shown on this answer only."""
    values = form_data(form)
    fields = {k: values.get(k, "") for k in (*DEFAULTS, "signing_secret")}
    with form_errors(session) as errors:
        created = receivers.create_receiver(
            session=session,
            receiver_in=ReceiverCreate.model_validate(fields),
            created_by=admin.username,
            secret_key=request.app.state.secret_key,
            settings=request.app.state.settings,
        )
    values.pop("signing_secret", None)  # never sent back into the page
    if errors:
        placed = {(k if k in DEFAULTS else "__all__"): v for k, v in errors.items()}
        return _page(request, session, status_code=422, receiver_values=values, receiver_errors=placed)
    return _page(request, session, status_code=201, created=created.receiver, secret=created.signing_secret)


@router.post("/notification-receivers/{receiver_id}/test")
def test_receiver(request: Request, session: SessionDep, admin: AdminUser, receiver_id: int) -> Response:
    """Send a test message now and show only the receiver's status."""
    receiver = receivers.get_receiver(session=session, receiver_id=receiver_id)
    session.commit()  # ends the transaction: no connection is held while the receiver takes its time
    delivery = notify.send_test(
        receiver=receiver, settings=request.app.state.settings, secret_key=request.app.state.secret_key
    )
    return _page(request, session, tested=(receiver.name, delivery))


@router.post("/notification-receivers/{receiver_id}/delete")
def delete_receiver(request: Request, session: SessionDep, admin: AdminUser, receiver_id: int) -> Response:
    receivers.delete_receiver(
        session=session, receiver=receivers.get_receiver(session=session, receiver_id=receiver_id)
    )
    return redirect(request, "/notification-receivers")
