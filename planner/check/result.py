"""What a check finds: each broken rule as an amount, and the money recomputed."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from planner.domain.costs import CostTerm
from planner.domain.money import from_minor, to_minor
from planner.domain.plan import CostBreakdown


def no_offer(offer: str) -> str:
    """The message for a plan line naming an offer the scenario does not have (`plan
    reprice` tells a change that removed it by this message)."""
    return f"there is no offer {offer} in the scenario's catalogs"


@dataclass(frozen=True)
class Violation:
    """One broken rule: which, about what, by how much."""

    rule: str  # e.g. stock, deadline, dependency, memory, cost
    subject: str
    amount: float
    unit: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.subject}: {self.message}"


@dataclass
class CheckResult:
    violations: list[Violation] = field(default_factory=list)
    total: Fraction = Fraction(0)  # exact money recomputed from the plan
    breakdown: CostBreakdown | None = None  # recomputed; None when the plan cannot be priced
    money: dict[CostTerm, Fraction] = field(default_factory=dict)  # exact, per paid term
    amounts: dict[CostTerm, Fraction] = field(default_factory=dict)  # exact, per reported term
    # per pool (offer, mode): work that fits its cards but not its machines (check.machines)
    conflicts: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    # what the checker could not decide either way (a search past its step budget): said
    # beside the plan, never a violation
    undecided: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, rule: str, subject: str, amount: float, unit: str, message: str) -> None:
        self.violations.append(Violation(rule, subject, amount, unit, message))


def rounded(exact: Fraction, currency: str) -> Decimal:
    """An exact amount rounded once, half-even, to the currency's minor unit."""
    return from_minor(to_minor(exact, currency), currency)


def cost_line(
    result: CheckResult, subject: str, stated: Decimal | None, exact: Fraction, currency: str
) -> None:
    """A stated money line must equal the exact recomputation rounded once."""
    stated_line(result, subject, stated, rounded(exact, currency), currency)


def stated_line(
    result: CheckResult,
    subject: str,
    stated: Decimal | None,
    expected: Decimal | None,
    currency: str,
) -> None:
    """A stated money line must equal the recomputed figure (None: no figure is due)."""
    if stated != expected:
        off = (
            "missing"
            if stated is None
            else "none is due"
            if expected is None
            else f"off by {stated - expected}"
        )
        result.add(
            "cost",
            subject,
            float((stated or Decimal(0)) - (expected or Decimal(0))),
            currency,
            f"states {stated}, recomputed {expected} ({off})",
        )
