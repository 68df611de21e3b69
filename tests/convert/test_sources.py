"""Opening containers as DatasetSources: a Zarr dataset through its format session (raw
values, never the API's handles), errors where there is no dataset, netcdf-c URLs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import nczarr
from nczarr.convert.sources import file_kind, open_source, zarr_source
from nczarr.errors import DatasetNotFoundError
from nczarr.store import MemoryStore


class RecordingStore(MemoryStore):
    """A memory store that records being closed."""

    closed = False

    def close(self) -> None:
        self.closed = True
        super().close()


def make(location: object) -> None:
    with nczarr.Dataset(location, "w") as ds:
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "i2", ("x",))
        v.scale_factor = 0.5
        v[:] = [1.0, 2.0, 3.0]


def test_a_zarr_source_reads_raw_values_and_closes_its_store() -> None:
    store = RecordingStore()
    make(store)
    source = zarr_source(store)
    variable = source.dataset.variables[0]
    assert source.data_model == "NETCDF4"
    assert source.read(variable, (slice(0, 3),)).tolist() == [2, 4, 6]  # unscaled
    source.close()
    assert store.closed


def test_where_there_is_no_dataset(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="No such file or directory: '.*missing'"):
        zarr_source(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetNotFoundError, match="No such file or directory"):
        zarr_source(tmp_path / "empty")


def test_netcdf_c_urls_and_zip_archives(tmp_path: Path) -> None:
    """netcdf-c's ``file://...#mode=nczarr,zip`` names a zip archive by its URL (it was
    taken for a relative path before), whatever the archive's name."""
    make(tmp_path / "d.zip")
    (tmp_path / "d.zip").rename(tmp_path / "archive")
    source = open_source(f"file://{tmp_path / 'archive'}#mode=nczarr,zip")
    try:
        assert np.array_equal(source.read(source.dataset.variables[0], (slice(1, 3),)), [4, 6])
    finally:
        source.close()
    assert file_kind(tmp_path / "archive") is None
