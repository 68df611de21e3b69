"""Conventions by name, and detecting the convention of a store from its root."""

from __future__ import annotations

import json

import pytest

from nczarr.formats import CONVENTIONS, FormatError, convention, detect
from nczarr.formats.session import Session
from nczarr.store import MemoryStore
from nczarr.syntax import parse

TREE = 'dataset zarr 3 { dimension x = 2  variable int v(x)  attribute char title = "t" }'


def test_conventions_by_name() -> None:
    assert list(CONVENTIONS) == ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2", "ZARR_V3_DRAFT"]
    assert convention().name == "NCZARR"
    assert convention("nczarr_v2", byte_compatible=True).byte_compatible is True  # type: ignore[attr-defined]
    assert [CONVENTIONS[n].zarr_format for n in CONVENTIONS] == [3, 2, 3, 2, 3]
    with pytest.raises(
        FormatError, match="^unknown format 'HDF5'; use one of NCZARR, NCZARR_V2, ZARR, ZARR_V2, ZARR_V3_DRAFT$"
    ):
        convention("HDF5")


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_detects_what_each_convention_writes(name: str) -> None:
    store = MemoryStore()
    Session.create(store, parse(TREE), convention(name)).close()
    assert detect(store).name == name


@pytest.mark.parametrize(
    ("root", "name"),
    [
        ({".zgroup": {"zarr_format": 2, "_NCZARR_SUPERBLOCK": {"version": "2.0.0"}}}, "NCZARR_V2"),
        ({".zgroup": {"zarr_format": 2, "_nczarr_superblock": {"version": "2.0.0"}}}, "NCZARR_V2"),
        ({".zgroup": {"zarr_format": 2}, ".nczarr": {"nczarr_version": "1.0.0"}}, "NCZARR_V2"),
        ({".zgroup": {"zarr_format": 2}, ".zattrs": {"_NCProperties": "version=2"}}, "ZARR_V2"),
        ({"zarr.json": {"zarr_format": 3, "node_type": "group", "attributes": {}}}, "ZARR"),
    ],
)
def test_detects_older_and_foreign_layouts(root: dict, name: str) -> None:
    store = MemoryStore({k: json.dumps(v).encode() for k, v in root.items()})
    assert detect(store).name == name


def test_nothing_zarr_names_the_store() -> None:
    store = MemoryStore({"data.txt": b"hello"})
    with pytest.raises(FormatError, match=r"^MemoryStore\(.*\) holds no Zarr dataset"):
        detect(store)
    store = MemoryStore({"zarr.json": json.dumps({"zarr_format": 3, "node_type": "array"}).encode()})
    with pytest.raises(FormatError, match="the root is a Zarr array, not a group"):
        detect(store)
