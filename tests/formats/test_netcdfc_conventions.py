"""Stores in the conventions netcdf-c and others write, read as netcdf-c 4.10.1 (the netCDF4
wheel) reads them: Zarr v2 arrays without ``_ARRAY_DIMENSIONS`` in nested groups, fill values
without a ``_FillValue`` attribute, zero-length axes, stores of ``.zmetadata`` only, netcdf-c's
lenient JSON, missing and corrupt chunks, and the older NCZarr layouts. Each store is JSON
written here by hand; each test opens it with the wheel and with nczarr side by side.

Where nczarr reads differently on purpose, the test says so (docs/format.md): a ``shape []``
array is a scalar (4.10.1 drops it), a name reused with another length is renamed (4.10.1
refuses the store), layouts 4.10.1 no longer recognises (NCZarr 1.0.0, the upper-case keys of
4.8.1-4.9.0) keep their dimension names (4.10.1 falls back to anonymous dimensions), and the
anonymous root dimensions are listed after the named ones (4.10.1: in order of creation)."""

from __future__ import annotations

import json
import logging
import zlib
from pathlib import Path

import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.cli import main

G = {"zarr_format": 2}
NCPROPERTIES = "version=2,netcdf=4.10.1,nczarr=2.0.0"


def _zarray(shape: list[int], dtype: str = "<i4", fill: object = 0, chunks: list[int] | None = None, **more: object) -> dict:
    return {
        "zarr_format": 2, "shape": shape, "chunks": shape if chunks is None else chunks, "dtype": dtype,
        "compressor": None, "fill_value": fill, "filters": None, "order": "C", **more,
    }  # fmt: skip


def _store(path: Path, files: dict[str, object]) -> Path:
    """A store of these documents (JSON objects, or text / bytes as they are)."""
    for key, value in files.items():
        target = path / key
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, bytes):
            target.write_bytes(value)
        else:
            target.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def _url(path: Path, mode: str = "zarr") -> str:
    return f"file://{path}#mode={mode},file"


def _value(value: object) -> object:
    return np.asarray(value).tolist()


def _view(ds: object) -> dict[str, object]:
    """What a netCDF4-style dataset shows: per group its dimensions (name: (length, unlimited))
    and attributes; per variable its dimensions, shape, attributes, fill value and raw data."""
    found: dict[str, object] = {}
    groups = [ds]
    while groups:
        group = groups.pop(0)
        path = group.path.rstrip("/")  # type: ignore[attr-defined]
        found[path or "/"] = {
            "dimensions": {n: (len(d), d.isunlimited()) for n, d in group.dimensions.items()},  # type: ignore[attr-defined]
            "attributes": {n: _value(group.getncattr(n)) for n in group.ncattrs()},  # type: ignore[attr-defined]
        }
        for name, variable in group.variables.items():  # type: ignore[attr-defined]
            variable.set_auto_mask(False)
            found[f"{path}/{name}"] = {
                "dimensions": variable.dimensions,
                "shape": variable.shape,
                "attributes": {n: _value(variable.getncattr(n)) for n in variable.ncattrs()},
                "fill": _value(variable.get_fill_value()),
                "data": _value(variable[...]),
            }
        groups.extend(group.groups.values())  # type: ignore[attr-defined]
    return found


def _both(path: Path, mode: str = "zarr") -> tuple[dict[str, object], dict[str, object]]:
    """The wheel's view and nczarr's view of a store."""
    with netCDF4.Dataset(_url(path, mode)) as theirs, nczarr.Dataset(_url(path, mode)) as ours:
        return _view(theirs), _view(ours)


def _same(theirs: dict[str, object], ours: dict[str, object]) -> None:
    """Equal views (NaN equal to NaN)."""
    assert json.dumps(ours, default=str) == json.dumps(theirs, default=str)


def _same_but_dimension_order(theirs: dict[str, object], ours: dict[str, object]) -> None:
    """Equal views, except the order in which the root lists its dimensions."""
    for view in (theirs, ours):
        view["/"]["dimensions"] = dict(sorted(view["/"]["dimensions"].items()))  # type: ignore[index]
    _same(theirs, ours)


# -- arrays without _ARRAY_DIMENSIONS -------------------------------------------------------------


def _unnamed(path: Path) -> Path:
    return _store(path, {
        ".zgroup": G,
        "a/.zarray": _zarray([3, 4]),
        "a/0.0": np.arange(12, dtype="<i4").tobytes(),
        "d/.zarray": _zarray([3], "<f8", None), "d/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
        "g/.zgroup": G,
        "g/b/.zarray": _zarray([4], "<f4", "NaN"),
        "g/e/.zarray": _zarray([7], "<i2", 5),
        "g/h/.zgroup": G,
        "g/h/c/.zarray": _zarray([5, 3], "|u1", 0),
        "g/h/n/.zarray": _zarray([5]), "g/h/n/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
        "g/h/z/.zarray": _zarray([0], chunks=[1]),
        "g/h/t/.zarray": _zarray([0, 2], chunks=[1, 2]), "g/h/t/.zattrs": {"_ARRAY_DIMENSIONS": ["time", "two"]},
    })  # fmt: skip


def test_unnamed_axes_in_nested_groups_read_as_netcdf_c(tmp_path: Path) -> None:
    # anonymous dimensions in the root, shared by length across groups; named ones in the
    # array's group; no _FillValue made of fill_value; zero-length dimensions unlimited
    theirs, ours = _both(_unnamed(tmp_path / "s"))
    assert ours["/g/h/c"]["dimensions"] == ("_Anonymous_Dim_5", "_Anonymous_Dim_3")  # type: ignore[index]
    assert ours["/"]["dimensions"]["_Anonymous_Dim_0"] == (0, True)  # type: ignore[index]
    assert ours["/g/h"]["dimensions"] == {"x": (5, False), "time": (0, True), "two": (2, False)}  # type: ignore[index]
    _same_but_dimension_order(theirs, ours)


def test_unnamed_axes_dump_and_copy_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _unnamed(tmp_path / "s")
    _store(source, {"g/h/s/.zarray": _zarray([], "<i8", 0, chunks=[])})  # a scalar too
    assert main(["dump", str(source)]) == 0
    assert "int z(_Anonymous_Dim_0) ;" in capsys.readouterr().out
    for target in ("copy.nc", "copy.zarr", _url(tmp_path / "nczarr", "nczarr"), _url(tmp_path / "zarr", "zarr")):
        out = target if "#" in target else str(tmp_path / target)
        assert main(["copy", str(source), out]) == 0, target
        with nczarr.Dataset(out) as ds:
            assert ds["g/h/z"].shape == (0,) and ds["g/h/c"].shape == (5, 3) and ds["g/h/s"].shape == ()
            assert ds["a"][:].tolist() == np.arange(12).reshape(3, 4).tolist()


def test_a_named_anonymous_dimension_of_another_length_is_renamed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # netcdf-c 4.10.1 refuses the store (NC_EDIMSIZE); nczarr keeps both, consistently
    store = _store(tmp_path / "s", {
        ".zgroup": G,
        "a/.zarray": _zarray([3]),
        "b/.zarray": _zarray([5]), "b/.zattrs": {"_ARRAY_DIMENSIONS": ["_Anonymous_Dim_3"]},
        "g/.zgroup": G,
        "g/c/.zarray": _zarray([3, 2]),
        "g/d/.zarray": _zarray([4]), "g/d/.zattrs": {"_ARRAY_DIMENSIONS": ["_Anonymous_Dim_2"]},
    })  # fmt: skip
    with pytest.raises(OSError, match="Invalid dimension size"):
        netCDF4.Dataset(_url(store))
    with caplog.at_level(logging.WARNING), nczarr.Dataset(str(store)) as ds:
        assert [(d.name, len(d)) for d in ds["b"].get_dims()] == [("_Anonymous_Dim_3_2", 5)]
        assert [(d.name, len(d)) for d in ds["a"].get_dims()] == [("_Anonymous_Dim_3", 3)]
        assert [(d.name, len(d)) for d in ds["g/c"].get_dims()] == [("_Anonymous_Dim_3", 3), ("_Anonymous_Dim_2", 2)]
        assert len(ds.dimensions["_Anonymous_Dim_3"]) == 3 and len(ds["g"].dimensions["_Anonymous_Dim_2_2"]) == 4
    assert "netcdf-c names anonymous dimensions so" in caplog.text


def test_scalars_stay_scalars(tmp_path: Path) -> None:
    # netcdf-c 4.10.1 drops a shape [] array; its own [1] + ["_scalar_"] reads as a dimension
    store = _store(tmp_path / "s", {
        ".zgroup": G,
        "s/.zarray": _zarray([], "<f8", 1.5, chunks=[]),
        "n/.zarray": _zarray([1]), "n/.zattrs": {"_ARRAY_DIMENSIONS": ["_scalar_"]},
    })  # fmt: skip
    with netCDF4.Dataset(_url(store)) as nc:
        assert list(nc.variables) == ["n"] and nc["n"].dimensions == ("_scalar_",)
    with nczarr.Dataset(_url(store)) as ds:
        assert ds["s"].shape == () and ds["s"][...] == 1.5 and ds["n"].shape == ()


# -- fill values -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "fill"),
    [("<i4", 0), ("<i4", None), ("<f4", "NaN"), ("<f8", "Infinity"), ("<i2", 5), ("<f8", 9.969209968386869e36), ("|u1", 255)],
)
def test_fill_value_alone_is_no_fill_value_attribute(tmp_path: Path, dtype: str, fill: object) -> None:
    # it fills the missing chunks and is what get_fill_value() gives, as in netcdf-c
    store = _store(tmp_path / "s", {
        ".zgroup": G,
        "v/.zarray": _zarray([4], dtype, fill, chunks=[2]), "v/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
        "v/0": np.array([1, 2], dtype).tobytes(),
        "w/.zarray": _zarray([2], dtype, fill),
    })  # fmt: skip
    theirs, ours = _both(store)
    assert ours["/v"]["attributes"] == {}  # type: ignore[index]
    _same(theirs, ours)


def test_a_fill_value_attribute_is_read_and_written_as_netcdf_c_does(tmp_path: Path) -> None:
    written = tmp_path / "netcdf-c"
    with netCDF4.Dataset(_url(written), "w") as nc:
        nc.createDimension("x", 2)
        nc.createVariable("i", "i4", ("x",), fill_value=-1)[0] = 1
        nc.createVariable("f", "f4", ("x",), fill_value=np.nan)
        nc.createVariable("c", "S1", ("x",), fill_value=b"z")  # fill_value "z": text, not base64
        nc.createVariable("n", "i2", ("x",), fill_value=False)
    theirs, ours = _both(written)
    assert ours["/c"]["data"] == [b"z", b"z"] and theirs["/c"]["data"] == ["z", "z"]  # char (netcdf-c: string)
    for view in (theirs, ours):
        del view["/c"]
    _same(theirs, ours)
    copied = tmp_path / "nczarr"
    assert main(["copy", _url(written), _url(copied)]) == 0
    for name in ("i", "f"):  # both fill_value and the _FillValue attribute, as netcdf-c writes
        attributes = json.loads((copied / name / ".zattrs").read_text())
        assert json.loads((copied / name / ".zarray").read_text())["fill_value"] == attributes["_FillValue"]
    theirs, ours = _both(copied)
    del theirs["/c"], ours["/c"]
    _same(theirs, ours)


def test_writing_keeps_a_fill_value_without_attribute(tmp_path: Path) -> None:
    store = _store(tmp_path / "s", {".zgroup": G, "v/.zarray": _zarray([4], "<i2", 5, chunks=[2])})
    with nczarr.Dataset(str(store), "r+") as ds:
        ds["v"][:2] = [1, 2]
    assert json.loads((store / "v" / ".zarray").read_text())["fill_value"] == 5
    theirs, ours = _both(store)
    _same(theirs, ours)
    assert ours["/v"]["data"] == [1, 2, 5, 5]  # type: ignore[index]


# -- consolidated metadata only -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["zarr", "nczarr"])
def test_a_store_of_zmetadata_only(tmp_path: Path, mode: str) -> None:
    written = tmp_path / "w"
    with netCDF4.Dataset(_url(written, f"{mode},consolidated"), "w") as nc:
        nc.createDimension("x", 3)
        nc.title = "t"
        nc.createVariable("v", "i4", ("x",), fill_value=-1)[:] = [1, 2, 3]
        g = nc.createGroup("g")
        g.createDimension("y", 2)
        g.createVariable("w", "f8", ("y",))[:] = [1.5, 2.5]
        g.units = "m"
    for document in written.rglob(".z[agr]*"):  # .zgroup, .zarray, .zattrs: .zmetadata stays
        document.unlink()
    # netcdf-c reads it with mode ...,consolidated (without, it shows an empty root group)
    theirs, ours = _both(written, f"{mode},consolidated")
    _same(theirs, ours)
    assert ours["/g/w"]["data"] == [1.5, 2.5]  # type: ignore[index]
    with nczarr.Dataset(str(written)) as ds:  # nczarr also reads it without the mode
        assert ds["v"][:].tolist() == [1, 2, 3]


# -- netcdf-c's JSON ---------------------------------------------------------------------------------

ACCEPTED = {
    "leading zeros": '{"x": 02, "y": [01, 010], "z": -07, "f": 00.5e1}',
    "bare specials": '{"x": NaN, "y": [Infinity, -Infinity, NaN], "n": nan, "i": inf}',
    "quoted specials": '{"x": "NaN", "y": ["Infinity", "-Infinity"]}',
    "C numbers": '{"p": +1, "d": 1., "e": .5, "h": 0x10}',
    "trailing commas": '{"x": [1, 2,], "y": 1,}',
    "trailing space": '{"x": 1}\n\n',
}
REFUSED = {"trailing text": '{"x": 1} garbage', "comment": '{"x": 1 /* c */}', "single quotes": "{'x': 1}"}


@pytest.mark.parametrize("text", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_lenient_json_attributes(tmp_path: Path, text: str) -> None:
    store = _store(tmp_path / "s", {".zgroup": G, ".zattrs": text, "a/.zarray": _zarray([2], "<f8", 0)})
    theirs, ours = _both(store)
    assert json.dumps(ours) == json.dumps(theirs)


def test_json_in_a_char_attribute_shows_as_written(tmp_path: Path) -> None:
    # JSON text (not JSON: "[0.,0.,1.]") in char attributes of an NCZarr scalar, as ncgen writes them
    types = '"_nczarr_attr": {"types": {"j": ">S1", "k": ">S1", "s": ">S1"}}'
    array = '"_nczarr_array": {"dimension_references": [], "scalar": 1}'
    group = '"_nczarr_group": {"dimensions": {}, "arrays": ["v"], "groups": []}'
    store = _store(tmp_path / "s", {
        ".zgroup": G,
        ".zattrs": '{"_nczarr_superblock": {"version": "2.0.0"}, ' + group + "}",
        "v/.zarray": _zarray([1], fill=None),
        "v/.zattrs": '{"j": [0.,0.,1.], "k": {"a": [1.0, 2.50e1]}, "s": "[ 1.0, 0.0 ", ' + array + ", " + types + "}",
    })  # fmt: skip
    theirs, ours = _both(store, "nczarr")
    assert ours["/v"]["attributes"] == {"j": "[0.,0.,1.]", "k": '{"a": [1.0,2.50e1]}', "s": "[ 1.0, 0.0 "}  # type: ignore[index]
    _same(theirs, ours)


@pytest.mark.parametrize("copy", ["", "{}", "{metadata:{},zarr_consolidated_format:1}"])
def test_an_unusable_zmetadata_is_left_aside(tmp_path: Path, copy: str, caplog: pytest.LogCaptureFixture) -> None:
    store = _unnamed(tmp_path / "s")
    (store / ".zmetadata").write_text(copy)
    theirs, ours = _both(store)  # read only when asked, as netcdf-c reads it
    assert not caplog.text
    _same_but_dimension_order(theirs, ours)
    # asked, netcdf-c 4.10.1 fails on some ('{}': "Unknown Error"); nczarr reads the nodes
    with caplog.at_level(logging.WARNING), nczarr.Dataset(_url(store, "zarr,consolidated")) as asked:
        _same_but_dimension_order(theirs, _view(asked))
    assert ".zmetadata: " in caplog.text and "reading the metadata documents themselves" in caplog.text


@pytest.mark.parametrize("text", REFUSED.values(), ids=REFUSED.keys())
def test_json_netcdf_c_refuses_is_refused(tmp_path: Path, text: str) -> None:
    store = _store(tmp_path / "s", {".zgroup": G, ".zattrs": text})
    with pytest.raises(OSError):
        netCDF4.Dataset(_url(store))
    with pytest.raises(nczarr.NCZarrError, match=r"\.zattrs: not valid JSON"):
        nczarr.Dataset(_url(store))


@pytest.mark.parametrize("fill", ["NaN", '"NaN"', "Infinity", '"-Infinity"', "07"])
def test_lenient_json_fill_values(tmp_path: Path, fill: str) -> None:
    zarray = json.dumps(_zarray([2], "<f8", 0)).replace('"fill_value": 0', f'"fill_value": {fill}')
    theirs, ours = _both(_store(tmp_path / "s", {".zgroup": G, "a/.zarray": zarray}))
    assert json.dumps(ours) == json.dumps(theirs)


# -- chunks ------------------------------------------------------------------------------------------


def test_missing_chunks_are_fill_and_corrupt_ones_an_error_naming_them(tmp_path: Path) -> None:
    zlib_codec = {"id": "zlib", "level": 1}
    store = _store(tmp_path / "s", {
        ".zgroup": G,
        "raw/.zarray": _zarray([4], "<i4", 7, chunks=[2]),
        "raw/0": np.array([1, 2], "<i4").tobytes(),
        "bad/.zarray": _zarray([4], "<i4", 7, chunks=[2], compressor=zlib_codec),
        "bad/0": b"garbage!",
        "bad/1": zlib.compress(np.array([3, 4], "<i4").tobytes()),
    })  # fmt: skip
    with netCDF4.Dataset(_url(store)) as nc, nczarr.Dataset(_url(store)) as ds:
        assert ds["raw"][:].tolist() == nc["raw"][:].tolist() == [1, 2, 7, 7]
        assert ds["bad"][2:].tolist() == nc["bad"][2:].tolist() == [3, 4]
        with pytest.raises(RuntimeError, match="Filter error"):
            nc["bad"][:]
        with pytest.raises(nczarr.NCZarrError, match="chunk 'bad/0' of array 'bad'"):
            ds["bad"][:]


def test_a_chunk_of_the_wrong_size_is_an_error_naming_it(tmp_path: Path) -> None:
    # netcdf-c reads past the bytes it has (what is left in memory); nczarr refuses
    store = _store(tmp_path / "s", {".zgroup": G, "v/.zarray": _zarray([4], "<i4", 7, chunks=[2]), "v/0": b"\x01\x00"})
    with nczarr.Dataset(_url(store)) as ds:
        assert ds["v"][2:].tolist() == [7, 7]
        with pytest.raises(nczarr.NCZarrError, match="chunk 'v/0' of array 'v'"):
            ds["v"][:]


# -- older NCZarr layouts ----------------------------------------------------------------------------

ROOT_OLD = {"dims": {"x": 4}, "vars": ["v"], "groups": ["g"]}  # the older member names
_V = np.arange(4, dtype="<i4").tobytes()
_W = np.arange(8, dtype="<i4").tobytes()


def _layout_4_9_1(path: Path) -> Path:
    """netcdf-c 4.9.1-4.9.2: lower-case keys inside .zgroup / .zarray, dims / vars / dimrefs."""
    return _store(path, {
        ".zgroup": {**G, "_nczarr_superblock": {"version": "2.0.0"}, "_nczarr_group": ROOT_OLD},
        ".zattrs": {
            "title": "t", "n": 3, "_NCProperties": NCPROPERTIES,
            "_nczarr_attr": {"types": {"title": ">S1", "n": "<i2", "_NCProperties": ">S1"}},
        },
        "v/.zarray": _zarray([4], fill=-1, _nczarr_array={"dimrefs": ["/x"], "storage": "chunked"}),
        "v/.zattrs": {
            "units": "m", "_FillValue": -1, "_ARRAY_DIMENSIONS": ["x"],
            "_nczarr_attr": {"types": {"units": ">S1", "_FillValue": "<i4"}},
        },
        "v/0": _V,
        "g/.zgroup": {**G, "_nczarr_group": {"dims": {"y": 2}, "vars": ["w"], "groups": []}},
        "g/.zattrs": {"_nczarr_attr": {"types": {}}},
        "g/w/.zarray": _zarray([4, 2], fill=-1, _nczarr_array={"dimrefs": ["/x", "/g/y"], "storage": "chunked"}),
        "g/w/.zattrs": {"_nczarr_attr": {"types": {}}},
        "g/w/0.0": _W,
    })  # fmt: skip


def _layout_old_names(path: Path) -> Path:
    """netcdf-c 4.9.3's places (.zattrs) with the older member names dims / vars / dimrefs."""
    types = {"_nczarr_group": "|J0", "_nczarr_superblock": "|J0", "_nczarr_attr": "|J0"}
    return _store(path, {
        ".zgroup": G,
        ".zattrs": {
            "title": "t", "_nczarr_group": ROOT_OLD, "_nczarr_superblock": {"version": "2.0.0"},
            "_nczarr_attr": {"types": {"title": ">S1", **types}},
        },
        "v/.zarray": _zarray([4], fill=-1),
        "v/.zattrs": {
            "units": "m", "_ARRAY_DIMENSIONS": ["x"], "_nczarr_array": {"dimrefs": ["/x"], "storage": "chunked"},
            "_nczarr_attr": {"types": {"units": ">S1"}},
        },
        "v/0": _V,
        "g/.zgroup": G,
        "g/.zattrs": {"_nczarr_group": {"dims": {"y": 2}, "vars": ["w"], "groups": []}, "_nczarr_attr": {"types": {}}},
        "g/w/.zarray": _zarray([4, 2], fill=-1),
        "g/w/.zattrs": {"_nczarr_array": {"dimrefs": ["/x", "/g/y"]}, "_nczarr_attr": {"types": {}}},
        "g/w/0.0": _W,
    })  # fmt: skip


def _layout_upper_case(path: Path) -> Path:
    """netcdf-c 4.8.1-4.9.0: upper-case keys inside .zgroup / .zarray, _NCZARR_ATTR."""
    return _store(path, {
        ".zgroup": {**G, "_NCZARR_SUPERBLOCK": {"version": "2.0.0"}, "_NCZARR_GROUP": ROOT_OLD},
        ".zattrs": {"title": "t", "_NCZARR_ATTR": {"types": {"title": "<U1"}}},
        "v/.zarray": _zarray([4], fill=-1, _NCZARR_ARRAY={"dimrefs": ["/x"], "storage": "chunked"}),
        "v/.zattrs": {
            "units": "m", "_FillValue": -1, "_ARRAY_DIMENSIONS": ["x"],
            "_NCZARR_ATTR": {"types": {"units": "<U1", "_FillValue": "<i4"}},
        },
        "v/0": _V,
        "g/.zgroup": {**G, "_NCZARR_GROUP": {"dims": {"y": 2}, "vars": ["w"], "groups": []}},
        "g/w/.zarray": _zarray([4, 2], fill=-1, _NCZARR_ARRAY={"dimrefs": ["/x", "/g/y"], "storage": "chunked"}),
        "g/w/0.0": _W,
    })  # fmt: skip


def _layout_1_0_0(path: Path) -> Path:
    """netcdf-c 4.8.0 (NCZarr 1.0.0): .nczarr, .nczgroup, .nczvar, .nczattr objects."""
    return _store(path, {
        ".nczarr": {"zarr_format": 2, "nczarr_version": "1.0.0"},
        ".zgroup": G,
        ".nczgroup": {"dims": {"x": 4}, "vars": ["v"], "groups": ["g"]},
        ".zattrs": {"title": "t"}, ".nczattr": {"types": {"title": "2"}},
        "v/.zarray": _zarray([4], fill=-1), "v/.nczvar": {"dimrefs": ["/x"], "storage": "chunked"},
        "v/.zattrs": {"units": "m", "_FillValue": -1}, "v/.nczattr": {"types": {"units": "2", "_FillValue": "4"}},
        "v/0": _V,
        "g/.zgroup": G, "g/.nczgroup": {"dims": {"y": 2}, "vars": ["w"], "groups": []},
        "g/w/.zarray": _zarray([4, 2], fill=-1), "g/w/.nczvar": {"dimrefs": ["/x", "/g/y"], "storage": "chunked"},
        "g/w/0.0": _W,
    })  # fmt: skip


@pytest.mark.parametrize("layout", [_layout_4_9_1, _layout_old_names])
def test_older_layouts_netcdf_c_reads(tmp_path: Path, layout: object) -> None:
    theirs, ours = _both(layout(tmp_path / "s"), "nczarr")  # type: ignore[operator]
    assert ours["/g/w"]["dimensions"] == ("x", "y") and ours["/g/w"]["data"] == [[0, 1], [2, 3], [4, 5], [6, 7]]  # type: ignore[index]
    _same(theirs, ours)


@pytest.mark.parametrize("layout", [_layout_upper_case, _layout_1_0_0])
def test_older_layouts_keep_their_dimension_names(tmp_path: Path, layout: object) -> None:
    # netcdf-c 4.10.1 no longer sees these NCZarr keys: it reads pure Zarr (anonymous
    # dimensions, _NCZARR_ATTR as text); nczarr reads what the writer meant, the same data
    store = layout(tmp_path / "s")  # type: ignore[operator]
    theirs, ours = _both(store, "nczarr")
    assert theirs["/g/w"]["dimensions"] == ("_Anonymous_Dim_4", "_Anonymous_Dim_2")  # type: ignore[index]
    assert ours["/"]["dimensions"] == {"x": (4, False)} and ours["/g"]["dimensions"] == {"y": (2, False)}  # type: ignore[index]
    assert ours["/g/w"]["dimensions"] == ("x", "y")  # type: ignore[index]
    for name in ("/v", "/g/w"):
        assert ours[name]["data"] == theirs[name]["data"]  # type: ignore[index]
    assert ours["/v"]["attributes"] == {"units": "m", "_FillValue": -1}  # type: ignore[index]


def test_declared_anonymous_named_dimensions_no_variable_uses_are_kept(tmp_path: Path) -> None:
    """netcdf-c declares ``_Anonymous_Dim_<n>`` at the root of an NCZarr store; one no
    variable uses is still a dimension of the dataset (it was dropped as anonymous)."""
    with netCDF4.Dataset(_url(tmp_path / "declared", "nczarr"), "w") as ds:
        for size in (2, 10, 3):
            ds.createDimension(f"_Anonymous_Dim_{size}", size)
        ds.createGroup("g").createVariable("v", "i4", ("_Anonymous_Dim_3", "_Anonymous_Dim_3"))
    _same(*_both(tmp_path / "declared", "nczarr"))
