"""open_store: which store, in which mode, for which location."""

from __future__ import annotations

import zipfile
from pathlib import Path

import fsspec
import pytest

from nczarr.errors import NCZarrError, NodeExistsError, ReadOnlyError, StoreError
from nczarr.store import (
    DirectoryStore,
    FsspecStore,
    InvalidModeError,
    MemoryStore,
    ZipStore,
    open_store,
)


def test_a_store_is_returned_as_it_is() -> None:
    store = MemoryStore()
    assert open_store(store) is store
    assert open_store(store, "w") is store


@pytest.mark.parametrize("mode", ["rw", "", "R", "w+"])
def test_unknown_mode_is_named(tmp_path: Path, mode: str) -> None:
    with pytest.raises(InvalidModeError, match=repr(mode).replace("+", r"\+")) as info:
        open_store(tmp_path, mode)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, NCZarrError)


def test_paths_and_file_urls_open_directory_stores(tmp_path: Path) -> None:
    for location in (tmp_path, str(tmp_path), tmp_path.as_uri(), f"file://localhost{tmp_path}"):
        store = open_store(location)
        assert store == DirectoryStore(tmp_path), location
        assert store.read_only


def test_file_url_with_a_host_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="names a host"):
        open_store(f"file://example.com{tmp_path}")


def test_zip_paths_open_zip_stores(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("k", b"v")
    for location in (path, str(path), path.as_uri()):
        store = open_store(location)
        assert isinstance(store, ZipStore)
        assert store.read_only
        assert store.get("k") == b"v"
        store.close()


@pytest.mark.parametrize("url", ["{root}", "simplecache::{root}"])
def test_other_urls_open_fsspec_stores(memory_url: str, url: str) -> None:
    FsspecStore(memory_url).set("k", b"v")
    store = open_store(url.format(root=memory_url))
    assert isinstance(store, FsspecStore)
    assert store.read_only
    assert store.get("k") == b"v"


def test_storage_options_reach_the_filesystem(memory_url: str) -> None:
    store = open_store(memory_url, "a", storage_options={"skip_instance_cache": True})
    assert store.fs is not fsspec.filesystem("memory")


def test_r_on_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "missing")


def test_r_plus_needs_an_existing_location(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "missing", "r+")
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "missing.zip", "r+")
    assert list(tmp_path.iterdir()) == []


def test_r_plus_and_a_open_writable(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    store = open_store(tmp_path / "old", "r+")
    store.set("k", b"v")
    assert (tmp_path / "old" / "k").read_bytes() == b"v"
    store = open_store(tmp_path / "new", "a")
    store.set("k", b"w")
    assert (tmp_path / "new" / "k").read_bytes() == b"w"


def test_r_plus_and_a_on_a_zip_keep_its_entries(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("old", b"1")
    for number, mode in enumerate(("r+", "a")):
        with open_store(path, mode) as store:
            store.set(f"new{number}", b"2")
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["new0", "new1", "old"]


def test_w_replaces_an_existing_dataset(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "old" / "c" / "0").mkdir(parents=True)
    (root / "old" / "c" / "0" / "1").write_bytes(b"x")
    (root / "old" / "zarr.json").write_bytes(b"{}")
    (root / "zarr.json").write_bytes(b"{}")
    store = open_store(root, "w")
    assert isinstance(store, DirectoryStore)
    assert not store.read_only
    assert list(store.list()) == []
    assert list(root.iterdir()) == []


def test_w_refuses_to_wipe_a_directory_that_is_no_dataset(tmp_path: Path) -> None:
    root = tmp_path / "photos"
    root.mkdir()
    (root / "holiday.jpg").write_bytes(b"jpg")
    with pytest.raises(StoreError, match="refusing to replace .*photos.*holds no Zarr dataset"):
        open_store(root, "w")
    assert (root / "holiday.jpg").read_bytes() == b"jpg"
    assert isinstance(open_store(tmp_path / "empty-is-fine", "w"), DirectoryStore)


def test_w_refuses_to_replace_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "data.nc"
    path.write_bytes(b"CDF\x01")
    with pytest.raises(StoreError, match="data.nc.*not a directory"):
        open_store(path, "w")
    assert path.read_bytes() == b"CDF\x01"


def test_w_replaces_a_zip_on_close(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("old", b"1")
    with open_store(path, "w") as store:
        assert isinstance(store, ZipStore)
        store.set("new", b"2")
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["new"]


def test_w_clears_an_fsspec_location(memory_url: str) -> None:
    FsspecStore(memory_url).set("old/0", b"1")
    with pytest.raises(StoreError, match="holds no Zarr dataset"):
        open_store(memory_url, "w")
    FsspecStore(memory_url).set(".zgroup", b"{}")
    FsspecStore(memory_url).set("old/notes", b"2")
    with pytest.raises(StoreError, match="besides a Zarr dataset it holds 'old/notes'"):
        open_store(memory_url, "w")
    FsspecStore(memory_url).delete("old/notes")
    FsspecStore(memory_url).set("old/.zarray", b"{}")
    store = open_store(memory_url, "w")
    assert list(store.list()) == []
    store.set("new", b"2")
    assert list(FsspecStore(memory_url).list()) == ["new"]


@pytest.mark.parametrize("mode", ["w-", "x"])
def test_exclusive_modes_refuse_existing_locations(
    tmp_path: Path, memory_url: str, mode: str
) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "x.zip").write_bytes(b"")
    FsspecStore(memory_url).set("k", b"v")
    for location in (tmp_path / "dir", tmp_path / "x.zip", memory_url):
        with pytest.raises(NodeExistsError, match="already exists") as info:
            open_store(location, mode)
        assert isinstance(info.value, FileExistsError)
    assert FsspecStore(memory_url).get("k") == b"v"


@pytest.mark.parametrize("mode", ["w-", "x"])
def test_exclusive_modes_create_new_locations(tmp_path: Path, memory_url: str, mode: str) -> None:
    stores = [
        open_store(tmp_path / "dir", mode),
        open_store(tmp_path / "x.zip", mode),
        open_store(memory_url, mode),
    ]
    assert [type(s) for s in stores] == [DirectoryStore, ZipStore, FsspecStore]
    for store in stores:
        store.set("k", b"v")
        store.close()
    assert (tmp_path / "dir" / "k").read_bytes() == b"v"
    assert ZipStore(tmp_path / "x.zip").get("k") == b"v"
    assert FsspecStore(memory_url).get("k") == b"v"


def test_r_opens_read_only_stores(tmp_path: Path, memory_url: str) -> None:
    (tmp_path / "dir").mkdir()
    with zipfile.ZipFile(tmp_path / "x.zip", "w"):
        pass
    for location in (tmp_path / "dir", tmp_path / "x.zip", memory_url):
        with pytest.raises(ReadOnlyError):
            open_store(location, "r").set("k", b"v")


def test_a_location_of_another_type_is_refused() -> None:
    with pytest.raises(StoreError, match="expected a path, URL, fsspec mapper or filesystem, or Store"):
        open_store(42)  # type: ignore[arg-type]
