"""Input problems, each with its file, line, field path and what was expected."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from planner.domain.suggest import closest, did_you_mean
from planner.domain.values import NAME_PATTERN, SLUG_PATTERN


@dataclass(frozen=True)
class Issue:
    """One problem in an input file."""

    file: str
    line: int | None
    column: int | None
    path: tuple[str | int, ...]
    message: str

    @property
    def field(self) -> str:
        """The path as written in docs: `workloads[2].deadline`."""
        text = ""
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        return text

    @property
    def where(self) -> str:
        """Where it is written: `file`, `file:line` or `file:line:column`."""
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where

    def __str__(self) -> str:
        field = f" {self.field}:" if self.path else ""
        return f"{self.where}:{field} {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "message": self.message,
        }


class LoadError(Exception):
    """Input that cannot be used; carries every problem found."""

    def __init__(self, issues: Sequence[Issue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(str(i) for i in self.issues))


def pydantic_issues(
    error: ValidationError,
    data: Any,
    locate: Callable[[tuple[str | int, ...], str], Issue],
    model: type[BaseModel] | None = None,
) -> list[Issue]:
    """Pydantic's errors as Issues at the written location of each offending field. A
    misspelt required field is one issue, not two: the unknown name says it is required,
    and the 'missing' error of the field it suggests is dropped."""
    errors = error.errors(include_url=False)
    paths = [_written_path(err["loc"], data) for err in errors]
    missing = {path for err, path in zip(errors, paths, strict=True) if err["type"] == "missing"}
    found: list[tuple[tuple[str | int, ...], str, str]] = []
    meant: set[tuple[str | int, ...]] = set()
    for err, path in zip(errors, paths, strict=True):
        message = _message(err, model, path)
        if err["type"] == "extra_forbidden" and model is not None and path:
            match = closest(str(path[-1]), _fields_at(model, err["loc"]))
            if match is not None and (*path[:-1], match) in missing:
                meant.add((*path[:-1], match))
                message += f" ({match} is required)"
        loc = tuple(err["loc"])
        alternative = bool(loc) and (not path or path[-1] != loc[-1])  # a union member's tag
        if alternative and found and found[-1][0] == path and found[-1][1] == "union":
            # the union's members each refused the value: one issue, their reasons in turn
            found[-1] = (path, "union", f"{found[-1][2]}; or {message}")
            continue
        found.append((path, "union" if alternative else err["type"], message))
    return [locate(p, m) for p, kind, m in found if not (kind == "missing" and p in meant)]


def step(node: Any, part: str | int) -> tuple[bool, Any]:
    """One step down a path in plain data: (whether it exists, the value there)."""
    if isinstance(node, dict) and part in node:
        return True, node[part]
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return True, node[part]
    return False, None


def _written_path(loc: Iterable[str | int], data: Any) -> tuple[str | int, ...]:
    """Drop the parts of pydantic's location that are union tags, not written keys."""
    parts = list(loc)
    path: list[str | int] = []
    node = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        found, child = step(node, part)
        if found:
            node = child
            path.append(part)
        elif not isinstance(node, dict | list):
            break  # a union member's tag under a written value: not a field
        elif last and isinstance(node, dict) and node.get("kind") == part:
            break  # the tag of the member (`serve`) whose own check failed: not a field
        elif last:
            path.append(part)  # a missing field: report it where its parent is written
            break
        # else: a union tag such as 'train' or 'function-after[...]': not in the file
    return tuple(path)


_QUOTED = re.compile(r"'([^']*)'")


# the name patterns (planner.domain.values) as people read them
_PATTERNS = {
    SLUG_PATTERN: "lower-case letters, digits, '.', '_' and '-', starting with "
    "a letter or digit (an id: h200-141g, llama-3.1-70b)",
    NAME_PATTERN: "letters (a-z, A-Z), digits, '.', '_' and '-', starting "
    "with a letter or digit (no spaces)",
}


def _message(err: Any, model: type[BaseModel] | None, path: tuple[str | int, ...]) -> str:
    kind, msg = err["type"], err["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        field = str(path[-1]) if path else "?"
        known = _fields_at(model, err["loc"]) if model else []
        if field == "fsdp" and "zero" in known:  # `plan fit --fsdp` is ZeRO-3 in a file
            return "unknown field 'fsdp'; FSDP's full shard is written zero: 3"
        return f"unknown field {field!r}{did_you_mean(field, known)}"
    if kind in ("value_error", "assertion_error"):
        msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind == "literal_error":
        expected = _QUOTED.findall(err.get("ctx", {}).get("expected", ""))
        given = err.get("input")
        if isinstance(given, str) and expected:
            hint = did_you_mean(given, expected)
            return f"expected one of {', '.join(expected)}, got {given!r}{hint}"
    if kind == "union_tag_invalid":
        tags = _QUOTED.findall(err.get("ctx", {}).get("expected_tags", ""))
        given = str(err.get("ctx", {}).get("tag", ""))
        hint = did_you_mean(given, tags)
        return f"expected kind one of {', '.join(tags)}, got {given!r}{hint}"
    if kind == "union_tag_not_found":
        return "required field 'kind' is missing (train, serve or reserve)"
    if kind == "string_pattern_mismatch":
        said = _PATTERNS.get(str(err.get("ctx", {}).get("pattern", "")))
        if said is not None:
            return f"expected {said}, got {err.get('input')!r}"
    given = err.get("input")
    scalar = isinstance(given, str | int | float) and not isinstance(given, bool)
    if kind == "int_from_float" and scalar:  # "…, got a number with a fractional part"
        return f"Input should be a valid integer, got {given!r}"
    if scalar and msg.startswith("Input should"):
        return f"{msg}, got {given!r}"  # pydantic's own wording does not show the value
    return str(msg)


def _fields_at(model: type[BaseModel], loc: Iterable[str | int]) -> list[str]:
    """Field names of the (sub)models that `loc`'s parent may point at, for suggestions."""
    candidates: list[Any] = [model]
    for part in list(loc)[:-1]:
        if isinstance(part, int):
            continue
        tagged = [c for c in candidates if _kind_of(c) == part]  # a union tag names the member
        inner = [
            m
            for c in candidates
            if part in c.model_fields
            for m in _models_in(c.model_fields[part].annotation)
        ]
        candidates = tagged or inner or candidates
    return sorted({name for c in candidates for name in c.model_fields})


def _models_in(annotation: Any) -> list[Any]:
    """The pydantic models inside an annotation (through list, Optional, Union, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _kind_of(model: Any) -> str | None:
    kind = model.model_fields.get("kind")
    values = get_args(kind.annotation) if kind is not None else ()
    return str(values[0]) if values else None
