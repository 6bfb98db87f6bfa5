"""Form messages: a custom error whose type shares a name with one of pydantic's (core.fields.at_most,
positive) carries its own words, not a template it has no values for (that raised KeyError: a 500)."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import AfterValidator, BaseModel, Field, ValidationError

from redolab.core.fields import at_most, positive
from redolab.core.forms import field_errors


class Example(BaseModel):
    rtt: Annotated[float, at_most(10, "10 s")] = 0
    rate: Annotated[float, AfterValidator(positive)] = 1
    count: Annotated[int, Field(le=5)] = 0


@pytest.mark.parametrize(
    "values, field, message",
    [
        ({"rtt": 20}, "rtt", "Must be at most 10 s."),
        ({"rate": 0}, "rate", "Must be more than zero."),
        ({"count": 6}, "count", "Must be at most 5."),  # pydantic's own error keeps the form's wording
    ],
)
def test_each_error_reads_as_its_field_says(values, field, message):
    with pytest.raises(ValidationError) as raised:
        Example.model_validate(values)
    assert field_errors(raised.value) == {field: message}
