"""Codecs that lay an array out in bytes (``bytes``, ``vlen-utf8``, ``vlen-bytes``) or
reorder it (``transpose``)."""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import ChunkData, ChunkSpec
from nczarr.zarr.codecs.base import Codec, Kind, byte_view, nbytes, raw_nbytes, register
from nczarr.zarr.jsonvalue import JSONObject

if TYPE_CHECKING:  # numcodecs is imported when a codec needs it: commands start faster
    from numcodecs.vlen import VLenBytes, VLenUTF8

_ENDIAN_CODES: dict[str, Literal["<", ">"]] = {"little": "<", "big": ">"}
#: A chunk of variable-length strings or bytes has no fixed size. So that decoding one stays
#: bounded, its serialised form (a uint32 count, then per item a uint32 length and the
#: bytes) may hold at most this many bytes of data, plus VLEN_ITEM_BYTES per item; a larger
#: chunk is refused when written, so nczarr writes nothing it cannot read back.
VLEN_CHUNK_BYTES = 32 * 2**20
VLEN_ITEM_BYTES = 256


def _byte_order(dtype: np.dtype) -> str:
    # "|" when byte order does not apply; a structured dtype takes its first ordered field's.
    if dtype.fields is not None:
        orders = [_byte_order(dtype.fields[f][0]) for f in dtype.names or ()]
        return next((o for o in orders if o != "|"), "|")
    if dtype.subdtype is not None:
        return _byte_order(dtype.subdtype[0])
    return dtype.byteorder


def dtype_endian(dtype: np.dtype) -> Literal["little", "big"] | None:
    """The ``bytes`` codec endian that stores ``dtype`` as it is laid out in memory; None for
    types without byte order (1-byte numbers, bool, fixed bytes)."""
    order = _byte_order(dtype)
    if order == "|":
        return None
    if order == "=":
        return sys.byteorder
    return "little" if order == "<" else "big"


@dataclass(frozen=True, kw_only=True)
class BytesCodec(Codec):
    """``bytes``: the array's elements in ``spec.order`` with the given byte order. Also the
    implicit serialisation step of a v2 chain."""

    name: str = "bytes"
    endian: Literal["little", "big"] | None = None

    KIND: ClassVar[Kind] = "array->bytes"
    OVERHEAD: ClassVar[int | None] = 0
    OMIT_EMPTY_CONFIGURATION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.endian is not None and self.endian not in _ENDIAN_CODES:
            raise self.bad_parameter("endian", self.endian, '"little" or "big"')

    def evolve(self, spec: ChunkSpec) -> BytesCodec:
        if spec.dtype.hasobject:
            raise CodecError(
                f"codec {self.name!r} cannot serialise {spec.dtype} arrays; "
                "variable-length strings and bytes need vlen-utf8 or vlen-bytes"
            )
        if dtype_endian(spec.dtype) is None:
            return replace(self, endian=None)  # as zarr-python: no endian for 1-byte types
        if self.endian is None and spec.dtype.fields is not None:
            return self  # zarr-python writes structured types with no endian: as laid out
        if self.endian is None:
            raise self.bad_parameter("endian", None, f'"little" or "big" for {spec.dtype}')
        return self

    def stored_dtype(self, dtype: np.dtype) -> np.dtype:
        """The dtype of the stored elements of an array of ``dtype``."""
        return dtype if self.endian is None else dtype.newbyteorder(_ENDIAN_CODES[self.endian])

    def serialized_size(self, spec: ChunkSpec) -> int:
        return raw_nbytes(spec)

    def serialized_bound(self, spec: ChunkSpec) -> int:
        return raw_nbytes(spec)

    def encode(self, data: ChunkData, spec: ChunkSpec) -> memoryview:
        # One vectorised pass converts byte order and layout together; an array already in
        # the stored dtype and layout is not copied at all.
        layout = np.asfortranarray if spec.order == "F" else np.ascontiguousarray
        flat = layout(data, dtype=self.stored_dtype(spec.dtype)).reshape(-1, order=spec.order)
        return byte_view(flat.view(np.uint8))

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> np.ndarray:
        stored = self.stored_dtype(spec.dtype)
        expected = math.prod(spec.shape) * stored.itemsize
        got = nbytes(data)
        if got != expected:
            raise CodecError(
                f"decoded chunk has {got} bytes, expected {expected} "
                f"(shape {spec.shape} of {spec.dtype})"
            )
        array = np.frombuffer(data, dtype=stored).reshape(spec.shape, order=spec.order)
        return array if stored == spec.dtype else array.astype(spec.dtype)


@dataclass(frozen=True, kw_only=True)
class TransposeCodec(Codec):
    """``transpose``: permutes the axes; ``order[i]`` is the input axis that becomes axis i."""

    name: str = "transpose"
    order: tuple[int, ...]

    KIND: ClassVar[Kind] = "array->array"
    OVERHEAD: ClassVar[int | None] = 0

    def __post_init__(self) -> None:
        order = self.order
        if isinstance(order, str) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in order
        ):
            raise self.bad_parameter("order", order, "a list of axis numbers")
        object.__setattr__(self, "order", tuple(order))

    def config(self) -> JSONObject:
        return {"order": list(self.order)}

    def evolve(self, spec: ChunkSpec) -> TransposeCodec:
        if sorted(self.order) != list(range(len(spec.shape))):
            raise self.bad_parameter(
                "order", list(self.order), f"a permutation of 0..{len(spec.shape) - 1}"
            )
        return self

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return replace(spec, shape=tuple(spec.shape[i] for i in self.order))

    def encode(self, data: ChunkData, spec: ChunkSpec) -> np.ndarray:
        return np.asarray(data).transpose(self.order)

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> np.ndarray:
        return np.asarray(data).transpose(np.argsort(self.order))


@dataclass(frozen=True, kw_only=True)
class VLenCodec(Codec):
    """``vlen-utf8`` and ``vlen-bytes``: object arrays of str or bytes as a little-endian
    uint32 count, then per item a uint32 length and the bytes (None is stored empty)."""

    name: str

    KIND: ClassVar[Kind] = "array->bytes"
    NAMES: ClassVar[tuple[str, ...]] = ("vlen-utf8", "vlen-bytes")

    def __post_init__(self) -> None:
        if self.name not in self.NAMES:
            raise CodecError(f"no variable-length codec is called {self.name!r}")

    def evolve(self, spec: ChunkSpec) -> VLenCodec:
        if spec.dtype != np.dtype(object):
            raise CodecError(f"codec {self.name!r} needs an object array, not {spec.dtype}")
        return self

    def serialized_bound(self, spec: ChunkSpec) -> int:
        return 4 + math.prod(spec.shape) * (4 + VLEN_ITEM_BYTES) + VLEN_CHUNK_BYTES

    def encode(self, data: ChunkData, spec: ChunkSpec) -> memoryview:
        flat = np.asarray(data, dtype=object).reshape(-1, order=spec.order)
        if not flat.flags.writeable:  # numcodecs' typed memoryviews refuse read-only arrays
            flat = flat.copy()
        encoded = byte_view(_vlen_implementation(self.name).encode(flat))
        bound = self.serialized_bound(spec)
        if encoded.nbytes > bound:
            raise CodecError(
                f"codec {self.name!r}: a chunk of {flat.size} variable-length items may take "
                f"at most {bound} bytes, this one takes {encoded.nbytes}; use smaller chunks"
            )
        return encoded

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> np.ndarray:
        expected = math.prod(spec.shape)
        view = byte_view(data)
        # numcodecs allocates as many items as the header counts before reading them
        count = int.from_bytes(view[:4], "little") if view.nbytes >= 4 else None
        if count != expected:
            raise CodecError(
                f"codec {self.name!r}: decoded chunk has {count} items, expected {expected} "
                f"(shape {spec.shape})"
            )
        items: np.ndarray = _vlen_implementation(self.name).decode(data)
        return items.reshape(spec.shape, order=spec.order)


register("bytes", BytesCodec.from_config)
register("transpose", TransposeCodec.from_config)
register("vlen-utf8", VLenCodec.from_config)
register("vlen-bytes", VLenCodec.from_config)


@functools.cache
def _vlen_implementation(name: str) -> VLenUTF8 | VLenBytes:
    """numcodecs' Cython implementation of ``name``, the layout zarr-python uses; stateless."""
    from numcodecs.vlen import VLenBytes, VLenUTF8

    return VLenUTF8() if name == "vlen-utf8" else VLenBytes()
