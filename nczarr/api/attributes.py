"""netCDF attributes as netCDF4-python writes and reads them: which netCDF type a Python value
becomes, and which Python value a stored attribute reads back as."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

import numpy as np

from nczarr.api.types import PRIMITIVE_CODES
from nczarr.errors import ArgumentError, DataTypeError, StoreError
from nczarr.model import AtomicType, Attribute, CompoundType, EnumType, resolve_type
from nczarr.model import AttributeValue as ModelValue
from nczarr.values.stored import compound_records, has_record_encoding
from nczarr.values.types import atomic_type_of, compound_dtype, dtype_of

#: What reading an attribute gives: text, bytes (a char ``_FillValue``), strings, one number
#: or record (a numpy scalar), several (an array), a vlen's sequence (a list).
AttributeValue = str | bytes | np.generic | np.ndarray | list[str] | list[object]

_Handle = TypeVar("_Handle")


def to_python(attribute: Attribute, encoding: str = "utf-8", *, char_as_bytes: bool = False) -> AttributeValue:
    """The value netCDF4 returns for a stored attribute: a str for text (bytes for a char
    variable's ``_FillValue``: ``char_as_bytes``), a numpy scalar for one number, an array for
    several, a list of str for several strings. Text is decoded as netCDF4 decodes it: bytes
    that are not ``encoding`` replaced by U+FFFD, NULs removed; an enum's values are numbers
    of its base type; a compound's values are records of its dtype (``np.void``)."""
    type, values = attribute.type, attribute.values
    scope = attribute.group
    if isinstance(type, str) and scope is not None:
        found = resolve_type(scope, type)
        if isinstance(found, EnumType) and isinstance(found.base, AtomicType):
            type = found.base
        elif isinstance(found, CompoundType) and not has_record_encoding(found):  # strings, vlens: tuples below
            # char arrays as netCDF4 gives them: one string each (its dtype_view)
            records = compound_records(list(values), compound_dtype(found)).view(compound_dtype(found, view=True))
            return records[0] if len(records) == 1 else records
    if type is AtomicType.CHAR:
        assert isinstance(values, str)
        if char_as_bytes:  # a char _FillValue is one char: "" holds a NUL
            return _raw_bytes(values) or b"\x00"
        return _netcdf4_text(values, encoding)
    if type is AtomicType.STRING:
        texts = [_netcdf4_text("" if v is None else str(v), encoding) for v in values]  # NULL: "" in netCDF4
        return texts[0] if len(texts) == 1 else texts
    if isinstance(type, AtomicType):
        array = np.array(values, dtype_of(type))
        return array[0] if len(array) == 1 else array
    # user types: compound records, enum numbers, vlen sequences as netCDF4 gives them
    try:
        array = np.array(values, dtype=object) if values and isinstance(values[0], list) else np.array(values)
    except ValueError:  # records holding vlens (ragged): one tuple each
        array = np.empty(len(values), object)
        for i, value in enumerate(values):
            array[i] = value
    return array[0] if len(array) == 1 else array


def _netcdf4_text(text: str, encoding: str) -> str:
    """Stored text as netCDF4 returns it: its bytes decoded with ``errors='replace'``, NULs
    removed (netCDF4 strips them from every text attribute)."""
    return _raw_bytes(text).decode(encoding, "replace").replace("\x00", "")


def _raw_bytes(text: str) -> bytes:
    """The bytes a char attribute holds (bytes that were not UTF-8 are kept as surrogate
    escapes, see :func:`_bytes_text`)."""
    return text.encode("utf-8", "surrogateescape")


def from_python(
    name: str, value: object, *, force_string: bool = False, classic: bool = False
) -> tuple[AtomicType, list[ModelValue] | str]:
    """The netCDF type and model values of an attribute value as netCDF4 stores it (reference
    §2.10). ``force_string``: text becomes NC_STRING (``setncattr_string``,
    ``set_ncstring_attrs``); ``classic``: the classic data model (no NC_STRING, no 64-bit
    Python ints)."""
    if type(value) is float:  # the common cases first: no numpy round trip
        return AtomicType.DOUBLE, [value]
    if type(value) is int and not classic and -(2**63) <= value < 2**63:
        return AtomicType.INT64, [value]
    if type(value) is str and value.isascii() and not force_string:
        return AtomicType.CHAR, value
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        text = _bytes_text(value) if isinstance(value, bytes) else str(value)
        if (force_string or (not text.isascii() and not isinstance(value, bytes))) and not classic:
            return AtomicType.STRING, [text]
        if force_string and classic:
            raise _classic_string_error(value)
        return AtomicType.CHAR, text
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, bytes)) for v in value):
        texts = [_bytes_text(v) if isinstance(v, bytes) else v for v in value]
        if len(texts) == 1 and not force_string:
            return from_python(name, value[0], classic=classic)
        if classic:
            raise _classic_string_error(value)
        return AtomicType.STRING, texts
    array = np.asarray(value)
    if array.dtype.kind in "US":
        return from_python(name, [str(v) if array.dtype.kind == "U" else bytes(v) for v in array.ravel()],
                           force_string=force_string, classic=classic)
    if array.ndim > 1:
        raise ArgumentError("multi-dimensional array attributes not supported")
    if array.dtype.kind in "iu" and not isinstance(value, np.ndarray | np.generic):
        array = array.astype("i8")  # Python ints
    if classic and array.dtype.str[1:] in ("i8", "u8"):
        array = array.astype("i4")  # netCDF4 wraps 64-bit integers silently in the classic model
    atomic = atomic_type_of(array.dtype) if array.dtype.kind in "iuf" else None
    if atomic is None:
        raise DataTypeError(
            f"illegal data type for attribute {name.encode()!r}, must be one of "
            f"dict_keys({list(PRIMITIVE_CODES)!r}), got {array.dtype.str[1:]}"
        )
    return atomic, [v.item() for v in array.ravel()]


def variables_by_attributes(variables: Iterable[_Handle], conditions: Mapping[str, object]) -> list[_Handle]:
    """The variables whose attributes meet every condition: ``name=value`` (the attribute
    exists and equals it) or ``name=callable`` (true for the value, None when missing)."""

    def matches(variable: _Handle) -> bool:
        for name, wanted in conditions.items():
            if callable(wanted):
                if not wanted(getattr(variable, name, None)):
                    return False
            elif not (hasattr(variable, name) and getattr(variable, name) == wanted):
                return False
        return True

    return [v for v in variables if conditions and matches(v)]


def _bytes_text(value: bytes) -> str:
    """Bytes as attribute text: UTF-8, with any other byte kept as a surrogate escape, so that
    ``getncattr(name, encoding=...)`` can decode the same bytes another way."""
    return value.decode("utf-8", "surrogateescape")


def _classic_string_error(value: object) -> StoreError:
    if isinstance(value, (list, tuple)):
        return StoreError("array string attributes can only be written with NETCDF4")
    return StoreError("file format does not support NC_STRING attributes")
