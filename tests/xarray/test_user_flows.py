"""The engine and ``to_nczarr`` as a new user meets them, on data made by xarray itself, against
xarray's own netCDF4 and zarr engines: what a found bug broke stays fixed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from xarray.backends.plugins import guess_engine

from nczarr.errors import StoreError
from nczarr.xarray import to_nczarr


def _chars_and_ints() -> xr.Dataset:
    """Values that equal netCDF's default fills: an empty char string, and integers."""
    return xr.Dataset(
        {"code": ("x", np.array([b"ab", b"c", b"", b"de", b"f"], dtype="S2"))},
        coords={"x": ("x", np.arange(5, dtype="i4"))},
    )


def test_pure_zarr_v2_keeps_no_default_fill_as_to_zarr_does(tmp_path: Path) -> None:
    """ZARR_V2 wrote netCDF's default fill as ``fill_value`` where the variable had no
    ``_FillValue``: xarray (both engines) then masked the empty char string as NaN and gave
    the coordinate a ``_FillValue``. Like ``to_zarr``, no ``_FillValue``, a null fill."""
    data = _chars_and_ints()
    data.to_netcdf(tmp_path / "ref.nc", engine="netcdf4")
    data.to_zarr(tmp_path / "ref.zarr", zarr_format=2, consolidated=False)
    to_nczarr(data, tmp_path / "ours.zarr", format="ZARR_V2")
    for name in ("code", "x"):
        assert json.loads((tmp_path / "ours.zarr" / name / ".zarray").read_text())["fill_value"] is None
    with (
        xr.open_dataset(tmp_path / "ref.nc", engine="netcdf4") as netcdf4,
        xr.open_dataset(tmp_path / "ref.zarr", engine="zarr", consolidated=False) as zarr_ref,
        xr.open_dataset(tmp_path / "ours.zarr", engine="nczarr") as ours,
        xr.open_dataset(tmp_path / "ours.zarr", engine="zarr", consolidated=False) as ours_by_zarr,
    ):
        xr.testing.assert_identical(ours.load(), netcdf4.load())
        xr.testing.assert_identical(ours_by_zarr.load(), zarr_ref.load())
        assert "_FillValue" not in ours["x"].encoding


def test_pure_zarr_v2_keeps_a_fill_value_given(tmp_path: Path) -> None:
    data = xr.Dataset({"v": ("x", np.array([1.0, np.nan, 3.0]))})
    data["v"].encoding["_FillValue"] = -9.0
    to_nczarr(data, tmp_path / "ours.zarr", format="ZARR_V2")
    assert json.loads((tmp_path / "ours.zarr" / "v" / ".zarray").read_text())["fill_value"] == -9.0
    with xr.open_dataset(tmp_path / "ours.zarr", engine="nczarr") as ours:
        xr.testing.assert_identical(ours.load(), data)
        assert ours["v"].encoding["_FillValue"] == -9.0


def test_a_zarr_v3_draft_store_opens_without_naming_the_engine() -> None:
    """No engine claimed a draft store ('did not find a match'): xarray's zarr engine cannot
    read it, so it is unambiguously nczarr's."""
    draft = Path(__file__).parent.parent / "fixtures" / "draft_v3" / "draft_text.zr3"
    assert guess_engine(str(draft)) == "nczarr"
    with xr.open_dataset(draft, group="foo") as ds:
        assert ds["qux"].shape == (4, 6) and ds["qux"].attrs["bar"] == "apples"


def test_a_file_that_is_no_dataset_is_named_as_such(tmp_path: Path) -> None:
    """A text file named ``.nc`` gave 'store root ... exists and is not a directory'; a zip
    archive without ``.zip`` the same."""
    junk = tmp_path / "junk.nc"
    junk.write_text("hello")
    with pytest.raises(StoreError, match="neither a netCDF file .* nor a Zarr store"):
        xr.open_dataset(junk, engine="nczarr")
    to_nczarr(xr.Dataset({"v": ("x", np.arange(3.0))}), tmp_path / "a.zip")
    shutil.copy(tmp_path / "a.zip", tmp_path / "a.zarr")
    with pytest.raises(StoreError, match="is a zip archive: name it '.zip' or open 'file://.*#mode=nczarr,zip'"):
        xr.open_dataset(tmp_path / "a.zarr", engine="nczarr")
    with xr.open_dataset(f"file://{tmp_path / 'a.zarr'}#mode=nczarr,zip", engine="nczarr") as ds:
        assert float(ds["v"].sum()) == 3.0


_REWRITE_ZSTD = """
import sys
import netCDF4, numpy as np, xarray as xr
from nczarr.xarray import to_nczarr
with netCDF4.Dataset(sys.argv[1], "w") as ds:
    ds.createDimension("x", 100)
    ds.createVariable("v", "i4", ("x",), compression="zstd", complevel=3)[:] = np.arange(100)
with xr.open_dataset(sys.argv[1], engine="nczarr") as opened:
    to_nczarr(opened.load(), sys.argv[2], format="NETCDF4")
with xr.open_dataset(sys.argv[2], engine="netcdf4") as back:
    assert back["v"].encoding["zstd"] and int(back["v"].sum()) == 4950
"""


def test_a_zstd_file_read_then_written_while_open(tmp_path: Path) -> None:
    """Writing zstd while a file read with netCDF4's zstd plugin was open failed with
    h5py's 'Unable to unregister filter (... a dataset is still using it)'. In a process of
    its own: the filters a process registered decide."""
    result = subprocess.run(
        [sys.executable, "-c", _REWRITE_ZSTD, str(tmp_path / "a.nc"), str(tmp_path / "b.nc")],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr


def test_append_dim_grows_pure_zarr_as_to_zarr_does(tmp_path: Path) -> None:
    """Pure Zarr has no unlimited dimensions; appends were refused ('not unlimited ... write
    it first with unlimited_dims', which did not help), also to stores ``to_zarr`` made."""
    data = xr.Dataset({"v": (("t", "x"), np.ones((2, 3)))}, coords={"t": [0, 1]})
    made_by_to_zarr = tmp_path / "to_zarr.zarr"
    data.to_zarr(made_by_to_zarr, mode="w", zarr_format=2)
    for format in ("ZARR", "ZARR_V2", "ZARR_V3_DRAFT", None):
        target = made_by_to_zarr if format is None else tmp_path / f"{format}.zarr"
        if format is not None:
            to_nczarr(data, target, format=format)
        to_nczarr(data.assign_coords(t=[2, 3]) * 2, target, mode="a", append_dim="t")
        to_nczarr((data.assign_coords(t=[4, 5]) * 3).chunk(t=2), target, mode="a", append_dim="t")  # dask: in parallel
        with xr.open_dataset(target, engine="nczarr") as ds:
            assert ds["t"].values.tolist() == [0, 1, 2, 3, 4, 5]
            assert ds["v"].values[:, 0].tolist() == [1, 1, 2, 2, 3, 3]
        if format != "ZARR_V3_DRAFT":
            with xr.open_dataset(target, engine="zarr") as ds:  # consolidated metadata kept up to date
                assert ds["t"].values.tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="not unlimited"):  # netCDF's rule in the NCZarr conventions
        to_nczarr(data, tmp_path / "nczarr.zarr")
        to_nczarr(data.assign_coords(t=[2, 3]), tmp_path / "nczarr.zarr", mode="a", append_dim="t")
