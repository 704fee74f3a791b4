"""The checker's hour-by-hour ledger: units held per offer and mode, cards held and used per
pool of held cards (packages and committed rentals), and the money of each cost term."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction

from planner.domain.costs import CostTerm
from planner.domain.plan import Assignment, ReplicaAssignment

Key = tuple[str, str]  # (offer id, billing mode)
Line = tuple[str, str]  # ("rental", id) or ("storage", workload)


@dataclass(frozen=True)
class Spent:
    """A workload's assignment as read, the rentals its cost counts, its package share."""

    assignment: Assignment | ReplicaAssignment
    rentals: list[str]
    share: Fraction | None


@dataclass
class Ledger:
    held_units: dict[Key, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    pool_cards: dict[Key, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    used_cards: dict[Key, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    money: dict[CostTerm, Fraction] = field(default_factory=lambda: defaultdict(Fraction))
    amount: dict[CostTerm, Fraction] = field(default_factory=lambda: defaultdict(Fraction))
    # the plan's money lines: a rental ("rental", id) or a workload's storage ("storage",
    # name), each with its term, the month it is booked in and its exact money
    lines: dict[Line, tuple[CostTerm, str, Fraction]] = field(default_factory=dict)
    # what each workload spends by use: the rentals its cost counts, and its exact package
    # share (None where it states none and holds no cards)
    spent: dict[str, Spent] = field(default_factory=dict)
    # held card-hours no workload uses (idle, and past the horizon) at the card-hour price
    unused: Fraction = Fraction(0)

    def hold(self, key: Key, start: int, end: int, units: int) -> None:
        line = self.held_units[key]
        for h in range(start, end):
            line[h] = line.get(h, 0) + units

    def pool(self, key: Key, start: int, end: int, cards: int) -> None:
        line = self.pool_cards[key]
        for h in range(start, end):
            line[h] = line.get(h, 0) + cards

    def use(self, key: Key, start: int, end: int, cards: int) -> None:
        line = self.used_cards[key]
        for h in range(start, end):
            line[h] = line.get(h, 0) + cards

    def pay(self, line: Line, term: CostTerm, money: Fraction, month: str) -> None:
        self.money[term] += money
        self.lines[line] = (term, month, money)

    def report(self, term: CostTerm, amount: Fraction, money: Fraction = Fraction(0)) -> None:
        self.amount[term] += amount
        self.money[term] += money


def worst(line: dict[int, int]) -> tuple[int, int]:
    """(hour, value) of a line's highest value; the earliest hour on ties."""
    if not line:
        return 0, 0
    hour = min(line, key=lambda h: (-line[h], h))
    return hour, line[hour]
