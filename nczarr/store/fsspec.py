"""A store on any fsspec filesystem: object stores, HTTP, memory, ..."""

from __future__ import annotations

import contextlib
import errno
import posixpath
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from nczarr import config
from nczarr.errors import StoreError
from nczarr.store.base import ByteRange, Store

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

#: What fsspec filesystems raise for a path that holds no value.
_ABSENT = (FileNotFoundError, IsADirectoryError, NotADirectoryError)
_GLOB_CHARACTERS = frozenset("*?[")


#: What to do about a key the filesystem refuses (HTTP 403), said once for every store.
CREDENTIALS_HINT = (
    "check the credentials (storage options key/secret or profile, the AWS_* variables, "
    "~/.aws) or, for public data, read anonymously (storage option anon=True; the commands' --anon)"
)


def failure(action: str, key: str, store: object, error: BaseException, others: int = 0) -> StoreError:
    """The error for a key (and ``others`` more of one batch) the filesystem could not
    ``action`` (read, write): a refusal (PermissionError, as s3fs reports HTTP 403) says
    what to check."""
    more = f" (and {others} more)" if others else ""
    where = f"{key!r}{more} {'from' if action == 'read' else 'to'} {store!r}"
    if isinstance(error, PermissionError):
        return StoreError(f"access denied: cannot {action} {where} ({error}); {CREDENTIALS_HINT}")
    return StoreError(f"cannot {action} {where}: {error}")


def _unsatisfiable(error: OSError) -> bool:
    """Whether ``error`` is S3's answer to a range that starts past the end of the object
    (HTTP 416, which s3fs raises as EINVAL)."""
    return error.errno == errno.EINVAL and "range is not satisfiable" in str(error)


def _any_glob(keys: list[str]) -> bool:
    """Whether a key would be expanded as a glob pattern by fsspec's batch calls."""
    return any(_GLOB_CHARACTERS.intersection(key) for key in keys)


def import_fsspec() -> ModuleType:
    """The fsspec module; StoreError saying what to install when it is missing."""
    try:
        import fsspec
    except ImportError as exc:
        raise StoreError(
            "remote and fsspec stores need fsspec: pip install nczarr[remote]"
        ) from exc
    module: ModuleType = fsspec
    return module


#: The S3 protocols, whose filesystem (s3fs) keeps as many connections as botocore's pool.
_S3_PROTOCOLS = frozenset({"s3", "s3a"})
#: Ranges of one object at most this far apart are fetched in one request: a request costs
#: tens of milliseconds, in which a megabyte arrives.
REMOTE_RANGE_MERGE_GAP = 1024 * 1024


def with_connections(url: str, storage_options: Mapping[str, object] | None) -> dict[str, object]:
    """``storage_options`` for ``url`` with, for S3 and unless the options say otherwise,
    a connection pool as large as ``config.requests()`` (botocore's default of 10 would cap
    the requests in flight) and whole objects read in one request: s3fs's ``max_concurrency``
    above 1 first asks every object's size (a HEAD, and a listing when it is absent), two
    round trips per document where one does."""
    options = dict(storage_options or {})
    protocol = url.split("://", 1)[0].lower() if "://" in url else ""
    if protocol in _S3_PROTOCOLS:
        kwargs = options.get("config_kwargs")
        kwargs = dict(kwargs) if isinstance(kwargs, Mapping) else {}
        kwargs.setdefault("max_pool_connections", config.requests())
        options["config_kwargs"] = kwargs
        options.setdefault("max_concurrency", 1)
    return options


class FsspecStore(Store):
    """Keys are paths under a root on an fsspec filesystem.

    ``url_or_fs`` is a URL (``s3://bucket/key``, ``memory://x``, ...), opened with
    ``storage_options``, or a filesystem object; ``path`` is appended to the root. Batch
    reads and writes keep up to ``nczarr.config.requests()`` requests in flight.
    """

    prefers_concurrency = True
    range_merge_gap = REMOTE_RANGE_MERGE_GAP

    def __init__(
        self,
        url_or_fs: str | AbstractFileSystem,
        *,
        read_only: bool = False,
        storage_options: Mapping[str, object] | None = None,
        path: str = "",
    ) -> None:
        super().__init__(read_only=read_only)
        fsspec = import_fsspec()
        if isinstance(url_or_fs, str):
            try:
                fs, root = fsspec.core.url_to_fs(url_or_fs, **with_connections(url_or_fs, storage_options))
            except (ImportError, ValueError) as exc:
                raise StoreError(f"cannot open a filesystem for {url_or_fs!r}: {exc}") from exc
        else:
            if storage_options:
                raise StoreError("storage_options apply to a URL, not to a filesystem object")
            fs, root = url_or_fs, ""
        if path:
            root = posixpath.join(root, path.strip("/")) if root else path
        self.fs: AbstractFileSystem = fs
        #: The root path in the filesystem's own spelling, without a trailing "/".
        self.root: str = fs._strip_protocol(root).rstrip("/")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fs.unstrip_protocol(self.root)!r})"

    def _path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key  # a filesystem object's own root

    def _batch(self) -> dict[str, int]:
        """The keyword that bounds an asynchronous filesystem's requests in flight."""
        return {"batch_size": config.requests()} if getattr(self.fs, "async_impl", False) else {}

    def _key(self, path: str) -> str | None:
        """The key of a path the filesystem lists, None if it is not under the root."""
        if not self.root:
            return path.lstrip("/") or None
        start = len(self.root) + 1
        if len(path) > start and path.startswith(self.root) and path[start - 1] == "/":
            return path[start:]
        return None

    # -- reading -------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        path = self._path(key)
        try:
            if byte_range is None:
                value: bytes = self.fs.cat_file(path)
                return value
            offset, length = byte_range
            if length == 0:  # an empty HTTP range would be invalid
                return b"" if self.fs.isfile(path) else None
            end = None if length is None else offset + length
            # A negative start is a suffix range in fsspec too.
            value = self.fs.cat_file(path, start=offset, end=end)
            return value
        except _ABSENT:
            return None
        except OSError as exc:  # a refusal, throttling, a dropped connection: the key named
            if byte_range is not None and _unsatisfiable(exc):  # a range past the end: none of it
                return b"" if self.fs.isfile(path) else None
            raise failure("read", key, self, exc) from exc

    def _get_many(self, keys: list[str], byte_range: ByteRange | None = None) -> dict[str, bytes]:
        if _any_glob(keys) or (byte_range is not None and (byte_range[0] < 0 or byte_range[1] == 0)):
            return super()._get_many(keys, byte_range)
        paths = {self.fs._strip_protocol(self._path(key)): key for key in keys}
        # on_error="return" rather than "omit": only a missing key may be left out; any
        # other failure (permissions, network) must not pass for a missing chunk.
        results: dict[str, bytes | BaseException] = {}
        if paths and byte_range is None:
            results = self.fs.cat(list(paths), on_error="return", **self._batch())
        elif paths and byte_range is not None:
            offset, length = byte_range
            end = None if length is None else offset + length
            ranges = self.fs.cat_ranges(
                list(paths), [offset] * len(paths), [end] * len(paths), on_error="return", **self._batch()
            )
            results = dict(zip(paths, ranges))
        values: dict[str, bytes] = {}
        for path, value in results.items():
            key = paths[path]
            if isinstance(value, _ABSENT):
                continue
            if isinstance(value, OSError) and _unsatisfiable(value):  # a range past the end
                past_end = self._get(key, byte_range)
                if past_end is not None:
                    values[key] = past_end
                continue
            if isinstance(value, BaseException):
                raise failure("read", key, self, value) from value
            values[key] = value
        return values

    def _read_ranges_many(self, requests: dict[str, list[tuple[int, int]]]) -> dict[str, list[bytes]]:
        # every range of every key in one cat_ranges: the filesystem runs them concurrently
        # (an empty range would be an invalid HTTP range: such keys are read one by one)
        empty = {key: ranges for key, ranges in requests.items() if any(not length for _, length in ranges)}
        wanted = [(key, offset, length) for key, ranges in requests.items() if key not in empty for offset, length in ranges]
        results = self.fs.cat_ranges(
            [self._path(key) for key, _, _ in wanted],
            [offset for _, offset, _ in wanted],
            [offset + length for _, offset, length in wanted],
            on_error="return",
            **self._batch(),
        ) if wanted else []
        values: dict[str, list[bytes]] = {key: [] for key in requests if key not in empty}
        for (key, offset, length), value in zip(wanted, results):
            if isinstance(value, OSError) and _unsatisfiable(value):  # a range past the end
                value = self._get(key, (offset, length))
            if value is None or isinstance(value, _ABSENT):
                values.pop(key, None)
            elif isinstance(value, BaseException):
                raise failure("read", key, self, value) from value
            elif key in values:
                values[key].append(value)
        values.update(super()._read_ranges_many(empty) if empty else {})
        return values

    def _exists(self, key: str) -> bool:
        return bool(self.fs.isfile(self._path(key)))

    def _getsize(self, key: str) -> int | None:
        try:
            info = self.fs.info(self._path(key))
        except _ABSENT:
            return None
        return info["size"] if info["type"] == "file" else None

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        try:
            paths = self.fs.find(self._path(prefix).rstrip("/"))
        except _ABSENT:
            return
        for path in paths:
            key = self._key(path)
            if key is not None and key.startswith(prefix) and not key.endswith("/"):
                yield key

    def _list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        # One ls of the prefix, not a find of everything below it.
        directory = self._path(prefix).rstrip("/")
        try:
            entries = self.fs.ls(directory, detail=True)
        except _ABSENT:
            return [], []
        keys: list[str] = []
        prefixes: list[str] = []
        for entry in entries:
            key = self._key(entry["name"].rstrip("/"))
            if key is None or not key.startswith(prefix):
                continue  # ls of a file lists the file itself
            name = key[len(prefix) :]
            if name and "/" not in name:
                (prefixes if entry["type"] == "directory" else keys).append(name)
        return sorted(keys), sorted(prefixes)

    # -- writing -------------------------------------------------------------------------
    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self._set_many({key: value})

    def _set_many(self, items: Mapping[str, bytes | bytearray | memoryview]) -> None:
        data = {self._path(key): bytes(value) for key, value in items.items()}
        try:
            try:
                self.fs.pipe(data, **self._batch())
            except FileNotFoundError:
                # Filesystems with real directories (local, sftp) need the parents first.
                for path in data:
                    self.fs.makedirs(self.fs._parent(path), exist_ok=True)
                self.fs.pipe(data, **self._batch())
        except OSError as exc:  # a refusal, throttling, a dropped connection: a key named
            raise failure("write", next(iter(items)), self, exc, len(items) - 1) from exc

    def _delete(self, key: str) -> None:
        with contextlib.suppress(*_ABSENT):
            self.fs.rm_file(self._path(key))

    def _delete_many(self, keys: list[str]) -> None:
        if not keys or _any_glob(keys):
            super()._delete_many(keys)
            return
        try:
            self.fs.rm([self._path(key) for key in keys])
        except FileNotFoundError:
            # Some filesystems refuse the whole batch for one absent key.
            super()._delete_many(keys)

