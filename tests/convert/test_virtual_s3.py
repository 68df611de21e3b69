"""Virtual datasets of netCDF-4 files in S3 (moto's server): references by URL, their ETags
recorded, a replaced object refused."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import netCDF4
import numpy as np
import pytest
import s3fs  # noqa: F401  (fsspec opens s3:// through it: missing, these tests must fail)
from motoserver import moto_s3

import nczarr
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
