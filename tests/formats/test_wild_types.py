"""Zarr data types netCDF lacks, and attributes of every JSON shape, in stores zarr-python 3
and xarray wrote: mapped where a faithful mapping exists, one array left out (with a warning
naming it) where none does, never the whole store refused."""

from __future__ import annotations

import logging
import math
import warnings
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import xarray as xr
import zarr

from nczarr import Dataset
from nczarr.cli import main
from nczarr.formats.attributes import infer_attribute
from nczarr.model import AtomicType as T

NAT = -(2**63)
#: Every JSON shape an attribute may have, with what nczarr reads (type, values).
ATTRIBUTES: dict[str, tuple[object, T, object]] = {
    "mixed": ([1, "a", 2.5], T.CHAR, '[1,"a",2.5]'),
    "str_first": (["a", 1], T.CHAR, '["a",1]'),
    "nested": ({"a": 1, "b": [1, 2]}, T.CHAR, '{"a": 1, "b": [1,2]}'),
    "lists": ([[1, 2], [3]], T.CHAR, "[[1,2],[3]]"),
    "null": (None, T.CHAR, "null"),
    "nulls": ([None, 1], T.CHAR, "[null,1]"),
    "flag": (True, T.UBYTE, [1]),
    "flags": ([True, False], T.UBYTE, [1, 0]),
    "empty": ([], T.CHAR, "[]"),
    "empty_object": ({}, T.CHAR, "{}"),
    "too_big": (2**64, T.CHAR, "18446744073709551616"),
    "wide": ([1, 3_000_000_000], T.UINT, [1, 3_000_000_000]),
    "first_decides": ([1, 2.5], T.INT, [1, 2]),
}
#: zarr-python data types netCDF lacks, the values written and the netCDF type read.
ARRAYS: dict[str, tuple[str, list[object]]] = {
    "half": ("float16", [1.5, math.nan, 65504.0]),
    "c8": ("complex64", [1 + 2j, 3 - 4j, 0j]),
    "c16": ("complex128", [1 + 2j, 3 - 4j, 0j]),
    "when": ("datetime64[s]", ["2020-01-01", "NaT", "2021-06-01T12:00"]),
    "when_ns": ("datetime64[ns]", ["2020-01-01", "NaT", "1969-12-31"]),
    "lag": ("timedelta64[ms]", [1, 2000, "NaT"]),
    "flag": ("bool", [True, False, True]),
    "text": ("<U5", ["ab", "héllo", ""]),
    "bytes": ("|S5", [b"ab", b"hello", b""]),
    "raw": ("|V4", [b"abcd", b"efgh", b"ijkl"]),
    "record": ("structured", [(1.5, 2), (3.5, 4), (0.0, 0)]),
}
LEFT_OUT = {"raw", "record"}


def _dtype(spec: str) -> np.dtype:
    return np.dtype([("x", "<f4"), ("y", "<i2")]) if spec == "structured" else np.dtype(spec)


def _write_store(path: Path, zarr_format: int, compressed: bool = True) -> Path:
    """A store zarr-python writes: one array per data type, attributes of every shape."""
    warnings.simplefilter("ignore")  # zarr-python warns that v2 and some v3 types are unstable
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    root.attrs.update({name: data for name, (data, _, _) in ATTRIBUTES.items()})
    named = {"dimension_names": ["x"]} if zarr_format == 3 else {"attributes": {"_ARRAY_DIMENSIONS": ["x"]}}
    extra = {} if compressed else {"compressors": None}
    root.create_array("plain", shape=(3,), dtype="i4", **named, **extra)[:] = [1, 2, 3]
    for name, (spec, values) in ARRAYS.items():
        dtype = _dtype(spec)
        array = root.create_array(name, shape=(3,), dtype=dtype, **named, **extra)
        array[:] = np.array(values, dtype)
    return path


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return _write_store(tmp_path / "wild.zarr", request.param)


def _check_values(ds: Dataset) -> None:
    """What nczarr shows of the arrays :func:`_write_store` wrote (also after a copy)."""
    assert sorted(ds.variables) == sorted(["plain", *(set(ARRAYS) - LEFT_OUT)])
    half = ds["half"]
    assert half.dtype == np.float32
    np.testing.assert_array_equal(half[:].filled(np.nan), np.array([1.5, np.nan, 65504.0], "f4"))
    for name, part in (("c8", "f4"), ("c16", "f8")):
        records = ds[name][:]
        assert records.dtype.names == ("r", "i") and records.dtype["r"] == np.dtype(part)
        np.testing.assert_array_equal(records["r"] + 1j * records["i"], ARRAYS[name][1])
    assert ds.cmptypes["_PFNC_FLOAT_COMPLEX_TYPE"].dtype.itemsize == 8
    when = ds["when"]
    assert (when.dtype, when.units, when.calendar) == (np.int64, "seconds since 1970-01-01", "proleptic_gregorian")
    assert when[:].mask.tolist() == [False, True, False]
    assert when[:][0] == np.datetime64("2020-01-01", "s").astype(np.int64)
    assert ds["when_ns"].units == "nanoseconds since 1970-01-01"
    assert ds["when_ns"][:][2] == -86_400 * 10**9  # before the epoch
    lag = ds["lag"]
    assert (lag.units, lag._FillValue, lag[:].mask.tolist()) == ("milliseconds", NAT, [False, False, True])
    assert ds["flag"].dtype == np.uint8 and ds["flag"][:].data.tolist() == [1, 0, 1]  # v2: fill_value 0 is _FillValue
    assert ds["text"][:].tolist() == ["ab", "héllo", ""]
    assert ds["bytes"][:].tolist() == ["ab", "hello", ""]
    assert ds["plain"][:].tolist() == [1, 2, 3]


def test_mapped_types_read_and_the_rest_is_left_out_with_a_warning(store: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="nczarr"), Dataset(str(store)) as ds:
        _check_values(ds)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for name in LEFT_OUT:
        assert sum(message.startswith(f"{name}/") and "left out" in message for message in warned) == 1
    assert any(message.startswith("half/") and "float16 read as float" in message for message in warned)
    assert any("_PFNC_FLOAT_COMPLEX_TYPE" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)


def test_attributes_of_every_json_shape(store: Path) -> None:
    with Dataset(str(store)) as ds:
        for name, (_, type, values) in ATTRIBUTES.items():
            found = ds._node.find_attribute(name)
            assert found is not None, name
            assert (found.type, found.values) == (type, values), name


@pytest.mark.parametrize(
    ("data", "type", "values"),
    [
        *ATTRIBUTES.values(),
        ([1, -3_000_000_000], T.INT64, [1, -3_000_000_000]),
        ([1, 1e300], T.CHAR, "[1,1e+300]"),
        ([True, 300], T.CHAR, "[true,300]"),
    ],
)
def test_inference_falls_back_to_json_text(data: object, type: T, values: object) -> None:
    assert infer_attribute(data) == (type, values)  # type: ignore[arg-type]


def test_cli_dump_info_copy(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert main(["dump", str(store)]) == 0
    out = capsys.readouterr().out
    assert "_PFNC_DOUBLE_COMPLEX_TYPE c16(x)" in out and 'when:units = "seconds since 1970-01-01"' in out
    assert ':mixed = "[1,\\"a\\",2.5]"' in out
    left_out = [r.getMessage().split("/")[0] for r in caplog.records if "left out" in r.getMessage()]
    assert sorted(left_out) == ["raw", "record"]  # one line each
    assert main(["info", str(store)]) == 0
    assert "Traceback" not in capsys.readouterr().err
    copied = tmp_path / "copy.zarr"
    assert main(["copy", str(store), str(copied)]) == 0
    with Dataset(str(copied)) as ds:
        _check_values(ds)
        assert ds.data_model == "NETCDF4"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_copy_to_netcdf4_keeps_the_mapped_types(tmp_path: Path, zarr_format: int) -> None:
    """Uncompressed: HDF5 here has no blosc or zstd filter."""
    source = _write_store(tmp_path / "plain.zarr", zarr_format, compressed=False)
    target = tmp_path / "copy.nc"
    assert main(["copy", str(source), str(target)]) == 0
    with netCDF4.Dataset(target, auto_complex=True) as nc:  # netCDF4-python's complex convention
        np.testing.assert_array_equal(nc["c8"][:], ARRAYS["c8"][1])
        assert nc["half"].dtype == np.float32 and nc["when"].units == "seconds since 1970-01-01"
    with xr.open_dataset(target, engine="netcdf4") as xds:  # CF decoding gives the times back
        expected = np.array(ARRAYS["when"][1], "datetime64[s]").astype("datetime64[ns]")
        np.testing.assert_array_equal(xds["when"].values, expected)


def test_xarray_written_types(tmp_path: Path) -> None:
    """xarray encodes times itself; float16, complex and bool arrays reach Zarr as they are."""
    path = tmp_path / "x.zarr"
    xds = xr.Dataset(
        {
            "half": ("x", np.array([0.5, 1.5], "f2")),
            "wave": ("x", np.array([1j, 2], "c16")),
            "ok": ("x", np.array([True, False])),
            "t": ("x", np.array(["2020-01-01", "2020-01-02"], "datetime64[ns]")),
        },
        attrs={"history": [1, "a"]},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xds.to_zarr(path, zarr_format=3, consolidated=False)
    with Dataset(str(path)) as ds:
        assert ds["half"][:].tolist() == [0.5, 1.5]
        assert ds["wave"][:]["i"].tolist() == [1.0, 0.0]
        assert ds["ok"][:].tolist() == [1, 0]
        assert ds["t"].units.startswith("days since 2020-01-01")
        assert ds.history == '[1,"a"]'


def test_append_keeps_the_stored_data_types(store: Path) -> None:
    """A change made through nczarr writes the mapped arrays back in their own data types,
    without the attributes the mapping added, and keeps the arrays it left out visible."""
    with Dataset(str(store), "a") as ds:
        ds["half"].note = "x"
        ds["half"][0] = 2.25
        ds["when"][0] = 0
        ds["c8"][1] = np.array((7, 8), ds["c8"].dtype)
    warnings.simplefilter("ignore")
    group = zarr.open_group(store, mode="r")
    assert sorted(group.array_keys()) == sorted(["plain", *ARRAYS])
    assert group["half"].dtype == np.float16 and group["half"][0] == 2.25
    assert group["when"][0] == np.datetime64(0, "s") and "units" not in group["when"].attrs
    assert group["c8"][1] == 7 + 8j
    assert group["half"].attrs["note"] == "x"


def test_big_endian_v2_arrays(tmp_path: Path) -> None:
    """A v2 typestr keeps its byte order: complex records are swapped both ways."""
    warnings.simplefilter("ignore")
    root = zarr.open_group(tmp_path / "be.zarr", mode="w", zarr_format=2)
    dims = {"_ARRAY_DIMENSIONS": ["x"]}
    root.create_array("c", shape=(2,), dtype=">c8", attributes=dims)[:] = [1 + 2j, 3 + 4j]
    root.create_array("h", shape=(2,), dtype=">f2", attributes=dims)[:] = [1.5, 2]
    root.create_array("t", shape=(2,), dtype=">M8[s]", attributes=dims)[:] = [1, 2]
    with Dataset(str(tmp_path / "be.zarr"), "a") as ds:
        assert ds["c"][:].tolist() == [(1.0, 2.0), (3.0, 4.0)]
        assert ds["h"][:].tolist() == [1.5, 2.0] and ds["t"][:].tolist() == [1, 2]
        ds["c"][0] = np.array((5, 6), ds["c"].dtype)
    assert zarr.open_group(tmp_path / "be.zarr", mode="r")["c"][:].tolist() == [5 + 6j, 3 + 4j]
