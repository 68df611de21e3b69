"""xarray's data store on one group of a dataset nczarr opens: read lazily by the engine,
written by :func:`nczarr.xarray.to_nczarr` (and by xarray's ``dump_to_store``).

The store is a face on :class:`nczarr.Dataset`, opened through xarray's file manager so that
a dask worker reopens it by name: it hands xarray each variable's stored values with
netCDF4-python's automatic mask, scale and char-to-string rules turned off and leaves CF
encoding and decoding to xarray, as xarray's own netCDF4 store does. Writing creates
dimensions, variables (with netCDF4's storage keywords) and attributes through the api.

Dask arrays are written in parallel by :class:`ChunkWriter` targets: each dask block goes
straight into the chunks it covers through its own store, in whatever process runs it, while
the metadata was written once, before, by the client (see docs/concurrency.md: writers of
disjoint regions).
"""

from __future__ import annotations

import os
import threading
import uuid
import warnings
from collections.abc import Hashable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from xarray.backends.common import BackendArray, WritableCFDataStore, _encode_variable_name
from xarray.backends.file_manager import CachingFileManager
from xarray.backends.locks import SerializableLock
from xarray.backends.netcdf3 import encode_nc3_attr_value, encode_nc3_variable
from xarray.coding.strings import CharacterArrayCoder, EncodedStringCoder, create_vlen_dtype
from xarray.core import indexing
from xarray.core.utils import FrozenDict, close_on_error
from xarray.core.variable import Variable as XrVariable

from nczarr.api import Dataset, EnumType, Variable
from nczarr.errors import ArgumentError, GroupNotFoundError
from nczarr.formats import stored_dataset
from nczarr.formats.location import NETCDF_FILE_SUFFIXES, parse_location
from nczarr.formats.session import Session
from nczarr.model import Group as ModelGroup
from nczarr.model import Variable as ModelVariable
from nczarr.store import open_store
from nczarr.store.base import Store
from nczarr.store.fsspec import FsspecStore

if TYPE_CHECKING:
    from dask.array import Array as DaskArray
    from fsspec import AbstractFileSystem

#: The storage keywords of netCDF4's ``createVariable`` that an encoding may give (as
#: ``to_netcdf`` takes them); ``chunks`` is ``to_zarr``'s name of ``chunksizes``.
STORAGE_ENCODINGS = frozenset(
    {
        "zlib", "szip", "bzip2", "blosc", "zstd", "complevel", "fletcher32", "contiguous", "chunksizes",
        "chunks", "shuffle", "compression", "significant_digits", "quantize_mode", "blosc_shuffle",
        "szip_coding", "szip_pixels_per_block", "endian", "least_significant_digit",
    }
)  # fmt: skip
#: Encoding keys that are no storage keywords: xarray's CF encoding uses ``_FillValue`` and
#: ``dtype``; the others xarray adds when it reads, and writing drops them (as ``to_netcdf`` does).
_NOT_STORAGE_ENCODINGS = frozenset({"source", "original_shape", "preferred_chunks", "_FillValue", "dtype"})
#: netCDF4's boolean flags, as the engine reports compression, and the compression they name.
_COMPRESSION_FLAGS = ("zlib", "szip", "bzip2", "blosc", "zstd")


@dataclass(frozen=True)
class Where:
    """Where a dataset is, in a form that pickles and reopens anywhere: a path or URL (with
    fsspec's ``storage_options``), or an fsspec filesystem whose root is the dataset."""

    name: str
    storage_options: Mapping[str, object] = field(default_factory=dict)
    filesystem: AbstractFileSystem | None = None

    def __hash__(self) -> int:  # the file manager's key (storage options are a dict)
        return hash((self.name, repr(sorted(self.storage_options.items(), key=repr)), id(self.filesystem)))

    @classmethod
    def of(cls, location: object, storage_options: Mapping[str, object] | None = None) -> Where:
        """A path, URL, fsspec mapper (``fsspec.get_mapper``, ``FSMap``) or filesystem."""
        options = dict(storage_options or {})
        if isinstance(location, str | os.PathLike):
            name = os.fspath(location)
            return cls(name if "://" in name else os.path.abspath(os.path.expanduser(name)), options)
        fs = getattr(location, "fs", None)
        if fs is not None and isinstance(getattr(location, "root", None), str):  # a mapper
            url = fs.unstrip_protocol(location.root)  # type: ignore[attr-defined]
            return cls(url, {**fs.storage_options, **options})
        if hasattr(location, "unstrip_protocol") and hasattr(location, "storage_options"):  # a filesystem
            if options:
                raise ArgumentError("storage_options apply to a URL, not to an fsspec filesystem object")
            return cls(repr(location), {}, location)
        raise ArgumentError(
            f"cannot open {location!r} with nczarr: give a path, a URL, an fsspec mapper or an fsspec filesystem"
        )

    @property
    def parallel(self) -> bool:
        """Whether other processes may write chunks here while the dataset is closed: a folder
        or an object store, not a zip archive, a netCDF file, or process memory."""
        if self.filesystem is not None:
            return "memory" not in self.filesystem.protocol
        location = parse_location(self.name, storage_options=self.storage_options)
        if location.local:
            return not location.zip and not location.target.lower().endswith(NETCDF_FILE_SUFFIXES)
        return not location.target.startswith("memory:")

    def dataset(self, mode: str = "r", **kwargs: object) -> Dataset:
        """The dataset here, opened as ``nczarr.Dataset(name, mode, **kwargs)`` opens it."""
        if self.filesystem is not None:
            return Dataset(FsspecStore(self.filesystem, read_only=mode == "r"), mode, **kwargs)  # type: ignore[arg-type]
        return Dataset(self.name, mode, storage_options=self.storage_options or None, **kwargs)  # type: ignore[arg-type]

    def store(self) -> Store:
        """The dataset's store, open for writing chunks."""
        if self.filesystem is not None:
            return FsspecStore(self.filesystem)
        location = parse_location(self.name, storage_options=self.storage_options)
        return open_store(location.target, "r+", storage_options=location.storage_options)


def _open_dataset(where: Where, mode: str = "r", **kwargs: object) -> Dataset:
    """xarray's file manager's opener (a module function: it pickles by name)."""
    return where.dataset(mode, **kwargs)


class NczarrArray(BackendArray):
    """One variable's stored values, read lazily (a selection reads only the chunks it
    touches) and written in place."""

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

    def __setitem__(self, key: object, values: object) -> None:
        with self.datastore.lock:
            self.datastore.variable(self.name)[key] = values


#: Per thread: the write whose dataset it holds open (ChunkWriter), its store and session.
_THREAD = threading.local()


@dataclass(frozen=True)
class ChunkWriter:
    """Where dask stores one block of a variable: ``writer[region] = block`` writes the block
    into the chunks it covers through a store of its own, and no metadata (the client wrote
    it, and grew the unlimited dimensions, before). Pickles small: the dataset's location,
    the variable's path and its netCDF data type."""

    where: Where
    path: tuple[str, ...]  # the groups, then the variable's name
    dtype: np.dtype | type[str]
    #: one write (a to_nczarr call): its tasks that run on one thread share an open dataset
    write: str

    def __setitem__(self, region: tuple[slice, ...], block: np.ndarray) -> None:
        values = np.asarray(block, dtype=object if self.dtype is str else self.dtype)
        # dask names each block's place with explicit starts and stops
        hyperslab = tuple(slice(part.start or 0, (part.start or 0) + n) for part, n in zip(region, values.shape))
        store, session = self._session()
        session.write(self._node(session), hyperslab, values)
        session.flush()  # the chunks only: no document changes
        store.flush()

    def _session(self) -> tuple[Store, Session]:
        """The dataset open for this write on this thread (read once per thread and write,
        not once per block: the tasks of one thread run one after the other)."""
        opened = getattr(_THREAD, "opened", None)
        if opened is not None and opened[0] == self.write:
            return opened[1], opened[2]
        if opened is not None:
            opened[1].close()
            _THREAD.opened = None
        store = self.where.store()
        try:
            stored = stored_dataset(store, self.where.name)
            if stored is None:  # pragma: no cover  (stored_dataset raises for an empty store)
                raise GroupNotFoundError(f"no dataset at {self.where.name}")
            convention, root = stored
            session = Session.open(store, convention, root=root)
        except BaseException:
            store.close()
            raise
        _THREAD.opened = (self.write, store, session)
        return store, session

    def _node(self, session: Session) -> ModelVariable:
        group: ModelGroup | None = session.dataset
        for name in self.path[:-1]:
            group = group.find_group(name) if group is not None else None
        variable = group.find_variable(self.path[-1]) if group is not None else None
        if variable is None:
            raise GroupNotFoundError(f"variable {'/'.join(self.path)!r} not found in {self.where.name}")
        return variable


class NczarrDataStore(WritableCFDataStore):
    """One group of a dataset nczarr opens, as xarray's data store: read by the engine,
    written by ``to_nczarr`` and xarray's ``dump_to_store``."""

    def __init__(
        self,
        manager: CachingFileManager,
        where: Where,
        group: str | None = None,
        lock: AbstractContextManager[object] | None = None,
        mode: str = "r",
    ) -> None:
        self._manager = manager
        self.where = where
        self._filename = where.name
        self._group = _group_path(group)
        self._mode = mode
        self.lock = SerializableLock() if lock is None else lock
        #: a region to write into existing variables (dimension name: slice), as ``to_zarr``'s
        self.region: dict[str, slice] = {}
        #: whether dask arrays go straight into chunks (ChunkWriter) rather than through the dataset
        self.parallel = mode != "r" and where.parallel
        #: pure Zarr dimensions an append grows (see ``grow_in_pure_zarr``)
        self._growing: set[str] = set()
        #: names this store's writes for the ChunkWriters (each write reads the metadata afresh)
        self.write_token = uuid.uuid4().hex

    @classmethod
    def open(
        cls,
        filename: object,
        mode: str = "r",
        *,
        format: str | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
        auto_complex: bool | None = None,
    ) -> NczarrDataStore:
        """The store of ``group`` (a path, ``/`` or None: the root) of the dataset at
        ``filename`` (a path, URL, fsspec mapper or filesystem), opened in ``mode`` (``r``,
        ``w``, ``a``, ``r+``) in ``format`` (nczarr's: ``NCZARR``, ``NCZARR_V2``, ``ZARR``,
        ``ZARR_V2``; netCDF4's ``NETCDF4`` for a ``.nc`` file); ``auto_complex``: netCDF4's
        (complex numbers as numpy's complex types)."""
        if mode not in ("r", "w", "a", "r+"):
            raise ArgumentError(f"mode must be 'r', 'w', 'a' or 'r+', got {mode!r}")
        where = Where.of(filename, storage_options)
        kwargs: dict[str, object] = {} if format is None else {"format": format}
        if auto_complex is not None:
            kwargs["auto_complex"] = auto_complex
        manager = CachingFileManager(_open_dataset, where, mode=mode, kwargs=kwargs)  # type: ignore[type-var]
        store = cls(manager, where, group, lock, mode)
        with close_on_error(store):
            store.ds  # noqa: B018  (opens now: a missing dataset or group fails here, not at first read)
        return store

    @property
    def ds(self) -> Dataset:
        """The open group (reopened by the file manager when it was closed; created when
        missing in a store open for writing)."""
        node: Dataset = self._manager.acquire()
        for name in self._group:
            if name in node.groups:
                node = node.groups[name]
            elif self._mode != "r":
                node = node.createGroup(name)
            else:
                raise GroupNotFoundError(f"group not found: {'/'.join(self._group)!r} in {self._filename}")
        for name in self._growing:  # the dataset may have been reopened since
            node.dimensions[name]._node.unlimited = True
        return node

    def grow_in_pure_zarr(self, name: str) -> bool:
        """Let the dimension ``name`` grow, as ``to_zarr``'s ``append_dim`` grows any: True in
        a pure Zarr store, which has no unlimited dimensions (nothing of it is stored: it
        is the arrays' shapes that grow); False in the netCDF conventions, where only an
        unlimited dimension grows."""
        if self.ds.disk_format != "ZARR":
            return False
        self._growing.add(name)
        self.ds  # noqa: B018  (marks it now)
        return True

    def get_child_store(self, group: str) -> NczarrDataStore:
        """The store of ``group`` (a path relative to this store's group) on the same dataset."""
        child = type(self)(self._manager, self.where, "/".join((*self._group, group)), self.lock, self._mode)
        child.ds  # noqa: B018  (a missing group fails, or is created, now)
        return child

    def group_paths(self) -> Iterator[str]:
        """The paths of this group (``/``) and of every group below it, relative to it, parents first."""
        pending: list[tuple[str, Dataset]] = [("/", self.ds)]
        while pending:
            path, node = pending.pop(0)
            yield path
            pending.extend((f"{path.rstrip('/')}/{name}", child) for name, child in node.groups.items())

    def variable(self, name: str) -> Variable:
        """The variable ``name`` of the group, reading and writing stored values as they are."""
        variable = self.ds.variables[name]
        variable.set_auto_maskandscale(False)
        variable.set_auto_chartostring(False)
        return variable

    # -- reading -----------------------------------------------------------------------------
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

    # -- writing -----------------------------------------------------------------------------
    def set_dimensions(self, variables: Mapping[Hashable, XrVariable], unlimited_dims: Iterable[Hashable] | None = None) -> None:
        """xarray's, except that the dimensions a region or an append writes into may differ
        in length (the variables' writes grow an unlimited one)."""
        existing = self.get_dimensions()
        unlimited = set(unlimited_dims or ())
        wanted: dict[Hashable, int] = {}
        for variable in variables.values():
            wanted.update(zip(variable.dims, variable.shape))
        for dim, length in wanted.items():
            name = str(dim)
            if name in existing:
                if length != existing[name] and name not in self.region:
                    raise ArgumentError(  # xarray's words, as its netCDF engines say it
                        f"Unable to update size for existing dimension {name!r} ({length} != {existing[name]}): "
                        "use append_dim= or region= to write into it"
                    )
            else:
                self.set_dimension(name, length, dim in unlimited)

    def set_dimension(self, name: str, length: int, is_unlimited: bool = False) -> None:
        _check_name(name)
        self.ds.createDimension(name, None if is_unlimited else length)

    @property
    def classic(self) -> bool:
        """Whether the dataset has netCDF's classic data model (no strings, groups, or types
        netCDF-3 lacks): values are encoded as xarray encodes them for netCDF-3."""
        return self.ds.data_model != "NETCDF4"

    def set_attribute(self, key: str, value: object) -> None:
        if self.classic:
            value = encode_nc3_attr_value(value)
        values = np.asarray(value) if isinstance(value, list | tuple) else None
        if values is not None and values.dtype.kind in "US" and values.size > 1:
            self.ds.setncattr_string(key, list(value))  # type: ignore[call-overload]  # a list of strings: NC_STRING
        else:
            self.ds.setncattr(key, value)

    def encode_variable(self, variable: XrVariable, name: Hashable | None = None) -> XrVariable:
        """Strings as netCDF-4 holds them (vlen ``str``, or ``S1`` characters); a big- or
        little-endian array stored in its byte order (``endian``); in the classic data model,
        as xarray encodes netCDF-3."""
        if variable.dtype.byteorder not in "=|":
            if self.classic:  # netCDF-3 is big-endian on disk: the byte order is no choice
                native = variable.dtype.newbyteorder("=")
                variable = XrVariable(variable.dims, variable.data.astype(native), variable.attrs, variable.encoding)
            else:
                endian = "big" if variable.dtype.byteorder == ">" else "little"
                variable = variable.copy(deep=False)
                variable.encoding.setdefault("endian", endian)
        if self.classic:
            return encode_nc3_variable(variable, name=name)
        for coder in (EncodedStringCoder(allows_unicode=True), CharacterArrayCoder()):
            variable = coder.encode(variable, name=name)
        return variable

    def set_variables(
        self,
        variables: Mapping[Hashable, XrVariable],
        check_encoding_set: set[Hashable],
        writer: object,
        unlimited_dims: Iterable[Hashable] | None = None,
    ) -> None:
        """Each variable created (or found) and its values handed to ``writer``, into the
        store's region when it has one."""
        for name, variable in variables.items():
            check = name in check_encoding_set
            target, source = self.prepare_variable(
                _encode_variable_name(name), variable, check, unlimited_dims=unlimited_dims
            )
            region = tuple(self.region.get(str(dim), slice(None)) for dim in variable.dims) if self.region else None
            writer.add(source, target, region=region)  # type: ignore[attr-defined]

    def prepare_variable(
        self,
        name: str,
        variable: XrVariable,
        check_encoding: bool = False,
        unlimited_dims: Iterable[Hashable] | None = None,
    ) -> tuple[NczarrArray | ChunkWriter, object]:
        _check_name(name)
        attributes = dict(variable.attrs)
        fill_value = attributes.pop("_FillValue", None)
        if fill_value is None and self.ds.disk_format == "ZARR":
            # pure Zarr keeps no netCDF default fill (a v2 reader would mask with it): none, as to_zarr writes
            fill_value = False
        datatype = self._datatype(name, variable)
        storage = _storage_keywords(variable, check_encoding, set(unlimited_dims or ()))
        data = variable.data
        parallel = self.parallel and is_dask(data)
        if name in self.ds.variables:
            stored = self.ds.variables[name]
        else:
            if parallel and storage.get("chunksizes") is None and not storage.get("contiguous"):
                # the dask chunks are the stored chunks, as to_zarr makes them
                storage["chunksizes"] = tuple(max(blocks[0], 1) for blocks in data.chunks)
            stored = self.ds.createVariable(name, datatype, [str(dim) for dim in variable.dims], fill_value=fill_value, **storage)
        stored.setncatts(attributes)
        if not parallel:
            return NczarrArray(name, self), data
        offsets = tuple(self.region[str(dim)].start or 0 if str(dim) in self.region else 0 for dim in variable.dims)
        chunking = stored.chunking()
        if isinstance(chunking, list):
            data = aligned_to_chunks(name, data, tuple(chunking), offsets)
        self._grow_unlimited(stored, variable.shape, offsets)
        return ChunkWriter(self.where, (*self._group, name), stored.dtype, self.write_token), data

    def _grow_unlimited(self, stored: Variable, shape: tuple[int, ...], offsets: tuple[int, ...]) -> None:
        """Unlimited dimensions made as long as the dask array's writes need, before any
        worker writes (a worker writes chunks only): one fill value at the far corner."""
        ends = tuple(offset + n for offset, n in zip(offsets, shape))
        dimensions = [self.ds.dimensions[dim] for dim in stored.dimensions] if stored.dimensions else []
        short = any(d.isunlimited() and len(d) < end for d, end in zip(dimensions, ends))
        if not short or 0 in shape:
            return
        fill = stored.get_fill_value()
        if fill is None:
            fill = "" if stored.dtype is str else np.zeros((), stored.dtype)
        with self.lock:
            self.variable(stored.name)[tuple(end - 1 for end in ends)] = fill  # raw: no packing

    def _datatype(self, name: str, variable: XrVariable) -> object:
        """netCDF4's data type of an encoded variable: ``str`` for vlen strings, an enum type
        for a dtype that carries enum members, else the numpy dtype."""
        encoded = variable.encoding.get("dtype")
        if encoded is str and self.classic:
            raise ArgumentError(f"encoding dtype=str for vlen strings is only supported with format='NETCDF4' ({name!r})")
        if encoded is str or variable.dtype.kind in "UO" or variable.dtype.kind == "T":
            return str
        if variable.dtype.kind not in "iufcSb":
            raise ArgumentError(f"unsupported dtype for an nczarr variable {name!r}: {variable.dtype}")
        dtype = variable.dtype
        metadata: Mapping[str, object] = dtype.metadata or (encoded.metadata if isinstance(encoded, np.dtype) else None) or {}
        enum_name, members = metadata.get("enum_name"), metadata.get("enum")
        if isinstance(enum_name, str) and isinstance(members, dict) and members:
            existing = self.ds.enumtypes.get(enum_name)
            if existing is None:
                return self.ds.createEnumType(dtype, enum_name, members)
            if existing.enum_dict != members:
                raise ArgumentError(
                    f"cannot write variable {name!r}: an enum {enum_name!r} with other members is already in the "
                    "dataset (give each enum its own name in encoding['dtype'].metadata)"
                )
            return existing
        return dtype

    def sync(self) -> None:
        self.ds.sync()

    def close(self, needs_lock: bool = True) -> None:
        self._manager.close(needs_lock)


def aligned_to_chunks(name: str, data: DaskArray, chunks: tuple[int, ...], offsets: tuple[int, ...]) -> DaskArray:
    """``data`` whose blocks each cover whole stored chunks (``chunks``, the array written from
    ``offsets`` on), so that no two dask tasks write one chunk: as it is when it already does,
    else rechunked, with a warning (as ``to_zarr`` asks: rechunk yourself to silence it)."""
    wanted = tuple(
        _aligned_blocks(sum(blocks), size, offset) for blocks, size, offset in zip(data.chunks, chunks, offsets)
    )
    stored = zip(data.chunks, wanted, offsets)
    if all(_boundaries(blocks, offset) <= _boundaries(target, offset) for blocks, target, offset in stored):
        return data
    warnings.warn(
        f"variable {name!r}: dask chunks {tuple(blocks[:3] for blocks in data.chunks)}... do not align with the stored "
        f"chunks {chunks} (written from {offsets}); rechunked to {tuple(blocks[:3] for blocks in wanted)}...",
        UserWarning,
        stacklevel=2,
    )
    return data.rechunk(wanted)


def _aligned_blocks(length: int, chunk: int, offset: int) -> tuple[int, ...]:
    """Blocks of ``length`` elements written from ``offset`` that end on chunk boundaries."""
    if length == 0:
        return (0,)
    first = min(length, chunk - offset % chunk)
    rest = length - first
    return (first, *([chunk] * (rest // chunk)), *([rest % chunk] if rest % chunk else []))


def _boundaries(blocks: tuple[int, ...], offset: int) -> set[int]:
    """Where blocks written from ``offset`` start, after the first one."""
    return {offset + int(end) for end in np.cumsum(blocks[:-1])}


def is_dask(data: object) -> bool:
    """Whether ``data`` is a dask array (known without importing dask)."""
    return type(data).__module__.startswith("dask.")


def _check_name(name: str) -> None:
    if "/" in name:  # xarray's words, as its netCDF engines say it
        raise ArgumentError(
            f"Forward slashes '/' are not allowed in variable and dimension names (got {name!r}): "
            "'/' separates groups"
        )


def _storage_keywords(variable: XrVariable, check: bool, unlimited: set[Hashable]) -> dict[str, object]:
    """netCDF4's ``createVariable`` keywords of a variable's encoding (``to_netcdf``'s and
    ``to_zarr``'s keys); unknown keys are an error when the user gave the encoding (``check``),
    else dropped (they came from another engine)."""
    encoding = dict(variable.encoding)
    if "chunks" in encoding:
        chunks = encoding.pop("chunks")
        encoding.setdefault("chunksizes", chunks)
    unknown = sorted(set(encoding) - STORAGE_ENCODINGS - _NOT_STORAGE_ENCODINGS)
    if unknown and check:
        raise ArgumentError(
            f"unexpected encoding for the nczarr engine: {unknown}; "
            f"valid keys: {sorted(STORAGE_ENCODINGS | {'_FillValue', 'dtype'})}"
        )
    keywords = {key: value for key, value in encoding.items() if key in STORAGE_ENCODINGS}
    chunksizes = keywords.get("chunksizes")
    if chunksizes is not None and not check:
        # chunks read from another dataset may no longer fit (as to_netcdf drops them)
        original = encoding.get("original_shape")
        too_big = any(c > n and dim not in unlimited for c, n, dim in zip(chunksizes, variable.shape, variable.dims))
        if too_big or (original is not None and tuple(original) != variable.shape):
            del keywords["chunksizes"]
    if any(dim in unlimited for dim in variable.dims) and not check:
        keywords.pop("contiguous", None)
    # netCDF4's flags (as the engine reports compression) name a compression
    for flag in _COMPRESSION_FLAGS:
        if keywords.pop(flag, False) and keywords.get("compression") is None:
            keywords["compression"] = flag
    if keywords.get("contiguous") and keywords.get("chunksizes") is None:
        keywords.pop("chunksizes", None)
    return keywords


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
