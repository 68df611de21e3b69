"""Stored values and raw netCDF values, both ways, for each kind of type."""

from __future__ import annotations

import numpy as np

from nczarr.model import AtomicType
from nczarr.syntax import parse
from nczarr.values.stored import encoding_of, raw_dtype, raw_to_stored, stored_to_raw

TREE = parse(
    "dataset zarr 3 { compound rec { field short a  field char tag(2) }  vlen int ragged  "
    'variable string s { attribute char _Encoding = "latin-1" }  variable short big }'
)


def test_chars_and_strings() -> None:
    chars = stored_to_raw(np.array([104, 105], "u1"), AtomicType.CHAR, np.dtype("S1"))
    assert chars.tolist() == [b"h", b"i"]
    assert raw_to_stored(chars, AtomicType.CHAR, np.dtype("u1")).tolist() == [104, 105]
    variable = TREE.variables[0]
    assert encoding_of(variable) == "latin-1"
    fixed = np.array(["é".encode("latin-1"), b""], "S4")
    raw = stored_to_raw(fixed, AtomicType.STRING, np.dtype(object), encoding="latin-1")
    assert raw.tolist() == ["é", ""]
    assert raw_to_stored(raw, AtomicType.STRING, np.dtype("S4"), encoding="latin-1").tolist() == fixed.tolist()
    assert stored_to_raw(np.array([b"x"], object), AtomicType.STRING, np.dtype(object)).tolist() == ["x"]


def test_numbers_keep_the_byte_order_asked() -> None:
    dtype = raw_dtype(AtomicType.SHORT, "big")
    assert dtype == np.dtype(">i2")
    assert stored_to_raw(np.array([1, 2], "<i2"), AtomicType.SHORT, dtype).dtype == dtype


def test_compounds_and_vlens() -> None:
    rec, ragged = TREE.find_type("rec"), TREE.find_type("ragged")
    aligned = raw_dtype(rec)
    values = np.zeros(2, aligned)
    values["a"] = [1, -2]
    stored = raw_to_stored(values, rec, np.dtype("V4"))
    assert stored.dtype == np.dtype("V4")
    back = stored_to_raw(stored, rec, aligned)
    assert back.dtype == aligned and back["a"].tolist() == [1, -2]
    lists = np.empty(2, object)
    lists[:] = [np.array([1, 2], "i4"), np.array([], "i4")]
    stored = raw_to_stored(lists, ragged, np.dtype(object))
    assert stored.tolist() == [np.array([1, 2], "<i4").tobytes(), b""]
    assert [a.tolist() for a in stored_to_raw(stored, ragged, raw_dtype(ragged))] == [[1, 2], []]
