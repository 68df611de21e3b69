"""DirectoryStore: file layout, atomic writes, pruning, the root."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from nczarr.errors import ReadOnlyError, StoreError
from nczarr.store import DirectoryStore
from nczarr.store._files import TEMP_PREFIX


def leftovers(root: Path) -> list[Path]:
    """Temporary files anywhere under ``root``."""
    return [p for p in root.rglob("*") if p.name.startswith(".tmp-")]


def test_key_is_a_file_path_under_the_root(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.set("a/b/c", b"value")
    assert (tmp_path / "a" / "b" / "c").read_bytes() == b"value"
    (tmp_path / "a" / "written-elsewhere").write_bytes(b"outside")
    assert store.get("a/written-elsewhere") == b"outside"
    assert sorted(store.list()) == ["a/b/c", "a/written-elsewhere"]


def test_root_may_be_str_or_path_and_compares_by_resolved_root(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    by_str = DirectoryStore(str(tmp_path / "real"))
    by_path = DirectoryStore(tmp_path / "real")
    by_link = DirectoryStore(tmp_path / "link")
    assert by_str == by_path == by_link
    assert len({by_str, by_path, by_link}) == 1
    assert by_str != DirectoryStore(tmp_path)
    assert repr(by_str) == f"DirectoryStore({str(tmp_path / 'real')!r})"


def test_root_is_created_by_default(tmp_path: Path) -> None:
    DirectoryStore(tmp_path / "new" / "root")
    assert (tmp_path / "new" / "root").is_dir()


@pytest.mark.parametrize("options", [{"read_only": True}, {"create": False}])
def test_missing_root_is_an_error_naming_it(tmp_path: Path, options: dict[str, bool]) -> None:
    with pytest.raises(StoreError, match="does not exist") as info:
        DirectoryStore(tmp_path / "missing", **options)
    assert str(tmp_path / "missing") in str(info.value)
    assert not (tmp_path / "missing").exists()


def test_root_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(StoreError, match="not a directory"):
        DirectoryStore(tmp_path / "file")


def test_failed_replace_keeps_old_value_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DirectoryStore(tmp_path)
    store.set("a/key", b"old")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(StoreError, match="'a/key'.*No space left"):
        store.set("a/key", b"new")
    monkeypatch.undo()
    assert store.get("a/key") == b"old"
    assert leftovers(tmp_path) == []


def test_interrupted_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DirectoryStore(tmp_path)
    store.set("key", b"old")

    def interrupt(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        store.set("key", b"new")
    monkeypatch.undo()
    assert store.get("key") == b"old"
    assert leftovers(tmp_path) == []


def test_concurrent_reader_never_sees_a_partial_value(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    size = 1 << 21
    values = [b"a" * size, b"b" * size]
    store.set("chunk", values[0])
    stop = threading.Event()

    def write() -> None:
        for i in range(40):
            store.set("chunk", values[i % 2])
        stop.set()

    writer = threading.Thread(target=write)
    writer.start()
    while not stop.is_set():
        assert store.get("chunk") in values
    writer.join()
    assert leftovers(tmp_path) == []


def test_temporary_files_are_not_listed(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.set("a/.zarray", b"{}")
    store.set(".tmp-not-ours", b"a real key")
    (tmp_path / "a" / f"{TEMP_PREFIX}0123456789abcdef").write_bytes(b"half a value")
    assert sorted(store.list()) == [".tmp-not-ours", "a/.zarray"]
    assert store.list_dir("a/") == ([".zarray"], [])
    assert store.list_dir("") == ([".tmp-not-ours"], ["a"])


def test_new_files_get_the_umask_permissions(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        DirectoryStore(tmp_path).set("key", b"x")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o644


def test_delete_prunes_empty_directories_but_not_the_root(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "root")
    store.set("g/v/c/0/0", b"x")
    store.set("g/zarr.json", b"{}")
    store.delete("g/v/c/0/0")
    assert not (tmp_path / "root" / "g" / "v").exists()
    assert (tmp_path / "root" / "g" / "zarr.json").is_file()
    store.delete("g/zarr.json")
    assert list((tmp_path / "root").iterdir()) == []


def test_delete_prefix_also_removes_what_killed_writers_left(tmp_path: Path) -> None:
    """A temporary file a killed writer left is no key, but would keep its directory."""
    store = DirectoryStore(tmp_path)
    store.set("job/done/1", b"")
    store.set("v/c/0", b"x")
    (tmp_path / "job" / "done" / f"{TEMP_PREFIX}0123456789abcdef").write_bytes(b"half")
    (tmp_path / "v" / "c" / f"{TEMP_PREFIX}fedcba9876543210").write_bytes(b"half")
    (tmp_path / "job" / ".tmp-not-ours").write_bytes(b"a real key")
    store.delete_prefix("job/done/")
    assert not (tmp_path / "job" / "done").exists()
    assert (tmp_path / "job" / ".tmp-not-ours").exists()
    assert len(leftovers(tmp_path)) == 2  # the other prefixes are untouched
    store.remove_leftovers()
    assert leftovers(tmp_path) == [tmp_path / "job" / ".tmp-not-ours"]
    assert store.get("v/c/0") == b"x"


def test_a_key_cannot_replace_a_directory_or_sit_below_a_file(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.set("a/b", b"x")
    with pytest.raises(StoreError, match="'a'"):
        store.set("a", b"y")
    with pytest.raises(StoreError, match="'a/b/c'"):
        store.set("a/b/c", b"y")
    assert store.get("a/b") == b"x"
    assert leftovers(tmp_path) == []


def test_get_into_reads_a_whole_file_into_an_array(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    data = np.arange(1 << 16, dtype="<f8")
    store.set("c/0", data)
    out = np.empty_like(data)
    assert store.get_into("c/0", out)
    np.testing.assert_array_equal(out, data)
    with pytest.raises(StoreError, match="'c/0'"):
        store.get_into("c/0", np.empty(10, dtype="<f8"))
    assert store.get_into("c/1", out) is False
    assert store.get_into("c", out) is False  # a directory is no key


def test_overwrite_in_place_only_over_a_value_of_the_same_size(tmp_path):
    store = DirectoryStore(tmp_path)
    store.set("a/k", b"12345678")
    inode = (tmp_path / "a" / "k").stat().st_ino
    assert store.overwrite("a/k", b"abcdefgh") is True
    assert store.get("a/k") == b"abcdefgh" and (tmp_path / "a" / "k").stat().st_ino == inode
    assert store.overwrite("a/k", b"short") is False and store.get("a/k") == b"abcdefgh"
    assert store.overwrite("a/missing", b"x") is False and not store.exists("a/missing")
    with pytest.raises(ReadOnlyError):
        DirectoryStore(tmp_path, read_only=True).overwrite("a/k", b"zzzzzzzz")


def test_a_chunk_folder_linked_outside_among_verified_siblings_is_refused(tmp_path: Path) -> None:
    # the folders of earlier chunks are verified and remembered; a sibling folder that is a
    # link out of the store is still refused when a later chunk goes through it
    from nczarr.errors import InvalidKeyError

    outside = tmp_path / "outside"
    (outside / "0").mkdir(parents=True)
    (outside / "0" / "0").write_bytes(b"secret")
    root = tmp_path / "store"
    store = DirectoryStore(root)
    store.set("v/c/0/0/0", b"inside")
    assert store.get("v/c/0/0/0") == b"inside"
    (root / "v" / "c" / "1").symlink_to(outside)
    with pytest.raises(InvalidKeyError, match="'v/c/1' is a symbolic link"):
        store.get("v/c/1/0/0")
    with pytest.raises(InvalidKeyError, match="'v/c/1' is a symbolic link"):
        store.set("v/c/1/0/1", b"x")
    assert sorted(p.name for p in (outside / "0").iterdir()) == ["0"]


def test_a_link_below_a_folder_link_that_stays_inside_is_checked(tmp_path: Path) -> None:
    from nczarr.errors import InvalidKeyError

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "k").write_bytes(b"secret")
    root = tmp_path / "store"
    (root / "real" / "sub").mkdir(parents=True)
    (root / "real" / "sub" / "k").write_bytes(b"inside")
    (root / "alias").symlink_to("real")  # inside: followed
    (root / "real" / "out").symlink_to(outside)  # reached through the alias: refused
    store = DirectoryStore(root, read_only=True)
    assert store.get("alias/sub/k") == b"inside"
    with pytest.raises(InvalidKeyError, match="outside the store"):
        store.get("alias/out/k")


def test_reading_chunks_resolves_no_path_and_checks_each_new_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no realpath per chunk: one lstat per folder the store has not seen yet
    store = DirectoryStore(tmp_path / "s")
    for t in range(20):
        store.set(f"v/c/{t}/0/0", b"x")
    calls: list[str] = []
    real_lstat, real_realpath = os.lstat, os.path.realpath
    monkeypatch.setattr(os, "lstat", lambda p, *a, **k: calls.append(f"lstat {p}") or real_lstat(p, *a, **k))
    monkeypatch.setattr(os.path, "realpath", lambda p, *a, **k: calls.append(f"realpath {p}") or real_realpath(p, *a, **k))
    fresh = DirectoryStore(tmp_path / "s", read_only=True)
    calls.clear()
    assert [fresh.get(f"v/c/{t}/0/0") for t in range(20)] == [b"x"] * 20
    assert not [c for c in calls if c.startswith("realpath")]
    # v, v/c, then c/<t> and c/<t>/0 for each chunk
    assert len(calls) == 2 + 2 * 20
    calls.clear()
    assert fresh.get("v/c/3/0/0") == b"x"
    assert calls == []


def test_a_key_of_many_folders_is_checked_without_recursion(tmp_path: Path) -> None:
    import sys

    key = "/".join(["a"] * 400) + "/k"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)  # below the key's depth: a check folder by folder must not recurse
    try:
        DirectoryStore(tmp_path / "s").set(key, b"deep")
        value = DirectoryStore(tmp_path / "s", read_only=True).get(key)
    finally:
        sys.setrecursionlimit(limit)
    assert value == b"deep"


def test_a_new_chunk_folder_is_made_from_the_top_down(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the first missing folder is seen by an lstat; the folders below it, made by the store,
    # are new and inside: no lstat, no failed open
    from nczarr.store import _files, directory

    store = DirectoryStore(tmp_path / "s")
    store.set("v/c/0/0/0", b"x")
    calls: list[str] = []
    synced: list[str] = []
    real_mkdir, real_lstat, real_open = os.mkdir, os.lstat, os.open

    def mkdir(path: str, *args: int) -> None:
        calls.append("mkdir " + os.path.relpath(path, tmp_path / "s"))
        real_mkdir(path, *args)

    def lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        calls.append("lstat " + os.path.relpath(path, tmp_path / "s"))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    def open_(path: str, *args: int) -> int:
        calls.append("open " + os.path.dirname(os.path.relpath(path, tmp_path / "s")))
        return real_open(path, *args)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "open", open_)
    store.set("v/c/1/0/0", b"y")  # c/1 and c/1/0 are new
    assert calls == ["lstat v/c/1", "mkdir v/c/1", "mkdir v/c/1/0", "open v/c/1/0"]
    calls.clear()
    store.set("v/c/1/1/0", b"z")  # the parent is known
    assert calls == ["lstat v/c/1/1", "mkdir v/c/1/1", "open v/c/1/1"]
    calls.clear()
    other = DirectoryStore(tmp_path / "s")  # folders that are there: an lstat each, as for a read
    calls.clear()
    other.set("v/c/1/1/1", b"w")
    assert calls == ["lstat v", "lstat v/c", "lstat v/c/1", "lstat v/c/1/1", "open v/c/1/1"]
    calls.clear()
    monkeypatch.setattr(directory, "fsync_directory", lambda d: synced.append(os.path.relpath(d, tmp_path / "s")))
    DirectoryStore(tmp_path / "s", fsync=True).set("n/m/k", b"")  # each new folder's parent, top down
    assert synced[:2] == [".", "n"]
    synced.clear()
    monkeypatch.setattr(_files, "fsync_directory", lambda d: synced.append(os.path.relpath(d, tmp_path / "s")))
    _files.makedirs(str(tmp_path / "s" / "p" / "q"), fsync=True)
    assert synced == [".", "p"]
    monkeypatch.undo()
    assert sorted(store.list()) == ["n/m/k", "v/c/0/0/0", "v/c/1/0/0", "v/c/1/1/0", "v/c/1/1/1"]


def test_a_folder_made_meanwhile_as_a_link_out_is_refused_on_write(tmp_path: Path) -> None:
    # mkdir fails on a link that is already there: the store then checks where it leads
    from nczarr.errors import InvalidKeyError

    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "store"
    store = DirectoryStore(root)
    store.set("v/zarr.json", b"{}")
    (root / "v" / "c").symlink_to(outside)
    with pytest.raises(InvalidKeyError, match="'v/c' is a symbolic link"):
        store.set("v/c/0/0", b"x")
    assert list(outside.iterdir()) == []


def test_a_file_where_a_folder_should_be_is_a_clear_error(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("v/c/0", b"a file")
    with pytest.raises(StoreError, match="cannot write 'v/c/0/1'"):
        store.set("v/c/0/1", b"x")
    assert store.get("v/c/0") == b"a file"
