"""Stored values and raw netCDF values of a variable, both ways.

What an engine array holds is a convention's stored form (``uint8`` chars in NCZarr v3,
``S<n>`` strings in NCZarr v2, packed records or raw bytes for compounds, bytes for vlen
elements); raw netCDF values are what netCDF4 shows before its automatic conversions: the
type's dtype in the variable's byte order, ``S1`` chars, ``str`` objects for strings,
C-aligned records, object arrays of 1-D arrays for vlens.
"""

from __future__ import annotations

import numpy as np

from nczarr.model import AtomicType, CompoundType, Resolver, UserType, Variable, VlenType
from nczarr.values.types import compound_dtype, element_dtype, value_dtype

#: The encoding of text without an ``_Encoding`` attribute.
DEFAULT_ENCODING = "utf-8"


def encoding_of(variable: Variable) -> str:
    """The text encoding a variable's ``_Encoding`` attribute names (else UTF-8)."""
    attribute = variable.find_attribute("_Encoding")
    if attribute is None:
        return DEFAULT_ENCODING
    values = attribute.values
    return values if isinstance(values, str) else str(values[0])


def raw_dtype(type: AtomicType | UserType, endian: str = "native", *, resolver: Resolver | None = None) -> np.dtype:
    """The dtype of a variable's raw values: its type's dtype as netCDF4 shows it, numbers
    (also an enum's) in the ``endian`` byte order ("native", "little", "big"); for a vlen
    the dtype of its elements."""
    dtype = element_dtype(type, packed=False, resolver=resolver) if isinstance(type, VlenType) else value_dtype(
        type, resolver=resolver
    )
    if endian != "native" and dtype.kind in "iuf":
        dtype = dtype.newbyteorder(">" if endian == "big" else "<")
    return dtype


def stored_to_raw(
    stored: np.ndarray,
    type: AtomicType | UserType,
    dtype: np.dtype,
    *,
    encoding: str = DEFAULT_ENCODING,
    resolver: Resolver | None = None,
) -> np.ndarray:
    """The raw netCDF values of what an engine array gave for a variable of ``type``
    (resolved), ``dtype`` its :func:`raw_dtype`; strings decoded with ``encoding``."""
    if type is AtomicType.CHAR:
        return stored.view("S1") if stored.dtype != np.dtype("S1") else stored
    if type is AtomicType.STRING:
        return _strings(stored, encoding)
    if isinstance(type, CompoundType):
        if stored.dtype.kind == "c":  # a Zarr complex read as netCDF4's complex compound
            stored = stored.astype(stored.dtype.newbyteorder("<"))
        if stored.dtype.fields is None:
            stored = stored.view(compound_dtype(type, packed=True, resolver=resolver))
        return stored.astype(dtype)
    if isinstance(type, VlenType):
        base = element_dtype(type, packed=True, resolver=resolver)
        out = np.empty(stored.shape, object)
        flat = out.reshape(-1)
        for i, item in enumerate(stored.reshape(-1)):
            flat[i] = np.frombuffer(item or b"", base).astype(dtype)
        return out
    if isinstance(type, AtomicType) or dtype.kind in "iu":  # numbers and enums
        return stored if stored.dtype == dtype else stored.astype(dtype)
    return stored  # opaque


def raw_to_stored(
    values: np.ndarray,
    type: AtomicType | UserType,
    stored_dtype: np.dtype,
    *,
    encoding: str = DEFAULT_ENCODING,
    resolver: Resolver | None = None,
) -> np.ndarray:
    """Raw netCDF values of a variable of ``type`` (resolved) in the form an engine array
    of ``stored_dtype`` holds (the reverse of :func:`stored_to_raw`)."""
    if type is AtomicType.CHAR:
        return values.view(stored_dtype) if stored_dtype != values.dtype else values
    if type is AtomicType.STRING:
        if stored_dtype.kind == "S":
            encoded = [s.encode(encoding) for s in values.reshape(-1)]
            return np.array(encoded, stored_dtype).reshape(values.shape)
        return values
    if isinstance(type, CompoundType):
        out = values.astype(compound_dtype(type, packed=True, resolver=resolver))
        if stored_dtype.kind == "c":  # packed records are little-endian
            return out.view(stored_dtype.newbyteorder("<"))
        return out if stored_dtype.fields is not None else out.view(stored_dtype)
    if isinstance(type, VlenType):
        base = element_dtype(type, packed=True, resolver=resolver)
        out = np.empty(values.shape, object)
        flat = out.reshape(-1)
        for i, item in enumerate(values.reshape(-1)):
            flat[i] = np.asarray(item).astype(base).tobytes()
        return out
    return values


def _strings(stored: np.ndarray, encoding: str) -> np.ndarray:
    """Strings as an object array of ``str``: fixed-length bytes (NUL-padded) and
    variable-length bytes decoded, ``str`` kept."""
    if stored.dtype.kind == "S":
        out = np.empty(stored.shape, object)
        flat = out.reshape(-1)
        for i, item in enumerate(stored.reshape(-1)):
            flat[i] = item.decode(encoding, "replace")
        return out
    out = stored if stored.dtype == object else stored.astype(object)
    if any(isinstance(s, bytes) for s in out.reshape(-1)[:1]):
        out = np.array([s.decode(encoding, "replace") for s in out.reshape(-1)], object).reshape(out.shape)
    return out
