"""Atomic file replacement shared by the stores that write local files."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

#: Temporary files are named ``.tmp-nczarr-`` and 16 hex digits: no zarr key looks like that.
TEMP_PREFIX = ".tmp-nczarr-"
_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + "[0-9a-f]{16}")
_O_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of our temporary files (to hide it from listings)."""
    return name.startswith(TEMP_PREFIX) and _TEMP_NAME.fullmatch(name) is not None


def _create_temp(directory: str) -> tuple[int, str]:
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
            os.makedirs(directory, exist_ok=True)


def write_atomic(path: str, value: bytes | bytearray | memoryview) -> None:
    """Replace ``path`` with ``value`` in one step (see :func:`atomic_open`), with plain
    system calls: this is the write of every chunk."""
    fd, temp = _create_temp(os.path.dirname(path))
    try:
        view = memoryview(value).cast("B")
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)
        fd = -1
        os.replace(temp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.remove(temp)
        except FileNotFoundError:
            pass
        raise


@contextmanager
def atomic_open(path: str) -> Iterator[BinaryIO]:
    """A file to write that replaces ``path`` in one step when the block ends without error.

    Readers see the old file or the new one, never a partial one; on error ``path`` is left
    as it was and no temporary file remains. Parent directories are created as needed.
    """
    fd, temp = _create_temp(os.path.dirname(path))
    try:
        # No fsync: the guarantee is atomic visibility to readers, not durability across a
        # power loss, and fsync would make the thousands of small chunk writes very slow.
        with open(fd, "wb") as file:
            yield file
        os.replace(temp, path)
    except BaseException:
        try:
            os.remove(temp)
        except FileNotFoundError:
            pass
        raise
