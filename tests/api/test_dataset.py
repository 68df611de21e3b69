"""Opening, creating and closing datasets: paths, URLs, modes, formats, diskless datasets,
pickling, threads; and that appending never loses what is stored."""

from __future__ import annotations

import pickle
import threading
import zipfile
from pathlib import Path

import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.errors import NCZarrError


def make(path: object, fmt: str = "NETCDF4", **kwargs: object) -> None:
    with nczarr.Dataset(path, "w", format=fmt, **kwargs) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 4)
        v = ds.createVariable("v", "f4", ("t", "x"))
        v.units = "K"
        v[0:2] = np.arange(8, dtype="f4").reshape(2, 4)
        ds.title = "made"


def test_import_nczarr_as_netcdf4_names() -> None:
    for name in ("Dataset", "Group", "Dimension", "Variable", "CompoundType", "VLType", "EnumType",
                 "MFDataset", "MFTime", "num2date", "date2num", "date2index", "stringtochar",
                 "chartostring", "stringtoarr", "default_fillvals", "getlibversion",
                 "get_chunk_cache", "set_chunk_cache", "get_alignment", "set_alignment",
                 "rc_get", "rc_set", "is_native_little", "is_native_big"):
        assert getattr(nczarr, name) is not None, name
    assert nczarr.num2date is netCDF4.num2date
    assert nczarr.default_fillvals == netCDF4.default_fillvals
    assert nczarr.__has_cdf5_format__ == 0 and nczarr.__has_rename_grp__ == 1
    assert nczarr.getlibversion().split()[0] == nczarr.__netcdf4libversion__
    nczarr.set_chunk_cache(1000, 10, 0.5)
    assert nczarr.get_chunk_cache() == (1000, 10, 0.5)
    nczarr.set_alignment(1024, 4096)
    assert nczarr.get_alignment() == (1024, 4096)
    nczarr.rc_set("HTTP.SSL.CAINFO", "/x")
    assert nczarr.rc_get("HTTP.SSL.CAINFO") == "/x" and nczarr.rc_get("nope") is None
    assert nczarr.utils._out_array_shape is not None


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2", "NETCDF4", "NETCDF4_CLASSIC"])
def test_create_and_reopen_each_format(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "d.zarr"
    make(path, fmt)
    with nczarr.Dataset(path) as ds:
        assert ds.title == "made"
        np.testing.assert_array_equal(ds["v"][:], np.arange(8, dtype="f4").reshape(2, 4))
        # pure Zarr has no unlimited dimensions: they read back fixed at their length
        assert ds.dimensions["t"].isunlimited() is not fmt.startswith("ZARR")
        assert len(ds.dimensions["t"]) == 2
        assert ds.data_model == ("NETCDF4_CLASSIC" if fmt == "NETCDF4_CLASSIC" else "NETCDF4")
        assert ds.disk_format == ("ZARR" if fmt.startswith("ZARR") else "NCZARR")


def test_append_mode_keeps_what_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "d.zarr"
    make(path)
    for mode in ("a", "r+"):
        with nczarr.Dataset(path, mode) as ds:
            v = ds["v"]
            v[len(v)] = np.full(4, 9, "f4")
    with nczarr.Dataset(path) as ds:
        data = ds["v"][:]
        assert data.shape == (4, 4) and ds.title == "made" and ds["v"].units == "K"
        np.testing.assert_array_equal(data[:2].ravel(), np.arange(8))
        assert (data[2:] == 9).all()


def test_append_mode_creates_a_missing_dataset(tmp_path: Path) -> None:
    for mode in ("a", "r+"):
        path = tmp_path / f"new-{mode.replace('+', 'p')}.zarr"
        with nczarr.Dataset(path, mode) as ds:
            ds.createDimension("x", 2)
        with nczarr.Dataset(path) as ds:
            assert list(ds.dimensions) == ["x"]


@pytest.mark.parametrize("fmt, key", [("NCZARR", "zarr.json"), ("NCZARR_V2", ".zmetadata")])
def test_opening_parses_the_consolidated_metadata_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, key: str
) -> None:
    """The root document holding the metadata of the whole tree is parsed once, for both
    detecting the format and reading the dataset."""
    import json

    with nczarr.Dataset(tmp_path / "d.zarr", "w", format=fmt) as ds:
        ds.createDimension("x", 2)
        ds.createVariable("v", "i4", ("x",))
    consolidated = (tmp_path / "d.zarr" / key).read_bytes()
    parses = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda data, **kw: parses.append(data == consolidated) or loads(data, **kw))
    with nczarr.Dataset(tmp_path / "d.zarr") as ds:
        assert list(ds.variables) == ["v"]
    assert parses.count(True) == 1


def test_missing_dataset_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="missing.zarr") as info:
        nczarr.Dataset(tmp_path / "missing.zarr")
    assert isinstance(info.value, NCZarrError)


def test_noclobber_and_x_refuse_an_existing_dataset(tmp_path: Path) -> None:
    path = tmp_path / "d.zarr"
    make(path)
    for kwargs in ({"mode": "x"}, {"mode": "w", "clobber": False}):
        with pytest.raises(OSError, match="NC_NOCLOBBER") as info:
            nczarr.Dataset(path, **kwargs)
        assert info.value.errno == -35
    with nczarr.Dataset(path) as ds:
        assert ds.title == "made"


def test_w_refuses_to_wipe_a_directory_that_is_not_a_dataset(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("precious")
    with pytest.raises(OSError, match="refusing to replace"):
        nczarr.Dataset(tmp_path / "notes", "w")
    assert (tmp_path / "notes" / "keep.txt").read_text() == "precious"


def test_bad_mode_and_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mode must be 'w', 'x', 'r', 'a' or 'r\\+', got 'z'"):
        nczarr.Dataset(tmp_path / "d.zarr", "z")
    with pytest.raises(ValueError, match="unrecognized format requested"):
        nczarr.Dataset(tmp_path / "d.zarr", "w", format="NETCDF5")


def test_netcdf_c_urls(tmp_path: Path) -> None:
    """Scripts written for netcdf-c's NCZarr keep working: `#mode=nczarr,file` writes NCZarr v2,
    which the netCDF4 wheel reads, and nczarr reads what netCDF4 writes at such a URL."""
    path = tmp_path / "c.zarr"
    make(f"file://{path}#mode=nczarr,file")
    assert (path / ".zgroup").exists()
    with netCDF4.Dataset(f"file://{path}#mode=nczarr,file") as ds:
        assert ds.title == "made"
        np.testing.assert_array_equal(ds["v"][:2], np.arange(8, dtype="f4").reshape(2, 4))
    other = tmp_path / "n.zarr"
    with netCDF4.Dataset(f"file://{other}#mode=nczarr,file", "w") as ds:
        ds.createDimension("x", 3)
        ds.createVariable("w", "i2", ("x",))[:] = [1, 2, 3]
    with nczarr.Dataset(f"file://{other}#mode=nczarr,file") as ds:
        assert ds["w"][:].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="unknown mode word"):
        nczarr.Dataset(f"file://{other}#mode=nczarr,floppy")


def test_zip_store(tmp_path: Path) -> None:
    path = tmp_path / "d.zip"
    make(path)
    assert zipfile.is_zipfile(path)
    with nczarr.Dataset(path) as ds:
        assert ds["v"].shape == (2, 4)


def test_fsspec_memory_url() -> None:
    make("memory://nczarr-api-test/d.zarr")
    with nczarr.Dataset("memory://nczarr-api-test/d.zarr") as ds:
        assert ds.title == "made" and ds["v"][1, 3] == 7


def test_diskless_with_and_without_persist(tmp_path: Path) -> None:
    path = tmp_path / "d.zarr"
    make(path, diskless=True)
    assert not path.exists()
    make(path, diskless=True, persist=True)
    with nczarr.Dataset(path) as ds:
        assert ds["v"].shape == (2, 4)


def test_closed_dataset_refuses_use(tmp_path: Path) -> None:
    make(tmp_path / "d.zarr")
    ds = nczarr.Dataset(tmp_path / "d.zarr")
    v = ds["v"]
    ds.close()
    assert not ds.isopen()
    with pytest.raises(RuntimeError, match="Not a valid ID"):
        ds.close()
    with pytest.raises(RuntimeError, match="Not a valid ID"):
        v[:]


def test_read_only_refuses_writes(tmp_path: Path) -> None:
    make(tmp_path / "d.zarr")
    with nczarr.Dataset(tmp_path / "d.zarr") as ds:
        with pytest.raises(RuntimeError, match="read only"):
            ds["v"][0] = 1
        with pytest.raises(RuntimeError):
            ds.renameVariable("v", "w")
        with pytest.raises(RuntimeError):
            ds.createDimension("y", 2)
        with pytest.raises(AttributeError):
            ds.title = "changed"
        with pytest.raises(RuntimeError):
            del ds["v"].units


def test_read_only_dataset_and_variable_pickle_by_reference(tmp_path: Path) -> None:
    make(tmp_path / "d.zarr")
    with nczarr.Dataset(tmp_path / "d.zarr") as ds:
        again = pickle.loads(pickle.dumps(ds))
        assert again.title == "made" and again is not ds
        v = pickle.loads(pickle.dumps(ds["v"]))
        np.testing.assert_array_equal(v[:], ds["v"][:])
        again.close()
        v.group().close()
    with nczarr.Dataset(tmp_path / "d.zarr", "a") as ds:
        with pytest.raises(NotImplementedError):
            pickle.dumps(ds)
        with pytest.raises(NotImplementedError):
            pickle.dumps(ds["v"])


def test_concurrent_reads_agree(tmp_path: Path) -> None:
    path = tmp_path / "d.zarr"
    data = np.random.default_rng(0).random((40, 30, 20)).astype("f4")
    with nczarr.Dataset(path, "w") as ds:
        for name, size in zip("tyx", data.shape):
            ds.createDimension(name, size)
        ds.createVariable("v", "f4", ("t", "y", "x"), chunksizes=(4, 7, 5), zlib=True)[:] = data
    errors: list[BaseException] = []
    with nczarr.Dataset(path) as ds:
        v = ds["v"]

        def work(seed: int) -> None:
            rng = np.random.default_rng(seed)
            try:
                for _ in range(30):
                    i, j = sorted(rng.integers(0, 40, 2))
                    k = rng.integers(0, 30)
                    np.testing.assert_array_equal(v[i : j + 1, k, ::3], data[i : j + 1, k, ::3])
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors[0]


def test_iteration_and_membership_are_type_errors(tmp_path: Path) -> None:
    make(tmp_path / "d.zarr")
    with nczarr.Dataset(tmp_path / "d.zarr") as ds:
        with pytest.raises(TypeError, match="not iterable"):
            iter(ds)
        with pytest.raises(TypeError, match="membership"):
            "v" in ds  # noqa: B015
        assert ds.filepath() == str(tmp_path / "d.zarr")


def test_classic_model_refusals(tmp_path: Path) -> None:
    with nczarr.Dataset(tmp_path / "c.zarr", "w", format="NETCDF4_CLASSIC") as ds:
        ds.createDimension("t", None)
        with pytest.raises(RuntimeError, match="strict nc3"):
            ds.createGroup("g")
        with pytest.raises(RuntimeError):
            ds.createVariable("u", "u8", ("t",))
        with pytest.raises(ValueError, match="Variable length strings"):
            ds.createVariable("s", str, ("t",))
        with pytest.raises(RuntimeError, match="NC_UNLIMITED size already in use"):
            ds.createDimension("t2", None)
        with pytest.raises(OSError, match="NC_STRING"):
            ds.setncattr_string("s", "x")
        ds.big = 2**40  # wraps silently to int32, as netCDF4 does
        assert ds.big == 0
