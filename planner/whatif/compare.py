"""What a what-if answers: the difference between the checked plans of a scenario and its
variant — total, by card type and billing mode, idle, round-up and committed money, the
workloads that moved, the use of committed capacity — and how exact that difference is."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.domain.catalog import Offer
from planner.domain.costs import CostTerm
from planner.domain.plan import Assignment, Plan, ReplicaAssignment
from planner.domain.scenario import Scenario
from planner.domain.values import BILLING_MODES
from planner.prices import unit_price


@dataclass(frozen=True)
class Side:
    """One solved scenario of a what-if: its checked plan (or why none) and, exactly, the
    plan's cost and a lower bound on the scenario's optimum."""

    label: str
    status: str
    plan: Plan | None = None
    total: Fraction | None = None
    bound: Fraction | None = None
    reasons: list[str] = field(default_factory=list)
    inconsistency: str | None = None  # the model contradicted a checked plan (planner.solve)

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


@dataclass(frozen=True)
class Delta:
    """Variant optimum − base optimum lies in [low, high]; `found` is what the two plans
    shown differ by. Exact (low = high = found) when both sides are proven optimal."""

    found: Fraction
    low: Fraction
    high: Fraction

    @property
    def exact(self) -> bool:
        return self.low == self.high

    @property
    def sign_unknown(self) -> bool:
        """The interval holds zero inside it: the change may save money or cost it."""
        return self.low < 0 < self.high


def delta(base: Side, variant: Side, direction: int = 0) -> Delta | None:
    """The cost difference, exact or as the interval the sides' bounds allow; None without
    both plans. Each side's plan bounds its optimum from above; where the other side's plan,
    carried over, is cheaper and checked, that plan is the side's (planner.cli.variant
    `crossed`), so its total is already the lesser of the two. `direction`: -1
    where the change can only lower the optimum (every plan of the base is one of the
    variant, at no higher cost: prices down, stock up, offers added, workloads dropped), +1
    where it can only raise it, 0 where neither is known (`direction_of`)."""
    if base.total is None or variant.total is None:
        return None
    found = variant.total - base.total
    if base.optimal and variant.optimal:
        return Delta(found, found, found)
    low = (variant.bound if variant.bound is not None else Fraction(0)) - base.total
    high = variant.total - (base.bound if base.bound is not None else Fraction(0))
    if direction < 0:
        high = min(high, Fraction(0))
    elif direction > 0:
        low = max(low, Fraction(0))
    return Delta(found, low, high)


def direction_of(base: Scenario, variant: Scenario) -> int:
    """-1 if the variant can only be cheaper to plan than the base, +1 if only dearer, 0 if
    unknown: each changed field is judged alone, and all must agree. A lower price, more
    stock or a higher cap, a new offer or billing mode, a dropped workload relax the problem
    (every base plan stays a plan, at no higher cost); their opposites tighten it; any
    other change (billing rules, commitments, a workload's fields) decides nothing."""
    votes: set[int] = set()
    a, b = base.spec.model_dump(mode="json"), variant.spec.model_dump(mode="json")
    for key in set(a) | set(b):
        if key not in ("workloads", "offers") and a.get(key) != b.get(key):
            return 0
    names_a = {w["name"]: w for w in a["workloads"]}
    names_b = {w["name"]: w for w in b["workloads"]}
    for name in names_a.keys() | names_b.keys():
        if name not in names_b:
            votes.add(-1)
        elif name not in names_a:
            votes.add(1)
        elif names_a[name] != names_b[name]:
            return 0
    for offer_id in base.offers.keys() | variant.offers.keys():
        if offer_id not in variant.offers:
            votes.add(1)
        elif offer_id not in base.offers:
            votes.add(-1)
        else:
            vote = _offer_direction(base.offers[offer_id], variant.offers[offer_id])
            if vote is None:
                return 0
            votes |= vote
    votes.discard(0)
    return votes.pop() if len(votes) == 1 else 0


def _offer_direction(a: Offer, b: Offer) -> set[int] | None:
    """The votes of one offer's changes, or None where a change decides nothing."""
    fields = set(type(a).model_fields) - set(BILLING_MODES) - {"max_units"}
    if any(getattr(a, f) != getattr(b, f) for f in fields):
        return None
    votes = {_more(a.max_units, b.max_units)}
    for mode in BILLING_MODES:
        x, y = getattr(a, mode, None), getattr(b, mode, None)
        if x is None or y is None:
            votes.add(0 if x is y else -1 if x is None else 1)
            continue
        rest = set(type(x).model_fields) - {"price", "stock"}
        if any(getattr(x, f) != getattr(y, f) for f in rest):
            return None
        before, after = unit_price(a, mode), unit_price(b, mode)
        votes.add(1 if after > before else -1 if after < before else 0)
        votes.add(_more(x.stock, y.stock))
    return votes


def _more(a: int | None, b: int | None) -> int:
    """The vote of a limit changing from a to b (None: no limit): more relaxes."""
    if a == b:
        return 0
    if a is None:
        return 1
    if b is None:
        return -1
    return -1 if b > a else 1


def _grouped(plan: Plan, key: str) -> dict[str, Decimal]:
    """Rental money by card type or by billing mode (committed rentals apart), and storage,
    which no rental carries, as its own row: they add up to the total (docs/rules.md, the
    money rule)."""
    sums: dict[str, Decimal] = defaultdict(Decimal)
    for r in plan.rentals:
        name = r.card if key == "card" else r.mode + (" (committed)" if r.committed else "")
        sums[name] += r.cost
    assert plan.cost_breakdown is not None
    storage = plan.cost_breakdown.paid[CostTerm.STORAGE]
    if storage:
        sums["storage"] += storage
    return dict(sums)


def table(base: Plan, variant: Plan, key: str) -> list[dict[str, Any]]:
    """Rows {name, base, variant, delta} of money by card type or billing mode."""
    left, right = _grouped(base, key), _grouped(variant, key)
    rows = []
    for name in sorted(left.keys() | right.keys()):
        a, b = left.get(name, Decimal(0)), right.get(name, Decimal(0))
        rows.append({key: name, "base": a, "variant": b, "delta": b - a})
    return rows


def terms(plan: Plan) -> dict[str, Decimal]:
    """Idle, round-up and committed money of a plan."""
    b = plan.cost_breakdown
    assert b is not None
    return {
        "idle": b.reported[CostTerm.IDLE].cost or Decimal(0),
        "round_up": b.reported[CostTerm.ROUND_UP].cost or Decimal(0),
        "committed": b.paid[CostTerm.COMMITMENT],
    }


def _train_place(a: Assignment) -> dict[str, Any]:
    return {
        "card": a.card,
        "cards": a.cards,
        "offer": a.offer,
        "mode": a.mode,
        "start": a.start,
        "end": a.end,
    }


def _replica_place(a: ReplicaAssignment) -> dict[str, Any]:
    return {"configs": a.configs, "peak_replicas": a.peak_replicas}


def moved(base: Plan, variant: Plan) -> list[dict[str, Any]]:
    """Workloads whose placement differs: card, count, offer, mode, start or end (train);
    configs or peak replicas (serve, reserve); or that one side does not have."""

    def places(plan: Plan) -> dict[str, dict[str, Any]]:
        out = {a.workload: _train_place(a) for a in plan.train}
        out.update({a.workload: _replica_place(a) for a in plan.replica})
        return out

    left, right = places(base), places(variant)
    rows = []
    for name in [*left, *(n for n in right if n not in left)]:
        a, b = left.get(name), right.get(name)
        if a == b:
            continue
        changed = sorted(k for k in (a or b or {}) if (a or {}).get(k) != (b or {}).get(k))
        rows.append({"workload": name, "changed": changed, "base": a, "variant": b})
    return rows


def committed_pools(*scenarios: Scenario) -> list[tuple[str, str]]:
    """Every offer and mode a commitment of these scenarios holds, in order of first mention."""
    seen: dict[tuple[str, str], None] = {}
    for s in scenarios:
        for c in s.spec.commitments:
            seen.setdefault((c.offer, c.mode), None)
    return list(seen)


@dataclass(frozen=True)
class BreakEven:
    """The highest price per unit of `mode` (per package, or per unit-hour) at which an added
    commitment still pays: where the variant's total, with only the commitment's price
    changed, equals the base's. Exact when both sides are optimal, else [low, high]."""

    offer: str
    mode: str
    price: Fraction  # the price the variant pays per unit of the mode
    quantity: Fraction  # packages × units (or unit-hours) the commitment adds
    low: Fraction
    high: Fraction
    # money the variant's plan spends on the same offer and mode beyond its commitments:
    # held at the variant's price in this reckoning (a rerun at another price moves it too)
    others: Fraction = Fraction(0)

    @property
    def exact(self) -> bool:
        return self.low == self.high

    @property
    def never_pays(self) -> bool:
        """Below 0 even at its highest: free, the commitment still costs more than it saves."""
        return self.high < 0


def added_pools(reference: Scenario, variant: Scenario) -> list[tuple[str, str]]:
    """The offers and modes whose commitments differ between `reference` and `variant`: what
    a break-even prices (each of the variant's committed pools, in order)."""

    def held(s: Scenario, pool: tuple[str, str]) -> list[Any]:
        return [c for c in s.spec.commitments if (c.offer, c.mode) == pool]

    return [p for p in committed_pools(variant) if held(reference, p) != held(variant, p)]


def mode_money(plan: Plan, offer: str, mode: str, committed: bool = True) -> Decimal:
    """What `plan`'s rentals of `offer`'s `mode` cost: its committed ones, or (`committed`
    False) those beyond its commitments."""
    return sum(
        (
            r.cost
            for r in plan.rentals
            if r.committed == committed and r.offer == offer and r.mode == mode
        ),
        Decimal(0),
    )


def break_even(
    base: Side, variant: Side, offer: str, mode: str, price: Fraction
) -> BreakEven | None:
    """The break-even price of what the variant commits beyond the base on `offer`'s `mode`
    (`base`: the scenario without that commitment, and with the change's every other part,
    so that the difference is the commitment's alone).

    The commitment's cost C = q × price is a constant of the variant (it is paid whatever
    the plan), so the variant's optimum at another price p is V* − C + q × p, and the
    commitment pays while that is at most the base's optimum B*: p ≤ (B* − V* + C) ÷ q."""
    if base.plan is None or variant.plan is None or base.total is None or variant.total is None:
        return None
    added = mode_money(variant.plan, offer, mode) - mode_money(base.plan, offer, mode)
    if added <= 0 or price <= 0:
        return None
    cost = Fraction(added)
    quantity = cost / price
    base_low = base.total if base.optimal else base.bound or Fraction(0)
    variant_low = variant.total if variant.optimal else variant.bound or Fraction(0)
    low = (base_low - variant.total + cost) / quantity
    high = (base.total - variant_low + cost) / quantity
    others = Fraction(mode_money(variant.plan, offer, mode, committed=False))
    # not clamped at 0: below it, the commitment pays at no price (`never_pays`)
    return BreakEven(offer, mode, price, quantity, low, high, others)
