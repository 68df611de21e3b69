"""``nczarr copy``: any netCDF dataset to any other container, with nccopy's habits.

Sources: netCDF-3 files, netCDF-4 files (h5netcdf extra) and Zarr stores of every
convention. Targets: the same, chosen by the destination (a ``.nc`` path is a file, anything
else a Zarr store) and the kind (``-k``) or convention (``--format``). What the target cannot
hold is found before anything is written (or skipped when asked). Data move in blocks aligned
to the target's chunks, within a memory budget; the next block is read while the current one
is written.
"""

from __future__ import annotations

import copy as _copy
import ctypes
import functools
import itertools
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TextIO, cast

import numpy as np

from nczarr.convert import hdf5, hdf5write, netcdf3, sources
from nczarr.convert.specs import NCCOPY_MIN_CHUNK_BYTES, Shape, StorageRequest
from nczarr.errors import CopyError
from nczarr.formats import convention as make_convention
from nczarr.formats.location import NETCDF_FILE_SUFFIXES, parse_location
from nczarr.formats.session import Session
from nczarr.model import (
    AtomicType,
    CompoundType,
    DataModel,
    Dimension,
    Group,
    Node,
    UserType,
    Variable,
    VlenType,
    resolve_dimension,
    resolve_type,
    validate,
)
from nczarr.model import Dataset as ModelDataset
from nczarr.model.resolve import name_anonymous
from nczarr.model.types import KIND_SPELLINGS, netcdf_kind
from nczarr.store import Store, open_store, remove_tree
from nczarr.store.lock import writer_lock
from nczarr.values.blocks import plan_blocks
from nczarr.values.source import ArraysSource, DatasetSource, Hyperslab
from nczarr.values.storage import VariableStorage
from nczarr.values.stored import decode_records, has_record_encoding
from nczarr.values.types import default_fill, value_dtype

log = logging.getLogger(__name__)

#: Bytes per element assumed for strings and vlen data when planning blocks.
_OBJECT_ITEMSIZE = 64


@dataclass(frozen=True)
class CopyOptions:
    """nccopy's options. ``kind``: ``-k`` (a kind name or netCDF4 format name); ``format``:
    the Zarr convention of a Zarr target; ``chunking``: each ``-c`` (``dim/n,...`` or
    ``var:n,n,...``); ``filters``: each ``-F`` (``var1&var2,id,params|id,...``, ``*``,
    ``none``); ``deflate``: ``-d``; ``shuffle``: ``-s``; ``data_variables``: ``-v`` (data of
    these only); ``variables``: ``-V`` (these only); ``data_groups``: ``-g``; ``groups``:
    ``-G``; ``fix_unlimited``: ``-u``; ``min_chunk_bytes``: ``-M`` (None: nccopy's 8192 for a
    netCDF file, no minimum for a Zarr store, which has no contiguous layout);
    ``skip_unsupported``: leave out what the target cannot hold instead of refusing;
    ``max_memory``: the data held at once (``-m``)."""

    kind: str | None = None
    format: str | None = None
    chunking: str | tuple[str, ...] | None = None
    filters: tuple[str, ...] = ()
    deflate: int | None = None
    shuffle: bool = False
    data_variables: tuple[str, ...] | None = None
    variables: tuple[str, ...] | None = None
    data_groups: tuple[str, ...] | None = None
    groups: tuple[str, ...] | None = None
    fix_unlimited: bool = False
    min_chunk_bytes: int | None = None
    skip_unsupported: bool = False
    max_memory: int = 256 << 20
    storage_options: dict[str, object] = field(default_factory=dict)


@dataclass
class CopyReport:
    """What a copy did: bytes of data moved, what was skipped, and how long it took."""

    nbytes: int = 0
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0


def copy(
    src: sources.DatasetLocation,
    dst: sources.DatasetLocation,
    options: CopyOptions = CopyOptions(), *, progress: Callable[[int, int], None] | None = None
) -> CopyReport:
    """Copy the dataset at ``src`` to ``dst``. ``progress(done, total)`` is told the bytes
    of data copied so far."""
    source = sources.open_source(src, storage_options=options.storage_options or None)
    try:
        return copy_source(source, dst, options, progress=progress)
    finally:
        source.close()


def copy_source(
    source: DatasetSource,
    dst: sources.DatasetLocation,
    options: CopyOptions = CopyOptions(), *, progress: Callable[[int, int], None] | None = None
) -> CopyReport:
    """Write the dataset a DatasetSource reads to ``dst`` (see :func:`copy`)."""
    started = time.perf_counter()
    plan = plan_copy(source, dst, options)
    total = sum(_nbytes(v, plan.tree) for v in plan.with_data)
    done = [0]

    def advance(nbytes: int) -> None:
        done[0] += nbytes
        if progress is not None:
            progress(done[0], total)

    if plan.file_writer is not None:
        plan.file_writer(dst, PlannedSource(source, plan), plan.data_model, progress=advance)
    else:
        _write_zarr(dst, source, plan, options, advance)
    return CopyReport(nbytes=done[0], skipped=plan.skipped, seconds=time.perf_counter() - started)


# -- planning -----------------------------------------------------------------------------


@dataclass
class CopyPlan:
    """What a copy writes: the target's tree and storage, its data model, the convention of
    a Zarr target or the writer of a file, the variables whose data are copied and what is
    left out. An archive copy plans with it too, then runs the data in tasks."""

    tree: ModelDataset
    storage: dict[str, VariableStorage]
    data_model: str
    convention: str | None  # a Zarr target's convention, None for a file target
    file_writer: Callable[..., None] | None
    with_data: list[Variable]
    skipped: list[str]


def plan_copy(source: DatasetSource, dst: sources.DatasetLocation, options: CopyOptions) -> CopyPlan:
    """The plan of copying ``source`` to ``dst``; CopyError when the target cannot hold what
    the options keep (unless ``skip_unsupported``)."""
    tree: ModelDataset = _copy.deepcopy(source.dataset)
    path = os.fspath(dst) if isinstance(dst, (str, os.PathLike)) else ""
    to_file = "://" not in path and path.lower().endswith(NETCDF_FILE_SUFFIXES)
    request = _storage_request(options, to_file)
    data_model = _target_kind(source, options, request, to_file)
    _check_selection(tree, options)
    _select(tree, options)
    if to_file:  # a netCDF file names every dimension, as netcdf-c shows pure Zarr's unnamed ones
        name_anonymous(tree)
    _check_names(tree, request)
    if options.fix_unlimited:
        for group in tree.walk():
            for dimension in group.dimensions:
                dimension.unlimited = False
    tree.data_model = DataModel.ENHANCED if data_model == "NETCDF4" else DataModel.CLASSIC
    storage = {v.fqn: _storage(v, source.storage.get(v.fqn, VariableStorage()), request, to_file) for v in _variables(tree)}
    if to_file:
        file_writer, check = _file_writer(data_model)
        convention = None
    else:
        file_writer = None
        convention = (options.format or parse_location(path).convention or "NCZARR").upper()  # netcdf-c's #mode=zarr
        target = make_convention(convention)

        def check(dataset: ModelDataset, kind: str) -> list[str]:
            # the model's checks hold the classic data model's rules
            errors = [p for p in validate(dataset) if p.severity == "error"]
            return target.problems(dataset) + [f"{p.fqn}: {p.message}" for p in errors]

    skipped = _resolve_problems(tree, data_model, check, options.skip_unsupported, convention or data_model)
    storage = {fqn: s for fqn, s in storage.items() if find_variable(tree, fqn) is not None}
    with_data = [v for v in _variables(tree) if _copies_data(v, options)]
    _empty_unlimited(tree, with_data)
    return CopyPlan(tree, storage, data_model, convention, file_writer, with_data, skipped)


def _storage_request(options: CopyOptions, to_file: bool) -> StorageRequest:
    chunking = (options.chunking,) if isinstance(options.chunking, str) else options.chunking or ()
    minimum = options.min_chunk_bytes
    if minimum is None:  # a Zarr store has no contiguous layout: a small chunk is still a chunk
        minimum = NCCOPY_MIN_CHUNK_BYTES if to_file else 0
    return StorageRequest.parse(options.filters, chunking, options.deflate, options.shuffle, minimum)


def _target_kind(source: DatasetSource, options: CopyOptions, request: StorageRequest, to_file: bool) -> str:
    """The target's kind: ``-k``; else, for a file, the source's (netCDF-4 when ``-F`` adds
    filters; netCDF-4 classic model for a netCDF-3 source with ``-d``, ``-s`` or ``-c``, as
    nccopy); a Zarr store holds the classic or the enhanced data model: the enhanced one for
    a netCDF-4 or CDF-5 source (or ``-k``), as netcdf-c records every Zarr dataset."""
    data_model = _kind(options.kind) if options.kind else None
    if to_file:
        if options.format:
            raise CopyError(f"--format {options.format} is a Zarr convention; the target names a netCDF file")
        if request.asks_filters and data_model is not None and data_model.startswith("NETCDF3"):
            raise CopyError(f"-F filters need a netCDF-4 target, not {data_model}")
        if data_model is None and request.asks_filters:
            return "NETCDF4"
        restorage = request.deflate or request.shuffle or request.chunks
        if data_model is None and source.data_model.startswith("NETCDF3") and restorage:
            return "NETCDF4_CLASSIC"
        return data_model or source.data_model
    data_model = data_model or source.data_model
    if data_model in ("NETCDF4", netcdf3.DATA_MODELS[5]):  # CDF-5's types need the netCDF-4 model (nccopy -k nc4)
        return "NETCDF4"
    return "NETCDF4_CLASSIC"  # a Zarr dataset in the classic model


def _kind(name: str) -> str:
    kind = netcdf_kind(name)
    if kind is None:
        raise CopyError(f"unknown output kind {name!r}; use one of {', '.join(KIND_SPELLINGS)} (or ncgen's spellings)")
    return kind


def _file_writer(data_model: str) -> tuple[Callable[..., None], Callable[[ModelDataset, str], list[str]]]:
    if data_model.startswith("NETCDF3"):
        return netcdf3.write_netcdf3, netcdf3.problems
    hdf5.require_h5netcdf()
    return hdf5write.write_hdf5, hdf5write.problems


def _check_selection(tree: ModelDataset, options: CopyOptions) -> None:
    """Every variable ``-v``/``-V`` names and every group ``-g``/``-G`` names must exist, as
    nccopy requires."""
    variables = list(_variables(tree))
    for names in (options.variables, options.data_variables):
        for name in names or ():
            if not any(_named(v, (name,)) for v in variables):
                raise CopyError(f"{name}: no such variable")
    groups = list(tree.walk())
    for names in (options.groups, options.data_groups):
        for name in names or ():
            if not any(_is_group(g, name) for g in groups):
                raise CopyError(f"{name}: no such group")


def _check_names(tree: ModelDataset, request: StorageRequest) -> None:
    dimensions = [d.fqn for g in tree.walk() for d in g.dimensions]
    missing = request.unknown_names((v.fqn for v in _variables(tree)), dimensions)
    if missing:
        raise CopyError("the options name what the source lacks; nothing was written:\n  " + "\n  ".join(missing))


def _select(tree: ModelDataset, options: CopyOptions) -> None:
    """Drop the variables ``-V`` leaves out, and the groups ``-G`` does not list (the root
    group stays, its variables without data, as nccopy; a listed group needs its parent)."""
    if options.groups is not None:
        for group in list(tree.walk()):
            for child in list(group.groups):
                if not any(_is_group(child, name) for name in options.groups):
                    group.groups.remove(child)
    if options.variables is not None:
        for group in tree.walk():
            for variable in list(group.variables):
                if not _named(variable, options.variables):
                    group.variables.remove(variable)


def _empty_unlimited(tree: ModelDataset, with_data: list[Variable]) -> None:
    """An unlimited dimension that no copied data uses has no records, as nccopy writes it."""
    used = {id(d) for v in with_data for d in _dimensions(v) if d.unlimited}
    for group in tree.walk():
        for dimension in group.dimensions:
            if dimension.unlimited and id(dimension) not in used:
                dimension.size = 0


def _copies_data(variable: Variable, options: CopyOptions) -> bool:
    if options.data_variables is not None and not _named(variable, options.data_variables):
        return False
    if options.groups is not None and not _in_groups(variable, options.groups):
        return False  # the root group's variables under -G
    return options.data_groups is None or _in_groups(variable, options.data_groups)


def _named(variable: Variable, names: tuple[str, ...]) -> bool:
    return variable.name in names or variable.fqn in names or variable.fqn.lstrip("/") in names


def _in_groups(variable: Variable, groups: tuple[str, ...]) -> bool:
    group = variable.group
    assert group is not None
    return any(_is_group(group, g) for g in groups)


def _is_group(group: Group, name: str) -> bool:
    return group.fqn == name or group.fqn == "/" + name.strip("/") or name.strip("/") == group.name


def _storage(variable: Variable, stored: VariableStorage, request: StorageRequest, to_file: bool) -> VariableStorage:
    """The target storage of a variable: the source's, with nccopy's ``-F``, ``-d``, ``-s``,
    ``-c`` and ``-M`` (a scalar has neither filters nor chunks), and in a file nccopy's
    no-fill mode. A contiguous variable has no chunks: a netCDF file stores it so, a Zarr
    convention chooses its chunks."""
    if to_file and isinstance(variable.type, AtomicType):
        # nccopy writes its files in netcdf-c's no-fill mode (the HDF5 writer cannot yet
        # leave out the fill of a user type's variable)
        stored = replace(stored, fill=False)
    dimensions = _dimensions(variable)
    if not dimensions:
        return stored
    storage = request.filtered(variable.fqn, stored)
    filtered = bool(storage.compression or storage.shuffle or storage.fletcher32 or storage.codecs)
    shape = Shape(
        tuple(d.fqn for d in dimensions),
        tuple(d.size for d in dimensions),
        tuple(d.unlimited for d in dimensions),
        _itemsize(value_dtype(_resolved_type(variable))),
    )
    chunks = request.chunked(variable.fqn, shape, storage, filtered)
    if chunks is None and not to_file and stored.chunks and request.min_chunk_bytes:
        chunks = tuple(max(1, n) for n in shape.sizes)  # -M: one chunk, Zarr's contiguous
    return replace(storage, chunks=chunks)


def _resolve_problems(
    tree: ModelDataset, data_model: str, check: Callable[[ModelDataset, str], list[str]], skip: bool, target: str
) -> list[str]:
    """The problems the target has with ``tree``: an error listing them all, or (``skip``)
    the nodes they name removed and listed."""
    skipped: list[str] = []
    for _ in range(8):
        problems = check(tree, data_model)
        if not problems:
            return skipped
        if not skip:
            raise CopyError(
                f"the target ({target}) cannot hold {len(problems)} thing(s) of the source; "
                "nothing was written (use --skip-unsupported to leave them out):\n  " + "\n  ".join(problems)
            )
        removed = [p for p in problems if _remove(tree, p.partition(": ")[0])]
        if not removed:
            raise CopyError("cannot leave out what the target cannot hold:\n  " + "\n  ".join(problems))
        skipped.extend(removed)
    raise CopyError("cannot leave out what the target cannot hold")


def _remove(tree: ModelDataset, fqn: str) -> bool:
    """Remove the node named by a problem's FQN (a group, variable, type or attribute)."""
    owner_fqn, colon, _ = fqn.partition(":")
    for group in tree.walk():
        if colon:
            owners: list[Group | Variable] = [group, *group.variables]
            for owner in owners:
                if owner.fqn == (owner_fqn or "/"):
                    found = [a for a in owner.attributes if a.fqn == fqn]
                    for a in found:
                        owner.attributes.remove(a)
                    if found:
                        return True
            continue
        # each list holds nodes of one kind: the node found in it goes back out of it
        siblings = cast("tuple[list[Node], ...]", (group.variables, group.types, group.groups, group.dimensions))
        for children in siblings:
            for node in list(children):
                if node.fqn == fqn:
                    children.remove(node)
                    if isinstance(node, UserType):
                        _drop_users(tree, node)
                    return True
    return False


def _drop_users(tree: ModelDataset, user_type: UserType) -> None:
    """Variables and attributes of a removed type go with it."""
    for group in tree.walk():
        for variable in list(group.variables):
            if not isinstance(variable.type, AtomicType) and str(variable.type).split("/")[-1] == user_type.name:
                group.variables.remove(variable)
        owners: list[Group | Variable] = [group, *group.variables]
        for owner in owners:
            owner.attributes = [a for a in owner.attributes if isinstance(a.type, AtomicType)]


# -- data ---------------------------------------------------------------------------------


class PlannedSource:
    """The source as the planned tree shows it: the variables left out of data copying read
    as their fill value."""

    def __init__(self, source: DatasetSource, plan: CopyPlan) -> None:
        self._source = source
        self.dataset = plan.tree
        self.storage = plan.storage
        self.data_model = plan.data_model
        self._with_data = {v.fqn for v in plan.with_data}

    def read(self, variable: Variable, selection: Hyperslab) -> np.ndarray:
        original = find_variable(self._source.dataset, variable.fqn)
        if variable.fqn in self._with_data and original is not None:
            return self._source.read(original, selection)
        raw = self._source.read(original, tuple(slice(0, 0) for _ in selection)) if original is not None else None
        dtype = raw.dtype if raw is not None else np.dtype("f8")
        shape = tuple(s.stop - s.start for s in selection)
        type = _resolved_type(variable)
        if isinstance(type, CompoundType | VlenType) and has_record_encoding(type):
            return decode_records(np.full(shape, b"", object), type)  # empty records, empty vlens
        return np.full(shape, _fill_of(variable, dtype), dtype=dtype)

    def fill_from(self, variable: Variable, selection: Hyperslab) -> bool:
        """Whether all values from the block's first one on, in C order, are fill values
        (a parsed CDL text can tell)."""
        return isinstance(self._source, ArraysSource) and self._source.fill_from(variable, selection)

    def close(self) -> None:
        """The caller closes the wrapped source."""


def _fill_of(variable: Variable, dtype: np.dtype) -> object:
    attribute = variable.find_attribute("_FillValue")
    if attribute is not None:
        return attribute.values if isinstance(attribute.values, str) else attribute.values[0]
    if dtype.kind == "O":
        return ""
    return default_fill(dtype) if default_fill(dtype) is not None else 0


def _write_zarr(
    dst: sources.DatasetLocation,
    source: DatasetSource,
    plan: CopyPlan,
    options: CopyOptions,
    advance: Callable[[int], None],
) -> None:
    """Create the planned tree as a new Zarr dataset at ``dst`` and copy the data into it,
    holding the target's writer lock; a failure leaves nothing behind where nothing was."""
    lock = writer_lock(_local_path(dst))  # before 'w' replaces what is there
    try:
        existed = local_path_exists(dst)
        try:
            store = open_store(dst, "w", storage_options=options.storage_options or None)
            try:
                name = plan.convention or "NCZARR"
                written = parse_location(dst).convention_options(name) if isinstance(dst, (str, os.PathLike)) else {}
                target = Session.create(store, plan.tree, make_convention(name, **written), plan.storage)
                _fill_zarr(target, source, plan, options, advance)
                target.close()
            finally:
                store.close()
        except BaseException:
            if not existed:
                remove_local(dst)  # a failed copy leaves nothing behind
            raise
    finally:
        if lock is not None:
            lock.release()


def _fill_zarr(
    target: Session, source: DatasetSource, plan: CopyPlan, options: CopyOptions, advance: Callable[[int], None]
) -> None:
    """Write the data of the variables that have some, block by block, the next block read
    while the current one is written."""
    _return_freed_memory()
    planned = PlannedSource(source, plan)
    reading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nczarr-copy-read")
    try:
        for variable in plan.with_data:
            # blocks come in C order; a new dataset reads fill values where nothing was written
            whole = copy_blocks(variable, target.array(variable).chunks, options.max_memory)
            blocks = list(itertools.takewhile(partial(_holds_data, planned, variable), whole))
            pending = reading.submit(planned.read, variable, blocks[0]) if blocks else None
            for i, block in enumerate(blocks):
                assert pending is not None
                data = pending.result()
                if i + 1 < len(blocks):
                    pending = reading.submit(planned.read, variable, blocks[i + 1])
                target.write(variable, block, data)
                advance(data.size * _itemsize(data.dtype))
    finally:
        reading.shutdown(wait=True)


def _holds_data(source: PlannedSource, variable: Variable, block: Hyperslab) -> bool:
    """Whether the source may hold other values than fill from ``block`` on."""
    return not source.fill_from(variable, block)


#: glibc's ``mallopt`` parameter M_MMAP_THRESHOLD, and the value a copy sets.
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 1 << 20


@functools.cache
def _return_freed_memory() -> None:
    """Have glibc serve buffers of 1 MiB and more with ``mmap``, so that each goes back to
    the system when it is freed. By default glibc raises that threshold to the largest
    block freed so far, then serves chunk-sized buffers from per-thread heaps that keep them
    after they are freed: ``nczarr copy --memory 64`` of a zlib file held 2.3 times its
    budget above the baseline, 1.1 times with this (benchmarks/README.md, Conversion). The
    setting stays for the rest of the process; elsewhere than glibc nothing is done."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)


def copy_blocks(variable: Variable, chunks: tuple[int, ...], max_memory: int) -> Iterator[Hyperslab]:
    """The blocks of a variable: a sixth of the budget each (one block read, one written,
    the source library's buffers while it reads, the chunks being encoded and their
    encodings), never less than one chunk, which the engine encodes whole anyway."""
    shape = tuple(d.size for d in _dimensions(variable))
    chunks = chunks if len(chunks) == len(shape) else shape  # a scalar is stored as [1]
    itemsize = value_itemsize(variable)
    budget = max(max_memory // 6, itemsize * math.prod(min(c, n) for c, n in zip(chunks, shape)))
    return plan_blocks(shape, itemsize, budget, chunks)


def value_itemsize(variable: Variable) -> int:
    """Bytes per value of a variable of a planned tree, as blocks are planned (an estimate
    for strings and vlens)."""
    return _itemsize(value_dtype(_resolved_type(variable)))


def _resolved_type(variable: Variable) -> AtomicType | UserType:
    type = variable.type
    if isinstance(type, AtomicType):
        return type
    assert variable.group is not None
    found = resolve_type(variable.group, type)
    assert found is not None, type  # the planned tree passed the target's checks
    return found


def _local_path(dst: sources.DatasetLocation) -> str | None:
    """The local path of a target (for its writer lock), None for URLs."""
    if isinstance(dst, Store):
        return dst.local_path
    return _local_target(dst)


def _local_target(dst: object) -> str | None:
    """The local path of a path or ``file:`` URL (netcdf-c's ``file://p#mode=...`` too), None
    for other URLs and store objects."""
    if not isinstance(dst, (str, os.PathLike)):
        return None
    location = parse_location(dst)
    return location.target if location.local else None


def local_path_exists(dst: object) -> bool:
    """Whether ``dst`` is a local path (not a URL, not a store object) where something is."""
    path = _local_target(dst)
    return path is not None and os.path.lexists(path)


def remove_local(dst: object) -> None:
    """Remove the local file or folder ``dst`` (a target this copy created); links are removed,
    never followed; URLs and store objects are left alone."""
    path = _local_target(dst)
    if path is None:
        return
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            remove_tree(path)
        elif os.path.lexists(path):
            os.remove(path)
    except OSError as exc:  # the error that made us clean up matters more
        log.warning("could not remove %r after a failed copy: %s", path, exc)


def _itemsize(dtype: np.dtype) -> int:
    return _OBJECT_ITEMSIZE if dtype.hasobject else max(1, dtype.itemsize)


def _nbytes(variable: Variable, tree: ModelDataset) -> int:
    count = math.prod(d.size for d in _dimensions(variable))
    type = variable.type
    size = type.size if isinstance(type, AtomicType) and type.size else _OBJECT_ITEMSIZE
    return count * size


def _dimensions(variable: Variable) -> list[Dimension]:
    """The dimensions of a variable (an anonymous one, given by its length, unnamed)."""
    group = variable.group
    assert group is not None
    found: list[Dimension] = []
    for ref in variable.dimensions:
        dimension = Dimension("", ref) if isinstance(ref, int) else resolve_dimension(group, ref)
        assert dimension is not None, ref  # the tree passed the model's checks
        found.append(dimension)
    return found


def _variables(tree: Group) -> Iterator[Variable]:
    for group in tree.walk():
        yield from group.variables


def find_variable(tree: Group, fqn: str) -> Variable | None:
    """The variable of ``tree`` whose FQN is ``fqn``, None when it has none."""
    return next((v for v in _variables(tree) if v.fqn == fqn), None)


# -- progress -----------------------------------------------------------------------------


class ProgressBar:
    """A one-line progress bar on a terminal; silent elsewhere."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.2 and done < total:
            return
        self._last = now
        fraction = done / total if total else 1.0
        bar = "#" * int(fraction * 30)
        self.stream.write(f"\r[{bar:<30}] {fraction:6.1%} {done / 1e6:,.0f} / {total / 1e6:,.0f} MB")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


__all__ = [
    "CopyOptions",
    "CopyPlan",
    "CopyReport",
    "PlannedSource",
    "ProgressBar",
    "copy",
    "copy_blocks",
    "copy_source",
    "find_variable",
    "local_path_exists",
    "plan_copy",
    "remove_local",
    "value_itemsize",
]
