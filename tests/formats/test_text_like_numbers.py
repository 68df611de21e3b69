"""Text attributes that read like JSON's special numbers ("NaN", "Infinity") stay text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nczarr

TEXTS = ["NaN", "Infinity", "-Infinity"]


@pytest.mark.parametrize("format", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2", "NETCDF4"])
def test_string_and_char_attributes_named_like_special_floats(tmp_path: Path, format: str) -> None:
    path = tmp_path / ("t.nc" if format == "NETCDF4" else "t.zarr")
    with nczarr.Dataset(path, "w", format=format) as ds:
        ds.setncattr_string("one", "NaN")
        ds.setncattr_string("many", TEXTS)
        ds.char = "Infinity"
        ds.number = float("nan")
        ds.createVariable("v", "f4", ()).setncattr_string("s", "-Infinity")
    with nczarr.Dataset(path) as ds:
        assert ds.getncattr("one") == "NaN"
        assert ds.getncattr("many") == TEXTS
        assert ds.getncattr("char") == "Infinity"
        assert ds.getncattr("number") != ds.getncattr("number")  # NaN
        assert ds["v"].getncattr("s") == "-Infinity"


def test_a_string_attribute_written_as_a_bare_token_reads_as_its_text(tmp_path: Path) -> None:
    """As nczarr's v3 writer stored "NaN" before it was fixed: the dataset still opens."""
    path = tmp_path / "t.zarr"
    with nczarr.Dataset(path, "w") as ds:
        ds.setncattr_string("one", "x")
        ds.setncattr_string("many", ["x", "y"])
    document = path / "zarr.json"
    text = document.read_text().replace('"one": "x"', '"one": NaN').replace('"many": ["x", "y"]', '"many": [Infinity, "y"]')
    document.write_text(text)
    assert json.loads(text)["attributes"]["many"][0] == float("inf")
    with nczarr.Dataset(path) as ds:
        assert ds.getncattr("one") == "NaN"
        assert ds.getncattr("many") == ["Infinity", "y"]
