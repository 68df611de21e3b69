"""A store of one file per key under a local directory."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator

from nczarr.errors import InvalidKeyError, StoreError
from nczarr.store._files import fsync_directory, is_temp_name, makedirs, resolve_fsync, write_atomic
from nczarr.store.base import ByteRange, Store, check_size, validate_prefix

#: What opening a key's path raises when there is no file for that key.
_ABSENT = (FileNotFoundError, NotADirectoryError, IsADirectoryError)
#: O_NOFOLLOW: a key that is a symbolic link fails to open (ELOOP on Linux, EMLINK on the
#: BSDs) and is resolved and checked explicitly. O_NONBLOCK: opening a FIFO does not wait
#: for a writer, so it can be refused after fstat instead of hanging.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_WRITE_FLAGS = os.O_WRONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK})
#: How ``stat`` names the kinds of files that are no values.
_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
#: Verified directories remembered per store; past this the memory is dropped and refilled.
_MAX_VERIFIED = 1 << 16


class DirectoryStore(Store):
    """Key ``a/b/c`` is the file ``root/a/b/c``. Writes are atomic; deleting a key prunes the
    directories it leaves empty.

    Containment: no operation reaches outside the real (symlink-resolved) root. A key whose
    real path is outside it (through a symbolic link among its directories or the key's own
    file) is refused with InvalidKeyError naming the key, the store and where the link points,
    for reading, writing, deleting and listing alike. Symbolic links that stay inside the root
    are followed for reading and listing and as directories of keys written; a key that is
    itself a link is read through (when its target is a regular file), but ``set`` replaces
    the link itself, ``overwrite`` never writes through it and ``delete`` removes the link, not
    its target. Listing refuses a directory link that loops back onto a directory above it.
    Values that are not regular files (FIFOs, devices, sockets) are refused with StoreError
    without being read; a directory is no value (the key is absent).

    The directories of keys are checked once per store object and remembered: the check
    guards against links present in the store, not against another process swapping a
    directory for a link while the store is open (no path-based check closes that race).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        read_only: bool = False,
        create: bool = True,
        fsync: bool | None = None,
    ) -> None:
        super().__init__(read_only=read_only)
        self.root = os.path.abspath(os.fspath(root))
        self.local_path = self.root
        #: Whether writes are fsynced, file and directory, to survive a power cut (None:
        #: the NCZARR_FSYNC setting); without it they are atomic, not durable.
        self.fsync = resolve_fsync(fsync)
        if not os.path.isdir(self.root):
            if os.path.exists(self.root):
                raise StoreError(f"store root {self.root!r} exists and is not a directory")
            if self.read_only or not create:
                raise StoreError(f"store root {self.root!r} does not exist")
            try:
                makedirs(self.root, self.fsync)
            except OSError as exc:
                raise StoreError(f"cannot create store root {self.root!r}: {exc}") from exc
        self._real_root = os.path.realpath(self.root)
        # Every path is built from the real root, so a later change of a link on the way to
        # the root does not move the store.
        self._root_prefix = os.path.join(self._real_root, "")
        self._verified: set[str] = set()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.root!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._real_root == self._real_root

    def __hash__(self) -> int:
        return hash((type(self), self._real_root))

    # -- containment -----------------------------------------------------------------------
    def _inside(self, real: str) -> bool:
        return real == self._real_root or real.startswith(self._root_prefix)

    def _path(self, key: str, make: bool = False) -> str:
        """The file of ``key``, after checking that its directories stay inside the root;
        with ``make`` (a key about to be written), its missing directories are made."""
        directory = key.rpartition("/")[0]
        if directory and directory not in self._verified:
            self._verify_directory(directory, key, make)
        return self._root_prefix + key

    def _verify_directory(self, directory: str, key: str, make: bool = False) -> None:
        """Check that the folder ``directory`` (a key's folders, below the real root) stays
        inside the root, and remember it. A folder below a verified one is inside unless it
        is itself a symbolic link: one lstat a new folder, from the highest one not yet
        verified down, and realpath only for a folder that is a link (the only place where a
        path can leave the root; a chunk key's own file is opened with O_NOFOLLOW and
        resolved when it is a link). Reading a new chunk of a time slab costs two lstat
        (``c/<t>`` and ``c/<t>/0``), not a realpath of every folder of the path. With
        ``make`` (a key about to be written), a missing folder is made, and every folder
        below one made here is made without an lstat (it is new, and inside): writing a new
        chunk of a time slab costs an lstat and two mkdir, where two lstat, a failed open, a
        failed mkdir and the two mkdir were made before."""
        new = [directory]
        while (parent := new[-1].rpartition("/")[0]) and parent not in self._verified:
            new.append(parent)
        if len(self._verified) + len(new) > _MAX_VERIFIED:
            self._verified.clear()
        made_above = False
        for folder in reversed(new):
            path = self._root_prefix + folder
            if made_above and self._made(path):
                self._verified.add(folder)
                continue
            try:
                is_link = stat.S_ISLNK(os.lstat(path).st_mode)
            except OSError:
                # absent: made here, or by the write of the key, as a folder, not a link
                made_above = make and self._made(path)
                is_link = False
            if is_link and not self._inside(os.path.realpath(path)):
                raise self._outside(key, folder)
            self._verified.add(folder)

    def _made(self, path: str) -> bool:
        """Whether the folder ``path`` was made now; False when it could not be (it is there
        already, as a folder, a link or a file, or its parent is missing: the caller checks
        what is there, and writing the key says what is wrong)."""
        try:
            os.mkdir(path)
        except OSError:
            return False
        if self.fsync:
            fsync_directory(os.path.dirname(path))
        return True

    def _outside(self, key: str, through: str) -> InvalidKeyError:
        """The error for ``key``, whose path ``through`` (a prefix of it) leaves the root:
        it names the link that leads out and where that link points."""
        parts = through.split("/")
        for count in range(1, len(parts) + 1):
            path = self._root_prefix + "/".join(parts[:count])
            real = os.path.realpath(path)
            if not self._inside(real):
                break
        name = "/".join(parts[:count])
        if os.path.islink(path):
            target = os.readlink(path)
            how = f"a symbolic link to {target!r}" + (f" ({real!r})" if target != real else "")
        else:
            how = f"reached as {real!r}"
        return InvalidKeyError(
            f"{key!r} in {self!r} is outside the store: {name!r} is {how}, outside "
            f"{self._real_root!r}"
        )

    def _resolve_link(self, key: str, path: str) -> str:
        """The real path of ``key``'s file ``path``, which is a link; refused when outside."""
        real = os.path.realpath(path)
        if not self._inside(real):
            raise self._outside(key, key)
        return real

    def _loops(self, directory: str, target: str) -> bool:
        """Whether a link in ``directory`` (a listing prefix) to the real directory ``target``
        leads back onto ``directory`` or one above it (listing it would never end)."""
        below = os.path.join(target, "")
        parts = directory.rstrip("/").split("/") if directory else []
        for count in range(len(parts) + 1):
            real = os.path.realpath(self._root_prefix + "/".join(parts[:count]))
            if real == target or real.startswith(below):
                return True
        return False

    def _linked_entry(self, directory: str, entry: os.DirEntry[str]) -> str | None:
        """What a link found by listing ``directory`` is: "dir", "file" or None (dangling);
        refused when it points outside the root or loops."""
        key = directory + entry.name
        real = self._resolve_link(key, entry.path)
        if os.path.isdir(real):
            if self._loops(directory, real):
                raise StoreError(
                    f"{key!r} in {self!r} is a symbolic link to {real!r}, which contains it: "
                    "a loop"
                )
            return "dir"
        return "file" if os.path.lexists(real) else None

    # -- reading -------------------------------------------------------------------------
    def _open_value(self, key: str) -> tuple[int, int] | None:
        """A descriptor open for reading ``key``'s regular file and its size; None when the
        key is absent (or a directory)."""
        path = self._path(key)
        try:
            fd = os.open(path, _READ_FLAGS)
        except _ABSENT:
            return None
        except OSError as exc:
            if exc.errno not in _LINK_ERRNOS or not os.path.islink(path):
                raise self._read_error(key, exc) from exc
            real = self._resolve_link(key, path)
            try:
                fd = os.open(real, _READ_FLAGS)
            except _ABSENT:
                return None
            except OSError as exc:
                raise self._read_error(key, exc) from exc
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                if stat.S_ISDIR(status.st_mode):
                    os.close(fd)
                    return None
                raise self._not_regular(key, status.st_mode)
        except BaseException:
            os.close(fd)
            raise
        return fd, status.st_size

    def _not_regular(self, key: str, mode: int) -> StoreError:
        kind = next((name for test, name in _SPECIAL_KINDS if test(mode)), "something else")
        return StoreError(f"refusing to read {key!r} in {self!r}: it is {kind}, not a regular file")

    def _read_error(self, key: str, exc: OSError) -> StoreError:
        return StoreError(f"cannot read {key!r} from {self!r}: {exc}")

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        opened = self._open_value(key)
        if opened is None:
            return None
        fd, size = opened
        try:
            if byte_range is None:
                return _read(fd, size)
            offset, length = byte_range
            if offset < 0:
                offset = max(0, size + offset)
            count = size - offset if length is None else min(length, size - offset)
            if count <= 0:
                return b""
            if offset:  # a file opened here is at its start (a chunk is read from byte 0)
                os.lseek(fd, offset, os.SEEK_SET)
            return _read(fd, count)
        except OSError as exc:
            raise self._read_error(key, exc) from exc
        finally:
            os.close(fd)

    def _read_ranges(self, key: str, ranges: list[tuple[int, int]]) -> list[bytes] | None:
        # one open, then a pread per range: only the pages that hold them are read
        opened = self._open_value(key)
        if opened is None:
            return None
        fd, size = opened
        try:
            return [_pread(fd, min(length, max(0, size - offset)), offset) for offset, length in ranges]
        except OSError as exc:
            raise self._read_error(key, exc) from exc
        finally:
            os.close(fd)

    def _get_into(self, key: str, view: memoryview) -> bool:
        opened = self._open_value(key)
        if opened is None:
            return False
        fd, size = opened
        try:
            check_size(key, size, view.nbytes)
        except BaseException:
            os.close(fd)
            raise
        try:
            with open(fd, "rb", buffering=0) as file:
                done = 0
                # readinto may return fewer bytes than asked (reads above 2 GiB on Linux).
                while done < size:
                    count = file.readinto(view[done:])
                    if not count:
                        raise StoreError(f"{key!r} in {self!r} shrank while it was read")
                    done += count
                return True
        except StoreError:
            raise
        except OSError as exc:
            raise self._read_error(key, exc) from exc

    def _stat(self, key: str) -> os.stat_result | None:
        """The status of ``key``'s regular file; None when absent or a directory."""
        path = self._path(key)
        try:
            status = os.lstat(path)
        except _ABSENT:
            return None
        except OSError as exc:
            raise self._read_error(key, exc) from exc
        if stat.S_ISLNK(status.st_mode):
            real = self._resolve_link(key, path)
            try:
                status = os.stat(real)
            except _ABSENT:
                return None
            except OSError as exc:
                raise self._read_error(key, exc) from exc
        if stat.S_ISREG(status.st_mode):
            return status
        if stat.S_ISDIR(status.st_mode):
            return None
        raise self._not_regular(key, status.st_mode)

    def _exists(self, key: str) -> bool:
        return self._stat(key) is not None

    def _getsize(self, key: str) -> int | None:
        status = self._stat(key)
        return None if status is None else status.st_size

    def _directory_path(self, prefix: str) -> str:
        """The directory of a listing prefix, checked to be inside the root."""
        if prefix:
            directory = prefix[:-1]
            if directory not in self._verified:
                self._verify_directory(directory, prefix)
        return self._root_prefix + prefix

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        self._directory_path(prefix)
        stack = [prefix]
        while stack:
            directory = stack.pop()
            try:
                scan = os.scandir(self._root_prefix + directory)
            except (FileNotFoundError, NotADirectoryError):
                continue
            with scan as entries:
                for entry in entries:
                    kind = self._kind(directory, entry)
                    if kind == "dir":
                        stack.append(f"{directory}{entry.name}/")
                    elif kind == "file":
                        yield directory + entry.name

    def _kind(self, directory: str, entry: os.DirEntry[str]) -> str | None:
        """What a listed entry is: "dir", "file" (a key) or None (neither)."""
        if entry.is_symlink():
            kind = self._linked_entry(directory, entry)
        else:
            kind = "dir" if entry.is_dir(follow_symlinks=False) else "file"
        return None if kind == "file" and is_temp_name(entry.name) else kind

    def _list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        keys: list[str] = []
        prefixes: list[str] = []
        try:
            with os.scandir(self._directory_path(prefix)) as entries:
                for entry in entries:
                    kind = self._kind(prefix, entry)
                    if kind == "dir":
                        prefixes.append(entry.name)
                    elif kind == "file":
                        keys.append(entry.name)
        except (FileNotFoundError, NotADirectoryError):
            pass
        return sorted(keys), sorted(prefixes)

    # -- writing -------------------------------------------------------------------------
    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        # os.replace replaces a link at the key's path; it never writes through it.
        path = self._path(key, make=True)
        try:
            write_atomic(path, value, fsync=self.fsync)
        except OSError as exc:
            raise StoreError(f"cannot write {key!r} to {self!r}: {exc}") from exc

    def overwrite(self, key: str, value: bytes | bytearray | memoryview) -> bool:
        super().overwrite(key, value)
        path = self._path(key)
        try:
            # A link, FIFO or missing file: not written here (set replaces it).
            fd = os.open(path, _WRITE_FLAGS)
        except OSError:
            return False
        try:
            view = memoryview(value).cast("B")
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode) or status.st_size != len(view):
                return False
            while view:
                view = view[os.write(fd, view) :]
            if self.fsync:
                os.fsync(fd)
            return True
        except OSError as exc:
            raise StoreError(f"cannot write {key!r} to {self!r}: {exc}") from exc
        finally:
            os.close(fd)

    def _delete(self, key: str) -> None:
        path = self._path(key)
        try:
            os.remove(path)  # removes a link, never its target
        except _ABSENT:
            return
        except OSError as exc:
            raise StoreError(f"cannot delete {key!r} from {self!r}: {exc}") from exc
        self._prune(os.path.dirname(path))

    def remove_leftovers(self, prefix: str = "") -> None:
        self._check_writable(prefix)
        top = self._directory_path(validate_prefix(prefix)).rstrip("/") or "/"
        # bottom up, so that directories a leftover alone kept are pruned too
        for directory, _, names in os.walk(top, topdown=False):
            removed = False
            for name in names:
                if is_temp_name(name):
                    try:
                        os.remove(os.path.join(directory, name))
                        removed = True
                    except FileNotFoundError:  # its writer finished after all
                        continue
                    except OSError as exc:
                        raise StoreError(f"cannot remove {name!r} from {self!r}: {exc}") from exc
            if removed:
                self._prune(directory)

    def _prune(self, directory: str) -> None:
        # Remove directories left empty, stopping at the root or at the first one in use
        # (rmdir refuses a non-empty directory, so a concurrent writer is never harmed).
        while len(directory) > len(self._real_root):
            try:
                os.rmdir(directory)
            except OSError:
                return
            self._verified.discard(directory[len(self._root_prefix) :])
            directory = os.path.dirname(directory)


def _read(fd: int, count: int) -> bytes:
    """Up to ``count`` bytes from ``fd`` (fewer only when the file ends first)."""
    data = os.read(fd, count)
    if len(data) == count or not data:
        return data
    parts = [data]
    count -= len(data)
    while count:
        more = os.read(fd, count)
        if not more:
            break
        parts.append(more)
        count -= len(more)
    return b"".join(parts)


def _pread(fd: int, count: int, offset: int) -> bytes:
    """Up to ``count`` bytes of ``fd`` at ``offset`` (fewer only when the file ends first)."""
    parts = []
    while count > 0:
        data = os.pread(fd, count, offset)
        if not data:
            break
        parts.append(data)
        count -= len(data)
        offset += len(data)
    return parts[0] if len(parts) == 1 else b"".join(parts)
