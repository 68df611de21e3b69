"""Zarr arrays: orthogonal reads and writes, chunk by chunk, with concurrent codecs and a
bounded write-back chunk cache."""

from __future__ import annotations

import collections
import functools
import itertools
import logging
import math
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from nczarr import config
from nczarr.errors import ChunkTooLargeError, CodecError, SelectionError, StoreError
from nczarr.store.base import Store, merge_ranges
from nczarr.zarr.chunkspec import Buffer, ChunkSpec, CodecPipeline, FillValue
from nczarr.zarr.codecs import chunk_is_fill, pipeline_from_v2, pipeline_from_v3
from nczarr.zarr.codecs.workers import THREAD_PREFIX, run
from nczarr.zarr.indexing import ChunkPart, ChunkProjection, OrthogonalSelection, Selection, chunk_part
from nczarr.zarr.metadata import ArrayMetadata
from nczarr.zarr.node import Node, key_prefix

log = logging.getLogger(__name__)

#: Default budget of decoded chunks kept per array (the write-back cache).
DEFAULT_CACHE_BYTES = 64 * 2**20
#: Memory for one chunk. Zarr stores edge chunks padded to full size, so reading a stored
#: chunk or writing one takes its whole declared size. Where the declared chunk shape is
#: larger than the array's (shape 10, chunks 10**9), that size may be at most
#: CHUNK_PADDING_FACTOR times the largest part of a chunk inside the array, or
#: CHUNK_MEMORY_FLOOR bytes, whichever is more. Beyond that, absent chunks read as fill, a
#: shard whose index and inner chunks fit is read in part, and reading another stored chunk
#: or writing any raises ChunkTooLargeError naming the chunk.
CHUNK_MEMORY_FLOOR = 256 * 2**20
CHUNK_PADDING_FACTOR = 16
#: A selection that needs at most 1/PART_FRACTION of an uncompressed chunk, in at most
#: PART_MAX_RANGES byte ranges (merged where adjacent), reads just those bytes: a one-point
#: time series over chunks of 4 MB reads 4 bytes of each, not 4 MB.
PART_FRACTION = 4
PART_MAX_RANGES = 1024

#: Per thread, the buffer a chunk is read or decoded into before it is placed in a result
#: (fresh buffers of megabytes cost page faults on every chunk), kept when at most
#: _MAX_SCRATCH bytes.
_scratch = threading.local()
_MAX_SCRATCH = 64 * 2**20
_pool_lock = threading.Lock()


def build_pipeline(metadata: ArrayMetadata) -> CodecPipeline:
    """The codec pipeline of an array's metadata (v2 or v3)."""
    spec = ChunkSpec(
        shape=tuple(metadata.chunk_shape),
        dtype=metadata.dtype,
        fill_value=metadata.fill_value_or_default,
        order=metadata.order,
    )
    if metadata.zarr_format == 3:
        return pipeline_from_v3(list(metadata.codecs), spec)
    return pipeline_from_v2(
        list(metadata.filters) if metadata.filters else None, metadata.compressor, spec
    )


class ChunkCache:
    """LRU of decoded chunks by key, bounded in bytes. Dirty chunks are written back by the
    owner when evicted or flushed."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.lock = threading.RLock()
        self._entries: OrderedDict[str, tuple[np.ndarray, bool]] = OrderedDict()
        self._bytes = 0

    def get(self, key: str) -> np.ndarray | None:
        with self.lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: str, chunk: np.ndarray, dirty: bool) -> list[tuple[str, np.ndarray]]:
        """Insert; returns the dirty chunks evicted to make room (the caller writes them)."""
        with self.lock:
            self.discard(key)
            self._entries[key] = (chunk, dirty)
            self._bytes += chunk.nbytes
            evicted = []
            while self._bytes > self.max_bytes and len(self._entries) > 1:
                old_key, (old, old_dirty) = self._entries.popitem(last=False)
                self._bytes -= old.nbytes
                if old_dirty:
                    evicted.append((old_key, old))
            return evicted

    def discard(self, key: str) -> None:
        with self.lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self._bytes -= entry[0].nbytes

    def take_dirty(self) -> list[tuple[str, np.ndarray]]:
        """The dirty chunks, now marked clean."""
        with self.lock:
            dirty = [(k, c) for k, (c, d) in self._entries.items() if d]
            for k, c in dirty:
                self._entries[k] = (c, False)
            return dirty

    def clear(self) -> None:
        with self.lock:
            self._entries.clear()
            self._bytes = 0

    def keys(self) -> list[str]:
        with self.lock:
            return list(self._entries)

    def fits(self, nbytes: int) -> bool:
        return nbytes <= self.max_bytes


class ChunkWriter:
    """Encodes chunks and stores them; held apart from the Array so a finalizer can flush
    the cache without keeping the Array alive.

    With ``behind``, chunks that go through codecs are encoded in a pool and stored, in
    order, by one I/O thread shared by all arrays, behind the caller: a program that writes
    chunk after chunk (records appended one at a time) computes the next while the last ones
    are compressed on the other cores and go to disk (appending 500 zlib records: 1.7 s
    against 3.2 s for netCDF4 on NCZarr, benchmarks/api.py). Raw chunks are stored at once: they
    would have to be copied for the I/O thread (into fresh pages, which costs more than the
    write), and that thread waits for the GIL after each system call while the caller runs
    Python, so appending 500 raw records of 180x360 took twice as long behind (0.37 s against
    0.18 s, benchmarks/api.py). Until a chunk is stored its key is *pending*:
    readers of the array :meth:`settle` the keys they read first; :meth:`drain` waits for
    everything and raises a failure of any write (as does the next :meth:`write`). At most
    ``MAX_PENDING_BYTES`` are held at once. Other readers of the store see the chunks once
    the array is flushed."""

    MAX_PENDING_BYTES = 64 * 1024 * 1024
    #: Batches larger than this are stored at once (copying them would cost more than the
    #: overlap gains: the caller has no more work in the same call).
    MAX_BEHIND_BATCH = 8 * 1024 * 1024

    def __init__(self, store: Store, pipeline: CodecPipeline, write_empty_chunks: bool, behind: bool = False) -> None:
        self.store = store
        self.pipeline = pipeline
        self.write_empty_chunks = write_empty_chunks
        self.behind = behind
        self._pending: collections.Counter[str] = collections.Counter()  # key -> batches holding it
        self._batches: collections.deque[tuple[Future[None], int, list[str]]] = collections.deque()
        self._pending_bytes = 0
        # the queue of batches is shared by the writing thread and by readers in the pool
        self._lock = threading.RLock()

    def encode(self, key: str, chunk: np.ndarray) -> bytes | bytearray | memoryview | None:
        """Encoded bytes, or None when the chunk is all fill and need not be stored."""
        if not self.write_empty_chunks and chunk_is_fill(chunk, self.pipeline.spec.fill_value):
            return None
        try:
            return self.pipeline.encode(chunk)
        except CodecError as e:
            raise CodecError(f"chunk {key!r}: {e}") from e

    def write(self, chunks: Iterable[tuple[str, np.ndarray]]) -> None:
        """Encode concurrently, then store in one batch (or delete the keys of all-fill
        chunks). The batch is the store's to parallelise: a remote store overlaps requests,
        while a local directory writes faster one file at a time."""
        chunks = list(chunks)
        self._reap()
        if not chunks:
            return
        size = sum(c.nbytes for _, c in chunks)
        if self.behind and not self.pipeline.is_raw and size <= self.MAX_BEHIND_BATCH:
            self._write_behind(chunks, size)
            return
        # raw chunks, and a big batch that leaves the caller nothing to do meanwhile, are
        # stored now (after any older batch holding the same keys)
        keys = [k for k, _ in chunks]
        if not self.store.prefers_concurrency:
            # each thread encodes a chunk and stores it: the copy of a raw chunk, compression
            # and the write all release the GIL, so every core works and the disk with them
            self.settle(keys)
            empties = run([functools.partial(self._encode_and_store, k, c) for k, c in chunks])
            self.store.delete_many([k for k, empty in zip(keys, empties) if empty])
            return
        encoded = run([functools.partial(self.encode, k, c) for k, c in chunks])
        self.settle(keys)
        self._store_encoded(keys, encoded)

    def _encode_and_store(self, key: str, chunk: np.ndarray) -> bool:
        """Encode and store one chunk; True when it is all fill (its key is to be deleted)."""
        value = self.encode(key, chunk)
        if value is None:
            return True
        # see Store.overwrite: in place when an uncompressed chunk of that size is stored
        if not (self.pipeline.is_raw and self.store.overwrite(key, value)):
            self.store.set(key, value)
        return False

    def _write_behind(self, chunks: list[tuple[str, np.ndarray]], size: int) -> None:
        """Encode in the encoding pool and store in the I/O thread, in order: a program
        appending compressed records compresses the next while the last ones are encoded."""
        # the caller may change its array, and the cache its chunks, as soon as we return
        owned = [(k, np.array(c, copy=True)) for k, c in chunks]
        keys = [k for k, _ in chunks]
        with self._lock:
            try:
                encoding = _encoding_pool().submit(lambda: [self.encode(k, c) for k, c in owned])
                future = _io_pool().submit(lambda: self._store_encoded(keys, encoding.result()))
            except RuntimeError:  # the interpreter is exiting: store here and now
                self.settle(keys)
                self._store_encoded(keys, [self.encode(k, c) for k, c in owned])
                return
            self._pending.update(keys)
            self._batches.append((future, size, keys))
            self._pending_bytes += size
            while self._pending_bytes > self.MAX_PENDING_BYTES and self._batches:
                self._finish_oldest()

    def _store_encoded(self, keys: list[str], encoded: list[Any]) -> None:
        """Store the encoded chunks of ``keys``; delete those that came out all fill (None)."""
        self._store(
            {k: v for k, v in zip(keys, encoded) if v is not None}, [k for k, v in zip(keys, encoded) if v is None]
        )

    def _store(self, values: dict[str, Any], empties: list[str]) -> None:
        if self.pipeline.is_raw:  # see Store.overwrite: in place when the chunk is stored
            values = {k: v for k, v in values.items() if not self.store.overwrite(k, v)}
        self.store.set_many(values)
        if empties:
            self.store.delete_many(empties)

    def _finish_oldest(self) -> None:
        """Wait for the oldest batch (the caller holds the lock)."""
        future, size, keys = self._batches.popleft()
        self._pending_bytes -= size
        try:
            future.result()
        finally:
            pending = self._pending
            for key in keys:
                if pending[key] <= 1:
                    pending.pop(key, None)  # no batch holds it any more
                else:
                    pending[key] -= 1

    def _reap(self) -> None:
        """Collect the batches already stored (raising the first failure)."""
        with self._lock:
            while self._batches and self._batches[0][0].done():
                self._finish_oldest()

    def settle(self, keys: Iterable[str]) -> None:
        """Wait until none of ``keys`` is still being stored."""
        with self._lock:
            if self._pending and any(k in self._pending for k in keys):
                self.drain()

    def drain(self) -> None:
        """Wait for every batch; raise the first failure."""
        with self._lock:
            while self._batches:
                self._finish_oldest()

    def flush(self, cache: ChunkCache) -> None:
        self.write(cache.take_dirty())
        self.drain()


_io: ThreadPoolExecutor | None = None
_encoding: ThreadPoolExecutor | None = None


def _encoding_pool() -> ThreadPoolExecutor:
    """The threads that encode chunks written behind the caller. Apart from the pool of
    ``workers.executor()``:
    the I/O thread waits on these encodings, and tasks in that pool may wait on the I/O
    thread (a read-modify-write settles its chunk first), so sharing one pool could
    deadlock; nothing here waits on anything."""
    global _encoding
    workers = config.threads()
    with _pool_lock:
        if _encoding is None or _encoding._max_workers != workers:
            if _encoding is not None:
                _encoding.shutdown(wait=False)
            _encoding = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"{THREAD_PREFIX}-encode")
        return _encoding


def _io_pool() -> ThreadPoolExecutor:
    """The one thread that stores chunks behind the writers (a local disk is fastest written
    one file at a time; remote stores parallelise inside set_many)."""
    global _io
    with _pool_lock:
        if _io is None:
            _io = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{THREAD_PREFIX}-io")
        return _io


def _flush_at_exit(writer: ChunkWriter, cache: ChunkCache, path: str) -> None:
    """Write an array's dirty chunks when it is collected or the interpreter exits; there is
    no caller to raise to, so a failure is logged."""
    try:
        writer.flush(cache)
    except Exception:
        log.exception("could not write the cached chunks of array %r", path or "/")


class Array(Node[ArrayMetadata]):
    """A Zarr array (v2 or v3) in a store. Indexing is orthogonal, as in netCDF4 and
    zarr-python's ``oindex``; results are numpy arrays."""

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: ArrayMetadata,
        *,
        read_only: bool = False,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        write_empty_chunks: bool = False,
        write_behind: bool = False,
    ) -> None:
        """``write_behind``: chunks are stored in the background (see :class:`ChunkWriter`);
        other readers of the store see them after :meth:`flush`."""
        super().__init__(store, path, metadata, read_only=read_only)
        try:
            self._pipeline = build_pipeline(metadata)
        except CodecError as e:  # an unknown codec, a missing package: say which array
            raise CodecError(f"array {path or '/'!r}: {e}") from e
        self._prefix = key_prefix(path)
        #: Bytes of one whole decoded chunk (Python ints: no overflow).
        self._chunk_nbytes = math.prod(self.chunks) * self.dtype.itemsize
        self._cache = ChunkCache(cache_bytes)
        self._writer = ChunkWriter(store, self._pipeline, write_empty_chunks, behind=write_behind)
        # Dirty chunks reach the store even if the caller forgets flush().
        self._finalizer = weakref.finalize(self, _flush_at_exit, self._writer, self._cache, path)

    # -- description ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.metadata.shape)

    @property
    def chunks(self) -> tuple[int, ...]:
        return tuple(self.metadata.chunk_shape)

    @property
    def dtype(self) -> np.dtype:
        return self.metadata.dtype

    @property
    def fill_value(self) -> FillValue:
        return self.metadata.fill_value

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self.metadata.dimension_names

    @property
    def nchunks(self) -> int:
        return math.prod(self._grid(self.shape))

    @property
    def pipeline(self) -> CodecPipeline:
        return self._pipeline

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a scalar array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<nczarr.Array {self.path or '/'!r} shape={self.shape} dtype={self.dtype} zarr_format={self.zarr_format}>"

    def _grid(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(-(-n // c) for n, c in zip(shape, self.chunks))

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        """The store key of the chunk at grid position ``coords``."""
        return self._prefix + self.metadata.chunk_key(coords)

    def stored_in(self, selection: tuple[slice | int, ...]) -> bool:
        """Whether any chunk that the box ``selection`` (ints, slices of step 1) reaches is
        stored (unstored chunks read as fill values: a writer of files need not write them)."""
        ranges = []
        for entry, chunk, size in zip(selection, self.chunks, self.shape):
            start, stop = (entry, entry + 1) if isinstance(entry, int) else entry.indices(size)[:2]
            if stop <= start:
                return False
            ranges.append(range(start // chunk, (stop - 1) // chunk + 1))
        return any(self.store.exists(self.chunk_key(coords)) for coords in itertools.product(*ranges))

    def _inside_nbytes(self) -> int:
        """Bytes of the largest part of a chunk that lies inside the array."""
        return math.prod(min(c, n) for c, n in zip(self.chunks, self.shape)) * self.dtype.itemsize

    def _chunk_memory_limit(self) -> int:
        """The most memory one chunk may take (see CHUNK_MEMORY_FLOOR)."""
        allowed = max(CHUNK_MEMORY_FLOOR, CHUNK_PADDING_FACTOR * self._inside_nbytes())
        return min(sys.maxsize, allowed)

    def _chunks_too_large(self) -> bool:
        """Whether a whole chunk takes more memory than CHUNK_MEMORY_FLOOR allows, or more
        than any buffer can hold."""
        if self._chunk_nbytes <= CHUNK_MEMORY_FLOOR:
            return False  # the usual case, without looking at the shape
        return self._chunk_nbytes > self._chunk_memory_limit()

    def _check_chunk_memory(self, key: str, doing: str) -> None:
        if self._chunks_too_large():
            inside = self._inside_nbytes()
            why = (
                "more than a buffer can hold"
                if self._chunk_nbytes > sys.maxsize
                else f"for at most {inside} bytes inside the array"
            )
            raise ChunkTooLargeError(
                f"chunk {key!r} of array {self.path or '/'!r}: {doing} it takes {self._chunk_nbytes} "
                f"bytes of memory, {why} (shape {self.shape}, chunks {self.chunks}); refused"
            )

    # -- reading -------------------------------------------------------------------------
    def __getitem__(self, selection: Selection) -> np.ndarray:
        return self.get_orthogonal_selection(selection)

    def get_orthogonal_selection(self, selection: Selection) -> np.ndarray:
        sel = OrthogonalSelection(selection, self.shape, self.chunks)
        out = np.empty(sel.shape, dtype=self.dtype)
        view = sel.out_view(out)
        pending: list[tuple[str, ChunkProjection]] = []
        for proj in sel.projections():
            key = self.chunk_key(proj.coords)
            cached = self._cache.get(key)
            if cached is not None:
                view[proj.out_selection] = cached[proj.chunk_selection]
            else:
                pending.append((key, proj))
        self._load(view, pending)
        return out[()] if out.ndim == 0 else out

    def _decode(self, key: str, data: bytes | bytearray | memoryview | None) -> np.ndarray | None:
        if data is None:
            return None
        try:
            return self._pipeline.decode(data)
        except CodecError as e:
            raise CodecError(f"chunk {key!r} of array {self.path or '/'!r}: {e}") from e

    def _decode_into(self, view: np.ndarray, key: str, proj: ChunkProjection, data: bytes | None) -> None:
        """Decode a stored chunk (None: absent) into its place in ``view``: of a blosc chunk
        only the blocks the selection needs, and a whole blosc or shuffled chunk straight
        into the result when its place there is contiguous (no decoded copy to place)."""
        part = self._blosc_part(proj)
        try:
            if part is not None and data is not None:
                decoded = self._pipeline.decode_ranges(data, part.ranges)
                if decoded is not None:
                    self._place_part(view, key, proj, part, [decoded])
                    return
            elif data is not None and self._pipeline.decodes_into:
                target = self._whole_target(view, proj)
                if target is not None:
                    if self._pipeline.decode_into(data, target.ravel(order="K").view(np.uint8)):
                        return
                else:  # not one run in the result: decoded into this thread's scratch, then placed
                    scratch = _scratch_bytes(self._chunk_nbytes)
                    if self._pipeline.decode_into(data, scratch):
                        self._place(view, proj, self._as_chunk(scratch))
                        return
        except CodecError as e:
            raise CodecError(f"chunk {key!r} of array {self.path or '/'!r}: {e}") from e
        self._place(view, proj, self._decode(key, data))

    def _place(self, view: np.ndarray, proj: ChunkProjection, chunk: np.ndarray | None) -> None:
        if chunk is None:
            view[proj.out_selection] = self._pipeline.spec.fill_value
        else:
            view[proj.out_selection] = chunk[proj.chunk_selection]

    def _readinto_target(self, view: np.ndarray, proj: ChunkProjection) -> np.ndarray | None:
        """The destination of a chunk whose stored bytes can be read straight into the result."""
        return self._whole_target(view, proj) if self._pipeline.is_raw else None

    def _whole_target(self, view: np.ndarray, proj: ChunkProjection) -> np.ndarray | None:
        """The place in ``view`` of a whole chunk when it is one contiguous run of bytes in
        the chunk's order (a chunk can be read or decoded straight into it), else None."""
        if not proj.full:
            return None
        if any((k + 1) * c > n for k, c, n in zip(proj.coords, self.chunks, self.shape)):
            return None  # an edge chunk is stored padded, bigger than its place
        if not all(isinstance(s, slice) for s in proj.out_selection):
            return None
        target = view[(*proj.out_selection, Ellipsis)]
        contiguous = target.flags.f_contiguous if self.metadata.order == "F" else target.flags.c_contiguous
        return target if contiguous else None

    def _read_raw_scratch(self, key: str) -> np.ndarray | None:
        """A raw chunk read into this thread's scratch; None when absent. Valid until the
        thread's next chunk."""
        scratch = _scratch_bytes(self._chunk_nbytes)
        if not self.store.get_into(key, scratch.data):
            return None
        return self._as_chunk(scratch)

    def _as_chunk(self, data: np.ndarray) -> np.ndarray:
        """The bytes of a whole chunk (uint8, contiguous) as the chunk: its dtype, shape and order."""
        return data.view(self.dtype).reshape(self.chunks, order=self.metadata.order)

    def _load_one(self, view: np.ndarray, key: str, proj: ChunkProjection, keep: bool) -> np.ndarray | None:
        """Read one chunk into its place in ``view``; return the decoded chunk when ``keep``."""
        try:
            target = self._readinto_target(view, proj)
            if target is not None:
                # Bytes, in memory order: datetime and other dtypes have no buffer format.
                if not self.store.get_into(key, target.ravel(order="K").view(np.uint8).data):
                    target[...] = self._pipeline.spec.fill_value
                return None
            part = self._raw_part(proj)
            if part is not None:
                self._place_part(view, key, proj, part, self.store.get_ranges(key, part.ranges))
                return None
            if self._pipeline.is_raw and not keep and self.dtype.itemsize:
                self._place(view, proj, self._read_raw_scratch(key))
                return None
        except StoreError:
            pass  # e.g. a value of the wrong size: the decoding path below says what is wrong
        if self._pipeline.partial_decodable and not proj.full:
            self._load_part_of_shard(view, key, proj)
            return None
        if (proj.full and self._pipeline.decodes_into) or self._blosc_part(proj) is not None:
            self._decode_into(view, key, proj, self._read_stored(key))
            return None
        chunk = self._decode(key, self._read_stored(key))
        self._place(view, proj, chunk)
        # only when asked: the pool's results are held until every chunk is read
        return chunk if keep else None

    def _raw_part(self, proj: ChunkProjection) -> ChunkPart | None:
        """The byte ranges to read of an uncompressed chunk of which the selection needs a
        small part (at most 1/PART_FRACTION of it, in at most PART_MAX_RANGES ranges), or
        None: the chunk is read whole."""
        if proj.full or not self._pipeline.is_raw or self.metadata.order != "C" or not self.dtype.itemsize:
            return None
        part = chunk_part(proj.per_dim, self.chunks, self.dtype.itemsize, PART_MAX_RANGES)
        if part is None or part.nbytes * PART_FRACTION > self._chunk_nbytes:
            return None
        if self.store.prefers_concurrency:
            # a remote store fetches ranges near one another as one: when those spans cover
            # most of the chunk, one request for all of it costs the same and reads simply
            fetched = sum(length for _, length in merge_ranges(part.ranges, self.store.range_merge_gap))
            if fetched * 2 > self._chunk_nbytes:
                return None
        return part

    def _blosc_part(self, proj: ChunkProjection) -> ChunkPart | None:
        """The byte ranges of the decoded chunk that a selection needs of a blosc chunk
        (a chain of ``bytes`` and ``blosc``), when it needs at most 1/PART_FRACTION of it:
        only the blosc blocks holding them are decoded (a one-point time series decodes one
        block per chunk). None: the chunk is decoded whole."""
        if proj.full or not self._pipeline.ranges_decodable or self.metadata.order != "C" or not self.dtype.itemsize:
            return None
        part = chunk_part(proj.per_dim, self.chunks, self.dtype.itemsize, PART_MAX_RANGES)
        if part is None or part.nbytes * PART_FRACTION > self._chunk_nbytes:
            return None
        return part

    def _place_part(
        self, view: np.ndarray, key: str, proj: ChunkProjection, part: ChunkPart, pieces: Sequence[Buffer] | None
    ) -> None:
        """Put the part of a chunk read by ``_raw_part``'s ranges (None: absent) in place."""
        if pieces is None:
            view[proj.out_selection] = self._pipeline.spec.fill_value
            return
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        if len(data) != part.nbytes:
            raise CodecError(
                f"chunk {key!r} of array {self.path or '/'!r}: the stored value ends before "
                f"byte {max(o + n for o, n in part.ranges)}, a chunk has {self._chunk_nbytes}"
            )
        values = np.frombuffer(data, dtype=self.dtype).reshape(part.shape)
        view[proj.out_selection] = values[part.selection]

    def _read_stored(self, key: str) -> bytes | None:
        """The stored bytes of a chunk (None when absent), reading no more than a chunk can
        encode to: a bigger value is corrupt and is refused without being read whole."""
        try:
            data = self.store.get(key, self._stored_range)
        except KeyError:
            return None
        return self._checked_stored(key, data)

    @property
    def _stored_range(self) -> tuple[int, int]:
        """The byte range to read of a stored chunk: one byte more than any chunk of the
        array encodes to, so that a bigger (corrupt or hostile) value shows without being
        read whole."""
        return 0, self._pipeline.max_encoded_size + 1

    def _checked_stored(self, key: str, data: bytes) -> bytes:
        limit = self._pipeline.max_encoded_size
        if len(data) > limit:
            raise CodecError(
                f"chunk {key!r} of array {self.path or '/'!r}: the stored value has more than "
                f"{limit} bytes, more than any chunk of the array encodes to; refused"
            )
        return data

    def _load_beyond(self, view: np.ndarray, pending: list[tuple[str, ChunkProjection]]) -> None:
        """Chunks too large to decode whole (see CHUNK_MEMORY_FLOOR): absent ones read as
        fill; a shard whose index and inner chunks are small enough is read in part (only
        what lies inside the array); any other stored chunk is refused."""
        partial = self._pipeline.partial_nbytes
        in_part = partial is not None and partial <= self._chunk_memory_limit()
        for key, proj in pending:
            if in_part:
                self._load_part_of_shard(view, key, proj)
                continue
            if self.store.exists(key):
                self._check_chunk_memory(key, "reading")
            view[proj.out_selection] = self._pipeline.spec.fill_value

    def _load_part_of_shard(self, view: np.ndarray, key: str, proj: ChunkProjection) -> None:
        """Read only the shard index and the inner chunks the selection touches."""
        try:
            part = self._pipeline.decode_partial(lambda offset, length: self.store.get(key, (offset, length)), proj.per_dim)
        except KeyError:
            view[proj.out_selection] = self._pipeline.spec.fill_value
        except CodecError as e:
            raise CodecError(f"chunk {key!r} of array {self.path or '/'!r}: {e}") from e
        else:
            view[proj.out_selection] = part

    def _load(self, view: np.ndarray, pending: list[tuple[str, ChunkProjection]]) -> None:
        if not pending:
            return
        self._writer.settle(k for k, _ in pending)
        if self._chunks_too_large():
            self._load_beyond(view, pending)
            return
        if self.store.prefers_concurrency:
            parts = {key: part for key, proj in pending if (part := self._raw_part(proj)) is not None}
            if parts:
                found_parts = self.store.get_ranges_many({k: p.ranges for k, p in parts.items()})
                for key, proj in pending:
                    if key in parts:
                        self._place_part(view, key, proj, parts[key], found_parts.get(key))
                pending = [(k, p) for k, p in pending if k not in parts]
            self._load_remote(view, pending)
            return
        # A small read inside one chunk is often followed by another: keep that chunk.
        keep = len(pending) == 1 and not pending[0][1].full
        chunks = run([functools.partial(self._load_one, view, k, p, keep) for k, p in pending])
        if keep and chunks[0] is not None and self._cache.fits(chunks[0].nbytes):
            self._cache.put(pending[0][0], chunks[0], dirty=False)

    def _load_remote(self, view: np.ndarray, pending: list[tuple[str, ChunkProjection]]) -> None:
        """Fetch chunks from a remote store as they arrive (``Store.get_arriving``: many
        requests in flight, the next ones out while a group decodes) and decode each group:
        no request waits for a chunk to decode."""
        places = dict(pending)
        for group in self.store.get_arriving(places, self._stored_range):
            run([
                functools.partial(self._decode_into, view, key, places[key],
                                  None if value is None else self._checked_stored(key, value))
                for key, value in group
            ])

    # -- writing -------------------------------------------------------------------------
    def __setitem__(self, selection: Selection, value: npt.ArrayLike) -> None:
        self.set_orthogonal_selection(selection, value)

    def set_orthogonal_selection(self, selection: Selection, value: npt.ArrayLike) -> None:
        self._check_writable()
        point = self._point(selection)
        if point is not None and np.ndim(value) == 0:
            self._set_point(point, value)
            return
        sel = OrthogonalSelection(selection, self.shape, self.chunks)
        value = np.asarray(value, dtype=self.dtype)
        try:
            if value.shape != sel.shape:
                value = np.broadcast_to(value, sel.shape)
        except ValueError:
            raise SelectionError(
                f"cannot assign a value of shape {value.shape} to a selection of shape {sel.shape} "
                f"of array {self.path or '/'!r}"
            ) from None
        source = sel.out_view(value)
        whole: list[tuple[str, np.ndarray]] = []
        partial: list[tuple[str, ChunkProjection]] = []
        for proj in sel.projections():
            key = self.chunk_key(proj.coords)
            if proj.full:
                whole.append((key, self._whole_chunk(proj, source)))
                self._cache.discard(key)
            else:
                partial.append((key, proj))
        self._writer.write(whole)
        if partial:
            self._update_partial(partial, source)

    def _point(self, selection: Selection) -> tuple[int, ...] | None:
        """The element a selection of in-range non-negative ints names, else None."""
        indices = selection if type(selection) is tuple else (selection,)
        shape = self.metadata.shape
        if not shape or len(indices) != len(shape):
            return None
        for i, n in zip(indices, shape):
            if type(i) is not int or not 0 <= i < n:
                return None
        return cast("tuple[int, ...]", indices)  # every index is an int: checked above

    def _set_point(self, point: tuple[int, ...], value: npt.ArrayLike) -> None:
        """One element written without the general selection machinery: loops that write
        element by element pay for little more than the chunk cache."""
        chunks = self.metadata.chunk_shape
        key = self.chunk_key(tuple(i // c for i, c in zip(point, chunks)))
        chunk = self._cache.get(key)
        if chunk is None:
            chunk = self._existing_chunk(key)
        elif not chunk.flags.writeable:
            chunk = chunk.copy(order="K")
        if isinstance(value, np.ndarray):  # a 0-d object array would be stored as itself
            value = value[()]
        chunk[tuple(i % c for i, c in zip(point, chunks))] = value
        if self._cache.fits(chunk.nbytes):
            self._writer.write(self._cache.put(key, chunk, dirty=True))
        else:
            self._writer.write([(key, chunk)])

    def _whole_chunk(self, proj: ChunkProjection, source: np.ndarray) -> np.ndarray:
        """The chunk a fully covering write produces (edge chunks padded with fill)."""
        # a 0-d object array indexed by () gives its element, not an array
        part = source[proj.out_selection] if proj.out_selection else source[...]
        if part.shape == self.chunks:
            return part
        self._check_chunk_memory(self.chunk_key(proj.coords), "writing")
        chunk = np.full(self.chunks, self._pipeline.spec.fill_value, dtype=self.dtype)
        chunk[proj.chunk_selection] = part
        return chunk

    def _existing_chunk(self, key: str) -> np.ndarray:
        """A writable copy of a stored chunk (or a chunk of fill) for read-modify-write."""
        self._check_chunk_memory(key, "writing")
        self._writer.settle((key,))
        if self._pipeline.is_raw:  # read straight into the chunk's array
            chunk = np.empty(self.chunks, dtype=self.dtype, order=self.metadata.order)
            try:
                found = self.store.get_into(key, chunk.reshape(-1, order="A").view(np.uint8).data)
            except StoreError:
                found = None  # another size than a raw chunk has: let the pipeline say why
            if found is not None:
                return chunk if found else np.full(self.chunks, self._pipeline.spec.fill_value, dtype=self.dtype)
        data = self._read_stored(key)
        if data is None:
            return np.full(self.chunks, self._pipeline.spec.fill_value, dtype=self.dtype)
        return np.array(self._decode(key, data), order=self.metadata.order)

    def _update_partial(self, partial: list[tuple[str, ChunkProjection]], source: np.ndarray) -> None:
        cached = {key: self._cache.get(key) for key, _ in partial}
        missing = [key for key, chunk in cached.items() if chunk is None]
        loaded = dict(zip(missing, run([functools.partial(self._existing_chunk, k) for k in missing])))
        to_write: list[tuple[str, np.ndarray]] = []
        for key, proj in partial:
            chunk = cached[key]
            if chunk is None:
                chunk = loaded[key]
            if not chunk.flags.writeable:
                chunk = chunk.copy(order="K")
            chunk[proj.chunk_selection] = source[proj.out_selection]
            if self._cache.fits(chunk.nbytes):
                to_write.extend(self._cache.put(key, chunk, dirty=True))
            else:
                to_write.append((key, chunk))
        self._writer.write(to_write)

    def flush(self) -> None:
        """Write every chunk changed in the cache to the store."""
        self._writer.flush(self._cache)

    def close(self) -> None:
        self.flush()
        self._cache.clear()

    def __enter__(self) -> Array:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- shape ---------------------------------------------------------------------------
    def resize(self, *shape: int | Iterable[int]) -> None:
        """Change the shape. Chunks wholly outside the new shape are deleted; the parts of
        edge chunks beyond a shrunk boundary are reset to fill, so growing again shows fill."""
        self._check_writable()
        sizes = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        new_shape = tuple(int(cast(int, n)) for n in sizes)  # int() refuses what is no size
        if len(new_shape) != self.ndim or any(n < 0 for n in new_shape):
            raise SelectionError(f"cannot resize array {self.path or '/'!r} of shape {self.shape} to {new_shape}")
        old_shape = self.shape
        self.flush()
        self._cache.clear()
        old_grid, new_grid = self._grid(old_shape), self._grid(new_shape)
        outside = [
            self.chunk_key(coords)
            for coords in itertools.product(*(range(g) for g in old_grid))
            if any(k >= g for k, g in zip(coords, new_grid))
        ]
        if outside:
            self.store.delete_many(outside)
        self._set_metadata(self.metadata.with_shape(new_shape))
        self._clear_beyond(old_shape, new_shape)

    def _clear_beyond(self, old_shape: tuple[int, ...], new_shape: tuple[int, ...]) -> None:
        for axis, (old, new, c) in enumerate(zip(old_shape, new_shape, self.chunks)):
            if new >= old or new % c == 0:
                continue
            edge = new // c
            ranges = [range(g) for g in self._grid(new_shape)]
            ranges[axis] = range(edge, edge + 1)
            region = [slice(None)] * self.ndim
            region[axis] = slice(new % c, None)
            updates = []
            for coords in itertools.product(*ranges):
                key = self.chunk_key(coords)
                if self.store.exists(key):
                    chunk = self._existing_chunk(key)
                    chunk[tuple(region)] = self._pipeline.spec.fill_value
                    updates.append((key, chunk))
            self._writer.write(updates)

    def append(self, data: npt.ArrayLike, axis: int = 0) -> tuple[int, ...]:
        """Grow along ``axis`` by the length of ``data`` and write it there; the new shape."""
        data = np.asarray(data, dtype=self.dtype)
        old = self.shape
        new = list(old)
        new[axis] += data.shape[axis]
        self.resize(new)
        selection = [slice(None)] * self.ndim
        selection[axis] = slice(old[axis], new[axis])
        self[tuple(selection)] = data
        return self.shape


def _scratch_bytes(nbytes: int) -> np.ndarray:
    """``nbytes`` of this thread's scratch (uint8), valid until the thread's next chunk."""
    buffer: np.ndarray | None = getattr(_scratch, "buffer", None)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = np.empty(nbytes, dtype=np.uint8)
        if nbytes <= _MAX_SCRATCH:
            _scratch.buffer = buffer
    return buffer[:nbytes]
