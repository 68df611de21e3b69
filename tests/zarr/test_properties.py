"""Property tests: orthogonal reads and writes of nczarr arrays agree with numpy.

Random shapes (0-3 dimensions of 0-12), chunks, data types and selections (integers, slices
with any step and out-of-range bounds, integer lists, boolean masks, Ellipsis) against a
numpy reference indexed the orthogonal way (``np.ix_``; integer-indexed dimensions dropped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nczarr.store import MemoryStore
from nczarr.zarr import Array, create_array, open_array

DTYPES = [np.dtype("int16"), np.dtype("float64"), np.dtype("bool")]
PATH = "x"
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Layout:
    """An array to create: format, shape, chunks, dtype, fill value, compression."""

    zarr_format: int
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype
    fill_value: Any
    compressed: bool

    def create(self, store: MemoryStore) -> Array:
        options: dict[str, Any] = {}
        if self.compressed and self.zarr_format == 3:
            options["compressors"] = [{"name": "gzip", "configuration": {"level": 1}}]
        elif self.compressed:
            options["compressor"] = {"id": "gzip", "level": 1}
        return create_array(
            store, PATH, zarr_format=self.zarr_format, shape=self.shape, chunks=self.chunks,
            dtype=self.dtype, fill_value=self.fill_value, **options,
        )

    def initial(self) -> np.ndarray:
        """What a new array reads as: its fill value (zero when none was given)."""
        return np.full(self.shape, 0 if self.fill_value is None else self.fill_value, dtype=self.dtype)


def _elements(dtype: np.dtype) -> st.SearchStrategy[Any]:
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "i":
        return st.integers(-(2**15), 2**15 - 1)
    return st.floats(width=64)  # NaN, infinities and -0.0 included


@st.composite
def layouts(draw: st.DrawFn) -> Layout:
    shape = tuple(draw(st.lists(st.integers(0, 12), min_size=0, max_size=3)))
    chunks = tuple(draw(st.integers(1, n + 2)) for n in shape)
    dtype = draw(st.sampled_from(DTYPES))
    fill_value = draw(st.none() | _elements(dtype))
    return Layout(draw(st.sampled_from([2, 3])), shape, chunks, dtype, fill_value, draw(st.booleans()))


@dataclass(frozen=True)
class Selection:
    """A user's selection and, per dimension, the indices it picks (for the reference)."""

    key: Any
    indices: tuple[np.ndarray, ...]
    dropped: tuple[bool, ...]

    def reference(self, array: np.ndarray) -> np.ndarray:
        """Orthogonal indexing of ``array`` with numpy."""
        picked = array[np.ix_(*self.indices)] if self.indices else array[()]
        return picked[tuple(0 if drop else slice(None) for drop in self.dropped)]

    def assign(self, array: np.ndarray, value: Any) -> None:
        """Orthogonal assignment into ``array`` with numpy."""
        full = tuple(1 if drop else len(idx) for idx, drop in zip(self.indices, self.dropped))
        value = np.broadcast_to(np.asarray(value, dtype=array.dtype), self.reference(array).shape)
        if self.indices:
            array[np.ix_(*self.indices)] = value.reshape(full)
        else:
            array[()] = value


@st.composite
def dim_selections(draw: st.DrawFn, size: int, unique: bool) -> tuple[Any, np.ndarray, bool]:
    """(what the user passes, the indices it selects in order, whether the dimension is dropped)."""
    positions = np.arange(size)
    index = st.integers(-size, size - 1)
    kinds = ["slice", "list", "mask"] + (["int"] if size else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        i = draw(index)
        return i, positions[[i]], True
    if kind == "slice":
        bound = st.none() | st.integers(-size - 3, size + 3)
        step = draw(st.none() | st.integers(-4, 4).filter(bool))
        sel = slice(draw(bound), draw(bound), step)
        return sel, positions[sel], False
    if kind == "mask":
        mask = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool)
        return mask, positions[mask], False
    if size == 0:
        return [], positions[[]], False
    if unique:  # a write to a repeated index has no defined winner: keep each position once
        chosen = draw(st.lists(st.integers(0, size - 1), unique=True, max_size=6))
        items = [i - size if draw(st.booleans()) else i for i in chosen]
    else:
        items = draw(st.lists(index, max_size=6))
        if draw(st.booleans()):
            items = sorted(items, key=lambda i: i % size)
    as_array = draw(st.booleans())
    return (np.array(items, dtype=np.int64) if as_array else items), positions[np.array(items, dtype=np.intp)], False


@st.composite
def selections(draw: st.DrawFn, shape: tuple[int, ...], unique: bool = False) -> Selection:
    dims = [draw(dim_selections(size, unique)) for size in shape]
    keys = [d[0] for d in dims]
    indices = [np.asarray(d[1], dtype=np.intp) for d in dims]
    dropped = [d[2] for d in dims]
    ndim = len(shape)
    form = draw(st.sampled_from(["tuple", "ellipsis", "short"]))
    if form == "ellipsis":
        # Ellipsis stands for a run of whole dimensions.
        start = draw(st.integers(0, ndim))
        stop = draw(st.integers(start, ndim))
        for axis in range(start, stop):
            indices[axis], dropped[axis] = np.arange(shape[axis]), False
        key: Any = (*keys[:start], Ellipsis, *keys[stop:])
    elif form == "short":
        # Trailing dimensions left out are selected whole.
        kept = draw(st.integers(0, ndim))
        for axis in range(kept, ndim):
            indices[axis], dropped[axis] = np.arange(shape[axis]), False
        key = tuple(keys[:kept])
        if len(key) == 1 and draw(st.booleans()):
            key = key[0]  # a bare selection, not in a tuple
    else:
        key = tuple(keys)
    return Selection(key, tuple(indices), tuple(dropped))


def assert_equal(actual: Any, expected: np.ndarray) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)  # NaN equals NaN


@SETTINGS
@given(data=st.data())
def test_orthogonal_reads_match_numpy(data: st.DataObject) -> None:
    layout = data.draw(layouts(), "layout")
    reference = data.draw(hnp.arrays(layout.dtype, layout.shape, elements=_elements(layout.dtype)), "values")
    store = MemoryStore()
    array = layout.create(store)
    array[...] = reference
    array.flush()
    reopened = open_array(store, PATH)
    for _ in range(3):
        selection = data.draw(selections(layout.shape), "selection")
        expected = selection.reference(reference)
        assert_equal(array[selection.key], expected)
        assert_equal(reopened[selection.key], expected)


@SETTINGS
@given(data=st.data())
def test_orthogonal_writes_match_numpy(data: st.DataObject) -> None:
    layout = data.draw(layouts(), "layout")
    reference = layout.initial()
    store = MemoryStore()
    array = layout.create(store)
    for _ in range(data.draw(st.integers(1, 3), "writes")):
        selection = data.draw(selections(layout.shape, unique=True), "selection")
        target_shape = selection.reference(reference).shape
        value = data.draw(
            hnp.arrays(layout.dtype, target_shape, elements=_elements(layout.dtype))
            | _elements(layout.dtype),  # a scalar, broadcast
            "value",
        )
        array[selection.key] = value
        selection.assign(reference, value)
        if data.draw(st.booleans(), "flush"):
            array.flush()
        probe = data.draw(selections(layout.shape), "probe")  # dirty cached chunks and stored ones
        assert_equal(array[probe.key], probe.reference(reference))
        assert_equal(array[...], reference)
    array.flush()
    assert_equal(open_array(store, PATH, mode="r")[...], reference)
