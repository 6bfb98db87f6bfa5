"""Turning validation failures into messages shown next to form fields."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import ValidationError
from sqlalchemy.orm import Session

from redolab.core.errors import FieldError

# Pydantic's wording is written for programmers; these are for the DBA filling the form.
_MESSAGES = {
    "missing": "This field is required.",
    "string_type": "This field is required.",
    "int_parsing": "Enter a whole number.",
    "int_from_float": "Enter a whole number.",
    "float_parsing": "Enter a number.",
    "greater_than_equal": "Must be at least {ge}.",
    "greater_than": "Must be more than {gt}.",
    "less_than_equal": "Must be at most {le}.",
    "string_too_short": "This field is required.",
    "string_too_long": "At most {max_length} characters.",
    "enum": "Choose one of: {expected}.",
    "extra_forbidden": "Unknown field.",
}


def field_errors(error: ValidationError) -> dict[str, str]:
    """Map each failing field to one readable message (the first error for that field)."""
    messages: dict[str, str] = {}
    for item in error.errors():
        field = str(item["loc"][-1]) if item["loc"] else "__all__"
        template = _MESSAGES.get(item["type"])
        try:
            text = template.format(**item.get("ctx", {})) if template else item["msg"]
        except KeyError:  # a custom error of that type with its own context (core.fields.at_most): its own words
            text = item["msg"]
        messages.setdefault(field, text)
    return messages


def form_data(form) -> dict[str, str]:
    """A submitted form as a plain dict of stripped strings."""
    return {key: value.strip() for key, value in form.items() if isinstance(value, str)}


@contextmanager
def form_errors(session: Session | None = None) -> Iterator[dict[str, str]]:
    """Collect what a submitted form got wrong, field by field: pydantic's validation, or a
    service's FieldError (its changes rolled back when `session` is given). Empty: it went through.

        with form_errors(session) as errors:
            create_thing(session=session, thing_in=ThingCreate.model_validate(values))
        if not errors:
            return redirect(...)
        return the form again with `errors`
    """
    errors: dict[str, str] = {}
    try:
        yield errors
    except ValidationError as error:
        errors.update(field_errors(error))
    except FieldError as error:
        if session is not None:
            session.rollback()
        errors[error.field] = error.message
