"""FastAPI dependencies as Annotated aliases: SessionDep, SettingsDep (the user ones are in auth/deps.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from redolab.core.config import Settings
from redolab.core.fields import MAX_ROW_ID


def get_session(request: Request) -> Iterator[Session]:
    with request.app.state.sessionmaker() as session:
        yield session


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


SessionDep = Annotated[Session, Depends(get_session)]


SettingsDep = Annotated[Settings, Depends(get_settings)]


async def read_form(request: Request) -> FormData:
    """The submitted form, read here so the page handler can be a plain function: FastAPI runs those
    in its thread pool, so their database work never blocks the event loop."""
    return await request.form()


FormDep = Annotated[FormData, Depends(read_form)]


# -- paging ------------------------------------------------------------------------------------
MAX_PAGE = 500  # items per page at most: a list answer stays bounded whatever a client asks
DEFAULT_PAGE = 100


@dataclass(frozen=True)
class Page:
    """One page of a list API: `limit` items after the first `offset` (newest or by name first, as
    each list says); the answer's `count` is how many there are in all."""

    limit: int
    offset: int


def _page(
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Items per page (1 to 500).")] = DEFAULT_PAGE,
    offset: Annotated[int, Query(ge=0, le=MAX_ROW_ID, description="Items to skip.")] = 0,
) -> Page:
    return Page(limit, offset)


PageDep = Annotated[Page, Depends(_page)]
