"""netcdf-c's lossy quantization of float data (``significant_digits`` + ``quantize_mode``).

netcdf-c quantizes the values of one write, as laid out in the write buffer, and records the
mode in an attribute. The functions here give bit-identical results: they work on the integer
view of IEEE floats with the same masks, including x86's shift-count wrap-around where
netcdf-c's shift amount leaves the word. Fill values, zeros and NaN are left as they are.
"""

from __future__ import annotations

import numpy as np

from nczarr.errors import ArgumentError, DatasetStateError
from nczarr.values.indexing import Selector
from nczarr.values.types import default_fillvals

__all__ = [
    "QUANTIZE_ATTRIBUTES",
    "bitgroom",
    "bitround",
    "check_quantize",
    "granular_bitround",
    "quantize",
    "quantize_write",
]

QUANTIZE_ATTRIBUTES: dict[str, str] = {
    "BitGroom": "_QuantizeBitGroomNumberOfSignificantDigits",
    "GranularBitRound": "_QuantizeGranularBitRoundNumberOfSignificantDigits",
    "BitRound": "_QuantizeBitRoundNumberOfSignificantBits",
}

# The largest number of significant digits (bits for BitRound) netcdf-c 4.10 accepts.
_LIMITS = {
    "f4": {"BitGroom": 6, "GranularBitRound": 6, "BitRound": 23},
    "f8": {"BitGroom": 15, "GranularBitRound": 15, "BitRound": 52},
}

_LN10 = 2.302585092994046  # the doubles nearest to ln(10) and ln(2)
_LN2 = 0.6931471805599453
_BITS_PER_DIGIT = _LN10 / _LN2
_DIGITS_PER_BIT = _LN2 / _LN10


class _Layout:
    """An IEEE float type and its same-width unsigned integer type."""

    def __init__(self, dtype: np.dtype) -> None:
        self.float = np.dtype(dtype).newbyteorder("=")
        self.bits = self.float.itemsize * 8
        self.uint = np.dtype(f"u{self.float.itemsize}")
        self.ones = self.uint.type(np.iinfo(self.uint).max)
        self.mantissa_bits = 23 if self.bits == 32 else 52

    def shave_masks(self, keep: np.ndarray | int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The masks that zero, set and round the explicit mantissa bits beyond ``keep``."""
        shift = np.asarray(self.mantissa_bits - np.asarray(keep, np.int64)) & (self.bits - 1)
        zero = np.left_shift(self.ones, shift.astype(self.uint))
        one = ~zero
        half = one & (zero >> self.uint.type(1))
        return zero, one, half


def check_quantize(mode: str, nsd: int, dtype: np.dtype, where: str = "") -> str:
    """The attribute name recording ``mode``; the errors netCDF4 raises for a bad mode (its
    ValueError text) or a number of digits or a type netcdf-c refuses (its RuntimeError text,
    ``where`` being netCDF4's "(variable 'v', group '/')" suffix)."""
    if mode not in QUANTIZE_ATTRIBUTES:
        raise ArgumentError(
            "'quantize_mode' keyword argument must be 'BitGroom','GranularBitRound' or "
            f"'BitRound', got '{mode}'"
        )
    limits = _LIMITS.get(np.dtype(dtype).str[1:])
    if limits is None or not 1 <= nsd <= limits[mode]:
        raise DatasetStateError(f"NetCDF: Invalid argument: {where}".rstrip(": "))
    return QUANTIZE_ATTRIBUTES[mode]


def _bits_and_targets(
    data: np.ndarray, fill_value: float | None
) -> tuple[_Layout, np.ndarray, np.ndarray]:
    """The layout, a native copy of ``data`` and where the values are to be quantized."""
    layout = _Layout(data.dtype)
    values = np.array(data, layout.float)  # a native-order copy
    fill = layout.float.type(default_fillvals[layout.float.str[1:]] if fill_value is None else fill_value)
    with np.errstate(invalid="ignore"):
        targets = (values != fill) & (values != 0) & ~np.isnan(values)
    return layout, values, targets


def _restore(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``values`` in the byte order of ``like``."""
    return values.astype(like.dtype, copy=False)


def bitgroom(data: np.ndarray, nsd: int, fill_value: float | None = None) -> np.ndarray:
    """BitGroom: keep ``nsd`` decimal digits, shaving the spare mantissa bits of the even
    positions of the (flattened) write and setting those of the odd ones."""
    layout, values, targets = _bits_and_targets(data, fill_value)
    keep = int(np.ceil(nsd * _BITS_PER_DIGIT)) + 1
    zero, one, _ = layout.shave_masks(keep)
    bits = values.reshape(-1).view(layout.uint)
    flat_targets = targets.reshape(-1)
    even = np.zeros(bits.shape, np.bool_)
    even[::2] = True
    bits[flat_targets & even] &= zero
    bits[flat_targets & ~even] |= one
    return _restore(values, data)


def bitround(data: np.ndarray, nsb: int, fill_value: float | None = None) -> np.ndarray:
    """BitRound: keep ``nsb`` explicit mantissa bits, rounding half up on the bit pattern."""
    layout, values, targets = _bits_and_targets(data, fill_value)
    zero, _, half = layout.shave_masks(nsb)
    _round(values, targets, zero, half)
    return _restore(values, data)


def granular_bitround(data: np.ndarray, nsd: int, fill_value: float | None = None) -> np.ndarray:
    """Granular BitRound: keep ``nsd`` decimal digits, the bits to keep chosen per value from
    its decimal exponent, then rounded as BitRound does."""
    layout, values, targets = _bits_and_targets(data, fill_value)
    chosen = values[targets].astype(np.float64)
    mantissa, exponent = np.frexp(chosen)
    with np.errstate(invalid="ignore"):  # infinities
        log_mantissa = np.log10(np.abs(mantissa))
        digits = _c_int(np.floor(exponent * _DIGITS_PER_BIT + log_mantissa)) + 1
        power = _c_int(np.floor(_BITS_PER_DIGIT * (digits - nsd)))
        keep = np.abs(_c_int(np.floor(exponent - _BITS_PER_DIGIT * log_mantissa)) - power)
    keep = (keep.astype(np.uint16) - np.uint16(1)).astype(np.int64)  # netcdf-c's unsigned short
    zero, _, half = layout.shave_masks(keep)
    _round(values, targets, zero, half)
    return _restore(values, data)


def _round(values: np.ndarray, targets: np.ndarray, zero: np.ndarray, half: np.ndarray) -> None:
    """Round the targeted ``values`` in place: add half of the dropped bits' weight (carrying
    into the kept bits), then drop them; per-value masks line up with the targets."""
    bits = values.reshape(-1).view(zero.dtype)
    flat_targets = targets.reshape(-1)
    bits[flat_targets] = (bits[flat_targets] + half) & zero


def _c_int(values: np.ndarray) -> np.ndarray:
    """A C cast of doubles to int on x86: values out of range (and NaN) become INT_MIN."""
    limit = 2.0**31
    with np.errstate(invalid="ignore"):
        in_range = (values >= -limit) & (values < limit)
    return np.where(in_range, values, -limit).astype(np.int64)


_MODES = {"BitGroom": bitgroom, "GranularBitRound": granular_bitround, "BitRound": bitround}


def quantize(data: np.ndarray, nsd: int, mode: str, fill_value: float | None = None) -> np.ndarray:
    """``data`` (float32 or float64, any byte order) quantized as netcdf-c does with
    ``mode``; values equal to ``fill_value`` (default: the type's default fill) are kept."""
    return _MODES[mode](np.asarray(data), nsd, fill_value)


def quantize_write(
    values: np.ndarray, selection: tuple[Selector, ...], nsd: int, mode: str, fill_value: float | None = None
) -> np.ndarray:
    """The ``values`` of a write to ``selection`` (the engine's per-axis selectors) quantized
    as netcdf-c does: it counts positions in storage order (BitGroom alternates between even
    and odd ones), so axes written in reverse are quantized in that order."""
    kept = [s for s in selection if not isinstance(s, int)]
    flip = tuple(slice(None, None, -1) if isinstance(s, slice) and (s.step or 1) < 0 else slice(None) for s in kept)
    return quantize(values[flip], nsd, mode, fill_value)[flip]
