"""What a codec pipeline needs to know about the chunks it encodes and decodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np


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

    def encode(self, chunk: np.ndarray) -> bytes | bytearray | memoryview:
        """Encode an array of ``spec.shape`` and ``spec.dtype``."""
        ...

    def decode(self, data: bytes | bytearray | memoryview) -> np.ndarray:
        """Decode stored bytes into an array of ``spec.shape`` and ``spec.dtype`` (possibly a
        read-only view of ``data``). Raises CodecError when the size does not match."""
        ...

    @property
    def is_raw(self) -> bool:
        """True when the stored bytes are exactly ``chunk.tobytes()`` in native order and
        ``spec.order``, so a reader may copy them straight into place."""
        ...
