"""A plan: what to rent, which workload runs where and when, what it costs. JSON-shaped."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planner.domain.costs import PAID, REPORTED, CostTerm


class _PlanModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Rental(_PlanModel):
    """One order: units of an offer on a billing mode from `start` to `end`."""

    id: str
    offer: str
    card: str
    mode: str
    units: int
    cards: int
    start: dt.datetime
    end: dt.datetime
    billed_hours: Decimal  # per unit (packages: their full length)
    cost: Decimal
    committed: bool = False
    workload: str | None = None  # the workload an hourly/spot rental was started for


class Run(_PlanModel):
    start: dt.datetime
    end: dt.datetime


class NextBest(_PlanModel):
    """The cheapest other config of a train workload that costs at least what it spends,
    priced alone: what choosing otherwise would add (never negative)."""

    config: str
    cost: Decimal
    extra_cost: Decimal


class CheaperAlone(_PlanModel):
    """A config cheaper on its own than the one chosen, and why the plan does not use it."""

    config: str
    cost: Decimal
    saving: Decimal  # alone, against what the chosen config spends
    reason: str


class Assignment(_PlanModel):
    """Where and when one workload runs."""

    workload: str
    kind: Literal["train"] = "train"
    card: str
    cards: int
    offer: str
    mode: str
    held: bool  # on held cards (packages, commitments) rather than its own rentals
    start: dt.datetime
    end: dt.datetime
    runs: list[Run]
    hours: int  # occupied hours, all runs
    compute_hours: float  # on its cards, spot rework included
    setup_hours: float
    cost: Decimal  # its own rentals and storage (held cards are costed as rentals)
    storage: Decimal = Decimal(0)  # its disks (in `cost`)
    package_share: Decimal | None = None  # held card-hours used × the package's card-hour price
    rentals: list[str] = []
    next_best: NextBest | None = None
    cheaper_alone: CheaperAlone | None = None


class ReplicaUse(_PlanModel):
    """Replicas of one config running from `start` to `end` (a constant count)."""

    card: str
    cards: int  # per replica
    offer: str
    mode: str
    held: bool  # on package cards
    precision: str
    capacity: int  # requests (serve) or cards (reserve) one replica carries
    start: dt.datetime
    end: dt.datetime
    replicas: int


class ReplicaAssignment(_PlanModel):
    """How a serve or reserve workload is carried, hour by hour."""

    workload: str
    kind: Literal["serve", "reserve"]
    uses: list[ReplicaUse]
    peak_replicas: int
    mean_replicas: float
    configs: list[str]
    cost: Decimal  # its own hourly rentals and storage
    storage: Decimal = Decimal(0)  # its disks (in `cost`)
    package_share: Decimal | None = None  # held card-hours used × the package card-hour price
    rentals: list[str] = []


class Quantity(_PlanModel):
    """A reported-only term: how much (in its unit, see `REPORTED_UNIT`) and, for round-up
    and idle, what it cost."""

    amount: Decimal  # unit-hours or card-hours, rounded half-even to 0.01
    cost: Decimal | None = None


class CostBreakdown(_PlanModel):
    """Money by paid term, what money bought but did not use, and spend by month (cash:
    a rental is booked in the month it starts). Every term must be present. The paid terms,
    the months, and the workloads' spend by use with `held_unused` each add up to `total`."""

    total: Decimal
    paid: dict[CostTerm, Decimal]
    reported: dict[CostTerm, Quantity]
    by_month: dict[str, Decimal]
    # held cards' money (packages, committed rentals) that no workload's package share
    # covers: their idle card-hours and those past the horizon end
    held_unused: Decimal = Decimal(0)

    @model_validator(mode="after")
    def _every_term(self) -> CostBreakdown:
        missing = [t.value for t in PAID if t not in self.paid]
        missing += [t.value for t in REPORTED if t not in self.reported]
        if missing:
            raise ValueError(f"cost terms missing: {', '.join(missing)}")
        extra = [t.value for t in self.paid if t not in PAID]
        extra += [t.value for t in self.reported if t not in REPORTED]
        if extra:
            raise ValueError(f"not terms of their section: {', '.join(extra)}")
        return self


class DayUse(_PlanModel):
    date: str
    held_card_hours: int
    used_card_hours: int


class CardUse(_PlanModel):
    """Card-hours held and used inside the horizon, for one card type."""

    held_card_hours: int
    used_card_hours: int
    utilisation: float
    daily: list[DayUse]


class SolverInfo(_PlanModel):
    workers: int
    seed: int
    time_limit: float
    deterministic: bool
    ties_settled: bool = False  # optimal and every tie level proven (rule 12)
    variables: int
    constraints: int


AnyAssignment = Annotated[Assignment | ReplicaAssignment, Field(discriminator="kind")]


def by_use(a: Assignment | ReplicaAssignment) -> Decimal:
    """What a workload spends by use: its own rentals and storage, and its share of the
    package cards it runs on."""
    return a.cost + (a.package_share or 0)


class WorkloadMargin(_PlanModel):
    """What the plan would save without one workload: at least `at_least` (a checked plan
    found without it costs that much less) and at most `at_most` (the lower bound without
    it is that much less)."""

    workload: str
    at_least: Decimal
    at_most: Decimal


class RestsOn(_PlanModel):
    """An assumed figure a forced purchase or a costly workload rests on: stated at its
    optimistic value, the workload alone would run on `cards` × `card` of `offer` `mode`
    for `cost` instead of `now` (the purchase's price, or its cheapest quote alone)."""

    workload: str
    purchase: str | None  # "offer mode" of the forced purchase, or None: a costly line
    now: Decimal
    lever: str  # network | cards per node | memory
    assumed: str  # what the scenario assumes, in words
    stated: str  # the optimistic value tried
    ask: str
    cards: int
    card: str
    offer: str
    mode: str
    cost: Decimal
    saving: Decimal


class ForcedPurchase(_PlanModel):
    """Packages some train jobs force: they run on no other pool, and together need at least
    `packages` unit-packages of it (proven by an exact solve of those jobs alone, or at
    least that many where `exact` is false)."""

    offer: str
    mode: str
    packages: int
    cost: Decimal  # the packages' price
    workloads: list[str]
    exact: bool = True


class Plan(_PlanModel):
    scenario: str
    status: Literal["optimal", "feasible", "infeasible", "unknown"]
    currency: str
    total_cost: Decimal
    naive_cost: Decimal | None = None
    heuristic_cost: Decimal | None = None
    baseline_notes: dict[str, str] = {}  # why a baseline has no plan
    # where the model contradicted the checker or a checked plan: what, in one line; the
    # plan is then the cheapest checked one, never called optimal, with no bound or gap
    inconsistency: str | None = None
    # what the checker could not decide either way (machine placement past its step budget)
    unverified: list[str] = []
    forced: list[ForcedPurchase] = []  # purchases that some workloads alone make necessary
    # what forced purchases and costly workloads rest on, and what stating it would save
    rests_on: list[RestsOn] = []
    # each workload's cost as every view states it: its own lines and the held cards' money
    # charged by cause (planner.views.spend_by_workload); adds up to total_cost
    attribution: dict[str, Decimal] = {}
    margins: list[WorkloadMargin] = []  # `plan solve --margins`: each workload's margin
    # the --memory-margin and --speed-margin the plan was made with, as given (`plan check`
    # and `plan simulate` apply the same)
    memory_margin: str | None = None
    speed_margin: str | None = None
    gap: float | None = None
    bound: Decimal | None = None
    # no plan that buys no package (daily, weekly or monthly) but on the pools every plan
    # buys from (`forced`, committed) costs less; absent where no other package is an
    # option, a workload runs only on them, or it says no more than `bound`
    bound_without_packages: Decimal | None = None
    solve_seconds: float = 0.0
    rentals: list[Rental]
    assignments: list[AnyAssignment]
    cost_breakdown: CostBreakdown | None = None
    utilisation: dict[str, CardUse] = {}
    decisions: list[str] = []
    assumptions: list[str] = []  # assumed and low-confidence figures the plan rests on

    @property
    def train(self) -> list[Assignment]:
        return [a for a in self.assignments if isinstance(a, Assignment)]

    @property
    def replica(self) -> list[ReplicaAssignment]:
        return [a for a in self.assignments if isinstance(a, ReplicaAssignment)]

    solver: SolverInfo | None = None
