"""A catalog priced in another currency, converted into the scenario's at its stated rate.

Every price of every offer (hourly, spot, packages, disk) is multiplied by the rate once,
when the scenario is read, and rounded half-even to MAX_PRICE_DECIMALS places: the most a
price may carry, since the solver's money scale is the least common multiple of the price
denominators (an exact product of a 7-decimal rate would carry up to 13 decimals, past the
64-bit integers for any sizeable bill). The rounding is at most 5 × 10^-7 of the scenario's
currency per unit and hour, and a converted price is an estimate of the bill anyway. The
converted prices are the plan's prices everywhere (solver, checker, every view), so this
rounding cannot make two figures of a plan disagree; how they add up is the money rule's
(docs/rules.md, rule 13). The catalog then carries the scenario's currency and says what it
was converted from (and from which currency), and plans list the rate among the figures
they rest on.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from planner.domain.catalog import Catalog, Offer
from planner.domain.money import MAX_PRICE_DECIMALS
from planner.domain.scenario import ExchangeRate

MODES = ("hourly", "spot", "daily", "weekly", "monthly")
STEP = Decimal(1).scaleb(-MAX_PRICE_DECIMALS)


def convert(catalog: Catalog, currency: str, rate: ExchangeRate) -> Catalog:
    """`catalog` with every price in `currency` at `rate` (units of `currency` per unit of
    the catalog's)."""
    offers = [_offer(o, rate.rate) for o in catalog.offers]
    note = (
        f"prices of catalog {catalog.name} converted from {catalog.currency} at "
        f"{rate.rate} {currency} per {catalog.currency} (rate of {rate.date.isoformat()}"
        + (f", {rate.source}" if rate.source else "")
        + ")"
    )
    update = {"offers": offers, "currency": currency, "converted": note}
    return catalog.model_copy(update=update | {"converted_from": catalog.currency})


def _price(value: Decimal, rate: Decimal) -> Decimal:
    exact = (value * rate).quantize(STEP, rounding=ROUND_HALF_EVEN)
    return exact.normalize() if exact != exact.to_integral_value() else Decimal(int(exact))


def _offer(offer: Offer, rate: Decimal) -> Offer:
    update: dict[str, object] = {}
    for mode in MODES:
        billing = getattr(offer, mode)
        if billing is not None:
            update[mode] = billing.model_copy(update={"price": _price(billing.price, rate)})
    if offer.disk_price_per_gb_month is not None:
        update["disk_price_per_gb_month"] = _price(offer.disk_price_per_gb_month, rate)
    return offer.model_copy(update=update)
