"""netCDF-4 files written through h5py (nczarr's optional extra ``hdf5``) as netcdf-c lays
them out: a tree, its storage settings and values, as netCDF4 writes them; the file appears
only when complete. Filters beyond deflate come from the ``hdf5plugin`` package, imported
when a variable asks for one."""

from __future__ import annotations

import contextlib
import copy
import ctypes
import logging
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from nczarr._version import __version__
from nczarr.convert.hdf5 import NON_COORD, VARIABLE_ITEMSIZE, require_h5netcdf
from nczarr.errors import ArgumentError, Hdf5Error
from nczarr.formats import FormatError
from nczarr.model import (
    AtomicType,
    CompoundType,
    DataModel,
    Dataset,
    Dimension,
    EnumType,
    Group,
    OpaqueType,
    Resolver,
    UserType,
    Variable,
    VlenType,
    validate,
)
from nczarr.store import ANY_FILE, FileState, replace_file, temp_beside
from nczarr.values.blocks import plan_blocks
from nczarr.values.source import DatasetSource
from nczarr.values.storage import (
    BLOSC_CODES,
    HDF5_BLOSC,
    HDF5_BZIP2,
    HDF5_DEFLATE,
    HDF5_FILTER_OF,
    HDF5_ZSTD,
    VariableStorage,
    netcdf_chunks,
)
from nczarr.values.stored import compound_records, convert_records, decode_records, encode_records, has_record_encoding
from nczarr.values.types import (
    DEFAULT_FILL,
    compound_dtype,
    default_fill,
    element_dtype,
    fill_attribute,
    numpy_dtype,
    value_dtype,
)

log = logging.getLogger(__name__)

#: netcdf-c's NAME of a dimension scale that is no variable (followed by the size, ``%10d``).
_NOT_A_VARIABLE = "This is a netCDF dimension but not a netCDF variable."
#: hdf5plugin's names of the filters nczarr writes besides deflate.
_PLUGIN_NAMES = {HDF5_BZIP2: "bzip2", HDF5_ZSTD: "zstd", HDF5_BLOSC: "blosc"}
_PLUGIN_HINT = "pip install hdf5plugin"


def write_hdf5(
    path: str | os.PathLike[str],
    source: DatasetSource,
    data_model: str = "NETCDF4",
    *,
    chunking: Callable[[Variable], tuple[int, ...] | None] | None = None,
    progress: Callable[[int], None] | None = None,
    max_memory: int = 64 << 20,
    storage: Mapping[str, VariableStorage] | None = None,
    replaces: FileState | str | None = ANY_FILE,
) -> None:
    """Write ``source`` as a netCDF-4 file at ``path`` (``data_model`` ``NETCDF4`` or
    ``NETCDF4_CLASSIC``), its data block by block in at most about ``max_memory`` bytes.

    ``chunking`` may give a variable's chunk shape (None: the source's, else netcdf-c's
    default when chunks are needed); ``storage`` the storage settings of variables by FQN
    (default: the source's); ``progress`` is called with the number of values of each block
    written. What cannot be written (vlens of strings or of vlens, filters HDF5 has no plugin
    for) is refused before anything is written; the file appears (atomically replacing what
    was there, only if that is the file ``replaces`` says: :func:`~nczarr.store.replace_file`)
    only when it is complete."""
    _h5netcdf, h5py = require_h5netcdf()
    if data_model not in ("NETCDF4", "NETCDF4_CLASSIC"):
        raise ArgumentError(f"data_model must be 'NETCDF4' or 'NETCDF4_CLASSIC', not {data_model!r}")
    settings = source.storage if storage is None else storage
    found = problems(source.dataset, data_model, settings)
    if found:
        raise FormatError(f"cannot write {os.fspath(path)} as {data_model}:\n  " + "\n  ".join(found))
    target = Path(path)
    try:
        handle, temporary = temp_beside(os.fspath(target))
    except OSError as error:
        raise Hdf5Error(f"{target}: cannot create the file: {error.strerror or error}") from error
    os.close(handle)
    try:
        # HDF5 1.8 to 1.10 object formats, as netcdf-c writes, so older readers open the file
        with h5py.File(temporary, "w", track_order=True, libver=("v108", "v110")) as h5file:
            _Writer(h5py, h5file, source, data_model, settings, chunking, progress, max_memory).write()
        replace_file(temporary, os.fspath(target), replaces=replaces)  # fsynced when NCZARR_FSYNC asks
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def problems(
    dataset: Dataset, data_model: str = "NETCDF4", storage: Mapping[str, VariableStorage] | None = None
) -> list[str]:
    """What of ``dataset`` (with these storage settings) :func:`write_hdf5` cannot write as
    ``data_model``, each as ``FQN: why`` (empty when it can write it all)."""
    _h5netcdf, h5py = require_h5netcdf()
    found: list[str] = []
    if data_model == "NETCDF4_CLASSIC":
        classic = copy.copy(dataset)
        classic.data_model = DataModel.CLASSIC
        found += [f"{p.fqn}: {p.message}" for p in validate(classic) if p.severity == "error"]
    resolver = Resolver()
    for group in dataset.walk():
        for tp in group.types:
            if isinstance(tp, VlenType) and tp.base is AtomicType.STRING:
                found.append(f"{tp.fqn}: h5py cannot write vlens of strings (NCZARR stores them)")
            elif isinstance(tp, VlenType) and isinstance(tp.base, str) and isinstance(resolver.type(group, tp.base), VlenType):
                # h5py fails on their values, and crashes on a scalar's (h5py 3.16)
                found.append(f"{tp.fqn}: h5py cannot write vlens of vlens to HDF5 (NCZARR stores them)")
        for variable in group.variables:
            for ref in variable.dimensions:
                if isinstance(ref, int) or resolver.dimension(group, ref) is None:
                    found.append(f"{variable.fqn}: dimension {ref!r} is not a named dimension of the dataset")
            compression = (storage or {}).get(variable.fqn, VariableStorage()).compression
            code = HDF5_FILTER_OF.get(compression or "")
            if code is not None and not _filter_available(h5py, code):
                found.append(
                    f"{variable.fqn}: HDF5 has no {compression} filter here; install the "
                    f"HDF5 plugins: {_PLUGIN_HINT}"
                )
    return found


def _filter_available(h5py: Any, code: int) -> bool:
    """Whether HDF5 (h5py's) has the filter ``code``, hdf5plugin's registered when needed.
    Registered even when the HDF5 plugin path offers one: netCDF4 points that path at its
    own plugins, built for another HDF5 library."""
    if code == HDF5_DEFLATE:
        return bool(h5py.h5z.filter_avail(code))
    try:
        import hdf5plugin
    except ImportError:
        return bool(h5py.h5z.filter_avail(code))
    if code not in _REGISTERED:
        with contextlib.suppress(RuntimeError):  # in use by an open file: HDF5 reads with it, so it works here
            hdf5plugin.register(_PLUGIN_NAMES[code], force=True)
        _REGISTERED.add(code)
    return bool(h5py.h5z.filter_avail(code))


#: The filters this process registered from hdf5plugin.
_REGISTERED: set[int] = set()


def _nc_properties(h5py: Any) -> str:
    """The provenance netcdf-c writes as ``_NCProperties`` (shown by ``ncdump -s``)."""
    return f"version=2,nczarr={__version__},hdf5={h5py.version.hdf5_version},h5py={h5py.version.version}"


def _char_attribute(h5py: Any, h5obj: Any, name: str, text: str) -> None:
    """A text attribute as netcdf-c writes ``char`` ones: a fixed, NUL-terminated string."""
    h5t, h5s, h5a = h5py.h5t, h5py.h5s, h5py.h5a
    raw = text.encode("utf-8", "surrogateescape")
    tid = h5t.C_S1.copy()
    tid.set_size(max(1, len(raw)))
    tid.set_strpad(h5t.STR_NULLTERM)
    created = h5a.create(h5obj.id, name.encode("utf-8"), tid, h5s.create(h5s.SCALAR))
    created.write(np.array(raw, dtype=f"S{max(1, len(raw))}"), mtype=tid)


class _Writer:
    """Writes one tree through h5py as netcdf-c lays it out: per group its named types,
    dimension scales and variables in creation order, attributes with their exact netCDF
    types; dimension scales are attached by reference (from any group) once every dataset
    exists; then the data block by block."""

    def __init__(
        self,
        h5py: Any,
        h5file: Any,
        source: DatasetSource,
        data_model: str,
        storage: Mapping[str, VariableStorage],
        chunking: Callable[[Variable], tuple[int, ...] | None] | None,
        progress: Callable[[int], None] | None,
        max_memory: int,
    ) -> None:
        self.h5py, self.h5file, self.source = h5py, h5file, source
        self.classic = data_model == "NETCDF4_CLASSIC"
        self.storage = storage
        self.chunking, self.progress, self.max_memory = chunking, progress, max_memory
        self.resolver = Resolver()
        self.types: dict[str, Any] = {}  # committed HDF5 datatypes by FQN
        self.dimids: dict[int, int] = {}  # netCDF dimension ids by id() of the dimension
        self.scales: dict[int, Any] = {}  # the dimension scale of each dimension, by id()
        self.datasets: list[tuple[Variable, Any]] = []
        self.attachments: list[tuple[Any, list[Dimension]]] = []

    def write(self) -> None:
        h5file = self.h5file
        _char_attribute(self.h5py, h5file, "_NCProperties", _nc_properties(self.h5py))
        if self.classic:
            h5file.attrs.create("_nc3_strict", np.int32(1))
        for group in self.source.dataset.walk():  # netcdf-c numbers dimensions in this order
            for dimension in group.dimensions:
                self.dimids[id(dimension)] = len(self.dimids)
        self._group(self.source.dataset, h5file)
        for h5ds, dimensions in self.attachments:
            for axis, dimension in enumerate(dimensions):
                h5ds.dims[axis].attach_scale(self.scales[id(dimension)])
        for variable, h5ds in self.datasets:
            self._data(variable, h5ds)

    def _group(self, group: Group, h5group: Any) -> None:
        for tp in group.types:
            if isinstance(tp, EnumType):  # h5py would order the members by name
                tid = self.h5py.h5t.enum_create(self.h5py.h5t.py_create(value_dtype(tp)))
                for member in tp.members:
                    tid.enum_insert(member.name.encode("utf-8"), int(member.value))
                tid.commit(h5group.id, tp.name.encode("utf-8"))
            else:
                h5group[tp.name] = self._h5_dtype(tp)
            self.types[tp.fqn] = h5group[tp.name]
        coordinates = {v.name for v in group.variables if self._coordinate_of(v) is not None}
        for dimension in group.dimensions:
            if dimension.name not in coordinates:
                self._pure_scale(h5group, dimension)
        for variable in group.variables:
            self._define_variable(h5group, variable)
        self._attributes(h5group, group, group)
        for subgroup in group.groups:
            self._group(subgroup, h5group.create_group(subgroup.name, track_order=True))

    def _coordinate_of(self, variable: Variable) -> Dimension | None:
        """The dimension ``variable`` is the coordinate variable of (netcdf-c: same name as a
        dimension of its group, which is its first dimension), else None."""
        group = variable.group
        own = next((d for d in group.dimensions if d.name == variable.name), None) if group else None
        if own is None or not variable.dimensions or group is None:
            return None
        first = variable.dimensions[0]
        return own if not isinstance(first, int) and self.resolver.dimension(group, first) is own else None

    def _pure_scale(self, h5group: Any, dimension: Dimension) -> None:
        """A dimension without coordinate variable: an empty dataset netcdf-c marks as such."""
        size = dimension.size
        options: dict[str, Any] = {"maxshape": (None,), "chunks": (1,)} if dimension.unlimited else {}
        h5ds = h5group.create_dataset(dimension.name, (size,), dtype=">f4", track_order=True, **options)
        h5ds.make_scale(f"{_NOT_A_VARIABLE}{size:10d}")
        h5ds.attrs.create("_Netcdf4Dimid", np.int32(self.dimids[id(dimension)]))
        self.scales[id(dimension)] = h5ds

    def _h5_dtype(self, tp: AtomicType | UserType) -> np.dtype:
        """The dtype h5py stores values of ``tp`` as: numbers little-endian, strings, enums
        and vlens with h5py's markers, opaques as ``V<size>``, compounds C-aligned (so that a
        compound field is equal to the type it names)."""
        if tp is AtomicType.STRING:
            return np.dtype(self.h5py.string_dtype())
        if isinstance(tp, EnumType):
            return np.dtype(self.h5py.enum_dtype({m.name: m.value for m in tp.members}, basetype=value_dtype(tp)))
        if isinstance(tp, AtomicType):
            return value_dtype(tp)
        if isinstance(tp, OpaqueType):
            return np.dtype(f"V{tp.size}")
        if isinstance(tp, VlenType):
            return np.dtype(self.h5py.vlen_dtype(self._h5_dtype(self._member(tp, tp.base))))
        assert isinstance(tp, CompoundType)
        if not has_record_encoding(tp, resolver=self.resolver):
            aligned = compound_dtype(tp, resolver=self.resolver)
            members = [self._member(tp, f.type) for f in tp.fields]
            if not any(isinstance(m, EnumType | OpaqueType | CompoundType) for m in members):
                return aligned
            # enum and opaque fields as HDF5 enums and opaques (h5py's markers), at the same offsets
            assert aligned.fields is not None
            return np.dtype({
                "names": [f.name for f in tp.fields],
                "formats": [
                    (self._h5_dtype(m), tuple(f.shape)) if f.shape else self._h5_dtype(m) for f, m in zip(tp.fields, members)
                ],
                "offsets": [aligned.fields[f.name][1] for f in tp.fields],
                "itemsize": aligned.itemsize,
            })
        # packed: h5py cannot convert vlens inside padded records (netcdf-c matches a field's
        # type to the committed one by their native forms, which it aligns again)
        fields = [(f.name, self._h5_dtype(self._member(tp, f.type)), f.shape) for f in tp.fields]
        return np.dtype([(name, (member, shape)) if shape else (name, member) for name, member, shape in fields])

    def _member(self, owner: UserType, ref: AtomicType | str) -> AtomicType | UserType:
        return ref if isinstance(ref, AtomicType) else self._user_type(owner.group or self.source.dataset, ref)

    def _user_type(self, scope: Group, ref: str) -> UserType:
        found = self.resolver.type(scope, ref)
        assert found is not None, ref
        return found

    def _dimension(self, scope: Group, ref: str | int) -> Dimension:
        found = None if isinstance(ref, int) else self.resolver.dimension(scope, ref)
        assert found is not None, ref  # problems() refused the others
        return found

    def _define_variable(self, h5group: Any, variable: Variable) -> None:
        group = variable.group
        assert group is not None
        storage = self.storage.get(variable.fqn, VariableStorage())
        dimensions = [self._dimension(group, ref) for ref in variable.dimensions]
        type = variable.type
        kwargs: dict[str, Any] = {}
        fill: Any = fill_attribute(variable)
        if isinstance(type, AtomicType):
            if type is AtomicType.STRING:
                dtype: Any = self.h5py.string_dtype()
                fill = DEFAULT_FILL[type] if fill is None else fill
            elif type is AtomicType.CHAR:
                dtype = np.dtype("S1")
                fill = (b"\0" if fill is None else fill.encode("utf-8", "surrogateescape")[:1])
            else:
                dtype = numpy_dtype(type, "big" if storage.endian == "big" else "little")
                fill = DEFAULT_FILL[type] if fill is None else fill
            fill = None if fill is None else np.array(fill, dtype)
        else:
            tp = self._user_type(group, type)
            dtype = self.types[tp.fqn]
            if isinstance(tp, CompoundType | VlenType) and has_record_encoding(tp, resolver=self.resolver):
                # records holding strings or vlens: HDF5's zero fill (NULL strings, empty vlens);
                # h5py corrupts a fill value holding vlens. _FillValue stays an attribute.
                fill = None
            elif isinstance(tp, VlenType | OpaqueType):
                fill = None  # HDF5's zero fill: netcdf-c's default for these
            elif isinstance(tp, EnumType):
                fill = np.array(default_fill(value_dtype(tp)) if fill is None else fill, dtype.dtype)
            else:
                fill = np.zeros((), dtype.dtype) if fill is None else _user_values(tp, [fill]).astype(dtype.dtype)[0]
        if not storage.fill and np.dtype(getattr(dtype, "dtype", dtype)).hasobject:
            pass  # HDF5 refuses "never fill" for strings and vlens; netcdf-c does not ask it
        elif not storage.fill:
            fill = None
            kwargs["fill_time"] = "never"
        if dimensions:  # HDF5 filters only chunked data; a scalar is never chunked
            if storage.compression == "zlib":
                kwargs.update(compression="gzip", compression_opts=storage.complevel)
            elif storage.compression == "zstd" or storage.compression == "bzip2":
                kwargs.update(compression=HDF5_FILTER_OF[storage.compression], compression_opts=(storage.complevel,))
            elif storage.compression is not None and np.dtype(getattr(dtype, "dtype", dtype)).hasobject:
                # Blosc's HDF5 filter crashes HDF5 on strings and vlens (netCDF4 fails on them too)
                log.warning("%s: %s left out: Blosc cannot compress strings or vlens in HDF5", variable.fqn, storage.compression)
            elif storage.compression is not None:
                blosc = (0, 0, 0, 0, storage.complevel, storage.blosc_shuffle, BLOSC_CODES[storage.compression])
                kwargs.update(compression=HDF5_BLOSC, compression_opts=blosc)
            if storage.shuffle:
                kwargs["shuffle"] = True
            if storage.fletcher32:
                kwargs["fletcher32"] = True
        chunks = self.chunking(variable) if self.chunking is not None else None
        chunks = chunks or (storage.chunks if storage.chunks and len(storage.chunks) == len(dimensions) else None)
        unlimited = [d.unlimited for d in dimensions]
        if chunks is None and dimensions and (set(kwargs) - {"fill_time"} or any(unlimited)):
            itemsize = np.dtype(getattr(dtype, "dtype", dtype)).itemsize
            chunks = netcdf_chunks([d.size for d in dimensions], unlimited, itemsize)
        if chunks:  # HDF5 wants chunks no larger than a fixed dimension
            kwargs["chunks"] = tuple(c if u else max(1, min(c, d.size)) for c, u, d in zip(chunks, unlimited, dimensions))
        if any(unlimited):
            kwargs["maxshape"] = tuple(None if u else d.size for u, d in zip(unlimited, dimensions))
        coordinate = self._coordinate_of(variable)
        clash = coordinate is None and any(d.name == variable.name for d in group.dimensions)
        name = NON_COORD + variable.name if clash else variable.name
        shape = tuple(d.size for d in dimensions)
        try:
            h5ds = h5group.create_dataset(name, shape, dtype=dtype, fillvalue=fill, track_order=True, **kwargs)
        except ValueError as error:
            if storage.compression in (None, "zlib"):
                raise
            # Blosc's filter calls HDF5 back: it fails when another HDF5 library loaded it
            raise Hdf5Error(
                f"{variable.fqn}: HDF5's {storage.compression} filter failed ({error}); netCDF4 loading "
                "its own HDF5 plugins in this process (NCZarr through netCDF4) is known to cause this"
            ) from error
        if dimensions:  # netcdf-c's dimension ids: a variable's dimensions in any group
            ids = [self.dimids[id(d)] for d in dimensions]
            h5ds.attrs.create("_Netcdf4Coordinates", np.array(ids, np.int32))
        if coordinate is not None:
            h5ds.make_scale(variable.name)
            h5ds.attrs.create("_Netcdf4Dimid", np.int32(self.dimids[id(coordinate)]))
            self.scales[id(coordinate)] = h5ds
        if dimensions and coordinate is None:  # a scale takes no scales: _Netcdf4Coordinates names them
            self.attachments.append((h5ds, dimensions))
        self._attributes(h5ds, variable, group)
        self.datasets.append((variable, h5ds))

    def _attributes(self, h5obj: Any, owner: Group | Variable, scope: Group) -> None:
        for attribute in owner.attributes:
            name, type, values = attribute.name, attribute.type, attribute.values
            if type is AtomicType.CHAR:
                _char_attribute(self.h5py, h5obj, name, str(values))
            elif type is AtomicType.STRING:
                texts = list(values)
                text = np.array(["" if v is None else v for v in texts], dtype=self.h5py.string_dtype("utf-8"))
                h5obj.attrs.create(name, text, shape=text.shape)
                if None in texts:  # NULL strings (CDL's NIL), which h5py cannot write
                    written = self.h5py.h5a.open(h5obj.id, name.encode("utf-8", "surrogateescape"))
                    pointers, kept = _string_pointers(np.array(texts, object))
                    written.write(pointers, mtype=written.get_type())
                    del kept
            elif isinstance(type, AtomicType):
                h5obj.attrs.create(name, np.array(values, dtype=numpy_dtype(type)))
            else:
                tp = self._user_type(scope, type)
                committed = self.types[tp.fqn]
                if isinstance(tp, CompoundType | VlenType) and has_record_encoding(tp, resolver=self.resolver):
                    given = np.empty(len(values), object)
                    for i, value in enumerate(values):
                        given[i] = value
                    records = convert_records(given, tp, resolver=self.resolver)
                    h5obj.attrs.create(name, _h5_values(records, committed.dtype, self.h5py), dtype=committed)
                else:
                    h5obj.attrs.create(name, _user_values(tp, list(values)), dtype=committed)

    def _data(self, variable: Variable, h5ds: Any) -> None:
        shape = h5ds.shape
        if math.prod(shape) == 0:
            return
        dtype = h5ds.dtype
        itemsize = VARIABLE_ITEMSIZE if dtype.kind == "O" else dtype.itemsize
        for block in self._written_blocks(variable, plan_blocks(shape, itemsize, self.max_memory, h5ds.chunks), h5ds.chunks):
            data = self.source.read(variable, block)
            base = self.h5py.check_vlen_dtype(dtype)
            scope = variable.group
            records = self._user_type(scope, variable.type) if scope and not isinstance(variable.type, AtomicType) else None
            if isinstance(records, CompoundType | VlenType) and has_record_encoding(records, resolver=self.resolver):
                # records with strings or vlens, in any form a source gives them
                self._write_records(variable, records, h5ds, block, np.asarray(data))
            elif base is not None and base not in (str, bytes):
                # h5py would take equal-length sequences for one more dimension
                values = np.empty(data.shape, dtype)
                for index, item in np.ndenumerate(data):
                    values[index] = np.asarray(item, dtype=base)
                h5ds.write_direct(values, dest_sel=block)
            elif dtype.names is not None and np.asarray(data).dtype.names is not None:
                h5ds[block] = _h5_values(np.asarray(data), dtype, self.h5py)  # the file's layout
            elif base is str and any(v is None for v in np.asarray(data).reshape(-1)):
                _write_null_strings(self.h5py, h5ds, block, np.asarray(data))
            else:
                h5ds[block] = data
            if self.progress is not None:
                self.progress(int(np.asarray(data).size))


    def _written_blocks(
        self, variable: Variable, blocks: Iterable[tuple[slice, ...]], chunks: tuple[int, ...] | None
    ) -> Iterator[tuple[slice, ...]]:
        """The blocks to write. A source that tells which were never written (a Zarr store's
        missing chunks) has those left out, and of a block written in part only the HDF5
        chunks written: unwritten chunks stay unallocated, as netcdf-c leaves them, rather
        than stored full of fill values (a contiguous variable is allocated whole, or not)."""
        unwritten = getattr(self.source, "unwritten", None)
        for block in blocks:
            if unwritten is None:
                yield block
                continue
            if unwritten(variable, block):
                self._skipped(block)
                continue
            if chunks is None:
                yield block
                continue
            for part in plan_blocks(tuple(s.stop - s.start for s in block), 1, math.prod(chunks), chunks):
                inner = tuple(slice(b.start + p.start, b.start + p.stop) for b, p in zip(block, part))
                if unwritten(variable, inner):
                    self._skipped(inner)
                else:
                    yield inner

    def _skipped(self, block: tuple[slice, ...]) -> None:
        if self.progress is not None:
            self.progress(math.prod(s.stop - s.start for s in block))

    def _write_records(
        self, variable: Variable, type: CompoundType | VlenType, h5ds: Any, block: tuple[slice, ...], data: np.ndarray
    ) -> None:
        """Write values holding strings or vlens inside records. h5py fails on an empty vlen
        of such records, so values equal to the file's zero fill (empty records, empty
        vlens) are left to it."""
        raw = convert_records(data, type, resolver=self.resolver)
        encoded = encode_records(raw, type, resolver=self.resolver).reshape(-1)
        empty = encode_records(decode_records(np.full(1, b"", object), type, resolver=self.resolver), type)[0]
        if all(e == empty for e in encoded):
            return
        values = _h5_values(raw, h5ds.dtype, self.h5py)
        try:
            if isinstance(type, VlenType) and empty in encoded:
                for index, item in np.ndenumerate(values):
                    if len(item):
                        h5ds[tuple(s.start + i for s, i in zip(block, index))] = item
            else:
                h5ds[block] = values
        except TypeError as error:  # h5py's conversion of an empty vlen of records in a record
            raise Hdf5Error(
                f"{variable.fqn}: h5py cannot write these values of {type.fqn} ({error}); an empty vlen "
                "of records holding strings or vlens inside a record is one (netcdf-c 4.9 cannot either)"
            ) from error


def _string_pointers(values: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """The C strings of text values (NULL for None) as HDF5 reads a variable-length string in
    memory, with the buffers that must outlive the write."""
    buffers = [
        None if v is None else ctypes.create_string_buffer(v.encode("utf-8", "surrogateescape")) for v in values.reshape(-1)
    ]
    pointers = np.array([0 if b is None else ctypes.addressof(b) for b in buffers], np.uintp)
    return pointers.reshape(values.shape), buffers


def _write_null_strings(h5py: Any, h5ds: Any, block: tuple[slice, ...], values: np.ndarray) -> None:
    """String data holding NULL strings (CDL's NIL), written as the C pointers netcdf-c
    writes (h5py refuses None)."""
    pointers, kept = _string_pointers(values)
    space = h5ds.id.get_space()
    if h5ds.ndim:
        space.select_hyperslab(tuple(s.start for s in block), tuple(s.stop - s.start for s in block))
    memory = h5py.h5s.create_simple(values.shape) if values.ndim else h5py.h5s.create(h5py.h5s.SCALAR)
    h5ds.id.write(memory, space, pointers, mtype=h5ds.id.get_type())
    del kept


def _h5_values(values: np.ndarray, dtype: np.dtype, h5py: Any) -> np.ndarray:
    """Raw values (records whose string and vlen fields hold ``str`` and arrays) as an
    array of h5py's ``dtype`` for them (vlens of records made of its records too)."""
    out = np.zeros(values.shape, dtype)
    if dtype.names is None:
        base = h5py.check_vlen_dtype(dtype)
        if base is str:  # h5py cannot write a NULL string (a record never written): ""
            for index, item in np.ndenumerate(values):
                out[index] = "" if item is None else item
        elif base is None or base is bytes:
            out[...] = values
        else:
            for index, item in np.ndenumerate(values):
                out[index] = _h5_values(np.asarray(item), base, h5py)
        return out
    assert dtype.fields is not None
    for name in dtype.names:
        field = dtype.fields[name][0]
        base = field.subdtype[0] if field.subdtype is not None else field
        given = np.asarray(values[name])
        if base.names or base.hasobject:
            out[name] = _h5_values(given, base, h5py)
        else:  # h5netcdf commits char fields ``S1`` as ``(S1, (1,))``
            out[name] = given.reshape(out[name].shape)
    return out


def _user_values(tp: UserType, values: list[Any]) -> np.ndarray:
    """Model values of a user-typed attribute as an array h5py writes."""
    if isinstance(tp, EnumType):
        return np.array(values, dtype=value_dtype(tp))
    if isinstance(tp, VlenType):
        array = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            array[i] = np.array(value, dtype=element_dtype(tp, packed=False))
        return array
    if isinstance(tp, OpaqueType):
        return np.array([bytes(v).ljust(tp.size, b"\0") for v in values], dtype=f"V{tp.size}")
    assert isinstance(tp, CompoundType)
    dtype = compound_dtype(tp)
    return compound_records(values, dtype)
