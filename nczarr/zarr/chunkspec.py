"""What a codec pipeline needs to know about the chunks it encodes and decodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

Buffer = bytes | bytearray | memoryview
#: Reads ``length`` bytes at ``offset`` of a stored object (nczarr's store ``ByteRange``: a
#: negative offset with length None reads that many bytes from the end).
GetRange = Callable[[int, int | None], Buffer]
#: One axis of a partial read: a slice or integer indices.
Selector = slice | Sequence[int] | np.ndarray


@dataclass(frozen=True)
class ChunkSpec:
    """The decoded form of every chunk of one array. Edge chunks are stored full size
    (padded with the fill value), so one spec serves every chunk of an array."""

    shape: tuple[int, ...]
    #: In-memory numpy dtype: native byte order for v3; as declared for v2 (e.g. ``>i4``);
    #: object for variable-length strings and bytes.
    dtype: np.dtype
    fill_value: Any
    #: Memory order of the serialised chunk (v2 ``order``); v3 expresses F with ``transpose``.
    order: Literal["C", "F"] = "C"


class CodecPipeline(Protocol):
    """Turns one decoded chunk into stored bytes and back. Thread-safe: an Array calls it
    from a thread pool, so it must not keep per-call state on the instance."""

    spec: ChunkSpec
    #: The most bytes one chunk encodes to: a stored value larger than this is corrupt.
    max_encoded_size: int
    #: Whether ``decode_partial`` works (a chain of just ``sharding_indexed``).
    partial_decodable: bool
    #: With ``partial_decodable``, the memory a partial read takes besides its result.
    partial_nbytes: int | None

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
    def is_raw(self) -> bool:
        """True when the stored bytes are exactly ``chunk.tobytes()`` in native order and
        ``spec.order``, so a reader may copy them straight into place."""
        ...
