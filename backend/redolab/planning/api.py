"""JSON API: the plan of an environment."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from redolab.core.deps import SessionDep, current_api_user
from redolab.environments.service import get_environment
from redolab.planning.service import environment_plan

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


class SettingLinePublic(BaseModel):
    line: str
    why: str


class SnippetPublic(BaseModel):
    title: str
    target: str
    lines: list[SettingLinePublic]


class PlanPublic(BaseModel):
    cards: dict[str, CardPublic]
    risks: list[str]
    settings: list[SnippetPublic]
    settings_sources: list[SourcePublic]


@router.get("/{environment_id}/plan", response_model=PlanPublic)
def read_plan(session: SessionDep, environment_id: int) -> dict:
    """Verdicts, instantiation estimate, lag replay, commit impact, risks and settings, with sources."""
    environment = get_environment(session=session, environment_id=environment_id)
    return environment_plan(session=session, environment=environment).to_json()
