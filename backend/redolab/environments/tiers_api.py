"""JSON API: an environment's own link tiers (the links its buyer can order, with monthly prices).
Reading needs a login; changing needs the operator role, as the environment's other facts do."""

from __future__ import annotations

from fastapi import APIRouter, Depends, status

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import SessionDep
from redolab.environments import service, tiers
from redolab.environments.schemas_tiers import LinkTierCreate, LinkTierPublic, LinkTiersPublic

router = APIRouter(prefix="/api/v1", tags=["link tiers"], dependencies=[Depends(current_api_user)])


@router.get("/environments/{environment_id}/link-tiers")
def list_link_tiers(session: SessionDep, environment_id: int) -> LinkTiersPublic:
    """The environment's own tiers, slowest first."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    data = [LinkTierPublic.of(tier) for tier in tiers.list_tiers(environment=environment)]
    return LinkTiersPublic(data=data, count=len(data))


@router.post("/environments/{environment_id}/link-tiers", status_code=status.HTTP_201_CREATED)
def create_link_tier(
    session: SessionDep, user: ApiOperator, environment_id: int, tier_in: LinkTierCreate
) -> LinkTierPublic:
    """Add a tier: its rate in bit/s or with a unit ("500 Mbit/s"), at most 1 Tbit/s; a monthly
    price (at least 0) needs its currency (ISO 4217 code)."""
    environment = service.get_environment(session=session, environment_id=environment_id)
    tier = tiers.create_tier(session=session, environment=environment, tier_in=tier_in)
    return LinkTierPublic.of(tier, tier_in.unit_readings)


@router.get("/link-tiers/{tier_id}")
def read_link_tier(session: SessionDep, tier_id: int) -> LinkTierPublic:
    """One tier."""
    return LinkTierPublic.of(tiers.get_tier(session=session, tier_id=tier_id))


@router.delete("/link-tiers/{tier_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_link_tier(session: SessionDep, user: ApiOperator, tier_id: int) -> None:
    """Delete a tier (the catalogue's steps stand in when none is left)."""
    tiers.delete_tier(session=session, tier=tiers.get_tier(session=session, tier_id=tier_id))
