"""The API document is the contract (issue 57, item 6): Schemathesis generates requests from redolab's
own OpenAPI document, a few per operation, and sends them to the app as an admin (403 paths are
tested by the role tests). Every answer must be no server error, a status the operation declares,
a body its schema describes, and a request the schema allows must not be refused, except the 422s
of REFUSED_BY_RULES below: rules the schema cannot express, each named with its reason.

bench/api_contract.py runs the same checks for 10 minutes against a served redolab.
"""

from __future__ import annotations

import hypothesis
import hypothesis.errors
import pytest
import schemathesis
from hypothesis import HealthCheck
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.factories import make_environment, make_host, make_user

# Examples per operation and generation mode (schema-valid, then invalid): 104 operations x 2 x 4.
EXAMPLES = 5

# Operations whose schema-valid requests may still be refused with 422, and why. The document states what
# JSON Schema can (patterns, bounds, enums, one field needing another, exactly one of several, the fields
# a kind asks for: core/schema_rules.py); these rules read stored rows, a file, the clock, the network, a
# secret, or compare two numbers of the request.
REFUSED_BY_RULES = {
    # stored data
    "POST /api/v1/environments/{environment_id}/rehearsals": "needs imported redo history",
    "POST /api/v1/environments/{environment_id}/rehearsals/tiers": "a tier the what-if lists from the history",
    "POST /api/v1/environments/{environment_id}/collections": "a primary host with database access set up",
    "POST /api/v1/environments/{environment_id}/redo/imports": "an upload token from a preview",
    "POST /api/v1/environments/{environment_id}/clusters": "primary and standby nodes with the same numbers",
    "POST /api/v1/environments/{environment_id}/shared-links": "destination ids of this environment",
    "PUT /api/v1/shared-links/{shared_link_id}": "destination ids of this environment",
    "POST /api/v1/environments/{environment_id}/destinations": "feeds_from names a destination of this environment",
    "PUT /api/v1/destinations/{destination_id}": "feeds_from names a destination of this environment",
    "POST /api/v1/environments/{environment_id}/credentials": "a key file readable on the server",
    "POST /api/v1/environments/{environment_id}/hosts": "credential_id, destination_id: rows of this environment",
    "POST /api/v1/environments/{environment_id}/watches": "client and server: two different hosts of this environment",
    "PUT /api/v1/environments/{environment_id}/hosts/{host_id}/database-access": "db_kind on a primary host only",
    "PUT /api/v1/users/me/password": "the current password",
    "PUT /api/v1/environments/{environment_id}/hosts/{host_id}/host-key": "the fingerprint the host offers",
    # file contents
    "POST /api/v1/environments/{environment_id}/redo/preview": "an export redolab can read",
    "POST /api/v1/environments/{environment_id}/runs/import": "oratcptest or iperf3 output",
    "POST /api/v1/environments/{environment_id}/hadr/captures": "a db2pd -hadr capture",
    "POST /api/v1/environments/{environment_id}/preflight/evidence": "DGMGRL or SQL*Plus output",
    # the clock
    "POST /api/v1/watches/{watch_id}/silence": "a silence ends in the future",
    # the network: the name is looked up when the receiver is made
    "POST /api/v1/notification-receivers": "a URL whose host resolves to no loopback or private address",
    # a secret: the password is judged against the user's name and common passwords
    "POST /api/v1/users": "a password strong enough (zxcvbn)",
    # the stored row a PATCH is merged with
    "PATCH /api/v1/environments/{environment_id}": "the merged environment is validated whole",
    "PATCH /api/v1/environments/{environment_id}/hosts/{host_id}": "the merged host is validated whole",
    # two numbers of the request compared (JSON Schema compares a value with constants only)
    "POST /api/v1/environments/{environment_id}/runs": "interval_seconds <= duration_seconds",
    "POST /api/v1/environments/{environment_id}/runs/under-load": "as a run's; its load within the hour's limit",
    "POST /api/v1/environments/{environment_id}/sweeps": "conns_start <= conns_max; at most 64 grid points",
}
# Operations that reach a host over SSH: the seeded hosts do not answer, a declared 502.
REACHES_A_HOST = {
    "POST /api/v1/environments/{environment_id}/hosts/{host_id}/host-key/scan",
    "PUT /api/v1/environments/{environment_id}/hosts/{host_id}/host-key",
}


@pytest.fixture
def contract(app, session, api_client):
    """The document as an admin reads it, and the seeded rows: one environment with two hosts."""
    environment = make_environment(session)
    make_host(session, environment, role="primary")
    make_host(session, environment, role="standby", ssh_address="127.0.0.2")
    make_user(session, "bob")  # someone whose sessions the run may end, rather than its own
    token = api_client.headers["Authorization"]
    return schemathesis.openapi.from_asgi("/api/v1/openapi.json", app, headers={"Authorization": token})


def _checks(label: str) -> list:
    checks = [not_a_server_error, status_code_conformance, response_schema_conformance]
    if label not in REFUSED_BY_RULES:
        checks.append(positive_data_acceptance)
    if label in REACHES_A_HOST:
        checks.remove(not_a_server_error)  # 502 is declared, and checked by status_code_conformance
    return checks


def _examine(operation, mode: GenerationMode, headers: dict, actor_id: int) -> str | None:
    """Run EXAMPLES generated requests of `operation`; the first failure's report, or None."""

    @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
    @hypothesis.settings(
        max_examples=EXAMPLES,
        derandomize=True,  # the same requests on every run, whatever the day
        deadline=None,
        database=None,
        phases=[hypothesis.Phase.generate],  # a failure is reported as found, not shrunk
        suppress_health_check=list(HealthCheck),
    )
    def examine(case):
        if (case.path_parameters or {}).get("user_id") == actor_id and "sessions" in case.path:
            case.path_parameters["user_id"] = actor_id + 1  # ending its own sessions would log the run out
        case.call_and_validate(headers=headers, checks=_checks(operation.label))

    try:
        examine()
    except hypothesis.errors.Unsatisfiable:  # no invalid request exists (an operation without parameters)
        return None
    except (Exception, BaseExceptionGroup) as failure:  # each operation's first failure, reported together
        return f"{mode.value} {operation.label}: {str(failure)[:600]}"
    return None


def test_every_operation_keeps_its_documented_contract(contract, api_client, user):
    headers = {"Authorization": api_client.headers["Authorization"]}
    operations = [result.ok() for result in contract.get_all_operations()]
    assert len(operations) > 100
    failures = [
        failure
        for operation in operations
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        if (failure := _examine(operation, mode, headers, user.id))
    ]
    assert not failures, "\n\n".join(failures)


def test_the_rules_named_are_operations_of_the_document(app):
    """A name that no longer matches an operation would quietly stop excusing nothing (or hide a rename)."""
    document = app.openapi()
    labels = {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item}
    assert set(REFUSED_BY_RULES) <= labels
    assert labels >= REACHES_A_HOST
