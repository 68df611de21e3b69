"""Zarr codecs: codec classes found by name, and the pipelines an Array encodes and decodes
chunks with.

``pipeline_from_v3(codecs, spec)`` and ``pipeline_from_v2(filters, compressor, spec)`` build a
thread-safe ``Pipeline``; ``Pipeline.to_json()`` gives back the normalized metadata.

Empty chunks and shards: encoding never returns None. Before encoding, the Array calls
``chunk_is_fill(chunk, spec.fill_value)`` and does not store a chunk (or shard) for which it
is true, as zarr-python does; inside a shard, ``sharding_indexed`` leaves out inner chunks
that are entirely the fill value.
"""

from __future__ import annotations

from nczarr.zarr.codecs.base import Codec, Kind, chunk_is_fill
from nczarr.zarr.codecs.compress import (
    BloscCodec,
    Crc32cCodec,
    GzipCodec,
    NumcodecsCrc32cCodec,
    ShuffleCodec,
    ZlibCodec,
    ZstdCodec,
)
from nczarr.zarr.codecs.numcodecs_ import NumcodecsCodec
from nczarr.zarr.codecs.pipeline import Pipeline, known_codecs, pipeline_from_v2, pipeline_from_v3
from nczarr.zarr.codecs.serialize import BytesCodec, TransposeCodec, VLenCodec
from nczarr.zarr.codecs.sharding import ShardingCodec

__all__ = [
    "BloscCodec",
    "BytesCodec",
    "Codec",
    "Crc32cCodec",
    "GzipCodec",
    "Kind",
    "NumcodecsCodec",
    "NumcodecsCrc32cCodec",
    "Pipeline",
    "ShardingCodec",
    "ShuffleCodec",
    "TransposeCodec",
    "VLenCodec",
    "ZlibCodec",
    "ZstdCodec",
    "chunk_is_fill",
    "known_codecs",
    "pipeline_from_v2",
    "pipeline_from_v3",
]
