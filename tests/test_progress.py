"""Progress on stderr while the solver searches: a line per better plan and a heartbeat
while nothing improves (what the user sees on long solves).

Nothing here waits on the wall clock: the heartbeat runs on a fake clock, by hand, and the
solves have deterministic limits or a clock that says how much of the limit is spent."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from fractions import Fraction
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

import pytest

import planner.solve
from planner.cli import common as cli_common
from planner.cli import solve as cli_solve
from planner.cli.common import err
from planner.solve import PHASE, SolveParams, solve
from tests.planning import job, offer


def test_status_line_says_the_gap_in_plain_words() -> None:
    line = cli_solve.status_line("CNY", Fraction(120), Fraction(100))
    assert "gap 16.7%" in line and "at most CNY 20.00 could still be saved" in line
    assert cli_solve.status_line("CNY", Fraction(100), Fraction(100)).endswith("proven")


class Clock:
    """A stand-in for the `time` module: perf_counter reads `now`, moved only by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def perf_counter(self) -> float:
        return self.now


class HandRun:
    """A stand-in for the `threading` module of planner.cli.solve: the heartbeat thread is
    kept, not started, and `run_for(seconds)` lets it run while `seconds` pass on the fake
    clock: each of its waits ends `timeout` later on that clock, and a wait that would end
    past the pause is resumed there on the next run (set, the event ends the loop)."""

    Lock = threading.Lock

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.targets: list[Callable[[], None]] = []
        self.until = clock.now
        self.wake: float | None = None  # when the paused wait ends
        self.lines: list[str] = []  # what Progress printed (the fixture routes it here)

    def Thread(self, target: Callable[[], None], daemon: bool = False) -> Any:
        return SimpleNamespace(start=lambda: self.targets.append(target))

    def Event(self) -> HandEvent:
        return HandEvent(self)

    def run_for(self, seconds: float) -> None:
        (beat,) = self.targets
        self.until = self.clock.now + seconds
        beat()
        self.clock.now = self.until


class HandEvent:
    """threading.Event on the fake clock of a HandRun."""

    def __init__(self, hand: HandRun) -> None:
        self.hand, self.flag = hand, False

    def set(self) -> None:
        self.flag = True

    def wait(self, timeout: float) -> bool:
        hand = self.hand
        if self.flag:
            return True
        wake = hand.clock.now + timeout if hand.wake is None else hand.wake
        if wake > hand.until:
            hand.wake = wake  # paused mid-wait: the loop returns, and resumes here
            return True
        hand.wake, hand.clock.now = None, wake
        return False


@pytest.fixture
def hand(monkeypatch: pytest.MonkeyPatch) -> HandRun:
    """The heartbeat on a fake clock, run by hand; `hand.lines`: what Progress printed."""
    clock = Clock()
    hand = HandRun(clock)
    monkeypatch.setattr(cli_solve, "time", clock)
    monkeypatch.setattr(cli_solve, "threading", hand)
    monkeypatch.setattr(err, "print", lambda text, **_: hand.lines.append(str(text)))
    return hand


def _at(line: str) -> float:
    """The elapsed seconds a progress line starts with."""
    match = re.match(r"\s*(\d+\.\d) s ", line)
    assert match, line
    return float(match[1])


def test_a_heartbeat_comes_while_nothing_improves(hand: HandRun) -> None:
    # Whole and half seconds from 1000 s: exact in binary, so the clock never drifts.
    lines = hand.lines
    with cli_solve.Progress("CNY", "solving", every=5.0) as progress:
        progress(Fraction(500), Fraction(400), 0.0)  # a plan: one line at once
        progress(None, Fraction(450), 0.0)  # only the bound moves: no line of its own
        assert len(lines) == 2
        hand.run_for(4.5)  # quiet for less than `every`: no heartbeat yet
        assert len(lines) == 2
        hand.run_for(5.5)  # to 10 s: a heartbeat at 5 s and another at 10 s
        hand.run_for(2.0)
        progress(Fraction(480), Fraction(450), 0.0)  # a better plan at 12 s: a line
        hand.run_for(6.0)  # the next heartbeat 5 s after that line: at 17 s, not 15 s
    hand.run_for(30.0)  # the block has ended, and the heartbeat with it
    assert lines[0] == "solving"
    assert "incumbent CNY 500.00" in lines[1] and "bound 400.00" in lines[1]
    assert [_at(line) for line in lines[1:]] == [0.0, 5.0, 10.0, 12.0, 17.0]
    beats = [line for line in lines if "(searching)" in line]
    assert [_at(line) for line in beats] == [5.0, 10.0, 17.0]
    assert "bound 450.00" in beats[0] and "at most CNY 50.00 could still be saved" in beats[0]
    assert "incumbent CNY 480.00" in lines[4] and "(searching)" not in lines[4]
    assert "incumbent CNY 480.00" in beats[2] and "at most CNY 30.00" in beats[2]


def test_a_heartbeat_before_the_first_plan_says_so(hand: HandRun) -> None:
    with cli_solve.Progress("CNY", "solving", every=5.0, label="q3") as progress:
        progress(None, Fraction(450), 0.0)  # a bound, no plan yet
        hand.run_for(5.0)
    assert hand.lines == ["solving", "  q3          5.0 s  searching: no plan yet"]


def test_the_solver_reports_plans_and_a_rising_bound(make_scenario: Any) -> None:
    # What Progress is fed, in order: the bound never falls and never passes the optimum, no
    # plan reported costs less than the optimum, and the last plan reported is the optimum.
    offers = [
        offer("o0-a100-80g", hourly={"price": 2, "stock": 1}),
        offer("o1-h200-141g", card="h200-141g", hourly={"price": 3}, daily={"price": 20}),
    ]
    s = make_scenario(offers, [job("j0", 10), job("j1", 10), job("j2", 1)], days=2)
    events: list[tuple[Fraction | None, Fraction]] = []
    params = SolveParams(time_limit=10, workers=2, seed=0, deterministic=True)
    phases: list[str] = []

    def report(found: Fraction | None, bound: Fraction, _: float, what: str = "") -> None:
        if what.startswith(PHASE):  # what the solve is doing: no plan, no bound
            phases.append(what[len(PHASE) :])
        else:
            events.append((found, bound))

    result = solve(s, params, report)
    assert phases == [
        "building the problem",
        "planning the baselines",
        "checking the baselines",
        "trying an optional package",  # the daily H200 is optional: deterministic, so tried
        "pricing the bound",  # priced beside the starts: the search waits for it here
        "building the CP-SAT model",
        "searching",
    ]
    assert result.status == "optimal" and result.objective is not None
    plans = [found for found, _ in events if found is not None]
    bounds = [bound for _, bound in events]
    assert plans and plans[-1] == result.objective
    assert all(plan >= result.objective for plan in plans)
    assert all(a <= b for a, b in pairwise(bounds))
    assert all(bound <= result.objective for bound in bounds)


def test_the_cli_says_what_a_plan_not_proven_could_still_save(cli: Any) -> None:
    # ten jobs in 0.1 units of deterministic time are not proven (it takes about 10):
    # the summary says the bound and what is left to save
    result = cli(
        "solve",
        "scenarios/q3-train.yaml",
        "--deterministic",
        "--time-limit",
        "0.1",
        "--workers",
        "1",
        "--seed",
        "0",
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "q3-train: feasible" in text
    assert "not proven: no plan costs less than CNY" in text
    assert "could still be saved; a longer --time-limit may find it or prove this plan" in text


def _solved_when_the_solver_looks_at(
    seconds: float, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> str:
    """`plan solve` on q3-train at a 0.1 s limit, the command starting at 1000 s on its
    clock and the solver reading `seconds` past that: its output, unwrapped."""
    monkeypatch.setattr(cli_common, "time", Clock(1000.0))  # the command's start
    monkeypatch.setattr(cli_solve, "time", Clock(1000.0))
    monkeypatch.setattr(planner.solve, "time", Clock(1000.0 + seconds))
    result = cli("solve", "scenarios/q3-train.yaml", "--time-limit", "0.1")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "the plan is the best checked baseline" in text
    assert "q3-train: feasible" in text
    assert re.search(r"gap [\d.]+%, 0\.00 s of search,", text)  # no search ran
    return text


def test_a_limit_spent_on_building_says_so_and_shows_the_baseline(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # When the solver looks, loading ten jobs has taken 0.09 s of the 0.1 s limit: too
    # little left to build the model in (about 4,700 variables at 28 µs each). No model, no
    # search: the heuristic's plan, and what limit would let the solver improve it.
    text = _solved_when_the_solver_looks_at(0.09, monkeypatch, cli)
    assert "would take more than half of the 0 s left of the time limit" in text
    assert "lets the solver improve it" in text


def test_a_limit_spent_before_the_search_says_how_long_it_took(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the steps before the search ran past the 0.1 s limit (0.3 s on the solver's clock):
    # said as what they took of the limit, not as a negative time left
    text = _solved_when_the_solver_looks_at(0.3, monkeypatch, cli)
    assert "took 0.3 s of the 0.1 s time limit, so no CP-SAT model was built" in text
    assert "s left of the time limit" not in text
    assert "lets the solver improve it" in text


def test_the_heartbeat_names_the_phase_the_solve_is_in(hand: HandRun) -> None:
    with cli_solve.Progress("CNY", "solving", every=5.0) as progress:
        progress(None, Fraction(0), 0.0, PHASE + "building the problem")
        hand.run_for(5.0)
        progress(Fraction(500), Fraction(400), 0.0, "the checked heuristic plan")
        progress(None, Fraction(0), 0.0, PHASE + "building the CP-SAT model")
        hand.run_for(5.0)
    assert hand.lines[1] == "      5.0 s  building the problem: no plan yet"
    assert (
        "incumbent CNY 500.00" in hand.lines[2] and "(the checked heuristic plan)" in hand.lines[2]
    )
    assert "bound 400.00" in hand.lines[3] and "(building the CP-SAT model)" in hand.lines[3]
    assert len(hand.lines) == 4  # a phase prints no line of its own
