"""The API document declares every error status a route can return, with one error body.

FastAPI documents a route's success and, where it has parameters, 422. The other refusals come from
around the route: the login (401) and role (403) dependencies, a path id that names no row (404), a
write that conflicts with stored data (409), the body limit (413) and the caps (429, 503, 507). Here
they are added to each operation from what the route has: its dependencies' `error_statuses` (set on
the dependency functions, e.g. the login check's 401), its path ids, its method and body, and the
`responses=` a route declares for what only it returns (a queue's 429). Schemathesis
(tests/test_api_contract.py) holds the document to what the server answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts

from redolab.core.db import MAX_ROW_ID
from redolab.core.deps import get_session

ERROR_SCHEMA_NAME = "Error"
# FastAPI's 422 body (HTTPValidationError) and every other refusal have this shape: `detail` is a
# sentence, or (422 and a 409 naming its field) a list of each error's place and message.
ERROR_SCHEMA: dict[str, Any] = {
    "title": ERROR_SCHEMA_NAME,
    "type": "object",
    "required": ["detail"],
    "properties": {
        "detail": {
            "anyOf": [
                {"type": "string"},
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["loc", "msg", "type"],
                        "properties": {
                            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                            "msg": {"type": "string"},
                            "type": {"type": "string"},
                        },
                    },
                },
            ]
        }
    },
}

ERROR_DESCRIPTIONS = {
    400: "The body could not be read: send one JSON document (or the form fields the route takes).",
    401: "Not authenticated: no bearer token, or it expired, was revoked or its user disabled.",
    403: "The user's role (operator or admin) or ownership does not allow this.",
    404: f"A path id names nothing (ids run from 1 to {MAX_ROW_ID}).",
    409: "Conflicts with stored data: a name taken, or a state that does not allow it now.",
    413: "The request body is larger than the route's limit (1 MiB, uploads more).",
    422: "The request is invalid: `detail` lists each error's place (`loc`) and message.",
    429: "The user's share is used (queued jobs, staged uploads, login attempts): see Retry-After.",
    502: "The host did not answer over SSH as expected.",
    503: "The server is busy with as many of these as it takes at once: try again after Retry-After.",
    507: "The upload would leave the data directory's disk under its free-space floor, or past the staging caps.",
}
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route that returns these statuses besides those derived here."""
    return {code: {"description": ERROR_DESCRIPTIONS[code]} for code in codes}


def _calls(dependant: Dependant) -> Iterable[Any]:
    yield dependant.call
    for child in dependant.dependencies:
        yield from _calls(child)


def route_error_statuses(route) -> set[int]:
    """The refusals `route` can answer besides those it declares itself."""
    calls = list(_calls(route.dependant))
    statuses = {code for call in calls for code in getattr(call, "error_statuses", ())}
    has_body = route.body_field is not None
    if "{" in route.path_format:
        statuses.add(404)
    if route.methods & WRITES:
        statuses.add(413)  # BodyLimitMiddleware: every method but GET, HEAD and OPTIONS
        if get_session in calls:  # a write to stored data may conflict with it (FieldError)
            statuses.add(409)
    if has_body:
        statuses.add(400)
    if has_body or route.dependant.query_params or route.dependant.path_params:
        statuses.add(422)
    return statuses


def _operations(document: dict, routes: Iterable) -> Iterable[tuple[Any, dict]]:
    for route in routes:
        path = document["paths"].get(route.path_format, {})
        for method in route.methods:
            if method.lower() in path:
                yield route, path[method.lower()]


def _declare(operation: dict, statuses: set[int]) -> None:
    responses = operation.setdefault("responses", {})
    for code in statuses:
        responses.setdefault(str(code), {"description": ERROR_DESCRIPTIONS[code]})
    for code, response in responses.items():
        if code.isdigit() and int(code) >= 400:
            response["content"] = {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_SCHEMA_NAME}"}}
            }


def declare_error_statuses(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """Install (and return) an `app.openapi` that adds each operation's error statuses and body."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        # each route as included (its routers' prefixes and dependencies), as FastAPI's own document reads it
        routes = [
            route
            for route in iter_route_contexts(app.routes)
            if isinstance(route.original_route, APIRoute) and route.include_in_schema
        ]
        for route, operation in _operations(document, routes):
            _declare(operation, route_error_statuses(route))
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        schemas[ERROR_SCHEMA_NAME] = ERROR_SCHEMA
        schemas.pop("HTTPValidationError", None)  # 422 answers with Error now
        schemas.pop("ValidationError", None)
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
    return openapi
