"""The fixed profile of a capacity is summed over disjoint slices (planner/cpsat/cumulative.py):
exact, and clear of a CP-SAT presolve bug with nested fixed intervals of variable demand."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from planner.cpsat.cumulative import Load
from tests.test_planner_properties import slow


def test_nested_parts_one_at_capacity_stay_feasible() -> None:
    # A part of 0-10 h forced to the capacity (6) and a part of 9-10 h that may be 0: feasible.
    # Given to CP-SAT 9.14-9.15 as two overlapping fixed intervals, presolve proved it
    # infeasible; as slices 0-9 (d0) and 9-10 (d0 + d1) it is solved.
    model = cp_model.CpModel()
    d0, d1 = model.new_int_var(0, 6, "d0"), model.new_int_var(0, 6, "d1")
    load = Load("test")
    load.add_fixed(0, 10, d0, 6)
    load.add_fixed(9, 10, d1, 6)
    load.constrain(model, 6, [])
    model.add(d0 >= 6)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) == cp_model.OPTIMAL
    assert (solver.value(d0), solver.value(d1)) == (6, 0)


parts = st.lists(
    st.tuples(st.integers(0, 30), st.integers(1, 10), st.integers(0, 5)), min_size=1, max_size=8
)


@slow
@given(parts, st.integers(0, 12))
def test_slices_hold_exactly_what_the_parts_hold(
    spec: list[tuple[int, int, int]], capacity: int
) -> None:
    # Each part is a constant demand over [a, a + length): the model is feasible exactly when
    # the summed demand at every hour is within the capacity.
    model = cp_model.CpModel()
    load = Load("test")
    for a, length, demand in spec:
        load.add_fixed(a, a + length, model.new_constant(demand), demand)
    load.constrain(model, capacity, [])
    peak = max(sum(d for a, n, d in spec if a <= h < a + n) for h in range(0, 41))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    feasible = solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    assert feasible == (peak <= capacity)


def test_a_wrong_infeasibility_proof_gives_way_to_a_checked_baseline(
    make_scenario: Any, monkeypatch: Any
) -> None:
    # If CP-SAT ever says "infeasible" while a baseline plan passes the checker, the proof
    # is wrong: a model inconsistency; the plan shown is the baseline, never exit 2.
    from planner.cpsat.model import CpModel, Outcome
    from planner.solve import SolveParams, solve
    from tests.planning import job, offer

    def infeasible(
        self: Any, settings: Any, progress: Any = None, reference: Any = None
    ) -> Outcome:
        return Outcome("infeasible", None, None, None, 0.0, self.size())

    monkeypatch.setattr(CpModel, "solve", infeasible)
    s = make_scenario([offer("o", hourly={"price": 10})], [job("j", 3)])
    result = solve(s, SolveParams(time_limit=5, workers=1))
    assert result.status == "feasible" and result.plan is not None
    assert result.plan.total_cost == 30
    assert result.inconsistency is not None and result.plan.bound is None
    assert "CP-SAT proved the scenario infeasible" in result.inconsistency
