"""A store of one file per key under a local directory."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from nczarr.errors import StoreError
from nczarr.store._files import is_temp_name, write_atomic
from nczarr.store.base import ByteRange, Store, check_size

#: What opening a key's path raises when there is no file for that key.
_ABSENT = (FileNotFoundError, NotADirectoryError, IsADirectoryError)


class DirectoryStore(Store):
    """Key ``a/b/c`` is the file ``root/a/b/c``. Writes are atomic; deleting a key prunes the
    directories it leaves empty."""

    def __init__(
        self, root: str | os.PathLike[str], *, read_only: bool = False, create: bool = True
    ) -> None:
        super().__init__(read_only=read_only)
        self.root = os.path.abspath(os.fspath(root))
        if not os.path.isdir(self.root):
            if os.path.exists(self.root):
                raise StoreError(f"store root {self.root!r} exists and is not a directory")
            if self.read_only or not create:
                raise StoreError(f"store root {self.root!r} does not exist")
            try:
                os.makedirs(self.root, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create store root {self.root!r}: {exc}") from exc
        self._real_root = os.path.realpath(self.root)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.root!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._real_root == self._real_root

    def __hash__(self) -> int:
        return hash((type(self), self._real_root))

    def _path(self, key: str) -> str:
        # Keys are validated (no '..', no absolute paths), so the join stays under root.
        return os.path.join(self.root, key)

    # -- reading -------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        try:
            with open(self._path(key), "rb") as file:
                if byte_range is None:
                    return file.read()
                offset, length = byte_range
                if offset < 0:
                    offset = max(0, os.fstat(file.fileno()).st_size + offset)
                file.seek(offset)
                return file.read() if length is None else file.read(length)
        except _ABSENT:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {key!r} from {self!r}: {exc}") from exc

    def _get_into(self, key: str, view: memoryview) -> bool:
        try:
            with open(self._path(key), "rb", buffering=0) as file:
                size = os.fstat(file.fileno()).st_size
                check_size(key, size, view.nbytes)
                done = 0
                # readinto may return fewer bytes than asked (reads above 2 GiB on Linux).
                while done < size:
                    count = file.readinto(view[done:])
                    if not count:
                        raise StoreError(f"{key!r} in {self!r} shrank while it was read")
                    done += count
                return True
        except _ABSENT:
            return False
        except StoreError:
            raise
        except OSError as exc:
            raise StoreError(f"cannot read {key!r} from {self!r}: {exc}") from exc

    def _exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    def _getsize(self, key: str) -> int | None:
        try:
            status = os.stat(self._path(key))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return status.st_size if stat.S_ISREG(status.st_mode) else None

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        stack = [prefix]
        while stack:
            directory = stack.pop()
            try:
                with os.scandir(os.path.join(self.root, directory)) as entries:
                    for entry in entries:
                        if entry.is_dir():
                            stack.append(f"{directory}{entry.name}/")
                        elif not is_temp_name(entry.name):
                            yield directory + entry.name
            except (FileNotFoundError, NotADirectoryError):
                continue

    def _list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        keys: list[str] = []
        prefixes: list[str] = []
        try:
            with os.scandir(os.path.join(self.root, prefix)) as entries:
                for entry in entries:
                    if entry.is_dir():
                        prefixes.append(entry.name)
                    elif not is_temp_name(entry.name):
                        keys.append(entry.name)
        except (FileNotFoundError, NotADirectoryError):
            pass
        return sorted(keys), sorted(prefixes)

    # -- writing -------------------------------------------------------------------------
    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        try:
            write_atomic(self._path(key), value)
        except OSError as exc:
            raise StoreError(f"cannot write {key!r} to {self!r}: {exc}") from exc

    def overwrite(self, key: str, value: bytes | bytearray | memoryview) -> bool:
        super().overwrite(key, value)
        try:
            fd = os.open(self._path(key), os.O_WRONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return False
        try:
            view = memoryview(value).cast("B")
            if os.fstat(fd).st_size != len(view):
                return False
            while view:
                view = view[os.write(fd, view) :]
            return True
        except OSError as exc:
            raise StoreError(f"cannot write {key!r} to {self!r}: {exc}") from exc
        finally:
            os.close(fd)

    def _delete(self, key: str) -> None:
        path = self._path(key)
        try:
            os.remove(path)
        except _ABSENT:
            return
        except OSError as exc:
            raise StoreError(f"cannot delete {key!r} from {self!r}: {exc}") from exc
        self._prune(os.path.dirname(path))

    def _prune(self, directory: str) -> None:
        # Remove directories left empty, stopping at the root or at the first one in use
        # (rmdir refuses a non-empty directory, so a concurrent writer is never harmed).
        while len(directory) > len(self.root):
            try:
                os.rmdir(directory)
            except OSError:
                return
            directory = os.path.dirname(directory)
