"""Plain rows and dicts for every output (tables, JSON, CSV): the CLI only formats them."""

from __future__ import annotations

from collections import Counter
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from planner.domain.catalog import CardType, Catalog, Offer
from planner.domain.scenario import Scenario
from planner.domain.values import PACKAGE_DAYS, BillingMode

RATE_DIGITS = Decimal("0.0001")  # derived rates (per card-hour, per GB-hour) are shown to 4 places


def _rate(value: Decimal) -> Decimal:
    return value.quantize(RATE_DIGITS, rounding=ROUND_HALF_EVEN)


def offer_rows(offers: list[Offer], cards: dict[str, CardType]) -> list[dict[str, Any]]:
    """One row per offer and billing mode, with prices per card-hour and per GB-hour."""
    rows = []
    for offer in offers:
        card = cards[offer.card]
        for mode, billing in offer.modes.items():
            per_card_hour = offer.card_hour_price(mode)
            rows.append(
                {
                    "offer": offer.id,
                    "card": card.id,
                    "card_name": card.name,
                    "memory_gb": card.memory_gb.value,
                    "memory_gib": card.memory_gib.value,
                    "unit_cards": offer.unit_cards,
                    "mode": mode,
                    "price": billing.price,
                    "price_per": _price_per(mode),
                    "hours_per_price": 24 * PACKAGE_DAYS[mode] if mode in PACKAGE_DAYS else 1,
                    "card_hour_price": _rate(per_card_hour),
                    "gb_hour_price": _rate(per_card_hour / Decimal(str(card.memory_gb.value))),
                    "stock": billing.stock,
                    "max_units": offer.max_units,
                    "assumed": sorted(billing.assumed | offer.assumed),
                    "low_confidence": card.low_confidence(),
                    "notes": offer.notes,
                }
            )
    return rows


def _price_per(mode: BillingMode) -> str:
    return {"daily": "day", "weekly": "week", "monthly": "30 days"}.get(mode, "hour")


def catalog_summary(catalog: Catalog) -> dict[str, Any]:
    return {
        "name": catalog.name,
        "currency": catalog.currency,
        "date": catalog.date.isoformat() if catalog.date else None,
        "source": catalog.source,
        "offers": len(catalog.offers),
    }


def scenario_summary(scenario: Scenario) -> dict[str, Any]:
    """What `plan validate` reports about a valid scenario."""
    spec = scenario.spec
    kinds: dict[str, list[str]] = {"train": [], "serve": [], "reserve": []}
    for workload in spec.workloads:
        kinds[workload.kind].append(workload.name)
    modes = Counter(mode for offer in scenario.offers.values() for mode in offer.modes)
    used_cards = sorted({offer.card for offer in scenario.offers.values()})
    return {
        "scenario": spec.name,
        "valid": True,
        "file": str(scenario.path) if scenario.path else None,
        "currency": spec.currency,
        "timezone": spec.timezone,
        "horizon": {
            "start": spec.horizon.start.isoformat(),
            "end": spec.horizon.end.isoformat(),
            "days": spec.horizon.days,
            "hours": spec.horizon.days * 24,
        },
        "catalogs": [catalog_summary(c) for c in scenario.catalogs],
        "offers": {"count": len(scenario.offers), "by_mode": dict(sorted(modes.items()))},
        "cards": used_cards,
        "workloads": kinds,
        "models": {name: card.name for name, card in scenario.models.items()},
        "commitments": len(spec.commitments),
        "usable_memory_fraction": spec.usable_memory_fraction,
    }
