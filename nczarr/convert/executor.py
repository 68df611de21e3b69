"""Where the tasks of an archive copy run: this process, a local process pool, or a
dask.distributed cluster (imported here alone, and only when asked for)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol, TypeVar

from nczarr.errors import MissingExtraError, WorkerLostError

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``function(shared, task)`` on each task and yields the results as tasks finish;
    ``shared`` (what every task needs, e.g. the plan of a job) goes to each worker once, not
    with every task."""

    def run(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> Iterator[R]: ...


class InProcess:
    """Every task here, one after the other."""

    def run(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> Iterator[R]:
        for task in tasks:
            yield function(shared, task)


#: What the tasks of this worker process of a LocalPool share (set as the process starts).
_shared: object = None


def _keep_shared(shared: object) -> None:
    global _shared
    _shared = shared


def _call(function: Callable[..., R], task: object) -> R:
    """In a worker process of a LocalPool: ``function(shared, task)``."""
    return function(_shared, task)


class LocalPool:
    """A pool of ``workers`` local processes."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)

    def run(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> Iterator[R]:
        # spawned, not forked: a fork of a process with threads (the planner's, a caller's)
        # may inherit a held lock and hang
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=self.workers, mp_context=context, initializer=_keep_shared, initargs=(shared,)
        ) as pool:
            futures = [pool.submit(_call, function, task) for task in tasks]
            try:
                for future in as_completed(futures):
                    yield future.result()
            except BrokenProcessPool as error:
                raise WorkerLostError(f"a worker process of the local pool died (killed, or out of memory): {error}") from error


class DaskCluster:
    """A dask.distributed ``Client``: an existing one, or one connected to ``address``."""

    def __init__(self, client: object | None = None, address: str | None = None) -> None:
        try:
            import distributed
        except ImportError as error:
            raise MissingExtraError("--scheduler needs dask.distributed: pip install 'nczarr[dask]' distributed") from error
        self.client = client if client is not None else distributed.Client(address)
        self._owned = client is None
        self._distributed = distributed

    def run(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> Iterator[R]:
        if not tasks:
            return
        # scattered once to every worker; each task then names it
        everywhere = self.client.scatter(shared, broadcast=True, hash=False)  # type: ignore[attr-defined]
        futures = self.client.map(function, [everywhere] * len(tasks), tasks, pure=False)  # type: ignore[attr-defined]
        for future in self._distributed.as_completed(futures):
            yield future.result()

    def close(self) -> None:
        if self._owned:
            self.client.close()  # type: ignore[attr-defined]


def map_in_order(
    executor: Executor, function: Callable[[T, S], R], items: Sequence[T], shared: S,
    done: Callable[[], None] = lambda: None,
) -> list[R]:
    """``function(item, shared)`` of every item, run on ``executor``, in the order of
    ``items`` (the executor yields them as they finish; ``done`` is told of each)."""
    results: dict[int, R] = {}
    for index, result in executor.run(_indexed, (function, shared), list(enumerate(items))):
        results[index] = result
        done()
    return [results[i] for i in range(len(items))]


def _indexed(call: tuple[Callable[[T, S], R], S], task: tuple[int, T]) -> tuple[int, R]:
    function, shared = call
    index, item = task
    return index, function(item, shared)


def executor_for(
    *, client: object | None = None, scheduler: str | None = None, workers: int | None = None
) -> Executor:
    """The executor a caller asks for: a dask Client or scheduler address, else a local pool
    of ``workers`` processes, else this process."""
    if client is not None or scheduler is not None:
        return DaskCluster(client, scheduler)
    if workers:
        return LocalPool(workers)
    return InProcess()


__all__ = ["DaskCluster", "Executor", "InProcess", "LocalPool", "executor_for", "map_in_order"]
