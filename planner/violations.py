"""What a check finds: each broken rule as an amount, and the recomputed money."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any


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
    breakdown: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, rule: str, subject: str, amount: float, unit: str, message: str) -> None:
        self.violations.append(Violation(rule, subject, amount, unit, message))
