"""A computation beside the caller (planner.parallel.Beside): the same value in a forked
process as in this one, its errors raised in the caller, and a process that dies without an
answer computed again here."""

from __future__ import annotations

import os
import signal
from fractions import Fraction
from multiprocessing import get_all_start_methods
from pathlib import Path

import pytest

from planner.parallel import Beside

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FORK = "fork" in get_all_start_methods()


def _answer() -> dict[str, Fraction]:
    return {"bound": Fraction(405134, 3), "pid": Fraction(os.getpid())}


@pytest.mark.parametrize("cores", [1, 2])
def test_the_value_is_the_same_beside_or_here(cores: int) -> None:
    if cores > 1 and not FORK:
        pytest.skip("no fork on this platform: computed here either way")
    found = Beside(_answer, cores).result()
    assert found["bound"] == Fraction(405134, 3)
    # on one core it ran here; on two, in another process
    assert (found["pid"] == os.getpid()) == (cores == 1)


@pytest.mark.parametrize("cores", [1, 2])
def test_an_error_is_raised_in_the_caller(cores: int) -> None:
    def fails() -> int:
        raise ValueError("no bound for this scenario")

    if cores == 1:  # computed at once: the error is raised where it is asked for
        with pytest.raises(ValueError, match="no bound"):
            Beside(fails, cores).result()
        return
    pending = Beside(fails, cores)
    with pytest.raises(ValueError, match="no bound"):
        pending.result()


@pytest.mark.skipif(not FORK, reason="needs fork")
def test_a_process_killed_without_an_answer_is_computed_here() -> None:
    def answer_unless_beside(parent: int = os.getpid()) -> int:
        if os.getpid() != parent:  # beside: die before answering
            os.kill(os.getpid(), signal.SIGKILL)
        return 42

    assert Beside(answer_unless_beside, 2).result() == 42


@pytest.mark.skipif(not FORK, reason="needs fork")
def test_the_caller_shares_its_data_without_pickling_it() -> None:
    # a closure over a lambda cannot be pickled; forked, it need not be
    unpicklable = {"price": lambda: Fraction(1394, 100)}
    assert Beside(lambda: unpicklable["price"]() * 720, 2).result() == Fraction(100368, 10)


@pytest.mark.skipif(not FORK, reason="needs fork")
def test_a_solve_gives_the_same_plan_and_bound_with_the_bound_priced_beside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the bound is priced in a forked process on a machine of two cores or more, here
    # otherwise: the plan, its bound and its gap do not depend on which
    import planner.solve as solving
    from planner.domain.load import load_scenario

    scenario = load_scenario(SCENARIOS / "seed-70b-serving.yaml")
    params = solving.SolveParams(time_limit=10, workers=2, seed=0, deterministic=True)
    plans = []
    for cores in (1, 2):
        monkeypatch.setattr(solving, "physical_cores", lambda cores=cores: cores)
        monkeypatch.setattr(solving, "BESIDE_WORKLOADS", 0)  # a quarter of one workload too
        result = solving.solve(scenario, params)
        assert result.plan is not None and result.plan.bound is not None
        plans.append(result.plan.model_dump(exclude={"solve_seconds", "solver"}))
    assert plans[0] == plans[1]
