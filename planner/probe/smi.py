"""`nvidia-smi -q` as data: one reading per GPU (name, versions, memory, power limits)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE = re.compile(r"^(?P<indent> *)(?P<key>[^:]+?)\s*:\s*(?P<value>.*)$")
_GPU = re.compile(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")


@dataclass(frozen=True)
class GpuReading:
    """What nvidia-smi reports for one GPU. Power in W, memory in MiB; None: not reported."""

    bus_id: str
    name: str
    driver: str | None
    cuda: str | None  # the newest CUDA the driver supports
    memory_total_mib: float | None
    power_limit_w: float | None  # the limit in force
    default_limit_w: float | None
    max_limit_w: float | None
    power_draw_w: float | None


def _number(value: str) -> float | None:
    match = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)", value)
    return float(match.group(1)) if match else None


def parse_query(text: str) -> list[GpuReading]:
    """Every GPU section of `nvidia-smi -q` output, in order. Raises ValueError when the text
    holds no GPU section (not nvidia-smi -q output)."""
    driver = cuda = None
    gpus: list[dict[str, str | float | None]] = []
    section: list[str] = []  # the headings above the current line
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#") or set(line.strip()) == {"="}:
            continue
        if _GPU.match(line):
            gpus.append({"bus_id": line.split(" ", 1)[1]})
            section = []
            continue
        indent = len(line) - len(line.lstrip())
        depth = max(indent // 4 - 1, 0)
        match = _LINE.match(line)
        if match is None or not match.group("value").strip():
            section = [*section[:depth], line.strip()]
            continue
        key, value = match.group("key").strip(), match.group("value").strip()
        if not gpus:
            driver = value if key == "Driver Version" else driver
            cuda = value if key == "CUDA Version" else cuda
            continue
        gpu, where = gpus[-1], section[:depth]
        if depth == 0 and key == "Product Name":
            gpu["name"] = value
        elif where == ["FB Memory Usage"] and key == "Total":
            gpu["memory"] = _number(value)
        elif where and where[-1] in ("GPU Power Readings", "Power Readings"):
            field = {
                "Current Power Limit": "limit",
                "Power Limit": "limit",
                "Enforced Power Limit": "enforced",
                "Default Power Limit": "default",
                "Max Power Limit": "max",
                "Power Draw": "draw",
            }.get(key)
            if field is not None:
                gpu[field] = _number(value)
    if not gpus:
        raise ValueError("no GPU section found: expected the output of nvidia-smi -q")
    return [
        GpuReading(
            str(g["bus_id"]),
            str(g.get("name", "unknown GPU")),
            driver,
            cuda,
            _float(g.get("memory")),
            _float(g.get("enforced")) or _float(g.get("limit")),
            _float(g.get("default")),
            _float(g.get("max")),
            _float(g.get("draw")),
        )
        for g in gpus
    ]


def _float(value: str | float | None) -> float | None:
    return value if isinstance(value, float) else None
