"""netCDF-4 files written through h5netcdf (nczarr's optional extra ``hdf5``): a tree, its
storage settings and values, as netCDF4 writes them; the file appears only when complete."""

from __future__ import annotations

import copy
import logging
import math
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

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
from nczarr.store import replace_file
from nczarr.values.blocks import plan_blocks
from nczarr.values.source import DatasetSource
from nczarr.values.storage import (
    BLOSC_CODES,
    HDF5_BLOSC,
    HDF5_FILTER_OF,
    VariableStorage,
    netcdf_chunks,
)
from nczarr.values.stored import convert_records, decode_records, encode_records, has_record_encoding
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

def write_hdf5(
    path: str | os.PathLike[str],
    source: DatasetSource,
    data_model: str = "NETCDF4",
    *,
    chunking: Callable[[Variable], tuple[int, ...] | None] | None = None,
    progress: Callable[[int], None] | None = None,
    max_memory: int = 64 << 20,
) -> None:
    """Write ``source`` as a netCDF-4 file at ``path`` (``data_model`` ``NETCDF4`` or
    ``NETCDF4_CLASSIC``), its data block by block in at most about ``max_memory`` bytes.

    ``chunking`` may give a variable's chunk shape (None: the source's, else netcdf-c's
    default when chunks are needed); ``progress`` is called with the number of values of
    each block written. What h5netcdf cannot write (opaque types, vlens of user types,
    compounds of user types, filters HDF5 has no plugin for) is refused before anything is
    written; the file appears only when it is complete."""
    h5netcdf, h5py = require_h5netcdf()
    if data_model not in ("NETCDF4", "NETCDF4_CLASSIC"):
        raise ArgumentError(f"data_model must be 'NETCDF4' or 'NETCDF4_CLASSIC', not {data_model!r}")
    found = problems(source.dataset, data_model, source.storage)
    if found:
        raise FormatError(f"cannot write {os.fspath(path)} as {data_model}:\n  " + "\n  ".join(found))
    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise Hdf5Error(f"{target}: cannot create the file: {error.strerror or error}") from error
    os.close(handle)
    try:
        # HDF5 1.8 to 1.10 object formats, as netcdf-c writes, so older readers open the file
        with h5py.File(temporary, "w", track_order=True, libver=("v108", "v110")) as h5file:
            nc = h5netcdf.File(h5file, "w", format=data_model)
            try:
                _Writer(h5py, h5file, source, chunking, progress, max_memory).write(nc)
            finally:  # before h5py closes the file h5netcdf writes to
                nc.close()
        replace_file(temporary, os.fspath(target))  # fsynced when NCZARR_FSYNC asks
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
            if isinstance(tp, OpaqueType):
                found.append(f"{tp.fqn}: h5netcdf cannot write opaque types")
            elif isinstance(tp, VlenType) and tp.base is AtomicType.STRING:
                found.append(f"{tp.fqn}: h5py cannot write vlens of strings (NCZARR stores them)")
            elif isinstance(tp, VlenType) and not isinstance(tp.base, AtomicType | CompoundType):
                base = resolver.type(group, tp.base)
                if not isinstance(base, CompoundType | VlenType):
                    found.append(f"{tp.fqn}: h5netcdf writes vlen types of atomic, compound and vlen types only")
            elif isinstance(tp, CompoundType):
                for field in tp.fields:
                    member = field.type if isinstance(field.type, AtomicType) else resolver.type(group, field.type)
                    if not isinstance(member, AtomicType | CompoundType | VlenType):
                        found.append(f"{tp.fqn}: field {field.name!r} is of an enum or opaque type, which is not written to HDF5")
        for variable in group.variables:
            for ref in variable.dimensions:
                dimension = None if isinstance(ref, int) else resolver.dimension(group, ref)
                if dimension is None or resolver.dimension(group, dimension.name) is not dimension:
                    found.append(f"{variable.fqn}: dimension {ref!r} is not one h5netcdf can name from its group")
            user_type = None if isinstance(variable.type, AtomicType) else resolver.type(group, variable.type)
            if user_type is not None and user_type.group not in _lineage(group):
                found.append(f"{variable.fqn}: type {user_type.fqn} is not of its group or a parent; h5netcdf needs that")
            compression = (storage or {}).get(variable.fqn, VariableStorage()).compression
            if compression in HDF5_FILTER_OF and not h5py.h5z.filter_avail(HDF5_FILTER_OF[compression]):
                found.append(f"{variable.fqn}: HDF5 has no {compression} filter here (install hdf5plugin)")
    return found


def _lineage(group: Group) -> list[Group]:
    """``group`` and the groups above it."""
    found: list[Group] = []
    current: Group | None = group
    while current is not None:
        found.append(current)
        current = current.group
    return found


class _Writer:
    """Writes one tree: the structure through h5netcdf, attributes with their exact netCDF
    types through h5py, then the data block by block."""

    def __init__(
        self,
        h5py: Any,
        h5file: Any,
        source: DatasetSource,
        chunking: Callable[[Variable], tuple[int, ...] | None] | None,
        progress: Callable[[int], None] | None,
        max_memory: int,
    ) -> None:
        self.h5py, self.h5file, self.source = h5py, h5file, source
        self.chunking, self.progress, self.max_memory = chunking, progress, max_memory
        self.resolver = Resolver()
        self.types: dict[str, Any] = {}  # h5netcdf's user types by FQN
        self.type_paths: dict[str, str] = {}  # their HDF5 paths
        self.datasets: list[tuple[Variable, Any]] = []

    def write(self, nc: Any) -> None:
        self._structure(self.source.dataset, nc)
        for variable, h5ds in self.datasets:
            self._data(variable, h5ds)

    def _structure(self, group: Group, nc: Any) -> None:
        for dimension in group.dimensions:
            nc.dimensions[dimension.name] = None if dimension.unlimited else dimension.size
            if dimension.unlimited and dimension.size:
                nc.resize_dimension(dimension.name, dimension.size)
        for tp in group.types:
            self.types[tp.fqn] = self._define_type(nc, tp)
            self.type_paths[tp.fqn] = f"{nc.name.rstrip('/')}/{tp.name}"
        for variable in group.variables:
            self._define_variable(nc, variable)
        self._attributes(self.h5file[nc.name], group, group)
        for subgroup in group.groups:
            self._structure(subgroup, nc.create_group(subgroup.name))

    def _define_type(self, nc: Any, tp: UserType) -> Any:
        if isinstance(tp, EnumType):
            return nc.create_enumtype(value_dtype(tp), tp.name, {m.name: m.value for m in tp.members})
        if isinstance(tp, VlenType):
            return nc.create_vltype(self.h5py.check_vlen_dtype(self._h5_dtype(tp)), tp.name)
        assert isinstance(tp, CompoundType)  # problems() refused opaque types
        return nc.create_cmptype(self._h5_dtype(tp), tp.name)

    def _h5_dtype(self, tp: AtomicType | UserType) -> np.dtype:
        """The dtype h5py stores values of ``tp`` as: numbers little-endian, strings and vlens
        with h5py's markers, compounds C-aligned without trailing padding (as h5netcdf
        commits them, so that a compound field is equal to the type it names)."""
        if tp is AtomicType.STRING:
            return np.dtype(self.h5py.string_dtype())
        if isinstance(tp, AtomicType | EnumType):
            return value_dtype(tp)
        if isinstance(tp, VlenType):
            return np.dtype(self.h5py.vlen_dtype(self._h5_dtype(self._member(tp, tp.base))))
        assert isinstance(tp, CompoundType)
        if not has_record_encoding(tp, resolver=self.resolver):
            return compound_dtype(tp, resolver=self.resolver)
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

    def _define_variable(self, nc: Any, variable: Variable) -> None:
        group = variable.group
        assert group is not None
        storage = self.source.storage.get(variable.fqn, VariableStorage())
        dimensions = [self._dimension(group, ref) for ref in variable.dimensions]
        type = variable.type
        kwargs: dict[str, Any] = {}
        fill = fill_attribute(variable)
        if isinstance(type, AtomicType):
            if type is AtomicType.STRING:
                dtype: Any = self.h5py.string_dtype()
            elif type is AtomicType.CHAR:
                dtype = np.dtype("S1")
                fill = None if fill is None else fill.encode("utf-8", "surrogateescape")[:1]
            else:
                dtype = numpy_dtype(type, "big" if storage.endian == "big" else "little")
            if fill is None:
                fill = b"\0" if type is AtomicType.CHAR else DEFAULT_FILL[type]
        else:
            tp = self._user_type(group, type)
            dtype = self.types[tp.fqn]
            if isinstance(tp, CompoundType) and has_record_encoding(tp, resolver=self.resolver):
                # records holding strings or vlens: HDF5's zero fill (NULL strings, empty vlens);
                # h5py corrupts a fill value holding vlens. _FillValue stays an attribute.
                fill = None
            elif fill is None and isinstance(tp, CompoundType):
                fill = np.zeros((), compound_dtype(tp))
                if fill.dtype.names == ("r", "i") and fill.dtype["r"] == fill.dtype["i"] and fill.dtype["r"].kind == "f":
                    fill = np.zeros((), f"c{fill.dtype.itemsize}")  # h5py holds such a compound as complex
            elif fill is None and isinstance(tp, EnumType):
                fill = default_fill(value_dtype(tp))
        if not storage.fill and np.dtype(getattr(dtype, "dtype", dtype)).hasobject:
            pass  # HDF5 refuses "never fill" for strings and vlens; netcdf-c does not ask it
        elif not storage.fill:
            fill = None
            kwargs["fill_time"] = "never"
        if storage.compression == "zlib":
            kwargs.update(compression="gzip", compression_opts=storage.complevel)
        elif storage.compression == "zstd" or storage.compression == "bzip2":
            kwargs.update(compression=HDF5_FILTER_OF[storage.compression], compression_opts=(storage.complevel,))
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
            chunks = tuple(c if u else max(1, min(c, d.size)) for c, u, d in zip(chunks, unlimited, dimensions))
        else:
            chunks = None
        # h5netcdf makes these with neither fill value nor filters; they are made again below
        remade: Any = None
        if not isinstance(type, AtomicType) and isinstance(self._user_type(group, type), EnumType):
            remade = self.h5file[self.type_paths[self._user_type(group, type).fqn]]
        elif type is AtomicType.CHAR and nc.data_model == "NETCDF4_CLASSIC":
            remade = np.dtype("S1")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # h5netcdf's warnings about enum fill values
            nc.create_variable(
                variable.name,
                tuple(d.name for d in dimensions),
                dtype=dtype,
                fillvalue=None if remade is not None else fill,
                chunks=chunks,
                **kwargs,
            )
        h5group = self.h5file[nc.name]
        h5ds = h5group[variable.name if variable.name in h5group else NON_COORD + variable.name]
        if remade is not None and variable.name not in {d.name for d in dimensions}:
            options = dict(kwargs, fillvalue=fill, chunks=chunks)
            if any(unlimited):  # h5py would chunk a variable with any maxshape
                options["maxshape"] = tuple(None if u else n for u, n in zip(unlimited, h5ds.shape))
            h5ds = _recreate(h5group, h5ds, remade, options)
        if "_FillValue" in h5ds.attrs:  # h5netcdf's; the source's attributes follow in order
            del h5ds.attrs["_FillValue"]
        self._attributes(h5ds, variable, group)
        self.datasets.append((variable, h5ds))

    def _attributes(self, h5obj: Any, owner: Group | Variable, scope: Group) -> None:
        h5t, h5s, h5a = self.h5py.h5t, self.h5py.h5s, self.h5py.h5a
        for attribute in owner.attributes:
            name, type, values = attribute.name, attribute.type, attribute.values
            if type is AtomicType.CHAR:
                raw = str(values).encode("utf-8", "surrogateescape")
                tid = h5t.C_S1.copy()
                tid.set_size(max(1, len(raw)))
                tid.set_strpad(h5t.STR_NULLTERM)
                created = h5a.create(h5obj.id, name.encode("utf-8"), tid, h5s.create(h5s.SCALAR))
                created.write(np.array(raw, dtype=f"S{max(1, len(raw))}"), mtype=tid)
            elif type is AtomicType.STRING:
                text = np.array(list(values), dtype=self.h5py.string_dtype("utf-8"))
                h5obj.attrs.create(name, text, shape=text.shape)
            elif isinstance(type, AtomicType):
                h5obj.attrs.create(name, np.array(values, dtype=numpy_dtype(type)))
            else:
                tp = self._user_type(scope, type)
                committed = self.h5file[self.type_paths[tp.fqn]]
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
        for block in plan_blocks(shape, itemsize, self.max_memory, h5ds.chunks):
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
            else:
                h5ds[block] = data
            if self.progress is not None:
                self.progress(int(np.asarray(data).size))


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


def _recreate(h5group: Any, h5ds: Any, datatype: Any, options: dict[str, Any]) -> Any:
    """``h5ds`` made again with these creation options (fill value, chunks, filters), its
    dimension scales and netCDF dimension ids kept."""
    name = h5ds.name.rsplit("/", 1)[1]
    scales = [h5ds.dims[i][0] for i in range(h5ds.ndim)]
    kept = {key: h5ds.attrs[key] for key in ("_Netcdf4Coordinates", "_Netcdf4Dimid") if key in h5ds.attrs}
    for i, scale in enumerate(scales):
        h5ds.dims[i].detach_scale(scale)
    shape = h5ds.shape
    del h5group[name]
    new = h5group.create_dataset(name, shape, dtype=datatype, track_order=True, **options)
    for i, scale in enumerate(scales):
        new.dims[i].attach_scale(scale)
    for key, value in kept.items():
        new.attrs[key] = value
    return new


def _user_values(tp: UserType, values: list[Any]) -> np.ndarray:
    """Model values of a user-typed attribute as an array h5py writes."""
    if isinstance(tp, EnumType):
        return np.array(values, dtype=value_dtype(tp))
    if isinstance(tp, VlenType):
        array = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            array[i] = np.array(value, dtype=element_dtype(tp, packed=False))
        return array
    assert isinstance(tp, CompoundType)  # problems() refused opaque types
    dtype = compound_dtype(tp)
    return np.array([_record(v, dtype) for v in values], dtype=dtype)


def _record(value: tuple[Any, ...], dtype: np.dtype) -> tuple[Any, ...]:
    fields = []
    layout = dtype.fields
    assert layout is not None
    for item, name in zip(value, dtype.names or ()):
        field = layout[name][0]
        if isinstance(item, str) and field.base == np.dtype("S1"):
            item = np.frombuffer(item.encode("utf-8", "surrogateescape").ljust(field.shape[-1], b"\0"), "S1")
        fields.append(item)
    return tuple(fields)
