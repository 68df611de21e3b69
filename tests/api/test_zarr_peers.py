"""What the API writes, as the Zarr peers see it: zarr-python and xarray open NCZarr v3
stores, netCDF4 opens NCZarr v2 ones; and what each convention refuses before writing."""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pytest
import xarray as xr
import zarr

import nczarr

DATA = np.arange(24, dtype="f4").reshape(4, 6)


def write(path: Path | str, fmt: str) -> None:
    with nczarr.Dataset(path, "w", format=fmt) as ds:
        ds.title = "peers"
        ds.createDimension("time", None)
        ds.createDimension("lon", 6)
        lon = ds.createVariable("lon", "f8", ("lon",))
        lon[:] = np.linspace(0, 300, 6)
        lon.units = "degrees_east"
        v = ds.createVariable("tas", "f4", ("time", "lon"), zlib=True, fill_value=-1.0)
        v.units = "K"
        for i in range(4):  # grows one record at a time
            v[i] = DATA[i]
        g = ds.createGroup("sub")
        g.createVariable("count", "i2", ("lon",))[:] = np.arange(6)


def test_zarr_python_and_xarray_read_nczarr_v3(tmp_path: Path) -> None:
    path = tmp_path / "v3.zarr"
    write(path, "NCZARR")
    group = zarr.open_group(path, mode="r")
    np.testing.assert_array_equal(group["tas"][:], DATA)
    assert group["tas"].metadata.dimension_names == ("time", "lon")
    assert group["sub/count"][:].tolist() == list(range(6))
    ds = xr.open_zarr(path, consolidated=True)
    assert ds["tas"].dims == ("time", "lon") and ds.attrs["title"] == "peers"
    np.testing.assert_array_equal(ds["tas"].values, DATA)
    assert ds["lon"].attrs["units"] == "degrees_east"


def test_netcdf4_reads_nczarr_v2_written_through_the_api(tmp_path: Path) -> None:
    path = tmp_path / "v2.zarr"
    write(f"file://{path}#mode=nczarr,file", "NETCDF4")
    with netCDF4.Dataset(f"file://{path}#mode=nczarr,file") as ds:
        assert ds.title == "peers" and ds.dimensions["time"].isunlimited()
        np.testing.assert_array_equal(ds["tas"][:], DATA)
        assert ds["tas"].filters()["zlib"] and ds["tas"]._FillValue == -1
        assert ds["sub/count"][:].tolist() == list(range(6))


@pytest.mark.parametrize("fmt", ["NCZARR_V2", "ZARR", "ZARR_V2"])
def test_user_types_are_refused_where_they_cannot_be_stored(tmp_path: Path, fmt: str) -> None:
    pair = np.dtype([("a", "f4")])
    with nczarr.Dataset(tmp_path / "d.zarr", "w", format=fmt) as ds:
        with pytest.raises(RuntimeError, match="use NCZARR"):
            ds.createEnumType("i1", "cloud_t", {"clear": 0})
        assert not ds.enumtypes
        ds.createDimension("x", 2)
        ds.createVariable("ok", "i4", ("x",))[:] = [1, 2]
        if fmt == "NCZARR_V2":
            with pytest.raises(RuntimeError, match="use NCZARR"):
                ds.createCompoundType(pair, "pair")
            assert not ds.cmptypes
        else:  # pure Zarr holds a compound as a structured array, as xarray does
            ds.createVariable("c", ds.createCompoundType(pair, "pair"), ("x",))[:] = np.array([(1.5,), (2.5,)], pair)
    with nczarr.Dataset(tmp_path / "d.zarr") as ds:
        assert ds["ok"][:].tolist() == [1, 2]
        if fmt != "NCZARR_V2":
            assert ds["c"][:].tolist() == [(1.5,), (2.5,)] and list(ds.cmptypes) == ["c_t"]


def test_user_types_round_trip_in_nczarr(tmp_path: Path) -> None:
    path = tmp_path / "types.zarr"
    pair = np.dtype([("a", "f4"), ("b", "i2")])
    with nczarr.Dataset(path, "w") as ds:
        ds.createDimension("x", 3)
        cloud = ds.createEnumType("u1", "cloud_t", {"clear": 0, "cumulus": 1})
        ctype = ds.createCompoundType(pair, "pair_t")
        ragged = ds.createVLType("i4", "ragged_t")
        ds.createVariable("e", cloud, ("x",))[:] = [0, 1, 1]
        ds.createVariable("c", ctype, ("x",))[:] = np.array([(1.5, 1), (2.5, 2), (3.5, 3)], pair)
        r = ds.createVariable("r", ragged, ("x",))
        r[:] = np.array([np.arange(n, dtype="i4") for n in (1, 3, 2)], dtype=object)
    with nczarr.Dataset(path) as ds:
        assert ds["e"][:].tolist() == [0, 1, 1] and ds.enumtypes["cloud_t"].enum_dict == {"clear": 0, "cumulus": 1}
        assert ds["c"][:]["a"].tolist() == [1.5, 2.5, 3.5] and ds["c"][1]["b"] == 2
        assert [list(x) for x in ds["r"][:]] == [[0], [0, 1, 2], [0, 1]]
        assert ds["r"].datatype is ds.vltypes["ragged_t"]
    assert zarr.open_group(path, mode="r")["c"][:]["b"].tolist() == [1, 2, 3]


def test_renames_move_the_data_and_persist(tmp_path: Path) -> None:
    path = tmp_path / "d.zarr"
    write(path, "NCZARR")
    with nczarr.Dataset(path, "a") as ds:
        ds.renameVariable("tas", "air")
        ds.renameDimension("lon", "x")
        ds.renameGroup("sub", "child")
        ds["air"].renameAttribute("units", "unit")
    with nczarr.Dataset(path) as ds:
        assert list(ds.variables) == ["lon", "air"] and ds["air"].dimensions == ("time", "x")
        np.testing.assert_array_equal(ds["air"][:], DATA)
        assert ds["child/count"][:].tolist() == list(range(6)) and ds["air"].unit == "K"


def test_default_chunks_for_records_written_one_at_a_time(tmp_path: Path) -> None:
    """netcdf-c's defaults: one record per chunk along an unlimited dimension (so appending a
    record writes whole chunks), 4 KiB chunks for a 1-D unlimited variable."""
    with nczarr.Dataset(tmp_path / "d.zarr", "w") as ds:
        ds.createDimension("t", None)
        ds.createDimension("y", 180)
        ds.createDimension("x", 360)
        assert ds.createVariable("v", "f4", ("t", "y", "x")).chunking() == [1, 180, 360]
        assert ds.createVariable("time", "f8", ("t",)).chunking() == [512]
        # one chunk: Zarr has no contiguous layout (netCDF4 on an NCZarr store says so too)
        assert ds.createVariable("c", "f4", ("y", "x"), contiguous=True).chunking() == [180, 360]


def test_appending_to_a_store_keeps_its_chunk_keys(tmp_path: Path) -> None:
    """xarray writes nested chunk keys (c/0/0), nczarr flat ones (c.0.0): a dataset changed
    through nczarr keeps the keys its chunks are stored under."""
    path = tmp_path / "x.zarr"
    xr.Dataset({"v": (("t", "x"), DATA)}).to_zarr(path, zarr_format=3, consolidated=True)
    with nczarr.Dataset(path, "a") as ds:
        ds["v"][1, 2] = 100
        ds.title = "changed"
    expected = DATA.copy()
    expected[1, 2] = 100
    np.testing.assert_array_equal(zarr.open_group(path, mode="r")["v"][:], expected)
    assert (path / "v" / "c" / "0" / "0").exists() and not (path / "v" / "c.0.0").exists()
    write(tmp_path / "n.zarr", "NCZARR")
    assert (tmp_path / "n.zarr" / "tas" / "c.3.0").exists()
