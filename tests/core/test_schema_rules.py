"""Text patterns the API document states are narrower than their validators, never wider: what matches
a pattern is accepted (drawn from each pattern, as Schemathesis draws from the document)."""

from __future__ import annotations

import re
from typing import Annotated

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, StringConstraints

from redolab.core import schema_rules, validators
from redolab.core.fields import OneLine, TextBlock, VisibleName
from redolab.environments.releases import checked_release
from redolab.environments.schemas import RELEASE_PATTERN
from redolab.runs.schemas import check_write_dir
from redolab.sweeps.bulk import BulkCancel
from redolab.watches.schemas_receivers import EMAIL_PATTERN, URL_PATTERN, email_problem, url_problem


class Texts(BaseModel):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1), OneLine, VisibleName]
    line: Annotated[str, OneLine]
    block: Annotated[str, TextBlock]


CASES = {
    "PRINTABLE_LINE": (schema_rules.PRINTABLE_LINE, lambda v: Texts(name=v, line="", block="")),
    "ONE_LINE": (schema_rules.ONE_LINE, lambda v: Texts(name="x", line=v, block="")),
    "TEXT_BLOCK": (schema_rules.TEXT_BLOCK, lambda v: Texts(name="x", line="", block=v)),
    "HOST_ADDRESS": (schema_rules.HOST_ADDRESS, validators.check_host_address),
    "POSIX_USER": (schema_rules.POSIX_USER, validators.check_posix_user),
    "INTERFACE_NAME": (schema_rules.INTERFACE_NAME, validators.check_interface_name),
    "ABSOLUTE_DIR": (schema_rules.ABSOLUTE_DIR, lambda v: check_write_dir(v[:400])),
    "RELEASE_PATTERN": (RELEASE_PATTERN, checked_release),
    "URL_PATTERN": (URL_PATTERN, lambda v: _none(url_problem(v))),
    "EMAIL_PATTERN": (EMAIL_PATTERN, lambda v: _none(email_problem(v[:320]))),
}


def _none(problem: str | None) -> None:
    assert problem is None, problem


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=40, derandomize=True, deadline=None)
@given(data=st.data())
def test_what_matches_a_documented_pattern_is_accepted(name, data):
    pattern, accept = CASES[name]
    value = data.draw(st.from_regex(re.compile(pattern), fullmatch=True))
    if name == "HOST_ADDRESS" and len(value) > 253:
        return  # the document's maxLength
    accept(value)  # raises (ValueError, ValidationError, AssertionError) when refused


def test_bulk_cancel_documents_exactly_one_selector():
    """The document's oneOf has one branch per selector, and the model refuses what no branch allows."""
    branches = BulkCancel.model_json_schema()["allOf"][0]["oneOf"]
    assert [branch["allOf"][0]["required"] for branch in branches] == [
        ["user"],
        ["environment_id"],
        ["client_host_id", "server_host_id"],
    ]
    with pytest.raises(ValueError, match="exactly one"):
        BulkCancel(user="bob", environment_id=1)
    assert BulkCancel(user="bob", environment_id=None).user == "bob"  # null is "not given", as documented
