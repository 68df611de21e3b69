"""A store in a ZIP archive, with writes buffered on disk until ``flush`` or ``close``."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import secrets
import shutil
import sys
import threading
import time
import weakref
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from typing import IO, BinaryIO

from nczarr.errors import InvalidKeyError, InvalidModeError, StoreError
from nczarr.store._files import atomic_open, makedirs, resolve_fsync
from nczarr.store.base import ByteRange, Store, check_size, validate_key

if sys.platform != "win32":
    import fcntl

logger = logging.getLogger(__name__)

#: Documents that make a directory a zarr node (v3, then v2 group and array).
_NODE_DOCUMENTS = ("zarr.json", ".zgroup", ".zarray")
#: Bytes copied, read or inflated at a time: zipfile inflates a whole member in one call
#: when asked for all of it, before it checks the size.
_PIECE = 1 << 20
#: What unzip gives an extracted entry: a regular file, rw-r--r--.
_FILE_ATTRIBUTES = 0o100644 << 16
#: ... and a directory entry: rwxr-xr-x, with MS-DOS's directory flag.
_DIRECTORY_ATTRIBUTES = (0o040755 << 16) | 0x10
#: Compression methods read: zipfile inflates bzip2 and lzma without an output limit.
_READABLE = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
#: A read that inflates more than ``BOMB_SIZE`` bytes, and more than ``BOMB_RATIO`` times
#: the member's compressed size, is refused as a decompression bomb (deflate reaches about
#: 1,000:1; compressed Zarr chunks come near 1:1). ``get_into`` reads into a buffer of the
#: member's declared size and is never refused for this.
BOMB_SIZE = 64 << 20
BOMB_RATIO = 100
#: A directory beside the archive holds buffered values and the next archive while a store
#: writes (the archive's filesystem, so the new archive replaces the old by a rename).
_WORK_PREFIX = ".tmp-nczarr-zip-"
_WORK_NAME = re.compile(re.escape(_WORK_PREFIX) + "[0-9a-f]{16}")
_DRIVE = re.compile(r"[A-Za-z]:")
#: What zipfile raises on a damaged or hostile archive (names that are no UTF-8, versions
#: and flags it does not support, deflate data that is no deflate data, ...).
_BROKEN = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error)


class ZipStore(Store):
    """The entries of a ZIP archive as keys.

    ``mode`` is ``'r'`` (read-only), ``'w'`` (a new archive) or ``'a'`` (the entries of an
    existing archive, if any, can be overwritten and deleted). Writes and deletes are kept
    aside, in a directory beside the archive, and make a complete new archive, which replaces
    ``path`` in one step, on :meth:`flush` (``Dataset.sync()``) and ``close``; a store never
    flushed nor closed leaves ``path`` untouched. Entries are written uncompressed. ``fsync``
    (None: the ``NCZARR_FSYNC`` setting) makes each new archive survive a power cut.

    Archives made by netcdf-c (``#mode=nczarr,zip``) hold every key under a top-level
    directory named after the archive (``x.zip`` holds ``x/``, its first entry). Reading, an
    archive whose top holds no node document is rooted, as netcdf-c roots it, at the first
    path segment of its first entry when that directory holds one; that directory is the
    ``prefix`` of every key, and is kept when rewriting (with the members outside it, copied
    as they are). ``folder`` names the directory a new archive (mode ``'w'``, or a missing or
    empty one) keeps its keys in, with a directory entry for it and for each folder of keys
    as netcdf-c writes them; None writes the keys at the archive's top, where zarr-python
    reads them.

    Members are never extracted. An archive holding two members of one name is refused. A
    member whose name is not a safe key (``..``, absolute, drive letter, backslash) is ignored
    when reading and makes the archive refused for writing (``InvalidKeyError``), as a rewrite
    would have to copy or silently drop it. Reads are bounded: see ``BOMB_SIZE``.
    """

    def __init__(
        self, path: str | os.PathLike[str], mode: str = "r", *, fsync: bool | None = None, folder: str | None = None
    ) -> None:
        if mode not in ("r", "w", "a"):
            raise InvalidModeError(f"ZipStore mode must be 'r', 'w' or 'a', not {mode!r}")
        super().__init__(read_only=mode == "r")
        self.path = os.path.abspath(os.fspath(path))
        self.local_path = self.path
        self.mode = mode
        self.fsync = resolve_fsync(fsync)
        #: The directory inside the archive that holds the keys: "" or ending with "/".
        self.prefix = f"{folder}/" if folder else ""
        if self.prefix and _name_problem(self.prefix) is not None:
            raise InvalidKeyError(f"cannot keep the keys of {self.path!r} in folder {folder!r}: {_name_problem(self.prefix)}")
        self._lock = threading.Lock()
        self._archive: zipfile.ZipFile | None = None
        self._entries: dict[str, zipfile.ZipInfo] = {}
        # Directory entries, and files outside ``prefix``: copied as they are on rewriting.
        self._others: list[zipfile.ZipInfo] = []
        self._pending: dict[str, str] = {}  # key -> file holding its new value
        self._deleted: set[str] = set()  # keys of archive entries deleted
        # Its finalizer is made now, before that of any Dataset on this store: at exit they
        # run newest first, so a Dataset closed at exit still finds the buffered values.
        self._work = _WorkDir(os.path.dirname(self.path), self.fsync)
        weakref.finalize(self, self._work.remove)
        self._names = itertools.count()
        self._closed = False
        exists = os.path.exists(self.path)
        if exists and not os.path.isfile(self.path):
            raise StoreError(f"zip archive path {self.path!r} exists and is not a file")
        if mode == "r" and not exists:
            raise StoreError(f"zip archive {self.path!r} does not exist")
        if mode != "r":
            _remove_stale_work_dirs(os.path.dirname(self.path))
        if mode != "w" and exists:
            self._read_directory(find_prefix=True)
        # A new archive is written on close even if empty, as a new directory store would be.
        self._dirty = not exists or mode == "w"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}, mode={self.mode!r})"

    def _read_directory(self, *, find_prefix: bool = False) -> None:
        try:
            self._archive = zipfile.ZipFile(self.path)
        except _BROKEN as exc:
            raise StoreError(f"cannot open zip archive {self.path!r}: {exc}") from exc
        try:
            infos = self._safe_members(self._archive.infolist())
        except StoreError:
            self._close_archive()
            raise
        files = {info.filename: info for info in infos if not info.is_dir()}
        if find_prefix and infos:  # an empty archive takes the layout asked for
            self.prefix = _root_prefix(infos, files)
            if self.prefix:
                logger.debug("zip archive %r keeps its keys under %r", self.path, self.prefix)
        start = len(self.prefix)
        self._entries = {name[start:]: info for name, info in files.items() if name.startswith(self.prefix)}
        self._others = [info for info in infos if info.is_dir() or not info.filename.startswith(self.prefix)]

    def _safe_members(self, listing: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
        """The members that may be keys; refuses an ambiguous archive, and one to rewrite
        that holds unsafe names."""
        name, count = Counter(info.filename for info in listing).most_common(1)[0] if listing else ("", 0)
        if count > 1:
            raise StoreError(
                f"zip archive {self.path!r} holds {count} members named {name!r}: refusing an "
                "archive whose members are ambiguous"
            )
        safe = []
        for info in listing:
            problem = _name_problem(info.filename)
            if problem is None:
                safe.append(info)
            elif self.read_only:
                logger.warning("ignoring member %r of %r: %s", info.filename, self.path, problem)
            else:
                raise InvalidKeyError(
                    f"zip archive {self.path!r} holds a member named {info.filename!r} ({problem}): "
                    "refusing to rewrite it; open it read-only to read the other members"
                )
        return safe

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self!r} is closed")

    def _describe(self, info: zipfile.ZipInfo) -> str:
        return f"member {info.filename!r} of zip archive {self.path!r}"

    # -- reading -------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        with self._lock:
            self._check_open()
            buffered = self._pending.get(key)
            if buffered is not None:
                return _read_file(buffered, byte_range)
            info = self._live_entry(key)
            if info is None:
                return None
            start, stop = _span(info.file_size, byte_range)
            if start == stop:
                return b""
            self._check_expansion(info, stop)
            pieces: list[bytes] = []
            with self._open_member(info) as source:
                _skip(source, start)
                left = stop - start
                while left:
                    piece = source.read(min(left, _PIECE))
                    if not piece:
                        break
                    pieces.append(piece)
                    left -= len(piece)
            if left:
                raise self._short(info, stop - left)
            return b"".join(pieces)

    def _read_ranges(self, key: str, ranges: list[tuple[int, int]]) -> list[bytes] | None:
        # the member is opened once and read forward: ranges come sorted and apart
        with self._lock:
            self._check_open()
            buffered = self._pending.get(key)
            if buffered is not None:
                return [_read_file(buffered, r) for r in ranges]
            info = self._live_entry(key)
            if info is None:
                return None
            spans = [_span(info.file_size, r) for r in ranges]
            self._check_expansion(info, max((stop for _, stop in spans), default=0))
            values = []
            with self._open_member(info) as source:
                position = 0
                for start, stop in spans:
                    _skip(source, start - position)
                    value = source.read(stop - start) if stop > start else b""
                    if len(value) < stop - start:
                        raise self._short(info, start + len(value))
                    values.append(value)
                    position = max(position, start + len(value))
            return values

    def _get_into(self, key: str, view: memoryview) -> bool:
        with self._lock:
            self._check_open()
            buffered = self._pending.get(key)
            if buffered is not None:
                with open(buffered, "rb", buffering=0) as file:
                    check_size(key, os.fstat(file.fileno()).st_size, view.nbytes)
                    _read_into(file, view)
                return True
            info = self._live_entry(key)
            if info is None:
                return False
            # The declared size must fit before anything is inflated; inflating stops there.
            check_size(key, info.file_size, view.nbytes)
            with self._open_member(info) as source:
                done = _read_into(source, view)
            if done < view.nbytes:
                raise self._short(info, done)
            return True

    def _check_expansion(self, info: zipfile.ZipInfo, size: int) -> None:
        if size > BOMB_SIZE and size > BOMB_RATIO * info.compress_size:
            raise StoreError(
                f"{self._describe(info)} would inflate {info.compress_size} bytes to {size}: refusing "
                f"to read more than {BOMB_SIZE} bytes at over {BOMB_RATIO} times the compressed size "
                "(a decompression bomb?)"
            )

    def _short(self, info: zipfile.ZipInfo, size: int) -> StoreError:
        return StoreError(f"{self._describe(info)} ends after {size} bytes; its header declares {info.file_size}")

    @contextlib.contextmanager
    def _open_member(self, info: zipfile.ZipInfo) -> Iterator[IO[bytes]]:
        """The member to read; zipfile stops inflating at the declared size and checks the
        CRC there, so a member holding more than its header says is an error, not a bomb."""
        if info.flag_bits & 0x1:
            raise StoreError(f"{self._describe(info)} is encrypted")
        if info.compress_type not in _READABLE:
            raise StoreError(
                f"{self._describe(info)} uses compression method {info.compress_type}; "
                f"only {' and '.join(_READABLE.values())} members are read"
            )
        assert self._archive is not None  # there are entries only while it is open
        try:
            with self._archive.open(info) as source:
                yield source
        except StoreError:
            raise
        except _BROKEN as exc:
            raise StoreError(f"cannot read {self._describe(info)}: {exc}") from exc

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
        problem = _name_problem(self.prefix + key)
        if problem is not None:
            raise InvalidKeyError(f"cannot write {key!r} to {self!r}: {problem}")
        with self._lock:
            self._check_open()
            buffered = None
            try:
                buffered = os.path.join(self._work.directory(), str(next(self._names)))
                with open(buffered, "wb") as file:
                    file.write(value)
            except OSError as exc:
                if buffered is not None:
                    with contextlib.suppress(OSError):
                        os.remove(buffered)
                raise StoreError(f"cannot write {key!r} to {self!r}: {exc}") from exc
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

    def flush(self) -> None:
        """Write a complete new archive if anything changed, replacing ``path`` in one step,
        so that a process killed afterwards leaves it; the store stays open for more writes.
        Costs a copy of the whole archive."""
        with self._lock:
            self._check_open()
            if not self._dirty:
                return
            self._replace_archive()
            self._close_archive()
            self._pending.clear()
            self._deleted.clear()
            self._work.remove()
            self._dirty = False
            self._read_directory()

    def close(self) -> None:
        """Write the new archive if anything changed, and release the open files."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._dirty:
                    self._replace_archive()
            finally:
                self._close_archive()
                self._work.remove()

    def _replace_archive(self) -> None:
        try:
            with atomic_open(self.path, fsync=self.fsync, temp_dir=self._work.directory()) as file:
                self._write_archive(file)
                if os.name == "nt":  # Windows cannot replace a file that is open
                    self._close_archive()
        except _BROKEN as exc:
            if os.name == "nt" and self._archive is None and self._entries:
                self._read_directory()  # the old archive is still there: keep reading it
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot write zip archive {self.path!r}: {exc}") from exc
        logger.debug("wrote zip archive %r", self.path)

    def _close_archive(self) -> None:
        if self._archive is not None:
            self._archive.close()
            self._archive = None

    def _write_archive(self, file: BinaryIO) -> None:
        now = time.localtime()[:6]
        with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            written: set[str] = set()
            if self.prefix:  # netcdf-c's layout: the dataset's directory is the first entry
                _add_entry(archive, self.prefix, None, 0, now, _DIRECTORY_ATTRIBUTES)
                written.add(self.prefix)
            for info in self._others:
                if self.prefix and info.filename.startswith(self.prefix):
                    continue  # the directories of keys are written beside the keys, below
                if info.is_dir():
                    _add_entry(archive, info.filename, None, 0, info.date_time, info.external_attr)
                else:
                    self._copy_entry(archive, info, info.filename)
            for key in sorted(self._live_keys()):
                if self.prefix:  # netcdf-c adds a directory entry for each folder of a key
                    for folder in _folders(self.prefix + key):
                        if folder not in written:
                            _add_entry(archive, folder, None, 0, now, _DIRECTORY_ATTRIBUTES)
                            written.add(folder)
                buffered = self._pending.get(key)
                if buffered is None:
                    self._copy_entry(archive, self._entries[key], self.prefix + key)
                    continue
                with open(buffered, "rb") as source:
                    size = os.fstat(source.fileno()).st_size
                    _add_entry(archive, self.prefix + key, source, size, now)

    def _copy_entry(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> None:
        # Inflated to be stored: the same bound as reading it, and a short member is an error.
        self._check_expansion(info, info.file_size)
        with self._open_member(info) as source:
            copied = _add_entry(archive, name, source, info.file_size, info.date_time, info.external_attr)
        if copied != info.file_size:
            raise self._short(info, copied)


class _WorkDir:
    """A directory beside the archive for buffered values and the next archive, made when
    first needed. Its owner holds a lock on it, so that a store opened later can tell a
    directory left by a killed process (removed then) from one in use. Removed on close,
    after a flush, when the store is dropped and at interpreter exit."""

    def __init__(self, parent: str, fsync: bool) -> None:
        self.parent = parent
        self.fsync = fsync
        self.path: str | None = None
        self._fd = -1

    def directory(self) -> str:
        if self.path is None:
            makedirs(self.parent, self.fsync)
            self.path, self._fd = _make_locked_dir(self.parent)
        return self.path

    def remove(self) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None
        if self._fd >= 0:
            os.close(self._fd)  # releases the lock
            self._fd = -1


def _make_locked_dir(directory: str) -> tuple[str, int]:
    while True:
        path = os.path.join(directory, _WORK_PREFIX + secrets.token_hex(8))
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        if sys.platform == "win32":
            return path, -1  # no flock (nor directory descriptors): nothing to lock
        fd = os.open(path, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        # A store cleaning up may have taken it for a stale one before it was locked.
        if os.path.isdir(path) and os.stat(path).st_ino == os.fstat(fd).st_ino:
            return path, fd
        os.close(fd)


def _remove_stale_work_dirs(directory: str) -> None:
    """Remove the work directories of zip stores whose process died (no lock held)."""
    if sys.platform == "win32":
        return  # no flock: a directory in use cannot be told from one left behind
    try:
        names = [name for name in os.listdir(directory or ".") if _WORK_NAME.fullmatch(name)]
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # its store is still open
        logger.info("removing %r, left by a process that ended without closing its zip store", path)
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def _name_problem(name: str) -> str | None:
    """Why a member name cannot be a key (or a directory of keys), or None."""
    candidate = name[:-1] if name.endswith("/") else name
    if _DRIVE.match(candidate):
        return f"{name!r} starts with a drive letter"
    try:
        validate_key(candidate)
    except InvalidKeyError as exc:
        return str(exc)
    return None


def _span(size: int, byte_range: ByteRange | None) -> tuple[int, int]:
    """Where a byte range of a value of ``size`` bytes starts and stops (as slice_range)."""
    if byte_range is None:
        return 0, size
    offset, length = byte_range
    if offset < 0:
        return max(0, size + offset), size
    start = min(offset, size)
    return start, size if length is None else min(size, offset + length)


def _skip(source: IO[bytes], count: int) -> None:
    while count > 0:
        piece = source.read(min(count, _PIECE))
        if not piece:
            return
        count -= len(piece)


def _read_into(source: IO[bytes], view: memoryview) -> int:
    """Fill ``view`` from ``source`` a piece at a time; the number of bytes read."""
    done = 0
    while done < view.nbytes:
        count = source.readinto(view[done : done + _PIECE])  # type: ignore[attr-defined]
        if not count:
            break
        done += count
    return done


def _read_file(path: str, byte_range: ByteRange | None) -> bytes:
    with open(path, "rb") as file:
        if byte_range is None:
            return file.read()
        start, stop = _span(os.fstat(file.fileno()).st_size, byte_range)
        file.seek(start)
        return file.read(stop - start)


def _root_prefix(members: list[zipfile.ZipInfo], files: dict[str, zipfile.ZipInfo]) -> str:
    """Where the root node is: "" when the archive's top holds a node document, else, as
    netcdf-c's zip storage reads it, the first path segment of the first member when that
    directory holds one (netcdf-c writes it first), else ""."""
    if any(document in files for document in _NODE_DOCUMENTS):
        return ""
    top, slash, _ = members[0].filename.partition("/")
    if slash and any(f"{top}/{document}" in files for document in _NODE_DOCUMENTS):
        return f"{top}/"
    return ""


def _folders(name: str) -> Iterator[str]:
    """The directories above member ``name``, outermost first, each ending in "/"."""
    end = name.find("/")
    while end >= 0:
        yield name[: end + 1]
        end = name.find("/", end + 1)


def _add_entry(
    archive: zipfile.ZipFile,
    name: str,
    source: IO[bytes] | None,
    size: int,
    date_time: tuple[int, int, int, int, int, int],
    external_attr: int = _FILE_ATTRIBUTES,
) -> int:
    """Store ``size`` bytes from ``source`` (None: an empty directory entry) as ``name``; the
    number of bytes ``source`` held (up to ``size``)."""
    info = zipfile.ZipInfo(name, date_time=date_time)
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = external_attr
    if source is None:
        archive.writestr(info, b"")
        return 0
    info.file_size = size  # lets zipfile choose ZIP64 up front for big entries
    copied = 0
    with archive.open(info, "w") as target:
        while copied < size:
            piece = source.read(min(size - copied, _PIECE))
            if not piece:
                break
            target.write(piece)
            copied += len(piece)
    return copied
