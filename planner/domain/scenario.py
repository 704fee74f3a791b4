"""A quarter's scenario: the file's shape, and the resolved scenario the planner reads."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema, field_validator, model_validator

from planner.domain.calibration import Entry, SpeedCalibration, memory_offset_gib
from planner.domain.catalog import CardType, Catalog, Frozen, Offer
from planner.domain.limits import FIRST_DAY, LAST_DAY, LIMITS_DOC, MAX_HORIZON_DAYS
from planner.domain.model_card import ModelCard
from planner.domain.money import MINOR_DIGITS
from planner.domain.timeaxis import TimeAxis
from planner.domain.values import Name, Slug, one_or_list
from planner.domain.workload import (
    Commitment,
    Measured,
    ServeWorkload,
    TrainWorkload,
    Workload,
)


class Horizon(Frozen):
    """Whole days, end exclusive, in the scenario's timezone."""

    start: dt.date
    end: dt.date

    @field_validator("start", "end")
    @classmethod
    def _in_calendar(cls, value: dt.date) -> dt.date:
        if not FIRST_DAY <= value <= LAST_DAY + dt.timedelta(days=1):
            raise ValueError(
                f"{value} is outside the days the planner accepts, {FIRST_DAY} .. "
                f"{LAST_DAY} ({LIMITS_DOC})"
            )
        return value

    @model_validator(mode="after")
    def _ordered(self) -> Horizon:
        if self.end <= self.start:
            raise ValueError(f"horizon end {self.end} is not after its start {self.start}")
        if self.days > MAX_HORIZON_DAYS:
            raise ValueError(
                f"horizon of {self.days:,} days is over the limit of {MAX_HORIZON_DAYS} days "
                f"({LIMITS_DOC})"
            )
        return self

    @property
    def days(self) -> int:
        return (self.end - self.start).days


class OfferPatch(Frozen):
    """A scenario's change to a catalog offer (merged by id), or a new offer."""

    model_config = Frozen.model_config | {"extra": "allow"}
    id: Slug


class ExchangeRate(Frozen):
    """What one unit of another currency is worth in the scenario's, on a date."""

    rate: Annotated[Decimal, Field(gt=0)]
    date: dt.date
    source: str = ""


def _rates(rates: Any, currency: Any) -> Any:
    """`rates: {USD: {CNY: 7.10, as_of: DATE[, source: S]}}` as exchange_rates entries."""
    if not isinstance(rates, dict):
        raise ValueError("rates: expected a map such as {USD: {CNY: 7.10, as_of: 2026-09-24}}")
    out = {}
    for origin, entry in rates.items():
        targets = (
            sorted(k for k in entry if k not in ("as_of", "source"))
            if isinstance(entry, dict)
            else []
        )
        if targets != [currency] or "as_of" not in entry:
            raise ValueError(
                f"rates.{origin}: expected {{{currency}: <{currency} per {origin}>, as_of: "
                f"YYYY-MM-DD}} (a rate into the scenario's currency and its date), got {entry!r}"
            )
        out[origin] = {"rate": entry[currency], "date": entry["as_of"]} | (
            {"source": entry["source"]} if "source" in entry else {}
        )
    return out


class ScenarioFile(Frozen):
    """A scenario as written in YAML; references are still names and paths."""

    name: Name
    description: str = ""
    currency: str
    timezone: str
    horizon: Horizon
    catalog: Annotated[
        list[str],
        Field(min_length=1),
        WithJsonSchema(one_or_list({"type": "string"})),  # one name or path, or a list
    ]
    offers: list[OfferPatch] = []
    commitments: list[Commitment] = []
    usable_memory_fraction: Annotated[float, Field(gt=0, le=1)] = 0.90
    # Margin on memory estimates: a fraction (0.1 = fit with 10% to spare; -0.1 = plan on a
    # card the estimate overfills by up to 10%), "band" for each estimate's own error band
    # measured on published figures, or "-band" for the low end of that band.
    memory_margin: Annotated[float, Field(ge=-0.9, le=1)] | Literal["band", "-band"] = 0.0
    # Planned training speed = estimate × (1 − speed_margin): a fraction such as 0.2, or
    # "band" for each estimate's lower band (how far below such estimates speeds were
    # measured). Measured speeds (a workload's `measured`) are planned as measured.
    speed_margin: Annotated[float, Field(ge=0, lt=1)] | Literal["band"] = 0.0
    # Rates that convert a catalog priced in another currency: {USD: {rate, date, source}},
    # the scenario's currency per unit of that one (planner.domain.currency).
    exchange_rates: dict[str, ExchangeRate] = {}
    # Files written by `plan probe … --save`: measured figures that replace estimates.
    calibration: list[str] = []
    workloads: Annotated[list[Workload], Field(min_length=1)]

    @model_validator(mode="before")
    @classmethod
    def _other_spellings(cls, data: Any) -> Any:
        """`catalogs: [a, b]` is `catalog: [a, b]`; `rates: {USD: {CNY: 7.10, as_of: DATE,
        source: S}}` is `exchange_rates: {USD: {rate: 7.10, date: DATE, source: S}}`, its
        target the scenario's currency."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for short, field in (("catalogs", "catalog"), ("rates", "exchange_rates")):
            if short in data and field in data:
                raise ValueError(f"{short} and {field} say the same thing: give one of them")
        if "catalogs" in data:
            data["catalog"] = data.pop("catalogs")
        if "rates" in data:
            data["exchange_rates"] = _rates(data.pop("rates"), data.get("currency"))
        return data

    @field_validator("catalog", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        if value not in MINOR_DIGITS:
            raise ValueError(
                f"unknown currency {value!r}; expected one of {', '.join(MINOR_DIGITS)}"
            )
        return value

    @field_validator("exchange_rates")
    @classmethod
    def _rate_currencies(cls, value: dict[str, ExchangeRate]) -> dict[str, ExchangeRate]:
        unknown = sorted(c for c in value if c not in MINOR_DIGITS)
        if unknown:
            raise ValueError(
                f"unknown currency {unknown[0]!r}; expected one of {', '.join(MINOR_DIGITS)}"
            )
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long
            from planner.domain.suggest import did_you_mean

            hint = did_you_mean(value, sorted(zoneinfo.available_timezones()))
            raise ValueError(f"unknown timezone {value!r}{hint}") from None
        return value


class Scenario(Frozen):
    """A validated scenario with its catalogs, card specs and model cards resolved."""

    path: Path | None = None
    spec: ScenarioFile
    catalogs: tuple[Catalog, ...]  # with the scenario's offer changes applied
    cards: dict[str, CardType]
    models: dict[str, ModelCard]  # by workload name, for train and serve workloads
    calibrations: tuple[Entry, ...] = ()  # from the files in spec.calibration
    # each serve workload with request classes as the file writes it, by name: `spec`
    # holds one workload per class in its place (`<name>.<class>`, `class_of` its name)
    services: dict[str, ServeWorkload] = {}

    def memory_offset_gib(self, model: str, card: str, task: str) -> float:
        """Measured − estimated peak for this model card, card and task (0 if not measured)."""
        return memory_offset_gib(self.calibrations, model, card, task)

    def measured_speed(self, w: TrainWorkload) -> Measured | None:
        """The workload's measured throughput: its own, else a speed calibration of its model
        card and method."""
        if w.measured is not None:
            return w.measured
        model = self.models[w.name].name
        for e in self.calibrations:
            if isinstance(e, SpeedCalibration) and (e.model, e.task) == (model, w.method):
                return Measured(card=e.card, cards=e.cards, tokens_per_s=e.tokens_per_s)
        return None

    @property
    def name(self) -> str:
        return self.spec.name

    @cached_property
    def offers(self) -> dict[str, Offer]:
        return {offer.id: offer for catalog in self.catalogs for offer in catalog.offers}

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.spec.timezone)

    @cached_property
    def axis(self) -> TimeAxis:
        """Hour indices ↔ local time for this horizon and timezone (one DST rule)."""
        return TimeAxis(self.spec.horizon.start, self.spec.horizon.days, self.tz)

    def workload(self, name: str) -> Workload:
        for workload in self.spec.workloads:
            if workload.name == name:
                return workload
        raise KeyError(name)

    def written_workloads(self) -> list[Workload]:
        """The workloads as the scenario file names them: a service with request classes
        once, as written, where `spec.workloads` holds one workload per class (what a patch
        or a what-if flag names)."""
        out: list[Workload] = []
        seen: set[str] = set()
        for w in self.spec.workloads:
            parent = w.class_of if isinstance(w, ServeWorkload) else None
            if parent is None or parent not in self.services:  # not built by loading a file
                out.append(w)
            elif parent not in seen:
                seen.add(parent)
                out.append(self.services[parent])
        return out


__all__ = ["Horizon", "OfferPatch", "Scenario", "ScenarioFile", "Slug"]
