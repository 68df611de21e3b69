"""Fill values in Zarr metadata (§2.9): as netcdf-c writes ``fill_value``, as xarray writes a v3
``_FillValue`` attribute, and as netCDF's fill value of a type when read back."""

from __future__ import annotations

import base64
import math
import struct

import numpy as np

from nczarr.errors import FormatError
from nczarr.formats.attributes import values_from_json, values_to_json
from nczarr.model import AtomicType, AttributeValue, Variable
from nczarr.values.types import DEFAULT_FILL, NetcdfView, float32
from nczarr.zarr.jsonvalue import JSON


def fill_json(type: AtomicType, value: AttributeValue) -> JSON:
    """A fill value as netcdf-c writes it in ``fill_value`` (§2.9)."""
    if type is AtomicType.CHAR:
        return "" if value == "\x00" else value
    if type is AtomicType.STRING:
        return value
    return values_to_json(type, [value])


def is_default_fill(type: AtomicType, value: object) -> bool:
    """Whether a fill value read back is the netCDF default for ``type`` (netcdf-c writes
    float defaults rounded to 6 digits, §2.9)."""
    default = DEFAULT_FILL[type]
    if type.is_float:
        return isinstance(value, float) and f"{value:g}" == f"{default:g}"
    if type is AtomicType.CHAR:
        return value in ("", "\x00")
    return value == default


def fill_to_netcdf(type: AtomicType, fill: object) -> AttributeValue:
    """An engine fill value (numpy scalar, bytes, str; a char stored as uint8 is a number)
    as netCDF's fill value of ``type``."""
    if isinstance(fill, np.void):
        fill = fill.tobytes()
    elif isinstance(fill, np.datetime64 | np.timedelta64):  # NaT included: their int64
        fill = int(np.array(fill).view(np.int64))
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
        assert isinstance(fill, int | float)  # the engine's fill of a float array
        return float(fill)
    if isinstance(fill, bool):  # a Zarr bool read as ubyte
        return int(fill)
    return int(fill) if isinstance(fill, float) and math.isfinite(fill) else fill


def keep_fill(variable: Variable, type: AtomicType, fill: AttributeValue) -> None:
    """Give a variable read without a ``_FillValue`` attribute one when its stored fill value
    is not the netCDF default, so the fill is not lost."""
    if variable.find_attribute("_FillValue") is None and not is_default_fill(type, fill):
        variable.add_attribute("_FillValue", type, fill if type is AtomicType.CHAR else [fill])


def add_view_attributes(variable: Variable, view: NetcdfView) -> None:
    """Give a variable read from a Zarr data type netCDF lacks the attributes its netCDF view
    adds (CF ``units`` and ``calendar``, ``_FillValue``), where the store gave none."""
    for name, (type, values) in view.attributes.items():
        if variable.find_attribute(name) is None:
            variable.add_attribute(name, type, values)


def added_view_attributes(variable: Variable, view: NetcdfView) -> list[str]:
    """The names of the attributes :func:`add_view_attributes` gives that still hold what it
    gave (they are not written back: the stored data type says it all)."""
    return [
        name
        for name, (type, values) in view.attributes.items()
        if (found := variable.find_attribute(name)) is not None and (found.type, found.values) == (type, values)
    ]


_SPECIAL = ("NaN", "Infinity", "-Infinity")


def char_byte(text: str) -> bytes:
    """The byte a char value stands for: its first character in Latin-1 (NUL when empty)."""
    return text[:1].encode("latin-1", errors="replace") or b"\x00"


def xarray_fill_json(type: AtomicType, values: list[AttributeValue] | str, char_as_number: bool) -> JSON:
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


def xarray_fill_value(type: AtomicType, data: JSON, where: str) -> list[AttributeValue] | str:
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
