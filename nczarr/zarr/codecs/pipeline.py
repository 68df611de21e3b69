"""Codec chains built from Zarr v3 ``codecs`` or Zarr v2 ``filters`` + ``compressor``."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import Buffer, ChunkData, ChunkSpec, CodecsJSON, GetRange, Selector
from nczarr.zarr.codecs.base import (
    NUMCODECS_PREFIX,
    Codec,
    as_buffer,
    lookup,
    nbytes,
    raw_nbytes,
    register,
    registered_names,
)
from nczarr.zarr.codecs.compress import BloscCodec, ShuffleCodec
from nczarr.zarr.codecs.numcodecs_ import UNSUPPORTED_OBJECT_CODECS, NumcodecsCodec
from nczarr.zarr.codecs.serialize import BytesCodec, VLenCodec, dtype_endian
from nczarr.zarr.codecs.sharding import ShardingCodec
from nczarr.zarr.jsonvalue import JSON

_VLEN_NAMES = ("vlen-utf8", "vlen-bytes")


@dataclass(frozen=True)
class Pipeline:
    """A validated codec chain for the chunks of one array (implements ``CodecPipeline``).
    Immutable: ``encode`` and ``decode`` may run concurrently from any number of threads."""

    spec: ChunkSpec
    #: The chain in encoding order, each codec evolved for the array (v2: the implicit
    #: serialisation step included, as a ``BytesCodec``).
    codecs: tuple[Codec, ...]
    #: The spec of the decoded side of each codec (see ``Codec``).
    specs: tuple[ChunkSpec, ...] = field(repr=False)
    zarr_format: Literal[2, 3]
    #: The normalized metadata the chain was built from; read it with ``to_json()``.
    json: CodecsJSON = field(repr=False, compare=False)
    is_raw: bool = field(init=False)
    #: True when the chain is a bare ``sharding_indexed`` codec, so ``decode_partial`` works.
    partial_decodable: bool = field(init=False)
    #: With ``partial_decodable``, the memory a partial read takes besides its result: the
    #: shard index and one decoded inner chunk (None otherwise).
    partial_nbytes: int | None = field(init=False, repr=False)
    #: Per codec (None except for bytes->bytes codecs): the most bytes its decoding may
    #: produce, and the exact number when every step before it has a fixed size.
    max_sizes: tuple[int | None, ...] = field(init=False, repr=False)
    sizes: tuple[int | None, ...] = field(init=False, repr=False)
    #: True when the chain is ``bytes`` (native order, fixed size) then ``blosc``: its frames
    #: decode block by block, so a read of part of a chunk decodes only the blocks it
    #: touches (``decode_ranges``).
    ranges_decodable: bool = field(init=False)
    #: True when ``decode_into`` decodes a whole chunk straight into its place in a result:
    #: ``bytes`` (native order, fixed size) then ``blosc``, or then a byte shuffle.
    decodes_into: bool = field(init=False)
    #: The most bytes a chunk encodes to (a stored chunk or shard inner chunk larger than
    #: this is corrupt).
    max_encoded_size: int = field(init=False, repr=False)
    #: The exact number of bytes every chunk encodes to, None when it depends on the data.
    encoded_size: int | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._set_decode_limits()

        codec = self.codecs[0]
        partial = len(self.codecs) == 1 and isinstance(codec, ShardingCodec)
        object.__setattr__(self, "partial_decodable", partial)
        partial_nbytes = None
        if partial and isinstance(codec, ShardingCodec) and codec.inner is not None:
            partial_nbytes = codec.index_nbytes + raw_nbytes(codec.inner.spec)
        object.__setattr__(self, "partial_nbytes", partial_nbytes)
        dtype = self.spec.dtype
        raw = len(self.codecs) == 1 and _native_bytes(codec, dtype)
        object.__setattr__(self, "is_raw", raw)
        blosc = len(self.codecs) == 2 and isinstance(self.codecs[1], BloscCodec) and _native_bytes(codec, dtype)
        object.__setattr__(self, "ranges_decodable", blosc)
        shuffle = len(self.codecs) >= 2 and isinstance(self.codecs[1], ShuffleCodec) and _native_bytes(codec, dtype)
        object.__setattr__(self, "decodes_into", blosc or shuffle)

    def _set_decode_limits(self) -> None:
        """Follow the chunk's size through the chain in encoding order: the array->bytes
        codec fixes it (or bounds it, for variable-length data), and each bytes->bytes
        codec adds a fixed overhead or, for a compressor, up to a generous bound."""
        max_sizes: list[int | None] = []
        sizes: list[int | None] = []
        size: int | None = None
        bound = 0
        for codec, spec in zip(self.codecs, self.specs, strict=True):
            if codec.kind != "bytes->bytes":
                max_sizes.append(None)
                sizes.append(None)
                if codec.kind == "array->bytes":
                    size, bound = codec.serialized_size(spec), codec.serialized_bound(spec)
                continue
            max_sizes.append(bound)
            sizes.append(size)
            size = None if size is None or codec.OVERHEAD is None else size + codec.OVERHEAD
            bound = codec.encoded_bound(bound)
        object.__setattr__(self, "max_sizes", tuple(max_sizes))
        object.__setattr__(self, "sizes", tuple(sizes))
        object.__setattr__(self, "max_encoded_size", bound)
        object.__setattr__(self, "encoded_size", size)

    def to_json(self) -> CodecsJSON:
        """The normalized metadata: v3, the ``codecs`` list; v2, ``(filters, compressor)``
        with None for no filters / no compressor. Parameters the input left to the array
        (shuffle element size, blosc typesize, ...) are filled in, as zarr-python does."""
        return copy.deepcopy(self.json)

    def encode(self, chunk: np.ndarray) -> Buffer:
        """Encode an array of ``spec.shape`` (converted to ``spec.dtype`` when it differs)."""
        array = np.asarray(chunk)
        if array.shape != self.spec.shape:
            raise CodecError(f"chunk has shape {array.shape}, expected {self.spec.shape}")
        if array.dtype != self.spec.dtype:
            array = array.astype(self.spec.dtype)
        data: ChunkData = array  # then bytes, after the array->bytes codec
        codec = self.codecs[0]
        try:
            for codec, spec in zip(self.codecs, self.specs, strict=True):
                data = codec.encode(data, spec)
        except CodecError:
            raise
        except Exception as e:  # numpy and numcodecs raise anything
            raise CodecError(f"codec {codec.name!r}: encoding failed: {e}") from e
        return as_buffer(data)

    def decode(self, data: Buffer) -> np.ndarray:
        """Decode stored bytes into an array of ``spec.shape`` and ``spec.dtype``, possibly a
        read-only view of ``data``. Each bytes->bytes step decodes with an output limit and
        must produce the size the next step needs: more or less is a CodecError."""
        return np.asarray(self._decode_steps(data, 0))  # the array->bytes codec made it an array

    def _decode_steps(self, data: Buffer, first: int) -> ChunkData:
        """``data`` decoded by the codecs from the last down to ``first``."""
        value: ChunkData = data
        codec = self.codecs[-1]
        steps = zip(self.codecs, self.specs, self.max_sizes, self.sizes, strict=True)
        try:
            for codec, spec, max_size, size in reversed(list(steps)[first:]):
                if max_size is None:
                    value = codec.decode(value, spec)
                    continue
                value = codec.decode(value, spec, max_size)
                got = nbytes(value)
                if got > max_size or (size is not None and got != size):
                    expected = f"at most {max_size}" if size is None else str(size)
                    raise CodecError(
                        f"codec {codec.name!r}: decoded to {got} bytes, expected {expected}"
                    )
        except CodecError:
            raise
        except Exception as e:
            raise CodecError(f"codec {codec.name!r}: decoding failed: {e}") from e
        return value

    def decode_ranges(self, data: Buffer, ranges: Sequence[tuple[int, int]]) -> Buffer | None:
        """The bytes of ``ranges`` ((offset, length) of the serialised chunk) one after the
        other, decoding only the blosc blocks they touch; needs ``ranges_decodable``. None
        when the frame is one the blosc library must decode whole."""
        codec = self.codecs[-1]
        if not self.ranges_decodable or not isinstance(codec, BloscCodec):
            raise CodecError("decoding ranges needs a chain of bytes and blosc")
        return codec.decode_ranges(data, ranges, raw_nbytes(self.spec))

    def decode_into(self, data: Buffer, out: np.ndarray) -> bool:
        """Decode a whole chunk straight into ``out`` (writable, contiguous uint8 of the
        chunk's size, in its order); needs ``decodes_into``. False when the frame is one the
        blosc library must decode (then ``decode``)."""
        if not self.decodes_into:
            raise CodecError("decoding into a buffer needs a chain of bytes, then blosc or a shuffle")
        codec = self.codecs[-1]
        if isinstance(codec, BloscCodec) and self.ranges_decodable:
            return codec.decode_into(data, out, raw_nbytes(self.spec))
        shuffle = self.codecs[1]
        assert isinstance(shuffle, ShuffleCodec)
        # the steps check each size (the chunk's, as bytes has a fixed size); so does the shuffle
        shuffle.decode_into(as_buffer(self._decode_steps(data, 2)), out)
        return True

    def decode_partial(self, get_range: GetRange, selection: Sequence[Selector]) -> np.ndarray:
        """Part of a stored shard, reading only its index and the inner chunks ``selection``
        touches through ``get_range(offset, length)``; needs ``partial_decodable``.
        ``selection`` has, per axis, a slice or integer indices (orthogonal indexing; every
        axis is kept, so the result has ``spec``'s number of dimensions)."""
        codec = self.codecs[0]
        if not self.partial_decodable or not isinstance(codec, ShardingCodec):
            raise CodecError("partial decoding needs a chain of just sharding_indexed")
        return codec.decode_partial(get_range, selection, self.spec)


def _native_bytes(codec: Codec, dtype: np.dtype) -> bool:
    """Whether ``codec`` lays out the elements as they are in memory (``bytes``, native
    byte order, fixed size)."""
    return (
        isinstance(codec, BytesCodec)
        and codec.stored_dtype(dtype) == dtype
        and dtype.isnative
        and not dtype.hasobject
    )


def known_codecs(zarr_format: Literal[2, 3] = 3) -> list[str]:
    """The codec names ``pipeline_from_v3`` (v3) or ids ``pipeline_from_v2`` (v2) accept."""
    if zarr_format == 3:
        return registered_names()
    import numcodecs.registry

    ids = set(numcodecs.registry.codec_registry) - UNSUPPORTED_OBJECT_CODECS
    return sorted(ids | set(_VLEN_NAMES))


def pipeline_from_v3(codecs: object, spec: ChunkSpec) -> Pipeline:
    """The pipeline of a Zarr v3 ``codecs`` list for chunks of ``spec`` (native dtype, C
    order: v3 expresses other orders with ``transpose``)."""
    if spec.order != "C":
        raise CodecError("a Zarr v3 chunk spec has C order; F order is a transpose codec")
    if isinstance(codecs, Mapping | str) or not isinstance(codecs, Sequence):
        raise CodecError(f"codecs must be a list of codec objects, not {codecs!r}")
    parsed = [_parse_v3(entry) for entry in codecs]
    chain, specs = _assemble(parsed, spec, implicit_bytes=False)
    return Pipeline(spec, chain, specs, 3, [c.to_json(3) for c in chain])


def pipeline_from_v2(
    filters: Sequence[JSON] | None,
    compressor: JSON,
    spec: ChunkSpec,
) -> Pipeline:
    """The pipeline of Zarr v2 ``filters`` and ``compressor``: the chunk is laid out in
    ``spec.order`` with ``spec.dtype``'s byte order, then filtered, then compressed."""
    filter_codecs = [_parse_v2(entry) for entry in filters or ()]
    has_vlen = any(isinstance(c, VLenCodec) for c in filter_codecs)
    if spec.dtype.hasobject and not has_vlen:
        raise CodecError(
            f"an array of {spec.dtype} needs an object codec among its filters "
            f"({' or '.join(_VLEN_NAMES)})"
        )
    parsed = filter_codecs + ([_parse_v2(compressor)] if compressor is not None else [])
    chain, specs = _assemble(parsed, spec, implicit_bytes=True)
    entries = [c.to_json(2) for c in chain if not _is_implicit(c)]
    json: CodecsJSON
    if compressor is None:
        json = (entries or None, None)
    else:
        json = (entries[:-1] or None, entries[-1])
    return Pipeline(spec, chain, specs, 2, json)


def _parse_v3(entry: JSON) -> Codec:
    name = entry.get("name") if isinstance(entry, Mapping) else None
    if not isinstance(entry, Mapping) or not isinstance(name, str):
        raise CodecError(f"a v3 codec is an object with a string 'name', not {entry!r}")
    config = entry.get("configuration") or {}
    if not isinstance(config, Mapping):
        raise CodecError(f"codec {name!r}: configuration must be an object, not {config!r}")
    factory = lookup(name)
    if factory is None:
        raise CodecError(f"unknown codec {name!r}; known v3 codecs: {', '.join(known_codecs(3))}")
    return factory(name, config)


def _parse_v2(entry: JSON) -> Codec:
    codec_id = entry.get("id") if isinstance(entry, Mapping) else None
    if not isinstance(entry, Mapping) or not isinstance(codec_id, str):
        raise CodecError(f"a v2 codec is an object with a string 'id', not {entry!r}")
    config = {k: v for k, v in entry.items() if k != "id"}
    name = codec_id if codec_id in _VLEN_NAMES else NUMCODECS_PREFIX + codec_id
    factory = lookup(name)
    if factory is not None:
        return factory(name, config)
    import numcodecs.registry

    if codec_id in numcodecs.registry.codec_registry:
        return NumcodecsCodec.from_config(name, config)
    raise CodecError(f"unknown codec {codec_id!r}; known v2 codecs: {', '.join(known_codecs(2))}")


# The v2 implicit serialisation step is the only BytesCodec in a v2 chain (no v2 id maps to
# the v3 "bytes" codec), so it is recognised by its name.
def _is_implicit(codec: Codec) -> bool:
    return isinstance(codec, BytesCodec) and codec.name == "bytes"


def _assemble(
    parsed: list[Codec], spec: ChunkSpec, *, implicit_bytes: bool
) -> tuple[tuple[Codec, ...], tuple[ChunkSpec, ...]]:
    """Validate the order array->array*, array->bytes, bytes->bytes*; evolve each codec for
    the spec it receives; with ``implicit_bytes`` (v2) add the serialisation step a chain
    without an array->bytes codec needs."""
    chain: list[Codec] = []
    specs: list[ChunkSpec] = []
    current = spec
    serializer: Codec | None = None
    for codec in [*parsed, None]:
        kind = codec.kind if codec is not None else "end"
        if serializer is None and kind in ("bytes->bytes", "end") and implicit_bytes:
            # v2 stores the declared dtype as it is; a record's fields keep their own orders.
            endian = None if current.dtype.fields is not None else dtype_endian(current.dtype)
            serializer = BytesCodec(endian=endian).evolve(current)
            chain.append(serializer)
            specs.append(current)
        if codec is None:
            break
        if kind == "array->array" and serializer is not None:
            raise CodecError(
                f"codec {codec.name!r} (array->array) must come before the array->bytes "
                f"codec {serializer.name!r}"
            )
        if kind == "bytes->bytes" and serializer is None:
            raise CodecError(
                f"codec {codec.name!r} (bytes->bytes) must come after an array->bytes codec"
            )
        if kind == "array->bytes" and serializer is not None:
            raise CodecError(
                f"only one array->bytes codec is allowed, got {serializer.name!r} "
                f"and {codec.name!r}"
            )
        evolved = codec.evolve(current)
        chain.append(evolved)
        specs.append(current)
        if kind == "array->array":
            current = evolved.resolve(current)
        elif kind == "array->bytes":
            serializer = evolved
    if serializer is None:
        raise CodecError(
            "the codec chain needs exactly one array->bytes codec "
            "(bytes, vlen-utf8, vlen-bytes or sharding_indexed), got none"
        )
    return tuple(chain), tuple(specs)


def _sharding_codec(name: str, config: Mapping[str, JSON]) -> ShardingCodec:
    """``sharding_indexed`` with this module's chain builder for its inner chunks and index."""
    return replace(ShardingCodec.from_config(name, config), build_chain=pipeline_from_v3)


register("sharding_indexed", _sharding_codec)
