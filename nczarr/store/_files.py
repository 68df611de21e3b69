"""Atomic (and, when asked, durable) file replacement shared by everything that writes local
files: the directory and zip stores, the netCDF-3 and HDF5 writers."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from nczarr.config import fsync_enabled
from nczarr.errors import ConcurrentWriteError, StoreError

#: Temporary files are named ``.tmp-nczarr-`` and 16 hex digits: no zarr key looks like that.
TEMP_PREFIX = ".tmp-nczarr-"
_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + "[0-9a-f]{16}")
_O_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of our temporary files (to hide it from listings)."""
    return name.startswith(TEMP_PREFIX) and _TEMP_NAME.fullmatch(name) is not None


def resolve_fsync(fsync: bool | None) -> bool:
    """A store's ``fsync`` keyword: None takes the ``NCZARR_FSYNC`` setting."""
    return fsync_enabled() if fsync is None else fsync


def fsync_directory(directory: str) -> None:
    """Make the entries of ``directory`` (a rename, a new file) survive a power cut."""
    if os.name == "nt":  # Windows cannot open a directory; NTFS journals its entries
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def makedirs(directory: str, fsync: bool) -> None:
    """``os.makedirs(directory, exist_ok=True)``; with ``fsync`` the new directories survive a
    power cut."""
    created = _mkdirs(directory)
    if fsync:
        # A new directory is an entry of its parent: without this a power cut can lose it.
        for path in created:
            fsync_directory(os.path.dirname(path))


def _mkdirs(directory: str) -> list[str]:
    """Make ``directory`` and its missing parents; the ones made here, top down. The folder
    itself is tried first and a parent only when that fails: one mkdir when the parent
    exists, three when it does not (a new chunk of a Zarr v3 time slab, ``c/<t>/0``), where
    walking up with ``isdir`` first took five system calls. A loop, not recursion (or
    ``os.makedirs``, which recurses): a key may have a thousand folders."""
    created: list[str] = []
    pending = [directory]
    while pending:
        path = pending[-1]
        try:
            os.mkdir(path)
        except FileNotFoundError:
            parent = os.path.dirname(path)
            if not parent or parent == path:
                raise
            pending.append(parent)
            continue
        except FileExistsError:
            pass  # there already, or made meanwhile by another writer
        else:
            created.append(path)
        pending.pop()
    return created


def _create_temp(directory: str, fsync: bool) -> tuple[int, str]:
    # Not tempfile.mkstemp: it creates files with mode 0600, and values must get the umask's
    # permissions like any file a user writes.
    while True:
        path = os.path.join(directory, TEMP_PREFIX + secrets.token_hex(8))
        try:
            return os.open(path, _O_FLAGS, 0o666), path
        except FileExistsError:
            continue
        except FileNotFoundError:
            # Create missing parents; loop again, as a concurrent delete may prune them.
            makedirs(directory, fsync)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _replace(temp: str, path: str, fsync: bool) -> None:
    os.replace(temp, path)
    if fsync:
        fsync_directory(os.path.dirname(path))


def write_atomic(path: str, value: bytes | bytearray | memoryview, *, fsync: bool = False) -> None:
    """Replace ``path`` with ``value`` in one step (see :func:`atomic_open`), with plain
    system calls: this is the write of every chunk."""
    fd, temp = _create_temp(os.path.dirname(path), fsync)
    try:
        view = memoryview(value).cast("B")
        while view:
            view = view[os.write(fd, view) :]
        if fsync:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        _replace(temp, path, fsync)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        _remove(temp)
        raise


@contextmanager
def atomic_open(path: str, *, fsync: bool = False, temp_dir: str | None = None) -> Iterator[BinaryIO]:
    """A file to write that replaces ``path`` in one step when the block ends without error.

    Readers see the old file or the new one, never a partial one; on error ``path`` is left
    as it was and no temporary file remains. Parent directories are created as needed. The
    temporary file is made in ``temp_dir`` (default: beside ``path``; it must be on the same
    filesystem). ``fsync``: the file and the directory entry reach the disk before this
    returns, so the new file also survives a power cut (without it: atomic, not durable).
    """
    fd, temp = _create_temp(temp_dir or os.path.dirname(path), fsync)
    try:
        with open(fd, "wb") as file:
            yield file
            if fsync:
                file.flush()
                os.fsync(file.fileno())
        _replace(temp, path, fsync)
    except BaseException:
        _remove(temp)
        raise


def temp_beside(path: str) -> tuple[int, str]:
    """A new file, open for writing, in the folder of ``path``, to :func:`replace_file` over
    it once complete: with the umask's permissions, as any file a user writes (not mkstemp's
    0600). FileNotFoundError when that folder does not exist: it is not created."""
    directory = os.path.dirname(os.path.abspath(path))
    while True:
        temp = os.path.join(directory, TEMP_PREFIX + secrets.token_hex(8))
        try:
            return os.open(temp, _O_FLAGS, 0o666), temp
        except FileExistsError:
            continue


#: What tells one file at a path from another: device, inode, size and modification time.
FileState = tuple[int, int, int, int]


def file_state(path: str) -> FileState | None:
    """The state of the file at ``path`` (None: there is none), to tell later whether
    someone replaced or changed it meanwhile."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


#: ``replaces`` of :func:`replace_file` when whatever is at the path may be replaced.
ANY_FILE = "any"


def replace_file(
    temp: str, path: str, *, fsync: bool | None = None, replaces: FileState | str | None = ANY_FILE
) -> None:
    """Move the complete file ``temp`` over ``path`` (same directory), as ``os.replace``,
    keeping the permissions of the file it replaces (an update must not change who may read
    it); ``fsync`` (None: the ``NCZARR_FSYNC`` setting) makes its contents and the rename
    reach the disk first. For writers that must create their temporary file themselves.
    ``replaces``: the :func:`file_state` the path must still have (None: no file), else
    ConcurrentWriteError and ``temp`` is left for the caller to remove: a file someone
    wrote at the path meanwhile is never replaced behind their back."""
    if replaces != ANY_FILE and file_state(path) != replaces:
        raise ConcurrentWriteError(
            f"{path}: the file was replaced or changed since this dataset opened it; "
            "nczarr does not overwrite it (this dataset's changes are not written)"
        )
    with contextlib.suppress(FileNotFoundError):
        os.chmod(temp, stat.S_IMODE(os.stat(path).st_mode))
    fsync = resolve_fsync(fsync)
    if fsync:
        fd = os.open(temp, os.O_RDWR | getattr(os, "O_BINARY", 0))  # Windows fsyncs only writable files
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    _replace(temp, path, fsync)


def remove_contents(directory: str) -> None:
    """Remove everything ``directory`` holds, keeping the directory itself. Links are removed,
    never followed. Iterative, not ``shutil.rmtree``: that recurses once per level, and a
    hierarchy a thousand groups deep (which nczarr writes and reads) would end in
    RecursionError halfway through the removal."""
    folders = [directory]
    stack = [directory]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                    stack.append(entry.path)
                else:
                    os.remove(entry.path)
    for folder in reversed(folders[1:]):  # children after their parents were listed: deepest first
        os.rmdir(folder)


def remove_tree(path: str) -> None:
    """Remove the directory ``path`` and everything in it (see :func:`remove_contents`)."""
    remove_contents(path)
    os.rmdir(path)


def read_regular_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file at ``path`` (a text the user names: CDL, model text).
    Anything else (a FIFO, a device such as /dev/zero, a directory) is refused with
    StoreError before it is read: reading it could hang or never end."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise StoreError(f"cannot read {os.fspath(path)!r}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(f"cannot read {os.fspath(path)!r}: it is not a regular file")
    with open(fd, "rb") as file:
        return file.read()
