"""Safe YAML: plain data only, bounded expansion, every error located."""

from __future__ import annotations

from typing import Any

import pytest

from planner.domain import yaml_source
from planner.domain.errors import LoadError
from planner.domain.yaml_source import MAX_NODES, parse_yaml


def issues_of(text: str) -> list[str]:
    with pytest.raises(LoadError) as caught:
        parse_yaml(text, "f.yaml")
    return [str(i) for i in caught.value.issues]


def test_python_object_tag_is_refused_with_its_line() -> None:
    [message] = issues_of("name: x\nrun: !!python/object/apply:os.system ['echo pwned']\n")
    assert message.startswith("f.yaml:2:")
    assert "tag:yaml.org,2002:python/object/apply:os.system is not allowed" in message


def test_custom_local_tag_is_refused() -> None:
    [message] = issues_of("a: !secret 1\n")
    assert "!secret is not allowed" in message


def count_built_values(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the values the safe loader builds (one call of `_Builder.build` each): the
    work of loading, observed without a clock."""
    built = [0]
    build = yaml_source._Builder.build

    def counting(self: Any, *args: Any) -> Any:
        built[0] += 1
        if built[0] > MAX_NODES + 1:  # an unbounded loader fails here, not after hours
            raise AssertionError(f"the loader built more than {MAX_NODES + 1:,} values")
        return build(self, *args)

    monkeypatch.setattr(yaml_source._Builder, "build", counting)
    return built


def test_alias_bomb_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nine levels of nine aliases expand to 9**9 ≈ 387 million strings; the loader stops
    # after MAX_NODES of them (the one over the limit is counted, then refused).
    lines = ['a0: &a0 "lol"']
    for level in range(1, 10):
        prev = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([prev] * 9)}]")
    built = count_built_values(monkeypatch)
    [message] = issues_of("\n".join(lines) + "\n")
    assert f"more than {MAX_NODES:,} values" in message
    assert MAX_NODES < built[0] <= MAX_NODES + 1


def test_small_aliases_and_merge_keys_are_plain_data() -> None:
    source = parse_yaml("base: &b {price: 1, stock: 2}\nother:\n  <<: *b\n  stock: 3\n", "f")
    assert source.data == {"base": {"price": 1, "stock": 2}, "other": {"price": 1, "stock": 3}}


def test_recursive_alias_is_refused() -> None:
    [message] = issues_of("a: &x [1, *x]\n")
    assert "contains it" in message


def test_broken_yaml_names_line_and_column() -> None:
    [message] = issues_of("name: x\nworkloads:\n  - name: a\n   kind: train\n")
    assert message.startswith("f.yaml:4:")
    assert "invalid YAML" in message


def test_duplicate_key_is_an_error() -> None:
    [message] = issues_of("name: a\nname: b\n")
    assert message.startswith("f.yaml:2:1: name:")
    assert "given twice" in message


def test_times_of_day_stay_strings() -> None:
    # YAML 1.1 would read 19:00 as the sexagesimal integer 1140.
    assert parse_yaml("at: 19:00\n", "f").data == {"at": "19:00"}


def test_locations_are_recorded_per_path() -> None:
    source = parse_yaml("a:\n  b:\n    - 1\n    - {c: 2}\n", "f")
    assert source.locate(("a", "b", 1, "c")) == (4, 8)
    assert source.locate(("a", "b", 0)) == (3, 7)
    assert source.locate(("a", "missing")) == (1, 1)


def test_empty_file_is_an_error() -> None:
    assert "empty" in issues_of("")[0]
