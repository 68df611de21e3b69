"""A store in a ZIP archive, with writes buffered on disk until ``close``."""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import tempfile
import threading
import time
import weakref
import zipfile
from collections.abc import Iterator
from typing import BinaryIO

from nczarr.errors import InvalidKeyError, InvalidModeError, StoreError
from nczarr.store._files import atomic_open
from nczarr.store.base import ByteRange, Store, slice_range, validate_key

logger = logging.getLogger(__name__)

#: Documents that make a directory a zarr node (v3, then v2 group and array).
_NODE_DOCUMENTS = ("zarr.json", ".zgroup", ".zarray")
_COPY_BUFFER = 1 << 20
#: What unzip gives an extracted entry: a regular file, rw-r--r--.
_FILE_ATTRIBUTES = 0o100644 << 16


class ZipStore(Store):
    """The entries of a ZIP archive as keys.

    ``mode`` is ``'r'`` (read-only), ``'w'`` (a new archive) or ``'a'`` (the entries of an
    existing archive, if any, can be overwritten and deleted). Writes and deletes are kept
    aside and make a new archive, which replaces ``path`` in one step, on ``close``; a store
    never closed leaves ``path`` untouched. Entries are written uncompressed.

    Archives made by netcdf-c hold every key under one top-level directory named after the
    archive; such a directory is read as the root (``prefix``) and kept when rewriting.
    """

    def __init__(self, path: str | os.PathLike[str], mode: str = "r") -> None:
        if mode not in ("r", "w", "a"):
            raise InvalidModeError(f"ZipStore mode must be 'r', 'w' or 'a', not {mode!r}")
        super().__init__(read_only=mode == "r")
        self.path = os.path.abspath(os.fspath(path))
        self.mode = mode
        #: The directory inside the archive that holds the keys: "" or ending with "/".
        self.prefix = ""
        self._lock = threading.Lock()
        self._archive: zipfile.ZipFile | None = None
        self._entries: dict[str, zipfile.ZipInfo] = {}
        # Directory entries and names that are no keys, copied as they are on rewriting.
        self._others: list[zipfile.ZipInfo] = []
        self._pending: dict[str, str] = {}  # key -> file holding its new value
        self._deleted: set[str] = set()  # keys of archive entries deleted
        self._buffer_dir: str | None = None
        self._remove_buffer_dir: weakref.finalize | None = None
        self._names = itertools.count()
        self._closed = False
        exists = os.path.exists(self.path)
        if exists and not os.path.isfile(self.path):
            raise StoreError(f"zip archive path {self.path!r} exists and is not a file")
        if mode == "r" and not exists:
            raise StoreError(f"zip archive {self.path!r} does not exist")
        if mode != "w" and exists:
            self._read_directory()
        # A new archive is written on close even if empty, as a new directory store would be.
        self._dirty = not exists or mode == "w"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}, mode={self.mode!r})"

    def _read_directory(self) -> None:
        try:
            self._archive = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise StoreError(f"cannot open zip archive {self.path!r}: {exc}") from exc
        listing = self._archive.infolist()
        self._others = [info for info in listing if info.is_dir()]
        # Later entries of the same name win, as in zipfile.
        infos = {info.filename: info for info in listing if not info.is_dir()}
        self.prefix = _root_prefix(infos)
        if self.prefix:
            logger.debug("zip archive %r keeps its keys under %r", self.path, self.prefix)
        for name, info in infos.items():
            try:
                self._entries[validate_key(name[len(self.prefix) :])] = info
            except InvalidKeyError:
                logger.warning("ignoring entry %r of %r: not a store key", name, self.path)
                self._others.append(info)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self!r} is closed")

    # -- reading -------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        with self._lock:
            self._check_open()
            buffered = self._pending.get(key)
            if buffered is not None:
                with open(buffered, "rb") as file:
                    value = file.read()
            else:
                info = self._live_entry(key)
                if info is None:
                    return None
                try:
                    value = self._archive.read(info)
                except (zipfile.BadZipFile, OSError) as exc:
                    raise StoreError(f"cannot read {key!r} from {self!r}: {exc}") from exc
        return slice_range(value, byte_range)

    def _live_entry(self, key: str) -> zipfile.ZipInfo | None:
        return None if key in self._deleted else self._entries.get(key)

    def _exists(self, key: str) -> bool:
        with self._lock:
            self._check_open()
            return key in self._pending or self._live_entry(key) is not None

    def _getsize(self, key: str) -> int | None:
        with self._lock:
            self._check_open()
            buffered = self._pending.get(key)
            if buffered is not None:
                return os.path.getsize(buffered)
            info = self._live_entry(key)
            return None if info is None else info.file_size

    def _live_keys(self) -> set[str]:
        return (self._entries.keys() - self._deleted) | self._pending.keys()

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            self._check_open()
            keys = self._live_keys()
        return (key for key in keys if key.startswith(prefix))

    # -- writing -------------------------------------------------------------------------
    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        with self._lock:
            self._check_open()
            if self._buffer_dir is None:
                self._buffer_dir = tempfile.mkdtemp(prefix="nczarr-zip-")
                # Remove the buffered values even when the store is never closed.
                self._remove_buffer_dir = weakref.finalize(
                    self, shutil.rmtree, self._buffer_dir, ignore_errors=True
                )
            buffered = os.path.join(self._buffer_dir, str(next(self._names)))
            with open(buffered, "wb") as file:
                file.write(value)
            self._discard_pending(key)
            self._pending[key] = buffered
            self._deleted.discard(key)
            self._dirty = True

    def _discard_pending(self, key: str) -> None:
        buffered = self._pending.pop(key, None)
        if buffered is not None:
            os.remove(buffered)

    def _delete(self, key: str) -> None:
        with self._lock:
            self._check_open()
            self._discard_pending(key)
            if key in self._entries and key not in self._deleted:
                self._deleted.add(key)
                self._dirty = True

    def close(self) -> None:
        """Write the new archive if anything changed, and release the open files."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._dirty:
                    try:
                        with atomic_open(self.path) as file:
                            self._write_archive(file)
                            # Closed before the new archive replaces it (Windows needs that).
                            self._close_archive()
                    except (OSError, zipfile.BadZipFile) as exc:
                        raise StoreError(f"cannot write zip archive {self.path!r}: {exc}") from exc
                    logger.debug("wrote zip archive %r", self.path)
            finally:
                self._close_archive()
                if self._remove_buffer_dir is not None:
                    self._remove_buffer_dir()

    def _close_archive(self) -> None:
        if self._archive is not None:
            self._archive.close()
            self._archive = None

    def _write_archive(self, file: BinaryIO) -> None:
        now = time.localtime()[:6]
        with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for info in self._others:
                self._copy_entry(archive, info, info.filename)
            for key in sorted(self._live_keys()):
                buffered = self._pending.get(key)
                if buffered is None:
                    self._copy_entry(archive, self._entries[key], self.prefix + key)
                    continue
                with open(buffered, "rb") as source:
                    size = os.fstat(source.fileno()).st_size
                    _add_entry(archive, self.prefix + key, source, size, now)

    def _copy_entry(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> None:
        with self._archive.open(info) as source:
            _add_entry(archive, name, source, info.file_size, info.date_time, info.external_attr)


def _root_prefix(infos: dict[str, zipfile.ZipInfo]) -> str:
    """The single top-level directory holding the root node, netcdf-c style, or ""."""
    tops = {name.partition("/")[0] if "/" in name else None for name in infos}
    if len(tops) != 1 or None in tops:
        return ""
    top = tops.pop()
    if any(f"{top}/{document}" in infos for document in _NODE_DOCUMENTS):
        return f"{top}/"
    return ""


def _add_entry(
    archive: zipfile.ZipFile,
    name: str,
    source: BinaryIO,
    size: int,
    date_time: tuple[int, int, int, int, int, int],
    external_attr: int = _FILE_ATTRIBUTES,
) -> None:
    info = zipfile.ZipInfo(name, date_time=date_time)
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = external_attr
    info.file_size = size  # lets zipfile choose ZIP64 up front for big entries
    with archive.open(info, "w") as target:
        shutil.copyfileobj(source, target, _COPY_BUFFER)
