"""Deep merge of a patch over plain data (offers over a catalog, what-if patches over scenarios)."""

from __future__ import annotations

from typing import Any

# Lists whose items are merged by this key rather than replaced.
LIST_KEYS: dict[str, str] = {"workloads": "name", "offers": "id", "cards": "id"}


def deep_merge(base: Any, patch: Any, key: str | None = None) -> Any:
    """Maps merge, lists of named things merge by name/id, `null` deletes, the rest replaces."""
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = dict(base)
        for field, value in patch.items():
            if value is None:
                merged.pop(field, None)
            elif field in merged:
                merged[field] = deep_merge(merged[field], value, field)
            else:
                merged[field] = value
        return merged
    id_key = LIST_KEYS.get(key or "")
    if id_key and isinstance(base, list) and isinstance(patch, list):
        return merge_named(base, patch, id_key)
    return patch


def merge_named(base: list[Any], patch: list[Any], id_key: str) -> list[Any]:
    """Items of `patch` merge into the base item with the same id; new ids are appended.

    An item `{<id_key>: x, delete: true}` removes item x. Items without the id are appended.
    """
    merged = list(base)
    for item in patch:
        ident = item.get(id_key) if isinstance(item, dict) else None
        where = next(
            (
                i
                for i, old in enumerate(merged)
                if isinstance(old, dict) and old.get(id_key) == ident
            ),
            None,
        )
        if ident is not None and item.get("delete") is True:
            if where is not None:
                del merged[where]
        elif ident is not None and where is not None:
            merged[where] = deep_merge(merged[where], item)
        else:
            merged.append(item)
    return merged
