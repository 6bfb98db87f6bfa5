"""GET /metrics for Prometheus: the one route without a logged-in user that is not public. Prometheus
has no session; it sends `Authorization: Bearer <REDOLAB_METRICS_TOKEN>`. Without a token in the
settings the route is off (404)."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from starlette.responses import PlainTextResponse, Response

from redolab.core.deps import SessionDep, SettingsDep
from redolab.watches.metrics import CONTENT_TYPE, render_metrics

METRICS_PATH = "/metrics"

router = APIRouter()


def bearer_token(request: Request) -> str | None:
    """The token of an `Authorization: Bearer ...` header, or None."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


@router.get(METRICS_PATH, include_in_schema=False)
def read_metrics(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The links' metrics in the Prometheus text format, for a scraper holding the metrics token."""
    expected = settings.metrics_token.get_secret_value() if settings.metrics_token is not None else ""
    if not expected:
        return PlainTextResponse("Not found: /metrics is off (set REDOLAB_METRICS_TOKEN).", status_code=404)
    given = (bearer_token(request) or "").encode("latin-1")  # the header's bytes, as sent (ASGI decodes latin-1)
    if not hmac.compare_digest(given, expected.encode()):  # constant time over the token's UTF-8 bytes
        return PlainTextResponse(
            "A bearer token is required: Authorization: Bearer <REDOLAB_METRICS_TOKEN>.",
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    return Response(render_metrics(session=session), media_type=CONTENT_TYPE)
