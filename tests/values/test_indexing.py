"""netCDF4's indexing rules: read_key/write_key/fit_data against the real netCDF4 on HDF5."""

from __future__ import annotations

import itertools
import tempfile
import warnings
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nczarr.errors import NCZarrError, SelectionError
from nczarr.values.indexing import Key, fit_data, read_key, write_key

FILL = -2147483647  # netCDF4's default fill for i4
READ_SHAPES = [(), (0,), (3,), (4, 3), (2, 0, 3), (3, 2, 4)]
_counter = itertools.count()


@pytest.fixture(scope="module")
def tmpdir_module():
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


@pytest.fixture(scope="module")
def read_vars(tmpdir_module):
    """One netCDF4 variable per shape in READ_SHAPES, holding arange data."""
    ds = netCDF4.Dataset(tmpdir_module / "read.nc", "w")
    out = {}
    for k, shape in enumerate(READ_SHAPES):
        dims = []
        for j, n in enumerate(shape):
            name = f"d{k}_{j}"
            ds.createDimension(name, None if n == 0 else n)
            dims.append(name)
        v = ds.createVariable(f"v{k}", "i4", dims)
        v.set_auto_mask(False)
        data = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
        if data.size or not shape:
            v[...] = data
        out[shape] = (v, data)
    yield out
    ds.close()


def gather(a: np.ndarray, key: Key) -> np.ndarray:
    """Orthogonal read emulated with numpy, one axis at a time."""
    ax = 0
    for s in key.selection:
        if isinstance(s, slice):
            a = a[(slice(None),) * ax + (s,)]
            ax += 1
        else:
            a = np.take(a, s, axis=ax)
            ax += isinstance(s, np.ndarray)
    return a


def scatter(a: np.ndarray, key: Key, value: np.ndarray) -> None:
    """Orthogonal write emulated with numpy (later duplicates win, as in netCDF4)."""
    if 0 in key.counts:
        return
    if not a.ndim:
        a[()] = value
        return
    axes = [
        np.arange(*s.indices(n)) if isinstance(s, slice) else np.atleast_1d(s)
        for s, n in zip(key.selection, a.shape)
    ]
    a[np.ix_(*axes)] = value.reshape(key.counts)


def outcome(f) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.asarray(f())
        except Exception as exc:
            return exc


def assert_same(theirs: Any, ours: Any, what: Any) -> None:
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert isinstance(theirs, Exception), (what, theirs, ours)
        assert isinstance(ours, NCZarrError) and isinstance(ours, type(theirs)), (what, theirs, ours)
        if type(theirs).__name__ in ("IndexError", "ValueError", "RuntimeError"):
            assert str(ours) == str(theirs), what
        return
    assert theirs.shape == ours.shape, what
    np.testing.assert_array_equal(theirs, ours, err_msg=repr(what))


def check_read(read_vars, shape, key) -> None:
    v, data = read_vars[shape]
    theirs = outcome(lambda: v[key])
    ours = outcome(lambda: gather(data, read_key(key, shape)))
    if not isinstance(ours, Exception):
        assert ours.shape == read_key(key, shape).shape
    assert_same(theirs, ours, (shape, key))


HAND_KEYS = [
    0, -1, 2, -3, 4, -5, 2.0, np.int64(1), np.uint8(1), True, "1", "-1", b"1", "12",
    slice(None), slice(None, None, -1), slice(1, None, -2), slice(3, 100), slice(-100, 2), slice(0, 0),
    ..., (), (..., 0), (0, ...), (..., ...), (0, ..., 0), (0, 0, 0, 0), (..., 0, 0, 0, 0),
    [0, 2], [2, 0, 0], [[0, 2]], [-1, -2], [3], [-4], [], np.array([], int), np.array([[0]]),
    ([0, 2], [1, 0]), ([0, 1], [1], [3, 0, 3]), (0, [0, 1], 0), (slice(0, 0), 7), (slice(0, 0), 1),
    np.array([True, False, True]), np.array([True, False, True, False]), np.array([False] * 3),
    [True, False, True], (slice(None), np.array([True, False])), None, 2.5, float("nan"), 1 + 0j,
    object(), (0, None), [slice(None), 0], np.array(1), (np.array([0, 1], np.uint8),),
    (slice(None, None, 2), [0, 2], slice(None, None, -3)),
]


@pytest.mark.parametrize("shape", READ_SHAPES, ids=str)
def test_read_hand_picked(read_vars, shape):
    for key in HAND_KEYS:
        check_read(read_vars, shape, key)


def axis_index(n: int):
    ints = st.integers(-n - 2, n + 2)
    return st.one_of(
        ints,
        st.builds(slice, st.none() | ints, st.none() | ints, st.sampled_from([None, 1, 2, -1, -2, 3])),
        st.lists(st.integers(-n - 1, n + 1), max_size=4),
        st.lists(st.booleans(), min_size=n, max_size=n).map(np.array),
        st.lists(st.booleans(), min_size=max(n - 1, 0), max_size=n + 1).map(np.array),
        ints.map(float),
        ints.map(str),
        st.just(...),
    )


@st.composite
def read_cases(draw):
    shape = draw(st.sampled_from(READ_SHAPES))
    n_items = draw(st.integers(0, len(shape) + 1))
    items = [draw(axis_index(shape[i] if i < len(shape) else 2)) for i in range(n_items)]
    if n_items == 1 and draw(st.booleans()):
        return shape, items[0]
    return shape, tuple(items)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(read_cases())
def test_read_generated(read_vars, case):
    check_read(read_vars, *case)


# -- writes --------------------------------------------------------------------------------


class Pair:
    """The same variable in netCDF4 (HDF5) and as a numpy array grown with write_key."""

    def __init__(self, folder: Path, dims: list[tuple[str, int | None]], initial: tuple[int, ...]):
        self.ds = netCDF4.Dataset(folder / f"w{next(_counter)}.nc", "w", diskless=True)
        for name, size in dims:
            self.ds.createDimension(name, size)
        self.v = self.ds.createVariable("v", "i4", [d for d, _ in dims])
        self.v.set_auto_mask(False)
        self.unlimited = [size is None for _, size in dims]
        self.a = np.full([size or 0 for _, size in dims], FILL, dtype="i4")
        if any(initial):
            block = np.arange(int(np.prod(initial)), dtype="i4").reshape(initial) + 100
            self.v[tuple(slice(0, n) for n in initial)] = block
            self.a = np.full(initial, FILL, dtype="i4")
            self.a[...] = block

    def write(self, key: Any, data: Any) -> bool:
        """Write through both; False once netCDF4's state cannot be followed any more."""
        data = np.asarray(data, dtype="i4")
        before = data.copy()
        theirs = outcome(lambda: self.v.__setitem__(key, data))
        ours = outcome(lambda: self._write(key, data))
        np.testing.assert_array_equal(data, before)  # the caller's array is left alone
        if isinstance(ours, SelectionError) and "does not conform" in str(ours):
            # netCDF4 writes element by element there: it may write part and then fail,
            # or drop surplus values silently; nczarr refuses the whole write instead.
            return False
        if isinstance(theirs, IndexError) and "too many indices for array" in str(theirs):
            # netCDF4 cannot write with a negative step next to an integer index; nczarr can.
            assert not isinstance(ours, Exception) or isinstance(ours, NCZarrError)
            return False
        if isinstance(theirs, Exception) or isinstance(ours, Exception):
            assert_same(theirs, ours, (key, data.shape))
        assert self.v.shape == self.a.shape, (key, data.shape)
        np.testing.assert_array_equal(self.v[...], self.a, err_msg=repr((key, data.shape)))
        return True

    def _write(self, key: Any, data: np.ndarray) -> None:
        k = write_key(key, self.a.shape, self.unlimited, data.shape)
        value = fit_data(data, k)
        assert value.shape == k.shape
        if k.grown != self.a.shape:
            grown = np.full(k.grown, FILL, dtype="i4")
            grown[tuple(slice(0, n) for n in self.a.shape)] = self.a
            self.a = grown
        scatter(self.a, k, value)


@pytest.fixture
def pair(tmp_path):
    made = []

    def make(dims, initial=()):
        made.append(Pair(tmp_path, dims, initial))
        return made[-1]

    yield make
    for p in made:
        p.ds.close()


HAND_WRITES = [
    # (dimensions, initial data shape, [(key, data), ...])
    ([("u", None)], (), [(slice(None), 1)]),
    ([("u", None)], (), [(slice(10, None), [1, 2]), (slice(None), [7, 8]), (15, 3), (slice(None, None, 2), [1, 2, 3])]),
    ([("u", None)], (3,), [(4, 1), ([1, 7], [5, 6]), ([True, True, False, False, False, True, False, False, True], 9)]),
    ([("u", None)], (3,), [(slice(5, 7), [1, 2]), (slice(None, None, -1), [1, 2, 3]), (-1, 4), (-9, 1)]),
    ([("u", None), ("x", 4)], (), [(slice(None), 1), (slice(5, 7), 1), ((slice(None), 0), 2), (slice(None), np.arange(4))]),
    ([("u", None), ("x", 4)], (2, 4), [(10, 1), (slice(None), np.ones((12, 1, 4))), ((0, slice(None)), np.arange(4))]),
    ([("u", None), ("w", None)], (), [(slice(None), 1), ((2, 3), 1), ((slice(None), slice(5, None)), np.ones(2))]),
    ([("u", None), ("w", None)], (), [((1, slice(5, None)), np.ones(2)), ((slice(2, None), 0), [1, 2, 3])]),
    ([("u", None), ("w", None)], (2, 2), [(([0, 3], [1, 4]), np.ones((2, 2))), ((slice(None), [5]), 7)]),
    ([("x", 4)], (4,), [(slice(None), [5]), (4, 1), ([0, 2, 3], [1, 2, 3]), (slice(0, 0), [1, 2])]),
    ([("x", 4)], (4,), [(slice(4, None), []), (slice(None), np.ones(3)), (slice(None, None, -1), np.arange(4))]),
    ([("x", 4), ("y", 3)], (4, 3), [(slice(None), np.arange(12)), (slice(0, 4), np.arange(12)), (slice(None), np.ones(4))]),
    ([("x", 4), ("y", 3)], (4, 3), [(slice(None), np.ones((4, 1))), (0, np.ones(2)), ((0, [0, 2]), np.ones(3))]),
    ([("x", 4), ("y", 3)], (4, 3), [((5, slice(0, 0)), 1), ((..., 1), np.arange(4)), (([0, 2], [2, 0]), [[1, 2], [3, 4]])]),
    ([("x", 4), ("y", 3)], (4, 3), [(slice(None), np.ones((1, 4, 3))), ((1, 1), [[5]]), (0, np.ones((3, 1)))]),
    ([("x", 4), ("u", None)], (), [(slice(None), 1), ((0, slice(2, None)), [1, 2]), ((slice(None), 5), 1)]),
    # A repeated index is no slice; netCDF4 then fails to spread shorter data over the axes.
    ([("x", 3), ("y", 2)], (3, 2), [(([0, 0],), np.zeros(0)), (([1, 1],), [5]), (([0, 0],), np.ones((2, 2)))]),
]


@pytest.mark.parametrize("dims, initial, writes", HAND_WRITES)
def test_write_hand_picked(pair, dims, initial, writes):
    p = pair(dims, initial)
    for key, data in writes:
        if not p.write(key, data):
            break


def test_write_scalar(pair):
    p = pair([])
    for key, data in [(..., 3), (slice(None), [4]), ((), 5), (0, np.array([[6]])), (-1, 7), (1, 8), (slice(None), [1, 2])]:
        p.write(key, data)


def test_write_refusals_that_netcdf4_half_does():
    """Where netCDF4 writes part of the data before failing or drops the rest, nczarr
    refuses the write with netCDF4's size message."""
    for key, data in [([0, 2, 3], [1, 2]), ([0, 1, 3], [1, 2, 3, 4]), (2, [7, 8, 9])]:
        with pytest.raises(IndexError, match="size of data array does not conform to slice"):
            k = write_key(key, (4,), [False], np.shape(data))
            fit_data(np.asarray(data), k)


@st.composite
def write_cases(draw):
    dims = draw(
        st.sampled_from(
            [
                [("u", None)],
                [("u", None), ("x", 3)],
                [("x", 3), ("u", None)],
                [("u", None), ("w", None)],
                [("x", 3), ("y", 2)],
            ]
        )
    )
    initial = tuple(draw(st.integers(0, 3)) if size is None else size for _, size in dims)
    if 0 in initial:
        initial = ()
    writes = []
    for _ in range(draw(st.integers(1, 3))):
        ndim = len(dims)
        n_items = draw(st.integers(0, ndim))
        key = tuple(draw(axis_index(3)) for _ in range(n_items))
        if n_items == 1 and draw(st.booleans()):
            key = key[0]
        data_shape = draw(
            st.one_of(st.just(()), st.lists(st.integers(0, 4), min_size=1, max_size=ndim + 1).map(tuple))
        )
        writes.append((key, data_shape))
    return dims, initial, writes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(write_cases())
def test_write_generated(pair, case):
    dims, initial, writes = case
    p = pair(dims, initial)
    for key, data_shape in writes:
        data = np.arange(int(np.prod(data_shape)), dtype="i4").reshape(data_shape) + 1
        if not p.write(key, data):
            break


def test_fit_data_never_modifies_input():
    data = np.ones((5, 1, 5), dtype="i4")
    k = write_key(slice(None), (5, 5, 5), [False, False, False], data.shape)
    out = fit_data(data, k)
    assert out.shape == k.shape == (5, 5, 5)
    assert data.shape == (5, 1, 5)


def test_fit_data_keeps_the_mask():
    data = np.ma.masked_array([1, 2, 3], mask=[False, True, False])
    for key, shape in [(slice(None), (4, 3)), ((slice(0, 1), slice(None)), (4, 3)), (1, (2, 3))]:
        k = write_key(key, shape, [False, False], data.shape)
        out = fit_data(data, k)
        assert out.shape == k.shape
        np.testing.assert_array_equal(np.ma.getmaskarray(out), np.broadcast_to([False, True, False], k.shape))


def test_int_and_slice_keys_take_the_fast_path(monkeypatch):
    """Keys of ints and slices are resolved without numpy (loops call this per element)."""
    import nczarr.values.indexing as indexing

    def boom(*args, **kwargs):
        raise AssertionError("numpy used on the fast path")

    monkeypatch.setattr(indexing.np, "asarray", boom)
    k = read_key((3, slice(None), -1), (5, 4, 6))
    assert k.selection == (3, slice(0, 4, 1), 5) and k.shape == (4,)
    k = write_key((7, slice(2, None)), (5, 4), [True, False], (2,))
    assert k.grown == (8, 4) and k.shape == (2,)
