"""Plain rows and dicts for every output (tables, JSON, CSV): the CLI only formats them."""

from __future__ import annotations

from collections import Counter
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import Any

from planner.check.contract import serve_capacity
from planner.domain.calibration import measured_lines
from planner.domain.catalog import SPOT_RISK, CardType, Catalog, Offer
from planner.domain.money import money
from planner.domain.plan import (
    Assignment,
    CardUse,
    CheaperAlone,
    DayUse,
    NextBest,
    Plan,
    RestsOn,
)
from planner.domain.scenario import ExchangeRate, Scenario
from planner.domain.values import PACKAGE_DAYS, BillingMode
from planner.domain.workload import ServeWorkload, TrainWorkload
from planner.estimate.bands import band_for, lower_band_for
from planner.estimate.core import GIB
from planner.estimate.fit import verdict
from planner.estimate.memory import for_card, train_memory, workload_setup
from planner.levers import lifted
from planner.prices import card_hour_price
from planner.problem import Problem
from planner.quote import package_alone
from planner.rules import PACKAGE_MODES, package_hours, package_span
from planner.solution import Solution
from planner.views import attribution, instant_hours, pool_hours, pool_use

RATE_DIGITS = Decimal("0.0001")  # derived rates (per card-hour, per GB-hour) are shown to 4 places


def _rate(value: Decimal | Fraction) -> Decimal:
    if isinstance(value, Fraction):
        value = Decimal(value.numerator) / Decimal(value.denominator)
    return value.quantize(RATE_DIGITS, rounding=ROUND_HALF_EVEN)


def offer_rows(offers: list[Offer], cards: dict[str, CardType]) -> list[dict[str, Any]]:
    """One row per offer and billing mode, with prices per card-hour and per GB-hour."""
    rows = []
    for offer in offers:
        card = cards[offer.card]
        for mode, billing in offer.modes.items():
            per_card_hour = card_hour_price(offer, mode)  # exact; rounded once below
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
                    # nominal: a catalog has no timezone (a package's real hours do)
                    "hours_per_price": package_hours(mode) if mode in PACKAGE_DAYS else 1,
                    "card_hour_price": _rate(per_card_hour),
                    "gb_hour_price": _rate(
                        per_card_hour / Fraction(Decimal(str(card.memory_gb.value)))
                    ),
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
        "currency": catalog.converted_from or catalog.currency,  # its own, as its file gives it
        "date": catalog.date.isoformat() if catalog.date else None,
        "source": catalog.source,
        "offers": len(catalog.offers),
    }


def _exchange_rate(catalog: Catalog, rates: dict[str, ExchangeRate]) -> str | None:
    """The scenario's currency per unit of the catalog's, where its prices were converted."""
    return str(rates[catalog.converted_from].rate) if catalog.converted_from else None


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
            "hours": scenario.axis.hours,
        },
        "catalogs": [
            catalog_summary(c) | {"exchange_rate": _exchange_rate(c, spec.exchange_rates)}
            for c in scenario.catalogs
        ],
        "offers": {"count": len(scenario.offers), "by_mode": dict(sorted(modes.items()))},
        "cards": used_cards,
        "workloads": kinds,
        "models": {name: card.name for name, card in scenario.models.items()},
        "commitments": len(spec.commitments),
        "usable_memory_fraction": spec.usable_memory_fraction,
        "memory_margin": spec.memory_margin,
        "speed_margin": spec.speed_margin,
        "calibration": measured_lines(scenario.calibrations),
    }


# --- plans -----------------------------------------------------------------------------------


def annotate(problem: Problem, solution: Solution, plan: Plan) -> Plan:
    """A checked plan with what people read beside it: each train workload's next-best
    config, utilisation per card type, one line per package option, the assumed figures.
    None of it changes what the plan orders or costs."""
    costs = attribution(plan)  # what each workload costs, as every view states it
    assignments = [
        a.model_copy(
            update=dict(
                zip(
                    ("next_best", "cheaper_alone"),
                    next_best(problem, solution, plan, a.workload, Fraction(costs[a.workload])),
                    strict=True,
                )
            )
        )
        if isinstance(a, Assignment)
        else a
        for a in plan.assignments
    ]
    return plan.model_copy(
        update={
            "assignments": assignments,
            "utilisation": utilisation(problem, plan),
            "decisions": decisions(problem, plan),
            "assumptions": plan_assumptions(problem, plan),
            "rests_on": rests_on(problem.scenario, plan),
            "attribution": attribution(plan),
        }
    )


def rests_on(scenario: Scenario, plan: Plan) -> list[RestsOn]:
    """What each forced purchase and costly workload rests on (planner.levers), in money."""
    c = plan.currency
    return [
        RestsOn(
            workload=x.workload,
            purchase=None if x.purchase is None else " ".join(x.purchase),
            now=money(x.now, c),
            lever=x.lever,
            assumed=x.assumed,
            stated=x.tried,
            ask=x.ask,
            cards=x.option.cards,
            card=x.option.card,
            offer=x.option.offer,
            mode=x.option.mode,
            cost=money(x.option.cost, c),
            saving=money(x.now - x.option.cost, c),
        )
        for x in lifted(scenario, plan)
    ]


def next_best(
    problem: Problem, solution: Solution, plan: Plan, workload: str, spent: Fraction
) -> tuple[NextBest | None, CheaperAlone | None]:
    """The cheapest other config of a workload that costs at least what it spends (`spent`:
    its cost as every view states it, the held cards' money by cause included), on its own
    price (a package config as its packages bought for it alone; committed hourly units are
    not an alternative priced alone), and the cheapest one that would cost less alone, with
    why the plan does not use it."""
    job = next(j for j in problem.jobs if j.name == workload)
    chosen = job.configs[solution.configs[job.index]]
    scenario = problem.scenario
    priced = [  # another config, not the chosen one at another start hour
        (package_alone(scenario, job, c) if c.held else c.cost, c)
        for c in job.configs
        if c.label() != chosen.label()
        and (not c.held or c.mode in PACKAGE_MODES)
        and scenario.offers[c.offer].sells(c.mode, c.units)
    ]
    others = sorted(priced, key=lambda p: (p[0], p[1].cards, p[1].span, p[1].offer, p[1].mode))
    currency = scenario.spec.currency
    dearer = next(((cost, c) for cost, c in others if cost >= spent), None)
    nb = None
    if dearer is not None:
        nb = NextBest(
            config=dearer[1].label(),
            cost=money(dearer[0], currency),
            extra_cost=money(dearer[0] - spent, currency),
        )
    cheaper = None
    if others and others[0][0] < spent:
        alone, c = others[0]
        if plan.status == "optimal":
            reason = (
                "beside the rest of the plan it would cost more in all: its stock, shared "
                "package cards, dependencies or deadline push other work to dearer options"
            )
        else:
            reason = "not proven either way: the solve stopped before it proved its plan optimal"
        if chosen.held:
            reason += (
                "; the chosen cost includes its part of the held cards' money, charged by "
                "cause as every view charges it"
            )
        cheaper = CheaperAlone(
            config=c.label(),
            cost=money(alone, currency),
            saving=money(spent - alone, currency),
            reason=reason,
        )
    return nb, cheaper


def utilisation(problem: Problem, plan: Plan) -> dict[str, CardUse]:
    """Card-hours held and used inside the horizon per card type (every card some rental
    names), in all and per day (the series a chart of cards held against cards needed
    draws), by local day in real hours; from the hourly series of planner.views."""
    axis = problem.axis
    days = axis.days
    held: dict[str, list[int]] = {r.card: [0] * days for r in plan.rentals}
    used: dict[str, list[int]] = {card: [0] * days for card in held}
    for pool in pool_hours(axis, plan):
        if pool.card not in held:
            continue
        for h, (n_held, n_used) in enumerate(zip(pool.held, pool.used, strict=True)):
            day = axis.day_of(h)
            held[pool.card][day] += n_held
            used[pool.card][day] += n_used
    result: dict[str, CardUse] = {}
    for card in sorted(held):
        total_held = sum(held[card])
        total_used = min(sum(used[card]), total_held)
        result[card] = CardUse(
            held_card_hours=total_held,
            used_card_hours=total_used,
            utilisation=round(total_used / total_held, 4) if total_held else 0.0,
            daily=[
                DayUse(date=f"{axis.date(d):%Y-%m-%d}", held_card_hours=h, used_card_hours=u)
                for d, (h, u) in enumerate(zip(held[card], used[card], strict=True))
                if h or u
            ],
        )
    return result


def decisions(problem: Problem, plan: Plan) -> list[str]:
    """One line per package option the plan had: bought or not, and why."""
    lines = []
    currency = plan.currency
    axis = problem.axis

    def hours(a: Any, b: Any) -> int:  # on the axis: aware times of one zone subtract by wall clock
        return axis.hour(b) - axis.hour(a)

    bought = {(r.offer, r.mode): r for r in plan.rentals if r.mode in PACKAGE_DAYS}
    for (offer_id, mode), pool in sorted(problem.pools.items()):
        if not pool.days:
            continue
        offer = problem.offers[offer_id]
        hourly = _cheapest_hourly_per_card(problem, offer.card)
        # its real lengths over the horizon's start days (23 or 25 h a day across a clock
        # change): a package that some day holds more hours than its break-even may pay
        days = PACKAGE_DAYS[mode]
        lengths = {b - a for a, b in (package_span(axis, days, d) for d in range(axis.days))}
        lengths = lengths or {package_hours(mode)}
        length = max(lengths)
        held_text = (
            f"{length} h" if len(lengths) == 1 else f"{min(lengths)}-{length} h by the clock"
        )
        price = f"{currency} {float(pool.unit_price):,.2f}"
        name = f"{offer_id} {mode} ({price} per {offer.unit_cards}-card unit)"
        if hourly is None:
            reference = "(no hourly offer of this card to compare with)"
            break_even = None
        elif hourly[1] == 0:
            reference = f"({hourly[0]} rents this card hourly for nothing)"
            break_even = None
        else:
            per_unit = hourly[1] * offer.unit_cards
            break_even = float(pool.unit_price / per_unit)
            reference = f"= {break_even:,.1f} h of {hourly[0]} hourly per unit (of its {held_text})"
        if (offer_id, mode) in bought:
            jobs = sorted(
                {a.workload for a in plan.train if (a.offer, a.mode) == (offer_id, mode)}
                | {
                    r.workload
                    for r in plan.replica
                    for u in r.uses
                    if (u.offer, u.mode) == (offer_id, mode)
                }
            )
            only = [
                j.name
                for j in problem.jobs
                if j.name in jobs and all(c.held and c.pool == (offer_id, mode) for c in j.configs)
            ]
            reason = (
                f"{', '.join(only)} can run on nothing else"
                if only
                else "cheaper than renting the same hours"
                if hourly is not None and hourly[1] > 0
                else "the cheapest way the plan found to run them"
                + ("" if plan.status == "optimal" else " (not proven: the solve stopped first)")
            )
            used = sum(
                a.hours * a.cards for a in plan.train if (a.offer, a.mode) == (offer_id, mode)
            ) + sum(
                hours(u.start, u.end) * u.cards * u.replicas
                for r in plan.replica
                for u in r.uses
                if (u.offer, u.mode) == (offer_id, mode)
            )
            pooled = [r for r in plan.rentals if (r.offer, r.mode) == (offer_id, mode)]
            held = sum(hours(r.start, r.end) * r.cards for r in pooled)
            users = ", ".join(jobs) or "no workload"
            why = (
                f"committed (the plan must include it), used by {users}"
                if all(r.committed for r in pooled)  # held because the scenario commits to it
                else f"bought for {users}: {reason}"
            )
            lines.append(
                f"{name} {reference}; {why}; they use {used:,} of {held:,} held card-hours"
            )
        elif hourly is not None and break_even is not None:
            if break_even >= length:
                verdict = "it costs at least its whole length of hourly"
            else:
                verdict = _best_window(
                    problem, plan, offer.card, mode, offer.unit_cards, break_even
                )
            lines.append(f"{name} {reference}; not bought: {verdict}")
        else:  # nothing hourly of this card to weigh it against
            verdict = (
                "hourly cards of this type cost nothing"
                if hourly is not None
                else "the plan runs every workload that could use it more cheaply elsewhere"
                + ("" if plan.status == "optimal" else " (not proven: the solve stopped first)")
            )
            lines.append(f"{name} {reference}; not bought: {verdict}")
    return lines


def _best_window(
    problem: Problem, plan: Plan, card: str, mode: str, unit_cards: int, break_even: float
) -> str:
    """Why a package the plan does not buy would not pay, from the plan itself: the most
    hourly use of the card, every workload's, that one unit could take over in one
    package's days (up to its cards each hour), against the hours it must take to pay."""
    axis = problem.axis
    cards = [0] * axis.hours
    for r in plan.rentals:
        if r.mode == "hourly" and r.card == card and not r.committed:
            for h in range(max(axis.hour(r.start), 0), min(axis.hour(r.end), axis.hours)):
                cards[h] += r.cards
    days = PACKAGE_DAYS[mode]
    best, first = 0.0, 0
    for day in range(axis.days):
        a, b = package_span(axis, days, day)
        b = min(b, axis.hours)
        taken = sum(min(n, unit_cards) for n in cards[a:b]) / unit_cards
        if taken > best:
            best, first = taken, day
    if best < break_even:
        where = f"in its best {days} day(s), from {axis.date(first):%Y-%m-%d}, " if best else ""
        return (
            f"{where}one unit would take over {best:,.1f} h of the plan's hourly {card} use, "
            f"under the {break_even:,.1f} h it needs to pay"
        )
    why = (
        "so a rule the hours alone do not show keeps it out (stock, setups, a replica's "
        "cards on one node, the idle hours it would add)"
        if plan.status == "optimal"
        else "so it may pay there: the plan is not proven optimal, and a longer solve may buy it"
    )
    return (
        f"one unit from {axis.date(first):%Y-%m-%d} would take over {best:,.1f} h of the "
        f"plan's hourly {card} use, past the {break_even:,.1f} h it needs to pay, {why}"
    )


ESTIMATE_FIGURES = ("memory_gib", "bandwidth_gbs", "bf16_tflops", "interconnect_gbs")
MEASURED = "measured, in place of an estimate: "  # a calibration's line in plan.assumptions


def plan_assumptions(problem: Problem, plan: Plan) -> list[str]:
    """The assumed price-list figures and low-confidence card figures a plan rests on, and
    the exchange rates of converted catalogs."""
    lines: list[str] = [c.converted for c in problem.scenario.catalogs if c.converted]
    for offer_id, mode in sorted({(r.offer, r.mode) for r in plan.rentals}):
        offer = problem.offers[offer_id]
        billing = offer.billing(mode)
        assumed = sorted(billing.assumed | offer.assumed)
        if assumed:
            # each assumed figure with the value planned where it is one of spot's own
            said = [
                f"{name} {getattr(billing, name):g}" if name in SPOT_RISK else name
                for name in assumed
            ]
            lines.append(f"{offer_id} {mode}: {', '.join(said)} assumed (not on the price list)")
    cards = {a.card for a in plan.train} | {u.card for r in plan.replica for u in r.uses}
    for card_id in sorted(cards):
        card = problem.scenario.cards[card_id]
        for figure in card.low_confidence():
            if figure not in ESTIMATE_FIGURES:
                continue
            spec = getattr(card, figure)
            lines.append(f"{card_id} {figure} = {spec.value:g} is low confidence ({spec.source})")
    models = {problem.scenario.models[a.workload].name for a in plan.train}
    models |= {problem.scenario.models[r.workload].name for r in plan.replica if r.kind == "serve"}
    used = tuple(
        e
        for e in problem.scenario.calibrations
        if e.card in cards and (e.kind == "card" or getattr(e, "model", None) in models)
    )
    lines += [f"{MEASURED}{line}" for line in measured_lines(used)]
    return lines


def _cheapest_hourly_per_card(problem: Problem, card: str) -> tuple[str, Fraction] | None:
    options = [
        (card_hour_price(o, "hourly"), o.id)
        for o in problem.offers.values()
        if o.card == card and o.hourly is not None
    ]
    if not options:
        return None
    price, offer_id = min(options)
    return offer_id, price


STALE_CATALOG_DAYS = 92  # a quarter


def headline_warnings(scenario: Scenario, plan: Plan) -> list[str]:
    """What a budget holder must see first: packages held mostly idle (and for whom), assumed
    figures behind the plan, a price list older than a quarter at the horizon's start."""
    out = []
    horizon = scenario.spec.horizon.start
    for catalog in scenario.catalogs:
        if catalog.date and (horizon - catalog.date).days > STALE_CATALOG_DAYS:
            out.append(
                f"catalog {catalog.name} is dated {catalog.date:%Y-%m-%d}, "
                f"{(horizon - catalog.date).days} days before the horizon starts: its prices "
                "and stock may have moved"
            )
    out += _outside(scenario, plan)
    out += _past_context(scenario)
    out += _forced(plan)
    out += _idle_packages(scenario, plan)
    out += _unpriced_disks(scenario, plan)
    out += _marginal(scenario, plan)
    out += _marginal_replicas(scenario, plan)
    assumed = [a for a in plan.assumptions if not a.startswith(MEASURED)]
    if assumed:
        n = len(assumed)
        out.append(
            f"{n} assumed or low-confidence figure{'s' if n > 1 else ''} behind this plan "
            "(listed at the end): confirm them with the provider before ordering"
        )
    return out


def _past_context(scenario: Scenario) -> list[str]:
    """A line per train job whose sequences, or serve workload whose requests, are longer
    than its model's trained context."""
    out = []
    for w in scenario.spec.workloads:
        model = scenario.models.get(w.name)
        if model is None:  # reserved cards: no model
            continue
        if isinstance(w, TrainWorkload):
            said = model.past_context(w.seq_len, "a sequence")
        else:
            tokens = getattr(w, "context_tokens", None)
            said = None if tokens is None else model.past_context(tokens, "a request")
        if said is not None:
            out.append(f"{w.name}: {said}")
    return out


def _marginal(scenario: Scenario, plan: Plan) -> list[str]:
    """A line per train job planned on cards its memory estimate fits, but not once the
    estimate grows by its kind's measured error band (`plan fit`'s verdict "marginal"); and
    per job planned on cards the estimate overfills (a negative --memory-margin)."""
    out = []
    for a in plan.train:
        w = scenario.workload(a.workload)
        if not isinstance(w, TrainWorkload):
            continue
        model = scenario.models[w.name]
        setup = workload_setup(w, scenario.spec.usable_memory_fraction, 0.0)
        setup = for_card(setup, scenario, model, a.card, w.method)
        estimate = train_memory(model, scenario.cards[a.card], a.cards, setup)
        where = (
            f"{a.workload} runs on {a.cards} × {a.card}: its memory estimate is "
            f"{estimate.total / GIB:.1f} GiB of {estimate.usable / GIB:.1f} usable"
        )
        if not estimate.fits:
            low = lower_band_for(estimate.kind)
            measured = (
                f"{low[1]} estimates have run up to {low[0]:.0%} high (lower band)"
                if low is not None
                else "no measured band says it runs"
            )
            out.append(
                f"{where}, planned with the {scenario.spec.memory_margin} memory margin; "
                f"{measured}: measure it (plan probe memory) before ordering"
            )
            continue
        found = band_for(estimate.kind)
        if scenario.spec.memory_margin == "band" or found is None:
            continue
        if verdict(estimate) == "marginal":
            out.append(
                f"{where}, and would not fit if it needed {found[0]:.0%} more ({found[1]} "
                "estimates have been off by that much): measure it (plan probe memory) or "
                "plan with --memory-margin band"
            )
    return out


def _marginal_replicas(scenario: Scenario, plan: Plan) -> list[str]:
    """Under a negative memory margin, a line per service and config whose replicas carry
    more requests than the estimate itself allows."""
    margin = scenario.spec.memory_margin
    if margin != "-band" and not (isinstance(margin, float) and margin < 0):
        return []
    plain = scenario.model_copy(
        update={"spec": scenario.spec.model_copy(update={"memory_margin": 0.0})}
    )
    out = []
    for r in plan.replica:
        w = scenario.workload(r.workload)
        if not isinstance(w, ServeWorkload):
            continue
        seen: set[tuple[str, int, str]] = set()
        for u in r.uses:
            key = (u.card, u.cards, u.precision)
            if key in seen:
                continue
            seen.add(key)
            card = scenario.cards[u.card]
            estimated = serve_capacity(plain, w, card, u.cards, u.precision)
            if u.capacity > estimated:
                out.append(
                    f"{r.workload} replicas on {u.cards} × {u.card} carry {u.capacity} requests "
                    f"each, {estimated} by the memory estimate itself: planned with the "
                    f"{margin} memory margin; measure it (plan probe memory) before ordering"
                )
    return out


def _forced(plan: Plan) -> list[str]:
    """A line per purchase that some workloads alone make necessary: who forces it, what it
    costs and its share of the plan, and who else rides on it."""
    out = []
    c = plan.currency
    for f in plan.forced:
        names = ", ".join(f.workloads)
        verb = "can" if len(f.workloads) == 1 else "together can"
        share = f"{f.cost / plan.total_cost:.0%} of the plan" if plan.total_cost else "the plan"
        count = f"{'at least ' if not f.exact else ''}{f.packages} {f.mode} package" + (
            "s" if f.packages > 1 else ""
        )
        others = sorted(_held_users(plan, f.offer, f.mode) - set(f.workloads))
        ride = (
            f"; {', '.join(others)} use{'s' if len(others) == 1 else ''} its spare cards"
            if others
            else ""
        )
        subject = "it forces" if len(f.workloads) == 1 else "they force"
        out.append(
            f"{names} {verb} run only on {f.offer} {f.mode}: {subject} {count}, "
            f"{c} {f.cost:,.2f}, {share}{ride}"
        )
        out += [_lifted(r, c) for r in plan.rests_on if r.purchase == f"{f.offer} {f.mode}"]
    out += [_lifted(r, c) for r in plan.rests_on if r.purchase is None]
    return out


def _outside(scenario: Scenario, plan: Plan) -> list[str]:
    """Money outside the quarter: packages held past the horizon's end (their price pro rata
    by hours past it, and whether a forced purchase), rentals started before its start."""
    first, last = scenario.axis.instant(0), scenario.axis.instant(scenario.axis.hours)
    c = plan.currency
    forced = {(f.offer, f.mode): ", ".join(f.workloads) for f in plan.forced}
    out = []
    # pool, committed → [money past the end, hours]; hours by the instant (a clock change
    # makes a day 23 or 25 h)
    past: dict[tuple[str, str, bool], list[Fraction]] = {}
    for r in plan.rentals:
        held = instant_hours(r.start, r.end)
        after = max(instant_hours(last, r.end), Fraction(0))
        if (r.mode in PACKAGE_DAYS or r.committed) and after and held:
            key = (r.offer, r.mode, r.committed)
            money_, hours = past.setdefault(key, [Fraction(0), Fraction(0)])
            past[key] = [money_ + Fraction(r.cost) * after / held, max(hours, after)]
    for (offer, mode, committed), (money_, hours) in sorted(past.items()):
        why = (
            "a commitment, signed before the plan"
            if committed
            else f"the purchase is forced by {forced[offer, mode]}; its dates are the plan's choice"
            if (offer, mode) in forced
            else "a choice of the plan: packages are bought whole"
        )
        out.append(
            f"money past the quarter: {offer} {mode} is held up to {float(hours / 24):g} "
            f"day(s) past the horizon's end, {c} {money(money_, c):,.2f} of its price pro "
            f"rata ({why})"
        )
    early = [r for r in plan.rentals if r.start < first]
    if early:
        ahead = sum((instant_hours(r.start, first) * r.units for r in early), Fraction(0))
        out.append(
            f"money before the quarter: {len(early)} rental(s) start before the horizon (setup "
            f"ahead of work in its first hour), {float(ahead):g} unit-hour(s) before "
            f"{scenario.axis.local(0):%m-%d %H:%M}"
        )
    return out


def _lifted(r: RestsOn, c: str) -> str:
    """One assumption a costly decision rests on, and what stating it would change."""
    if r.purchase is not None:
        head = f"{r.workload} forces {r.purchase} ({c} {r.now:,.2f})"
    else:
        head = f"{r.workload} costs {c} {r.now:,.2f} alone at its cheapest"
    return (
        f"{head} because {r.assumed}; with {r.stated} it would run on {r.cards} × {r.card} "
        f"{r.mode} ({r.offer}) for {c} {r.cost:,.2f}, {c} {r.saving:,.2f} less: {r.ask}"
    )


def _held_users(plan: Plan, offer: str, mode: str) -> set[str]:
    """The workloads that run on the held cards of one offer and mode."""
    names = {a.workload for a in plan.train if (a.offer, a.mode) == (offer, mode) and a.held}
    names |= {
        ra.workload
        for ra in plan.replica
        if any((u.offer, u.mode) == (offer, mode) and u.held for u in ra.uses)
    }
    return names


def _unpriced_disks(scenario: Scenario, plan: Plan) -> list[str]:
    """Workloads that state `disk_gb` on offers without a disk price: storage the plan cannot
    bill (shown as 0.00), by offer, with the gigabytes."""
    offers: dict[str, list[tuple[str, int]]] = {}
    placed = {(a.workload, a.offer) for a in plan.train}
    placed |= {(ra.workload, u.offer) for ra in plan.replica for u in ra.uses}
    for name, offer in sorted(placed):
        disk = scenario.workload(name).disk_gb
        if disk and scenario.offers[offer].disk_price_per_gb_month is None:
            offers.setdefault(offer, []).append((name, disk))
    if not offers:
        return []
    parts = [
        f"{offer} ({', '.join(f'{n} {gb:,} GB' for n, gb in items)})"
        for offer, items in sorted(offers.items())
    ]
    return [
        "disk not priced: these workloads state disk_gb on offers whose catalog has no disk "
        f"price, so their storage is 0.00 in this plan: {'; '.join(parts)}"
    ]


IDLE_SHARE = 0.5  # a package pool used less than this is called mostly idle


def _idle_packages(scenario: Scenario, plan: Plan) -> list[str]:
    """One line per package pool (offer and mode), or committed hourly units, used less than
    half of what it holds inside the horizon: its cost, its use, the workloads on it, and
    which can run nowhere else."""
    c = plan.currency
    pools: dict[tuple[str, str], Decimal] = {}
    for r in plan.rentals:
        if r.mode in PACKAGE_DAYS or r.committed:
            pools[(r.offer, r.mode)] = pools.get((r.offer, r.mode), Decimal(0)) + r.cost
    out = []
    for (offer, mode), cost in sorted(pools.items()):
        use = pool_use(scenario, plan, offer, mode)
        if not use.held_card_hours or use.utilisation >= IDLE_SHARE:
            continue
        train = [a for a in plan.train if (a.offer, a.mode) == (offer, mode) and a.held]
        names = _held_users(plan, offer, mode)
        held, idle = float(use.held_card_hours), float(use.held_card_hours - use.used_card_hours)
        # committed hourly units are a contract, not packages
        what = "committed units" if mode not in PACKAGE_DAYS else "packages"
        line = (
            f"{offer} {mode}: {c} {cost:,.2f} of {what} held at {use.utilisation:.0%} use "
            f"({idle:,.0f} of {held:,.0f} card-hours in the horizon idle), for "
            + (", ".join(sorted(names)) if names else "no workload")
        )
        only = sorted(a.workload for a in train if a.next_best is None and a.cheaper_alone is None)
        if only:
            line += (
                f"; {', '.join(only)} has no other config it could rent in its window, so "
                "the package is the price of running it there: only another window or "
                "another offer could avoid it (ask plan whatif --shift or --set)"
            )
        out.append(line)
    return out
