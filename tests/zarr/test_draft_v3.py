"""The Zarr v3 core-protocol draft layout (nczarr.zarr.draft): the committed fixtures that
zarr-python 2.18 wrote (tests/fixtures/make_draft_v3_fixtures.py) read back exactly, what
nczarr writes compared key by key with them, and read by zarr-python 2.18 itself where
NCZARR_ZARR218_PYTHON names its interpreter."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
from zarr218 import zarr218_python

from nczarr.errors import MetadataError
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.zarr import Array, Group, open_group
from nczarr.zarr.draft import DRAFT_MEMBER, DraftStore, draft_to_v3, draft_view, v3_to_draft
from nczarr.zarr.hierarchy import DRAFT_FORMAT, create_group
from nczarr.zarr.info import describe
from nczarr.zarr.zom import export

FIXTURES = Path(__file__).parent.parent / "fixtures" / "draft_v3"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())
ZARR218 = FIXTURES / "zarr218.zr3"
DRAFT_TEXT = FIXTURES / "draft_text.zr3"


def _open(root: Path) -> Group:
    return open_group(DirectoryStore(str(root), read_only=True))


def _values(entry: dict) -> np.ndarray:
    raw = base64.b64decode(entry["values"])
    return np.frombuffer(raw, np.dtype(entry["dtype"])).reshape(entry["shape"])


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want)  # NaN equals NaN here
    else:
        assert (got == want.astype(got.dtype)).all(), (got, want)


@pytest.mark.parametrize("path", sorted(EXPECTED["zarr218.zr3"]["arrays"]))
def test_zarr218_fixture_arrays_read_back_exactly(path: str) -> None:
    entry = EXPECTED["zarr218.zr3"]["arrays"][path]
    array = _open(ZARR218)[path]
    assert isinstance(array, Array)
    assert list(array.shape) == entry["shape"]
    want = _values(entry)
    assert array.dtype == want.dtype.newbyteorder("=")
    got = array[...]
    if "written" in entry:  # a null fill value: only written elements are defined
        got, want = got[: entry["written"]], want[: entry["written"]]
    _same(got, want)
    attributes = array.attrs.asdict()
    names = array.metadata.dimension_names
    if names is not None:
        attributes["_ARRAY_DIMENSIONS"] = list(names)
    assert attributes == entry["attributes"]


def test_zarr218_fixture_fill_values() -> None:
    group = _open(ZARR218)
    fills = {name: group[f"fills/{name}"].metadata for name in ("nan", "infinity", "minus_infinity", "number", "null")}
    assert np.isnan(fills["nan"].fill_value)
    assert fills["infinity"].fill_value == np.inf and fills["minus_infinity"].fill_value == -np.inf
    assert fills["number"].fill_value == -9.5
    assert fills["null"].extensions[DRAFT_MEMBER]["fill_value"] is None
    assert group["fills/nan"][7] != group["fills/nan"][7]  # unwritten chunk: the NaN fill
    assert group["fills/complex"].metadata.fill_value.imag == 1


def test_zarr218_fixture_groups_explicit_and_implicit() -> None:
    group = _open(ZARR218)
    assert isinstance(group.store, DraftStore)
    paths = {node.path: type(node).__name__ for node in group.walk()}
    for path, attributes in EXPECTED["zarr218.zr3"]["groups"].items():
        node = group if not path else group[path]
        assert isinstance(node, Group)
        assert node.attrs.asdict() == attributes
        assert not path or paths[path] == "Group"
    assert paths["implicit"] == "Group" and paths["implicit/deeper"] == "Group"
    assert not (ZARR218 / "meta/root/implicit.group.json").exists()  # implied by a descendant only


def test_draft_text_examples_read() -> None:
    group = _open(DRAFT_TEXT)
    expected = EXPECTED["draft_text.zr3"]
    assert group["foo/bar"].attrs.asdict() == {"spam": "ham", "eggs": 42}
    baz = group["foo/baz"]
    assert baz.shape == (10000, 1000) and baz.metadata.codecs[-1]["name"] == "numcodecs.gzip"
    corner = np.frombuffer(base64.b64decode(expected["arrays"]["foo/baz"]["corner"]), "<f8").reshape(2, 6)
    _same(baz[:2, :6], corner)
    assert np.isnan(baz[9999, 999]) and baz[999, 99] == -1.0
    assert baz.attrs.asdict() == expected["arrays"]["foo/baz"]["attributes"]
    qux = expected["arrays"]["foo/qux"]
    _same(group["foo/qux"][...], _values(qux))
    when = group["foo/when"]
    assert when.dtype == np.dtype("M8[ns]")
    _same(when[...], _values(expected["arrays"]["foo/when"]))


def test_must_understand_extensions_are_refused(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path / "s"))
    store.set("zarr.json", json.dumps({"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
                                       "metadata_encoding": "application/json", "metadata_key_suffix": ".json",
                                       "extensions": [{"extension": "http://example.org/x", "must_understand": True}]}).encode())
    with pytest.raises(MetadataError, match="must be understood"):
        open_group(store)
    with pytest.raises(MetadataError, match="must be understood"):
        draft_to_v3({"attributes": {}, "extensions": [{"extension": "x", "must_understand": True}]}, "group", "g")
    with pytest.raises(MetadataError, match="no fallback"):
        grid = {"type": "regular", "chunk_shape": [1]}
        draft_to_v3({"shape": [1], "data_type": {"extension": "x", "type": "?"}, "chunk_grid": grid}, "array", "a")


def _write_like(source: Array, group: Group, path: str) -> Array:
    """The array ``source`` written again by nczarr with the same metadata."""
    metadata = source.metadata
    array = group.create_array(
        path,
        shape=metadata.shape,
        dtype=metadata.dtype,
        chunks=metadata.chunk_shape,
        fill_value=metadata.fill_value,
        codecs=metadata.codecs,
        attributes=metadata.attributes,
        dimension_names=metadata.dimension_names,
        dimension_separator=metadata.separator,
        write_empty_chunks=True,  # as zarr-python 2.18 does
    )
    if DRAFT_MEMBER in metadata.extensions:
        array._set_metadata(array.metadata.__class__(**{**array.metadata.__dict__, "extensions": metadata.extensions}))
    array[...] = source[...]
    array.flush()
    return array


@pytest.mark.parametrize("path", sorted(EXPECTED["zarr218.zr3"]["arrays"]))
def test_what_nczarr_writes_matches_zarr218_key_by_key(tmp_path: Path, path: str) -> None:
    source = _open(ZARR218)[path]
    assert isinstance(source, Array)
    target = create_group(DirectoryStore(str(tmp_path / "w")), zarr_format=DRAFT_FORMAT)
    _write_like(source, target, path)
    target.close()
    theirs = json.loads((ZARR218 / f"meta/root/{path}.array.json").read_text())
    ours = json.loads((tmp_path / "w" / f"meta/root/{path}.array.json").read_text())
    theirs.pop("dimension_separator", None)  # zarr-python 2.18 repeats an explicit separator there
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert ours[key] == theirs[key] or (key == "fill_value" and theirs[key] != theirs[key]), key
    written = {p.relative_to(tmp_path / "w" / "data").as_posix() for p in (tmp_path / "w" / "data").rglob("*") if p.is_file()}
    stored = {p.relative_to(ZARR218 / "data").as_posix() for p in (ZARR218 / "data" / "root" / path).rglob("*") if p.is_file()}
    # zarr-python wrote only part of the fills/ arrays; nczarr writes them whole
    assert written == stored or ("fills/" in path and stored <= written)


def test_entry_point_and_group_documents_match_zarr218(tmp_path: Path) -> None:
    group = create_group(DirectoryStore(str(tmp_path / "w")), zarr_format=DRAFT_FORMAT, attributes={"title": "t"})
    group.create_group("explicit", attributes={"kind": "explicit group"})
    group.close()
    assert (tmp_path / "w/zarr.json").read_text() == (ZARR218 / "zarr.json").read_text()  # byte for byte
    assert json.loads((tmp_path / "w/meta/root/explicit.group.json").read_text()) == {"attributes": {"kind": "explicit group"}}


def test_view_round_trips_documents() -> None:
    for doc_path in sorted((ZARR218 / "meta").rglob("*.array.json")):
        draft = json.loads(doc_path.read_text())
        again = v3_to_draft(draft_to_v3(draft, "array", str(doc_path)), str(doc_path))
        draft.pop("dimension_separator", None)
        assert again == draft, doc_path


def test_info_and_zom_of_a_draft_store() -> None:
    text = describe(str(ZARR218))
    assert "Zarr v3 draft" in text and "implicit/" in text and "codecs transpose, numcodecs.delta, bytes, numcodecs.zlib" in text
    document = export(DirectoryStore(str(ZARR218), read_only=True))
    values = document["members"]["implicit"]["members"]["deeper"]["members"]["values"]  # type: ignore[index]
    assert values["node_type"] == "array" and values["dimension_names"] == ["x"]


def test_memory_store_round_trip_and_chunk_keys() -> None:
    store = MemoryStore()
    group = create_group(store, zarr_format=DRAFT_FORMAT)
    array = group.create_array("a/b", shape=(4, 5), dtype="<i2", chunks=(2, 2), order="F", fill_value=-1,
                               compressors=[{"name": "gzip", "configuration": {"level": 2}}])
    array[1:, :3] = 7
    scalar = group.create_array("s", shape=(), dtype="<f4", fill_value=np.nan)
    scalar[...] = 2.5
    group.close()
    keys = set(store.list())
    assert {"zarr.json", "meta/root.group.json", "meta/root/a/b.array.json", "data/root/a/b/c0/0", "data/root/s/c0"} <= keys
    assert "meta/root/a.group.json" in keys  # the engine creates the groups on the way
    reopened = open_group(store)
    np.testing.assert_array_equal(reopened["a/b"][...], np.where((np.arange(4)[:, None] >= 1) & (np.arange(5) < 3), 7, -1))
    assert reopened["s"][...] == 2.5
    doc = json.loads(store.get("meta/root/a/b.array.json"))
    assert doc["chunk_memory_layout"] == "F" and doc["compressor"]["codec"] == "https://purl.org/zarr/spec/codec/gzip/1.0"
    assert isinstance(draft_view(store), DraftStore)


_READER = textwrap.dedent(
    """
    import base64, json, sys
    import numpy as np, zarr
    from zarr._storage.v3 import DirectoryStoreV3
    group = zarr.open_group(DirectoryStoreV3(sys.argv[1]), mode="r", zarr_version=3)
    out = {"groups": {}, "arrays": {}}
    def walk(g):
        for name, node in g.items():
            if isinstance(node, zarr.Array):
                data = node[...]
                fill = node.fill_value
                out["arrays"][node.path] = {
                    "dtype": data.dtype.str, "shape": list(data.shape),
                    "values": base64.b64encode(np.ascontiguousarray(data).tobytes()).decode(),
                    "fill": None if fill is None else repr(fill), "attributes": dict(node.attrs)}
            else:
                out["groups"][node.path] = dict(node.attrs)
                walk(node)
    out["groups"][""] = dict(group.attrs)
    walk(group)
    print(json.dumps(out))
    """
)


def test_zarr218_reads_what_nczarr_writes(tmp_path: Path) -> None:
    python = zarr218_python()
    source = _open(ZARR218)
    target = create_group(DirectoryStore(str(tmp_path / "w")), zarr_format=DRAFT_FORMAT, attributes=source.attrs.asdict())
    for path, attributes in EXPECTED["zarr218.zr3"]["groups"].items():
        if path and attributes:
            target.require_group(path).attrs.update(attributes)
    for path in EXPECTED["zarr218.zr3"]["arrays"]:
        array = source[path]
        assert isinstance(array, Array)
        _write_like(array, target, path)
    target.close()
    result = subprocess.run(
        [python, "-W", "ignore", "-c", _READER, str(tmp_path / "w")],
        capture_output=True, text=True, env={**os.environ, "ZARR_V3_EXPERIMENTAL_API": "1"}, check=False,
    )
    assert result.returncode == 0, result.stderr
    read = json.loads(result.stdout)
    for path, attributes in EXPECTED["zarr218.zr3"]["groups"].items():
        assert read["groups"].get(path, {}) == attributes, path
    for path, entry in EXPECTED["zarr218.zr3"]["arrays"].items():
        got = read["arrays"][path]
        got["attributes"].pop("filters", None)  # zarr-python 2.18 keeps filters among the attributes
        assert got["attributes"] == entry["attributes"], path
        want = _values(entry)
        values = np.frombuffer(base64.b64decode(got["values"]), np.dtype(got["dtype"])).reshape(got["shape"])
        if "written" in entry:
            values, want = values[: entry["written"]], want[: entry["written"]]
            assert got["fill"] is None
        _same(values, want)
