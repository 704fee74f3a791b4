"""`plan probe card`: is the rented card the card the catalog describes?

The seeds' check, made a command: two cards sold as one name differed by more than 15% when
one ran under a lowered power cap, so compare the power limit with the card's rated power
and a matmul and a copy benchmark with its figures. Verdicts are pure functions of the
readings (tested on recorded nvidia-smi output); the benchmarks need torch on a CUDA device.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from planner.domain.calibration import HEALTHY_COPY_SHARE, HEALTHY_MATMUL_SHARE
from planner.domain.catalog import CardType
from planner.probe.smi import GpuReading

CAPPED_SHARE = 0.80  # a limit under 80% of rated power: the seeds' sign of a throttled card
SLOW_SHARE = 0.85  # more than 15% below what a healthy card of the type reaches
# The "slow" verdict compares against what a healthy card reaches, not against the peak.

# nvidia-smi product names → catalog card ids; the 48 GB RTX 4090 board by its memory.
_NAMES = (
    (r"RTX 4090", "rtx4090"),
    (r"RTX 3090", "rtx3090"),
    (r"A100.*80GB|A100 80GB", "a100-80g"),
    (r"A100", "a100-40g"),
    (r"A800", "a800-80g"),
    (r"H100 80GB|H100-SXM|H100 SXM", "h100-80g"),
    (r"H200", "h200-141g"),
    (r"H20\b", "h20-96g"),
    (r"B300", "b300-288g"),
    (r"L40S", "l40s"),
    (r"\bL20\b", "l20"),
)


def match_card(reading: GpuReading, cards: dict[str, CardType]) -> CardType | None:
    """The catalog card a reading's product name names, or None (e.g. an H100 NVL)."""
    for pattern, card_id in _NAMES:
        if re.search(pattern, reading.name) and card_id in cards:
            if card_id == "rtx4090" and (reading.memory_total_mib or 0) > 40 * 1024:
                card_id = "rtx4090-48g"
            return cards.get(card_id)
    return None


@dataclass(frozen=True)
class Verdict:
    name: str  # ok | power-capped | slow | unknown-card | version-mismatch
    text: str


def power_verdict(reading: GpuReading, card: CardType | None) -> Verdict:
    """power-capped when the limit in force is under 80% of the rated power (the catalog's
    TDP; for a card not in the catalog, the highest limit the board accepts)."""
    rated = card.tdp_w.value if card is not None else reading.max_limit_w
    if reading.power_limit_w is None or rated is None:
        return Verdict("unknown", "nvidia-smi reports no power limit to compare")
    if card is not None:
        basis = f"{card.id}'s rated {rated:g} W"
    else:
        basis = f"the {rated:g} W most its board accepts (not a catalog card)"
    share = reading.power_limit_w / rated
    if share < CAPPED_SHARE:
        return Verdict(
            "power-capped",
            f"power limit {reading.power_limit_w:g} W is {share:.0%} of {basis}: under "
            f"{CAPPED_SHARE:.0%}, expect it to run slower than its figures",
        )
    return Verdict("ok", f"power limit {reading.power_limit_w:g} W is {share:.0%} of {basis}")


def speed_verdicts(
    card: CardType, tflops: float | None, bandwidth_gbs: float | None
) -> list[Verdict]:
    """slow when a benchmark is more than 15% below what a healthy card of the type reaches."""
    verdicts = []
    for label, measured, peak, healthy, unit in (
        ("BF16 matmul", tflops, card.bf16_tflops.value, HEALTHY_MATMUL_SHARE, "TFLOPS"),
        ("memory copy", bandwidth_gbs, card.bandwidth_gbs.value, HEALTHY_COPY_SHARE, "GB/s"),
    ):
        if measured is None:
            continue
        expected = peak * healthy
        share = measured / expected
        name = "slow" if share < SLOW_SHARE else "ok"
        verdicts.append(
            Verdict(
                name,
                f"{label} {measured:,.0f} {unit}: {share:.0%} of the {expected:,.0f} a healthy "
                f"{card.id} reaches ({healthy:.0%} of its {peak:g} {unit})",
            )
        )
    return verdicts


def version_verdict(
    reading: GpuReading, torch_version: str | None, torch_cuda: str | None
) -> Verdict:
    """A PyTorch built for a newer CUDA than the driver supports cannot use the card."""
    if torch_cuda is None or reading.cuda is None:
        return Verdict(
            "unknown", f"driver {reading.driver}, CUDA {reading.cuda}; PyTorch {torch_version}"
        )

    def version(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", text)[:2])

    text = (
        f"driver {reading.driver} supports CUDA {reading.cuda}; "
        f"PyTorch {torch_version} is built for CUDA {torch_cuda}"
    )
    if version(torch_cuda) > version(reading.cuda):
        return Verdict(
            "version-mismatch", text + ": upgrade the driver or install a PyTorch for an older CUDA"
        )
    return Verdict("ok", text)


def benchmark(device: int = 0, size: int = 8192, seconds: float = 2.0) -> tuple[float, float]:
    """BF16 matmul TFLOPS and device-to-device copy GB/s on CUDA device `device` (torch)."""
    import torch

    torch.cuda.set_device(device)
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    tflops = _timed(lambda: a @ b, 2 * size**3 / 1e12, seconds)
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    bandwidth = _timed(lambda: dst.copy_(src), 2 * src.numel() / 1e9, seconds)  # read + write
    return tflops, bandwidth


def _timed(run: Callable[[], object], work: float, seconds: float) -> float:
    """Work units per second of `run`, after a warm-up, over about `seconds`."""
    import time

    import torch

    for _ in range(3):
        run()
    torch.cuda.synchronize()
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        run()
        count += 1
        if count % 10 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return count * work / (time.perf_counter() - started)
