"""The scale benchmark's generator (benchmarks/generate.py): each quarter it draws passes
`plan validate`, names every workload once, chains `after` without a cycle, keeps q3's mix,
and a seed always draws the same quarter."""

from __future__ import annotations

import importlib.util
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import networkx as nx
import pytest

GENERATOR = Path(__file__).resolve().parent.parent / "benchmarks" / "generate.py"
CASES = [(n, seed) for n in (10, 30) for seed in (0, 1, 2)]


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchmark_generate", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


@pytest.fixture(scope="module")
def drawn() -> Callable[[int, int], dict[str, Any]]:
    """generate(n, seed), drawn once per module (a 30-workload quarter takes seconds)."""
    cache: dict[tuple[int, int], dict[str, Any]] = {}

    def draw(n: int, seed: int) -> dict[str, Any]:
        if (n, seed) not in cache:
            cache[(n, seed)] = gen.generate(n, seed)
        return cache[(n, seed)]

    return draw


@pytest.mark.parametrize(("n", "seed"), CASES)
def test_a_generated_quarter_passes_plan_validate(
    n: int, seed: int, drawn: Callable[[int, int], dict[str, Any]], tmp_path: Path, cli: Any
) -> None:
    data = drawn(n, seed)
    path = gen.write(data, tmp_path / gen.file_name(n, seed))
    result = cli("validate", path)
    assert result.exit_code == 0, result.output
    assert f"{data['name']} is valid" in result.output


@pytest.mark.parametrize(("n", "seed"), CASES)
def test_names_are_unique_and_the_mix_is_q3s(
    n: int, seed: int, drawn: Callable[[int, int], dict[str, Any]]
) -> None:
    workloads = drawn(n, seed)["workloads"]
    names = [w["name"] for w in workloads]
    assert len(set(names)) == len(names) == n
    kinds = Counter(w["kind"] for w in workloads)
    # 10: 2 serve (15% of 10, rounded), 1 reserve, 7 train; 30: 4 (4.5 rounds to even), 3, 23
    assert (kinds["serve"], kinds["reserve"]) == {10: (2, 1), 30: (4, 3)}[n]
    assert kinds["train"] == n - kinds["serve"] - kinds["reserve"]


@pytest.mark.parametrize(("n", "seed"), CASES)
def test_after_chains_train_jobs_without_a_cycle(
    n: int, seed: int, drawn: Callable[[int, int], dict[str, Any]]
) -> None:
    workloads = drawn(n, seed)["workloads"]
    train = {w["name"] for w in workloads if w["kind"] == "train"}
    graph = nx.DiGraph()
    graph.add_nodes_from(train)
    for w in workloads:
        for earlier in w.get("after", []):
            assert earlier in train and w["name"] in train
            graph.add_edge(earlier, w["name"])
    assert nx.is_directed_acyclic_graph(graph)
    # chains of 2-3 jobs: at most two edges in a row, each job waits for one other
    assert nx.dag_longest_path_length(graph) <= 2
    assert max(dict(graph.in_degree()).values()) <= 1


@pytest.mark.parametrize(("n", "seed"), CASES)
def test_a_seed_draws_the_same_quarter(
    n: int, seed: int, drawn: Callable[[int, int], dict[str, Any]]
) -> None:
    assert gen.generate(n, seed) == drawn(n, seed)


def test_seeds_draw_different_quarters(drawn: Callable[[int, int], dict[str, Any]]) -> None:
    assert drawn(10, 0)["workloads"] != drawn(10, 1)["workloads"]


def test_stock_grows_with_the_team(drawn: Callable[[int, int], dict[str, Any]]) -> None:
    # the factor is n ÷ 11 × 0.6-1.1 rounded, at least 1: 1 at 10 workloads, 2-3 at 30
    assert [gen.stock_factor(drawn(10, s)) for s in (0, 1, 2)] == [1, 1, 1]
    assert all(2 <= gen.stock_factor(drawn(30, s)) <= 3 for s in (0, 1, 2))
