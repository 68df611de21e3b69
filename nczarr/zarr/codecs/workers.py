"""The process-wide thread pool that encodes, decodes and moves chunks, of
``nczarr.config.threads()`` threads (two per core by default). The codecs release the GIL
(zlib and its fast replacements, zstd, blosc, numpy's copies), so chunks are coded on every
core at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Generic, TypeVar

from nczarr import config

#: The name of every thread nczarr starts for chunks begins so (see :func:`run`).
THREAD_PREFIX = "nczarr"

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()

_R = TypeVar("_R")


def executor() -> ThreadPoolExecutor:
    """The pool, of ``nczarr.config.threads()`` threads; a changed setting gets a new one."""
    global _pool
    workers = config.threads()
    with _pool_lock:
        if _pool is None or _pool._max_workers != workers:
            if _pool is not None:
                _pool.shutdown(wait=False)  # its running tasks finish
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=THREAD_PREFIX)
        return _pool


def run(tasks: Sequence[Callable[[], _R]]) -> list[_R]:
    """Run tasks in the pool and return their results in order, re-raising the first error.
    Inline when there is only one, with one thread, or when called from one of nczarr's
    threads (the inner chunks of a shard coded in the pool): a pool task that waited on
    the pool could wait for ever. Many tasks go in a few batches per thread: a pool
    submission costs more than encoding a small uncompressed chunk, and a few per thread
    keep a slow one from holding up the rest."""
    workers = config.threads()
    if len(tasks) <= 1 or workers <= 1 or threading.current_thread().name.startswith(THREAD_PREFIX):
        return [t() for t in tasks]
    pool = executor()
    count = min(4 * workers, len(tasks))
    batches = [tasks[i::count] for i in range(count)]
    futures: list[Future[list[_R]] | _Done[list[_R]]] = []
    for i, batch in enumerate(batches):
        try:
            futures.append(pool.submit(_run_batch, batch))
        except RuntimeError:
            # The pool refuses work once the interpreter exits, but the exit-time flush of
            # dirty chunks must still happen: do the rest here.
            futures.extend(_Done(_run_batch(b)) for b in batches[i:])
            break
    try:
        results = [f.result() for f in futures]
    except BaseException:
        # A failed task, or Ctrl-C while waiting: no task may still run (and write) when the
        # caller cleans up after the error.
        running = [f for f in futures if isinstance(f, Future) and not f.cancel()]
        wait(running)
        raise
    # batch i holds tasks i, i + n, i + 2n...: put the results back in task order
    out: list[Any] = [None] * len(tasks)  # every slot is filled below
    for i, batch_results in enumerate(results):
        out[i :: len(batches)] = batch_results
    return out


def _run_batch(batch: Sequence[Callable[[], _R]]) -> list[_R]:
    return [task() for task in batch]


class _Done(Generic[_R]):
    """A finished result with a Future's ``result()``."""

    def __init__(self, value: _R) -> None:
        self._value = value

    def result(self) -> _R:
        return self._value
