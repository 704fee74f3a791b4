"""`plan probe`: nvidia-smi readings and verdicts on recorded outputs, the memory probe on
the CPU where PyTorch is installed, and calibration files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from planner.probe.card import match_card, power_verdict, speed_verdicts, version_verdict
from planner.probe.smi import parse_query
from tests.measurements import CARDS

SAMPLES = Path(__file__).parent / "data" / "nvidia-smi"


def reading(name: str) -> Any:
    [gpu] = parse_query((SAMPLES / f"{name}.txt").read_text())
    return gpu


def test_recorded_outputs_parse_to_their_readings() -> None:
    nvl = reading("h100-nvl")
    assert (nvl.name, nvl.driver, nvl.cuda) == ("NVIDIA H100 NVL", "550.54.14", "12.4")
    assert (nvl.power_limit_w, nvl.default_limit_w, nvl.max_limit_w) == (310.0, 310.0, 400.0)
    assert nvl.memory_total_mib == 95830.0  # FB memory, not BAR1 (131072) below it
    sxm = reading("h100-sxm")
    assert (sxm.memory_total_mib, sxm.power_limit_w) == (81559.0, 700.0)
    assert reading("rtx4090").memory_total_mib == 24564.0
    with pytest.raises(ValueError, match="nvidia-smi -q"):
        parse_query("Wed Jul 1\n| NVIDIA-SMI 550 |\n")


def test_a_reading_from_a_real_h200_is_a_healthy_catalog_h200() -> None:
    """Recorded on the card the H200 probe sweep ran on (benchmarks/measurements/probes):
    its name maps to the catalog's H200, its limit is the rated 700 W, and the matmul and
    copy measured there (675 TFLOPS, 4,220 GB/s) are not slow for the type."""
    h200 = reading("h200")
    assert (h200.name, h200.driver, h200.cuda) == ("NVIDIA H200", "580.159.04", "13.0")
    assert (h200.memory_total_mib, h200.power_limit_w) == (143771.0, 700.0)
    spec = match_card(h200, CARDS)
    assert spec is not None and spec.id == "h200-141g"
    assert power_verdict(h200, spec).name == "ok"
    assert [v.name for v in speed_verdicts(spec, 675.2, 4220.1)] == ["ok", "ok"]
    assert version_verdict(h200, "2.11.0+cu130", "13.0").name == "ok"


def test_names_map_to_catalog_cards() -> None:
    assert match_card(reading("h100-sxm"), CARDS).id == "h100-80g"  # type: ignore[union-attr]
    assert match_card(reading("a100-sxm4-80gb"), CARDS).id == "a100-80g"  # type: ignore[union-attr]
    assert match_card(reading("rtx4090"), CARDS).id == "rtx4090"  # type: ignore[union-attr]
    assert match_card(reading("l40s"), CARDS).id == "l40s"  # type: ignore[union-attr]
    assert match_card(reading("h100-nvl"), CARDS) is None


@pytest.mark.parametrize(
    ("sample", "verdict"),
    [
        ("h100-sxm", "ok"),  # 700 of 700 W
        ("a100-sxm4-80gb", "ok"),  # a 500 W SXM board, above the catalog's 400 W
        ("rtx4090", "ok"),
        ("l40s", "ok"),
        ("h100-nvl", "power-capped"),  # 310 W of the 400 W its board accepts: 78%
    ],
)
def test_power_verdicts_on_recorded_cards(sample: str, verdict: str) -> None:
    gpu = reading(sample)
    assert power_verdict(gpu, match_card(gpu, CARDS)).name == verdict


def test_slow_is_measured_against_a_healthy_card() -> None:
    h100 = CARDS["h100-80g"]
    # healthy: 75% of 989 TFLOPS = 742, 85% of 3,350 GB/s = 2,848; slow below 85% of those
    ok, slow = speed_verdicts(h100, 700.0, 2000.0)
    assert ok.name == "ok" and slow.name == "slow"
    assert [v.name for v in speed_verdicts(h100, 600.0, None)] == ["slow"]


def test_a_torch_built_for_a_newer_cuda_than_the_driver() -> None:
    gpu = reading("h100-nvl")  # the driver supports CUDA 12.4
    assert version_verdict(gpu, "2.5.1", "12.4").name == "ok"
    assert version_verdict(gpu, "2.9.0", "12.8").name == "version-mismatch"


def test_card_probe_cli(cli: Any, tmp_path: Path) -> None:
    result = cli("probe", "card", "--from", SAMPLES / "h100-nvl.txt", "--json", "-")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [v["name"] for v in data["verdicts"]] == ["power-capped", "unknown-card"]
    named = cli("probe", "card", "--from", SAMPLES / "h100-nvl.txt", "--card", "h100-80g")
    assert "h100-80g's rated 700 W" in named.stdout and "44%" in named.stdout
    bad = tmp_path / "not-smi.txt"
    bad.write_text("hello\n")
    result = cli("probe", "card", "--from", bad)
    assert result.exit_code == 1 and "nvidia-smi -q" in result.stderr


def test_card_probe_without_a_gpu_exits_3(cli: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    result = cli("probe", "card")
    assert result.exit_code == 3 and "no NVIDIA GPU" in result.stderr


HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "peft"))


@pytest.mark.skipif(
    not HAVE_TORCH, reason="the probe extra (torch, transformers, peft) is not installed"
)
@pytest.mark.parametrize("task", ["lora", "full", "serve"])
def test_memory_probe_on_the_cpu_matches_the_estimate(task: str) -> None:
    """One layer of Llama-3.2-1B's shape: the weights measured after load equal the
    estimate's weights term; the peak of a step is within 25% of the estimate (without its
    CUDA overhead, which a CPU run does not have). In fp32: on a CPU without bf16
    instructions a bf16 backward pass takes many minutes."""
    from planner.probe.memory import ProbeShape, run, summary
    from tests.measurements import model

    shape = ProbeShape(task, seq_len=32, steps=1, new_tokens=4, layers=1, precision="fp32")
    results = run(model("llama-3.2-1b"), CARDS["h100-80g"], shape, device="cpu", batches=(1, 2))
    assert [r.batch for r in results] == [1, 2]
    for result in results:
        data = summary(result)
        assert result.model.layers == 1 and result.model.params < 400e6
        assert data["measured"]["weights_gib"] == pytest.approx(
            data["estimate"]["weights_gib"], rel=0.01
        )
        assert abs(data["error"]) < 0.25, data
    # a full fine-tune of 32 tokens peaks at the optimizer step, whatever the batch
    assert results[1].peak_gib >= results[0].peak_gib
    if task != "full":
        assert results[1].peak_gib > results[0].peak_gib


@pytest.mark.skipif(
    not HAVE_TORCH, reason="the probe extra (torch, transformers, peft) is not installed"
)
def test_memory_probe_cli_runs_a_list_of_batches(cli: Any) -> None:
    args = ("probe", "memory", "llama-3.2-1b", "--task", "lora", "--layers", "1", "--seq-len", "16")
    cpu = ("--device", "cpu", "--precision", "fp32")
    result = cli(*args, "--batch", "1,2", "--steps", "1", *cpu, "--json", "-")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["batch"] for r in rows] == [1, 2] and all(r["device"] == "cpu" for r in rows)
    bad = cli(*args, "--batch", "0,2")
    assert bad.exit_code == 1 and "--batch" in bad.stderr


def test_memory_probe_refuses_what_it_cannot_run(cli: Any) -> None:
    """QLoRA needs bitsandbytes' CUDA kernels: on the CPU there is no answer here (exit 3);
    without the probe extra the command says what to install (exit 1)."""
    result = cli("probe", "memory", "llama-3.2-1b", "--task", "qlora", "--device", "cpu")
    if HAVE_TORCH:
        assert result.exit_code == 3 and "CUDA" in result.stderr
    else:
        assert result.exit_code == 1 and "pip install" in result.stderr
    bad = cli("probe", "memory", "llama-3.2-1b", "--task", "dpo")
    assert bad.exit_code == 1 and "--task" in bad.stderr


@pytest.mark.skipif(
    not HAVE_TORCH, reason="the probe extra (torch, transformers, peft) is not installed"
)
def test_split_experts_compute_what_the_fused_ones_do() -> None:
    """The QLoRA probe splits a mixture of experts' fused tensors (transformers 5) into
    linear layers, which bitsandbytes can quantise: the same parameters, the same logits, and
    no 3D expert tensor left. transformers 4's experts are linear layers already: nothing to
    split."""
    import copy

    import torch
    import transformers

    from planner.probe.memory import _tensor_bytes, _unfuse_experts, hf_config, shrink
    from tests.measurements import model

    built = shrink(model("olmoe-1b-7b"), 1)
    torch.manual_seed(0)
    fused = transformers.AutoModelForCausalLM.from_config(hf_config(built), dtype=torch.float32)
    split = copy.deepcopy(fused)
    _unfuse_experts(split)
    assert _tensor_bytes(split) == _tensor_bytes(fused)
    assert all(p.dim() <= 2 for p in split.parameters())
    experts = [m for m in split.modules() if isinstance(m, torch.nn.Linear)]
    assert len(experts) >= 3 * built.moe.experts  # type: ignore[union-attr]
    tokens = torch.randint(0, built.vocab, (2, 12))
    with torch.no_grad():
        same = torch.allclose(fused(tokens).logits, split(tokens).logits, atol=1e-4)
    assert same
