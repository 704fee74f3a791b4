"""'did you mean …?' for names that nearly match."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_NAME_LENGTH = 100  # longer than any name, id or time zone: no suggestion


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name most like `name`: a unique prefix match first, else the closest spelling."""
    options = list(valid)
    if len(name) > MAX_NAME_LENGTH:  # nothing is that long, and the edit distance is quadratic
        return None
    lowered = name.lower()
    prefixed = [v for v in options if v.lower().startswith(lowered)]
    if len(prefixed) == 1:
        return prefixed[0]
    near = [v for v in options if _edits(lowered, v.lower()) <= max(1, len(name) // 4)]
    if near:
        return min(near, key=lambda v: (_edits(lowered, v.lower()), -_similarity(lowered, v)))
    matches = difflib.get_close_matches(lowered, options, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b.lower()).ratio()


def _edits(a: str, b: str) -> int:
    """Levenshtein distance: insertions, deletions and substitutions."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    """'; did you mean X?' or '' — to append to an error message."""
    match = closest(name, valid)
    return f"; did you mean {match}?" if match else ""
