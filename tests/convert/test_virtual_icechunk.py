"""icechunk repositories of virtual chunks (nczarr.convert.virtual.export_icechunk): read by
icechunk + xarray's zarr engine without nczarr, compared with netCDF4 reading the originals."""

from __future__ import annotations

import warnings

import icechunk
import netCDF4
import numpy as np
import pytest
import xarray as xr

from nczarr.cli import main
from nczarr.convert.virtual import VirtualOptions, export_icechunk
from nczarr.errors import NCZarrError


def _file(path: str, format: str) -> str:
    with netCDF4.Dataset(path, "w", format=format) as d:
        d.title = "ice"
        d.createDimension("t", None)
        d.createDimension("x", 7)
        storage = {"zlib": True, "shuffle": True, "chunksizes": (2, 3)} if format == "NETCDF4" else {}
        v = d.createVariable("v", "f4", ("t", "x"), fill_value=-1.0, **storage)
        v[:] = np.arange(35, dtype="f4").reshape(5, 7)
        v[1, 2] = np.ma.masked
        v.units = "K"
        d.createVariable("t", "f8", ("t",))[:] = np.arange(5) * 6.0
        d.createVariable("x", "i2", ("x",))[:] = np.arange(7)
    return path


def _open(repository: str, container: str) -> xr.Dataset:
    repo = icechunk.Repository.open(
        icechunk.local_filesystem_storage(repository), authorize_virtual_chunk_access={container: None}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numcodecs codecs outside the v3 spec
        return xr.open_zarr(repo.readonly_session("main").store, consolidated=False).load()


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF3_64BIT_OFFSET"])
def test_icechunk_read_by_xarray(tmp_path, format):
    path = _file(str(tmp_path / "a.nc"), format)
    report = export_icechunk([path], str(tmp_path / "repo"))
    assert report.container == f"file://{tmp_path}/" and report.references
    ours = _open(str(tmp_path / "repo"), report.container)
    theirs = xr.open_dataset(path, engine="netcdf4").load()
    assert ours.attrs["title"] == "ice" and ours["v"].attrs["units"] == "K"
    for name in ("v", "t", "x"):
        assert np.array_equal(ours[name].values, theirs[name].values, equal_nan=True), name
    assert np.isnan(ours["v"].values[1, 2])


def test_icechunk_cli_and_refusals(tmp_path, capsys):
    path = _file(str(tmp_path / "a.nc"), "NETCDF4")
    assert main(["virtualize", "--icechunk", str(tmp_path / "repo"), path]) == 0
    assert f"icechunk virtual chunk container: file://{tmp_path}/" in capsys.readouterr().out
    assert _open(str(tmp_path / "repo"), f"file://{tmp_path}/")["v"].shape == (5, 7)
    with pytest.raises(NCZarrError, match="already exists"):
        export_icechunk([path], str(tmp_path / "repo"))
    with pytest.raises(NCZarrError, match="Zarr v3"):
        export_icechunk([path], str(tmp_path / "other"), VirtualOptions(format="ZARR_V2"))


def test_icechunk_remote_sources_refused(tmp_path):
    from nczarr.store.references import write_icechunk

    with pytest.raises(NCZarrError, match="local source files only"):
        write_icechunk(str(tmp_path / "repo"), {"zarr.json": b"{}", "v/c/0": ("s3://bucket/a.nc", 0, 4)})
    assert not (tmp_path / "repo").exists()
