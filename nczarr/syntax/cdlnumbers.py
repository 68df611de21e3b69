"""Numbers of a CDL data section as ncdump prints them, a slab at a time without per-value Python.

:func:`joined_values` writes the text of a whole slab of values at once, joined by ``", "``:
integers digit column by digit column; floats in C's ``%.<P>g`` (ncdump's ``%.7g``,
``%.15g`` or ``-p``), their digits from a product with a power of ten (double precision up to
9 digits, a double-double beyond, Python's exact ``%e`` for the rare value too close to a
rounding tie to tell); ``NaN``, ``Infinity`` and fills as ncdump words them. Other formats
(a ``C_format``) go through one C-level ``%`` over the slab. :func:`lay_out` then places the
text as ncdump's ``lput`` does: a value that would pass the line limit starts a new line
indented by four; rows end with ``,`` and a new line. The column counting runs on arrays of
value widths (a search per line, in numpy for many rows at once), and the new lines go into
the text as bytes.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["Layout", "joined_values", "lay_out"]

_SEPARATOR = ", "
_COMMA = ord(",")
#: marks of the spaces that become new lines in :func:`lay_out` (bytes no text holds)
_WRAP, _ROW_END = 1, 2
#: rows at least this many lay out in numpy, a line of every row per step; fewer, in Python
_VECTOR_ROWS = 8

_templates: dict[tuple[str, int], str] = {}


def joined_values(
    values: np.ndarray, fmt: str | None, fills: np.ndarray | None = None, suffix: str = ""
) -> np.ndarray | None:
    """The ASCII bytes of ``fmt % v`` (``str(v)`` without ``fmt``: integers only) of each
    value in C order, joined by ``", "``, as ncdump prints them: ``_`` where ``fills`` (a
    mask) is set, ``NaN``, ``Infinity`` and ``-Infinity`` followed by ``suffix``. None when
    the values need printing one by one (not ASCII, or special values with a ``fmt`` this
    module does not print itself)."""
    flat = values.ravel()
    if fmt is None:
        return _compact(_integer_grid(flat), flat, fills, suffix)
    general = _GENERAL.fullmatch(fmt)
    if general is not None and flat.dtype.kind == "f" and 0 < int(general[1]) <= _MOST_DIGITS:
        wide = flat.astype(np.float64)
        finite = np.isfinite(wide)
        plain = finite if fills is None else finite & ~fills.ravel()
        wide[~plain] = 0.0
        magnitude = np.abs(wide)
        if not ((magnitude > _DOUBLE_RANGE) | ((magnitude != 0) & (magnitude < 1 / _DOUBLE_RANGE))).any():
            return _compact(_general_grid(wide, int(general[1])), flat, fills, suffix)
    if (fills is not None and fills.any()) or (flat.dtype.kind == "f" and not np.isfinite(flat).all()):
        return None
    passed, fmt = c_printf(flat, fmt)
    items = passed.tolist()
    key = (fmt, len(items))
    template = _templates.get(key)
    if template is None:
        _templates.clear()  # one slab size at a time: a template is as long as its text
        template = _templates[key] = _SEPARATOR.join([fmt] * len(items))
    text = template % tuple(items)
    if not text.isascii():
        return None
    return np.frombuffer(text.encode("ascii"), np.uint8)


#: A printf integer conversion: its length modifier and conversion letter.
_INTEGER_CONVERSION = re.compile(r"(%[-+ #0]*\d*(?:\.\d*)?)(hh|h|ll|l|j|z|t)?([diouxX])")
#: The bits a conversion reads by its length modifier (none: an int's 32).
_READ_BITS = {"hh": 8, "h": 16, "": 32, "l": 64, "ll": 64, "j": 64, "z": 64, "t": 64}


def c_printf(values: np.ndarray, fmt: str) -> tuple[np.ndarray, str]:
    """Integer ``values`` as C's printf reads them through ``fmt`` (a ``C_format``) when
    ncdump hands them over, and ``fmt`` as Python's ``%`` takes it (no length modifier).
    A value of 32 bits or less is passed as a 32-bit int (the upper half of its register
    zero); the conversion reads as many bits as its modifier says, signed for ``%d``/``%i``,
    unsigned for ``%u``/``%o``/``%x``: a uint of 3e9 prints negative through ``%d``, an
    int64 its low 32 bits, a negative int through ``%ld`` as its unsigned 32 bits. Other
    values, and formats with another conversion or more than one, are left as they are."""
    found = _INTEGER_CONVERSION.findall(fmt)
    if values.dtype.kind not in "iu" or len(found) != 1 or fmt.count("%") - 2 * fmt.count("%%") != 1:
        return values, fmt
    _, modifier, letter = found[0]
    bits = values.astype(np.int64 if values.dtype.kind == "i" else np.uint64).view(np.uint64)
    if values.dtype.itemsize <= 4:
        bits = bits & np.uint64(0xFFFFFFFF)
    width = _READ_BITS[modifier]
    kind = "i" if letter in "di" else "u"
    read = np.dtype(f"{kind}{width // 8}")
    passed = (bits & np.uint64((1 << width) - 1)).astype(f"u{width // 8}").view(read) if width < 64 else bits.view(read)
    return passed, _INTEGER_CONVERSION.sub(r"\1\3", fmt)


#: C's "%.<P>g", which :func:`_joined_general` prints without C
_GENERAL = re.compile(r"%\.(\d+)g")
#: the most digits :func:`_decimal` gets right (a double-double product beyond 9)
_MOST_DIGITS = 17
#: up to this many digits, a double product gets them right (the products stay under 1e9)
_DOUBLE_DIGITS = 9
#: beyond 1e-290 ... 1e290, a power of ten the product needs leaves a double's normal range
_DOUBLE_RANGE = 1e290
_TEN_RANGE = 400  # 10**-400 ... 10**399: every shift a value in that range needs
_TENS = np.array([float(f"1e{k}") for k in range(-_TEN_RANGE, _TEN_RANGE)])
#: the low 27 bits of a double's mantissa: cleared, 26 significant bits are left
_LOW_BITS = np.uint64((1 << 27) - 1)


@functools.cache
def _tens_pair() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """10**k as double-doubles (high part split in two halves of 26 significant bits, low
    part): for products exact to about 100 bits."""
    high, low = [], []
    for k in range(-_TEN_RANGE, _TEN_RANGE):
        exact = Fraction(10) ** min(k, 308)  # beyond a double (no value in range needs them)
        high.append(float(exact))
        low.append(float(exact - Fraction(high[-1])))
    high_array = np.array(high)
    return (*_split(high_array), np.array(low))


def _split(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value as a sum of two doubles of at most 27 significant bits."""
    head = (values.view(np.uint64) & ~_LOW_BITS).view(np.float64)
    return head, values - head


def _decimal(values: np.ndarray, precision: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``precision`` (at most 17) significant digits (an integer) and the decimal
    exponent of each finite value's magnitude (within 1e-290 ... 1e290), rounded half to
    even as C's printf rounds. The digits come from a product with a power of ten: in
    double precision up to 9 digits (within 2 units of its last place), a double-double
    beyond; the few values that close to a rounding tie take Python's exact ``%e``."""
    magnitude = np.abs(values)
    nonzero = magnitude > 0
    exponent = np.floor(np.log10(np.where(nonzero, magnitude, 1.0))).astype(np.int64)
    low, high = 10 ** (precision - 1), 10**precision
    # moved: one power off from log10 near a power of ten, or carried by rounding up (a
    # near tie the first time): Python's %e decides those
    moved = np.zeros(len(values), bool)
    for _ in range(3):
        shift = precision - 1 - exponent + _TEN_RANGE
        if precision <= _DOUBLE_DIGITS:
            scaled = magnitude * _TENS[shift]
            rounded = np.rint(scaled)
            digits = rounded.astype(np.int64)
            unsure = np.abs(np.abs(scaled - rounded) - 0.5) <= scaled * (4 * np.finfo(np.float64).eps)
        else:
            digits, unsure = _wide_digits(magnitude, shift)
        up = nonzero & (digits >= high)
        down = nonzero & (digits < low)
        if not (up.any() or down.any()):
            break
        moved |= up | down
        exponent += up.astype(np.int64) - down.astype(np.int64)
    unsure |= moved | (nonzero & ((digits >= high) | (digits < low)))
    digits = digits.astype(np.uint64)
    for i in np.flatnonzero(unsure).tolist():
        mantissa, _, power = (f"%.{precision - 1}e" % magnitude[i]).partition("e")
        digits[i], exponent[i] = int(mantissa.replace(".", "")), int(power)
    return digits, exponent


def _wide_digits(magnitude: np.ndarray, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``magnitude * 10**(shift - _TEN_RANGE)`` rounded to an integer, from a double-double
    product (Dekker's), and where that is too close to a tie to tell."""
    ten_head, ten_tail, ten_low = (part[shift] for part in _tens_pair())
    ten = ten_head + ten_tail
    product = magnitude * ten
    head, tail = _split(magnitude)
    error = ((head * ten_head - product) + head * ten_tail + tail * ten_head) + tail * ten_tail
    rest = error + magnitude * ten_low
    whole = np.rint(product)
    fraction = (product - whole) + rest
    step = np.rint(fraction)
    unsure = np.abs(np.abs(fraction - step) - 0.5) <= 1e-6
    return whole.astype(np.int64) + step.astype(np.int64), unsure


def _general_grid(values: np.ndarray, precision: int) -> np.ndarray:
    """``"%.<precision>g" % v`` of finite values, each followed by ``", "``: one row of a
    grid per value, a column per character place (a point slot after every digit), NUL in
    the places a value does not use."""
    count = len(values)
    digits, exponent = _decimal(values, precision)
    if precision <= _DOUBLE_DIGITS:
        digits = digits.astype(np.uint32)  # 32-bit division is several times faster
    ten = digits.dtype.type(10)
    places: list[np.ndarray] = []
    rest = digits
    for _ in range(precision):
        quotient = rest // ten  # a division by a constant: faster than divmod
        places.append((rest - quotient * ten).astype(np.uint8))
        rest = quotient
    places.reverse()
    # the significant digits left once the trailing zeros go
    significant = np.full(count, precision, np.int16)
    zeros = np.ones(count, bool)
    for place in range(precision - 1, 0, -1):
        zeros &= places[place] == 0
        significant -= zeros
    exponent = exponent.astype(np.int16)
    scientific = (exponent < -4) | (exponent >= precision)
    small = ~scientific & (exponent < 0)
    shown = np.where(scientific | small, significant, np.maximum(significant, exponent + 1))
    before = np.where(scientific, 1, exponent + 1)  # digits before the point
    before[small | (shown <= before)] = -1  # no point after a digit
    # columns: sign, "0.000" (before a small value's digits), digit and point per place,
    # "e", exponent sign, three exponent digits, ", "
    lead = 6
    after = lead + 2 * precision
    grid = np.zeros((count, after + 7), np.uint8)
    grid[np.signbit(values), 0] = ord("-")
    rows = np.flatnonzero(small)
    if len(rows):
        grid[rows, 1] = ord("0")
        grid[rows, 2] = ord(".")
        for k in range(3):
            grid[rows, 3 + k] = np.where(exponent[rows] < -1 - k, ord("0"), 0)
    for place in range(precision):
        grid[:, lead + 2 * place] = np.where(shown > place, places[place] + ord("0"), 0)
    rows = np.flatnonzero(before > 0)
    grid[rows, lead - 1 + 2 * before[rows]] = ord(".")
    rows = np.flatnonzero(scientific)
    if len(rows):
        power = np.abs(exponent[rows])
        grid[rows, after] = ord("e")
        grid[rows, after + 1] = np.where(exponent[rows] < 0, ord("-"), ord("+"))
        grid[rows, after + 2] = np.where(power >= 100, power // 100 + ord("0"), 0)
        grid[rows, after + 3] = power // 10 % 10 + ord("0")
        grid[rows, after + 4] = power % 10 + ord("0")
    grid[:, after + 5] = _COMMA
    grid[:, after + 6] = ord(" ")
    return grid


def _compact(grid: np.ndarray, values: np.ndarray, fills: np.ndarray | None, suffix: str) -> np.ndarray:
    """The rows of ``grid`` (each value's text and ``", "``, NUL where unused) as one text,
    the special values' rows first written over with their words."""
    words: list[tuple[np.ndarray, str]] = []
    if values.dtype.kind == "f":
        words += [(np.isnan(values), "NaN" + suffix), (np.isposinf(values), "Infinity" + suffix),
                  (np.isneginf(values), "-Infinity" + suffix)]
    if fills is not None:
        words.append((fills.ravel(), "_"))
    for mask, word in words:
        rows = np.flatnonzero(mask)
        if len(rows):
            grid[rows, :-2] = 0
            grid[rows, : len(word)] = np.frombuffer(word.encode("ascii"), np.uint8)
    grid[-1, -2:] = 0
    return np.frombuffer(grid.tobytes().translate(None, b"\0"), np.uint8)


_POWERS = np.array([10**k for k in range(1, 20)], np.uint64)


def _integer_grid(values: np.ndarray) -> np.ndarray:
    """Decimal integers, each followed by ``", "``: the digits of all values at once, one
    column per decimal place, NUL in the places a value does not use."""
    negative = values < 0 if values.dtype.kind == "i" else np.zeros(values.shape, bool)
    magnitude = values.astype(np.uint64)  # two's complement: negate below, also of the minimum
    np.negative(magnitude, out=magnitude, where=negative)
    digits = np.searchsorted(_POWERS, magnitude, side="right") + 1
    places = int(digits.max()) if len(digits) else 1
    grid = np.empty((len(values), places + 3), np.uint8)
    grid[:, 0] = np.where(negative, ord("-"), 0)
    # 32-bit division is several times faster where the values allow it
    rest = magnitude.astype(np.uint32) if places < 10 else magnitude
    ten = rest.dtype.type(10)
    for column in range(places, 0, -1):
        quotient = rest // ten  # a division by a constant: faster than divmod
        digit = (rest - quotient * ten).astype(np.uint8) + np.uint8(ord("0"))
        grid[:, column] = np.where(digits > places - column, digit, 0)
        rest = quotient
    grid[:, places + 1] = _COMMA
    grid[:, places + 2] = ord(" ")
    return grid


@dataclass(frozen=True)
class Layout:
    """Where the values of a slab go: ``limit`` is the last column a value may reach
    (ncdump's line length less 2); a row's first value starts at ``first_col`` (the first
    row of the slab) or ``row_col``; a wrapped line at ``wrap_col``."""

    limit: int
    first_col: int
    row_col: int
    wrap_col: int


def lay_out(buf: np.ndarray, count: int, width: int, layout: Layout, complete: bool) -> tuple[str, int] | None:
    """The ``count`` values of ``buf`` (ASCII, joined by ``", "``), rows of ``width`` values,
    as ncdump prints them: each complete row but the last followed by ``",\n"`` and two
    spaces, the last followed by nothing (the caller ends it); with ``complete`` false the
    values are a part of one row and end with ``", "``. Returns the text and the column after
    it, or None when the text cannot be split into its values (a value holding a comma or a
    control character): the caller then prints value by value."""
    separators = np.flatnonzero(buf == _COMMA)
    if len(separators) != count - 1 or (buf <= _ROW_END + _WRAP).any():
        return None
    starts = np.empty(count, np.int64)
    starts[0] = 0
    starts[1:] = separators + 2
    ends = np.empty(count, np.int64)
    ends[:-1] = separators
    ends[-1] = len(buf)
    lengths = ends - starts
    widths = lengths + 2
    wrappable = np.ones(count, bool)
    if complete:  # a row's last value is followed by "," or " ;", never wrapped (lput's n > 2)
        widths[width - 1 :: width] = lengths[width - 1 :: width]
        wrappable[width - 1 :: width] = lengths[width - 1 :: width] > 2
    rows = count // width
    if rows >= _VECTOR_ROWS:
        breaks = _breaks_by_rows(widths, wrappable, width, layout)
        col = layout.row_col
    else:
        breaks, col = _breaks_by_lines(widths, wrappable, width, layout)
    # the space of each separator where a new line starts is marked, then the marks replaced
    # (bytes.replace is C): a wrap, a row end, a row end whose next value wraps at once
    out = buf.copy()
    out[separators[width - 1 :: width] + 1] = _ROW_END
    wrapped = starts[breaks] - 1
    wrapped = wrapped[wrapped >= 0]
    out[wrapped] = np.where(out[wrapped] == _ROW_END, _ROW_END + _WRAP, _WRAP)
    wrap = b"\n" + b" " * layout.wrap_col
    data = out.tobytes().replace(bytes([_WRAP]), b" " + wrap).replace(bytes([_ROW_END]), b"\n  ")
    data = data.replace(bytes([_ROW_END + _WRAP]), b"\n  " + wrap)
    text = (wrap if len(breaks) and breaks[0] == 0 else b"").decode() + data.decode("ascii")
    return (text if complete else text + _SEPARATOR), col


def _breaks_by_lines(widths: np.ndarray, wrappable: np.ndarray, width: int, layout: Layout) -> tuple[np.ndarray, int]:
    """The values that start a wrapped line, row by row (few, long rows); and the column
    after the last value. Where the line after a wrap at each value would wrap again comes
    from one search in numpy; Python follows those links, a step per line."""
    count = len(widths)
    limit, wrap_col = layout.limit, layout.wrap_col
    sums_array = np.concatenate([[0], np.cumsum(widths)])
    index = np.arange(count)
    ends = (index // width + 1) * width
    following = np.searchsorted(sums_array, sums_array[:-1] + (limit - wrap_col), side="right") - 1
    following = np.maximum(following, index + 1)
    blocked = (following == ends - 1) & ~wrappable[np.minimum(following, count - 1)]
    links = np.where((following >= ends) | blocked, ends, following).tolist()
    sums = sums_array.tolist()
    can = wrappable.tolist()
    breaks: list[int] = []
    col = layout.first_col
    for start in range(0, count, width):
        end = start + width
        first = start
        if sums[start + 1] - sums[start] + col > limit and can[start]:
            breaks.append(start)
            col = wrap_col
            after = links[start]
        else:  # the row's first line starts at its own column
            k = bisect_right(sums, sums[start] + limit - col, start + 1, end + 1)
            after = max(k - 1, start + 1)
            if k > end or after >= end or not can[after]:
                after = end
        while after < end:
            breaks.append(after)
            first, col = after, wrap_col
            after = links[after]
        col += sums[end] - sums[first]
        if end < count:
            col = layout.row_col
    return np.array(breaks, np.int64), col


def _breaks_by_rows(widths: np.ndarray, wrappable: np.ndarray, width: int, layout: Layout) -> np.ndarray:
    """The values that start a wrapped line, in numpy: one line of every row per step."""
    sums = np.concatenate([[0], np.cumsum(widths)])
    count = len(widths)
    first = np.arange(0, count, width)
    cols = np.full(len(first), layout.row_col, np.int64)
    cols[0] = layout.first_col
    self_wrap = (widths[first] + cols > layout.limit) & wrappable[first]
    found = [first[self_wrap]]
    cols[self_wrap] = layout.wrap_col
    ends = first + width
    while len(first):
        k = np.searchsorted(sums, sums[first] + layout.limit - cols, side="right")
        j = np.maximum(k - 1, first + 1)
        going = (k <= ends) & (j < ends)
        j, ends = j[going], ends[going]
        going = wrappable[j]
        first, ends = j[going], ends[going]
        found.append(first)
        cols = np.full(len(first), layout.wrap_col, np.int64)
    return np.sort(np.concatenate(found))
