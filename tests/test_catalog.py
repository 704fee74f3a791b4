"""The shipped catalogs reproduce the seeds' price list exactly; card specs are complete."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from planner.domain.load import load_catalog
from planner.report import offer_rows

# the second source article's price list (2026-09-24, CNY): (offer, mode) -> list price,
# exactly as written.
SEED_PRICES = {
    ("jz-rtx3090", "hourly"): "1.45",
    ("jz-rtx4090", "hourly"): "1.57",
    ("jz-rtx4090-machine", "monthly"): "7920",
    ("jz-rtx4090-48g", "hourly"): "2.86",
    ("jz-rtx4090-48g-machine", "monthly"): "10400",
    ("jz-910b", "hourly"): "3.58",
    ("jz-910b-83", "hourly"): "2.97",
    ("jz-910b-machine-18800", "monthly"): "18800",
    ("jz-910b-machine-21760", "monthly"): "21760",
    ("jz-a800", "hourly"): "7.15",
    ("jz-a100-40g-machine", "monthly"): "13520",
    ("jz-a100-80g-machine", "monthly"): "40000",
    ("jz-h100", "hourly"): "12.98",
    ("jz-h100-machine", "monthly"): "86880",
    ("jz-h20", "hourly"): "6.20",
    ("jz-h20-machine", "monthly"): "45600",
    ("jz-h200", "hourly"): "13.94",
    ("jz-h200", "monthly"): "10036",
    ("jz-h200-machine", "monthly"): "151920",
    ("jz-b300-machine", "monthly"): "378400",
}
ESTIMATION_CARDS = {
    # card: (memory GB, bandwidth GB/s, dense BF16 TFLOPS, FP8) from docs/estimates.md "Card specs"
    "rtx3090": (24, 936, 71, False),
    "rtx4090": (24, 1008, 165, True),
    "rtx4090-48g": (48, 1008, 165, True),
    "ascend-910b": (64, 1600, 313, False),
    "a100-40g": (40, 1555, 312, False),
    "a100-80g": (80, 2039, 312, False),
    "a800-80g": (80, 2039, 312, False),
    "h100-80g": (80, 3350, 989, True),
    "h20-96g": (96, 4000, 148, True),
    "h200-141g": (141, 4800, 989, True),
    "b300-288g": (288, 8000, 2250, True),
    "l40s": (48, 864, 362, True),
    "l20": (48, 864, 119.5, True),
}


@pytest.fixture(scope="module")
def seeds() -> Any:
    return load_catalog("jizhisuan-2026-09")


def test_every_seed_price_is_reproduced_exactly(seeds: Any) -> None:
    catalog, _ = seeds
    listed = {
        (offer.id, mode): billing
        for offer in catalog.offers
        for mode, billing in offer.modes.items()
        if "price" not in billing.assumed
    }
    assert {key: b.price for key, b in listed.items()} == {
        key: Decimal(price) for key, price in SEED_PRICES.items()
    }
    assert str(catalog.date) == "2026-09-24" and catalog.currency == "CNY"


def test_machines_are_eight_card_units(seeds: Any) -> None:
    catalog, _ = seeds
    for offer in catalog.offers:
        assert offer.unit_cards == (8 if "machine" in offer.id else 1), offer.id


def test_every_figure_not_on_the_list_is_marked_assumed(seeds: Any) -> None:
    catalog, _ = seeds
    for offer in catalog.offers:
        if offer.spot is not None:
            assert {
                "price",
                "stock",
                "preemptions_per_hour",
                "restart_minutes",
            } <= offer.spot.assumed
        for mode, billing in offer.modes.items():
            if billing.stock is not None and (offer.id, mode) in SEED_PRICES:
                assert "stock" in billing.assumed, (offer.id, mode)


def test_card_hour_prices_match_the_seeds_reading(seeds: Any) -> None:
    # the second source article, reading the price list per card-hour: H200 monthly
    # "exactly" 720 h × ¥13.94
    # (in fact ¥0.80 less: 10036.80 - 10036); 4090 48G machine ≈ ¥1.81; H100 machine
    # ≈ ¥15.08; A100 80G machine ≈ ¥6.94; the H20 machine dearer per card-hour than hourly.
    catalog, cards = seeds
    rate = {
        (r["offer"], r["mode"]): r["card_hour_price"] for r in offer_rows(catalog.offers, cards)
    }
    assert rate[("jz-h200", "monthly")] == Decimal("13.9389")  # 10036 / 720
    assert 720 * Decimal("13.94") - Decimal(10036) == Decimal("0.80")
    assert rate[("jz-rtx4090-48g-machine", "monthly")] == Decimal("1.8056")
    assert rate[("jz-h100-machine", "monthly")] == Decimal("15.0833")
    assert rate[("jz-a100-80g-machine", "monthly")] == Decimal("6.9444")
    assert rate[("jz-h20-machine", "monthly")] > rate[("jz-h20", "hourly")]


def test_per_gb_hour_reproduces_the_first_article() -> None:
    # A100 40 GB at ¥10/h → ¥0.25/GB·h; 80 GB at ¥18/h → ¥0.225; at ¥22/h → ¥0.275.
    catalog, cards = load_catalog("a100-samples")
    per_gb = {r["offer"]: r["gb_hour_price"] for r in offer_rows(catalog.offers, cards)}
    assert per_gb == {
        "sample-a100-40g": Decimal("0.25"),
        "sample-a100-80g-18": Decimal("0.225"),
        "sample-a100-80g-22": Decimal("0.275"),
    }


def test_card_specs_match_estimation_md(seeds: Any) -> None:
    _, cards = seeds
    assert set(ESTIMATION_CARDS) <= set(cards)
    for card_id, (gb, bandwidth, tflops, fp8) in ESTIMATION_CARDS.items():
        card = cards[card_id]
        assert (card.memory_gb.value, card.bandwidth_gbs.value) == (gb, bandwidth)
        assert (card.bf16_tflops.value, card.fp8.value) == (tflops, fp8)
        assert 0.9 * gb <= card.memory_gib.value <= gb  # reported GiB is at most the marketing GB
        for name, spec in card:
            if hasattr(spec, "source"):
                assert spec.source, f"{card_id}.{name} has no source"
    assert "bandwidth_gbs" in cards["ascend-910b"].low_confidence()


def test_catalog_json_equals_the_library_rows(cli: Any, seeds: Any) -> None:
    catalog, cards = seeds
    result = cli("catalog", "--json", "-")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    rows = json.loads(json.dumps(offer_rows(catalog.offers, cards), default=float))
    assert payload["rows"] == rows
    assert len(payload["rows"]) == 28
    assert "jz-h200" in result.stderr  # the table goes to stderr when JSON takes stdout


def test_catalog_table_marks_assumed_figures(cli: Any) -> None:
    result = cli("catalog")
    assert result.exit_code == 0
    spot_h200 = next(
        line for line in result.stdout.splitlines() if "jz-h200 " in line and "spot" in line
    )
    assert "6.97*" in spot_h200
    assert "* assumed" in result.stdout


def test_unknown_catalog_suggests(cli: Any) -> None:
    result = cli("catalog", "jizhisuan")
    assert result.exit_code == 1
    assert "did you mean jizhisuan-2026-09?" in result.stderr


def test_a_spot_mode_without_its_risk_figures_is_planned_on_an_assumption(
    make_scenario: Any, cli: Any
) -> None:
    # A spot mode that states no preemption rate or restart time is planned with neither
    # (its rework factor is 1): that is an assumption, marked as one in the catalog and in
    # the plan's assumptions. One that states both is not marked.
    from planner.domain.catalog import SpotBilling
    from tests.planning import job, offer, solved

    assert SpotBilling(price=Decimal(5)).assumed == {"preemptions_per_hour", "restart_minutes"}
    stated = SpotBilling(price=Decimal(5), preemptions_per_hour=0.05, restart_minutes=10)
    assert stated.assumed == frozenset()
    s = make_scenario([offer("o", spot={"price": 5})], [job("j", 4, checkpoint_every="30m")])
    plan = solved(s).plan
    assert plan is not None and {r.mode for r in plan.rentals} == {"spot"}
    assert "o spot: preemptions_per_hour 0, restart_minutes 0 assumed (not on the price list)" in (
        plan.assumptions
    )
    assert s.path is not None
    shown = cli("catalog", s.path.parent / "catalog.yaml")
    assert next(line for line in shown.stdout.splitlines() if " o " in line).count("spot*") == 1
