"""netCDF types and numpy dtypes, and the netCDF default fill values: each fact once.

Two views of a type's values exist: as stored (``numpy_dtype``: an explicit byte order,
``packed`` compounds without padding) and as netCDF4-python shows them (``dtype_of``,
``value_dtype``: native byte order, C-aligned compounds, ``object`` for strings and vlens).
Zarr data types netCDF lacks have a netCDF view (``netcdf_view``): float16 as float, complex as
netCDF4-python's compound, datetime64 / timedelta64 as int64 with CF units, structured as a
compound type and raw bytes as an opaque type named after the array (``<array>_t``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from nczarr.errors import UnsizedTypeError
from nczarr.model import (
    AtomicType,
    AttributeValue,
    CompoundType,
    EnumType,
    Group,
    OpaqueType,
    Resolver,
    TypeRef,
    UserType,
    Variable,
    VlenType,
)
from nczarr.zarr.dtypes import NAT, DataType

#: The numpy type code (no byte order) of each numeric atomic type.
NUMPY_CODE: dict[AtomicType, str] = {
    AtomicType.BYTE: "i1",
    AtomicType.UBYTE: "u1",
    AtomicType.SHORT: "i2",
    AtomicType.USHORT: "u2",
    AtomicType.INT: "i4",
    AtomicType.UINT: "u4",
    AtomicType.INT64: "i8",
    AtomicType.UINT64: "u8",
    AtomicType.FLOAT: "f4",
    AtomicType.DOUBLE: "f8",
}
_TYPE_OF_CODE = {code: t for t, code in NUMPY_CODE.items()}

#: netCDF's default fill values (netcdf.h's ``NC_FILL_*``) by type: what a variable without
#: ``_FillValue`` holds where nothing was written (float: the float32 value as a float).
DEFAULT_FILL: dict[AtomicType, int | float | str] = {
    AtomicType.BYTE: -127,
    AtomicType.UBYTE: 255,
    AtomicType.SHORT: -32767,
    AtomicType.USHORT: 65535,
    AtomicType.INT: -2147483647,
    AtomicType.UINT: 4294967295,
    AtomicType.INT64: -9223372036854775806,
    AtomicType.UINT64: 18446744073709551614,
    AtomicType.FLOAT: float(np.float32(9.9692099683868690e36)),
    AtomicType.DOUBLE: 9.9692099683868690e36,
    AtomicType.CHAR: "\x00",
    AtomicType.STRING: "",
}

#: The same fills keyed by ``dtype.str[1:]``, in the order and with the complex entries of
#: ``netCDF4.default_fillvals`` (public as ``nczarr.default_fillvals``).
default_fillvals: dict[str, int | float | str] = {
    "S1": DEFAULT_FILL[AtomicType.CHAR],
    **{code: DEFAULT_FILL[t] for t, code in NUMPY_CODE.items()},
    "c8": DEFAULT_FILL[AtomicType.DOUBLE],
    "c16": DEFAULT_FILL[AtomicType.DOUBLE],
}


def default_fill(dtype: np.dtype) -> int | float | str | None:
    """The netCDF default fill value for values of ``dtype`` (any byte order), None when
    netCDF has none for it."""
    return default_fillvals.get(np.dtype(dtype).str[1:])


def fill_attribute(variable: Variable) -> AttributeValue | None:
    """The variable's ``_FillValue`` (one value; char: the text), or None."""
    found = variable.find_attribute("_FillValue")
    if found is None:
        return None
    values = found.values
    if isinstance(values, str):
        return values[:1] or "\x00"
    return values[0] if values else None


def float32(value: float) -> float:
    """A float attribute value as nczarr holds it: the shortest decimal that denotes the
    float32 nearest to ``value`` (NaN and infinities kept)."""
    return float(str(np.float32(value)))


def numpy_dtype(type: AtomicType, endian: Literal["little", "big"] | str = "little", strlen: int | None = None) -> np.dtype:
    """The dtype that holds values of ``type`` as stored: numbers in the given byte order,
    ``S1`` for char, ``S<strlen>`` for string (``object`` without ``strlen``)."""
    if type is AtomicType.CHAR:
        return np.dtype("S1")
    if type is AtomicType.STRING:
        return np.dtype(f"S{strlen}") if strlen else np.dtype(object)
    return np.dtype(NUMPY_CODE[type]).newbyteorder(">" if endian == "big" else "<")


def dtype_of(type: AtomicType) -> np.dtype:
    """The native numpy dtype of an atomic type as netCDF4 shows it (char: ``S1``, string:
    ``object``)."""
    if type is AtomicType.CHAR or type is AtomicType.STRING:
        return numpy_dtype(type)
    return canonical_dtype(np.dtype(NUMPY_CODE[type]))


def canonical_dtype(dtype: np.dtype) -> np.dtype:
    """numpy's own instance of a native scalar dtype (the one ``np.dtype("float32")`` gives),
    as netCDF4 hands them out: programs compare dtypes with ``is``. Others are kept."""
    if dtype.isnative and dtype.fields is None and dtype.subdtype is None and dtype.kind in "biufcO":
        return np.dtype(dtype.type)
    return dtype


def atomic_type_of(dtype: np.dtype) -> AtomicType | None:
    """The numeric atomic type of a numpy dtype in any byte order (``S1``: char), or None."""
    if dtype.kind == "S" and dtype.itemsize == 1:
        return AtomicType.CHAR
    return _TYPE_OF_CODE.get(f"{dtype.kind}{dtype.itemsize}") if dtype.kind in "iuf" else None


def value_dtype(type: AtomicType | UserType, *, resolver: Resolver | None = None) -> np.dtype:
    """The dtype of raw netCDF values of any type as netCDF4 shows them: native numbers,
    ``S1`` for char, an enum's base, C-aligned compounds, ``V<n>`` for opaque, ``object``
    for string and vlen."""
    if isinstance(type, AtomicType):
        return dtype_of(type)
    if isinstance(type, EnumType):
        return value_dtype(member_type(type, type.base, resolver), resolver=resolver)
    if isinstance(type, CompoundType):
        return compound_dtype(type, resolver=resolver)
    if isinstance(type, OpaqueType):
        return np.dtype(f"V{type.size}")
    return np.dtype(object)


def element_dtype(type: VlenType, *, packed: bool, resolver: Resolver | None = None) -> np.dtype:
    """The dtype of the elements of a vlen type: as netCDF4 shows them, or as stored
    (``packed``: little-endian, no padding)."""
    base = member_type(type, type.base, resolver)
    if packed:
        return packed_dtype(base, resolver=resolver)
    return value_dtype(base, resolver=resolver)


def compound_dtype(
    type: CompoundType, *, view: bool = False, packed: bool = False, resolver: Resolver | None = None
) -> np.dtype:
    """The dtype of a compound type: C-aligned as netCDF4 shows it, or as stored (``packed``:
    no padding, little-endian); char-array fields as ``S<n>`` when ``view``. Fields of
    variable-length types (string, vlen) are ``object`` fields in the aligned view (a ``str``,
    a 1-D array of the vlen's elements); they have no packed layout.
    UnsizedTypeError when a field's type does not resolve, or ``packed`` and a field has no
    fixed size."""
    fields: list[tuple[str, np.dtype] | tuple[str, np.dtype, tuple[int, ...]]] = []
    for f in type.fields:
        member = member_type(type, f.type, resolver, f.name)
        shape = tuple(f.shape)
        if packed and (member is AtomicType.STRING or isinstance(member, VlenType)):
            raise UnsizedTypeError(f"{type.fqn}: field {f.name!r} of type {f.type} has no fixed size")
        if packed:
            dtype = packed_dtype(member, resolver=resolver)
        elif isinstance(member, CompoundType):
            dtype = compound_dtype(member, view=view, resolver=resolver)
        else:
            dtype = value_dtype(member, resolver=resolver)
        if member is AtomicType.CHAR and view and shape:
            dtype, shape = np.dtype(f"S{shape[-1]}"), shape[:-1]
        fields.append((f.name, dtype, shape) if shape else (f.name, dtype))
    return np.dtype(fields, align=not packed)


def is_fixed_size(type: AtomicType | UserType, *, resolver: Resolver | None = None) -> bool:
    """Whether every value of a type takes the same bytes: not a string, a vlen, or a compound
    holding one (at any depth; a compound holding itself is not). UnsizedTypeError when a
    field's type does not resolve."""
    return _fixed_size(type, resolver or Resolver(), frozenset())


def _fixed_size(type: AtomicType | UserType, resolver: Resolver, inside: frozenset[int]) -> bool:
    if isinstance(type, AtomicType):
        return type.is_fixed_size
    if isinstance(type, VlenType) or id(type) in inside:
        return False
    if isinstance(type, CompoundType):
        inner = inside | {id(type)}
        return all(_fixed_size(member_type(type, f.type, resolver, f.name), resolver, inner) for f in type.fields)
    return True


def packed_dtype(type: AtomicType | UserType, *, resolver: Resolver | None = None) -> np.dtype:
    """The dtype of a type's values as stored: little-endian, no padding (``object`` for
    string and vlen). UnsizedTypeError as :func:`compound_dtype`."""
    if isinstance(type, AtomicType):
        return numpy_dtype(type)
    if isinstance(type, EnumType):
        return packed_dtype(member_type(type, type.base, resolver), resolver=resolver)
    if isinstance(type, CompoundType):
        return compound_dtype(type, packed=True, resolver=resolver)
    if isinstance(type, OpaqueType):
        return np.dtype(f"V{type.size}")
    return np.dtype(object)


def member_type(owner: UserType, ref: TypeRef, resolver: Resolver | None, field: str | None = None) -> AtomicType | UserType:
    """The type ``ref`` names, seen from the group of ``owner``; UnsizedTypeError when it
    names none."""
    if isinstance(ref, AtomicType):
        return ref
    scope: Group | None = owner.group
    found = None if scope is None else (resolver or Resolver()).type(scope, ref)
    if found is None:
        what = f"field {field!r} of type {ref}" if field is not None else f"type {ref}"
        raise UnsizedTypeError(f"{owner.fqn}: {what} does not resolve")
    return found


# -- Zarr data types netCDF lacks ---------------------------------------------------------

#: netCDF4-python's complex convention (``auto_complex=True``): a root compound type of two
#: fields ``r`` and ``i``, named by the width of the complex value.
COMPLEX_TYPE_NAMES: dict[int, str] = {8: "_PFNC_FLOAT_COMPLEX_TYPE", 16: "_PFNC_DOUBLE_COMPLEX_TYPE"}
#: CF's name of each numpy time unit that stands for a fixed length of time.
_CF_TIME_UNITS = {
    "W": "weeks",
    "D": "days",
    "h": "hours",
    "m": "minutes",
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
}
#: The start of numpy's time scale, as CF writes it.
EPOCH = "1970-01-01"
#: The suffix of the type a structured or raw-bytes array is read as: ``<array>_t``, and
#: ``<array>.<field>_t`` for a nested structured field (a name no other array of the group
#: gives its own type).
ARRAY_TYPE_SUFFIX = "_t"


@dataclass(frozen=True)
class NetcdfView:
    """How netCDF shows an array of a Zarr data type: its type (an atomic type, or a compound
    type to define in the root group), the attributes that make up for what the type lost
    (CF ``units`` and ``calendar`` of times, NaT as ``_FillValue``), and a note saying how
    the type differs from the stored one (None when netCDF has the stored type), logged at
    ``note_level`` (a warning where values written back lose precision). ``same_layout``:
    netCDF stores the values in the same bytes, so the array's codecs can store them too.
    ``local``: the type is the array's own (structured, raw bytes), defined in the array's
    group after ``nested`` (the types of its nested structured and raw-bytes fields); otherwise
    it is shared, defined once in the root group (complex)."""

    type: AtomicType | CompoundType | OpaqueType
    attributes: dict[str, tuple[AtomicType, list[AttributeValue] | str]] = field(default_factory=dict)
    note: str | None = None
    note_level: int = logging.INFO
    same_layout: bool = True
    local: bool = False
    nested: tuple[CompoundType | OpaqueType, ...] = ()


def netcdf_view(data_type: DataType, array: str = "array") -> NetcdfView | str:
    """The netCDF view of a Zarr data type (see :class:`NetcdfView`) of the array named
    ``array``, or why it has none.

    bool is ubyte; float16 is float (exact, but values written back are rounded to float16);
    complex is netCDF4-python's compound of ``r`` and ``i``; datetime64 and timedelta64 of a
    fixed unit are int64 with CF ``units``; text of every kind is string (one-byte fixed
    bytes: char); structured is the compound type ``<array>_t`` of its fields (numbers,
    one-byte chars, raw bytes, nested structured, sub-arrays of these); raw bytes ``|V<n>`` /
    ``r<bits>`` the opaque type ``<array>_t`` of n bytes."""
    kind, dtype = data_type.kind, data_type.dtype
    if kind == "raw":
        opaque = OpaqueType(f"{array}{ARRAY_TYPE_SUFFIX}", size=dtype.itemsize)
        return NetcdfView(opaque, note=f"{data_type} read as opaque type {opaque.name}", local=True)
    if kind == "structured":
        return _structured_view(data_type, array)
    if kind == "string":
        return NetcdfView(AtomicType.STRING)
    if kind == "fixed_unicode" or (kind == "fixed_bytes" and dtype.itemsize > 1):
        return NetcdfView(AtomicType.STRING, same_layout=False)
    if kind == "fixed_bytes":
        return NetcdfView(AtomicType.CHAR)
    if kind == "bool":
        return NetcdfView(AtomicType.UBYTE, same_layout=False)  # a filter may know it is bool
    if kind == "complex":
        return NetcdfView(complex_type(dtype.itemsize), note=f"{data_type} read as {COMPLEX_TYPE_NAMES[dtype.itemsize]}")
    if kind in ("datetime", "timedelta"):
        return _time_view(data_type)
    found = atomic_type_of(dtype) if kind in ("int", "uint", "float") else None
    if found is not None:
        return NetcdfView(found)
    if kind == "float" and dtype.itemsize == 2:
        return NetcdfView(
            AtomicType.FLOAT,
            note="float16 read as float (values written back are rounded to float16)",
            note_level=logging.WARNING,
            same_layout=False,
        )
    return f"netCDF has no type for Zarr data type {data_type}"


def complex_type(itemsize: int) -> CompoundType:
    """netCDF4-python's compound type for complex values of ``itemsize`` bytes (8 or 16)."""
    part = AtomicType.FLOAT if itemsize == 8 else AtomicType.DOUBLE
    compound = CompoundType(COMPLEX_TYPE_NAMES[itemsize])
    compound.add_field("r", part)
    compound.add_field("i", part)
    return compound


def _structured_view(data_type: DataType, array: str) -> NetcdfView | str:
    """A structured data type as the compound type ``<array>_t`` (nested fields: their own
    compound types), or why netCDF has none for one of its fields."""
    nested: list[CompoundType | OpaqueType] = []
    found = _compound_of(data_type.dtype, array, nested)
    if isinstance(found, str):
        return f"Zarr data type {data_type}: {found}"
    return NetcdfView(
        found,
        note=f"{data_type} read as compound type {found.name}",
        same_layout=_packed_little(data_type.dtype),
        local=True,
        nested=tuple(nested),
    )


def _compound_of(dtype: np.dtype, prefix: str, nested: list[CompoundType | OpaqueType]) -> CompoundType | str:
    """The compound type ``<prefix>_t`` of a structured dtype; the types of its nested
    structured and raw-bytes fields are appended to ``nested`` (inner ones first)."""
    compound = CompoundType(f"{prefix}{ARRAY_TYPE_SUFFIX}")
    assert dtype.fields is not None and dtype.names is not None
    for name in dtype.names:
        base: np.dtype = dtype.fields[name][0]
        shape: tuple[int, ...] = ()
        if base.subdtype is not None:
            base, shape = base.subdtype
        if not name or "/" in name or name != name.strip():
            return f"field name {name!r} is not a netCDF name"
        member: TypeRef
        if base.fields is not None:
            inner = _compound_of(base, f"{prefix}.{name}", nested)
            if isinstance(inner, str):
                return inner
            nested.append(inner)
            member = inner.name
        elif base.kind == "V":  # raw bytes; zarr-python 3 also stores sub-array fields so
            opaque = OpaqueType(f"{prefix}.{name}{ARRAY_TYPE_SUFFIX}", size=base.itemsize)
            nested.append(opaque)
            member = opaque.name
        else:
            atomic = atomic_type_of(base) if base.kind in "iufS" else None
            if atomic is None:
                return f"field {name!r} has data type {base}, which netCDF has no type for"
            member = atomic
        compound.add_field(name, member, shape)
    return compound


def _packed_little(dtype: np.dtype) -> bool:
    """Whether a structured dtype is laid out as netCDF stores a compound: its fields one
    after the other without padding, numbers little-endian."""
    if dtype.subdtype is not None:
        return _packed_little(dtype.subdtype[0])
    if dtype.fields is None:
        return dtype.byteorder != ">"
    offset = 0
    for name in dtype.names or ():
        field_dtype, at = dtype.fields[name][:2]
        if at != offset or not _packed_little(field_dtype):
            return False
        offset += field_dtype.itemsize
    return offset == dtype.itemsize


def complex_dtype_of(type: AtomicType | UserType) -> np.dtype | None:
    """The numpy complex dtype (native) whose values a type of netCDF4-python's complex
    convention holds (a compound of two float or two double fields ``r`` and ``i``, the type
    :func:`complex_type` makes), or None for any other type."""
    if not isinstance(type, CompoundType) or [f.name for f in type.fields] != ["r", "i"]:
        return None
    parts = {(f.type, f.shape) for f in type.fields}
    if parts == {(AtomicType.FLOAT, ())}:
        return np.dtype("c8")
    return np.dtype("c16") if parts == {(AtomicType.DOUBLE, ())} else None


def _time_view(data_type: DataType) -> NetcdfView | str:
    """datetime64 / timedelta64 as int64 with CF units and NaT as ``_FillValue``."""
    unit, count = np.datetime_data(data_type.dtype)
    name = _CF_TIME_UNITS.get(unit)
    if name is None or count != 1:
        return f"Zarr data type {data_type} has no CF time unit (only {', '.join(_CF_TIME_UNITS)}, unscaled)"
    attributes: dict[str, tuple[AtomicType, list[AttributeValue] | str]] = {}
    if data_type.kind == "datetime":
        attributes["units"] = (AtomicType.CHAR, f"{name} since {EPOCH}")
        attributes["calendar"] = (AtomicType.CHAR, "proleptic_gregorian")
    else:
        attributes["units"] = (AtomicType.CHAR, name)
    attributes["_FillValue"] = (AtomicType.INT64, [NAT])
    return NetcdfView(AtomicType.INT64, attributes, f"{data_type} read as int64 {name}")
