"""The one table of netCDF types and numpy dtypes, and of default fill values."""

from __future__ import annotations

import netCDF4
import numpy as np
import pytest

from nczarr.errors import UnsizedTypeError
from nczarr.model import AtomicType
from nczarr.syntax import parse
from nczarr.values.types import (
    DEFAULT_FILL,
    atomic_type_of,
    compound_dtype,
    default_fill,
    default_fillvals,
    dtype_of,
    element_dtype,
    numpy_dtype,
    value_dtype,
)


def test_default_fills_are_netcdf4s() -> None:
    assert default_fillvals == netCDF4.default_fillvals
    assert list(default_fillvals) == list(netCDF4.default_fillvals)
    for type, value in DEFAULT_FILL.items():
        if type.is_integer or type.is_float:
            assert default_fill(dtype_of(type).newbyteorder(">")) == value
    assert default_fill(np.dtype("U3")) is None


@pytest.mark.parametrize("type", [t for t in AtomicType if t is not AtomicType.STRING])
def test_dtypes_round_trip(type: AtomicType) -> None:
    assert atomic_type_of(numpy_dtype(type, "big")) is type
    assert atomic_type_of(dtype_of(type)) is type
    assert dtype_of(type).isnative


def test_strings() -> None:
    assert numpy_dtype(AtomicType.STRING) == np.dtype(object)
    assert numpy_dtype(AtomicType.STRING, strlen=5) == np.dtype("S5")
    assert dtype_of(AtomicType.STRING) == np.dtype(object)
    assert atomic_type_of(np.dtype("S2")) is None


TYPES = parse(
    "dataset zarr 3 { enum short e { a = 1 }  opaque o(3)  vlen double v  "
    "compound inner { field byte b  field e k }  "
    "compound rec { field char name(4)  field double x  field inner i  field o blob }  "
    "vlen rec vr  compound bad { field v w } }"
)


def _type(name: str):
    return TYPES.find_type(name)


def test_compound_views() -> None:
    rec = _type("rec")
    aligned = compound_dtype(rec)
    assert aligned.isalignedstruct and aligned["name"] == np.dtype(("S1", (4,)))
    assert compound_dtype(rec, view=True)["name"] == np.dtype("S4")
    packed = compound_dtype(rec, packed=True)
    assert packed.itemsize == 4 + 8 + 1 + 2 + 3
    assert packed["x"] == np.dtype("<f8")
    assert value_dtype(rec) == aligned


def test_user_types() -> None:
    assert value_dtype(_type("e")) == np.dtype("i2")
    assert value_dtype(_type("o")) == np.dtype("V3")
    assert value_dtype(_type("v")) == np.dtype(object)
    assert element_dtype(_type("v"), packed=False) == np.dtype("f8")
    assert element_dtype(_type("vr"), packed=True) == compound_dtype(_type("rec"), packed=True)


def test_unsized_field() -> None:
    assert compound_dtype(_type("bad"))["w"] == np.dtype(object)  # a vlen field: an object
    with pytest.raises(UnsizedTypeError, match="field 'w' of type v has no fixed size"):
        compound_dtype(_type("bad"), packed=True)
