"""Where work runs: in this process, in local processes (the default for more than one job),
or as Ray tasks and actors (`--executor ray`, the optional extra `gpuplan[ray]`), so that a
sweep of what-if variants, or the neighbourhoods of one large solve, can spread over a
cluster. Every kind runs the same function on the same inputs and returns the same results
in the same order, so a run's answer does not depend on where it ran."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from multiprocessing import get_all_start_methods, get_context
from typing import Any, Generic, TypeVar

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

    def check(self) -> None:
        """Raise LoadError (bad input, said before any work starts) where this executor cannot
        run here: Ray asked for and not installed."""
        if self.kind is Kind.ray:
            _import_ray()

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """fn over items, results in the order of items."""
        if self.kind is Kind.ray:
            return _ray_map(fn, items, self)
        if self.jobs <= 1 or len(items) <= 1:
            return [fn(item) for item in items]
        context = get_context("fork")  # the parent's imported modules, not imported again
        with ProcessPoolExecutor(max_workers=min(self.jobs, len(items)), mp_context=context) as p:
            return list(p.map(fn, items))

    @contextmanager
    def workers(self, make: Callable[..., Any], *args: Any) -> Iterator[Workers]:
        """`jobs` workers, each holding its own `make(*args)` (built once: a parsed model, a
        loaded scenario) for the calls of `Workers.map` that follow."""
        if self.kind is Kind.ray:
            with _ray_session(self) as ray:
                yield _RayWorkers(ray, self, make, args)
        elif self.jobs <= 1:
            yield _InlineWorkers(make(*args))
        else:
            context = get_context("fork")
            with ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=context,
                initializer=_hold,
                initargs=(make, args),
            ) as pool:
                yield _ProcessWorkers(pool)


class Workers:
    """Stateful workers: `map(fn, items)` is [fn(state, item) for item in items], each call
    on some worker's state, results in the order of items."""

    def map(self, fn: Callable[[Any, T], R], items: Sequence[T]) -> list[R]:
        raise NotImplementedError


class _InlineWorkers(Workers):
    def __init__(self, state: Any) -> None:
        self.state = state

    def map(self, fn: Callable[[Any, T], R], items: Sequence[T]) -> list[R]:
        return [fn(self.state, item) for item in items]


_STATE: Any = None  # a process worker's state (set once by its initializer)


def _hold(make: Callable[..., Any], args: tuple[Any, ...]) -> None:
    global _STATE
    _STATE = make(*args)


def _on_state(call: tuple[Callable[[Any, T], R], T]) -> R:
    fn, item = call
    return fn(_STATE, item)


class _ProcessWorkers(Workers):
    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self.pool = pool

    def map(self, fn: Callable[[Any, T], R], items: Sequence[T]) -> list[R]:
        return list(self.pool.map(_on_state, [(fn, item) for item in items]))


class _Holder:
    """A Ray actor's state: built once on its node, then called."""

    def __init__(self, make: Callable[..., Any], *args: Any) -> None:
        self.state = make(*args)  # Ray resolves the object references passed at top level

    def call(self, fn: Callable[[Any, T], R], item: T) -> R:
        return fn(self.state, item)


class _RayWorkers(Workers):
    def __init__(
        self, ray: Any, executor: Executor, make: Callable[..., Any], args: tuple[Any, ...]
    ) -> None:
        holder = ray.remote(num_cpus=_task_cpus(ray, executor))(_Holder)
        refs = tuple(ray.put(a) for a in args)  # shipped once, shared by the actors of a node
        self.ray = ray
        self.actors = [holder.remote(make, *refs) for _ in range(max(executor.jobs, 1))]

    def map(self, fn: Callable[[Any, T], R], items: Sequence[T]) -> list[R]:
        calls = [
            self.actors[i % len(self.actors)].call.remote(fn, item) for i, item in enumerate(items)
        ]
        return list(self.ray.get(calls))


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


@contextmanager
def _ray_session(executor: Executor) -> Iterator[Any]:
    """Ray, joined at `executor.address` or started on this machine for the batch (and shut
    down after it)."""
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
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def _task_cpus(ray: Any, executor: Executor) -> int:
    """CPUs a Ray task or actor reserves: on a private instance of `jobs` CPUs one, so that
    `jobs` run at once as locally; on a cluster the solver's threads, but never more than the
    largest node has (a task that no node can hold would wait for ever)."""
    if executor.address is None:
        return 1
    largest = max((n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")), default=1)
    return max(1, min(executor.cpus_per_task, int(largest)))


def _ray_map(fn: Callable[[T], R], items: Sequence[T], executor: Executor) -> list[R]:
    with _ray_session(executor) as ray:
        remote = ray.remote(num_cpus=_task_cpus(ray, executor))(_call)  # functions, not partials
        return list(ray.get([remote.remote(fn, item) for item in items]))


class Beside(Generic[R]):
    """`fn()` computed beside the caller, in a forked process where the machine has a second
    core (the caller's data is shared, not copied or pickled), else at once in this one;
    `result()` waits for it. The same value either way: only when it is ready differs."""

    def __init__(self, fn: Callable[[], R], cores: int) -> None:
        self._fn = fn
        self._process: Any = None
        self._done: tuple[bool, Any] | None = None
        if cores > 1 and "fork" in get_all_start_methods():
            context = get_context("fork")
            self._receive, send = context.Pipe(duplex=False)
            self._process = context.Process(target=_send, args=(fn, send), daemon=True)
            self._process.start()
            send.close()
        else:
            self._done = (True, fn())

    def result(self) -> R:
        if self._done is None:
            try:
                self._done = self._receive.recv()
            except EOFError:  # the process died without an answer (killed): compute it here
                self._done = (True, self._fn())
            finally:
                self.close()
        ok, value = self._done
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        return value

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Stop the process if it still runs (the caller no longer needs its answer)."""
        if self._process is not None:
            if self._process.is_alive():
                self._process.terminate()
            self._process.join()
            self._receive.close()
            self._process = None


def _send(fn: Callable[[], Any], send: Any) -> None:
    try:
        answer: tuple[bool, Any] = (True, fn())
    except BaseException as exc:  # raised again in the caller
        answer = (False, exc)
    send.send(answer)
    send.close()
