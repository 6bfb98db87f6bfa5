"""FastAPI dependencies as Annotated aliases: SessionDep, SettingsDep (the user ones are in auth/deps.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from redolab.core.config import Settings


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
