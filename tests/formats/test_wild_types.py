"""Zarr data types netCDF lacks, and attributes of every JSON shape, in stores zarr-python 3
and xarray wrote: mapped where a faithful mapping exists, one array left out (with a warning
naming it) where none does, never the whole store refused."""

from __future__ import annotations

import json
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
    "months": ("datetime64[M]", ["2020-01", "NaT", "2021-06"]),
}
LEFT_OUT = {"months"}


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
    assert ds["raw"].dtype == np.dtype("V4") and ds["raw"][:].tolist() == [b"abcd", b"efgh", b"ijkl"]
    record = ds["record"]
    assert (record.datatype.name, record.dtype.names) == ("record_t", ("x", "y"))
    assert record[:].tolist() == [(1.5, 2), (3.5, 4), (0.0, 0)]


def test_mapped_types_read_and_the_rest_is_left_out_with_a_warning(store: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="nczarr"), Dataset(str(store)) as ds:
        _check_values(ds)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for name in LEFT_OUT:
        assert sum(message.startswith(f"{name}/") and "left out" in message for message in warned) == 1
    assert any(message.startswith("half/") and "float16 read as float" in message for message in warned)
    assert any("_PFNC_FLOAT_COMPLEX_TYPE" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)
    assert any("read as compound type record_t" in r.getMessage() for r in caplog.records)


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
    assert sorted(left_out) == sorted(LEFT_OUT)  # one line each
    assert "compound record_t {" in out and "opaque(4) raw_t ;" in out
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
    assert main(["copy", "--skip-unsupported", str(source), str(target)]) == 0  # h5netcdf writes no opaque
    with netCDF4.Dataset(target, auto_complex=True) as nc:  # netCDF4-python's complex convention
        np.testing.assert_array_equal(nc["c8"][:], ARRAYS["c8"][1])
        assert nc["half"].dtype == np.float32 and nc["when"].units == "seconds since 1970-01-01"
        assert nc["record"][:].tolist() == ARRAYS["record"][1] and "raw" not in nc.variables
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
        ds["record"][0] = np.array((9.5, 9), ds["record"].dtype)
        ds["raw"][2] = np.void(b"WXYZ")
    warnings.simplefilter("ignore")
    group = zarr.open_group(store, mode="r")
    assert sorted(group.array_keys()) == sorted(["plain", *ARRAYS])
    assert group["half"].dtype == np.float16 and group["half"][0] == 2.25
    assert group["when"][0] == np.datetime64(0, "s") and "units" not in group["when"].attrs
    assert group["c8"][1] == 7 + 8j
    assert group["record"].dtype == _dtype("structured") and group["record"][0].tolist() == (9.5, 9)
    assert group["raw"].dtype == np.dtype("V4") and group["raw"][2].tobytes() == b"WXYZ"
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


#: A structured dtype with a nested structured field and a char field, and its values.
NESTED = np.dtype([("p", [("x", "<f4"), ("y", "<f4")]), ("v", "<i2"), ("c", "S1")])
NESTED_VALUES = [((1.0, 0.5), 4, b"a"), ((2.0, 0.0), 5, b"b"), ((3.0, -1.0), 6, b"c")]


def _write_records(path: Path, zarr_format: int) -> Path:
    """Structured arrays as zarr-python writes them: nested, big-endian (v2 keeps the byte
    order), and with sub-array fields, which zarr-python 3 stores as raw-bytes fields."""
    warnings.simplefilter("ignore")
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    extra: dict[str, object] = {"compressors": None, "config": {"write_empty_chunks": True}}
    extra |= {"dimension_names": ["x"]} if zarr_format == 3 else {"attributes": {"_ARRAY_DIMENSIONS": ["x"]}}
    nested = root.create_array("nest", shape=(3,), dtype=NESTED, fill_value=np.zeros(1, NESTED)[0], **extra)
    nested[:] = np.array(NESTED_VALUES, NESTED)
    big = np.dtype([("a", ">i4"), ("b", ">f8")] if zarr_format == 2 else [("a", "<i4"), ("b", "<f8")])
    root.create_array("big", shape=(3,), dtype=big, **extra)[:] = np.array([(1, 0.25), (2, -1), (3, 8)], big)
    sub = np.dtype([("v", "<i2", (2,)), ("s", "S1", (2,))])
    root.create_array("sub", shape=(3,), dtype=sub, fill_value=np.zeros(1, sub)[0], **extra)[:] = np.array(
        [([1, 2], [b"a", b"b"])] * 3, sub
    )
    return path


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_structured_arrays_read_as_compound_types(tmp_path: Path, zarr_format: int) -> None:
    """Values equal zarr-python's; nested structured and raw-bytes fields get their own
    types, named ``<array>.<field>_t``."""
    path = _write_records(tmp_path / "rec.zarr", zarr_format)
    warnings.simplefilter("ignore")
    group = zarr.open_group(path, mode="r")
    with Dataset(str(path)) as ds:
        assert ds["nest"][:].tolist() == NESTED_VALUES
        assert ds["big"][:].tolist() == group["big"][:].tolist()
        assert [ds["sub"][:][f].tobytes() for f in ("v", "s")] == [group["sub"][:][f].tobytes() for f in ("v", "s")]
        assert sorted(ds.cmptypes) == ["big_t", "nest.p_t", "nest_t", "sub_t"]
        assert ds.cmptypes["nest_t"].dtype.fields["p"][0] == ds.cmptypes["nest.p_t"].dtype


def test_v2_sub_array_fields(tmp_path: Path) -> None:
    """zarr-python 2 wrote sub-array fields as ``[name, type, shape]``; zarr-python 3 cannot
    (it writes raw-bytes fields, and garbles their values in v2): its array gets that dtype
    and the one uncompressed chunk zarr-python 2 would write."""
    path = _write_records(tmp_path / "rec.zarr", 2)
    zarray = path / "sub" / ".zarray"
    meta = json.loads(zarray.read_text())
    meta["dtype"] = [["v", "<i2", [2]], ["s", "|S1", [2]]]
    zarray.write_text(json.dumps(meta))
    sub = np.dtype([("v", "<i2", (2,)), ("s", "S1", (2,))])
    values = [([1, 2], [b"a", b"b"]), ([3, 4], [b"c", b"d"]), ([0, 0], [b"", b""])]
    (path / "sub" / "0").write_bytes(np.array(values, sub).tobytes())
    with Dataset(str(path)) as ds:
        fields = ds.cmptypes["sub_t"].dtype.fields
        assert fields["v"][0].shape == (2,) and fields["s"][0].shape == (2,)
        values = ds["sub"][:]
        assert values["v"].tolist() == [[1, 2], [3, 4], [0, 0]]
        assert values["s"].tolist() == [b"ab", b"cd", b""]  # char fields as netCDF4 shows them


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_structured_arrays_write_back_and_copy(tmp_path: Path, zarr_format: int) -> None:
    path = _write_records(tmp_path / "rec.zarr", zarr_format)
    with Dataset(str(path), "a") as ds:
        ds["nest"][2] = np.array(((9, 8), 7, b"z"), ds["nest"].dtype)
        ds["big"].note = "x"
    warnings.simplefilter("ignore")
    group = zarr.open_group(path, mode="r", use_consolidated=False)
    assert group["big"].attrs["note"] == "x" and group["big"][:].tolist() == [(1, 0.25), (2, -1), (3, 8)]
    if zarr_format == 3:  # zarr-python 3 cannot read the nested v2 dtype it wrote
        assert group["nest"].dtype == NESTED and group["nest"][2].tolist() == ((9.0, 8.0), 7, b"z")
    copied = tmp_path / "copy.zarr"
    assert main(["copy", str(path), str(copied)]) == 0
    with Dataset(str(path)) as ds, Dataset(str(copied)) as out:
        for name in ds.variables:
            assert out[name].dtype == ds[name].dtype and out[name][:].tolist() == ds[name][:].tolist()
    nc = tmp_path / "copy.nc"  # nested compounds are written; opaque fields are not
    assert main(["copy", "--skip-unsupported", str(path), str(nc)]) == 0
    with netCDF4.Dataset(nc) as out, Dataset(str(path)) as ds:
        assert list(out.variables) == ["big", "nest"] and out["big"][:].tolist() == [(1, 0.25), (2, -1), (3, 8)]
        assert out["nest"][:].tolist() == ds["nest"][:].tolist()


@pytest.mark.parametrize("fmt", ["ZARR", "ZARR_V2"])
def test_complex_copied_to_pure_zarr_stays_complex(store: Path, tmp_path: Path, fmt: str) -> None:
    """zarr -> nczarr copy -> zarr keeps complex64 / complex128 for zarr-python."""
    nczarr_copy, target = tmp_path / "nc.zarr", tmp_path / "out.zarr"
    assert main(["copy", str(store), str(nczarr_copy)]) == 0
    # pure Zarr holds a compound as a structured array (as xarray does), no opaque type
    assert main(["copy", "--skip-unsupported", "--format", fmt, str(nczarr_copy), str(target)]) == 0
    warnings.simplefilter("ignore")
    group = zarr.open_group(target, mode="r")
    for name, dtype in (("c8", "c8"), ("c16", "c16")):
        assert group[name].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(group[name][:], ARRAYS[name][1])
    assert group["record"][:].tolist() == ARRAYS["record"][1] and "raw" not in group
    with Dataset(str(target)) as ds:
        assert ds["c16"][:].tolist() == [(1.0, 2.0), (3.0, -4.0), (0.0, 0.0)]


def test_complex_is_refused_in_nczarr_v2(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """netcdf-c 4.10.1 reads neither a complex dtype nor a compound type in NCZarr v2."""
    assert main(["copy", "--format", "NCZARR_V2", "-v", "c8", str(store), str(tmp_path / "v2.zarr")]) != 0
    assert "c8: variable of user-defined type _PFNC_FLOAT_COMPLEX_TYPE cannot be stored in NCZARR_V2" in capsys.readouterr().err
