"""The value rules: stored netCDF values and what a user reads and writes, as netCDF4-python's
automatic conversions make them.

Reading: ``_Unsigned`` view, masking (``missing_value``, ``_FillValue`` or the default fill,
``valid_range``/``valid_min``/``valid_max``), unpacking with ``scale_factor``/``add_offset``,
and char arrays to strings for ``S1`` variables with ``_Encoding``. Writing: the reverse
(strings to chars, ``least_significant_digit`` rounding, packing, filling masked values).
Also the casts of ``_FillValue`` and ``valid_*`` values to a variable's type. The rules,
including their quirks, are netCDF4-python's; the tests compare with it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy import ma

from nczarr.errors import (
    ArgumentError,
    AttributeNotFoundError,
    DatasetStateError,
    DataTypeError,
    TextEncodeError,
    ValueRangeError,
)
from nczarr.values.strings import chartostring, stringtochar
from nczarr.values.types import default_fillvals

__all__ = [
    "Conversion",
    "cast_fill_value",
    "cast_valid_attribute",
    "decode",
    "encode",
    "fill_value_for_get",
    "is_safe_cast",
    "round_to_digit",
    "strings_in",
    "vlen_in",
]

_Value = TypeVar("_Value")
_BYTE_TYPES = ("i1", "u1")
_VALID_ATTRIBUTES = ("missing_value", "valid_min", "valid_max", "valid_range")
#: Attributes that mask with one value (missing_value may hold several, valid_range two).
_SINGLE_VALUED = ("_FillValue", "valid_min", "valid_max")
_INVALID_PACKING = "invalid scale_factor or add_offset attribute, no unpacking done..."


@dataclass
class Conversion:
    """What a variable's attributes and switches say about its values."""

    dtype: np.dtype
    attributes: Mapping[str, object]
    mask: bool = True
    scale: bool = True
    always_mask: bool = True
    chartostring: bool = True
    fill_mode: bool = True  # False when created with fill_value=False (set_fill_off() is not it)
    is_vlen: bool = False
    is_enum: bool = False
    name: str = ""

    @property
    def key(self) -> str:
        """The dtype code netCDF4 looks fill values up by (``'i2'``, ``'S1'``...)."""
        return np.dtype(self.dtype).str[1:]

    @property
    def is_char(self) -> bool:
        """An ``S1`` (NC_CHAR) variable."""
        dtype = np.dtype(self.dtype)
        return dtype.kind == "S" and dtype.itemsize == 1

    @property
    def unsigned(self) -> bool:
        """``_Unsigned`` asks to read this signed integer variable as unsigned."""
        flag = self.attributes.get("_Unsigned", False)
        # an odd value (a list, a number) written by another tool is no "true": not unsigned
        return isinstance(flag, str) and flag in ("true", "True") and np.dtype(self.dtype).kind == "i"


def is_safe_cast(original: object, cast: object) -> bool:
    """Whether ``cast`` holds the same values as ``original`` (NaN equal to NaN); False for
    values without ``all()`` (plain Python numbers), as netCDF4's ``_safecast``."""
    a: Any = original
    b: Any = cast
    try:
        return bool(((a == b) | (np.isnan(a) & np.isnan(b))).all())
    except Exception:
        try:
            return bool((a == b).all())  # strings: isnan is undefined
        except Exception:
            return False


def _is_nan(value: object) -> bool:
    try:
        return bool(np.isnan(value))  # type: ignore[call-overload]
    except TypeError:
        return False


def _unsigned_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"{dtype.byteorder}u{dtype.itemsize}")


def _usable_attribute(conversion: Conversion, name: str) -> np.ndarray | None:
    """The attribute as an array of the variable dtype, or None when it is absent or the cast
    would change it (then with netCDF4's warning)."""
    if name not in conversion.attributes:
        return None
    value = np.array(conversion.attributes[name])
    if name in _SINGLE_VALUED and value.size != 1:
        # netCDF4 fails on the shapes with numpy's broadcasting error; another tool's odd
        # attribute should not make the data unreadable
        warnings.warn(f"WARNING: {name} not used since it holds {value.size} values, not one", stacklevel=4)
        return None
    try:
        cast = np.array(value, conversion.dtype)
    except ValueError:
        cast = None
    if cast is None or not is_safe_cast(value, cast):
        warnings.warn(
            f"WARNING: {name} not used since it\ncannot be safely cast to variable data type",
            stacklevel=4,
        )
        return None
    return cast


def _packing_is_valid(attributes: Mapping[str, object]) -> bool:
    """Whether the packing attributes are single numbers (netCDF4 also takes text that reads
    as a number, such as "NaN", and then fails to multiply by it)."""
    for name in ("scale_factor", "add_offset"):
        if name in attributes:
            value = np.asarray(attributes[name])
            if value.size != 1 or value.dtype.kind not in "biuf":
                return False
    return True


def decode(raw: np.ndarray, conversion: Conversion, *, whole_last_axis: bool) -> np.ndarray:
    """The user view of stored values ``raw`` (a selection of the variable, in result shape).

    ``whole_last_axis``: the selection keeps the variable's last axis with all its elements
    (only then do ``S1`` variables with ``_Encoding`` come back as strings). The result is
    a masked array when masking applies (``numpy.ma.masked`` for a masked scalar).
    """
    attributes = conversion.attributes
    packing_valid = _packing_is_valid(attributes)
    if not packing_valid and conversion.scale:
        warnings.warn(_INVALID_PACKING, stacklevel=2)

    data: Any = raw
    if conversion.mask and not conversion.is_vlen:
        data = _masked(raw, conversion)
    elif conversion.scale and conversion.unsigned and raw.dtype.kind == "i":  # not VLEN objects
        data = raw.view(_unsigned_dtype(raw.dtype))

    if conversion.scale and packing_valid and not conversion.is_enum:
        data = _unpacked(data, attributes)

    if (
        conversion.chartostring
        and conversion.is_char
        and "_Encoding" in attributes
        and whole_last_axis
        and np.ndim(data) > 0
    ):
        data = chartostring(data, encoding=str(attributes["_Encoding"]))
    return data  # type: ignore[no-any-return]


def _masked(data: np.ndarray, conversion: Conversion) -> Any:
    """``data`` as a masked array per the variable's missing/fill/valid attributes."""
    dtype = np.dtype(conversion.dtype)
    view_unsigned = conversion.scale and conversion.unsigned
    if view_unsigned:
        data = data.view(_unsigned_dtype(dtype))

    def as_data(value: np.ndarray) -> np.ndarray:
        return value.view(_unsigned_dtype(dtype)) if view_unsigned else value

    masks: list[np.ndarray] = []  # OR-ed once at the end: one pass and no zeros for the usual single test
    fill_value: Any = None

    missing = _usable_attribute(conversion, "missing_value")
    if missing is not None:
        missing = as_data(missing)
        candidates = [missing] if missing.shape == () else list(missing)
        missing_mask = np.zeros(data.shape, np.bool_)
        for candidate in candidates:
            missing_mask |= np.isnan(data) if _is_nan(candidate) else data == candidate
        if missing_mask.any():
            fill_value = candidates[0]
            masks.append(missing_mask)

    declared_fill = _usable_attribute(conversion, "_FillValue")
    if declared_fill is not None:
        fill = as_data(declared_fill)
        masks.append(np.isnan(data) if _is_nan(fill) else data == fill)
    elif not conversion.is_vlen and (conversion.fill_mode or conversion.key not in _BYTE_TYPES):
        # The library default masks too, but not for bytes whose fill is off (netCDF4 #209),
        # and it is compared with the data as stored, without the _Unsigned view.
        masks.append(data == np.array(default_fillvals[conversion.key], dtype))

    valid_range = _usable_attribute(conversion, "valid_range")
    valid_min = _usable_attribute(conversion, "valid_min")
    valid_max = _usable_attribute(conversion, "valid_max")
    low: np.ndarray | None
    high: np.ndarray | None
    if valid_range is not None and valid_range.size == 2:
        low, high = np.array(valid_range[0]), np.array(valid_range[1])
    else:
        low, high = valid_min, valid_max
    if dtype.kind != "S":  # never for char data
        if low is not None:
            masks.append(data < as_data(low))
        if high is not None:
            masks.append(data > as_data(high))

    # The masked array's fill: the first missing value if any matched, else _FillValue, else
    # the default (a Python int for bytes, which numpy refuses under the _Unsigned view).
    if fill_value is None:
        if declared_fill is not None:
            fill_value = declared_fill
        elif conversion.key in _BYTE_TYPES:
            fill_value = default_fillvals[conversion.key]
        else:
            fill_value = np.array(default_fillvals[conversion.key], dtype)

    mask = masks[0] if masks else np.zeros(data.shape, np.bool_)
    for more in masks[1:]:
        mask |= more
    masked_any = bool(mask.any())
    result = ma.masked_array(data, mask=mask, fill_value=fill_value) if masked_any else (
        ma.masked_array(data)
    )
    if result.shape == () and result.mask.all():
        return result[()]  # the np.ma.masked constant
    if not conversion.always_mask and not masked_any:
        return np.asarray(result)
    return result


def _unpacked(data: Any, attributes: Mapping[str, object]) -> Any:
    has_scale, has_offset = "scale_factor" in attributes, "add_offset" in attributes
    scale: Any = attributes.get("scale_factor")
    offset: Any = attributes.get("add_offset")
    if has_scale and has_offset:
        if offset != 0.0 or scale != 1.0:
            return data * scale + offset
        return data.astype(np.asarray(scale).dtype)  # netCDF4 #913: the type still changes
    if has_scale and scale != 1.0:
        return data * scale
    if has_offset and offset != 0.0:
        return data + offset
    return data


def encode(
    data: object,
    conversion: Conversion,
    *,
    strlen: int | None,
    least_significant_digit: int | None = None,
) -> np.ndarray:
    """Stored values of ``conversion.dtype`` for ``data`` assigned by the user to a primitive
    or enum variable, in ``data``'s shape (the caller broadcasts). ``strlen``: the length of
    the variable's last dimension.

    The result may be ``data`` itself when nothing needs converting; it is never modified.
    """
    dtype = np.dtype(conversion.dtype)
    attributes = conversion.attributes
    if conversion.chartostring and conversion.is_char and "_Encoding" in attributes:
        data = _chars(data, str(attributes["_Encoding"]), strlen)

    if isinstance(data, np.generic):
        data = np.asarray(data)  # numpy scalars keep their type, as arrays do
    elif not isinstance(data, np.ndarray):
        as_float = (
            conversion.scale and dtype.kind in "iu" and "scale_factor" in attributes
        ) or "add_offset" in attributes  # netCDF4's precedence: add_offset alone suffices
        data = np.array(data, np.float64 if as_float else dtype)

    if least_significant_digit is not None:
        data = round_to_digit(data, least_significant_digit)

    if conversion.scale and not conversion.is_vlen and not conversion.is_enum:
        data = _packed(data, conversion)
    if ma.isMA(data):
        data = ma.getdata(data)  # with scaling off, masked positions keep what they hold
    return np.asarray(data if data.dtype == dtype else data.astype(dtype))


def _chars(data: Any, encoding: str, strlen: int | None) -> Any:
    """Strings assigned to an ``S1`` variable with ``_Encoding``, as an array of chars."""
    if type(data) in (str, bytes):
        data = np.asarray(data, dtype=f"{'S' if encoding == 'ascii' else 'U'}{strlen}")
    if data.dtype.kind in "SU" and data.dtype.itemsize > 1:
        data = stringtochar(data, encoding=encoding, n_strlen=strlen)
    return data


def _packed(data: np.ndarray, conversion: Conversion) -> np.ndarray:
    """Packing with ``scale_factor``/``add_offset`` and filling of masked values."""
    dtype = np.dtype(conversion.dtype)
    attributes: Mapping[str, Any] = conversion.attributes
    has_scale, has_offset = "scale_factor" in attributes, "add_offset" in attributes
    if has_offset:
        data = data - attributes["add_offset"]
    if has_scale:
        data = data / attributes["scale_factor"]
    if (has_scale or has_offset) and dtype.kind in "iu":
        data = np.around(data)
    if data.dtype != dtype:
        data = data.astype(dtype)
    if not ma.isMA(data):
        return data
    if "missing_value" in attributes and np.all(
        np.isin(data.data[data.mask], attributes["missing_value"])
    ):
        return data.data  # masked positions already hold missing values
    return data.filled(fill_value=_write_fill(conversion))


def _write_fill(conversion: Conversion) -> Any:
    """The value masked positions are written as."""
    attributes: Mapping[str, Any] = conversion.attributes
    if "missing_value" in attributes:
        if np.shape(attributes["missing_value"]) != ():
            raise DatasetStateError(
                "cannot assign fill_value for masked array when missing_value attribute "
                "is not a scalar"
            )
        return attributes["missing_value"]
    if "_FillValue" in attributes:
        return attributes["_FillValue"]
    return default_fillvals[conversion.key]


def round_to_digit(data: np.ndarray, least_significant_digit: int) -> np.ndarray:
    """Round ``data`` to a power of two finer than ``10**-least_significant_digit``
    (netCDF4's ``least_significant_digit``, ``netCDF4.utils._quantize``); masked input keeps
    its fill value."""
    exponent = np.log10(10.0 ** -least_significant_digit)
    exponent = int(np.floor(exponent)) if exponent < 0 else int(np.ceil(exponent))
    scale = 2.0 ** np.ceil(np.log2(10.0 ** -exponent))
    result: np.ndarray = np.around(scale * data) / scale
    if isinstance(result, ma.MaskedArray) and isinstance(data, ma.MaskedArray):
        result.set_fill_value(data.fill_value)
    return result


def cast_valid_attribute(name: str, value: object, dtype: np.dtype, where: str = "") -> object:
    """``value`` for attribute ``name`` set through attribute syntax on a primitive variable:
    ``missing_value``/``valid_*`` are cast to ``dtype`` when that keeps the values, else kept
    with a warning; other attributes are returned unchanged. A value numpy cannot cast at all
    (300 for ``u1``, NaN for an integer type) raises as in netCDF4."""
    if name not in _VALID_ATTRIBUTES:
        return value
    cast = _cast(value, dtype, f"{name} {where}".rstrip())
    if is_safe_cast(np.array(value), cast):
        return cast
    warnings.warn(f"WARNING: {name} cannot be safely cast to variable dtype", stacklevel=2)
    return value


def cast_fill_value(value: object, dtype: np.dtype, where: str) -> np.ndarray:
    """``value`` as the one ``_FillValue`` of a variable of ``dtype``, cast as netCDF4 does
    (``numpy.array(value, dtype)``: floats are truncated, text is parsed, char text is cut to
    one byte) with netCDF4's errors, each also an :class:`~nczarr.errors.NCZarrError`.

    Stricter than netCDF4 where it would store another value without a word: a numpy integer
    out of range (300 would become 44), a numpy NaN or infinity for an integer type, a finite
    number beyond the range of ``float32`` (it would become infinity)."""
    what = f"_FillValue {where}"
    with np.errstate(over="ignore", invalid="ignore"):  # refused below rather than warned
        cast = _cast(value, dtype, what)
    if cast.size != 1:
        raise AttributeNotFoundError("NetCDF: Invalid argument")  # netCDF4's error for several values
    source = np.asarray(value)
    if source.dtype.kind in "biuf" and cast.dtype.kind in "iuf":
        _check_kept(source.item(), cast, what)
    return cast


def _cast(value: object, dtype: np.dtype, what: str) -> np.ndarray:
    """``numpy.array(value, dtype)`` with numpy's errors (netCDF4's) as nczarr errors."""
    try:
        return np.array(value, dtype)
    except OverflowError as exc:
        raise ValueRangeError(f"{what}: {value!r} does not fit {np.dtype(dtype)}: {exc}") from exc
    except UnicodeEncodeError as exc:
        raise TextEncodeError(exc.encoding, exc.object, exc.start, exc.end, f"{what}: {exc.reason}") from exc
    except ValueError as exc:
        raise ArgumentError(f"{what}: {value!r} is not a value of type {np.dtype(dtype)}: {exc}") from exc
    except TypeError as exc:
        raise DataTypeError(f"{what}: {value!r} is not a value of type {np.dtype(dtype)}: {exc}") from exc


def _check_kept(number: float | int, cast: np.ndarray, what: str) -> None:
    """Refuse a cast that changed a number beyond rounding (numpy casts numpy scalars without
    checking their range)."""
    dtype = cast.dtype
    if dtype.kind == "f":
        if math.isfinite(number) and not np.isfinite(cast).all():
            raise ValueRangeError(f"{what}: {number!r} is beyond the range of {dtype}")
        return
    if isinstance(number, float):
        if math.isnan(number):
            raise ArgumentError(f"{what}: cannot convert float NaN to integer ({dtype})")
        if math.isinf(number):
            raise ValueRangeError(f"{what}: cannot convert float infinity to integer ({dtype})")
    info = np.iinfo(dtype)
    if not info.min <= int(number) <= info.max:
        raise ValueRangeError(f"{what}: {number!r} is out of the range of {dtype} ({info.min} to {info.max})")


def fill_value_for_get(
    dtype: np.dtype, fill_attribute: _Value | None, fill_mode: bool, *, is_primitive: bool = True
) -> _Value | np.ndarray | None:
    """What ``Variable.get_fill_value()`` returns: None when the variable is not pre-filled,
    else its ``_FillValue`` attribute, else the default as a 0-d array of ``dtype`` (None for
    non-primitive types)."""
    if not fill_mode:
        return None
    if fill_attribute is not None:
        return fill_attribute
    if not is_primitive:
        return None
    return np.array(default_fillvals[np.dtype(dtype).str[1:]], dtype)


# -- strings and vlens assigned by the user ----------------------------------------------------


def strings_in(data: object) -> np.ndarray:
    """Data assigned to a string variable as raw values: an object array of ``str`` (bytes
    decoded as UTF-8), with netCDF4's errors for masked and non-text arrays."""
    if isinstance(data, np.ma.MaskedArray):
        raise DataTypeError("masked arrays cannot be assigned to VLEN str variable slices")
    if isinstance(data, (str, bytes)):
        return np.array(data if isinstance(data, str) else data.decode(), object)
    array = np.asarray(data)
    if array.dtype.kind not in "USO":
        raise DataTypeError("only numpy string, unicode or object arrays can be assigned to VLEN str var slices")
    out = np.empty(array.shape, object)
    flat = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        flat[i] = item.decode() if isinstance(item, bytes) else str(item)
    return out


def vlen_in(data: object, conversion: Conversion) -> np.ndarray:
    """Data assigned to a vlen variable as raw values: an object array of 1-D arrays of
    ``conversion.dtype``.

    One sequence (an array that is not of objects, or a list of numbers) is one element and,
    as netCDF4 does, packed with ``scale_factor``/``add_offset`` when scaling is on
    (``round((x - add_offset) / scale_factor)``, then cast to the base type); with scaling
    off it must already be of the base type. An object array holds elements of the base type.
    """
    dtype = np.dtype(conversion.dtype)
    if isinstance(data, list) and all(isinstance(item, (int, float, np.number)) for item in data):
        data = np.asarray(data)
    array = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
    if array.dtype != object:
        item = _packed(array, conversion) if conversion.scale else array
        if item.dtype != dtype:
            raise DataTypeError(f"wrong data type: should be {dtype}, got {item.dtype}")
        single = np.empty((), object)
        single[()] = np.asarray(item).reshape(-1)
        return single
    out = np.empty(array.shape, object)
    flat = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        item = np.asarray(item)
        if item.dtype != dtype:
            raise DataTypeError(f"vlen data must be arrays of {dtype}, got {item.dtype}")
        flat[i] = item
    return out
