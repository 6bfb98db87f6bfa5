"""Jinja2 templates with htmx fragment rendering: one render helper for every page."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from jinja2_fragments.fastapi import Jinja2Blocks
from starlette.responses import Response

from redolab import __version__
from redolab.auth.models import Role
from redolab.core import units
from redolab.core.config import PROJECT_ROOT

FRONTEND_DIR = PROJECT_ROOT / "frontend"

templates = Jinja2Blocks(directory=str(FRONTEND_DIR / "templates"))
templates.env.filters.update(
    bytes=units.format_bytes,
    byte_rate=units.format_byte_rate,
    bit_rate=units.format_bit_rate,
    mbit=units.format_mbit,
    duration=units.format_duration,
)
templates.env.globals.update(version=__version__, Role=Role)


def is_htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    block: str | None = None,
    status_code: int = 200,
) -> Response:
    """Render a whole page, or only `block` when htmx asked for a fragment."""
    context = {"user": getattr(request.state, "user", None), **(context or {})}
    block_name = block if block and is_htmx(request) else None
    return templates.TemplateResponse(request, template, context, status_code=status_code, block_name=block_name)
