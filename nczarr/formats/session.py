"""A dataset open on a store: the tree in memory, the arrays that hold its variables' data, and
the metadata documents as last written.

Metadata is kept in memory while the dataset is open and written by :meth:`Session.sync`:
the convention computes every document of the tree, and only those that differ from what
the session last wrote (or read) are stored; documents of nodes that are gone are deleted.
Data goes straight to the engine's arrays (each with its write-back chunk cache).

Consolidated metadata (v3: inline in the root ``zarr.json``; v2: ``.zmetadata``) is written
by every sync that changes metadata, unless the convention or the session turns it off. It
is never left stale: the stored copy is dropped before the first node document of a change
is written and written afresh last, so a crash in between leaves none rather than a wrong one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

from nczarr.errors import ReadOnlyError
from nczarr.formats.base import Convention, FormatError, StoredDataset, VariableStorage, path_of
from nczarr.formats.common import RootDocuments, consolidated_copy
from nczarr.model import Dataset, Dimension, Group, Node, UserType, Variable, resolve_dimension
from nczarr.store.base import Store
from nczarr.zarr.array import Array
from nczarr.zarr.metadata import ZARR_JSON, ZMETADATA
from nczarr.zarr.node import key_prefix

log = logging.getLogger(__name__)


class Session:
    """Reads, changes and writes one dataset in one store through one convention.

    ``consolidated``: whether syncs write consolidated metadata (None: as the convention
    says, which is yes except for byte-compatible ``NCZARR_V2``)."""

    def __init__(
        self,
        store: Store,
        convention: Convention,
        stored: StoredDataset,
        written: Mapping[str, bytes],
        *,
        read_only: bool = False,
        consolidated: bool | None = None,
    ) -> None:
        self.store = store
        self.convention = convention
        self.stored = stored
        self.read_only = read_only or store.read_only
        self.consolidated = convention.consolidated if consolidated is None else consolidated
        self._written = dict(written)
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
    ) -> Session:
        """Write ``dataset`` (whose variables hold no data yet) as a new dataset in ``store``.
        Nothing is written when the convention cannot hold it."""
        problems = convention.problems(dataset)
        if problems:
            raise FormatError(f"format {convention.name} cannot hold this dataset: " + "; ".join(problems))
        dataset.zarr_version = str(convention.zarr_format)
        session = cls(store, convention, StoredDataset(dataset), {}, consolidated=consolidated)
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
    ) -> Session:
        """The dataset in ``store``, read through its consolidated metadata when there is
        some (``use_consolidated`` and ``root``: see :meth:`Convention.read`). What is stored
        counts as written: a dataset that is read and synced without changes writes nothing."""
        stored = convention.read(store, use_consolidated=use_consolidated, root=root)
        # a read-only session never writes, so it needs no record of what is stored
        # (computing every document costs more than reading them)
        writes = not (read_only or store.read_only)
        return cls(
            store,
            convention,
            stored,
            convention.documents(stored) if writes else {},
            read_only=read_only,
            consolidated=consolidated,
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
        self.stored.storage[variable.fqn] = storage
        self.stored.arrays[variable.fqn] = self.convention.array_metadata(variable, storage)

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
            old_fqn = node.fqn
            moved = {fqn for fqn in self.stored.arrays if fqn == old_fqn or fqn.startswith(old_fqn + "/")}
            self.flush()
            for fqn in moved:
                self._arrays.pop(fqn, None)
            old_path = path_of(old_fqn)
            node.name = new_name
            self._drop_copy()  # the move changes node documents before the next sync
            _move_prefix(self.store, old_path, path_of(node.fqn))
            for fqn in moved:
                new_fqn = node.fqn + fqn[len(old_fqn) :]
                self.stored.arrays[new_fqn] = self.stored.arrays.pop(fqn)
                self.stored.storage[new_fqn] = self.stored.storage.pop(fqn)
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
                plain = not was_fqn and resolve_dimension(variable.group, new_name) is node
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
        the consolidated metadata when anything changed."""
        if self.read_only:
            return
        self.flush()
        documents = self.convention.documents(self.stored)
        changed = {k: v for k, v in documents.items() if self._written.get(k) != v}
        gone = [k for k in self._written if k not in documents]
        if not changed and not gone:
            return
        if self.convention.zarr_format == 3 and (self._copy_stored or self.consolidated):
            # the new root is written first without the copy (dropping a stored one), or
            # last with the fresh copy
            root = changed.pop(ZARR_JSON, documents[ZARR_JSON])
            self._drop_copy(root)
        else:
            self._drop_copy()
        if changed:
            self.store.set_many(changed)
        for key in gone:
            # The documents of a node that is gone: its data goes with it.
            node_path = key.rpartition("/")[0]
            if node_path and not any(k.startswith(key_prefix(node_path)) for k in documents):
                self.store.delete_prefix(key_prefix(node_path))
            else:
                self.store.delete(key)
        if self.consolidated:
            key, value = consolidated_copy(documents, self.convention.zarr_format)
            self.store.set(key, value)
            self._copy_stored = True
        log.debug("synced %d documents, removed %d", len(changed), len(gone))
        self._written = documents

    def _drop_copy(self, root: bytes | None = None) -> None:
        """Remove the stored consolidated metadata before node documents change; v3 by
        writing ``root`` (default: the root document as last written) without it."""
        if not self._copy_stored:
            return
        if self.convention.zarr_format == 3:
            self.store.set(ZARR_JSON, self._written[ZARR_JSON] if root is None else root)
        else:
            self.store.delete(ZMETADATA)
        self._copy_stored = False

    def close(self) -> None:
        self.sync()
        self._arrays.clear()


def _variables(group: Group) -> Iterator[Variable]:
    for g in group.walk():
        yield from g.variables


def _resolves_to(variable: Variable, ref: object, dimension: Dimension) -> bool:
    return not isinstance(ref, int) and resolve_dimension(variable.group, ref) is dimension


def _move_prefix(store: Store, old: str, new: str, batch: int = 64) -> None:
    """Move every key below ``old`` to the same place below ``new``, a batch at a time so a
    variable's data need not fit in memory."""
    old_prefix, new_prefix = key_prefix(old), key_prefix(new)
    keys = list(store.list_prefix(old_prefix))
    for i in range(0, len(keys), batch):
        values = store.get_many(keys[i : i + batch])
        store.set_many({new_prefix + k[len(old_prefix) :]: v for k, v in values.items()})
    store.delete_many(keys)
