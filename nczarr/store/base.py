"""The key/value store interface of the Zarr core protocol, plus batch and byte-range reads.

Keys are ``/``-separated relative paths such as ``a/b/zarr.json`` or ``v/c/0/1``. Every
store validates keys the same way (``validate_key``), so no key can reach outside its root.
"""

from __future__ import annotations

import bisect
import builtins
import itertools
import queue
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ClassVar

from nczarr import config
from nczarr.errors import InvalidKeyError, KeyNotFoundError, ReadOnlyError, StoreError

#: A byte range ``(offset, length)``. ``length`` None reads to the end; a negative ``offset``
#: with ``length`` None reads that many bytes from the end (the sharding index is a suffix).
ByteRange = tuple[int, int | None]


def validate_key(key: str) -> str:
    """Return ``key`` if it is a safe relative key, else raise InvalidKeyError naming it."""
    if not isinstance(key, str):
        raise InvalidKeyError(f"store key must be a str, not {type(key).__name__}: {key!r}")
    if key == "":
        raise InvalidKeyError("store key must not be empty")
    if "\x00" in key:
        raise InvalidKeyError(f"store key {key!r} contains a NUL character")
    if "\\" in key:
        raise InvalidKeyError(f"store key {key!r} contains a backslash")
    if key.startswith("/"):
        raise InvalidKeyError(f"store key {key!r} is absolute; keys are relative to the store root")
    for segment in key.split("/"):
        if segment == "":
            raise InvalidKeyError(f"store key {key!r} has an empty segment")
        if segment in (".", ".."):
            raise InvalidKeyError(f"store key {key!r} has a {segment!r} segment")
    return key


def validate_prefix(prefix: str) -> str:
    """Return a listing prefix (``""`` or a valid key followed by ``/``), else raise."""
    if prefix == "":
        return prefix
    if not prefix.endswith("/"):
        raise InvalidKeyError(f"store prefix {prefix!r} must be empty or end with '/'")
    validate_key(prefix[:-1])
    return prefix


def validate_range(byte_range: ByteRange | None) -> ByteRange | None:
    """Return ``byte_range`` if it is None or a well-formed ByteRange, else raise."""
    if byte_range is None:
        return None
    offset, length = byte_range
    if length is not None:
        if offset < 0:
            raise InvalidKeyError(f"byte range {byte_range!r}: a suffix range takes no length")
        if length < 0:
            raise InvalidKeyError(f"byte range {byte_range!r}: the length is negative")
    return byte_range


def slice_range(value: bytes, byte_range: ByteRange | None) -> bytes:
    """Apply a ByteRange to a whole value (for stores that hold values in memory)."""
    if byte_range is None:
        return value
    offset, length = byte_range
    validate_range(byte_range)
    if offset < 0 or length is None:
        return value[offset:]
    return value[offset : offset + length]


#: Two byte ranges of one value closer than this are read as one (the bytes between are
#: read and dropped): one read of a few KiB more costs less than another system call or
#: request.
RANGE_MERGE_GAP = 4096


def merge_ranges(ranges: Sequence[tuple[int, int]], gap: int = RANGE_MERGE_GAP) -> list[tuple[int, int]]:
    """Ranges ``(offset, length)`` (offsets ≥ 0) merged where they touch, overlap or lie at
    most ``gap`` bytes apart, sorted by offset."""
    merged: list[tuple[int, int]] = []
    for offset, length in sorted(ranges):
        if merged:
            start, size = merged[-1]
            if offset <= start + size + gap:
                merged[-1] = (start, max(size, offset + length - start))
                continue
        merged.append((offset, length))
    return merged


def split_ranges(
    ranges: Sequence[tuple[int, int]], merged: Sequence[tuple[int, int]], values: Sequence[bytes]
) -> list[bytes]:
    """The bytes of each of ``ranges`` cut from ``values``, the values read for ``merged``
    (``merge_ranges(ranges)``); shorter where a value ended early."""
    out = []
    starts = [start for start, _ in merged]
    for offset, length in ranges:
        i = bisect.bisect_right(starts, offset) - 1
        begin = offset - merged[i][0]
        out.append(values[i][begin : begin + length])
    return out


def check_size(key: str, size: int, buffer_size: int) -> None:
    """Raise StoreError unless a value of ``size`` bytes fills a buffer of ``buffer_size``."""
    if size != buffer_size:
        raise StoreError(
            f"value of {key!r} has {size} bytes but the buffer to read it into has {buffer_size}"
        )


class Store(ABC):
    """A mapping of keys to bytes. Subclasses implement the ``_`` methods; the public methods
    validate keys and refuse writes when the store is read-only."""

    #: Capability flags, looked at instead of isinstance checks.
    supports_writes: ClassVar[bool] = True
    #: Whether batch calls gain from running concurrently (remote stores).
    prefers_concurrency: ClassVar[bool] = False
    #: Byte ranges of one value at most this far apart are read as one (``merge_ranges``).
    range_merge_gap: ClassVar[int] = RANGE_MERGE_GAP
    #: The local file or folder that holds the store, whose writers take turns by a lock
    #: (nczarr.store.lock); None for stores that are not local files.
    local_path: str | None = None

    def __init__(self, *, read_only: bool = False) -> None:
        self.read_only = read_only or not self.supports_writes

    # -- reading -------------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes:
        """The value of ``key`` (or a byte range of it); KeyNotFoundError if it is absent."""
        value = self._get(validate_key(key), validate_range(byte_range))
        if value is None:
            raise self._not_found(key)
        return value

    def get_into(self, key: str, buffer: memoryview | bytearray) -> bool:
        """Read the whole value of ``key`` into the writable, contiguous ``buffer``, which must
        be exactly its size (StoreError otherwise); False when ``key`` is absent."""
        return self._get_into(validate_key(key), memoryview(buffer).cast("B"))

    def get_many(self, keys: Iterable[str], byte_range: ByteRange | None = None) -> dict[str, bytes]:
        """The values (or the same byte range of each) of those ``keys`` that exist; absent
        keys are left out. A range lets a reader bound what a hostile value costs it."""
        keys = [validate_key(k) for k in keys]
        return self._get_many(keys, validate_range(byte_range))

    def get_arriving(
        self, keys: Iterable[str], byte_range: ByteRange | None = None
    ) -> Iterator[builtins.list[tuple[str, bytes | None]]]:
        """The values (None: absent) of ``keys`` in groups, as they arrive, each key once:
        the next requests are in flight while the caller works on a group, at most
        ``config.requests()`` at once where the store reads concurrently. A range as in
        ``get_many``. Closing the iterator early waits for the requests in flight."""
        keys = [validate_key(k) for k in keys]
        return self._get_arriving(keys, validate_range(byte_range))

    def get_ranges(self, key: str, ranges: Sequence[tuple[int, int]]) -> builtins.list[bytes] | None:
        """The bytes of each range ``(offset, length)`` of the value of ``key`` (shorter where
        the value ends first), None when ``key`` is absent. Ranges near one another are read
        together (``merge_ranges``): a few reads, however many ranges."""
        return self.get_ranges_many({key: ranges}).get(key)

    def get_ranges_many(
        self, requests: Mapping[str, Sequence[tuple[int, int]]]
    ) -> dict[str, builtins.list[bytes]]:
        """``get_ranges`` of many keys at once (concurrently where the store gains from it);
        absent keys are left out."""
        for key, ranges in requests.items():
            validate_key(key)
            for offset, length in ranges:
                if offset < 0 or length < 0:
                    raise InvalidKeyError(f"byte range {(offset, length)!r} of {key!r}: negative")
        merged = {key: merge_ranges(ranges, self.range_merge_gap) for key, ranges in requests.items()}
        values = self._read_ranges_many(merged)
        return {key: split_ranges(requests[key], merged[key], found) for key, found in values.items()}

    def exists(self, key: str) -> bool:
        return self._exists(validate_key(key))

    def getsize(self, key: str) -> int:
        """Size in bytes of the value of ``key``; KeyNotFoundError if it is absent."""
        size = self._getsize(validate_key(key))
        if size is None:
            raise self._not_found(key)
        return size

    def list(self) -> Iterator[str]:
        """Every key in the store."""
        return self._list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key that starts with ``prefix`` (``""`` or ending with ``/``)."""
        return self._list_prefix(validate_prefix(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Immediate children of ``prefix``: (names of keys, names of sub-prefixes), sorted."""
        return self._list_dir(validate_prefix(prefix))

    # -- writing -------------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        """Store ``value`` under ``key`` atomically: a reader sees the old value or the new."""
        self._check_writable(key)
        self._set(validate_key(key), value)

    def set_many(self, items: Mapping[str, bytes | bytearray | memoryview]) -> None:
        for key in items:
            self._check_writable(key)
            validate_key(key)
        self._set_many(items)

    def overwrite(self, key: str, value: bytes | bytearray | memoryview) -> bool:
        """Write ``value`` over the stored value of ``key`` in place, when the store can and
        both are the same size; False (and nothing written) otherwise.

        Unlike :meth:`set` this is not atomic: a reader racing with it may see old and new
        bytes mixed. The engine uses it only for uncompressed chunks, where every element is
        then old or new (elements never straddle a page, the unit written back to disk), to
        avoid the cost of replacing a file (on this project's test machine, creating the
        temporary file and freeing the old one cost about 30 times an in-place write)."""
        self._check_writable(key)
        validate_key(key)
        return False

    def delete(self, key: str) -> None:
        """Remove ``key``; removing an absent key is not an error."""
        self._check_writable(key)
        self._delete(validate_key(key))

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        for key in keys:
            self._check_writable(key)
            validate_key(key)
        self._delete_many(keys)

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key below ``prefix``."""
        self._check_writable(prefix)
        self._delete_many(list(self._list_prefix(validate_prefix(prefix))))
        self.remove_leftovers(prefix)

    def remove_leftovers(self, prefix: str = "") -> None:  # noqa: B027 - a hook only stores with temporary files need
        """Remove what writers killed mid-write left below ``prefix`` (temporary files, which
        are never keys): call it when no writer is at work there, as at the end of a job."""

    def flush(self) -> None:  # noqa: B027 - a hook only buffering stores need
        """Make the writes so far reach the store's location, so that they survive the
        process being killed (``Dataset.sync()`` calls it): a store that buffers writes, as
        a zip archive does, writes them out; stores that write through need do nothing."""

    def close(self) -> None:  # noqa: B027 - a hook only stores holding resources need
        """Release resources; a store that buffers writes makes them durable here."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_writable(self, key: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot write {key!r}: {self!r} is open read-only")

    def _not_found(self, key: str) -> KeyNotFoundError:
        return KeyNotFoundError(f"no key {key!r} in {self!r}")

    # -- what subclasses implement ---------------------------------------------------------
    @abstractmethod
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        """The value or None when absent."""

    @abstractmethod
    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None: ...

    @abstractmethod
    def _delete(self, key: str) -> None: ...

    @abstractmethod
    def _list_prefix(self, prefix: str) -> Iterator[str]: ...

    def _exists(self, key: str) -> bool:
        return self._get(key, (0, 0)) is not None

    def _getsize(self, key: str) -> int | None:
        value = self._get(key, None)
        return None if value is None else len(value)

    def _get_into(self, key: str, view: memoryview) -> bool:
        value = self._get(key, None)
        if value is None:
            return False
        check_size(key, len(value), view.nbytes)
        view[:] = value
        return True

    def _list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        keys: set[str] = set()
        prefixes: set[str] = set()
        for key in self._list_prefix(prefix):
            head, sep, _ = key[len(prefix) :].partition("/")
            (prefixes if sep else keys).add(head)
        return sorted(keys), sorted(prefixes)

    def _get_many(self, keys: builtins.list[str], byte_range: ByteRange | None = None) -> dict[str, bytes]:
        if self.prefers_concurrency and len(keys) > 1:
            with ThreadPoolExecutor(max_workers=min(config.requests(), len(keys))) as pool:
                values = list(pool.map(lambda k: self._get(k, byte_range), keys))
        else:
            values = [self._get(k, byte_range) for k in keys]
        return {k: v for k, v in zip(keys, values) if v is not None}

    def _get_arriving(
        self, keys: builtins.list[str], byte_range: ByteRange | None
    ) -> Iterator[builtins.list[tuple[str, bytes | None]]]:
        """A store that reads concurrently with no batch read of its own (its ``_get_many``
        is this class's: single reads at once) keeps a window of them in flight: a request
        goes out as soon as one is answered, and at most twice the bound of answers wait
        for the caller (batches would wait for their slowest request). Other stores read
        batches of ``config.requests()`` keys through their ``_get_many``, the next batch on
        a thread of its own while the caller works on the last."""
        if self.prefers_concurrency and type(self)._get_many is Store._get_many:
            yield from self._get_window(keys, byte_range)
            return
        size = config.requests()
        batches = [keys[i : i + size] for i in range(0, len(keys), size)]
        if len(batches) <= 1:
            for batch in batches:
                found = self._get_many(batch, byte_range)
                yield [(k, found.get(k)) for k in batch]
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="nczarr-fetch") as fetcher:
            future = fetcher.submit(self._get_many, batches[0], byte_range)
            for index, batch in enumerate(batches):
                found = future.result()
                if index + 1 < len(batches):
                    future = fetcher.submit(self._get_many, batches[index + 1], byte_range)
                yield [(k, found.get(k)) for k in batch]

    def _get_window(
        self, keys: builtins.list[str], byte_range: ByteRange | None
    ) -> Iterator[builtins.list[tuple[str, bytes | None]]]:
        if not keys:
            return
        arrived: queue.SimpleQueue[Future[bytes | None]] = queue.SimpleQueue()
        waiting: dict[Future[bytes | None], str] = {}
        todo = iter(keys)
        pool = ThreadPoolExecutor(max_workers=min(config.requests(), len(keys)), thread_name_prefix="nczarr-fetch")

        def send(count: int) -> None:
            for key in itertools.islice(todo, count):
                future = pool.submit(self._get, key, byte_range)
                waiting[future] = key
                future.add_done_callback(arrived.put)

        try:
            send(2 * config.requests())
            while waiting:
                done = [arrived.get()]
                while not arrived.empty():
                    done.append(arrived.get())
                group = [(waiting.pop(future), future.result()) for future in done]
                send(len(done))
                yield group
        finally:  # closed early or failed: what is still waiting is not sent, what runs ends
            pool.shutdown(wait=True, cancel_futures=True)

    def _read_ranges(self, key: str, ranges: builtins.list[tuple[int, int]]) -> builtins.list[bytes] | None:
        """The bytes of each range of ``key`` (sorted, apart), or None when it is absent."""
        values = []
        for offset, length in ranges:
            value = self._get(key, (offset, length))
            if value is None:
                return None
            values.append(value)
        return values

    def _read_ranges_many(
        self, requests: dict[str, builtins.list[tuple[int, int]]]
    ) -> dict[str, builtins.list[bytes]]:
        wanted = [(key, offset, length) for key, ranges in requests.items() for offset, length in ranges]
        if not self.prefers_concurrency or len(wanted) < 2:
            keys = builtins.list(requests)
            found = [self._read_ranges(k, requests[k]) for k in keys]
            return {k: v for k, v in zip(keys, found) if v is not None}
        # every range of every key at once, under one bound; a key absent drops out whole
        with ThreadPoolExecutor(max_workers=min(config.requests(), len(wanted))) as pool:
            pieces = builtins.list(pool.map(lambda want: self._get(want[0], (want[1], want[2])), wanted))
        values: dict[str, builtins.list[bytes]] = {key: [] for key in requests}
        for (key, _, _), piece in zip(wanted, pieces):
            if piece is None:
                values.pop(key, None)
            elif key in values:
                values[key].append(piece)
        return values

    def _set_many(self, items: Mapping[str, bytes | bytearray | memoryview]) -> None:
        if self.prefers_concurrency and len(items) > 1:
            with ThreadPoolExecutor(max_workers=min(config.requests(), len(items))) as pool:
                builtins.list(pool.map(lambda item: self._set(*item), items.items()))
            return
        for key, value in items.items():
            self._set(key, value)

    def _delete_many(self, keys: builtins.list[str]) -> None:
        for key in keys:
            self._delete(key)
