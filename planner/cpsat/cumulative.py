"""One capacity over time: moving intervals (train runs) and a fixed profile (replicas,
setup hours, blockers, packages, commitments) in a single cumulative constraint.

The fixed parts are summed over the elementary slices between their ends, so that no two
fixed intervals of the cumulative overlap. The sum is exact and the model the same, and it
keeps clear of a CP-SAT presolve bug (9.14-9.15): with two nested fixed intervals of
variable demand, one of them at the capacity, a feasible model was proven infeasible
(tests/test_cumulative.py holds the three-line case).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ortools.sat.python import cp_model


@dataclass
class Load:
    """What holds one capacity: add parts, then `constrain(model, capacity)`."""

    name: str
    moving: list[tuple[cp_model.IntervalVar, int]] = field(default_factory=list)
    # (start, end, demand, its largest value)
    fixed: list[tuple[int, int, cp_model.LinearExprT, int]] = field(default_factory=list)

    def add_moving(self, interval: cp_model.IntervalVar, demand: int) -> None:
        self.moving.append((interval, demand))

    def add_fixed(self, start: int, end: int, demand: cp_model.LinearExprT, most: int) -> None:
        if end > start and most > 0:
            self.fixed.append((start, end, demand, most))

    def __bool__(self) -> bool:
        return bool(self.moving or self.fixed)

    def constrain(
        self,
        model: cp_model.CpModel,
        capacity: int,
        sums: list[tuple[cp_model.IntVar, cp_model.LinearExpr]],
    ) -> None:
        """Σ demands of what covers each hour ≤ capacity, as one cumulative; each slice
        variable made to hold a sum is appended to `sums` (with the sum, for hints)."""
        intervals = [i for i, _ in self.moving]
        demands: list[cp_model.LinearExprT] = [d for _, d in self.moving]
        for a, b, demand in self._slices(model, sums):
            intervals.append(model.new_fixed_size_interval_var(a, b - a, ""))
            demands.append(demand)
        if intervals:
            model.add_cumulative(intervals, demands, capacity)

    def _slices(
        self,
        model: cp_model.CpModel,
        sums: list[tuple[cp_model.IntVar, cp_model.LinearExpr]],
    ) -> list[tuple[int, int, cp_model.LinearExprT]]:
        """The fixed parts summed between consecutive ends: disjoint slices, each with one
        variable (or constant) demand."""
        points = sorted({p for a, b, _, _ in self.fixed for p in (a, b)})
        starting: dict[int, list[int]] = {}
        for k, (a, _, _, _) in enumerate(self.fixed):
            starting.setdefault(a, []).append(k)
        active: set[int] = set()
        slices = []
        for p, q in itertools.pairwise(points):
            active = {k for k in active if self.fixed[k][1] > p} | set(starting.get(p, ()))
            if not active:
                continue
            parts = sorted(active)
            if len(parts) == 1:
                demand = self.fixed[parts[0]][2]
            else:
                most = sum(self.fixed[k][3] for k in parts)
                total = cp_model.LinearExpr.sum([self.fixed[k][2] for k in parts])
                demand = model.new_int_var(0, most, f"load[{self.name},{p}]")
                model.add(demand == total)
                sums.append((demand, total))
            slices.append((p, q, demand))
        return slices
