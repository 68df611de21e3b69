"""``sharding_indexed``: one stored object holds a grid of inner chunks and an index."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal, Protocol

import numpy as np

from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import Buffer, ChunkData, ChunkSpec, CodecPipeline, CodecsJSON, GetRange, Selector
from nczarr.zarr.codecs.base import Codec, Kind, byte_view, chunk_is_fill, nbytes
from nczarr.zarr.codecs.workers import run
from nczarr.zarr.jsonvalue import JSON, JSONObject

#: Offset and length of an inner chunk that is not stored (entirely the fill value).
EMPTY = 2**64 - 1
#: Byte offsets past this cannot be read (a signed 64-bit file offset).
_MAX_OFFSET = 2**63 - 1
_DEFAULT_CODECS: tuple[JSON, ...] = ({"name": "bytes", "configuration": {"endian": "little"}},)
_DEFAULT_INDEX_CODECS: tuple[JSON, ...] = (
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "crc32c"},
)


class ChainFactory(Protocol):
    """Builds the chain of a v3 ``codecs`` list for chunks of ``spec``: the pipeline module
    hands its ``pipeline_from_v3`` to the codec when it registers it, so sharding does not
    import the module that builds it."""

    def __call__(self, codecs: object, spec: ChunkSpec) -> CodecPipeline: ...


@dataclass(frozen=True, kw_only=True)
class ShardingCodec(Codec):
    """Encodes a whole shard (``spec.shape`` is the shard shape): inner chunks of
    ``chunk_shape`` encoded with ``codecs``, those entirely the fill value left out, then an
    index of (offset, nbytes) uint64 pairs per inner chunk in C order, encoded with
    ``index_codecs``, at the ``index_location``. Inner chunks are written in C order.

    An all-fill shard encodes to just an index with every entry empty (readers see fill);
    the Array should call ``chunk_is_fill`` first and not store such a shard at all.
    """

    name: str = "sharding_indexed"
    chunk_shape: tuple[int, ...]
    codecs: Sequence[JSON] = _DEFAULT_CODECS
    index_codecs: Sequence[JSON] = _DEFAULT_INDEX_CODECS
    index_location: Literal["start", "end"] = "end"
    #: Builds the inner and index chains; set by the registry's factory (see ChainFactory).
    build_chain: ChainFactory | None = field(default=None, repr=False, compare=False)
    inner: CodecPipeline | None = field(default=None, repr=False, compare=False)
    index: CodecPipeline | None = field(default=None, repr=False, compare=False)
    #: Size of the encoded index (the index codecs add a fixed number of bytes).
    index_nbytes: int = field(default=0, repr=False, compare=False)

    KIND: ClassVar[Kind] = "array->bytes"

    def __post_init__(self) -> None:
        shape = self.chunk_shape
        if isinstance(shape, str) or not isinstance(shape, Sequence) or not shape:
            raise self.bad_parameter("chunk_shape", shape, "a list of positive integers")
        for size in shape:
            self.check_int("chunk_shape", size, 1)
        object.__setattr__(self, "chunk_shape", tuple(shape))
        if self.index_location not in ("start", "end"):
            raise self.bad_parameter("index_location", self.index_location, '"start" or "end"')

    def config(self) -> JSONObject:
        return {
            "chunk_shape": list(self.chunk_shape),
            "codecs": list(self.codecs),
            "index_codecs": list(self.index_codecs),
            "index_location": self.index_location,
        }

    def evolve(self, spec: ChunkSpec) -> ShardingCodec:
        if len(self.chunk_shape) != len(spec.shape) or any(
            s % c for s, c in zip(spec.shape, self.chunk_shape, strict=True)
        ):
            raise self.bad_parameter(
                "chunk_shape", list(self.chunk_shape), f"a shape dividing the shard {spec.shape}"
            )
        if self.build_chain is None:
            raise CodecError(f"codec {self.name!r}: built without a chain factory (use the registry)")
        inner = self.build_chain(
            self.codecs, ChunkSpec(self.chunk_shape, spec.dtype, spec.fill_value)
        )
        grid = tuple(s // c for s, c in zip(spec.shape, self.chunk_shape, strict=True))
        index = self.build_chain(
            self.index_codecs, ChunkSpec((*grid, 2), np.dtype(np.uint64), EMPTY)
        )
        if index.encoded_size is None:
            raise self.bad_parameter(
                "index_codecs", self.index_codecs, "codecs of fixed size (bytes, crc32c, ...)"
            )
        return replace(
            self,
            codecs=_as_list(inner.to_json()),
            index_codecs=_as_list(index.to_json()),
            inner=inner,
            index=index,
            index_nbytes=index.encoded_size,
        )

    def serialized_bound(self, spec: ChunkSpec) -> int:
        assert self.inner is not None, "a pipeline evolves its codecs"
        inner_chunks = math.prod(spec.shape) // math.prod(self.chunk_shape)
        return self.index_nbytes + inner_chunks * self.inner.max_encoded_size

    def _regions(self) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
        assert self.index is not None, "a pipeline evolves its codecs"
        grid = self.index.spec.shape[:-1]
        sizes = self.chunk_shape
        return [
            (coords, tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, sizes, strict=True)))
            for coords in np.ndindex(*grid)
        ]

    def encode(self, data: ChunkData, spec: ChunkSpec) -> bytes:
        assert self.inner is not None and self.index is not None, "evolved by the pipeline"
        table = np.full((*self.index.spec.shape[:-1], 2), EMPTY, dtype=np.uint64)
        parts: list[Buffer] = []
        offset = self.index_nbytes if self.index_location == "start" else 0
        array = np.asarray(data)
        inner = self.inner
        regions = [(coords, array[region]) for coords, region in self._regions()]

        def encode(piece: np.ndarray) -> Buffer | None:
            return None if chunk_is_fill(piece, spec.fill_value) else inner.encode(piece)

        # the inner chunks are coded in the pool, as chunks are (inline inside the pool)
        for (coords, _), encoded in zip(regions, run([functools.partial(encode, p) for _, p in regions])):
            if encoded is None:
                continue
            table[coords] = (offset, nbytes(encoded))
            parts.append(encoded)
            offset += nbytes(encoded)
        index = self.index.encode(table)
        if nbytes(index) != self.index_nbytes:
            raise CodecError(
                f"shard index encoded to {nbytes(index)} bytes, expected {self.index_nbytes}"
            )
        if self.index_location == "start":
            parts.insert(0, index)
        else:
            parts.append(index)
        return b"".join(parts)

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> np.ndarray:
        view = byte_view(data)

        def get_range(offset: int, length: int | None) -> memoryview:
            return view[offset:] if length is None else view[offset : offset + length]

        return self.decode_partial(get_range, (slice(None),) * len(spec.shape), spec)

    def decode_partial(
        self, get_range: GetRange, selection: Sequence[Selector], spec: ChunkSpec
    ) -> np.ndarray:
        """Part of the shard whose bytes ``get_range`` reads, fetching only the index and
        the inner chunks ``selection`` touches. ``selection`` has, per axis, a slice or
        integer indices (orthogonal indexing; every axis is kept)."""
        assert self.inner is not None and self.index is not None, "evolved by the pipeline"
        if self.index_location == "start":
            index_bytes = get_range(0, self.index_nbytes)
        else:
            index_bytes = get_range(-self.index_nbytes, None)
        if nbytes(index_bytes) != self.index_nbytes:
            raise CodecError(f"shard is too short to hold its {self.index_nbytes}-byte index")
        table = self.index.decode(index_bytes)
        axes = [
            _axis_groups(_selected(s, n), c)
            for s, n, c in zip(selection, spec.shape, self.chunk_shape, strict=True)
        ]
        out = np.empty(tuple(sum(_count(g[1]) for g in axis) for axis in axes), spec.dtype)
        inner = self.inner
        tasks = []
        for groups in itertools.product(*axes):
            coords = tuple(g[0] for g in groups)
            target = _indexer([g[1] for g in groups])
            offset, length = (int(v) for v in table[coords])
            if offset == EMPTY and length == EMPTY:
                out[target] = spec.fill_value
                continue
            self._check_entry(coords, offset, length)
            encoded = get_range(offset, length)
            if nbytes(encoded) != length:
                raise CodecError(
                    f"shard index entry {coords} points to bytes {offset}..{offset + length}, "
                    "past the end of the shard"
                )
            tasks.append(functools.partial(_decode_inner, inner, coords, encoded, out, target,
                                           _indexer([g[2] for g in groups])))
        run(tasks)  # in the pool, as chunks are (inline inside the pool); disjoint targets
        return out

    def _check_entry(self, coords: tuple[int, ...], offset: int, length: int) -> None:
        """Refuse an index entry no encoder writes, before reading what it points to."""
        assert self.inner is not None, "evolved by the pipeline"
        limit = self.inner.max_encoded_size
        if length > limit or offset > _MAX_OFFSET - length:
            raise CodecError(
                f"shard index entry {coords} claims {length} bytes at offset {offset}; an "
                f"inner chunk encodes to at most {limit} bytes: the shard is corrupt"
            )


def _decode_inner(
    inner: CodecPipeline, coords: tuple[int, ...], encoded: Buffer, out: np.ndarray,
    target: tuple[slice | np.ndarray, ...], selection: tuple[slice | np.ndarray, ...],
) -> None:
    """Decode one inner chunk into its place in ``out``."""
    try:
        chunk = inner.decode(encoded)
    except CodecError as e:
        raise CodecError(f"inner chunk {coords}: {e}") from e
    out[target] = chunk[selection]


def _selected(selector: Selector, size: int) -> np.ndarray:
    """The indices ``selector`` picks on an axis of ``size`` (without building ``size``
    indices first: a shard may be declared far larger than what is read of it)."""
    if isinstance(selector, slice):
        return np.arange(*selector.indices(size))
    return np.asarray(selector, dtype=np.int64)


def _as_slice(indices: np.ndarray) -> slice | np.ndarray:
    """A slice for an ascending arithmetic sequence of indices (the usual case), so that
    copies stay basic indexing; else the indices."""
    if indices.size == 1:
        return slice(int(indices[0]), int(indices[0]) + 1)
    step = int(indices[1] - indices[0])
    if step > 0 and np.array_equal(np.diff(indices), np.full(indices.size - 1, step)):
        return slice(int(indices[0]), int(indices[-1]) + 1, step)
    return indices


def _axis_groups(
    indices: np.ndarray, size: int
) -> list[tuple[int, slice | np.ndarray, slice | np.ndarray]]:
    """Per inner chunk an axis selection touches: (chunk number, output positions, positions
    within the inner chunk)."""
    chunks = indices // size
    groups = []
    for chunk in np.unique(chunks):
        positions = np.flatnonzero(chunks == chunk)
        local = indices[positions] - chunk * size
        groups.append((int(chunk), _as_slice(positions), _as_slice(local)))
    return groups


def _count(selector: slice | np.ndarray) -> int:
    if isinstance(selector, slice):
        return len(range(selector.start, selector.stop, selector.step or 1))
    return selector.size


def _indexer(selectors: list[slice | np.ndarray]) -> tuple[slice | np.ndarray, ...]:
    """Orthogonal indexing: basic when every axis is a slice, else an open mesh."""
    if all(isinstance(s, slice) for s in selectors):
        return tuple(selectors)
    return np.ix_(*(np.arange(s.start, s.stop, s.step) if isinstance(s, slice) else s
                    for s in selectors))


def _as_list(codecs: CodecsJSON) -> list[JSONObject]:
    """A v3 pipeline's normalized ``codecs`` list."""
    assert isinstance(codecs, list), "a v3 pipeline's JSON is its codecs list"
    return codecs
