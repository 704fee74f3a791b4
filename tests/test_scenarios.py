"""Shipped scenarios validate and contain what the quarter needs; references resolve."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.domain.errors import LoadError
from planner.domain.load import load_scenario
from planner.domain.merge import deep_merge
from planner.domain.workload import ReserveWorkload, ServeWorkload, TrainWorkload
from planner.paths import data_dir
from planner.report import scenario_summary
from tests.conftest import LLAMA31_8B_CONFIG, REPO, minimal_scenario


@pytest.fixture(scope="module")
def q3() -> Any:
    return load_scenario(REPO / "scenarios" / "q3.yaml")


def test_q3_is_a_realistic_quarter(q3: Any) -> None:
    spec = q3.spec
    assert (spec.horizon.start, spec.horizon.end) == (dt.date(2026, 7, 1), dt.date(2026, 10, 1))
    assert spec.timezone == "Asia/Shanghai" and spec.catalog == ["jizhisuan-2026-09"]
    assert len(spec.workloads) >= 10
    train = [w for w in spec.workloads if isinstance(w, TrainWorkload)]
    serve = [w for w in spec.workloads if isinstance(w, ServeWorkload)]
    reserve = [w for w in spec.workloads if isinstance(w, ReserveWorkload)]

    def billions(w: Any) -> float:
        return q3.models[w.name].params / 1e9

    peft = [w for w in train if w.method in ("lora", "qlora") and 7 <= billions(w) <= 15]
    assert len(peft) >= 2 and all(w.deadline for w in peft)
    assert any(str(w.daily_hours) == "08:00-22:00" for w in peft)
    assert any(w.method == "full" and 7.5 < billions(w) < 8.5 for w in train)
    cpt = [w for w in train if w.method == "full" and billions(w) > 65]
    assert cpt and cpt[0].tokens >= 2e9 and cpt[0].deadline and cpt[0].checkpoint_every
    assert any(w.after and w.method == "eval" for w in train)
    chat = next(w for w in serve if billions(w) > 65)
    assert chat.start == dt.date(2026, 7, 15) and chat.growth_per_month > 0
    assert len({chat.concurrency.at(0, h) for h in range(24)}) > 2  # a daily curve
    small = next(w for w in serve if billions(w) < 9)
    assert (small.start, small.end) == (spec.horizon.start, spec.horizon.end)
    [dev] = reserve
    assert dev.cards == 4 and dev.days == (0, 1, 2, 3, 4) and str(dev.hours) == "09:00-19:00"


def test_validate_json_equals_the_library_summary(cli: Any, q3: Any) -> None:
    result = cli("validate", REPO / "scenarios" / "q3.yaml", "--json", "-")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads(json.dumps(scenario_summary(q3)))


def test_shipped_data_folders_are_found() -> None:
    for folder in ("models", "catalogs", "scenarios"):
        assert any(data_dir(folder).glob("*.yaml"))


def test_paths_resolve_relative_to_the_scenario_file(write: Any, tmp_path: Path) -> None:
    catalog = {
        "name": "mine",
        "currency": "CNY",
        "source": "test",
        "cards": [{"id": "h200-141g", "memory_gib": 141.0}],  # a partial override
        "offers": [{"id": "x-h200", "card": "h200-141g", "hourly": {"price": 9.5}}],
    }
    write(catalog, "data/mine.yaml")
    config = LLAMA31_8B_CONFIG
    write(json.dumps(config), "data/cfg/config.json")
    data = minimal_scenario()
    data["catalog"] = "../data/mine.yaml"
    data["workloads"] = [{**data["workloads"][1], "model": "../data/cfg/config.json"}]
    scenario = load_scenario(write(data, "sub/scenario.yaml"))
    assert list(scenario.offers) == ["x-h200"]
    assert scenario.cards["h200-141g"].memory_gib.value == 141.0
    assert scenario.cards["h200-141g"].bandwidth_gbs.value == 4800  # kept from shipped specs
    assert scenario.models["chat"].params == 8030261248


def test_scenario_offers_merge_over_the_catalog_by_id(write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [
        {"id": "jz-h200", "spot": None, "monthly": {"price": 9000}},  # null deletes a mode
        {"id": "new-l40s", "card": "l40s", "hourly": {"price": 4.1, "stock": 4}},
    ]
    offers = load_scenario(write(data)).offers
    h200 = offers["jz-h200"]
    assert h200.spot is None and h200.monthly is not None and h200.hourly is not None
    assert h200.monthly.price == Decimal(9000) and h200.monthly.stock == 8  # stock kept
    assert offers["new-l40s"].hourly is not None and offers["new-l40s"].card == "l40s"


def test_a_new_offer_must_be_complete(write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [{"id": "half", "hourly": {"price": 1}}]
    with pytest.raises(LoadError) as caught:
        load_scenario(write(data))
    [issue] = caught.value.issues
    assert issue.field == "offers[0].id" and "a new offer needs at least card" in issue.message
    assert issue.file.endswith("scenario.yaml")
    data["offers"] = [{"id": "half", "card": "l40s"}]  # a card, but no billing mode
    with pytest.raises(LoadError, match="has no billing mode"):
        load_scenario(write(data))


def test_a_misspelt_offer_id_is_suggested(write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [{"id": "jz-h10o", "hourly": {"price": 1}}]
    with pytest.raises(LoadError, match="unknown offer id 'jz-h10o'; did you mean jz-h100"):
        load_scenario(write(data))


def test_bad_patch_value_is_blamed_on_the_scenario_line(write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [{"id": "jz-a800", "hourly": {"price": -1}}]
    path = write(data)
    with pytest.raises(LoadError) as caught:
        load_scenario(path)
    [issue] = caught.value.issues
    line = yaml.safe_dump(data, sort_keys=False).splitlines().index("    price: -1") + 1
    assert (issue.file, issue.line, issue.field) == (str(path), line, "offers[0].hourly.price")


def test_several_catalogs_one_currency_ids_named_by_catalog_where_they_clash(write: Any) -> None:
    data = minimal_scenario()
    data["catalog"] = ["jizhisuan-2026-09", "a100-samples"]
    scenario = load_scenario(write(data))
    assert "sample-a100-40g" in scenario.offers and "jz-h200" in scenario.offers
    write(
        {
            "name": "dup",
            "currency": "CNY",
            "source": "t",
            "offers": [{"id": "jz-h200", "card": "h200-141g", "hourly": {"price": 1}}],
        },
        "dup.yaml",
    )
    data["catalog"] = ["jizhisuan-2026-09", "dup.yaml"]
    offers = load_scenario(write(data)).offers  # a clash: each named by its catalog
    assert {"jizhisuan-2026-09.jz-h200", "dup.jz-h200"} <= set(offers)
    assert "jz-h200" not in offers


def test_deep_merge_rules() -> None:
    base = {"a": {"b": 1, "c": 2}, "workloads": [{"name": "x", "tokens": 1}, {"name": "y"}]}
    patch = {
        "a": {"c": None, "d": 4},
        "workloads": [{"name": "x", "tokens": 2}, {"name": "y", "delete": True}, {"name": "z"}],
    }
    assert deep_merge(base, patch) == {
        "a": {"b": 1, "d": 4},
        "workloads": [{"name": "x", "tokens": 2}, {"name": "z"}],
    }
    assert base["a"] == {"b": 1, "c": 2}  # the base is not mutated


class _Text(yaml.SafeLoader):
    """YAML as a schema-aware editor reads it: dates stay text."""


_Text.yaml_implicit_resolvers = {
    first: [r for r in rules if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def test_every_shipped_file_meets_its_published_schema(cli: Any) -> None:
    # plan schema is what editors and other tools check files against: every shipped
    # scenario, patch, catalog, model card and card-spec file must meet it (one catalog
    # name or a list, one precision or a list, a day group or a list, lengths that come
    # from request classes, `assumed: true` were refused by it)
    import jsonschema

    schemas = json.loads(cli("schema").stdout)
    files = [
        *sorted((REPO / "scenarios").glob("*.yaml")),
        *sorted((REPO / "catalogs").glob("*.yaml")),
        *sorted((REPO / "models").glob("*.yaml")),
    ]
    assert len(files) > 40
    for path in files:
        data = yaml.load(path.read_text(), Loader=_Text)  # a SafeLoader
        if path.parent.name == "models":
            kind = "model"
        elif path.name == "cards.yaml":
            kind = "cards"
        else:
            kind = "scenario" if "horizon" in data else "catalog" if "source" in data else "patch"
        errors = list(jsonschema.Draft202012Validator(schemas[kind]).iter_errors(data))
        assert not errors, (path.name, kind, [e.message for e in errors][:3])


def test_the_schema_takes_what_validate_takes(cli: Any, write: Any) -> None:
    # `catalogs` and `rates` (the other spellings of catalog and exchange_rates) load and
    # meet the schema; `class_of` (set by request classes) is refused by both
    import jsonschema

    from planner.domain.load import load_scenario
    from tests.conftest import minimal_scenario

    scenario = json.loads(cli("schema", "scenario").stdout)
    data = minimal_scenario()
    data["catalogs"] = [data.pop("catalog")]
    data["rates"] = {"USD": {"CNY": 7.1, "as_of": "2026-09-24"}}
    load_scenario(write(data))
    assert not list(jsonschema.Draft202012Validator(scenario).iter_errors(data))
    del data["catalogs"]  # neither spelling: refused by both
    assert list(jsonschema.Draft202012Validator(scenario).iter_errors(data))
    data["catalog"] = "jizhisuan-2026-09"
    serve = next(w for w in data["workloads"] if w["kind"] == "serve")
    serve["class_of"] = "other"
    assert list(jsonschema.Draft202012Validator(scenario).iter_errors(data))


def test_the_schema_states_the_input_limits_and_exponents_yaml_reads_as_text(
    cli: Any, write: Any
) -> None:
    # max_cards past its limit is refused by validate and by the schema (the schema had no
    # limits); tokens written 2.0e9, which YAML 1.1 reads as text, are taken by both
    import jsonschema

    from planner.domain.load import load_scenario
    from tests.conftest import minimal_scenario

    validator = jsonschema.Draft202012Validator(json.loads(cli("schema", "scenario").stdout))
    data = minimal_scenario()
    train = next(w for w in data["workloads"] if w["kind"] == "train")
    train["tokens"] = "2.0e9"
    load_scenario(write(data))
    assert not list(validator.iter_errors(data))
    train["max_cards"] = 20000
    with pytest.raises(LoadError):
        load_scenario(write(data))
    assert list(validator.iter_errors(data))
    train["max_cards"] = 10000  # the limit itself: taken by both
    load_scenario(write(data))
    assert not list(validator.iter_errors(data))


def test_schema_describes_the_files(cli: Any) -> None:
    result = cli("schema")
    assert result.exit_code == 0
    schemas = json.loads(result.stdout)
    assert set(schemas) == {"scenario", "catalog", "patch", "model", "cards", "plan"}
    breakdown = schemas["plan"]["$defs"]["CostBreakdown"]
    assert set(breakdown["required"]) == {"total", "paid", "reported", "by_month"}
    assert {"name", "horizon", "workloads"} <= set(schemas["scenario"]["required"])
    assert "required" not in json.dumps(schemas["patch"])  # a patch names only what changes
    one = json.loads(cli("schema", "catalog").stdout)
    assert one == schemas["catalog"]


def test_hours_of_the_day_are_read_in_either_form() -> None:
    # curves wrote '08-20' and windows '08:00-20:00', each refusing the other's form: both
    # forms are read in both places, whole hours only
    from planner.domain.values import _parse_day_curve, parse_window

    assert str(parse_window("09-18")) == str(parse_window("09:00-18:00")) == "09:00-18:00"
    by_colon = _parse_day_curve({"00:00-08:00": 1, "08:00-24:00": 2}, "c")
    assert by_colon == _parse_day_curve({"00-08": 1, "08-24": 2}, "c")
    with pytest.raises(ValueError, match="whole hours"):
        _parse_day_curve({"00:30-08:00": 1, "08-24": 2}, "c")
    with pytest.raises(ValueError, match="whole hours"):
        parse_window("09:30-18:00")
