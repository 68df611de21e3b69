"""netCDF4-python's indexing rules: keys turned into orthogonal selections for the engine.

netCDF4 treats every 1-D index array independently per axis ("orthogonal indexing"), clips
slices to the current length on read, grows unlimited dimensions on write, and reshapes or
broadcasts assigned data in its own way. These functions reproduce those rules, including
the exception classes and messages, so ``Variable.__getitem__``/``__setitem__`` only have to
hand the resulting ``Key`` to the storage engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from nczarr.errors import ArgumentError, DatasetStateError, SelectionError

INVALID_INDEX = (
    "only integers, slices (`:`), ellipsis (`...`), and 1-d integer or boolean arrays are valid indices"
)
BOOL_LENGTH = "\nBoolean array must have the same shape as the data along this dimension."
TOO_MANY = "slicing expression exceeds the number of dimensions of the variable"
SIZE_MISMATCH = "size of data array does not conform to slice"
FIXED_BOUND = "NetCDF: Index exceeds dimension bound"

Selector = int | slice | np.ndarray


@dataclass(frozen=True)
class Key:
    """A netCDF4-style key resolved against a variable's shape."""

    selection: tuple[Selector, ...]  # one entry per axis, ready for the engine
    shape: tuple[int, ...]  # shape of the result (read) or that data must fit (write); int axes dropped
    grown: tuple[int, ...]  # write only: the variable shape needed (> current only on unlimited axes)
    #: Per-axis element counts with integer axes kept as 1 (netCDF4's ``_out_array_shape``).
    counts: tuple[int, ...] = ()


@dataclass(frozen=True)
class Normalised:
    """A key after netCDF4's normalisation: what ``_StartCountStride`` computes."""

    #: Per axis: an int (as given, negative too), a slice, or a 1-D intp array of
    #: non-negative indices (netCDF4's normalised selectors).
    elems: tuple[Selector, ...]
    start: tuple[int, ...]
    count: tuple[int, ...]
    stride: tuple[int, ...]
    scalar: bool  # the variable has no dimensions (netCDF4 treats it as shape (1,))


def is_int(value: object) -> bool:
    """Whether ``int(value) == value`` holds."""
    try:
        return bool(int(value) == value)  # type: ignore[call-overload]
    except Exception:
        return False


def _entries(key: Any) -> list[Any]:
    """The per-axis entries of a key: a non-tuple sequence of integers indexes the first axis."""
    if type(key) is tuple:
        return list(key)
    if isinstance(key, np.ndarray):
        return [key]
    if type(key) in (int, slice) or key is Ellipsis or not np.iterable(key):
        return [key]
    if all(is_int(e) for e in key):
        return [key]
    return list(key)


def _axis_len(shape: tuple[int, ...], axis: int) -> int:
    try:
        return shape[axis]
    except IndexError:
        raise SelectionError("tuple index out of range") from None


def _entry(e: Any, axis: int, shape: tuple[int, ...], unlimited: Sequence[bool]) -> Any:
    """One entry checked and converted: an int, a slice, Ellipsis or a 1-D intp array."""
    if type(e) in (str, bytes):
        try:
            e = int(e)
        except ValueError:
            raise SelectionError(INVALID_INDEX) from None
    if isinstance(e, np.integer):
        return int(e)
    try:
        a = np.asarray(e)
    except ValueError as exc:  # ragged nested sequences
        raise ArgumentError(str(exc)) from None
    if a.ndim > 1:
        raise SelectionError("Index cannot be multidimensional")
    unlim = 0 <= axis < len(unlimited) and unlimited[axis] if unlimited else False
    if a.ndim == 1 and a.dtype.kind == "b":
        if not unlim and _axis_len(shape, axis) != len(a):
            raise SelectionError(BOOL_LENGTH)
        a = np.flatnonzero(a)
    if a.ndim == 1 and a.dtype.kind == "i":
        n = _axis_len(shape, axis)
        a = np.where(a < 0, a + n, a).astype(np.intp, copy=False)
        if a.size:
            if a.min() < 0:
                raise SelectionError("integer index out of range")
            if not unlim and int(a.max()) >= n:  # unlimited axes grow on write
                raise SelectionError("integer index exceeds dimension size")
        return a
    if a.dtype.kind == "i":
        return int(a)
    if a.dtype.kind == "f" and a.ndim == 0:
        if not np.isfinite(a) or a != np.floor(a):
            raise SelectionError(INVALID_INDEX)
        return int(a)
    if type(e) is slice or e is Ellipsis:
        return e
    try:
        return int(e)
    except Exception:
        raise SelectionError(INVALID_INDEX) from None


def _as_slice(a: np.ndarray, use_get_vars: bool) -> Selector:
    """An evenly increasing index array as a slice (netCDF4 does the same)."""
    if len(a) == 0:
        return slice(0, 0, 1)
    first = int(a[0])
    if len(a) == 1:
        return slice(first, first + 1, 1)
    step = int(a[1]) - first
    if step > 0 and (use_get_vars or step == 1) and bool(np.all(np.diff(a) == step)):
        return slice(first, int(a[-1]) + 1, step)
    return a


def normalise(
    key: object,
    shape: tuple[int, ...],
    unlimited: Sequence[bool] = (),
    data_shape: tuple[int, ...] | None = None,
    put: bool = False,
    use_get_vars: bool = True,
) -> Normalised:
    """netCDF4's normalisation of ``key`` for a variable of ``shape``: per-axis selectors,
    start, count and stride. ``unlimited`` and ``data_shape`` only matter when ``put``."""
    scalar = not shape
    if scalar:
        shape, unlimited = (1,), ()
    ndim = len(shape)
    unlimited = tuple(unlimited) if put and any(unlimited) else ()
    entries = _entries(key)
    if sum(1 for e in entries if e is Ellipsis) > 1:
        raise SelectionError("At most one ellipsis allowed in a slicing expression")

    checked: list[Any] = []
    axis = 0
    for e in entries:
        if type(e) is int or type(e) is slice or e is Ellipsis:
            checked.append(e)
        else:
            e = _entry(e, axis, shape, unlimited)
            checked.append(e)
        axis += 1 + ndim - len(entries) if e is Ellipsis else 1

    elems: list[Any] = []
    for e in checked:
        if e is Ellipsis:
            elems.extend([slice(None)] * (ndim - len(checked) + 1))
        elif isinstance(e, np.ndarray):
            elems.append(_as_slice(e, use_get_vars))
        else:
            elems.append(e)
    if len(elems) > ndim:
        raise ArgumentError(TOO_MANY)
    elems.extend([slice(None)] * (ndim - len(elems)))

    full = slice(None)
    if put and data_shape and not unlimited and all(type(e) is slice and e == full for e in elems):
        # netCDF4 first broadcasts the data against the whole variable.
        try:
            np.broadcast_shapes(shape, data_shape)
        except ValueError as exc:
            raise ArgumentError(str(exc)) from None
    if put and data_shape:
        # netCDF4 spreads the data shape over the axes even where no axis is unlimited, and
        # fails the same way there when integer arrays outnumber the data's dimensions.
        data_shape = _padded_data_shape(elems, shape, unlimited or [False] * ndim, data_shape)
    last_len = shape[-1]
    start, count, stride = [], [], []
    for i, e in enumerate(elems):
        n = shape[i]
        if type(e) is slice:
            length = n
            if unlimited and unlimited[i]:
                if e.stop is not None and e.stop > n:
                    length = e.stop
                elif e.stop is None and data_shape != ():
                    if data_shape is None:
                        raise SelectionError("shape of data does not conform to slice")
                    try:
                        length = data_shape[i] if e.start is None else e.start + data_shape[i]
                    except (IndexError, TypeError):
                        raise SelectionError("shape of data does not conform to slice") from None
                elif data_shape == () and last_len == 0:
                    length = 1  # `c[:] = 1` on an empty record variable writes one record
            try:
                b, end, step = e.indices(length)
            except ValueError as exc:
                raise ArgumentError(str(exc)) from None
            except TypeError as exc:
                raise SelectionError(str(exc)) from None
            start.append(b)
            count.append(len(range(b, end, step)))
            stride.append(step)
        elif isinstance(e, np.ndarray):
            start.append(int(e[0]))
            count.append(len(e))
            stride.append(1)
        else:
            if e < 0:
                if -e > n:
                    raise SelectionError("Index out of range")
                e += n
            start.append(e)
            count.append(1)
            stride.append(1)

    if not put and 0 in count:
        for e, b, n in zip(elems, start, shape):
            if type(e) is int and b >= n:
                raise SelectionError("integer index exceeds dimension size")
    return Normalised(tuple(elems), tuple(start), tuple(count), tuple(stride), scalar)


def _padded_data_shape(
    elems: list[Any], shape: tuple[int, ...], unlimited: Sequence[bool], data_shape: tuple[int, ...]
) -> tuple[int, ...]:
    """The data shape spread over the variable's axes (zeros at integer axes), which is how
    netCDF4 sizes open-ended slices on unlimited axes when the data has fewer dimensions."""
    if len(data_shape) == len(elems):
        return data_shape
    spread = sum(1 for e in elems if type(e) is slice)
    for i, e in enumerate(elems):
        if type(e) is not slice:
            continue
        length = shape[i]
        if unlimited[i]:
            if e.stop is None:
                continue
            length = max(length, e.stop)
        if not range(*e.indices(length)):
            spread = sum(1 for x in elems if type(x) is slice or isinstance(x, np.ndarray))
            break
    if len(data_shape) != spread:
        return data_shape
    padded, used = [], 0
    for e in elems:
        if type(e) is int:
            padded.append(0)
            continue
        # Integer arrays take a data dimension without having been counted above.
        padded.append(_axis_len(data_shape, used))
        used += 1
    return tuple(padded)


def _engine_selector(e: Selector, start: int, count: int, stride: int) -> Selector:
    if type(e) is slice:
        if not count:
            return slice(0, 0, 1)
        if stride > 0:
            return slice(start, start + count * stride, stride)
        stop = start + count * stride
        return slice(start, stop if stop >= 0 else None, stride)
    return e if isinstance(e, np.ndarray) else start


def _simple_key(key: Any, shape: tuple[int, ...], unlimited: Sequence[bool]) -> Key | None:
    """The Key of a key made only of in-range Python ints and slices (integers may also
    lie past the end of an unlimited axis, slices may not touch one), computed without
    numpy because loops index element by element; None for every other key."""
    if type(key) is tuple:
        items = key
    elif type(key) is int or type(key) is slice:
        items = (key,)
    else:
        return None
    if not shape or len(items) > len(shape):
        return None
    selection: list[Selector] = []
    out: list[int] = []
    counts: list[int] = []
    grown = list(shape)
    for i, n in enumerate(shape):
        e = items[i] if i < len(items) else slice(None)
        if type(e) is int:
            if e < 0:
                if e < -n:
                    return None
                e += n
            elif e >= n:
                if not unlimited or not unlimited[i]:
                    return None
                grown[i] = e + 1
            selection.append(e)
            counts.append(1)
        elif type(e) is slice:
            if unlimited and unlimited[i]:
                return None
            b, end, step = e.indices(n)
            c = len(range(b, end, step))
            selection.append(_engine_selector(e, b, c, step))
            out.append(c)
            counts.append(c)
        else:
            return None
    if 0 in counts:
        grown = list(shape)
    return Key(tuple(selection), tuple(out), tuple(grown), tuple(counts))


def read_key(key: object, shape: tuple[int, ...]) -> Key:
    """Resolve ``key`` for reading a variable of ``shape`` (netCDF4's errors and messages)."""
    simple = _simple_key(key, shape, ())
    if simple is not None:
        return simple
    norm = normalise(key, shape)
    if norm.scalar:
        if norm.count[0] == 0:
            raise SelectionError("index 0 is out of bounds for axis 0 with size 0")
        return Key((), (), (), ())
    if 0 not in norm.count:
        for e, b, n in zip(norm.elems, norm.start, shape):
            if type(e) is int and b >= n:
                raise SelectionError("index exceeds dimension bounds")
    selection = tuple(map(_engine_selector, norm.elems, norm.start, norm.count, norm.stride))
    out = tuple(c for e, c in zip(norm.elems, norm.count) if type(e) is not int)
    return Key(selection, out, shape, norm.count)


def write_key(
    key: object, shape: tuple[int, ...], unlimited: Sequence[bool], data_shape: tuple[int, ...]
) -> Key:
    """Resolve ``key`` for assigning data of ``data_shape`` to a variable of ``shape``:
    the selection, the shape the data must take, and the grown variable shape."""
    simple = _simple_key(key, shape, unlimited)
    # Keys without an integer take the long way: `:`-only keys broadcast the data first.
    if simple is not None and len(simple.shape) < len(shape):
        _fit_mode(data_shape, simple.counts)
        return simple
    norm = normalise(key, shape, unlimited, data_shape, put=True)
    _fit_mode(data_shape, norm.count)
    if norm.scalar:
        return Key((), (), (), norm.count)
    grown = list(shape)
    if 0 not in norm.count:
        for i, (e, b, c, s) in enumerate(zip(norm.elems, norm.start, norm.count, norm.stride)):
            if isinstance(e, np.ndarray):
                top = int(e.max()) + 1
            elif type(e) is slice:
                top = (b + (c - 1) * s if s > 0 else b) + 1
            else:
                top = b + 1
            if top > shape[i]:
                if not unlimited[i]:
                    raise DatasetStateError(FIXED_BOUND)
                grown[i] = top
    selection = tuple(map(_engine_selector, norm.elems, norm.start, norm.count, norm.stride))
    out = tuple(c for e, c in zip(norm.elems, norm.count) if type(e) is not int)
    return Key(selection, out, tuple(grown), norm.count)


def _fit_mode(data_shape: tuple[int, ...], counts: tuple[int, ...]) -> str:
    """How data of ``data_shape`` is made to fit ``counts``: 'same', 'reshape' or
    'broadcast'; raises netCDF4's error when it cannot be."""
    if data_shape == ():
        return "broadcast"
    if data_shape == counts:
        return "same"
    if len(data_shape) != len(counts) or len(data_shape) > 1 or 0 in counts:
        if math.prod(data_shape) == math.prod(counts):
            return "reshape"
        dummy = as_strided(np.zeros(1), shape=data_shape, strides=(0,) * len(data_shape))
        try:
            np.broadcast_to(dummy, counts)
        except ValueError as exc:
            raise ArgumentError(str(exc)) from None
        return "broadcast"
    # Same single dimension, different length: no reshaping, so the write itself fails.
    raise SelectionError(SIZE_MISMATCH)


def fit_data(data: np.ndarray, key: Key) -> np.ndarray:
    """``data`` shaped to ``key.shape`` as netCDF4 does on assignment (a view or a new
    array; the caller's array is never modified)."""
    counts = key.counts
    mode = _fit_mode(data.shape, counts)
    if mode == "reshape":
        data = data.view().reshape(counts)
    elif mode == "broadcast":
        if np.ma.isMaskedArray(data):  # broadcast_to would drop the mask
            mask = np.broadcast_to(np.ma.getmaskarray(data), counts)
            data = np.ma.masked_array(np.broadcast_to(data.data, counts), mask=mask, fill_value=data.fill_value)
        else:
            data = np.broadcast_to(data, counts)
    return data.reshape(key.shape) if data.shape != key.shape else data

