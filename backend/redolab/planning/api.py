"""JSON API: the plan of an environment."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status
from pydantic import BaseModel, ConfigDict, Field

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import SessionDep, SettingsDep
from redolab.core.fields import RowId, folded
from redolab.core.openapi import error_responses
from redolab.environments import crypto
from redolab.environments.service import get_environment, get_host
from redolab.jobs.admission import QueueCaps
from redolab.jobs.queue import wake_local_worker
from redolab.planning.host_facts import message_bytes_for
from redolab.planning.rehearse_tiers import rehearse_at_tier
from redolab.planning.service import Selection, environment_plan
from redolab.rehearsals.public import rehearsal_public
from redolab.rehearsals.schemas import RehearsalCreate, RehearsalPublic
from redolab.rehearsals.service import request_of
from redolab.remote.transport import TransportError

router = APIRouter(prefix="/api/v1/environments", tags=["plan"], dependencies=[Depends(current_api_user)])


class SourcePublic(BaseModel):
    label: str
    url: str | None


class CardPublic(BaseModel):
    title: str
    status: str  # pass | info | warn | missing | fail
    headline: str
    values: dict  # numbers with their unit in the key (bytes, seconds, bytes_per_second)
    working: list[str]
    sources: list[SourcePublic]
    missing: list[str]
    nominal: bool = False  # a figure rests on the environment's nominal link
    loopback: bool = False  # a figure rests on a loopback run chosen as evidence (this machine, not the link)
    badge: str = ""  # the status with what it rests on: "pass (loopback)"


class HostValuePublic(BaseModel):
    host: str
    current: str | None  # the host's captured value; None: never captured
    action: str  # keep | raise | set


class SettingLinePublic(BaseModel):
    line: str
    why: str
    recommended: str | None = None  # the rule's value, before any host's own is kept
    keep: bool = False  # every host already has it or more: nothing to apply
    hosts: list[HostValuePublic] = []


class SnippetPublic(BaseModel):
    title: str
    target: str
    lines: list[SettingLinePublic]


class EvidencePublic(BaseModel):
    kind: str  # import | run
    id: int
    label: str
    when: str
    chosen: bool
    note: str  # what it is used for, or why not
    tags: list[str]


class PlanPublic(BaseModel):
    cards: dict[str, CardPublic]
    requirement: dict | None  # per thread and summed, each with its basis; peak windows
    evidence: list[EvidencePublic]
    time_zone: str
    risks: list[str]
    settings: list[SnippetPublic]
    settings_sources: list[SourcePublic]
    # each destination's hop and each shared link against the redo it carries (bytes/s, seconds), the
    # protection mode against the destinations, far sync advice and the topology's errors
    topology: dict | None = None
    # the link for the RPO: the least rate holding it 100 / 99.9 / 99 % of the time, the lag at the link judged,
    # the what-if over link tiers and the outage budget (units in the keys; None: no RPO goal or no timed series)
    rpo_sizing: dict | None = None


@router.get("/{environment_id}/plan", response_model=PlanPublic)
def read_plan(
    session: SessionDep,
    environment_id: int,
    chosen: Annotated[
        bool, Query(description="The import and run lists are complete: what is not named is left out.")
    ] = False,
    import_: Annotated[list[RowId], Query(alias="import", description="Use this import (repeat).")] = [],  # noqa: B006
    run: Annotated[list[RowId], Query(description="Use this run (repeat); a loopback run only when named.")] = [],  # noqa: B006
    exclude_tag: Annotated[
        list[str],
        Query(
            description="Leave out runs with this tag (repeat). Without `chosen`, runs tagged load are left out too."
        ),
    ] = [],  # noqa: B006
    rehearsal: Annotated[
        list[RowId],
        Query(description="Use this rehearsal (repeat); a loopback or time-compressed one only when named."),
    ] = [],  # noqa: B006
) -> dict:
    """Verdicts, instantiation estimate, lag replay, commit impact, risks and settings, with sources. By
    default every import and every run over the link; loopback runs are shown as evidence, not used."""
    environment = get_environment(session=session, environment_id=environment_id)
    tags = [folded(tag) for tag in exclude_tag]  # as run tags are stored
    selection = Selection.parse(chosen=chosen, imports=import_, runs=run, exclude_tags=tags, rehearsals=rehearsal)
    return environment_plan(session=session, environment=environment, selection=selection).to_json()


class TierRehearsalCreate(BaseModel):
    """Rehearse at a tier of the what-if over link tiers (the plan's `rpo_sizing.tiers`, by name): the
    worst window (or the one given) at that tier and at the next slower one, each capped at its tier's
    line rate shared by the threads (one connection per thread, each paced at rate / threads)."""

    model_config = ConfigDict(extra="forbid")

    tier: str = Field(min_length=1, max_length=200, description="A tier's name as the what-if lists it.")
    window: str = Field("worst-60m", max_length=200, description="As for a rehearsal: worst-60m by default.")


@router.post(
    "/{environment_id}/rehearsals/tiers", status_code=status.HTTP_201_CREATED, responses=error_responses(429, 503)
)
def rehearse_tiers(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: ApiOperator,
    environment_id: int,
    body: TierRehearsalCreate,
) -> list[RehearsalPublic]:
    """Two capped rehearsals (operator role): at the tier below first, then at the tier, which waits
    behind it on the same hosts; one when no tier is slower. One at a cap of your own: POST
    /api/v1/environments/{id}/rehearsals with `cap_bits_per_second` and `cap_label`."""
    environment = get_environment(session=session, environment_id=environment_id)
    made = rehearse_at_tier(
        session=session,
        environment=environment,
        tier=body.tier,
        request=request_of(RehearsalCreate(window=body.window)),
        requested_by=user.username,
        caps=QueueCaps.of(settings),
        settings=settings,
    )
    wake_local_worker(request.app)
    return [rehearsal_public(session, rehearsal) for rehearsal in made]


@router.post("/{environment_id}/hosts/{host_id}/crypto-speed", responses=error_responses(409, 502, 503))
async def measure_host_crypto(
    request: Request, session: SessionDep, user: ApiOperator, environment_id: int, host_id: int
) -> dict:
    """The host's encryption ceiling (operator role): `openssl speed` for AES-256-GCM and ChaCha20-Poly1305
    at the transport's message size, 1 s each, in bytes per second of one core; kept for the transport
    card. A host without openssl answers 200 with `library` null and `note` saying what to install."""
    environment = get_environment(session=session, environment_id=environment_id)
    host = get_host(session=session, environment=environment, host_id=host_id)
    message_bytes, why = message_bytes_for(environment)
    try:
        with request.app.state.host_checks.taken(user.id, host):
            speed = await crypto.measure_host_crypto(
                session=session, host=host, secret_key=request.app.state.secret_key, message_bytes=message_bytes
            )
    except TransportError as error:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(error)) from None
    measured_at = host.crypto_measured_at.isoformat() if host.crypto_measured_at else None
    said = {"host": host.name, "measured_at": measured_at, "message_size_basis": why, "note": speed.note}
    return {**said, **speed.to_json()}
