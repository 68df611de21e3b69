"""Virtual datasets of netCDF-4 and netCDF-3 files in S3 (moto's server): references by URL,
their ETags recorded, a replaced object refused; netCDF-3 headers and values read by byte
ranges, compared with netCDF4 reading the originals."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import fsspec
import netCDF4
import numpy as np
import pytest
import s3fs  # noqa: F401  (fsspec opens s3:// through it: missing, these tests must fail)
from motoserver import moto_s3

import nczarr
from nczarr.convert.archive import copy_archive
from nczarr.convert.copy import CopyOptions
from nczarr.convert.netcdf3 import Netcdf3Reader
from nczarr.convert.virtual import VirtualOptions, virtualize
from nczarr.errors import StaleReferenceError

BUCKET = "nczarr-virtual"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with moto_s3(tmp_path_factory.mktemp("aws"), {BUCKET: None}) as url:
        yield url


def _put(endpoint: str, key: str, path: str) -> None:
    with open(path, "rb") as file:
        boto3.client("s3", endpoint_url=endpoint).put_object(Bucket=BUCKET, Key=key, Body=file.read())


def _file(path: str, value: float) -> str:
    with netCDF4.Dataset(path, "w") as d:
        d.createDimension("t", None)
        d.createDimension("x", 50)
        v = d.createVariable("v", "f4", ("t", "x"), chunksizes=(1, 50))
        v[:] = np.full((4, 50), value, "f4")
        v.units = "K"
    return path


def test_s3_sources(endpoint, tmp_path):
    _put(endpoint, "a.nc", _file(str(tmp_path / "a.nc"), 1.0))
    options = {"endpoint_url": endpoint}
    target = str(tmp_path / "v.zarr")
    report = virtualize([f"s3://{BUCKET}/a.nc"], target, VirtualOptions(storage_options=options))
    assert report.referenced == {"/v": 4}
    with nczarr.Dataset(target, storage_options=options) as d:
        assert d["v"].units == "K"
        assert np.array_equal(d["v"][:], np.full((4, 50), 1.0, "f4"))
    _put(endpoint, "a.nc", _file(str(tmp_path / "b.nc"), 2.0))  # the same size: the ETag tells
    with nczarr.Dataset(target, storage_options=options) as d, pytest.raises(StaleReferenceError, match="ETag"):
        d["v"][:]


NETCDF3_FORMATS = ["NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA"]


def _netcdf3_file(path: str, format: str, start: int) -> str:
    """Record variables of several types (two of them: records interleave), a fixed one,
    chars and, in CDF-5, 64-bit integers; attributes on each."""
    with netCDF4.Dataset(path, "w", format=format) as d:
        d.title = "remote"
        d.createDimension("t", None)
        d.createDimension("x", 3)
        d.createDimension("n", 4)
        d.createVariable("t", "f8", ("t",))[:] = np.arange(start, start + 2)
        v = d.createVariable("v", "i2", ("t", "x"), fill_value=-9)
        v.scale_factor = 0.5
        v[:] = np.ma.masked_equal(np.arange(start * 3, start * 3 + 6).reshape(2, 3) * 0.5, start * 1.5)
        d.createVariable("s", "S1", ("t", "n"))[:] = netCDF4.stringtochar(np.array([f"r{start:03d}", "abcd"], "S4"))
        d.createVariable("lat", "f4", ("x",))[:] = [10, 20, 30]
        if format == "NETCDF3_64BIT_DATA":
            d.createVariable("big", "i8", ("t",))[:] = [2**40 + start, -(2**40)]
            d.createVariable("u", "u4", ("x",))[:] = [1, 2**32 - 1, 7]
    return path


def _same_as_netcdf4(virtual: str, original: str, options: dict) -> None:
    """Every variable's values (mask included) and attributes as netCDF4 reads ``original``."""
    with nczarr.Dataset(virtual, storage_options=options) as ours, netCDF4.Dataset(original) as theirs:
        assert ours.getncattr("title") == "remote"
        assert sorted(ours.variables) == sorted(theirs.variables)
        for name, variable in theirs.variables.items():
            mine = ours[name]
            assert {k: mine.getncattr(k) for k in variable.ncattrs()} == {k: variable.getncattr(k) for k in variable.ncattrs()}
            expected, got = variable[:], mine[:]
            assert np.array_equal(np.ma.getmaskarray(expected), np.ma.getmaskarray(got)), name
            assert np.array_equal(np.ma.getdata(expected), np.ma.getdata(got)), name


@pytest.mark.parametrize("format", NETCDF3_FORMATS)
def test_s3_netcdf3_sources(endpoint, tmp_path, format):
    path = _netcdf3_file(str(tmp_path / "a.nc"), format, 2)
    _put(endpoint, f"{format}.nc", path)
    options = {"endpoint_url": endpoint}
    target = str(tmp_path / "v.zarr")
    report = virtualize([f"s3://{BUCKET}/{format}.nc"], target, VirtualOptions(storage_options=options))
    assert report.referenced["/v"] == 2 and report.referenced["/lat"] == 1 and not report.copied
    _same_as_netcdf4(target, path, options)
    with nczarr.Dataset(target, storage_options=options) as d:
        assert d["t"][:].tolist() == [2, 3]
    _put(endpoint, f"{format}.nc", _netcdf3_file(str(tmp_path / "b.nc"), format, 4))  # same size: the ETag tells
    with nczarr.Dataset(target, storage_options=options) as d, pytest.raises(StaleReferenceError, match="ETag"):
        d["v"][:]


def test_remote_netcdf3_values_by_byte_ranges(endpoint, tmp_path):
    """Selections (strided, reversed, empty) read from S3 by byte ranges equal the local ones."""
    path = _netcdf3_file(str(tmp_path / "r.nc"), "NETCDF3_64BIT_DATA", 5)
    _put(endpoint, "r.nc", path)
    local = Netcdf3Reader(path)
    with fsspec.open(f"s3://{BUCKET}/r.nc", "rb", endpoint_url=endpoint) as file:
        remote = Netcdf3Reader(f"s3://{BUCKET}/r.nc", file=file)
        assert [v.name for v in remote.dataset.variables] == [v.name for v in local.dataset.variables]
        for name in ("v", "s", "lat", "big", "u"):
            variable = local.dataset.find_variable(name)
            rest = tuple(slice(None, None, -2) for _ in variable.dimensions[1:])
            for first in (slice(None), slice(None, None, -1), slice(0, 3, 2), slice(1, 2), slice(1, 1)):
                selection = (first, *rest)
                expected = local.read(variable, selection)
                got = remote.read(remote.dataset.find_variable(name), selection)
                assert got.dtype == expected.dtype and np.array_equal(got, expected), (name, selection)
    local.close()


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF3_64BIT_DATA"])
def test_several_s3_sources_make_one_dataset(endpoint, tmp_path, format):
    """Files on S3 concatenated along their record dimension, as local ones are: referenced
    (virtualize) and copied (an archive copy)."""
    starts = (2, 4, 6)
    names = []
    for start in starts:
        path = _netcdf3_file(str(tmp_path / f"m{start}.nc"), format, start)
        _put(endpoint, f"{format}-m{start}.nc", path)
        names.append(f"s3://{BUCKET}/{format}-m{start}.nc")
    options = {"endpoint_url": endpoint}
    target = str(tmp_path / "v.zarr")
    virtualize(names, target, VirtualOptions(storage_options=options))
    copy_archive(names, tmp_path / "c.zarr", CopyOptions(storage_options=options))
    expected = []
    for start in starts:
        with netCDF4.Dataset(str(tmp_path / f"m{start}.nc")) as source:
            expected.append(source["v"][:])
    for made in (target, str(tmp_path / "c.zarr")):
        with nczarr.Dataset(made, storage_options=options) as d:
            assert d["t"][:].tolist() == [2, 3, 4, 5, 6, 7]
            assert d["v"].shape == (6, 3)
            assert np.ma.allequal(d["v"][:], np.ma.concatenate(expected))
