"""What can be rented: card types (with a source and confidence per figure) and offers."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from planner.domain.limits import MAX_COUNT, MIN_LINK_GBPS, at_least, at_most
from planner.domain.money import MINOR_DIGITS, BilledHours, Price
from planner.domain.values import BILLING_MODES, BillingMode, Slug, WholeMinutes

T = TypeVar("T")
Confidence = Literal["high", "medium", "low"]


class Frozen(BaseModel):
    """Base of every schema: immutable, unknown fields are errors."""

    # .nan and .inf are no figures: every float field refuses them
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Spec(Frozen, Generic[T]):
    """One figure with where it comes from. A bare value is shorthand for `{value: …}`."""

    value: T
    source: str = ""
    confidence: Confidence = "high"

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return data if isinstance(data, dict) else {"value": data}


PositiveSpec = Spec[Annotated[float, Field(gt=0)]]
Units = Annotated[int, Field(ge=0), at_most(MAX_COUNT, "units")]
Cards = Annotated[int, Field(ge=1), at_most(MAX_COUNT, "cards")]


class CardType(Frozen):
    """A GPU model. `memory_gib` is what the card reports; `memory_gb` its marketed size."""

    id: Slug
    name: str
    # The chip family (ampere, ampere-geforce, ada, hopper, blackwell, ascend, ...): training
    # speed estimates use the utilisation measured on that family (planner/estimate/speed.py).
    architecture: Spec[str] = Spec[str](value="unknown", source="default: not stated")
    memory_gb: PositiveSpec
    memory_gib: PositiveSpec
    bandwidth_gbs: PositiveSpec
    bf16_tflops: PositiveSpec  # dense, not the 2:4-sparse headline figure
    fp8: Spec[bool]
    bf16: Spec[bool] = Spec[bool](value=True, source="default: BF16 tensor cores")
    interconnect: Spec[Literal["nvlink", "pcie", "hccs"]]
    interconnect_gbs: PositiveSpec
    p2p: Spec[bool] = Spec[bool](value=True, source="default: peer-to-peer within a node")
    tdp_w: PositiveSpec

    def low_confidence(self) -> list[str]:
        """Names of the figures marked low confidence."""
        return [
            name for name, value in self if isinstance(value, Spec) and value.confidence == "low"
        ]


# `assumed: true` (every figure) or the names of the assumed figures
Assumed = Annotated[
    frozenset[str],
    WithJsonSchema(
        {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}]}
    ),
]


def _assumed_fields(value: Any, fields: tuple[str, ...]) -> frozenset[str]:
    if value is True:
        return frozenset(fields)
    if value is False or value is None:
        return frozenset()
    if isinstance(value, list | tuple | frozenset | set):
        unknown = sorted(str(v) for v in value if v not in fields)
        if unknown:
            raise ValueError(
                f"assumed names unknown field(s) {', '.join(unknown)}; "
                f"expected some of {', '.join(fields)}"
            )
        return frozenset(str(v) for v in value)
    raise ValueError("expected true, false or a list of field names")


class _Billing(Frozen):
    """Fields every billing mode has. `assumed`: true, or the names of the assumed figures."""

    price: Price  # per unit: per unit-hour for hourly/spot, per package otherwise
    stock: Units | None = None  # most units of this mode held at once
    assumed: Assumed = frozenset()

    @field_validator("assumed", mode="before")
    @classmethod
    def _assumed(cls, value: Any) -> frozenset[str]:
        return _assumed_fields(value, tuple(n for n in cls.model_fields if n != "assumed"))


class HourlyBilling(_Billing):
    """Per started increment, with a minimum billed duration per start."""

    min_hours: BilledHours = Decimal(1)
    increment_hours: BilledHours = Decimal(1)


# a spot mode's own figures, planned as 0 and marked assumed where a catalog leaves them out
SPOT_RISK = frozenset({"preemptions_per_hour", "restart_minutes"})


class SpotBilling(HourlyBilling):
    """Billed like hourly; may be preempted (rate per hour), then restarts from a checkpoint."""

    preemptions_per_hour: Annotated[float, Field(ge=0)] = 0.0
    restart_minutes: WholeMinutes = 0

    @model_validator(mode="after")
    def _unstated_risk_is_assumed(self) -> SpotBilling:
        """A spot mode that states no preemption rate or restart time is planned with none,
        an assumption: marked as one, so the catalog and every plan that rests on it say so."""
        unstated = SPOT_RISK - self.model_fields_set
        if unstated - self.assumed:
            object.__setattr__(self, "assumed", self.assumed | unstated)
        return self


class PackageBilling(_Billing):
    """Paid in full for its length (1, 7 or 30 days) from 00:00 of its first day."""


class Network(Frozen):
    """A network between nodes, which lets one job span several nodes of an offer."""

    kind: str = "ethernet"
    gbps: Annotated[float, Field(gt=0)]
    assumed: bool = False


OFFER_ASSUMABLE = (
    "cards_per_node",
    "link_gbps",
    "setup_minutes",
    "disk_price_per_gb_month",
    "max_units",
)


class Offer(Frozen):
    """What a provider sells: one card type in units of `unit_cards`, on some billing modes."""

    id: Slug
    card: Slug
    unit_cards: Cards = 1
    cards_per_node: Cards | None = None  # default: unit_cards
    network: Network | None = None
    link_gbps: Annotated[float, at_least(MIN_LINK_GBPS, "Gbit/s")] = 1.0  # per unit, downloads
    setup_minutes: WholeMinutes | None = None  # overrides the computed download time
    disk_price_per_gb_month: Price | None = None
    max_units: Units | None = None  # all modes together
    hourly: HourlyBilling | None = None
    daily: PackageBilling | None = None
    weekly: PackageBilling | None = None
    monthly: PackageBilling | None = None
    spot: SpotBilling | None = None
    region: str = ""
    notes: str = ""
    assumed: Assumed = frozenset()

    @field_validator("assumed", mode="before")
    @classmethod
    def _assumed(cls, value: Any) -> frozenset[str]:
        return _assumed_fields(value, OFFER_ASSUMABLE)

    @model_validator(mode="after")
    def _well_formed(self) -> Offer:
        if not self.modes:
            raise ValueError(
                f"offer {self.id} has no billing mode; give one of {', '.join(BILLING_MODES)}"
            )
        if self.node_cards % self.unit_cards:
            raise ValueError(
                f"cards_per_node ({self.node_cards}) must be a multiple of "
                f"unit_cards ({self.unit_cards})"
            )
        return self

    @property
    def node_cards(self) -> int:
        return self.cards_per_node or self.unit_cards

    @property
    def modes(self) -> dict[BillingMode, HourlyBilling | PackageBilling]:
        """The billing modes this offer sells, in the order hourly, daily, weekly, monthly, spot."""
        return {m: b for m in BILLING_MODES if (b := getattr(self, m)) is not None}

    def billing(self, mode: str) -> HourlyBilling | PackageBilling:
        """The billing of `mode`; KeyError if the offer does not sell it."""
        value = getattr(self, mode, None) if mode in BILLING_MODES else None
        if value is None:
            raise KeyError(f"offer {self.id} does not sell {mode}")
        return value  # type: ignore[no-any-return]

    def most_units(self, mode: str) -> int | None:
        """The most units sold at once on `mode` (rule 7): its stock or the offer's
        `max_units` over all modes, the lesser; None where neither is given."""
        limits = [self.billing(mode).stock, self.max_units]
        return min((x for x in limits if x is not None), default=None)

    def sells(self, mode: str, units: int) -> bool:
        """Whether `units` units at once on `mode` are within `most_units`."""
        most = self.most_units(mode)
        return most is None or units <= most


class Catalog(Frozen):
    """One provider's price list on one date."""

    name: Slug
    currency: str
    date: dt.date | None = None
    source: str
    cards: list[CardType] = []  # added to, or replacing, the shipped card specs
    offers: list[Offer]
    converted: str = ""  # set when its prices were converted into the scenario's currency
    converted_from: str = ""  # then: the currency its file gives them in

    @field_validator("currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        if value not in MINOR_DIGITS:
            raise ValueError(
                f"unknown currency {value!r}; expected one of {', '.join(MINOR_DIGITS)}"
            )
        return value


class CardSpecs(Frozen):
    """The shipped card-spec file."""

    cards: list[CardType]
