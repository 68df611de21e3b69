"""Every kind of store, behind one small interface for the contract tests: local ones, fsspec's
memory filesystem, and S3 (moto's server, started here for the session) through s3fs and
through obstore."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from motoserver import moto_s3

from nczarr.store import DirectoryStore, FsspecStore, MemoryStore, Store, ZipStore
from nczarr.store.obstore import ObstoreStore

#: The bucket of the S3 kinds, on moto's server.
S3_BUCKET = "nczarr-contract"


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


class S3Kind(StoreKind):
    """A fresh prefix of the moto bucket, through s3fs (FsspecStore) or obstore (ObstoreStore)."""

    def __init__(self, endpoint: str, store_class: type[FsspecStore] | type[ObstoreStore]) -> None:
        self.name = f"s3-{'fsspec' if store_class is FsspecStore else 'obstore'}"
        self.url = f"s3://{S3_BUCKET}/{uuid.uuid4().hex[:12]}"
        self.options = {"endpoint_url": endpoint}
        self.store_class = store_class

    def new(self) -> Store:
        return self.store_class(self.url, storage_options=self.options)

    def reopen(self, store: Store) -> Store:
        store.close()
        return self.store_class(self.url, read_only=True, storage_options=self.options)


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server with the contract tests' bucket (test credentials only)."""
    with moto_s3(tmp_path_factory.mktemp("aws"), {S3_BUCKET: None}) as endpoint:
        yield endpoint


@pytest.fixture
def memory_url() -> Iterator[str]:
    """A root on fsspec's process-wide memory filesystem that no other test uses."""
    url = f"memory://nczarr-tests/{uuid.uuid4().hex}"
    yield url
    fs = fsspec.filesystem("memory")
    if fs.exists(url):
        fs.rm(url, recursive=True)


@pytest.fixture(params=["directory", "memory", "zip", "fsspec", "s3-fsspec", "s3-obstore"])
def kind(request: pytest.FixtureRequest, tmp_path: Path, memory_url: str) -> StoreKind:
    if request.param == "directory":
        return DirectoryKind(tmp_path)
    if request.param == "memory":
        return MemoryKind()
    if request.param == "zip":
        return ZipKind(tmp_path)
    if request.param.startswith("s3-"):
        endpoint = request.getfixturevalue("s3_endpoint")
        return S3Kind(endpoint, FsspecStore if request.param == "s3-fsspec" else ObstoreStore)
    return FsspecKind(memory_url)
