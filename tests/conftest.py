"""Shared fixtures: a minimal valid scenario, written to a temporary folder, and a CLI runner."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

from planner.cli.app import app
from planner.domain.scenario import Scenario
from tests import planning

# CI runs the fast profile; `HYPOTHESIS_PROFILE=long pytest` searches much harder locally.
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
# dev: the README's test command, 40 fresh examples a run (a run of 100 took the suite past
# 10 minutes on a busy 2-core machine); long searches harder
settings.register_profile("dev", max_examples=40, deadline=None)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent


# Llama-3.1-8B's config.json (the architecture keys gpuplan reads).
LLAMA31_8B_CONFIG = {
    "_name_or_path": "meta-llama/Llama-3.1-8B",
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
}


def minimal_scenario() -> dict[str, Any]:
    """A valid scenario with one workload of each kind, as plain data."""
    return {
        "name": "tiny",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-07-01", "end": "2026-08-01"},
        "catalog": "jizhisuan-2026-09",
        "workloads": [
            {
                "name": "ft",
                "kind": "train",
                "model": "llama-2-13b",
                "method": "lora",
                "tokens": 1.0e8,
                "earliest_start": "2026-07-02",
                "deadline": "2026-07-20",
            },
            {
                "name": "chat",
                "kind": "serve",
                "model": "llama-3.1-8b",
                "start": "2026-07-01",
                "end": "2026-08-01",
                "context_tokens": 4096,
                "min_tokens_per_s": 20,
                "concurrency": {"00-08": 2, "08-24": 10},
            },
            {
                "name": "devs",
                "kind": "reserve",
                "card": "rtx4090-48g",
                "cards": 2,
                "hours": "09:00-19:00",
                "days": "weekdays",
                "start": "2026-07-01",
                "end": "2026-08-01",
            },
        ],
    }


@pytest.fixture
def write(tmp_path: Path):  # type: ignore[no-untyped-def]
    """write(data_or_text, name='scenario.yaml') -> path of the written file in tmp_path."""

    def _write(content: Any, name: str = "scenario.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    return _write


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    """cli(*args) -> click Result, with stdout and stderr kept apart."""
    runner = CliRunner()

    def _run(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(app, [str(a) for a in args])

    return _run


@pytest.fixture(scope="session", autouse=True)
def shared_folders_removed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Folders made with `tmp_path_factory.mktemp` (session fixtures such as make_scenario,
    hypothesis tests) belong to no test, so the `failed` retention policy keeps them all: a
    passing run left some 1,400 scenario folders in the system's temp. Removed at the end;
    a failed test's own tmp_path (named after the test: test_…) stays for a look."""
    yield
    base = tmp_path_factory.getbasetemp()
    for entry in base.iterdir():
        if entry.name.startswith("test_"):
            continue
        if entry.is_symlink() or entry.is_file():
            entry.unlink()
        else:
            shutil.rmtree(entry, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def torch_caches_under_pytest(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """PyTorch (the probe extra) makes its compile cache folder in the system's temp on
    import: under pytest's folder instead, like everything the tests write."""
    patch = pytest.MonkeyPatch()
    patch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("torchinductor")))
    yield
    patch.undo()


@pytest.fixture
def ray_here(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray, where its optional extra is installed (the test skips otherwise), with its
    session files under pytest's folder, not the system's (a short name: its socket paths
    must stay under 107 bytes)."""
    pytest.importorskip("ray", reason="the optional extra gpuplan[ray] is not installed")
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path_factory.mktemp("r")))


@pytest.fixture(scope="session")
def make_scenario(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """make_scenario(offers, jobs, days=10, timezone=…, start=…, **extra) -> a tiny Scenario
    (tests/planning.py), each written to a fresh folder under pytest's temporary directory.
    Session-scoped so hypothesis tests may use it too."""

    def _make(
        offers: list[dict[str, Any]], jobs: list[dict[str, Any]], *args: Any, **kw: Any
    ) -> Scenario:
        return planning.scenario(tmp_path_factory.mktemp("scenario"), offers, jobs, *args, **kw)

    return _make


@pytest.fixture(scope="session")
def q3_plan() -> tuple[Scenario, Any]:
    """The shipped quarter and the heuristic's plan of it, checked by the independent checker
    and annotated as `plan solve` shows a plan (no search: the reports' invariants hold for
    any checked plan, and a search of q3 takes half a minute on 2 cores)."""
    from planner.baseline import heuristic_solution
    from planner.domain.load import load_scenario
    from planner.problem import build_problem
    from planner.report import annotate
    from planner.solve import checked_solution

    scenario = load_scenario(REPO / "scenarios" / "q3.yaml")
    problem = build_problem(scenario, serving=True)
    solution = heuristic_solution(problem)
    notes: dict[str, str] = {}
    checked = checked_solution(problem, solution, notes, "heuristic")
    assert checked is not None and solution is not None, notes
    return scenario, annotate(problem, solution, checked.plan)
