"""Deep and wide shapes that Python's recursion limit or numpy's dimension limit used to break:
what can be written can be read back, and what cannot be held is refused with a clear error.

A group tree 1,100 deep (deeper than the recursion limit) is written and reopened through
``nczarr.Dataset`` in every convention, and walked by the engine, ``nczarr info`` and ZOM export;
a variable of 65 dimensions (numpy holds 64) is refused when it is created and when a store
declares one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import nczarr
import nczarr.zarr as engine
from nczarr.errors import MetadataError, NCZarrError
from nczarr.store import MemoryStore
from nczarr.zarr import zom
from nczarr.zarr.info import describe
from nczarr.zarr.metadata import MAX_DIMENSIONS

DEPTH = 1_100
assert sys.getrecursionlimit() < DEPTH  # the point of the depth


def _write_deep(location, fmt: str) -> None:
    with nczarr.Dataset(location, "w", format=fmt) as ds:
        group = ds
        for _ in range(DEPTH):
            group = group.createGroup("g")
        group.createDimension("x", 3)
        group.createVariable("v", "i4", ("x",))[:] = [1, 2, 3]
        group.setncattr("depth", DEPTH)


def _check_deep(location) -> None:
    with nczarr.Dataset(location) as ds:
        group = ds
        for _ in range(DEPTH):
            group = group.groups["g"]
        assert group.path == "/" + "/".join(["g"] * DEPTH)
        assert group.getncattr("depth") == DEPTH
        np.testing.assert_array_equal(group.variables["v"][:], [1, 2, 3])


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"])
def test_deep_tree_reopens_in_every_convention(fmt: str) -> None:
    store = MemoryStore()
    _write_deep(store, fmt)
    _check_deep(store)


def test_deep_tree_reopens_from_a_folder(tmp_path) -> None:
    # written in memory and laid out by hand: the directory store checks each written path
    # against its root, which costs depth² system calls for a tree this deep
    store = MemoryStore()
    _write_deep(store, "NCZARR")
    made = {tmp_path}
    for key in store.list():
        path = tmp_path.joinpath(*key.split("/"))
        missing, directory = [], path.parent
        while directory not in made:
            missing.append(directory)
            directory = directory.parent
        for directory in reversed(missing):  # not makedirs: it recurses once per level
            directory.mkdir()
            made.add(directory)
        path.write_bytes(store.get(key))
    try:
        _check_deep(str(tmp_path))
    finally:
        _remove_tree(tmp_path)  # pytest's own clean-up (shutil.rmtree) recurses once per level


def _remove_tree(root: Path) -> None:
    """Empty ``root`` without recursion."""
    directories, pending = [], [root]
    while pending:
        directory = pending.pop()
        directories.append(directory)
        for entry in directory.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                pending.append(entry)
            else:
                entry.unlink()
    for directory in reversed(directories[1:]):
        directory.rmdir()


@pytest.mark.parametrize("fmt", ["NCZARR", "ZARR_V2"])
def test_deep_tree_through_the_engine_info_and_zom(fmt: str) -> None:
    store = MemoryStore()
    _write_deep(store, fmt)
    root = engine.open_group(store)
    paths = list(root.descendants())
    assert len(paths) == DEPTH + 1 and paths[-1].endswith("g/v")
    assert [node.path for node in root.walk()] == paths
    assert list(engine.open_group(store, use_consolidated=False).descendants()) == paths
    assert f"{DEPTH} groups, 1 array" in describe(store)
    document = zom.export(store)
    text = zom.dumps(document)
    assert text.count('"members"') == DEPTH + 1
    assert zom.flatten(document).keys() == {"", *paths}


def test_deep_engine_groups_are_created_and_opened() -> None:
    store = MemoryStore()
    path = "/".join(["g"] * DEPTH)
    with engine.create_group(store) as root:
        root.create_group(path)
    assert isinstance(engine.open_group(store)[path], engine.Group)
    assert len(engine.open_group(store, use_consolidated=False).descendants()) == DEPTH


# -- 65 dimensions ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"])
def test_65_dimensions_are_refused_on_creation(fmt: str) -> None:
    store = MemoryStore()
    with nczarr.Dataset(store, "w", format=fmt) as ds:
        for i in range(MAX_DIMENSIONS + 1):
            ds.createDimension(f"d{i}", 1)
        names = tuple(f"d{i}" for i in range(MAX_DIMENSIONS + 1))
        ds.createVariable("most", "i4", names[:MAX_DIMENSIONS])[...] = 7
        with pytest.raises(ValueError, match="65 dimensions") as info:
            ds.createVariable("too_many", "i4", names)
        assert isinstance(info.value, NCZarrError)
        assert "too_many" not in ds.variables
    with nczarr.Dataset(store) as ds:
        assert set(ds.variables) == {"most"}
        assert ds["most"][...].sum() == 7


def test_65_dimensions_are_refused_by_the_engine() -> None:
    with pytest.raises(MetadataError, match="65 dimensions"):
        engine.create_array(MemoryStore(), shape=(1,) * 65, dtype="i4")


def _v3_array_with_dimensions(n: int) -> bytes:
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [1] * n, "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1] * n}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {}, "dimension_names": [f"d{i}" for i in range(n)],
    }).encode()  # fmt: skip


def test_a_store_declaring_65_dimensions_is_refused() -> None:
    store = MemoryStore()
    store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    store.set("v/zarr.json", _v3_array_with_dimensions(MAX_DIMENSIONS + 1))
    with pytest.raises(NCZarrError, match=r"v/zarr\.json.*65 dimensions"):
        nczarr.Dataset(store)
    with pytest.raises(MetadataError, match=r"v/zarr\.json.*65 dimensions"):
        engine.open_array(store, "v")
    with pytest.raises(MetadataError, match="65 dimensions"):
        describe(store)
    store.set("v/zarr.json", _v3_array_with_dimensions(MAX_DIMENSIONS))
    with nczarr.Dataset(store) as ds:
        assert ds["v"].ndim == MAX_DIMENSIONS


# -- what a store lists ----------------------------------------------------------------------


class _ListingDotsStore(MemoryStore):
    """A store whose listings also name ``.``, ``..`` and ``a/b`` below every prefix (a buggy
    or hostile store: walking into them would lead outside the group, or round it forever)."""

    def _list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        keys, prefixes = super()._list_dir(prefix)
        return keys, sorted({*prefixes, ".", "..", "a/b"})


@pytest.mark.parametrize("fmt", ["ZARR", "ZARR_V2"])  # the conventions that find nodes by listing
def test_walkers_skip_listed_names_that_are_no_node_names(fmt: str) -> None:
    store = _ListingDotsStore()
    with nczarr.Dataset(store, "w", format=fmt) as ds:
        ds.createGroup("g").createGroup("h")
    with nczarr.Dataset(store, use_consolidated=False) as ds:
        assert list(ds.groups) == ["g"] and list(ds["g"].groups) == ["h"]
    root = engine.open_group(store, use_consolidated=False)
    assert list(root.descendants()) == ["g", "g/h"]
    assert [node.path for node in root.walk()] == ["g", "g/h"]
