"""Archives: many netCDF sources into one dataset (``nczarr copy A.nc B.nc ... DST``), as the
plan of :mod:`nczarr.convert.combine` says, in tasks that a local pool or a dask.distributed
cluster runs, resumable by running the same copy again.

The client checks the sources, writes the metadata once and a job record in the target
(``.nczarr_archive/``: the sources with their identities, and one key per finished task); a
task reads the records of its block (from one or two sources) and writes whole chunks of
its own block, never metadata. A rerun skips the finished tasks, refuses when a source
changed, and the job record is removed when the last task is done. A netCDF file target
(``.nc``) has one writer, this process: HDF5 is not safe for concurrent writers, and such a
copy starts over when rerun.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from nczarr.convert import sources as _sources
from nczarr.convert.combine import CombineOptions, CombinePlan, expand_sources, plan_combine
from nczarr.convert.copy import (
    CopyOptions,
    CopyPlan,
    CopyReport,
    PlannedSource,
    copy_blocks,
    copy_source,
    find_variable,
    plan_copy,
    value_itemsize,
)
from nczarr.convert.executor import Executor, InProcess
from nczarr.errors import CopyError, NCZarrError, SourceChangedError, StoreError
from nczarr.formats import convention as make_convention
from nczarr.formats import stored_dataset
from nczarr.formats.location import NETCDF_FILE_SUFFIXES, parse_location
from nczarr.formats.session import Session
from nczarr.model import Dataset, Variable
from nczarr.store import open_store
from nczarr.store.identity import SourceIdentity
from nczarr.values.source import Hyperslab
from nczarr.values.storage import VariableStorage

log = logging.getLogger(__name__)

#: Where the job record lives in the target while a job is unfinished.
JOB_PREFIX = ".nczarr_archive/"
JOB_KEY = JOB_PREFIX + "job.json"
DONE_PREFIX = JOB_PREFIX + "done/"
#: The least data of a task cut where a source starts: below it, a task's fixed cost (opening
#: its source and the target, about 10 ms) outweighs its data.
_LEAST_TASK_BYTES = 4 << 20
#: Sources a reader keeps open at once.
_OPEN_SOURCES = 4


class CombinedSource:
    """The combined dataset of a plan as a DatasetSource: a block of records is read from
    the sources that hold them, their values converted as the plan says."""

    def __init__(self, plan: CombinePlan, storage_options: dict[str, object] | None = None) -> None:
        self.plan = plan
        self.dataset: Dataset = plan.dataset
        self.storage: dict[str, VariableStorage] = dict(plan.storage)
        self.data_model = plan.data_model
        self._storage_options = storage_options or None
        self._open: OrderedDict[int, _sources.DatasetSource] = OrderedDict()

    def _source(self, index: int) -> _sources.DatasetSource:
        found = self._open.pop(index, None)
        if found is None:
            found = _sources.open_source(self.plan.sources[index].location, storage_options=self._storage_options)
            while len(self._open) >= _OPEN_SOURCES:
                self._open.popitem(last=False)[1].close()
        self._open[index] = found
        return found

    def read(self, variable: Variable, selection: Hyperslab) -> np.ndarray:
        fqn = variable.fqn
        plan = self.plan.variables[fqn]
        if not plan.record:
            return self._read_from(plan.sources[0], fqn, selection)
        records, rest = selection[0], selection[1:]
        parts = [
            self._read_from(p.source, fqn, (slice(p.source_start, p.source_start + p.stop - p.start), *rest))
            for p in self.plan.pieces(fqn, records.start, records.stop)
        ]
        if not parts:
            return self._read_from(plan.sources[0], fqn, (slice(0, 0), *rest))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _read_from(self, index: int, fqn: str, selection: Hyperslab) -> np.ndarray:
        source = self._source(index)
        variable = find_variable(source.dataset, fqn)
        part = self.plan.sources[index]
        if variable is None:
            raise CopyError(f"{part.location}: variable {fqn} is gone")
        values = source.read(variable, selection)
        conversion = part.conversions.get(fqn)
        return values if conversion is None else conversion.apply(values)

    def close(self) -> None:
        while self._open:
            self._open.popitem()[1].close()


@dataclass(frozen=True)
class ArchiveProgress:
    """How far a job is: tasks and bytes done of all, and the sources it reads."""

    files: int
    tasks_done: int
    tasks_total: int
    bytes_done: int
    bytes_total: int


@dataclass(frozen=True)
class Retries:
    """How a task meets a store error that may pass (throttling, a 5xx status, a dropped
    connection): it runs again up to ``attempts`` times, after ``first_wait`` seconds, then
    twice as long each time."""

    attempts: int = 4
    first_wait: float = 0.5


@dataclass(frozen=True)
class _Job:
    """What every task needs: the plans, the target, how to reach it and how to retry."""

    combine: CombinePlan
    copy: CopyPlan
    target: str
    storage_options: dict[str, object]
    retries: Retries = Retries()


@dataclass(frozen=True)
class _Task:
    job: _Job
    variable: str
    block: Hyperslab

    @property
    def key(self) -> str:
        text = self.variable + "|" + ",".join(f"{s.start}:{s.stop}" for s in self.block)
        return DONE_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def nbytes(self) -> int:
        """The bytes of the block's values (as planned: strings and vlens estimated)."""
        variable = find_variable(self.job.copy.tree, self.variable)
        assert variable is not None
        return math.prod(s.stop - s.start for s in self.block) * value_itemsize(variable)


def copy_archive(
    sources: Sequence[str | os.PathLike[str]],
    target: str | os.PathLike[str],
    options: CopyOptions | None = None,
    combine: CombineOptions | None = None,
    *,
    executor: Executor | None = None,
    progress: Callable[[ArchiveProgress], None] | None = None,
    verify: bool = False,
    retries: Retries = Retries(),
) -> CopyReport:
    """Combine ``sources`` into one dataset at ``target`` (see the module); ``executor``
    runs the tasks (this process when None); ``progress`` is told how far the job is after
    each task; ``verify`` compares the result with the sources, values and attributes;
    ``retries``: how a task retries a transient store error."""
    started = time.perf_counter()
    options = options or CopyOptions()
    combine = combine or CombineOptions()
    storage_options = dict(options.storage_options)
    locations = expand_sources([os.fspath(s) for s in sources], storage_options or None)
    plan = plan_combine(locations, replace(combine, storage_options=storage_options), executor)
    combined = CombinedSource(plan, storage_options)
    dst = os.fspath(target)
    try:
        if _is_file_target(dst):
            report = copy_source(combined, dst, options, progress=_byte_progress(progress, len(locations)))
        else:
            report = _copy_to_zarr(plan, combined, dst, options, executor or InProcess(), progress, retries)
        if verify:
            verify_copy(combined, dst, storage_options)
    finally:
        combined.close()
    report.seconds = time.perf_counter() - started
    return report


def copy(
    sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    target: str | os.PathLike[str],
    options: CopyOptions | None = None,
    combine: CombineOptions | None = None,
    *,
    client: object | None = None,
    workers: int | None = None,
    progress: Callable[[ArchiveProgress], None] | None = None,
    verify: bool = False,
    retries: Retries = Retries(),
) -> CopyReport:
    """``nczarr.copy``: one source (a path or URL) copied as ``nczarr copy SRC DST`` does, or
    many (a list, globs, ``@list.txt``) combined (see :func:`copy_archive`); ``client``: a
    dask.distributed Client to run the tasks on, ``workers``: a local pool of processes."""
    from nczarr.convert.executor import executor_for

    executor = executor_for(client=client, workers=workers)
    listed = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    return copy_archive(
        listed, target, options, combine, executor=executor, progress=progress, verify=verify, retries=retries
    )


def _is_file_target(dst: str) -> bool:
    return "://" not in dst and dst.lower().endswith(NETCDF_FILE_SUFFIXES)


def _byte_progress(progress: Callable[[ArchiveProgress], None] | None, files: int) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    callback = progress
    return lambda done, total: callback(ArchiveProgress(files, 0, 1, done, total))


def _copy_to_zarr(
    plan: CombinePlan,
    combined: CombinedSource,
    dst: str,
    options: CopyOptions,
    executor: Executor,
    progress: Callable[[ArchiveProgress], None] | None,
    retries: Retries,
) -> CopyReport:
    copy_plan = plan_copy(combined, dst, options)
    if copy_plan.convention is None:
        raise CopyError(f"{dst}: not a Zarr target")
    storage_options = dict(options.storage_options)
    job = _Job(plan, copy_plan, dst, storage_options, retries)
    record = _job_record(plan, options)
    done = _start_or_resume(job, record)
    tasks = [t for t in _tasks(job, options) if t.key not in done]
    every = len(tasks) + len(done)
    total_bytes = sum(t.nbytes for t in tasks)
    finished, moved = len(done), 0
    log.info("%s: %d tasks to do, %d done before", dst, len(tasks), len(done))
    try:
        for nbytes in executor.run(run_task, job, [(t.variable, t.block) for t in tasks]):
            finished += 1
            moved += nbytes
            if progress is not None:
                progress(ArchiveProgress(len(plan.sources), finished, every, moved, total_bytes))
    except NCZarrError as error:  # say how to go on, in the error itself (-q hides warnings)
        error.args = (f"{error}; {finished} of {every} tasks are done: run the same copy again to do the others",)
        raise
    store = open_store(dst, "r+", storage_options=storage_options or None)
    try:
        store.remove_leftovers()  # what tasks on killed workers began to write
        store.delete_prefix(JOB_PREFIX)  # the job is complete
    finally:
        store.close()
    return CopyReport(nbytes=moved, skipped=copy_plan.skipped)


def _job_record(plan: CombinePlan, options: CopyOptions) -> dict[str, object]:
    return {
        "sources": [s.identity.to_json() for s in plan.sources],
        "options": repr(replace(options, storage_options={})),
        "metadata": False,
    }


def _start_or_resume(job: _Job, record: dict[str, object]) -> set[str]:
    """The keys of the tasks already done: none for a new job (the metadata and the job
    record are written), those recorded for an unfinished job of the same sources and options
    (SourceChangedError when a source changed since it started)."""
    options = job.storage_options or None
    where = parse_location(job.target)
    existing: dict[str, object] | None = None
    done: set[str] = set()
    if where.local and not os.path.exists(where.target):
        existing = None
    else:
        try:
            store = open_store(job.target, "r", storage_options=options)
        except (StoreError, FileNotFoundError):
            store = None
        if store is not None:
            try:
                raw = store.get(JOB_KEY) if store.exists(JOB_KEY) else None
                if raw is not None:
                    existing = json.loads(raw)
                    done = set(store.list_prefix(DONE_PREFIX))
            finally:
                store.close()
    if existing is not None and existing.get("metadata"):
        _check_same_job(existing, record, job)
        return done
    store = open_store(job.target, "w", storage_options=options)
    try:
        store.set(JOB_KEY, json.dumps(record).encode())
        name = job.copy.convention or "NCZARR"
        written = where.convention_options(name)
        session = Session.create(store, job.copy.tree, make_convention(name, **written), job.copy.storage)
        session.close()
        store.set(JOB_KEY, json.dumps({**record, "metadata": True}).encode())
    finally:
        store.close()
    return set()


def _check_same_job(existing: dict[str, object], record: dict[str, object], job: _Job) -> None:
    before = [SourceIdentity.from_json(s) for s in existing.get("sources", [])]  # type: ignore[attr-defined]
    now = [s.identity for s in job.combine.sources]
    if [s.location for s in before] != [s.location for s in now]:
        raise CopyError(f"{job.target}: holds an unfinished job of other sources; remove it or give the same sources")
    for old, new in zip(before, now):
        if old != new:
            raise SourceChangedError(f"{new.location}: changed since the unfinished job in {job.target} started")
    if existing.get("options") != record["options"]:
        raise CopyError(f"{job.target}: holds an unfinished job with other options; rerun it with the same ones")


def _tasks(job: _Job, options: CopyOptions) -> list[_Task]:
    """One task per block of each variable with data, aligned to the target's chunks and
    within the memory budget (``max_memory``), so that a task writes whole chunks only; a
    block of records is cut where a source starts (at the chunk boundary at or after it)
    into parts of at least ``_LEAST_TASK_BYTES``, so that a task reads about one large
    source or a few small ones, and the workers share even a small archive."""
    store = open_store(job.target, "r", storage_options=job.storage_options or None)
    try:
        session = _open_session(store, job.target)
        tasks: list[_Task] = []
        for variable in job.copy.with_data:
            target = find_variable(session.dataset, variable.fqn)
            assert target is not None
            chunks = session.array(target).chunks
            cuts = _source_starts(job.combine, variable.fqn, chunks)
            least = min(_LEAST_TASK_BYTES, options.max_memory // 6)
            for block in copy_blocks(variable, chunks, options.max_memory):
                per_record = value_itemsize(variable) * math.prod(s.stop - s.start for s in block[1:])
                parts = _cut(block, cuts, max(1, -(-least // per_record)))
                tasks.extend(_Task(job, variable.fqn, part) for part in parts)
        session.close()
    finally:
        store.close()
    return tasks


def _source_starts(plan: CombinePlan, fqn: str, chunks: tuple[int, ...]) -> list[int]:
    """Where each source's records of a record variable start, moved up to the next chunk
    boundary of the target (none for a variable without records)."""
    variable = plan.variables.get(fqn)
    if variable is None or not variable.record or not chunks:
        return []
    size = chunks[0]
    return sorted({-(-piece.start // size) * size for piece in plan.pieces(fqn)})


def _cut(block: Hyperslab, cuts: list[int], least: int) -> list[Hyperslab]:
    """``block`` cut along its first (record) axis at the ``cuts`` inside it, each part at
    least ``least`` records long where the block allows."""
    if not block:
        return [block]
    records, rest = block[0], block[1:]
    edges = [records.start]
    for cut in cuts:
        if records.start < cut < records.stop and cut - edges[-1] >= least:
            edges.append(cut)
    if len(edges) > 1 and records.stop - edges[-1] < least:
        edges.pop()  # the short last part joins the one before
    edges.append(records.stop)
    return [(slice(low, high), *rest) for low, high in itertools.pairwise(edges)]


def _open_session(store: object, display: str, read_only: bool = True) -> Session:
    stored = stored_dataset(store, display)  # type: ignore[arg-type]
    assert stored is not None
    convention, root = stored
    return Session.open(store, convention, read_only=read_only, root=root)  # type: ignore[arg-type]


def run_task(job: _Job, block: tuple[str, Hyperslab]) -> int:
    """Move one block (a variable's FQN and a hyperslab of it) of a job from the sources to
    the target and record it done; a transient store error is tried again with backoff (the
    job's ``retries``), and one that persists fails the task naming the block, its source
    files and the error (which names the key). Returns the bytes moved."""
    task = _Task(job, *block)
    retries = job.retries
    wait = retries.first_wait
    for attempt in range(retries.attempts + 1):
        try:
            return _move_block(task)
        except OSError as error:  # StoreError is one
            if attempt == retries.attempts or not _transient(error):
                raise CopyError(
                    f"{task.job.target}: variable {task.variable}, records {_records(task)} "
                    f"(from {', '.join(_files(task))}): {error}"
                ) from error
            log.warning("%s: %s; trying again in %.2f s", task.variable, error, wait)
            time.sleep(wait)
            wait *= 2
    raise AssertionError("unreachable")


#: What the text of a store error that may pass holds (S3's and HTTP's words, lower case).
_TRANSIENT_WORDS = (
    "throttl", "slowdown", "slow down", "too many requests", "timeout", "timed out", "connection",
    "reset by peer", "broken pipe", "temporar", "429", "500", "502", "503", "504",
)


def _transient(error: OSError) -> bool:
    """Whether a store error may pass when tried again: a dropped connection or time-out
    (also when the store wraps it), or throttling and server errors by their words."""
    if isinstance(error, (ConnectionError, TimeoutError)) or isinstance(error.__cause__, (ConnectionError, TimeoutError)):
        return True
    text = str(error).lower()
    return any(word in text for word in _TRANSIENT_WORDS)


def _records(task: _Task) -> str:
    return f"{task.block[0].start}:{task.block[0].stop}" if task.block else "(scalar)"


def _files(task: _Task) -> list[str]:
    """The sources the task's block comes from."""
    plan = task.job.combine
    if not task.block or not plan.variables[task.variable].record:
        pieces = plan.pieces(task.variable)
    else:
        pieces = plan.pieces(task.variable, task.block[0].start, task.block[0].stop)
    return [plan.sources[p.source].location for p in pieces]


def _move_block(task: _Task) -> int:
    job = task.job
    combined = CombinedSource(job.combine, job.storage_options)
    store = open_store(job.target, "r+", storage_options=job.storage_options or None)
    try:
        session = _open_session(store, job.target, read_only=False)
        variable = find_variable(session.dataset, task.variable)
        planned_variable = find_variable(job.copy.tree, task.variable)
        assert variable is not None and planned_variable is not None
        values = PlannedSource(combined, job.copy).read(planned_variable, task.block)
        session.write(variable, task.block, values)
        session.close()  # the chunks are durable before the task counts as done
        store.set(task.key, b"")
    finally:
        store.close()
        combined.close()
    return task.nbytes


def verify_copy(combined: CombinedSource, dst: str, storage_options: dict[str, object] | None = None) -> None:
    """CopyError at the first variable whose values or attributes differ between the copy
    at ``dst`` and the combined sources."""
    result = _sources.open_source(dst, storage_options=storage_options or None)
    try:
        for group in combined.dataset.walk():
            for variable in group.variables:
                copied = find_variable(result.dataset, variable.fqn)
                if copied is None:
                    raise CopyError(f"verify: {dst}: variable {variable.fqn} is missing")
                mine = {a.name: a for a in copied.attributes if not a.name.startswith("_")}
                theirs = {a.name: a for a in variable.attributes if not a.name.startswith("_")}
                if mine != theirs:
                    raise CopyError(f"verify: {dst}: variable {variable.fqn}: attributes differ from the sources'")
                chunks = result.storage.get(variable.fqn, VariableStorage()).chunks or ()
                for block in copy_blocks(variable, chunks, 64 << 20):
                    if not _same_values(combined.read(variable, block), result.read(copied, block)):
                        raise CopyError(f"verify: {dst}: variable {variable.fqn}: values differ at {block}")
    finally:
        result.close()


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b)) if a.dtype.kind != "O" else all(np.array_equal(x, y) for x, y in zip(a.flat, b.flat))


__all__ = ["ArchiveProgress", "CombinedSource", "Retries", "copy", "copy_archive", "run_task", "verify_copy"]
