"""Zarr data types and fill values: JSON round trips, errors, and agreement with zarr-python."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from zarr.core.dtype import VariableLengthBytes, get_data_type_from_json

from nczarr.errors import MetadataError
from nczarr.zarr.dtypes import DataType, object_codec_id_of

STRUCT_V2 = [["x", "<f4"], ["y", ">i2", [2]], ["z", [["a", "|u1"], ["b", "|S2"]]]]

# (v3 JSON, kind, numpy dtype)
V3_TYPES = [
    ("bool", "bool", "?"),
    ("int8", "int", "i1"),
    ("int16", "int", "i2"),
    ("int32", "int", "i4"),
    ("int64", "int", "i8"),
    ("uint8", "uint", "u1"),
    ("uint16", "uint", "u2"),
    ("uint32", "uint", "u4"),
    ("uint64", "uint", "u8"),
    ("float16", "float", "f2"),
    ("float32", "float", "f4"),
    ("float64", "float", "f8"),
    ("complex64", "complex", "c8"),
    ("complex128", "complex", "c16"),
    ("r8", "raw", "V1"),
    ("r48", "raw", "V6"),
    ("string", "string", "O"),
    ("bytes", "bytes", "O"),
    ("variable_length_bytes", "bytes", "O"),
    ({"name": "raw_bytes", "configuration": {"length_bytes": 4}}, "raw", "V4"),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 5}}, "fixed_bytes", "S5"),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}, "fixed_unicode", "U3"),
    (
        {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}},
        "datetime",
        "M8[10s]",
    ),
    (
        {"name": "numpy.timedelta64", "configuration": {"unit": "ns", "scale_factor": 1}},
        "timedelta",
        "m8[ns]",
    ),
    (
        {
            "name": "structured",
            "configuration": {
                "fields": [
                    ["x", "float32"],
                    ["y", {"name": "raw_bytes", "configuration": {"length_bytes": 4}}],
                ]
            },
        },
        "structured",
        [("x", "f4"), ("y", "V4")],
    ),
]

# (v2 JSON, object codec id, kind, numpy dtype)
V2_TYPES = [
    ("|b1", None, "bool", "?"),
    ("|i1", None, "int", "i1"),
    ("<i2", None, "int", "<i2"),
    (">i4", None, "int", ">i4"),
    ("<i8", None, "int", "<i8"),
    ("|u1", None, "uint", "u1"),
    (">u2", None, "uint", ">u2"),
    ("<u4", None, "uint", "<u4"),
    ("<u8", None, "uint", "<u8"),
    ("<f2", None, "float", "<f2"),
    ("<f4", None, "float", "<f4"),
    (">f8", None, "float", ">f8"),
    ("<c8", None, "complex", "<c8"),
    (">c16", None, "complex", ">c16"),
    ("|V3", None, "raw", "V3"),
    ("|S5", None, "fixed_bytes", "S5"),
    ("<U3", None, "fixed_unicode", "<U3"),
    (">U2", None, "fixed_unicode", ">U2"),
    ("<M8[ns]", None, "datetime", "<M8[ns]"),
    (">m8[10s]", None, "timedelta", ">m8[10s]"),
    ("|O", "vlen-utf8", "string", "O"),
    ("|O", "vlen-bytes", "bytes", "O"),
    (
        STRUCT_V2,
        None,
        "structured",
        [("x", "<f4"), ("y", ">i2", (2,)), ("z", [("a", "u1"), ("b", "S2")])],
    ),
]


@pytest.mark.parametrize(("data", "kind", "dtype"), V3_TYPES)
def test_v3_round_trip(data, kind, dtype):
    dt = DataType.from_v3(data)
    assert (dt.kind, dt.dtype, dt.zarr_format) == (kind, np.dtype(dtype), 3)
    assert dt.to_v3() == data
    assert dt.to_json() == data
    assert DataType.from_v3(dt.to_v3()) == dt


@pytest.mark.parametrize(("data", "codec", "kind", "dtype"), V2_TYPES)
def test_v2_round_trip(data, codec, kind, dtype):
    dt = DataType.from_v2(data, codec)
    assert (dt.kind, dt.dtype, dt.zarr_format) == (kind, np.dtype(dtype), 2)
    assert dt.to_v2() == data
    assert dt.to_json() == data
    assert dt.object_codec_id == codec


def test_v2_keeps_byte_order_and_v3_is_native():
    assert DataType.from_v2(">i4").dtype.byteorder == ">"
    assert DataType.from_numpy(">i4", 3).dtype == np.dtype("=i4")
    assert DataType.from_numpy([("a", ">f8")], 3).dtype == np.dtype([("a", "=f8")])
    assert DataType.from_numpy(">i4", 2).to_v2() == ">i4"


@pytest.mark.parametrize(
    ("dtype", "fmt", "kwargs", "kind"),
    [
        (object, 3, {}, "string"),
        (object, 2, {"string_kind": "bytes"}, "bytes"),
        (np.dtypes.StringDType(), 3, {}, "string"),
        ("S3", 3, {}, "fixed_bytes"),
        ("V2", 2, {}, "raw"),
        ("M8[ms]", 3, {}, "datetime"),
    ],
)
def test_from_numpy_kind(dtype, fmt, kwargs, kind):
    assert DataType.from_numpy(dtype, fmt, **kwargs).kind == kind


def test_from_numpy_packs_structured():
    aligned = np.dtype([("a", "u1"), ("b", "<i4")], align=True)
    assert aligned.itemsize == 8
    dt = DataType.from_numpy(aligned, 2)
    assert dt.dtype.itemsize == 5
    assert dt.to_v2() == [["a", "|u1"], ["b", "<i4"]]


def test_v2_names_convert_to_v3_and_back():
    dt = DataType.from_v2("<U3")
    assert dt.to_v3() == {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}
    assert DataType.from_v3("float64").to_v2() == np.dtype("f8").str
    assert DataType.from_v3("string").to_v2() == "|O"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: DataType.from_v3("int3"), 'unsupported data_type "int3"'),
        (lambda: DataType.from_v3("r12"), 'unsupported data_type "r12"'),
        (lambda: DataType.from_v3({"name": "foo"}), 'unsupported data_type {"name": "foo"}'),
        (
            lambda: DataType.from_v3({"name": "raw_bytes", "configuration": {"length_bytes": 0}}),
            'invalid data_type {"name": "raw_bytes", "configuration": {"length_bytes": 0}}',
        ),
        (lambda: DataType.from_v2("int32"), 'unsupported dtype "int32"'),
        (lambda: DataType.from_v2("<i3"), 'unsupported dtype "<i3"'),
        (lambda: DataType.from_v2("i4"), 'unsupported dtype "i4"'),
        (
            lambda: DataType.from_v2("|O"),
            "dtype '|O' needs a vlen-utf8 or vlen-bytes filter, got None",
        ),
        (
            lambda: DataType.from_v2("|O", "pickle"),
            "dtype '|O' needs a vlen-utf8 or vlen-bytes filter, got 'pickle'",
        ),
        (lambda: DataType.from_v2([["x"]]), 'invalid structured dtype field ["x"]'),
        (
            lambda: DataType.from_v2([["x", "|O"]]),
            'unsupported dtype "|O"',
        ),
        (lambda: DataType.from_numpy("f16", 3), "numpy dtype '<f16' has no Zarr data type"),
        (lambda: DataType.from_numpy("M8", 3), "numpy dtype '<M8' has no time unit"),
        (lambda: DataType.from_numpy("S0", 2), "numpy dtype '|S0' has length zero"),
        (
            lambda: DataType.from_numpy(np.dtype(("<i2", (2,))), 2),
            "numpy dtype ('<i2', (2,)) is a subarray, not a Zarr data type",
        ),
        (
            lambda: DataType.from_numpy([("y", "i2", (2,))], 3),
            "structured field 'y' has shape (2,), which Zarr v3 cannot express",
        ),
        (
            lambda: DataType.from_v2(STRUCT_V2).to_v3(),
            "structured field 'y' has shape (2,), which Zarr v3 cannot express",
        ),
        (
            lambda: DataType.from_numpy(object, 3, string_kind="text"),  # type: ignore[arg-type]
            "string_kind must be 'string' or 'bytes', got 'text'",
        ),
    ],
)
def test_data_type_errors(call, message):
    with pytest.raises(MetadataError) as info:
        call()
    assert str(info.value) == message


def test_object_codec_id_of():
    assert object_codec_id_of([{"id": "zstd"}, {"id": "vlen-bytes"}, None]) == "vlen-bytes"
    assert object_codec_id_of([None, {"id": "gzip"}]) is None


# -- fill values --------------------------------------------------------------------------


def bits(value):
    return np.array(value).tobytes()


# (format, data type JSON, JSON fill, expected value, JSON written back)
FILLS = [
    (3, "bool", True, np.True_, True),
    (3, "int8", -128, np.int8(-128), -128),
    (3, "uint64", 2**64 - 1, np.uint64(2**64 - 1), 2**64 - 1),
    (3, "int32", 5.0, np.int32(5), 5),
    (3, "float32", 0.1, np.float32(0.1), 0.10000000149011612),
    (3, "float64", 0.1, np.float64(0.1), 0.1),
    (3, "float32", 3, np.float32(3), 3.0),
    (3, "float64", "NaN", np.float64(np.nan), "NaN"),
    (3, "float32", "Infinity", np.float32(np.inf), "Infinity"),
    (3, "float16", "-Infinity", np.float16(-np.inf), "-Infinity"),
    (3, "float32", "0x7fc00000", np.float32(np.nan), "NaN"),
    (3, "float32", "0x7fc00001", np.frombuffer(bytes.fromhex("7fc00001"), ">f4")[0], "0x7fc00001"),
    (3, "float32", "0x3f800000", np.float32(1.0), 1.0),
    (3, "float16", "0x7e01", np.frombuffer(bytes.fromhex("7e01"), ">f2")[0], "0x7e01"),
    (
        3,
        "float64",
        "0xfff8000000000000",
        np.frombuffer(bytes.fromhex("fff8000000000000"), ">f8")[0],
        "0xfff8000000000000",
    ),
    (3, "complex64", [1.5, -2], np.complex64(1.5 - 2j), [1.5, -2.0]),
    (
        3,
        "complex128",
        ["NaN", "-Infinity"],
        np.complex128(complex(np.nan, -np.inf)),
        ["NaN", "-Infinity"],
    ),
    (
        3,
        "complex64",
        ["0x7fc00001", "0x3f800000"],
        np.array([np.frombuffer(bytes.fromhex("7fc00001"), ">f4")[0], 1.0], "f4").view("c8")[0],
        ["0x7fc00001", 1.0],
    ),
    (3, "r16", [1, 255], np.void(b"\x01\xff"), [1, 255]),
    (3, {"name": "raw_bytes", "configuration": {"length_bytes": 2}}, "Af8=", np.void(b"\x01\xff"),
     "Af8="),
    (3, "string", "héllo", "héllo", "héllo"),
    (3, "variable_length_bytes", "YWI=", b"ab", "YWI="),
    (3, "bytes", [97, 98], b"ab", "YWI="),
    (3, {"name": "null_terminated_bytes", "configuration": {"length_bytes": 5}}, "YWI=",
     np.bytes_(b"ab"), "YWI="),
    (3, {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}, "xyz",
     np.str_("xyz"), "xyz"),
    (
        3,
        {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}},
        -(2**63),
        np.datetime64("NaT", "ns"),
        -(2**63),
    ),
    (
        3,
        {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}},
        90,
        np.timedelta64(90, "s"),
        90,
    ),
    (
        3,
        {"name": "structured", "configuration": {"fields": [["x", "float32"], ["y", "int16"]]}},
        "AADAPwIA",
        np.array((1.5, 2), [("x", "f4"), ("y", "i2")])[()],
        "AADAPwIA",
    ),
    (2, "|b1", False, np.False_, False),
    (2, ">i4", 7, np.int32(7), 7),
    (2, "<f4", None, None, None),
    (2, "<f4", "NaN", np.float32(np.nan), "NaN"),
    (2, ">f8", "-Infinity", np.float64(-np.inf), "-Infinity"),
    (2, "<f4", "0x7fc00001", np.frombuffer(bytes.fromhex("7fc00001"), ">f4")[0], "NaN"),
    (2, "<c8", [0.0, "NaN"], np.complex64(complex(0, np.nan)), [0.0, "NaN"]),
    (2, "|S5", "YWI=", np.bytes_(b"ab"), "YWI="),
    (2, "<U3", "xy", np.str_("xy"), "xy"),
    (2, "|V4", "AQIDBA==", np.void(b"\x01\x02\x03\x04"), "AQIDBA=="),
    (2, "<M8[ns]", 1577836800000000000, np.datetime64("2020-01-01", "ns"), 1577836800000000000),
    (
        2,
        [["x", ">f4"], ["y", "<i2", [2]]],
        "P8AAAAIAAwA=",
        np.array((1.5, [2, 3]), [("x", ">f4"), ("y", "<i2", (2,))])[()],
        "P8AAAAIAAwA=",
    ),
]


def make(fmt, data):
    if fmt == 3:
        return DataType.from_v3(data)
    return DataType.from_v2(data)


@pytest.mark.parametrize(("fmt", "data", "fill", "value", "back"), FILLS)
def test_fill_round_trip(fmt, data, fill, value, back):
    dt = make(fmt, data)
    decoded = dt.fill_from_json(fill)
    assert type(decoded) is type(value)
    if value is not None:
        assert bits(decoded) == bits(value)  # exact, NaN payloads included
    assert dt.fill_to_json(decoded) == back
    assert dt.fill_to_json(dt.fill_from_json(back)) == back


def test_v2_string_fill_written_as_number_by_zarr_python_2():
    assert DataType.from_v2("|O", "vlen-utf8").fill_from_json(0) == "0"


def test_v3_string_dtype_fill_bytes_is_base64_like_zarr_python():
    zdt = VariableLengthBytes()
    ours = DataType.from_v3("variable_length_bytes")
    assert ours.fill_to_json(b"\x00ab") == zdt.to_json_scalar(b"\x00ab", zarr_format=3)


@pytest.mark.parametrize(
    ("fmt", "data", "fill", "message"),
    [
        (3, "int8", 300, "fill value 300 does not fit data type int8"),
        (3, "uint8", -1, "fill value -1 does not fit data type uint8"),
        (3, "int16", 1.5, "fill value 1.5 does not fit data type int16"),
        (3, "int16", True, "fill value True does not fit data type int16"),
        (3, "int16", "7", "fill value '7' does not fit data type int16"),
        (3, "bool", 2, "fill value 2 does not fit data type bool"),
        (3, "float32", "abc", "fill value 'abc' does not fit data type float32"),
        (3, "float32", 1e300, "fill value 1e+300 does not fit data type float32"),
        (3, "float32", "0x7fc0", "fill value '0x7fc0' does not fit data type float32"),
        (3, "float32", None, "fill value None does not fit data type float32"),
        (3, "complex64", [1.0], "fill value [1.0] does not fit data type complex64"),
        (3, "complex64", [1e300, 0], "fill value [1e+300, 0] does not fit data type complex64"),
        (3, "complex64", [True, 0], "fill value [True, 0] does not fit data type complex64"),
        (3, "float64", False, "fill value False does not fit data type float64"),
        (3, "r16", [1, 2, 3], "fill value [1, 2, 3] does not fit data type r16"),
        (3, "r16", [1, 256], "fill value [1, 256] does not fit data type r16"),
        (3, "bytes", "not base64!", "fill value 'not base64!' does not fit data type bytes"),
        (3, "string", ["a"], "fill value ['a'] does not fit data type string"),
        (
            3,
            {"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}},
            "ab",
            'fill value \'ab\' does not fit data type {"name": "fixed_length_utf32", '
            '"configuration": {"length_bytes": 4}}',
        ),
        (2, "|S2", "YWJj", "fill value 'YWJj' does not fit data type |S2"),
        (2, "<i8", "NaN", "fill value 'NaN' does not fit data type <i8"),
        (2, [["x", "<f4"]], "AAA=", 'fill value \'AAA=\' does not fit data type [["x", "<f4"]]'),
    ],
)
def test_fill_errors(fmt, data, fill, message):
    with pytest.raises(MetadataError) as info:
        make(fmt, data).fill_from_json(fill)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("data", "value", "message"),
    [
        ("int8", 300, "fill value 300 does not fit data type int8"),
        ("float32", "abc", "fill value 'abc' does not fit data type float32"),
        ("string", b"x", "fill value b'x' does not fit data type string"),
    ],
)
def test_fill_to_json_rejects_misfits(data, value, message):
    with pytest.raises(MetadataError) as info:
        DataType.from_v3(data).fill_to_json(value)
    assert str(info.value) == message


def test_cast_fill_accepts_python_values():
    assert DataType.from_v3("float32").cast_fill(0.1) == np.float32(0.1)
    struct = DataType.from_v3(
        {"name": "structured", "configuration": {"fields": [["x", "float32"], ["y", "int16"]]}}
    )
    assert struct.fill_to_json((1.5, 2)) == "AADAPwIA"
    assert DataType.from_v3("bool").cast_fill(1) is np.True_
    minute = np.datetime64("1970-01-01T00:01")
    assert DataType.from_v2("<M8[s]").cast_fill(minute) == np.datetime64(60, "s")


@pytest.mark.parametrize(
    ("fmt", "data", "default"),
    [
        (3, "bool", np.False_),
        (3, "int16", np.int16(0)),
        (3, "float64", np.float64(0)),
        (3, "complex64", np.complex64(0)),
        (3, "string", ""),
        (3, "bytes", b""),
        (3, "r16", np.void(b"\x00\x00")),
        (2, "|S3", np.bytes_(b"")),
        (2, "<U3", np.str_("")),
        (2, [["x", "<f4"]], np.zeros((), [("x", "<f4")])[()]),
    ],
)
def test_default_fill(fmt, data, default):
    value = make(fmt, data).default_fill()
    assert type(value) is type(default)
    assert bits(value) == bits(default)


def test_default_fill_of_times_is_nat():
    assert np.isnat(DataType.from_v2("<m8[s]").default_fill())


# -- agreement with zarr-python's own data type model --------------------------------------

NATIVE = [
    "?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16",
    "S4", "U3", "V5", "M8[ns]", "m8[10s]", [("x", "f4"), ("y", "i2")],
]


@pytest.mark.parametrize("native", NATIVE, ids=str)
@pytest.mark.parametrize("fmt", [2, 3])
def test_same_json_as_zarr_python(native, fmt):
    ours = DataType.from_numpy(native, fmt)
    theirs = zarr_dtype(ours.to_json(), fmt)
    assert theirs.to_native_dtype() == ours.dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python warns that some v3 names are unstable
        expected = theirs.to_json(zarr_format=fmt)
    assert ours.to_json() == (expected["name"] if fmt == 2 else expected)
    fill = ours.default_fill()
    theirs_fill = theirs.to_json_scalar(fill, zarr_format=fmt)
    assert json.dumps(ours.fill_to_json(fill)) == json.dumps(theirs_fill)  # tuples as lists


def zarr_dtype(data, fmt):
    spec = {"name": data, "object_codec_id": None} if fmt == 2 else data
    return get_data_type_from_json(spec, zarr_format=fmt)


@pytest.mark.parametrize(
    ("native", "value"),
    [
        ("f4", np.float32(0.1)),
        ("f8", np.nan),
        ("f2", -np.inf),
        ("c8", complex(np.nan, 2.5)),
        ("i8", -(2**63)),
        ("u8", 2**64 - 1),
        ("S4", b"ab"),
        ("U3", "été"),
        ("V2", b"\x00\xff"),
        ("M8[ns]", np.datetime64("2020-01-01", "ns")),
        ([("x", "f4"), ("y", "i2")], (1.5, 2)),
    ],
    ids=str,
)
@pytest.mark.parametrize("fmt", [2, 3])
def test_same_fill_json_as_zarr_python(native, value, fmt):
    ours = DataType.from_numpy(native, fmt)
    theirs = zarr_dtype(ours.to_json(), fmt)
    encoded = ours.fill_to_json(value)
    expected = theirs.to_json_scalar(theirs.cast_scalar(value), zarr_format=fmt)
    assert json.dumps(encoded) == json.dumps(expected)
    assert bits(theirs.from_json_scalar(encoded, zarr_format=fmt)) == bits(ours.fill_from_json(encoded))
