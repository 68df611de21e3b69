"""``Variable``: a handle on a netCDF variable with netCDF4-python's interface: numpy-like
orthogonal indexing, unlimited dimensions that grow on write, and the auto mask / scale /
unsigned / chartostring conversions (reference: netcdf4-api.md §1.5, §2.4–§2.9).

Values travel in three forms: what the engine array holds (the convention's stored form:
``uint8`` chars in NCZarr v3, ``S<n>`` strings in NCZarr v2, packed records...), the raw netCDF
values (netCDF4's dtype in the variable's byte order, ``str`` objects for strings), and what the
user sees after the auto conversions of :mod:`nczarr.values.rules`.
"""

from __future__ import annotations

import math
import sys
import unicodedata
import warnings
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from nczarr.api import attributes as attrs
from nczarr.api.dimension import Dimension
from nczarr.api.handle import (
    RESERVED,
    Shared,
    checked_name,
    delete_attribute,
    rename_attribute,
    reserved_error,
    set_attribute,
)
from nczarr.api.types import (
    CompoundType,
    EnumType,
    TypeGroup,
    VLType,
    _UserType,
    atomic_of,
    string_vltype,
)
from nczarr.errors import (
    ArgumentError,
    AttributeNotFoundError,
    DatasetStateError,
    SelectionError,
)
from nczarr.model import AtomicType, resolve_dimension, resolve_type
from nczarr.model import Dimension as ModelDimension
from nczarr.model import Group as ModelGroup
from nczarr.model import Variable as ModelVariable
from nczarr.model import nodes as model_nodes
from nczarr.model.resolve import ANONYMOUS_PREFIX
from nczarr.values import rules
from nczarr.values.indexing import Key, fit_data, read_key, write_key
from nczarr.values.quantize import QUANTIZE_ATTRIBUTES, check_quantize, quantize_write
from nczarr.values.storage import NETCDF4_COMPRESSIONS, NO_SZIP, VariableStorage
from nczarr.values.stored import encoding_of, raw_to_stored, stored_to_raw
from nczarr.values.types import COMPLEX_TYPE_NAMES, canonical_dtype, default_fill, dtype_of

_FILL_AFTER_CREATION = (
    "_FillValue attribute must be set when variable is created (using fill_value keyword to createVariable)"
)
#: Attributes whose value assignment through attribute syntax casts to the variable's type.
_VALID_ATTRIBUTES = ("missing_value", "valid_min", "valid_max", "valid_range")
_DEFAULT_CACHE = (16 * 1024 * 1024, 1009, 0.75)
_UNKNOWN = object()  # a cached value not computed yet
_KIND_LABEL = {"string": "vlen", "vlen": "vlen", "compound": "compound", "enum": "enum", "opaque": "opaque"}


#: What reading a variable gives: an array (masked where values are missing) or, for a
#: scalar of a string, compound or opaque type, its one value.
VariableData = np.ndarray | np.generic | str


class VariableGroup(TypeGroup, Protocol):
    """What a variable sees of its group (a ``Dataset`` or ``Group``)."""

    @property
    def path(self) -> str: ...

    @property
    def _shared(self) -> Shared: ...

    @property
    def _node(self) -> ModelGroup: ...

    @property
    def _parent(self) -> VariableGroup | None: ...

    @property
    def _groups(self) -> Mapping[str, VariableGroup]: ...

    @property
    def _variables(self) -> MutableMapping[str, Variable]: ...

    @property
    def _dimensions(self) -> Mapping[str, Dimension]: ...

    @property
    def _types(self) -> Mapping[str, _UserType]: ...

    @property
    def _ncstring_attrs(self) -> bool: ...

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]: ...


class Variable:
    """A variable of a group; ``grp.createVariable(...)`` makes one."""

    __slots__ = (
        "__weakref__",
        "_always_mask",
        "_chartostring",
        "_chunk_cache",
        "_complex",
        "_complex_axis",
        "_contiguous",
        "_conversion",
        "_dims",
        "_dtype",
        "_endian",
        "_engine",
        "_grp",
        "_kind",
        "_mask",
        "_ncstring_attrs",
        "_node",
        "_quantization",
        "_scale",
        "_usertype",
    )
    __orthogonal_indexing__ = True
    _always_mask: bool
    _chartostring: bool
    _chunk_cache: tuple[int, int, float]
    _complex: np.dtype | None  # with auto_complex, the complex dtype nc-complex's layouts show as
    _complex_axis: bool  # that layout is a trailing dimension of length 2 (hidden), not a compound
    _contiguous: bool
    _conversion: rules.Conversion | None
    _dims: list[ModelDimension] | None
    _dtype: np.dtype
    _endian: str
    _engine: tuple[int, Any] | None  # the session's generation and its engine array
    _grp: VariableGroup
    _kind: str
    _mask: bool
    _ncstring_attrs: bool
    _node: ModelVariable
    _quantization: tuple[int, str] | object | None  # _UNKNOWN until looked up
    _scale: bool
    _usertype: Any  # the handle of the variable's user type (its class follows _kind), or None

    def __init__(
        self,
        grp: VariableGroup,
        name: str,
        datatype: object,
        dimensions: str | Dimension | Sequence[str | Dimension] = (),
        compression: str | None = None,
        zlib: bool = False,
        complevel: int | None = 4,
        shuffle: bool = True,
        szip_coding: str = "nn",
        szip_pixels_per_block: int = 8,
        blosc_shuffle: int = 1,
        fletcher32: bool = False,
        contiguous: bool = False,
        chunksizes: Sequence[int] | None = None,
        endian: str = "native",
        least_significant_digit: int | None = None,
        significant_digits: int | None = None,
        quantize_mode: str = "BitGroom",
        fill_value: object = None,
        chunk_cache: int | None = None,
        **kwargs: object,
    ) -> None:
        shared = grp._shared
        shared.check_writable()
        name = checked_name(name)
        where = f"(variable '{name}', group '{grp.path}')"
        if name in grp._variables or name in grp._groups:
            raise DatasetStateError("NetCDF: String match to name in use")
        if _complex_request(grp, datatype) and not _holds_user_types(shared):
            # nc-complex's layout where no compound can be: a trailing dimension of length 2
            datatype = "f4" if np.dtype(datatype).itemsize == 8 else "f8"  # type: ignore[call-overload]
            named = (dimensions,) if isinstance(dimensions, str | Dimension) else tuple(dimensions or ())
            dimensions = (*named, _complex_dimension(grp))
        type_ref, usertype = _type_ref(grp, datatype, where)
        _check_classic_type(shared, type_ref)
        dims = _dimension_nodes(grp, dimensions)
        if endian not in ("little", "big", "native"):
            raise ArgumentError(f"'endian' keyword argument must be 'little','big' or 'native', got '{endian}'")
        _warn_byte_order(datatype, endian)
        netcdf3 = shared.data_model.startswith("NETCDF3")
        if netcdf3 and endian != "native":
            raise DatasetStateError("NetCDF: Attempting netcdf-4 operation on netcdf-3 file")
        if compression is None and zlib:
            compression = "zlib"
        if compression and compression not in NETCDF4_COMPRESSIONS:
            raise ArgumentError(f"Unsupported value for compression kwarg {where}")
        if not complevel or not dims or netcdf3:
            compression = None
        if compression == "szip":
            raise ArgumentError(f"{NO_SZIP} {where}")
        # netCDF4 ignores the storage settings netCDF-3 lacks
        chunks = None if netcdf3 else _chunks(dims, contiguous, chunksizes)
        storage = VariableStorage(
            chunks=chunks,
            compression=compression,
            complevel=int(complevel or 0),
            shuffle=bool(shuffle) and compression == "zlib",
            fletcher32=bool(fletcher32) and bool(dims) and not netcdf3,
            endian=endian,  # type: ignore[arg-type]
            # netCDF4: variables defined while the dataset's fill mode is off are never filled
            fill=fill_value is not False and shared.fill_on,
            blosc_shuffle=blosc_shuffle,
        )
        node = ModelVariable(name, type_ref, [_dimension_ref(grp, d) for d in dims])
        with shared.lock:
            grp._node.add(node)
            try:
                self._bind(grp, node, usertype, endian)
                self._contiguous = bool(contiguous) and not netcdf3
                self._endian = endian
                self._set_creation_attributes(fill_value, least_significant_digit, significant_digits, quantize_mode)
                shared.session.define(node, storage)
            except BaseException:
                grp._node.variables.remove(node)
                raise
            grp._variables[name] = self
        if chunk_cache is not None:
            self._chunk_cache = (int(chunk_cache), *_DEFAULT_CACHE[1:])

    def _set_creation_attributes(
        self, fill_value: object, lsd: int | None, significant_digits: int | None, quantize_mode: str
    ) -> None:
        node = self._node
        if fill_value is not None and fill_value is not False:
            if self._kind in ("compound", "vlen", "opaque"):
                raise AttributeNotFoundError(f"cannot set _FillValue for {self._kind} variable {node.name!r}")
            if isinstance(fill_value, str) and fill_value == "default" and self._kind != "string":
                value: Any = default_fill(self._dtype)
            else:
                value = fill_value
            if self._kind == "string":
                node.add_attribute("_FillValue", AtomicType.STRING, [str(value)])
            else:
                where = f"of variable '{node.name}' (group '{self._grp.path}')"
                array = rules.cast_fill_value(value, self._dtype if self._kind != "char" else np.dtype("S1"), where)
                atomic = self._atomic()
                if atomic is AtomicType.CHAR:
                    node.add_attribute("_FillValue", AtomicType.CHAR, bytes(array.item()).decode("latin-1") or "\x00")
                else:
                    node.add_attribute("_FillValue", atomic, [array.item()])
        if lsd is not None:
            node.add_attribute("least_significant_digit", AtomicType.INT64, [int(lsd)])
        if significant_digits is not None:
            where = f"(variable '{node.name}', group '{self._grp.path}')"
            name = check_quantize(quantize_mode, int(significant_digits), self._dtype, where)
            node.add_attribute(name, AtomicType.INT, [int(significant_digits)])

    @classmethod
    def _for(cls, grp: VariableGroup, node: ModelVariable) -> Variable:
        """The handle of a variable read from a store."""
        handle = cls.__new__(cls)
        usertype = None
        if not isinstance(node.type, AtomicType):
            found = resolve_type(node.group, node.type)  # type: ignore[arg-type]
            usertype = _handle_of(grp, found)
        storage = grp._shared.session.stored.storage.get(node.fqn)
        handle._bind(grp, node, usertype, storage.endian if storage is not None else "native")
        handle._contiguous = False
        # what is stored: a byte order, never 'native'
        handle._endian = "big" if storage is not None and storage.endian == "big" else sys.byteorder
        return handle

    def _bind(self, grp: VariableGroup, node: ModelVariable, usertype: Any, endian: str) -> None:
        type = node.type
        if isinstance(type, AtomicType):
            kind = {AtomicType.STRING: "string", AtomicType.CHAR: "char"}.get(type, "atomic")
            dtype = np.dtype(object) if type is AtomicType.STRING else dtype_of(type)
        else:
            kind = (
                "enum" if isinstance(usertype, EnumType)
                else "compound" if isinstance(usertype, CompoundType)
                else "vlen" if isinstance(usertype, VLType)
                else "opaque"
            )
            dtype = usertype.dtype
        if endian != "native" and dtype.kind in "iuf":
            dtype = canonical_dtype(dtype.newbyteorder(">" if endian == "big" else "<"))
        # netCDF4's auto_complex: nc-complex's layouts read and write as complex numbers
        complex_view, complex_axis = None, False
        if grp._shared.auto_complex and kind == "compound":
            complex_view = _nc_complex_compound(usertype._node)
        elif grp._shared.auto_complex and type in (AtomicType.FLOAT, AtomicType.DOUBLE) and node.dimensions:
            last = node.dimensions[-1]
            last_dim = None if isinstance(last, int) else resolve_dimension(node.group, last)  # type: ignore[arg-type]
            if last_dim is not None and last_dim.name in NC_COMPLEX_DIMENSIONS and last_dim.size == 2:
                complex_view, complex_axis = np.dtype("c8" if type is AtomicType.FLOAT else "c16"), True
        state = {
            "_grp": grp, "_node": node, "_usertype": usertype, "_kind": kind, "_dtype": dtype,
            "_complex": complex_view, "_complex_axis": complex_axis,
            "_mask": True, "_scale": True, "_always_mask": True, "_chartostring": True,
            "_ncstring_attrs": grp._ncstring_attrs, "_conversion": None, "_quantization": _UNKNOWN,
            "_dims": None, "_engine": None, "_chunk_cache": _DEFAULT_CACHE,
        }
        for name, value in state.items():  # not through __setattr__: opening binds thousands
            object.__setattr__(self, name, value)

    def _atomic(self) -> AtomicType:
        type = self._node.type
        if isinstance(type, AtomicType):
            return type
        return self._usertype._node.base

    # -- the engine array --------------------------------------------------------------------
    def _array(self) -> Any:
        """The engine array (kept while the session's renames and removals leave it be:
        element-by-element loops would otherwise look it up by FQN each time)."""
        session = self._grp._shared.session
        generation = getattr(session, "generation", 0)
        engine = self._engine
        if engine is None or engine[0] != generation:
            engine = self._engine = (generation, session.array(self._node))
        return engine[1]

    # -- properties --------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._node.name

    @property
    def _name(self) -> str:  # netCDF4's variables have it; programs read it
        return self._node.name

    @property
    def dtype(self) -> np.dtype | type[str]:
        if self._complex is not None:
            return self._complex
        return str if self._kind == "string" else self._dtype

    @property
    def datatype(self) -> np.dtype | _UserType:
        if self._usertype is not None:
            return self._usertype
        return string_vltype(self._grp) if self._kind == "string" else self._dtype

    def _dimension_nodes(self) -> list[ModelDimension]:
        """The variable's dimensions, resolved once: as in netCDF, a variable keeps the
        dimensions it was defined with (renames included)."""
        dims = self._dims
        if dims is None:
            group = self._node.group
            dims = [
                ModelDimension(f"{ANONYMOUS_PREFIX}{ref}", ref) if isinstance(ref, int) else resolve_dimension(group, ref)  # type: ignore[arg-type, misc]
                for ref in self._node.dimensions
            ]
            if self._complex_axis:  # nc-complex's real/imaginary axis is no dimension of the values
                dims = dims[:-1]
            self._dims = dims
        return dims

    @property
    def dimensions(self) -> tuple[str, ...]:
        return tuple(d.name for d in self._dimension_nodes())

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(d.size for d in self._dimension_nodes())

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self._node.dimensions) - self._complex_axis

    @property
    def mask(self) -> bool:
        return self._mask

    @property
    def scale(self) -> bool:
        return self._scale

    @property
    def always_mask(self) -> bool:
        return self._always_mask

    @property
    def chartostring(self) -> bool:
        return self._chartostring

    @property
    def least_significant_digit(self) -> attrs.AttributeValue:
        return self.getncattr("least_significant_digit")

    def group(self) -> VariableGroup:
        return self._grp

    def get_dims(self) -> tuple[Dimension, ...]:
        out = []
        for node in self._dimension_nodes():
            owner = _group_handle(self._grp, node.group)
            out.append(owner._dimensions[node.name])
        return tuple(out)

    def __len__(self) -> int:
        if not self._node.dimensions:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        data = np.asarray(self[...])
        return data if dtype is None else data.astype(dtype)

    # -- switches --------------------------------------------------------------------------
    def set_auto_chartostring(self, chartostring: bool) -> None:
        self._chartostring = bool(chartostring)
        self._conversion = None

    def set_auto_maskandscale(self, maskandscale: bool) -> None:
        self._mask = self._scale = bool(maskandscale)
        self._conversion = None

    def set_auto_mask(self, mask: bool) -> None:
        self._mask = bool(mask)
        self._conversion = None

    def set_auto_scale(self, scale: bool) -> None:
        self._scale = bool(scale)
        self._conversion = None

    def set_always_mask(self, always_mask: bool) -> None:
        self._always_mask = bool(always_mask)
        self._conversion = None

    def set_ncstring_attrs(self, ncstring_attrs: bool) -> None:
        self._ncstring_attrs = bool(ncstring_attrs)

    def use_nc_get_vars(self, use_nc_get_vars: bool) -> None:
        """Accepted for compatibility: strided reads are always chunk-aligned."""

    def set_collective(self, value: bool) -> None:
        """Accepted for compatibility: there is no MPI I/O."""

    # -- attributes --------------------------------------------------------------------------
    def ncattrs(self) -> list[str]:
        if not self._grp._shared.open:
            raise AttributeNotFoundError("NetCDF: Not a valid ID")
        return [a.name for a in self._node.attributes]

    def getncattr(self, name: str, encoding: str = "utf-8") -> attrs.AttributeValue:
        self._grp._shared.check_open()
        attribute = self._node.find_attribute(name)
        if attribute is None:
            raise AttributeNotFoundError("NetCDF: Attribute not found")
        return attrs.to_python(attribute, encoding, char_as_bytes=name == "_FillValue" and self._kind == "char")

    def setncattr(self, name: str, value: object) -> None:
        if name == "_FillValue":
            raise AttributeNotFoundError(_FILL_AFTER_CREATION)
        self._set_attribute(name, value, force_string=self._ncstring_attrs)

    def setncattr_string(self, name: str, value: object) -> None:
        if name == "_FillValue":
            raise AttributeNotFoundError(_FILL_AFTER_CREATION)
        self._set_attribute(name, value, force_string=True)

    def setncatts(self, attdict: Mapping[str, object]) -> None:
        for name, value in attdict.items():
            if name == "_FillValue":  # netCDF4 refuses it in setncattr only
                self._set_fill_value(value)
            else:
                self.setncattr(name, value)

    def _set_fill_value(self, value: object) -> None:
        """``_FillValue`` set after creation, as netcdf-c allows it: in netCDF-4 only before
        any data are written."""
        shared = self._grp._shared
        shared.check_writable()
        session = shared.session
        with shared.lock:
            if not shared.data_model.startswith("NETCDF3") and session.has_data(self._node):
                raise AttributeNotFoundError("NetCDF: Attempt to define fill value when data already exists.")
            self._changed_attribute()
            attributes = self._node.attributes
            previous = self._node.find_attribute("_FillValue")
            place = len(attributes) if previous is None else attributes.index(previous)
            if previous is not None:
                attributes.remove(previous)
            try:
                self._set_creation_attributes(value, None, None, "BitGroom")
            except BaseException:
                if previous is not None:
                    attributes.insert(place, previous)
                raise
            attributes.insert(place, attributes.pop())  # where it was, as netCDF4 keeps it
            session.refill(self._node)

    def _set_attribute(self, name: str, value: object, *, force_string: bool) -> None:
        set_attribute(self._grp._shared, self._node, name, value, force_string=force_string, changed=self._changed_attribute)

    def delncattr(self, name: str) -> None:
        delete_attribute(self._grp._shared, self._node, name, self._changed_attribute)

    def renameAttribute(self, oldname: str, newname: str) -> None:
        rename_attribute(self._grp._shared, self._node, oldname, newname, self._changed_attribute)

    def _changed_attribute(self) -> None:
        forget = object.__setattr__  # not through __setattr__: this runs for every attribute set
        forget(self, "_conversion", None)
        forget(self, "_quantization", _UNKNOWN)

    def __getattr__(self, name: str) -> attrs.AttributeValue | dict[str, attrs.AttributeValue]:
        if name.startswith("__") and name.endswith("__") and name != "__dict__":
            raise AttributeError(name)
        if name == "__dict__":
            return {n: self.getncattr(n) for n in self.ncattrs()}
        return self.getncattr(name)

    def __setattr__(self, name: str, value: object) -> None:
        if name in _SLOTS:
            object.__setattr__(self, name, value)
        elif name in RESERVED:
            raise reserved_error(name, "rebind", "setncattr")
        elif name == "_FillValue":
            raise AttributeNotFoundError(_FILL_AFTER_CREATION)
        else:
            shared = self._grp._shared
            shared.check_open()
            if shared.session.read_only:
                raise AttributeNotFoundError("NetCDF: Write to read only")
            if name in _VALID_ATTRIBUTES and self._kind in ("atomic", "char"):  # netCDF4's primitive types
                where = f"of variable '{self._node.name}' (group '{self._grp.path}')"
                value = rules.cast_valid_attribute(name, value, self._dtype, where)
            self.setncattr(name, value)

    def __delattr__(self, name: str) -> None:
        if name in RESERVED or name in _SLOTS:
            raise reserved_error(name, "delete", "delncattr")
        self.delncattr(name)

    # -- storage reports ---------------------------------------------------------------------
    def _storage(self) -> VariableStorage:
        return self._grp._shared.session.stored.storage.get(self._node.fqn, VariableStorage())

    def filters(self) -> dict[str, bool | int | dict[str, str | int | None]] | None:
        if self._grp._shared.data_model.startswith("NETCDF3"):
            return None
        storage = self._storage()
        compression = storage.compression
        blosc = compression is not None and compression.startswith("blosc")
        return {
            "zlib": compression == "zlib",
            "szip": False,
            "zstd": compression == "zstd",
            "bzip2": compression == "bzip2",
            "blosc": {"compressor": compression, "shuffle": storage.blosc_shuffle} if blosc else False,
            "shuffle": storage.shuffle,
            "complevel": storage.complevel if compression else 0,
            "fletcher32": storage.fletcher32,
        }

    def chunking(self) -> str | list[int] | None:
        if self._grp._shared.data_model.startswith("NETCDF3"):
            return None
        array = self._array()
        # Zarr has no contiguous layout: a Zarr store reports the one chunk, as netCDF4 does
        # on an NCZarr store (netcdf-c), also while the dataset that asked for it is open
        in_file = self._grp._shared.disk_format not in ("NCZARR", "ZARR")
        if (self._contiguous and in_file) or getattr(array, "contiguous", False):
            return "contiguous"
        chunks = array.chunks
        return list(chunks) if self._node.dimensions else "contiguous"

    def endian(self) -> str:
        return self._endian

    def quantization(self) -> tuple[int, str] | None:
        if self._quantization is _UNKNOWN:
            self._quantization = None
            for mode, name in QUANTIZE_ATTRIBUTES.items():
                attribute = self._node.find_attribute(name)
                if attribute is not None:
                    self._quantization = int(attribute.values[0]), mode
        return cast("tuple[int, str] | None", self._quantization)

    def get_var_chunk_cache(self) -> tuple[int, int, float]:
        return self._chunk_cache

    def set_var_chunk_cache(self, size: int | None = None, nelems: int | None = None, preemption: float | None = None) -> None:
        old = self._chunk_cache
        self._chunk_cache = (
            old[0] if size is None else int(size),
            old[1] if nelems is None else int(nelems),
            old[2] if preemption is None else float(preemption),
        )

    def get_fill_value(self) -> attrs.AttributeValue | None:
        fill = self._node.find_attribute("_FillValue")
        read = getattr(self._grp._shared.session, "stored", None)
        metadata = None if read is None else read.arrays.get(self._node.fqn)
        stored = None if metadata is None else metadata.fill_value
        if fill is None and stored is not None and self._kind == "atomic" and self._storage().fill:
            # netcdf-c's nc_inq_var_fill: a fill_value without a _FillValue attribute (pure Zarr)
            return np.array(stored, self._dtype)
        return rules.fill_value_for_get(
            self._dtype,
            None if fill is None else self.getncattr("_FillValue"),
            self._storage().fill,
            is_primitive=self._kind in ("atomic", "char"),
        )

    # -- reading ---------------------------------------------------------------------------
    def __getitem__(self, elem: object) -> VariableData:
        shared = self._grp._shared
        shared.check_open()
        key = read_key(elem, self.shape)
        raw = self._read(key)
        return self._decode(raw, key)

    def _read(self, key: Key) -> np.ndarray:
        """The raw netCDF values of a selection (the variable's dtype, ``str`` objects for
        strings)."""
        array = self._array()
        selection = key.selection + ((slice(None),) if self._complex_axis else ())
        if array.ndim != len(selection):  # a scalar stored with shape [1]
            selection = (0,)
        stored = array.get_orthogonal_selection(selection)
        if getattr(array, "raw", False):  # a netCDF file's reader gives netCDF values
            return np.asarray(stored)
        if not isinstance(stored, np.ndarray):  # the engine gives one element as a scalar
            single = np.empty((), array.dtype)
            single[()] = stored
            stored = single
        return self._from_stored(stored)

    def _raw(self, selection: tuple[slice, ...]) -> np.ndarray:
        """The raw netCDF values of a hyperslab: no masking, scaling or char conversion."""
        return self._read(read_key(selection or Ellipsis, self.shape))

    def _from_stored(self, stored: np.ndarray) -> np.ndarray:
        return stored_to_raw(stored, self._value_type(), self._dtype, encoding=encoding_of(self._node))

    def _value_type(self) -> AtomicType | model_nodes.UserType:
        type = self._node.type
        return type if isinstance(type, AtomicType) else self._usertype._node

    def _decode(self, raw: np.ndarray, key: Key) -> VariableData:
        kind = self._kind
        if self._complex is not None:
            if self._complex_axis:
                real, imaginary = raw[..., 0], raw[..., 1]
            else:
                names = raw.dtype.names or ()
                real, imaginary = raw[names[0]], raw[names[1]]
            values = np.empty(real.shape, self._complex)
            values.real, values.imag = real, imaginary
            if self._complex_axis and self._mask:  # a float variable: masked as netCDF4 masks it
                fill = self._node.find_attribute("_FillValue")
                missing = fill.values[0] if fill is not None else default_fill(self._dtype)
                mask = (real == missing) | (imaginary == missing)
                if self._always_mask or mask.any():
                    return np.ma.masked_array(values, mask=mask if mask.any() else np.ma.nomask)
            # netCDF4: an element is a scalar, a scalar variable a 0-d array
            return values[()] if values.ndim == 0 and self.ndim else values
        if kind == "compound" and self._chartostring:
            view = self._usertype.dtype_view
            if view != self._dtype:
                raw = raw.view(view)
        if kind == "compound":  # netCDF4: a record is a scalar, a scalar variable a 0-d array
            return raw[()] if raw.ndim == 0 and self.ndim else raw
        if kind == "string":
            nulls = [i for i, v in enumerate(raw.reshape(-1)) if v is None]
            if nulls:  # a NULL string: "" (netCDF4 #915)
                raw = raw.copy()
                raw.reshape(-1)[nulls] = ""
        if kind in ("string", "opaque"):
            return raw[()] if raw.ndim == 0 else raw
        if kind == "vlen":  # netCDF4 unpacks (scale_factor, add_offset) numeric vlens too
            return rules.decode(raw[()] if raw.ndim == 0 else raw, self._conversion_rules(), whole_last_axis=False)
        if not self.ndim and not raw.dtype.isnative:  # netCDF4 reads a scalar variable in native order
            raw = raw.astype(raw.dtype.newbyteorder("="))
        return rules.decode(raw, self._conversion_rules(), whole_last_axis=self._whole_last_axis(key))

    def _whole_last_axis(self, key: Key) -> bool:
        """Whether a selection keeps every element of the last axis (in any order): then
        chars become strings."""
        if not key.selection or isinstance(key.selection[-1], int):
            return False
        return key.counts[-1] == self.shape[-1]

    def _conversion_rules(self) -> rules.Conversion:
        conversion = self._conversion
        if conversion is None:
            conversion = rules.Conversion(
                dtype=self._dtype,
                attributes={n: self.getncattr(n) for n in self.ncattrs()},
                mask=self._mask,
                scale=self._scale,
                always_mask=self._always_mask,
                chartostring=self._chartostring,
                fill_mode=self._storage().fill,
                is_vlen=self._kind == "vlen",
                is_enum=self._kind == "enum",
                name=self._node.name,
            )
            self._conversion = conversion
        return conversion

    # -- writing ---------------------------------------------------------------------------
    def __setitem__(self, elem: object, data: object) -> None:
        shared = self._grp._shared
        shared.check_open()
        if self._kind == "string" and isinstance(data, str) and self._node.dimensions and not _integer_key(elem):
            raise SelectionError("data can only be assigned to VLEN variables using integer indices")
        values = self._encode(data)
        with shared.lock:
            dims = self._dimension_nodes()
            shape = tuple(d.size for d in dims)
            key = write_key(elem, shape, [d.unlimited for d in dims], np.shape(values))
            if 0 in key.counts:  # netCDF4 writes nothing and grows nothing, read-only or not
                return
            shared.check_writable()
            if key.grown != shape:
                for dimension, old, new in zip(dims, shape, key.grown):
                    if new > old:
                        shared.session.grow(dimension, new)
            if np.shape(values) != key.shape:
                values = fit_data(values, key)
            quantization = self.quantization()
            if quantization is not None:
                values = self._quantized(values, key, *quantization)
            array = self._array()
            selection = key.selection
            if self._complex_axis:  # complex numbers as their (real, imaginary) axis
                selection += (slice(None),)
                values = np.stack([values.real, values.imag], axis=-1).astype(self._dtype)
            if array.ndim != len(selection):
                selection, values = (0,), np.reshape(values, ())
            array.set_orthogonal_selection(selection, self._to_stored(values, array.dtype))

    def _encode(self, data: object) -> np.ndarray:
        """User data as raw netCDF values (packing, masks, chars, strings, enums checked)."""
        kind = self._kind
        if kind == "string":
            return rules.strings_in(data)
        if kind == "vlen":
            return rules.vlen_in(data, self._conversion_rules())
        if self._complex is not None:
            complex_values = np.asarray(data, self._complex)
            if self._complex_axis:  # made (real, imaginary) once the selection is known
                return complex_values
            records = np.empty(complex_values.shape, self._dtype)
            names = self._dtype.names or ()
            records[names[0]], records[names[1]] = complex_values.real, complex_values.imag
            return records
        if kind in ("compound", "opaque"):
            return np.asarray(data).astype(self._dtype) if kind == "compound" else np.asarray(data)
        shape = self.shape
        lsd = self._node.find_attribute("least_significant_digit")
        values = rules.encode(
            data,
            self._conversion_rules(),
            strlen=shape[-1] if shape else None,
            least_significant_digit=int(lsd.values[0]) if lsd is not None else None,
        )
        if kind == "enum":
            allowed = {m.value for m in self._usertype._node.members}
            fill = self._node.find_attribute("_FillValue")
            if fill is not None:
                allowed.add(fill.values[0])
            if not np.isin(values, list(allowed)).all():
                raise ArgumentError("trying to assign illegal value to Enum variable")
        return values

    def _quantized(self, values: np.ndarray, key: Key, digits: int, mode: str) -> np.ndarray:
        fill = self._node.find_attribute("_FillValue")
        return quantize_write(values, key.selection, digits, mode, float(fill.values[0]) if fill is not None else None)

    def _to_stored(self, values: np.ndarray, stored_dtype: np.dtype) -> np.ndarray:
        return raw_to_stored(values, self._value_type(), stored_dtype, encoding=encoding_of(self._node))

    def assignValue(self, val: object) -> None:
        if self.ndim:
            raise SelectionError("to assign values to a non-scalar variable, use a slice")
        self[...] = val

    def getValue(self) -> VariableData:
        if self.ndim:
            raise SelectionError("to retrieve values from a non-scalar variable, use slicing")
        return self[slice(None)]

    # -- pickling and repr ----------------------------------------------------------------
    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        reopen = self._grp._shared.reopen
        if reopen is None or not self._grp._shared.open:
            raise NotImplementedError("Variable is not picklable (only variables of datasets open read-only are)")
        # the group's way back, the same function, with the variable's path
        function = self._grp.__reduce__()[0]
        return (function, (reopen, self._grp.path.rstrip("/") + "/" + self.name))

    def _type_label(self) -> str:
        if self._kind == "string":
            return "<class 'str'>"
        if self._kind in _KIND_LABEL:
            return f"{_KIND_LABEL[self._kind]}"
        return str(self._dtype)

    def __repr__(self) -> str:
        if not self._grp._shared.open:
            return "<class 'netCDF4.Variable'>\n<closed>"
        kind = self._kind
        label = str(self._dtype) if kind in ("atomic", "char") else _KIND_LABEL[kind]
        lines = ["<class 'netCDF4.Variable'>", f"{label} {self.name}({', '.join(self.dimensions)})"]
        lines += [f"    {name}: {self.getncattr(name)!s}" for name in self.ncattrs()]
        if kind == "string":
            lines.append("vlen data type: <class 'str'>")
        elif kind != "atomic" and kind != "char":
            lines.append(f"{_KIND_LABEL[kind]} data type: {self.dtype}")
        if self._grp.path != "/":
            lines.append(f"path = {self._grp.path}")
        unlimited = [d.name for d in self._dimension_nodes() if d.unlimited]
        lines.append(f"unlimited dimensions: {', '.join(unlimited)}")
        lines.append(f"current shape = {self.shape}")
        if kind in ("atomic", "char"):
            lines.append(self._filling_line())
        return "\n".join(lines)

    __str__ = __repr__

    def _filling_line(self) -> str:
        if not self._storage().fill:
            return "filling off"
        if self._node.find_attribute("_FillValue") is not None:
            return "filling on"
        default = default_fill(self._dtype)
        if self._dtype.str[1:] in ("i1", "u1"):
            return f"filling on, default _FillValue of {default} ignored"
        return f"filling on, default _FillValue of {default} used"


_SLOTS = frozenset(Variable.__slots__)


# -- creation helpers -----------------------------------------------------------------------


def _type_ref(grp: VariableGroup, datatype: object, where: str) -> tuple[AtomicType | str, _UserType | None]:
    """The model type reference of a ``createVariable`` datatype, and its user-type handle."""
    if isinstance(datatype, _UserType):
        node = datatype._node
        group_node = grp._node
        ref = node.name if resolve_type(group_node, node.name) is node else node.fqn
        return ref, datatype
    try:
        is_complex = datatype is not str and datatype != "c" and np.dtype(datatype).kind == "c"  # type: ignore[call-overload]
    except TypeError:
        is_complex = False
    if is_complex:
        if not grp._shared.auto_complex:
            raise ArgumentError(f"complex data types need Dataset(..., auto_complex=True) {where}")
        return _type_ref(grp, _complex_type(grp, np.dtype(datatype)), where)  # type: ignore[call-overload]
    return atomic_of(datatype, where), None


#: The trailing dimensions nc-complex (netCDF4's auto_complex) reads as real and imaginary parts.
NC_COMPLEX_DIMENSIONS = ("_pfnc_complex", "complex", "ri")


def _complex_request(grp: VariableGroup, datatype: object) -> bool:
    """Whether ``createVariable`` asks for complex numbers in a dataset with auto_complex."""
    if not grp._shared.auto_complex or datatype is str or isinstance(datatype, _UserType):
        return False
    try:
        return np.dtype(datatype).kind == "c"  # type: ignore[call-overload]
    except TypeError:
        return False


def _holds_user_types(shared: Shared) -> bool:
    """Whether the dataset can hold nc-complex's compound (not netCDF-3 or classic files, not
    NCZARR_V2, which netcdf-c reads no user type from)."""
    return not shared.classic and shared.session.convention.name != "NCZARR_V2"


def _complex_dimension(grp: VariableGroup) -> Dimension:
    """The root's ``_pfnc_complex`` dimension (length 2) nc-complex writes, made if absent."""
    root = _group_handle(grp, None)
    found = root.dimensions.get(NC_COMPLEX_DIMENSIONS[0])  # type: ignore[attr-defined]
    return found if found is not None else root.createDimension(NC_COMPLEX_DIMENSIONS[0], 2)  # type: ignore[attr-defined]


def _nc_complex_compound(type: model_nodes.UserType) -> np.dtype | None:
    """The complex dtype of a compound nc-complex reads as complex: two fields of one float
    type, the first named r... and the second i... (``r``/``i``, ``real``/``imag``,
    ``Re``/``Im``), else None."""
    if not isinstance(type, model_nodes.CompoundType) or len(type.fields) != 2:
        return None
    first, second = type.fields
    if first.shape or second.shape or first.type != second.type:
        return None
    if not (first.name[:1].lower() == "r" and second.name[:1].lower() == "i"):
        return None
    parts: dict[object, np.dtype] = {AtomicType.FLOAT: np.dtype("c8"), AtomicType.DOUBLE: np.dtype("c16")}
    return parts.get(first.type)


def _complex_type(grp: VariableGroup, dtype: np.dtype) -> _UserType:
    """netCDF4's compound type for complex values of ``dtype`` (nc-complex: ``{r, i}`` named
    ``_PFNC_DOUBLE_COMPLEX_TYPE`` or ``_PFNC_FLOAT_COMPLEX_TYPE``, in the root group), made
    the first time."""
    root = _group_handle(grp, None)
    name = COMPLEX_TYPE_NAMES[dtype.itemsize]
    found = root._types.get(name)
    if found is None:
        part = "f4" if dtype.itemsize == 8 else "f8"
        found = root.createCompoundType(np.dtype([("r", part), ("i", part)]), name)  # type: ignore[attr-defined]
    return cast(_UserType, found)


def _warn_byte_order(datatype: Any, endian: str) -> None:
    """netCDF4 warns when a datatype's byte order is not the one ``endian`` asks for (and uses
    ``endian``)."""
    try:
        order = np.dtype(datatype).byteorder
    except TypeError:
        return
    native = "<" if sys.byteorder == "little" else ">"
    asked = {"native": native, "little": "<", "big": ">"}[endian]
    if order != "|" and (native if order == "=" else order) != asked:
        warnings.warn("endian-ness of dtype and endian kwarg do not match, using endian kwarg", stacklevel=4)


def _check_classic_type(shared: Any, type_ref: Any) -> None:
    if not shared.classic:
        return
    if type_ref is AtomicType.STRING:
        raise ArgumentError(
            "Variable length strings are only supported for the NETCDF4 format. For NETCDF4_CLASSIC, "
            "NETCDF3_CLASSIC, NETCDF3_64BIT_OFFSET or NETCDF3_64BIT_DATA formats, use 'S1' dtype arrays "
            "and convert to strings using the stringtochar and chartostring functions."
        )
    if isinstance(type_ref, AtomicType) and not type_ref.in_classic_model and shared.data_model != "NETCDF3_64BIT_DATA":
        if shared.data_model == "NETCDF4_CLASSIC":
            raise DatasetStateError("NetCDF: Attempting netcdf-4 operation on strict nc3 netcdf-4 file")
        raise DatasetStateError("NetCDF: Not a valid data type or _FillValue type mismatch")


def _dimension_nodes(grp: VariableGroup, dimensions: str | Dimension | Sequence[str | Dimension] | None) -> list[ModelDimension]:
    """The dimensions a ``createVariable`` names (by name, searched up the groups, or as
    Dimension handles)."""
    if isinstance(dimensions, (str, Dimension)):
        dimensions = (dimensions,)
    out = []
    for item in dimensions or ():
        if isinstance(item, Dimension):
            out.append(item._node)
            continue
        if isinstance(item, str):
            item = unicodedata.normalize("NFC", item)  # names are kept so (checked_name)
        found = resolve_dimension(grp._node, item) if isinstance(item, str) and not item.startswith("/") else None
        if found is None and isinstance(item, str) and item.startswith("/"):
            found = resolve_dimension(grp._node, item)
        if found is None:
            raise ArgumentError(f"cannot find dimension {item} in this group or parent groups")
        out.append(found)
    return out


def _dimension_ref(grp: VariableGroup, node: ModelDimension) -> str:
    return node.name if resolve_dimension(grp._node, node.name) is node else node.fqn


def _chunks(dims: list[ModelDimension], contiguous: bool, chunksizes: Sequence[int] | None) -> tuple[int, ...] | None:
    if contiguous:
        if chunksizes is not None:
            raise ArgumentError("cannot specify chunksizes for a contiguous dataset")
        if any(d.unlimited for d in dims):
            raise DatasetStateError("NetCDF: Invalid argument (a contiguous variable cannot have an unlimited dimension)")
        return tuple(max(1, d.size) for d in dims) if dims else None
    if chunksizes is None:
        return None
    chunks = tuple(int(c) for c in chunksizes)
    if len(chunks) != len(dims):
        raise ArgumentError("chunksizes must be a sequence with the same length as dimensions")
    for chunk, dim in zip(chunks, dims):
        if not dim.unlimited and chunk > dim.size:
            raise ArgumentError("chunksize cannot exceed dimension size")
        if chunk < 1:
            raise ArgumentError(f"chunk sizes must be positive, got {list(chunks)}")
    return chunks


def _handle_of(grp: VariableGroup, node: model_nodes.UserType | None) -> _UserType:
    owner = _group_handle(grp, node.group if node is not None else None)
    return owner._types[node.name]  # type: ignore[union-attr]


def _group_handle(grp: VariableGroup, node: ModelGroup | None) -> VariableGroup:
    """The group handle of a model group, found from any handle of the same dataset."""
    root = grp
    while root._parent is not None:
        root = root._parent
    if node is None or node.parent is None:
        return root
    names = []
    while node.parent is not None:
        names.append(node.name)
        node = cast(ModelGroup, node.parent)  # a group's parent is a group
    handle = root
    for name in reversed(names):
        handle = handle._groups[name]
    return handle


def _integer_key(elem: Any) -> bool:
    """Whether a key is made of integers only (numpy ints and integral floats count)."""
    items = elem if isinstance(elem, tuple) else (elem,)
    return all(
        isinstance(i, (int, np.integer)) or (isinstance(i, (float, np.floating)) and float(i).is_integer())
        for i in items
    )
