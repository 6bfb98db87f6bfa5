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

# Operations whose schema-valid requests may still be refused with 422, and why. A JSON schema says
# what each field may be on its own; these rules read other fields, stored rows, the clock or a file.
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
    "PUT /api/v1/users/me/password": "the current password",
    "PUT /api/v1/environments/{environment_id}/hosts/{host_id}/host-key": "the fingerprint the host offers",
    # file contents
    "POST /api/v1/environments/{environment_id}/redo/preview": "an export redolab can read",
    "POST /api/v1/environments/{environment_id}/runs/import": "oratcptest or iperf3 output",
    "POST /api/v1/environments/{environment_id}/hadr/captures": "a db2pd -hadr capture",
    "POST /api/v1/environments/{environment_id}/preflight/evidence": "DGMGRL or SQL*Plus output",
    # the clock
    "POST /api/v1/watches/{watch_id}/silence": "a silence ends in the future",
    # other fields of the request (or, for PATCH, of the stored row it is merged with)
    "POST /api/v1/environments": "transport mode per database kind and protection mode; release format",
    "PATCH /api/v1/environments/{environment_id}": "the merged environment is validated whole",
    "POST /api/v1/environments/{environment_id}/hosts": "hadr_role only for Db2; host names (RFC 1123)",
    "PATCH /api/v1/environments/{environment_id}/hosts/{host_id}": "the merged host is validated whole",
    "POST /api/v1/environments/{environment_id}/runs": "interval <= duration; sync_write needs write_dir; reverse",
    "POST /api/v1/environments/{environment_id}/runs/under-load": "as a run's; SYNC on one connection",
    "POST /api/v1/environments/{environment_id}/sweeps": "conns_start <= conns_max; sizes in buffer sweeps; grid",
    "POST /api/v1/environments/{environment_id}/watches": "a client and a server host, or every node pair",
    "POST /api/v1/environments/{environment_id}/disk-tests": "two different write sizes; a safe directory",
    "POST /api/v1/notification-receivers": "email_to for mail, a URL for the others",
    "POST /api/v1/admin/cancel": "exactly one of user, environment, host pair",
    "POST /api/v1/environments/{environment_id}/link-tiers": "a price needs its currency",
    "POST /api/v1/users": "a password strong enough (zxcvbn)",
    "POST /api/v1/tokens": "a name of printable characters on one line",
    "PUT /api/v1/environments/{environment_id}/hosts/{host_id}/database-access": "an ORACLE_SID or service name",
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
