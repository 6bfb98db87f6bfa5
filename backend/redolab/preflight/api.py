"""JSON API: an environment's Pre-flight card and the outputs pasted into it. Reading needs a login;
pasting and deleting need the operator role, as the environment's other facts do."""

from __future__ import annotations

from fastapi import APIRouter, Depends, status

from redolab.auth.deps import ApiOperator, current_api_user
from redolab.core.deps import SessionDep
from redolab.environments import service as environments
from redolab.preflight import service
from redolab.preflight.schemas import EvidenceCreate

router = APIRouter(prefix="/api/v1", tags=["pre-flight"], dependencies=[Depends(current_api_user)])


@router.get("/environments/{environment_id}/preflight")
def read_preflight(session: SessionDep, environment_id: int) -> dict:
    """The configuration judged: one row per check (PASS, WARN, FAIL, UNKNOWN) from the latest Oracle
    collection and every pasted output, each with its source and date."""
    environment = environments.get_environment(session=session, environment_id=environment_id)
    return service.preflight(session, environment).to_json()


@router.post("/environments/{environment_id}/preflight/evidence", status_code=status.HTTP_201_CREATED)
def paste_evidence(session: SessionDep, user: ApiOperator, environment_id: int, evidence_in: EvidenceCreate) -> dict:
    """Keep a pasted output as rows of the card; a malformed one is a 422 naming the label and the line."""
    environment = environments.get_environment(session=session, environment_id=environment_id)
    evidence = service.add_evidence(
        session, environment, kind=evidence_in.kind, label=evidence_in.label, text=evidence_in.text,
        user=user.username,
    )  # fmt: skip
    return service.evidence_json(evidence)


@router.delete("/environments/{environment_id}/preflight/evidence/{evidence_id}", status_code=204)
def delete_evidence(session: SessionDep, user: ApiOperator, environment_id: int, evidence_id: int) -> None:
    """Remove a pasted output and its rows."""
    environment = environments.get_environment(session=session, environment_id=environment_id)
    service.delete_evidence(session, service.get_evidence(session, evidence_id, environment))
