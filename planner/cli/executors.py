"""Where `plan whatif` solves its scenarios: local processes (the default), or Ray tasks
(`--executor ray`, the optional extra `gpuplan[ray]`), so a sweep of many variants can spread
over a cluster. Both run the same function on the same inputs and return the same sides."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from multiprocessing import get_context
from typing import Any, TypeVar

from planner.domain.errors import Issue, LoadError

T = TypeVar("T")
R = TypeVar("R")


class Kind(StrEnum):
    local = "local"
    ray = "ray"


@dataclass(frozen=True)
class Executor:
    """How to run a batch of solves: `jobs` at once locally, or as Ray tasks on the cluster
    at `address` (None: a Ray instance started on this machine for the batch)."""

    kind: Kind = Kind.local
    jobs: int = 1
    address: str | None = None
    cpus_per_task: int = 1  # the solver's threads: what a Ray task reserves on its node

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """fn over items, results in the order of items."""
        if self.kind is Kind.ray:
            return _ray_map(fn, items, self)
        if self.jobs <= 1 or len(items) <= 1:
            return [fn(item) for item in items]
        context = get_context("fork")  # the parent's imported modules, not imported again
        with ProcessPoolExecutor(max_workers=min(self.jobs, len(items)), mp_context=context) as p:
            return list(p.map(fn, items))


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise LoadError(
            [
                Issue(
                    "--executor ray",
                    None,
                    None,
                    (),
                    "Ray is not installed: pip install 'gpuplan[ray]' (or --executor local)",
                )
            ]
        ) from None
    return ray


def _call(fn: Callable[[T], R], item: T) -> R:
    return fn(item)


def _ray_map(fn: Callable[[T], R], items: Sequence[T], executor: Executor) -> list[R]:
    ray = _import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"include_dashboard": False, "configure_logging": False}
        if executor.address is None:  # a private instance on this machine, sized to the batch
            options |= {"num_cpus": max(executor.jobs, 1), "object_store_memory": 100 << 20}
        try:
            ray.init(address=executor.address, **options)
        except ConnectionError as exc:
            raise LoadError(
                [Issue("--address", None, None, (), f"no Ray cluster at that address: {exc}")]
            ) from None
    try:
        cpus = 1  # on a private instance of `jobs` CPUs: `jobs` tasks at once, as locally
        if executor.address is not None:
            # on a cluster a task reserves the solver's threads, but never more CPUs than the
            # largest node has (a task that no node can hold would wait for ever)
            largest = max(
                (n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")), default=1
            )
            cpus = max(1, min(executor.cpus_per_task, int(largest)))
        remote = ray.remote(num_cpus=cpus)(_call)  # Ray takes functions, not partials
        return list(ray.get([remote.remote(fn, item) for item in items]))
    finally:
        if started_here:
            ray.shutdown()
