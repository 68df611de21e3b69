"""Regenerate the sample stores in this folder (made here, from synthetic data).

    python samples/make_samples.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from nczarr.store import DirectoryStore
from nczarr.zarr import create_group

HERE = Path(__file__).resolve().parent


def make_ocean(path: Path) -> None:
    """A small sea-surface-temperature store: 4 days on a 2.5-degree grid, gzip-compressed."""
    shutil.rmtree(path, ignore_errors=True)
    root = create_group(DirectoryStore(path), attributes={"title": "synthetic sea surface temperature", "Conventions": "CF-1.8"})
    lat = np.arange(-88.75, 90, 2.5, dtype="f4")
    lon = np.arange(1.25, 360, 2.5, dtype="f4")
    days = np.arange(4, dtype="f8")
    for name, values, attrs in (
        ("time", days, {"units": "days since 2026-01-01", "calendar": "standard"}),
        ("lat", lat, {"units": "degrees_north"}),
        ("lon", lon, {"units": "degrees_east"}),
    ):
        coord = root.create_array(name, shape=values.shape, dtype=values.dtype, dimension_names=[name], attributes=attrs)
        coord[:] = values
    sst = root.create_array(
        "sst",
        shape=(len(days), len(lat), len(lon)),
        dtype="f4",
        chunks=(1, len(lat), len(lon)),
        fill_value=np.nan,
        dimension_names=["time", "lat", "lon"],
        compressors=[{"name": "gzip", "configuration": {"level": 5}}],
        attributes={"units": "degC", "long_name": "sea surface temperature"},
    )
    field = 28 * np.cos(np.deg2rad(lat))[:, None] - 1.8 + 0.5 * np.sin(np.deg2rad(lon))[None, :]
    sst[:] = np.stack([field + 0.1 * d for d in days]).astype("f4")
    sst.flush()
    analysis = root.create_group("analysis", attributes={"method": "zonal mean"})
    zonal = analysis.create_array("zonal_sst", shape=(len(days), len(lat)), dtype="f4", dimension_names=["time", "lat"])
    zonal[:] = sst[:].mean(axis=2)


if __name__ == "__main__":
    make_ocean(HERE / "ocean.zarr")
