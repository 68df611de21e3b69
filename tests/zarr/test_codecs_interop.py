"""Chunks written by zarr-python decode with our pipelines, and chunks we encode read back in
zarr-python: for each codec chain, in Zarr v3 and v2, over a grid with edge chunks."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
import zarr.codecs as zc
import zarr.codecs.numcodecs as znc
from zarr.dtype import VariableLengthBytes
from zarr.errors import ZarrUserWarning
from zarr.storage import LocalStore

from nczarr.zarr.chunkspec import ChunkSpec
from nczarr.zarr.codecs import Pipeline, pipeline_from_v2, pipeline_from_v3

pytestmark = [
    pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
    pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning"),
]

SHAPE = (10, 12)
CHUNKS = (4, 6)


@dataclass
class Case:
    dtype: Any
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: The chain loses precision: compare with round trips, not with the data.
    lossy: bool = False
    #: The chunk grid of the stored objects (shards when sharded).
    chunks: tuple[int, ...] = CHUNKS
    fill: Any = 0
    #: zarr-python's ``chunks`` argument when it differs (inner chunks with ``shards``).
    create_chunks: tuple[int, ...] | None = None


def values(dtype: Any, seed: int) -> np.ndarray:
    """Data of ``SHAPE`` for ``dtype``; ``seed`` makes the two directions differ."""
    n = int(np.prod(SHAPE))
    if dtype is str:
        return np.array([f"s{i * seed}" * (i % 3) for i in range(n)], dtype=object).reshape(SHAPE)
    if isinstance(dtype, VariableLengthBytes):
        return np.array([bytes([i % 256]) * (i % 4) for i in range(n)],
                        dtype=object).reshape(SHAPE)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (np.arange(n).reshape(SHAPE) * 0.37 * seed - 11).astype(dt)
    return (np.arange(n).reshape(SHAPE) * seed % 200 + 1).astype(dt)


def chunk_regions(chunks: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
    grid = [-(-s // c) for s, c in zip(SHAPE, chunks, strict=True)]
    return [
        (idx, tuple(slice(i * c, min((i + 1) * c, s))
                    for i, c, s in zip(idx, chunks, SHAPE, strict=True)))
        for idx in np.ndindex(*grid)
    ]


def padded(data: np.ndarray, region: tuple[slice, ...], chunks: tuple[int, ...],
           fill: Any) -> np.ndarray:
    """The chunk at ``region``, full size, padded with ``fill`` as zarr stores edge chunks."""
    chunk = np.full(chunks, fill, dtype=data.dtype)
    chunk[tuple(slice(0, r.stop - r.start) for r in region)] = data[region]
    return chunk


def as_list(array: Any) -> list[Any]:
    return np.asarray(array, dtype=object).tolist()


def check_both_directions(root: Path, pipeline: Pipeline, case: Case, key: Any) -> None:
    """zarr-python's chunk files decode to what zarr-python reads; our chunks written to the
    same files read in zarr-python as the data we encoded."""
    written = zarr.open_array(LocalStore(root), mode="r")[...]
    chunks = pipeline.spec.shape
    regions = chunk_regions(chunks)
    for idx, region in regions:
        decoded = pipeline.decode((root / key(idx)).read_bytes())
        assert decoded.shape == chunks
        inside = tuple(slice(0, r.stop - r.start) for r in region)
        assert as_list(decoded[inside]) == as_list(written[region])

    ours = values(case.dtype, seed=3)
    expected = np.empty(SHAPE, dtype=ours.dtype)
    for idx, region in regions:
        encoded = pipeline.encode(padded(ours, region, chunks, case.fill))
        (root / key(idx)).write_bytes(bytes(encoded))
        inside = tuple(slice(0, r.stop - r.start) for r in region)
        expected[region] = pipeline.decode(bytes(encoded))[inside]
    if not case.lossy:
        assert as_list(expected) == as_list(ours)
    assert as_list(zarr.open_array(LocalStore(root), mode="r")[...]) == as_list(expected)


BYTES_LE = zc.BytesCodec(endian="little")

with warnings.catch_warnings():  # zarr-python warns that numcodecs codecs are not in the spec
    warnings.simplefilter("ignore", ZarrUserWarning)
    V3_CASES = {
        "bytes-little": Case("f4", {"serializer": BYTES_LE, "compressors": None}),
        "bytes-big": Case("i8", {"serializer": zc.BytesCodec(endian="big"), "compressors": None}),
        "bytes-uint8": Case("u1", {"compressors": None}),
        "transpose": Case(
            "u2", {"filters": [zc.TransposeCodec(order=(1, 0))], "compressors": None}),
        "gzip": Case("f8", {"compressors": [zc.GzipCodec(level=1)]}),
        "zstd": Case("i4", {"compressors": [zc.ZstdCodec(level=3, checksum=True)]}),
        "blosc-shuffle": Case(
            "f4", {"compressors": [zc.BloscCodec(cname="lz4", shuffle="shuffle")]}),
        "blosc-auto": Case("u1", {"compressors": [zc.BloscCodec(cname="zstd", clevel=3)]}),
        "crc32c": Case("f4", {"serializer": zc.BytesCodec(endian="big"),
                              "compressors": [zc.Crc32cCodec()]}),
        "sharding-gzip": Case("f4", {"shards": (8, 6), "compressors": [zc.GzipCodec(level=1)]},
                              chunks=(8, 6), create_chunks=(4, 3)),
        "sharding-start": Case(
            "i2",
            {"serializer": zc.ShardingCodec(chunk_shape=(2, 3), index_location="start",
                                            codecs=[BYTES_LE, zc.ZstdCodec(level=1)]),
             "compressors": None},
            chunks=(8, 6),
        ),
        "vlen-utf8": Case(str, fill=""),
        "vlen-bytes": Case(VariableLengthBytes(), fill=b""),
        "numcodecs-shuffle-gzip": Case(
            "f4", {"compressors": [znc.Shuffle(elementsize=4), zc.GzipCodec(level=1)]}),
        "numcodecs-delta-zlib": Case(
            "i4", {"filters": [znc.Delta(dtype="<i4")], "compressors": [znc.Zlib(level=1)]}),
        "numcodecs-lz4-bz2-fletcher32": Case(
            "f8", {"compressors": [znc.LZ4(), znc.BZ2(level=1), znc.Fletcher32()]}),
        "numcodecs-crc32c-adler32-lzma": Case(
            "i2", {"compressors": [znc.LZMA(), znc.CRC32C(), znc.Adler32()]}),
        "numcodecs-blosc-zstd-gzip": Case(
            "u4", {"compressors": [znc.Blosc(cname="lz4", shuffle=1), znc.Zstd(level=1),
                                   znc.GZip(level=1)]}),
        "numcodecs-quantize-bitround": Case(
            "f8", {"filters": [znc.Quantize(digits=2), znc.BitRound(keepbits=8)]}, lossy=True),
        "numcodecs-fixedscaleoffset": Case(
            "f8", {"filters": [znc.FixedScaleOffset(offset=0, scale=10, astype="<i4")]},
            lossy=True),
        "numcodecs-astype": Case("f8", {"filters": [znc.AsType(encode_dtype="<f4")]}, lossy=True),
    }


@pytest.mark.parametrize("name", list(V3_CASES))
def test_v3_interop(name: str, tmp_path: Path) -> None:
    case = V3_CASES[name]
    root = tmp_path / "array"
    array = zarr.create_array(LocalStore(root), shape=SHAPE,
                              chunks=case.create_chunks or case.chunks, dtype=case.dtype,
                              fill_value=case.fill, **case.kwargs)
    array[...] = values(case.dtype, seed=1)
    metadata = json.loads((root / "zarr.json").read_text())
    chunk_shape = tuple(metadata["chunk_grid"]["configuration"]["chunk_shape"])
    assert chunk_shape == case.chunks
    dtype = values(case.dtype, 1).dtype.newbyteorder("=")
    pipeline = pipeline_from_v3(metadata["codecs"], ChunkSpec(chunk_shape, dtype, case.fill))
    check_both_directions(root, pipeline, case, lambda idx: Path("c", *map(str, idx)))


V2_CASES = {
    "raw-big-endian-F": Case(">i4", {"compressors": None, "order": "F"}),
    "zlib": Case("f4", {"compressors": numcodecs.Zlib(level=1)}),
    "zlib-F": Case("f8", {"compressors": numcodecs.Zlib(level=1), "order": "F"}),
    "gzip": Case("f8", {"compressors": numcodecs.GZip(level=1)}),
    "zstd": Case("i4", {"compressors": numcodecs.Zstd(level=1)}),
    "blosc": Case("f4", {"compressors": numcodecs.Blosc(cname="lz4", shuffle=1)}),
    "blosc-autoshuffle": Case("u1", {"compressors": numcodecs.Blosc(cname="zstd", shuffle=-1)}),
    "lz4": Case("i8", {"compressors": numcodecs.LZ4()}),
    "bz2": Case("u2", {"compressors": numcodecs.BZ2(level=1)}),
    "shuffle-zlib": Case("f4", {"filters": [numcodecs.Shuffle(elementsize=4)],
                                "compressors": numcodecs.Zlib(level=1)}),
    "fletcher32": Case(">f8", {"filters": [numcodecs.Fletcher32()], "compressors": None}),
    "delta-F": Case("i4", {"filters": [numcodecs.Delta(dtype="<i4")],
                           "compressors": numcodecs.Zlib(level=1), "order": "F"}),
    "quantize": Case("f8", {"filters": [numcodecs.Quantize(digits=2, dtype="<f8")]},
                     lossy=True),
    "bitround": Case("f4", {"filters": [numcodecs.BitRound(keepbits=6)]}, lossy=True),
    "vlen-utf8": Case(str, {"compressors": numcodecs.Zstd(level=1)}, fill=""),
}


@pytest.mark.parametrize("name", list(V2_CASES))
def test_v2_interop(name: str, tmp_path: Path) -> None:
    case = V2_CASES[name]
    root = tmp_path / "array"
    array = zarr.create_array(LocalStore(root), shape=SHAPE, chunks=case.chunks,
                              dtype=case.dtype, fill_value=case.fill, zarr_format=2,
                              **case.kwargs)
    array[...] = values(case.dtype, seed=1)
    metadata = json.loads((root / ".zarray").read_text())
    spec = ChunkSpec(tuple(metadata["chunks"]), np.dtype(metadata["dtype"]), case.fill,
                     metadata["order"])
    pipeline = pipeline_from_v2(metadata["filters"], metadata["compressor"], spec)
    if metadata["compressor"] is not None:
        assert pipeline.to_json()[1]["id"] == metadata["compressor"]["id"]
    check_both_directions(root, pipeline, case, lambda idx: ".".join(map(str, idx)))


def test_partial_decode_of_a_zarr_python_shard(tmp_path: Path) -> None:
    root = tmp_path / "array"
    array = zarr.create_array(LocalStore(root), shape=SHAPE, chunks=(2, 3), shards=(8, 6),
                              dtype="f4", fill_value=0, compressors=[zc.GzipCodec(level=1)])
    data = values("f4", seed=1)
    array[...] = data
    metadata = json.loads((root / "zarr.json").read_text())
    pipeline = pipeline_from_v3(metadata["codecs"], ChunkSpec((8, 6), np.dtype("f4"), 0))
    stored = (root / "c" / "1" / "1").read_bytes()  # rows 8..15: rows 10.. are outside
    requests = []

    def get_range(offset: int, length: int | None) -> bytes:
        requests.append((offset, length))
        return stored[offset:] if length is None else stored[offset : offset + length]

    got = pipeline.decode_partial(get_range, (slice(0, 2), slice(1, 5)))
    assert np.array_equal(got, data[8:10, 7:11])
    assert requests[0] == (-(4 * 2 * 16 + 4), None)
    assert len(requests) == 3  # the index and inner chunks (0, 0) and (0, 1)
    beyond = pipeline.decode_partial(get_range, (slice(2, 8), slice(None)))
    assert np.array_equal(beyond, np.zeros((6, 6), "f4"))
    assert len(requests) == 4  # only the index: zarr-python stored no inner chunk there
