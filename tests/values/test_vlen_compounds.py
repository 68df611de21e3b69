"""Compounds with string and vlen fields: their numpy form and the record encoding that
stores them (``values.stored``)."""

from __future__ import annotations

import numpy as np
import pytest

from nczarr.errors import RecordDecodeError, UnsizedTypeError
from nczarr.model import AtomicType as T
from nczarr.model import Dataset
from nczarr.values.stored import convert_records, decode_records, encode_records, has_record_encoding
from nczarr.values.types import compound_dtype, is_fixed_size, packed_dtype, value_dtype


@pytest.fixture
def types() -> Dataset:
    dataset = Dataset()
    dataset.add_vlen("vl", T.INT)
    cmp = dataset.add_compound("cmp")
    cmp.add_field("name", T.STRING)
    cmp.add_field("val", T.INT)
    outer = dataset.add_compound("outer")
    outer.add_field("v", "vl")
    outer.add_field("c", "cmp")
    outer.add_field("names", T.STRING, (3,))
    outer.add_field("k", T.SHORT, (2,))
    outer.add_field("cs", "cmp", (2,))
    dataset.add_vlen("many", "outer")
    fixed = dataset.add_compound("fixed")
    fixed.add_field("a", T.INT)
    return dataset


def objects(*items: object) -> np.ndarray:
    out = np.empty(len(items), object)
    for i, item in enumerate(items):
        out[i] = item
    return out


def records(dataset: Dataset) -> np.ndarray:
    return convert_records(
        objects(
            ([1, 2], ("q", 3), ["a", "b", "c"], [5, 6], [("x", 1), ("y", 2)]),
            ([], (b"r\xc3\xa9", 4), ["", "é", "x"], [7, 8], [("z", 1), ("", 2)]),
        ),
        dataset.find_type("outer"),
    )


def test_variable_length_fields_are_object_fields(types: Dataset) -> None:
    outer = types.find_type("outer")
    dtype = value_dtype(outer)
    assert dtype["v"] == np.dtype(object) and dtype["c"]["name"] == np.dtype(object)
    assert dtype["names"].shape == (3,) and dtype["k"] == np.dtype(("i2", (2,)))
    assert dtype.isalignedstruct
    assert not is_fixed_size(outer) and not is_fixed_size(types.find_type("cmp"))
    assert is_fixed_size(types.find_type("fixed"))
    with pytest.raises(UnsizedTypeError, match="field 'name' of type string has no fixed size"):
        packed_dtype(types.find_type("cmp"))
    assert compound_dtype(types.find_type("fixed"), packed=True) == np.dtype([("a", "<i4")])


def test_which_types_use_the_record_encoding(types: Dataset) -> None:
    assert has_record_encoding(types.find_type("outer"))
    assert has_record_encoding(types.find_type("many"))
    assert not has_record_encoding(types.find_type("vl"))
    assert not has_record_encoding(types.find_type("fixed"))


def test_records_round_trip(types: Dataset) -> None:
    outer = types.find_type("outer")
    values = records(types)
    assert values[1]["c"]["name"] == "ré"  # bytes from h5py made text
    assert values[0]["v"].dtype == np.dtype("i4")
    stored = encode_records(values, outer)
    assert stored.dtype == object and all(isinstance(b, bytes) for b in stored)
    back = decode_records(stored, outer)
    assert back.dtype == values.dtype
    for got, want in zip(back, values):
        assert got["v"].tolist() == list(want["v"])
        assert got["c"].tolist() == want["c"].tolist()
        assert got["names"].tolist() == want["names"].tolist()
        assert got["k"].tolist() == want["k"].tolist()
        assert got["cs"].tolist() == want["cs"].tolist()


def test_the_documented_layout(types: Dataset) -> None:
    cmp = types.find_type("cmp")
    stored = encode_records(convert_records(objects(("ab", 7)), cmp), cmp)
    assert stored[0] == b"\x02\x00\x00\x00ab\x07\x00\x00\x00"
    vl = types.find_type("outer")
    one = encode_records(records(types)[:1], vl)[0]
    assert one[:12] == b"\x02\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00"  # vlen: count, elements


def test_a_vlen_of_records_concatenates_them(types: Dataset) -> None:
    many = types.find_type("many")
    values = np.empty(2, object)
    values[0], values[1] = records(types), records(types)[:0]
    stored = encode_records(values, many)
    assert stored[1] == b""
    back = decode_records(stored, many)
    assert len(back[0]) == 2 and len(back[1]) == 0
    assert back[0][1]["names"].tolist() == ["", "é", "x"]


def test_never_written_is_the_zero_record_with_null_strings(types: Dataset) -> None:
    outer = types.find_type("outer")
    empty = decode_records(np.array([b"", None], object), outer)
    assert empty[0]["c"].tolist() == (None, 0)  # ncdump's NIL, as netCDF-4's zero fill
    assert empty[1]["names"].tolist() == [None, None, None]
    assert empty[0]["v"].tolist() == [] and empty[0]["cs"].tolist() == [(None, 0), (None, 0)]
    again = encode_records(empty, outer)
    assert again[0].startswith(b"\x00\x00\x00\x00\xff\xff\xff\xff")  # no elements, then a NULL string
    assert decode_records(again, outer)[1]["names"].tolist() == [None, None, None]


@pytest.mark.parametrize(
    "data",
    [b"\x05", b"\x09\x00\x00\x00ab\x07\x00\x00\x00", b"\x02\x00\x00\x00ab\x07\x00", b"\x00\x00\x00\x00\x01\x00\x00\x00\xff"],
)
def test_bad_bytes_are_refused(types: Dataset, data: bytes) -> None:
    with pytest.raises(RecordDecodeError):
        decode_records(np.array([data], object), types.find_type("cmp"))


def test_a_huge_count_is_refused_before_allocating(types: Dataset) -> None:
    with pytest.raises(RecordDecodeError, match="runs past the end"):
        decode_records(np.array([b"\xff\xff\xff\x7f"], object), types.find_type("outer"))
