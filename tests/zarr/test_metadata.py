"""Zarr metadata documents: parsing, writing, errors, consolidated metadata, and interop with
zarr-python 3 in both directions."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.storage import LocalStore

from nczarr.errors import MetadataError, NodeNotFoundError
from nczarr.zarr.dtypes import DataType
from nczarr.zarr.metadata import (
    ArrayMetadataV2,
    ArrayMetadataV3,
    GroupMetadataV2,
    GroupMetadataV3,
    consolidated_from_root,
    dump_json,
    make_consolidated_v3,
    make_zmetadata,
    parse_node,
)

DOC_NAMES = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")
ATTRS = {"title": "température ✓", "missing": float("nan"), "range": [1.0, float("inf")]}


@pytest.fixture(autouse=True)
def _quiet_zarr():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python warns about unstable v3 data type names
        yield


def read_docs(node: Path) -> dict[str, bytes]:
    return {name: (node / name).read_bytes() for name in DOC_NAMES if (node / name).exists()}


def write_docs(node: Path, docs: dict[str, bytes]) -> None:
    node.mkdir(parents=True, exist_ok=True)
    for name, data in docs.items():
        (node / name).write_bytes(data)


def chunk_files(node: Path) -> set[str]:
    return {
        p.relative_to(node).as_posix()
        for p in node.rglob("*")
        if p.is_file() and p.name not in DOC_NAMES
    }


def all_chunk_keys(meta) -> set[str]:
    grid = [range(math.ceil(s / c)) for s, c in zip(meta.shape, meta.chunk_shape, strict=True)]
    return {meta.chunk_key(coords) for coords in itertools.product(*grid)}


def same_json(a, b) -> bool:
    """Equality that treats NaN as equal to NaN."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def bits(value) -> bytes:
    return np.array(value).tobytes()


# -- interop: zarr-python writes, we read ----------------------------------------------------

STRUCT = np.dtype([("x", "<f4"), ("y", "<i2")])

# (id, zarr.create_array keyword arguments, value written to every element)
ZARR_WRITTEN = [
    *(
        (f"{code}-v{fmt}", {"dtype": code, "fill_value": 3, "zarr_format": fmt}, 1)
        for code in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8")
        for fmt in (2, 3)
    ),
    *(
        (f"{code}-v{fmt}", {"dtype": code, "fill_value": fill, "zarr_format": fmt}, 1.5)
        for code, fill in (("f2", np.nan), ("f4", 0.1), ("f8", -np.inf))
        for fmt in (2, 3)
    ),
    ("bool-v2", {"dtype": "bool", "fill_value": True, "zarr_format": 2}, False),
    ("bool-v3", {"dtype": "bool", "fill_value": True, "zarr_format": 3}, False),
    ("c8-v2", {"dtype": "c8", "fill_value": complex(1, np.nan), "zarr_format": 2}, 2j),
    ("c16-v3", {"dtype": "c16", "fill_value": complex(np.inf, 2), "zarr_format": 3}, 2j),
    ("str-v2", {"dtype": np.dtypes.StringDType(), "fill_value": "é", "zarr_format": 2}, "ab"),
    ("str-v3", {"dtype": np.dtypes.StringDType(), "fill_value": "é", "zarr_format": 3}, "ab"),
    ("S5-v2", {"dtype": "S5", "fill_value": b"ab", "zarr_format": 2}, b"xyz"),
    ("S5-v3", {"dtype": "S5", "fill_value": b"ab", "zarr_format": 3}, b"xyz"),
    ("struct-v2", {"dtype": STRUCT, "fill_value": np.array((1.5, 2), STRUCT)[()], "zarr_format": 2},
     np.array((0.5, 7), STRUCT)[()]),
    (">i4-v2", {"dtype": ">i4", "fill_value": 9, "zarr_format": 2}, 1),
    ("F-v2", {"dtype": "f8", "order": "F", "zarr_format": 2}, 1.0),
    (
        "slash-v2",
        {"dtype": "i2", "zarr_format": 2, "chunk_key_encoding": {"name": "v2", "separator": "/"}},
        1,
    ),
    (
        "dot-v3",
        {"dtype": "i2", "zarr_format": 3, "chunk_key_encoding": {"name": "default", "separator": "."}},
        1,
    ),
    ("v2keys-v3", {"dtype": "i2", "zarr_format": 3, "chunk_key_encoding": {"name": "v2"}}, 1),
    ("dims-v3", {"dtype": "f4", "zarr_format": 3, "dimension_names": ["time", None]}, 1.0),
    ("attrs-v2", {"dtype": "f4", "zarr_format": 2, "attributes": ATTRS}, 1.0),
    ("attrs-v3", {"dtype": "f4", "zarr_format": 3, "attributes": ATTRS}, 1.0),
]


@pytest.mark.parametrize(
    ("kwargs", "value"), [c[1:] for c in ZARR_WRITTEN], ids=[c[0] for c in ZARR_WRITTEN]
)
def test_read_what_zarr_python_wrote(tmp_path, kwargs, value):
    array = zarr.create_array(store=LocalStore(tmp_path), shape=(5, 3), chunks=(2, 2), **kwargs)
    array[...] = np.full((5, 3), value, dtype=array.dtype)
    meta = parse_node(read_docs(tmp_path), "a")

    assert meta.zarr_format == kwargs["zarr_format"]
    assert meta.shape == (5, 3) and meta.ndim == 2
    assert meta.chunk_shape == (2, 2)
    expected_dtype = np.dtype(object) if array.dtype.kind == "T" else array.dtype
    assert meta.dtype == expected_dtype
    assert type(meta.fill_value) is type(array.fill_value)
    assert bits(meta.fill_value) == bits(array.fill_value)
    assert meta.order == kwargs.get("order", "C")
    assert meta.dimension_names == (
        tuple(kwargs["dimension_names"]) if "dimension_names" in kwargs else None
    )
    assert same_json(meta.attributes, kwargs.get("attributes", {}))
    assert all_chunk_keys(meta) == chunk_files(tmp_path)
    # our documents for what we read are zarr-python's, key order included
    main = "zarr.json" if meta.zarr_format == 3 else ".zarray"
    assert json.loads(meta.documents()[main]) == json.loads(read_docs(tmp_path)[main])
    assert list(json.loads(meta.documents()[main])) == list(json.loads(read_docs(tmp_path)[main]))


def test_read_scalar_array_chunk_keys(tmp_path):
    for fmt, name in ((2, "0"), (3, "c")):
        node = tmp_path / f"v{fmt}"
        array = zarr.create_array(store=LocalStore(node), shape=(), dtype="i4", zarr_format=fmt)
        array[...] = 5
        meta = parse_node(read_docs(node))
        assert meta.chunk_key(()) == name
        assert chunk_files(node) == {name}


# -- interop: we write, zarr-python reads ---------------------------------------------------

BYTES_CODEC = {"name": "bytes", "configuration": {"endian": "little"}}


def v3_array(dtype, fill, **kwargs) -> ArrayMetadataV3:
    data_type = DataType.from_numpy(dtype, 3)
    codecs = [{"name": "vlen-utf8"}] if data_type.kind == "string" else [BYTES_CODEC]
    return ArrayMetadataV3(
        shape=(5, 3), data_type=data_type, chunk_shape=(2, 2), fill_value=fill, codecs=codecs, **kwargs
    )


def v2_array(dtype, fill, **kwargs) -> ArrayMetadataV2:
    data_type = DataType.from_numpy(dtype, 2)
    filters = [{"id": data_type.object_codec_id}] if data_type.object_codec_id else None
    return ArrayMetadataV2(
        shape=(5, 3), chunks=(2, 2), data_type=data_type, fill_value=fill, filters=filters, **kwargs
    )


OURS = [
    *(
        (f"{code}-v{fmt}", make(code, fill))
        for code, fill in (
            ("i1", -5), ("u2", 7), ("i8", -(2**63)), ("u8", 2**64 - 1), ("f2", 0.5),
            ("f4", np.nan), ("f8", -np.inf), ("c8", complex(1, np.nan)), ("c16", 1 - 2j),
            ("bool", True), ("S4", b"ab"), ("U2", "é"), (object, "fill"),
        )
        for fmt, make in ((2, v2_array), (3, v3_array))
    ),
    ("v2-null-fill", v2_array("i4", None)),
    ("v2-big-endian", v2_array(">f8", 2.5)),
    ("v2-structured", v2_array(STRUCT, (1.5, 3))),
    ("v2-F", v2_array("i4", 1, order="F", attributes=ATTRS)),
    ("v2-slash", v2_array("i4", 1, dimension_separator="/")),
    ("v3-dims", v3_array("i4", 1, dimension_names=("x", None), attributes=ATTRS)),
    ("v3-dot", v3_array("i4", 1, separator=".")),
    ("v3-v2-keys", v3_array("i4", 1, chunk_key_encoding="v2")),
    ("v3-structured", v3_array(STRUCT, (1.5, 3))),
]


@pytest.mark.parametrize("meta", [c[1] for c in OURS], ids=[c[0] for c in OURS])
def test_zarr_python_reads_what_we_wrote(tmp_path, meta):
    write_docs(tmp_path, meta.documents())
    array = zarr.open_array(store=LocalStore(tmp_path))

    assert array.metadata.zarr_format == meta.zarr_format
    assert array.shape == meta.shape
    assert array.chunks == meta.chunk_shape
    assert (np.dtype(object) if array.dtype.kind == "T" else array.dtype) == meta.dtype
    if meta.fill_value is None:
        assert array.fill_value is None
    else:
        assert bits(array.fill_value) == bits(meta.fill_value)
    assert same_json(dict(array.attrs), meta.attributes)
    if meta.zarr_format == 3:
        assert array.metadata.dimension_names == meta.dimension_names
    else:
        assert array.metadata.order == meta.order
    # zarr-python writes its chunks where our chunk_key says they are
    array[...] = _distinct(meta)
    assert chunk_files(tmp_path) == all_chunk_keys(meta)


def _distinct(meta) -> np.ndarray:
    """Values that differ from the fill value, so zarr-python writes every chunk."""
    kind = meta.data_type.kind
    values = {
        "bool": False, "string": "other", "fixed_bytes": b"zz", "fixed_unicode": "z",
        "structured": np.array((9.0, 9), meta.dtype)[()], "complex": 7 + 7j,
    }.get(kind, 9)
    return np.full(meta.shape, values, dtype=meta.dtype if kind != "string" else object)


# -- documents ------------------------------------------------------------------------------


def test_documents_round_trip_v3():
    meta = ArrayMetadataV3(
        shape=(10, 0),
        data_type=DataType.from_v3("float32"),
        chunk_shape=(4, 1),
        fill_value=float("nan"),
        codecs=("bytes", {"name": "gzip", "configuration": {"level": 5}}),
        attributes=ATTRS,
        dimension_names=("x", None),
        extensions={"ext": {"must_understand": False, "x": [1]}},
    )
    docs = meta.documents()
    assert set(docs) == {"zarr.json"} and meta.document_keys() == ("zarr.json",)
    again = parse_node(docs)
    assert again.documents() == docs
    assert again.codecs == ({"name": "bytes"}, {"name": "gzip", "configuration": {"level": 5}})
    assert again.extensions == {"ext": {"must_understand": False, "x": [1]}}
    obj = json.loads(docs["zarr.json"])
    assert list(obj) == [
        "shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs",
        "attributes", "dimension_names", "zarr_format", "node_type", "storage_transformers", "ext",
    ]
    assert obj["fill_value"] == "NaN"
    assert obj["chunk_key_encoding"] == {"name": "default", "configuration": {"separator": "/"}}


def test_documents_round_trip_v2_and_zattrs_only_when_needed():
    meta = v2_array("<U3", "ab", order="F")
    assert set(meta.documents()) == {".zarray"}
    assert meta.document_keys() == (".zarray", ".zattrs")
    with_attrs = meta.with_attributes({"a": 1})
    assert set(with_attrs.documents()) == {".zarray", ".zattrs"}
    assert parse_node(with_attrs.documents()) == with_attrs
    group = GroupMetadataV2()
    assert group.documents() == {".zgroup": b'{"zarr_format": 2}'}
    assert group.document_keys() == (".zgroup", ".zattrs")
    assert parse_node(group.with_attributes({"b": "é"}).documents()).attributes == {"b": "é"}


def test_group_v3_documents():
    group = GroupMetadataV3(attributes={"a": 1}, extensions={"e": {"must_understand": False}})
    obj = json.loads(group.documents()["zarr.json"])
    assert obj == {
        "attributes": {"a": 1},
        "zarr_format": 3,
        "node_type": "group",
        "e": {"must_understand": False},
    }
    assert parse_node(group.documents()) == group
    assert group.with_attributes({}).attributes == {}


def test_attribute_nan_is_written_like_zarr_python(tmp_path):
    group = zarr.open_group(LocalStore(tmp_path / "theirs"), mode="w", zarr_format=3, attributes=ATTRS)
    ours = GroupMetadataV3(attributes=ATTRS).documents()["zarr.json"]
    assert b'"missing": NaN' in ours and b'"range": [1.0, Infinity]' in ours
    assert "température ✓".encode() in ours  # UTF-8, not \u escapes
    write_docs(tmp_path / "ours", {"zarr.json": ours})
    assert same_json(dict(zarr.open_group(LocalStore(tmp_path / "ours")).attrs), dict(group.attrs))


def test_dump_json_escapes_lone_surrogates():
    """Bytes that are not UTF-8, kept as surrogate escapes, become JSON escapes (valid UTF-8)."""
    text = "caf" + b"\xe9".decode("utf-8", "surrogateescape")
    raw = dump_json({"a": text})
    assert b"\\udce9" in raw and json.loads(raw) == {"a": text}


def test_dump_json_converts_numpy_values():
    assert json.loads(dump_json({"a": np.float32(1.5), "b": np.arange(2), "c": np.bool_(True)})) == {
        "a": 1.5,
        "b": [0, 1],
        "c": True,
    }


def test_common_properties_and_with_shape():
    meta = v2_array("i2", None)
    assert meta.fill_value is None and meta.fill_value_or_default == 0
    assert meta.dimension_names is None and meta.order == "C"
    grown = meta.with_shape((7, 3))
    assert grown.shape == (7, 3) and grown.chunks == (2, 2) and meta.shape == (5, 3)
    v3 = v3_array("i2", 4)
    assert v3.with_shape([1, 1]).shape == (1, 1)
    assert v3.fill_value_or_default == 4
    assert v3.chunk_grid == {"name": "regular", "configuration": {"chunk_shape": [2, 2]}}
    with pytest.raises(MetadataError, match=r"cannot resize 2 dimensions to shape \[4\]"):
        v3.with_shape((4,))


@pytest.mark.parametrize(
    ("meta", "coords", "key"),
    [
        (v3_array("i2", 0), (0, 12), "c/0/12"),
        (v3_array("i2", 0, separator="."), (3, 1), "c.3.1"),
        (v3_array("i2", 0, chunk_key_encoding="v2"), (3, 1), "3.1"),
        (v3_array("i2", 0, chunk_key_encoding="v2", separator="/"), (3, 1), "3/1"),
        (v2_array("i2", 0), (3, 1), "3.1"),
        (v2_array("i2", 0, dimension_separator="/"), (3, 1), "3/1"),
    ],
)
def test_chunk_key(meta, coords, key):
    assert meta.chunk_key(coords) == key


def test_scalar_chunk_keys():
    scalar3 = ArrayMetadataV3(
        shape=(), data_type=DataType.from_v3("int8"), chunk_shape=(), fill_value=0, codecs=["bytes"]
    )
    assert scalar3.chunk_key(()) == "c"
    assert replace(scalar3, chunk_key_encoding="v2", separator=None).chunk_key(()) == "0"
    scalar2 = ArrayMetadataV2(shape=(), chunks=(), data_type=DataType.from_v2("<i4"), fill_value=0)
    assert scalar2.chunk_key(()) == "0"


# -- errors -----------------------------------------------------------------------------------

ARRAY_V3 = json.loads(v3_array("i2", 0).documents()["zarr.json"])
ARRAY_V2 = json.loads(v2_array("i2", 0).documents()[".zarray"])


def v3_with(**changes) -> dict[str, bytes]:
    obj = {k: v for k, v in {**ARRAY_V3, **changes}.items() if v is not ...}
    return {"zarr.json": json.dumps(obj).encode()}


def v2_with(**changes) -> dict[str, bytes]:
    obj = {k: v for k, v in {**ARRAY_V2, **changes}.items() if v is not ...}
    return {".zarray": json.dumps(obj).encode()}


def group_with(consolidated) -> dict[str, bytes]:
    obj = {"zarr_format": 3, "node_type": "group", "consolidated_metadata": consolidated}
    return {"zarr.json": json.dumps(obj).encode()}


def zmetadata(metadata, version=1) -> dict[str, bytes]:
    obj = {"metadata": metadata, "zarr_consolidated_format": version}
    return {".zmetadata": json.dumps(obj).encode()}


BAD_JSON = "not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        (
            {"zarr.json": b"not json"},
            "a/b/zarr.json: not valid JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        ({".zattrs": b"{", ".zgroup": b"{}"}, f"a/b/.zattrs: {BAD_JSON}"),
        (v3_with(shape=...), "a/b/zarr.json: missing required member 'shape'"),
        (v2_with(shape=...), "a/b/.zarray: missing required member 'shape'"),
        (
            v3_with(foo={"must_understand": True}),
            "a/b/zarr.json: unknown member 'foo' (an extension must be an object with "
            '"must_understand": false)',
        ),
        (
            v3_with(foo=1),
            "a/b/zarr.json: unknown member 'foo' (an extension must be an object with "
            '"must_understand": false)',
        ),
        (
            v3_with(chunk_grid={"name": "rectilinear", "configuration": {"chunk_shapes": [[1], [1]]}}),
            "a/b/zarr.json: unsupported chunk_grid 'rectilinear' (only 'regular' is supported)",
        ),
        (v3_with(zarr_format=2), "a/b/zarr.json: zarr_format must be 3, got 2"),
        (v2_with(zarr_format=3), "a/b/.zarray: zarr_format must be 2, got 3"),
        (v3_with(node_type="folder"), "a/b/zarr.json: unknown node_type \"folder\""),
        ({"zarr.json": b"[]"}, "a/b/zarr.json: expected a JSON object, got []"),
        (
            v3_with(shape=[2, -1]),
            "a/b/zarr.json: 'shape' must be a list of non-negative integers, got [2, -1]",
        ),
        (v3_with(shape="5"), "a/b/zarr.json: 'shape' must be a list, got \"5\""),
        (
            v3_with(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [0, 2]}}),
            "a/b/zarr.json: 'chunk_shape' must be a list of positive integers, got [0, 2]",
        ),
        (
            v3_with(chunk_grid={"name": "regular", "configuration": {}}),
            "a/b/zarr.json: missing required member 'chunk_shape' in chunk_grid configuration",
        ),
        (
            v3_with(fill_value=1e10),
            "a/b/zarr.json: fill value 10000000000.0 does not fit data type int16",
        ),
        (v3_with(fill_value=None), "a/b/zarr.json: fill value None does not fit data type int16"),
        (v3_with(data_type="int3"), 'a/b/zarr.json: unsupported data_type "int3"'),
        (
            v3_with(dimension_names=["x"]),
            'a/b/zarr.json: dimension_names must be 2 strings or nulls, got ["x"]',
        ),
        (
            v3_with(storage_transformers=[{"name": "x"}]),
            'a/b/zarr.json: storage_transformers are not supported, got [{"name": "x"}]',
        ),
        (
            v3_with(chunk_key_encoding={"name": "default", "configuration": {"separator": "-"}}),
            'a/b/zarr.json: separator must be \'/\' or \'.\', got "-"',
        ),
        (
            v3_with(chunk_key_encoding={"name": "v3"}),
            "a/b/zarr.json: unsupported chunk_key_encoding 'v3'",
        ),
        (v3_with(codecs=[1]), "a/b/zarr.json: codec must be a name or an object with a 'name', got 1"),
        (v3_with(attributes=[]), "a/b/zarr.json: attributes must be a JSON object, got []"),
        (v2_with(order="K"), "a/b/.zarray: order must be 'C' or 'F', got \"K\""),
        (
            v2_with(compressor="zlib"),
            "a/b/.zarray: compressor must be an object with an 'id', got \"zlib\"",
        ),
        (
            v2_with(dtype="|O"),
            "a/b/.zarray: dtype '|O' needs a vlen-utf8 or vlen-bytes filter, got None",
        ),
        ({**v2_with(), ".zattrs": b"[1]"}, "a/b/.zattrs: attributes must be a JSON object, got [1]"),
        ({**v2_with(), ".zgroup": b"{}"}, "a/b/.zarray: the node also has a .zgroup"),
        ({".zgroup": b"{}"}, "a/b/.zgroup: missing required member 'zarr_format'"),
        (
            group_with({"kind": "inline", "metadata": {"x": {"zarr_format": 3, "node_type": "array"}}}),
            "a/b/zarr.json: consolidated_metadata 'x': missing required member 'shape'",
        ),
        (
            group_with({"kind": "file"}),
            'a/b/zarr.json: unsupported consolidated_metadata {"kind": "file"}',
        ),
    ],
)
def test_parse_errors(docs, message):
    with pytest.raises(MetadataError) as info:
        parse_node(docs, "a/b")
    assert str(info.value) == message


def test_no_documents_is_node_not_found():
    with pytest.raises(NodeNotFoundError) as info:
        parse_node({".zattrs": b"{}"}, "x")
    assert str(info.value) == "no zarr.json, .zarray or .zgroup at 'x'"


def test_zarr_json_wins_over_v2_documents():
    docs = {**v2_with(), "zarr.json": b'{"zarr_format": 3, "node_type": "group"}', ".zattrs": b"oops"}
    assert isinstance(parse_node(docs), GroupMetadataV3)


def test_constructor_errors():
    with pytest.raises(MetadataError, match=r"data_type must be a Zarr v3 DataType"):
        ArrayMetadataV3(
            shape=(1,), data_type=DataType.from_v2("<i4"), chunk_shape=(1,), fill_value=0, codecs=[]
        )
    message = r"dtype \|O needs object codec 'vlen-utf8' in filters, found None"
    with pytest.raises(MetadataError, match=message):
        ArrayMetadataV2(shape=(1,), chunks=(1,), data_type=DataType.from_numpy(object, 2), fill_value="")


# -- consolidated metadata ------------------------------------------------------------------


def build_hierarchy(root: Path, fmt: int) -> None:
    group = zarr.open_group(LocalStore(root), mode="w", zarr_format=fmt, attributes={"t": 1})
    group.create_array("a", shape=(4,), chunks=(2,), dtype="f4", fill_value=np.nan)
    sub = group.create_group("B", attributes={"u": "é"})
    sub.create_array("d", shape=(), dtype="i2")
    sub.create_group("e").create_group("f")
    zarr.consolidate_metadata(LocalStore(root))


@pytest.mark.parametrize("fmt", [2, 3])
def test_read_zarr_python_consolidated(tmp_path, fmt):
    build_hierarchy(tmp_path, fmt)
    nodes = consolidated_from_root(read_docs(tmp_path))
    assert sorted(nodes) == ["B", "B/d", "B/e", "B/e/f", "a"]
    for path, node in nodes.items():
        assert node == parse_node(read_docs(tmp_path / path), path)  # same as the node's own
    assert np.isnan(nodes["a"].fill_value) and nodes["B"].attributes == {"u": "é"}
    assert nodes["B"].zarr_format == fmt
    # the root group itself reads normally next to its consolidated metadata
    assert parse_node(read_docs(tmp_path)).attributes == {"t": 1}


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_reads_our_consolidated(tmp_path, fmt):
    build_hierarchy(tmp_path / "theirs", fmt)
    theirs = read_docs(tmp_path / "theirs")
    nodes = consolidated_from_root(theirs)
    root = parse_node(theirs)
    if fmt == 3:
        written = make_consolidated_v3(root, nodes).documents()
        # the same document as zarr-python's (which differs only by \u escapes)
        assert json.loads(written["zarr.json"]) == json.loads(theirs["zarr.json"])
        entries = [
            json.loads(d["zarr.json"])["consolidated_metadata"]["metadata"] for d in (written, theirs)
        ]
    else:
        written = {**root.documents(), ".zmetadata": make_zmetadata(root, nodes)}
        entries = [json.loads(d[".zmetadata"])["metadata"] for d in (written, theirs)]
    assert list(entries[0]) == list(entries[1])  # zarr-python's order: depth, then casefold
    write_docs(tmp_path / "ours", written)  # only the root: the rest must come from consolidated
    group = zarr.open_consolidated(LocalStore(tmp_path / "ours"), zarr_format=fmt)
    assert dict(group.attrs) == {"t": 1}
    flattened = group.metadata.consolidated_metadata.flattened_metadata
    assert sorted(flattened) == ["B", "B/d", "B/e", "B/e/f", "a"]
    assert group["B"].attrs.asdict() == {"u": "é"}
    assert np.isnan(group["a"].fill_value) and group["B/d"].dtype == np.dtype("i2")
    assert consolidated_from_root(written) == nodes


def test_consolidated_absent_or_on_array():
    assert consolidated_from_root({}) is None
    assert consolidated_from_root(GroupMetadataV3().documents()) is None
    assert consolidated_from_root(v3_array("i2", 0).documents()) is None
    assert consolidated_from_root(GroupMetadataV2().documents()) is None


def test_consolidated_groups_carry_no_nested_mapping():
    inner = GroupMetadataV3(consolidated={"x": v3_array("i2", 0)})
    root = make_consolidated_v3(GroupMetadataV3(), {"g": inner, "g/x": v3_array("i2", 0)})
    assert root.consolidated["g"].consolidated is None
    entry = json.loads(root.documents()["zarr.json"])["consolidated_metadata"]["metadata"]["g"]
    assert entry["consolidated_metadata"] == {"kind": "inline", "must_understand": False, "metadata": {}}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: make_consolidated_v3(GroupMetadataV3(), {"/a": GroupMetadataV3()}),
            "consolidated path '/a' is not a relative node path",
        ),
        (
            lambda: make_consolidated_v3(GroupMetadataV3(), {"a": GroupMetadataV2()}),
            "consolidated node 'a' is not Zarr v3 metadata",
        ),
        (
            lambda: make_zmetadata(GroupMetadataV2(), {"a": GroupMetadataV3()}),
            "consolidated node 'a' is not Zarr v2 metadata",
        ),
        (
            lambda: consolidated_from_root(zmetadata({}, version=2)),
            ".zmetadata: unsupported zarr_consolidated_format 2",
        ),
        (
            lambda: consolidated_from_root(zmetadata({"a/.zattrs": {}})),
            ".zmetadata: a/.zattrs has no .zarray or .zgroup",
        ),
        (
            lambda: consolidated_from_root(zmetadata({"a/.zarray": {"zarr_format": 2}})),
            ".zmetadata: a/.zarray: missing required member 'shape'",
        ),
        (
            lambda: consolidated_from_root({".zmetadata": b"{"}),
            f".zmetadata: {BAD_JSON}",
        ),
    ],
)
def test_consolidated_errors(call, message):
    with pytest.raises(MetadataError) as info:
        call()
    assert str(info.value) == message
