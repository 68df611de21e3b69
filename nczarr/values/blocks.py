"""The block planner: which hyperslabs to read or write, one after the other, so that a whole
variable goes through memory a bounded block at a time.

Every front end that streams a variable (a copy to Zarr, netCDF-3 and HDF5 writers, a CDL dump)
asks this one planner. A block is whole along its inner axes, cut along one axis, and one unit
along the axes before it; the unit is a chunk when the target is chunked (so that a block
covers whole chunks), one value otherwise (so that a block is contiguous in C order).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

Block = tuple[slice, ...]


def plan_blocks(
    shape: Sequence[int],
    itemsize: int,
    budget: int,
    chunks: Sequence[int] | None = None,
    whole_rows: bool = False,
) -> Iterator[Block]:
    """The blocks covering ``shape`` in C order, each of at most ``budget`` bytes (``itemsize``
    bytes a value) but never less than one unit: one chunk when ``chunks`` are given and one
    fits the budget, else one value; with ``whole_rows`` never less than one whole row (the
    last axis is never cut). A scalar gives one empty block, an empty shape none."""
    shape = tuple(shape)
    if not shape:
        yield ()
        return
    if 0 in shape:
        return
    block = block_shape(shape, itemsize, budget, chunks, whole_rows)
    for starts in _corners(shape, block):
        yield tuple(slice(s, min(s + b, n)) for s, b, n in zip(starts, block, shape, strict=True))


def block_shape(
    shape: Sequence[int],
    itemsize: int,
    budget: int,
    chunks: Sequence[int] | None = None,
    whole_rows: bool = False,
) -> tuple[int, ...]:
    """The shape of the blocks :func:`plan_blocks` gives (the last ones may be smaller)."""
    itemsize = max(1, itemsize)
    units = _units(shape, itemsize, budget, chunks, whole_rows)
    block = list(units)
    # grow from the innermost axis: whole axes while they fit, then cut the first that does not
    for axis in reversed(range(len(shape))):
        others = math.prod(block) // block[axis]
        fits = budget // (others * itemsize)
        if fits >= shape[axis]:
            block[axis] = shape[axis]
            continue
        unit = units[axis]
        block[axis] = max(unit, fits // unit * unit)
        break
    return tuple(block)


def first_index(block: Block, shape: Sequence[int]) -> int:
    """The flat C-order index of the first value of ``block`` in an array of ``shape``."""
    index = 0
    for part, n in zip(block, shape, strict=True):
        index = index * n + (part.start or 0)
    return index


def _corners(shape: tuple[int, ...], block: tuple[int, ...], axis: int = 0) -> Iterator[tuple[int, ...]]:
    """The first index of every block, in C order, one at a time (itertools.product would
    first list them all: a declared dimension of 2**62 values must not cost memory)."""
    if axis == len(shape):
        yield ()
        return
    for start in range(0, shape[axis], block[axis]):
        for rest in _corners(shape, block, axis + 1):
            yield (start, *rest)


def _units(
    shape: Sequence[int], itemsize: int, budget: int, chunks: Sequence[int] | None, whole_rows: bool
) -> list[int]:
    """The smallest block along each axis: a chunk when one fits the budget, else one value."""
    ones = [1] * len(shape)
    units = [min(c, n) for c, n in zip(chunks, shape, strict=True)] if chunks is not None else ones
    if math.prod(units) * itemsize > budget:
        units = ones
    if whole_rows:
        units[-1] = shape[-1]
    return units
