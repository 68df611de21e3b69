"""Cloud storage through fsspec against a live S3 server (moto's, on a free port of 127.0.0.1,
started for this module and stopped after; test credentials only): the commands'
``--storage-options``, ``--anon`` and ``--profile`` (``copy``: also per side), fsspec mappers,
filesystems and chained URLs, xarray over S3, an anonymous-read bucket, and the errors for a
missing bucket and wrong credentials. moto, s3fs and boto3 are test requirements: without them
these tests fail at import."""

from __future__ import annotations

import json
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import fsspec
import pytest
import requests
import s3fs
import xarray as xr
from motoserver import moto_s3

import nczarr
from nczarr.cli import main
from nczarr.errors import StoreError

BUCKET = "nczarr-cli"
PUBLIC = "nczarr-public"


@dataclass(frozen=True)
class Server:
    endpoint: str
    home: Path  # where the AWS files of the tests are

    @property
    def options(self) -> dict[str, object]:
        return {"endpoint_url": self.endpoint}

    @property
    def options_json(self) -> str:
        return json.dumps(self.options)

    def client(self) -> object:
        return boto3.client("s3", endpoint_url=self.endpoint)


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """moto's S3 server with a private bucket and a public-read one (moto serves anonymous
    reads by the bucket's canned ACL), and test credentials: a default key and a profile
    ``lab`` in the tests' own AWS files."""
    home = tmp_path_factory.mktemp("aws")
    with moto_s3(home, {BUCKET: None, PUBLIC: "public-read"}) as endpoint:
        yield Server(endpoint, home)


@pytest.fixture
def key() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def _fill(path: str | Path | object, **kwargs: object) -> None:
    with nczarr.Dataset(path, "w", **kwargs) as ds:  # type: ignore[arg-type]
        ds.title = "in the cloud"
        ds.createDimension("t", None)
        ds.createDimension("x", 2)
        v = ds.createVariable("v", "f4", ("t", "x"))
        v.units = "K"
        v[:] = [[1, 2], [3, 4]]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command run in this process: its status, stdout and stderr."""
    capsys.readouterr()
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_commands_read_write_append_and_copy_with_storage_options(
    s3: Server, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = tmp_path / "local.zarr"
    _fill(local)
    url = f"s3://{BUCKET}/{key}/a.zarr"
    status, _, err = _run(capsys, "copy", str(local), url, "--dst-storage-options", s3.options_json)
    assert status == 0, err
    status, out, err = _run(capsys, "dump", "-h", url, "--storage-options", s3.options_json)
    assert status == 0 and ':title = "in the cloud"' in out and "t = UNLIMITED ; // (2 currently)" in out, err
    with nczarr.Dataset(url, "a", storage_options=s3.options) as ds:  # append a record
        ds["v"][2] = [5, 6]
    copied = f"s3://{BUCKET}/{key}/b.zarr"
    status, _, err = _run(
        capsys, "copy", url, copied, "--src-storage-options", s3.options_json, "--dst-storage-options", s3.options_json
    )
    assert status == 0, err
    status, out, err = _run(capsys, "dump", "-v", "v", copied, "--storage-options", s3.options_json)
    assert status == 0 and "1, 2,\n  3, 4,\n  5, 6 ;" in out, err
    # one --storage-options for both sides; --profile names the tests' profile
    status, _, err = _run(
        capsys, "copy", copied, f"s3://{BUCKET}/{key}/c.zarr", "--storage-options", s3.options_json, "--profile", "lab"
    )
    assert status == 0, err
    status, out, err = _run(capsys, "info", url, "--storage-options", s3.options_json)
    assert status == 0 and "v" in out, err
    status, out, err = _run(capsys, "zom", "export", url, "--storage-options", s3.options_json)
    assert status == 0 and json.loads(out), err
    target = tmp_path / "back.nc"
    status, _, err = _run(capsys, "copy", copied, str(target), "--src-storage-options", s3.options_json)
    assert status == 0, err
    with nczarr.Dataset(target) as ds:
        assert ds["v"][:].tolist() == [[1, 2], [3, 4], [5, 6]]


def test_cdl_generated_into_s3(s3: Server, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cdl = tmp_path / "small.cdl"
    cdl.write_text("netcdf small {\ndimensions:\n x = 2 ;\nvariables:\n int v(x) ;\ndata:\n v = 7, 8 ;\n}\n")
    url = f"s3://{BUCKET}/{key}/gen.zarr"
    status, _, err = _run(capsys, "gen", "-o", url, str(cdl), "--storage-options", s3.options_json)
    assert status == 0, err
    with nczarr.Dataset(url, storage_options=s3.options) as ds:
        assert ds["v"][:].tolist() == [7, 8]


def test_xarray_opens_s3_with_both_engines(s3: Server, key: str) -> None:
    url = f"s3://{BUCKET}/{key}/x.zarr"
    _fill(url, storage_options=s3.options)
    with xr.open_dataset(url, engine="nczarr", storage_options=s3.options) as ds:
        assert ds["v"].values.tolist() == [[1, 2], [3, 4]]
        assert ds.attrs == {"title": "in the cloud"}
    with xr.open_dataset(url, engine="zarr", storage_options=s3.options) as ds:  # the default NCZARR is plain Zarr v3
        assert ds["v"].attrs == {"units": "K"} and ds.attrs == {"title": "in the cloud"}


def test_mappers_filesystems_and_chained_urls(
    s3: Server, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mapper = fsspec.get_mapper(f"s3://{BUCKET}/{key}/m.zarr", endpoint_url=s3.endpoint)
    _fill(mapper)
    fs = s3fs.S3FileSystem(endpoint_url=s3.endpoint)
    with nczarr.Dataset(fsspec.filesystem("dir", path=f"{BUCKET}/{key}/m.zarr", fs=fs)) as ds:
        assert ds["v"][1].tolist() == [3, 4]
    with nczarr.Dataset(mapper, "a") as ds:
        ds["v"][2] = [5, 6]
    # storage options go to the last link of a chain, where the data is
    chained = f"simplecache::s3://{BUCKET}/{key}/m.zarr"
    cache = {"simplecache": {"cache_storage": str(tmp_path / "cache")}}
    with nczarr.Dataset(chained, storage_options={**s3.options, **cache}) as ds:
        assert ds["v"].shape == (3, 2)
    status, out, err = _run(capsys, "dump", "-h", chained, "--storage-options", s3.options_json)
    assert status == 0 and "(3 currently)" in out, err
    # netcdf-c's URL of an S3-compatible endpoint inside a chain
    netcdf_c = f"simplecache::{s3.endpoint}/{BUCKET}/{key}/m.zarr#mode=nczarr,s3"
    status, out, err = _run(capsys, "dump", "-h", netcdf_c)
    assert status == 0 and ':title = "in the cloud"' in out, err
    # a zipped store in the bucket, read through zip::
    archive = tmp_path / "z.zip"
    _fill(archive)
    assert zipfile.is_zipfile(archive)
    fs.pipe(f"{BUCKET}/{key}/z.zip", archive.read_bytes())
    status, out, err = _run(capsys, "dump", "-v", "v", f"zip::s3://{BUCKET}/{key}/z.zip", "--storage-options", s3.options_json)
    assert status == 0 and "1, 2,\n  3, 4 ;" in out, err
    # the archive by its own URL, as a local one opens by its path ('No such file' before)
    status, out, err = _run(capsys, "dump", "-v", "v", f"s3://{BUCKET}/{key}/z.zip", "--storage-options", s3.options_json)
    assert status == 0 and "1, 2,\n  3, 4 ;" in out, err
    with xr.open_dataset(f"s3://{BUCKET}/{key}/z.zip", engine="nczarr", storage_options=s3.options) as ds:
        assert ds["v"].values.tolist() == [[1, 2], [3, 4]]
    status, _, err = _run(capsys, "copy", str(archive), f"s3://{BUCKET}/{key}/z.zip", "--dst-storage-options", s3.options_json)
    assert status == 1 and "writes only local ones" in err and err.count("\n") == 1


def _fresh(s3: Server) -> str:
    """Storage options that make s3fs build a new filesystem, so that it reads the
    credentials of the environment now (it keeps one per set of options otherwise)."""
    return json.dumps({**s3.options, "skip_instance_cache": True})


def test_anonymous_read_of_a_public_bucket(
    s3: Server, key: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"s3://{PUBLIC}/{key}/p.zarr"
    _fill(url, storage_options=s3.options)
    private = f"s3://{BUCKET}/{key}/p.zarr"
    _fill(private, storage_options=s3.options)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):  # no credentials anywhere
        monkeypatch.delenv(name)
    empty = s3.home / "empty"
    empty.write_text("")
    for name in ("AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
        monkeypatch.setenv(name, str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    status, out, err = _run(capsys, "dump", "-v", "v", url, "--anon", "--storage-options", _fresh(s3))
    assert status == 0 and "1, 2,\n  3, 4 ;" in out, err
    status, _, err = _run(capsys, "dump", private, "--anon", "--storage-options", _fresh(s3))
    assert status == 1 and err.startswith("nczarr: error: access denied: cannot read "), err
    assert "check the credentials" in err and "--anon" in err
    status, _, err = _run(capsys, "dump", url, "--storage-options", _fresh(s3))
    assert status == 1 and err.startswith("nczarr: error: no S3 credentials found to open "), err
    assert "--anon" in err


def test_a_missing_bucket_is_named(s3: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args in (
        ["dump", "s3://no-such-bucket/ds.zarr", "--storage-options", s3.options_json],
        ["dump", f"{s3.endpoint}/no-such-bucket/ds#mode=nczarr,s3"],
        ["copy", str(tmp_path / "missing.zarr"), "s3://unused/x"],  # the source is what is missing
    ):
        status, _, err = _run(capsys, *args)
        assert status == 1 and "Traceback" not in err
    local = tmp_path / "here.zarr"
    _fill(local)
    status, _, err = _run(capsys, "copy", str(local), "s3://no-such-bucket/out.zarr", "--dst-storage-options", s3.options_json)
    assert status == 1 and err == (
        f"nczarr: error: S3 bucket 'no-such-bucket' at {s3.endpoint} does not exist "
        "(opening 's3://no-such-bucket/out.zarr')\n"
    )
    assert "no-such-bucket" not in s3.client().list_buckets()["Buckets"]  # type: ignore[attr-defined]
    with pytest.raises(StoreError, match="S3 bucket 'no-such-bucket' at .* does not exist"):
        nczarr.Dataset("s3://no-such-bucket/ds.zarr", storage_options=s3.options)


def test_wrong_credentials_are_named(
    s3: Server, key: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto checks credentials between the two reset-auth calls (it knows none but IAM users
    it made, so every key is wrong), then accepts any again."""
    url = f"s3://{BUCKET}/{key}/w.zarr"
    _fill(url, storage_options=s3.options)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "wrong")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    requests.post(f"{s3.endpoint}/moto-api/reset-auth", data=b"0", timeout=10)
    try:
        read = _run(capsys, "dump", url, "--storage-options", _fresh(s3))
        copied = _run(capsys, "copy", url, f"s3://{BUCKET}/{key}/w2.zarr", "--storage-options", _fresh(s3))
    finally:
        requests.post(f"{s3.endpoint}/moto-api/reset-auth", data=b"inf", timeout=10)
    for status, _, err in (read, copied):
        assert status == 1 and err.startswith("nczarr: error: access denied: cannot read "), err
        # S3's reason: a HEAD says only "Forbidden", a GET (what nczarr sends: one request
        # per document) names the access key
        assert ("Forbidden" in err or "Access Key Id" in err) and "check the credentials" in err


def test_bad_storage_options_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "dump", "s3://b/k", "--storage-options", "{endpoint_url: 1}")
    assert status == 1 and err.startswith("nczarr: error: --storage-options: not JSON (")
    status, _, err = _run(capsys, "copy", "a", "b", "--src-storage-options", "[1]")
    assert status == 1 and err == "nczarr: error: --src-storage-options must be a JSON object, not [1]\n"


def test_chained_urls_give_the_storage_options_to_the_last_link(monkeypatch: pytest.MonkeyPatch) -> None:
    from nczarr.store.url import parse_store_url

    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)

    where = parse_store_url(
        "simplecache::http://127.0.0.1:9000/bkt/a/ds#mode=nczarr,s3&aws.profile=lab",
        {"anon": True, "simplecache": {"cache_storage": "/tmp/c"}},
    )
    assert where.target == "simplecache::s3://bkt/a/ds" and not where.local
    options = dict(where.storage_options)
    assert options["simplecache"] == {"cache_storage": "/tmp/c"}
    assert options["s3"] == {"endpoint_url": "http://127.0.0.1:9000", "profile": "lab", "anon": True}
    assert parse_store_url("zip::s3://bkt/a.zip", {"profile": "lab"}).storage_options == {"s3": {"profile": "lab"}}
    assert parse_store_url("s3://bkt/a", {"profile": "lab"}).storage_options == {"profile": "lab"}
