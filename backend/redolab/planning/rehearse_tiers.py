"""Rehearse at a tier (issue 55, item 6): from the what-if over link tiers, two capped rehearsals of the
worst window, at the tier and at the tier below it (the next slower one the what-if lists), or one when
none is slower. The tier below is queued first and the tier asked for waits behind it on the same hosts,
so the tier's is the newest: the one the plan's Rehearsal card judges; the card lists both."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session

from redolab.core.errors import FieldError
from redolab.environments.models import Environment
from redolab.planning.tiers import Tier, catalogue_tiers
from redolab.rehearsals import service
from redolab.rehearsals.models import Rehearsal


def tier_and_below(environment: Environment, name: str) -> list[Tier]:
    """The tier named (as the what-if lists it: the environment's own tiers, else the catalogue's plain
    steps) with the next slower one before it; 422 naming `tier` when the what-if lists none of that name."""
    tiers = catalogue_tiers(environment)
    index = next((i for i, tier in enumerate(tiers) if tier.name == name.strip()), None)
    if index is None:
        listed = ", ".join(tier.name for tier in tiers)
        raise FieldError("tier", f"'{name[:100]}' is not a tier the what-if lists ({listed}).", 422)
    return tiers[max(0, index - 1) : index + 1]


def rehearse_at_tier(
    *,
    session: Session,
    environment: Environment,
    tier: str,
    request: service.RehearsalRequest,
    requested_by: str,
    caps=None,
    settings=None,
) -> list[Rehearsal]:
    """The rehearsals at the tier below (when there is one) and at the tier, in that order: each capped at
    its tier's line rate, labelled with its name unless the request has a label."""
    made: list[Rehearsal] = []
    for chosen in tier_and_below(environment, tier):
        capped = replace(
            request,
            cap_bits_per_second=chosen.bits_per_second,
            cap_label=chosen.name,
            label=request.label or f"at {chosen.name}",
        )
        try:
            rehearsal = service.create_rehearsal(
                session=session,
                environment=environment,
                request=capped,
                requested_by=requested_by,
                caps=caps,
                settings=settings,
                queue_behind=made[-1] if made else None,
            )
        except Exception:  # all or nothing: the tier below alone proves nothing, so it does not stay queued
            session.rollback()
            for earlier in made:
                service.cancel_rehearsal(session=session, rehearsal=earlier)
            raise
        made.append(rehearsal)
    return made
