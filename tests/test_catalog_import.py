"""`plan catalog import`: gpuhunt and SkyPilot price lists read as gpuplan catalogs.

The fixtures (tests/data/import/) are small files in each format's published columns:
gpuhunt's per-provider CSV (here zipped, as gpuhunt ships its catalog) and SkyPilot's
`vms.csv`. Prices are examples, not quotes."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.catalog_import import card_for, import_catalog, read_rows
from planner.domain.load import load_catalogs
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "import"


def _gpuhunt_zip(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.write(DATA / "aws.csv", "aws.csv")
    return path


def test_gpu_names_map_to_cards_by_name_and_memory() -> None:
    assert card_for("A100", 40) == "a100-40g" and card_for("A100", 80) == "a100-80g"
    assert card_for("A100-80GB", None) == "a100-80g"
    assert card_for("NVIDIA H100", 80) == "h100-80g"
    assert card_for("L4", 24) == "l4" and card_for("T4", None) == "t4"
    assert card_for("MI300X", 192) is None  # no spec for AMD's Infinity Fabric cards yet


def test_a_gpuhunt_zip_imports_to_a_catalog_that_loads(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "aws.yaml"
    result = cli("catalog", "import", "gpuhunt", _gpuhunt_zip(tmp_path), "--out", out)
    assert result.exit_code == 0, result.output
    catalog = yaml.safe_load(out.read_text())
    offers = {o["id"]: o for o in catalog["offers"]}
    # on-demand and spot rows of one instance merge into one offer of 8-card units
    p4d = offers["aws-p4d-24xlarge-us-east-1"]
    assert (p4d["card"], p4d["unit_cards"]) == ("a100-40g", 8)
    assert p4d["hourly"]["price"] == 32.7726 and p4d["spot"]["price"] == 11.5722
    assert set(p4d["spot"]["assumed"]) >= {"preemptions_per_hour", "restart_minutes"}
    assert {o["card"] for o in offers.values()} == {"a100-40g", "a10g", "h100-80g", "l4"}
    # cards the shipped specs lack travel inside the catalog, with their sources
    assert {c["id"] for c in catalog["cards"]} == {"a10g", "l4"}
    assert all("source" in c["bf16_tflops"] for c in catalog["cards"])
    # nothing is dropped silently: the CPU-only and the unmapped rows are listed
    text = " ".join(result.output.split())
    assert "2 rows not imported" in text
    assert "m5.large (0 × ): no GPU" in text
    assert "p5e.48xlarge (8 × MI300X): no card spec for GPU 'MI300X'" in text
    catalogs, cards = load_catalogs([out])
    assert catalogs[0].currency == "USD" and "l4" in cards


def test_a_skypilot_file_imports_with_a_region_filter(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "gcp.yaml"
    result = cli(
        "catalog", "import", "skypilot", DATA / "vms.csv", "--out", out, "--region", "us-central1"
    )
    assert result.exit_code == 0, result.output
    catalog = yaml.safe_load(out.read_text())
    cards = sorted((o["card"], o["unit_cards"]) for o in catalog["offers"])
    assert cards == [("a100-40g", 1), ("a100-80g", 8), ("l4", 1)]
    a2 = next(o for o in catalog["offers"] if o["id"] == "skypilot-a2-highgpu-1g-us-central1")
    assert a2["hourly"]["price"] == 3.6733 and a2["spot"]["price"] == 1.102
    assert a2["region"] == "us-central1"


def test_every_unmappable_row_has_a_reason() -> None:
    rows = read_rows("skypilot", [DATA / "vms.csv"])
    result = import_catalog(rows, "gcp", "USD", "tests")
    reasons = {row.instance: why for row, why in result.skipped}
    assert reasons == {
        "n1-standard-4": "no GPU",
        "tpu-v5e": "no card spec for GPU 'tpu-v5e-8'",
    }
    assert len(result.catalog["offers"]) + len(result.skipped) == len(rows)


def test_an_imported_catalog_plans_a_quarter_in_its_currency(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    from tests.planning import job

    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out).exit_code == 0
    scenario = {
        "name": "usd",
        "currency": "USD",
        "timezone": "UTC",
        "horizon": {"start": "2026-07-01", "end": "2026-07-11"},
        "catalog": str(out),
        "workloads": [job("tune", 20, measured={"card": "a10g", "cards": 1, "tokens_per_s": 500})],
    }
    path = write(scenario)
    plan_path = tmp_path / "plan.json"
    result = cli("solve", path, "--workers", "1", "--deterministic", "--json", plan_path)
    assert result.exit_code == 0, result.output
    checked = cli("check", path, plan_path)
    assert checked.exit_code == 0, checked.output


def test_a_file_of_another_format_is_refused_by_name(cli: Any, tmp_path: Path) -> None:
    result = cli("catalog", "import", "skypilot", DATA / "aws.csv", "--out", tmp_path / "x.yaml")
    assert result.exit_code != 0
    assert "not a skypilot file: no column InstanceType" in " ".join(result.output.split())


def _mixed(out: Path, rate: dict[str, Any] | None) -> dict[str, Any]:
    """The seeds' catalog (CNY) and an imported AWS list (USD), one job that runs on
    either."""
    from tests.planning import job

    scenario: dict[str, Any] = {
        "name": "two-currencies",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-10-01", "end": "2026-10-11"},
        "catalog": ["jizhisuan-2026-09", str(out)],
        "workloads": [job("tune", 20, measured={"card": "a10g", "cards": 1, "tokens_per_s": 500})],
    }
    if rate is not None:
        scenario["exchange_rates"] = {"USD": rate}
    return scenario


def test_a_usd_catalog_beside_the_seeds_plans_at_the_stated_rate(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    """Offers from the seeds' CNY catalog and an imported USD one in one scenario: the USD
    prices are converted at the stated rate (g5.xlarge: 1.006 × 7.1 = 7.1426 CNY/h), the
    plan is in CNY, checks, and lists the rate among the figures it rests on."""
    from planner.domain.load import load_scenario

    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out).exit_code == 0
    rate = {"rate": 7.1, "date": "2026-09-30", "source": "an example rate"}
    path = write(_mixed(out, rate))
    scenario = load_scenario(path)
    g5 = scenario.offers["aws-g5-xlarge-us-east-1"]
    assert g5.hourly is not None and str(g5.hourly.price) == "7.1426"
    assert g5.spot is not None and str(g5.spot.price) == "2.14278"
    plan_path = tmp_path / "plan.json"
    result = cli("solve", path, "--workers", "1", "--deterministic", "--json", plan_path)
    assert result.exit_code == 0, result.output
    plan = yaml.safe_load(plan_path.read_text())
    assert plan["currency"] == "CNY"
    assert any(
        "converted from USD at 7.1 CNY per USD (rate of 2026-09-30" in a
        for a in plan["assumptions"]
    )
    assert cli("check", path, plan_path).exit_code == 0


def test_a_catalog_in_another_currency_without_a_rate_is_refused(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out).exit_code == 0
    result = cli("validate", write(_mixed(out, None)))
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert (
        "scenario currency CNY differs from catalog aws's USD; state its rate as exchange_rates"
        in text
    )


def test_catalogs_and_rates_are_the_same_as_catalog_and_exchange_rates(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    """`catalogs: [a, b]` with `rates: {USD: {CNY: 7.1, as_of: DATE}}` loads exactly as
    `catalog:` with `exchange_rates:`; a rate into another currency is refused by name."""
    from planner.domain.errors import LoadError
    from planner.domain.load import load_scenario

    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out).exit_code == 0
    long = _mixed(out, {"rate": 7.1, "date": "2026-09-30"})
    short = {k: v for k, v in long.items() if k not in ("catalog", "exchange_rates")}
    short |= {"catalogs": long["catalog"], "rates": {"USD": {"CNY": 7.1, "as_of": "2026-09-30"}}}
    assert load_scenario(write(short)).offers == load_scenario(write(long)).offers
    wrong = {**short, "rates": {"USD": {"EUR": 6.5, "as_of": "2026-09-30"}}}
    with pytest.raises(LoadError) as caught:
        load_scenario(write(wrong))
    assert "rates.USD: expected {CNY: <CNY per USD>, as_of: YYYY-MM-DD}" in str(caught.value)


def test_an_offer_id_in_two_catalogs_is_named_by_its_catalog(tmp_path: Path, write: Any) -> None:
    """Two catalogs that both sell an offer `box`: each is named by its catalog (`east.box`,
    `west.box`), and a scenario change to the bare id is refused with both names."""
    from planner.domain.errors import LoadError
    from planner.domain.load import load_scenario
    from tests.planning import job

    for name, price in (("east", 2), ("west", 3)):
        catalog = {
            "name": name,
            "currency": "CNY",
            "date": "2026-10-01",
            "source": "a test",
            "offers": [{"id": "box", "card": "a100-80g", "hourly": {"price": price}}],
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(catalog))
    scenario = {
        "name": "clash",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-10-01", "end": "2026-10-03"},
        "catalogs": [str(tmp_path / "east.yaml"), str(tmp_path / "west.yaml")],
        "workloads": [job("tune", 5)],
    }
    offers = load_scenario(write(scenario)).offers
    assert {i: str(o.hourly.price) for i, o in offers.items() if o.hourly} == {
        "east.box": "2",
        "west.box": "3",
    }
    patched = {**scenario, "offers": [{"id": "west.box", "hourly": {"price": 1}}]}
    west = load_scenario(write(patched)).offers["west.box"].hourly
    assert west is not None and str(west.price) == "1"
    with pytest.raises(LoadError) as caught:
        load_scenario(write({**scenario, "offers": [{"id": "box", "hourly": {"price": 1}}]}))
    assert "offer id 'box' is in catalogs east and west" in str(caught.value)
    assert "east.box or west.box" in str(caught.value)


def test_a_row_without_any_price_is_listed_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text(
        "provider,instance,region,gpu_name,gpu_count,gpu_memory_gb,price,spot_price\n"
        "acme,box-1,eu,A100,1,80,2.5,\n"
        "acme,box-2,eu,A100,1,80,,\n"
    )
    rows = read_rows("csv", [path])
    result = import_catalog(rows, "acme", "EUR", "tests")
    assert [o["id"] for o in result.catalog["offers"]] == ["acme-box-1-eu"]
    assert [(row.instance, why) for row, why in result.skipped] == [("box-2", "no price")]


def test_every_card_an_import_may_add_loads(tmp_path: Path) -> None:
    """Each card of catalogs/import/cards.yaml, written into an imported catalog, loads (a
    V100 entry once broke on an unquoted comma and no fixture used it)."""
    from planner.catalog_import import GPU_CARDS

    path = tmp_path / "plain.csv"
    lines = ["provider,instance,region,gpu_name,gpu_count,gpu_memory_gb,price,spot_price"]
    names = sorted(GPU_CARDS, key=lambda k: (k[0], k[1] or 0))
    lines += [f"acme,box-{i},eu,{n},1,{m or ''},1.0," for i, (n, m) in enumerate(names)]
    path.write_text("\n".join(lines) + "\n")
    result = import_catalog(read_rows("csv", [path]), "all", "EUR", "tests")
    assert not result.skipped
    out = tmp_path / "all.yaml"
    out.write_text(yaml.safe_dump(result.catalog, sort_keys=False))
    _, cards = load_catalogs([out])
    assert set(GPU_CARDS.values()) <= set(cards)
