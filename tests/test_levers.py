"""What a forced purchase rests on: each assumed figure set to its optimistic value, and
what the workload alone would then cost, said beside the purchase."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from planner.domain.load import load_scenario
from tests.planning import offer, only_on_h200, scenario, solved


def _forced_by_a_missing_network(folder: Path, network: float | None = None) -> Any:
    """A 10 h full fine-tune of llama-2-7b (too big for one a100-80g) on up to 2 cards, due
    in 3 days: a 2-card h200 weekly package (1,400) runs it; the a100 hourly offer has one
    card per node and states no network, so two of its cards cannot run one job."""
    offers = [
        offer("pkg", card="h200-141g", unit_cards=2, weekly={"price": 1400, "stock": 1}),
        {**offer("hr", hourly={"price": 2, "stock": 8}), "cards_per_node": 1},
    ]
    if network is not None:
        offers[1]["network"] = {"gbps": network}
    job = only_on_h200("j", 10, max_cards=2, deadline="2026-07-04")
    return scenario(folder, offers, [job], days=7)


def test_a_purchase_forced_by_a_missing_network_says_so_and_what_stating_it_saves(
    tmp_path: Path, cli: Any
) -> None:
    (tmp_path / "base").mkdir()
    s = _forced_by_a_missing_network(tmp_path / "base")
    result = solved(s)
    assert result.plan is not None and str(result.plan.total_cost) == "1400.00"
    [forced] = result.plan.forced
    assert (forced.offer, forced.mode, forced.workloads) == ("pkg", "weekly", ["j"])
    [why] = [r for r in result.plan.rests_on if r.lever == "network"]
    assert why.workload == "j" and why.purchase == "pkg weekly" and why.now == Decimal("1400.00")
    assert why.assumed == "hr states no network between its 1-card nodes"
    assert (why.cards, why.card, why.offer, why.mode) == (2, "a100-80g", "hr", "hourly")
    # the saving is what `plan quote` gives once the network is stated in the scenario
    (tmp_path / "stated").mkdir()
    stated = _forced_by_a_missing_network(tmp_path / "stated", network=3200)
    quote = cli("quote", stated.path, "j", "--json", "-")
    assert quote.exit_code == 0, quote.output
    hourly = [r for r in json.loads(quote.stdout)["rows"] if r["offer"] == "hr"]
    assert Decimal(str(hourly[0]["cost"])) == why.cost < why.now
    assert why.saving == why.now - why.cost
    # the plan's first lines say it, and the JSON carries it
    out = tmp_path / "plan.json"
    run = cli("solve", s.path, "--deterministic", "--workers", "2", "--json", out)
    assert run.exit_code == 0, run.output
    text = " ".join(run.stdout.split())
    assert (
        "j forces pkg weekly (CNY 1,400.00) because hr states no network between its 1-card "
        f"nodes; with a 3,200 Gb/s network between nodes it would run on 2 × a100-80g hourly "
        f"(hr) for CNY {why.cost:,.2f}" in text
    )
    assert json.loads(out.read_text())["rests_on"][0]["lever"] == "network"


def test_a_stated_network_leaves_nothing_to_say(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    s = _forced_by_a_missing_network(tmp_path / "s", network=3200)
    result = solved(s)
    assert result.plan is not None and not result.plan.forced
    assert not [r for r in result.plan.rests_on if r.lever == "network"]


def test_an_option_past_its_offers_stock_is_not_a_lever(tmp_path: Path) -> None:
    # As above with one a100 hourly unit in stock: even with a network stated, two cards of
    # it cannot be had, so nothing is claimed
    (tmp_path / "s").mkdir()
    s = _forced_by_a_missing_network(tmp_path / "s")
    data = s.catalogs[0].model_dump(mode="json", exclude_none=True)
    data["offers"][1]["hourly"]["stock"] = 1
    catalog = tmp_path / "s" / "catalog.yaml"
    catalog.write_text(yaml.safe_dump(data, sort_keys=False))
    result = solved(load_scenario(s.path))
    assert result.plan is not None and result.plan.forced
    assert not [r for r in result.plan.rests_on if r.lever == "network"]
