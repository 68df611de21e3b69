"""One generic wrapper that runs any numcodecs codec not implemented in this package."""

from __future__ import annotations

import bz2
import lzma
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

import numpy as np

from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import Buffer, ChunkData, ChunkSpec
from nczarr.zarr.codecs.base import (
    NUMCODECS_PREFIX,
    Codec,
    Kind,
    as_buffer,
    byte_view,
    decompress_bounded,
    missing_package,
    output_limit,
    register,
    too_much_output,
)
from nczarr.zarr.jsonvalue import JSON, JSONObject

if TYPE_CHECKING:  # numcodecs is imported when a codec needs it: commands start faster
    from numcodecs.abc import Codec as Numcodec

#: numcodecs ids that transform an array into another array (zarr "filters").
_ARRAY_ARRAY = frozenset(
    {"astype", "bitround", "categorize", "delta", "fixedscaleoffset", "packbits", "quantize"}
)
#: numcodecs ids that serialise a typed array themselves.
_ARRAY_BYTES = frozenset({"pcodec", "zfpy"})
#: numcodecs object codecs nczarr does not read; vlen-utf8 and vlen-bytes are supported.
UNSUPPORTED_OBJECT_CODECS = frozenset({"json2", "msgpack2", "pickle", "vlen-array"})
#: The numcodecs codecs zarr-python 3.1.6 registers as ``numcodecs.<id>`` v3 codecs and this
#: module serves (zlib, gzip, zstd, blosc, shuffle and crc32c are implemented in ``compress``).
V3_IDS = (
    "adler32", "astype", "bitround", "bz2", "crc32", "delta", "fixedscaleoffset",
    "fletcher32", "jenkins_lookup3", "lz4", "lzma", "packbits", "pcodec", "quantize", "zfpy",
)
#: The package to install for each numcodecs codec that numcodecs registers only when that
#: package is there.
OPTIONAL_PACKAGES = {"pcodec": "pcodec", "zfpy": "zfpy"}
#: The parameter that takes the array's dtype when the JSON leaves it out (zarr-python's
#: ``evolve_from_array_spec``; numcodecs itself would reject the missing value).
_DTYPE_PARAMETER = {
    "astype": "decode_dtype", "delta": "dtype", "fixedscaleoffset": "dtype", "quantize": "dtype",
}
#: The parameter naming the dtype an array->array codec encodes to.
_ENCODED_DTYPE_PARAMETER = {
    "astype": "encode_dtype", "categorize": "astype", "delta": "astype",
    "fixedscaleoffset": "astype", "quantize": "astype",
}


@dataclass(frozen=True, kw_only=True)
class NumcodecsCodec(Codec):
    """A numcodecs codec named ``numcodecs.<id>`` (v2 id ``<id>``), run through numcodecs.
    Which side of the chain it belongs to follows zarr-python; an id zarr-python does not
    know is treated as bytes->bytes, as Zarr v2 treats every filter."""

    configuration: Mapping[str, JSON]
    impl: Numcodec | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, JSON]) -> NumcodecsCodec:
        codec_id = name.removeprefix(NUMCODECS_PREFIX)
        if config.get("id", codec_id) != codec_id:
            raise CodecError(f"codec {name!r}: configuration names another id {config['id']!r}")
        if codec_id in UNSUPPORTED_OBJECT_CODECS:
            raise CodecError(
                f"codec {codec_id!r} is not supported; nczarr stores variable-length data "
                "with vlen-utf8 or vlen-bytes"
            )
        return cls(name=name, configuration={k: v for k, v in config.items() if k != "id"})

    @property
    def codec_id(self) -> str:
        """The numcodecs id."""
        return self.name.removeprefix(NUMCODECS_PREFIX)

    @property
    def kind(self) -> Kind:
        if self.codec_id in _ARRAY_ARRAY:
            return "array->array"
        if self.codec_id in _ARRAY_BYTES:
            return "array->bytes"
        return "bytes->bytes"

    def config(self) -> JSONObject:
        return dict(self.configuration)

    def evolve(self, spec: ChunkSpec) -> NumcodecsCodec:
        config = dict(self.configuration)
        dtype_parameter = _DTYPE_PARAMETER.get(self.codec_id)
        if dtype_parameter is not None and config.get(dtype_parameter) is None:
            config[dtype_parameter] = spec.dtype.str
        package = OPTIONAL_PACKAGES.get(self.codec_id)
        import numcodecs
        import numcodecs.registry

        if package is not None and self.codec_id not in numcodecs.registry.codec_registry:
            raise missing_package(self.name, package)
        try:
            impl = numcodecs.get_codec({"id": self.codec_id, **config})
        except Exception as e:  # numcodecs raises ValueError, TypeError, ImportError, ...
            raise CodecError(f"codec {self.name!r}: bad configuration {config}: {e}") from e
        normalized = {k: v for k, v in impl.get_config().items() if k != "id"}
        return replace(self, configuration=normalized, impl=impl)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if self.codec_id == "packbits":
            return replace(spec, shape=(1 + math.ceil(math.prod(spec.shape) / 8),),
                           dtype=np.dtype(np.uint8))
        encoded = self.configuration.get(_ENCODED_DTYPE_PARAMETER.get(self.codec_id, ""))
        return spec if encoded is None else replace(spec, dtype=np.dtype(cast(str, encoded)))

    def encode(self, data: ChunkData, spec: ChunkSpec) -> ChunkData:
        assert self.impl is not None, "a pipeline evolves its codecs"
        if self.kind == "bytes->bytes":
            return byte_view(self.impl.encode(data))
        encoded = self.impl.encode(np.asarray(data).reshape(-1, order=spec.order))
        if self.kind == "array->bytes":
            return byte_view(encoded)
        out = self.resolve(spec)
        return _as_array(encoded, out)

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> ChunkData:
        assert self.impl is not None, "a pipeline evolves its codecs"
        if self.kind == "bytes->bytes":
            return byte_view(self._decode_bytes(as_buffer(data), output_limit(spec, max_size)))
        if self.kind == "array->array":
            data = np.asarray(data).reshape(-1, order=spec.order)
        return _as_array(self.impl.decode(data), spec)

    def _decode_bytes(self, data: Buffer, limit: int) -> Buffer:
        """Decode, bounded by ``limit`` where the format allows: bz2 and lzma stream through
        the standard library's decompressors with an output limit; lz4's size header is
        checked first. Other codecs (checksums, which only shrink, and plugins) decode
        fully; the pipeline then checks the size."""
        assert self.impl is not None, "a pipeline evolves its codecs"
        if self.codec_id == "bz2":
            return decompress_bounded(
                self.name, bz2.BZ2Decompressor, data, limit, concatenated=True
            )
        if self.codec_id == "lzma":
            form, filters = self.impl.format, self.impl.filters
            raw = form == lzma.FORMAT_RAW
            return decompress_bounded(
                self.name,
                lambda: lzma.LZMADecompressor(form, filters=filters if raw else None),
                data, limit, concatenated=not raw,
            )
        if self.codec_id == "lz4":
            # numcodecs' LZ4 starts with the decoded size (int32, little endian) and
            # allocates that much before decoding
            header = byte_view(data)[:4]
            if header.nbytes == 4 and int.from_bytes(header, "little", signed=True) > limit:
                raise too_much_output(self.name, limit)
        decoded: Buffer = self.impl.decode(data)
        return decoded


def _as_array(values: ChunkData, spec: ChunkSpec) -> np.ndarray:
    """``values`` (numcodecs returns flat arrays or buffers) as an array of ``spec``."""
    array = np.asarray(values)
    if array.dtype != spec.dtype:
        same_size = array.dtype.itemsize == spec.dtype.itemsize and not spec.dtype.hasobject
        array = array.view(spec.dtype) if same_size else array.astype(spec.dtype)
    if array.size != math.prod(spec.shape):
        raise CodecError(
            f"codec output has {array.size} elements, expected {math.prod(spec.shape)} "
            f"(shape {spec.shape})"
        )
    return array.reshape(spec.shape, order=spec.order)


for _id in V3_IDS:
    register(NUMCODECS_PREFIX + _id, NumcodecsCodec.from_config)
