"""A dataset open on a store: the tree in memory, the arrays that hold its variables' data, and
the metadata documents as last written.

Metadata is kept in memory while the dataset is open and written by :meth:`Session.sync`:
the convention computes every document of the tree, and only those that differ from what
the session last wrote (or read) are stored; documents of nodes that are gone are deleted.
Data goes straight to the engine's arrays (each with its write-back chunk cache).

A process killed at any moment leaves a store that opens and holds what the last sync
wrote, because a sync writes in an order where every step leaves a readable hierarchy:

1. the chunks held in caches, before any document that makes them visible (a grown shape);
2. the consolidated copy (v3: inline in the root ``zarr.json``; v2: ``.zmetadata``) is
   dropped, so that a crash never leaves a stale one;
3. node documents, deepest first, and of each node the document that makes it a node
   (``.zarray``, ``.zgroup``) last: a child exists before a parent lists it, and an array's
   chunks and shape before a group records the length of the dimension it grew;
4. the consolidated copy, afresh (v3: with the root document);
5. the documents of nodes that are gone (no parent lists them any more), then their data.

What a kill can still leave, readers accept (see :func:`reconcile_unlimited`): arrays that
disagree on the length of an unlimited dimension, which is then as long as the longest, as
in netCDF (the others read as fill past their own end); a missing consolidated copy.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

import numpy as np

from nczarr.errors import CodecError, ConcurrentWriteError, FormatError, MissingNodeError, ReadOnlyError
from nczarr.formats.base import Convention, StoredDataset, path_of
from nczarr.formats.dialect import RootDocuments
from nczarr.formats.documents import consolidated_copy
from nczarr.formats.keys import ROOT_DOCUMENT_KEYS
from nczarr.model import (
    AtomicType,
    DataModel,
    Dataset,
    Dimension,
    DimRef,
    Group,
    Node,
    Resolver,
    UserType,
    Variable,
    resolve_dimension,
    resolve_type,
)
from nczarr.store.base import ByteRange, Store
from nczarr.values.source import Hyperslab
from nczarr.values.storage import VariableStorage
from nczarr.values.stored import encoding_of, raw_dtype, raw_to_stored, stored_to_raw
from nczarr.zarr.array import Array
from nczarr.zarr.metadata import ZARR_JSON, ZARRAY, ZATTRS, ZGROUP, ZMETADATA
from nczarr.zarr.node import key_prefix

log = logging.getLogger(__name__)


class Session:
    """Reads, changes and writes one dataset in one store through one convention.

    ``consolidated``: whether syncs write consolidated metadata (None: as the convention
    says, which is yes except for byte-compatible ``NCZARR_V2``).

    ``seen``: the metadata documents as they were in the store when the session read them
    (bytes, or None for a key that was absent), when writes must check that nobody changed
    them meanwhile: for stores that no lock protects from other writers (object stores),
    a sync then refuses, with ConcurrentWriteError, to overwrite or delete a document that
    is no longer as this session last saw it (see docs/concurrency.md)."""

    def __init__(
        self,
        store: Store,
        convention: Convention,
        stored: StoredDataset,
        written: Mapping[str, bytes],
        *,
        read_only: bool = False,
        consolidated: bool | None = None,
        seen: Mapping[str, bytes | None] | None = None,
    ) -> None:
        self.store = store
        self.convention = convention
        self.stored = stored
        self.read_only = read_only or store.read_only
        self.consolidated = convention.consolidated if consolidated is None else consolidated
        self._written = dict(written)
        self._seen = None if seen is None else dict(seen)
        # whether the store holds a consolidated copy that the next change must drop first
        self._copy_stored = stored is not None and stored.consolidated
        self._arrays: dict[str, Array] = {}
        #: counts the changes that can retire Array objects (renames, removals), so that
        #: callers may keep the array of a variable while it has not changed
        self.generation = 0
        # by id() of an unlimited dimension: the arrays (FQN, axes) that grow with it
        self._users: dict[int, list[tuple[str, list[int]]]] = {}

    @property
    def dataset(self) -> Dataset:
        return self.stored.dataset

    @property
    def storage(self) -> dict[str, VariableStorage]:
        """Each variable's storage settings, by FQN."""
        return self.stored.storage

    @property
    def data_model(self) -> str:
        """netCDF4's name of the dataset's data model (a Zarr dataset is a netCDF-4 one)."""
        return "NETCDF4_CLASSIC" if self.dataset.data_model is DataModel.CLASSIC else "NETCDF4"

    # -- opening and creating ------------------------------------------------------------
    @classmethod
    def create(
        cls,
        store: Store,
        dataset: Dataset,
        convention: Convention,
        storage: Mapping[str, VariableStorage] | None = None,
        *,
        consolidated: bool | None = None,
        check_conflicts: bool = False,
    ) -> Session:
        """Write ``dataset`` (whose variables hold no data yet) as a new dataset in ``store``.
        Nothing is written when the convention cannot hold it. ``check_conflicts``: see
        ``seen`` in the class's docstring (the store is taken to hold no metadata yet)."""
        problems = convention.problems(dataset)
        if problems:
            raise FormatError(f"format {convention.name} cannot hold this dataset: " + "; ".join(problems))
        dataset.zarr_version = str(convention.zarr_format)
        store = convention.storage_view(store)
        seen = dict.fromkeys(ROOT_DOCUMENT_KEYS) if check_conflicts else None
        session = cls(store, convention, StoredDataset(dataset), {}, consolidated=consolidated, seen=seen)
        storage = dict(storage or {})
        for variable in _variables(dataset):
            # checked as a whole above: checking the tree again per variable costs n²
            session._define(variable, storage.get(variable.fqn, VariableStorage()))
        session.sync()
        return session

    @classmethod
    def open(
        cls,
        store: Store,
        convention: Convention,
        *,
        read_only: bool = False,
        use_consolidated: bool | None = None,
        consolidated: bool | None = None,
        root: RootDocuments | None = None,
        check_conflicts: bool = False,
    ) -> Session:
        """The dataset in ``store``, read through its consolidated metadata when there is
        some (``use_consolidated`` and ``root``: see :meth:`Convention.read`). What is stored
        counts as written: a dataset that is read and synced without changes writes nothing.
        ``check_conflicts``: see ``seen`` in the class's docstring."""
        view = convention.storage_view(store)
        if view is not store:  # the root's documents were read from the store, not the view
            store, root = view, None
        # a read-only session never writes, so it needs no record of what is stored
        # (computing every document costs more than reading them)
        writes = not (read_only or store.read_only)
        seen: dict[str, bytes | None] | None = None
        source = store
        if writes and check_conflicts:
            if root is None:
                root = RootDocuments.read(store)
            seen = {key: root.get(key) for key in ROOT_DOCUMENT_KEYS}
            source = _RecordingStore(store, seen)
        try:
            stored = convention.read(source, use_consolidated=use_consolidated, root=root)
        except MissingNodeError as exc:
            if use_consolidated is not None:
                raise
            try:
                stored = convention.read(source, use_consolidated=False, root=root)
            except FormatError:
                raise exc from None
            # a copy that another program left stale (it changed nodes and not the copy)
            log.warning("%r: the consolidated metadata disagrees with the nodes (%s): read the nodes", store, exc)
        reconcile_unlimited(stored)
        return cls(
            store,
            convention,
            stored,
            convention.documents(stored) if writes else {},
            read_only=read_only,
            consolidated=consolidated,
            seen=seen,
        )

    # -- data ----------------------------------------------------------------------------
    def array(self, variable: Variable) -> Array:
        """The engine array holding ``variable``'s data."""
        fqn = variable.fqn
        array = self._arrays.get(fqn)
        if array is None:
            metadata = self.stored.arrays.get(fqn)
            if metadata is None:
                raise FormatError(f"variable {fqn} has no array: define() it first")
            # data are visible to other readers after sync() or close(), as in netCDF: chunks
            # can be stored behind the caller
            array = Array(self.store, path_of(fqn), metadata, read_only=self.read_only, write_behind=True)
            self._arrays[fqn] = array
        return array

    def read(self, variable: Variable, selection: Hyperslab) -> np.ndarray:
        """The raw netCDF values of ``variable`` in ``selection`` (a DatasetSource's read:
        see :mod:`nczarr.values.stored`)."""
        array = self.array(variable)
        stored = array.get_orthogonal_selection(_engine_selection(array, selection))
        if not isinstance(stored, np.ndarray):  # the engine gives one element as a scalar
            single = np.empty((), array.dtype)
            single[()] = stored
            stored = single
        type = self._value_type(variable)
        endian = self.stored.storage.get(variable.fqn, VariableStorage()).endian
        return stored_to_raw(stored, type, raw_dtype(type, endian), encoding=encoding_of(variable))

    def write(self, variable: Variable, selection: Hyperslab, values: np.ndarray) -> None:
        """Store raw netCDF values of ``variable`` in ``selection`` (a DatasetSink's write),
        growing the unlimited dimensions it reaches past."""
        for ref, part in zip(variable.dimensions, selection):
            dimension = None if isinstance(ref, int) else resolve_dimension(variable.group, ref)  # type: ignore[arg-type]
            if dimension is not None and dimension.unlimited and part.stop > dimension.size:
                self.grow(dimension, part.stop)
        array = self.array(variable)
        type = self._value_type(variable)
        stored = raw_to_stored(np.asarray(values), type, array.dtype, encoding=encoding_of(variable))
        engine_selection = _engine_selection(array, selection)
        if engine_selection != selection:
            stored = stored.reshape(())
        array.set_orthogonal_selection(engine_selection, stored)

    def unwritten(self, variable: Variable, selection: Hyperslab) -> bool:
        """Whether no value of ``variable`` in ``selection`` was ever written (all read as
        fill): a writer of netCDF-4 files leaves such blocks unallocated, as netcdf-c does."""
        array = self.array(variable)
        return not array.stored_in(_engine_selection(array, selection))

    def _value_type(self, variable: Variable) -> AtomicType | UserType:
        type = variable.type
        if isinstance(type, AtomicType):
            return type
        found = resolve_type(variable.group, type)  # type: ignore[arg-type]
        if found is None:
            raise FormatError(f"{variable.fqn}: type {type!r} does not resolve")
        return found

    # -- changes -------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"the dataset in {self.store!r} is open read-only")

    def define(self, variable: Variable, storage: VariableStorage | None = None) -> None:
        """Give a variable already added to the tree its array (written at the next sync)."""
        self._check_writable()
        problems = self.convention.problems(self.dataset, only=variable)
        if problems:
            raise FormatError(
                f"format {self.convention.name} cannot hold {variable.fqn}: " + "; ".join(problems)
            )
        self._define(variable, storage or VariableStorage())

    def _define(self, variable: Variable, storage: VariableStorage) -> None:
        self._users.clear()
        try:
            metadata = self.convention.array_metadata(variable, storage)
        except CodecError as error:  # the engine does not know which variable it was building
            raise CodecError(f"variable {variable.fqn}: {error}") from error
        if storage.chunks is None and variable.dimensions:
            # the chunks the convention chose, as a source tells them (and as read back)
            storage = replace(storage, chunks=tuple(metadata.chunk_shape))
        self.stored.storage[variable.fqn] = storage
        self.stored.arrays[variable.fqn] = metadata

    def has_data(self, variable: Variable) -> bool:
        """Whether any chunk of ``variable`` was written (netCDF-4 fixes its fill value then)."""
        array = self._arrays.get(variable.fqn)
        if array is not None:
            array.flush()
        prefix = path_of(variable.fqn) + "/"
        return any(not _is_document(key) for key in self.store.list_prefix(prefix))

    def refill(self, variable: Variable) -> None:
        """Rebuild ``variable``'s array after its ``_FillValue`` attribute changed (netCDF4's
        ``setncatts`` sets it after creation, before any data)."""
        self._check_writable()
        fqn = variable.fqn
        array = self._arrays.pop(fqn, None)
        if array is not None:  # its cache holds chunks filled with the old value
            array.flush()
        self.stored.arrays[fqn] = self.convention.array_metadata(variable, self.stored.storage[fqn])

    def grow(self, dimension: Dimension, size: int) -> None:
        """Set an unlimited dimension's current length; every array that uses it takes the
        new shape (chunks beyond the old length read as fill until written)."""
        self._check_writable()
        if not dimension.unlimited:
            raise FormatError(f"dimension {dimension.fqn} is not unlimited and cannot grow")
        if size < dimension.size:
            raise FormatError(
                f"unlimited dimension {dimension.fqn} cannot shrink from {dimension.size} to {size}"
            )
        dimension.size = size
        users = self._users.get(id(dimension))
        if users is None:  # appending record by record must not walk the tree each time
            users = self._users[id(dimension)] = [
                (variable.fqn, axes)
                for variable in _variables(self.dataset)
                if (axes := [i for i, ref in enumerate(variable.dimensions) if _resolves_to(variable, ref, dimension)])
            ]
        for fqn, axes in users:
            metadata = self.stored.arrays[fqn]
            shape = list(metadata.shape)
            for axis in axes:
                shape[axis] = size
            metadata = metadata.with_shape(tuple(shape))
            self.stored.arrays[fqn] = metadata
            if fqn in self._arrays:
                self._arrays[fqn].metadata = metadata

    def rename(self, node: Node, new_name: str) -> None:
        """Rename a dimension, variable, group or attribute. The data of a variable or group
        moves with it; variables that use a renamed dimension keep using it."""
        self._check_writable()
        self._users.clear()
        self.generation += 1
        parent = node.parent
        if isinstance(node, (Variable, Group)) and parent is not None:
            # Crash-safe: the keys are copied to the new place, the documents that name the
            # new place are written, and only then is the old place removed (by the sync:
            # its documents are gone). A kill in between leaves both, never neither.
            old_fqn = node.fqn
            moved = {fqn for fqn in self.stored.arrays if fqn == old_fqn or fqn.startswith(old_fqn + "/")}
            self.flush()
            for fqn in moved:
                self._arrays.pop(fqn, None)
            old_path = path_of(old_fqn)
            old_name, node.name = node.name, new_name
            try:
                self._copy_prefix(old_path, path_of(node.fqn))
            except BaseException:
                node.name = old_name  # the data did not move: the tree keeps naming it
                raise
            for fqn in moved:
                new_fqn = node.fqn + fqn[len(old_fqn) :]
                self.stored.arrays[new_fqn] = self.stored.arrays.pop(fqn)
                self.stored.storage[new_fqn] = self.stored.storage.pop(fqn)
            self.sync()
        elif isinstance(node, Dimension):
            # Variables name their dimensions: those that meant this one must keep meaning it.
            users = [
                (variable, i)
                for variable in _variables(self.dataset)
                for i, ref in enumerate(variable.dimensions)
                if _resolves_to(variable, ref, node)
            ]
            node.name = new_name
            for variable, i in users:
                was_fqn = str(variable.dimensions[i]).startswith("/")
                plain = not was_fqn and variable.group is not None and resolve_dimension(variable.group, new_name) is node
                variable.dimensions[i] = new_name if plain else node.fqn
        elif isinstance(node, UserType):
            raise FormatError(f"netCDF cannot rename a user type ({node.fqn})")
        else:
            node.name = new_name

    def forget(self, variable: Variable) -> None:
        """Drop the array of a variable removed from the tree (its data is deleted at sync)."""
        fqn = variable.fqn
        self._users.clear()
        self.generation += 1
        self._arrays.pop(fqn, None)
        self.stored.arrays.pop(fqn, None)
        self.stored.storage.pop(fqn, None)

    # -- writing -------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the chunks the arrays hold in their caches."""
        for array in self._arrays.values():
            array.flush()

    def sync(self) -> None:
        """Write the chunks held in caches and every metadata document that changed, then
        the consolidated metadata when anything changed, in the order the module's
        docstring gives (each step leaves a store that opens)."""
        if self.read_only:
            return
        documents = self.convention.documents(self.stored)
        changed = {k: v for k, v in documents.items() if self._written.get(k) != v}
        gone = [k for k in self._written if k not in documents]
        if not changed and not gone:
            self.flush()
            self.store.flush()  # chunks may have changed
            return
        copy = consolidated_copy(documents, self.convention.zarr_format) if self.consolidated else None
        copy_key = ZARR_JSON if self.convention.zarr_format == 3 else ZMETADATA
        # before the chunks too: a writer that lost the race should not store its records
        self._check_unchanged(
            [*changed, *gone, *([copy_key] if copy is not None or self._copy_stored else [])]
        )
        self.flush()
        self._drop_copy()
        if copy is not None:
            changed.pop(copy[0], None)  # the v3 root is written once, last, with its copy
        for _, keys in itertools.groupby(sorted(changed, key=_write_order), key=_write_order):
            self._set_many({key: changed[key] for key in keys})  # a batch: may run concurrently
        if copy is not None:
            self._set(*copy)
            self._copy_stored = True
        # last: the parents that listed them (the v3 root: just above) no longer do
        self._delete_gone(gone, documents)
        log.debug("synced %d documents, removed %d", len(changed), len(gone))
        self._written = documents
        self.store.flush()  # a store that buffers writes (zip) makes them survive a kill

    def _set(self, key: str, value: bytes) -> None:
        self._set_many({key: value})

    def _set_many(self, values: dict[str, bytes]) -> None:
        self.store.set_many(values)
        if self._seen is not None:
            self._seen.update(values)

    def _delete_gone(self, gone: list[str], documents: Mapping[str, bytes]) -> None:
        """Delete the documents of nodes that are gone, those that make a node first, then
        the data of each node that has no document left."""
        for key in sorted(gone, key=_write_order, reverse=True):
            self.store.delete(key)
            if self._seen is not None:
                self._seen[key] = None
        nodes = {key.rpartition("/")[0] for key in gone}
        for node_path in sorted(nodes, key=len, reverse=True):
            if node_path and not any(k.startswith(key_prefix(node_path)) for k in documents):
                self.store.delete_prefix(key_prefix(node_path))

    def _check_unchanged(self, keys: Iterable[str]) -> None:
        """ConcurrentWriteError when a document this sync would replace or delete is no
        longer what the session last saw (only when it checks; keys it never saw are not
        checked). What changes between this check and the writes goes unnoticed: object
        stores offer no write-if-unchanged to close that window."""
        if self._seen is None:
            return
        keys = [k for k in dict.fromkeys(keys) if k in self._seen]
        if not keys:
            return
        current = self.store.get_many(keys)
        changed = [k for k in keys if current.get(k) != self._seen[k]]
        if changed:
            raise ConcurrentWriteError(
                f"{self.store!r}: another writer changed {', '.join(sorted(changed))} since this "
                "dataset read it; no metadata was written (writing would lose their change): "
                "reopen the dataset and apply the changes again"
            )

    def _drop_copy(self) -> None:
        """Remove the stored consolidated metadata before node documents change; v3 by
        writing the root document as last written, without it."""
        if not self._copy_stored:
            return
        if self.convention.zarr_format == 3:
            self._set(ZARR_JSON, self._written[ZARR_JSON])
        else:
            self.store.delete(ZMETADATA)
            if self._seen is not None:
                self._seen[ZMETADATA] = None
        self._copy_stored = False

    def _copy_prefix(self, old: str, new: str, batch: int = 64) -> None:
        """Copy every key below ``old`` to the same place below ``new`` (whatever was below
        ``new``, left by an earlier crash, removed first), a batch at a time so a variable's
        data need not fit in memory."""
        old_prefix, new_prefix = key_prefix(old), key_prefix(new)
        self.store.delete_prefix(new_prefix)
        keys = list(self.store.list_prefix(old_prefix))
        for i in range(0, len(keys), batch):
            values = self.store.get_many(keys[i : i + batch])
            moved = {new_prefix + k[len(old_prefix) :]: v for k, v in values.items()}
            self.store.set_many(moved)
            if self._seen is not None:
                self._seen.update((k, v) for k, v in moved.items() if _is_document(k))

    def close(self) -> None:
        self.sync()
        self._arrays.clear()


def _engine_selection(array: Array, selection: Hyperslab) -> tuple[slice | int, ...]:
    """The engine's selection for a hyperslab: a scalar stored with shape [1] (as netcdf-c
    stores them) is its one element."""
    return (0,) if array.ndim != len(selection) else selection


def _variables(group: Group) -> Iterator[Variable]:
    for g in group.walk():
        yield from g.variables


def _resolves_to(variable: Variable, ref: DimRef, dimension: Dimension) -> bool:
    group = variable.group
    return isinstance(ref, str) and group is not None and resolve_dimension(group, ref) is dimension


_NODE_DOCUMENTS = frozenset({ZARR_JSON, ZARRAY, ZGROUP})


def _is_document(key: str) -> bool:
    return key.rpartition("/")[2] in (ZARR_JSON, ZARRAY, ZGROUP, ZATTRS)


def _write_order(key: str) -> tuple[int, bool]:
    """Deepest nodes first (a child before the parent that lists it, an array's shape before
    the group that records its dimension's length); of one node, the document that makes it
    a node last (a v2 ``.zattrs`` before its ``.zarray``)."""
    return -key.count("/"), key.rpartition("/")[2] in _NODE_DOCUMENTS


def reconcile_unlimited(stored: StoredDataset) -> None:
    """Make every unlimited dimension as long as the longest array that uses it, and every
    array that uses it as long as the dimension, in memory.

    A writer killed during a sync can leave arrays (each with its own document) and the
    group that records a dimension's length disagreeing on it; netCDF's rule for unlimited
    dimensions settles it: the dimension is as long as its longest variable, and a variable
    reads as fill past what it holds (its chunks there are absent)."""
    users: list[tuple[str, list[Dimension | None]]] = []
    resolver = Resolver()
    for variable in _variables(stored.dataset):
        metadata = stored.arrays.get(variable.fqn)
        refs = variable.dimensions
        if metadata is None or len(refs) != len(metadata.shape):
            continue  # a scalar stored with shape [1]
        group = variable.group
        assert group is not None
        dimensions = [None if isinstance(ref, int) else resolver.dimension(group, ref) for ref in refs]
        for dimension, length in zip(dimensions, metadata.shape):
            if dimension is not None and dimension.unlimited and length > dimension.size:
                log.warning(
                    "%s holds %d along unlimited dimension %s, which records %d: "
                    "taking the longer (a writer was interrupted)",
                    variable.fqn, length, dimension.fqn, dimension.size,
                )
                dimension.size = length
        users.append((variable.fqn, dimensions))
    for fqn, dimensions in users:
        metadata = stored.arrays[fqn]
        shape = tuple(
            d.size if d is not None and d.unlimited else n for d, n in zip(dimensions, metadata.shape)
        )
        if shape != tuple(metadata.shape):
            stored.arrays[fqn] = metadata.with_shape(shape)


class _RecordingStore(Store):
    """A read-only view of a store that records the documents read through it (what a
    session checking for other writers compares against before writing)."""

    def __init__(self, store: Store, seen: dict[str, bytes | None]) -> None:
        super().__init__(read_only=True)
        self._store = store
        self._seen = seen

    def __repr__(self) -> str:
        return repr(self._store)

    def _record(self, keys: Iterable[str], found: Mapping[str, bytes]) -> None:
        for key in keys:
            if _is_document(key) or key == ZMETADATA:
                self._seen.setdefault(key, found.get(key))

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        value = self._store._get(key, byte_range)
        if byte_range is None:
            self._record([key], {} if value is None else {key: value})
        return value

    def _get_many(self, keys: list[str], byte_range: ByteRange | None = None) -> dict[str, bytes]:
        found = self._store._get_many(keys, byte_range)
        if byte_range is None:
            self._record(keys, found)
        return found

    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        raise AssertionError("read-only")  # never called: the base class refuses first

    def _delete(self, key: str) -> None:
        raise AssertionError("read-only")

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        return self._store._list_prefix(prefix)

    def _list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        return self._store._list_dir(prefix)

    def _exists(self, key: str) -> bool:
        return self._store._exists(key)

    def _getsize(self, key: str) -> int | None:
        return self._store._getsize(key)
