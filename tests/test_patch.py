"""Patches (docs/scenarios.md): deep-merged over a scenario, errors located in the file
that wrote the value, and a patched scenario equal to the merged file written by hand."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from planner.domain.errors import LoadError
from planner.domain.load import load_scenario
from planner.domain.patch import apply_patch
from planner.domain.yaml_source import parse_yaml
from tests.conftest import LLAMA31_8B_CONFIG, minimal_scenario

PATCH = """\
# raise the stock, drop spot, move one deadline, delete the reserved cards
offers:
  - id: jz-h200
    hourly: {stock: 32}
    spot: null
workloads:
  - name: ft
    deadline: 2026-07-25
  - name: devs
    delete: true
"""


def _issues(base: Path, *patches: Path) -> list[str]:
    with pytest.raises(LoadError) as caught:
        load_scenario(base, patches)
    return [str(i) for i in caught.value.issues]


def test_patch_merges_by_name_and_id_and_null_deletes_a_catalog_mode(write) -> None:
    base = write(minimal_scenario())
    variant = load_scenario(base, [write(PATCH, "patch.yaml")])
    h200 = variant.offers["jz-h200"]
    assert h200.hourly is not None and h200.hourly.stock == 32
    assert h200.spot is None  # deleted from the catalog's offer, not just from the patch
    assert h200.monthly is not None  # the rest of the catalog's offer is kept
    assert [w.name for w in variant.spec.workloads] == ["ft", "chat"]
    assert str(variant.workload("ft").deadline) == "2026-07-25"
    original = load_scenario(base)
    assert original.offers["jz-h200"].spot is not None  # the base scenario is unchanged


def test_patched_equals_the_merged_file_written_by_hand(write) -> None:
    data = minimal_scenario()
    base = write(data)
    merged = copy.deepcopy(data)
    merged["offers"] = [{"id": "jz-h200", "hourly": {"stock": 32}, "spot": None}]
    merged["workloads"][0]["deadline"] = "2026-07-25"
    del merged["workloads"][2]
    by_hand = load_scenario(write(merged, "merged.yaml"))
    variant = load_scenario(base, [write(PATCH, "patch.yaml")])
    assert variant.spec == by_hand.spec
    assert variant.catalogs == by_hand.catalogs


def test_an_error_in_the_patch_is_located_in_the_patch_file(write) -> None:
    base = write(minimal_scenario())
    patch = write(PATCH.replace("deadline: 2026-07-25", "max_cards: nope"), "patch.yaml")
    (issue,) = _issues(base, patch)
    # line 8, column 5 of the patch; the field path as written in the patch
    assert issue.startswith(f"{patch}:8:5: workloads[0].max_cards:"), issue


def test_an_error_the_patch_causes_in_base_values_is_located_where_each_was_written(
    write,
) -> None:
    base = write(minimal_scenario())
    # the patch moves the deadline before the earliest start the base file wrote
    patch = write("workloads:\n  - name: ft\n    deadline: 2026-07-01\n", "patch.yaml")
    issues = _issues(base, patch)
    assert any(i.startswith(f"{patch}:3:5: workloads[0].deadline") for i in issues), issues


def test_a_later_patch_wins_and_blames_its_own_file(write) -> None:
    base = write(minimal_scenario())
    first = write("workloads:\n  - name: ft\n    max_cards: 2\n", "first.yaml")
    second = write("workloads:\n  - name: ft\n    max_cards: 0\n", "second.yaml")
    (issue,) = _issues(base, first, second)
    assert issue.startswith(f"{second}:3:5: workloads[0].max_cards"), issue
    variant = load_scenario(base, [second, first])
    assert variant.workload("ft").max_cards == 2


def test_lists_that_are_not_named_replace(write) -> None:
    data = minimal_scenario()
    commitment = {"offer": "jz-h200", "mode": "monthly", "units": 1, "start": "2026-07-01"}
    data["commitments"] = [commitment]
    base = write(data)
    other = {**commitment, "units": 2}
    patch = write({"commitments": [other]}, "patch.yaml")
    (kept,) = load_scenario(base, [patch]).spec.commitments
    assert kept.units == 2


def test_a_relative_path_in_a_patch_resolves_from_the_patch_folder(write, tmp_path) -> None:
    import json

    base = write(minimal_scenario())
    (tmp_path / "what-if" / "llama").mkdir(parents=True)
    (tmp_path / "what-if" / "llama" / "config.json").write_text(json.dumps(LLAMA31_8B_CONFIG))
    patch = write("workloads:\n  - name: chat\n    model: llama/config.json\n", "what-if/p.yaml")
    variant = load_scenario(base, [patch])
    assert variant.models["chat"].layers == LLAMA31_8B_CONFIG["num_hidden_layers"]
    # the same text in the scenario's own folder names a file that is not there
    issues = _issues(base, write(patch.read_text(), "p2.yaml"))
    assert any("not found" in i for i in issues), issues


def test_a_patch_that_is_not_a_mapping_is_refused(write) -> None:
    base = write(minimal_scenario())
    (issue,) = _issues(base, write("- 1\n- 2\n", "patch.yaml"))
    assert "expected a patch" in issue


def test_merging_an_already_merged_source_keeps_every_origin() -> None:
    base = parse_yaml("a: 1\nb: {c: 2, d: 3}\n", "base.yaml")
    one = apply_patch(base, parse_yaml("b: {c: 5}\n", "one.yaml"))
    two = apply_patch(one, parse_yaml("b: {d: null}\ne: 7\n", "two.yaml"))
    assert two.data == {"a": 1, "b": {"c": 5}, "e": 7}
    assert str(two.issue(("a",), "m")).startswith("base.yaml:1:1: a")
    assert str(two.issue(("b", "c"), "m")).startswith("one.yaml:1:5: b.c")
    assert str(two.issue(("e",), "m")).startswith("two.yaml:2:1: e")


def test_a_patch_deletes_a_catalog_offer_and_the_scenarios_change_to_it(write) -> None:
    # `{id: X, delete: true}` under offers removes the catalog's offer X (it was refused as
    # an unknown field), the scenario's own change to X with it; an id no catalog has is
    # named with a suggestion
    data = minimal_scenario()
    data["offers"] = [{"id": "jz-h100", "hourly": {"stock": 3}}]
    base = write(data)
    assert "jz-h100" in load_scenario(base).offers
    gone = write("offers:\n  - id: jz-h100\n    delete: true\n", "gone.yaml")
    variant = load_scenario(base, [gone])
    assert "jz-h100" not in variant.offers and "jz-h200" in variant.offers
    typo = write("offers:\n  - id: jz-h1000\n    delete: true\n", "typo.yaml")
    found = _issues(base, typo)
    assert any("no offer 'jz-h1000' to delete" in m and "did you mean" in m for m in found)
    assert any(m.startswith(str(typo)) for m in found), found


def test_a_patch_deleting_a_workload_the_scenario_lacks_is_refused(write) -> None:
    # a misspelt name deleted nothing, silently (the what-if then said "it still works"):
    # refused at the name in the patch, with a suggestion, as --drop and an offer's delete
    base = write(minimal_scenario())
    typo = write("workloads:\n  - name: devz\n    delete: true\n", "typo.yaml")
    (issue,) = _issues(base, typo)
    assert issue.startswith(f"{typo}:2:5: workloads[0].name: no workload 'devz' to delete")
    assert "did you mean devs?" in issue
    # deleted by an earlier patch: nothing left to delete
    gone = write("workloads:\n  - name: devs\n    delete: true\n", "gone.yaml")
    (issue,) = _issues(base, gone, gone)
    assert "no workload 'devs' to delete" in issue


def _with_eval(write) -> Path:
    """minimal_scenario and a train job `ft-eval` that runs after ft."""
    data = minimal_scenario()
    ft = data["workloads"][0]
    data["workloads"].append({**ft, "name": "ft-eval", "method": "eval", "after": ["ft"]})
    return write(data)


def test_a_patch_deleting_a_job_leaves_every_after_list_as_drop_does(write) -> None:
    # the job that waited for ft no longer waits (it was refused with "unknown workload
    # 'ft'; did you mean ft-eval?", while --drop ft rewrote the list): the same variant
    from planner.cli.variant import Change

    base = _with_eval(write)
    gone = write("workloads:\n  - name: ft\n    delete: true\n", "gone.yaml")
    variant = load_scenario(base, [gone])
    assert [w.name for w in variant.spec.workloads] == ["chat", "devs", "ft-eval"]
    assert variant.workload("ft-eval").after == ()  # type: ignore[union-attr]
    dropped = Change.of(None, drop=["ft"]).apply(base, load_scenario(base))
    assert dropped.spec == variant.spec


def test_an_unknown_after_never_suggests_the_job_whose_list_it_is(write) -> None:
    base = _with_eval(write)
    typo = write("workloads:\n  - name: ft-eval\n    after: [ft-evel]\n", "typo.yaml")
    (issue,) = _issues(base, typo)
    assert f"{typo}:3:13: workloads[0].after[0]: unknown workload 'ft-evel'" in issue, issue
    assert "ft-eval" not in issue.removeprefix(str(typo)).split("'ft-evel'")[1]
