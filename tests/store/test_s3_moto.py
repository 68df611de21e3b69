"""netcdf-c's S3 URLs against a live S3 server: moto's, started here on a free port of
127.0.0.1 for the session and stopped after, with test credentials only (never real AWS).
``http://127.0.0.1:PORT/bucket/key#mode=nczarr,s3`` is the form netcdf-c takes for any
S3-compatible endpoint (MinIO, moto, ...). moto and s3fs are test requirements: without them
these tests fail (at import), they do not skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
import s3fs  # noqa: F401  (nczarr opens S3 URLs through it: missing, these tests must fail)
import xarray as xr
from motoserver import moto_s3

import nczarr
from nczarr.errors import NCZarrError

BUCKET = "nczarr-tests"


@dataclass(frozen=True)
class S3Server:
    endpoint: str  # http://127.0.0.1:PORT

    def url(self, key: str, mode: str = "nczarr,s3") -> str:
        """netcdf-c's URL of ``key`` in the test bucket."""
        return f"{self.endpoint}/{BUCKET}/{key}#mode={mode}"

    def keys(self, prefix: str) -> set[str]:
        client = boto3.client("s3", endpoint_url=self.endpoint)
        found = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/").get("Contents", [])
        return {item["Key"][len(prefix) + 1 :] for item in found}

    def get(self, key: str) -> bytes:
        client = boto3.client("s3", endpoint_url=self.endpoint)
        body: bytes = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        return body


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """moto's S3 server on 127.0.0.1 with one bucket, and an environment whose credentials,
    region and AWS config files are the tests' own (a profile ``lab``)."""
    with moto_s3(tmp_path_factory.mktemp("aws"), {BUCKET: None}, session_token=True) as endpoint:
        yield S3Server(endpoint)


@pytest.fixture
def key() -> str:
    """A fresh key prefix in the bucket."""
    return f"t-{uuid.uuid4().hex[:8]}/ds"


def _fill(dataset: nczarr.Dataset) -> None:
    dataset.createDimension("t", None)
    dataset.createDimension("x", 2)
    dataset.title = "over S3"
    v = dataset.createVariable("v", "f4", ("t", "x"))
    v.units = "K"
    v[:] = [[1, 2], [3, 4]]
    dataset.createGroup("g").createVariable("c", "i2", ("x",))[:] = [5, 6]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nczarr.cli", *args], capture_output=True, text=True, check=False, env=dict(os.environ)
    )


def test_write_and_read_nczarr_at_an_endpoint_url(s3: S3Server, key: str) -> None:
    with nczarr.Dataset(s3.url(key), "w") as dataset:
        _fill(dataset)
    assert {".zgroup", ".zattrs", "v/.zarray", "v/0.0", "g/c/.zarray"} <= s3.keys(key)
    assert ".zmetadata" not in s3.keys(key)  # as netcdf-c: only with 'consolidated'
    assert json.loads(s3.get(f"{key}/.zattrs"))["_nczarr_superblock"] == {"version": "2.0.0"}
    with nczarr.Dataset(s3.url(key)) as dataset:
        assert dataset.title == "over S3"
        assert dataset["v"][:].tolist() == [[1, 2], [3, 4]]
        assert dataset.dimensions["t"].isunlimited()
    with nczarr.Dataset(s3.url(key, "zarr,s3")) as pure:  # the same store read as pure Zarr
        assert "_nczarr_superblock" not in pure.ncattrs()
        assert pure["g/c"][:].tolist() == [5, 6]


def test_append_over_s3(s3: S3Server, key: str) -> None:
    with nczarr.Dataset(s3.url(key), "w") as dataset:
        _fill(dataset)
    with nczarr.Dataset(s3.url(key), "a") as dataset:
        dataset["v"][2] = [7, 8]
    with nczarr.Dataset(s3.url(key)) as dataset:
        assert dataset["v"].shape == (3, 2)


def test_zarr_consolidated_over_s3(s3: S3Server, key: str) -> None:
    with nczarr.Dataset(s3.url(key, "zarr,consolidated,s3"), "w") as dataset:
        _fill(dataset)
    assert ".zmetadata" in s3.keys(key)
    assert json.loads(s3.get(f"{key}/v/.zattrs"))["_ARRAY_DIMENSIONS"] == ["t", "x"]
    with xr.open_dataset(s3.url(key, "zarr,s3"), engine="nczarr") as ds:
        assert ds["v"].values.tolist() == [[1, 2], [3, 4]]


def test_noclobber_over_s3(s3: S3Server, key: str) -> None:
    with nczarr.Dataset(s3.url(key), "w") as dataset:
        _fill(dataset)
    with pytest.raises(NCZarrError, match="File exists"):
        nczarr.Dataset(s3.url(key), "w", clobber=False)


def test_s3_scheme_with_the_endpoint_as_a_storage_option(s3: S3Server, key: str) -> None:
    url = f"s3://{BUCKET}/{key}#mode=nczarr"
    with nczarr.Dataset(url, "w", storage_options={"endpoint_url": s3.endpoint}) as dataset:
        _fill(dataset)
    with nczarr.Dataset(s3.url(key)) as dataset:
        assert dataset["v"][1].tolist() == [3, 4]


def test_aws_profile_is_used(s3: S3Server, key: str) -> None:
    with nczarr.Dataset(s3.url(key, "nczarr,s3&aws.profile=lab"), "w") as dataset:
        _fill(dataset)
    with nczarr.Dataset(f"{s3.endpoint}/{BUCKET}/{key}#mode=nczarr,s3&awsprofile=lab") as dataset:
        assert dataset["g/c"][:].tolist() == [5, 6]
    with pytest.raises(Exception, match="nosuch"):
        nczarr.Dataset(s3.url(key, "nczarr,s3&aws.profile=nosuch"))


def test_mfdataset_of_s3_urls(s3: S3Server, key: str) -> None:
    for i in range(2):
        with nczarr.Dataset(s3.url(f"{key}{i}"), "w") as dataset:
            _fill(dataset)
    with nczarr.MFDataset([s3.url(f"{key}0"), s3.url(f"{key}1")]) as joined:
        assert joined["v"].shape == (4, 2)


def test_commands_dump_and_copy_to_and_from_s3(s3: S3Server, key: str, tmp_path: Path) -> None:
    local = tmp_path / "local.zarr"
    with nczarr.Dataset(local, "w", format="NCZARR_V2") as dataset:
        _fill(dataset)
    up = _cli("copy", str(local), s3.url(key))
    assert up.returncode == 0, up.stderr
    remote = _cli("dump", s3.url(key))
    assert remote.returncode == 0, remote.stderr
    here = _cli("dump", str(local))
    assert remote.stdout.split("\n", 1)[1] == here.stdout.split("\n", 1)[1]  # all but the name
    down = tmp_path / "down.file"
    back = _cli("copy", s3.url(key), f"{down.as_uri()}#mode=zarr,file")
    assert back.returncode == 0, back.stderr
    assert "_ARRAY_DIMENSIONS" in (down / "v" / ".zattrs").read_text()
    info = _cli("info", s3.url(key))
    assert info.returncode == 0 and "v" in info.stdout, info.stderr
    refused = _cli("dump", s3.url(key, "nczarr,s3,bogus"))
    assert refused.returncode != 0 and "unknown mode word 'bogus'" in refused.stderr
