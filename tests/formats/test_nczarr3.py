"""NCZARR (NCZarr on Zarr v3): the documents, user-defined types, the variants netcdf-c's
experimental v3 code writes (§5), and what cannot be stored."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import zarr

from nczarr.errors import FormatError
from nczarr.formats.nczarr3 import Nczarr
from nczarr.formats.session import Session
from nczarr.model import AtomicType
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.syntax import parse
from nczarr.values.storage import VariableStorage

MODEL = r"""
dataset zarr 3 enhanced {
    dimension lat = 2
    dimension time = unlimited(3)
    enum short color { red = 1, green = 2 }
    opaque blob(3)
    compound point { field double x  field int y }
    compound cell { field float v(2)  field blob tag }
    vlen int ints
    variable float tas(time, lat) {
        attribute float scale = 0.5
        attribute char units = "K"
    }
    variable char code(lat)
    variable color paint(lat) {
        attribute color default = 2
    }
    variable blob raw(lat)
    variable point pts(lat)
    variable cell cells(lat)
    variable ints seqs(lat)
    group sub {
        opaque blob(1)
        variable point where(lat)
        attribute /blob mark = 0x0a0b0c, 0x000000
        attribute ints lists = [1, 2], []
    }
}
"""


def documents() -> dict[str, dict]:
    store = MemoryStore()
    Session.create(store, parse(MODEL), Nczarr(), {"/tas": VariableStorage(compression="zlib")}).close()
    return {k: json.loads(store.get(k)) for k in store.list() if k.endswith("zarr.json")}


def test_group_documents() -> None:
    root = documents()["zarr.json"]
    assert root["node_type"] == "group" and root["zarr_format"] == 3
    attrs = root["attributes"]
    assert attrs["_nczarr_superblock"] == {"version": "3.0.0"}
    group = attrs["_nczarr_group"]
    assert group["dimensions"] == {"lat": {"size": 2, "unlimited": 0}, "time": {"size": 3, "unlimited": 1}}
    assert group["arrays"] == ["tas", "code", "paint", "raw", "pts", "cells", "seqs"]
    assert group["groups"] == ["sub"]
    assert group["types"]["color"] == {"class": "enum", "base": "short", "members": {"red": 1, "green": 2}}
    assert group["types"]["cell"]["fields"][1] == {"name": "tag", "type": "/blob", "shape": []}
    sub = documents()["sub/zarr.json"]["attributes"]
    assert sub["mark"] == ["0a0b0c", "000000"]
    assert sub["_nczarr_attrs"] == {"attribute_types": {"mark": "/blob", "lists": "/ints"}}
    assert sub["_nczarr_group"]["types"] == {"blob": {"class": "opaque", "size": 1}}


def test_array_documents() -> None:
    docs = documents()
    tas = docs["tas/zarr.json"]
    assert tas["data_type"] == "float32" and tas["dimension_names"] == ["time", "lat"]
    assert [c["name"] for c in tas["codecs"]] == ["bytes", "gzip"]
    # the array extras are zarr.json members plain Zarr readers may ignore, not attributes
    assert tas["_nczarr_array"] == {"must_understand": False, "dimension_references": ["/time", "/lat"]}
    assert tas["_nczarr_attrs"] == {"must_understand": False, "attribute_types": {"scale": "float32", "units": "char"}}
    assert set(tas["attributes"]) == {"scale", "units"}
    code = docs["code/zarr.json"]
    assert code["data_type"] == "uint8" and code["_nczarr_array"]["nczarr_type"] == "char"
    assert docs["paint/zarr.json"]["data_type"] == "int16"
    assert docs["raw/zarr.json"]["data_type"] == {"name": "raw_bytes", "configuration": {"length_bytes": 3}}
    assert docs["pts/zarr.json"]["data_type"]["name"] == "structured"
    # array and opaque fields: raw bytes
    assert docs["cells/zarr.json"]["data_type"] == {
        "name": "raw_bytes",
        "configuration": {"length_bytes": 11},
    }
    assert docs["seqs/zarr.json"]["data_type"] == "variable_length_bytes"
    assert docs["sub/where/zarr.json"]["_nczarr_array"]["nczarr_type"] == "/point"


def test_round_trip_with_data(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "d.zarr")
    session = Session.create(store, parse(MODEL), Nczarr())
    tree = session.dataset
    pts = np.array([(1.5, 2), (3.5, 4)], dtype=[("x", "<f8"), ("y", "<i4")])
    session.array(tree.find_variable("pts"))[...] = pts
    session.array(tree.find_variable("paint"))[...] = [1, 2]
    session.close()
    again = Session.open(store, Nczarr(), read_only=True)
    assert again.dataset == parse(MODEL)
    np.testing.assert_array_equal(again.array(again.dataset.find_variable("pts"))[...], pts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(tmp_path / "d.zarr", mode="r")
        assert root["pts"][...].tolist() == pts.tolist()
        assert root["paint"][...].tolist() == [1, 2]
        assert root["raw"].shape == (2,) and root["seqs"].shape == (2,)


#: A root group and an array as netcdf-c's experimental v3 writer lays them out (§5.2, §5.3).
FORK = {
    "zarr.json": {
        "node_type": "group",
        "zarr_format": 3,
        "attributes": {
            "scale": 1.5,
            "title": "demo",
            "js": {"a": [1, 2]},
            "_NCProperties": "version=2,netcdf=4.10.2,nczarr=3.0.0",
            "_nczarr_group": {
                "dimensions": {"lat": {"size": 2, "unlimited": 0}, "time": {"size": 3, "unlimited": 1}},
                "arrays": ["tas", "c", "s"],
                "groups": [],
            },
            "_nczarr_superblock": {"version": "3.0.0"},
            "_nczarr_attrs": {
                "attribute_types": {
                    "scale": "float64",
                    "title": "char",
                    "js": "json",
                    "_NCProperties": "char",
                    "_nczarr_group": "json",
                    "_nczarr_superblock": "json",
                    "_nczarr_attrs": "json",
                }
            },
        },
    },
    "tas/zarr.json": {
        "node_type": "array",
        "zarr_format": 3,
        "data_type": "float32",
        "fill_value": 9.96921e36,
        "shape": [3, 2],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "dimension_names": ["time", "lat"],
        "codecs": [
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "shuffle"},
            {"name": "zlib", "configuration": {"level": 4}},
        ],
        "attributes": {
            "_FillValue": 9.96921e36,
            "_ARRAY_DIMENSIONS": ["time", "lat"],
            "_nczarr_array": {"dimension_references": ["/time", "/lat"], "storage": "chunked"},
            "_nczarr_attrs": {
                "attribute_types": {
                    "_FillValue": "float32",
                    "_ARRAY_DIMENSIONS": "json",
                    "_nczarr_array": "json",
                    "_nczarr_attrs": "json",
                }
            },
        },
    },
    "c/zarr.json": {
        "node_type": "array",
        "zarr_format": 3,
        "data_type": "uint8",
        "fill_value": "",
        "shape": [2],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "dimension_names": ["lat"],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {"_nczarr_array": {"dimension_references": ["/lat"], "nczarr_type": "char"}},
    },
    "s/zarr.json": {
        "node_type": "array",
        "zarr_format": 3,
        "data_type": "r64",
        "fill_value": "",
        "shape": [2],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "dimension_names": ["lat"],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {"_nczarr_array": {"dimension_references": ["/lat"], "nczarr_type": "string"}},
    },
}


def test_reads_the_experimental_netcdf_c_layout() -> None:
    store = MemoryStore({k: json.dumps(v).encode() for k, v in FORK.items()})
    stored = Nczarr().read(store)
    tree = stored.dataset
    assert tree == parse(
        "dataset zarr 3 { dimension lat = 2  dimension time = unlimited(3) "
        "variable float tas(time, lat) { attribute float _FillValue = 9.96921e36 } "
        "variable char c(lat)  variable string s(lat) "
        'attribute double scale = 1.5  attribute char title = "demo"  attribute char js = "{\\"a\\": [1,2]}" }'
    )
    storage = stored.storage["/tas"]
    assert (storage.shuffle, storage.compression, storage.complevel) == (True, "zlib", 4)
    assert stored.arrays["/s"].data_type.dtype.itemsize == 8


def test_problems() -> None:
    tree = parse(
        "dataset zarr 3 { vlen string words  compound rec { field words w }  "
        "enum float bad { a = 1 }  compound lost { field gone g }  variable nothing v }"
    )
    # a vlen of strings and a compound holding one are stored (the record encoding)
    assert Nczarr().problems(tree) == [
        "/bad: enum base float is not an integer type",
        "/lost: field 'g' of type gone does not resolve",
        "/v: type 'nothing' does not resolve",
    ]


def test_errors_name_the_key() -> None:
    docs = json.loads(json.dumps(FORK))
    docs["zarr.json"]["attributes"]["_nczarr_group"]["arrays"].append("gone")
    with pytest.raises(FormatError, match="^gone/zarr.json: missing$"):
        Nczarr().read(MemoryStore({k: json.dumps(v).encode() for k, v in docs.items()}))
    docs = json.loads(json.dumps(FORK))
    docs["tas/zarr.json"]["attributes"]["_nczarr_array"]["dimension_references"] = ["/time"]
    with pytest.raises(FormatError, match=r"^tas/zarr.json: dimension references \["):
        Nczarr().read(MemoryStore({k: json.dumps(v).encode() for k, v in docs.items()}))


def test_fill_disabled_is_kept() -> None:
    tree = parse("dataset zarr 3 { dimension x = 2  variable int v(x) }")
    store = MemoryStore()
    Session.create(store, tree, Nczarr(), {"/v": VariableStorage(fill=False)}).close()
    assert Nczarr().read(store).storage["/v"].fill is False
    assert Nczarr().read(store).dataset.find_variable("v").type is AtomicType.INT
