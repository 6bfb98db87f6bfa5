"""Pydantic field types shared by the API and the HTML forms.

Numbers are taken in base units (bytes, seconds, bit/s); text is parsed by core.units and must
carry its unit, so the same schema accepts 2199023255552 from a script and "2 TiB" from a form but
refuses "20" (20 what?). A unit that reads two ways is echoed back (UnitEcho.unit_readings).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import unicodedata
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    GetJsonSchemaHandler,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError

from redolab.core import units, validators
from redolab.core.db import MAX_ROW_ID
from redolab.core.schema_rules import HOST_ADDRESS, INTERFACE_NAME, ONE_LINE, POSIX_USER, TEXT_BLOCK, TextPattern


def blank_to_none(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        return None
    return value


# Physical bounds of stored quantities: beyond them a value is a typo or an attack, and would
# overflow a 64-bit column.
MAX_SIZE_BYTES = 2**60  # 1 EiB
MAX_BYTES_PER_SECOND = 10**12  # 1 TB/s
MAX_BIT_RATE = 8 * MAX_BYTES_PER_SECOND
MAX_DURATION_SECONDS = 10 * 365 * 86400  # 10 years
MAX_NUMBERED = 4096  # RAC threads and instances, Db2 members, archive destinations, connections
FIRST_YEAR, LAST_YEAR = 1970, 2100  # times any database or tool wrote


def field_label(name: str | None) -> str:
    """A field's name as a person reads it: database_size_bytes -> "Database size"."""
    if not name:
        return "This quantity"
    if name.endswith("_bytes") and "size" not in name:
        name = name.removesuffix("_bytes") + "_size"  # message_bytes -> "Message size"
    for suffix in ("_bits_per_second", "_bytes_per_second", "_per_second", "_bytes", "_seconds"):
        name = name.removesuffix(suffix)
    words = name.replace("_", " ").replace("rtt", "RTT").replace("sockbuf", "socket buffer").replace("fq ", "FQ ")
    return words[:1].upper() + words[1:]


def _unit_parser(parse: Callable[[Any], Any], maximum: float, shown: str, kind: str) -> Callable[[Any, Any], Any]:
    """Text must carry its unit ("20" in a size field is refused, naming the field and what would work);
    a number (JSON) is in base units. `kind` names the quantity for `units.reading`."""

    def parse_or_none(value: Any, info: ValidationInfo) -> Any:
        value = blank_to_none(value)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, float) and not math.isfinite(value):
            raise PydanticCustomError("finite_number", "Give a finite number (not NaN or infinity).")
        try:
            parsed = parse(value)
        except (units.UnitError, OverflowError, ValueError) as error:
            problem = str(error) if isinstance(error, units.UnitError) else f"'{str(value)[:40]}' is not a quantity."
            raise PydanticCustomError(
                "unit", "{label}: {problem}", {"label": field_label(info.field_name), "problem": problem}
            ) from None
        if not math.isfinite(parsed) or parsed < 0:
            raise PydanticCustomError("out_of_bounds", "Give a finite amount of zero or more.")
        if parsed > maximum:
            raise PydanticCustomError("out_of_bounds", "Must be at most {shown}.", {"shown": shown})
        return parsed

    parse_or_none.unit_kind = kind  # type: ignore[attr-defined]  (read by UnitEcho)
    return parse_or_none


@dataclasses.dataclass(frozen=True)
class Bounds:
    """What the API document says of a quantity's range (validators enforce it): numbers get
    minimum / exclusiveMinimum / maximum, text the pattern of core.units that stays inside them."""

    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    given: bool = False  # null (not given) is refused

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return bounded(handler(core_schema), self)


@dataclasses.dataclass(frozen=True)
class _Quantity(Bounds):
    """The document's schema of a unit field: a number in base units or text with a unit, or null."""

    kind: str = "size"
    integer: bool = False

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        number = {"type": "integer" if self.integer else "number", "minimum": 0, "maximum": self.maximum}
        text = {"type": "string", "description": _TEXT_QUANTITY.format(example=_UNIT_EXAMPLES[self.kind])}
        return bounded({"anyOf": [number, text, {"type": "null"}], "x-unit": self.kind}, Bounds())


_TEXT_QUANTITY = (
    "A number and a unit ({example}): the pattern gives the units within this field's range; the API "
    "also reads other spellings (MB, Gbps, minutes) and numbers in base units."
)
_UNIT_EXAMPLES = {"size": "500 GiB", "bit_rate": "10 Gbit/s", "byte_rate": "40 MiB/s", "duration": "25 ms"}


def bounded(schema: JsonSchemaValue, bounds: Bounds) -> JsonSchemaValue:
    """`schema` (a unit field's, or a plain number's) narrowed to `bounds`: the number's range, and
    the text's pattern recomputed from it (the text alternative is left out when no unit fits)."""
    branches = schema.get("anyOf", [schema])
    number = next((b for b in branches if b.get("type") in ("integer", "number")), None)
    if number is None:
        return schema
    if bounds.minimum is not None and bounds.minimum >= number.get("minimum", -math.inf):
        number["minimum"] = bounds.minimum
        if bounds.exclusive_minimum:
            number["exclusiveMinimum"] = number.pop("minimum")
    if bounds.maximum is not None:
        number["maximum"] = min(bounds.maximum, number.get("maximum", math.inf))
    if bounds.given and "anyOf" in schema:
        schema["anyOf"] = [b for b in branches if b.get("type") != "null"]
        branches = schema["anyOf"]
    kind = schema.get("x-unit")
    if kind:
        low = number.get("minimum", number.get("exclusiveMinimum", 0))
        pattern = units.quantity_pattern(kind, low, number["maximum"])
        for branch in [b for b in branches if b.get("type") == "string"]:
            if pattern is None:
                branches.remove(branch)
            else:
                branch["pattern"] = pattern
    return schema


@dataclasses.dataclass(frozen=True)
class _BoundedAfter(AfterValidator):
    """An AfterValidator that also says its bounds in the document."""

    bounds: Bounds = Bounds()

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return bounded(handler(core_schema), self.bounds)


def _unit_kind(field: FieldInfo) -> str | None:
    for item in field.metadata:
        kind = getattr(getattr(item, "func", None), "unit_kind", None)
        if kind:
            return kind
    return None


def unit_readings_of(schema: type[BaseModel], data: Any) -> dict[str, str]:
    """field -> how its text was read, for each quantity of `schema` whose unit reads two ways in
    `data` (the submitted values); the fields that do not parse are left to the validation."""
    if not isinstance(data, dict):
        return {}
    readings = {}
    for name, field in schema.model_fields.items():
        kind, text = _unit_kind(field), data.get(name)
        said = units.reading(text, kind) if kind and isinstance(text, str) else None
        if said:
            readings[name] = f"{field_label(name)}: {said}"
    return readings


class UnitEcho(BaseModel):
    """A schema that says how it read each quantity typed with a unit that reads two ways ("1 GB/s"
    for a link: 8,589.93 Mbit/s, binary GB): `unit_readings`, field -> sentence, for the API answer
    and the form's message."""

    _unit_readings: dict[str, str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _echo_units(cls, data: Any, handler: Callable[[Any], Any]) -> Any:
        model = handler(data)
        if isinstance(model, UnitEcho):
            model._unit_readings = unit_readings_of(type(model), data)
        return model

    @property
    def unit_readings(self) -> dict[str, str]:
        return dict(self._unit_readings)


def _checked(check: Callable[[str], str]) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        if value is None:
            return None
        try:
            return check(value)
        except ValueError as error:
            raise PydanticCustomError("invalid_name", str(error)) from None

    return run


def _control_characters(value: str, allowed: str) -> list[str]:
    import unicodedata

    return [
        f"U+{ord(ch):04X}"
        for ch in value
        if ch not in allowed and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co")
    ]


def one_line(value: Any) -> Any:
    """A name or label: no line breaks, tabs or other control characters (they would be stored,
    shown and exported with them)."""
    if isinstance(value, str) and (bad := _control_characters(value, "")):
        raise PydanticCustomError(
            "control_character",
            "Use one line of printable text: {found} is a line break or control character.",
            {"found": bad[0]},
        )
    return value


def text_block(value: Any) -> Any:
    """Descriptions and notes: line breaks and tabs are fine, other control characters are not."""
    if isinstance(value, str) and (bad := _control_characters(value, "\n\r\t")):
        raise PydanticCustomError("control_character", "{found} is a control character: remove it.", {"found": bad[0]})
    return value


@dataclasses.dataclass(frozen=True)
class _PatternedAfter(AfterValidator):
    """An AfterValidator that also says, in the document, a pattern of text it accepts."""

    documented: TextPattern

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return self.documented.__get_pydantic_json_schema__(core_schema, handler)


OneLine = _PatternedAfter(one_line, TextPattern(ONE_LINE))
TextBlock = _PatternedAfter(text_block, TextPattern(TEXT_BLOCK))

# A row's id as both databases store it (at most MAX_ROW_ID): a larger number names no row.
RowId = Annotated[int, Field(ge=1, le=MAX_ROW_ID)]


def folded(text: str) -> str:
    """`text` as people compare it: NFKC (fullwidth letters U+FF21.. are A.., the ligature U+FB01 is
    'fi') and case-folded."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


# Letters that show as blank without being whitespace: the Hangul fillers (U+3164 and its
# halfwidth and jamo forms), the Braille blank, the combining grapheme joiner, Khmer inherent vowels.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5")


def _unseen(ch: str) -> bool:
    """A character that shows as nothing: a filler, a variation selector, a control or format
    character (zero-width space and joiners, bidi marks, tags), or an unassigned code point."""
    code = ord(ch)
    return (
        ch in _FILLERS
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")
    )


def name_key(name: str) -> str:
    """The form names are compared in (environments, hosts): folded, without characters that show
    as nothing, runs of whitespace as one space. Two names with the same key look alike on screen."""
    seen = "".join(ch for ch in name if not _unseen(ch))  # first: a mark joins its letter when folded
    return " ".join("".join(ch for ch in folded(seen) if not _unseen(ch)).split())


def visible_name(value: Any) -> Any:
    """A name with something to read: not only spaces, fillers (U+3164) or invisible characters."""
    if isinstance(value, str) and not name_key(value):
        raise PydanticCustomError(
            "invisible_name",
            "Use letters, digits or signs one can see: this name is only blank, filler or invisible characters.",
        )
    return value


VisibleName = AfterValidator(visible_name)


def positive(value: Any) -> Any:
    """A given quantity must be above zero (None: not given)."""
    if value is not None and value <= 0:
        raise PydanticCustomError("greater_than", "Must be more than zero.")
    return value


Positive = _BoundedAfter(positive, Bounds(minimum=0, exclusive_minimum=True))


def given(value: Any) -> Any:
    """A quantity that has no "not given": blank text and null are refused (the unit parser reads
    them as None, which the run's arithmetic would meet as a TypeError, a 500)."""
    if value is None:
        raise PydanticCustomError("missing", "Give a value: this one cannot be left empty.")
    return value


Given = _BoundedAfter(given, Bounds(given=True))


def at_most(limit: float, shown: str) -> AfterValidator:
    def check(value: Any) -> Any:
        if value is not None and value > limit:
            raise PydanticCustomError("less_than_equal", "Must be at most {shown}.", {"shown": shown})
        return value

    return _BoundedAfter(check, Bounds(maximum=limit))


def at_least(limit: float, shown: str) -> AfterValidator:
    def check(value: Any) -> Any:
        if value is not None and value < limit:
            raise PydanticCustomError("greater_than_equal", "Must be at least {shown}.", {"shown": shown})
        return value

    return _BoundedAfter(check, Bounds(minimum=limit))


def time_zone(value: Any) -> Any:
    """An IANA time zone name (Europe/Berlin, America/New_York, UTC); blank is UTC."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "UTC"
    if not isinstance(value, str):
        raise PydanticCustomError("time_zone", "A time zone is a name such as UTC or Europe/Berlin.")
    name = value.strip()
    if name not in _zones():
        raise PydanticCustomError(
            "time_zone",
            "'{name}' is not a time zone name: use the IANA name the database's host uses, such as UTC, "
            "Europe/Berlin or America/New_York.",
            {"name": name[:64]},
        )
    return name


@functools.cache
def _zones() -> frozenset[str]:
    import zoneinfo

    return frozenset(zoneinfo.available_timezones()) | {"UTC"}


@dataclasses.dataclass(frozen=True)
class _ZoneNames:
    """The document lists the zone names this server's time zone data knows (blank, read as UTC, aside)."""

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(core_schema), "enum": sorted(_zones())}


TimeZoneName = Annotated[str, BeforeValidator(time_zone), _ZoneNames()]

# Optional quantities: blank text is "not given" (None), like a JSON null.
SizeBytes = Annotated[
    int | None,
    BeforeValidator(_unit_parser(units.parse_size, MAX_SIZE_BYTES, "1 EiB", "size")),
    _Quantity(maximum=MAX_SIZE_BYTES, kind="size", integer=True),
]
BitRate = Annotated[
    int | None,
    BeforeValidator(
        _unit_parser(lambda v: round(units.parse_bit_rate(v)), MAX_BIT_RATE, "8 Tbit/s (1 TB/s)", "bit_rate")
    ),
    _Quantity(maximum=MAX_BIT_RATE, kind="bit_rate", integer=True),
]
ByteRate = Annotated[  # a redo or data rate: "40 MiB/s", "300 Mbit/s", or bytes per second in JSON
    float | None,
    BeforeValidator(_unit_parser(units.parse_byte_rate, 1e12, "1 TB/s", "byte_rate")),
    _Quantity(maximum=1e12, kind="byte_rate"),
]
DurationSeconds = Annotated[
    float | None,
    BeforeValidator(_unit_parser(units.parse_duration, MAX_DURATION_SECONDS, "10 years", "duration")),
    _Quantity(maximum=MAX_DURATION_SECONDS, kind="duration"),
]
HostAddress = Annotated[
    str,
    StringConstraints(max_length=255),
    AfterValidator(_checked(validators.check_host_address)),
    TextPattern(HOST_ADDRESS, max_length=253),
]
PosixUser = Annotated[str, AfterValidator(_checked(validators.check_posix_user)), TextPattern(POSIX_USER)]
OptionalHostAddress = Annotated[
    str | None,
    BeforeValidator(blank_to_none),
    AfterValidator(_checked(validators.check_host_address)),
    TextPattern(HOST_ADDRESS, max_length=253),
]
OptionalInterfaceName = Annotated[
    str | None,
    BeforeValidator(blank_to_none),
    AfterValidator(_checked(validators.check_interface_name)),
    TextPattern(INTERFACE_NAME),
]
