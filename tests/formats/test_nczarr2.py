"""NCZARR_V2 without the wheel: netcdf-c's golden example byte for byte, the older layouts
netcdf-c wrote, what cannot be stored, and errors that name the key at fault."""

# ruff: noqa: E501 (the golden documents are verbatim, one a line)
from __future__ import annotations

import json

import numpy as np
import pytest

from nczarr.errors import FormatError
from nczarr.formats.nczarr2 import NczarrV2
from nczarr.formats.session import Session
from nczarr.store import MemoryStore
from nczarr.syntax import dump, parse
from nczarr.values.storage import VariableStorage

#: Reference notes, Appendix A: every metadata object netcdf-c 4.10.1 wrote, verbatim.
GOLDEN = {
    ".zgroup": '{"zarr_format": 2}',
    ".zattrs": '{"title": "golden", "_NCProperties": "version=2,netcdf=4.10.1,nczarr=2.0.0", "_nczarr_group": {"dimensions": {"time": {"size": 2, "unlimited": 1}, "lat": 2}, "arrays": ["time","tas"], "groups": ["sub"]}, "_nczarr_superblock": {"version": "2.0.0"}, "_nczarr_attr": {"types": {"title": ">S1", "_NCProperties": ">S1", "_nczarr_group": "|J0", "_nczarr_superblock": "|J0", "_nczarr_attr": "|J0"}}}',
    "time/.zarray": '{"zarr_format": 2, "shape": [2], "dtype": "<f8", "chunks": [512], "fill_value": 9.96921e+36, "order": "C", "compressor": null, "filters": null}',
    "time/.zattrs": '{"units": "days since 2000-01-01", "_ARRAY_DIMENSIONS": ["time"], "_nczarr_array": {"dimension_references": ["/time"], "storage": "chunked"}, "_nczarr_attr": {"types": {"units": ">S1", "_nczarr_array": "|J0", "_nczarr_attr": "|J0"}}}',
    "tas/.zarray": '{"zarr_format": 2, "shape": [2,2], "dtype": "<f4", "chunks": [1,2], "fill_value": -999, "order": "C", "compressor": null, "filters": null}',
    "tas/.zattrs": '{"_FillValue": -999, "long_name": "air temperature", "_ARRAY_DIMENSIONS": ["time","lat"], "_nczarr_array": {"dimension_references": ["/time","/lat"], "storage": "chunked"}, "_nczarr_attr": {"types": {"_FillValue": "<f4", "long_name": ">S1", "_nczarr_array": "|J0", "_nczarr_attr": "|J0"}}}',
    "sub/.zgroup": '{"zarr_format": 2}',
    "sub/.zattrs": '{"_nczarr_group": {"dimensions": {}, "arrays": ["n"], "groups": []}, "_nczarr_attr": {"types": {"_nczarr_group": "|J0", "_nczarr_attr": "|J0"}}}',
    "sub/n/.zarray": '{"zarr_format": 2, "shape": [2], "dtype": "<i2", "chunks": [2], "fill_value": -32767, "order": "C", "compressor": null, "filters": null}',
    "sub/n/.zattrs": '{"_ARRAY_DIMENSIONS": ["lat"], "_nczarr_array": {"dimension_references": ["/lat"], "storage": "chunked"}, "_nczarr_attr": {"types": {"_nczarr_array": "|J0", "_nczarr_attr": "|J0"}}}',
}
GOLDEN_MODEL = """
dataset zarr 2 enhanced {
    dimension time = unlimited(2)
    dimension lat = 2
    variable double time(time) {
        attribute char units = "days since 2000-01-01"
    }
    variable float tas(time, lat) {
        attribute float _FillValue = -999.0
        attribute char long_name = "air temperature"
    }
    attribute char title = "golden"
    group sub {
        variable short n(lat)
    }
}
"""


def store_of(documents: dict[str, object]) -> MemoryStore:
    return MemoryStore(
        {k: v if isinstance(v, bytes) else json.dumps(v).encode() for k, v in documents.items()}
    )


def test_golden_documents_byte_for_byte() -> None:
    store = MemoryStore()
    Session.create(store, parse(GOLDEN_MODEL), NczarrV2(byte_compatible=True)).close()
    written = {k: store.get(k).decode() for k in store.list()}
    assert written == GOLDEN


def test_golden_read() -> None:
    store = MemoryStore({k: v.encode() for k, v in GOLDEN.items()})
    store.set("tas/0.0", np.array([280.5, 281.25], "<f4").tobytes())
    session = Session.open(store, NczarrV2(), read_only=True)
    assert session.dataset == parse(GOLDEN_MODEL)
    tas = session.dataset.find_variable("tas")
    np.testing.assert_array_equal(session.array(tas)[...], [[280.5, 281.25], [-999, -999]])
    # what is read is what counts as written: nothing to write back
    assert NczarrV2(byte_compatible=True).documents(session.stored) == {
        k: v.encode() for k, v in GOLDEN.items()
    }


class _ReadCounting(MemoryStore):
    """A MemoryStore that records every key asked for by a batch read."""

    def __init__(self, data: dict[str, bytes]) -> None:
        super().__init__(data)
        self.asked: list[str] = []

    def _get_many(self, keys: list[str], byte_range: tuple[int, int | None] | None = None) -> dict[str, bytes]:
        self.asked += keys
        return super()._get_many(keys, byte_range)


def test_opening_reads_two_documents_a_node() -> None:
    """Without consolidated metadata, a group listed by its parent is read as its .zgroup
    and .zattrs, an array as its .zarray and .zattrs: no .zarray of a group nor .zgroup of
    an array (on an object store, each is a request)."""
    store = _ReadCounting({k: v.encode() for k, v in GOLDEN.items()})
    Session.open(store, NczarrV2(), read_only=True).close()
    nodes = {key.rpartition("/")[0] for key in GOLDEN}
    asked = [key for key in store.asked if key.rpartition("/")[0] in nodes - {""}]
    assert sorted(asked) == sorted(key for key in GOLDEN if "/" in key)


def test_default_output_is_exact() -> None:
    store = MemoryStore()
    Session.create(store, parse(GOLDEN_MODEL), NczarrV2()).close()
    assert b'"fill_value": 9.969209968386869e+36' in store.get("time/.zarray")
    assert b'"_NCProperties": "version=2,nczarr=2.0.0,nczarr-python=' in store.get(".zattrs")


def test_storage_settings_are_written_as_netcdf_c() -> None:
    tree = parse("dataset zarr 2 { dimension x = 4  variable int v(x) }")
    storage = VariableStorage(
        compression="zlib", complevel=2, shuffle=True, fletcher32=True, endian="big", fill=False
    )
    docs = NczarrV2().documents(_stored(tree, storage))
    zarray = json.loads(docs["v/.zarray"])
    assert zarray["dtype"] == ">i4" and zarray["fill_value"] is None
    assert zarray["filters"] == [{"id": "shuffle", "elementsize": 4}, {"id": "zlib", "level": 2}]
    assert zarray["compressor"] == {"id": "fletcher32"}


def _stored(tree, storage):  # type: ignore[no-untyped-def]
    from nczarr.formats.base import StoredDataset

    return StoredDataset(tree, {"/v": storage})


def test_user_types_are_refused() -> None:
    tree = parse(
        "dataset zarr 2 { compound c { field int a }  dimension x = 2  variable c v(x) "
        "{ attribute c att = {1} } }"
    )
    problems = NczarrV2().problems(tree)
    assert problems == [
        "/c: user-defined types cannot be stored in NCZARR_V2 (netcdf-c cannot read them from Zarr); use NCZARR",
        "/v: variable of user-defined type c cannot be stored in NCZARR_V2; use NCZARR",
        "/v:att: attribute of user-defined type c cannot be stored in NCZARR_V2; use NCZARR",
    ]
    with pytest.raises(FormatError, match="cannot hold this dataset"):
        Session.create(MemoryStore(), tree, NczarrV2())


def test_names_and_reserved_attributes_are_refused() -> None:
    tree = parse("dataset zarr 2 { dimension x = 2  variable int v(x) { attribute int _nczarr_array = 1 } }")
    tree.find_variable("v").name = "a/b"
    tree.add_group(".hidden")
    assert NczarrV2().problems(tree) == [
        "/a\\/b: name 'a/b' cannot be a Zarr key (no '/', no leading '.')",
        "/.hidden: name '.hidden' cannot be a Zarr key (no '/', no leading '.')",
        "/a\\/b:_nczarr_array: attribute name '_nczarr_array' is reserved",
    ]


#: netcdf-c 4.9.0 (§3.2): upper-case keys inside .zgroup/.zarray, <U1 char, "scalar" storage.
LAYOUT_490 = {
    ".zgroup": {
        "zarr_format": 2,
        "_NCZARR_SUPERBLOCK": {"version": "2.0.0"},
        "_NCZARR_GROUP": {"dims": {"x": 4}, "vars": ["v", "c", "sc"], "groups": ["g1"]},
    },
    ".zattrs": {
        "title": "test",
        "ub": 200,
        "_NCProperties": "version=2,netcdf=4.9.0,nczarr=2.0.0",
        "_NCZARR_ATTR": {"types": {"title": "<U1", "ub": "<u1", "_NCProperties": "<U1"}},
    },
    "v/.zarray": {
        "zarr_format": 2,
        "shape": [4],
        "dtype": "<i4",
        "chunks": [4],
        "fill_value": -1,
        "order": "C",
        "compressor": None,
        "filters": None,
        "_NCZARR_ARRAY": {"dimrefs": ["/x"], "storage": "chunked"},
    },
    "v/.zattrs": {
        "_FillValue": -1,
        "scale": 1.5,
        "_ARRAY_DIMENSIONS": ["x"],
        "_NCZARR_ATTR": {"types": {"_FillValue": "<i4", "scale": "<f4"}},
    },
    "c/.zarray": {
        "zarr_format": 2,
        "shape": [4],
        "dtype": "<U1",
        "chunks": [4],
        "fill_value": "",
        "order": "C",
        "compressor": None,
        "filters": None,
        "_NCZARR_ARRAY": {"dimrefs": ["/x"], "storage": "chunked"},
    },
    "c/0": b"abcd",
    "sc/.zarray": {
        "zarr_format": 2,
        "shape": [1],
        "dtype": "<f8",
        "chunks": [1],
        "fill_value": None,
        "order": "C",
        "compressor": None,
        "filters": None,
        "_NCZARR_ARRAY": {"dimrefs": [], "storage": "scalar"},
    },
    "g1/.zgroup": {"zarr_format": 2, "_NCZARR_GROUP": {"dims": {"d": 2}, "vars": ["gv"], "groups": []}},
    "g1/gv/.zarray": {
        "zarr_format": 2,
        "shape": [4, 2],
        "dtype": "<i2",
        "chunks": [4, 2],
        "fill_value": -32767,
        "order": "C",
        "compressor": None,
        "filters": None,
        "_NCZARR_ARRAY": {"dimrefs": ["/x", "/g1/d"], "storage": "chunked"},
    },
}
EXPECTED_490 = """
dataset zarr 2 enhanced {
    dimension x = 4
    variable int v(x) {
        attribute int _FillValue = -1
        attribute float scale = 1.5
    }
    variable char c(x)
    variable double sc
    attribute char title = "test"
    attribute ubyte ub = 200
    group g1 {
        dimension d = 2
        variable short gv(x, d)
    }
}
"""


def lower_case(layout: dict[str, object]) -> dict[str, object]:
    """The 4.9.1–4.9.2 layout (§3.3): the same with lower-case keys and >S1 chars."""
    text = json.dumps({k: v for k, v in layout.items() if not isinstance(v, bytes)})
    for key in ("SUPERBLOCK", "GROUP", "ARRAY", "ATTR"):
        text = text.replace(f"_NCZARR_{key}", f"_nczarr_{key.lower()}")
    text = text.replace('"<U1"', '">S1"')
    out: dict[str, object] = json.loads(text)
    out.update({k: v for k, v in layout.items() if isinstance(v, bytes)})
    return out


@pytest.mark.parametrize("layout", [LAYOUT_490, lower_case(LAYOUT_490)], ids=["4.9.0", "4.9.2"])
def test_reads_keys_in_objects(layout: dict[str, object]) -> None:
    store = store_of(layout)
    assert NczarrV2.recognises({k: store.get(k) for k in (".zgroup", ".zattrs")})
    session = Session.open(store, NczarrV2(), read_only=True)
    assert dump(session.dataset) == dump(parse(EXPECTED_490))
    assert session.dataset == parse(EXPECTED_490)
    c = session.dataset.find_variable("c")
    assert session.array(c)[...].tobytes() == b"abcd"
    assert session.stored.storage["/sc"].fill is False


def test_reads_nczarr_1_0_0_objects() -> None:
    """netcdf-c 4.8.0 (§3.1): .nczarr, .nczgroup, .nczvar, .nczattr with nc_type numbers."""
    store = store_of(
        {
            ".zgroup": {"zarr_format": 2},
            ".nczarr": {"zarr_format": 2, "nczarr_version": "1.0.0"},
            ".nczgroup": {"dims": {"x": 3}, "vars": ["v"], "groups": []},
            ".zattrs": {"title": "t", "n": 5},
            ".nczattr": {"types": {"title": "2", "n": "10"}},
            "v/.zarray": {
                "zarr_format": 2,
                "shape": [3],
                "dtype": "<f4",
                "chunks": [3],
                "fill_value": 0.5,
                "order": "C",
                "compressor": None,
                "filters": None,
            },
            "v/.nczvar": {"dimrefs": ["/x"], "storage": "contiguous"},
        }
    )
    assert NczarrV2.recognises({".nczarr": store.get(".nczarr")})
    tree = NczarrV2().read(store).dataset
    assert tree == parse(
        "dataset zarr 2 { dimension x = 3  variable float v(x) "
        'attribute char title = "t"  attribute int64 n = 5 }'
    )


GOOD = {
    ".zgroup": {"zarr_format": 2},
    ".zattrs": {
        "_nczarr_superblock": {"version": "2.0.0"},
        "_nczarr_group": {"dimensions": {"x": 2}, "arrays": ["v"], "groups": []},
    },
    "v/.zarray": {
        "zarr_format": 2,
        "shape": [2],
        "dtype": "<i2",
        "chunks": [2],
        "fill_value": -32767,
        "order": "C",
        "compressor": None,
        "filters": None,
    },
    "v/.zattrs": {
        "a": 70000,
        "_nczarr_array": {"dimension_references": ["/x"]},
        "_nczarr_attr": {"types": {"a": "<i4"}},
    },
}


@pytest.mark.parametrize(
    ("key", "change", "message"),
    [
        ("v/.zarray", None, r"^v/.zarray: missing; array is listed in .zattrs$"),
        ("v/.zarray", {"dtype": "<U3"}, r'^v/.zarray: data type "<U3" has no netCDF type$'),
        (
            "v/.zattrs",
            {"_nczarr_array": {"dimension_references": ["/y"]}},
            r'^v/.zarray: dimension reference "/y" is not declared$',
        ),
        ("v/.zarray", {"shape": [3]}, r"^v/.zarray: dimension /x has size 2, the array 3$"),
        (
            "v/.zattrs",
            {"_nczarr_attr": {"types": {"a": "<i2"}}},
            r"^v/.zattrs: attribute 'a': 70000 does not fit short$",
        ),
        (
            "v/.zattrs",
            {"_nczarr_attr": {"types": {"a": "|J0"}}},
            r"^v/.zattrs: attribute 'a': type '\|J0' is only for internal",
        ),
        (
            ".zattrs",
            {"_nczarr_group": {"dimensions": {"x": -1}, "arrays": [], "groups": []}},
            r"^.zattrs: dimension 'x' has no valid size: -1$",
        ),
    ],
)
def test_errors_name_the_key(key: str, change: dict | None, message: str) -> None:
    docs = json.loads(json.dumps(GOOD))
    if change is None:
        del docs[key]
    else:
        docs[key].update(change)
    with pytest.raises(FormatError, match=message):
        NczarrV2().read(store_of(docs))


def test_not_json_names_the_key() -> None:
    docs: dict[str, object] = dict(GOOD)
    docs["v/.zattrs"] = b"{not json"
    with pytest.raises(FormatError, match="^v/.zattrs: not valid JSON"):
        NczarrV2().read(store_of(docs))


def test_stored_fill_without_attribute_stays_the_fill_value() -> None:
    """A fill_value that is not the default and has no _FillValue attribute fills, and is
    written back, but is no attribute (netcdf-c 4.10.1 shows none, §2.9)."""
    docs = json.loads(json.dumps(GOOD))
    docs["v/.zattrs"] = {"_nczarr_array": {"dimension_references": ["/x"]}}
    docs["v/.zarray"]["fill_value"] = 7
    stored = NczarrV2().read(store_of(docs))
    assert stored.dataset.find_variable("v").attributes == []
    assert stored.arrays["/v"].fill_value == 7
    assert json.loads(NczarrV2().documents(stored)["v/.zarray"])["fill_value"] == 7
