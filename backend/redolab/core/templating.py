"""Jinja2 templates with htmx fragment rendering: one render helper for every page."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import Request
from jinja2_fragments.fastapi import Jinja2Blocks
from starlette.responses import Response

from redolab import __version__
from redolab.core import sources, units
from redolab.core.config import PROJECT_ROOT

FRONTEND_DIR = PROJECT_ROOT / "frontend"


def _in_zone(moment, zone: str, seconds: bool = False) -> str:
    """A stored UTC time on the database's clock: '2022-01-15 09:00' (the zone is named in the heading)."""
    if moment is None:
        return "–"
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return f"{units.wall_clock(moment, zone):%Y-%m-%d %H:%M{':%S' if seconds else ''}}"


templates = Jinja2Blocks(directory=str(FRONTEND_DIR / "templates"))
templates.env.filters.update(
    bytes=units.format_bytes,
    byte_rate=units.format_byte_rate,
    bit_rate=units.format_bit_rate,
    mbit=units.format_mbit,
    link_mbit=units.format_byte_rate_in_mbit,
    percent=units.ratio_as_percent,
    microseconds=units.format_microseconds,
    duration=units.format_duration,
    thousands=lambda count: f"{count:,}" if count is not None else "–",
    counted=units.format_count,
    in_zone=lambda moment, zone="UTC", seconds=False: _in_zone(moment, zone, seconds),
)
# static_url: the app sets the hashed-name lookup (core/static.py); a report rendered outside it uses plain names.
templates.env.globals.update(version=__version__, static_url=lambda name: f"/static/{name}")
templates.env.globals.update(
    oracle_network_note=sources.ORACLE_NETWORK_NOTE, ibm_hadr_simulator=sources.IBM_HADR_SIMULATOR
)  # the documents a page's formulas cite


def is_htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


UNIT_READINGS = "unit_readings"  # session key: how a submitted form's ambiguous units were read


def remember_unit_readings(request: Request, lines: list[str], url: str) -> None:
    """Say on the page at `url` (the one a form redirects to) how its ambiguous units were read, e.g.
    "Rate: 1 GB/s read as 8,589.93 Mbit/s ..."; nothing is kept when every unit read one way."""
    if lines and "session" in request.scope:
        request.scope["session"][UNIT_READINGS] = {"url": url, "lines": [line[:300] for line in lines[:10]]}


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
    said = request.scope.get("session", {}).get(UNIT_READINGS)
    if said and said.get("url") == request.url.path:  # shown once, on the page the form led to
        context.setdefault("unit_readings", said.get("lines", []))
        request.scope["session"].pop(UNIT_READINGS, None)
    block_name = block if block and is_htmx(request) else None
    return templates.TemplateResponse(request, template, context, status_code=status_code, block_name=block_name)
