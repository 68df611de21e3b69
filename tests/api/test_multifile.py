"""MFDataset and MFTime compared with netCDF4's.

The same members are written twice with the same netCDF4 API calls: as NETCDF4_CLASSIC files
by netCDF4 (read by ``netCDF4.MFDataset``, the reference) and as nczarr stores (read by
nczarr's ``MFDataset``). nczarr's ``MFDataset`` also runs over the netCDF4 files themselves
(members opened by ``netCDF4.Dataset``), which tests the aggregation on its own.
"""

from __future__ import annotations

import datetime
import pickle
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.api.multifile import MFDataset, MFTime
from nczarr.errors import NCZarrError

LENGTHS = (3, 0, 4, 2)  # records per member; the second member is empty
BAD = ("shape", "dtype", "dims", "missing", "nocalendar", "calendar")


def write_member(
    Dataset: Callable[..., Any], path: Path, index: int, change: str | None = None, **kwargs: Any
) -> None:
    """Member ``index`` of the set, or a variant of member 0 with one ``change`` (BAD)."""
    records = LENGTHS[index]
    first = sum(LENGTHS[:index])
    with Dataset(path, "w", **kwargs) as ds:
        ds.title = f"member {index}"
        ds.history = "written by test_multifile"
        ds.version = np.int32(index)
        ds.createDimension("t", None)
        ds.createDimension("x", 4 if change == "shape" else 3)
        ds.createDimension("y", 3)
        ds.createDimension("n", 4)
        t = ds.createVariable("t", "f8", ("t",))
        t.units = f"days since 2000-01-{index + 1:02d}"
        t.axis = "T"
        if change != "nocalendar":
            t.calendar = "julian" if change == "calendar" else "standard"
        x = ds.createVariable("x", "i4", ("x",))
        x.axis = "X"
        x[:] = np.arange(len(ds.dimensions["x"]))
        s = ds.createVariable("s", "f4", ())
        s[...] = 7
        c = ds.createVariable("c", "S1", ("t", "n"))
        name = ds.createVariable("name", "S1", ("t", "n"))
        name._Encoding = "ascii"
        if change != "missing":
            dims = ("t", "y" if change == "dims" else "x")
            v = ds.createVariable("v", "i4" if change == "dtype" else "i2", dims, fill_value=-1)
            v.scale_factor = np.float32(0.5)
            v.long_name = "packed"
        if records:
            t[:] = np.arange(records) * 1.5
            words = np.array([f"r{first + r}"[: 1 + r % 4] for r in range(records)], "S4")
            c[:] = netCDF4.stringtochar(words)
            name[:] = words
            if change != "missing":
                width = len(ds.dimensions["x"])
                v[:] = np.arange(first * 3, first * 3 + records * width).reshape(records, width)
                if index == 2:
                    v[1, 1] = np.ma.masked


@dataclass
class Members:
    """Paths of the same members: ``reference`` for netCDF4.MFDataset, ``ours`` for nczarr's."""

    reference: list[str]
    ours: list[str]
    bad_reference: dict[str, str]
    bad_ours: dict[str, str]
    reference_glob: str
    ours_glob: str


def _write_set(Dataset: Callable[..., Any], folder: Path, suffix: str, **kwargs: Any) -> tuple:
    (folder / "ok").mkdir(parents=True)
    (folder / "bad").mkdir()
    paths = [str(folder / "ok" / f"m{i}{suffix}") for i in range(len(LENGTHS))]
    for i, path in enumerate(paths):
        write_member(Dataset, Path(path), i, **kwargs)
    bad = {change: str(folder / "bad" / f"{change}{suffix}") for change in BAD}
    for change, path in bad.items():
        write_member(Dataset, Path(path), 0, change, **kwargs)
    return paths, bad, str(folder / "ok" / f"m*{suffix}")


@pytest.fixture(scope="session")
def nc_set(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    return _write_set(netCDF4.Dataset, tmp_path_factory.mktemp("nc"), ".nc", format="NETCDF4_CLASSIC")


@pytest.fixture(scope="session")
def store_set(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    from nczarr.api.dataset import Dataset

    return _write_set(Dataset, tmp_path_factory.mktemp("zarr"), ".zarr")


@pytest.fixture(params=["netCDF4 members", "nczarr stores"])
def members(request: pytest.FixtureRequest, nc_set: tuple, monkeypatch: pytest.MonkeyPatch) -> Members:
    if request.param == "netCDF4 members":
        monkeypatch.setattr(MFDataset, "_open", staticmethod(netCDF4.Dataset))
        ours = nc_set
    else:
        ours = request.getfixturevalue("store_set")
    return Members(nc_set[0], ours[0], nc_set[1], ours[1], nc_set[2], ours[2])


@pytest.fixture
def pair(members: Members):
    """The reference and nczarr multi-file datasets over the four members."""
    reference, ours = netCDF4.MFDataset(members.reference), MFDataset(members.ours)
    yield reference, ours
    reference.close()
    ours.close()


# -- observing results --------------------------------------------------------------------


def _builtin(exc: BaseException) -> str:
    return next(cls.__name__ for cls in type(exc).__mro__ if cls.__module__ == "builtins")


def observe(call: Callable[[], Any]) -> Any:
    """What ``call`` returns (type, dtype, shape, unmasked values, mask, fill value) or raises
    (builtin class and message)."""
    try:
        result = call()
    except Exception as exc:
        return ("raises", _builtin(exc), str(exc))
    if result is np.ma.masked:
        return ("masked",)
    if isinstance(result, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(result)
        values = [None if m else v for v, m in zip(result.data.ravel().tolist(), mask.ravel().tolist())]
        return ("MaskedArray", result.dtype.str, result.shape, values, mask.tolist(), repr(result.fill_value))
    if isinstance(result, np.ndarray):
        return ("ndarray", result.dtype.str, result.shape, result.tolist())
    if isinstance(result, np.generic):
        return (type(result).__name__, result.item())
    return (type(result).__name__, result)


def _root_line(text: str) -> str:
    # the data model and disk format of nczarr stores are nczarr's own
    return re.sub(r"\(\S+ data model, file format \S+\)", "(<model>)", text)


# -- structure ----------------------------------------------------------------------------


def test_structure_follows_the_master(pair):
    reference, ours = pair
    assert list(ours.dimensions) == list(reference.dimensions) == ["t", "x", "y", "n"]
    assert list(ours.variables) == list(reference.variables)
    assert {n: type(v).__name__ for n, v in ours.variables.items() if type(v).__name__ == "_Variable"} == {
        n: type(v).__name__ for n, v in reference.variables.items() if type(v).__name__ == "_Variable"
    }
    joined = sorted(n for n, v in ours.variables.items() if type(v).__name__ == "_Variable")
    assert joined == ["c", "name", "t", "v"]
    assert ours.path == reference.path == "/"
    assert list(ours.groups) == list(reference.groups) == []
    assert _root_line(repr(ours)) == _root_line(repr(reference))
    for name in ("t", "x"):
        assert repr(ours.dimensions[name]) == repr(reference.dimensions[name])
        assert len(ours.dimensions[name]) == len(reference.dimensions[name])
        assert ours.dimensions[name].isunlimited() == reference.dimensions[name].isunlimited()
    for name in ("t", "v", "c", "name"):
        assert repr(ours[name]) == repr(reference[name])
        mine, theirs = ours[name], reference[name]
        assert (mine.shape, mine.ndim, len(mine), mine.dimensions, mine.name) == (
            theirs.shape,
            theirs.ndim,
            len(theirs),
            theirs.dimensions,
            theirs.name,
        )
        assert mine.dtype == theirs.dtype == mine.typecode()
        assert mine.ncattrs() == theirs.ncattrs()


def test_format_lists_have_one_entry_per_member(pair, members):
    reference, ours = pair
    assert len(ours.data_model) == len(ours.file_format) == len(ours.disk_format) == len(LENGTHS)
    opened = [MFDataset._open(path) for path in members.ours]
    try:
        assert ours.data_model == [m.data_model for m in opened]
        assert ours.file_format == [m.file_format for m in opened]
        assert ours.disk_format == [m.disk_format for m in opened]
    finally:
        for member in opened:
            member.close()
    assert reference.data_model == ["NETCDF4_CLASSIC"] * len(LENGTHS)


def test_attributes_come_from_the_master(pair):
    reference, ours = pair
    assert ours.ncattrs() == reference.ncattrs() == ["title", "history", "version"]
    for name in ours.ncattrs():
        assert observe(lambda: getattr(ours, name)) == observe(lambda: getattr(reference, name))
    assert ours["v"].long_name == reference["v"].long_name == "packed"
    assert ours["t"].units == reference["t"].units == "days since 2000-01-01"
    assert getattr(ours, "nope", None) is None
    missing = ("raises", "AttributeError")
    assert observe(lambda: ours.nope)[:2] == observe(lambda: reference.nope)[:2] == missing
    assert observe(lambda: ours["v"].nope) == observe(lambda: reference["v"].nope)


def test_getitem_paths(pair):
    reference, ours = pair
    assert ours["v"] is ours.variables["v"]
    assert ours["/t"] is ours.variables["t"]
    assert ours["x"] is ours.variables["x"]
    assert observe(lambda: ours["nope"]) == observe(lambda: reference["nope"])
    assert observe(lambda: ours["g/v"])[:2] == observe(lambda: reference["g/v"])[:2] == ("raises", "KeyError")


def test_get_variables_by_attributes(pair):
    reference, ours = pair
    queries = [
        {"axis": "X"},
        {"axis": lambda v: v in ("X", "T")},
        {"units": lambda v: v is not None},
        {"long_name": "packed", "_FillValue": -1},
        {"_Encoding": lambda v: v is None},
        {},
    ]
    for query in queries:
        mine = [v.name for v in ours.get_variables_by_attributes(**query)]
        assert mine == [v.name for v in reference.get_variables_by_attributes(**query)], query


def test_not_iterable_not_picklable(pair):
    reference, ours = pair
    assert observe(lambda: iter(ours)) == observe(lambda: iter(reference))
    assert observe(lambda: "v" in ours) == observe(lambda: "v" in reference)
    assert observe(lambda: pickle.dumps(ours)) == observe(lambda: pickle.dumps(reference))


# -- reading ------------------------------------------------------------------------------

KEYS = [
    0, -1, 3, 4, 8, np.int64(5), 2.0, "3", True, slice(None), slice(1, 8, 2), slice(2, 7), slice(5, 100),
    slice(20, 30), slice(3, 3), [5, 0, 2], [4, 4], [3, 4, 5], [-1], np.array([True] * 9),
    np.array([False] * 9), np.array([], int), (Ellipsis, 1), (slice(None), [2, 0]), (2, 1), (4, 1),
    (slice(3, 5), 0), (1, [0, 2]), (slice(None), slice(None, None, 2)), [slice(None), 1],
    # errors
    slice(None, None, -1), (slice(None), slice(None, None, -1)), slice(0, 4, 0), -10, [9], [-10],
    (0, 0, 0), (Ellipsis, Ellipsis), None, (slice(None), None), np.array([[0]]), 2.5, [], [True, False],
    object(),
]


@pytest.mark.parametrize("name", ["v", "t", "c"])
def test_reads_match(pair, name):
    reference, ours = pair
    for key in KEYS:
        assert observe(lambda: ours[name][key]) == observe(lambda: reference[name][key]), key


def test_chartostring_joins_strings(pair, members):
    # netCDF4.MFDataset allocates its result with the character axis, so it repeats each
    # string along it or fails to broadcast; the members' own reads are the reference here
    _, ours = pair
    parts = []
    for path, records in zip(members.reference, LENGTHS, strict=True):
        with netCDF4.Dataset(path) as member:
            parts += [member["name"][:]] if records else []
    words = np.concatenate(parts)
    assert words.tolist() == ["r", "r1", "r2", "r", "r4", "r5", "r6", "r", "r8"]
    for key in [slice(None), slice(1, 8, 2), [5, 0, 2], np.arange(9) % 2 == 0, slice(5, 100), [-1]]:
        assert observe(lambda: ours["name"][key]) == ("ndarray", "<U4", words[key].shape, words[key].tolist())
    assert observe(lambda: ours["name"][4]) == ("str_", "r4")
    assert observe(lambda: ours["name"][20:30]) == ("ndarray", "<U4", (0,), [])


def test_selection_errors_are_nczarr_errors(pair):
    _, ours = pair
    for key in [9, -10, [9], slice(None, None, -1), (0, 0, 0), (Ellipsis, Ellipsis), None, np.eye(2), []]:
        with pytest.raises(NCZarrError):
            ours["v"][key]


def test_exported_by_nczarr():
    assert nczarr.MFDataset is MFDataset
    assert nczarr.MFTime is MFTime


def test_reads_of_the_plain_variables_are_the_masters(pair):
    reference, ours = pair
    for name, key in [("x", slice(None)), ("s", ...), ("x", 1)]:
        assert observe(lambda: ours[name][key]) == observe(lambda: reference[name][key])


def test_index_past_the_end_is_an_index_error(pair):
    reference, ours = pair
    # netCDF4 leaks numpy's ValueError("need at least one array to concatenate") here, which
    # also breaks iteration; nczarr raises the IndexError a Variable raises.
    assert observe(lambda: ours["v"][9]) == ("raises", "IndexError", "index exceeds dimension bounds")
    assert observe(lambda: reference["v"][9])[:2] == ("raises", "ValueError")
    rows = [observe(lambda: row) for row in ours["t"]]
    assert rows == [observe(lambda: reference["t"][i]) for i in range(9)]


@pytest.mark.parametrize(
    "setting",
    [
        ("set_auto_mask", False),
        ("set_auto_scale", False),
        ("set_auto_maskandscale", False),
        ("set_always_mask", False),
        ("set_auto_chartostring", False),
    ],
)
@pytest.mark.parametrize("on", ["dataset", "variable"])
def test_set_auto(pair, setting, on):
    reference, ours = pair
    method, value = setting
    for ds in (reference, ours):
        if on == "dataset":
            getattr(ds, method)(value)
        else:
            for name in ("v", "name", "c"):
                getattr(ds[name], method)(value)
    # netCDF4.MFDataset cannot join strings (test_chartostring_joins_strings), only chars
    for name in ("v", "c", "name") if setting == ("set_auto_chartostring", False) else ("v", "c"):
        for key in (slice(None), 4, slice(0, 3)):
            assert observe(lambda: ours[name][key]) == observe(lambda: reference[name][key]), (name, key)


def test_reads_touch_only_the_covered_members(members, monkeypatch):
    reads: list[int] = []
    opener = MFDataset._open

    class Spy:
        """A member whose variables log which member (by index) is read."""

        def __init__(self, path: str) -> None:
            self._dataset = opener(path)
            index = members.ours.index(path)
            self.variables = {name: SpyVariable(var, index) for name, var in self._dataset.variables.items()}

        def __getattr__(self, name: str) -> Any:
            return getattr(self._dataset, name)

    class SpyVariable:
        def __init__(self, var: Any, index: int) -> None:
            self._var, self._index = var, index

        def __getitem__(self, key: Any) -> Any:
            reads.append(self._index)
            return self._var[key]

        def __getattr__(self, name: str) -> Any:
            return getattr(self._var, name)

    monkeypatch.setattr(MFDataset, "_open", staticmethod(Spy))
    with MFDataset(members.ours) as mf:
        assert reads == []
        for key, touched in [
            (slice(0, 3), [0]),
            (slice(3, 5), [2]),
            (7, [3]),
            ([8, 0], [3, 0]),
            (slice(5, 8), [2, 3]),
            ((slice(None), 1), [0, 2, 3]),
            (slice(1, 9, 7), [0, 3]),
        ]:
            reads.clear()
            mf["v"][key]
            assert reads == touched, key


# -- opening ------------------------------------------------------------------------------


def test_glob_pattern_and_context_manager(members):
    with netCDF4.MFDataset(members.reference_glob) as reference, MFDataset(members.ours_glob) as ours:
        assert len(ours["v"]) == len(reference["v"]) == sum(LENGTHS)
        assert observe(lambda: ours["v"][:]) == observe(lambda: reference["v"][:])
        assert ours.isopen() and reference.isopen()
    assert not ours.isopen() and not reference.isopen()


def test_close(members):
    reference, ours = netCDF4.MFDataset(members.reference), MFDataset(members.ours)
    assert ours.isopen() is reference.isopen() is True
    reference.close()
    ours.close()
    assert ours.isopen() is reference.isopen() is False
    assert observe(lambda: ours["v"][0])[:2] == observe(lambda: reference["v"][0])[:2]
    assert observe(ours.close)[:2] == observe(reference.close)[:2] == ("raises", "RuntimeError")


def test_master_file(members):
    reference = netCDF4.MFDataset(members.reference, master_file=members.reference[2])
    ours = MFDataset(members.ours, master_file=members.ours[2])
    with reference, ours:
        assert ours.title == reference.title == "member 2"
        assert ours["t"].units == reference["t"].units == "days since 2000-01-03"
        assert observe(lambda: ours["v"][:]) == observe(lambda: reference["v"][:])
        assert observe(lambda: MFTime(ours["t"])[:]) == observe(lambda: netCDF4.MFTime(reference["t"])[:])


def test_aggdim(members):
    reference = netCDF4.MFDataset(members.reference[:3:2], aggdim="x")
    ours = MFDataset(members.ours[:3:2], aggdim="x")
    with reference, ours:
        assert repr(ours.dimensions["x"]) == repr(reference.dimensions["x"])
        assert observe(lambda: ours["x"][:]) == observe(lambda: reference["x"][:])
        assert repr(ours["x"]) == repr(reference["x"])
        assert type(ours["v"]).__name__ == type(reference["v"]).__name__ == "Variable"
        # netCDF4 swaps the aggregation dimension into the master's own dimension dict, so its
        # master variables then report the joined length; nczarr leaves the master alone
        assert ours["v"].shape == (3, 3)


def test_exclude(members):
    reference = netCDF4.MFDataset(members.reference, exclude=["t"])
    ours = MFDataset(members.ours, exclude=["t"])
    with reference, ours:
        assert type(ours["t"]).__name__ == type(reference["t"]).__name__ == "Variable"
        assert type(ours["v"]).__name__ == type(reference["v"]).__name__ == "_Variable"
        assert observe(lambda: ours["t"][:])[3] == [0.0, 1.5, 3.0]  # the master's own records


def _same_error(reference_call: Callable[[], Any], ours_call: Callable[[], Any], members: Members) -> None:
    theirs, mine = observe(reference_call), observe(ours_call)
    assert theirs[0] == mine[0] == "raises"
    assert mine[1] == theirs[1]
    message = theirs[2]
    for ref_path, our_path in zip(members.reference + list(members.bad_reference.values()),
                                  members.ours + list(members.bad_ours.values()), strict=True):
        message = message.replace(ref_path, our_path)
    assert mine[2] == message
    with pytest.raises(NCZarrError):
        ours_call()


@pytest.mark.parametrize(
    "arguments",
    [
        lambda m, paths: ([],),
        lambda m, paths: (str(Path(paths[0]).parent / "nomatch*"),),
        lambda m, paths: ("http://example.com/data/*.nc",),
        lambda m, paths: (paths[:1],),  # master_file below
        lambda m, paths: (paths, False, "nope"),
        lambda m, paths: (paths, False, None, ["t", "v", "c", "name"]),
    ],
)
def test_open_errors(members, arguments):
    kwargs = {}
    ref_args, our_args = arguments(members, members.reference), arguments(members, members.ours)
    if ref_args == (members.reference[:1],):
        kwargs = {"master_file": "elsewhere"}
    _same_error(
        lambda: netCDF4.MFDataset(*ref_args, **kwargs), lambda: MFDataset(*our_args, **kwargs), members
    )


@pytest.mark.parametrize("change", ["shape", "dtype", "dims", "missing"])
def test_check(members, change):
    def args(paths: list[str], bad: dict[str, str]) -> list[str]:
        return [paths[0], bad[change]]

    _same_error(
        lambda: netCDF4.MFDataset(args(members.reference, members.bad_reference), check=True),
        lambda: MFDataset(args(members.ours, members.bad_ours), check=True),
        members,
    )


def test_without_check_a_missing_variable_is_a_key_error(members):
    theirs = observe(lambda: netCDF4.MFDataset([members.reference[0], members.bad_reference["missing"]]))
    mine = observe(lambda: MFDataset([members.ours[0], members.bad_ours["missing"]]))
    assert mine[:2] == theirs[:2] == ("raises", "KeyError")


def test_without_check_mismatches_pass(members):
    paths = [members.ours[0], members.bad_ours["shape"]]
    reference = netCDF4.MFDataset([members.reference[0], members.bad_reference["shape"]])
    with reference, MFDataset(paths) as ours:
        assert ours["v"].shape == reference["v"].shape


# -- MFTime -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"units": "hours since 1999-12-31"}, {"calendar": "noleap"}, {"units": "days since 2000-01-02"}],
)
def test_mftime(pair, options):
    reference, ours = pair
    theirs, mine = netCDF4.MFTime(reference["t"], **options), MFTime(ours["t"], **options)
    assert (mine.units, mine.calendar) == (theirs.units, theirs.calendar)
    assert repr(mine) == repr(theirs)
    assert (mine.shape, mine.dimensions, len(mine), mine.typecode()) == (
        theirs.shape,
        theirs.dimensions,
        len(theirs),
        theirs.typecode(),
    )
    for key in (slice(None), 4, [1, 3, 8], slice(2, 8, 3), -1):
        assert observe(lambda: mine[key]) == observe(lambda: theirs[key]), key
    when = datetime.datetime(2000, 1, 4, 12)
    nearest = netCDF4.date2index(when, theirs, select="nearest")
    assert netCDF4.date2index(when, mine, select="nearest") == nearest


def test_mftime_values(pair):
    _, ours = pair
    # member i counts days since 2000-01-(i+1) in steps of 1.5
    expected = [0, 1.5, 3, 2, 3.5, 5, 6.5, 3, 4.5]
    np.testing.assert_array_equal(MFTime(ours["t"])[:], expected)


@pytest.mark.parametrize("change", ["nocalendar", "calendar"])
def test_mftime_calendar_errors(members, change):
    reference = netCDF4.MFDataset([members.reference[0], members.bad_reference[change]])
    ours = MFDataset([members.ours[0], members.bad_ours[change]])
    with reference, ours:
        assert observe(lambda: MFTime(ours["t"])) == observe(lambda: netCDF4.MFTime(reference["t"]))
        assert observe(lambda: MFTime(ours["t"], calendar="standard")[:]) == observe(
            lambda: netCDF4.MFTime(reference["t"], calendar="standard")[:]
        )


def test_members_of_any_data_model(tmp_path, monkeypatch):
    # netCDF4 refuses NETCDF4 members; nczarr datasets are NETCDF4 by default, so it accepts them
    monkeypatch.setattr(MFDataset, "_open", staticmethod(netCDF4.Dataset))
    paths = [tmp_path / "a.nc", tmp_path / "b.nc"]
    for i, path in enumerate(paths):
        write_member(netCDF4.Dataset, path, i, format="NETCDF4")
    paths = [str(path) for path in paths]
    assert observe(lambda: netCDF4.MFDataset(paths))[:2] == ("raises", "ValueError")
    with MFDataset(paths) as ours:
        assert ours.data_model == ours.file_format == ["NETCDF4", "NETCDF4"]
        assert ours["t"][:].tolist() == [0.0, 1.5, 3.0]


def test_an_open_error_closes_the_opened_members(members, monkeypatch):
    opened = []
    opener = MFDataset._open

    def recording_opener(path: str) -> Any:
        opened.append(opener(path))
        return opened[-1]

    monkeypatch.setattr(MFDataset, "_open", staticmethod(recording_opener))
    with pytest.raises(OSError, match="shape mismatch"):
        MFDataset([members.ours[0], members.bad_ours["shape"]], check=True)
    assert len(opened) == 2
    assert not any(member.isopen() for member in opened)
