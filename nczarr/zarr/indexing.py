"""Orthogonal selections (netCDF4 / zarr ``oindex`` semantics) projected onto a regular chunk grid.

A selection is normalised into one ``DimSelection`` per dimension. Internally every dimension
is kept in the output (an integer index becomes a length-1 dimension that is squeezed at the
end), negative steps are turned into positive ones over a flipped output view, and integer
arrays are sorted with the permutation remembered, so each chunk gets one simple projection.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, TypeAlias

import numpy as np

from nczarr.errors import SelectionError

Projection = slice | np.ndarray
#: What selects along one dimension: an integer (the dimension is dropped), a slice, a 1-D
#: sequence of integers, or a boolean mask.
DimIndex: TypeAlias = "int | np.integer | slice | Sequence[int] | Sequence[bool] | np.ndarray"
#: An orthogonal selection as ``array[...]`` takes it: one index or a tuple of them, with at
#: most one Ellipsis.
Selection: TypeAlias = "DimIndex | EllipsisType | tuple[DimIndex | EllipsisType, ...]"


@dataclass(frozen=True)
class DimSelection:
    """What one dimension selects: a positive-step slice or a sorted integer array."""

    size: int  # length of the dimension
    chunk: int  # chunk length along it
    start: int = 0
    stop: int = 0
    step: int = 1
    #: Sorted indices for array selections (None for slices).
    indices: np.ndarray | None = None
    #: For array selections: output position of each sorted index.
    positions: np.ndarray | None = None
    #: True when the user's selection was an integer (the dimension is dropped).
    drop: bool = False
    #: True when the user's slice had a negative step (the output is flipped).
    flip: bool = False

    @property
    def count(self) -> int:
        if self.indices is not None:
            return len(self.indices)
        return len(range(self.start, self.stop, self.step))

    def chunks(self) -> Iterator[tuple[int, Projection, Projection, bool]]:
        """(chunk index, selection within the chunk, selection within the output, covers
        every element of the chunk that lies inside the array)."""
        c = self.chunk
        idx, positions = self.indices, self.positions
        if idx is not None and positions is not None:
            if len(idx) == 0:
                return
            chunk_ids = idx // c
            bounds = np.flatnonzero(np.diff(chunk_ids)) + 1
            starts = np.concatenate(([0], bounds))
            stops = np.concatenate((bounds, [len(idx)]))
            for lo, hi in zip(starts.tolist(), stops.tolist()):
                k = int(chunk_ids[lo])
                local = idx[lo:hi] - k * c
                extent = min(c, self.size - k * c)
                full = hi - lo == extent and bool(np.all(local == np.arange(extent)))
                yield k, local, positions[lo:hi], full
            return
        start, stop, step = self.start, self.stop, self.step
        if start >= stop:
            return
        last = start + (self.count - 1) * step
        for k in range(start // c, last // c + 1):
            lo, hi = k * c, min(k * c + c, stop)
            first = start if lo <= start else start + -(-(lo - start) // step) * step
            if first >= hi:
                continue
            n = len(range(first, hi, step))
            out0 = (first - start) // step
            extent = min(c, self.size - lo)
            full = step == 1 and first == lo and n == extent
            yield k, slice(first - lo, first - lo + (n - 1) * step + 1, step), slice(out0, out0 + n), full


def _expand_ellipsis(selection: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    n_ellipsis = sum(1 for s in selection if s is Ellipsis)
    if n_ellipsis > 1:
        raise SelectionError("an index can only have a single ellipsis ('...')")
    if n_ellipsis:
        i = next(i for i, s in enumerate(selection) if s is Ellipsis)
        fill = ndim - (len(selection) - 1)
        selection = selection[:i] + (slice(None),) * max(fill, 0) + selection[i + 1 :]
    if len(selection) > ndim:
        raise SelectionError(f"too many indices: {len(selection)} for an array of {ndim} dimension(s)")
    return selection + (slice(None),) * (ndim - len(selection))


def _dim_selection(sel: Any, size: int, chunk: int, axis: int) -> DimSelection:
    if isinstance(sel, slice):
        start, stop, step = sel.indices(size)
        if step > 0:
            return DimSelection(size, chunk, start, stop, step)
        # Same elements visited in increasing order; the output is reversed afterwards.
        n = len(range(start, stop, step))
        if n == 0:
            return DimSelection(size, chunk, 0, 0, 1)
        last = start + (n - 1) * step
        return DimSelection(size, chunk, last, start + 1, -step, flip=True)
    if isinstance(sel, (int, np.integer)) and not isinstance(sel, (bool, np.bool_)):
        i = operator.index(sel)
        if not -size <= i < size:
            raise SelectionError(f"index {i} is out of bounds for dimension {axis} of size {size}")
        i %= size
        return DimSelection(size, chunk, i, i + 1, 1, drop=True)
    arr = np.asarray(sel)
    if arr.dtype == bool:
        if arr.ndim != 1 or len(arr) != size:
            raise SelectionError(
                f"boolean index of shape {arr.shape} does not match dimension {axis} of size {size}"
            )
        return DimSelection(size, chunk, indices=np.flatnonzero(arr), positions=np.arange(int(arr.sum())))
    if arr.ndim == 0 and arr.dtype.kind in "iu":
        return _dim_selection(int(arr), size, chunk, axis)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        if arr.size == 0 and arr.ndim == 1:
            arr = arr.astype(np.intp)
        else:
            raise SelectionError(
                f"unsupported index {sel!r} for dimension {axis}: use an integer, a slice, "
                "a 1-D sequence of integers or a boolean mask"
            )
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < -size or arr.max() >= size):
        bad = arr[(arr < -size) | (arr >= size)][0]
        raise SelectionError(f"index {int(bad)} is out of bounds for dimension {axis} of size {size}")
    arr = np.where(arr < 0, arr + size, arr)
    order = np.argsort(arr, kind="stable")
    return DimSelection(size, chunk, indices=arr[order], positions=order)


@dataclass(frozen=True)
class ChunkProjection:
    coords: tuple[int, ...]
    chunk_selection: tuple[Projection, ...]
    out_selection: tuple[Projection, ...]
    #: The selection covers every element of this chunk that lies inside the array.
    full: bool
    #: ``chunk_selection`` before outer-indexing arrays were combined: per dimension, a
    #: slice or sorted indices (what a partial shard read takes).
    per_dim: tuple[Projection, ...] = ()


class OrthogonalSelection:
    """A normalised selection of an array of ``shape`` chunked by ``chunks``."""

    def __init__(self, selection: Selection, shape: tuple[int, ...], chunks: tuple[int, ...]) -> None:
        if not isinstance(selection, tuple):
            selection = (selection,)
        selection = _expand_ellipsis(selection, len(shape))
        self.dims = [
            _dim_selection(s, n, c, axis) for axis, (s, n, c) in enumerate(zip(selection, shape, chunks))
        ]
        #: Shape with every dimension kept (integers as length 1).
        self.full_shape = tuple(d.count for d in self.dims)
        #: Shape of what the user gets back or must provide.
        self.shape = tuple(d.count for d in self.dims if not d.drop)
        self._flip = tuple(slice(None, None, -1) if d.flip else slice(None) for d in self.dims)
        self._n_arrays = sum(d.indices is not None for d in self.dims)

    def out_view(self, out: np.ndarray) -> np.ndarray:
        """View ``out`` (of ``shape``) with every dimension kept and steps made positive."""
        return out.reshape(self.full_shape)[(*self._flip, Ellipsis)]  # a view even when 0-d

    def projections(self) -> Iterator[ChunkProjection]:
        if not self.dims:  # a scalar array has one chunk
            yield ChunkProjection((), (), (), True)
            return
        dim_chunks = [list(d.chunks()) for d in self.dims]
        for combo in itertools.product(*dim_chunks):
            coords = tuple(c[0] for c in combo)
            per_dim = tuple(c[1] for c in combo)
            chunk_sel, out_sel = per_dim, tuple(c[2] for c in combo)
            if self._n_arrays > 1:
                chunk_sel, out_sel = _ix(chunk_sel), _ix(out_sel)
            yield ChunkProjection(coords, chunk_sel, out_sel, all(c[3] for c in combo), per_dim)


def _ix(selection: tuple[Projection, ...]) -> tuple[np.ndarray, ...]:
    """Orthogonal (outer) indexing when more than one dimension is an integer array."""
    return np.ix_(*[np.arange(s.start, s.stop, s.step) if isinstance(s, slice) else s for s in selection])


@dataclass(frozen=True)
class ChunkPart:
    """The bytes of an uncompressed C-order chunk that a selection needs: ``ranges``
    ``(offset, length)``, which read one after the other hold an array of ``shape``, of which
    ``selection`` is the selection's part of the chunk."""

    ranges: list[tuple[int, int]]
    shape: tuple[int, ...]
    selection: tuple[Projection, ...]

    @property
    def nbytes(self) -> int:
        return sum(length for _, length in self.ranges)


#: Up to this many ranges, ``chunk_part`` computes offsets with Python integers.
_PYTHON_RANGES = 64


def _indices(sel: Projection) -> range | np.ndarray:
    return range(sel.start, sel.stop, sel.step) if isinstance(sel, slice) else np.asarray(sel)


def _covers(sel: Projection, extent: int) -> bool:
    if isinstance(sel, slice):
        return bool(sel.start == 0 and sel.step == 1 and sel.stop >= extent)
    return len(sel) == extent and bool(np.all(sel == np.arange(extent)))


def chunk_part(
    per_dim: Sequence[Projection], chunks: Sequence[int], itemsize: int, max_ranges: int
) -> ChunkPart | None:
    """The byte ranges of a stored uncompressed C-order chunk of ``chunks`` that hold the
    per-axis selection ``per_dim`` (``ChunkProjection.per_dim``): for each selected index of
    the axes before the innermost one not wholly selected, the span of that axis's
    selection times everything inside it. None when the selection covers the chunk, or
    would take more than ``max_ranges`` ranges."""
    ndim = len(chunks)
    axis = ndim - 1
    while axis >= 0 and _covers(per_dim[axis], chunks[axis]):
        axis -= 1
    if axis < 0:
        return None
    leading = [_indices(per_dim[j]) for j in range(axis)]
    count = math.prod(len(x) for x in leading)
    if count > max_ranges or count == 0:
        return None
    strides = [math.prod(chunks[j + 1 :]) * itemsize for j in range(ndim)]
    own = _indices(per_dim[axis])
    if not len(own):
        return None
    low, high = int(own[0]), int(own[-1]) + 1  # sorted, positive steps
    base = low * strides[axis]
    if count <= _PYTHON_RANGES:  # a point or a slice: plain integers cost less than numpy
        offsets = [
            base + sum(int(i) * strides[j] for j, i in enumerate(combo)) for combo in itertools.product(*leading)
        ]
    else:
        grid = np.full((), base, dtype=np.int64)
        for j, index in enumerate(leading):
            grid = np.add.outer(grid, np.asarray(index, dtype=np.int64) * strides[j])
        offsets = grid.ravel().tolist()
    length = (high - low) * strides[axis]
    here = per_dim[axis]
    shifted: Projection = (
        slice(here.start - low, here.stop - low, here.step) if isinstance(here, slice) else np.asarray(here) - low
    )
    selection: tuple[Projection, ...] = (
        *(slice(0, len(x), 1) for x in leading), shifted, *per_dim[axis + 1 :],
    )
    if sum(not isinstance(s, slice) for s in selection) > 1:
        selection = _ix(selection)
    shape = (*(len(x) for x in leading), high - low, *chunks[axis + 1 :])
    return ChunkPart([(o, length) for o in offsets], shape, selection)
