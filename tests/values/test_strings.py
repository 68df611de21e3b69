"""stringtochar/chartostring/stringtoarr against netCDF4's functions."""

from __future__ import annotations

import netCDF4
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nczarr.errors import NCZarrError
from nczarr.values.strings import chartostring, stringtoarr, stringtochar


def outcome(f):
    try:
        return f()
    except Exception as exc:
        return exc


def assert_same(theirs, ours, what):
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        if isinstance(theirs, UnicodeError):
            assert isinstance(ours, UnicodeError), (what, theirs, ours)
            return
        assert isinstance(ours, type(theirs)), (what, theirs, ours)
        assert isinstance(ours, NCZarrError), (what, ours)
        assert str(ours) == str(theirs), what
        return
    assert theirs.dtype == ours.dtype and theirs.shape == ours.shape, (what, theirs, ours)
    np.testing.assert_array_equal(theirs, ours, err_msg=repr(what))


ASCII = [["ab", "c"], ["", "abcd"], ["x"], []]
UNICODE = [["é", "ab"], ["日本語", ""], ["a\u00ff", "z"]]


@pytest.mark.parametrize("rows", ASCII + UNICODE)
def test_stringtochar_1d(rows):
    for dtype in ("S", "U"):
        try:
            a = np.array(rows, dtype=dtype) if rows else np.array([], "S3" if dtype == "S" else "U3")
        except UnicodeEncodeError:
            continue
        for kw in ({}, {"encoding": "ascii"} if dtype == "S" else {}, {"n_strlen": 2}, {"n_strlen": 7},
                   {"encoding": "utf-8", "n_strlen": a.dtype.itemsize}, {"encoding": "latin-1"}):
            other_length = "n_strlen" in kw and kw["n_strlen"] != a.dtype.itemsize
            if dtype == "S" and (other_length or ("encoding" in kw and kw["encoding"] != "ascii")):
                continue  # netCDF4 fails there (reshape / bytes.encode); see the deviation tests
            if not a.size and dtype == "U":
                continue  # netCDF4 returns float64 for empty unicode input
            assert_same(outcome(lambda: netCDF4.stringtochar(a, **kw)), outcome(lambda: stringtochar(a, **kw)), (a, kw))


@pytest.mark.parametrize("shape", [(2, 3), (1, 2, 2), ()])
def test_stringtochar_bytes_multidim(shape):
    words = np.array([b"ab", b"", b"xyz", b"q", b"ok", b"a"][: int(np.prod(shape))], "S3").reshape(shape)
    assert_same(netCDF4.stringtochar(words), stringtochar(words), shape)


def test_stringtochar_errors():
    for bad in (np.array([1, 2]), np.array([1.5])):
        assert_same(outcome(lambda: netCDF4.stringtochar(bad)), outcome(lambda: stringtochar(bad)), bad)
    nonascii = np.array([b"\xe9a"], "S2")
    assert_same(outcome(lambda: netCDF4.stringtochar(nonascii)), outcome(lambda: stringtochar(nonascii)), nonascii)
    cjk = np.array(["日本"])
    assert_same(
        outcome(lambda: netCDF4.stringtochar(cjk, encoding="ascii")),
        outcome(lambda: stringtochar(cjk, encoding="ascii")),
        cjk,
    )


def test_stringtochar_where_netcdf4_breaks():
    """Cases where netCDF4 raises by accident or returns garbage get the meaningful result."""
    u2d = np.array([["ab", "é"], ["", "xyz"]])
    out = stringtochar(u2d, n_strlen=3)
    assert out.shape == (2, 2, 3) and out[0, 1].tobytes() == "é".encode() + b"\0"
    assert stringtochar(np.array(["ab"]), encoding="none").tolist() == [[b"a", b"b", b"", b"", b"", b"", b"", b""]]
    assert stringtochar(np.array([b"ab", b"c"]), encoding="bytes", n_strlen=3).tolist() == [
        [b"a", b"b", b""], [b"c", b"", b""],
    ]
    assert stringtochar(np.array(["ab"]), n_strlen=0).shape == (1, 0)
    assert stringtochar(np.array([], "U2")).shape == (0, 8)
    assert stringtochar(np.array("ab", "U2"), n_strlen=2).tolist() == [b"a", b"b"]


CHAR_ARRAYS = [
    np.array([[b"a", b"b"], [b"c", b""]]),
    np.array([[[b"a", b"b"], [b"c", b""]]]),
    np.array([b"a", b"b"]),
    np.array([[b"\xc3", b"\xa9", b""]]),
    np.array([[b"", b"", b""]]),
    np.zeros((0, 3), "S1"),
    np.zeros((2, 0, 3), "S1"),
    np.array([[b"a", b"", b"b"]]),
]


@pytest.mark.parametrize("b", CHAR_ARRAYS, ids=lambda b: str(b.shape))
def test_chartostring(b):
    for kw in ({}, {"encoding": "utf-8"}, {"encoding": "none"}, {"encoding": "bytes"}, {"encoding": "latin-1"}):
        assert_same(outcome(lambda: netCDF4.chartostring(b, **kw)), outcome(lambda: chartostring(b, **kw)), (b, kw))


def test_chartostring_errors_and_unicode_input():
    for bad in (np.array([[1]]), np.array([[b"\xc3"]])):
        assert_same(outcome(lambda: netCDF4.chartostring(bad)), outcome(lambda: chartostring(bad)), bad)
    truncated = np.array([[b"\xc3"]])
    assert_same(
        outcome(lambda: netCDF4.chartostring(truncated, encoding="utf-8")),
        outcome(lambda: chartostring(truncated, encoding="utf-8")),
        truncated,
    )
    # netCDF4 cannot join 'U1' arrays (it decodes their UTF-32 bytes); nczarr joins them.
    assert chartostring(np.array([["a", "b"], ["é", ""]])).tolist() == ["ab", "é"]
    with pytest.raises(IndexError):
        chartostring(np.array(b"a"))
    with pytest.raises(ValueError):
        chartostring(np.array([[b"ab"]]))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(max_size=5), min_size=1, max_size=6),
    st.sampled_from(["utf-8", "utf-16-le", "latin-1"]),
)
def test_round_trip_generated(words, encoding):
    a = np.array(words)
    theirs = outcome(lambda: netCDF4.stringtochar(a, encoding=encoding))
    ours = outcome(lambda: stringtochar(a, encoding=encoding))
    assert_same(theirs, ours, (words, encoding))
    if isinstance(ours, Exception):
        return
    width = max(len(w.encode(encoding)) for w in words) or 1
    chars = stringtochar(a, encoding=encoding, n_strlen=width)
    assert_same(netCDF4.stringtochar(a, encoding=encoding, n_strlen=width), chars, (words, width))
    back = outcome(lambda: netCDF4.chartostring(chars, encoding=encoding))
    assert_same(back, outcome(lambda: chartostring(chars, encoding=encoding)), (words, encoding))


def test_stringtoarr():
    for args in [("abc", 5), ("abé", 4, "U"), ("", 3), ("", 0), ("abc", 3), ("abcdef", 3), ("ab", 3, "f"), ("abé", 4)]:
        assert_same(outcome(lambda: netCDF4.stringtoarr(*args)), outcome(lambda: stringtoarr(*args)), args)
    # netCDF4 turns bytes into the digits of their values; nczarr keeps the bytes.
    assert stringtoarr(b"ab", 3).tolist() == [b"a", b"b", b""]
