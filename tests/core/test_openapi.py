"""The API document declares every refusal a route can answer, with one error body (core/openapi.py)."""

from __future__ import annotations


def test_every_operation_declares_its_refusals(app):
    """Every API route declares 401 with the error body; 404 wherever a path names a row; 403 where a
    role is needed; 413 on writes."""
    document = app.openapi()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert "401" in responses, (method, path)
            assert ("404" in responses) == ("{" in path), (method, path)
            if method != "get":
                assert "413" in responses, (method, path)
            error = responses["401"]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/Error"}
    assert "403" in document["paths"]["/api/v1/users"]["get"]["responses"]
    assert "403" not in document["paths"]["/api/v1/users/me"]["get"]["responses"]
