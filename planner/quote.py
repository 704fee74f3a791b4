"""A train workload alone: every feasible config with its span, billing and exact cost
(`plan quote`, and what a forced purchase is weighed against in planner.levers)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from planner.configs import Config
from planner.domain.scenario import Scenario
from planner.domain.values import PACKAGE_DAYS
from planner.prices import unit_price
from planner.problem import Job, quote_job
from planner.rules import PACKAGE_MODES, packages_until


@dataclass(frozen=True)
class Quote:
    """One config of a workload alone: billed hours (hourly, spot) or packages bought back
    to back (package modes), or neither (committed units), and its exact cost."""

    config: Config
    cost: Fraction
    billed_hours: Decimal | None
    packages: int | None
    committed: bool = False

    def rank(self) -> tuple[Fraction, int, int, str, str]:
        """Cheapest first; then fewer cards, a shorter span, offer id, mode."""
        c = self.config
        return self.cost, c.cards, c.span, c.offer, c.mode


def train_quotes(scenario: Scenario, name: str) -> list[Quote]:
    """Every feasible config of train workload `name` on its own, cheapest first: within its
    window and within stock (units at once up to the mode's stock and the offer's
    `max_units`)."""
    job = quote_job(scenario, name)
    quotes = []
    for c in job.configs:
        if not scenario.offers[c.offer].sells(c.mode, c.units):
            continue  # more units at once than the offer sells on this mode
        if c.held and c.mode in PACKAGE_MODES:
            packages = _packages(scenario, job, c)
            quotes.append(Quote(c, package_alone(scenario, job, c), None, packages))
        elif c.held:  # committed hourly units: paid as the commitment, whatever runs there
            quotes.append(Quote(c, c.storage_cost, None, None, committed=True))
        else:
            quotes.append(Quote(c, c.cost, c.billed_hours, None))
    return sorted(quotes, key=Quote.rank)


def package_alone(scenario: Scenario, job: Job, c: Config) -> Fraction:
    """A package config's cost alone: its packages bought back to back for this workload
    (`_packages`) and its storage."""
    price = unit_price(scenario.offers[c.offer], c.mode) * c.units * _packages(scenario, job, c)
    return price + c.storage_cost


def _packages(scenario: Scenario, job: Job, c: Config) -> int:
    """Packages bought back to back from 00:00 of the first day it may start that hold the
    config's whole span (real hours: a local day across a daylight-saving change is 23 or
    25 h)."""
    axis = scenario.axis
    day = axis.day_of(job.start_range(c)[0])
    return packages_until(axis, day, PACKAGE_DAYS[c.mode], axis.day_start(day) + c.span)
