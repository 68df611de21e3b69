"""The block planner: blocks cover a shape once, in C order, within the budget, aligned."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nczarr.values.blocks import block_shape, first_index, plan_blocks

shapes = st.lists(st.integers(0, 7), max_size=4).map(tuple)


def _size(block: tuple[slice, ...]) -> int:
    return math.prod(s.stop - s.start for s in block)


def _covers_once(shape: tuple[int, ...], blocks: list[tuple[slice, ...]]) -> bool:
    seen = np.zeros(shape, int)
    for block in blocks:
        seen[block] += 1
    return bool((seen == 1).all())


def test_scalar_and_empty() -> None:
    assert list(plan_blocks((), 4, 1)) == [()]
    assert list(plan_blocks((3, 0, 2), 4, 100)) == []


def test_everything_fits_in_one_block() -> None:
    assert list(plan_blocks((3, 4), 8, 1000)) == [(slice(0, 3), slice(0, 4))]


def test_contiguous_cut_of_the_first_axis_that_does_not_fit() -> None:
    # 5 rows of 4 int32 = 16 bytes each, 40 bytes: two rows a block
    assert block_shape((5, 4), 4, 40) == (2, 4)
    # a row does not fit: one row, cut along the last axis
    assert block_shape((5, 4), 4, 12) == (1, 3)
    # not even one value fits: still one value
    assert block_shape((5, 4), 4, 1) == (1, 1)


def test_chunked_blocks_are_whole_chunks() -> None:
    assert block_shape((100, 1000), 1, 3000, chunks=(10, 100)) == (10, 300)
    assert block_shape((10, 10), 1, 30, chunks=(5, 5)) == (5, 5)
    # a chunk larger than the dimension counts as the dimension
    assert block_shape((4, 4), 4, 32, chunks=(100, 2)) == (4, 2)
    # a chunk larger than the budget: contiguous blocks within the budget
    assert block_shape((10, 10), 1, 8, chunks=(5, 5)) == (1, 8)


def test_whole_rows_never_cut_the_last_axis() -> None:
    assert block_shape((6, 10), 1, 7, whole_rows=True) == (1, 10)
    assert block_shape((6, 10), 1, 25, whole_rows=True) == (2, 10)
    assert block_shape((3, 4, 10), 1, 25, whole_rows=True) == (1, 2, 10)
    assert block_shape((10,), 1, 3, whole_rows=True) == (10,)
    assert block_shape((10,), 1, 3) == (3,)


def test_blocks_come_one_at_a_time() -> None:
    """A declared dimension of 2**62 values costs no memory before its first block."""
    blocks = plan_blocks((2**62, 3), 8, 1024)
    assert next(blocks) == (slice(0, 42), slice(0, 3))
    assert next(blocks) == (slice(42, 84), slice(0, 3))


def test_first_index() -> None:
    assert first_index((), ()) == 0
    assert first_index((slice(1, 2), slice(2, 4)), (3, 5)) == 7


@given(
    shape=shapes,
    itemsize=st.sampled_from([1, 2, 4, 8]),
    budget=st.integers(1, 400),
    chunked=st.booleans(),
    whole_rows=st.booleans(),
    data=st.data(),
)
@settings(max_examples=200, deadline=None)
def test_blocks_cover_the_shape_once_in_order_within_the_budget(
    shape: tuple[int, ...], itemsize: int, budget: int, chunked: bool, whole_rows: bool, data: st.DataObject
) -> None:
    chunks = tuple(data.draw(st.integers(1, 8)) for _ in shape) if chunked else None
    whole_rows = whole_rows and bool(shape)
    blocks = list(plan_blocks(shape, itemsize, budget, chunks, whole_rows))
    assert _covers_once(shape, blocks)
    corners = [tuple(s.start for s in b) for b in blocks]
    assert corners == sorted(corners)  # C order
    units = [min(c, n) for c, n in zip(chunks, shape)] if chunks else [1] * len(shape)
    aligned = bool(chunks) and math.prod(units) * itemsize <= budget
    if not aligned:
        units = [1] * len(shape)
    if whole_rows:
        units[-1] = shape[-1]
    for block in blocks:  # never more than the budget, or one unit
        assert _size(block) * itemsize <= max(budget, itemsize * math.prod(units))
        if whole_rows:
            assert block[-1] == slice(0, shape[-1])
    if chunks and aligned:  # every block starts on a chunk boundary
        assert all(s.start % c == 0 for block in blocks for s, c in zip(block, chunks))
    if not chunks:  # contiguous: each block starts where the one before it ended
        position = 0
        for block in blocks:
            assert first_index(block, shape) == position
            position += _size(block)
