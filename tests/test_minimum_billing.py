"""Hourly replicas under a billing minimum (rule 6 billed as rule 4), against brute force.

Two claims carry the model's exactness (docs/rules.md, "Minimum billing of replicas"):
ending the oldest rental at every fall pays the least round-up of all ways to pair a
count series' starts with its ends (tested with every other billing, against every
pairing, in tests/test_billing_steps.py); and the plan CP-SAT finds is the cheapest count
series at or above what each hour needs, priced that way.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.planning import assert_plans_the_cheapest_count_series, offer, service

LEVELS = st.sampled_from([0, 50, 150])  # one a100 replica carries 100 requests: 0, 1, 2


@st.composite
def curves(draw: st.DrawFn) -> dict[str, int]:
    cuts = sorted(draw(st.sets(st.integers(1, 23), min_size=2, max_size=6)))
    return {f"{a:02d}-{b:02d}": draw(LEVELS) for a, b in itertools.pairwise([0, *cuts, 24])}


@settings(max_examples=40, deadline=None)
@given(
    curves(),
    st.sampled_from([2, 3, 5]),
    st.sampled_from([0, 60]),
)
def test_the_plan_is_the_cheapest_count_series(
    make_scenario: Any, levels: dict[str, int], minimum: int, setup: int
) -> None:
    # One config (one-card a100 replicas on one offer): brute force every count series at
    # or above each segment's need, up to the peak, priced by held hours, setups and the
    # minimum's round-up. The checked plan costs exactly the least of them.
    o = {**offer("o", hourly={"price": 10, "min_hours": minimum}), "setup_minutes": setup}
    chat = service(concurrency=levels, min_replicas=0, max_cards_per_replica=1)
    assert_plans_the_cheapest_count_series(make_scenario([o], [chat], days=1))


def test_a_quote_bills_the_minimum_it_charges(make_scenario: Any) -> None:
    # A card reserved 09:00-10:00 on a 4 h minimum at 10/h: 4 unit-hours billed, 40.00.
    from planner.problem import quote_replicas
    from tests.planning import reserve

    four = offer("four", hourly={"price": 10, "min_hours": 4})
    s = make_scenario([four], [reserve("desk", 1, "09:00-10:00")], days=1)
    [row] = [r for r in quote_replicas(s, "desk") if r["mode"] == "hourly"]
    assert (row["billed_unit_hours"], row["exact_cost"]) == (4, 40)
