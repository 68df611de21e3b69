"""nczarr.utils against netCDF4.utils: the same arrays, values and exceptions."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import netCDF4
import netCDF4.utils as theirs_utils
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nczarr import utils
from nczarr.errors import NCZarrError


@dataclass
class FakeDim:
    unlimited: bool
    size: int = 0

    def isunlimited(self) -> bool:
        return self.unlimited

    def __len__(self) -> int:
        return self.size


@dataclass
class FakeGroup:
    dimensions: dict[str, Any]
    groups: dict[str, Any] = field(default_factory=dict)
    parent: Any = None
    path: str = "/"


def run(f) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f()
        except Exception as exc:
            return exc


def same_object_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and all(x == y for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))


def compare_scs(key: Any, shape: tuple[int, ...], **kw: Any) -> None:
    theirs = run(lambda: theirs_utils._StartCountStride(key, shape, return_selection=True, **kw))
    ours = run(lambda: utils._StartCountStride(key, shape, return_selection=True, **kw))
    what = (key, shape, kw.get("datashape"))
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert isinstance(ours, NCZarrError) and isinstance(ours, type(theirs)), (what, theirs, ours)
        assert str(ours) == str(theirs), what
        return
    for name, t, o in zip(("start", "count", "stride"), theirs[:3], ours[:3]):
        assert t.shape == o.shape and np.array_equal(t, o), (name, what, t, o)
    assert same_object_array(theirs[3], ours[3]), (what, theirs[3], ours[3])
    assert len(theirs[4]) == len(ours[4]), what
    for t, o in zip(theirs[4], ours[4]):
        assert type(t) is slice if type(o) is slice else np.array_equal(t, o), (what, t, o)
        if type(o) is slice:
            assert t == o, what
    assert list(theirs_utils._out_array_shape(theirs[1])) == utils._out_array_shape(ours[1]), what


SHAPES = [(5,), (4, 3), (3, 0, 4), (50, 4, 10), ()]
KEYS = [
    0, -1, 5, -6, 2.0, "1", slice(None), slice(2, 5, 2), slice(None, None, -2), ..., (), (..., 1),
    [2, 4, 7], [2, 3, 4], [1], [], np.array([], int), np.array([0, 1]), [3, 1, 1], [-1, -2],
    np.array([True, False, True, False, True]), np.array([False] * 5), np.array([False, True, True, True, False]),
    (slice(None), [1, 2, 3], 8), ([4, 6, 7], [1, 2, 3], slice(None)), ([1, 2], [1, 2], [1, 2]),
    (1, slice(None), np.array([True, True, False, False, True])), (0, 0, 0, 0), (..., ...), None, 2.5,
    np.arange(6).reshape(3, 2), (slice(0, 0), 9), (slice(None, -1, 2), np.array([2, 5, 7], "i4"), slice(None)),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_get_start_count_stride(shape):
    for key in KEYS:
        compare_scs(key, shape)
        compare_scs(key, shape, use_get_vars=False)


@pytest.mark.parametrize(
    "unlim, shape, key, datashape",
    [
        ((False, False, True), (22, 25, 1), (slice(None), slice(None), 1), (22, 25)),
        ((False, False, True), (22, 25, 1), (slice(None), slice(None), slice(1, 4)), (22, 25, 3)),
        ((False, False), (22, 25), ([0, 4, 5], slice(20, None)), (3, 5)),
        ((False, False, False), (10, 5, 12), ([0, 4, 5], np.array([False, True, False, True, True]), slice(None)), (3, 3, 12)),
        ((True, False, False), (0, 6, 7), ([0, 2, 5], slice(None), slice(None)), (3, 6, 7)),
        ((True, False, False), (0, 6, 7), (slice(None, None, 2), slice(None), slice(None)), (10, 6, 7)),
        ((True,), (0,), slice(10, None), (2,)),
        ((True,), (3,), slice(None), ()),
        ((True,), (0,), slice(None), ()),
        ((True, True), (4, 0), slice(None), ()),
        ((True, True), (0, 0), (slice(None), slice(5, None)), (2,)),
        ((True, True), (0, 0), (1, slice(5, None)), (2,)),
        ((True, False), (0, 3), (slice(2, None), 0), (3,)),
        ((True,), (2,), np.array([True, False, False, True, True]), (3,)),
        ((True,), (2,), [1, 7], (2,)),
        ((False,), (4,), slice(None), (3,)),
        ((False, False), (4, 3), slice(None), (12,)),
        ((False, False), (4, 3), (slice(0, 4),), (12,)),
        (
            (True, False, False, False, False),
            (2, 10, 20, 10, 10),
            (..., [15, 16, 17, 18, 19], slice(None), slice(None)),
            (2, 10, 5, 10, 10),
        ),
    ],
)
def test_put_start_count_stride(unlim, shape, key, datashape):
    names = [f"d{i}" for i in range(len(shape))]
    grp = FakeGroup({n: FakeDim(u, s) for n, u, s in zip(names, unlim, shape)})
    compare_scs(key, shape, dimensions=names, grp=grp, datashape=datashape, put=True)


def test_put_with_too_few_dimension_names():
    grp = FakeGroup({n: FakeDim(False) for n in "tzyx"})
    compare_scs((..., [1, 2]), (2, 10, 20, 10, 10), dimensions=list("tzyx"), grp=grp, datashape=(2,), put=True)


def axis_key(n: int):
    ints = st.integers(-n - 2, n + 2)
    return st.one_of(
        ints,
        st.builds(slice, st.none() | ints, st.none() | ints, st.sampled_from([None, 1, 2, -1, -3])),
        st.lists(st.integers(-n - 1, n + 1), max_size=4),
        st.lists(st.booleans(), min_size=n, max_size=n).map(np.array),
        st.just(...),
    )


@st.composite
def scs_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    n_items = draw(st.integers(0, len(shape) + 1))
    key = tuple(draw(axis_key(shape[i] if i < len(shape) else 2)) for i in range(n_items))
    if n_items == 1 and draw(st.booleans()):
        key = key[0]
    put = draw(st.booleans()) and bool(shape)
    kw: dict[str, Any] = {}
    if put:
        unlim = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
        names = [f"d{i}" for i in range(len(shape))]
        kw = {
            "dimensions": names,
            "grp": FakeGroup({n: FakeDim(u, s) for n, u, s in zip(names, unlim, shape)}),
            "datashape": tuple(draw(st.lists(st.integers(0, 4), max_size=len(shape) + 1))),
            "put": True,
        }
    return key, shape, kw


@settings(max_examples=300, deadline=None)
@given(scs_cases())
def test_start_count_stride_generated(case):
    key, shape, kw = case
    compare_scs(key, shape, **kw)


def test_out_array_shape():
    for key, shape in [((0, slice(None)), (3, 4)), (([1, 3], [0, 2], 1), (4, 4, 4)), (np.zeros(4, bool), (4,))]:
        count = theirs_utils._StartCountStride(key, shape)[1]
        assert utils._out_array_shape(count) == list(theirs_utils._out_array_shape(count))


def test_quantize():
    rng = np.random.default_rng(0)
    data = rng.normal(size=100) * 1000
    for digits in (-2, 0, 1, 3):
        np.testing.assert_array_equal(utils._quantize(data, digits), theirs_utils._quantize(data, digits))
    masked = np.ma.masked_array(data, mask=data > 0, fill_value=-9.0)
    ours, theirs = utils._quantize(masked, 2), theirs_utils._quantize(masked, 2)
    np.testing.assert_array_equal(ours.mask, theirs.mask)
    np.testing.assert_array_equal(ours.filled(), theirs.filled())
    assert ours.fill_value == theirs.fill_value


def test_small_helpers():
    values = [3, 3.0, 3.5, "3", "x", None, np.int8(4), np.float32(2.0), [1], b"7"]
    for v in values:
        assert utils._is_int(v) == theirs_utils._is_int(v), v
        assert utils._tostr(v) == theirs_utils._tostr(v), v
    for a, b in [
        (np.array([1.0, np.nan]), np.array([1.0, np.nan])),
        (np.array([1.5, 2.0]), np.array([1, 2])),
        (np.array([300]), np.array([300]).astype("i1")),
        (np.array(["a", "b"]), np.array(["a", "b"])),
        (np.array(["a", "b"]), np.array(["a", "c"])),
        (np.array([1, 2]), np.array([1, 2, 3])),
    ]:
        assert utils._safecast(a, b) == bool(theirs_utils._safecast(a, b)), (a, b)
    for a, b in [(["a", "b", "c"], [3, 1, 2]), ([1, 2, 3, 4], [0, 0, -1, 0]), ([], [])]:
        assert utils._sortbylist(a, b) == theirs_utils._sortbylist(a, b)
    # netCDF4's own _is_container fails with NameError on containers; the intent is kept.
    assert [utils._is_container(x) for x in ("abc", b"ab", 5, [1], (1,), {1: 2}, np.arange(2))] == [
        False, False, False, True, True, True, True,
    ]


def test_find_dim_and_walk_grps(tmp_path):
    with netCDF4.Dataset(tmp_path / "g.nc", "w") as ds:
        ds.createDimension("x", 3)
        a = ds.createGroup("a")
        a.createDimension("y", 2)
        b = a.createGroup("b")
        ds.createGroup("c")
        for name in ("x", "y"):
            assert utils._find_dim(b, name) is theirs_utils._find_dim(b, name)
        with pytest.raises(ValueError, match="cannot find dimension z in this group or parent groups"):
            utils._find_dim(b, "z")
        with pytest.raises(ValueError):
            theirs_utils._find_dim(b, "z")
        theirs = [sorted(g.name for g in level) for level in theirs_utils._walk_grps(ds)]
        ours = [sorted(g.name for g in level) for level in utils._walk_grps(ds)]
        assert ours == theirs == [["a", "c"], ["b"], [], []]
    orphan = FakeGroup({"t": None}, path="/g")
    with pytest.raises(KeyError):
        utils._find_dim(orphan, "t")
