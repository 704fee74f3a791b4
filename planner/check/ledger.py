"""The checker's hour-by-hour ledger: units held per offer and mode, cards held and used per
pool of held cards (packages and committed rentals), and the money of each cost term."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction

from planner.domain.costs import CostTerm

Key = tuple[str, str]  # (offer id, billing mode)


@dataclass
class Ledger:
    held_units: dict[Key, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    pool_cards: dict[Key, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    used_cards: dict[Key, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    money: dict[CostTerm, Fraction] = field(default_factory=lambda: defaultdict(Fraction))
    amount: dict[CostTerm, Fraction] = field(default_factory=lambda: defaultdict(Fraction))
    by_month: dict[str, Fraction] = field(default_factory=lambda: defaultdict(Fraction))

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

    def pay(self, term: CostTerm, money: Fraction, month: str) -> None:
        self.money[term] += money
        self.by_month[month] += money

    def report(self, term: CostTerm, amount: Fraction, money: Fraction = Fraction(0)) -> None:
        self.amount[term] += amount
        self.money[term] += money


def worst(line: dict[int, int]) -> tuple[int, int]:
    """(hour, value) of a line's highest value; the earliest hour on ties."""
    if not line:
        return 0, 0
    hour = min(line, key=lambda h: (-line[h], h))
    return hour, line[hour]
