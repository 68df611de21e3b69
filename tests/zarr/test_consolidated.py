"""The consolidation policy: consolidated metadata is written when a hierarchy is closed after
changes, dropped from the store at the first change (never left stale), kept current in
memory, used by default when present (one read to open and list everything), and read and
written compatibly with zarr-python."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.storage import LocalStore

from nczarr.errors import ReadOnlyError
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.zarr import create_group, open_array, open_group
from nczarr.zarr.metadata import consolidated_from_root

pytestmark = pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")

FORMATS = [2, 3]


def stored_copy(store) -> dict | None:
    """The consolidated metadata in the store root, by relative path, or None."""
    docs = store.get_many(["zarr.json", ".zmetadata"])
    return consolidated_from_root(docs) if docs else None


def build(store, zarr_format: int):
    """A small hierarchy, closed: g1/, g1/g2/, g1/v, w."""
    with create_group(store, zarr_format=zarr_format, attributes={"title": "t"}) as root:
        root.create_group("g1/g2", attributes={"level": 2})
        root.create_array("g1/v", shape=(3,), dtype="i2", chunks=(2,), attributes={"units": "m"})
        root.create_array("w", shape=(2, 2), dtype="f8", chunks=(1, 2))
    return root


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_closing_a_new_hierarchy_writes_consolidated_metadata(recording_store, zarr_format):
    store = recording_store()
    root = create_group(store, zarr_format=zarr_format)
    root.create_array("a", shape=(2,), dtype="u1")
    assert stored_copy(store) is None  # not before close
    root.close()
    copy = stored_copy(store)
    assert copy is not None and list(copy) == ["a"]
    assert copy["a"].shape == (2,)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_opening_and_listing_1000_variables_costs_one_read_of_metadata(recording_store, zarr_format):
    store = recording_store()
    with create_group(store, zarr_format=zarr_format) as root:
        for i in range(1000):
            root.create_array(f"v{i:04d}", shape=(i + 1,), dtype="f4", attributes={"i": i})
    store.reset()
    opened = open_group(store)
    listing = {name: (a.shape, a.attrs["i"]) for name, a in opened.arrays().items()}
    assert len(listing) == 1000 and listing["v0999"] == ((1000,), 999)
    # v3: the root zarr.json carries everything; v2: a look for zarr.json, the root's three
    # documents and .zmetadata, whatever the number of variables.
    assert store.reads == {3: 1, 2: 5}[zarr_format]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_the_first_change_drops_the_stored_copy_and_close_writes_it_again(zarr_format):
    store = MemoryStore()
    build(store, zarr_format)
    root = open_group(store, mode="r+")
    assert root.uses_consolidated
    root["g1/v"].attrs["units"] = "km"
    # A process that dies now leaves no stale copy behind...
    assert stored_copy(store) is None
    # ...while the view in memory follows the change.
    assert root["g1/v"].attrs["units"] == "km"
    root.close()
    assert stored_copy(store)["g1/v"].attributes == {"units": "km"}
    assert open_group(store)["g1/v"].attrs["units"] == "km"


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_every_kind_of_change_reaches_the_consolidated_metadata(zarr_format):
    store = MemoryStore()
    build(store, zarr_format)
    with open_group(store, mode="r+") as root:
        root["w"].resize(4, 2)
        root.attrs["title"] = "new"
        root["g1/g2"].attrs.update(level=3)
        root.delete("g1/v")
        root.create_group("h").create_array("x", shape=(1,), dtype="i1")
    copy = stored_copy(store)
    assert sorted(copy) == ["g1", "g1/g2", "h", "h/x", "w"]
    assert copy["w"].shape == (4, 2)
    assert copy["g1/g2"].attributes == {"level": 3}
    reopened = open_group(store)
    assert reopened.uses_consolidated and reopened.attrs["title"] == "new"
    # The copy says what the nodes' own documents say.
    assert reopened.descendants() == open_group(store, use_consolidated=False).descendants()


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_closing_without_changes_writes_nothing(recording_store, zarr_format):
    store = recording_store()
    build(store, zarr_format)
    store.reset()
    with open_group(store, mode="r+") as root:
        assert [n.path for n in root.walk()] == ["g1", "g1/g2", "g1/v", "w"]
        root["g1/v"][:]
    assert store.written == []


def test_a_read_only_hierarchy_refuses_changes_and_closes_quietly():
    store = MemoryStore()
    build(store, 3)
    with open_group(store, mode="r") as root, pytest.raises(ReadOnlyError):
        root["g1/v"].attrs["x"] = 1
    assert stored_copy(store) is not None


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_write_consolidated_false_drops_the_copy_and_writes_none(zarr_format):
    store = MemoryStore()
    build(store, zarr_format)
    with open_group(store, mode="r+", write_consolidated=False) as root:
        root.create_array("new", shape=(1,), dtype="u1")
    assert stored_copy(store) is None
    assert "new" in open_group(store)


def test_explicit_consolidate_makes_close_a_no_op(recording_store):
    store = recording_store()
    root = create_group(store)
    root.create_array("a", shape=(1,), dtype="u1")
    root.consolidate()
    assert list(stored_copy(store)) == ["a"]
    store.reset()
    root.close()
    assert store.written == []


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_hierarchy_opened_below_the_root_refreshes_the_root_copy(zarr_format):
    store = MemoryStore()
    build(store, zarr_format)
    sub = open_group(store, "g1", mode="r+")
    sub.create_array("new", shape=(5,), dtype="i4")
    sub.attrs["changed"] = True
    assert stored_copy(store) is None
    sub.close()
    copy = stored_copy(store)
    assert sorted(copy) == ["g1", "g1/g2", "g1/new", "g1/v", "w"]
    assert copy["g1"].attributes == {"changed": True}
    assert copy["g1/new"].shape == (5,)
    assert open_group(store)["g1/new"].shape == (5,)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_closing_flushes_the_arrays_opened_through_the_hierarchy(zarr_format):
    store = MemoryStore()
    with create_group(store, zarr_format=zarr_format) as root:
        a = root.create_array("a", shape=(4,), dtype="i4", chunks=(4,))
        a[1:3] = [2, 3]  # a partial chunk: held in the array's write-back cache until flushed
        assert not store.exists(a.chunk_key((0,)))
    assert open_group(store)["a"][:].tolist() == [0, 2, 3, 0]


# -- with zarr-python ----------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_zarr_python_reads_the_copy_written_on_close(zarr_format, tmp_path: Path):
    build(DirectoryStore(tmp_path), zarr_format)
    with open_group(DirectoryStore(tmp_path), mode="r+") as root:
        root["g1/v"].attrs["units"] = "km"
    group = zarr.open_consolidated(LocalStore(tmp_path, read_only=True), mode="r", zarr_format=zarr_format)
    assert group.metadata.consolidated_metadata is not None
    members = dict(group.members(max_depth=None))
    assert sorted(members) == ["g1", "g1/g2", "g1/v", "w"]
    assert members["g1/v"].attrs["units"] == "km"
    assert members["g1/g2"].attrs["level"] == 2


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_zarr_python_store_changed_by_nczarr_stays_consolidated(zarr_format, tmp_path: Path):
    zroot = zarr.create_group(LocalStore(tmp_path), zarr_format=zarr_format, attributes={"by": "zarr"})
    zroot.create_array("a", shape=(3,), dtype="f4", chunks=(3,))
    zarr.consolidate_metadata(LocalStore(tmp_path), zarr_format=zarr_format)

    with open_group(DirectoryStore(tmp_path), mode="r+") as root:
        assert root.uses_consolidated
        root.create_array("b", shape=(2,), dtype="i8")
        root["a"].attrs["units"] = "m"

    group = zarr.open_group(
        LocalStore(tmp_path, read_only=True), mode="r", use_consolidated=True, zarr_format=zarr_format
    )
    assert sorted(group.metadata.consolidated_metadata.metadata) == ["a", "b"]
    assert group["a"].attrs["units"] == "m"
    assert group["b"].shape == (2,)
    assert group.attrs["by"] == "zarr"
    if zarr_format == 3:  # the copy sits inside the root document, as zarr-python writes it
        root_doc = json.loads((tmp_path / "zarr.json").read_text())
        assert root_doc["consolidated_metadata"]["kind"] == "inline"
    np.testing.assert_array_equal(group["b"][:], [0, 0])


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_changing_an_array_opened_on_its_own_drops_the_root_copy(zarr_format):
    store = MemoryStore()
    build(store, zarr_format)
    array = open_array(store, "g1/v", mode="r+")
    array[:] = [1, 2, 3]  # data only: the copy stays
    assert stored_copy(store) is not None
    array.attrs["units"] = "km"
    assert stored_copy(store) is None
    assert open_group(store)["g1/v"].attrs["units"] == "km"
