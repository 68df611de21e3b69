"""Zarr data types and fill values, for both Zarr formats.

A :class:`DataType` ties one Zarr data type to the numpy dtype that holds its values in
memory and knows how its fill values look in JSON. Build one with

* :meth:`DataType.from_v3` from the ``data_type`` member of a v3 ``zarr.json``;
* :meth:`DataType.from_v2` from the ``dtype`` member of a v2 ``.zarray`` (``"|O"`` needs the
  id of the object codec found in ``filters``, see :func:`object_codec_id_of`);
* :meth:`DataType.from_numpy` for a new array.

Write it back with :meth:`DataType.to_json` (its own format), :meth:`DataType.to_v3` or
:meth:`DataType.to_v2`. Fill values go through :meth:`DataType.fill_from_json`,
:meth:`DataType.fill_to_json`, :meth:`DataType.cast_fill` and :meth:`DataType.default_fill`.

Byte order: a v3 data type has none (the ``bytes`` codec carries it), so v3 dtypes are native;
a v2 typestr states the stored order, so v2 dtypes keep it (``>i4`` stays big-endian).

The v3 spellings are those zarr-python 3.1 writes (``raw_bytes``, ``null_terminated_bytes``,
``fixed_length_utf32``, ``variable_length_bytes``, ``numpy.datetime64``, ``structured``...) plus
the core spec's ``r<bits>`` and the ``bytes`` alias; the spelling read is the spelling written.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from nczarr.errors import MetadataError
from nczarr.zarr.chunkspec import FillValue
from nczarr.zarr.jsonvalue import JSON, JSONObject

__all__ = ["NAT", "DTypeSpec", "DataType", "Kind", "ZarrFormat", "object_codec_id_of"]

ZarrFormat = Literal[2, 3]
#: What names a numpy dtype for a new array (numpy's StringDType holds variable-length text).
DTypeSpec: TypeAlias = "npt.DTypeLike | np.dtypes.StringDType"
Kind = Literal[
    "bool",
    "int",
    "uint",
    "float",
    "complex",
    "raw",
    "string",
    "bytes",
    "fixed_bytes",
    "fixed_unicode",
    "structured",
    "datetime",
    "timedelta",
]

#: v3 names that are plain strings, with their (native) numpy dtypes.
_V3_SIMPLE: dict[str, np.dtype] = {
    name: np.dtype(code)
    for name, code in {
        "bool": "?",
        "int8": "i1",
        "int16": "i2",
        "int32": "i4",
        "int64": "i8",
        "uint8": "u1",
        "uint16": "u2",
        "uint32": "u4",
        "uint64": "u8",
        "float16": "f2",
        "float32": "f4",
        "float64": "f8",
        "complex64": "c8",
        "complex128": "c16",
    }.items()
}
_V3_NAME_OF_DTYPE = {dtype: name for name, dtype in _V3_SIMPLE.items()}

_KIND_OF_NUMPY_KIND: dict[str, Kind] = {
    "b": "bool",
    "i": "int",
    "u": "uint",
    "f": "float",
    "c": "complex",
    "S": "fixed_bytes",
    "U": "fixed_unicode",
    "M": "datetime",
    "m": "timedelta",
}
#: v3 names zarr-python writes for the kinds that are not plain numbers.
_DEFAULT_V3_NAME: dict[Kind, str] = {
    "raw": "raw_bytes",
    "string": "string",
    "bytes": "variable_length_bytes",
    "fixed_bytes": "null_terminated_bytes",
    "fixed_unicode": "fixed_length_utf32",
    "structured": "structured",
    "datetime": "numpy.datetime64",
    "timedelta": "numpy.timedelta64",
}
_KIND_OF_V3_NAME: dict[str, Kind] = {name: kind for kind, name in _DEFAULT_V3_NAME.items()}
_KIND_OF_V3_NAME["bytes"] = "bytes"  # zarr-extensions name, read by zarr-python as well

#: v2 object codec ids that decide what a ``"|O"`` dtype holds.
_OBJECT_CODECS: dict[str, Kind] = {"vlen-utf8": "string", "vlen-bytes": "bytes"}
#: Every object codec id zarr-python knows; the ones not above are unsupported here.
_ALL_OBJECT_CODECS = ("vlen-utf8", "vlen-bytes", "vlen-array", "pickle", "json2", "msgpack2")

_V2_TYPESTR = re.compile(r"[<>|](?:O|[biufcSUV]\d+|[mM]8\[\d*[A-Za-z]+\])")
_V3_RAW = re.compile(r"r(\d+)")
_SPECIAL_FLOATS = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}
#: numpy's NaT as the int64 that stores it.
NAT = -(2**63)


def object_codec_id_of(codecs: Iterable[JSON]) -> str | None:
    """The id of the first v2 object codec (``vlen-utf8``, ``vlen-bytes``, ...) among filter or
    compressor configurations, as zarr-python resolves a ``"|O"`` dtype; None when absent."""
    for codec in codecs:
        if isinstance(codec, dict) and codec.get("id") in _ALL_OBJECT_CODECS:
            return str(codec["id"])
    return None


@dataclass(frozen=True)
class DataType:
    """One Zarr data type: its kind, its in-memory numpy dtype and its Zarr format.

    ``dtype`` is native byte order for v3 and the declared order for v2; ``string`` and
    ``bytes`` (variable length) use ``np.dtype(object)`` holding ``str`` / ``bytes``.
    """

    kind: Kind
    dtype: np.dtype
    zarr_format: ZarrFormat
    #: The v3 spelling: read from ``zarr.json``, or zarr-python's default spelling.
    v3_name: str

    # -- construction --------------------------------------------------------------------

    @classmethod
    def from_numpy(
        cls,
        dtype: DTypeSpec,
        zarr_format: ZarrFormat,
        *,
        string_kind: Literal["string", "bytes"] = "string",
    ) -> DataType:
        """The data type for numpy ``dtype``. Object dtypes (and numpy's StringDType) become
        ``string_kind``; v3 dtypes are made native, structured dtypes packed."""
        if isinstance(dtype, np.dtypes.StringDType):
            dtype = np.dtype(object)
        try:
            dtype = np.dtype(dtype)
        except TypeError as exc:
            raise MetadataError(f"{dtype!r} is not a numpy dtype") from exc
        if zarr_format not in (2, 3):
            raise MetadataError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
        if dtype.kind == "O":
            if string_kind not in ("string", "bytes"):
                raise MetadataError(f"string_kind must be 'string' or 'bytes', got {string_kind!r}")
            return cls(string_kind, dtype, zarr_format, _DEFAULT_V3_NAME[string_kind])
        if dtype.subdtype is not None:
            raise MetadataError(f"numpy dtype {dtype} is a subarray, not a Zarr data type")
        if dtype.kind == "V":
            if dtype.fields is None:
                return _checked_length(cls("raw", dtype, zarr_format, "raw_bytes"))
            return cls("structured", _packed(dtype, zarr_format), zarr_format, "structured")
        kind = _KIND_OF_NUMPY_KIND.get(dtype.kind)
        if kind is None:
            raise MetadataError(f"numpy dtype {dtype.str!r} has no Zarr data type")
        if zarr_format == 3:
            dtype = dtype.newbyteorder("=")
        native = dtype.newbyteorder("=")
        if kind in ("fixed_bytes", "fixed_unicode"):
            return _checked_length(cls(kind, dtype, zarr_format, _DEFAULT_V3_NAME[kind]))
        if kind in ("datetime", "timedelta"):
            if np.datetime_data(dtype.str)[0] == "generic":
                raise MetadataError(f"numpy dtype {dtype.str!r} has no time unit")
            return cls(kind, dtype, zarr_format, _DEFAULT_V3_NAME[kind])
        if native not in _V3_NAME_OF_DTYPE:
            raise MetadataError(f"numpy dtype {dtype.str!r} has no Zarr data type")
        return cls(kind, dtype, zarr_format, _V3_NAME_OF_DTYPE[native])

    @classmethod
    def from_v3(cls, data: JSON) -> DataType:
        """Parse the ``data_type`` member of a v3 array: a name such as ``"int16"``,
        ``"r16"``, ``"string"``, or a ``{"name": ..., "configuration": ...}`` object."""
        if isinstance(data, str):
            if data in _V3_SIMPLE:
                return cls.from_numpy(_V3_SIMPLE[data], 3)
            if data in ("string", "bytes", "variable_length_bytes"):
                held: Literal["string", "bytes"] = "string" if data == "string" else "bytes"
                return replace(cls.from_numpy(object, 3, string_kind=held), v3_name=data)
            match = _V3_RAW.fullmatch(data)
            if match and int(match[1]) % 8 == 0 and int(match[1]) > 0:
                return replace(cls.from_numpy(f"V{int(match[1]) // 8}", 3), v3_name=data)
        elif isinstance(data, dict) and isinstance(data.get("name"), str):
            return cls.from_numpy(_v3_configured_dtype(data), 3)
        raise MetadataError(f"unsupported data_type {json.dumps(data)}")

    @classmethod
    def from_v2(cls, data: JSON, object_codec_id: str | None = None) -> DataType:
        """Parse the ``dtype`` member of a v2 ``.zarray``: a typestr with explicit byte order
        (``"<i4"``, ``"|S5"``, ``"|O"``) or a structured list (``[["x", "<f4"], ["y", "<i2",
        [2]]]``). ``object_codec_id`` decides what ``"|O"`` holds."""
        if data == "|O":
            kind = _OBJECT_CODECS.get(object_codec_id or "")
            if kind is None:
                raise MetadataError(
                    f"dtype '|O' needs a vlen-utf8 or vlen-bytes filter, got {object_codec_id!r}"
                )
            return cls.from_numpy(object, 2, string_kind="string" if kind == "string" else "bytes")
        return cls.from_numpy(_v2_numpy_dtype(data), 2)

    # -- writing -------------------------------------------------------------------------

    def to_json(self) -> JSON:
        """The JSON form for this type's own Zarr format."""
        return self.to_v3() if self.zarr_format == 3 else self.to_v2()

    def to_v3(self) -> str | JSONObject:
        """The v3 ``data_type`` member."""
        if self.v3_name in _V3_SIMPLE or self.kind in ("string", "bytes"):
            return self.v3_name
        if self.kind == "raw" and _V3_RAW.fullmatch(self.v3_name):
            return f"r{self.dtype.itemsize * 8}"
        if self.kind in ("raw", "fixed_bytes", "fixed_unicode"):
            configuration: JSONObject = {"length_bytes": self.dtype.itemsize}
        elif self.kind in ("datetime", "timedelta"):
            unit, scale_factor = np.datetime_data(self.dtype)
            configuration = {"unit": unit, "scale_factor": scale_factor}
        else:
            fields = _fields(self.dtype)
            configuration = {"fields": [_v3_field(name, field) for name, field in fields]}
        return {"name": self.v3_name, "configuration": configuration}

    def to_v2(self) -> str | list[JSON]:
        """The v2 ``dtype`` member (``"|O"`` for variable-length strings and bytes, whose
        object codec is :attr:`object_codec_id`)."""
        if self.kind in ("string", "bytes"):
            return "|O"
        return _v2_descr(self.dtype)

    @property
    def object_codec_id(self) -> str | None:
        """The v2 filter id that must encode this type: ``vlen-utf8``, ``vlen-bytes`` or None."""
        return {"string": "vlen-utf8", "bytes": "vlen-bytes"}.get(self.kind)

    def __str__(self) -> str:
        spelling = self.to_json()
        return spelling if isinstance(spelling, str) else json.dumps(spelling)

    # -- fill values ---------------------------------------------------------------------

    def default_fill(self) -> FillValue:
        """The fill value used when none is given: zero, False, "", b"", NaT, zero bytes."""
        if self.kind == "string":
            return ""
        if self.kind == "bytes":
            return b""
        if self.kind in ("datetime", "timedelta"):
            return self.cast_fill(NAT)
        zero: np.generic = np.zeros(1, self.dtype)[0]
        return zero

    def cast_fill(self, value: object) -> FillValue:
        """``value`` as this type's fill value scalar (numpy scalar, ``str`` or ``bytes``).
        None stays None for v2 (no fill). MetadataError when it does not fit the type."""
        return self._cast_or_raise(value, value)

    def fill_from_json(self, data: JSON) -> FillValue:
        """Decode a ``fill_value`` JSON member. v2 null means "no fill" and gives None."""
        try:
            value = None if data is None else self._decode(data)
        except (TypeError, ValueError) as exc:
            raise self._misfit(data) from exc
        return self._cast_or_raise(value, data)

    def _cast_or_raise(self, value: object, shown: object) -> FillValue:
        """:meth:`cast_fill`, naming ``shown`` (the value as the caller gave it) on failure."""
        if value is None and self.zarr_format == 2:
            return None
        try:
            cast: FillValue = None if value is None else _CASTS[self.kind](self, value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self._misfit(shown) from exc
        if cast is None:
            raise self._misfit(shown)
        return cast

    def fill_to_json(self, value: object) -> JSON:
        """Encode a fill value as JSON: NaN and infinities as strings (v3: NaN with a
        non-default payload as hex), complex as ``[re, im]``, bytes as base64 (``r<bits>``:
        a list of byte values), datetimes as integers."""
        fill: Any = self.cast_fill(value)  # each kind's branch knows the scalar's type
        if fill is None:
            return None
        kind = self.kind
        if kind == "bool":
            return bool(fill)
        if kind in ("int", "uint"):
            return int(fill)
        if kind == "float":
            return self._float_to_json(fill)
        if kind == "complex":
            return [self._float_to_json(fill.real), self._float_to_json(fill.imag)]
        if kind in ("datetime", "timedelta"):
            return int(np.array(fill).view(np.int64))
        if kind in ("string", "fixed_unicode"):
            return str(fill)
        raw = fill.tobytes() if kind in ("raw", "structured") else bytes(fill)
        if kind == "raw" and self.zarr_format == 3 and _V3_RAW.fullmatch(self.v3_name):
            return list(raw)  # the core spec's form for r<bits>
        return base64.standard_b64encode(raw).decode("ascii")

    def _decode(self, data: Any) -> Any:
        """JSON-specific spellings of a fill value → a value :meth:`cast_fill` accepts."""
        kind = self.kind
        if kind == "float":
            return _float_from_json(data, self.dtype.newbyteorder("="))
        if kind == "complex":
            if not isinstance(data, list) or len(data) != 2:
                raise ValueError("complex fill values are [re, im]")
            part = np.dtype(f"f{self.dtype.itemsize // 2}")
            parts = [_float_from_json(x, part) for x in data]
            with np.errstate(over="ignore"):
                pair = np.array(parts, part)
            if any(np.isinf(cast) and not np.isinf(x) for cast, x in zip(pair, parts)):
                raise ValueError("complex part out of range")
            return pair.view(self.dtype.newbyteorder("="))[0]  # keeps NaN payloads
        if kind in ("bytes", "fixed_bytes", "raw", "structured"):
            return _bytes_from_json(data)
        if kind == "string" and isinstance(data, int | float) and not isinstance(data, bool):
            return str(data)  # zarr-python 2 wrote 0 as the fill value of string arrays
        return data

    def _float_to_json(self, value: Any) -> float | str:
        if np.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if not np.isnan(value):
            return float(value)
        native = np.dtype(type(value))
        bits = np.array(value, native.newbyteorder(">")).tobytes()
        if self.zarr_format == 2 or bits == np.array(np.nan, native.newbyteorder(">")).tobytes():
            return "NaN"  # v2 has no hex form, so v2 payloads are lost
        return "0x" + bits.hex()

    def _misfit(self, value: object) -> MetadataError:
        return MetadataError(f"fill value {value!r} does not fit data type {self}")


# -- fill value casts: each returns the scalar, or None when the value does not fit ---------


def _cast_bool(dt: DataType, value: Any) -> Any:
    if isinstance(value, bool | np.bool_) or (_is_int(value) and value in (0, 1)):
        return np.bool_(value)
    return None


def _cast_int(dt: DataType, value: Any) -> Any:
    if isinstance(value, float | np.floating) and float(value).is_integer():
        value = int(value)
    if not _is_int(value):
        return None
    info = np.iinfo(dt.dtype)
    return dt.dtype.type(value) if info.min <= int(value) <= info.max else None


def _cast_float(dt: DataType, value: Any) -> Any:
    if isinstance(value, np.floating) and value.dtype.itemsize == dt.dtype.itemsize:
        return dt.dtype.type(value)  # same width: keep the exact bits, NaN payload included
    if not (_is_int(value) or isinstance(value, float | np.floating)):
        return None
    with np.errstate(over="ignore"):
        cast = dt.dtype.type(value)
    return None if np.isinf(cast) and not np.isinf(value) else cast


def _cast_complex(dt: DataType, value: Any) -> Any:
    if isinstance(value, np.complexfloating) and value.dtype.itemsize == dt.dtype.itemsize:
        return dt.dtype.type(value)
    if not (_is_int(value) or isinstance(value, float | complex | np.number)):
        return None
    with np.errstate(over="ignore"):
        cast = dt.dtype.type(value)
    return None if np.isinf(cast) and not np.isinf(complex(value)) else cast


def _cast_time(dt: DataType, value: Any) -> Any:
    native = dt.dtype.newbyteorder("=")
    if _is_int(value):
        return np.array(value, np.int64).view(native)[()]
    if isinstance(value, np.datetime64 | np.timedelta64) and value.dtype.kind == native.kind:
        return value.astype(native)
    return None


def _cast_string(dt: DataType, value: Any) -> Any:
    return str(value) if isinstance(value, str) else None


def _cast_bytes(dt: DataType, value: Any) -> Any:
    return bytes(value) if isinstance(value, bytes | bytearray) else None


def _cast_fixed_bytes(dt: DataType, value: Any) -> Any:
    if isinstance(value, bytes | bytearray) and len(value) <= dt.dtype.itemsize:
        return np.bytes_(value)
    return None


def _cast_fixed_unicode(dt: DataType, value: Any) -> Any:
    if isinstance(value, str) and len(value) <= dt.dtype.itemsize // 4:
        return np.str_(value)
    return None


def _cast_record(dt: DataType, value: Any) -> Any:
    """raw and structured: exact-size bytes, a matching np.void, or (structured) a tuple."""
    if isinstance(value, np.void):
        value = value.tobytes() if value.dtype.itemsize == dt.dtype.itemsize else None
    if isinstance(value, bytes | bytearray) and len(value) == dt.dtype.itemsize:
        return np.frombuffer(bytes(value), dt.dtype)[0]
    if isinstance(value, tuple) and dt.kind == "structured":
        return np.array(value, dt.dtype)[()]
    return None


_CASTS = {
    "bool": _cast_bool,
    "int": _cast_int,
    "uint": _cast_int,
    "float": _cast_float,
    "complex": _cast_complex,
    "datetime": _cast_time,
    "timedelta": _cast_time,
    "string": _cast_string,
    "bytes": _cast_bytes,
    "fixed_bytes": _cast_fixed_bytes,
    "fixed_unicode": _cast_fixed_unicode,
    "raw": _cast_record,
    "structured": _cast_record,
}


def _float_from_json(data: Any, dtype: np.dtype) -> Any:
    """A JSON float member: number, "NaN", "Infinity", "-Infinity", or "0x" + the big-endian
    hex of the IEEE bit pattern of ``dtype``."""
    if _is_int(data) or isinstance(data, float):
        return data
    if data in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[data]
    if isinstance(data, str) and data.startswith("0x") and len(data) == 2 + 2 * dtype.itemsize:
        return np.frombuffer(bytes.fromhex(data[2:]), dtype.newbyteorder(">"))[0]
    raise ValueError(f"not a float: {data!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _bytes_from_json(data: Any) -> bytes:
    """Bytes spelled as base64 (zarr-python) or as a list of byte values (core spec)."""
    if isinstance(data, str):
        try:
            return base64.b64decode(data, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"not base64: {data!r}") from exc
    if isinstance(data, list) and all(_is_int(b) and 0 <= b <= 255 for b in data):
        return bytes(data)
    raise ValueError("bytes are base64 or a list of byte values")


# -- data type helpers --------------------------------------------------------------------


def _checked_length(dt: DataType) -> DataType:
    if dt.dtype.itemsize == 0:
        raise MetadataError(f"numpy dtype {dt.dtype.str!r} has length zero")
    return dt


def _fields(dtype: np.dtype) -> list[tuple[str, np.dtype]]:
    """The (name, dtype) of each field of a structured dtype, in order."""
    fields = dtype.fields
    if fields is None:
        return []
    return [(name, fields[name][0]) for name in dtype.names or ()]


def _packed(dtype: np.dtype, zarr_format: ZarrFormat) -> np.dtype:
    """A structured dtype rebuilt field by field: no padding, v3 fields native."""
    fields = []
    for name, field in _fields(dtype):
        base, shape = field.subdtype or (field, ())
        if shape and zarr_format == 3:
            _v3_field(name, field)  # raises: v3 has no subarray fields
        member = DataType.from_numpy(base, zarr_format)
        if member.kind in ("string", "bytes"):
            raise MetadataError(
                f"structured field {name!r} cannot hold variable-length {member.kind}"
            )
        fields.append((name, member.dtype, shape))
    return np.dtype(fields)


def _v3_field(name: str, field: np.dtype) -> list[JSON]:
    if field.subdtype is not None:
        raise MetadataError(
            f"structured field {name!r} has shape {field.shape}, which Zarr v3 cannot express"
        )
    return [name, DataType.from_numpy(field, 3).to_v3()]


def _v3_configured_dtype(data: dict[str, Any]) -> np.dtype:
    """The numpy dtype of a v3 ``{"name": ..., "configuration": ...}`` data type."""
    name, config = data["name"], data.get("configuration")
    kind = _KIND_OF_V3_NAME.get(name)
    if not isinstance(config, dict) or kind is None or set(data) != {"name", "configuration"}:
        raise MetadataError(f"unsupported data_type {json.dumps(data)}")
    try:
        if kind in ("raw", "fixed_bytes", "fixed_unicode"):
            length = config["length_bytes"]
            if not _is_int(length) or length <= 0 or (kind == "fixed_unicode" and length % 4):
                raise ValueError(length)
            code = {"raw": "V", "fixed_bytes": "S", "fixed_unicode": "U"}[kind]
            return np.dtype(f"{code}{length // 4 if kind == 'fixed_unicode' else length}")
        if kind in ("datetime", "timedelta"):
            unit, scale = config["unit"], config["scale_factor"]
            if not isinstance(unit, str) or not _is_int(scale) or scale <= 0:
                raise ValueError(config)
            return np.dtype(f"{'M' if kind == 'datetime' else 'm'}8[{scale}{unit}]")
        if kind == "structured":
            fields = config["fields"]
            return np.dtype([(name, DataType.from_v3(field).dtype) for name, field in fields])
    except (KeyError, TypeError, ValueError) as exc:
        raise MetadataError(f"invalid data_type {json.dumps(data)}") from exc
    raise MetadataError(f"unsupported data_type {json.dumps(data)}")


def _v2_numpy_dtype(data: Any) -> np.dtype:
    """The numpy dtype of a v2 typestr or structured list (object dtypes excluded)."""
    if isinstance(data, str):
        if data != "|O" and _V2_TYPESTR.fullmatch(data):
            try:
                return np.dtype(data)
            except TypeError:
                pass
        raise MetadataError(f"unsupported dtype {json.dumps(data)}")
    if isinstance(data, list) and data:
        fields = []
        for field in data:
            if not (
                isinstance(field, list)
                and len(field) in (2, 3)
                and isinstance(field[0], str)
                and (len(field) == 2 or _is_shape(field[2]))
            ):
                raise MetadataError(f"invalid structured dtype field {json.dumps(field)}")
            shape = tuple(field[2]) if len(field) == 3 else ()
            fields.append((field[0], _v2_numpy_dtype(field[1]), shape))
        try:
            return np.dtype(fields)
        except (TypeError, ValueError) as exc:
            raise MetadataError(f"invalid structured dtype {json.dumps(data)}") from exc
    raise MetadataError(f"unsupported dtype {json.dumps(data)}")


def _v2_descr(dtype: np.dtype) -> str | list[JSON]:
    """The v2 ``dtype`` spelling of a numpy dtype: its typestr, or a list of fields."""
    if dtype.fields is None:
        return dtype.str
    out: list[JSON] = []
    for name, field in _fields(dtype):
        base, shape = field.subdtype or (field, ())
        out.append([name, _v2_descr(base), list(shape)] if shape else [name, _v2_descr(base)])
    return out


def _is_shape(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str) and all(
        _is_int(n) and n >= 0 for n in value
    )
