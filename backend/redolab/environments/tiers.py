"""An environment's own link tiers: the links its buyer can order, each with a monthly price. The
JSON API and the environment page share these operations; planning/tiers.py reads the tiers.

Refusals are FieldError(field, message, status): 422 for a value that cannot work, 409 for one that
clashes with what is stored (a name taken, the most tiers an environment keeps)."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from redolab.core.db import get_or_404
from redolab.core.errors import FieldError
from redolab.environments.destination_rules import check_name
from redolab.environments.destinations import lock_environment
from redolab.environments.models import Environment, LinkTier
from redolab.environments.schemas_tiers import LinkTierCreate

MAX_TIERS = 64  # a price list, not a catalogue: the providers' own lists hold a dozen


def list_tiers(*, environment: Environment) -> list[LinkTier]:
    """The environment's tiers, slowest first."""
    return list(environment.link_tiers)


def get_tier(*, session: Session, tier_id: int) -> LinkTier:
    return get_or_404(session, LinkTier, tier_id, what="Link tier")


def create_tier(*, session: Session, environment: Environment, tier_in: LinkTierCreate) -> LinkTier:
    """Add a tier; a price needs its currency, a name is unique in the environment (compared folded)."""
    if tier_in.monthly_price is not None and tier_in.currency is None:
        raise FieldError("currency", "A monthly price needs its currency: a code such as USD, EUR or GBP.", 422)
    lock_environment(session, environment)
    session.expire(environment, ["link_tiers"])
    check_name(environment, tier_in.name, None, "link tier", environment.link_tiers)
    if len(environment.link_tiers) >= MAX_TIERS:
        raise FieldError("name", f"'{environment.name}' already has {MAX_TIERS} link tiers, the most it keeps.")
    tier = LinkTier(
        environment_id=environment.id,
        name=tier_in.name,
        bits_per_second=tier_in.bits_per_second,
        monthly_price=tier_in.monthly_price,
        currency=tier_in.currency,
    )
    session.add(tier)
    try:
        session.commit()
    except IntegrityError:  # a simultaneous request took the name: answered as the check answers it
        session.rollback()
        check_name(environment, tier_in.name, None, "link tier", environment.link_tiers)
        raise FieldError("name", f"'{environment.name}' already has a link tier named '{tier_in.name}'.") from None
    session.refresh(environment)
    return tier


def delete_tier(*, session: Session, tier: LinkTier) -> None:
    session.delete(tier)
    session.commit()
