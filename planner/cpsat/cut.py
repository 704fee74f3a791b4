"""The cut of a model a neighbourhood is solved on (planner.cpsat.lns): every variable the
freed decisions do not reach through the constraints (other than through a pinned
decision, a cumulative or a redundant cut) is fixed at the incumbent's value, and only the
constraints the reached ones appear in are kept; what is dropped holds at the incumbent,
so every solution of the cut is a plan of the full model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ortools.sat.python import cp_model


def _var(ref: int) -> int:
    return ref if ref >= 0 else -ref - 1


def _expr_vars(expr: Any) -> list[int]:
    return list(expr.vars)


class Cut:
    """The constraints of a model by variable, to solve a neighbourhood on the part of the
    model its freed decisions reach."""

    def __init__(self, proto: Any, fixed: frozenset[int], redundant: int = 0) -> None:
        self.proto = proto
        self.fixed = fixed  # decisions: pinned at the incumbent unless freed
        self.uses: list[list[int]] = []  # per constraint, its variables
        self.intervals: list[list[int]] = []  # per constraint, the intervals it names
        constraints = proto.constraints
        # the last `redundant` constraints are cuts (planner.cpsat.cuts) every plan meets:
        # never kept, as each ties a config to its pool's use at every hour of the quarter
        last = len(constraints) - redundant
        for index, c in enumerate(constraints):
            uses = [_var(x) for x in c.enforcement_literal]
            named: list[int] = []
            if index >= last:
                uses = []
            elif c.has_linear():
                uses += c.linear.vars
            elif c.has_interval():
                uses += _interval_vars(c)
            elif c.has_cumulative():
                uses += _expr_vars(c.cumulative.capacity)
                for demand in c.cumulative.demands:
                    uses += _expr_vars(demand)
                named = list(c.cumulative.intervals)
                for i in named:
                    uses += [_var(x) for x in constraints[i].enforcement_literal]
                    uses += _interval_vars(constraints[i])
            else:  # the model writes only these three kinds
                raise ValueError(f"constraint kind not cut: {c}")
            self.uses.append(uses)
            self.intervals.append(named)
        self.at: list[list[int]] = [[] for _ in proto.variables]
        for i, uses in enumerate(self.uses):
            for x in uses:
                self.at[x].append(i)
        self._base: tuple[Sequence[int], Any] | None = None

    def reach(self, free: Iterable[int]) -> tuple[set[int], list[int]]:
        """The variables `free` reaches through constraints without passing a pinned
        decision, and the constraints those appear in (with the intervals they name)."""
        reached = set(free)
        todo = list(reached)
        kept: set[int] = set()
        while todo:
            for i in self.at[todo.pop()]:
                if i in kept:
                    continue
                kept.add(i)
                if self.intervals[i]:
                    continue  # a cumulative is kept, but what it names is not freed by it
                for x in self.uses[i]:
                    if x not in reached and x not in self.fixed:
                        reached.add(x)
                        todo.append(x)
        for i in list(kept):
            kept.update(self.intervals[i])
        return reached, sorted(kept)

    def model(self, values: Sequence[int], free: Iterable[int]) -> cp_model.CpModel:
        """The model with every variable `free` does not reach fixed at `values` (a complete
        solution of the model), keeping only the constraints of those it reaches; hinted
        with `values`."""
        reached, kept = self.reach(free)
        sub = cp_model.CpModel()
        proto = sub.proto
        proto.copy_from(self._fixed_at(values))
        variables = proto.variables
        for x in reached:
            domain = variables[x].domain
            domain.clear()
            domain.extend(list(self.proto.variables[x].domain))
        constraints = self.proto.constraints
        proto.constraints.extend([constraints[i] for i in kept])
        renumbered = {i: n for n, i in enumerate(kept)}
        for n, i in enumerate(kept):
            if self.intervals[i]:
                named = proto.constraints[n].cumulative.intervals
                numbers = [renumbered[k] for k in named]
                named.clear()
                named.extend(numbers)
        reached_sorted = sorted(reached)
        proto.solution_hint.vars.extend(reached_sorted)
        proto.solution_hint.values.extend([values[x] for x in reached_sorted])
        return sub

    def _fixed_at(self, values: Sequence[int]) -> Any:
        """The model's variables fixed at `values`, its objective, no constraint: built
        once, then only the variables whose values changed are set again."""
        if self._base is None:
            base = cp_model.CpModel().proto
            base.copy_from(self.proto)
            base.constraints.clear()
            base.clear_solution_hint()
            changed: Iterable[int] = range(len(values))
        else:
            before, base = self._base
            if before == values:
                return base
            changed = [x for x, (a, b) in enumerate(zip(before, values, strict=True)) if a != b]
        variables = base.variables
        for x in changed:
            domain = variables[x].domain
            domain.clear()
            domain.extend([values[x], values[x]])
        self._base = (values, base)
        return base


def _interval_vars(c: Any) -> list[int]:
    i = c.interval
    return _expr_vars(i.start) + _expr_vars(i.end) + _expr_vars(i.size)
