"""Updating netCDF files (``'a'``, ``'r+'``) as netCDF4 does: the same changes made by nczarr
and by the real netCDF4 (netcdf-c 4.10.1) to copies of one file give files ncdump prints
alike; storage settings are kept; what cannot be written back is refused before anything
changes; a failure while writing leaves the original file as it was."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.errors import ContainerError, StoreLockedError
from nczarr.formats.session import Session

FORMATS = ["NETCDF4", "NETCDF4_CLASSIC", "NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA"]


def ncdump(*args: str | Path) -> str:
    return subprocess.run(["ncdump", *map(str, args)], check=True, capture_output=True, text=True).stdout


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make(path: Path, format: str) -> Path:
    """A file netCDF4 wrote: records, a packed variable, storage settings where it has them."""
    with netCDF4.Dataset(path, "w", format=format) as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 3)
        ds.title = "original"
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t[0:2] = [0, 1]
        netcdf4 = not format.startswith("NETCDF3")
        options: dict[str, Any] = {"compression": "zlib", "complevel": 4, "chunksizes": (1, 3)} if netcdf4 else {}
        v = ds.createVariable("v", "i2", ("time", "x"), fill_value=-1, **options)
        v.scale_factor = np.float32(0.5)
        v[0:2] = [[1, 2, 3], [4, 5, 6]]
        if netcdf4:
            ds.createVariable("big", ">i4", ("x",), endian="big", contiguous=True)[:] = [7, 8, 9]
    return path


def update(module: ModuleType, path: Path, mode: str) -> None:
    """The same changes, through ``module``'s Dataset: records, a new variable, attributes,
    and (netCDF-4) a group."""
    with module.Dataset(path, mode) as ds:
        ds["time"][2] = 2.0
        ds["v"][2] = [7, 8, 9]
        ds["v"].long_name = "values"
        ds.history = "appended"
        w = ds.createVariable("w", "f4", ("x",))
        w[:] = [0.5, 1.5, 2.5]
        if ds.data_model == "NETCDF4":
            g = ds.createGroup("extra")
            g.createDimension("n", 2)
            g.createVariable("s", str, ("n",))[:] = np.array(["a", "bc"], object)


@pytest.mark.parametrize("mode", ["a", "r+"])
@pytest.mark.parametrize("format", FORMATS)
def test_updates_as_netcdf4_does(tmp_path: Path, format: str, mode: str) -> None:
    ours = make(tmp_path / "ours.nc", format)
    theirs = tmp_path / "theirs.nc"
    shutil.copy(ours, theirs)
    update(nczarr, ours, mode)
    update(netCDF4, theirs, mode)
    assert ncdump(ours).replace("netcdf ours", "netcdf theirs") == ncdump(theirs)
    with netCDF4.Dataset(ours) as ds:
        assert ds.data_model == format
        assert ds["v"][:].tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]  # packed by scale_factor
    assert sorted(os.listdir(tmp_path)) == ["ours.nc", "theirs.nc"]  # no lock or temporary file left


def test_storage_settings_are_kept(tmp_path: Path) -> None:
    """Chunks, filters, fill values, byte order and contiguous layout of the variables the
    file had are those ``ncdump -s`` shows for netCDF4's own update."""
    ours = make(tmp_path / "ours.nc", "NETCDF4")
    theirs = tmp_path / "theirs.nc"
    shutil.copy(ours, theirs)
    update(nczarr, ours, "a")
    update(netCDF4, theirs, "a")

    def special(path: Path) -> list[str]:
        lines = ncdump("-s", "-h", path).splitlines()
        return [line for line in lines if "_NCProperties" not in line and not line.startswith("netcdf ")]

    assert special(ours) == special(theirs)
    with netCDF4.Dataset(ours) as ds:
        assert ds["v"].chunking() == [1, 3] and ds["v"].filters()["complevel"] == 4
        assert ds["big"].chunking() == "contiguous" and ds["big"].endian() == "big"


def test_netcdf4_updates_what_nczarr_wrote(tmp_path: Path) -> None:
    path = tmp_path / "mine.nc"
    with nczarr.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createVariable("time", "f8", ("time",))[0:2] = [0, 1]
    with netCDF4.Dataset(path, "a") as ds:
        ds["time"][2] = 2
        ds.createVariable("added", "i4", ("time",))[:] = [1, 2, 3]
    with nczarr.Dataset(path, "a") as ds:
        assert ds["added"][:].tolist() == [1, 2, 3]
        ds["added"][3] = 4
    with netCDF4.Dataset(path) as ds:
        assert ds["time"][:].tolist() == [0, 1, 2, None]
        assert ds["added"][:].tolist() == [1, 2, 3, 4]


def test_what_cannot_be_written_back_is_refused_before_anything_changes(tmp_path: Path) -> None:
    cdl = tmp_path / "vv.cdl"
    cdl.write_text("netcdf vv {\ntypes:\n int(*) v_t ;\n v_t(*) vv_t ;\nvariables:\n vv_t s ;\ndata:\n s = {{1, 2}, {3}} ;\n}\n")
    path = tmp_path / "vv.nc"
    subprocess.run(["ncgen", "-4", "-o", str(path), str(cdl)], check=True)
    before = digest(path)
    with pytest.raises(ContainerError, match=r"cannot update it \(open it with mode='r'\):\n  /vv_t: h5py cannot"):
        nczarr.Dataset(path, "a")
    assert digest(path) == before
    assert sorted(os.listdir(tmp_path)) == ["vv.cdl", "vv.nc"]
    with nczarr.Dataset(path) as ds:  # still readable
        assert [list(v) for v in ds["s"][...]] == [[1, 2], [3]]


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF3_CLASSIC"])
def test_a_failure_while_writing_leaves_the_original(tmp_path: Path, format: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make(tmp_path / "f.nc", format)
    before = digest(path)
    ds = nczarr.Dataset(path, "a")
    ds.createVariable("w", "f4", ("x",))[:] = [1, 2, 3]
    ds["v"][2] = [7, 8, 9]
    read: Callable[..., Any] = Session.read
    calls = []

    def broken(self: Session, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) > 1:  # the write has begun
            raise OSError("disk on fire")
        return read(self, *args, **kwargs)

    monkeypatch.setattr(Session, "read", broken)
    with pytest.raises(OSError, match="disk on fire"):
        ds.close()
    monkeypatch.undo()
    assert digest(path) == before
    assert sorted(os.listdir(tmp_path)) == ["f.nc"]  # the temporary file and the lock are gone
    with nczarr.Dataset(path, "a", lock_timeout=0) as again:  # the writer let go of the lock
        assert "w" not in again.variables


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    path = make(tmp_path / "f.nc", "NETCDF4")
    with nczarr.Dataset(path, "a") as writer:
        with pytest.raises(StoreLockedError, match="open for writing by another writer"):
            nczarr.Dataset(path, "a", lock_timeout=0)
        with pytest.raises(StoreLockedError):
            nczarr.Dataset(path, "w", lock_timeout=0)
        with nczarr.Dataset(path) as reader:  # readers take no lock
            assert reader.title == "original"
        writer.title = "changed"
    with netCDF4.Dataset(path) as ds:
        assert ds.title == "changed"


def test_a_missing_file_is_created(tmp_path: Path) -> None:
    """netCDF4: 'a' and 'r+' on a missing file create it."""
    for mode in ("a", "r+"):
        path = tmp_path / f"new_{mode}.nc"
        with nczarr.Dataset(path, mode) as ds:
            ds.createDimension("x", 1)
        with netCDF4.Dataset(path) as ds:
            assert ds.data_model == "NETCDF4" and list(ds.dimensions) == ["x"]
