"""Strings and netCDF character ('S1') arrays, both ways, as netCDF4's ``stringtochar``,
``chartostring`` and ``stringtoarr`` convert them (public as ``nczarr.stringtochar`` ...)."""

from __future__ import annotations

import numpy as np

from nczarr.errors import ArgumentError, SelectionError

#: Encodings that mean "raw bytes, no text conversion".
RAW_ENCODINGS = ("none", "None", "bytes")


def _default_encoding(kind: str, encoding: str | None) -> str:
    if encoding is not None:
        return encoding
    return "ascii" if kind == "S" else "utf-8"


def stringtochar(a: np.ndarray, encoding: str | None = None, n_strlen: int | None = None) -> np.ndarray:
    """An 'S'/'U' array as an 'S1' array with one more dimension of ``n_strlen`` bytes
    (default: the item size), each string encoded, then padded with NULs or cut."""
    kind = a.dtype.kind
    if kind not in ("S", "U"):
        raise ArgumentError("type must string or unicode ('S' or 'U')")
    encoding = _default_encoding(kind, encoding)
    if n_strlen is None:
        n_strlen = a.dtype.itemsize
    # a masked array's missing strings are its fill value, as netCDF4 takes them (tobytes)
    flat = np.ma.filled(a).reshape(-1)
    items: list[bytes]
    if kind == "S":
        if encoding == "ascii":
            a.tobytes().decode("ascii")  # netCDF4 refuses non-ASCII bytes here
        items = flat.tolist()
    else:
        codec = "utf-8" if encoding in RAW_ENCODINGS else encoding
        items = [s.encode(codec) for s in flat.tolist()]
    out = np.array([s.ljust(n_strlen, b"\0")[:n_strlen] for s in items], dtype=f"S{max(n_strlen, 1)}")
    return out.view("S1").reshape((*a.shape, n_strlen)) if n_strlen else np.zeros((*a.shape, 0), "S1")


def chartostring(b: np.ndarray, encoding: str | None = None) -> np.ndarray:
    """An 'S1'/'U1' array as a string array without its last dimension: 'U<n>' decoded
    with ``encoding``, or 'S<n>' raw bytes for the 'none'/'bytes' encodings."""
    kind = b.dtype.kind
    if kind not in ("S", "U"):
        raise ArgumentError("type must be string or unicode ('S' or 'U')")
    if b.ndim == 0:
        raise SelectionError("chartostring needs an array with at least one dimension")
    if b.dtype.itemsize != np.dtype(f"{kind}1").itemsize:
        raise ArgumentError(f"chartostring needs an 'S1' or 'U1' array, not {b.dtype.str[1:]!r}")
    encoding = _default_encoding(kind, encoding)
    n = b.shape[-1]
    raw = kind == "S" and encoding in RAW_ENCODINGS
    if n == 0:
        return np.zeros(b.shape[:-1], "S1" if raw else "U1")
    b = np.ascontiguousarray(b)
    if kind == "U" or raw:
        return b.view(f"{kind}{n}").reshape(b.shape[:-1])
    # Whole fixed-width records are decoded, NUL padding included, as netCDF4 does.
    data = b.tobytes()
    texts = [data[i : i + n].decode(encoding) for i in range(0, len(data), n)]
    return np.array(texts, dtype=f"U{n}").reshape(b.shape[:-1])


def stringtoarr(string: str | bytes, NUMCHARS: int, dtype: str = "S") -> np.ndarray:
    """A 1-D 'S1' (or 'U1') array of ``NUMCHARS`` characters holding ``string``, padded
    with empty characters."""
    if dtype not in ("S", "U"):
        raise ArgumentError("dtype must string or unicode ('S' or 'U')")
    chars = [string[i : i + 1] for i in range(len(string))]
    if len(chars) > NUMCHARS:
        raise ArgumentError(f"could not broadcast input array from shape ({len(chars)},) into shape ({NUMCHARS},)")
    out = np.zeros(NUMCHARS, dtype + "1")
    out[: len(chars)] = chars
    return out
