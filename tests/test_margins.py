"""What each workload adds (`plan solve --margins`, planner/margins.py): what the plan would
save without it, as a range between a checked plan and a bound without it, worked by hand
where a workload's share by use and its margin disagree."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

from planner.domain.plan import by_use
from planner.margins import margins, without
from tests.planning import forcing_fortnight, job, offer, solved


def forcing_quarter(make_scenario: Any) -> Any:
    # tests/planning.py's forcing fortnight: its optimum is 1,400 + 7 × 24 × 2 = 1,736
    offers, jobs = forcing_fortnight()
    return make_scenario(offers, jobs, days=14)


def test_the_job_that_forces_the_package_adds_most_though_it_uses_least(
    make_scenario: Any,
) -> None:
    s = forcing_quarter(make_scenario)
    result = solved(s)
    assert result.plan is not None and result.plan.total_cost == Decimal("1736.00")
    spent = {a.workload: by_use(a) for a in result.plan.assignments}
    assert spent["chat"] > spent["j"]  # the service fills the package the job forces
    found = {m.workload: m for m in margins(s, result.plan)}
    # without the job: the service alone rents hourly all 14 days, 14 × 48 = 672 (the bound
    # agrees: no package is forced, and 2 an hour is the cheapest a card-hour can cost it);
    # the plan saves exactly 1,736 − 672 = 1,064
    assert (found["j"].at_least, found["j"].at_most) == (1064, 1064)
    # without the service: the job alone still forces the package: 1,400; saves 336
    assert (found["chat"].at_least, found["chat"].at_most) == (336, 336)


def test_a_margin_is_at_least_what_was_rented_for_the_workload_alone(
    make_scenario: Any,
) -> None:
    # two jobs on hourly cards at 3 an hour, each rented for itself: dropping one drops
    # its rental (10 h and 4 h of one card), so each saves at least that
    offers = [offer("h", hourly={"price": 3, "stock": 4})]
    s = make_scenario(offers, [job("a", 10), job("b", 4)], days=2)
    result = solved(s)
    assert result.plan is not None
    found = {m.workload: m for m in margins(s, result.plan)}
    assert found["a"].at_least == 30 and found["b"].at_least == 12
    for m in found.values():
        assert m.at_least <= m.at_most <= Fraction(result.plan.total_cost)


def test_without_a_workload_its_followers_no_longer_wait(make_scenario: Any) -> None:
    offers = [offer("h", hourly={"price": 3, "stock": 4})]
    s = make_scenario(offers, [job("a", 10), job("b", 4, after=["a"])], days=2)
    rest = without(s, "a")
    assert [w.name for w in rest.spec.workloads] == ["b"]
    assert rest.spec.workloads[0].after == ()
    assert "a" not in rest.models


def test_plan_solve_margins_prints_and_writes_them(
    make_scenario: Any, cli: Any, tmp_path: Any
) -> None:
    s = forcing_quarter(make_scenario)
    out, page = tmp_path / "plan.json", tmp_path / "plan.html"
    run = cli("solve", s.path, "--margins", "--deterministic", "--json", out, "--report", page)
    assert run.exit_code == 0, run.output
    assert "What each workload adds" in run.output
    html = page.read_text()
    assert "without it, at least (CNY) less" in html
    assert "<td>j</td><td>train</td>" in html and "<td>1,064.00</td>" in html
    data = json.loads(out.read_text())
    assert {m["workload"]: (m["at_least"], m["at_most"]) for m in data["margins"]} == {
        "j": (1064.0, 1064.0),
        "chat": (336.0, 336.0),
    }
