"""GET /manual/...: the manual built from docs/ (`make manual`), served to logged-in users only. It is
not public static: it describes the deployment's limits and settings, and standby networks are often
closed, so it comes with redolab rather than from a website. Each page's inline scripts (Material's
start-up) are allowed by their hashes, as the API docs' are."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import APIRouter, Depends, HTTPException, Request, status
from starlette.responses import FileResponse, Response

from redolab.auth.deps import current_html_user
from redolab.core.middleware import csp_allowing_inline_scripts
from redolab.core.responses import redirect
from redolab.core.templating import FRONTEND_DIR

MANUAL_DIR = FRONTEND_DIR / "manual"  # mkdocs.yml's site_dir; REDOLAB_MANUAL_DIR names another
NOT_BUILT = (
    "The manual is not built on this server. Build it in redolab's directory with `make manual` "
    "(`make run` builds it too), then reload this page."
)
# The section of the manual that explains each plan card (planning.card.Card.key), the answer strip's
# link for the RPO and the pre-flight card; tests/test_manual.py checks every one against the built site.
SECTIONS = {
    "rpo": "reference/plan-models/#the-link-for-the-rpo",
    "transport": "reference/plan-models/#redo-transport",
    "encryption": "reference/plan-models/#encryption-ceiling",
    "instantiation": "reference/plan-models/#instantiation-estimate",
    "buffers": "reference/plan-models/#socket-buffers",
    "lag": "reference/plan-models/#async-lag-replay",
    "commit": "reference/plan-models/#sync-commit-impact",
    "apply": "reference/plan-models/#apply-standby",
    "rehearsal": "guides/rehearse/",
    "hadr": "guides/db2-hadr/#the-hadrcalculator-view",
    "preflight": "guides/preflight/",
    # forms: the guide a form's fields are explained in
    "environment-form": "guides/plan-a-standby-build/",
    "redo-upload": "guides/import-history/",
    "redo-formats": "reference/formats/",
    "experiment-form": "guides/measure-the-link/",
    "watch-form": "guides/watch/",
    "destinations": "guides/several-standbys/",
}

router = APIRouter(dependencies=[Depends(current_html_user)])


def manual_url(section: str) -> str | None:
    """/manual/<page>#<anchor> of a card's explanation, or None for a section the manual has no page for."""
    target = SECTIONS.get(section)
    return f"/manual/{target}" if target else None


def _manual_file(root: Path, path: str) -> Path:
    """The built file a request names: a directory means its index.html; nothing outside the manual."""
    root = root.resolve()
    if not (root / "index.html").is_file():
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, NOT_BUILT)
    target = (root / path).resolve()
    if target.is_dir():
        target = target / "index.html"
    if not target.is_relative_to(root) or not target.is_file():
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"The manual has no page /manual/{path}.")
    return target


@router.get("/manual", include_in_schema=False)
def read_manual_root(request: Request) -> Response:
    """The manual's address without its slash: its relative links need the slash."""
    return redirect(request, "/manual/")


@router.get("/manual/{path:path}", include_in_schema=False)
def read_manual(request: Request, path: str) -> Response:
    """A page or asset of the built manual."""
    target = _manual_file(request.app.state.manual_dir, path)
    if target.suffix == ".html":
        body = target.read_bytes()
        headers = {"Content-Security-Policy": csp_allowing_inline_scripts(body)}
        return Response(body, media_type="text/html; charset=utf-8", headers=headers)
    media_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    # versioned by the build (Material's assets carry their hash); private: the manual needs a login
    return FileResponse(target, media_type=media_type, headers={"Cache-Control": "private, max-age=3600"})
