"""ZipStore: modes, atomic replacement on close, interoperability, netcdf-c layout."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
import zarr

from nczarr.errors import InvalidKeyError, ReadOnlyError, StoreError
from nczarr.store import InvalidModeError, ZipStore


def make_zip(path: Path, entries: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> None:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, value in entries.items():
            archive.writestr(name, value)


def entries_of(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        return {info.filename: archive.read(info) for info in archive.infolist()}


def test_w_writes_a_stored_archive_python_can_read(tmp_path: Path) -> None:
    path = tmp_path / "new.zip"
    with ZipStore(path, "w") as store:
        store.set("zarr.json", b"{}")
        store.set("v/c/0", b"x" * 1000)
    assert entries_of(path) == {"v/c/0": b"x" * 1000, "zarr.json": b"{}"}
    with zipfile.ZipFile(path) as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}


def test_w_archive_is_readable_by_zarr_python(tmp_path: Path) -> None:
    path = tmp_path / "array.zip"
    data = np.arange(6, dtype="<i4")
    metadata = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [6],
        "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [6]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {"title": "by nczarr"},
    }
    with ZipStore(path, "w") as store:
        store.set("zarr.json", json.dumps(metadata).encode())
        store.set("c/0", data.tobytes())
    array = zarr.open_array(store=zarr.storage.ZipStore(path, mode="r"), mode="r")
    np.testing.assert_array_equal(array[:], data)
    assert array.attrs["title"] == "by nczarr"


def test_reads_an_archive_written_by_zarr_python(tmp_path: Path) -> None:
    path = tmp_path / "zarr.zip"
    zstore = zarr.storage.ZipStore(path, mode="w")
    array = zarr.create_array(zstore, shape=(4,), dtype="int16", chunks=(2,), compressors=None)
    array[:] = [1, 2, 3, 4]
    zstore.close()
    store = ZipStore(path)
    assert sorted(store.list()) == ["c/0", "c/1", "zarr.json"]
    assert np.frombuffer(store.get("c/1"), dtype="<i2").tolist() == [3, 4]


def test_w_replaces_an_existing_archive_only_on_close(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {"old": b"1"})
    before = path.read_bytes()
    store = ZipStore(path, "w")
    assert list(store.list()) == []
    store.set("new", b"2")
    assert path.read_bytes() == before
    store.close()
    assert entries_of(path) == {"new": b"2"}


def test_a_store_never_closed_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {"old": b"1"})
    before = path.read_bytes()
    store = ZipStore(path, "a")
    store.set("new", b"2")
    store.delete("old")
    buffer_dir = Path(store._work.path)
    assert buffer_dir.parent == tmp_path
    del store
    assert path.read_bytes() == before
    assert not buffer_dir.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.zip"]


def test_a_overlays_writes_and_deletes_on_the_old_entries(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    old = {"keep": b"k", "change": b"old", "drop": b"d", "dir/": b""}
    make_zip(path, old, zipfile.ZIP_DEFLATED)
    with ZipStore(path, "a") as store:
        assert sorted(store.list()) == ["change", "drop", "keep"]
        store.set("change", b"new")
        store.delete("drop")
        store.set("added/key", b"a")
        assert store.get("change") == b"new"
        assert not store.exists("drop")
        assert store.getsize("added/key") == 1
        assert sorted(store.list()) == ["added/key", "change", "keep"]
    assert entries_of(path) == {"added/key": b"a", "change": b"new", "dir/": b"", "keep": b"k"}
    with zipfile.ZipFile(path) as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
        assert archive.getinfo("dir/").is_dir()


def test_a_without_changes_leaves_the_archive_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {"keep": b"k"}, zipfile.ZIP_DEFLATED)
    before = path.read_bytes()
    with ZipStore(path, "a") as store:
        store.delete("missing")
        assert store.get("keep") == b"k"
    assert path.read_bytes() == before


def test_a_on_a_missing_archive_creates_it(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "x.zip"
    with ZipStore(path, "a") as store:
        store.set("k", b"v")
    assert entries_of(path) == {"k": b"v"}


def test_deflated_entries_are_readable(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {"zarr.json": b"{}" * 100, "c/0": b"z" * 5000}, zipfile.ZIP_DEFLATED)
    with ZipStore(path) as store:
        assert store.get("c/0") == b"z" * 5000
        assert store.get("c/0", (-2, None)) == b"zz"
        assert store.getsize("zarr.json") == 200


def test_netcdf_c_layout_reads_the_single_top_directory_as_root(tmp_path: Path) -> None:
    path = tmp_path / "foo.zip"
    make_zip(path, {"foo/.zgroup": b"g", "foo/v/.zarray": b"a", "foo/v/0": b"0", "foo/": b""})
    with ZipStore(path, "a") as store:
        assert store.prefix == "foo/"
        assert sorted(store.list()) == [".zgroup", "v/.zarray", "v/0"]
        assert store.list_dir("") == ([".zgroup"], ["v"])
        store.set("v/1", b"1")
    assert entries_of(path) == {
        "foo/": b"",
        "foo/.zgroup": b"g",
        "foo/v/": b"",  # netcdf-c adds a directory entry for each folder of a key
        "foo/v/.zarray": b"a",
        "foo/v/0": b"0",
        "foo/v/1": b"1",
    }
    assert zipfile.ZipFile(path).namelist()[0] == "foo/"  # netcdf-c's root: the first member's folder


def test_netcdf_c_layout_is_rooted_at_the_first_members_folder(tmp_path: Path) -> None:
    """As zmap_zip.c's zipopen: the first path segment of member 0 names the dataset; other
    members outside it are kept as they are on rewriting."""
    path = tmp_path / "x.zip"
    make_zip(path, {"b/.zgroup": b"g", "b/v/.zarray": b"a", "a/.zgroup": b"other", "README": b"r"})
    with ZipStore(path, "a") as store:
        assert store.prefix == "b/"
        assert sorted(store.list()) == [".zgroup", "v/.zarray"]
        store.delete("v/.zarray")
    assert entries_of(path) == {"b/": b"", "b/.zgroup": b"g", "a/.zgroup": b"other", "README": b"r"}


@pytest.mark.parametrize("mode", ["w", "a"])
def test_folder_writes_netcdf_c_layout(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "new.zip"
    with ZipStore(path, mode, folder="new") as store:
        store.set(".zgroup", b"g")
        store.set("g/v/0.0", b"0")
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["new/", "new/.zgroup", "new/g/", "new/g/v/", "new/g/v/0.0"]
        assert all(info.is_dir() for info in archive.infolist() if info.filename.endswith("/"))
    with ZipStore(path) as store:  # read back without being told the folder
        assert store.prefix == "new/"
        assert store.get("g/v/0.0") == b"0"


def test_folder_leaves_an_existing_archives_layout(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {".zgroup": b"g"})
    with ZipStore(path, "a", folder="x") as store:
        assert store.prefix == ""
        store.set("v/0", b"0")
    assert entries_of(path) == {".zgroup": b"g", "v/0": b"0"}


@pytest.mark.parametrize(
    "entries",
    [
        {"zarr.json": b"{}", "g/zarr.json": b"{}"},  # the root node is at the top
        {"data/c/0": b"", "data/c/1": b""},  # the single directory is no node
        {"data/zarr.json": b"{}", "zarr.json": b"{}"},  # a node at the top wins over the first member's folder
    ],
)
def test_other_layouts_keep_the_archive_root(tmp_path: Path, entries: dict[str, bytes]) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, entries)
    with ZipStore(path) as store:
        assert store.prefix == ""
        assert sorted(store.list()) == sorted(entries)


def test_entries_that_are_not_keys_are_ignored_when_reading_and_refused_for_writing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {"good": b"1", "../evil": b"2", "a//b": b"3"})
    with ZipStore(path) as store:
        assert list(store.list()) == ["good"]
    assert "'../evil'" in caplog.text
    with pytest.raises(InvalidKeyError, match="'../evil'.*refusing to rewrite"):
        ZipStore(path, "a")


def test_r_on_a_missing_archive_names_it(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="missing.zip' does not exist"):
        ZipStore(tmp_path / "missing.zip")


def test_a_file_that_is_no_zip_archive(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    path.write_bytes(b"not a zip")
    with pytest.raises(StoreError, match="cannot open zip archive"):
        ZipStore(path)


def test_a_directory_is_no_archive(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a file"):
        ZipStore(tmp_path, "w")


def test_unknown_mode(tmp_path: Path) -> None:
    with pytest.raises(InvalidModeError, match="'r+'") as info:
        ZipStore(tmp_path / "x.zip", "r+")
    assert isinstance(info.value, ValueError)


def test_r_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {"k": b"v"})
    with ZipStore(path) as store, pytest.raises(ReadOnlyError, match="'k'"):
        store.set("k", b"w")


def test_closed_store_refuses_use_and_close_is_idempotent(tmp_path: Path) -> None:
    store = ZipStore(tmp_path / "x.zip", "w")
    store.set("k", b"v")
    store.close()
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.get("k")
    with pytest.raises(StoreError, match="is closed"):
        store.set("k", b"v")


def test_failed_close_leaves_the_old_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.zip"
    make_zip(path, {"old": b"1"})
    before = path.read_bytes()
    store = ZipStore(path, "a")
    store.set("new", b"2")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(StoreError, match="x.zip'.*No space left"):
        store.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.zip"]
