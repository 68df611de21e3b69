"""netcdf-c's URLs and modes wherever a dataset's location is accepted: how each URL form
parses, what each mode writes (file by file against the netCDF4 wheel, netcdf-c 4.10.1), how
a mode reads a store, and that the API, MFDataset, the xarray engine and the commands all take
them. (S3 URLs against a live S3 server: tests/store/test_s3_moto.py.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import xarray as xr
import zarr

import nczarr
from nczarr.errors import ArgumentError, StoreError
from nczarr.formats.location import parse_location
from nczarr.store import open_store

# -- how each form parses ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "target", "convention", "zip_"),
    [
        ("file:///d/x.file#mode=nczarr,file", "/d/x.file", "NCZARR_V2", False),
        ("file://localhost/d/x.file#mode=zarr,file", "/d/x.file", "ZARR_V2", False),
        ("file:///d/x.zip#mode=nczarr,zip", "/d/x.zip", "NCZARR_V2", True),
        ("file:///d/x.store#mode=zarr,zip", "/d/x.store", "ZARR_V2", True),  # zip by the mode word alone
        ("file:///d/a%20b%23c.file#mode=nczarr,file", "/d/a b#c.file", "NCZARR_V2", False),
        ("file:rel/x.file#mode=zarr,file", "rel/x.file", "ZARR_V2", False),
        ("file://rel.file#mode=nczarr,file", "rel.file", "NCZARR_V2", False),  # netcdf-c's scripts' form
        ("rel/x.file#mode=zarr,file", "rel/x.file", "ZARR_V2", False),
        ("file:///d/x#mode=xarray,file", "/d/x", "ZARR_V2", False),
        ("file:///d/x#mode=noxarray,file", "/d/x", "ZARR_V2", False),
        ("file:///d/x#mode=nczarr,noxarray,file", "/d/x", "ZARR_V2", False),  # as netcdf-c: noxarray is pure Zarr
        ("file:///d/x#mode=nczarr,file,v3", "/d/x", "NCZARR", False),
        ("file:///d/x#mode=zarr,file,v3", "/d/x", "ZARR", False),
        ("file:///d/x#mode=NCZarr,File,V2", "/d/x", "NCZARR_V2", False),
        ("file:///d/x#mode=nczarr&mode=file", "/d/x", "NCZARR_V2", False),  # several mode keys add up
        ("file:///d/x#log&show=fetch&mode=nczarr,file,log,show", "/d/x", "NCZARR_V2", False),
        ("file:///d/x#mode=file", "/d/x", None, False),
        ("file://x.nzf#mode=nczarr,nzf", "x.nzf", "NCZARR_V2", False),  # netcdf-c 4.9's old word for file
        ("/d/x.zarr", "/d/x.zarr", None, False),
        ("/d/with#hash.zarr", "/d/with#hash.zarr", None, False),  # a plain path keeps its '#'
        ("/d/x.zip", "/d/x.zip", None, True),
    ],
)
def test_local_forms(url: str, target: str, convention: str | None, zip_: bool) -> None:
    location = parse_location(url)
    assert (location.target, location.convention, location.zip, location.local) == (target, convention, zip_, True)


def test_mode_words_set_the_options() -> None:
    zarr_v2 = parse_location("file:///d/x#mode=zarr,file").convention_options("ZARR_V2")
    assert zarr_v2 == {"consolidated": False, "netcdf_c_layout": True}
    assert parse_location("file:///d/x#mode=nczarr,file,consolidated").convention_options("NCZARR_V2") == {"consolidated": True}
    noxarray = parse_location("file:///d/x#mode=noxarray,file")
    assert noxarray.convention_options("ZARR_V2") == {"consolidated": False, "netcdf_c_layout": True, "xarray": False}
    assert parse_location("/d/x.zarr").convention_options("NCZARR") == {}  # plain paths keep the defaults


@pytest.mark.parametrize(
    ("url", "word"),
    [("file:///d/x#mode=nczarr,fiel", "fiel"), ("s3://b/k#mode=zarr,bogus,s3", "bogus"), ("/d/x#mode=zar", "zar")],
)
def test_unknown_mode_words_are_refused_by_name(url: str, word: str) -> None:
    with pytest.raises(ArgumentError, match=f"unknown mode word '{word}' in '{re.escape(url)}'"):
        parse_location(url)


def test_a_remote_zip_is_refused() -> None:
    with pytest.raises(ArgumentError, match="zip archive .* must be a local file"):
        parse_location("s3://b/k.zip#mode=nczarr,zip")


def test_a_file_url_naming_a_host_is_refused() -> None:
    with pytest.raises(StoreError, match="names a host"):
        parse_location("file://elsewhere/d/x")
    # ... but in netcdf-c's URLs all that follows file:// is the path, as its test scripts use it
    assert parse_location("file://elsewhere/d/x#mode=nczarr,file").target == "elsewhere/d/x"


def _region(name: str) -> dict[str, object]:
    return {"client_kwargs": {"region_name": name}}


@pytest.mark.parametrize(
    ("url", "target", "options"),
    [
        ("s3://bucket/key/ds#mode=nczarr", "s3://bucket/key/ds", {"client_kwargs": {"region_name": "eu-north-1"}}),
        ("https://s3.us-west-2.amazonaws.com/bucket/ds#mode=zarr,s3", "s3://bucket/ds", _region("us-west-2")),
        ("https://bucket.s3.ap-south-1.amazonaws.com/a/ds#mode=nczarr", "s3://bucket/a/ds", _region("ap-south-1")),
        ("https://bucket.s3.amazonaws.com/ds#mode=nczarr", "s3://bucket/ds", {"client_kwargs": {"region_name": "eu-north-1"}}),
        ("https://s3.amazonaws.com/bucket/ds", "s3://bucket/ds", {"client_kwargs": {"region_name": "eu-north-1"}}),
        (
            "http://127.0.0.1:9000/bucket/a/ds#mode=nczarr,s3",
            "s3://bucket/a/ds",
            {"endpoint_url": "http://127.0.0.1:9000", "client_kwargs": {"region_name": "eu-north-1"}},
        ),
        (
            "https://minio.example.org/bucket/ds#mode=zarr,s3&aws.profile=lab",
            "s3://bucket/ds",
            {"endpoint_url": "https://minio.example.org", "client_kwargs": {"region_name": "eu-north-1"}, "profile": "lab"},
        ),
        (
            "https://minio.example.org/bucket/ds#mode=zarr,s3&awsprofile=lab&aws.region=xx-1",
            "s3://bucket/ds",
            {"endpoint_url": "https://minio.example.org", "client_kwargs": {"region_name": "xx-1"}, "profile": "lab"},
        ),
        (
            "https://bucket.s3.r1.example.com/ds#mode=nczarr,s3",
            "s3://bucket/ds",
            {"endpoint_url": "https://s3.r1.example.com", "client_kwargs": {"region_name": "r1"}},
        ),
        (
            "gs3://bucket/ds#mode=nczarr",
            "s3://bucket/ds",
            {"endpoint_url": "https://storage.googleapis.com", "client_kwargs": {"region_name": "eu-north-1"}},
        ),
        ("https://data.example.org/x.zarr", "https://data.example.org/x.zarr", {}),  # not S3: plain HTTP
    ],
)
def test_s3_forms(url: str, target: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-north-1")
    location = parse_location(url)
    assert (location.target, dict(location.storage_options), location.local) == (target, options, False)


def test_region_from_aws_region_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "sa-east-1")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-north-1")
    assert parse_location("s3://b/k").storage_options == {"client_kwargs": {"region_name": "sa-east-1"}}


def test_given_storage_options_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "sa-east-1")
    given = {"anon": True, "client_kwargs": {"region_name": "us-east-2", "verify": False}}
    location = parse_location("https://h.example/b/k#mode=nczarr,s3", storage_options=given)
    assert location.storage_options == {
        "endpoint_url": "https://h.example",
        "anon": True,
        "client_kwargs": {"region_name": "us-east-2", "verify": False},
    }


# -- what each mode writes, against netcdf-c 4.10.1 ----------------------------------------

#: Modes whose stores the wheel and nczarr must lay out alike.
WRITE_MODES = [
    "nczarr,file",
    "zarr,file",
    "xarray,file",
    "noxarray,file",
    "zarr,noxarray,file",
    "nczarr,noxarray,file",
    "nczarr,file,consolidated",
    "zarr,file,consolidated",
    "nczarr,file,log",
]


def _fill(dataset: netCDF4.Dataset | nczarr.Dataset) -> None:
    dataset.createDimension("x", 3)
    dataset.title = "urls"
    v = dataset.createVariable("v", "i4", ("x",))
    v.units = "m"
    v[:] = [1, 2, 3]
    group = dataset.createGroup("g")
    group.note = "in g"
    group.createDimension("y", 3)  # netcdf-c reads pure Zarr's dimensions into each group that uses them
    w = group.createVariable("w", "f8", ("y",))
    w.long_name = "w"
    w[:] = [0.5, 1.5, 2.5]


def _layout(root: Path) -> dict[str, object]:
    """Each key of a store; for each .zattrs the attribute names (netcdf-c's _NCProperties
    aside: its provenance, which nczarr writes only in NCZarr)."""
    layout: dict[str, object] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        key = path.relative_to(root).as_posix()
        layout[key] = sorted(set(json.loads(path.read_text())) - {"_NCProperties"}) if path.name == ".zattrs" else None
    return layout


@pytest.mark.parametrize("mode", ["zarr,file", "xarray,file", "nczarr,file"])
def test_strings_are_written_as_netcdf_c_writes_them(mode: str, tmp_path: Path) -> None:
    """netcdf-c 4.10.1 stores strings as fixed-length bytes (``_nczarr_default_maxstrlen``, else
    128) and cannot open a store holding zarr-python's vlen-utf8 arrays."""
    ours, theirs = tmp_path / "ours.file", tmp_path / "theirs.file"
    for kind, store in ((netCDF4, theirs), (nczarr, ours)):
        with kind.Dataset(f"{store.as_uri()}#mode={mode}", "w") as dataset:
            dataset.createDimension("d", 2)
            dataset.createVariable("v", str, ("d",))[:] = np.array(["uvw", "xyz"], dtype=object)
    dtypes = [json.loads((store / "v" / ".zarray").read_text())["dtype"] for store in (ours, theirs)]
    assert dtypes[0] == dtypes[1]
    with netCDF4.Dataset(f"{ours.as_uri()}#mode={mode}") as dataset:
        assert dataset["v"][:].tolist() == ["uvw", "xyz"]


@pytest.mark.parametrize("mode", WRITE_MODES)
def test_each_mode_writes_what_netcdf_c_writes(mode: str, tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.file", tmp_path / "theirs.file"
    with netCDF4.Dataset(f"{theirs.as_uri()}#mode={mode}", "w") as dataset:
        _fill(dataset)
    with nczarr.Dataset(f"{ours.as_uri()}#mode={mode}", "w") as dataset:
        _fill(dataset)
    assert _layout(ours) == _layout(theirs)
    # and each reads the other's store alike
    for store in (ours, theirs):
        url = f"{store.as_uri()}#mode={mode}"
        assert _summary(nczarr.Dataset(url)) == _summary(netCDF4.Dataset(url))


def test_noxarray_dimensions_are_anonymous_as_netcdf_c_reads_them(tmp_path: Path) -> None:
    url = f"{(tmp_path / 'x.file').as_uri()}#mode=noxarray,file"
    with nczarr.Dataset(url, "w") as dataset:
        _fill(dataset)
    assert not (tmp_path / "x.file" / "v" / ".zattrs").read_text().count("_ARRAY_DIMENSIONS")
    with netCDF4.Dataset(url) as theirs:
        assert list(theirs.dimensions) == ["_Anonymous_Dim_3"]


def test_v3_writes_zarr_v3(tmp_path: Path) -> None:
    """netcdf-c 4.10.1 builds without Zarr v3 and writes v2 for ``v3``; nczarr writes what was asked."""
    for mode, convention in (("nczarr,file,v3", "NCZARR"), ("zarr,file,v3", "ZARR")):
        path = tmp_path / f"{convention}.file"
        with nczarr.Dataset(f"{path.as_uri()}#mode={mode}", "w") as dataset:
            _fill(dataset)
        assert json.loads((path / "zarr.json").read_text())["zarr_format"] == 3
        assert zarr.open_group(path, mode="r")["v"][:].tolist() == [1, 2, 3]


def test_zip_mode_writes_a_zip_archive_in_netcdf_c_layout(tmp_path: Path) -> None:
    """netcdf-c's zmap_zip.c roots the dataset at a directory named after the archive less
    its extension, added first; and a directory entry for each folder of a key."""
    path = tmp_path / "x.zip"
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,zip", "w") as dataset:
        _fill(dataset)
    assert zipfile.is_zipfile(path)
    names = zipfile.ZipFile(path).namelist()
    assert names[0] == "x/"
    assert {"x/.zgroup", "x/v/", "x/v/.zarray", "x/g/", "x/g/w/", "x/g/w/.zarray"} <= set(names)
    assert all(name.startswith("x/") for name in names)
    group = zarr.open_group(zarr.storage.ZipStore(path, mode="r"), path="x", mode="r", zarr_format=2)
    assert group["v"][:].tolist() == [1, 2, 3]
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,zip") as dataset:
        assert dataset["g/w"][:].tolist() == [0.5, 1.5, 2.5]
        assert dataset.disk_format == "NCZARR"


def test_a_plain_zip_path_writes_at_the_archives_top(tmp_path: Path) -> None:
    """Where zarr-python's ZipStore reads a dataset; netcdf-c's layout only for ``#mode=...,zip``."""
    path = tmp_path / "plain.zip"
    with nczarr.Dataset(path, "w", format="NCZARR_V2") as dataset:
        _fill(dataset)
    assert ".zgroup" in zipfile.ZipFile(path).namelist()
    assert zarr.open_group(zarr.storage.ZipStore(path, mode="r"), mode="r", zarr_format=2)["v"][:].tolist() == [1, 2, 3]
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,zip") as dataset:  # either layout reads either way
        assert dataset["v"][:].tolist() == [1, 2, 3]


def test_the_netcdf4_wheel_has_no_zip_storage(tmp_path: Path) -> None:
    """netcdf-c 4.10.1 in the netCDF4 wheel (and Debian's nccopy 4.9.0) are built without
    libzip, so the zip layout is checked against zmap_zip.c's source instead; this fails when
    a wheel gains zip support, to compare live then."""
    with pytest.raises(OSError, match="not turned on"):
        netCDF4.Dataset(f"{(tmp_path / 'x.zip').as_uri()}#mode=nczarr,zip", "w")


# -- what each mode reads, against netcdf-c 4.10.1 -----------------------------------------


def _summary(dataset: netCDF4.Dataset | nczarr.Dataset) -> object:
    def group(g: netCDF4.Group | nczarr.Group) -> object:
        return (
            {name: len(d) for name, d in g.dimensions.items()},
            {name: (v.dimensions, v.shape, sorted(v.ncattrs()), v[:].tolist()) for name, v in g.variables.items()},
            sorted(set(g.ncattrs()) - {"_NCProperties"}),
            {name: group(c) for name, c in g.groups.items()},
        )

    try:
        return group(dataset)
    finally:
        dataset.close()


@pytest.mark.parametrize("written", ["nczarr,file", "zarr,file", "noxarray,file"])
@pytest.mark.parametrize("read", ["nczarr,file", "zarr,file", "xarray,file", "noxarray,file", "zarr,noxarray,file"])
def test_reading_honours_the_mode_as_netcdf_c_does(written: str, read: str, tmp_path: Path) -> None:
    """``#mode=zarr`` reads an NCZarr store as pure Zarr (its _nczarr_* keys ignored),
    ``noxarray`` ignores _ARRAY_DIMENSIONS, ``nczarr`` reads whatever is there."""
    path = tmp_path / "w.file"
    with netCDF4.Dataset(f"{path.as_uri()}#mode={written}", "w") as dataset:
        _fill(dataset)
    url = f"{path.as_uri()}#mode={read}"
    assert _summary(nczarr.Dataset(url)) == _summary(netCDF4.Dataset(url))


# -- everywhere a location is accepted -----------------------------------------------------


def test_relative_file_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()  # netcdf-c creates no parent folders (NetCDF: Some object not found)
    with nczarr.Dataset("file:sub/r.file#mode=zarr,file", "w") as dataset:
        _fill(dataset)
    assert (tmp_path / "sub" / "r.file" / ".zgroup").is_file()
    with netCDF4.Dataset(f"{(tmp_path / 'sub' / 'r.file').as_uri()}#mode=zarr,file") as theirs:
        assert theirs["v"][:].tolist() == [1, 2, 3]
    # netcdf-c's scripts' form: file://NAME, relative to the current folder (netcdf-c's own
    # current folder is the one it started in, so it is given the absolute URL here)
    theirs = f"{(tmp_path / 'theirs.file').as_uri()}#mode=nczarr,file"
    with netCDF4.Dataset(theirs, "w") as dataset:
        _fill(dataset)
    assert _summary(nczarr.Dataset("file://theirs.file#mode=nczarr,file")) == _summary(netCDF4.Dataset(theirs))


def test_percent_encoded_path(tmp_path: Path) -> None:
    path = tmp_path / "a b.file"
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,file", "w") as dataset:  # as_uri encodes the space
        _fill(dataset)
    assert (path / ".zgroup").is_file()


def test_open_store_takes_the_url(tmp_path: Path) -> None:
    path = tmp_path / "x.store"
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,zip", "w") as dataset:
        _fill(dataset)
    with open_store(f"{path.as_uri()}#mode=nczarr,zip") as store:
        assert ".zgroup" in set(store.list())
    assert zipfile.ZipFile(path).namelist()[0] == "x/"  # netcdf-c: the name less one extension


def test_mfdataset_globs_a_url(tmp_path: Path) -> None:
    for i in range(3):
        with netCDF4.Dataset(f"{(tmp_path / f'm{i}.file').as_uri()}#mode=nczarr,file", "w") as dataset:
            dataset.createDimension("t", None)
            t = dataset.createVariable("t", "f8", ("t",))
            t[:] = [2 * i, 2 * i + 1]
    with nczarr.MFDataset(f"{tmp_path.as_uri()}/m*.file#mode=nczarr,file") as joined:
        assert joined["t"][:].tolist() == [0, 1, 2, 3, 4, 5]


def test_xarray_engine_opens_a_url(tmp_path: Path) -> None:
    url = f"{(tmp_path / 'x.file').as_uri()}#mode=nczarr,file"
    with netCDF4.Dataset(url, "w") as dataset:
        _fill(dataset)
    with xr.open_dataset(url, engine="nczarr") as ds:
        assert ds["v"].values.tolist() == [1, 2, 3]
        assert ds["v"].dims == ("x",)
    with xr.open_dataset(url.replace("nczarr,file", "noxarray,file"), engine="nczarr") as ds:
        assert ds["v"].dims == ("_Anonymous_Dim_3",)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nczarr.cli", *args], capture_output=True, text=True, check=False)


def test_commands_take_urls_in_and_out(tmp_path: Path) -> None:
    cdl = tmp_path / "c.cdl"
    cdl.write_text('netcdf c {\ndimensions:\n  x = 2 ;\nvariables:\n  int v(x) ;\n    v:units = "m" ;\ndata:\n  v = 7, 8 ;\n}\n')
    made = f"{(tmp_path / 'made.file').as_uri()}#mode=zarr,file"
    assert _cli("gen", "-o", made, str(cdl)).returncode == 0
    assert json.loads((tmp_path / "made.file" / "v" / ".zattrs").read_text())["_ARRAY_DIMENSIONS"] == ["x"]
    copied = f"{(tmp_path / 'copied.zip').as_uri()}#mode=nczarr,zip"
    assert _cli("copy", made, copied).returncode == 0
    assert zipfile.is_zipfile(tmp_path / "copied.zip")
    dumped = _cli("dump", copied)
    assert dumped.returncode == 0, dumped.stderr
    ncdump = subprocess.run(["ncdump", made], capture_output=True, text=True, check=True).stdout
    assert dumped.stdout.split("\n", 1)[1] == ncdump.split("\n", 1)[1]  # all but the dataset's name
    info = _cli("info", copied)
    assert info.returncode == 0 and "v" in info.stdout
    bad = _cli("dump", f"{(tmp_path / 'made.file').as_uri()}#mode=zarr,flie")
    assert bad.returncode != 0 and "unknown mode word 'flie'" in bad.stderr


def test_copy_to_a_url_writes_its_mode(tmp_path: Path) -> None:
    src = tmp_path / "src.zarr"
    with nczarr.Dataset(src, "w") as dataset:
        _fill(dataset)
    dst = tmp_path / "dst.file"
    assert _cli("copy", str(src), f"{dst.as_uri()}#mode=noxarray,file").returncode == 0
    assert not (dst / ".zmetadata").exists()
    assert "_ARRAY_DIMENSIONS" not in (dst / "v" / ".zattrs").read_text()
    with netCDF4.Dataset(f"{dst.as_uri()}#mode=noxarray,file") as theirs:
        assert np.array_equal(theirs["g/w"][:], [0.5, 1.5, 2.5])


def test_updating_through_a_zarr_url_keeps_the_stores_convention(tmp_path: Path) -> None:
    """netcdf-c 4.10.1 rewrites an NCZarr store opened for update with ``#mode=zarr`` as pure
    Zarr and drops its arrays' attributes; nczarr updates the store in its own convention."""
    path = tmp_path / "u.file"
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,file", "w") as dataset:
        _fill(dataset)
    with nczarr.Dataset(f"{path.as_uri()}#mode=zarr,file", "a") as dataset:
        dataset.added = "yes"
    attributes = json.loads((path / ".zattrs").read_text())
    assert attributes["added"] == "yes" and "_nczarr_superblock" in attributes
    with netCDF4.Dataset(f"{path.as_uri()}#mode=nczarr,file") as theirs:
        assert theirs["v"].units == "m" and theirs.dimensions["x"].size == 3


def test_pure_zarr_scalars_are_written_as_netcdf_c_writes_them(tmp_path: Path) -> None:
    """Through a ``#mode=zarr`` URL a scalar is stored with shape [1] and the dimension
    ``_scalar_``, as netcdf-c writes it (netcdf-c 4.10.1 does not see xarray's shape [])."""
    ours, theirs = tmp_path / "ours.file", tmp_path / "theirs.file"
    for module, path in ((nczarr, ours), (netCDF4, theirs)):
        with module.Dataset(f"{path.as_uri()}#mode=zarr,file", "w") as dataset:
            dataset.createVariable("s", "f8", ())[...] = 4.5
    for name in (".zarray", ".zattrs"):
        stored, expected = (json.loads((path / "s" / name).read_text()) for path in (ours, theirs))
        keys = ("shape", "chunks") if name == ".zarray" else ("_ARRAY_DIMENSIONS",)
        assert {k: stored[k] for k in keys} == {k: expected[k] for k in keys}
    with netCDF4.Dataset(f"{ours.as_uri()}#mode=zarr,file") as dataset:
        assert dataset["s"][:].tolist() == [4.5]
    with nczarr.Dataset(f"{ours.as_uri()}#mode=zarr,file") as dataset:
        assert dataset["s"].shape == () and dataset["s"][...] == 4.5
