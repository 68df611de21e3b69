"""The codec base class, the name registry, and small helpers shared by every codec."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, Self, cast

import numpy as np

from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import Buffer, ChunkData, ChunkSpec
from nczarr.zarr.jsonvalue import JSON, JSONObject

Kind = Literal["array->array", "array->bytes", "bytes->bytes"]
#: Builds a codec from its registered name and its configuration mapping.
CodecFactory = Callable[[str, Mapping[str, JSON]], "Codec"]

#: Prefix of the v3 names zarr-python gives numcodecs codecs; v2 ids are the same names without it.
NUMCODECS_PREFIX = "numcodecs."

_REGISTRY: dict[str, CodecFactory] = {}


def register(name: str, factory: CodecFactory) -> None:
    """Make ``name`` (a v3 codec name) resolve to ``factory``."""
    _REGISTRY[name] = factory


def registered_names() -> list[str]:
    """Every registered v3 codec name, sorted."""
    return sorted(_REGISTRY)


def lookup(name: str) -> CodecFactory | None:
    """The factory registered under ``name``, or None."""
    return _REGISTRY.get(name)


@dataclass(frozen=True, kw_only=True)
class Codec:
    """One step of a codec chain. Instances are immutable and hold no per-call state, so one
    instance serves every thread of an Array's pool.

    ``encode``/``decode`` take the spec of the *decoded* side of this step: for an
    array->array codec the array it receives on encode, for an array->bytes codec the array
    it serialises, for a bytes->bytes codec the array the chain's array->bytes codec
    serialised (so shuffle and blosc can know the element size).
    """

    #: The v3 name this codec was built from (``numcodecs.<id>`` for every numcodecs codec,
    #: whose v2 id is the same name without the prefix).
    name: str

    KIND: ClassVar[Kind]
    #: Bytes that encoding adds when that number does not depend on the data, else None.
    #: Sharding needs it to locate an index without reading the whole shard.
    OVERHEAD: ClassVar[int | None] = None
    #: Write ``{"name": ...}`` without ``"configuration"`` when the configuration is empty
    #: (what zarr-python writes for ``bytes`` on 1-byte types and ``crc32c``).
    OMIT_EMPTY_CONFIGURATION: ClassVar[bool] = False

    @property
    def kind(self) -> Kind:
        """Which side of the chain this codec belongs to."""
        return self.KIND

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, JSON]) -> Self:
        """Build from a JSON configuration, rejecting parameters the codec does not have."""
        allowed = set(_config_fields(cls))
        unknown = sorted(set(config) - allowed)
        if unknown:
            raise CodecError(
                f"codec {name!r}: unknown configuration parameter(s) {unknown}; "
                f"expected some of {sorted(allowed)}"
            )
        try:
            parameters: dict[str, Any] = dict(config)  # each field checks its own value
            return cls(name=name, **parameters)
        except TypeError as e:  # a required parameter is missing
            raise CodecError(f"codec {name!r}: {e}") from e

    def config(self) -> JSONObject:
        """The JSON configuration (v3 ``configuration``; v2 keys besides ``id``)."""
        values = {name: getattr(self, name) for name in _config_fields(type(self))}
        return {name: value for name, value in values.items() if value is not None}

    def to_json(self, zarr_format: Literal[2, 3] = 3) -> JSONObject:
        """The codec's metadata entry in Zarr ``zarr_format``."""
        config = self.config()
        if zarr_format == 2:
            return {"id": self.name.removeprefix(NUMCODECS_PREFIX), **config}
        if not config and self.OMIT_EMPTY_CONFIGURATION:
            return {"name": self.name}
        return {"name": self.name, "configuration": config}

    def evolve(self, spec: ChunkSpec) -> Codec:
        """This codec with the parameters the JSON left to the array (element size, dtype)
        filled in from ``spec``; validates the codec against ``spec``."""
        return self

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """The spec of what ``encode`` produces from an array of ``spec`` (array->array)."""
        return spec

    def encode(self, data: ChunkData, spec: ChunkSpec) -> ChunkData:
        """Encode one chunk: ndarray -> ndarray, ndarray -> bytes-like, or bytes -> bytes."""
        raise NotImplementedError

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> ChunkData:
        """Invert ``encode``. A bytes->bytes codec produces at most ``max_size`` bytes (the
        pipeline passes the size it expects, so a decompression bomb stops there); None
        means the size ``spec`` serialises to with ``bytes``. Other kinds ignore it."""
        raise NotImplementedError

    def encoded_bound(self, nbytes: int) -> int:
        """The most bytes a bytes->bytes codec encodes ``nbytes`` into: exact for a fixed
        overhead, else generous enough for any compressor's worst case (deflate, zstd,
        blosc, lz4, bz2 and lzma add well under half; base64 adds a third)."""
        if self.OVERHEAD is not None:
            return nbytes + self.OVERHEAD
        return 2 * nbytes + 65536

    def serialized_size(self, spec: ChunkSpec) -> int | None:
        """The exact number of bytes an array->bytes codec serialises a chunk of ``spec``
        into, or None when it depends on the data."""
        return None

    def serialized_bound(self, spec: ChunkSpec) -> int:
        """The most bytes an array->bytes codec serialises a chunk of ``spec`` into."""
        return self.encoded_bound(raw_nbytes(spec))

    def bad_parameter(self, parameter: str, value: object, expected: str) -> CodecError:
        """The error for a configuration value this codec cannot use."""
        return CodecError(
            f"codec {self.name!r}: invalid {parameter} {value!r}; expected {expected}"
        )

    def check_int(self, parameter: str, value: object, low: int, high: int | None = None) -> None:
        """Raise unless ``value`` is an int (not a bool) in ``[low, high]``."""
        too_high = high is not None and isinstance(value, int) and value > high
        if isinstance(value, bool) or not isinstance(value, int) or value < low or too_high:
            bound = f"from {low} to {high}" if high is not None else f">= {low}"
            raise self.bad_parameter(parameter, value, f"an integer {bound}")


def _config_fields(cls: type[Codec]) -> list[str]:
    # Fields with repr=False hold derived helpers (e.g. a numcodecs instance), not JSON.
    return [f.name for f in dataclasses.fields(cls) if f.init and f.repr and f.name != "name"]


def byte_view(obj: ChunkData) -> memoryview:
    """A flat unsigned-byte memoryview of a contiguous buffer (bytes, ndarray, ...), no copy."""
    if isinstance(obj, np.ndarray):
        view = obj.data
    else:
        view = obj if isinstance(obj, memoryview) else memoryview(obj)
    if view.ndim == 1 and view.format == "B":
        return view
    return view.cast("B")


def as_buffer(data: ChunkData) -> Buffer:
    """What a bytes->bytes codec receives, as a buffer (an array is viewed as its bytes)."""
    return byte_view(data) if isinstance(data, np.ndarray) else data


def nbytes(data: ChunkData) -> int:
    """Size in bytes of a bytes-like object or an array."""
    return data.nbytes if isinstance(data, (memoryview, np.ndarray)) else len(data)


def raw_nbytes(spec: ChunkSpec) -> int:
    """Bytes of a chunk of ``spec`` laid out flat (Python ints: never overflows)."""
    return math.prod(spec.shape) * spec.dtype.itemsize


def output_limit(spec: ChunkSpec, max_size: int | None) -> int:
    """The most bytes a bytes->bytes codec may decode to (see ``Codec.decode``)."""
    return raw_nbytes(spec) if max_size is None else max_size


class Decompressor(Protocol):
    """What ``zlib.decompressobj()``, ``bz2.BZ2Decompressor`` and ``lzma.LZMADecompressor``
    have in common."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: Buffer, max_length: int, /) -> bytes: ...


def missing_package(name: str, package: str) -> CodecError:
    """The error for a codec whose implementation lives in a package that is not installed."""
    return CodecError(
        f"codec {name!r} needs the {package!r} package, which is not installed "
        f"(pip install {package})"
    )


def too_much_output(name: str, max_size: int) -> CodecError:
    """The error for a chunk that decodes to more than the bytes it must produce."""
    return CodecError(
        f"codec {name!r}: the data decodes to more than the {max_size} bytes expected "
        "(corrupt, or a decompression bomb); refused"
    )


def decompress_bounded(
    name: str,
    new_decompressor: Callable[[], Decompressor],
    data: Buffer,
    max_size: int,
    *,
    concatenated: bool = False,
) -> bytes:
    """Decompress ``data``, stopping after ``max_size + 1`` bytes: more than ``max_size`` is
    refused, as is a stream that ends early (truncated). With ``concatenated``, streams that
    follow the first are decoded too (bz2 and xz allow it); else what follows is ignored."""
    parts: list[bytes] = []
    left = max_size
    while True:
        decompressor = new_decompressor()
        out = decompressor.decompress(data, left + 1)  # one more shows there is more
        if len(out) > left:
            raise too_much_output(name, max_size)
        if not decompressor.eof:
            raise CodecError(f"codec {name!r}: the compressed stream is truncated or corrupt")
        parts.append(out)
        left -= len(out)
        data = decompressor.unused_data
        if not (concatenated and data):
            return parts[0] if len(parts) == 1 else b"".join(parts)


def _differs(first: Any, fill: np.ndarray, equal_nan: bool) -> bool:
    if isinstance(first, (bool, int, float)):  # numbers compare without numpy's machinery
        value = fill.item()
        return first != value and not (equal_nan and first != first and value != value)
    return not np.array_equal(first, fill, equal_nan=equal_nan)


def chunk_is_fill(chunk: np.ndarray, fill_value: object) -> bool:
    """Whether every element of ``chunk`` equals ``fill_value``, the way zarr-python decides
    not to store a chunk: NaN equals NaN, and for a fill of 0.0 the sign of zero counts.
    A fill value of None (v2 "no fill value") matches nothing."""
    if fill_value is None:
        return False
    chunk = np.asarray(chunk)
    if chunk.dtype.kind == "c":
        value = complex(cast(complex, fill_value))  # TypeError for what is no number
        return chunk_is_fill(chunk.real, value.real) and chunk_is_fill(chunk.imag, value.imag)
    try:
        fill = np.asarray(fill_value, dtype=chunk.dtype)
    except (TypeError, ValueError):
        return False
    if fill.ndim:  # e.g. a structured fill given as a list
        return False
    equal_nan = chunk.dtype.kind in "fmM"
    if chunk.size and _differs(chunk.item(0) if chunk.dtype.kind in "biuf" else chunk.flat[0], fill, equal_nan):
        return False  # the usual answer for real data, without a pass over the chunk
    if not np.array_equal(chunk, np.broadcast_to(fill, chunk.shape), equal_nan=equal_nan):
        return False
    if chunk.dtype.kind == "f" and fill == 0:
        return bool((np.signbit(chunk) == np.signbit(fill)).all())
    return True
