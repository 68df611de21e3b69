"""What a source is, as far as telling whether it changed: its size and modification time,
or an object store's ETag. A job that reads many sources records their identities when it
starts and compares them when it resumes (archive copies, virtual datasets)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass

from nczarr.errors import StoreError
from nczarr.store.fsspec import import_fsspec


@dataclass(frozen=True)
class SourceIdentity:
    """A source's location, total size in bytes and ``stamp``: the modification time in
    nanoseconds of a local file, an object's ETag (or its modification time where the store
    gives no ETag); for a directory or prefix (a Zarr store), a digest of those of every file
    below it."""

    location: str
    size: int
    stamp: str

    def to_json(self) -> dict[str, object]:
        return {"location": self.location, "size": self.size, "stamp": self.stamp}

    @classmethod
    def from_json(cls, document: Mapping[str, object]) -> SourceIdentity:
        size = document["size"]
        assert isinstance(size, int)
        return cls(str(document["location"]), size, str(document["stamp"]))


def source_identity(location: str, storage_options: Mapping[str, object] | None = None) -> SourceIdentity:
    """The identity of the file, directory, object or prefix at ``location`` (a path or an
    fsspec URL, without netcdf-c's ``#mode=`` fragment). StoreError when there is none."""
    if "://" not in location or location.startswith("file://"):
        path = location.removeprefix("file://")
        try:
            return _local_identity(location, path)
        except OSError as error:
            raise StoreError(f"{location}: cannot read it: {error.strerror or error}") from error
    fsspec = import_fsspec()
    try:
        fs, path = fsspec.core.url_to_fs(location, **dict(storage_options or {}))
        info = fs.info(path)
        if info.get("type") == "directory":
            found = fs.find(path, detail=True)
            entries = [(name, int(entry.get("size") or 0), _object_stamp(entry)) for name, entry in sorted(found.items())]
            return _digest(location, entries)
        return SourceIdentity(location, int(info.get("size") or 0), _object_stamp(info))
    except FileNotFoundError as error:
        raise StoreError(f"{location}: no such file or object") from error
    except OSError as error:
        raise StoreError(f"{location}: cannot read it: {error}") from error


def _local_identity(location: str, path: str) -> SourceIdentity:
    status = os.stat(path)
    if not os.path.isdir(path):
        return SourceIdentity(location, status.st_size, str(status.st_mtime_ns))
    entries = []
    for folder, folders, files in os.walk(path):
        folders.sort()
        for name in sorted(files):
            full = os.path.join(folder, name)
            stat = os.stat(full)
            entries.append((os.path.relpath(full, path), stat.st_size, str(stat.st_mtime_ns)))
    return _digest(location, entries)


def _digest(location: str, entries: list[tuple[str, int, str]]) -> SourceIdentity:
    digest = hashlib.sha256()
    for name, size, stamp in entries:
        digest.update(f"{name}\0{size}\0{stamp}\n".encode())
    return SourceIdentity(location, sum(size for _, size, _ in entries), digest.hexdigest())


def _object_stamp(info: Mapping[str, object]) -> str:
    """An object's ETag, else its modification time, as fsspec's ``info`` gives them."""
    for key in ("ETag", "etag", "md5Hash", "LastModified", "mtime", "last_modified", "created"):
        value = info.get(key)
        if value is not None:
            return str(value).strip('"')
    return ""


__all__ = ["SourceIdentity", "source_identity"]
