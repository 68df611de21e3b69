"""The netCDF view of pure Zarr's dimensions, in stores the real writers made (zarr-python 3,
xarray, netCDF4's netcdf-c, TensorStore): unnamed dimensions get netcdf-c 4.10.1's anonymous
names, and a name reused with other lengths in one group (an OME-Zarr pyramid, arrays that
disagree) becomes distinct dimensions ``y``, ``y_2``, ... with a warning; the same in the
API, ``nczarr dump``, ``info`` and ``copy``."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import tensorstore
import xarray as xr
import zarr

from nczarr import Dataset
from nczarr.cli import main

CONVENTIONS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]


def _dump(path: Path | str, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["dump", *args, str(path)]) == 0
    return capsys.readouterr().out


def _shapes(ds: Dataset) -> dict[str, tuple[tuple[str, ...], tuple[int, ...]]]:
    """Each variable's dimension names and shape, by path, through the whole tree."""
    found = {}
    groups = [ds]
    while groups:
        group = groups.pop()
        for name, variable in group.variables.items():
            found[f"{group.path.rstrip('/')}/{name}"] = (variable.dimensions, variable.shape)
        groups.extend(group.groups.values())
    return found


# -- unnamed dimensions --------------------------------------------------------------------
def _unnamed_store(path: Path, zarr_format: int) -> Path:
    """Arrays without dimension names (v3: no ``dimension_names``; v2: no
    ``_ARRAY_DIMENSIONS``), one in a subgroup, one with a name for one axis only (v3)."""
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    root.create_array("a", shape=(3, 4), dtype="i4", compressors=None, fill_value=-1)[:] = np.arange(12).reshape(3, 4)
    root.create_array("b", shape=(4,), dtype="f8", compressors=None)[:] = [0.5, 1.5, 2.5, 3.5]
    root.create_group("sub").create_array("c", shape=(6,), dtype="i2", compressors=None, fill_value=-1)[:] = np.arange(6)
    if zarr_format == 3:
        root.create_array("d", shape=(2, 3), dtype="u1", compressors=None, dimension_names=["y", None])[:] = 7
    return path


UNNAMED = {
    "/a": (("_Anonymous_Dim_3", "_Anonymous_Dim_4"), (3, 4)),
    "/b": (("_Anonymous_Dim_4",), (4,)),
    "/sub/c": (("_Anonymous_Dim_6",), (6,)),
}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_unnamed_dimensions_get_netcdf_c_anonymous_names(
    tmp_path: Path, zarr_format: int, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _unnamed_store(tmp_path / "unnamed.zarr", zarr_format)
    expected = dict(UNNAMED)
    if zarr_format == 3:
        expected["/d"] = (("y", "_Anonymous_Dim_3"), (2, 3))
    with Dataset(str(store)) as ds:
        assert _shapes(ds) == expected
        assert ds["a"][:].tolist() == np.arange(12).reshape(3, 4).tolist()
        assert ds["sub"]["c"][:].tolist() == list(range(6))
    if zarr_format == 2:  # netcdf-c reads v2 only: its names are the same
        with netCDF4.Dataset(f"file://{store}#mode=zarr,file") as nc:
            assert _shapes(nc) == expected
            assert list(nc.dimensions) == ["_Anonymous_Dim_3", "_Anonymous_Dim_4", "_Anonymous_Dim_6"]
    out = _dump(store, capsys)
    # netcdf-c's view: root dimensions, in order of first use (after the named ones)
    assert "\t_Anonymous_Dim_3 = 3 ;\n\t_Anonymous_Dim_4 = 4 ;\n\t_Anonymous_Dim_6 = 6 ;\n" in out
    assert "\tint a(_Anonymous_Dim_3, _Anonymous_Dim_4) ;\n" in out
    assert "  \tshort c(_Anonymous_Dim_6) ;\n" in out
    assert " b = 0.5, 1.5, 2.5, 3.5 ;" in out
    assert main(["info", str(store)]) == 0


@pytest.mark.parametrize("fmt", CONVENTIONS)
def test_unnamed_dimensions_copy_to_every_convention(tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = _unnamed_store(tmp_path / "unnamed.zarr", 3)
    target = tmp_path / "copy.zarr"
    assert main(["copy", "--format", fmt, str(store), str(target)]) == 0
    with Dataset(str(target)) as ds:
        assert _shapes(ds) == {**UNNAMED, "/d": (("y", "_Anonymous_Dim_3"), (2, 3))}
        assert ds["b"][:].tolist() == [0.5, 1.5, 2.5, 3.5]
    assert _dump(target, capsys, "-h").count("_Anonymous_Dim_3 = 3 ;") == 1


@pytest.mark.parametrize("kind", ["netCDF-4", "classic"])
def test_unnamed_dimensions_copy_to_netcdf_files(tmp_path: Path, kind: str) -> None:
    store = zarr.open_group(tmp_path / "unnamed.zarr", mode="w", zarr_format=2)
    store.create_array("a", shape=(3, 4), dtype="i4", compressors=None, fill_value=-1)[:] = np.arange(12).reshape(3, 4)
    store.create_array("b", shape=(4,), dtype="f8", compressors=None)[:] = [0.5, 1.5, 2.5, 3.5]
    target = tmp_path / "copy.nc"
    assert main(["copy", "-k", kind, str(tmp_path / "unnamed.zarr"), str(target)]) == 0
    with netCDF4.Dataset(target) as nc:
        assert {k: len(v) for k, v in nc.dimensions.items()} == {"_Anonymous_Dim_3": 3, "_Anonymous_Dim_4": 4}
        assert nc["a"].dimensions == ("_Anonymous_Dim_3", "_Anonymous_Dim_4")
        assert nc["a"][:].tolist() == np.arange(12).reshape(3, 4).tolist()


@pytest.mark.parametrize("driver", ["zarr", "zarr3"])
def test_tensorstore_arrays_without_names(tmp_path: Path, driver: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ts.zarr"
    zarr.open_group(path, mode="w", zarr_format=2 if driver == "zarr" else 3)
    metadata: dict[str, object] = (
        {"shape": [4, 5], "dtype": "<i4", "chunks": [2, 5]}
        if driver == "zarr"
        else {"shape": [4, 5], "data_type": "int32", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 5]}}}
    )
    spec = {"driver": driver, "kvstore": {"driver": "file", "path": str(path / "a")}, "create": True, "metadata": metadata}
    array = tensorstore.open(spec).result()
    array[...] = np.arange(20, dtype="i4").reshape(4, 5)
    with Dataset(str(path)) as ds:
        assert ds["a"].dimensions == ("_Anonymous_Dim_4", "_Anonymous_Dim_5")
        assert ds["a"][:].tolist() == np.arange(20).reshape(4, 5).tolist()
    assert "\tint a(_Anonymous_Dim_4, _Anonymous_Dim_5) ;\n" in _dump(path, capsys)


# -- netcdf-c's own pure Zarr --------------------------------------------------------------
def _netcdf_c_store(path: Path, mode: str) -> Path:
    with netCDF4.Dataset(f"file://{path}#mode={mode},file", "w") as nc:
        nc.createDimension("t", None)
        nc.createDimension("x", 3)
        v = nc.createVariable("v", "f4", ("t", "x"))
        v[:] = np.arange(6, dtype="f4").reshape(2, 3)
        v.units = "m"
        nc.createVariable("s", "i4").assignValue(5)
        g = nc.createGroup("g")
        g.createDimension("y", 2)
        g.createVariable("w", "i2", ("y", "x"))[:] = [[1, 2, 3], [4, 5, 6]]
        nc.title = "hello"
    return path


@pytest.mark.parametrize("mode", ["zarr", "zarr,noxarray", "nczarr,noxarray"])
def test_netcdf_c_pure_zarr_reads_as_netcdf_c_reads_it(tmp_path: Path, mode: str) -> None:
    store = _netcdf_c_store(tmp_path / "nc.zarr", mode)
    with netCDF4.Dataset(f"file://{store}#mode=zarr,file") as nc, Dataset(str(store)) as ds:
        theirs, ours = _shapes(nc), _shapes(ds)
        if mode == "zarr":  # netcdf-c keeps its _scalar_ dimension; nczarr reads a scalar
            assert theirs.pop("/s") == (("_scalar_",), (1,)) and ours.pop("/s") == ((), ())
        assert ours == theirs
        for name in ("v", "g/w"):
            assert ds[name][:].tolist() == nc[name][:].tolist()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_unnamed_dimensions_are_listed_at_the_root_as_netcdf4_lists_them(tmp_path: Path, zarr_format: int) -> None:
    root = zarr.open_group(tmp_path / "plain.zarr", mode="w", zarr_format=zarr_format)
    root.create_array("a", shape=(3, 4), dtype="f4")[:] = 1.5
    root.create_array("b", shape=(4,), dtype="i4")[:] = 7
    root.create_group("g").create_array("c", shape=(5,), dtype="i2")[:] = 2
    with Dataset(str(tmp_path / "plain.zarr")) as ds:
        ours = (list(ds.dimensions), list(ds["g"].dimensions), [len(d) for d in ds["a"].get_dims()])
        assert [d.name for d in ds["g"]["c"].get_dims()] == ["_Anonymous_Dim_5"]
    assert ours == (["_Anonymous_Dim_3", "_Anonymous_Dim_4", "_Anonymous_Dim_5"], [], [3, 4])
    if zarr_format == 2:  # netcdf-c 4.10.1 reads no v3 store without dimension names
        with netCDF4.Dataset(f"file://{tmp_path / 'plain.zarr'}#mode=zarr,file") as nc:
            assert ours == (list(nc.dimensions), list(nc["g"].dimensions), [len(d) for d in nc["a"].get_dims()])


@pytest.mark.parametrize("mode", ["zarr", "zarr,noxarray"])
def test_dump_header_as_ncdump(tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Debian's ncdump is netcdf-c 4.9.0: it names anonymous dimensions _zdim_<n> (4.10.1:
    # _Anonymous_Dim_<n>), declares every pure Zarr dimension in the root group and reads
    # netcdf-c 4.10.1's scalar as a variable of a dimension _scalar_
    store = _netcdf_c_store(tmp_path / "nc.zarr", mode)
    done = subprocess.run(["ncdump", "-h", f"file://{store}#mode=zarr,file"], capture_output=True, text=True, check=True)
    theirs = done.stdout.replace("_zdim_", "_Anonymous_Dim_")
    ours = _dump(store, capsys, "-h")
    if mode == "zarr":
        theirs = theirs.replace("\t_scalar_ = 1 ;\n", "").replace("s(_scalar_)", "s")
        theirs = theirs.replace("\ty = 2 ;\n", "")
        ours = ours.replace("  dimensions:\n  \ty = 2 ;\n", "")
    assert ours.replace("netcdf nc ", "") == theirs.replace("netcdf nc ", "")


# -- a name reused with other lengths --------------------------------------------------------
def _pyramid(path: Path, zarr_format: int, names: tuple[str, ...] = ("y", "x")) -> Path:
    """An OME-Zarr style image pyramid: levels 0, 1, 2 at halving sizes, the same names."""
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    axes = [{"name": n, "type": "space"} for n in names]
    root.attrs["multiscales"] = [{"version": "0.4", "axes": axes, "datasets": [{"path": str(i)} for i in range(3)]}]
    for level in range(3):
        n = 8 >> level
        shape = (2,) * (len(names) - 2) + (n, n)
        named = {"dimension_names": list(names)} if zarr_format == 3 else {}
        array = root.create_array(str(level), shape=shape, dtype="u2", compressors=None, **named)
        if zarr_format == 2:
            array.attrs["_ARRAY_DIMENSIONS"] = list(names)
        array[:] = np.arange(np.prod(shape)).reshape(shape) + 1000 * level
    return path


PYRAMID = {"/0": (("y", "x"), (8, 8)), "/1": (("y_2", "x_2"), (4, 4)), "/2": (("y_3", "x_3"), (2, 2))}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_image_pyramid_opens_with_renamed_dimensions(
    tmp_path: Path, zarr_format: int, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _pyramid(tmp_path / "image.zarr", zarr_format)
    with caplog.at_level(logging.WARNING, logger="nczarr"), Dataset(str(store)) as ds:
        assert _shapes(ds) == PYRAMID
        assert {k: len(v) for k, v in ds.dimensions.items()} == {"y": 8, "x": 8, "y_2": 4, "x_2": 4, "y_3": 2, "x_3": 2}
        assert ds["1"][:].tolist() == (np.arange(16).reshape(4, 4) + 1000).tolist()
        assert ds["2"][:].tolist() == (np.arange(4).reshape(2, 2) + 2000).tolist()
    warned = [r.getMessage() for r in caplog.records if "reading it as dimension" in r.getMessage()]
    assert len(warned) == 4 and warned[0].startswith("1/") and "'y_2'" in warned[0] and "0/" in warned[0]
    with Dataset(str(store)) as ds:  # the same names every time
        assert _shapes(ds) == PYRAMID
    out = _dump(store, capsys)
    assert "dimensions:\n\ty = 8 ;\n\tx = 8 ;\n\ty_2 = 4 ;\n\tx_2 = 4 ;\n\ty_3 = 2 ;\n\tx_3 = 2 ;\n" in out
    assert "\tushort \\1(y_2, x_2) ;\n" in out and " \\2 =\n  2000, 2001,\n  2002, 2003 ;" in out
    assert main(["info", str(store)]) == 0


def test_pyramid_of_four_dimensions(tmp_path: Path) -> None:
    store = _pyramid(tmp_path / "image.zarr", 3, ("c", "z", "y", "x"))
    with Dataset(str(store)) as ds:
        assert ds["0"].dimensions == ("c", "z", "y", "x")
        assert ds["2"].dimensions == ("c", "z", "y_3", "x_3") and ds["2"].shape == (2, 2, 2, 2)


@pytest.mark.parametrize("fmt", CONVENTIONS)
def test_pyramid_copies_to_every_convention(tmp_path: Path, fmt: str) -> None:
    store = _pyramid(tmp_path / "image.zarr", 3)
    target = tmp_path / "copy.zarr"
    assert main(["copy", "--format", fmt, str(store), str(target)]) == 0
    with Dataset(str(target)) as ds:
        assert _shapes(ds) == PYRAMID
        assert ds["2"][:].tolist() == (np.arange(4).reshape(2, 2) + 2000).tolist()


def test_pyramid_copies_to_netcdf_file(tmp_path: Path) -> None:
    store = _pyramid(tmp_path / "image.zarr", 2)
    target = tmp_path / "copy.nc"
    assert main(["copy", str(store), str(target)]) == 0
    with netCDF4.Dataset(target) as nc:
        assert _shapes(nc) == PYRAMID
        assert nc["1"][:].tolist() == (np.arange(16).reshape(4, 4) + 1000).tolist()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_writing_to_a_pyramid_keeps_its_dimension_names(tmp_path: Path, zarr_format: int) -> None:
    store = _pyramid(tmp_path / "image.zarr", zarr_format)
    with Dataset(str(store), "a") as ds:
        ds["1"].note = "touched"
        ds["1"][0, 0] = 7
    with Dataset(str(store)) as ds:
        assert _shapes(ds) == PYRAMID and ds["1"][0, 0] == 7
    level = zarr.open_array(store / "1", mode="r")
    names = level.metadata.dimension_names if zarr_format == 3 else level.attrs["_ARRAY_DIMENSIONS"]
    assert list(names) == ["y", "x"]


def test_renaming_skips_names_in_use(tmp_path: Path) -> None:
    root = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    root.create_array("a", shape=(5,), dtype="i4", dimension_names=["x"])
    root.create_array("b", shape=(3,), dtype="i4", dimension_names=["x"])
    root.create_array("c", shape=(2,), dtype="i4", dimension_names=["x_2"])
    root.create_array("x_3", shape=(4,), dtype="i4", dimension_names=["x"])  # an array of the name too
    root.create_group("g").create_array("d", shape=(9,), dtype="i4", dimension_names=["x"])
    with Dataset(str(tmp_path / "s.zarr")) as ds:
        assert _shapes(ds) == {
            "/a": (("x",), (5,)),
            "/b": (("x_4",), (3,)),
            "/c": (("x_2",), (2,)),
            "/x_3": (("x_5",), (4,)),
            "/g/d": (("x",), (9,)),  # a subgroup's own x, as before
        }


def test_arrays_that_disagree_open(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=2)
    for name, n in (("a", 2), ("b", 3), ("c", 2)):
        array = root.create_array(name, shape=(n,), dtype="i4", fill_value=-1)
        array.attrs["_ARRAY_DIMENSIONS"] = ["x"]
        array[:] = np.arange(n)
    with caplog.at_level(logging.WARNING, logger="nczarr"), Dataset(str(tmp_path / "s.zarr")) as ds:
        assert _shapes(ds) == {"/a": (("x",), (2,)), "/b": (("x_2",), (3,)), "/c": (("x",), (2,))}
        assert ds["b"][:].tolist() == [0, 1, 2]
    assert "b/.zarray: dimension 'x' has length 3 here and 2 in a/.zarray: reading it as dimension 'x_2'" in caplog.text


def test_a_coordinate_variable_keeps_one_growing_dimension(tmp_path: Path) -> None:
    # a writer killed while growing an unlimited dimension: the arrays disagree, the
    # coordinate variable says it is one dimension
    root = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    root.create_array("a", shape=(3,), dtype="i4", dimension_names=["time"])[:] = [1, 2, 3]
    root.create_array("time", shape=(2,), dtype="f8", dimension_names=["time"])[:] = [0.0, 1.0]
    with Dataset(str(tmp_path / "s.zarr")) as ds:
        assert _shapes(ds) == {"/a": (("time",), (3,)), "/time": (("time",), (3,))}
        assert ds.dimensions["time"].isunlimited()


# -- what worked before keeps working ------------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_xarray_stores_read_as_before(tmp_path: Path, zarr_format: int, caplog: pytest.LogCaptureFixture) -> None:
    data = xr.Dataset(
        {"t2m": (("time", "lat", "lon"), np.arange(24, dtype="f4").reshape(2, 3, 4))},
        coords={"time": [0, 1], "lat": [1.0, 2.0, 3.0], "lon": np.arange(4.0)},
    )
    path = tmp_path / "x.zarr"
    data.to_zarr(path, zarr_format=zarr_format, consolidated=False)
    with caplog.at_level(logging.WARNING, logger="nczarr"), Dataset(str(path)) as ds:
        assert {k: len(v) for k, v in ds.dimensions.items()} == {"lat": 3, "lon": 4, "time": 2}
        assert ds["t2m"].dimensions == ("time", "lat", "lon")
        assert ds["t2m"][:].tolist() == data["t2m"].values.tolist()
    assert not caplog.records


def test_zarr_python_reads_what_nczarr_wrote_of_a_pyramid(tmp_path: Path) -> None:
    store = _pyramid(tmp_path / "image.zarr", 3)
    target = tmp_path / "copy.zarr"
    assert main(["copy", "--format", "ZARR", str(store), str(target)]) == 0
    names = {k: json.loads((target / k / "zarr.json").read_text())["dimension_names"] for k in ("0", "1", "2")}
    assert names == {"0": ["y", "x"], "1": ["y_2", "x_2"], "2": ["y_3", "x_3"]}
    assert zarr.open_array(target / "2", mode="r")[:].tolist() == [[2000, 2001], [2002, 2003]]


# -- dimension names that do not fit the shape, as netcdf-c reads them --------------------
def _v2_store(path: Path, arrays: dict[str, tuple[list[int], object]]) -> str:
    """A Zarr v2 store of int32 arrays ``name: (shape, _ARRAY_DIMENSIONS)``, data 0, 1, ..."""
    path.mkdir()
    (path / ".zgroup").write_text('{"zarr_format": 2}')
    for name, (shape, names) in arrays.items():
        (path / name).mkdir()
        zarray = {"zarr_format": 2, "shape": shape, "chunks": shape, "dtype": "<i4", "fill_value": -1,
                  "order": "C", "compressor": None, "filters": None}  # fmt: skip
        (path / name / ".zarray").write_text(json.dumps(zarray))
        (path / name / ".zattrs").write_text(json.dumps({"_ARRAY_DIMENSIONS": names}))
        key = ".".join("0" * len(shape)) or "0"
        (path / name / key).write_bytes(np.arange(max(1, int(np.prod(shape))), dtype="<i4").tobytes())
    return f"{path.as_uri()}#mode=zarr,file"


def _view(dataset: netCDF4.Dataset | Dataset) -> object:
    with dataset:
        return {name: (v.dimensions, v.shape, v[...].tolist()) for name, v in dataset.variables.items()}


@pytest.mark.parametrize(
    ("names", "dimensions"),
    [
        ("x", ("_Anonymous_Dim_3",)),  # no list: every axis anonymous
        ([1], ("1",)),  # a number is the name JSON writes
        ([True], ("true",)),
    ],
)
def test_names_that_are_no_list_of_strings_read_as_netcdf_c_reads_them(
    tmp_path: Path, names: object, dimensions: tuple[str, ...]
) -> None:
    url = _v2_store(tmp_path / "s", {"v": ([3], names)})
    assert _view(Dataset(url)) == _view(netCDF4.Dataset(url)) == {"v": (dimensions, (3,), [0, 1, 2])}


def test_more_names_than_axes_name_the_axes_with_the_first_ones(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """netcdf-c 4.10.1 also declares the extra name as a dimension, which no variable uses
    and whose length is whatever its memory held (0 alone, 94762806008800 within the suite);
    nczarr leaves it out."""
    url = _v2_store(tmp_path / "s", {"v": ([3], ["x", "y"])})
    with caplog.at_level(logging.WARNING):
        assert _view(Dataset(url)) == _view(netCDF4.Dataset(url)) == {"v": (("x",), (3,), [0, 1, 2])}
    assert 'dimension names ["x", "y"] do not match shape [3]' in caplog.text
    with netCDF4.Dataset(url) as theirs:
        assert list(theirs.dimensions) == ["x", "y"] and len(theirs.dimensions["x"]) == 3


def test_fewer_names_than_axes_leave_the_others_anonymous(tmp_path: Path) -> None:
    """netcdf-c 4.10.1 crashes on this store (segmentation fault): nothing to compare with."""
    url = _v2_store(tmp_path / "s", {"v": ([3, 2], ["x"])})
    assert _view(Dataset(url)) == {"v": (("x", "_Anonymous_Dim_2"), (3, 2), [[0, 1], [2, 3], [4, 5]])}


def test_a_0d_array_listing_names_is_a_scalar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As netcdf-c after 4.10.1 reads a shape [] array (netcdf-c 4.10.1 leaves every shape []
    array out, named or not); the names it lists are no dimensions."""
    url = _v2_store(tmp_path / "s", {"s": ([], ["x"]), "t": ([], ["_scalar_"]), "v": ([2], ["x"])})
    assert _view(Dataset(url)) == {"s": ((), (), 0), "t": ((), (), 0), "v": (("x",), (2,), [0, 1])}
    assert _view(netCDF4.Dataset(url)) == {"v": (("x",), (2,), [0, 1])}
    dumped = _dump(url, capsys)
    assert "\tint s ;" in dumped and "x = 2 ;" in dumped


def test_numpy_scalars_and_empty_arrays_in_a_consolidated_only_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store of nothing but ``.zmetadata`` (no ``.zgroup`` or ``.zarray`` files) holding
    what numpy makes of ``1``, ``[]`` and ``[[]]``: shapes ``[]`` with ``chunks: []``, ``[0]``
    and ``[1, 0]``, as netcdf-c's run_corrupt.sh checks (its issue 3108). Both the empty
    axes share one anonymous dimension of length 0, as netcdf-c names them; the scalars are
    scalars (netcdf-c 4.10.1 leaves them out, later netcdf-c shows them)."""
    store = tmp_path / "numpy_scalar_array.zarr"
    store.mkdir()
    array = {"compressor": None, "dtype": "<f8", "fill_value": 0.0, "filters": None, "order": "C", "zarr_format": 2}
    metadata = {
        ".zgroup": {"zarr_format": 2},
        "empty_list/.zarray": {**array, "chunks": [1], "shape": [0]},
        "list_empty_list/.zarray": {**array, "chunks": [1, 1], "shape": [1, 0]},
        "scalar/.zarray": {**array, "chunks": [], "shape": []},
        "int_scalar/.zarray": {**array, "dtype": "<i8", "fill_value": 0, "chunks": [], "shape": []},
    }
    (store / ".zmetadata").write_text(json.dumps({"metadata": metadata, "zarr_consolidated_format": 1}))
    url = f"{store.as_uri()}#mode=zarr,file,consolidated"
    with Dataset(url) as ours, netCDF4.Dataset(url) as theirs:
        assert {n: (v.dimensions, v.shape) for n, v in theirs.variables.items()} == {
            "empty_list": (("_Anonymous_Dim_0",), (0,)),
            "list_empty_list": (("_Anonymous_Dim_1", "_Anonymous_Dim_0"), (1, 0)),
        }
        assert {n: (v.dimensions, v.shape) for n, v in ours.variables.items()} == {
            "empty_list": (("_Anonymous_Dim_0",), (0,)),
            "int_scalar": ((), ()),
            "list_empty_list": (("_Anonymous_Dim_1", "_Anonymous_Dim_0"), (1, 0)),
            "scalar": ((), ()),
        }
        assert ours["scalar"][...] == 0 and ours["empty_list"][:].size == 0
    assert "\tint64 int_scalar ;" in _dump(url, capsys, "-h")


def test_an_object_dtype_without_its_codec_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """dtype ``|O`` with no vlen filter (run_corrupt.sh's bad_dtype): a clear error naming the
    array and the dtype, as netcdf-c refuses it, never a traceback."""
    store = tmp_path / "bad_dtype.zarr"
    (store / "id").mkdir(parents=True)
    (store / ".zgroup").write_text('{"zarr_format": 2}')
    zarray = {"chunks": [225, 265], "compressor": None, "dtype": "|O", "fill_value": None, "filters": None,
              "order": "C", "shape": [1799, 1059], "zarr_format": 2}  # fmt: skip
    (store / "id" / ".zarray").write_text(json.dumps(zarray))
    assert main(["dump", "-h", str(store)]) == 1
    assert "id/.zarray: dtype '|O' needs a vlen-utf8 or vlen-bytes filter" in capsys.readouterr().err
    with pytest.raises(OSError, match="NCZarr error"):  # netcdf-c 4.10.1 names neither
        netCDF4.Dataset(f"{store.as_uri()}#mode=zarr,file")
