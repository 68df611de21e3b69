"""The default output (NCZARR, Zarr v3) as plain Zarr readers see it: xarray's own
``engine="zarr"``, zarr-python 3 and TensorStore show the user's attributes and dimensions
only, ``to_netcdf`` works on what xarray opened, and nczarr still reads the layout it wrote
before the array extras moved out of the attributes (``tests/fixtures``, written by that
code). xarray, zarr, tensorstore and netCDF4 are test requirements: missing, these tests
fail at import."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import tensorstore as ts
import xarray as xr
import zarr

import nczarr
from nczarr.cli import main as cli_main

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: A store written by nczarr before array extras became zarr.json members, and its dump then.
OLD_LAYOUT = FIXTURES / "nczarr3_attributes_layout.zarr"
OLD_DUMP = FIXTURES / "nczarr3_attributes_layout.cdl"

GLOBAL = {"title": "plain readers", "version": 3}
TAS = {"units": "K", "scale_factor": 0.5, "long_name": "air temperature"}
SUB = {"note": "inner group"}


def write_default(path: Path) -> None:
    """A dataset with the shapes xarray users meet: an unlimited dimension, a coordinate,
    a fill value, packed data, chars, strings and a nested group."""
    with nczarr.Dataset(path, "w") as ds:
        ds.setncatts(GLOBAL)
        ds.createDimension("time", None)
        ds.createDimension("lat", 3)
        lat = ds.createVariable("lat", "f8", ("lat",))
        lat[:] = [10.0, 20.0, 30.0]
        lat.units = "degrees_north"
        tas = ds.createVariable("tas", "i2", ("time", "lat"), fill_value=-1)
        tas[0:2, :] = np.array([[1, 2, 3], [4, -1, 6]], dtype="i2")  # packed values
        tas.setncatts(TAS)
        code = ds.createVariable("code", "S1", ("lat",))
        code[:] = np.array([b"a", b"b", b"c"])
        sub = ds.createGroup("sub")
        sub.setncatts(SUB)
        names = sub.createVariable("names", str, ("lat",))
        names[:] = np.array(["x", "yz", ""], dtype=object)


@pytest.fixture
def default_store(tmp_path: Path) -> Path:
    path = tmp_path / "default.zarr"
    write_default(path)
    return path


def test_array_extras_are_members_readers_may_ignore(default_store: Path) -> None:
    doc = json.loads((default_store / "tas" / "zarr.json").read_text())
    assert set(doc["attributes"]) == {*TAS, "_FillValue"}
    assert doc["_nczarr_array"] == {"must_understand": False, "dimension_references": ["/time", "/lat"]}
    assert doc["_nczarr_attrs"]["must_understand"] is False
    assert doc["dimension_names"] == ["time", "lat"]


@pytest.mark.parametrize("consolidated", [True, False])
def test_xarray_zarr_engine_shows_the_users_attributes_and_dimensions(
    default_store: Path, tmp_path: Path, consolidated: bool
) -> None:
    raw = xr.open_dataset(default_store, engine="zarr", consolidated=consolidated, decode_cf=False)
    assert raw.attrs == GLOBAL
    assert raw["tas"].attrs == {**TAS, "_FillValue": -1}
    assert raw["lat"].attrs == {"units": "degrees_north"}
    assert raw["code"].attrs == {}
    assert dict(raw.sizes) == {"time": 2, "lat": 3}
    assert raw["tas"].dims == ("time", "lat")

    ds = xr.open_dataset(default_store, engine="zarr", consolidated=consolidated)
    np.testing.assert_array_equal(ds["tas"].values, [[0.5, 1.0, 1.5], [2.0, np.nan, 3.0]])
    target = tmp_path / "out.nc"
    ds.to_netcdf(target)
    with netCDF4.Dataset(target) as nc:
        assert {k: nc.getncattr(k) for k in nc.ncattrs()} == GLOBAL
        assert set(nc["tas"].ncattrs()) == {*TAS, "_FillValue"}
        nc.set_auto_maskandscale(False)
        np.testing.assert_array_equal(nc["tas"][:], [[1, 2, 3], [4, -1, 6]])


def test_xarray_datatree_shows_group_attributes_and_writes_netcdf(default_store: Path, tmp_path: Path) -> None:
    tree = xr.open_datatree(default_store, engine="zarr")
    assert tree.attrs == GLOBAL
    assert tree["sub"].attrs == SUB
    assert list(tree["sub"]["names"].values) == ["x", "yz", ""]
    assert tree["sub"]["names"].attrs == {}
    tree.to_netcdf(tmp_path / "tree.nc")
    with netCDF4.Dataset(tmp_path / "tree.nc") as nc:
        assert nc["sub"].getncattr("note") == "inner group"


def test_zarr_python_shows_the_users_attributes(default_store: Path) -> None:
    root = zarr.open_group(default_store, mode="r")
    assert dict(root["tas"].attrs).keys() == {*TAS, "_FillValue"}
    assert dict(root["lat"].attrs) == {"units": "degrees_north"}
    assert dict(root["sub/names"].attrs) == {}
    # zarr-python 3.1 refuses extra members in a group's zarr.json (against the v3 spec), so a
    # group's netCDF metadata stays in its attributes, under names starting with _nczarr_
    # (xarray hides attributes starting with _nc)
    users = {k: v for k, v in root.attrs.items() if not k.startswith("_nczarr_")}
    assert users == GLOBAL
    assert {k for k in root["sub"].attrs if not k.startswith("_nczarr_")} == set(SUB)
    np.testing.assert_array_equal(root["tas"][:], [[1, 2, 3], [4, -1, 6]])


def test_tensorstore_opens_arrays_with_extension_members(default_store: Path) -> None:
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(default_store / "tas")}}
    array = ts.open(spec).result()
    np.testing.assert_array_equal(array.read().result(), [[1, 2, 3], [4, -1, 6]])


def test_nczarr_reads_its_own_default_output(default_store: Path) -> None:
    with nczarr.Dataset(default_store) as ds:
        assert {k: ds.getncattr(k) for k in ds.ncattrs()} == GLOBAL
        assert ds["tas"].dimensions == ("time", "lat")
        assert ds.dimensions["time"].isunlimited()
        assert set(ds["tas"].ncattrs()) == {*TAS, "_FillValue"}
        assert ds["code"].dtype == np.dtype("S1")
        assert list(ds["sub/names"][:]) == ["x", "yz", ""]


def _dump(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert cli_main(["dump", str(path)]) in (0, None)
    return capsys.readouterr().out


def test_reads_the_layout_written_before(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((OLD_LAYOUT / "tas" / "zarr.json").read_text())
    assert "_nczarr_array" in doc["attributes"] and "_nczarr_array" not in doc  # the old layout
    assert _dump(OLD_LAYOUT, capsys) == OLD_DUMP.read_text()


def test_writing_to_an_old_store_moves_its_extras_and_keeps_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.zarr"
    shutil.copytree(OLD_LAYOUT, path)
    with nczarr.Dataset(path, "a") as ds:
        ds["tas"][3, :] = [6.0, 7.0]
    doc = json.loads((path / "tas" / "zarr.json").read_text())
    assert doc["_nczarr_array"]["dimension_references"] == ["/time", "/lat"]
    assert "_nczarr_array" not in doc["attributes"]
    expected = OLD_DUMP.read_text().replace("old_layout", "old").replace("(3 currently)", "(4 currently)")
    expected = expected.replace("  4, 5 ;", "  4, 5,\n  6, 7 ;").replace("nczarr3_attributes_layout", "old")
    assert _dump(path, capsys) == expected
    assert xr.open_dataset(path, engine="zarr")["tas"].attrs == {"scale": 0.5, "units": "K"}


def test_netcdf4_wheel_reads_no_zarr_v3_in_either_layout(default_store: Path) -> None:
    """netcdf-c 4.10.1 has no Zarr v3 (its v3 work is in a fork): moving the extras breaks
    no netCDF4 reader. If this starts to pass, check what netcdf-c reads."""
    for path in (default_store, OLD_LAYOUT):
        with pytest.raises(OSError, match="Unknown file format"):
            netCDF4.Dataset(f"file://{path.resolve()}#mode=nczarr,file")
