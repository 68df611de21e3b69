"""NCZARR and ZARR against zarr-python 3 and xarray, both directions.

nczarr writes one dataset (coordinates, groups, attributes of several types, fill values,
compression, strings, chars, a scalar, a big-endian variable) in each convention; zarr-python
opens every array with equal values, ``xarray.open_zarr`` finds the dimension names,
coordinates and attributes, ``xarray.open_datatree`` the groups. What xarray writes with
``to_zarr`` (v2 and v3) nczarr reads with the right dimensions.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr
import zarr

from nczarr.formats import convention, detect
from nczarr.formats.session import Session
from nczarr.model import AtomicType, resolve_dimension
from nczarr.store import DirectoryStore
from nczarr.syntax import parse
from nczarr.values.storage import VariableStorage

MODEL = r"""
dataset zarr 3 enhanced {
    dimension time = unlimited(3)
    dimension lat = 2
    variable double time(time) {
        attribute char units = "days since 2000-01-01"
    }
    variable float lat(lat)
    variable float tas(time, lat) {
        attribute float _FillValue = -999.0
        attribute char long_name = "air temperature"
        attribute double valid_range = 150.0, 350.0
    }
    variable double nanfill(lat) {
        attribute double _FillValue = nan
    }
    variable int big(lat)
    variable string names(lat)
    variable char code(time)
    variable short scalar
    attribute char title = "ünïcödé ☃"
    attribute int count = 3
    attribute double ratio = 2.5
    group forecast {
        dimension step = 2
        variable int steps(step)
        variable float spread(step, lat) {
            attribute char units = "K"
        }
        group deep {
            variable double level(step)
        }
    }
}
"""

STORAGE = {
    "/tas": VariableStorage(compression="zlib", shuffle=True),
    "/big": VariableStorage(endian="big", compression="zstd"),
    "/forecast/spread": VariableStorage(compression="blosc_lz4", fletcher32=True),
}


def data_of(variable: Any) -> np.ndarray:
    shape = tuple(resolve_dimension(variable.group, d).size for d in variable.dimensions)
    count = math.prod(shape)
    if variable.type is AtomicType.STRING:
        return np.array(["alpha", "β"][:count], dtype=object).reshape(shape)
    if variable.type is AtomicType.CHAR:
        return np.array([b"x", b"y", b"z"][:count], "S1").reshape(shape)
    dtype = {"double": "f8", "float": "f4", "int": "i4", "short": "i2"}[variable.type.value]
    return (np.arange(count) + 1.5).astype(dtype).reshape(shape)


def _variables(tree: Any):
    for group in tree.walk():
        yield from group.variables


def write(path: Path, name: str) -> None:
    tree = parse(MODEL)
    session = Session.create(DirectoryStore(path), tree, convention(name), STORAGE)
    for variable in _variables(tree):
        data = data_of(variable)
        if variable.type is AtomicType.CHAR and name == "NCZARR":
            data = data.view("u1")  # NCZARR stores char as uint8
        session.array(variable)[...] = data
    session.close()


@pytest.fixture(scope="module", params=["NCZARR", "ZARR"])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    path = tmp_path_factory.mktemp(request.param) / "data.zarr"
    write(path, request.param)
    return request.param, path


def test_zarr_python_opens_every_array(written: tuple[str, Path]) -> None:
    name, path = written
    root = zarr.open_group(path, mode="r")
    assert root.metadata.zarr_format == 3
    for variable in _variables(parse(MODEL)):
        array = root[variable.fqn.strip("/")]
        expected = data_of(variable)
        got = array[...]
        if variable.type is AtomicType.CHAR:
            got = got.astype("u1").view("S1") if name == "NCZARR" else got
        if variable.type is AtomicType.STRING:
            got = np.asarray(got, dtype=object)
        np.testing.assert_array_equal(got, expected, err_msg=variable.fqn)
        dims = [d.split("/")[-1] for d in variable.dimensions]
        assert list(array.metadata.dimension_names or []) == dims
    assert root["big"].metadata.codecs[0].endian.value == "big"
    codec_names = [type(codec).__name__ for codec in root["tas"].metadata.codecs]
    assert codec_names == ["BytesCodec", "Shuffle", "GzipCodec"]


def test_xarray_open_zarr(written: tuple[str, Path]) -> None:
    path = written[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ds = xr.open_zarr(path, consolidated=False)
    assert dict(ds.sizes) == {"time": 3, "lat": 2}
    assert set(ds.coords) == {"time", "lat"}
    assert ds["tas"].dims == ("time", "lat")
    assert ds["scalar"].dims == ()
    assert ds.attrs == {"title": "ünïcödé ☃", "count": 3, "ratio": 2.5}
    tas = ds["tas"]
    assert tas.attrs["long_name"] == "air temperature"
    assert list(tas.attrs["valid_range"]) == [150.0, 350.0]
    assert tas.encoding["_FillValue"] == -999.0
    np.testing.assert_array_equal(tas.values, data_of(parse(MODEL).find_variable("tas")))
    assert math.isnan(ds["nanfill"].encoding["_FillValue"])
    assert list(ds["names"].values) == ["alpha", "β"]
    # xarray decodes the time axis with its units
    assert ds["time"].values[0] == np.datetime64("2000-01-02T12:00")


def test_xarray_open_datatree(written: tuple[str, Path]) -> None:
    path = written[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        tree = xr.open_datatree(path, engine="zarr", consolidated=False)
    assert sorted(tree.groups) == ["/", "/forecast", "/forecast/deep"]
    spread = tree["forecast"]["spread"]
    assert spread.dims == ("step", "lat") and spread.attrs["units"] == "K"
    assert tree["forecast/deep"]["level"].dims == ("step",)
    assert "steps" in tree["forecast"].data_vars


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_nczarr_reads_xarray(tmp_path: Path, zarr_format: int) -> None:
    ds = xr.Dataset(
        {
            "t": (("time", "lat"), np.arange(6.0).reshape(3, 2), {"units": "K", "vr": [1.0, 2.0]}),
            "s": ("lat", np.array(["a", "bc"], dtype=object)),
            "i": ((), np.int16(3)),
            "n": ("lat", np.array([1, 2], "i4"), {"flag": 7}),
        },
        coords={"lat": [10.5, 20.5], "time": [1, 2, 3]},
        attrs={"title": "x", "n": 3, "f": 2.5},
    )
    ds.to_zarr(tmp_path / "x.zarr", zarr_format=zarr_format, mode="w")
    xr.Dataset({"u": ("lat", [1.0, 2.0])}).to_zarr(tmp_path / "x.zarr", group="sub", zarr_format=zarr_format)
    store = DirectoryStore(tmp_path / "x.zarr")
    found = detect(store)
    assert found.name == ("ZARR" if zarr_format == 3 else "ZARR_V2")
    session = Session.open(store, found, read_only=True)
    tree = session.dataset
    assert [(d.name, d.size) for d in tree.dimensions] == [("lat", 2), ("time", 3)]
    assert [v.name for v in tree.variables] == ["i", "lat", "n", "s", "t", "time"]
    t = tree.find_variable("t")
    assert t.dimensions == ["time", "lat"] and t.type is AtomicType.DOUBLE
    assert tree.find_variable("i").dimensions == [] and tree.find_variable("i").type is AtomicType.SHORT
    assert tree.find_variable("s").type is AtomicType.STRING
    assert t.find_attribute("units").values == "K"
    assert t.find_attribute("vr").values == [1.0, 2.0]
    assert tree.find_variable("n").find_attribute("flag").type is AtomicType.INT
    assert [(a.name, a.type, a.values) for a in tree.attributes] == [
        ("title", AtomicType.CHAR, "x"),
        ("n", AtomicType.INT, [3]),
        ("f", AtomicType.DOUBLE, [2.5]),
    ]
    sub = tree.find_group("sub")
    assert sub.find_variable("u").dimensions == ["lat"]  # the root's lat: same length
    np.testing.assert_array_equal(session.array(t)[...], ds["t"].values)
