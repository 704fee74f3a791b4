"""Where the shipped data folders (models/, catalogs/, scenarios/) are."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
DEFAULT_CATALOG = "jizhisuan-2026-09"  # the shipped catalog commands read unless told


def data_dir(name: str) -> Path:
    """The shipped folder `name`: inside an installed wheel, else at the source tree's root."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gpuplan's data folder {name!r} is missing from this installation")


def shipped_names(folder: str, suffix: str = ".yaml") -> list[str]:
    """Names (file stems) of the shipped files in `folder`, sorted."""
    return sorted(p.stem for p in data_dir(folder).glob(f"*{suffix}"))
