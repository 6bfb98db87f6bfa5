"""Redirects that work for plain requests and for htmx alike."""

from __future__ import annotations

from fastapi import Request, status
from starlette.responses import RedirectResponse, Response

from redolab.core.templating import is_htmx


def redirect(request: Request, url: str) -> Response:
    """303 for a plain request; HX-Redirect for htmx, which would otherwise swap the page in."""
    if is_htmx(request):
        return Response(status_code=status.HTTP_200_OK, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=status.HTTP_303_SEE_OTHER)


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A value for a CSV cell a spreadsheet will open: text starting with = + - @ tab or CR gets a
    leading apostrophe (OWASP's advice against formula injection), so a label like
    '=HYPERLINK(...)' shows as text. Numbers are left as numbers."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value
