"""ZARR and ZARR_V2: reading any Zarr store without NCZarr keys (dimensions by name or
anonymous, inferred attribute types, netcdf-c's pure-Zarr scalars), and writing as xarray."""

from __future__ import annotations

import json

import pytest

from nczarr.errors import FormatError
from nczarr.formats.purezarr import PureZarr, PureZarrV2
from nczarr.formats.session import Session
from nczarr.model import AtomicType
from nczarr.store import MemoryStore
from nczarr.syntax import parse


def zarray(shape: list[int], dtype: str = "<i2", fill: object = 0) -> dict:
    return {
        "zarr_format": 2,
        "shape": shape,
        "chunks": shape or [],
        "dtype": dtype,
        "fill_value": fill,
        "order": "C",
        "compressor": None,
        "filters": None,
    }


def v2_store(docs: dict[str, dict]) -> MemoryStore:
    return MemoryStore({k: json.dumps(v).encode() for k, v in docs.items()})


def test_reads_v2_dimensions_and_inferred_attributes() -> None:
    store = v2_store(
        {
            ".zgroup": {"zarr_format": 2},
            ".zattrs": {
                "_NCProperties": "version=2,netcdf=4.10.1,nczarr=2.0.0",
                "n": 3,
                "big": 2**40,
                "mixed": [1, 2.5],
                "flag": True,
                "names": ["a", "b"],
                "nested": {"k": [1, 2]},
            },
            "b/.zarray": zarray([3, 2]),
            "b/.zattrs": {"_ARRAY_DIMENSIONS": ["y", "x"], "_FillValue": 5, "units": "m"},
            "a/.zarray": zarray([6]),
            "c/.zarray": zarray([3], ">S1", ""),
            "c/.zattrs": {"_ARRAY_DIMENSIONS": ["y"]},
            "s/.zarray": zarray([1], "<f8", "NaN"),
            "s/.zattrs": {"_ARRAY_DIMENSIONS": ["_scalar_"]},
            "g/.zgroup": {"zarr_format": 2},
            "g/v/.zarray": zarray([2]),
            "g/v/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
            "g/w/.zarray": zarray([4]),
            "g/w/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
        }
    )
    tree = PureZarrV2().read(store).dataset
    assert tree == parse(
        r"""
        dataset zarr 2 {
            dimension y = 3
            dimension x = 2
            variable short a(6)
            variable short b(y, x) {
                attribute short _FillValue = 5
                attribute char units = "m"
            }
            variable char c(y)
            variable double s
            attribute int n = 3
            attribute int64 big = 1099511627776
            attribute int mixed = 1, 2
            attribute ubyte flag = 1
            attribute char names = "[\"a\",\"b\"]"
            attribute char nested = "{\"k\": [1,2]}"
            group g {
                dimension x = 4
                variable short v(/x)
                variable short w(x)
            }
        }"""
    )
    # the _FillValue attribute is the one .zattrs holds, as netcdf-c 4.10.1 reads it


def test_one_name_two_lengths_in_a_group_is_an_unlimited_dimension_of_the_longer() -> None:
    # what a writer killed while growing a dimension leaves: each array has its own shape
    # (a dimension with a coordinate variable; without one, see test_wild_dimensions.py)
    store = v2_store(
        {
            ".zgroup": {"zarr_format": 2},
            "a/.zarray": zarray([2]),
            "a/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
            "b/.zarray": zarray([3]),
            "b/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
            "x/.zarray": zarray([2]),
            "x/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
        }
    )
    x = PureZarrV2().read(store).dataset.find_dimension("x")
    assert (x.size, x.unlimited) == (3, True)


def test_unsupported_data_type_leaves_out_the_array_naming_its_key(caplog: pytest.LogCaptureFixture) -> None:
    store = v2_store(
        {".zgroup": {"zarr_format": 2}, "c/.zarray": zarray([2], "<M8[M]", 0), "d/.zarray": zarray([2])}
    )
    assert [v.name for v in PureZarrV2().read(store).dataset.variables] == ["d"]
    assert [r.getMessage() for r in caplog.records] == [
        "c/.zarray: array left out: Zarr data type <M8[M] has no CF time unit (only W, D, h, m, s, ms, us, ns, unscaled)"
    ]


def test_root_must_be_a_group() -> None:
    store = v2_store({".zarray": zarray([2])})
    with pytest.raises(FormatError, match="the root of the store is not a Zarr v2 group"):
        PureZarrV2().read(store)


MODEL = r"""
dataset zarr 3 {
    dimension lat = 2
    variable float tas(lat, 3) {
        attribute float _FillValue = -1.5
        attribute double valid = 1.0, 2.0
    }
    variable char c(lat) {
        attribute char _FillValue = "#"
    }
    variable string s
    attribute char title = "t"
    attribute string many = "a", "b"
}
"""


def test_writes_v3_as_xarray() -> None:
    store = MemoryStore()
    Session.create(store, parse(MODEL), PureZarr()).close()
    tas = json.loads(store.get("tas/zarr.json"))
    assert tas["dimension_names"] == ["lat", "_Anonymous_Dim_3"]
    assert tas["attributes"] == {"_FillValue": "AAAAAAAA+L8=", "valid": [1.0, 2.0]}  # xarray: base64 double
    assert tas["fill_value"] == -1.5
    c = json.loads(store.get("c/zarr.json"))
    assert c["data_type"] == {"name": "null_terminated_bytes", "configuration": {"length_bytes": 1}}
    assert c["attributes"] == {"_FillValue": "Iw=="}
    root = json.loads(store.get("zarr.json"))["attributes"]
    # the type hint of what reading would infer otherwise (netcdf-c reads it, xarray hides it)
    assert root == {"title": "t", "many": ["a", "b"], "_nczarr_attrs": {"attribute_types": {"many": "string"}}}
    assert not any("_nczarr" in store.get(k).decode() for k in store.list() if k != "zarr.json")
    back = PureZarr().read(store).dataset
    assert back.find_variable("tas").attributes == parse(MODEL).find_variable("tas").attributes
    assert back.find_variable("tas").dimensions == ["lat", 3]
    assert back.find_variable("c").find_attribute("_FillValue").values == "#"
    assert back.find_attribute("many").values == ["a", "b"]


def test_writes_v2_as_xarray() -> None:
    store = MemoryStore()
    Session.create(store, parse(MODEL.replace("zarr 3", "zarr 2")), PureZarrV2()).close()
    tas = store.get("tas/.zattrs")
    # fill_value (xarray) and the _FillValue attribute (netcdf-c) both
    assert json.loads(tas) == {"_ARRAY_DIMENSIONS": ["lat", "_Anonymous_Dim_3"], "valid": [1.0, 2.0], "_FillValue": -1.5}
    assert json.loads(store.get("tas/.zarray"))["fill_value"] == -1.5
    assert json.loads(store.get("s/.zarray"))["dtype"] == "|O"
    back = PureZarrV2().read(store).dataset
    tas_back = back.find_variable("tas")
    assert [(a.name, a.type) for a in tas_back.attributes] == [
        ("_FillValue", AtomicType.FLOAT),  # from .zattrs, where the model has it
        ("valid", AtomicType.DOUBLE),
    ]


def test_problems() -> None:
    tree = parse(
        "dataset zarr 3 { dimension x = 2  enum byte e { a = 1 }  variable e v(x) "
        "group g { dimension x = 3  variable int w(/x) } }"
    )
    assert PureZarr().problems(tree) == [
        "/e: pure Zarr has no such user-defined type; use NCZARR",
        "/v: pure Zarr has no such user-defined type; use NCZARR",
        "/g/w: dimension /x is hidden by another 'x' nearer to the variable; pure Zarr names dimensions by their plain names",
    ]
