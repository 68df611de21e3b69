"""Codec pipelines on their own: round trips, layouts, validation and failure messages."""

from __future__ import annotations

import sys
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numcodecs
import numcodecs.registry
import numpy as np
import pytest

from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import ChunkSpec
from nczarr.zarr.codecs import (
    BytesCodec,
    GzipCodec,
    NumcodecsCodec,
    ShardingCodec,
    ShuffleCodec,
    chunk_is_fill,
    compress,
    known_codecs,
    pipeline_from_v2,
    pipeline_from_v3,
)
from nczarr.zarr.codecs.sharding import EMPTY

LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}

NUMERIC = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16", "?"]
FIXED = ["S5", "U3", "M8[s]", "m8[ms]"]


def sample(dtype: str, shape: tuple[int, ...] = (6, 5)) -> np.ndarray:
    """Distinct, non-trivial values of ``dtype``."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "b":
        values: Any = np.arange(n) % 3 == 0
    elif dt.kind in "SU":
        values = np.array([f"v{i}" for i in range(n)]).astype(dt)
    elif dt.kind in "mM":
        values = np.arange(n).astype(dt)
    elif dt.kind == "c":
        values = (np.arange(n) + 1j * np.arange(n)[::-1]).astype(dt)
    elif dt.kind == "f":
        values = (np.arange(n) * 1.25 - 7).astype(dt)
    else:
        values = (np.arange(n) * 37 % (127 if dt.itemsize == 1 else 10_000)).astype(dt)
    return values.reshape(shape)


def spec_of(data: np.ndarray, order: str = "C", fill: Any = 0) -> ChunkSpec:
    return ChunkSpec(data.shape, data.dtype, fill, order)  # type: ignore[arg-type]


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")


def v3_chains() -> dict[str, list[dict[str, Any]]]:
    return {
        "bytes-little": [LITTLE],
        "bytes-big": [BIG],
        "transpose": [{"name": "transpose", "configuration": {"order": [1, 0]}}, BIG],
        "gzip": [LITTLE, {"name": "gzip", "configuration": {"level": 1}}],
        "zlib": [LITTLE, {"name": "zlib", "configuration": {"level": 6}}],
        "zstd": [LITTLE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
        "blosc": [LITTLE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}],
        "crc32c": [BIG, {"name": "crc32c"}],
        "shuffle-zlib": [
            LITTLE,
            {"name": "numcodecs.shuffle", "configuration": {}},
            {"name": "numcodecs.zlib", "configuration": {"level": 1}},
        ],
        "lz4-bz2-fletcher": [
            LITTLE,
            {"name": "numcodecs.lz4", "configuration": {}},
            {"name": "numcodecs.bz2", "configuration": {"level": 1}},
            {"name": "numcodecs.fletcher32", "configuration": {}},
        ],
        "sharding": [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [2, 5],
                    "codecs": [LITTLE, {"name": "gzip", "configuration": {"level": 1}}],
                },
            }
        ],
    }


@pytest.mark.parametrize("chain", list(v3_chains()))
@pytest.mark.parametrize("dtype", NUMERIC + FIXED)
def test_v3_round_trip(chain: str, dtype: str) -> None:
    data = sample(dtype)
    codecs = v3_chains()[chain]
    pipeline = pipeline_from_v3(codecs, spec_of(data))
    encoded = pipeline.encode(data)
    assert_same(pipeline.decode(bytes(encoded)), data)


V2_CHAINS: dict[str, tuple[list[dict[str, Any]] | None, dict[str, Any] | None]] = {
    "raw": (None, None),
    "zlib": (None, {"id": "zlib", "level": 1}),
    "gzip": (None, {"id": "gzip", "level": 1}),
    "zstd": (None, {"id": "zstd", "level": 1}),
    "blosc": (None, {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}),
    "lz4": (None, {"id": "lz4"}),
    "bz2": (None, {"id": "bz2", "level": 1}),
    "lzma": (None, {"id": "lzma"}),
    "shuffle-zlib": ([{"id": "shuffle", "elementsize": 0}], {"id": "zlib", "level": 1}),
    "fletcher32": ([{"id": "fletcher32"}], None),
    "crc32-adler32": ([{"id": "crc32"}, {"id": "adler32"}], None),
}


@pytest.mark.parametrize("chain", list(V2_CHAINS))
@pytest.mark.parametrize("dtype", NUMERIC + FIXED + [">i4", ">f8", ">c8", ">U2"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_v2_round_trip(chain: str, dtype: str, order: str) -> None:
    data = sample(dtype)
    filters, compressor = V2_CHAINS[chain]
    pipeline = pipeline_from_v2(filters, compressor, spec_of(data, order))
    assert_same(pipeline.decode(bytes(pipeline.encode(data))), data)


@pytest.mark.parametrize(
    ("filter_", "dtype"),
    [
        ({"id": "delta", "dtype": "<i4", "astype": "<i2"}, "<i4"),
        ({"id": "delta", "dtype": ">i8"}, ">i8"),
        ({"id": "fixedscaleoffset", "offset": 0, "scale": 4, "dtype": "<f8", "astype": "<i4"},
         "<f8"),
        ({"id": "astype", "encode_dtype": "<f8", "decode_dtype": "<f4"}, "<f4"),
        ({"id": "packbits"}, "|b1"),
    ],
)
@pytest.mark.parametrize("order", ["C", "F"])
def test_v2_lossless_filters(filter_: dict[str, Any], dtype: str, order: str) -> None:
    data = sample(dtype)
    pipeline = pipeline_from_v2([filter_], {"id": "zlib", "level": 1}, spec_of(data, order))
    assert_same(pipeline.decode(pipeline.encode(data)), data)


def test_delta_with_narrower_type_stores_the_narrow_type() -> None:
    data = np.arange(30, dtype="<i4").reshape(6, 5)
    pipeline = pipeline_from_v2([{"id": "delta", "dtype": "<i4", "astype": "<i1"}], None,
                                spec_of(data))
    encoded = bytes(pipeline.encode(data))
    assert encoded == numcodecs.Delta(dtype="<i4", astype="<i1").encode(data).tobytes()
    assert len(encoded) == 30


@pytest.mark.parametrize(
    "config",
    [{"id": "quantize", "digits": 2, "dtype": "<f8"}, {"id": "bitround", "keepbits": 5}],
)
def test_lossy_filters_match_numcodecs(config: dict[str, Any]) -> None:
    data = np.linspace(-3, 7, 30).reshape(6, 5)
    pipeline = pipeline_from_v2([config], None, spec_of(data))
    expected = np.asarray(numcodecs.get_codec(config).encode(data.copy())).view(data.dtype)
    assert_same(pipeline.decode(pipeline.encode(data)), expected.reshape(6, 5))
    assert not np.array_equal(pipeline.decode(pipeline.encode(data)), data)


def test_v3_numcodecs_array_codecs_take_the_dtype_from_the_array() -> None:
    data = np.arange(30, dtype="f4").reshape(6, 5) / 3
    codecs = [
        {"name": "numcodecs.quantize", "configuration": {"digits": 3}},
        {"name": "numcodecs.delta", "configuration": {}},
        LITTLE,
    ]
    pipeline = pipeline_from_v3(codecs, spec_of(data))
    assert pipeline.to_json()[0]["configuration"]["dtype"] == "<f4"
    assert pipeline.to_json()[1]["configuration"] == {"dtype": "<f4", "astype": "<f4"}
    np.testing.assert_allclose(pipeline.decode(pipeline.encode(data)), data, atol=1e-3)


# --- the raw path ------------------------------------------------------------------------


def test_raw_v3_is_zero_copy_both_ways() -> None:
    data = sample("f4")
    pipeline = pipeline_from_v3([LITTLE], spec_of(data))
    assert pipeline.is_raw
    encoded = pipeline.encode(data)
    assert np.shares_memory(np.frombuffer(encoded, dtype=np.uint8), data)
    stored = data.tobytes()
    decoded = pipeline.decode(stored)
    assert np.shares_memory(decoded, np.frombuffer(stored, dtype=np.uint8))
    assert not decoded.flags.writeable
    assert_same(decoded, data)


def test_raw_v2_fortran_order() -> None:
    data = sample("i8")
    pipeline = pipeline_from_v2(None, None, spec_of(data, "F"))
    assert pipeline.is_raw
    assert bytes(pipeline.encode(data)) == data.tobytes(order="F")
    assert_same(pipeline.decode(data.tobytes(order="F")), data)


@pytest.mark.parametrize(
    ("codecs", "dtype"),
    [
        ([BIG], "f4"),
        ([LITTLE, {"name": "gzip", "configuration": {"level": 1}}], "f4"),
        ([{"name": "transpose", "configuration": {"order": [1, 0]}}, LITTLE], "f4"),
        ([{"name": "vlen-utf8"}], "O"),
    ],
)
def test_not_raw(codecs: list[dict[str, Any]], dtype: str) -> None:
    spec = ChunkSpec((6, 5), np.dtype(dtype), 0)
    assert not pipeline_from_v3(codecs, spec).is_raw


def test_v2_big_endian_is_not_raw_and_decodes_as_declared() -> None:
    data = sample(">i4")
    pipeline = pipeline_from_v2(None, None, spec_of(data))
    assert not pipeline.is_raw
    assert bytes(pipeline.encode(data)) == data.tobytes()
    assert pipeline.decode(data.tobytes()).dtype == np.dtype(">i4")


def test_big_endian_bytes_layout() -> None:
    data = sample("f8")
    pipeline = pipeline_from_v3([BIG], spec_of(data))
    assert bytes(pipeline.encode(data)) == data.astype(">f8").tobytes()
    decoded = pipeline.decode(data.astype(">f8").tobytes())
    assert decoded.dtype == np.dtype("=f8")
    assert_same(decoded, data)


def test_transpose_stores_fortran_order() -> None:
    data = sample("i2", (3, 4, 5))
    codecs = [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, LITTLE]
    pipeline = pipeline_from_v3(codecs, spec_of(data))
    assert bytes(pipeline.encode(data)) == data.tobytes(order="F")
    assert_same(pipeline.decode(data.tobytes(order="F")), data)


def test_transpose_partial_permutation() -> None:
    data = sample("u4", (2, 3, 4))
    codecs = [{"name": "transpose", "configuration": {"order": [1, 2, 0]}}, LITTLE]
    pipeline = pipeline_from_v3(codecs, spec_of(data))
    assert bytes(pipeline.encode(data)) == data.transpose(1, 2, 0).tobytes()
    assert_same(pipeline.decode(pipeline.encode(data)), data)


def test_encode_converts_dtype_and_checks_shape() -> None:
    pipeline = pipeline_from_v3([LITTLE], ChunkSpec((2, 2), np.dtype("f4"), 0))
    assert bytes(pipeline.encode(np.ones((2, 2), "f8"))) == np.ones(4, "<f4").tobytes()
    with pytest.raises(CodecError, match=r"shape \(3,\), expected \(2, 2\)"):
        pipeline.encode(np.ones(3, "f4"))


# --- gzip, zlib, zstd --------------------------------------------------------------------


def test_gzip_writes_a_gzip_stream_and_reads_numcodecs_gzip() -> None:
    data = sample("f4")
    pipeline = pipeline_from_v3([LITTLE, {"name": "gzip", "configuration": {"level": 1}}],
                                spec_of(data))
    encoded = bytes(pipeline.encode(data))
    assert encoded[:2] == b"\x1f\x8b"
    assert numcodecs.GZip().decode(encoded) == data.tobytes()
    assert_same(pipeline.decode(numcodecs.GZip(level=9).encode(data.tobytes())), data)


def test_zlib_is_a_zlib_stream() -> None:
    data = sample("i8")
    pipeline = pipeline_from_v2(None, {"id": "zlib", "level": 1}, spec_of(data))
    encoded = bytes(pipeline.encode(data))
    assert zlib.decompress(encoded) == data.tobytes()


def test_zstd_reads_numcodecs_zstd_with_checksum() -> None:
    data = sample("u2")
    pipeline = pipeline_from_v2(None, {"id": "zstd", "level": 1}, spec_of(data))
    stored = numcodecs.Zstd(level=5, checksum=True).encode(data.tobytes())
    assert_same(pipeline.decode(stored), data)


# --- blosc -------------------------------------------------------------------------------


def test_blosc_v3_fills_typesize_and_shuffle_from_the_dtype() -> None:
    spec = ChunkSpec((10,), np.dtype("f8"), 0)
    blosc = pipeline_from_v3([LITTLE, {"name": "blosc", "configuration": {}}], spec).to_json()[1]
    assert blosc == {
        "name": "blosc",
        "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 8,
                          "blocksize": 0},
    }
    spec1 = ChunkSpec((10,), np.dtype("u1"), 0)
    config = pipeline_from_v3([{"name": "bytes"}, {"name": "blosc"}], spec1).to_json()[1]
    assert config["configuration"]["shuffle"] == "bitshuffle"


def test_blosc_v2_keeps_numcodecs_form_and_shuffles_by_element() -> None:
    data = np.arange(4096, dtype="<i8")
    config = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
    pipeline = pipeline_from_v2(None, config, spec_of(data))
    assert pipeline.to_json() == (None, config)
    encoded = bytes(pipeline.encode(data))
    # same typesize as zarr-python v2, which hands numcodecs the typed array
    assert encoded == numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1).encode(data)
    assert_same(pipeline.decode(encoded), data)


# --- shuffle -----------------------------------------------------------------------------


@pytest.mark.parametrize("elementsize", [2, 4, 8, 16])
def test_shuffle_is_byte_identical_to_numcodecs(elementsize: int) -> None:
    raw = np.random.default_rng(elementsize).integers(0, 256, 64 * elementsize, "u1").tobytes()
    codec = ShuffleCodec(elementsize=elementsize)
    spec = ChunkSpec((64 * elementsize,), np.dtype("u1"), 0)
    shuffled = bytes(codec.encode(raw, spec))
    assert shuffled == bytes(numcodecs.Shuffle(elementsize).encode(raw))
    assert shuffled != raw
    assert bytes(codec.decode(shuffled, spec)) == raw


def test_shuffle_elementsize_zero_reads_netcdf_c_data() -> None:
    data = np.linspace(0, 1, 30, dtype="<f4").reshape(6, 5)
    stored = numcodecs.Zlib(1).encode(numcodecs.Shuffle(elementsize=4).encode(data))
    filters = [{"id": "shuffle", "elementsize": 0}]  # what netcdf-c writes
    pipeline = pipeline_from_v2(filters, {"id": "zlib", "level": 1}, spec_of(data))
    assert_same(pipeline.decode(stored), data)
    assert pipeline.to_json()[0] == [{"id": "shuffle", "elementsize": 4}]
    # numcodecs itself (hence zarr-python) would not unshuffle with elementsize 0
    unshuffled = numcodecs.Shuffle(elementsize=0).decode(numcodecs.Zlib(1).decode(stored))
    assert not np.array_equal(np.frombuffer(unshuffled, "<f4").reshape(6, 5), data)


def test_shuffle_rejects_partial_elements() -> None:
    pipeline = pipeline_from_v2([{"id": "shuffle", "elementsize": 4}], None,
                                ChunkSpec((3,), np.dtype("i4"), 0))
    with pytest.raises(CodecError, match="not a whole number of 4-byte elements"):
        pipeline.decode(b"1234567")


# --- crc32c ------------------------------------------------------------------------------


def test_crc32c_appends_little_endian_checksum() -> None:
    pipeline = pipeline_from_v3([{"name": "bytes"}, {"name": "crc32c"}],
                                ChunkSpec((9,), np.dtype("u1"), 0))
    data = np.frombuffer(b"123456789", dtype="u1")
    encoded = bytes(pipeline.encode(data))
    assert encoded == b"123456789" + (0xE3069283).to_bytes(4, "little")  # the CRC-32C check value
    assert bytes(pipeline.decode(encoded)) == b"123456789"


def test_crc32c_mismatch_is_detected() -> None:
    data = sample("f4")
    pipeline = pipeline_from_v3([LITTLE, {"name": "crc32c"}], spec_of(data))
    corrupt = bytearray(pipeline.encode(data))
    corrupt[3] ^= 0x10
    with pytest.raises(CodecError, match="checksum mismatch"):
        pipeline.decode(bytes(corrupt))
    with pytest.raises(CodecError, match="cannot hold a checksum"):
        pipeline.decode(b"ab")


CRC32C_MODULES = {"crc32c": "crc32c", "google-crc32c": "google_crc32c"}


def only_crc32c_from(package: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``package`` the only importable CRC-32C implementation (None: no package)."""
    for other, module in CRC32C_MODULES.items():
        if other != package:
            monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    compress._crc32c_function.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_crc32c_choice() -> Iterator[None]:
    """Forget a forced choice once the test's monkeypatch is undone (torn down last)."""
    yield
    compress._crc32c_function.cache_clear()


def test_every_crc32c_implementation_is_listed() -> None:
    assert set(compress.CRC32C_IMPLEMENTATIONS) == set(CRC32C_MODULES)


@pytest.mark.parametrize("package", list(CRC32C_MODULES))
def test_crc32c_from_each_package_takes_any_buffer(package: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Each implementation, forced, checksums views and arrays (google-crc32c's C function
    takes bytes only) inside a shard whose index has a crc32c, as zarr-python writes."""
    only_crc32c_from(package, monkeypatch)
    function = compress._crc32c_function()
    for data in (b"123456789", bytearray(b"123456789"), memoryview(b"0123456789")[1:],
                 np.frombuffer(b"123456789", dtype="u1")):
        assert function(data) == 0xE3069283
    data = sample("f4", (8, 6))
    pipeline = pipeline_from_v3(
        [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 3], "codecs": [LITTLE, {"name": "crc32c"}],
            "index_codecs": [LITTLE, {"name": "crc32c"}]}}],
        spec_of(data))
    encoded = pipeline.encode(data)
    for stored in (bytes(encoded), memoryview(bytearray(encoded))):
        assert np.array_equal(pipeline.decode(stored), data)


def test_crc32c_without_a_package_names_the_one_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    only_crc32c_from(None, monkeypatch)
    spec = ChunkSpec((4,), np.dtype("u1"), 0)
    with pytest.raises(CodecError, match=r"codec 'crc32c' needs the 'google-crc32c' package.*pip install google-crc32c"):
        pipeline_from_v3([LITTLE, {"name": "crc32c"}], spec)
    with pytest.raises(CodecError, match=r"needs the 'google-crc32c' package"):
        pipeline_from_v2(None, {"id": "crc32c"}, spec)


@pytest.mark.parametrize("package", list(CRC32C_MODULES))
@pytest.mark.parametrize("location", [None, "start", "end"])
def test_numcodecs_crc32c_reads_and_writes_as_numcodecs(location: str | None, package: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """numcodecs' CRC32C, served here with either package, at either end of the data."""
    only_crc32c_from(package, monkeypatch)
    config = {} if location is None else {"location": location}
    data = sample("i4")
    theirs = numcodecs.get_codec({"id": "crc32c", **config})
    for pipeline in (pipeline_from_v2(None, {"id": "crc32c", **config}, spec_of(data)),
                     pipeline_from_v3([LITTLE, {"name": "numcodecs.crc32c", "configuration": config}],
                                      spec_of(data))):
        encoded = bytes(pipeline.encode(data))
        assert encoded == bytes(theirs.encode(data.tobytes()))
        assert np.array_equal(pipeline.decode(encoded), data)
    assert pipeline.to_json() == [LITTLE, {"name": "numcodecs.crc32c", "configuration": config}]
    with pytest.raises(CodecError, match="invalid location 'middle'"):
        pipeline_from_v2(None, {"id": "crc32c", "location": "middle"}, spec_of(data))


@pytest.mark.parametrize("codec_id", ["zfpy", "pcodec"])
def test_numcodecs_codec_without_its_package_names_it(codec_id: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(numcodecs.registry.codec_registry, codec_id, raising=False)
    spec = ChunkSpec((4,), np.dtype("f8"), 0)
    with pytest.raises(CodecError, match=f"needs the '{codec_id}' package.*pip install {codec_id}"):
        pipeline_from_v3([{"name": f"numcodecs.{codec_id}", "configuration": {}}], spec)
    with pytest.raises(CodecError, match=f"pip install {codec_id}"):
        pipeline_from_v2(None, {"id": codec_id}, spec)


# --- size mismatch -----------------------------------------------------------------------


def test_size_mismatch_says_expected_and_got() -> None:
    spec = ChunkSpec((4, 5), np.dtype("f4"), 0)
    with pytest.raises(CodecError, match=r"has 76 bytes, expected 80"):
        pipeline_from_v3([LITTLE], spec).decode(b"\0" * 76)
    v2 = pipeline_from_v2(None, {"id": "zlib", "level": 1}, spec)
    # decoding stops at the expected size, so the error cannot say how much more there was
    with pytest.raises(CodecError, match=r"more than the 80 bytes expected"):
        v2.decode(zlib.compress(b"\0" * 84))
    with pytest.raises(CodecError, match=r"decoded to 76 bytes, expected 80"):
        v2.decode(zlib.compress(b"\0" * 76))


def test_corrupt_compressed_data_is_a_codec_error() -> None:
    pipeline = pipeline_from_v3([LITTLE, {"name": "zstd", "configuration": {"level": 1}}],
                                ChunkSpec((4,), np.dtype("f4"), 0))
    with pytest.raises(CodecError, match="'zstd': decoding failed"):
        pipeline.decode(b"not zstd data")


# --- vlen --------------------------------------------------------------------------------


def test_vlen_utf8_layout_and_missing_values() -> None:
    data = np.array([["a", "é"], [None, ""]], dtype=object)
    pipeline = pipeline_from_v3([{"name": "vlen-utf8", "configuration": {}}],
                                ChunkSpec((2, 2), np.dtype(object), ""))
    encoded = bytes(pipeline.encode(data))
    assert encoded == (
        b"\x04\0\0\0" + b"\x01\0\0\0a" + b"\x02\0\0\0\xc3\xa9" + b"\0\0\0\0" + b"\0\0\0\0"
    )
    decoded = pipeline.decode(encoded)
    assert decoded.dtype == object
    assert decoded.tolist() == [["a", "é"], ["", ""]]


def test_vlen_bytes_round_trip_fortran_v2() -> None:
    data = np.array([[b"a", b"\xff\x00"], [b"", b"xyz"]], dtype=object)
    spec = ChunkSpec((2, 2), np.dtype(object), b"", "F")
    pipeline = pipeline_from_v2([{"id": "vlen-bytes"}], {"id": "zstd", "level": 1}, spec)
    decoded = pipeline.decode(pipeline.encode(data))
    assert decoded.tolist() == data.tolist()
    raw = pipeline_from_v2([{"id": "vlen-bytes"}], None, spec).encode(data)
    assert bytes(raw)[4:9] == b"\x01\0\0\0a" and bytes(raw)[9:13] == b"\0\0\0\0"  # F order


def test_vlen_count_mismatch() -> None:
    pipeline = pipeline_from_v3([{"name": "vlen-utf8"}], ChunkSpec((3,), np.dtype(object), ""))
    with pytest.raises(CodecError, match="has 1 items, expected 3"):
        pipeline.decode(b"\x01\0\0\0\x01\0\0\0a")


# --- sharding ----------------------------------------------------------------------------


def sharded(location: str, inner: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    config: dict[str, Any] = {"chunk_shape": [2, 3], "index_location": location}
    if inner is not None:
        config["codecs"] = inner
    return [{"name": "sharding_indexed", "configuration": config}]


@pytest.mark.parametrize("location", ["start", "end"])
def test_sharding_skips_fill_inner_chunks(location: str) -> None:
    shard = np.full((6, 6), -1, dtype="<i4")
    shard[0:2, 0:3] = np.arange(6).reshape(2, 3)  # inner chunk (0, 0), full
    shard[5, 5] = 7  # inner chunk (2, 1): an edge chunk of the array, mostly fill
    pipeline = pipeline_from_v3(sharded(location), ChunkSpec((6, 6), np.dtype("i4"), -1))
    encoded = bytes(pipeline.encode(shard))
    index_size = 6 * 16 + 4
    assert len(encoded) == 2 * 24 + index_size
    index_bytes = encoded[:index_size] if location == "start" else encoded[-index_size:]
    table = np.frombuffer(index_bytes[:-4], dtype="<u8").reshape(3, 2, 2)
    start = index_size if location == "start" else 0
    assert table[0, 0].tolist() == [start, 24]
    assert table[2, 1].tolist() == [start + 24, 24]
    for coords in [(0, 1), (1, 0), (1, 1), (2, 0)]:
        assert table[coords].tolist() == [EMPTY, EMPTY]
    assert encoded[start : start + 24] == shard[0:2, 0:3].tobytes()
    assert_same(pipeline.decode(encoded), shard)


def test_sharding_nan_fill_and_inner_compression() -> None:
    shard = np.full((4, 6), np.nan, dtype="f8")
    shard[2:4, 3:6] = np.arange(6).reshape(2, 3) / 7
    codecs = sharded("end", [LITTLE, {"name": "gzip", "configuration": {"level": 1}}])
    pipeline = pipeline_from_v3(codecs, ChunkSpec((4, 6), np.dtype("f8"), np.nan))
    encoded = bytes(pipeline.encode(shard))
    table = np.frombuffer(encoded[-68:-4], dtype="<u8").reshape(2, 2, 2)
    assert (table[:, :, 0] != EMPTY).tolist() == [[False, False], [False, True]]
    assert_same(pipeline.decode(encoded), shard)


def test_sharding_all_fill_shard_is_just_an_index() -> None:
    pipeline = pipeline_from_v3(sharded("end"), ChunkSpec((4, 6), np.dtype("u2"), 3))
    shard = np.full((4, 6), 3, dtype="u2")
    assert chunk_is_fill(shard, 3)
    encoded = bytes(pipeline.encode(shard))
    assert len(encoded) == 4 * 16 + 4
    assert_same(pipeline.decode(encoded), shard)


def test_sharding_vlen_strings() -> None:
    shard = np.array([["a", "", "c"], ["", "", ""], ["x", "yy", "zzz"], ["", "", ""]],
                     dtype=object)
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 3], "codecs": [{"name": "vlen-utf8"}],
        "index_codecs": [LITTLE], "index_location": "start"}}]
    pipeline = pipeline_from_v3(codecs, ChunkSpec((4, 3), np.dtype(object), ""))
    encoded = bytes(pipeline.encode(shard))
    table = np.frombuffer(encoded[:64], dtype="<u8").reshape(4, 2)
    assert table[1].tolist() == [EMPTY, EMPTY] and table[3].tolist() == [EMPTY, EMPTY]
    assert pipeline.decode(encoded).tolist() == shard.tolist()


def test_sharding_corrupt_shards() -> None:
    pipeline = pipeline_from_v3(sharded("end"), ChunkSpec((2, 3), np.dtype("i4"), 0))
    encoded = bytearray(pipeline.encode(np.ones((2, 3), "i4")))
    with pytest.raises(CodecError, match="too short to hold its 20-byte index"):
        pipeline.decode(bytes(encoded[:10]))
    encoded[-5] ^= 1  # the index, under its checksum
    with pytest.raises(CodecError, match="checksum mismatch"):
        pipeline.decode(bytes(encoded))
    no_crc = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 3], "index_codecs": [LITTLE]}}]
    pipeline = pipeline_from_v3(no_crc, ChunkSpec((2, 3), np.dtype("i4"), 0))
    bad_index = np.array([[100, 24]], "<u8").tobytes()
    with pytest.raises(CodecError, match="past the end"):
        pipeline.decode(b"\0" * 24 + bad_index)


class RangeReader:
    """A ``get_range`` over bytes that records what it was asked for."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.requests: list[tuple[int, int | None]] = []

    def __call__(self, offset: int, length: int | None) -> bytes:
        self.requests.append((offset, length))
        return self.data[offset:] if length is None else self.data[offset : offset + length]


@pytest.mark.parametrize("location", ["start", "end"])
def test_sharding_partial_decode_reads_only_what_it_needs(location: str) -> None:
    shard = np.arange(48, dtype="<f8").reshape(6, 8)
    shard[4:6, 0:4] = -1  # inner chunk (2, 0) is fill and not stored
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 4], "index_location": location,
        "codecs": [LITTLE, {"name": "zstd", "configuration": {"level": 1}}]}}]
    pipeline = pipeline_from_v3(codecs, ChunkSpec((6, 8), np.dtype("f8"), -1))
    assert pipeline.partial_decodable
    reader = RangeReader(bytes(pipeline.encode(shard)))
    index_size = 6 * 16 + 4
    index_range = (0, index_size) if location == "start" else (-index_size, None)

    assert_same(pipeline.decode_partial(reader, (slice(2, 4), slice(5, 7))), shard[2:4, 5:7])
    assert reader.requests[0] == index_range
    assert len(reader.requests) == 2  # the index and inner chunk (1, 1)

    reader.requests.clear()
    assert_same(pipeline.decode_partial(reader, (slice(3, 6), slice(1, 3))), shard[3:6, 1:3])
    assert len(reader.requests) == 2  # inner chunk (2, 0) is fill: only (1, 0) is read

    rows, cols = [5, 0, 0, 3], np.array([7, 2, 6])
    expected = shard[np.ix_(rows, cols)]
    assert_same(pipeline.decode_partial(reader, (rows, cols)), expected)
    assert_same(pipeline.decode_partial(reader, (slice(None, None, 2), slice(1, 8, 3))),
                shard[::2, 1:8:3])
    assert_same(pipeline.decode_partial(reader, (slice(None), slice(None))), shard)


def test_partial_decode_needs_a_bare_sharding_chain() -> None:
    pipeline = pipeline_from_v3([LITTLE], ChunkSpec((4,), np.dtype("f4"), 0))
    assert not pipeline.partial_decodable
    with pytest.raises(CodecError, match="just sharding_indexed"):
        pipeline.decode_partial(RangeReader(b""), (slice(None),))


def test_sharding_json_is_normalized() -> None:
    pipeline = pipeline_from_v3(
        [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2]}}],
        ChunkSpec((4, 4), np.dtype("u1"), 0),
    )
    assert pipeline.to_json() == [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2],
        "codecs": [{"name": "bytes"}],
        "index_codecs": [LITTLE, {"name": "crc32c"}],
        "index_location": "end",
    }}]


# --- validation --------------------------------------------------------------------------

F4 = ChunkSpec((4,), np.dtype("f4"), 0)
GZIP = {"name": "gzip", "configuration": {"level": 1}}


@pytest.mark.parametrize(
    ("codecs", "message"),
    [
        ([LITTLE, BIG], "only one array->bytes codec is allowed, got 'bytes' and 'bytes'"),
        ([GZIP, LITTLE], "'gzip' \\(bytes->bytes\\) must come after an array->bytes"),
        ([LITTLE, {"name": "transpose", "configuration": {"order": [0]}}],
         "'transpose' \\(array->array\\) must come before"),
        ([GZIP], "must come after"),
        ([], "needs exactly one array->bytes codec"),
        ([{"name": "transpose", "configuration": {"order": [0]}}], "got none"),
        ([{"name": "gzip", "configuration": {"level": 12}}], "'gzip': invalid level 12"),
        ([{"name": "bytes", "configuration": {"endian": "middle"}}],
         "'bytes': invalid endian 'middle'"),
        ([{"name": "bytes"}], "'bytes': invalid endian None"),
        ([{"name": "bytes", "configuration": {"order": "C"}}],
         "'bytes': unknown configuration parameter\\(s\\) \\['order'\\]"),
        ([{"name": "transpose", "configuration": {"order": [1]}}, LITTLE],
         "'transpose': invalid order \\[1\\]"),
        ([LITTLE, {"name": "zstd", "configuration": {"checksum": 1}}], "'zstd': invalid checksum"),
        ([LITTLE, {"name": "blosc", "configuration": {"cname": "lzo"}}], "'blosc': invalid cname"),
        ([LITTLE, {"name": "blosc", "configuration": {"shuffle": 1}}], "'blosc': invalid shuffle"),
        ([LITTLE, {"name": "numcodecs.shuffle", "configuration": {"elementsize": -1}}],
         "invalid elementsize -1"),
        ([LITTLE, {"name": "numcodecs.zlib", "configuration": {"level": "high"}}],
         "'numcodecs.zlib': invalid level 'high'"),
        ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [3]}}],
         "'sharding_indexed': invalid chunk_shape \\[3\\]"),
        ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2], "index_codecs": [
            LITTLE, GZIP]}}], "invalid index_codecs"),
        ([{"name": "vlen-utf8"}], "needs an object array"),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "nonsense"}}, LITTLE],
         "'numcodecs.delta': bad configuration"),
        ({"name": "bytes"}, "must be a list"),
        (["bytes"], "object with a string 'name'"),
    ],
)
def test_invalid_v3_chains(codecs: Any, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        pipeline_from_v3(codecs, F4)


def test_unknown_codec_lists_known_names() -> None:
    with pytest.raises(CodecError) as info:
        pipeline_from_v3([{"name": "lzw"}], F4)
    message = str(info.value)
    assert "unknown codec 'lzw'" in message
    for name in ["bytes", "gzip", "sharding_indexed", "numcodecs.shuffle", "zlib"]:
        assert name in message
    with pytest.raises(CodecError) as info:
        pipeline_from_v2(None, {"id": "lzw"}, F4)
    assert "known v2 codecs" in str(info.value)
    assert "blosc" in str(info.value) and "vlen-utf8" in str(info.value)


def test_bytes_codec_cannot_serialise_objects() -> None:
    with pytest.raises(CodecError, match="need vlen-utf8 or vlen-bytes"):
        pipeline_from_v3([LITTLE], ChunkSpec((2,), np.dtype(object), ""))


def test_v3_spec_must_be_c_order() -> None:
    with pytest.raises(CodecError, match="F order is a transpose"):
        pipeline_from_v3([LITTLE], ChunkSpec((2, 2), np.dtype("f4"), 0, "F"))


@pytest.mark.parametrize(
    ("filters", "compressor", "message"),
    [
        (None, None, "needs an object codec among its filters"),
        ([{"id": "json2"}], None, "'json2' is not supported"),
        ([{"id": "vlen-utf8"}, {"id": "vlen-bytes"}], None, "only one array->bytes"),
    ],
)
def test_invalid_v2_object_chains(filters: Any, compressor: Any, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        pipeline_from_v2(filters, compressor, ChunkSpec((2,), np.dtype(object), ""))


@pytest.mark.parametrize(
    ("filters", "compressor", "message"),
    [
        (None, {"id": "zlib", "level": 10}, "'numcodecs.zlib': invalid level 10"),
        ([{"id": "shuffle"}, {"id": "delta", "dtype": "<f4"}], None, "must come before"),
        ([{"level": 1}], None, "string 'id'"),
        ([{"id": "vlen-utf8"}], None, "needs an object array"),
        (None, {"id": "blosc", "shuffle": 5}, "'numcodecs.blosc': invalid shuffle 5"),
    ],
)
def test_invalid_v2_chains(filters: Any, compressor: Any, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        pipeline_from_v2(filters, compressor, F4)


def test_known_codecs() -> None:
    v3 = known_codecs(3)
    assert {"bytes", "transpose", "gzip", "zstd", "blosc", "crc32c", "sharding_indexed",
            "vlen-utf8", "vlen-bytes", "zlib", "numcodecs.shuffle", "numcodecs.delta",
            "numcodecs.fletcher32", "numcodecs.bitround", "numcodecs.quantize"} <= set(v3)
    v2 = known_codecs(2)
    assert {"zlib", "gzip", "zstd", "blosc", "lz4", "bz2", "shuffle", "fletcher32", "delta",
            "quantize", "bitround", "vlen-utf8", "vlen-bytes"} <= set(v2)
    assert "json2" not in v2 and "numcodecs.zlib" not in v2


# --- JSON, defaults, classes -------------------------------------------------------------


def test_v2_json_round_trips() -> None:
    spec = ChunkSpec((4,), np.dtype("<f4"), 0)
    assert pipeline_from_v2(None, None, spec).to_json() == (None, None)
    filters = [{"id": "delta", "dtype": "<f4", "astype": "<f4"}, {"id": "shuffle",
                                                                    "elementsize": 4}]
    compressor = {"id": "zstd", "level": 1, "checksum": False}
    pipeline = pipeline_from_v2(filters, compressor, spec)
    assert pipeline.to_json() == (filters, compressor)
    pipeline.to_json()[0].clear()  # a copy: the pipeline keeps its JSON
    assert pipeline.to_json() == (filters, compressor)


def test_uint8_bytes_json_omits_endian() -> None:
    spec = ChunkSpec((4,), np.dtype("u1"), 0)
    assert pipeline_from_v3([BIG], spec).to_json() == [{"name": "bytes"}]


def test_codec_classes_are_frozen_and_reusable() -> None:
    codec = GzipCodec(level=3)
    with pytest.raises(AttributeError):
        codec.level = 4  # type: ignore[misc]
    assert codec.to_json() == {"name": "gzip", "configuration": {"level": 3}}
    assert GzipCodec.from_config("numcodecs.gzip", {"level": 2}).to_json(2) == {
        "id": "gzip", "level": 2}
    assert BytesCodec(endian="big").to_json() == BIG
    assert ShardingCodec(chunk_shape=[2]).chunk_shape == (2,)
    wrapper = NumcodecsCodec.from_config("numcodecs.lz4", {"acceleration": 2})
    assert wrapper.kind == "bytes->bytes"
    assert NumcodecsCodec.from_config("numcodecs.delta", {}).kind == "array->array"


def test_chunk_is_fill() -> None:
    assert chunk_is_fill(np.full(4, np.nan), np.nan)
    assert not chunk_is_fill(np.array([np.nan, 1.0]), np.nan)
    assert chunk_is_fill(np.zeros(4), 0.0)
    assert not chunk_is_fill(np.array([0.0, -0.0]), 0.0)  # zarr-python keeps -0.0 chunks
    assert chunk_is_fill(np.full(3, 2 + 1j), 2 + 1j)
    assert not chunk_is_fill(np.zeros(3, "i4"), None)
    assert chunk_is_fill(np.array(["", ""], dtype=object), "")
    assert not chunk_is_fill(np.array(["", "a"], dtype=object), "")
    assert not chunk_is_fill(np.array([1, 0, 0], "i4"), 0)
    assert not chunk_is_fill(np.array([0, 0, 1], "i4"), 0)


def test_concurrent_encode_decode() -> None:
    spec = ChunkSpec((64, 64), np.dtype("f4"), 0)
    codecs = [LITTLE, {"name": "numcodecs.shuffle"}, {"name": "gzip",
                                                        "configuration": {"level": 1}},
              {"name": "crc32c"}]
    pipeline = pipeline_from_v3(codecs, spec)
    chunks = [np.random.default_rng(i).random((64, 64), dtype="f4") for i in range(32)]

    def round_trip(chunk: np.ndarray) -> bool:
        return bool(np.array_equal(pipeline.decode(pipeline.encode(chunk)), chunk))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(round_trip, chunks * 4))


def test_sharding_builds_its_chains_through_the_registry() -> None:
    spec = ChunkSpec((4,), np.dtype("<i2"), 0)
    with pytest.raises(CodecError, match="without a chain factory"):
        ShardingCodec(chunk_shape=[2]).evolve(spec)
    pipeline = pipeline_from_v3([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}], spec)
    assert pipeline.partial_decodable and pipeline.partial_nbytes == 2 * 16 + 4 + 4
