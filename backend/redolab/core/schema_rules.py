"""Rules between the fields of a request body, written into the API document (JSON Schema 2020-12) so
that a request the document allows is one the validators accept: exactly one selector of several, a
field that needs another when given, the fields a choice of kind asks for. The model's validators
still enforce each rule (with their messages); these only state it. A field whose value is null counts
as not given, as the validators read it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue

NOT_GIVEN: dict[str, Any] = {"type": "null"}  # absent or null: `properties` applies only to keys present


def given(*fields: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The fields are present and not null (each may further match `schema`)."""
    return {"required": list(fields), "properties": {field: {**(schema or {}), "not": NOT_GIVEN} for field in fields}}


def absent(*fields: str) -> dict[str, Any]:
    """The fields are left out or null."""
    return {"properties": dict.fromkeys(fields, NOT_GIVEN)}


def exactly_one_of(*selectors: tuple[str, ...]) -> dict[str, Any]:
    """`oneOf` the selectors (each a group of fields given together), the others' fields not given."""
    every = [field for group in selectors for field in group]
    branches = []
    for group in selectors:
        others = [field for field in every if field not in group]
        branches.append({"allOf": [given(*group), absent(*others)]})
    return {"oneOf": branches}


def needs_when_given(field: str, *needed: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """When `field` is given (not null), each of `needed` is given too (matching `schema`)."""
    return {"if": given(field), "then": given(*needed, schema=schema)}


def when_equals(
    field: str, values: tuple[str, ...], then: dict[str, Any], otherwise: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`then` when `field` is one of `values`, else `otherwise` (the field itself is required elsewhere)."""
    rule = {"if": {"required": [field], "properties": {field: {"enum": list(values)}}}, "then": then}
    return rule if otherwise is None else {**rule, "else": otherwise}


def document(*rules: dict[str, Any], required: tuple[str, ...] = ()) -> Callable[[dict[str, Any]], None]:
    """A model's json_schema_extra: each rule joins the schema's allOf; `required` lists fields whose
    default the validators refuse (a quantity that must be given), so the document requires them."""

    def extra(schema: dict[str, Any]) -> None:
        if required:
            schema["required"] = list(dict.fromkeys([*schema.get("required", []), *required]))
        if rules:
            schema.setdefault("allOf", []).extend(rules)

    return extra


@dataclasses.dataclass(frozen=True)
class TextPattern:
    """What the document says a text field matches (its string branch; null stays null). A validator
    enforces the rule; the pattern may be narrower than what it accepts, never wider."""

    pattern: str
    max_length: int | None = None

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        for branch in schema.get("anyOf", [schema]):
            if branch.get("type") == "string":
                branch["pattern"] = self.pattern
                if self.max_length is not None:
                    branch["maxLength"] = min(self.max_length, branch.get("maxLength", self.max_length))
        return schema


# One line of printable text with something besides spaces (what str.isprintable() and strip() leave,
# and what fields.one_line and visible_name accept): printable ASCII and Latin-1. Narrower than the
# validators, which take any script: a wider class (CJK's 21,000 ideographs) made each generator of
# the Schemathesis run build its character set one character at a time, 15 CPU s in the suite.
_LETTERS = r"\u00a1-\u00ac\u00ae-\u00ff"
PRINTABLE_LINE = f"^[ -~{_LETTERS}]*[!-~{_LETTERS}][ -~{_LETTERS}]*$"
ONE_LINE = f"^[ -~{_LETTERS}]*$"  # fields.one_line: the same, blank allowed
TEXT_BLOCK = rf"^[\t\n\r -~{_LETTERS}]*$"  # fields.text_block: line breaks and tabs too

# A host name (RFC 1123 labels, the last starting with a letter so that it reads as no address) or an
# IPv4 address: narrower than validators.check_host_address, which also reads IPv6 and a final dot.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
HOST_NAME = rf"({_LABEL}\.)*[A-Za-z]([A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?"
HOST_ADDRESS = rf"^({HOST_NAME}|({_OCTET}\.){{3}}{_OCTET})$"
# An absolute directory of letters, digits and . _ + -, no "." or ".." step (runs.check_write_dir and the
# database access's homes refuse "/../"; these steps cannot start with a dot at all).
ABSOLUTE_DIR = r"^(/[A-Za-z0-9_+-][A-Za-z0-9._+-]*)+/?$"
POSIX_USER = r"^[a-z_][a-z0-9_-]{0,30}\$?$"
INTERFACE_NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}$"
