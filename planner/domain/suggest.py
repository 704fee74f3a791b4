"""'did you mean …?' for names that nearly match."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name most like `name`: a unique prefix match first, else the closest spelling."""
    options = list(valid)
    lowered = name.lower()
    prefixed = [v for v in options if v.lower().startswith(lowered)]
    if len(prefixed) == 1:
        return prefixed[0]
    matches = difflib.get_close_matches(lowered, options, n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    """'; did you mean X?' or '' — to append to an error message."""
    match = closest(name, valid)
    return f"; did you mean {match}?" if match else ""
