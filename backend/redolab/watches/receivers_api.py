"""JSON API: notification receivers of watch state changes (admin role: a webhook is a request redolab
sends on someone's behalf)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status

from redolab.auth.deps import ApiAdmin, current_api_user
from redolab.core.deps import SessionDep, SettingsDep
from redolab.watches import notify, receivers
from redolab.watches.schemas_receivers import (
    ReceiverCreate,
    ReceiverCreated,
    ReceiverPublic,
    ReceiversPublic,
    ReceiverTestResult,
)

router = APIRouter(prefix="/api/v1", tags=["notifications"], dependencies=[Depends(current_api_user)])


@router.get("/notification-receivers")
def list_receivers(session: SessionDep, admin: ApiAdmin) -> ReceiversPublic:
    """Every receiver, by name (never a signing secret; URLs shortened after their first path segment)."""
    found = receivers.list_receivers(session=session)
    return ReceiversPublic(data=[ReceiverPublic.of(receiver) for receiver in found], count=len(found))


@router.post("/notification-receivers", status_code=status.HTTP_201_CREATED)
def create_receiver(
    request: Request, session: SessionDep, settings: SettingsDep, admin: ApiAdmin, receiver_in: ReceiverCreate
) -> ReceiverCreated:
    """Add a receiver: webhook (signed; the secret redolab makes is in this answer only), slack, teams
    (their incoming-webhook URL) or email (one address). A URL outside REDOLAB_WEBHOOK_ALLOW is 422."""
    created = receivers.create_receiver(
        session=session,
        receiver_in=receiver_in,
        created_by=admin.username,
        secret_key=request.app.state.secret_key,
        settings=settings,
    )
    shown = ReceiverPublic.of(created.receiver).model_dump()
    return ReceiverCreated(**shown, signing_secret=created.signing_secret)


@router.delete("/notification-receivers/{receiver_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_receiver(session: SessionDep, admin: ApiAdmin, receiver_id: int) -> None:
    """Remove a receiver: watches stop telling it, and what was not yet sent to it is given up."""
    receiver = receivers.get_receiver(session=session, receiver_id=receiver_id)
    receivers.delete_receiver(session=session, receiver=receiver)


@router.post("/notification-receivers/{receiver_id}/test")
def test_receiver(
    request: Request, session: SessionDep, settings: SettingsDep, admin: ApiAdmin, receiver_id: int
) -> ReceiverTestResult:
    """Send a test message now (nothing queued) and say what the receiver answered: its status only."""
    receiver = receivers.get_receiver(session=session, receiver_id=receiver_id)
    session.close()  # no connection is held while the receiver takes its time (the row stays readable)
    delivery = notify.send_test(receiver=receiver, settings=settings, secret_key=request.app.state.secret_key)
    return ReceiverTestResult(delivered=delivery.delivered, result=delivery.result)
