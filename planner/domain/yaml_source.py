"""Safe YAML reading that remembers where each value was written.

Only YAML's plain types are built (maps, lists, strings, numbers, booleans, null, dates):
a tag such as `!!python/object` is an error. Aliases are allowed, but the document may not
expand to more than `MAX_NODES` values, so an alias bomb fails fast instead of eating memory.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from planner.domain.errors import Issue, LoadError

MAX_NODES = 200_000
MAX_BYTES = 1_000_000  # a scenario is ~5 kB; PyYAML composes ~1 MB a second, so refusals stay quick
PathKey = tuple[str | int, ...]

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
}
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


@dataclass
class Source:
    """A parsed document and the line/column of every value in it, by path."""

    file: str
    data: Any
    marks: dict[PathKey, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: PathKey) -> tuple[int | None, int | None]:
        """Line and column (1-based) of the deepest written part of `path`."""
        for depth in range(len(path), -1, -1):
            mark = self.marks.get(path[:depth])
            if mark is not None:
                return mark
        return None, None

    def issue(self, path: PathKey, message: str) -> Issue:
        line, column = self.locate(path)
        return Issue(self.file, line, column, path, message)

    def folder(self, path: PathKey) -> Path:
        """Where a relative file path written at `path` is resolved from: this file's folder."""
        return Path(self.file).parent


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.count = 0
        self.marks: dict[PathKey, tuple[int, int]] = {}
        self.scalars = yaml.SafeLoader("")

    def fail(self, node: yaml.Node, path: PathKey, message: str) -> LoadError:
        mark = node.start_mark
        return LoadError([Issue(self.file, mark.line + 1, mark.column + 1, path, message)])

    def build(self, node: yaml.Node, path: PathKey, active: frozenset[int]) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(
                node,
                path,
                f"the document expands to more than {MAX_NODES:,} values (an alias bomb?)",
            )
        self.marks.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if id(node) in active:
            raise self.fail(node, path, "an alias refers to a value that contains it")
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ_TAG:
            inner = active | {id(node)}
            return [self.build(item, (*path, i), inner) for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode) and node.tag == _MAP_TAG:
            return self._mapping(node, path, active | {id(node)})
        raise self.fail(node, path, f"tag {node.tag} is not allowed: only plain YAML data is read")

    def _scalar(self, node: yaml.ScalarNode, path: PathKey) -> Any:
        if node.tag not in _SCALAR_TAGS:
            raise self.fail(
                node, path, f"tag {node.tag} is not allowed: only plain YAML data is read"
            )
        if node.tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float") and ":" in node.value:
            return node.value  # YAML 1.1 sexagesimal (19:00 → 1140): keep times as written
        try:
            value = self.scalars.construct_object(node)
        except (yaml.YAMLError, ValueError):
            # a date that does not exist (2026-07-42): kept as written, so that the schema
            # reports it, located, together with the file's other problems
            return node.value
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            return node.value  # let the schema say that offsets are not accepted
        return value

    def _mapping(self, node: yaml.MappingNode, path: PathKey, active: frozenset[int]) -> Any:
        own_keys = {id(key) for key, _ in node.value}  # written here, not merged in by <<
        try:
            self.scalars.flatten_mapping(node)  # YAML merge keys (<<: *base)
        except yaml.YAMLError as exc:
            raise self.fail(node, path, str(exc)) from None
        result: dict[str, Any] = {}
        written: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(key_node, path, "mapping keys must be plain names")
            key = self._scalar(key_node, path)
            key = key if isinstance(key, str) else str(key_node.value)
            if id(key_node) in own_keys:
                if key in written:
                    raise self.fail(key_node, (*path, key), f"key {key!r} is given twice")
                written.add(key)
            child = (*path, key)
            self.marks[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = self.build(value_node, child, active)
        return result


def parse_yaml(text: str, file: str) -> Source:
    """Parse one YAML document safely into plain data with locations."""
    if len(text) > MAX_BYTES:
        raise LoadError([Issue(file, None, None, (), f"file is larger than {MAX_BYTES:,} bytes")])
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise LoadError(
            [Issue(file, None, None, (), "the document is nested too deeply")]
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise LoadError([Issue(file, line, column, (), f"invalid YAML: {problem}")]) from None
    except yaml.YAMLError as exc:
        raise LoadError([Issue(file, None, None, (), f"invalid YAML: {exc}")]) from None
    if node is None:
        raise LoadError([Issue(file, 1, 1, (), "the file is empty")])
    builder = _Builder(file)
    try:
        data = builder.build(node, (), frozenset())
    except RecursionError:
        raise LoadError(
            [Issue(file, None, None, (), "the document is nested too deeply")]
        ) from None
    return Source(file, data, builder.marks)


def read_text(path: Path) -> str:
    """A file's text, read no further than one byte past `MAX_BYTES` (so a device such as
    /dev/zero, or a huge file, is refused rather than read into memory)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise LoadError(
                [Issue(str(path), None, None, (), f"file is larger than {MAX_BYTES:,} bytes")]
            )
        return raw.decode("utf-8")
    except FileNotFoundError:
        raise LoadError([Issue(str(path), None, None, (), "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError([Issue(str(path), None, None, (), f"cannot read file: {exc}")]) from None


def read_yaml(path: Path) -> Source:
    """Read and parse a YAML file; a missing or unreadable file is a LoadError."""
    return parse_yaml(read_text(path), str(path))


def walk(data: Any, path: PathKey = ()) -> Iterator[PathKey]:
    """Every path in plain data, parents before children."""
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from walk(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from walk(value, (*path, i))
