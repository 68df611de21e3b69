"""netcdf-c's JSON dialect (libdispatch/ncjson.c in netcdf-c 4.10.1): what it accepts beyond
JSON, read by :func:`loads_netcdf_c` and by ``load_json(strict=False)`` where JSON refuses a
document; what it refuses stays refused. The comparison with netcdf-c itself is in
tests/formats/test_netcdfc_conventions.py."""

from __future__ import annotations

import math

import pytest

from nczarr.errors import MetadataError
from nczarr.zarr.jsonvalue import WrittenFloat, loads_netcdf_c
from nczarr.zarr.metadata import MAX_JSON_DEPTH, load_json


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"x": 02, "y": [01, 010], "z": -07}', {"x": 2, "y": [1, 10], "z": -7}),  # decimal, not octal
        ('{"x": 02.5, "y": 00.5e1}', {"x": 2.5, "y": 5.0}),
        ('{"p": +1, "d": 1., "e": .5, "h": 0x10, "m": -0x1p4}', {"p": 1, "d": 1.0, "e": 0.5, "h": 16.0, "m": -16.0}),
        ('{"t": TRUE, "f": False, "n": NULL}', {"t": True, "f": False, "n": None}),
        ('{"w": hello, "k": a_b$c}', {"w": "hello", "k": "a_b$c"}),  # bare words are strings
        ('{"x": [1, 2,], "y": 1,}', {"x": [1, 2], "y": 1}),
        ("[1,]", [1]),
        ('{1: "a", true: "b"}', {"1": "a", "true": "b"}),  # keys are any word's text
        ('{"s": "a\\tb\\q\\u00e9"}', {"s": "a\tbqé"}),
        ('{"x": 1}\n\t ', {"x": 1}),
        ("[]", []),
        ("{}", {}),
        ("5", 5),
    ],
)
def test_accepted(text: str, value: object) -> None:
    assert loads_netcdf_c(text, 10) == value


@pytest.mark.parametrize(
    "word", ["NaN", "nan", "NAN", "nanf", "-nan", "Infinity", "-Infinity", "inf", "-inf", "INFINITY", "infinityf", "-infinityf"]
)
def test_special_doubles(word: str) -> None:
    value = loads_netcdf_c(f"[{word}]", 10)[0]  # type: ignore[index]
    assert isinstance(value, float) and (math.isnan(value) or math.isinf(value))
    assert math.isnan(value) or (value < 0) == word.startswith("-")


@pytest.mark.parametrize(
    "text",
    [
        '{"x": 1} garbage', '{"x": 1 /* c */}', "{'x': 1}", "[,1]", "[1,,2]", '{"x" 1}', "[1 2]", '{"x": 1',
        '"open', "", "{null: 1}", "@",
    ],
)
def test_refused(text: str) -> None:
    with pytest.raises(ValueError):
        loads_netcdf_c(text, 10)


def test_depth_is_bounded() -> None:
    assert loads_netcdf_c("[[[1]]]", 3) == [[[1]]]
    with pytest.raises(ValueError, match="nested deeper than 3 levels"):
        loads_netcdf_c("[[[[1]]]]", 3)
    deep = "[" * 100_000 + "]" * 100_000  # no RecursionError
    with pytest.raises(MetadataError, match="nested deeper"):
        load_json(deep.replace("[]", "[02]"), "deep", strict=False)


def test_load_json_falls_back_only_when_not_strict() -> None:
    text = b'{"x": 02, "y": NaN}'
    loaded = load_json(text, ".zattrs", strict=False)
    assert isinstance(loaded, dict) and loaded["x"] == 2 and math.isnan(loaded["y"])  # type: ignore[arg-type]
    with pytest.raises(MetadataError, match=r"\.zattrs: not valid JSON"):
        load_json(text, ".zattrs")
    with pytest.raises(MetadataError, match=r"\.zattrs: not valid JSON: Extra data"):  # JSON's message
        load_json(b'{"x": 1} garbage', ".zattrs", strict=False)
    assert load_json(b'{"x": "a\x01b"}', "k", strict=False) == {"x": "a\x01b"}  # raw control characters
    assert MAX_JSON_DEPTH > 100


def test_numbers_keep_their_text() -> None:
    loaded = loads_netcdf_c('[0., 1.50, 1e5, 0x10]', 10)
    assert loaded == [0.0, 1.5, 100000.0, 16.0]
    assert [v.text for v in loaded] == ["0.", "1.50", "1e5", "0x10"]  # type: ignore[union-attr]
    document = load_json(b'{"v": [1.0, 2.50e1]}', "k", strict=False)
    assert [v.text for v in document["v"]] == ["1.0", "2.50e1"]  # type: ignore[index, union-attr]
    assert type(load_json(b'{"v": 1.0}', "k")["v"]) is float  # type: ignore[index]
    assert isinstance(WrittenFloat("1.0"), float) and WrittenFloat("-0x1p1") == -2.0
