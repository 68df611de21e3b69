"""Attribute values and their JSON (§2.10): typed values to JSON and back, checked against
their type's range, and the types netcdf-c infers for attributes without a types entry."""

from __future__ import annotations

import math

from nczarr.errors import FormatError
from nczarr.formats.dialect import compact_json, float_to_json
from nczarr.model import AtomicType, AttributeValue
from nczarr.values.types import float32
from nczarr.zarr.jsonvalue import JSON


def values_to_json(type: AtomicType, values: list[AttributeValue] | str) -> JSON:
    """The JSON of an attribute's values (§2.10.1): one value bare, several as a list; NaN
    and infinities as quoted strings; char text as one string."""
    if type is AtomicType.CHAR:
        return values
    if type is AtomicType.STRING:
        items: list[JSON] = [str(v) for v in values]
    elif type.is_float:
        convert = float32 if type is AtomicType.FLOAT else float
        items = [float_to_json(convert(float(v))) for v in values]
    else:
        items = [int(v) for v in values]
    return items[0] if len(items) == 1 else items


def values_from_json(type: AtomicType, data: JSON, where: str) -> list[AttributeValue] | str:
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


def _json_float(value: JSON) -> float:
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


def _json_int(value: JSON) -> int:
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        return math.trunc(value)  # netcdf-c converts with C truncation
    raise TypeError(value)


def infer_attribute(data: JSON) -> tuple[AtomicType, list[AttributeValue] | str]:
    """An attribute without a types entry, typed as netcdf-c infers it (§2.10.4)."""
    first = data[0] if isinstance(data, list) and data else data
    atomic = all(
        isinstance(v, bool | int | float | str) for v in (data if isinstance(data, list) else [data])
    )
    if data == [] or not atomic or (isinstance(first, str) and isinstance(data, list)):
        return AtomicType.CHAR, compact_json(data)
    if isinstance(first, str):
        return AtomicType.CHAR, first
    if isinstance(first, bool):
        type = AtomicType.UBYTE
    elif isinstance(first, float):
        type = AtomicType.DOUBLE
    else:
        assert isinstance(first, int)  # every item is a bool, int, float or str
        type = _integer_type(first)
    return type, values_from_json(type, data, "inferred attribute")


def _integer_type(first: int) -> AtomicType:
    """The type netcdf-c infers for integers from the first one."""
    if 0 <= first <= 2**31 - 1 or -(2**31) <= first < 0:
        return AtomicType.INT
    if 0 < first <= 2**32 - 1:
        return AtomicType.UINT
    if -(2**63) <= first <= 2**63 - 2:
        return AtomicType.INT64
    return AtomicType.UINT64
