"""API and form schemas for an environment's own link tiers (the links its buyer can order)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from redolab.core.fields import BitRate, Bounds, Positive, UnitEcho, at_most, blank_to_none
from redolab.core.schema_rules import TextPattern, document, needs_when_given
from redolab.environments.models import LinkTier
from redolab.environments.schemas import Name

MAX_TIER_BITS_PER_SECOND = 10**12  # 1 Tbit/s: above the fastest port any provider lists, so a typo
MAX_MONTHLY_PRICE = 1e9


def tier_rate(value: int | None) -> int:
    """A tier's nominal rate must be given and above zero (the unit parser leaves blank as None)."""
    if value is None:
        raise PydanticCustomError("missing", "Give the tier's nominal rate, e.g. 1 Gbit/s.")
    if value <= 0:
        raise PydanticCustomError("greater_than", "Must be more than zero.")
    return value


def currency_code(value: str | None) -> str | None:
    """An ISO 4217 code: three letters (USD, EUR, CHF), stored upper case."""
    if value is None:
        return None
    code = value.strip().upper()
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        raise PydanticCustomError("currency", "A currency is a three-letter code such as USD, EUR or GBP.")
    return code


TierRate = Annotated[
    BitRate,
    AfterValidator(tier_rate),
    Positive,
    Bounds(given=True),
    at_most(MAX_TIER_BITS_PER_SECOND, "1 Tbit/s"),
    Field(validate_default=True),
]
# The bounds on the number, not on the optional: pydantic applied `ge` to a JSON null (a TypeError, a 500).
MonthlyPrice = Annotated[
    Annotated[float, Field(ge=0, le=MAX_MONTHLY_PRICE, allow_inf_nan=False)] | None, BeforeValidator(blank_to_none)
]
Currency = Annotated[
    str | None, BeforeValidator(blank_to_none), AfterValidator(currency_code), TextPattern(r"^[A-Za-z]{3}$")
]


class LinkTierCreate(UnitEcho):
    """A tier the buyer can order. The rate is bit/s, or text with a unit ("500 Mbit/s", "10 Gbit/s");
    a price, when given, is per month and needs its currency (the service checks the pair)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=document(needs_when_given("monthly_price", "currency"), required=("bits_per_second",)),
    )

    name: Name
    bits_per_second: TierRate = None
    monthly_price: MonthlyPrice = None
    currency: Currency = None


class LinkTierPublic(BaseModel):
    id: int
    environment_id: int
    name: str
    bits_per_second: int
    monthly_price: float | None
    currency: str | None
    created_at: datetime
    updated_at: datetime
    unit_readings: dict[str, str] = {}

    @classmethod
    def of(cls, tier: LinkTier, unit_readings: dict[str, str] | None = None) -> LinkTierPublic:
        return cls(
            id=tier.id,
            environment_id=tier.environment_id,
            name=tier.name,
            bits_per_second=tier.bits_per_second,
            monthly_price=tier.monthly_price,
            currency=tier.currency,
            created_at=tier.created_at,
            updated_at=tier.updated_at,
            unit_readings=unit_readings or {},
        )


class LinkTiersPublic(BaseModel):
    data: list[LinkTierPublic]
    count: int
