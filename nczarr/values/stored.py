"""Stored values and raw netCDF values of a variable, both ways.

What an engine array holds is a convention's stored form (``uint8`` chars in NCZarr v3,
``S<n>`` strings in NCZarr v2, packed records or raw bytes for compounds, bytes for vlen
elements, variable-length records for compounds with variable-length fields); raw netCDF
values are what netCDF4 shows before its automatic conversions: the type's dtype in the
variable's byte order, ``S1`` chars, ``str`` objects for strings, C-aligned records,
object arrays of 1-D arrays for vlens.

A compound with string or vlen fields (at any depth) has no packed layout. Its raw values
are C-aligned records whose string fields hold ``str`` and whose vlen fields hold 1-D
arrays of the vlen's elements (netCDF4-python skips such variables; this is the form its
plain strings and vlens take, inside a record). Stored, each value is one variable-length
byte string, the *record encoding* (docs/format.md): fixed-size parts as packed
little-endian bytes, a string as its UTF-8 byte count (uint32 LE) then the bytes, a vlen
as its element count (uint32 LE) then each element encoded, a compound as its fields in
order (array fields element by element, C order); a NULL string (never written, ncdump's
NIL) is the count ``0xFFFFFFFF`` alone. A vlen variable's value is its elements encoded one
after the other (no count: for fixed-size elements exactly the packed bytes vlens always
had). Empty bytes, a value never written, read as the zero record (0, NULL strings as
``None``, empty vlens), which netCDF-4 files hold where nothing was written.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nczarr.errors import RecordDecodeError
from nczarr.model import AtomicType, CompoundType, Resolver, UserType, Variable, VlenType
from nczarr.values.types import (
    NUMPY_CODE,
    compound_dtype,
    element_dtype,
    is_fixed_size,
    member_type,
    packed_dtype,
    value_dtype,
)

#: The encoding of text without an ``_Encoding`` attribute.
DEFAULT_ENCODING = "utf-8"


def encoding_of(variable: Variable) -> str:
    """The text encoding a variable's ``_Encoding`` attribute names (else UTF-8)."""
    attribute = variable.find_attribute("_Encoding")
    if attribute is None:
        return DEFAULT_ENCODING
    values = attribute.values
    return values if isinstance(values, str) else str(values[0])


def raw_dtype(type: AtomicType | UserType, endian: str = "native", *, resolver: Resolver | None = None) -> np.dtype:
    """The dtype of a variable's raw values: its type's dtype as netCDF4 shows it, numbers
    (also an enum's) in the ``endian`` byte order ("native", "little", "big"); for a vlen
    the dtype of its elements."""
    dtype = element_dtype(type, packed=False, resolver=resolver) if isinstance(type, VlenType) else value_dtype(
        type, resolver=resolver
    )
    if endian != "native" and dtype.kind in "iuf":
        dtype = dtype.newbyteorder(">" if endian == "big" else "<")
    return dtype


def stored_to_raw(
    stored: np.ndarray,
    type: AtomicType | UserType,
    dtype: np.dtype,
    *,
    encoding: str = DEFAULT_ENCODING,
    resolver: Resolver | None = None,
) -> np.ndarray:
    """The raw netCDF values of what an engine array gave for a variable of ``type``
    (resolved), ``dtype`` its :func:`raw_dtype`; strings decoded with ``encoding``."""
    if type is AtomicType.CHAR:
        return stored.view("S1") if stored.dtype != np.dtype("S1") else stored
    if type is AtomicType.STRING:
        return _strings(stored, encoding)
    if isinstance(type, CompoundType | VlenType) and has_record_encoding(type, resolver=resolver):
        return decode_records(stored, type, resolver=resolver)
    if isinstance(type, CompoundType):
        if stored.dtype.kind == "c":  # a Zarr complex read as netCDF4's complex compound
            stored = stored.astype(stored.dtype.newbyteorder("<"))
        if stored.dtype.fields is None:
            stored = stored.view(compound_dtype(type, packed=True, resolver=resolver))
        return stored.astype(dtype)
    if isinstance(type, VlenType):
        base = element_dtype(type, packed=True, resolver=resolver)
        out = np.empty(stored.shape, object)
        flat = out.reshape(-1)
        for i, item in enumerate(stored.reshape(-1)):
            flat[i] = np.frombuffer(item or b"", base).astype(dtype)
        return out
    if isinstance(type, AtomicType) or dtype.kind in "iu":  # numbers and enums
        return stored if stored.dtype == dtype else stored.astype(dtype)
    return stored  # opaque


def raw_to_stored(
    values: np.ndarray,
    type: AtomicType | UserType,
    stored_dtype: np.dtype,
    *,
    encoding: str = DEFAULT_ENCODING,
    resolver: Resolver | None = None,
) -> np.ndarray:
    """Raw netCDF values of a variable of ``type`` (resolved) in the form an engine array
    of ``stored_dtype`` holds (the reverse of :func:`stored_to_raw`)."""
    if type is AtomicType.CHAR:
        return values.view(stored_dtype) if stored_dtype != values.dtype else values
    if type is AtomicType.STRING:
        # a Zarr array has no NULL string (CDL's NIL): "" in its place, as netcdf-c 4.10.1 writes it
        flat = values.reshape(-1)
        if stored_dtype.kind == "S":
            return np.array([(s or "").encode(encoding) for s in flat], stored_dtype).reshape(values.shape)
        if not any(s is None for s in flat):
            return values
        texts = np.empty(values.shape, object)
        texts.reshape(-1)[:] = ["" if s is None else s for s in flat]
        return texts
    if isinstance(type, CompoundType | VlenType) and has_record_encoding(type, resolver=resolver):
        return encode_records(values, type, resolver=resolver)
    if isinstance(type, CompoundType):
        out = values.astype(compound_dtype(type, packed=True, resolver=resolver))
        if stored_dtype.kind == "c":  # packed records are little-endian
            return out.view(stored_dtype.newbyteorder("<"))
        return out if stored_dtype.fields is not None else out.view(stored_dtype)
    if isinstance(type, VlenType):
        base = element_dtype(type, packed=True, resolver=resolver)
        out = np.empty(values.shape, object)
        flat = out.reshape(-1)
        for i, item in enumerate(values.reshape(-1)):
            # a list of records (nested tuples) becomes an array only in their own dtype
            array = item if isinstance(item, np.ndarray) else np.array(item, dtype=base)
            flat[i] = array.astype(base).tobytes()
        return out
    return values


def _strings(stored: np.ndarray, encoding: str) -> np.ndarray:
    """Strings as an object array of ``str``: fixed-length bytes (NUL-padded) and
    variable-length bytes decoded, ``str`` kept."""
    if stored.dtype.kind == "S":
        out = np.empty(stored.shape, object)
        flat = out.reshape(-1)
        for i, item in enumerate(stored.reshape(-1)):
            flat[i] = item.decode(encoding, "replace")
        return out
    out = stored if stored.dtype == object else stored.astype(object)
    if any(isinstance(s, bytes) for s in out.reshape(-1)[:1]):
        out = np.array([s.decode(encoding, "replace") for s in out.reshape(-1)], object).reshape(out.shape)
    return out


# -- the record encoding of variable-length values -------------------------------------------

_COUNT = struct.Struct("<I")
#: A NULL string (netCDF's never-written string, ncdump's NIL) in place of a byte count.
_NULL_STRING = b"\xff\xff\xff\xff"
#: What a value read from bytes is: the value and the position after it.
_Decoded = tuple[object, int]


@dataclass(frozen=True)
class _Part:
    """How one value of a type is encoded: ``encode`` appends its bytes to a list, ``decode``
    reads one from a position; ``dtype`` holds its values as netCDF4 shows them; ``empty``
    is the value of a field never written; ``convert`` makes a value given in another form
    (bytes for text, sequences, records of another layout) the raw value."""

    dtype: np.dtype
    encode: Callable[[object, list[bytes]], None]
    decode: Callable[[bytes, int], _Decoded]
    empty: Callable[[], object]
    convert: Callable[[object], object]


#: struct's little-endian formats of the numeric atomic types (faster than numpy one by one).
_STRUCTS = {
    t: struct.Struct("<" + np.dtype(code).char) for t, code in NUMPY_CODE.items()
}


def _number_part(type: AtomicType) -> _Part:
    packer = _STRUCTS[type]
    view = np.dtype(NUMPY_CODE[type])

    def encode(value: object, out: list[bytes]) -> None:
        out.append(packer.pack(value))

    def decode(data: bytes, at: int) -> _Decoded:
        if at + packer.size > len(data):
            raise RecordDecodeError(f"a value of {type} runs past the end of its {len(data)} bytes")
        return packer.unpack_from(data, at)[0], at + packer.size

    return _Part(view, encode, decode, lambda: view.type(0), lambda v: view.type(v))


def _fixed_part(type: AtomicType | UserType, resolver: Resolver) -> _Part:
    if isinstance(type, AtomicType) and type in _STRUCTS:
        return _number_part(type)
    view, packed = value_dtype(type, resolver=resolver), packed_dtype(type, resolver=resolver)
    size = packed.itemsize

    def encode(value: object, out: list[bytes]) -> None:
        out.append(np.asarray(value, view).astype(packed).tobytes())

    def decode(data: bytes, at: int) -> _Decoded:
        if at + size > len(data):
            raise RecordDecodeError(f"a value of {type} runs past the end of its {len(data)} bytes")
        return np.frombuffer(data, packed, 1, at).astype(view)[0], at + size

    return _Part(view, encode, decode, lambda: np.zeros((), view)[()], lambda v: np.asarray(v).astype(view)[()])


def _counted(data: bytes, at: int, what: str) -> tuple[int, int]:
    if at + 4 > len(data):
        raise RecordDecodeError(f"the length of {what} runs past the end of its {len(data)} bytes")
    return _COUNT.unpack_from(data, at)[0], at + 4


def _string_part() -> _Part:
    def encode(value: object, out: list[bytes]) -> None:
        if value is None:
            out.append(_NULL_STRING)
            return
        raw = value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")
        out += (_COUNT.pack(len(raw)), raw)

    def decode(data: bytes, at: int) -> _Decoded:
        size, at = _counted(data, at, "a string")
        if data[at - 4 : at] == _NULL_STRING:
            return None, at
        if at + size > len(data):
            raise RecordDecodeError(f"a string of {size} bytes runs past the end of its {len(data)} bytes")
        return data[at : at + size].decode("utf-8", "surrogateescape"), at + size

    def convert(value: object) -> object:
        if value is None:
            return None
        return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)

    return _Part(np.dtype(object), encode, decode, lambda: None, convert)


def _vlen_part(element: _Part) -> _Part:
    def encode(value: object, out: list[bytes]) -> None:
        items = _items(value, element.dtype)
        out.append(_COUNT.pack(len(items)))
        for item in items:
            element.encode(item, out)

    def decode(data: bytes, at: int) -> _Decoded:
        count, at = _counted(data, at, "a vlen")
        if count > len(data) - at and element.dtype.itemsize:  # each element takes a byte or more
            raise RecordDecodeError(f"a vlen of {count} elements runs past the end of its {len(data)} bytes")
        out = np.empty(count, element.dtype)
        for i in range(count):
            out[i], at = element.decode(data, at)
        return out, at

    def convert(value: object) -> object:
        items = _items(value, element.dtype)
        out = np.empty(len(items), element.dtype)
        for i, item in enumerate(items):
            out[i] = element.convert(item)
        return out

    return _Part(np.dtype(object), encode, decode, lambda: np.empty(0, element.dtype), convert)


def _items(value: object, dtype: np.dtype) -> list[object]:
    """The elements of a vlen value given as a sequence or 1-D array."""
    if isinstance(value, np.ndarray):
        return list(value.reshape(-1))
    return list(value) if isinstance(value, list | tuple) else [value]


def _compound_part(type: CompoundType, resolver: Resolver) -> _Part:
    dtype = compound_dtype(type, resolver=resolver)
    fields = [(f.name, tuple(f.shape), _part(member_type(type, f.type, resolver, f.name), resolver)) for f in type.fields]

    def encode(value: object, out: list[bytes]) -> None:
        record = value if isinstance(value, np.void) else np.array(_as_record(value, dtype), dtype)[()]
        for name, shape, part in fields:
            item = record[name]
            if shape:
                for element in np.asarray(item, part.dtype).reshape(-1):
                    part.encode(element, out)
            else:
                part.encode(item, out)

    def decode(data: bytes, at: int) -> _Decoded:
        record = np.zeros((), dtype)
        for name, shape, part in fields:
            items = np.empty(shape, part.dtype)
            flat = items.reshape(-1)
            for i in range(flat.size):
                flat[i], at = part.decode(data, at)
            record[name][...] = items
        return record[()], at

    def empty() -> object:
        record = np.zeros((), dtype)
        for name, shape, part in fields:
            if part.dtype.hasobject:
                items = np.empty(shape, part.dtype)
                flat = items.reshape(-1)
                for i in range(flat.size):
                    flat[i] = part.empty()
                record[name][...] = items
        return record[()]

    def convert(value: object) -> object:
        record = np.zeros((), dtype)
        given = value if isinstance(value, np.void | np.ndarray) else None
        for index, (name, shape, part) in enumerate(fields):
            item = given[name] if given is not None else value[index]  # type: ignore[index]
            items = np.empty(shape, part.dtype)
            flat = items.reshape(-1)
            for i, element in enumerate(_elements(item, len(shape)) if shape else [item]):
                flat[i] = part.convert(element)
            record[name][...] = items
        return record[()]

    return _Part(dtype, encode, decode, empty, convert)


def _elements(item: object, depth: int) -> list[object]:
    """The elements of an array field given as an array or as lists nested ``depth`` deep
    (the elements may be sequences themselves: records, vlens)."""
    if isinstance(item, np.ndarray) and (item.dtype.names is not None or item.ndim == depth):
        return list(item.reshape(-1))
    if depth == 0 or not isinstance(item, list | tuple | np.ndarray):
        return [item]
    return [e for sub in item for e in _elements(sub, depth - 1)]


def _as_record(value: object, dtype: np.dtype) -> object:
    """A record given as a tuple (fields: sequences, nested tuples) in a form numpy puts in
    a record of ``dtype`` without reading object fields' sequences as more dimensions."""
    if not isinstance(value, tuple | list) or dtype.names is None or dtype.fields is None:
        return value
    record = np.zeros((), dtype)
    for name, item in zip(dtype.names, value):
        field = dtype.fields[name][0]
        base, shape = field.subdtype if field.subdtype is not None else (field, ())
        items = np.empty(shape, base)
        flat = items.reshape(-1)
        given = [item] if not shape else _items(item, base) if base.kind == "O" else None
        if given is None:  # numbers, chars: numpy reads the nested sequence
            items[...] = [_as_record(v, base) for v in item] if base.names is not None else item
        else:
            for i, v in enumerate(given[: flat.size]):
                flat[i] = _as_record(v, base)
        record[name][...] = items
    return record[()]


def _part(type: AtomicType | UserType, resolver: Resolver) -> _Part:
    if type is AtomicType.STRING:
        return _string_part()
    if is_fixed_size(type, resolver=resolver):
        return _fixed_part(type, resolver)
    if isinstance(type, VlenType):
        return _vlen_part(_part(member_type(type, type.base, resolver), resolver))
    assert isinstance(type, CompoundType)
    return _compound_part(type, resolver)


def has_record_encoding(type: AtomicType | UserType, *, resolver: Resolver | None = None) -> bool:
    """Whether a variable of ``type`` (resolved) stores its values in the record encoding: a
    compound with variable-length fields, or a vlen of strings or of such compounds."""
    if isinstance(type, VlenType):
        return not is_fixed_size(member_type(type, type.base, resolver), resolver=resolver)
    return isinstance(type, CompoundType) and not is_fixed_size(type, resolver=resolver)


def encode_records(values: np.ndarray, type: CompoundType | VlenType, *, resolver: Resolver | None = None) -> np.ndarray:
    """Raw values of a variable of ``type`` (see :func:`has_record_encoding`) as an object
    array of their record encodings."""
    resolver = resolver or Resolver()
    whole = type if isinstance(type, CompoundType) else member_type(type, type.base, resolver)
    part = _part(whole, resolver)
    out = np.empty(values.shape, object)
    flat = out.reshape(-1)
    for i, value in enumerate(values.reshape(-1)):
        chunks: list[bytes] = []
        for item in _items(value, part.dtype) if isinstance(type, VlenType) else [value]:
            part.encode(item, chunks)
        flat[i] = b"".join(chunks)
    return out


def decode_records(stored: np.ndarray, type: CompoundType | VlenType, *, resolver: Resolver | None = None) -> np.ndarray:
    """The raw values of record encodings (the reverse of :func:`encode_records`):
    records of :func:`value_dtype`, or for a vlen an object array of 1-D arrays of them.
    RecordDecodeError for bytes that do not hold a value of ``type``."""
    resolver = resolver or Resolver()
    whole = type if isinstance(type, CompoundType) else member_type(type, type.base, resolver)
    part = _part(whole, resolver)
    vlen = isinstance(type, VlenType)
    out = np.empty(stored.shape, object if vlen else part.dtype)
    flat = out.reshape(-1)
    for i, item in enumerate(stored.reshape(-1)):
        data = b"" if item is None else item.encode() if isinstance(item, str) else bytes(item)
        if vlen:
            elements = []
            at = 0
            while at < len(data):
                value, at = part.decode(data, at)
                elements.append(value)
            array = np.empty(len(elements), part.dtype)
            for j, value in enumerate(elements):
                array[j] = value
            flat[i] = array
        elif not data:
            flat[i] = part.empty()
        else:
            flat[i], at = part.decode(data, 0)
            if at != len(data):
                raise RecordDecodeError(f"{len(data) - at} bytes are left after a value of {type.fqn}")
    return out


def convert_records(values: np.ndarray, type: CompoundType | VlenType, *, resolver: Resolver | None = None) -> np.ndarray:
    """Values of a variable of ``type`` (see :func:`has_record_encoding`) given in another
    library's form (h5py's: bytes for strings, records of its own layout) as raw values."""
    resolver = resolver or Resolver()
    whole = type if isinstance(type, CompoundType) else member_type(type, type.base, resolver)
    part = _part(whole, resolver)
    vlen = isinstance(type, VlenType)
    out = np.empty(values.shape, object if vlen else part.dtype)
    flat = out.reshape(-1)
    for i, value in enumerate(values.reshape(-1)):
        if vlen:
            items = _items(value, part.dtype)
            array = np.empty(len(items), part.dtype)
            for j, item in enumerate(items):
                array[j] = part.convert(item)
            flat[i] = array
        else:
            flat[i] = part.convert(value)
    return out


def plain_value(value: object) -> object:
    """A raw value as plain Python data, to compare with a model value: records as tuples,
    arrays and sequences as lists, numpy scalars as numbers or bytes."""
    if isinstance(value, np.void) and value.dtype.names is not None:
        return tuple(plain_value(value[name]) for name in value.dtype.names)
    if isinstance(value, np.ndarray):
        return plain_value(value[()]) if value.ndim == 0 else [plain_value(v) for v in value]
    if isinstance(value, list | tuple):
        return type(value)(plain_value(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


def compound_records(values: Sequence[object], dtype: np.dtype) -> np.ndarray:
    """Model values of a compound (tuples; a char or char array member as text, nested
    compounds as tuples) as records of ``dtype``, as netCDF4 gives a compound attribute and
    h5py writes one."""
    return np.array([_model_record(v, dtype) for v in values], dtype=dtype)


def _model_record(value: object, dtype: np.dtype) -> object:
    if not isinstance(value, tuple | list) or dtype.fields is None:
        return value
    fields = []
    for item, name in zip(value, dtype.names or ()):
        field = dtype.fields[name][0]
        if isinstance(item, str) and field.base == np.dtype("S1"):
            raw = item.encode("utf-8", "surrogateescape")
            if field.shape:  # a char array: its text, NUL-padded
                item = np.frombuffer(raw.ljust(math.prod(field.shape), b"\0"), "S1").reshape(field.shape)
            else:  # one char, given as a one-character string ('-' or "-")
                item = raw[:1]
        elif field.names is not None:
            item = _model_record(item, field)
        fields.append(item)
    return tuple(fields)


def char_texts(chars: object) -> list[str]:
    """Chars (numpy's ``S1`` items, any shape) as the model holds a char array member of a
    compound or a vlen of chars: one one-character text each, a NUL as ``"\\x00"``."""
    return [bytes(c).decode("utf-8", "surrogateescape") or "\x00" for c in np.ravel(np.asarray(chars, "S1"))]
