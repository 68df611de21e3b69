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
    and infinities as quoted strings; char text as one string; a NULL string (CDL's NIL) as
    null."""
    if type is AtomicType.CHAR:
        return values
    if type is AtomicType.STRING:
        items: list[JSON] = [None if v is None else str(v) for v in values]
    elif type.is_float:
        convert = float32 if type is AtomicType.FLOAT else float
        items = [float_to_json(convert(float(v))) for v in values]
    else:
        items = [int(v) for v in values]
    return items[0] if len(items) == 1 else items


def as_netcdf_c_writes(type: AtomicType, values: list[AttributeValue] | str) -> list[AttributeValue] | str:
    """Text values as netcdf-c writes them to Zarr v2, which netcdf-c 4.10.1 reads: each up to
    its first NUL (its C strings end there; it reads an escaped NUL as the text ``u0000``, so
    a char attribute's trailing NUL must not be written); a NULL string as "" (netcdf-c 4.10.1
    writes NIL so: its Zarr has no NULL string)."""
    if type is AtomicType.CHAR:
        assert isinstance(values, str)
        return values.split("\x00", 1)[0]
    if type is AtomicType.STRING:
        return ["" if v is None else str(v).split("\x00", 1)[0] for v in values]
    return values


def values_from_json(type: AtomicType, data: JSON, where: str) -> list[AttributeValue] | str:
    """Attribute values of ``type`` from their JSON (§2.10.3), numbers checked against the
    type's range; FormatError naming ``where`` otherwise."""
    if type is AtomicType.CHAR:
        return data if isinstance(data, str) else compact_json(data)
    items = data if isinstance(data, list) else [data]
    try:
        if type is AtomicType.STRING:  # null: a NULL string
            # a bare NaN or Infinity is the text "NaN"/"Infinity" as nczarr wrote it before
            # 2026-11-29 (its v3 writer took the text for the float)
            items = [compact_json(v) if isinstance(v, float) and not math.isfinite(v) else v for v in items]
            if not all(v is None or isinstance(v, str) for v in items):
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
    """An attribute without a types entry, typed as netcdf-c infers it (§2.10.4) from the first
    element of a list. Where netcdf-c would fail or wrap around, the attribute stays readable:
    integers take the smallest type that holds them all, and what no type holds (strings mixed
    with numbers, integers beyond uint64) is char holding the compact JSON text."""
    items = data if isinstance(data, list) else [data]
    first = items[0] if items else None
    atomic = all(isinstance(v, bool | int | float | str) for v in items)
    if not items or not atomic or (isinstance(first, str) and isinstance(data, list)):
        return AtomicType.CHAR, compact_json(data)
    if isinstance(first, str):
        return AtomicType.CHAR, first
    if any(isinstance(v, str) for v in items):
        return AtomicType.CHAR, compact_json(data)  # netcdf-c 4.10.1 aborts on these
    if isinstance(first, bool):
        type: AtomicType | None = AtomicType.UBYTE
    elif isinstance(first, float):
        type = AtomicType.DOUBLE
    else:
        assert isinstance(first, int)  # every item is a bool, int or float
        integers = [v for v in items if isinstance(v, int) and not isinstance(v, bool)]
        type = _integer_type(min(integers), max(integers)) if len(integers) == len(items) else _integer_type(first)
    if type is None:
        return AtomicType.CHAR, compact_json(data)
    try:
        return type, values_from_json(type, data, "inferred attribute")
    except FormatError:  # a later value out of the first one's range
        return AtomicType.CHAR, compact_json(data)


#: The integer types netcdf-c infers, in order, with the range it gives each (int64 stops
#: one short of its maximum).
_INFERRED_INTEGERS = (
    (AtomicType.INT, -(2**31), 2**31 - 1),
    (AtomicType.UINT, 0, 2**32 - 1),
    (AtomicType.INT64, -(2**63), 2**63 - 2),
    (AtomicType.UINT64, 0, 2**64 - 1),
)


def _integer_type(low: int, high: int | None = None) -> AtomicType | None:
    """The type netcdf-c infers for an integer (netcdf-c: the first one), or the smallest of
    its candidates that holds ``low`` to ``high``; None when none does."""
    high = low if high is None else high
    return next((t for t, lo, hi in _INFERRED_INTEGERS if lo <= low and high <= hi), None)
