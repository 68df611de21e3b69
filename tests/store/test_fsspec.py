"""FsspecStore: batching, error handling, filesystem objects."""

from __future__ import annotations

import sys
from pathlib import Path

import fsspec
import pytest

from nczarr.errors import StoreError
from nczarr.store import FsspecStore


def test_get_many_is_one_batch_call(memory_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = FsspecStore(memory_url)
    store.set_many({f"c/{i}": bytes([i]) for i in range(5)})
    calls = []
    original = store.fs.cat

    def cat(paths: list[str], **kwargs: object) -> dict[str, object]:
        calls.append(paths)
        return original(paths, **kwargs)

    monkeypatch.setattr(store.fs, "cat", cat)
    assert store.get_many(["c/0", "c/3", "c/9"]) == {"c/0": b"\x00", "c/3": b"\x03"}
    assert len(calls) == 1


def test_get_many_reports_failures_other_than_absence(
    memory_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FsspecStore(memory_url)
    store.set_many({"c/0": b"0", "c/1": b"1"})
    original = store.fs.cat_file

    def cat_file(path: str, *args: object, **kwargs: object) -> bytes:
        if path.endswith("c/1"):
            raise PermissionError(path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(store.fs, "cat_file", cat_file)
    with pytest.raises(StoreError, match="'c/1'"):
        store.get_many(["c/0", "c/1"])


def test_keys_with_glob_characters_are_literal(memory_url: str) -> None:
    store = FsspecStore(memory_url)
    store.set_many({"v[1]": b"bracket", "v1": b"plain", "a*": b"star", "ab": b"ab"})
    assert store.get_many(["v[1]", "a*"]) == {"v[1]": b"bracket", "a*": b"star"}
    store.delete_many(["v[1]", "a*"])
    assert sorted(store.list()) == ["ab", "v1"]


def test_filesystem_object_with_path(memory_url: str) -> None:
    fs = fsspec.filesystem("memory")
    FsspecStore(memory_url).set("g/zarr.json", b"{}")
    root = fs._strip_protocol(memory_url)
    store = FsspecStore(fs, path=f"{root}/g", read_only=True)
    assert list(store.list()) == ["zarr.json"]
    assert repr(store).startswith("FsspecStore('memory://")
    assert repr(store).endswith(f"{root}/g')")


def test_url_with_path_appended(memory_url: str) -> None:
    FsspecStore(memory_url).set("g/zarr.json", b"{}")
    assert FsspecStore(memory_url, path="g").get("zarr.json") == b"{}"


def test_storage_options_need_a_url() -> None:
    with pytest.raises(StoreError, match="storage_options"):
        FsspecStore(fsspec.filesystem("memory"), storage_options={"anon": True})


def test_local_filesystem_gets_parent_directories(tmp_path: Path) -> None:
    store = FsspecStore(fsspec.filesystem("file"), path=str(tmp_path))
    store.set_many({"a/b/c": b"1", "d": b"2"})
    assert (tmp_path / "a" / "b" / "c").read_bytes() == b"1"
    assert sorted(store.list()) == ["a/b/c", "d"]
    assert store.list_dir("") == (["d"], ["a"])


def test_unknown_protocol_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="no-such-protocol://x"):
        FsspecStore("no-such-protocol://x")


def test_missing_fsspec_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(StoreError, match=r"pip install nczarr\[remote\]"):
        FsspecStore("memory://x")
