"""Groups: creating and opening by path, names, listing (implicit groups too), deleting,
attributes and consolidated metadata."""

from __future__ import annotations

import numpy as np
import pytest

from nczarr.errors import MetadataError, NodeExistsError, NodeNotFoundError, ReadOnlyError
from nczarr.store import MemoryStore
from nczarr.zarr import Array, Group, create_array, create_group, open_array, open_group, open_node

FORMATS = [2, 3]


def tree(zarr_format: int, store=None) -> Group:
    root = create_group(MemoryStore() if store is None else store, zarr_format=zarr_format, attributes={"title": "t"})
    root.create_group("g1/g2", attributes={"level": 2})
    root.create_array("g1/v", shape=(3,), dtype="i2", chunks=(2,))
    root.create_array("w", shape=(2, 2), dtype="f8", chunks=(1, 2))
    return root


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_create_and_open_nested_nodes(zarr_format):
    root = tree(zarr_format)
    again = open_group(root.store)
    assert again.attrs["title"] == "t"
    assert list(again.members()) == ["g1", "w"]
    assert set(again["g1"].groups()) == {"g2"} and set(again["g1"].arrays()) == {"v"}
    assert again["g1/g2"].attrs["level"] == 2
    assert isinstance(again["g1/v"], Array) and again["g1/v"].shape == (3,)
    assert [n.path for n in again.walk()] == ["g1", "g1/g2", "g1/v", "w"]
    assert "g1/v" in again and "nope" not in again


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_groups_implied_by_descendants_are_listed(zarr_format):
    store = MemoryStore()
    create_group(store, zarr_format=zarr_format)
    create_array(store, "implied/deeper/v", zarr_format=zarr_format, shape=(2,), dtype="u1")
    for key in list(store.list()):
        if key.startswith("implied/") and key.endswith((".zgroup", "zarr.json")) and "/v/" not in key:
            store.delete(key)
    root = open_group(store)
    assert list(root.members()) == ["implied"]
    assert isinstance(root["implied"], Group)
    assert list(root["implied"].members()) == ["deeper"]
    assert root["implied/deeper/v"].shape == (2,)


def test_a_v3_arrays_chunk_directory_is_not_a_child():
    root = create_group(MemoryStore())
    a = root.create_array("a", shape=(4,), dtype="f4", chunks=(2,))
    a[:] = 1
    assert list(root.members()) == ["a"]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_delete_removes_everything_below(zarr_format):
    root = tree(zarr_format)
    root["g1/v"][:] = [1, 2, 3]
    root.delete("g1")
    assert list(root.members()) == ["w"]
    assert not [k for k in root.store.list() if k.startswith("g1")]
    with pytest.raises(NodeNotFoundError, match="no group or array at 'g1'"):
        root["g1"]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_existing_nodes_are_not_replaced_unless_asked(zarr_format):
    root = tree(zarr_format)
    with pytest.raises(NodeExistsError, match="a node already exists at 'w'"):
        root.create_group("w")
    replaced = root.create_group("w", overwrite=True)
    assert isinstance(open_group(root.store)["w"], Group) and replaced.path == "w"
    with pytest.raises(NodeExistsError, match="'g1/v' is an array, not a group"):
        root.require_group("g1/v")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "a child needs a non-empty name"),
        ("...", "must not consist only of periods"),
        ("x" * 256, "is longer than 255 characters"),
    ],
)
def test_bad_node_names_are_refused(name, message):
    root = create_group(MemoryStore())
    with pytest.raises(MetadataError, match=message):
        root.create_group(name)


def test_v2_attributes_file_is_removed_when_emptied():
    root = create_group(MemoryStore(), zarr_format=2)
    root.attrs["a"] = 1
    assert root.store.exists(".zattrs")
    del root.attrs["a"]
    assert not root.store.exists(".zattrs")
    with pytest.raises(KeyError, match="no attribute 'a'"):
        root.attrs["a"]


def test_read_only_group_refuses_changes():
    store = MemoryStore()
    tree(3, store)
    root = open_group(store, mode="r")
    with pytest.raises(ReadOnlyError):
        root.create_group("x")
    with pytest.raises(ReadOnlyError):
        root.delete("w")


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_consolidated_metadata_opens_everything_in_one_read(recording_store, zarr_format):
    store = recording_store()
    tree(zarr_format, store).consolidate()
    store.reset()
    root = open_group(store)
    names = [n.path for n in root.walk()]
    assert names == ["g1", "g1/g2", "g1/v", "w"]
    assert root["g1/g2"].attrs["level"] == 2
    # v3: the root zarr.json carries everything; v2: a look for zarr.json, the root's three
    # documents and .zmetadata.
    assert store.reads == {3: 1, 2: 5}[zarr_format]
    store.reset()
    assert [n.path for n in open_group(store, use_consolidated=False).walk()] == names
    assert store.reads > 4


def test_consolidated_view_follows_changes_made_through_it():
    root = tree(3)
    root.consolidate()
    opened = open_group(root.store, mode="r+")
    opened.create_array("new", shape=(1,), dtype="u1")
    opened.delete("g1")
    assert list(opened.members()) == ["new", "w"]


def test_missing_consolidated_metadata_is_an_error_when_required():
    root = tree(3)
    with pytest.raises(NodeNotFoundError, match="no consolidated metadata"):
        open_group(root.store, use_consolidated=True)


def test_open_node_errors_name_the_path():
    store = MemoryStore()
    create_array(store, "a", shape=(1,), dtype="i1")
    with pytest.raises(NodeNotFoundError, match="no group or array at 'nothing'"):
        open_node(store, "nothing")
    with pytest.raises(NodeNotFoundError, match="'a' is an array, not a group"):
        open_group(store, "a")
    with pytest.raises(NodeNotFoundError, match="'/' is a group, not an array"):
        open_array(store)


def test_root_array():
    store = MemoryStore()
    a = create_array(store, shape=(3,), dtype="i4", chunks=(3,))
    a[:] = [1, 2, 3]
    assert open_array(store)[:].tolist() == [1, 2, 3]
    assert sorted(store.list()) == ["c/0", "zarr.json"]


def test_mixing_formats_is_refused():
    store = MemoryStore()
    create_group(store, zarr_format=2)
    with pytest.raises(MetadataError, match="cannot create a Zarr v3 array in a Zarr v2 hierarchy"):
        create_array(store, "a", zarr_format=3, shape=(1,), dtype="i1")


def test_default_chunks_are_a_few_megabytes():
    a = create_array(MemoryStore(), "a", shape=(100, 1000, 1000), dtype="f4")
    nbytes = np.prod(a.chunks) * 4
    assert 1 * 2**20 <= nbytes <= 4 * 2**20
