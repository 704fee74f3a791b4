"""A what-if as plain data (its JSON): both sides' summaries, the delta, the money by card
type and billing mode, the workloads that moved, the use of committed capacity, the
break-even price of a commitment, and the levels of a commitment sweep."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.check import check_plan
from planner.domain.money import money, money_down
from planner.domain.plan import Plan, Rental
from planner.domain.scenario import Scenario
from planner.domain.values import PACKAGE_DAYS
from planner.prices import unit_price
from planner.views import pool_use
from planner.whatif.compare import (
    BreakEven,
    Delta,
    Side,
    added_pools,
    break_even,
    committed_pools,
    delta,
    direction_of,
    moved,
    table,
    terms,
)
from planner.whatif.kept import kept_plan


def summary(side: Side, currency: str) -> dict[str, Any]:
    plan = side.plan
    if plan is None:
        return {
            "status": side.status,
            "total_cost": None,
            "reasons": list(dict.fromkeys(side.reasons)),  # each once
            "inconsistency": side.inconsistency,
        }
    return {
        "status": side.status,
        "inconsistency": side.inconsistency,
        "total_cost": plan.total_cost,
        "bound": plan.bound,
        "gap": plan.gap,
        "naive_cost": plan.naive_cost,
        "heuristic_cost": plan.heuristic_cost,
        "solve_seconds": plan.solve_seconds,
        "rentals": len(plan.rentals),
        "currency": currency,
    }


def _delta(d: Delta | None, currency: str) -> dict[str, Any] | None:
    if d is None:
        return None
    return {
        "found": money(d.found, currency),
        "low": money(d.low, currency),
        "high": money(d.high, currency),
        "exact": d.exact,
        "sign_unknown": d.sign_unknown,
    }


def _use(scenario: Scenario, side: Side, offer: str, mode: str) -> dict[str, Any] | None:
    if side.plan is None:
        return None
    use = pool_use(scenario, side.plan, offer, mode)
    return {
        "held_card_hours": float(use.held_card_hours),
        "used_card_hours": float(use.used_card_hours),
        "utilisation": round(use.utilisation, 4),
    }


def _break_evens(
    variant_s: Scenario, base: Side, variant: Side, pools: list[tuple[str, str]] | None = None
) -> list[BreakEven]:
    found = []
    for offer, mode in committed_pools(variant_s) if pools is None else pools:
        price = unit_price(variant_s.offers[offer], mode)
        b = break_even(base, variant, offer, mode, price)
        if b is not None:
            found.append(b)
    return found


def _break_even_json(b: BreakEven, currency: str) -> dict[str, Any]:
    return {
        "offer": b.offer,
        "mode": b.mode,
        "price": money(b.price, currency),
        "quantity": float(b.quantity),
        # the highest price in whole minor units at which it pays: rounded down, so that
        # "it pays at or below" holds of the figure shown (10,036/720 = 13.9388…: 13.93)
        "low": money_down(b.low, currency),
        "high": money_down(b.high, currency),
        # the exact break-even (or its range), as fractions: "2509/180"
        "fraction": {"low": str(b.low), "high": str(b.high)},
        "exact": b.exact,
        # free, it would still cost more than it saves (the prices above are below 0)
        "never_pays": b.never_pays,
        # the same mode bought beyond the commitment, held at the variant's price here
        "others": money(b.others, currency),
    }


def compare(
    base_s: Scenario,
    variant_s: Scenario,
    base: Side,
    variant: Side,
    change: list[str],
    without: tuple[Scenario, Side] | None = None,
) -> dict[str, Any]:
    """The what-if JSON: both summaries, the delta, and where the money and work moved.
    `without`: the change without the commitment it adds, solved, where that is not the base
    (the change does more than commit): the break-even is priced against it."""
    currency = base_s.spec.currency
    direction = direction_of(base_s, variant_s)
    report: dict[str, Any] = {
        "scenario": base_s.name,
        "currency": currency,
        "change": change,
        "changes": changes(base_s, variant_s),
        "base": summary(base, currency),
        "variant": summary(variant, currency),
        "delta": _delta(delta(base, variant, direction), currency),
        "direction": direction,
    }
    if base.plan is None or variant.plan is None:
        return report
    term_rows = terms(base.plan), terms(variant.plan)
    kept = repriced(base_s, variant_s, base)
    ties = kept is not None and variant.total == kept
    report |= {
        "repriced": None
        if kept is None or base.total is None
        else {
            "base_plan": money(base.total, currency),
            "repriced": money(kept, currency),
            "change": money(kept - base.total, currency),
            "ties": ties,
        },
        "bought": bought(variant_s, base.plan, variant.plan),
        "by_card": table(base.plan, variant.plan, "card"),
        "by_mode": table(base.plan, variant.plan, "mode"),
        "terms": {
            k: {
                "base": term_rows[0][k],
                "variant": term_rows[1][k],
                "delta": term_rows[1][k] - term_rows[0][k],
            }
            for k in term_rows[0]
        },
        # where the variant's plan costs what the base plan re-priced costs, its moves are
        # ties (the same money either way), not what the change decided; a workload only
        # one side has (the change dropped or added it) is the change's own
        "moved": [
            row
            for row in moved(base.plan, variant.plan)
            if not ties or row["base"] is None or row["variant"] is None
        ],
        "committed": [
            {
                "offer": offer,
                "mode": mode,
                "base": _use(base_s, base, offer, mode),
                "variant": _use(variant_s, variant, offer, mode),
                **_net(base.plan, variant.plan, offer, mode),
            }
            for offer, mode in committed_pools(base_s, variant_s)
        ],
    }
    report |= _break_even_part(variant_s, variant, (base_s, base) if without is None else without)
    if without is not None:
        report["without_commitment"] = summary(without[1], currency)
    return report


def _break_even_part(
    variant_s: Scenario, variant: Side, without: tuple[Scenario, Side]
) -> dict[str, Any]:
    """The break-even of what the variant commits beyond `without` (the base, or the change
    without its commitment), or a note saying why none is stated."""
    currency = variant_s.spec.currency
    reference_s, reference = without
    pools = added_pools(reference_s, variant_s)
    note = None
    found: list[BreakEven] = []
    if len(pools) > 1:
        note = (
            f"no break-even: the change commits on {len(pools)} offers and modes "
            f"({', '.join(f'{o} {m}' for o, m in pools)}), and each one's price would carry "
            "the others' effect; ask one at a time, as a one-level sweep (--commit "
            "OFFER=N..N:MODE) with the others given as flags"
        )
    elif pools and reference.plan is None:
        note = (
            f"no break-even: the change without its commitment found no plan "
            f"({reference.status}), and it is what the commitment is priced against"
        )
    else:
        found = _break_evens(variant_s, reference, variant, pools)
    return {
        "break_even": [_break_even_json(b, currency) for b in found],
        "break_even_note": note,
    }


def repriced(base_s: Scenario, variant_s: Scenario, base: Side) -> Fraction | None:
    """The base plan's exact cost under the variant (the independent checker's pricing),
    kept as the variant keeps it (without the work of a dropped workload, planner.whatif.
    kept), where it breaks none of the variant's rules; else None. The variant's optimum is
    at most this: keeping the base plan is one of the variant's plans."""
    if base.plan is None:
        return None
    check = check_plan(variant_s, kept_plan(base_s, variant_s, base.plan).plan)
    if any(v.rule != "cost" for v in check.violations):
        return None
    return check.total


def sweep_report(base_s: Scenario, levels: list[Scenario], sides: list[Side]) -> dict[str, Any]:
    """Total, saving, utilisation and break-even price at each commitment level."""
    currency = base_s.spec.currency
    base, rows = sides[0], []
    for level_s, side in zip(levels, sides[1:], strict=True):
        added = level_s.spec.commitments[-1]
        d = delta(base, side)
        b = next(
            (
                x
                for x in _break_evens(level_s, base, side)
                if (x.offer, x.mode) == (added.offer, added.mode)
            ),
            None,
        )
        rows.append(
            {
                "units": added.units,
                "summary": summary(side, currency),
                "saving": None if d is None else _delta(Delta(-d.found, -d.high, -d.low), currency),
                "use": _use(level_s, side, added.offer, added.mode),
                "break_even": None if b is None else _break_even_json(b, currency),
            }
        )
    return {
        "scenario": base_s.name,
        "currency": currency,
        "base": summary(base, currency),
        "levels": rows,
    }


def changes(base_s: Scenario, variant_s: Scenario) -> list[str]:
    """Every field the change set, as `path: before -> after`: offers by id (billing modes
    included), workloads by name, commitments by name, and the scenario's other fields."""
    out: list[str] = []
    before, after = base_s.spec.model_dump(mode="json"), variant_s.spec.model_dump(mode="json")
    for key in ("workloads", "commitments"):
        _diff(key, _named(before.pop(key, []) or []), _named(after.pop(key, []) or []), out)
    before.pop("offers", None), after.pop("offers", None)
    _diff("", before, after, out)
    offers = (
        {k: o.model_dump(mode="json") for k, o in base_s.offers.items()},
        {k: o.model_dump(mode="json") for k, o in variant_s.offers.items()},
    )
    _diff("offers", *offers, out)
    return out


def _named(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {str(x.get("name") or f"#{i + 1}"): x for i, x in enumerate(items)}


DEMAND_FIELDS = ("concurrency", "requests_per_s")


def _diff(path: str, a: Any, b: Any, out: list[str]) -> None:
    if a == b:
        return
    if path.rpartition(".")[2] in DEMAND_FIELDS:  # a curve the same every hour: one value
        flat = _flat(a), _flat(b)
        if all(len(set(f)) == 1 for f in flat):
            out.append(f"{path}: {_number(flat[0][0])} -> {_number(flat[1][0])}")
            return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in a:
                out.append(f"{where}: added {_short(b[key])}")
            elif key not in b:
                out.append(f"{where}: removed")
            else:
                _diff(where, a[key], b[key], out)
        return
    out.append(f"{path}: {_short(a)} -> {_short(b)}")


def _flat(value: Any) -> list[Any]:
    """The leaves of nested maps (a demand curve's hours), in order."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _flat(v)]
    return [value]


def _number(value: Any) -> str:
    """A number as written: 40, not 40.0."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _short(value: Any) -> str:
    if isinstance(value, dict):
        shown = {k: v for k, v in value.items() if v not in (None, [], {}, "")}
        return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in shown.items()) + "}"
    return str(value)


def bought(variant_s: Scenario, base: Plan, variant: Plan) -> list[dict[str, Any]]:
    """Packages and commitments the variant holds that the base does not: one entry per
    offer and mode, with the rentals' count, units, first start, last end, the days the
    last runs past the horizon's end, their money, and the same offer and mode the base holds
    on other days (`base_elsewhere`: a package moved, not one more)."""

    def key(r: Rental) -> tuple[Any, ...]:
        return (r.offer, r.mode, r.start, r.committed)

    held: dict[tuple[Any, ...], int] = {}
    for r in base.rentals:
        if r.mode in PACKAGE_DAYS or r.committed:
            held[key(r)] = held.get(key(r), 0) + r.units
    new = []
    for r in variant.rentals:  # the units beyond the base's at the same start, pro rata
        if r.mode in PACKAGE_DAYS or r.committed:
            extra = r.units - held.get(key(r), 0)
            held[key(r)] = max(0, held.get(key(r), 0) - r.units)
            if extra > 0:
                share = Decimal(extra) / Decimal(r.units)
                new.append(r.model_copy(update={"units": extra, "cost": r.cost * share}))
    horizon_end = variant_s.axis.instant(variant_s.axis.hours)
    groups: dict[tuple[str, str, bool], list[Rental]] = {}
    for r in new:
        groups.setdefault((r.offer, r.mode, r.committed), []).append(r)
    out = []
    for (offer, mode, committed), rentals in sorted(groups.items()):
        last = max(r.end for r in rentals)
        past = max((last - horizon_end).total_seconds() / 86400, 0.0)
        starts = {r.start for r in rentals}
        elsewhere = [  # the base's on other days that the variant does not hold: moved
            r
            for r in base.rentals
            if (r.offer, r.mode, r.committed) == (offer, mode, committed)
            and r.start not in starts
            and held.get(key(r), 0) > 0
        ]
        out.append(
            {
                "offer": offer,
                "mode": mode,
                "committed": committed,
                "rentals": len(rentals),
                "units": sorted({r.units for r in rentals}),
                "first_start": min(r.start for r in rentals),
                "last_end": last,
                "days_past_horizon": round(past, 2),
                "cost": sum((r.cost for r in rentals), Decimal(0)),  # money lines, exact
                "base_elsewhere": {
                    "rentals": len(elsewhere),
                    "first_start": min(r.start for r in elsewhere),
                    "last_end": max(r.end for r in elsewhere),
                }
                if elsewhere
                else None,
            }
        )
    return out


def _net(base: Plan, variant: Plan, offer: str, mode: str) -> dict[str, Decimal]:
    """A commitment's net effect between the two plans found: what its committed rentals
    cost more in the variant, the other spend that moved onto its cards (or away), and the
    net, which is the whole difference of the two totals."""

    def committed(plan: Plan) -> Decimal:
        rentals = (r for r in plan.rentals if r.committed and (r.offer, r.mode) == (offer, mode))
        return sum((r.cost for r in rentals), Decimal(0))

    cost = committed(variant) - committed(base)
    net = variant.total_cost - base.total_cost
    return {"commitment_cost": cost, "other_spend": net - cost, "net": net}
