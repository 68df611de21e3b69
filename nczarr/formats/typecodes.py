"""How NCZarr spells netCDF's atomic types: v2 ``dtype`` strings as netcdf-c writes and reads
them (§2.8), v3 data type names (§5.3), and the entries of attribute types maps (§2.10.2)."""

from __future__ import annotations

import json
import re

import numpy as np

from nczarr.errors import FormatError
from nczarr.formats.keys import DEFAULT_STRLEN
from nczarr.model import AtomicType
from nczarr.values.types import NUMPY_CODE

#: The atomic types by their netCDF names (``"int"``, ``"char"``...).
ATOMIC_BY_NAME = {t.value: t for t in AtomicType}
_TYPE_OF_CODE = {code: t for t, code in NUMPY_CODE.items()}
#: v3 data type names of the numeric types (§5.3).
V3_NAME = {t: np.dtype(code).name for t, code in NUMPY_CODE.items()}
_TYPE_OF_V3_NAME = {name: t for t, name in V3_NAME.items()}
_V2_TYPESTR = re.compile(r"([<>|]?)([a-zA-Z])(\d+)")


def v2_typestr(type: AtomicType, endian: str = "little", strlen: int = DEFAULT_STRLEN) -> str:
    """The v2 ``dtype`` netcdf-c writes (§2.8.1): always an explicit byte order for numbers,
    ``>S1`` for char, ``|S<n>`` for string."""
    if type is AtomicType.CHAR:
        return ">S1"
    if type is AtomicType.STRING:
        return f"|S{strlen}"
    return (">" if endian == "big" else "<") + NUMPY_CODE[type]


def parse_v2_typestr(text: object, where: str, nczarr: bool = True) -> tuple[AtomicType, int]:
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


def parse_type_code(code: object, where: str) -> AtomicType | None:
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
