"""Malformed and hostile metadata: every reader must answer with an NCZarrError, never a
traceback of another class (RecursionError, AttributeError, TypeError, OverflowError...).

Valid documents of every convention (NCZARR, NCZARR_V2, ZARR, ZARR_V2) and of the bare engine
(Zarr v2 and v3, consolidated or not) are mutated by hypothesis (a value anywhere in a document
replaced by another JSON value, a member dropped or added, the bytes replaced, truncated or
nested deeply) and opened through the engine, the formats, ``nczarr info`` and ZOM export.
Hand-picked cases pin the failures issue 14 names.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nczarr
import nczarr.zarr as engine
from nczarr.errors import MetadataError, NCZarrError
from nczarr.store import MemoryStore
from nczarr.zarr import zom
from nczarr.zarr.info import describe

_DOCUMENT_NAMES = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata", ".nczarr", ".nczgroup", ".nczvar",
                   ".nczattr")


def _documents(store: MemoryStore) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list() if k.rpartition("/")[2] in _DOCUMENT_NAMES}


def _netcdf_store(fmt: str) -> dict[str, bytes]:
    store = MemoryStore()
    with nczarr.Dataset(store, "w", format=fmt) as ds:
        ds.title = "fuzz"
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f4", ("t", "x"), fill_value=-1.0)
        v.units = "m"
        v.valid_range = np.array([0.0, 9.0], "f4")
        v[0:2] = np.arange(6, dtype="f4").reshape(2, 3)
        s = ds.createVariable("s", "S1", ("x",))
        s[:] = np.array([b"a", b"b", b"c"])
        text = ds.createVariable("text", str, ("x",))
        text[:] = np.array(["one", "two", "three"], dtype=object)
        text.setncattr_string("labels", ["a", "b"])
        g = ds.createGroup("g")
        g.createDimension("y", 2)
        w = g.createVariable("w", "i2", ("y", "x"))
        w.scale_factor = 0.5
        w[:] = 1
    return _documents(store)


def _engine_store(zarr_format: int, consolidated: bool) -> dict[str, bytes]:
    store = MemoryStore()
    root = engine.create_group(store, zarr_format=zarr_format, attributes={"a": [1, 2]},
                               write_consolidated=consolidated)
    array = root.create_array("a", shape=(4, 5), chunks=(2, 5), dtype="i4", fill_value=7,
                              attributes={"units": "K"})
    array[:] = 1
    sub = root.create_group("g", attributes={"nested": {"k": [1.5, None]}})
    sub.create_array("b", shape=(3,), dtype="f8", fill_value=float("nan"))
    root.close()
    return _documents(store)


#: netcdf-c 4.8.0's NCZarr 1.0.0 objects, which NCZARR_V2 reads.
_NCZARR_1 = {
    ".zgroup": {"zarr_format": 2},
    ".nczarr": {"zarr_format": 2, "nczarr_version": "1.0.0"},
    ".nczgroup": {"dims": {"x": 3}, "vars": ["v"], "groups": ["g"]},
    ".zattrs": {"title": "t", "n": 5},
    ".nczattr": {"types": {"title": "2", "n": "10"}},
    "v/.zarray": {"zarr_format": 2, "shape": [3], "dtype": "<f4", "chunks": [3], "fill_value": 0.5, "order": "C",
                  "compressor": None, "filters": None},
    "v/.nczvar": {"dimrefs": ["/x"], "storage": "contiguous"},
    "g/.zgroup": {"zarr_format": 2},
    "g/.nczgroup": {"dims": {}, "vars": [], "groups": []},
}  # fmt: skip

BASES: dict[str, dict[str, bytes]] = {
    "NCZarr 1.0.0": {key: json.dumps(doc).encode() for key, doc in _NCZARR_1.items()},
    **{fmt: _netcdf_store(fmt) for fmt in ("NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2")},
    "engine v3": _engine_store(3, False),
    "engine v3 consolidated": _engine_store(3, True),
    "engine v2": _engine_store(2, False),
    "engine v2 consolidated": _engine_store(2, True),
}


def _read_everything(store: MemoryStore) -> None:
    """What a user does with a store: open it through every door and read it all."""
    for action in _ACTIONS:
        with contextlib.suppress(NCZarrError):
            action(store)


def _corner(ndim: int) -> tuple[slice, ...]:
    """A few values of each array (a mutated shape may be too big to read whole)."""
    return (slice(0, 2),) * ndim


def _open_engine(store: MemoryStore) -> None:
    for use_consolidated in (None, False):
        node = engine.open_node(store, use_consolidated=use_consolidated)
        arrays = [n for n in node.walk() if isinstance(n, engine.Array)] if isinstance(node, engine.Group) else [node]
        for array in arrays:
            array[_corner(array.ndim)]


def _open_netcdf(store: MemoryStore) -> None:
    with nczarr.Dataset(store) as ds:
        groups = [ds]
        while groups:
            group = groups.pop()
            group.ncattrs()
            for variable in group.variables.values():
                variable.ncattrs()
                # raw values: what odd scale_factor or valid_range values do is netCDF4's
                # conversion rules' business, not the metadata's
                variable.set_auto_maskandscale(False)
                variable[_corner(variable.ndim)]
            groups.extend(group.groups.values())


def _open_each_format(store: MemoryStore) -> None:
    from nczarr.formats import CONVENTIONS

    errors = []
    for cls in CONVENTIONS.values():
        try:
            cls().read(store)
        except NCZarrError as exc:
            errors.append(exc)
    if len(errors) == len(CONVENTIONS):  # no convention can read it
        raise errors[0]


_ACTIONS: tuple[Callable[[MemoryStore], Any], ...] = (
    _open_engine,
    _open_netcdf,
    _open_each_format,
    describe,
    zom.export,
    lambda store: zom.export(store, use_consolidated=False),
)


def _store_of(documents: dict[str, bytes]) -> MemoryStore:
    store = MemoryStore()
    store.set_many(documents)
    return store


# -- mutations -------------------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([0, -1, 2**31, 10**9, 2**63, 2**64, 10**30, -(2**63) - 1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.sampled_from(["", "NaN", "Infinity", "<i4", "|S1", "int32", "/", "..", "a/b", "\x00"])
)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _paths(obj: Any) -> list[tuple[Any, ...]]:
    """Every place in a parsed document: () is the document itself."""
    found: list[tuple[Any, ...]] = []
    pending: list[tuple[tuple[Any, ...], Any]] = [((), obj)]
    while pending:
        path, value = pending.pop()
        found.append(path)
        if isinstance(value, dict):
            pending.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            pending.extend(((*path, i), v) for i, v in enumerate(value))
    return sorted(found, key=repr)


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        obj = obj[part]
    return obj


@st.composite
def mutated_documents(draw: st.DrawFn) -> dict[str, bytes]:
    documents = dict(BASES[draw(st.sampled_from(sorted(BASES)))])
    for _ in range(draw(st.integers(1, 2))):
        key = draw(st.sampled_from(sorted(documents)))
        documents[key] = draw(_mutated(documents[key]))
    return documents


@st.composite
def _mutated(draw: st.DrawFn, data: bytes) -> bytes:
    kind = draw(st.sampled_from(["replace", "replace", "replace", "drop", "add", "bytes", "truncate", "nest"]))
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if kind == "truncate":
        return data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # mutated before into something that is not JSON
        return draw(st.binary(max_size=40))
    path = draw(st.sampled_from(_paths(doc)))
    if kind == "nest":
        text = json.dumps(doc) if path == () else None
        depth = draw(st.sampled_from([200, 5000]))
        if text is None:
            parent = _at(doc, path[:-1])
            parent[path[-1]] = "@@NEST@@"
            text = json.dumps(doc)
        return text.replace('"@@NEST@@"', "[" * depth + "]" * depth).encode() if "@@NEST@@" in text else (
            b"[" * depth + text.encode() + b"]" * depth
        )
    if kind == "drop" and path:
        parent = _at(doc, path[:-1])
        del parent[path[-1]]
    elif kind == "add":
        target = _at(doc, path)
        if isinstance(target, dict):
            names = ["shape", "chunks", "fill_value", "x", "_nczarr_array", "codecs", "_FillValue", "missing_value",
                     "valid_range", "scale_factor", "add_offset", "_Unsigned"]  # fmt: skip
            target[draw(st.sampled_from(names))] = draw(
                JSON_VALUES
            )
        elif isinstance(target, list):
            target.append(draw(JSON_VALUES))
    else:
        value = draw(JSON_VALUES)
        if path:
            _at(doc, path[:-1])[path[-1]] = value
        else:
            doc = value
    return json.dumps(doc, allow_nan=True).encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_mutated_metadata_gives_only_nczarr_errors(documents: dict[str, bytes]) -> None:
    _read_everything(_store_of(documents))


def test_unmutated_bases_open() -> None:
    for name, documents in BASES.items():
        store = _store_of(documents)
        engine.open_node(store)
        describe(store)
        if not name.startswith("engine"):
            nczarr.Dataset(store).close()


# -- hand-picked cases -------------------------------------------------------------------------


def _v3_array(**members: Any) -> dict[str, Any]:
    doc = {
        "zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }  # fmt: skip
    return doc | members


def _v2_array(**members: Any) -> dict[str, Any]:
    doc = {"zarr_format": 2, "shape": [10], "chunks": [5], "dtype": "<i4", "fill_value": 0, "order": "C",
           "filters": None, "compressor": None}  # fmt: skip
    return doc | members


def _json(obj: Any) -> bytes:
    return json.dumps(obj, allow_nan=True).encode()


def _grid(chunk_shape: Any) -> dict[str, Any]:
    return {"name": "regular", "configuration": {"chunk_shape": chunk_shape}}


_GROUP = b'{"zarr_format": 3, "node_type": "group", "attributes": {}}'
DEEP = b"[" * 10_000 + b"]" * 10_000

HAND_PICKED: dict[str, tuple[dict[str, bytes], str]] = {
    "v3 NaN fill of an integer": ({"zarr.json": _json(_v3_array(fill_value=math.nan))}, "fill value nan"),
    "v3 shape a string": ({"zarr.json": _json(_v3_array(shape="10"))}, "'shape' must be a list"),
    "v3 chunks null": ({"zarr.json": _json(_v3_array(chunk_grid=_grid(None)))}, "'chunk_shape' must be a list"),
    "v3 data_type a number": ({"zarr.json": _json(_v3_array(data_type=3))}, "data_type 3"),
    "v3 attributes a list": ({"zarr.json": _json(_v3_array(attributes=[]))}, "attributes must be a JSON object"),
    "v3 fill of the wrong kind": ({"zarr.json": _json(_v3_array(fill_value="abc"))}, "fill value"),
    "v3 codecs not a list": ({"zarr.json": _json(_v3_array(codecs="bytes"))}, "'codecs' must be a list"),
    "v3 dimension_names too long": ({"zarr.json": _json(_v3_array(dimension_names=["a", "b"]))}, "dimension_names"),
    "v3 shape negative": ({"zarr.json": _json(_v3_array(shape=[-1]))}, "non-negative integers"),
    "v3 shape a bool": ({"zarr.json": _json(_v3_array(shape=[True]))}, "non-negative integers"),
    "v3 shape NaN": ({"zarr.json": _json(_v3_array(shape=[math.nan]))}, "non-negative integers"),
    "v3 zero chunk": ({"zarr.json": _json(_v3_array(chunk_grid=_grid([0])))}, "positive integers"),
    "v3 shape overflows int64": (
        {"zarr.json": _json(_v3_array(shape=[2**40, 2**40], chunk_grid=_grid([1, 1])))}, "int64"
    ),
    "v3 huge number": ({"zarr.json": _json(_v3_array(shape=[10**400]))}, "int64"),
    "v3 65 dimensions": ({"zarr.json": _json(_v3_array(shape=[1] * 65, chunk_grid=_grid([1] * 65)))}, "65 dimensions"),
    "v2 shape a string": ({".zarray": _json(_v2_array(shape="10"))}, "'shape' must be a list"),
    "v2 chunks null": ({".zarray": _json(_v2_array(chunks=None))}, "'chunks' must be a list"),
    "v2 dtype a number": ({".zarray": _json(_v2_array(dtype=3))}, "dtype 3"),
    "v2 attributes a list": ({".zarray": _json(_v2_array()), ".zattrs": b"[]"}, ".zattrs: attributes"),
    "v2 huge chunks": ({".zarray": _json(_v2_array(shape=[2**62, 4], chunks=[2**62, 4]))}, "int64"),
    "v2 .zmetadata a list": ({".zgroup": b'{"zarr_format": 2}', ".zmetadata": b"[]"}, ".zmetadata"),
    "v3 consolidated entry bad": (
        {"zarr.json": b'{"zarr_format": 3, "node_type": "group", "attributes": {}, "consolidated_metadata": '
         b'{"kind": "inline", "must_understand": false, "metadata": {"a": {"zarr_format": 3, "node_type": '
         b'"array", "shape": "10"}}}}'},
        "consolidated_metadata",
    ),
    "10k-deep zarr.json": ({"zarr.json": DEEP}, "nested deeper"),
    "10k-deep attribute": (
        {"zarr.json": b'{"zarr_format": 3, "node_type": "group", "attributes": {"a": ' + DEEP + b"}}"},
        "nested deeper",
    ),
    "10k-deep .zattrs": ({".zgroup": b'{"zarr_format": 2}', ".zattrs": b'{"a": ' + DEEP + b"}"}, "nested deeper"),
    "non-UTF-8": ({"zarr.json": b'{"zarr_format": 3, "node_type": "group", "attributes": {"a": "\xff\xfe"}}'},
                  "utf-8"),
    "truncated": ({"zarr.json": _GROUP[:25]}, "not valid JSON"),
    "NaN zarr_format": ({"zarr.json": b'{"zarr_format": NaN, "node_type": "group"}'}, "zarr_format"),
    "5000-digit number": ({"zarr.json": _GROUP[:-2] + b'{"a": 1' + b"0" * 5000 + b"}}"}, "not valid JSON"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(HAND_PICKED))
def test_hand_picked_engine(name: str) -> None:
    documents, message = HAND_PICKED[name]
    with pytest.raises(MetadataError, match="(?i)" + _pattern(message)) as info:
        engine.open_node(_store_of(documents))
    assert any(key in str(info.value) for key in documents)  # it names the document


@pytest.mark.parametrize("name", sorted(HAND_PICKED))
def test_hand_picked_everywhere(name: str) -> None:
    documents, _ = HAND_PICKED[name]
    store = _store_of(documents)
    _read_everything(store)  # any error but an NCZarrError fails the test
    if name == "v2 .zmetadata a list":  # as netcdf-c, a copy that cannot be used is left aside
        _open_netcdf(store)
        return
    with pytest.raises(NCZarrError):
        _open_netcdf(store)


def _pattern(message: str) -> str:
    return re.escape(message)


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"])
@pytest.mark.parametrize(
    "attributes",
    [[], "x", 3, None],
    ids=["list", "string", "number", "null"],
)
def test_attributes_of_the_wrong_type_in_every_convention(fmt: str, attributes: Any) -> None:
    documents = dict(BASES[fmt])
    key = "g/w/zarr.json" if "g/w/zarr.json" in documents else "g/w/.zattrs"
    doc = json.loads(documents[key])
    if key.endswith("zarr.json"):
        doc["attributes"] = attributes
    else:
        doc = attributes
    documents[key] = _json(doc)
    if "zarr.json" in documents and fmt in ("NCZARR", "ZARR"):  # the consolidated copy too
        root = json.loads(documents["zarr.json"])
        root["consolidated_metadata"]["metadata"]["g/w"]["attributes"] = attributes
        documents["zarr.json"] = _json(root)
    else:
        documents.pop(".zmetadata", None)
    with pytest.raises(NCZarrError, match="g/w"):
        _open_netcdf(_store_of(documents))


def _nested(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_the_nesting_limit_is_the_same_for_writing_and_reading(zarr_format: int) -> None:
    from nczarr.zarr.metadata import MAX_JSON_DEPTH

    store = MemoryStore()
    with engine.create_group(store, zarr_format=zarr_format) as root:
        # the attributes object takes one level (v3: two, inside zarr.json)
        deepest = MAX_JSON_DEPTH - (1 if zarr_format == 2 else 2)
        root.attrs["deep"] = _nested(deepest)
        root.create_group("child", attributes={"deep": _nested(deepest)})  # consolidated on close
        with pytest.raises(MetadataError, match=f"at most {MAX_JSON_DEPTH} levels"):
            root.attrs["deeper"] = _nested(deepest + 1)
        with pytest.raises(MetadataError, match=f"at most {MAX_JSON_DEPTH} levels"):
            root.attrs["far_deeper"] = _nested(5_000)
    for use_consolidated in (True, False):
        reopened = engine.open_group(store, use_consolidated=use_consolidated)
        assert reopened.attrs["deep"] == reopened["child"].attrs["deep"] == _nested(deepest)
        assert set(reopened.attrs) == {"deep"}
    assert describe(store)


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
@pytest.mark.parametrize("size", [10**30, -1, 2.5, True, "3", None])
def test_nczarr_dimension_sizes_are_checked(fmt: str, size: Any) -> None:
    documents = {k: v for k, v in BASES[fmt].items() if k != ".zmetadata"}  # the nodes themselves
    key = "zarr.json" if fmt == "NCZARR" else ".zattrs"
    doc = json.loads(documents[key])
    doc.pop("consolidated_metadata", None)
    dimensions = (doc["attributes"] if fmt == "NCZARR" else doc)["_nczarr_group"]["dimensions"]
    dimensions["x"] = {"size": size, "unlimited": 0} if fmt == "NCZARR" else size
    documents[key] = _json(doc)
    with pytest.raises(NCZarrError, match=f"{re.escape(key)}: dimension 'x' has no valid size"):
        _open_netcdf(_store_of(documents))


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
@pytest.mark.parametrize(
    ("groups", "message"),
    [
        (["g", "g"], "lists a name twice"),
        ([".."], "periods"),
        (["g/w"], "must not contain '/'"),
        ([3], "non-empty string"),
        ("g", "must be a list of names"),
        (["g", "v"], "'v' is listed as an array and as a group"),
    ],
)
def test_nczarr_child_lists_are_checked(fmt: str, groups: Any, message: str) -> None:
    documents = {k: v for k, v in BASES[fmt].items() if k != ".zmetadata"}
    key = "zarr.json" if fmt == "NCZARR" else ".zattrs"
    doc = json.loads(documents[key])
    doc.pop("consolidated_metadata", None)
    (doc["attributes"] if fmt == "NCZARR" else doc)["_nczarr_group"]["groups"] = groups
    documents[key] = _json(doc)
    with pytest.raises(NCZarrError, match=f"{re.escape(key)}: .*{re.escape(message)}"):
        _open_netcdf(_store_of(documents))


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"])
@pytest.mark.parametrize("fill", [[], [1.0, 2.0]], ids=["none", "two"])
def test_a_fill_value_attribute_holds_one_value(fmt: str, fill: list[float]) -> None:
    documents = {k: v for k, v in BASES[fmt].items() if k != ".zmetadata"}
    key = "v/zarr.json" if "v/zarr.json" in documents else "v/.zattrs"
    doc = json.loads(documents[key])
    (doc["attributes"] if key.endswith("zarr.json") else doc)["_FillValue"] = fill
    documents[key] = _json(doc)
    if "zarr.json" in documents:  # without its consolidated copy
        documents["zarr.json"] = _json({k: v for k, v in json.loads(documents["zarr.json"]).items()
                                        if k != "consolidated_metadata"})  # fmt: skip
    with pytest.raises(NCZarrError, match=f"v/.*'_FillValue': a fill value is one value, not {len(fill)}"):
        _open_netcdf(_store_of(documents))


@pytest.mark.parametrize("fill", [-1, 256, 10**30])
def test_a_char_fill_value_is_a_byte(fill: int) -> None:
    documents = dict(BASES["ZARR"])
    doc = json.loads(documents["s/zarr.json"])
    doc["attributes"]["_FillValue"] = fill
    documents["s/zarr.json"] = _json(doc)
    documents["zarr.json"] = _json({k: v for k, v in json.loads(documents["zarr.json"]).items()
                                    if k != "consolidated_metadata"})  # fmt: skip
    with pytest.raises(NCZarrError, match=r"s/zarr\.json: .*is not a char"):
        _open_netcdf(_store_of(documents))
