"""The ``nczarr`` engine of ``xarray.open_dataset``: any dataset nczarr opens (NCZarr, netcdf-c's
NCZarr and pure Zarr, zarr-python's and xarray's stores, netCDF files), read lazily.

The engine is a face: it opens an :class:`nczarr.Dataset` (through xarray's file manager, so
that a dask worker reopens it by name), hands xarray each variable's stored values with
netCDF4-python's automatic mask, scale and char-to-string rules turned off, and leaves CF
decoding to xarray, exactly as xarray's own netCDF4 engine does; the data types, dimension
names and attributes nczarr gives a pure Zarr store (anonymous and renamed dimensions, mapped
data types) are the api's, so the engine shows what ``nczarr dump`` shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, suppress
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from xarray.backends.common import (
    AbstractDataStore,
    BackendArray,
    BackendEntrypoint,
    datatree_from_dict_with_io_cleanup,
)
from xarray.backends.file_manager import CachingFileManager
from xarray.backends.locks import SerializableLock
from xarray.backends.store import StoreBackendEntrypoint
from xarray.coding.strings import create_vlen_dtype
from xarray.core import indexing
from xarray.core.utils import FrozenDict, close_on_error
from xarray.core.variable import Variable as XrVariable

from nczarr.api import Dataset, EnumType, Variable
from nczarr.errors import GroupNotFoundError
from nczarr.formats import detect
from nczarr.formats.location import parse_location
from nczarr.store import ZipStore, open_store

if TYPE_CHECKING:
    import xarray as xr

#: The conventions whose stores are unambiguously nczarr's to open when no engine is named
#: (pure Zarr stays with xarray's zarr engine, ``.nc`` files with its netCDF engines).
_CLAIMED_CONVENTIONS = frozenset({"NCZARR", "NCZARR_V2"})


class NczarrArray(BackendArray):
    """One variable's stored values, read lazily: a selection reads only the chunks it touches."""

    __slots__ = ("datastore", "dtype", "name", "shape")

    def __init__(self, name: str, datastore: NczarrDataStore) -> None:
        self.datastore = datastore
        self.name = name
        variable = datastore.variable(name)
        self.shape = variable.shape
        # a variable-length string is an object array that remembers it holds str
        self.dtype = create_vlen_dtype(str) if variable.dtype is str else np.dtype(variable.dtype)

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.OUTER, self._read)

    def _read(self, key: tuple[int | slice | np.ndarray, ...]) -> np.ndarray:
        with self.datastore.lock:
            values = self.datastore.variable(self.name)[key]
        return np.asarray(values)


class NczarrDataStore(AbstractDataStore):
    """One group of a dataset nczarr opens, as xarray's (read-only) data store."""

    def __init__(
        self,
        manager: CachingFileManager,
        filename: str,
        group: str | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> None:
        self._manager = manager
        self._filename = filename
        self._group = _group_path(group)
        self.lock = SerializableLock() if lock is None else lock

    @classmethod
    def open(
        cls,
        filename: str | os.PathLike[str],
        *,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> NczarrDataStore:
        """The store of ``group`` (a path, ``/`` or None: the root) of the dataset at ``filename``."""
        kwargs = {} if storage_options is None else {"storage_options": dict(storage_options)}
        filename = _absolute(filename)
        manager = CachingFileManager(Dataset, filename, mode="r", kwargs=kwargs)
        store = cls(manager, filename, group, lock)
        with close_on_error(store):
            store.ds  # noqa: B018  (opens now: a missing dataset or group fails here, not at first read)
        return store

    @property
    def ds(self) -> Dataset:
        """The open group (reopened by the file manager when it was closed)."""
        node: Dataset = self._manager.acquire()
        for name in self._group:
            try:
                node = node.groups[name]
            except KeyError:
                raise GroupNotFoundError(f"group not found: {'/'.join(self._group)!r} in {self._filename}") from None
        return node

    def get_child_store(self, group: str) -> NczarrDataStore:
        """The store of ``group`` (a path relative to this store's group) on the same dataset."""
        return type(self)(self._manager, self._filename, "/".join((*self._group, group)), self.lock)

    def group_paths(self) -> Iterator[str]:
        """The paths of this group (``/``) and of every group below it, relative to it, parents first."""
        pending: list[tuple[str, Dataset]] = [("/", self.ds)]
        while pending:
            path, node = pending.pop(0)
            yield path
            pending.extend((f"{path.rstrip('/')}/{name}", child) for name, child in node.groups.items())

    def variable(self, name: str) -> Variable:
        """The variable ``name`` of the group, reading stored values as they are."""
        variable = self.ds.variables[name]
        variable.set_auto_maskandscale(False)
        variable.set_auto_chartostring(False)
        return variable

    def open_store_variable(self, name: str, variable: Variable) -> XrVariable:
        """The lazy xarray variable of ``variable`` with its raw attributes and its encoding."""
        data = indexing.LazilyIndexedArray(NczarrArray(name, self))
        attributes = {key: variable.getncattr(key) for key in variable.ncattrs()}
        if "_FillValue" not in attributes and _fill_value_is_fill(variable):
            # xarray's zarr engine: a v2 array's fill_value is its _FillValue (netCDF4, and
            # the Dataset, show only a _FillValue attribute, as netcdf-c does)
            fill = variable.get_fill_value()
            if fill is not None:
                attributes["_FillValue"] = fill
        if data.dtype.kind == "S" and "_FillValue" in attributes:
            attributes["_FillValue"] = np.bytes_(attributes["_FillValue"])  # xarray's char fill is bytes
        encoding = _encoding(variable)
        if "least_significant_digit" in attributes:
            encoding["least_significant_digit"] = attributes.pop("least_significant_digit")
        encoding["source"] = self._filename
        encoding["original_shape"] = data.shape
        return XrVariable(variable.dimensions, data, attributes, encoding)

    def get_variables(self) -> Mapping[str, XrVariable]:
        return FrozenDict((name, self.open_store_variable(name, v)) for name, v in self.ds.variables.items())

    def get_attrs(self) -> Mapping[str, object]:
        group = self.ds
        return FrozenDict((key, group.getncattr(key)) for key in group.ncattrs())

    def get_dimensions(self) -> Mapping[str, int]:
        return FrozenDict((name, len(dimension)) for name, dimension in self.ds.dimensions.items())

    def get_encoding(self) -> dict[str, set[str]]:
        return {"unlimited_dims": {name for name, d in self.ds.dimensions.items() if d.isunlimited()}}

    def close(self, needs_lock: bool = True) -> None:
        self._manager.close(needs_lock)


def _absolute(filename: str | os.PathLike[str]) -> str:
    """A local path made absolute (a worker may run elsewhere); a URL as it is."""
    name = os.fspath(filename)
    return name if "://" in name else os.path.abspath(os.path.expanduser(name))


def _group_path(group: str | None) -> tuple[str, ...]:
    return tuple(part for part in (group or "").split("/") if part)


def _fill_value_is_fill(variable: Variable) -> bool:
    """Whether the variable's array is pure Zarr v2 (xarray's v2 convention)."""
    convention = getattr(variable._grp._shared.session, "convention", None)
    return getattr(convention, "name", None) == "ZARR_V2"


def _encoding(variable: Variable) -> dict[str, object]:
    """netCDF4's encoding of a variable: dtype (``str`` for strings; an enum's with its
    members), filters, chunking."""
    encoding: dict[str, object] = {"dtype": variable.dtype}
    datatype = variable.datatype
    if isinstance(datatype, EnumType):
        encoding["dtype"] = np.dtype(datatype.dtype, metadata={"enum": datatype.enum_dict, "enum_name": datatype.name})
    filters = variable.filters()
    if filters is not None:
        encoding.update(filters)
    chunking = variable.chunking()
    if chunking == "contiguous":
        encoding.update(contiguous=True, chunksizes=None)
    elif chunking is not None:
        encoding.update(
            contiguous=False,
            chunksizes=tuple(chunking),
            preferred_chunks=dict(zip(variable.dimensions, chunking)),
        )
    return encoding


def _claims(path: str) -> bool:
    """Whether ``path`` is unambiguously nczarr's: a netcdf-c URL naming its Zarr storage
    (``#mode=...``), or a local folder or zip archive holding an NCZarr dataset."""
    with suppress(Exception):  # whatever is not readable as a store is not ours
        location = parse_location(path)
        if location.convention is not None:
            return True
        if not (os.path.isdir(location.target) or (location.zip and os.path.isfile(location.target))):
            return False
        store = ZipStore(location.target, "r") if location.zip else open_store(location.target, "r")
        try:
            return detect(store).name in _CLAIMED_CONVENTIONS
        finally:
            store.close()
    return False


class NczarrBackendEntrypoint(BackendEntrypoint):
    """Opens any dataset nczarr opens with xarray: ``xr.open_dataset(path, engine="nczarr")``.

    ``group``: the path of one group (default: the root); ``storage_options``: fsspec's, for
    URLs; ``lock``: serialises reads of one store (default: one lock per store). xarray's decoding
    keywords (``mask_and_scale``, ``decode_times``, ...) work as for its netCDF4 engine."""

    description = "Open NCZarr, Zarr and netCDF datasets with nczarr in xarray"
    url = "https://github.com/nczarr/nczarr/blob/main/docs/xarray.md"
    supports_groups = True
    open_dataset_parameters: ClassVar[tuple[str, ...]] = (
        "filename_or_obj",
        "mask_and_scale",
        "decode_times",
        "concat_characters",
        "decode_coords",
        "drop_variables",
        "use_cftime",
        "decode_timedelta",
        "group",
        "storage_options",
        "lock",
    )

    def guess_can_open(self, filename_or_obj: object) -> bool:
        if not isinstance(filename_or_obj, str | os.PathLike):
            return False
        return _claims(os.fspath(filename_or_obj))

    def open_dataset(  # type: ignore[override]  # xarray's signature takes **kwargs
        self,
        filename_or_obj: str | os.PathLike[str],
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> xr.Dataset:
        store = NczarrDataStore.open(filename_or_obj, group=group, storage_options=storage_options, lock=lock)
        decoders = _Decoders(
            mask_and_scale, decode_times, concat_characters, decode_coords, drop_variables, use_cftime, decode_timedelta
        )
        return decoders.open(store)

    def open_groups_as_dict(  # type: ignore[override]  # xarray's signature takes **kwargs
        self,
        filename_or_obj: str | os.PathLike[str],
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> dict[str, xr.Dataset]:
        """Every group at or below ``group``, by its path relative to ``group`` (``/`` first)."""
        store = NczarrDataStore.open(filename_or_obj, group=group, storage_options=storage_options, lock=lock)
        decoders = _Decoders(
            mask_and_scale, decode_times, concat_characters, decode_coords, drop_variables, use_cftime, decode_timedelta
        )
        groups: dict[str, xr.Dataset] = {}
        try:
            for path in store.group_paths():
                groups[path] = decoders.open(store.get_child_store(path))
        except BaseException:
            for opened in groups.values():
                opened.close()
            raise
        return groups

    def open_datatree(  # type: ignore[override]  # xarray's signature takes **kwargs
        self,
        filename_or_obj: str | os.PathLike[str],
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> xr.DataTree:
        groups = self.open_groups_as_dict(
            filename_or_obj,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
            group=group,
            storage_options=storage_options,
            lock=lock,
        )
        return datatree_from_dict_with_io_cleanup(groups)


@dataclass(frozen=True)
class _Decoders:
    """xarray's CF decoding keywords, as ``open_dataset`` takes them."""

    mask_and_scale: bool
    decode_times: bool
    concat_characters: bool
    decode_coords: bool
    drop_variables: str | Iterable[str] | None
    use_cftime: bool | None
    decode_timedelta: bool | None

    def open(self, store: NczarrDataStore) -> xr.Dataset:
        """The decoded dataset of ``store`` (closed again when decoding fails)."""
        with close_on_error(store):
            return StoreBackendEntrypoint().open_dataset(store, **asdict(self))
