"""The shared pieces: netcdf-c's JSON dialect, type maps, attribute values and inference,
default chunks (facts from the reference notes, cited by section)."""

from __future__ import annotations

import json
import math

import pytest

from nczarr.errors import FormatError
from nczarr.formats.attributes import infer_attribute, values_from_json, values_to_json
from nczarr.formats.codecs import storage_from_chain
from nczarr.formats.dialect import dumps, loads
from nczarr.formats.typecodes import parse_type_code, parse_v2_typestr, type_code, v2_typestr
from nczarr.model import AtomicType as T
from nczarr.values.storage import netcdf_chunks
from nczarr.values.types import float32


def test_dumps_follows_netcdf_c_dialect() -> None:
    """§1.4: ", " between members, "," between items, raw UTF-8, no newline."""
    doc = {"a": [1, 2, {"b": None}], "ätt": "café ☃", "t": True, "q": 'say "hi"\n'}
    text = dumps(doc)
    assert text == '{"a": [1,2,{"b": null}], "ätt": "café ☃", "t": true, "q": "say \\"hi\\"\\n"}'.encode()
    assert json.loads(text) == doc


def test_dumps_floats_exact_or_g() -> None:
    values = [3.141592653589793, 1e300, 1.0, -1.0, 1e-5]
    assert dumps(values) == b"[3.141592653589793,1e+300,1.0,-1.0,1e-05]"
    assert dumps(values, byte_compatible=True) == b"[3.14159,1e+300,1,-1,1e-05]"
    assert dumps([math.nan, math.inf, -math.inf]) == b'["NaN","Infinity","-Infinity"]'


def test_dumps_control_characters() -> None:
    """netcdf-c writes them raw (strict parsers reject that); by default they are escaped."""
    assert dumps("a\x01b") == b'"a\\u0001b"'
    assert dumps("a\x01b", byte_compatible=True) == b'"a\x01b"'
    assert loads(b'"a\x01b"', "k") == "a\x01b"
    with pytest.raises(FormatError, match="^k: not valid JSON"):
        loads(b"{", "k")


@pytest.mark.parametrize(
    ("data", "type", "values"),
    [
        (3, T.INT, [3]),
        (-5, T.INT, [-5]),
        (2**31, T.UINT, [2**31]),
        (2**32, T.INT64, [2**32]),
        (-(2**31) - 1, T.INT64, [-(2**31) - 1]),
        (2**63, T.UINT64, [2**63]),
        (2.5, T.DOUBLE, [2.5]),
        (1.0, T.DOUBLE, [1.0]),
        (math.inf, T.DOUBLE, [math.inf]),
        (True, T.UBYTE, [1]),
        ("text", T.CHAR, "text"),
        ([1, 2.5], T.INT, [1, 2]),
        (["a", "b"], T.CHAR, '["a","b"]'),
        ({"k": [1, 2]}, T.CHAR, '{"k": [1,2]}'),
        (None, T.CHAR, "null"),
    ],
)
def test_inference_as_netcdf_c(data: object, type: T, values: object) -> None:
    """§2.10.4, on the first element of a list."""
    assert infer_attribute(data) == (type, values)


def test_inference_out_of_range_is_json_text() -> None:
    """netcdf-c fails (or aborts, on strings after numbers): nczarr keeps the JSON text."""
    assert infer_attribute([1, 1e300]) == (T.CHAR, "[1,1e+300]")


def test_values_from_json() -> None:
    assert values_from_json(T.SHORT, [2.7, -2.7, True], "k") == [2, -2, 1]
    assert values_from_json(T.FLOAT, ["NaN", "-Infinity", "infinityf", 3.14159], "k")[1:] == [
        -math.inf,
        math.inf,
        3.14159,
    ]
    assert values_from_json(T.CHAR, [1, 2, 3], "k") == "[1,2,3]"
    assert values_from_json(T.STRING, "one", "k") == ["one"]
    with pytest.raises(FormatError, match="^g/.zattrs: attribute 'a': 70000 does not fit short$"):
        values_from_json(T.SHORT, 70000, "g/.zattrs: attribute 'a'")
    with pytest.raises(FormatError, match="is not a double value"):
        values_from_json(T.DOUBLE, "1.5", "k")
    with pytest.raises(FormatError, match="is not a string value"):
        values_from_json(T.STRING, [1], "k")


def test_values_to_json() -> None:
    assert values_to_json(T.FLOAT, [0.1]) == 0.1
    assert values_to_json(T.DOUBLE, [math.nan, -math.inf]) == ["NaN", "-Infinity"]
    assert values_to_json(T.INT, []) == []
    assert values_to_json(T.STRING, ["a"]) == "a"
    assert values_to_json(T.CHAR, "") == ""


def test_float32_is_the_shortest_decimal() -> None:
    assert float32(0.10000000149011612) == 0.1
    assert float32(1 / 3) == 0.33333334
    assert math.isnan(float32(math.nan))


@pytest.mark.parametrize(
    ("text", "type", "strlen"),
    [
        (">S1", T.CHAR, 1),
        ("<U1", T.CHAR, 1),
        ("|S1", T.STRING, 1),
        ("|S128", T.STRING, 128),
        ("<i1", T.BYTE, 1),
        ("|u1", T.UBYTE, 1),
        (">f8", T.DOUBLE, 1),
        ("u8", T.UINT64, 1),
    ],
)
def test_parse_v2_typestr(text: str, type: T, strlen: int) -> None:
    """§2.8.2."""
    assert parse_v2_typestr(text, "k") == (type, strlen)


@pytest.mark.parametrize("text", ["<U3", "|O", "|b1", "<f2", 5])
def test_parse_v2_typestr_rejects(text: object) -> None:
    with pytest.raises(FormatError, match="^v/.zarray: data type .* has no netCDF type$"):
        parse_v2_typestr(text, "v/.zarray")


def test_type_codes() -> None:
    assert [v2_typestr(t) for t in (T.BYTE, T.CHAR, T.STRING)] == ["<i1", ">S1", "|S128"]
    assert v2_typestr(T.INT, "big") == ">i4"
    assert [type_code(t, zarr_format=3) for t in (T.FLOAT, T.CHAR, T.UINT64)] == [
        "float32",
        "char",
        "uint64",
    ]
    assert [parse_type_code(code, "k") for code in ("4", "2", "float32", "string", "|J0", ">i2")] == [
        T.INT,
        T.CHAR,
        T.FLOAT,
        T.STRING,
        None,
        T.SHORT,
    ]


@pytest.mark.parametrize(
    ("sizes", "unlimited", "itemsize", "chunks"),
    [
        ((1000, 1000), (False, False), 4, (1000, 1000)),
        ((5_000_000,), (False,), 4, (2_500_000,)),
        ((5_000_000,), (False,), 8, (1_666_667,)),
        ((7, 1000, 1000), (False, False, False), 4, (4, 500, 500)),
        ((0, 1000, 1000), (True, False, False), 4, (1, 1000, 1000)),
        ((0,), (True,), 4, (1024,)),
        ((0,), (True,), 8, (512,)),
        ((0, 0), (True, True), 2, (2896, 2896)),
        ((), (), 8, (1,)),
    ],
)
def test_netcdf_default_chunks(sizes: tuple, unlimited: tuple, itemsize: int, chunks: tuple) -> None:
    """§2.11.2 examples."""
    assert netcdf_chunks(sizes, unlimited, itemsize) == chunks


def test_storage_from_chain() -> None:
    chain = [{"id": "shuffle", "elementsize": 0}, {"id": "zlib", "level": 4}, {"id": "fletcher32"}]
    storage = storage_from_chain(chain, (3,), "native", True, None)
    assert (storage.shuffle, storage.compression, storage.complevel, storage.fletcher32) == (
        True,
        "zlib",
        4,
        True,
    )
    v3 = [
        {"name": "bytes"},
        {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "bitshuffle"}},
    ]
    storage = storage_from_chain(v3, (3,), "big", False, None)
    assert (storage.compression, storage.complevel, storage.blosc_shuffle, storage.endian, storage.fill) == (
        "blosc_zstd",
        5,
        2,
        "big",
        False,
    )
