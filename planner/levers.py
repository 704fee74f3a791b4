"""What a costly decision rests on, and what stating it would change.

A purchase that some train jobs force (planner.forced), or a workload that takes a tenth
of the bill or more, is priced on what the scenario says, or does not say, about the other
offers: whether nodes have a network between them, the memory estimate, cards per node.
Each such figure is set in turn to its optimistic value (a *lever*) and the workload is
quoted alone (planner.quote; a serve or reserve workload carrying its whole curve alone).
Where it would then run elsewhere for less, the plan says what is assumed, what was tried,
where the workload would run and for how much, and whom to ask. A quote is one workload
alone: the saving is that workload's, exact for it, not a re-planned quarter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from planner.domain.catalog import Network, Offer
from planner.domain.plan import Plan
from planner.domain.scenario import Scenario
from planner.problem import quote_replicas
from planner.quote import train_quotes
from planner.views import UNUSED, attribution

# A network between nodes as published multi-node runs have it: 8 × 400 Gb/s per node.
OPTIMISTIC_NETWORK_GBPS = 3200.0
# Cards per node where an offer's figure is assumed below it: an 8-GPU server.
OPTIMISTIC_NODE_CARDS = 8
# A workload whose cost (planner.views.attribution) is at least this share of the plan is
# weighed too.
COSTLY_SHARE = Fraction(1, 10)


@dataclass(frozen=True)
class Lever:
    """One assumed figure set to its optimistic value: the variant scenario, what it states,
    and whom to ask."""

    name: str  # network | cards per node | memory
    tried: str
    ask: str
    variant: Scenario
    # what the base assumes, in words, of a workload and the offer it would move to; None
    # where the lever did not change that offer (a cheaper option there is not its doing)
    assumed: Callable[[str, Offer], str | None]


@dataclass(frozen=True)
class Option:
    """Where a workload alone runs cheapest: its config and exact cost."""

    cards: int
    card: str
    offer: str
    mode: str
    cost: Fraction


@dataclass(frozen=True)
class Lifted:
    """A lever that moves a costly workload: what it pays now, why, and what it would pay."""

    workload: str
    purchase: tuple[str, str] | None  # the forced (offer, mode), or None: a costly line
    now: Fraction  # the purchase's price, or the workload's cheapest quote alone
    lever: str
    assumed: str  # what the base scenario assumes, in words
    tried: str
    ask: str
    option: Option


def _with_offers(scenario: Scenario, change: Callable[[Offer], Offer]) -> Scenario:
    """`scenario` with every offer of every catalog changed (built anew: its cached views
    of offers must not carry over)."""
    catalogs = tuple(
        c.model_copy(update={"offers": [change(o) for o in c.offers]}) for c in scenario.catalogs
    )
    return Scenario(
        path=scenario.path,
        spec=scenario.spec,
        catalogs=catalogs,
        cards=scenario.cards,
        models=scenario.models,
        calibrations=scenario.calibrations,
    )


def levers(scenario: Scenario) -> list[Lever]:
    """The optimistic variants worth trying on this scenario."""
    out = []
    fast = Network(kind="stated", gbps=OPTIMISTIC_NETWORK_GBPS)

    def bare(o: Offer) -> bool:
        return o.network is None or (o.network.assumed and o.network.gbps < fast.gbps)

    def no_network(_name: str, o: Offer) -> str | None:
        if not bare(o):
            return None
        if o.network is None:
            return f"{o.id} states no network between its {o.node_cards}-card nodes"
        return f"{o.id}'s network between nodes is assumed at {o.network.gbps:g} Gb/s"

    if any(bare(o) for o in scenario.offers.values()):
        out.append(
            Lever(
                "network",
                f"a {OPTIMISTIC_NETWORK_GBPS:,.0f} Gb/s network between nodes",
                "ask the provider",
                _with_offers(
                    scenario, lambda o: o.model_copy(update={"network": fast}) if bare(o) else o
                ),
                no_network,
            )
        )

    def node(o: Offer) -> int:
        """The most cards per node up to OPTIMISTIC_NODE_CARDS that its units make up."""
        return OPTIMISTIC_NODE_CARDS // o.unit_cards * o.unit_cards

    def small(o: Offer) -> bool:
        return "cards_per_node" in o.assumed and o.node_cards < node(o)

    if any(small(o) for o in scenario.offers.values()):
        out.append(
            Lever(
                "cards per node",
                f"up to {OPTIMISTIC_NODE_CARDS} cards per node",
                "ask the provider",
                _with_offers(
                    scenario,
                    lambda o: o.model_copy(update={"cards_per_node": node(o)}) if small(o) else o,
                ),
                lambda _name, o: (
                    f"{o.id} is assumed to have {o.node_cards} cards per node" if small(o) else None
                ),
            )
        )
    margin = scenario.spec.memory_margin
    if margin != "-band":
        spec = scenario.spec.model_copy(update={"memory_margin": "-band"})
        planned = "as estimated" if margin == 0 else f"with a memory margin of {margin}"
        out.append(
            Lever(
                "memory",
                "the memory estimate at the low end of its measured band (--memory-margin -band)",
                "measure it first (plan probe memory)",
                scenario.model_copy(update={"spec": spec}),
                lambda name, _o: f"{name}'s memory estimate is planned {planned}",
            )
        )
    return out


def cheapest(scenario: Scenario, workload: str, avoid: tuple[str, str] | None) -> Option | None:
    """The workload alone at its cheapest within stock (the quotes' own rule), off the pool
    `avoid` and off committed units (paid already, and perhaps busy with other work); None
    if nothing runs it."""
    if scenario.workload(workload).kind == "train":
        for q in train_quotes(scenario, workload):
            c = q.config
            if (c.offer, c.mode) != avoid and not q.committed:
                return Option(c.cards, c.card, c.offer, c.mode, q.cost)
        return None
    rows = sorted(
        (
            r
            for r in quote_replicas(scenario, workload)
            if (r["offer"], r["mode"]) != avoid and r["within_stock"]
        ),
        key=lambda r: (r["exact_cost"], r["cards"], r["offer"], r["mode"]),
    )
    if not rows:
        return None
    r = rows[0]
    return Option(r["cards"], r["card"], r["offer"], r["mode"], r["exact_cost"])


def lifted(scenario: Scenario, plan: Plan) -> list[Lifted]:
    """For each forced purchase and each workload costing a tenth of the plan or more (as every
    view states its cost), every lever under which that workload alone would cost less than
    it does now."""
    # (workload, the forced pool or None, what it pays now, its cheapest option off that
    # pool in the base scenario)
    subjects: list[tuple[str, tuple[str, str] | None, Fraction, Option | None]] = []
    forced = set()
    for f in plan.forced:
        forced.update(f.workloads)
        if len(f.workloads) == 1:  # several forcers: one moving leaves the purchase to the rest
            pool = (f.offer, f.mode)
            name = f.workloads[0]
            subjects.append((name, pool, Fraction(f.cost), cheapest(scenario, name, pool)))
    total = Fraction(plan.total_cost)
    for name, cost in attribution(plan).items():
        if name not in forced and name != UNUSED and total and cost >= COSTLY_SHARE * total:
            alone = cheapest(scenario, name, None)
            if alone is not None:
                subjects.append((name, None, alone.cost, alone))
    found = []
    for lever in levers(scenario) if subjects else []:
        for name, purchase, now, before in subjects:
            option = cheapest(lever.variant, name, purchase)
            if option is None or option.cost >= now:
                continue
            if before is not None and option.cost >= before.cost:
                continue  # the lever changes nothing the base scenario could not do
            assumed = lever.assumed(name, scenario.offers[option.offer])
            if assumed is None:
                continue  # cheaper on an offer the lever did not change: not this lever's
            found.append(
                Lifted(name, purchase, now, lever.name, assumed, lever.tried, lever.ask, option)
            )
    return found
