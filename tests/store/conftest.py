"""Every kind of store, behind one small interface for the contract tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

from nczarr.store import DirectoryStore, FsspecStore, MemoryStore, Store, ZipStore


class StoreKind:
    """Opens a writable store on a fresh location, and reopens that location read-only."""

    name: str

    def new(self) -> Store:
        raise NotImplementedError

    def reopen(self, store: Store) -> Store:
        """Close ``store`` (making its writes durable) and open its location read-only."""
        raise NotImplementedError


class DirectoryKind(StoreKind):
    name = "directory"

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "store"

    def new(self) -> Store:
        return DirectoryStore(self.root)

    def reopen(self, store: Store) -> Store:
        store.close()
        return DirectoryStore(self.root, read_only=True)


class MemoryKind(StoreKind):
    name = "memory"

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def new(self) -> Store:
        return MemoryStore(self.data)

    def reopen(self, store: Store) -> Store:
        store.close()
        return MemoryStore(self.data, read_only=True)


class ZipKind(StoreKind):
    name = "zip"

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "store.zip"

    def new(self) -> Store:
        return ZipStore(self.path, "w")

    def reopen(self, store: Store) -> Store:
        store.close()
        return ZipStore(self.path, "r")


class FsspecKind(StoreKind):
    name = "fsspec"

    def __init__(self, url: str) -> None:
        self.url = url

    def new(self) -> Store:
        return FsspecStore(self.url)

    def reopen(self, store: Store) -> Store:
        store.close()
        return FsspecStore(self.url, read_only=True)


@pytest.fixture
def memory_url() -> Iterator[str]:
    """A root on fsspec's process-wide memory filesystem that no other test uses."""
    url = f"memory://nczarr-tests/{uuid.uuid4().hex}"
    yield url
    fs = fsspec.filesystem("memory")
    if fs.exists(url):
        fs.rm(url, recursive=True)


@pytest.fixture(params=["directory", "memory", "zip", "fsspec"])
def kind(request: pytest.FixtureRequest, tmp_path: Path, memory_url: str) -> StoreKind:
    if request.param == "directory":
        return DirectoryKind(tmp_path)
    if request.param == "memory":
        return MemoryKind()
    if request.param == "zip":
        return ZipKind(tmp_path)
    return FsspecKind(memory_url)
