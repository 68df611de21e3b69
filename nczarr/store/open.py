"""Opening the right store for a path, a URL or an existing store."""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Mapping
from typing import Any, NoReturn
from urllib.parse import urlsplit
from urllib.request import url2pathname

from nczarr.errors import InvalidModeError, NodeExistsError, StoreError
from nczarr.store.base import Store
from nczarr.store.directory import DirectoryStore
from nczarr.store.fsspec import FsspecStore
from nczarr.store.zip import ZipStore

logger = logging.getLogger(__name__)

#: Open modes, as in netCDF4-python and zarr-python.
MODES = {
    "r": "read-only; the location must exist",
    "r+": "read and write; the location must exist",
    "a": "read and write; the location is created if missing",
    "w": "create, replacing whatever is at the location",
    "w-": "create; the location must not exist",
    "x": "create; the location must not exist",
}

#: A URL scheme followed by "://", or an fsspec chain such as "simplecache::s3://...".
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)(://|::)")


def open_store(
    location: Store | str | os.PathLike[str],
    mode: str = "r",
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> Store:
    """The store at ``location``, opened in ``mode`` (see ``MODES``).

    A Store is returned as it is. A URL other than ``file://`` opens an FsspecStore (with
    ``storage_options``); a path or ``file://`` URL ending in ``.zip`` opens a ZipStore, any
    other a DirectoryStore.
    """
    if mode not in MODES:
        raise InvalidModeError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if isinstance(location, Store):
        return location
    if isinstance(location, os.PathLike):
        location = os.fspath(location)
    if not isinstance(location, str):
        raise StoreError(f"cannot open a store at {location!r}: expected a path, URL or Store")
    match = _SCHEME.match(location)
    if match and not (match[1].lower() == "file" and match[2] == "://"):
        return _open_fsspec(location, mode, storage_options)
    path = _file_url_path(location) if match else location
    if path.lower().endswith(".zip"):
        return _open_zip(path, mode)
    return _open_directory(path, mode)


def _file_url_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise StoreError(f"file URL {url!r} names a host; only local file URLs are supported")
    return url2pathname(parts.path)


def _refuse_existing(location: str) -> NoReturn:
    raise NodeExistsError(f"{location!r} already exists (mode 'w-' creates only new datasets)")


#: Keys at the top of a location that show it holds a Zarr dataset (v3, v2, consolidated v2).
_ZARR_ROOT_KEYS = ("zarr.json", ".zgroup", ".zarray", ".zmetadata")


def _refuse_unless_zarr(store: Store, location: str) -> None:
    """Mode 'w' replaces a dataset; it must not wipe a directory of something else."""
    keys, prefixes = store.list_dir("")
    if (keys or prefixes) and not any(name in keys for name in _ZARR_ROOT_KEYS):
        raise StoreError(
            f"refusing to replace {location!r}: it is not empty and holds no Zarr dataset "
            f"(no {', '.join(_ZARR_ROOT_KEYS)} at its top)"
        )


def _open_directory(path: str, mode: str) -> DirectoryStore:
    if mode == "r":
        return DirectoryStore(path, read_only=True)
    if mode == "r+":
        return DirectoryStore(path, create=False)
    if mode in ("w-", "x") and os.path.lexists(path):
        _refuse_existing(path)
    if mode == "w" and os.path.lexists(path):
        if os.path.islink(path) or not os.path.isdir(path):
            kind = "a symbolic link" if os.path.islink(path) else "not a directory"
            raise StoreError(f"refusing to replace {path!r} with a dataset: it is {kind}")
        _refuse_unless_zarr(DirectoryStore(path, read_only=True), path)
        logger.debug("removing %r to create a new dataset there", path)
        try:
            shutil.rmtree(path)
        except OSError as exc:
            raise StoreError(f"cannot remove {path!r} to create a dataset there: {exc}") from exc
    return DirectoryStore(path)


def _open_zip(path: str, mode: str) -> ZipStore:
    exists = os.path.lexists(path)
    if mode == "r+" and not exists:
        raise StoreError(f"zip archive {path!r} does not exist")
    if mode in ("w-", "x") and exists:
        _refuse_existing(path)
    zip_mode = {"r": "r", "r+": "a", "a": "a"}.get(mode, "w")
    return ZipStore(path, zip_mode)


def _open_fsspec(url: str, mode: str, storage_options: Mapping[str, Any] | None) -> FsspecStore:
    # No existence check for 'r': over HTTP the root itself need not be fetchable.
    store = FsspecStore(url, read_only=mode == "r", storage_options=storage_options)
    if mode in ("w", "w-", "x") and store.fs.exists(store.root):
        if mode != "w":
            _refuse_existing(url)
        _refuse_unless_zarr(store, url)
        logger.debug("removing %r to create a new dataset there", url)
        store.fs.rm(store.root, recursive=True)
    return store
