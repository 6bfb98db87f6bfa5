"""Unit fields say in the API document what they take: what matches their schema is accepted."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from redolab.runs.schemas import RunCreate

FIELDS = ("message_bytes", "sockbuf_bytes", "duration_seconds", "interval_seconds", "rate_bits_per_second")
BASE = {"client_host_id": 1, "server_host_id": 2}


def _text_pattern(model: type[BaseModel], name: str) -> str:
    branches = model.model_json_schema()["properties"][name]["anyOf"]
    return next(branch["pattern"] for branch in branches if branch.get("type") == "string")


def _number_range(model: type[BaseModel], name: str) -> dict:
    branches = model.model_json_schema()["properties"][name]["anyOf"]
    return next(branch for branch in branches if branch.get("type") in ("integer", "number"))


@pytest.mark.parametrize("name", FIELDS)
@settings(max_examples=60, derandomize=True, deadline=None)
@given(data=st.data())
def test_text_that_matches_the_pattern_is_accepted(name, data):
    text = data.draw(st.from_regex(re.compile(_text_pattern(RunCreate, name)), fullmatch=True))
    # the interval must fit in the duration (a rule between two fields, named in tests/test_api_contract.py)
    fields = {"interval_seconds": {"duration_seconds": 3600}, "duration_seconds": {"interval_seconds": 0.1}}.get(
        name, {}
    )
    try:
        RunCreate(**BASE, **fields, **{name: text})
    except ValidationError as refused:
        assert all(error["loc"][0] != name for error in refused.errors()), (text, refused)


@pytest.mark.parametrize("name", FIELDS)
def test_numbers_declare_the_bounds_the_validators_enforce(name):
    bounds = _number_range(RunCreate, name)
    if "maximum" in bounds:
        with pytest.raises(ValidationError):
            RunCreate(**BASE, **{name: bounds["maximum"] * 2 + 1})
    low = bounds.get("minimum", bounds.get("exclusiveMinimum"))
    with pytest.raises(ValidationError):
        RunCreate(**BASE, **{name: low - 1 if "minimum" in bounds else low})


def test_the_interval_is_always_given_and_text_names_units_in_range():
    schema = RunCreate.model_json_schema()["properties"]
    assert {"type": "null"} not in schema["interval_seconds"]["anyOf"]
    assert _text_pattern(RunCreate, "message_bytes").endswith("(B|KiB)$")  # 999 MiB is over 256 MiB
    assert _text_pattern(RunCreate, "sockbuf_bytes").endswith("(MiB)$")  # 1 KiB is under 4 KiB
