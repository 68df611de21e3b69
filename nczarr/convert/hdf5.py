"""netCDF-4 files (HDF5 underneath) read through h5netcdf, nczarr's optional
extra ``hdf5``: the tree, storage settings and raw values as netCDF4 shows them (writing: ``hdf5write``)."""

from __future__ import annotations

import functools
import logging
import math
import os
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, Literal

import numpy as np

from nczarr.errors import DatasetNotFoundError, Hdf5Error, MissingExtraError, NCZarrError
from nczarr.formats.tree import canonical_type_ref, raw_fqn, reference_of
from nczarr.model import (
    AtomicType,
    CompoundType,
    DataModel,
    Dataset,
    EnumMember,
    EnumType,
    Group,
    OpaqueType,
    Resolver,
    UserType,
    Variable,
    VlenType,
)
from nczarr.values.storage import (
    BLOSC_CODES,
    HDF5_BLOSC,
    HDF5_BZIP2,
    HDF5_DEFLATE,
    HDF5_FLETCHER32,
    HDF5_SHUFFLE,
    HDF5_SZIP,
    HDF5_ZSTD,
    VariableStorage,
)
from nczarr.values.stored import convert_records, decode_records, has_record_encoding
from nczarr.values.types import (
    atomic_type_of,
    float32,
    value_dtype,
)

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'nczarr[hdf5]'"
#: Attributes netcdf-c keeps for itself (dimension scales, dimension ids, the classic flag).
HIDDEN = frozenset(
    {
        "CLASS",
        "NAME",
        "DIMENSION_LIST",
        "REFERENCE_LIST",
        "_Netcdf4Dimid",
        "_Netcdf4Coordinates",
        "_nc3_strict",
        "_NCProperties",
    }
)
NON_COORD = "_nc4_non_coord_"
#: netCDF4's Blosc compression names by the compressor code in the HDF5 filter's parameters.
_BLOSC_NAMES = {code: name for name, code in BLOSC_CODES.items()}
#: netCDF4's compression names by the HDF5 filter of each (Blosc's by its parameters).
_COMPRESSION_OF = {HDF5_DEFLATE: "zlib", HDF5_BZIP2: "bzip2", HDF5_ZSTD: "zstd"}
# A guess of the bytes one value of a variable-length type takes in memory.
VARIABLE_ITEMSIZE = 64


def require_h5netcdf() -> tuple[ModuleType, ModuleType]:
    """h5netcdf and h5py, imported on first use; MissingExtraError naming the extra when
    they are not installed."""
    try:
        import h5netcdf
        import h5py
    except ImportError as error:
        raise MissingExtraError(
            f"netCDF-4/HDF5 files need the optional extra 'hdf5': {INSTALL_HINT}"
        ) from error
    return h5netcdf, h5py


# -- reading -----------------------------------------------------------------------------


@functools.cache
def _tolerant_file_class(h5netcdf: ModuleType) -> type:
    """``h5netcdf.File`` passing over committed types it does not keep (opaque: h5netcdf 1.8
    fails on them, "no attribute 'maps'"); the reader takes every type from h5py itself."""

    def add_usertype(group: Any, h5type: Any, add: Callable[[Any, Any], None]) -> None:
        if group._get_usertype_dict(h5netcdf.core._get_h5usertype_identifier(h5type)) is not None:
            add(group, h5type)

    class TolerantGroup(h5netcdf.Group):  # type: ignore[name-defined]
        _group_cls = property(lambda self: TolerantGroup)

        def _add_usertype(self, h5type: Any) -> None:
            add_usertype(self, h5type, h5netcdf.Group._add_usertype)

    class TolerantFile(h5netcdf.File):  # type: ignore[name-defined]
        _group_cls = property(lambda self: TolerantGroup)

        def _add_usertype(self, h5type: Any) -> None:
            add_usertype(self, h5type, h5netcdf.File._add_usertype)

    return TolerantFile


class Hdf5Reader:
    """A netCDF-4 file open for reading (a :class:`~nczarr.values.source.DatasetSource`)."""

    dataset: Dataset
    storage: dict[str, VariableStorage]
    data_model: str

    def __init__(self, path: str | os.PathLike[str]) -> None:
        h5netcdf, self._h5py = require_h5netcdf()
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise DatasetNotFoundError(f"{self.path}: no such file")
        self._file: Any = None
        self._nc: Any = None
        try:
            if not self._h5py.is_hdf5(self.path):
                raise Hdf5Error(f"{self.path} is not a netCDF-4 (HDF5) file")
            self._file = self._h5py.File(self.path, "r")
            self._nc = _tolerant_file_class(h5netcdf)(self._file, "r", phony_dims="sort")
        except Exception as error:
            self.close()
            raise _file_error(self.path, error) from error
        classic = "_nc3_strict" in self._file.attrs
        self.data_model = "NETCDF4_CLASSIC" if classic else "NETCDF4"
        #: What ``ncdump -s`` shows of the file: its ``_NCProperties`` (None: it has none)
        #: and the version of its HDF5 superblock.
        properties = self._file.attrs.get("_NCProperties")
        self.properties = properties.decode("utf-8", "replace") if isinstance(properties, bytes) else properties
        self.superblock_version = int(self._file.id.get_create_plist().get_version()[0])
        self.dataset = Dataset(data_model=DataModel.CLASSIC if classic else DataModel.ENHANCED)
        self.storage = {}
        #: What the tree and ``storage`` cannot say (szip, unknown filters), by variable FQN.
        self.unsupported: dict[str, str] = {}
        self._datasets: dict[str, Any] = {}
        self._types: dict[int, list[tuple[Any, UserType]]] = {}
        self._resolver = Resolver()
        try:
            self._read_group(self._nc, self.dataset)
        except Exception as error:
            self.close()
            raise _file_error(self.path, error) from error

    def __enter__(self) -> Hdf5Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the file."""
        if self._file:
            if self._nc is not None:
                self._nc.close()
            self._file.close()

    def _read_group(self, group: Any, node: Group) -> None:
        h5group = self._file[group.name]
        dimensions = sorted(group.dimensions.values(), key=lambda d: _dimension_id(h5group, d.name))
        for dimension in dimensions:
            node.add_dimension(dimension.name, dimension.size, dimension.isunlimited())
        self._resolver = Resolver()  # the tree changed: a new group, its dimensions
        self._types[id(node)] = []
        for name, item in h5group.items():
            if isinstance(item, self._h5py.Datatype):
                self._read_type(node, name, item.id)
        for name, variable in group.variables.items():
            key = name if name in h5group else NON_COORD + name
            h5ds = h5group[key]
            tid = h5ds.id.get_type()
            dimensions = self._dimension_refs(h5ds, variable.dimensions, node)
            new = node.add_variable(name, self._type_ref(tid, node), dimensions)
            self._read_attributes(h5ds, new, node)
            self._datasets[new.fqn] = h5ds
            self.storage[new.fqn] = self._storage(new, h5ds, tid)
        self._read_attributes(h5group, node, node)
        for name, subgroup in group.groups.items():
            self._read_group(subgroup, node.add_group(name))

    def _dimension_refs(self, h5ds: Any, names: tuple[str, ...], scope: Group) -> list[str | int]:
        """A variable's dimensions as references from ``scope``: h5netcdf gives their names
        only, so a dimension of a parent group that one of ``scope``'s own hides is found
        by its dimension scale and named by its FQN."""
        refs: list[str | int] = []
        for axis, name in enumerate(names):
            scales = h5ds.dims[axis]
            if not len(scales):  # a phony dimension: h5netcdf's own name
                refs.append(name)
                continue
            folder = scales[0].name.rpartition("/")[0]
            refs.append(reference_of(f"{folder}/{name}", scope, self._resolver))
        return refs

    def _read_type(self, group: Group, name: str, tid: Any) -> None:
        h5t = self._h5py.h5t
        kind = tid.get_class()
        new: UserType
        if kind == h5t.ENUM:
            members = [
                EnumMember(tid.get_member_name(i).decode("utf-8"), int(tid.get_member_value(i)))
                for i in range(tid.get_nmembers())
            ]
            new = EnumType(name, self._type_ref(tid.get_super(), group), members)
        elif kind == h5t.VLEN:
            new = VlenType(name, self._type_ref(tid.get_super(), group))
        elif kind == h5t.OPAQUE:
            new = OpaqueType(name, tid.get_size())
        elif kind == h5t.COMPOUND:
            new = CompoundType(name)
            for i in range(tid.get_nmembers()):
                member = tid.get_member_type(i)
                shape: tuple[int, ...] = ()
                if member.get_class() == h5t.ARRAY:
                    shape, member = tuple(member.get_array_dims()), member.get_super()
                new.add_field(tid.get_member_name(i).decode("utf-8"), self._type_ref(member, group), shape)
        else:
            raise Hdf5Error(f"{self.path}: type {name!r} has an HDF5 class netCDF-4 does not use")
        group.add(new)
        self._types[id(group)].append((tid, new))
        self._resolver = Resolver()

    def _type_ref(self, tid: Any, scope: Group) -> AtomicType | str:
        """The netCDF type of an HDF5 type: atomic, or a reference to an equal committed type
        in ``scope`` or an ancestor, else anywhere in the file read so far (netcdf-c matches
        them the same way; ncgen lets a group use a type of another branch)."""
        h5t = self._h5py.h5t
        kind = tid.get_class()
        if kind == h5t.STRING:
            return AtomicType.STRING if tid.is_variable_str() or tid.get_size() > 1 else AtomicType.CHAR
        if kind in (h5t.INTEGER, h5t.FLOAT):
            found = atomic_type_of(tid.dtype)
            if found is not None:
                return found
        group: Group | None = scope
        while group is not None:
            for candidate, node in self._types.get(id(group), ()):
                if candidate == tid:
                    return canonical_type_ref(raw_fqn(node), scope, self._resolver)
            group = group.group  # the parent group
        for types in self._types.values():
            for candidate, node in types:
                if candidate == tid:
                    return canonical_type_ref(raw_fqn(node), scope, self._resolver)
        raise Hdf5Error(f"{self.path}: an HDF5 type in {scope.fqn} has no netCDF-4 equivalent")

    def _read_attributes(self, h5obj: Any, owner: Group | Variable, scope: Group) -> None:
        """The attributes as netcdf-c reads them: a fixed-length string with one value (or
        none) is char, text in any other shape is string."""
        for name in h5obj.attrs:
            if name in HIDDEN:
                continue
            attribute = h5obj.attrs.get_id(name)
            tid = attribute.get_type()
            empty = attribute.get_space().get_simple_extent_type() == self._h5py.h5s.NULL
            if tid.get_class() == self._h5py.h5t.STRING:
                if not tid.is_variable_str() and (empty or attribute.shape == ()):
                    owner.add_attribute(name, AtomicType.CHAR, "" if empty else _char_text(attribute))
                else:
                    texts: Iterable[object] = () if empty else np.ravel(np.asarray(h5obj.attrs[name], dtype=object))
                    owner.add_attribute(name, AtomicType.STRING, [_text(t).rstrip("\0") for t in texts])
                continue
            type = self._type_ref(tid, scope)
            values: Iterable[object] = () if empty else np.asarray(h5obj.attrs[name]).reshape(-1)
            owner.add_attribute(name, type, [_model_value(v, type) for v in values])

    def _storage(self, variable: Variable, h5ds: Any, tid: Any) -> VariableStorage:
        settings: dict[str, Any] = {"complevel": 0}
        plist = h5ds.id.get_create_plist()
        for i in range(plist.get_nfilters()):
            code, _flags, values, filter_name = plist.get_filter(i)
            if code == HDF5_SHUFFLE:
                settings["shuffle"] = True
            elif code == HDF5_FLETCHER32:
                settings["fletcher32"] = True
            elif code in _COMPRESSION_OF:
                settings["compression"] = _COMPRESSION_OF[code]
                settings["complevel"] = int(values[0]) if values else 0
            elif code == HDF5_BLOSC and len(values) >= 7 and values[6] in _BLOSC_NAMES:
                settings["compression"] = _BLOSC_NAMES[values[6]]
                settings["complevel"], settings["blosc_shuffle"] = int(values[4]), int(values[5])
            else:
                what = "szip" if code == HDF5_SZIP else f"HDF5 filter {code} ({filter_name.decode(errors='replace')})"
                self.unsupported[variable.fqn] = f"{what} compression"
                log.warning("%s: %s uses %s, which nczarr does not write", self.path, variable.fqn, what)
        endian: Literal["native", "little", "big"] = "native"
        if tid.get_class() in (self._h5py.h5t.INTEGER, self._h5py.h5t.FLOAT):
            endian = "big" if tid.get_order() == self._h5py.h5t.ORDER_BE else "little"
        # netcdf-c takes a variable without a user-defined HDF5 fill value as "no fill"
        fill = plist.fill_value_defined() == self._h5py.h5d.FILL_VALUE_USER_DEFINED
        chunks = None if h5ds.chunks is None or not variable.dimensions else tuple(h5ds.chunks)
        return VariableStorage(chunks=chunks, endian=endian, fill=fill, **settings)

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        """The raw values of ``variable`` in ``selection`` (see ``DatasetSource.read``); the
        part beyond what the file holds (an unlimited dimension grown by other variables)
        is the fill value."""
        h5ds = self._datasets[variable.fqn]
        dtype = self._value_dtype(variable)
        shape = tuple(s.stop - s.start for s in selection)
        inner = tuple(slice(min(s.start, n), min(s.stop, n)) for s, n in zip(selection, h5ds.shape))
        records = self._record_type(variable)
        try:
            if dtype.kind == "O" and self._h5py.check_string_dtype(h5ds.dtype):
                data = np.asarray(h5ds.asstr()[inner], dtype=object)
            elif isinstance(records, VlenType):
                data = _vlens_of_records(h5ds, inner)
            elif records is not None:
                data = _records(h5ds, inner)
            else:
                data = np.asarray(h5ds[inner])
        except OSError as error:
            raise Hdf5Error(
                f"{self.path}: cannot read {variable.fqn}: {error} (an HDF5 filter plugin, e.g. "
                "from the hdf5plugin package, may be missing)"
            ) from error
        except Exception as error:  # h5py's errors on corrupt data are of many classes
            raise _file_error(self.path, error, f"cannot read {variable.fqn}") from error
        if h5ds.ndim == 0 and dtype.kind == "O" and data.shape != ():  # h5py gives a scalar vlen's elements
            data = _one_object(data)
        if records is not None:  # strings as str, every record in the aligned layout
            data = convert_records(data, records, resolver=self._resolver)
        elif dtype.fields is not None:  # the file's offsets to C alignment, padding zeroed
            aligned = np.zeros(data.shape, dtype)
            for name in dtype.names or ():
                aligned[name] = data[name]
            data = aligned
        elif dtype.kind != "O":
            data = data.view(dtype)
        if data.shape == shape:
            return data
        out = np.empty(shape, dtype)
        if records is not None:  # a compound's zero record, or an empty vlen
            out = decode_records(np.full(shape, b"", object), records, resolver=self._resolver)
        elif variable.type is AtomicType.STRING or dtype.kind != "O":
            out[...] = self._fill(variable, h5ds, dtype)
        else:  # a vlen: an empty sequence in each element
            for index in np.ndindex(shape):
                out[index] = np.array([], self._datasets[variable.fqn].dtype.metadata["vlen"])
        out[tuple(slice(0, n) for n in data.shape)] = data
        return out

    def _record_type(self, variable: Variable) -> CompoundType | VlenType | None:
        """The type of ``variable`` when its values hold variable-length parts inside
        records (see ``values.stored.has_record_encoding``), else None."""
        if isinstance(variable.type, AtomicType):
            return None
        found = self._user_type(variable)
        if isinstance(found, CompoundType | VlenType) and has_record_encoding(found, resolver=self._resolver):
            return found
        return None

    def _value_dtype(self, variable: Variable) -> np.dtype:
        """The dtype of the raw values of ``variable``; numbers (and enums) in the file's
        byte order, without h5py's metadata."""
        type = variable.type if isinstance(variable.type, AtomicType) else self._user_type(variable)
        dtype = value_dtype(type, resolver=self._resolver)
        return np.dtype(self._datasets[variable.fqn].dtype.str) if dtype.kind in "iuf" else dtype

    def _user_type(self, variable: Variable) -> UserType:
        group = variable.group
        assert group is not None and isinstance(variable.type, str)
        found = self._resolver.type(group, variable.type)
        assert found is not None, variable.type  # the reader made the tree: every reference resolves
        return found

    def _fill(self, variable: Variable, h5ds: Any, dtype: np.dtype) -> Any:
        if dtype.kind == "O":
            return ""
        fill = h5ds.fillvalue
        return np.asarray(fill).astype(dtype) if dtype.fields is not None else np.asarray(fill).view(dtype)


#: h5py's error converting an empty vlen of records that hold strings or vlens.
_EMPTY_VLEN_FAILURE = "invalid background buffer pointer"


def _one_object(value: object) -> np.ndarray:
    """A 0-d object array holding ``value`` (numpy would unpack a sequence)."""
    out = np.empty((), object)
    out[()] = value
    return out


def _vlens_of_records(h5ds: Any, inner: tuple[slice, ...]) -> np.ndarray:
    """A block of a vlen of records holding strings or vlens. h5py fails on a block holding
    an empty one; such a block is read again value by value, the failing ones empty."""
    try:
        return _one_object(h5ds[()]) if h5ds.ndim == 0 else np.asarray(h5ds[inner])
    except TypeError as error:
        if _EMPTY_VLEN_FAILURE not in str(error):
            raise
    element = h5ds.dtype.metadata["vlen"]
    out = np.empty(tuple(s.stop - s.start for s in inner), object)
    for index in np.ndindex(out.shape):
        at = tuple(s.start + i for s, i in zip(inner, index))
        try:
            out[index] = h5ds[at]
        except TypeError as error:
            if _EMPTY_VLEN_FAILURE not in str(error):
                raise
            out[index] = np.empty(0, element)
    return out


def _records(h5ds: Any, inner: tuple[slice, ...]) -> np.ndarray:
    """A block of records holding strings or vlens. h5py fails on a block holding an empty
    vlen of such records in a field; such a block is read again field by field, such a
    field value by value, the failing values empty."""
    try:
        return np.asarray(h5ds[inner])
    except TypeError as error:
        if _EMPTY_VLEN_FAILURE not in str(error):
            raise
    out = np.zeros(tuple(s.stop - s.start for s in inner), h5ds.dtype)
    for name in h5ds.dtype.names:
        try:
            out[name] = h5ds.fields([name])[inner][name]
            continue
        except TypeError as error:
            if _EMPTY_VLEN_FAILURE not in str(error):
                raise
        element = h5ds.dtype[name].metadata["vlen"]  # only vlen fields fail so
        for index in np.ndindex(out.shape):
            at = tuple(s.start + i for s, i in zip(inner, index))
            try:
                out[name][index] = h5ds.fields([name])[at]
            except TypeError as error:
                if _EMPTY_VLEN_FAILURE not in str(error):
                    raise
                out[name][index] = np.empty(0, element)
    return out


def _file_error(path: str, error: Exception, problem: str = "not a readable netCDF-4/HDF5 file") -> NCZarrError:
    """An error of h5py or h5netcdf (any class: corrupt files raise OSError, KeyError,
    ValueError, RuntimeError...) as an Hdf5Error naming the file; nczarr's own pass on."""
    if isinstance(error, NCZarrError):
        return error
    if isinstance(error, RecursionError):
        return Hdf5Error(f"{path}: {problem}: its groups or types are nested too deeply")
    return Hdf5Error(f"{path}: {problem} ({str(error) or type(error).__name__})")


def _dimension_id(h5group: Any, name: str) -> float:
    """netcdf-c's id of a dimension of this group, which orders them (phony ones last)."""
    scale = h5group.get(name)
    return math.inf if scale is None else int(scale.attrs.get("_Netcdf4Dimid", math.inf))


def _char_text(attribute: Any) -> str:
    """A char attribute's text with any NUL inside it: read in its own type, as HDF5's
    conversion of a null-terminated string stops at the first NUL (netcdf-c keeps them all)."""
    raw = np.zeros((), dtype=f"S{attribute.get_type().get_size()}")
    attribute.read(raw, mtype=attribute.get_type())
    return _text(raw.tobytes().rstrip(b"\0"))


def _text(value: Any) -> str:
    """A text attribute value as the model holds it (bytes that are not UTF-8 kept as
    surrogate escapes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _model_value(value: Any, type: Any) -> Any:
    """A value read from HDF5 as an attribute value of the model."""
    if isinstance(value, np.void) and value.dtype.names:
        return tuple(_model_value(value[name], None) for name in value.dtype.names)
    if isinstance(value, np.void):
        return value.tobytes()
    if isinstance(value, bytes):  # a string field of a record (h5py gives vlen strings as bytes)
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "S":
            return b"".join(value.ravel().tolist()).decode("utf-8", "surrogateescape")
        return [_model_value(v, None) for v in value.tolist()] if value.dtype.kind != "O" else [
            _model_value(v, None) for v in value
        ]
    if isinstance(value, np.generic):
        value = value.item()
    if type is AtomicType.FLOAT:
        return float32(value)
    return value
