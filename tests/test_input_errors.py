"""Bad inputs: one clear message each, with file, line and field; exit 1; never a traceback."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.domain import yaml_source
from planner.domain.errors import LoadError
from planner.domain.load import load_scenario
from planner.domain.values import WEEKDAYS
from planner.domain.workload import TrainWorkload
from tests.conftest import REPO, minimal_scenario
from tests.test_yaml_safety import count_built_values


def problems(path: Path) -> list[str]:
    with pytest.raises(LoadError) as caught:
        load_scenario(path)
    return [str(i) for i in caught.value.issues]


def with_change(change: dict[str, Any], workload: int | None = None) -> dict[str, Any]:
    data = minimal_scenario()
    target = data if workload is None else data["workloads"][workload]
    target.update(copy.deepcopy(change))
    return data


def assert_cli_rejects(cli: Any, path: Path, *expected: str) -> str:
    result = cli("validate", path)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    for text in expected:
        assert text in result.stderr
    return str(result.stderr)


def test_minimal_scenario_is_valid(write: Any, cli: Any) -> None:
    path = write(minimal_scenario())
    result = cli("validate", path)
    assert result.exit_code == 0, result.output
    assert "tiny" in result.stdout and "train       1: ft" in result.stdout
    # offers and their modes are counted apart (an offer may sell several modes)
    assert "selling by mode (an offer may sell several): hourly" in result.stdout


def test_a_one_day_horizon_is_said_in_the_singular(write: Any, cli: Any) -> None:
    data = minimal_scenario()
    data["horizon"] = {"start": "2026-07-01", "end": "2026-07-02"}
    data["workloads"] = [data["workloads"][2] | {"start": "2026-07-01", "end": "2026-07-02"}]
    result = cli("validate", write(data))
    assert result.exit_code == 0, result.output
    assert "(end exclusive): 1 day, 24 hours, Asia/Shanghai" in result.stdout


@pytest.mark.parametrize(
    ("billing", "expected"),
    [
        # pydantic's "got a number with a fractional part" was followed by ", got 1.5"
        ({"stock": 1.5}, "hourly.stock: Input should be a valid integer, got 1.5"),
        # a value that pydantic's wording happens to contain is said too, as every other is
        ({"increment_hours": 0}, "hourly.increment_hours: Input should be greater than 0, got 0"),
        ({"min_hours": -4}, "hourly.min_hours: Input should be greater than 0, got -4"),
    ],
)
def test_a_bad_billing_figure_is_said_with_its_value_once(
    write: Any, billing: dict[str, Any], expected: str
) -> None:
    offer = {"id": "p", "card": "a100-80g", "hourly": {"price": 10, **billing}}
    write({"name": "one", "currency": "CNY", "source": "tests", "offers": [offer]}, "one.yaml")
    [message] = problems(write(with_change({"catalog": "one.yaml"})))
    assert message.endswith(f"offers[0].{expected}"), message


def test_broken_yaml(write: Any, cli: Any) -> None:
    path = write("name: x\nworkloads:\n  - name: a\n   kind: train\n")
    assert_cli_rejects(cli, path, f"{path}:4:", "invalid YAML")


def test_unknown_card_with_near_miss(write: Any, cli: Any) -> None:
    data = minimal_scenario()
    data["workloads"][2]["card"] = "rtx4090-48"
    path = write(data)
    text = assert_cli_rejects(cli, path, "workloads[2].card", "did you mean rtx4090-48g?")
    line = yaml.safe_dump(data, sort_keys=False).splitlines().index("  card: rtx4090-48") + 1
    assert f"{path}:{line}:" in text


def test_unknown_card_in_an_offer_points_at_the_scenario_line(write: Any) -> None:
    data = minimal_scenario()
    data["offers"] = [{"id": "jz-h200", "card": "h200-141"}]
    [message] = problems(write(data))
    assert "offers[0].card" in message and "did you mean h200-141g?" in message


def test_negative_tokens(write: Any, cli: Any) -> None:
    path = write(with_change({"tokens": -5}, workload=0))
    assert_cli_rejects(cli, path, "workloads[0].tokens", "greater than or equal to 1")


def test_deadline_before_start(write: Any, cli: Any) -> None:
    path = write(with_change({"deadline": "2026-07-01"}, workload=0))
    assert_cli_rejects(
        cli, path, "workloads[0].deadline", "deadline 2026-07-01 is not after earliest_start"
    )


def test_cycle_in_after_names_the_cycle(write: Any, cli: Any) -> None:
    data = minimal_scenario()
    first = data["workloads"][0]
    data["workloads"] += [
        {**first, "name": "a", "after": ["c"]},
        {**first, "name": "b", "after": ["a"]},
        {**first, "name": "c", "after": ["b"]},
    ]
    text = assert_cli_rejects(cli, write(data), "form a cycle")
    cycle = text.split("cycle: ")[1].split("\n")[0].strip()
    names = cycle.split(" → ")
    assert names[0] == names[-1] and sorted(names[:-1]) == ["a", "b", "c"]


def test_an_unknown_after_is_named_with_the_schema_errors(write: Any) -> None:
    # one run of validate names both: the bad field and the misspelt dependency
    data = minimal_scenario()
    first = data["workloads"][0]
    data["workloads"] += [{**first, "name": "eval", "after": ["ftt"], "tokens": -5}]
    found = problems(write(data))
    assert any("workloads[3].tokens" in m for m in found), found
    assert any("workloads[3].after[0]" in m and "unknown workload 'ftt'" in m for m in found)
    assert any("did you mean ft?" in m for m in found), found
    # and a name given twice, a reserved card no offer rents: the same run
    data["workloads"][3]["name"] = "ft"
    data["workloads"][2]["card"] = "rtx4090-48"
    found = problems(write(data))
    assert any("workloads[3].name: name 'ft' is used by workloads[0] too" in m for m in found)
    assert any("workloads[2].card: no offer rents card 'rtx4090-48'" in m for m in found)


def test_an_after_on_a_service_and_a_cycle_are_named_with_the_schema_errors(write: Any) -> None:
    # a field the schema refuses, an `after` naming the reserve (workloads[2]) and a cycle:
    # one run of validate names all three (the last two came only after a first fix)
    data = minimal_scenario()
    first = data["workloads"][0]
    reserve_name = data["workloads"][2]["name"]
    data["workloads"] += [
        {**first, "name": "a", "after": ["b", reserve_name], "tokens": -5},
        {**first, "name": "b", "after": ["a"]},
    ]
    found = problems(write(data))
    assert any("workloads[3].tokens" in m for m in found), found
    assert any("workloads[3].after[1]" in m and "is a reserve workload" in m for m in found), found
    assert any("form a cycle: " in m for m in found), found


def test_a_cycle_is_said_where_it_closes_when_a_name_is_given_twice(write: Any) -> None:
    data = minimal_scenario()
    first = data["workloads"][0]
    data["workloads"] = [
        {**first, "name": "a"},
        {**first, "name": "a", "after": ["b"]},
        {**first, "name": "b", "after": ["a"]},
    ]
    found = problems(write(data))
    assert any("workloads[1].after: the after: lists form a cycle" in m for m in found), found


def test_commitments_over_a_stock_are_refused_at_the_one_that_passes_it(write: Any) -> None:
    # jz-h200 sells 8 monthly units at once: 6 and then 3 more from the 10th are 9 held
    data = minimal_scenario()
    data["commitments"] = [
        {"name": "a", "offer": "jz-h200", "mode": "monthly", "units": 6, "start": "2026-07-01"},
        {"name": "b", "offer": "jz-h200", "mode": "monthly", "units": 3, "start": "2026-07-10"},
    ]
    [message] = problems(write(data))
    assert (
        "commitments[1].units: commitments hold 9 units of jz-h200 at once from "
        "2026-07-10 00:00, more than its monthly stock, 8" in message
    )
    data["commitments"][1]["units"] = 2  # 8: as many as it sells
    load_scenario(write(data))


def test_a_value_no_member_of_a_union_takes_is_one_problem_at_its_field(write: Any) -> None:
    # memory_margin is a fraction or "band"/"-band": one problem, both reasons, no tags of
    # the schema's internals (constrained-float, literal[...]) in the field's path
    [message] = problems(write(with_change({"memory_margin": 2})))
    assert ": memory_margin: Input should be less than or equal to 1, got 2; or Input " in message
    assert "'band' or '-band'" in message and "constrained" not in message


def test_a_patch_that_misspells_a_workloads_name_is_told_the_name(
    write: Any, tmp_path: Path
) -> None:
    base = write(minimal_scenario())
    patch = tmp_path / "patch.yaml"
    patch.write_text(yaml.safe_dump({"workloads": [{"name": "fft", "tokens": 5e8}]}))
    with pytest.raises(LoadError) as caught:
        load_scenario(base, [patch])
    said = [str(i) for i in caught.value.issues]
    assert any(
        "patch.yaml" in m
        and "no workload is named 'fft' (a new name adds a workload); did you mean ft?" in m
        for m in said
    ), said


@pytest.mark.parametrize("name", [5, [], ["a"], {"a": 1}])
def test_a_name_that_is_not_text_is_a_schema_error_not_a_crash(write: Any, name: Any) -> None:
    data = minimal_scenario()
    data["workloads"][0]["name"] = name
    data["workloads"][0]["tokens"] = -5  # with another schema error, as a first try has
    found = problems(write(data))
    assert any("workloads[0].name" in m for m in found), found


def test_a_catalog_listed_twice_is_refused(write: Any) -> None:
    [message] = problems(write(with_change({"catalog": ["jizhisuan-2026-09"] * 2})))
    assert "catalog[1]: catalog 'jizhisuan-2026-09' is listed twice" in message


def test_fsdp_in_a_file_points_at_zero_3(write: Any) -> None:
    [message] = problems(write(with_change({"fsdp": True}, workload=0)))
    assert (
        "workloads[0].fsdp: unknown field 'fsdp'; FSDP's full shard is written zero: 3" in message
    )


def test_python_object_tag(write: Any, cli: Any) -> None:
    path = write("name: !!python/object/apply:os.system ['touch /tmp/pwned']\n")
    assert_cli_rejects(cli, path, f"{path}:1:", "is not allowed")
    assert not Path("/tmp/pwned").exists()


def test_alias_bomb_returns_fast(write: Any, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # 9**9 strings if expanded; the loader builds at most MAX_NODES values (counted by
    # wrapping its builder, not timed: a clock fails on a loaded machine), then refuses.
    lines = ['a0: &a0 "lol"'] + [
        f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)
    ]
    path = write("\n".join(lines) + "\n")
    built = count_built_values(monkeypatch)
    assert_cli_rejects(cli, path, "alias bomb")
    assert yaml_source.MAX_NODES < built[0] <= yaml_source.MAX_NODES + 1


def test_all_problems_of_a_file_are_reported_at_once(write: Any) -> None:
    data = minimal_scenario()
    data["workloads"][0].update(tokens=-1, method="lorra", deadline="2026-06-30")
    data["workloads"][1]["concurrency"] = {"00-08": 1}
    data["workloads"][2]["cards"] = 0
    data["timezone"] = "Asia/Shanghia"
    found = problems(write(data))
    assert len(found) == 6, found
    joined = "\n".join(found)
    for text in [
        "workloads[0].tokens",
        "workloads[0].method: expected one of full, lora, qlora, eval, got 'lorra'; "
        "did you mean lora?",
        "workloads[0].deadline",
        "workloads[1].concurrency",
        "workloads[2].cards",
        "timezone: unknown timezone 'Asia/Shanghia'; did you mean Asia/Shanghai?",
    ]:
        assert text in joined


def test_a_misspelt_required_field_is_one_problem(write: Any) -> None:
    data = minimal_scenario()
    data["workloads"][0]["methd"] = data["workloads"][0].pop("method")
    found = problems(write(data))
    assert len(found) == 1, found
    assert (
        "workloads[0].methd: unknown field 'methd'; did you mean method? (method is required)"
        in found[0]
    )
    data["workloads"][0]["method"] = "lora"  # both written: the unknown one alone is wrong
    [only] = problems(write(data))
    assert only.endswith("unknown field 'methd'; did you mean method?")


def test_a_date_that_does_not_exist_hides_no_other_problem(write: Any, tmp_path: Path) -> None:
    text = yaml.safe_dump(minimal_scenario(), sort_keys=False)
    text = text.replace("timezone: Asia/Shanghai", "timezone: Asia/Shanghia")
    text = text.replace("kind: train", "kind: train\n  tokenz: 5", 1)
    assert "horizon:\n  start: '2026-07-01'" in text
    text = text.replace("horizon:\n  start: '2026-07-01'", "horizon:\n  start: 2026-07-42")
    path = tmp_path / "dates.yaml"
    path.write_text(text)
    found = problems(path)
    joined = "\n".join(found)
    assert len(found) == 3, found
    assert "dates.yaml:5:3: horizon.start:" in joined and "got '2026-07-42'" in joined
    assert "timezone: unknown timezone 'Asia/Shanghia'" in joined
    assert "unknown field 'tokenz'" in joined


@pytest.mark.parametrize(
    ("change", "workload", "expected"),
    [
        ({"tokenz": 5}, 0, "workloads[0].tokenz: unknown field 'tokenz'; did you mean tokens?"),
        (
            {"tokens": "lots"},
            0,
            "workloads[0].tokens: Input should be a valid number, "
            "unable to parse string as a number, got 'lots'",
        ),
        ({"kind": "trian"}, 0, "expected kind one of train, serve, reserve, got 'trian'"),
        ({"model": "llama-3-8b"}, 1, "unknown model 'llama-3-8b'; did you mean llama-3.1-8b?"),
        # ft's own list: ft is never suggested (it cannot wait for itself), nor is a service
        ({"after": ["fx"]}, 0, "after[0]: unknown workload 'fx'"),
        ({"after": ["chat"]}, 0, "'chat' is a serve workload"),
        ({"deadline": "2026-09-01"}, 0, "lies outside the horizon"),
        ({"daily_hours": "08:30-22:00"}, 0, "whole hours"),
        ({"checkpoint_every": "30"}, 0, "expected a duration such as 30m"),
        (
            {"requests_per_s": 3},
            1,
            "workloads[1]: give exactly one of concurrency or requests_per_s",
        ),
        (  # a misspelt day group is named, not a valid one blamed as a bad hour range
            {"concurrency": {"weekdays": 20, "weekned": 10}},
            1,
            "workloads[1].concurrency: unknown day group 'weekned'; did you mean weekend?",
        ),
        (
            {"concurrency": {"mon": 20, "tues": 10, **dict.fromkeys(WEEKDAYS[2:], 5)}},
            1,
            "workloads[1].concurrency: unknown day group 'tues'; did you mean tue?",
        ),
        ({"end": "2026-07-01"}, 1, "end 2026-07-01 is not after start"),
        ({"precision": ["fp8", "int3"]}, 1, "workloads[1].precision[1]"),
        ({"card": None, "min_memory_gib": 500}, 2, "no offered card has 500.0 GiB"),
        ({"catalog": "jizhisuan-2026"}, None, "did you mean jizhisuan-2026-09?"),
        ({"currency": "USD"}, None, "scenario currency USD differs from catalog"),
        ({"horizon": {"start": "2026-08-01", "end": "2026-07-01"}}, None, "horizon end"),
        (
            {
                "commitments": [
                    {"offer": "jz-h200", "mode": "weekly", "units": 1, "start": "2026-07-01"}
                ]
            },
            None,
            "does not sell weekly",
        ),
    ],
)
def test_each_bad_input_has_a_precise_message(
    write: Any, change: dict[str, Any], workload: int | None, expected: str
) -> None:
    data = with_change(change, workload)
    if workload == 2 and change.get("card", "x") is None:
        del data["workloads"][2]["card"]
    found = problems(write(data))
    assert any(expected in message for message in found), found


def test_a_bare_number_is_a_duration_only_where_the_field_names_its_unit(write: Any) -> None:
    # docs/scenarios.md ("Conventions") said every bare number is refused as ambiguous,
    # while the *_minutes fields take one in minutes: it now says which do, as they behave
    conventions = (REPO / "docs" / "scenarios.md").read_text(encoding="utf-8")
    for said in ("(`checkpoint_every: 30`)", "`setup_minutes: 30`", "`restart_minutes: 10`"):
        assert said in conventions
    data = with_change({"setup_minutes": 30}, workload=0)
    data["offers"] = [{"id": "jz-h200", "spot": {"price": 5, "restart_minutes": 10}}]
    s = load_scenario(write(data))
    ft, spot = s.workload("ft"), s.offers["jz-h200"].spot
    assert isinstance(ft, TrainWorkload) and spot is not None
    assert (ft.setup_minutes, spot.restart_minutes) == (30, 10)
    refused = problems(write(with_change({"checkpoint_every": 30}, workload=0)))
    assert any("checkpoint_every: expected a duration such as 30m" in m for m in refused)


def test_a_misspelt_model_is_reported_with_the_other_problems(write: Any) -> None:
    data = minimal_scenario()
    data["workloads"][0].update(model="llama2-13b", precision="bf61", micro_bacth=2)
    found = "\n".join(problems(write(data)))
    assert "unknown model 'llama2-13b'; did you mean llama-2-13b?" in found
    assert "workloads[0].precision" in found and "micro_bacth" in found


def test_duplicate_workload_names(write: Any) -> None:
    data = minimal_scenario()
    data["workloads"].append({**data["workloads"][0]})
    [message] = problems(write(data))
    assert "workloads[3].name: name 'ft' is used by workloads[0] too" in message


def test_json_errors_are_machine_readable(write: Any, cli: Any) -> None:
    path = write(with_change({"tokens": -5}, workload=0))
    result = cli("validate", path, "--json", "-")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["valid"] is False
    [error] = payload["errors"]
    assert error["field"] == "workloads[0].tokens" and error["line"] > 1


def test_a_missing_catalog_file_is_located_in_the_scenario(cli: Any, tmp_path: Path) -> None:
    # the scenario's line and field that name it, and the path it resolved to (relative to
    # the scenario's folder), not only the path
    text = (REPO / "scenarios" / "q3.yaml").read_text()
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("catalog:"))
    lines[at] = "catalog: prices/missing.yaml"
    path = tmp_path / "q.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = cli("validate", path)
    assert result.exit_code == 1
    where = f"{path}:{at + 1}:1: catalog: catalog file"
    assert where in result.stderr
    assert repr(str(tmp_path / "prices" / "missing.yaml")) + " not found" in result.stderr


@pytest.mark.parametrize(
    ("offers", "expected"),
    [
        (None, "1:1: offers: required field is missing: a catalog lists at least one offer"),
        ([], "4:1: offers: a catalog lists at least one offer; this lists none"),
        (["a100"], "4:10: offers[0]: expected an offer (a mapping with an id), got 'a100'"),
    ],
)
def test_a_catalog_that_lists_no_offer_is_refused_at_its_offers(
    write: Any, cli: Any, offers: list[Any] | None, expected: str
) -> None:
    # it passed as "offers 0 of 0 card types", and plan solve then found no card for
    # anything; every catalog file lists offers, also beside another catalog that does
    header = "name: empty\ncurrency: CNY\nsource: nothing\n"
    listed = "" if offers is None else f"offers: {json.dumps(offers)}\n"
    catalog = write(header + listed, "empty.yaml")
    path = write(with_change({"catalog": ["jizhisuan-2026-09", "empty.yaml"]}))
    assert_cli_rejects(cli, path, f"{catalog}:{expected}")


def test_an_offer_with_a_bad_price_and_an_unknown_card_gets_both_said(
    cli: Any, tmp_path: Path
) -> None:
    # every problem at once: the unknown card was said only once the price was mended
    catalog = tmp_path / "prices.yaml"
    catalog.write_text(
        "name: mine\ncurrency: CNY\ndate: 2026-09-24\nsource: a test\noffers:\n"
        "  - id: x\n    card: a100-80gb\n    unit_cards: 1\n"
        "    hourly: {price: -10, stock: 4}\n"
    )
    text = (REPO / "scenarios" / "q3.yaml").read_text()
    lines = [
        "catalog: prices.yaml" if line.startswith("catalog:") else line
        for line in text.splitlines()
    ]
    path = tmp_path / "q.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = cli("validate", path)
    assert result.exit_code == 1
    said = " ".join(result.stderr.split())
    assert f"{catalog}:9:14: offers[0].hourly.price" in said
    assert (
        f"{catalog}:7:5: offers[0].card: unknown card 'a100-80gb'; did you mean a100-80g?" in said
    )


def test_missing_file(cli: Any, tmp_path: Path) -> None:
    result = cli("validate", tmp_path / "nope.yaml")
    assert result.exit_code == 1 and "file not found" in result.stderr


def test_an_offer_id_given_twice_is_said_with_each_offers_own_problems(write: Any) -> None:
    # Two offers `p` in one catalog: the second was merged over the first before either was
    # checked, so the first's negative price and unknown card vanished behind the second's
    # good ones until the duplicate was fixed. Now all of them at once, each at its line.
    catalog = {
        "name": "twice",
        "currency": "CNY",
        "date": "2026-07-01",
        "source": "tests",
        "offers": [
            {"id": "p", "card": "a100-80gg", "hourly": {"price": -10, "increment_hours": 0}},
            {"id": "p", "card": "a100-80g", "hourly": {"price": 10}},
        ],
    }
    write(catalog, "twice.yaml")
    data = minimal_scenario()
    data["catalog"] = "twice.yaml"
    found = problems(write(data))
    for expected in (
        "offers[1].id: id 'p' is used by offers[0] too",
        "offers[0].hourly.price: Input should be greater than or equal to 0",
        "offers[0].hourly.increment_hours: Input should be greater than 0, got 0",
        "offers[0].card: unknown card 'a100-80gg'",
    ):
        assert any(expected in m for m in found), (expected, found)


@pytest.mark.parametrize(
    ("where", "name", "said"),
    [
        ("workloads", "微调 job", "letters (a-z, A-Z), digits, '.', '_' and '-'"),
        ("scenario", "Q3 plan", "letters (a-z, A-Z), digits, '.', '_' and '-'"),
    ],
)
def test_a_name_the_pattern_refuses_says_what_names_are_and_what_was_given(
    write: Any, where: str, name: str, said: str
) -> None:
    data = minimal_scenario()
    if where == "workloads":
        data["workloads"][0]["name"] = name
    else:
        data["name"] = name
    found = problems(write(data))
    assert any(said in m and f"got {name!r}" in m for m in found), found
    assert not any("should match" in m for m in found), found  # no raw regex


def test_an_after_naming_a_workload_of_misspelt_kind_is_not_blamed_on_its_kind(
    write: Any,
) -> None:
    # `kind: trian` is the schema's to name; an `after` naming that workload is not told it
    # names "a trian workload", and the misspelt one's own `after` is still checked
    data = minimal_scenario()
    first = data["workloads"][0]
    data["workloads"] += [
        {**first, "name": "a", "kind": "trian", "after": ["nowhere"]},
        {**first, "name": "b", "after": ["a"]},
    ]
    found = problems(write(data))
    assert any("workloads[3]: expected kind one of" in m for m in found), found
    assert not any("trian workload" in m for m in found), found
    assert any("workloads[3].after[0]" in m and "unknown workload 'nowhere'" in m for m in found)
