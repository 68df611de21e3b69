"""Pieces every convention shares: the ``_nczarr_*`` key names, netCDF type ↔ Zarr data type
maps, attribute values ↔ JSON with their types, netCDF default fill values and chunking,
the JSON dialect netcdf-c writes, and where readers get metadata documents from
(:class:`DocumentSource`: the consolidated copy at the root, else the store) and the
consolidated copy sessions write (:func:`consolidated_copy`).

Facts are from the reference notes on NCZarr (``nczarr-format.md``); sections are cited as §.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from nczarr import __version__
from nczarr.errors import MetadataError
from nczarr.formats.base import (
    Convention,
    FormatError,
    MissingNodeError,
    StoredDataset,
    VariableStorage,
    checked_scope,
)
from nczarr.model import (
    AtomicType,
    Dataset,
    Dimension,
    Group,
    Node,
    Resolver,
    Variable,
    join_fqn,
)
from nczarr.store.base import Store
from nczarr.zarr.codecs.defaults import default_v3_codecs
from nczarr.zarr.metadata import (
    MAX_ELEMENTS,
    ZARR_JSON,
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ZMETADATA,
    ArrayMetadata,
    ArrayMetadataV3,
    GroupMetadataV3,
    consolidated_order,
    dump_json,
    load_json,
    parse_node,
)
from nczarr.zarr.node import check_node_name, is_node_name

# -- key names (§2.3–§2.10, §3, §5) ---------------------------------------------------------

SUPERBLOCK = "_nczarr_superblock"
GROUP = "_nczarr_group"
ARRAY = "_nczarr_array"
ATTR = "_nczarr_attr"  # v2 types map
ATTRS = "_nczarr_attrs"  # v3 types map (and the fork's v2 spelling)
MAXSTRLEN = "_nczarr_maxstrlen"
DEFAULT_MAXSTRLEN = "_nczarr_default_maxstrlen"
NCPROPERTIES = "_NCProperties"
ARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"
#: The upper-case keys of netcdf-c 4.8.1–4.9.0 (§3.2).
OLD_UPPER = {
    SUPERBLOCK: "_NCZARR_SUPERBLOCK",
    GROUP: "_NCZARR_GROUP",
    ARRAY: "_NCZARR_ARRAY",
    ATTR: "_NCZARR_ATTR",
}
#: Attributes netcdf-c hides from the attribute API (§2.10.5); never part of a tree.
HIDDEN = frozenset(
    {
        SUPERBLOCK,
        GROUP,
        ARRAY,
        ATTR,
        ATTRS,
        NCPROPERTIES,
        ARRAY_DIMENSIONS,
        "_Netcdf4Coordinates",
        "_Netcdf4Dimid",
        "CLASS",
        "DIMENSION_LIST",
        "NAME",
        "REFERENCE_LIST",
        *OLD_UPPER.values(),
    }
)
#: Reserved names a user attribute may not have (netcdf-c refuses to write them).
RESERVED = HIDDEN - {"CLASS", "NAME"}
#: The prefix netcdf-c gives dimensions of arrays that name none (§4.2).
ANONYMOUS_PREFIX = "_Anonymous_Dim_"
#: String length when neither ``_nczarr_maxstrlen`` nor ``_nczarr_default_maxstrlen`` says (§2.8.3).
DEFAULT_STRLEN = 128
#: What netcdf-c 4.10.1 (the netCDF4 1.7.5 wheel) writes as ``_NCProperties`` (§2.3).
NETCDF_C_NCPROPERTIES = "version=2,netcdf=4.10.1,nczarr=2.0.0"
#: What nczarr writes as ``_NCProperties`` unless byte-compatible output is asked for.
NCZARR_NCPROPERTIES = f"version=2,nczarr=2.0.0,nczarr-python={__version__}"

# -- types --------------------------------------------------------------------------------

#: The atomic types by their netCDF names (``"int"``, ``"char"``...).
ATOMIC_BY_NAME = {t.value: t for t in AtomicType}
_CODE = {
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
_TYPE_OF_CODE = {code: t for t, code in _CODE.items()}
#: v3 data type names of the numeric types (§5.3).
V3_NAME = {t: np.dtype(code).name for t, code in _CODE.items()}
_TYPE_OF_V3_NAME = {name: t for t, name in V3_NAME.items()}
#: netCDF-4's fill values when a variable sets none (§2.9).
DEFAULT_FILL: dict[AtomicType, Any] = {
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
_V2_TYPESTR = re.compile(r"([<>|]?)([a-zA-Z])(\d+)")


# -- types ---------------------------------------------------------------------------------


def numpy_dtype(type: AtomicType, endian: str = "little", strlen: int = DEFAULT_STRLEN) -> np.dtype:
    """The numpy dtype that holds a variable of ``type`` in a chunk (char: ``S1``, string:
    ``S<strlen>``; numbers in the given byte order)."""
    if type is AtomicType.CHAR:
        return np.dtype("S1")
    if type is AtomicType.STRING:
        return np.dtype(f"S{strlen}")
    return np.dtype(_CODE[type]).newbyteorder(">" if endian == "big" else "<")


def atomic_type_of(dtype: np.dtype) -> AtomicType | None:
    """The numeric atomic type of a numpy dtype in any byte order (``S1``: char), or None."""
    if dtype.kind == "S" and dtype.itemsize == 1:
        return AtomicType.CHAR
    return _TYPE_OF_CODE.get(f"{dtype.kind}{dtype.itemsize}") if dtype.kind in "iuf" else None


def v2_typestr(type: AtomicType, endian: str = "little", strlen: int = DEFAULT_STRLEN) -> str:
    """The v2 ``dtype`` netcdf-c writes (§2.8.1): always an explicit byte order for numbers,
    ``>S1`` for char, ``|S<n>`` for string."""
    if type is AtomicType.CHAR:
        return ">S1"
    if type is AtomicType.STRING:
        return f"|S{strlen}"
    return (">" if endian == "big" else "<") + _CODE[type]


def parse_v2_typestr(text: Any, where: str, nczarr: bool = True) -> tuple[AtomicType, int]:
    """The netCDF type of a v2 typestr and its string length (1 for others), as netcdf-c
    reads it (§2.8.2): ``>S1`` (and ``<U1`` of old writers) is char in NCZarr mode, any other
    ``S`` is a string. FormatError naming ``where`` for other types."""
    match = _V2_TYPESTR.fullmatch(text) if isinstance(text, str) else None
    if match:
        order, letter, size = match[1], match[2], int(match[3])
        if letter == "U" and size == 1 and nczarr:
            return AtomicType.CHAR, 1
        if letter == "S" and size >= 1:
            if nczarr and order == ">" and size == 1:
                return AtomicType.CHAR, 1
            return AtomicType.STRING, size
        found = _TYPE_OF_CODE.get(f"{letter}{size}")
        if found is not None:
            return found, 1
    raise FormatError(f"{where}: data type {json.dumps(text)} has no netCDF type")


def type_code(type: AtomicType, strlen: int = DEFAULT_STRLEN, zarr_format: int = 2) -> str:
    """The types-map entry of an attribute of ``type`` (§2.10.2, §5.2)."""
    if zarr_format == 3:
        return type.value if type in (AtomicType.CHAR, AtomicType.STRING) else V3_NAME[type]
    return v2_typestr(type, "little", strlen)


def parse_type_code(code: Any, where: str) -> AtomicType | None:
    """The netCDF type of a types-map entry, any writer's spelling (v2 dtypes, v3 names,
    4.8.0's nc_type numbers); None for ``|J0``/``json`` (internal JSON attributes)."""
    if code in ("|J0", "json"):
        return None
    if isinstance(code, str):
        if code in ("char", "string"):
            return ATOMIC_BY_NAME[code]
        if code in _TYPE_OF_V3_NAME:
            return _TYPE_OF_V3_NAME[code]
        if code.isdigit() and code in _NC_TYPE_NUMBERS:
            return _NC_TYPE_NUMBERS[code]
        return parse_v2_typestr(code, where)[0]
    raise FormatError(f"{where}: attribute type {json.dumps(code)} is not a type")


_NC_TYPE_NUMBERS = {
    str(n): t
    for n, t in enumerate(
        [
            AtomicType.BYTE,
            AtomicType.CHAR,
            AtomicType.SHORT,
            AtomicType.INT,
            AtomicType.FLOAT,
            AtomicType.DOUBLE,
            AtomicType.UBYTE,
            AtomicType.USHORT,
            AtomicType.UINT,
            AtomicType.INT64,
            AtomicType.UINT64,
            AtomicType.STRING,
        ],
        start=1,
    )
}


# -- attribute values ----------------------------------------------------------------------


def float32(value: float) -> float:
    """A float attribute value as nczarr holds it: the shortest decimal that denotes the
    float32 nearest to ``value`` (NaN and infinities kept)."""
    return float(str(np.float32(value)))


def _float_to_json(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def values_to_json(type: AtomicType, values: list[Any] | str) -> Any:
    """The JSON of an attribute's values (§2.10.1): one value bare, several as a list; NaN
    and infinities as quoted strings; char text as one string."""
    if type is AtomicType.CHAR:
        return values
    if type is AtomicType.STRING:
        items: list[Any] = [str(v) for v in values]
    elif type.is_float:
        convert = float32 if type is AtomicType.FLOAT else float
        items = [_float_to_json(convert(float(v))) for v in values]
    else:
        items = [int(v) for v in values]
    return items[0] if len(items) == 1 else items


def values_from_json(type: AtomicType, data: Any, where: str) -> list[Any] | str:
    """Attribute values of ``type`` from their JSON (§2.10.3), numbers checked against the
    type's range; FormatError naming ``where`` otherwise."""
    if type is AtomicType.CHAR:
        return data if isinstance(data, str) else compact_json(data)
    items = data if isinstance(data, list) else [data]
    try:
        if type is AtomicType.STRING:
            if not all(isinstance(v, str) for v in items):
                raise ValueError("not strings")
            return list(items)
        if type.is_float:
            convert = float32 if type is AtomicType.FLOAT else float
            return [convert(_json_float(v)) for v in items]
        out = [_json_int(v) for v in items]
    except (TypeError, ValueError, OverflowError) as exc:
        raise FormatError(f"{where}: {compact_json(data)} is not a {type.value} value") from exc
    for value in out:
        if not type.low <= value <= type.high:  # type: ignore[operator]
            raise FormatError(f"{where}: {value} does not fit {type.value}")
    return out


def _json_float(value: Any) -> float:
    if isinstance(value, str):
        special = value.lower().removesuffix("f")
        if special in ("nan", "-nan"):
            return math.nan
        if special in ("infinity", "+infinity", "-infinity", "inf", "-inf"):
            return -math.inf if special.startswith("-") else math.inf
        raise ValueError(value)
    if isinstance(value, bool | int | float):
        return float(value)
    raise TypeError(value)


def _json_int(value: Any) -> int:
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        return math.trunc(value)  # netcdf-c converts with C truncation
    raise TypeError(value)


def infer_attribute(data: Any) -> tuple[AtomicType, list[Any] | str]:
    """An attribute without a types entry, typed as netcdf-c infers it (§2.10.4)."""
    first = data[0] if isinstance(data, list) and data else data
    atomic = all(
        isinstance(v, bool | int | float | str) for v in (data if isinstance(data, list) else [data])
    )
    if data == [] or not atomic or isinstance(first, str) and isinstance(data, list):
        return AtomicType.CHAR, compact_json(data)
    if isinstance(first, str):
        return AtomicType.CHAR, first
    if isinstance(first, bool):
        type = AtomicType.UBYTE
    elif isinstance(first, float):
        type = AtomicType.DOUBLE
    elif 0 <= first <= 2**31 - 1 or -(2**31) <= first < 0:
        type = AtomicType.INT
    elif 0 < first <= 2**32 - 1:
        type = AtomicType.UINT
    elif -(2**63) <= first <= 2**63 - 2:
        type = AtomicType.INT64
    else:
        type = AtomicType.UINT64
    return type, values_from_json(type, data, "inferred attribute")


def compact_json(data: Any) -> str:
    """JSON text of a value that a char attribute holds (netcdf-c's dialect)."""
    return dumps(data).decode()


def read_attributes(
    owner: Group | Variable,
    attrs: Mapping[str, Any],
    types: Mapping[str, Any],
    where: str,
    var_type: Any = None,
    user: Any = None,
    xarray_fill: bool = False,
) -> None:
    """Add the user attributes of a JSON attributes object to ``owner``, typed by the types
    map, else (netcdf-c's rule) ``_FillValue`` by ``var_type``, else by inference.
    ``user(code, data, where)`` decodes a value of a user type, or returns None when ``code``
    names none. ``xarray_fill``: a ``_FillValue`` is encoded as xarray encodes it in v3."""
    for what, value in (("attributes", attrs), ("attribute types", types)):
        if not isinstance(value, Mapping):
            raise FormatError(f"{where}: {what} must be a JSON object, not {compact_json(value)}")
    for name, data in attrs.items():
        if name in HIDDEN:
            continue
        at = f"{where}: attribute {name!r}"
        code = types.get(name)
        decoded = user(code, data, at) if user is not None and code is not None else None
        if decoded is not None:
            owner.add_attribute(name, *decoded)
            continue
        type = parse_type_code(code, at) if code is not None else None
        values: list[Any] | str
        if code == "json":  # the fork's char attribute written as parsed JSON (§5.2)
            owner.add_attribute(name, AtomicType.CHAR, data if isinstance(data, str) else compact_json(data))
            continue
        if type is None and code is not None:
            raise FormatError(f"{at}: type {code!r} is only for internal attributes")
        if type is None and name == "_FillValue" and isinstance(var_type, AtomicType):
            type = var_type
        if type is None:
            type, values = infer_attribute(data)
        elif name == "_FillValue" and xarray_fill:
            values = xarray_fill_value(type, data, at)
        else:
            values = values_from_json(type, data, at)
        if name == "_FillValue" and isinstance(values, list) and len(values) != 1:
            raise FormatError(f"{at}: a fill value is one value, not {len(values)}")  # as netCDF rules
        owner.add_attribute(name, type, values)


# -- fill values ---------------------------------------------------------------------------


def fill_attribute(variable: Variable) -> Any | None:
    """The variable's ``_FillValue`` (one value; char: the text), or None."""
    found = variable.find_attribute("_FillValue")
    if found is None:
        return None
    values = found.values
    if isinstance(values, str):
        return values[:1] or "\x00"
    return values[0] if values else None


def fill_json(type: AtomicType, value: Any) -> Any:
    """A fill value as netcdf-c writes it in ``fill_value`` (§2.9)."""
    if type is AtomicType.CHAR:
        return "" if value == "\x00" else value
    if type is AtomicType.STRING:
        return value
    return values_to_json(type, [value])


def is_default_fill(type: AtomicType, value: Any) -> bool:
    """Whether a fill value read back is the netCDF default for ``type`` (netcdf-c writes
    float defaults rounded to 6 digits, §2.9)."""
    default = DEFAULT_FILL[type]
    if type.is_float:
        return isinstance(value, float) and f"{value:g}" == f"{default:g}"
    if type is AtomicType.CHAR:
        return value in ("", "\x00")
    return value == default


def fill_from_json(type: AtomicType, data: Any, where: str) -> Any:
    """A ``fill_value`` read as netCDF's fill value of ``type`` (char: one character)."""
    values = values_from_json(type, data, f"{where}: fill_value")
    if isinstance(values, str):
        return values[:1] or "\x00"
    return values[0] if values else DEFAULT_FILL[type]


def fill_to_netcdf(type: AtomicType, fill: Any) -> Any:
    """An engine fill value (numpy scalar, bytes, str; a char stored as uint8 is a number)
    as netCDF's fill value of ``type``."""
    if isinstance(fill, np.void):
        fill = fill.tobytes()
    elif isinstance(fill, np.generic):
        fill = fill.item()
    if type is AtomicType.CHAR:
        if isinstance(fill, int):
            return chr(fill)
        text = fill.decode("latin-1") if isinstance(fill, bytes) else str(fill)
        return text[:1] or "\x00"
    if type is AtomicType.STRING:  # fixed-length strings are NUL-padded (§2.8.3)
        return fill.decode(errors="replace").rstrip("\x00") if isinstance(fill, bytes) else str(fill)
    if type.is_float:
        return float(fill)
    return int(fill) if isinstance(fill, float) and math.isfinite(fill) else fill


def keep_fill(variable: Variable, type: AtomicType, fill: Any) -> None:
    """Give a variable read without a ``_FillValue`` attribute one when its stored fill value
    is not the netCDF default, so the fill is not lost."""
    if variable.find_attribute("_FillValue") is None and not is_default_fill(type, fill):
        variable.add_attribute("_FillValue", type, fill if type is AtomicType.CHAR else [fill])


_SPECIAL = ("NaN", "Infinity", "-Infinity")


def char_byte(text: str) -> bytes:
    """The byte a char value stands for: its first character in Latin-1 (NUL when empty)."""
    return text[:1].encode("latin-1", errors="replace") or b"\x00"


def xarray_fill_json(type: AtomicType, values: list[Any] | str, char_as_number: bool) -> Any:
    """A v3 array's ``_FillValue`` attribute as xarray writes and reads it: floats as the
    base64 of a little-endian double, char as the base64 of its byte (or as the number of
    its byte when the array holds chars as uint8), others as JSON."""
    if type.is_float:
        value = float(values[0])
        return base64.standard_b64encode(struct.pack("<d", value)).decode()
    if type is AtomicType.CHAR:
        byte = char_byte(str(values))
        return byte[0] if char_as_number else base64.standard_b64encode(byte).decode()
    return values_to_json(type, values)


def xarray_fill_value(type: AtomicType, data: Any, where: str) -> list[Any] | str:
    """The value of a v3 ``_FillValue`` attribute written as xarray writes it (or plainly)."""
    if type is AtomicType.CHAR and isinstance(data, int):
        if not 0 <= data <= 255:  # a char is one byte
            raise FormatError(f"{where}: _FillValue {data} is not a char (a byte, 0 to 255)")
        return chr(data)
    if isinstance(data, str) and type is AtomicType.CHAR:
        try:  # xarray's base64; netcdf-c writes the text itself
            return base64.b64decode(data, validate=True).decode("latin-1")[:1]
        except ValueError:
            return data
    if isinstance(data, str) and type.is_float and data not in _SPECIAL:
        try:
            raw = base64.b64decode(data, validate=True)
        except ValueError:
            raise FormatError(f"{where}: _FillValue {data!r} is not base64") from None
        if len(raw) != 8:
            raise FormatError(f"{where}: _FillValue {data!r} is not a base64 double")
        value = struct.unpack("<d", raw)[0]
        return [float32(value) if type is AtomicType.FLOAT else value]
    return values_from_json(type, data, where)


# -- codecs --------------------------------------------------------------------------------

BLOSC_CNAMES = {
    "blosc_lz": "blosclz",
    "blosc_lz4": "lz4",
    "blosc_lz4hc": "lz4hc",
    "blosc_zlib": "zlib",
    "blosc_zstd": "zstd",
}

_COMPRESSION_OF_CNAME = {cname: name for name, cname in BLOSC_CNAMES.items()}


def netcdf_chain(storage: VariableStorage, itemsize: int, byte_compatible: bool) -> list[dict[str, Any]]:
    """The filter chain netcdf-c builds for these settings, in netcdf-c's codec JSON (§2.12):
    shuffle, the compressor, fletcher32."""
    chain: list[dict[str, Any]] = []
    if storage.shuffle:
        # netcdf-c writes elementsize 0, which numcodecs takes as "no shuffle" (§8.4)
        chain.append({"id": "shuffle", "elementsize": 0 if byte_compatible else itemsize})
    compression, level = storage.compression, storage.complevel
    if compression == "zlib":
        chain.append({"id": "zlib", "level": level})
    elif compression == "zstd":
        chain.append({"id": "zstd", "level": level})
    elif compression == "bzip2":
        chain.append({"id": "bz2", "level": max(level, 1)})
    elif compression is not None:
        chain.append(
            {
                "id": "blosc",
                "clevel": level,
                "blocksize": 0,
                "cname": BLOSC_CNAMES[compression],
                "shuffle": storage.blosc_shuffle,
            }
        )
    if storage.fletcher32:
        chain.append({"id": "fletcher32"})
    return chain


def v3_codecs(dtype: np.dtype, storage: VariableStorage, string_kind: str = "string") -> list[dict[str, Any]]:
    """Standard v3 codecs for netCDF settings: ``bytes`` (big-endian when asked), shuffle,
    ``gzip`` for zlib, ``zstd``, ``blosc``, bz2 and fletcher32 by their numcodecs names."""
    codecs = default_v3_codecs(
        dtype if not dtype.hasobject else np.dtype(object),
        compression=storage.compression,
        complevel=storage.complevel,
        shuffle=storage.shuffle,
        blosc_shuffle=storage.blosc_shuffle,  # type: ignore[arg-type]
        fletcher32=storage.fletcher32,
    )
    first = codecs[0]
    if string_kind == "bytes":
        codecs[0] = {"name": "vlen-bytes", "configuration": {}}
    elif first["name"] == "bytes" and storage.endian == "big" and dtype.itemsize > 1 and dtype.fields is None:
        codecs[0] = {"name": "bytes", "configuration": {"endian": "big"}}
    return codecs


def storage_from_chain(
    chain: list[dict[str, Any]], chunks: tuple[int, ...], endian: str, fill: bool, raw: Any
) -> VariableStorage:
    """The netCDF settings a filter chain stands for; codecs it cannot name are kept in
    ``codecs`` only."""
    settings: dict[str, Any] = {}
    for codec in chain:
        name = str(codec.get("id", codec.get("name", ""))).removeprefix("numcodecs.")
        config = codec.get("configuration", codec)
        if name == "shuffle":
            settings["shuffle"] = True
        elif name == "fletcher32":
            settings["fletcher32"] = True
        elif name in ("zlib", "gzip", "zstd", "bz2") and "level" in config:
            settings["compression"] = {"gzip": "zlib", "bz2": "bzip2"}.get(name, name)
            settings["complevel"] = int(config["level"])
        elif name == "blosc" and config.get("cname") in _COMPRESSION_OF_CNAME:
            settings["compression"] = _COMPRESSION_OF_CNAME[config["cname"]]
            settings["complevel"] = int(config.get("clevel", 5))
            shuffle = config.get("shuffle", 1)
            names = ("noshuffle", "shuffle", "bitshuffle")
            settings["blosc_shuffle"] = names.index(shuffle) if shuffle in names else int(shuffle)
    return VariableStorage(chunks=chunks, endian=endian, fill=fill, codecs=raw, **settings)  # type: ignore[arg-type]


# -- chunking ------------------------------------------------------------------------------

#: netcdf-c's DEFAULT_CHUNK_SIZE in the CMake build of the wheel (§2.11.2).
NETCDF_CHUNK_BYTES = 16_777_216


def keep_chunk_keys(metadata: ArrayMetadata, stored: ArrayMetadata | None) -> ArrayMetadata:
    """The metadata computed for an array that is already stored keeps the stored chunk key
    encoding: the keys name the chunks there (another writer may have chosen another one)."""
    if stored is None or stored.zarr_format != metadata.zarr_format:
        return metadata
    if isinstance(metadata, ArrayMetadataV3):
        if (metadata.chunk_key_encoding, metadata.separator) == (stored.chunk_key_encoding, stored.separator):  # type: ignore[union-attr]
            return metadata
        return replace(metadata, chunk_key_encoding=stored.chunk_key_encoding, separator=stored.separator)  # type: ignore[union-attr]
    if metadata.dimension_separator == stored.dimension_separator:  # type: ignore[union-attr]
        return metadata
    return replace(metadata, dimension_separator=stored.dimension_separator)  # type: ignore[union-attr]


def chunks_for(
    storage: VariableStorage, dimensions: Sequence[Dimension], shape: Sequence[int], itemsize: int
) -> tuple[int, ...]:
    """An array's chunk shape: the stored one when it fits the array's rank (a netcdf-c
    scalar's ``[1]`` does not fit a ``[]`` array), else netcdf-c's default; ``()`` for a
    shape ``[]`` array."""
    if storage.chunks is not None and len(storage.chunks) == len(shape):
        return tuple(storage.chunks)
    if not shape:
        return ()
    return netcdf_chunks([d.size for d in dimensions], [d.unlimited for d in dimensions], itemsize)


def netcdf_chunks(sizes: Sequence[int], unlimited: Sequence[bool], itemsize: int) -> tuple[int, ...]:
    """netcdf-c's default chunks (§2.11.2), unlimited dimensions taken as empty, as when a
    variable is defined before any data is written."""
    n = len(sizes)
    if n == 0:
        return (1,)
    if n == 1 and unlimited[0]:
        return (max(1, min(NETCDF_CHUNK_BYTES // itemsize, 4096) // itemsize),)
    if all(unlimited):
        return (int((NETCDF_CHUNK_BYTES / itemsize) ** (1 / n)),) * n
    fixed = [s for s, u in zip(sizes, unlimited) if not u]
    product = math.prod(max(1, s) for s in fixed) * itemsize
    scale = (NETCDF_CHUNK_BYTES / product) ** (1 / len(fixed))
    chunks = [1 if u else max(1, min(s, int(scale * s - 0.5))) for s, u in zip(sizes, unlimited)]
    while math.prod(chunks) * itemsize > 2**32 - 1:
        chunks = [max(1, c // 2) for c in chunks]
    for i, (s, u) in enumerate(zip(sizes, unlimited)):
        if not u and s > 0:
            count = -(-s // chunks[i])
            chunks[i] -= (count * chunks[i] - s) // count
    return tuple(chunks)


# -- netcdf-c's JSON dialect ---------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

_TO_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def dumps(obj: Any, *, byte_compatible: bool = False) -> bytes:
    """JSON as netcdf-c writes it (§1.4): ``", "`` between object members, ``","`` between
    list items, raw UTF-8, no newline. Floats are exact (shortest round-trip text) unless
    ``byte_compatible``, which writes them with ``%g`` as netcdf-c does and leaves control
    characters other than ``\\b \\f \\n \\r \\t`` raw as netcdf-c does (strict parsers reject
    those; otherwise they are written as ``\\u00XX``)."""
    return "".join(_dump(obj, byte_compatible)).encode()


def _dump(obj: Any, compat: bool) -> Iterator[str]:
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, str):
        yield _string(obj, compat)
    elif obj is None:
        yield "null"
    elif isinstance(obj, bool):
        yield "true" if obj else "false"
    elif isinstance(obj, int):
        yield str(obj)
    elif isinstance(obj, float):
        if not math.isfinite(obj):
            yield _string(str(_float_to_json(obj)), compat)
        else:
            yield f"{obj:g}" if compat else repr(obj)
    elif isinstance(obj, Mapping):
        yield "{"
        for i, (key, value) in enumerate(obj.items()):
            yield (", " if i else "") + _string(str(key), compat) + ": "
            yield from _dump(value, compat)
        yield "}"
    elif isinstance(obj, list | tuple):
        yield "["
        for i, value in enumerate(obj):
            if i:
                yield ","
            yield from _dump(value, compat)
        yield "]"
    else:
        raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _string(text: str, compat: bool) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match[0]
        if char in _ESCAPES:
            return _ESCAPES[char]
        # lone surrogates (bytes that were not UTF-8) cannot be written raw in either dialect
        return char if compat and char < "\ud800" else f"\\u{ord(char):04x}"

    return '"' + _TO_ESCAPE.sub(escape, text) + '"'


def loads(data: bytes, key: str) -> Any:
    """Parse a metadata document as netcdf-c does, accepting raw control characters and bare
    ``NaN``/``Infinity``; FormatError naming ``key`` when it is not JSON."""
    try:
        return load_json(data, key, strict=False)
    except MetadataError as exc:
        raise FormatError(str(exc)) from None


class RootDocuments(dict[str, bytes]):
    """The documents at a store's root as read (bytes by key), each parsed at most once:
    detecting the convention and reading the dataset both need the root ``zarr.json``,
    which holds the consolidated metadata of the whole tree."""

    def __init__(self, values: Mapping[str, bytes]) -> None:
        super().__init__(values)
        self._parsed: dict[str, Any] = {}

    @classmethod
    def read(cls, store: Store) -> RootDocuments:
        return cls(store.get_many(list(ROOT_DOCUMENT_KEYS)))

    def parsed(self, key: str) -> Any:
        """The document at ``key`` parsed (see :func:`loads`); not to be modified."""
        if key not in self._parsed:
            self._parsed[key] = loads(self[key], key)
        return self._parsed[key]


def root_document(root_documents: Mapping[str, bytes], key: str) -> Any:
    """The root document at ``key`` parsed, once when ``root_documents`` is RootDocuments."""
    if isinstance(root_documents, RootDocuments):
        return root_documents.parsed(key)
    return loads(root_documents[key], key)


# -- trees and references ------------------------------------------------------------------


def nczarr_problems(dataset: Dataset, only: Variable | None = None) -> list[str]:
    """What no NCZarr convention can store: names that are not store keys, reserved
    attribute names, dimension references that do not resolve (``only``: see
    :meth:`Convention.problems`)."""
    found: list[str] = []
    resolver = Resolver()
    for group, variables, whole in checked_scope(dataset, only):
        nodes = (*group.groups, *group.dimensions) if whole else ()
        for node in (*variables, *nodes):
            problem = key_name_problem(node.name)
            if problem is not None:
                found.append(f"{node.fqn}: {problem}")
        for node in group.types if whole else ():
            if not node.name or "/" in node.name or node.name.startswith("."):
                found.append(f"{node.fqn}: name {node.name!r} cannot be a Zarr key (no '/', no leading '.')")
        owners: list[Group | Variable] = [group, *variables] if whole else list(variables)
        for owner in owners:
            for attribute in owner.attributes:
                if attribute.name in RESERVED:
                    found.append(f"{attribute.fqn}: attribute name {attribute.name!r} is reserved")
        for variable in variables:
            for ref in variable.dimensions:
                if isinstance(ref, str) and resolver.dimension(group, ref) is None:
                    found.append(f"{variable.fqn}: dimension reference {ref!r} does not resolve")
    return found


#: The longest name of a variable, group or dimension in bytes of UTF-8: each can become a
#: file name in a directory store (255 bytes on ext4, XFS, APFS, NTFS...).
MAX_KEY_NAME_BYTES = 255


def key_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a variable, group or dimension (a store key, or the name of a
    coordinate variable) in any convention, or None: the same rules on every convention, so
    that a dataset can be copied to each. A name that is a metadata document's (in any case:
    some file systems fold case), that holds a backslash (a path separator on Windows,
    refused by the stores), or longer than a file name may be would make the store
    unreadable."""
    if not name or "/" in name or name.startswith("."):
        return f"name {name!r} cannot be a Zarr key (no '/', no leading '.')"
    if name.casefold() in _DOCUMENT_NAMES:
        return f"name {name!r} is the name of a Zarr metadata document"
    if "\\" in name:
        return f"name {name!r} cannot be a Zarr key (no backslash)"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_KEY_NAME_BYTES:
        return f"name {name[:20]!r}... is longer than {MAX_KEY_NAME_BYTES} bytes in UTF-8, the longest file name"
    return None


def default_maxstrlen(dataset: Group) -> int:
    """The root's ``_nczarr_default_maxstrlen``, else 128 (§2.8.3)."""
    return _int_attribute(dataset, DEFAULT_MAXSTRLEN) or DEFAULT_STRLEN


def maxstrlen(variable: Variable) -> int:
    """The stored length of a string variable's values (and the length in the types entry
    of its string attributes): its ``_nczarr_maxstrlen``, else the default (§2.8.3)."""
    own = _int_attribute(variable, MAXSTRLEN)
    group = variable.group
    return own or (default_maxstrlen(group.root) if group is not None else DEFAULT_STRLEN)


def _int_attribute(owner: Group | Variable, name: str) -> int | None:
    found = owner.find_attribute(name)
    if found is not None and isinstance(found.values, list) and found.values:
        return int(found.values[0])
    return None


def join_path(path: str, name: str) -> str:
    """A store path or key below ``path`` (``""`` is the root)."""
    return f"{path}/{name}" if path else name


def raw_fqn(node: Node) -> str:
    """A node's FQN as netcdf-c writes it in NCZarr metadata: the names unescaped, joined
    by ``/`` (netCDF names cannot hold ``/``); a detached node counts as a root child."""
    names: list[str] = []
    current: Node | None = node
    while current is not None and current.parent is not None:
        names.append(current.name)
        current = current.parent
    if current is not None and not isinstance(current, Group):
        names.append(current.name)
    return "/" + "/".join(reversed(names))


def node_at(root: Group, fqn: Any, kind: str, resolver: Resolver) -> Any:
    """The dimension or user type (``kind`` "dimensions" or "types") at a raw FQN, or None."""
    if not isinstance(fqn, str) or not fqn.startswith("/"):
        return None
    names = fqn.split("/")[1:]
    group = resolver.group(root, names[:-1])
    if group is None:
        return None
    return next((n for n in getattr(group, kind) if n.name == names[-1]), None)


def variable_dimensions(variable: Variable, resolver: Resolver) -> list[Dimension]:
    """The dimensions of a variable, anonymous ones as root dimensions named
    ``_Anonymous_Dim_<size>`` (how netcdf-c names dimensions an array does not name)."""
    dims = []
    for ref in variable.dimensions:
        if isinstance(ref, int):
            dims.append(Dimension(f"{ANONYMOUS_PREFIX}{ref}", ref))
            continue
        found = resolver.dimension(variable.group, ref)  # type: ignore[arg-type]
        if found is None:
            raise FormatError(f"{variable.fqn}: dimension reference {ref!r} does not resolve")
        dims.append(found)
    return dims


def anonymous_dimensions(dataset: Dataset) -> list[Dimension]:
    """The ``_Anonymous_Dim_<n>`` root dimensions that stand for the tree's anonymous
    dimensions, in order of first use."""
    sizes: dict[int, None] = {}
    for group in dataset.walk():
        for variable in group.variables:
            for ref in variable.dimensions:
                if isinstance(ref, int):
                    sizes[ref] = None
    return [Dimension(f"{ANONYMOUS_PREFIX}{n}", n) for n in sizes]


def drop_anonymous(dataset: Dataset) -> None:
    """Remove the root dimensions that stood for anonymous dimensions (every reference to
    them became a size)."""
    used = {
        ref
        for group in dataset.walk()
        for variable in group.variables
        for ref in variable.dimensions
        if isinstance(ref, str)
    }
    dataset.dimensions[:] = [
        d
        for d in dataset.dimensions
        if not (
            d.name.startswith(ANONYMOUS_PREFIX)
            and d.name[len(ANONYMOUS_PREFIX) :] == str(d.size)
            and not d.unlimited
            and d.name not in used
            and f"/{d.name}" not in used
        )
    ]


def reference_of(dimension_fqn: str, scope: Group, resolver: Resolver) -> str | int:
    """How a tree refers to a dimension read by FQN: its plain name when that resolves to it
    from ``scope``, else its FQN; an anonymous root dimension becomes its size."""
    names = dimension_fqn.split("/")[1:]
    name = names[-1]
    if len(names) == 1 and name.startswith(ANONYMOUS_PREFIX):
        size = name[len(ANONYMOUS_PREFIX) :]
        found = scope.root.find_dimension(name)
        if size.isdigit() and found is not None and found.size == int(size) and not found.unlimited:
            return int(size)
    target = resolver.group(scope.root, names[:-1])
    dimension = target.find_dimension(name) if target is not None else None
    if dimension is not None and resolver.dimension(scope, name) is dimension:
        return name
    return join_fqn(names)


def canonical_type_ref(fqn: str, scope: Group, resolver: Resolver) -> str:
    """How a tree refers to the user type at a raw FQN: its plain name when that resolves to
    it from ``scope``, else its (escaped) FQN."""
    names = fqn.split("/")[1:]
    target = node_at(scope.root, fqn, "types", resolver)
    if target is not None and resolver.type(scope, names[-1]) is target:
        return names[-1]
    return join_fqn(names)


def read_dimensions(group: Group, info: Mapping[str, Any], where: str) -> None:
    """Add the dimensions of an ``_nczarr_group`` object (``dimensions`` or ``dims``; a
    size, or ``{"size": n, "unlimited": 0|1}``) to ``group``."""
    dimensions = info.get("dimensions", info.get("dims", {}))
    if not isinstance(dimensions, dict):
        raise FormatError(f"{where}: dimensions must be an object, not {compact_json(dimensions)}")
    for name, value in dimensions.items():
        if isinstance(value, dict):
            size, unlimited = value.get("size"), bool(value.get("unlimited", 0))
        else:
            size, unlimited = value, False
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_ELEMENTS:
            raise FormatError(f"{where}: dimension {name!r} has no valid size: {compact_json(size)}")
        group.add_dimension(name, size, unlimited)


def object_member(obj: Mapping[str, Any], name: str, where: str) -> dict[str, Any]:
    """The member ``name`` of a document object, which must be an object when present
    (``{}`` when absent); FormatError naming ``where`` otherwise."""
    value = obj.get(name, {})
    if not isinstance(value, dict):
        raise FormatError(f"{where}: {name} must be a JSON object, not {compact_json(value)}")
    return value


def listed_children(info: Mapping[str, Any], where: str, *array_keys: str) -> tuple[list[str], list[str]]:
    """The names of the arrays (under the first of ``array_keys`` it has) and of the groups
    an ``_nczarr_group`` lists; FormatError naming ``where`` when a name is in both."""
    arrays, groups = _listed_names(info, where, *array_keys), _listed_names(info, where, "groups")
    both = set(arrays) & set(groups)
    if both:
        raise FormatError(f"{where}: {min(both)!r} is listed as an array and as a group")
    return arrays, groups


def _listed_names(info: Mapping[str, Any], where: str, *keys: str) -> list[str]:
    """The child names an ``_nczarr_group`` lists under the first of ``keys`` it has: a list
    of distinct names that are store keys (a name with ``/`` or of periods only would
    reach another node). FormatError naming ``where`` otherwise."""
    key = next((k for k in keys if k in info), keys[0])
    names = info.get(key, [])
    if not isinstance(names, list):
        raise FormatError(f"{where}: {key} must be a list of names, not {compact_json(names)}")
    for name in names:
        try:
            check_node_name(name)
        except MetadataError as exc:
            raise FormatError(f"{where}: {key}: {exc}") from None
    if len(set(names)) != len(names):
        raise FormatError(f"{where}: {key} lists a name twice: {compact_json(names)}")
    return names


def group_dimensions_json(dimensions: Sequence[Dimension], dict_form: bool) -> dict[str, Any]:
    """The ``dimensions`` of ``_nczarr_group``: netcdf-c 4.10.1 writes a fixed dimension as
    its size and an unlimited one as an object (§2.4); the v3 form is always the object."""
    return {
        d.name: {"size": d.size, "unlimited": int(d.unlimited)} if dict_form or d.unlimited else d.size
        for d in dimensions
    }


def read_dimension_refs(
    variable: Variable, refs: Any, shape: Sequence[int], where: str, resolver: Resolver
) -> None:
    """Set a variable's dimensions from the raw FQNs of ``dimension_references``, checking
    them against the array's shape."""
    group = variable.group
    assert group is not None
    if not isinstance(shape, list | tuple) or not all(isinstance(n, int) for n in shape):
        raise FormatError(f"{where}: shape {compact_json(shape)} is not a list of integers")
    if not isinstance(refs, list) or len(refs) != len(shape):
        raise FormatError(
            f"{where}: dimension references {compact_json(refs)} do not match shape {list(shape)}"
        )
    for ref, length in zip(refs, shape):
        dimension = node_at(group.root, ref, "dimensions", resolver)
        if dimension is None:
            raise FormatError(f"{where}: dimension reference {compact_json(ref)} is not declared")
        if not dimension.unlimited and dimension.size != length:
            raise FormatError(f"{where}: dimension {ref} has size {dimension.size}, the array {length}")
        variable.dimensions.append(reference_of(ref, group, resolver))


# -- metadata documents: from the consolidated copy or the store ----------------------------

#: The root keys a source reads first, by Zarr format: the root's documents and the
#: document that carries the consolidated copy (v3: inside ``zarr.json``).
_ROOT_KEYS = {3: (ZARR_JSON,), 2: (ZGROUP, ZATTRS, ZMETADATA)}
#: The superblock object of NCZarr 1.0.0 (netcdf-c 4.8.0 and 4.8.1-dev, §3.1).
V1_SUPERBLOCK = ".nczarr"
#: What is read at a store's root to detect its convention and read it.
ROOT_DOCUMENT_KEYS = (ZARR_JSON, ZGROUP, ZATTRS, ZARRAY, ZMETADATA, V1_SUPERBLOCK)
_DOCUMENT_NAMES = frozenset(k.casefold() for k in ROOT_DOCUMENT_KEYS)


def start_reading(
    convention: Convention, store: Store, use_consolidated: bool | None, root: RootDocuments | None
) -> tuple[DocumentSource, Dataset, StoredDataset]:
    """What every convention's ``read`` starts from: the documents' source, an empty tree of
    the convention's Zarr version, and the StoredDataset that will hold it."""
    source = DocumentSource(store, convention.zarr_format, use_consolidated, root)
    dataset = Dataset("", zarr_version=str(convention.zarr_format))
    return source, dataset, StoredDataset(dataset, consolidated=source.has_consolidated)


class DocumentSource:
    """Where a convention's reader gets a dataset's metadata documents (parsed JSON objects by
    store key). The root's documents are read once; when they carry consolidated metadata
    (v3: ``consolidated_metadata`` in the root ``zarr.json``; v2: ``.zmetadata``) every other
    document is served from it without reading the store, else from the store in batches.

    ``use_consolidated``: None uses the copy when there is one, False never does, True
    requires one (FormatError naming the key otherwise). ``root``: the root's documents when
    they have been read already (to detect the convention)."""

    def __init__(
        self,
        store: Store,
        zarr_format: Literal[2, 3],
        use_consolidated: bool | None = None,
        root: RootDocuments | None = None,
    ) -> None:
        self.store = store
        root_keys = _ROOT_KEYS[zarr_format]
        self._read_first = frozenset(root_keys)
        if root is None:
            root = RootDocuments(store.get_many(root_keys))
        self._root = {key: _object_document(root.parsed(key), key) for key in root_keys if key in root}
        #: Whether the store's root holds consolidated metadata (used or not).
        self.has_consolidated = ZMETADATA in self._root or "consolidated_metadata" in self._root.get(ZARR_JSON, {})
        if use_consolidated and not self.has_consolidated:
            raise FormatError(f"{root_keys[-1]}: the store holds no consolidated metadata (use_consolidated=True)")
        self._copy = _consolidated_documents(self._root, zarr_format) if use_consolidated is not False else None
        if zarr_format == 3 and ZARR_JSON in self._root:
            # readers want the root's own document; the copy is this source's business
            self._root[ZARR_JSON] = {k: v for k, v in self._root[ZARR_JSON].items() if k != "consolidated_metadata"}
        self._root.pop(ZMETADATA, None)

    def documents(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Those of ``keys`` that exist, each a JSON object (FormatError naming the key when a
        document is not one); read in one batch when they come from the store."""
        keys = list(keys)
        found = {key: self._root[key] for key in keys if key in self._root}
        rest = [key for key in keys if key not in found and key not in self._read_first]
        if self._copy is not None:
            return found | {key: self._copy[key] for key in rest if key in self._copy}
        return found | {key: _object_document(loads(value, key), key) for key, value in self.store.get_many(rest).items()}

    def document(self, key: str) -> dict[str, Any]:
        """The document at ``key``; FormatError when it is missing."""
        found = self.documents([key]).get(key)
        if found is None:
            raise MissingNodeError(f"{key}: missing")
        return found

    def children(self, path: str) -> list[str]:
        """The names below the group at ``path`` that may be nodes, sorted: the nodes in the
        consolidated copy, else the store's sub-prefixes."""
        if self._copy is None:
            # a listing naming "..", "." or "a/b" would lead a walk outside this group, or round it
            return [name for name in self.store.list_dir(path + "/" if path else "")[1] if is_node_name(name)]
        prefix = path + "/" if path else ""
        names = {key[len(prefix) :].partition("/")[0] for key in self._copy if key.startswith(prefix)}
        return sorted(name for name in names if any(f"{prefix}{name}/{doc}" in self._copy for doc in _NODE_KEYS))


_NODE_KEYS = (ZARR_JSON, ZARRAY, ZGROUP)


def _object_document(doc: Any, key: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise FormatError(f"{key}: not a JSON object")
    return doc


def _consolidated_documents(root: Mapping[str, dict[str, Any]], zarr_format: int) -> dict[str, dict[str, Any]] | None:
    """The node documents (by store key, the root's excluded) in the consolidated copy of a
    root's documents, or None when they carry none. The documents are taken as stored, not
    through typed metadata, so the readers see exactly what each node's writer wrote."""
    if zarr_format == 3:
        inline = root.get(ZARR_JSON, {}).get("consolidated_metadata")
        if inline is None:
            return None
        nodes = inline.get("metadata") if isinstance(inline, dict) and inline.get("kind") == "inline" else None
        if not isinstance(nodes, dict) or not all(isinstance(doc, dict) for doc in nodes.values()):
            raise FormatError(f"{ZARR_JSON}: consolidated_metadata is not inline metadata of JSON objects")
        return {join_path(path, ZARR_JSON): doc for path, doc in nodes.items()}
    zmetadata = root.get(ZMETADATA)
    if zmetadata is None:
        return None
    docs = zmetadata.get("metadata")
    if zmetadata.get("zarr_consolidated_format") != 1 or not isinstance(docs, dict):
        raise FormatError(f"{ZMETADATA}: not zarr_consolidated_format 1 metadata")
    for key, doc in docs.items():
        if key.rpartition("/")[2] not in (ZARRAY, ZGROUP, ZATTRS) or not isinstance(doc, dict):
            raise FormatError(f"{ZMETADATA}: {key!r} is not a Zarr v2 node document")
    return {key: doc for key, doc in docs.items() if "/" in key}


def consolidated_copy(documents: Mapping[str, bytes], zarr_format: Literal[2, 3]) -> tuple[str, bytes]:
    """The key and bytes of the document that carries the consolidated metadata of a
    hierarchy's ``documents`` (every node's, by store key): v3 the root ``zarr.json`` with
    the inline copy, as zarr-python 3 writes it; v2 ``.zmetadata``.

    The documents go in as the bytes they are (parsing and writing every one again cost as
    much as computing them): for v3 only groups are rewritten, as zarr-python gives each
    group in the copy an empty copy of its own."""
    if zarr_format == 3:
        entries = []
        nodes = sorted(
            ((key.rpartition("/")[0], value) for key, value in documents.items() if key != ZARR_JSON),
            key=consolidated_order,
        )
        for path, value in nodes:
            text = value.decode()
            if b'"node_type": "group"' in value:
                group = parse_node({ZARR_JSON: value}, path)
                text = dump_json(replace(group, consolidated={}).to_json()).decode()  # type: ignore[type-var]
            entries.append(f"{json.dumps(path, ensure_ascii=False)}: {text}")
        root = parse_node({ZARR_JSON: documents[ZARR_JSON]})
        assert isinstance(root, GroupMetadataV3)  # every convention's root is a group
        copy = '{"kind": "inline", "must_understand": false, "metadata": {' + ", ".join(entries) + "}}"
        # zarr-python's key order: attributes, zarr_format, consolidated_metadata, node_type
        rest = root.to_json()
        head = {"attributes": rest.pop("attributes"), "zarr_format": rest.pop("zarr_format")}
        text = dump_json(head)[:-1] + b', "consolidated_metadata": ' + copy.encode() + b", " + dump_json(rest)[1:]
        return ZARR_JSON, text
    # v2 documents go in as written: typed v2 metadata would rewrite netcdf-c's char
    # dtype ">S1" as "|S1", which netcdf-c and nczarr read as a string
    metadata = ", ".join(f"{json.dumps(key, ensure_ascii=False)}: {documents[key].decode()}" for key in sorted(documents))
    return ZMETADATA, ('{"metadata": {' + metadata + '}, "zarr_consolidated_format": 1}').encode()
