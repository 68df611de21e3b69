"""What a codec pipeline needs to know about the chunks it encodes and decodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

import numpy as np

from nczarr.zarr.jsonvalue import JSONObject

Buffer = bytes | bytearray | memoryview
#: What a codec takes and gives: an array on the array side of the chain, bytes after the
#: array->bytes codec.
ChunkData: TypeAlias = "np.ndarray | Buffer"
#: Reads ``length`` bytes at ``offset`` of a stored object (nczarr's store ``ByteRange``: a
#: negative offset with length None reads that many bytes from the end).
GetRange = Callable[[int, int | None], Buffer]
#: One axis of a partial read: a slice or integer indices.
Selector = slice | Sequence[int] | np.ndarray
#: A fill value as an array holds it: a numpy scalar, ``str`` or ``bytes`` (variable-length
#: strings and bytes), or None (Zarr v2: no fill value).
FillValue: TypeAlias = "np.generic | int | float | complex | str | bytes | None"
#: A pipeline's normalized codec metadata: v3, the ``codecs`` list; v2, ``(filters,
#: compressor)`` with None for no filters / no compressor.
CodecsJSON: TypeAlias = "list[JSONObject] | tuple[list[JSONObject] | None, JSONObject | None]"


@dataclass(frozen=True)
class ChunkSpec:
    """The decoded form of every chunk of one array. Edge chunks are stored full size
    (padded with the fill value), so one spec serves every chunk of an array."""

    shape: tuple[int, ...]
    #: In-memory numpy dtype: native byte order for v3; as declared for v2 (e.g. ``>i4``);
    #: object for variable-length strings and bytes.
    dtype: np.dtype
    fill_value: FillValue
    #: Memory order of the serialised chunk (v2 ``order``); v3 expresses F with ``transpose``.
    order: Literal["C", "F"] = "C"


class CodecPipeline(Protocol):
    """Turns one decoded chunk into stored bytes and back. Thread-safe: an Array calls it
    from a thread pool, so it must not keep per-call state on the instance."""

    @property
    def spec(self) -> ChunkSpec:
        """The decoded form of every chunk."""
        ...

    @property
    def max_encoded_size(self) -> int:
        """The most bytes one chunk encodes to: a stored value larger than this is corrupt."""
        ...

    @property
    def encoded_size(self) -> int | None:
        """The exact number of bytes every chunk encodes to, or None when it depends on the
        data."""
        ...

    @property
    def partial_decodable(self) -> bool:
        """Whether ``decode_partial`` works (a chain of just ``sharding_indexed``)."""
        ...

    @property
    def partial_nbytes(self) -> int | None:
        """With ``partial_decodable``, the memory a partial read takes besides its result."""
        ...

    def to_json(self) -> CodecsJSON:
        """The normalized codec metadata (a copy)."""
        ...

    def encode(self, chunk: np.ndarray) -> Buffer:
        """Encode an array of ``spec.shape`` and ``spec.dtype``."""
        ...

    def decode(self, data: Buffer) -> np.ndarray:
        """Decode stored bytes into an array of ``spec.shape`` and ``spec.dtype`` (possibly a
        read-only view of ``data``). Raises CodecError when the size does not match."""
        ...

    def decode_partial(self, get_range: GetRange, selection: Sequence[Selector]) -> np.ndarray:
        """Part of a stored chunk, reading only what ``selection`` needs by byte range."""
        ...

    @property
    def ranges_decodable(self) -> bool:
        """Whether ``decode_ranges`` can decode part of a chunk (``bytes`` then ``blosc``)."""
        ...

    def decode_ranges(self, data: Buffer, ranges: Sequence[tuple[int, int]]) -> Buffer | None:
        """The bytes of ``ranges`` ((offset, length) of the serialised chunk) one after the
        other, decoding only what they need; None when this chunk must be decoded whole."""
        ...

    @property
    def decodes_into(self) -> bool:
        """True when ``decode_into`` can decode a whole chunk straight into a buffer."""
        ...

    def decode_into(self, data: Buffer, out: np.ndarray) -> bool:
        """Decode a whole chunk straight into ``out`` (writable, contiguous uint8 of the
        chunk's size, in its order); False when it must be decoded by ``decode``."""
        ...

    @property
    def is_raw(self) -> bool:
        """True when the stored bytes are exactly ``chunk.tobytes()`` in native order and
        ``spec.order``, so a reader may copy them straight into place."""
        ...
