"""netCDF-4 files (HDF5 underneath, and plain HDF5 files netcdf-c reads) read through h5py,
nczarr's optional extra ``hdf5``: the tree as netcdf-c reads it, storage settings and raw values
as netCDF4 shows them (writing: ``hdf5write``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

import numpy as np

from nczarr.convert.signatures import HDF5_MAGIC
from nczarr.errors import DatasetNotFoundError, Hdf5Error, MissingExtraError, NCZarrError
from nczarr.formats.tree import canonical_type_ref, raw_fqn
from nczarr.model import (
    AtomicType,
    CompoundType,
    DataModel,
    Dataset,
    Dimension,
    EnumMember,
    EnumType,
    Group,
    OpaqueType,
    Resolver,
    UserType,
    Variable,
    VlenType,
)
from nczarr.model.resolve import shortest_reference
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
from nczarr.values.stored import char_texts, convert_records, decode_records, has_record_encoding
from nczarr.values.types import (
    atomic_type_of,
    default_fill,
    dtype_of,
    float32,
    value_dtype,
)

if TYPE_CHECKING:
    import h5py

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'nczarr[hdf5]'"
#: The attribute names netcdf-c reserves; it shows none of them but ``_nczarr_attr`` (its dimension
#: scales, dimension ids, classic flag, provenance, and the names ncdump -s shows of its own).
RESERVED = frozenset(
    {
        "CLASS",
        "NAME",
        "DIMENSION_LIST",
        "REFERENCE_LIST",
        "_ARRAY_DIMENSIONS",
        "_Codecs",
        "_Format",
        "_IsNetcdf4",
        "_NCProperties",
        "_NCZARR_ATTR",
        "_Netcdf4Coordinates",
        "_Netcdf4Dimid",
        "_SuperblockVersion",
        "_nc3_strict",
        "_nczarr_attr",
    }
)
HIDDEN = RESERVED - {"_nczarr_attr"}
NON_COORD = "_nc4_non_coord_"
#: How the NAME of netcdf-c's dimension scale that is no variable begins.
DIMENSION_ONLY = b"This is a netCDF dimension but not a netCDF variable"
#: netCDF4's Blosc compression names by the compressor code in the HDF5 filter's parameters.
BLOSC_NAME_OF_CODE = {code: name for name, code in BLOSC_CODES.items()}
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

_PLUGINS_LOADED: list[bool] = []


def _load_filter_plugins() -> bool:
    """hdf5plugin's filters registered with h5py's HDF5 (once, on the first read a filter
    fails); whether that happened now."""
    if _PLUGINS_LOADED:
        return False
    _PLUGINS_LOADED.append(True)
    try:
        import hdf5plugin  # noqa: F401  (importing registers its filters)
    except ImportError:
        return False
    return True


@dataclass
class _PlannedDimension:
    """A dimension as netcdf-c makes it: from a dimension scale, or invented (phony)."""

    id: int
    name: str
    size: int
    unlimited: bool
    node: Dimension | None = None


@dataclass
class _PlannedVariable:
    """A dataset netcdf-c shows as a variable, and what names its dimensions."""

    name: str
    h5ds: Any
    type: AtomicType | str
    shape: tuple[int, ...]
    growable: tuple[bool, ...]
    dimensions: list[_PlannedDimension | None]
    #: the HDF5 ids of the dimension scales attached to each axis (None: none attached)
    scales: list[Any] | None = None
    #: the dimension ids of ``_Netcdf4Coordinates`` (None: the dataset has none)
    coordinates: list[int] | None = None


@dataclass
class _PlannedGroup:
    """A group read, its dimensions and variables waiting to enter the model tree."""

    h5group: Any
    node: Group
    dimensions: list[_PlannedDimension] = field(default_factory=list)
    variables: list[_PlannedVariable] = field(default_factory=list)
    children: list[_PlannedGroup] = field(default_factory=list)


class Hdf5Reader:
    """A netCDF-4 file open for reading (a :class:`~nczarr.values.source.DatasetSource`),
    read as netcdf-c reads it: what netCDF-4 cannot name (a dataset or attribute of an HDF5
    type that is neither atomic nor committed) is passed over, datasets without dimension
    scales get netcdf-c's ``phony_dim_<n>`` dimensions."""

    dataset: Dataset
    storage: dict[str, VariableStorage]
    data_model: str

    def __init__(self, path: str | os.PathLike[str], *, file: BinaryIO | None = None) -> None:
        """``file``: the file open for reading (a remote one, through fsspec), ``path`` its
        name; closing the reader closes it."""
        _h5netcdf, self._h5py = require_h5netcdf()
        self.path = os.fspath(path)
        if file is None and not os.path.exists(self.path):
            raise DatasetNotFoundError(f"{self.path}: no such file")
        self._file: Any = None
        self._remote = file
        try:
            if file is not None:
                if file.read(8) != HDF5_MAGIC:
                    raise Hdf5Error(f"{self.path} is not a netCDF-4 (HDF5) file")
                file.seek(0)
            elif not self._h5py.is_hdf5(self.path):
                raise Hdf5Error(f"{self.path} is not a netCDF-4 (HDF5) file")
            self._file = self._h5py.File(file if file is not None else self.path, "r")
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
        #: What ``ncdump -s`` (4.9) shows as ``_IsNetcdf4``: netcdf-c's guess from the file's
        #: marks (not its ``_NCProperties``: a file without dimensions is "not netCDF-4").
        self.netcdf4_marks = classic or _marks(self._h5py, self._file) >= 2
        self.dataset = Dataset(data_model=DataModel.CLASSIC if classic else DataModel.ENHANCED)
        self.storage = {}
        #: The FQNs of the variables stored in HDF5's compact layout (``ncdump -s`` names it).
        self.compact: set[str] = set()
        #: What the tree and ``storage`` cannot say (szip, unknown filters), by variable FQN.
        self.unsupported: dict[str, str] = {}
        self._datasets: dict[str, Any] = {}
        #: the size in the file of each number of a variable of numbers, by its FQN
        self._numbers: dict[str, int] = {}
        self._types: dict[int, list[tuple[Any, UserType]]] = {}
        #: each committed type read so far by its place in the file (HDF5's file number and
        #: object address): a dataset or attribute made with that committed type names it
        self._committed: dict[tuple[int, int], UserType] = {}
        self._resolver = Resolver()
        #: netcdf-c's dimension ids: every dimension of the file by id, and the next free one
        self._dimension_ids: dict[int, _PlannedDimension] = {}
        self._next_dimension_id = 0
        #: the dimension made from each dimension scale, by the scale's HDF5 id
        self._scales: dict[Any, _PlannedDimension] = {}
        try:
            top = _PlannedGroup(self._file["/"], self.dataset)
            self._plan_group(top)
            self._invent_dimensions(top)
            self._build(top)
        except Exception as error:
            self.close()
            raise _file_error(self.path, error) from error

    def __enter__(self) -> Hdf5Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the file (and the remote one it reads through)."""
        try:
            if self._file:
                self._file.close()
        finally:
            if self._remote is not None:
                self._remote.close()

    # -- the tree, in netcdf-c's order -----------------------------------------------------

    def _members(self, h5group: Any) -> list[tuple[str, Any]]:
        """The objects of a group in netcdf-c's order: by creation when the group tracks it,
        else by name (soft and external links followed, as HDF5 follows them)."""
        h5 = self._h5py.h5
        tracked = h5group.id.get_create_plist().get_link_creation_order() & self._h5py.h5p.CRT_ORDER_TRACKED
        names: list[bytes] = []
        h5group.id.links.iterate(
            names.append, idx_type=h5.INDEX_CRT_ORDER if tracked else h5.INDEX_NAME, order=h5.ITER_INC
        )
        return [(name.decode("utf-8", "surrogateescape"), h5group[name]) for name in names]

    def _plan_group(self, planned: _PlannedGroup) -> None:
        """Read a group as netcdf-c does: its committed types and datasets (dimension scales
        become dimensions) in the order of its links (a dataset of a type committed after
        it is passed over, as netcdf-c does not know that type yet), then its subgroups."""
        self._types[id(planned.node)] = []
        subgroups = []
        for name, item in self._members(planned.h5group):
            if isinstance(item, self._h5py.Datatype):
                self._read_type(planned.node, name, item.id)
            elif isinstance(item, self._h5py.Dataset):
                self._plan_dataset(planned, name, item)
            elif isinstance(item, self._h5py.Group):
                subgroups.append((name, item))
        for name, item in subgroups:
            child = _PlannedGroup(item, planned.node.add_group(name))
            planned.children.append(child)
            self._resolver = Resolver()
            self._plan_group(child)

    def _plan_dataset(self, planned: _PlannedGroup, name: str, h5ds: Any) -> None:
        space = h5ds.id.get_space()
        rank = space.get_simple_extent_ndims()
        shape = tuple(int(n) for n in space.get_simple_extent_dims()) if rank > 0 else ()
        growable = tuple(n == self._h5py.h5s.UNLIMITED for n in space.get_simple_extent_dims(True)) if rank > 0 else ()
        dimension = None
        if rank and self._h5py.h5ds.is_scale(h5ds.id):
            dimension = self._plan_dimension(planned, name, h5ds, shape[0], growable[0])
            self._scales[h5ds.id] = dimension
            if _is_dimension_only(h5ds):
                return
        type = self._dataset_type(h5ds.id.get_type(), planned.node)
        if type is None:  # netcdf-c passes over a dataset of a type it cannot name (its scale stays)
            log.info("%s: %s has an HDF5 type netCDF-4 cannot name; passed over", self.path, h5ds.name)
            return
        variable = _PlannedVariable(name.removeprefix(NON_COORD), h5ds, type, shape, growable, [None] * rank)
        if dimension is not None:  # a coordinate variable: its own dimension first
            variable.dimensions[0] = dimension
        coordinates = h5ds.attrs.get("_Netcdf4Coordinates")
        if coordinates is not None:
            variable.coordinates = [int(i) for i in np.ravel(coordinates)]
        elif rank and not self._h5py.h5ds.is_scale(h5ds.id) and self._h5py.h5ds.get_num_scales(h5ds.id, 0) > 0:
            variable.scales = []
            for axis in range(rank):
                found: list[Any] = []
                self._h5py.h5ds.iterate(h5ds.id, axis, found.append)
                variable.scales.append(found[0] if found else None)
        planned.variables.append(variable)

    def _plan_dimension(self, planned: _PlannedGroup, name: str, h5ds: Any, size: int, unlimited: bool) -> _PlannedDimension:
        """A dimension from a dimension scale: netcdf-c's id is its ``_Netcdf4Dimid``, else
        the next free one."""
        stored_id = h5ds.attrs.get("_Netcdf4Dimid")
        if stored_id is None:
            dimension_id = self._next_dimension_id
        else:
            dimension_id = int(np.ravel(stored_id)[0])
        self._next_dimension_id = max(self._next_dimension_id, dimension_id + 1)
        dimension = _PlannedDimension(dimension_id, name, size, unlimited)
        planned.dimensions.append(dimension)
        self._dimension_ids[dimension_id] = dimension
        return dimension

    def _invent_dimensions(self, planned: _PlannedGroup) -> None:
        """Give each variable its dimensions, as netcdf-c does once the whole file is read
        (subgroups first): by ``_Netcdf4Coordinates``, by attached scales, else the first
        dimension of the group of the same size and growability that the variable does not
        use yet, else a new ``phony_dim_<id>``."""
        for child in planned.children:
            self._invent_dimensions(child)
        for variable in planned.variables:
            for axis in range(len(variable.shape)):
                if variable.dimensions[axis] is not None:
                    continue
                if variable.coordinates is not None and axis < len(variable.coordinates):
                    variable.dimensions[axis] = self._dimension_ids.get(variable.coordinates[axis])
                elif variable.scales is not None and variable.scales[axis] is not None:
                    variable.dimensions[axis] = self._scales.get(variable.scales[axis])
                if variable.dimensions[axis] is None:
                    variable.dimensions[axis] = self._phony(planned, variable, axis)

    def _phony(self, planned: _PlannedGroup, variable: _PlannedVariable, axis: int) -> _PlannedDimension:
        size, unlimited = variable.shape[axis], variable.growable[axis]
        used = variable.dimensions[:axis]
        for dimension in planned.dimensions:
            if dimension.size == size and dimension.unlimited == unlimited and all(d is not dimension for d in used):
                return dimension
        dimension_id = self._next_dimension_id
        self._next_dimension_id += 1
        dimension = _PlannedDimension(dimension_id, f"phony_dim_{dimension_id}", size, unlimited)
        planned.dimensions.append(dimension)
        self._dimension_ids[dimension_id] = dimension
        return dimension

    def _build(self, top: _PlannedGroup) -> None:
        """The model tree: every group's dimensions (by id) first, then the variables that
        name them, then the attributes."""
        groups = [top]
        for planned in groups:  # breadth first; the list grows as it is walked
            groups += planned.children
        longest: dict[int, int] = {}  # an unlimited dimension is as long as its longest use
        for planned in groups:
            for variable in planned.variables:
                for used, size in zip(variable.dimensions, variable.shape):
                    if used is not None:
                        longest[used.id] = max(longest.get(used.id, 0), size)
        for planned in groups:
            for dimension in sorted(planned.dimensions, key=lambda d: d.id):
                size = max(dimension.size, longest.get(dimension.id, 0)) if dimension.unlimited else dimension.size
                dimension.node = planned.node.add_dimension(dimension.name, size, dimension.unlimited)
        self._resolver = Resolver()  # the tree changed: new dimensions
        for planned in groups:
            for variable in planned.variables:
                refs = [shortest_reference(d.node, planned.node, self._resolver) for d in variable.dimensions if d and d.node]
                new = planned.node.add_variable(variable.name, variable.type, refs)
                self._read_attributes(variable.h5ds, new, planned.node)
                self._datasets[new.fqn] = variable.h5ds
                if variable.h5ds.id.get_type().get_class() in (self._h5py.h5t.INTEGER, self._h5py.h5t.FLOAT):
                    self._numbers[new.fqn] = variable.h5ds.id.get_type().get_size()
                self.storage[new.fqn] = self._storage(new, variable.h5ds, variable.h5ds.id.get_type())
                if variable.h5ds.id.get_create_plist().get_layout() == self._h5py.h5d.COMPACT:
                    self.compact.add(new.fqn)
            self._read_attributes(planned.h5group, planned.node, planned.node)

    def _read_type(self, group: Group, name: str, tid: Any) -> None:
        h5t = self._h5py.h5t
        kind = tid.get_class()
        new: UserType
        if kind == h5t.ENUM:
            members = [
                EnumMember(tid.get_member_name(i).decode("utf-8"), int(tid.get_member_value(i)))
                for i in range(tid.get_nmembers())
            ]
            new = EnumType(name, self._required_type(tid.get_super(), group), members)
        elif kind == h5t.VLEN:
            new = VlenType(name, self._required_type(tid.get_super(), group))
        elif kind == h5t.OPAQUE:
            new = OpaqueType(name, tid.get_size())
        elif kind == h5t.COMPOUND:
            new = CompoundType(name)
            for i in range(tid.get_nmembers()):
                member = tid.get_member_type(i)
                shape: tuple[int, ...] = ()
                if member.get_class() == h5t.ARRAY:
                    shape, member = tuple(member.get_array_dims()), member.get_super()
                new.add_field(tid.get_member_name(i).decode("utf-8"), self._required_type(member, group), shape)
        else:
            log.info("%s: type %r has an HDF5 class netCDF-4 does not use; passed over", self.path, name)
            return
        group.add(new)
        self._types[id(group)].append((tid, new))
        self._committed[self._place(tid)] = new
        self._resolver = Resolver()

    def _required_type(self, tid: Any, scope: Group) -> AtomicType | str:
        """The netCDF type of a part of a committed type; an error where there is none."""
        found = self._type_ref(tid, scope)
        if found is None:
            raise Hdf5Error(f"{self.path}: an HDF5 type in {scope.fqn} has no netCDF-4 equivalent")
        return found

    def _dataset_type(self, tid: Any, scope: Group) -> AtomicType | str | None:
        """The netCDF type of a dataset's HDF5 type (see :meth:`_type_ref`); a float of
        more than 8 bytes is a string whose values cannot be read, as netcdf-c has it."""
        if tid.get_class() == self._h5py.h5t.FLOAT and tid.get_size() > 8:
            return AtomicType.STRING
        return self._type_ref(tid, scope)

    def _place(self, tid: Any) -> tuple[int, int]:
        info = self._h5py.h5o.get_info(tid)
        return int(info.fileno), int(info.addr)

    def _type_ref(self, tid: Any, scope: Group) -> AtomicType | str | None:
        """The netCDF type of an HDF5 type: atomic (a number as the native type HDF5
        converts it to); the committed type itself where the dataset or attribute was made
        with it (as nczarr and h5py write them: the file names the type); else, as netcdf-c
        matches types (``nc4_rec_find_hdf_type``), the first equal committed type read so
        far, in the whole file (ncgen's files do not say which of two equal types a
        variable has: netcdf-c, and so nczarr, name the first); None where there is none."""
        h5t = self._h5py.h5t
        kind = tid.get_class()
        if kind == h5t.STRING:
            return AtomicType.STRING if tid.is_variable_str() or tid.get_size() > 1 else AtomicType.CHAR
        if kind in (h5t.INTEGER, h5t.FLOAT):
            return _native_number(h5t, tid)
        named = self._committed.get(self._place(tid)) if tid.committed() else None
        if named is not None:
            return canonical_type_ref(raw_fqn(named), scope, self._resolver)
        for types in self._types.values():
            for candidate, node in types:
                if candidate == tid:
                    return canonical_type_ref(raw_fqn(node), scope, self._resolver)
        return None

    def _read_attributes(self, h5obj: Any, owner: Group | Variable, scope: Group) -> None:
        """The attributes as netcdf-c reads them, in the order HDF5 lists them by creation
        (the order they are stored in when the file does not track it), those of a type
        netCDF-4 cannot name passed over: a fixed-length string with one value (or none)
        is char, text in any other shape is string."""
        for name in _attribute_names(self._h5py, h5obj):
            if name in HIDDEN:
                continue
            attribute = self._h5py.h5a.open(h5obj.id, name.encode("utf-8", "surrogateescape"))
            tid = attribute.get_type()
            empty = attribute.get_space().get_simple_extent_type() == self._h5py.h5s.NULL
            if tid.get_class() == self._h5py.h5t.STRING:
                if not tid.is_variable_str() and (empty or attribute.shape == ()):
                    owner.add_attribute(name, AtomicType.CHAR, "" if empty else _char_text(attribute))
                else:
                    stored: Iterable[object] = () if empty else np.ravel(np.asarray(h5obj.attrs[name], dtype=object))
                    texts = [_text(t).rstrip("\0") for t in stored]
                    owner.add_attribute(name, AtomicType.STRING, _with_nulls(attribute, texts))
                continue
            type = self._type_ref(tid, scope)
            if type is None:  # netcdf-c passes over an attribute of a type it cannot name
                log.info("%s: attribute %r of %s has an HDF5 type netCDF-4 cannot name", self.path, name, h5obj.name)
                continue
            values: Iterable[object] = ()
            if empty:
                pass
            elif isinstance(type, AtomicType):  # converted to the native type, as netcdf-c reads it
                number = np.empty(attribute.shape, dtype_of(type))
                attribute.read(number, mtype=self._h5py.h5t.py_create(number.dtype))
                values = number.reshape(-1)
            else:
                values = np.asarray(h5obj.attrs[name]).reshape(-1)
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
            elif code == HDF5_BLOSC and len(values) >= 7 and values[6] in BLOSC_NAME_OF_CODE:
                settings["compression"] = BLOSC_NAME_OF_CODE[values[6]]
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

    def h5dataset(self, variable: Variable) -> h5py.Dataset:
        """The h5py dataset holding ``variable`` (for its layout, filters and chunks)."""
        return self._datasets[variable.fqn]

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
            if self._converted(variable):
                data = self._read_converted(variable, h5ds, inner, dtype)
            elif dtype.kind == "O" and self._h5py.check_string_dtype(h5ds.dtype):
                data = _data_with_nulls(self._h5py, h5ds, inner, np.asarray(h5ds.asstr()[inner], dtype=object))
            elif isinstance(records, VlenType):
                data = _vlens_of_records(h5ds, inner)
            elif records is not None:
                data = _records(h5ds, inner)
            else:
                data = np.asarray(h5ds[inner])
                if h5ds.ndim == 0 and data.dtype != h5ds.dtype and h5ds.dtype.kind != "O":
                    data = data.astype(h5ds.dtype)  # h5py gives a scalar as a number in native order
        except NCZarrError:
            raise
        except OSError as error:
            if _load_filter_plugins():  # a filter beyond deflate (Blosc, Zstd...): hdf5plugin's, then again
                return self.read(variable, selection)
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
            if data.dtype.kind == "c":  # h5py reads a compound {r, i} as complex numbers
                data = data.view(np.dtype([("r", data.real.dtype), ("i", data.real.dtype)]))
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

    def _converted(self, variable: Variable) -> bool:
        """Whether the numbers of ``variable`` are read converted to its netCDF type (their
        size in the file is not that type's), as HDF5 converts them for netcdf-c."""
        size = self._numbers.get(variable.fqn)
        return (
            size is not None
            and isinstance(variable.type, AtomicType)
            and (variable.type is AtomicType.STRING or size != dtype_of(variable.type).itemsize)
        )

    def _read_converted(self, variable: Variable, h5ds: Any, inner: tuple[slice, ...], dtype: np.dtype) -> np.ndarray:
        if variable.type is AtomicType.STRING:
            raise Hdf5Error(
                f"{self.path}: cannot read {variable.fqn}: its floats of {self._numbers[variable.fqn]} bytes have "
                "no netCDF type (ncdump shows the variable as string and cannot read it either)"
            )
        h5s = self._h5py.h5s
        out = np.empty(tuple(s.stop - s.start for s in inner), dtype)
        space = h5ds.id.get_space()
        if out.size == 0:
            return out
        if out.ndim:
            space.select_hyperslab(tuple(s.start for s in inner), out.shape)
        memory = h5s.create_simple(out.shape) if out.ndim else h5s.create(h5s.SCALAR)
        h5ds.id.read(memory, space, out, mtype=self._h5py.h5t.py_create(dtype))
        return out

    def _value_dtype(self, variable: Variable) -> np.dtype:
        """The dtype of the raw values of ``variable``; numbers (and enums) in the file's
        byte order, without h5py's metadata."""
        type = variable.type if isinstance(variable.type, AtomicType) else self._user_type(variable)
        dtype = value_dtype(type, resolver=self._resolver)
        if self._converted(variable):
            return dtype
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
        # netcdf-c fills what is beyond a dataset without an HDF5 fill value of its own with
        # netCDF's default fill, not HDF5's zeros (nor the _FillValue attribute)
        own = h5ds.id.get_create_plist().fill_value_defined() == self._h5py.h5d.FILL_VALUE_USER_DEFINED
        default = None if own or dtype.fields is not None else default_fill(dtype)
        if default is not None:
            return np.asarray(default, dtype)
        if self._converted(variable):
            fill = np.zeros((), dtype)
            h5ds.id.get_create_plist().get_fill_value(fill)
            return fill
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


def _is_dimension_only(h5ds: Any) -> bool:
    """Whether a dimension scale is netcdf-c's dimension without a variable."""
    name = h5ds.attrs.get("NAME")
    return isinstance(name, bytes) and name.startswith(DIMENSION_ONLY)


def _marks(h5py: ModuleType, h5group: Any) -> int:
    """How many marks of netcdf-c a group holds, as netcdf-c counts them to tell a netCDF-4
    file: attributes of its datasets (reached by hard links, in any subgroup) with names it
    reserves."""
    count = 0
    for name in h5group:
        if not isinstance(h5group.get(name, getlink=True), h5py.HardLink):
            continue
        item = h5group[name]
        if isinstance(item, h5py.Group):
            count += _marks(h5py, item)
        elif isinstance(item, h5py.Dataset):
            count += sum(1 for attribute in item.attrs if attribute in RESERVED)
    return count


def _attribute_names(h5py: ModuleType, h5obj: Any) -> list[str]:
    """The names of an object's attributes as netcdf-c lists them: HDF5's creation order,
    which is the order they are stored in when the file does not track it (by name where
    HDF5 cannot list them so)."""
    names: list[bytes] = []
    try:
        h5py.h5a.iterate(h5obj.id, names.append, index_type=h5py.h5.INDEX_CRT_ORDER, order=h5py.h5.ITER_INC)
    except Exception:
        names.clear()
        h5py.h5a.iterate(h5obj.id, names.append, index_type=h5py.h5.INDEX_NAME, order=h5py.h5.ITER_INC)
    return [name.decode("utf-8", "surrogateescape") for name in names]


def _native_number(h5t: ModuleType, tid: Any) -> AtomicType | None:
    """netcdf-c's type of an HDF5 integer or float: that of the native type HDF5 converts it
    to (the narrowest holding it, integers of more than 8 bytes as 8); None for floats of
    more than 8 bytes (their native type is no netCDF type)."""
    size = tid.get_size()
    if tid.get_class() == h5t.FLOAT:
        return None if size > 8 else AtomicType.FLOAT if size <= 4 else AtomicType.DOUBLE
    width = next((n for n in (1, 2, 4) if size <= n), 8)
    return atomic_type_of(np.dtype(f"{'u' if tid.get_sign() == h5t.SGN_NONE else 'i'}{width}"))


def _with_nulls(attribute: Any, texts: list[str]) -> list[str | None]:
    """A variable-length string attribute's values with its NULL strings (h5py reads them
    as empty; ncdump shows NIL) as None, found by reading the string pointers themselves."""
    if "" not in texts or not attribute.get_type().is_variable_str():
        return list(texts)
    pointers = np.zeros(attribute.shape, np.uintp)
    attribute.read(pointers, mtype=attribute.get_type())
    return [None if text == "" and pointer == 0 else text for text, pointer in zip(texts, pointers.reshape(-1))]


def _data_with_nulls(h5py: Any, h5ds: Any, inner: tuple[slice, ...], data: np.ndarray) -> np.ndarray:
    """Variable-length string data with its NULL strings (h5py reads them as empty; ncdump
    shows NIL) as None, found by reading the string pointers of the selection themselves."""
    if not h5ds.id.get_type().is_variable_str() or not np.any(data == ""):
        return data
    pointers = np.zeros(data.shape, np.uintp)
    space = h5ds.id.get_space()
    if h5ds.ndim:
        space.select_hyperslab(tuple(s.start for s in inner), tuple(s.stop - s.start for s in inner))
    memory = h5py.h5s.create_simple(data.shape) if data.ndim else h5py.h5s.create(h5py.h5s.SCALAR)
    h5ds.id.read(memory, space, pointers, mtype=h5ds.id.get_type())
    nulls = (pointers == 0) & (data == "")
    if nulls.any():
        data = data.copy()
        data[nulls] = None
    return data


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
            return char_texts(value)
        return [_model_value(v, None) for v in value.tolist()] if value.dtype.kind != "O" else [
            _model_value(v, None) for v in value
        ]
    if isinstance(value, np.generic):
        value = value.item()
    if type is AtomicType.FLOAT:
        return float32(value)
    return value
