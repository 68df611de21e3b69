"""The Zarr Object Model: export any store (nczarr, zarr-python, netcdf-c NCZarr; v2 and v3)
to a document that validates against the schema of its version; create a hierarchy from a
document; compare; flatten and unflatten (the form consolidated metadata stores)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zarr.storage import LocalStore

from nczarr.errors import CodecError, MetadataError, NodeExistsError, NodeNotFoundError
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.zarr import create_group, open_group, zom
from nczarr.zarr.metadata import consolidated_from_root
from nczarr.zarr.zom import Difference, DocumentError, Problem

pytestmark = pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")

FORMATS = [2, 3]


def nczarr_store(zarr_format: int) -> MemoryStore:
    """A hierarchy that exercises the metadata: nesting, data types, codecs, fill values,
    dimension names, key encodings, attributes with NaN and unicode."""
    store = MemoryStore()
    with create_group(store, zarr_format=zarr_format, attributes={"title": "ünï ☃", "nan": float("nan")}) as root:
        root.create_array("t", shape=(4,), dtype="f8", chunks=(2,), fill_value=float("nan"), attributes={"units": "d"})
        g = root.create_group("deep/er", attributes={"level": [1, 2]})
        g.create_array("s", shape=(3,), dtype=np.dtypes.StringDType(), chunks=(3,))
        g.create_array("u", shape=(3,), dtype="U4", chunks=(3,))
        g.create_array("c", shape=(2, 2), dtype="c8", chunks=(1, 2), order="F")
        root.create_array("b", shape=(), dtype=bool, fill_value=True)
        root.create_array("when", shape=(5,), dtype="M8[s]", chunks=(5,))
        root.create_array("rec", shape=(2,), dtype=[("a", "<i4"), ("b", "S3")], chunks=(2,))
        if zarr_format == 3:
            root.create_array(
                "sharded", shape=(8, 8), dtype="u2", chunks=(2, 2), shards=(4, 8),
                compressors=[{"name": "gzip", "configuration": {"level": 1}}], dimension_names=["y", None],
            )
            root.create_array("v2keys", shape=(4,), dtype="i1", chunks=(2,), chunk_key_encoding="v2")
        else:
            root.create_array(
                "packed", shape=(8, 8), dtype="u2", chunks=(2, 4), compressor={"id": "zlib", "level": 1},
                filters=[{"id": "shuffle", "elementsize": 2}], dimension_separator="/",
            )
    return store


def zarr_python_store(zarr_format: int, path: Path) -> DirectoryStore:
    root = zarr.create_group(LocalStore(path), zarr_format=zarr_format, attributes={"by": "zarr-python"})
    root.create_array("x", shape=(6, 4), chunks=(3, 2), dtype="f4", attributes={"_ARRAY_DIMENSIONS": ["a", "b"]})
    root.create_group("sub").create_array("y", shape=(3,), chunks=(3,), dtype="i8", fill_value=-1)
    return DirectoryStore(path)


def netcdf_c_store(path: Path) -> DirectoryStore:
    """A store netcdf-c writes in its NCZarr format (Zarr v2 plus _nczarr_* attributes)."""
    with netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "w") as ds:
        ds.createDimension("x", 4)
        ds.createVariable("v", "f4", ("x",), zlib=True).units = "m"
        ds.createGroup("sub").createVariable("w", "i4", ("x",))
    return DirectoryStore(path)


@pytest.fixture(params=["nczarr v2", "nczarr v3", "zarr-python v2", "zarr-python v3", "netcdf-c"])
def any_store(request, tmp_path):
    kind = request.param
    if kind.startswith("nczarr"):
        return nczarr_store(int(kind[-1]))
    if kind.startswith("zarr-python"):
        return zarr_python_store(int(kind[-1]), tmp_path / "z")
    return netcdf_c_store(tmp_path / "n")


def test_exported_documents_validate_against_the_schema_of_their_version(any_store):
    document = zom.export(any_store)
    assert zom.validate(document) == []
    zarr_format = document["zarr_format"]
    for node in _all_nodes(document):
        assert node["zarr_format"] == zarr_format
        assert isinstance(node["attributes"], dict)
        if "members" in node:
            assert node.get("node_type", "group") == "group"


def _all_nodes(node: dict) -> list[dict]:
    return [node, *(n for child in node.get("members", {}).values() for n in _all_nodes(child))]


def test_create_of_export_reproduces_the_metadata_of_every_node(any_store):
    document = zom.export(any_store)
    copy = MemoryStore()
    zom.create(document, copy)
    original = open_group(any_store, use_consolidated=False)
    created = open_group(copy, use_consolidated=False)
    # Every node's documents, byte for byte (the created root carries consolidated metadata).
    assert list(created.descendants()) == list(original.descendants())
    for path, metadata in original.descendants().items():
        assert created.descendants()[path].documents() == metadata.documents(), path
    assert zom.compare(document, copy) == []
    assert zom.dumps(zom.export(copy, use_consolidated=False)) == zom.dumps(document)  # the root too


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_array_members_are_exactly_the_zarr_metadata(zarr_format):
    store = nczarr_store(zarr_format)
    document = zom.export(store)
    node = document["members"]["t"]
    if zarr_format == 3:
        on_disk = json.loads(store.get("t/zarr.json"))
        assert node == on_disk  # NaN-free here: the fill value "NaN" is a string in v3
    else:
        on_disk = json.loads(store.get("t/.zarray")) | {"attributes": json.loads(store.get("t/.zattrs"))}
        assert json.dumps(node, sort_keys=True) == json.dumps(on_disk, sort_keys=True)
    assert list(node)[:1] == ["zarr_format"]
    group = document["members"]["deep"]
    assert set(group) == {"zarr_format", "attributes", "members"} | ({"node_type"} if zarr_format == 3 else set())


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_the_flat_form_is_what_consolidated_metadata_stores(zarr_format):
    document = zom.export(nczarr_store(zarr_format))
    flat = zom.flatten(document)
    assert list(flat)[:3] == ["", "b", "deep"]  # parents first, names in order
    assert zom.dumps(zom.unflatten(flat)) == zom.dumps(document)
    store = MemoryStore()
    zom.create(document, store)
    stored = consolidated_from_root(store.get_many(["zarr.json", ".zmetadata"]))
    assert stored == {p: m for p, m in flat.items() if p}


def test_export_reads_one_document_through_consolidated_metadata():
    store = nczarr_store(3)
    reads = []
    original = store._get
    store._get = lambda key, byte_range: reads.append(key) or original(key, byte_range)
    zom.export(store)
    assert reads == ["zarr.json"]
    reads.clear()
    zom.export(store, use_consolidated=False)
    assert len(reads) > 10


def test_export_of_a_subgroup_and_of_an_array():
    store = nczarr_store(3)
    assert set(zom.export(store, "deep/er")["members"]) == {"c", "s", "u"}
    array_document = zom.export(open_group(store)["t"])
    assert array_document["node_type"] == "array" and "members" not in array_document
    assert zom.validate(array_document) == []
    copy = MemoryStore()
    assert zom.create(array_document, copy).shape == (4,)


# -- validation ------------------------------------------------------------------------------


#: A member to leave out of a node made by the helpers below.
DROP = object()


def _node(base: dict, changes: dict) -> dict:
    return {k: v for k, v in (base | changes).items() if v is not DROP}


def v3_array(**changes) -> dict:
    node = {
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": {},
    }
    return _node(node, changes)


def v3_group(members: dict, **changes) -> dict:
    return _node({"zarr_format": 3, "node_type": "group", "attributes": {}, "members": members}, changes)


def v2_array(**changes) -> dict:
    node = {
        "zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i2", "fill_value": 0, "order": "C",
        "filters": None, "compressor": None, "dimension_separator": ".", "attributes": {},
    }
    return _node(node, changes)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (v3_group({"a": v3_array(shape=[-1])}), [Problem("$.members.a.shape[0]", "-1 is less than the minimum of 0")]),
        (v3_group({"a": v3_array(codecs=DROP)}), [Problem("$.members.a", "'codecs' is a required property")]),
        (v3_group({"a": v3_array(zarr_format=2)}), [Problem("$.members.a.zarr_format", "3 was expected")]),
        (
            v3_group({"a b": v3_group({"x/y": v3_array()})}),
            [Problem('$.members["a b"].members', "'x/y' does not match '^(?!\\\\.+$)[^/]+$'")],
        ),
        (v3_group({"..": v3_array()}), [Problem("$.members", "'..' does not match '^(?!\\\\.+$)[^/]+$'")]),
        (v3_group({}, extra=1), [Problem("$.extra", "1 is not of type 'object'")]),
        (v3_group({}, attributes=DROP), [Problem("$", "'attributes' is a required property")]),
        (v3_group({"g": {"zarr_format": 3, "attributes": {}}}), [
            Problem("$.members.g", "'members' is a required property"),
            Problem("$.members.g", "'node_type' is a required property"),
        ]),
        (v2_array(order="X"), [Problem("$.order", "'X' is not one of ['C', 'F']")]),
        (v2_array(chunks=[0], foo=1), [
            Problem("$", "Additional properties are not allowed ('foo' was unexpected)"),
            Problem("$.chunks[0]", "0 is less than the minimum of 1"),
        ]),
        ([1], [Problem("$", "a ZOM document must be a JSON object, got an array")]),
        ({"zarr_format": 4}, [Problem("$.zarr_format", "must be 2 or 3, got 4")]),
        ({}, [Problem("$.zarr_format", "must be 2 or 3, got (absent)")]),
    ],
)
def test_schema_problems_are_reported_with_their_json_paths(document, expected):
    assert sorted(zom.validate(document), key=str) == sorted(expected, key=str)


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        (v3_group({"a": v3_array(shape=[4, 4])}), "$.members.a", "chunk_shape [2] does not match the 2 dimensions"),
        (v3_group({"a": v3_array(data_type="int99")}), "$.members.a", "int99"),
        (v3_group({"a": v3_array(fill_value="x")}), "$.members.a", "fill"),
        (v2_array(dtype="<i2", filters=[{"id": "vlen-utf8"}]), "$", "object codec"),
    ],
)
def test_metadata_problems_beyond_the_schema_are_reported_too(document, path, message):
    (problem,) = zom.validate(document)
    assert problem.path == path
    assert message in problem.message
    with pytest.raises(DocumentError) as info:
        zom.flatten(document)
    assert info.value.path == path and str(info.value).startswith(path + ": ")


def test_the_schemas_ship_inside_the_package():
    import nczarr

    folder = Path(nczarr.__file__).parent / "schemas"
    for zarr_format in FORMATS:
        on_disk = json.loads((folder / f"zom-v{zarr_format}.json").read_text())
        assert zom.schema(zarr_format) == on_disk
        assert on_disk["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    with pytest.raises(MetadataError, match="no ZOM schema for Zarr v4"):
        zom.schema(4)


# -- flatten / unflatten errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        (v3_group({"a": [1]}), "$.members.a", "a node must be a JSON object, got an array"),
        (v3_group({"a": v3_group(DROP)}), "$.members.a.members", "a group needs members"),
        ({"zarr_format": 2, "attributes": {}}, "$.members", "a group needs members"),
        (v3_group({"a": v3_group({}, zarr_format=2)}), "$.members.a", "zarr_format must be 3, as at the root"),
        (v3_group({"...": v3_array()}), "$.members", "must not consist only of periods"),
    ],
)
def test_flatten_names_the_json_path_of_a_malformed_document(document, path, message):
    with pytest.raises(DocumentError) as info:
        zom.flatten(document)
    assert info.value.path == path
    assert message in info.value.reason


def test_unflatten_needs_a_root_and_parent_groups():
    flat = zom.flatten(v3_group({"g": v3_group({"a": v3_array()})}))
    with pytest.raises(MetadataError, match="no root"):
        zom.unflatten({p: m for p, m in flat.items() if p})
    with pytest.raises(MetadataError, match="/g/a: its parent /g is not a group"):
        zom.unflatten({p: m for p, m in flat.items() if p != "g"})
    mixed = dict(flat) | {"v2": zom.flatten(v2_array())[""]}
    with pytest.raises(MetadataError, match="/v2: Zarr v2 metadata in a v3 hierarchy"):
        zom.unflatten(mixed)


# -- create -----------------------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_create_makes_every_node_without_data_and_consolidates(zarr_format):
    document = zom.export(nczarr_store(zarr_format))
    store = MemoryStore()
    root = zom.create(document, store)
    assert root.uses_consolidated and not root.read_only
    documents = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")
    assert not [k for k in store.list() if k.rsplit("/", 1)[-1] not in documents]
    assert np.isnan(root["t"][:]).all()
    plain = MemoryStore()
    assert not zom.create(document, plain, consolidate=False).uses_consolidated


def test_create_refuses_a_store_that_is_not_empty_unless_asked():
    document = v3_group({"a": v3_array()})
    store = MemoryStore()
    store.set("junk", b"1")
    with pytest.raises(NodeExistsError, match="is not empty"):
        zom.create(document, store)
    assert list(store.list()) == ["junk"]
    zom.create(document, store, overwrite=True)
    assert "junk" not in list(store.list()) and open_group(store)["a"].shape == (4,)


def test_create_checks_every_codec_before_writing_anything():
    document = v3_group({"ok": v3_array(), "bad": v3_array(codecs=[{"name": "no-such-codec"}])})
    store = MemoryStore()
    with pytest.raises(CodecError, match="/bad: .*no-such-codec"):
        zom.create(document, store)
    assert list(store.list()) == []


def test_create_rejects_a_malformed_document_with_its_json_path():
    with pytest.raises(DocumentError, match=r"\$\.members\.a: .*shape"):
        zom.create(v3_group({"a": v3_array(shape=DROP)}), MemoryStore())


# -- compare ------------------------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_compare_lists_every_difference_by_path(zarr_format):
    store = nczarr_store(zarr_format)
    document = zom.export(store)
    document["members"]["t"]["shape"] = [5]
    document["members"]["t"]["attributes"]["units"] = "s"
    document["members"]["t"]["attributes"]["new"] = 1
    document["attributes"]["nan"] = float("nan")  # equal to itself here
    document["members"]["extra_in_doc"] = dict(document["members"]["b"])
    del document["members"]["deep"]
    document["members"]["when"] = {k: v for k, v in document.items() if k != "members"} | {"members": {}}
    differences = zom.compare(document, store)
    assert [str(d) for d in differences] == [
        "/deep: extra",
        "/deep/er: extra",
        "/deep/er/c: extra",
        "/deep/er/s: extra",
        "/deep/er/u: extra",
        "/extra_in_doc: missing",
        "/t: changed shape: [5] != [4]",
        '/t: changed attributes.units: "s" != "d"',
        "/t: changed attributes.new: 1 != (absent)",
        '/when: changed node_type: "group" != "array"',
    ]
    assert differences[6] == Difference("/t", "changed", "shape", [5], [4])


def test_compare_an_identical_store_and_a_changed_one():
    store = nczarr_store(3)
    document = zom.export(store)
    assert zom.compare(document, store) == []
    root = open_group(store, mode="r+", write_consolidated=False)
    root["t"].attrs["units"] = "h"
    root.create_group("late")
    differences = [str(d) for d in zom.compare(document, store)]
    assert differences == ["/late: extra", '/t: changed attributes.units: "d" != "h"']


def test_compare_reports_a_missing_root_node():
    with pytest.raises(NodeNotFoundError):
        zom.compare(v3_group({}), MemoryStore())


def test_consolidated_differences_show_a_change_made_behind_our_back():
    store = nczarr_store(3)
    assert zom.consolidated_differences(store) == []
    node = json.loads(store.get("t/zarr.json"))
    node["attributes"]["units"] = "behind"
    store.set("t/zarr.json", json.dumps(node).encode())  # another writer, not through nczarr
    assert [str(d) for d in zom.consolidated_differences(store)] == ['/t: changed attributes.units: "d" != "behind"']
    with pytest.raises(NodeNotFoundError, match="no consolidated metadata"):
        zom.consolidated_differences(zom.create(v3_group({}), MemoryStore(), consolidate=False).store)


# -- documents as files -------------------------------------------------------------------------


def test_documents_round_trip_through_files(tmp_path):
    document = zom.export(nczarr_store(2))
    zom.write_document(document, tmp_path / "doc.json")
    again = zom.read_document(tmp_path / "doc.json")
    assert zom.dumps(again) == zom.dumps(document)
    assert "NaN" in (tmp_path / "doc.json").read_text()  # attributes keep their NaN


# -- any tree ------------------------------------------------------------------------------------

names = st.text(alphabet="abcxyz_.-é", min_size=1, max_size=6).filter(lambda s: s.strip(".") != "")
values = st.one_of(st.integers(), st.text(max_size=3), st.booleans())
attributes = st.dictionaries(st.text(max_size=4), values, max_size=2)


@st.composite
def trees(draw, depth: int = 0) -> dict:
    """A tree spec: attributes, and children by name (None for an array, else a subtree)."""
    children = draw(st.dictionaries(names, st.none() | (trees(depth + 1) if depth < 2 else st.none()), max_size=3))
    return {"attributes": draw(attributes), "children": children}


def _build(group, spec: dict) -> None:
    group.attrs.update(spec["attributes"])
    for name, child in spec["children"].items():
        if child is None:
            group.create_array(name, shape=(len(name),), dtype="u1", attributes={"n": name})
        else:
            _build(group.create_group(name), child)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=trees(), zarr_format=st.sampled_from(FORMATS))
def test_any_tree_survives_export_create_compare(spec, zarr_format):
    store = MemoryStore()
    with create_group(store, zarr_format=zarr_format) as root:
        _build(root, spec)
    document = zom.export(store)
    assert zom.validate(document) == []
    copy = MemoryStore()
    zom.create(document, copy)
    assert zom.compare(document, copy) == []
    assert zom.unflatten(zom.flatten(document)) == document


def test_validation_without_jsonschema_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # as if it were not installed
    zom._validator.cache_clear()
    try:
        with pytest.raises(zom.SchemaUnavailableError, match=r"pip install 'nczarr\[schema\]'"):
            zom.validate(v3_group({}))
    finally:
        zom._validator.cache_clear()
    # Everything else works without it.
    assert zom.compare(v3_group({}), zom.create(v3_group({}), MemoryStore()).store) == []
