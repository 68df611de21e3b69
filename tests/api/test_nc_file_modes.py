"""netCDF files nczarr writes get the permissions netCDF4's get: a new file the umask's
(not a temporary file's 0600), an updated file the ones it had; a bad file image is named
by what the user gave, not by nczarr's temporary copy of it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import netCDF4
import pytest

import nczarr

FORMATS = ("NETCDF4", "NETCDF4_CLASSIC", "NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("format", FORMATS)
def test_a_new_file_gets_the_permissions_netcdf4_gives_it(format: str, tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.nc", tmp_path / "theirs.nc"
    with nczarr.Dataset(ours, "w", format=format) as ds:
        ds.title = "x"
    with netCDF4.Dataset(theirs, "w", format=format) as ds:
        ds.title = "x"
    assert _mode(ours) == _mode(theirs)


@pytest.mark.parametrize("format", FORMATS)
def test_an_update_keeps_the_files_permissions(format: str, tmp_path: Path) -> None:
    path = tmp_path / "kept.nc"
    with netCDF4.Dataset(path, "w", format=format) as ds:
        ds.title = "x"
    os.chmod(path, 0o640)
    with nczarr.Dataset(path, "a") as ds:
        ds.note = "updated"
    assert _mode(path) == 0o640
    with netCDF4.Dataset(path) as ds:
        assert ds.note == "updated"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.nc"]


def test_a_bad_image_is_named_as_given() -> None:
    with pytest.raises(nczarr.NCZarrError) as caught:
        nczarr.Dataset("given.nc", memory=b"CDF\x01" + bytes(10))
    assert "'given.nc'" in str(caught.value) and "nczarr-image" not in str(caught.value)
