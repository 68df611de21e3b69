"""Stores other Zarr writers make, with every codec a reader may meet: sharding with each index
form (start or end, with or without crc32c, big-endian), nested and around a transpose, as
zarr-python 3 (with its own codec pipeline and with zarrs') and TensorStore write it;
numcodecs' filters and compressors under their v2 ids and their v3 ``numcodecs.*`` names, as
zarr-python 3 writes them. nczarr's engine opens each array and reads the values written; an
unknown codec is refused with its name and the array's."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import tensorstore as ts
import zarr
import zarr.codecs as zc
import zarr.codecs.numcodecs as znc
from zarr.errors import ZarrUserWarning
from zarr.storage import LocalStore

from nczarr.errors import CodecError
from nczarr.store import DirectoryStore
from nczarr.zarr import open_array

pytestmark = [
    pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning"),
    pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning"),
]

#: Not a multiple of the chunks below: edge chunks and edge shards are partly outside.
SHAPE = (13, 11)


def sample(dtype: str) -> np.ndarray:
    """Distinct values of ``dtype`` with one corner all zero (the fill value), so that
    shards leave inner chunks out and their index has empty entries."""
    dt = np.dtype(dtype)
    n = SHAPE[0] * SHAPE[1]
    if dt.kind == "b":
        data = (np.arange(n) % 3 == 0).reshape(SHAPE)
    elif dt.kind == "f":
        data = (np.arange(n).reshape(SHAPE) * 0.37 - 11).astype(dt)
    else:
        data = (np.arange(n).reshape(SHAPE) % 120 + 1).astype(dt)
    data[:4, :4] = 0
    return data


def read_with_nczarr(root: Path) -> np.ndarray:
    return open_array(DirectoryStore(str(root)))[...]


#: zarr-python's codec pipelines: its own, and the zarrs Rust crate's (zarrs-python).
PIPELINES = {"zarr-python": "zarr.core.codec_pipeline.BatchedCodecPipeline",
             "zarrs": "zarrs.ZarrsCodecPipeline"}


def write_with_zarr_python(root: Path, dtype: str, zarr_format: int, writer: str = "zarr-python",
                           **kwargs: Any) -> np.ndarray:
    data = sample(dtype)
    kwargs.setdefault("chunks", (4, 6))
    # strict: zarrs refuses what it cannot encode instead of handing it to zarr-python
    pipeline = {"codec_pipeline.path": PIPELINES[writer], "codec_pipeline.strict": True}
    with warnings.catch_warnings(), zarr.config.set(pipeline):
        warnings.simplefilter("ignore", ZarrUserWarning)
        array = zarr.create_array(LocalStore(root), shape=SHAPE, dtype=dtype, fill_value=0,
                                  zarr_format=zarr_format, **kwargs)
        assert type(array._async_array.codec_pipeline).__name__ == PIPELINES[writer].rsplit(".")[-1]
        array[...] = data
    return np.asarray(zarr.open_array(LocalStore(root), mode="r")[...])  # lossy filters change it


# --- sharding: zarr-python 3 ---------------------------------------------------------------

LE = zc.BytesCodec(endian="little")
BE = zc.BytesCodec(endian="big")
INDEX_CODECS = {
    "bytes-crc32c": [LE, zc.Crc32cCodec()],
    "bytes": [LE],
    "big-endian-crc32c": [BE, zc.Crc32cCodec()],
}


@pytest.mark.parametrize("writer", list(PIPELINES))
@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("index", list(INDEX_CODECS))
def test_zarr_python_shard_index_forms(location: str, index: str, writer: str, tmp_path: Path) -> None:
    sharding = zc.ShardingCodec(chunk_shape=(2, 3), index_location=location,
                                index_codecs=INDEX_CODECS[index],
                                codecs=[LE, zc.ZstdCodec(level=1)])
    write_with_zarr_python(tmp_path, "i4", 3, writer, chunks=(8, 6), serializer=sharding, compressors=None)
    np.testing.assert_array_equal(read_with_nczarr(tmp_path), sample("i4"))


with warnings.catch_warnings():  # zarr-python warns that numcodecs codecs are not in the spec
    warnings.simplefilter("ignore", ZarrUserWarning)
    ZARR_PYTHON_SHARDINGS: dict[str, dict[str, Any]] = {
        "default": {"chunks": (2, 3), "shards": (8, 6)},
        "gzip-crc32c-inner": {"chunks": (2, 3), "shards": (8, 6),
                              "compressors": [zc.GzipCodec(level=1), zc.Crc32cCodec()]},
        "blosc-inner": {"chunks": (4, 3), "shards": (4, 6),
                        "compressors": [zc.BloscCodec(cname="lz4", shuffle="bitshuffle")]},
        "transpose-outside": {"chunks": (2, 3), "shards": (8, 6),
                              "filters": [zc.TransposeCodec(order=(1, 0))]},
        "transpose-inside": {"chunks": (8, 6), "filters": None, "compressors": None,
                             "serializer": zc.ShardingCodec(
                                 chunk_shape=(4, 2), codecs=[zc.TransposeCodec(order=(1, 0)), BE])},
        "nested": {"chunks": (8, 6), "compressors": None,
                   "serializer": zc.ShardingCodec(
                       chunk_shape=(4, 6), index_location="start",
                       codecs=[zc.ShardingCodec(chunk_shape=(2, 3), codecs=[LE, zc.GzipCodec(level=1)])])},
        "numcodecs-inner": {"chunks": (2, 3), "shards": (8, 6),
                            "filters": [znc.Delta(dtype="<i4")], "compressors": [znc.LZ4()]},
    }


@pytest.mark.parametrize(("name", "writer"), [
    (name, writer) for name in ZARR_PYTHON_SHARDINGS for writer in PIPELINES
    if not (writer == "zarrs" and name == "numcodecs-inner")  # zarrs has no numcodecs.delta
])
def test_zarr_python_sharded_chains(name: str, writer: str, tmp_path: Path) -> None:
    write_with_zarr_python(tmp_path, "i4", 3, writer, **ZARR_PYTHON_SHARDINGS[name])
    np.testing.assert_array_equal(read_with_nczarr(tmp_path), sample("i4"))


@pytest.mark.parametrize("dtype", [str, "bytes"])
def test_zarr_python_sharded_variable_length(dtype: Any, tmp_path: Path) -> None:
    """(zarrs-python hands variable-length data back to zarr-python's pipeline.)"""
    words = np.array([f"w{i}" * (i % 3) for i in range(SHAPE[0] * SHAPE[1])], dtype=object)
    data = (words if dtype is str else np.array([w.encode() for w in words], dtype=object)).reshape(SHAPE)
    array = zarr.create_array(LocalStore(tmp_path), shape=SHAPE, chunks=(2, 3), shards=(8, 6),
                              dtype=dtype, fill_value=data.flat[0])
    array[...] = data
    assert read_with_nczarr(tmp_path).tolist() == data.tolist()


# --- sharding and more: TensorStore ----------------------------------------------------------


def write_with_tensorstore(root: Path, driver: str, metadata: dict[str, Any], dtype: str) -> np.ndarray:
    data = sample(dtype)
    key = "data_type" if driver == "zarr3" else "dtype"
    spec = {"driver": driver, "kvstore": {"driver": "file", "path": str(root)},
            "metadata": {"shape": list(SHAPE), key: dtype if driver == "zarr3" else np.dtype(dtype).str,
                         **metadata},
            "create": True}
    ts.open(spec).result()[...] = data
    return data


def sharding(chunk_shape: list[int], **configuration: Any) -> dict[str, Any]:
    return {"name": "sharding_indexed", "configuration": {"chunk_shape": chunk_shape, **configuration}}


def grid(*shape: int) -> dict[str, Any]:
    return {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}}}


TENSORSTORE_V3: dict[str, dict[str, Any]] = {
    "default-index": {**grid(8, 6), "codecs": [sharding([2, 3])]},
    "start-no-crc32c": {**grid(8, 6), "codecs": [sharding(
        [2, 3], index_location="start",
        index_codecs=[{"name": "bytes", "configuration": {"endian": "big"}}])]},
    "transpose-nested-zstd": {**grid(13, 12), "codecs": [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        sharding([6, 13], codecs=[sharding([3, 13], codecs=[
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "zstd", "configuration": {"level": 1}}])])]},
    "blosc-crc32c-inner": {**grid(4, 6), "codecs": [sharding([2, 3], codecs=[
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle",
                                            "typesize": 8}},
        {"name": "crc32c"}])]},
    "gzip-unsharded": {**grid(4, 6), "codecs": [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "gzip", "configuration": {"level": 1}}]},
}


@pytest.mark.parametrize("name", list(TENSORSTORE_V3))
def test_tensorstore_v3(name: str, tmp_path: Path) -> None:
    expected = write_with_tensorstore(tmp_path, "zarr3", TENSORSTORE_V3[name], "float64")
    np.testing.assert_array_equal(read_with_nczarr(tmp_path), expected)


TENSORSTORE_V2: dict[str, dict[str, Any]] = {
    "blosc-bitshuffle-F": {"chunks": [5, 4], "order": "F",
                           "compressor": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2}},
    "zlib": {"chunks": [5, 4], "compressor": {"id": "zlib", "level": 1}},
    "bz2": {"chunks": [5, 4], "compressor": {"id": "bz2", "level": 1}},
    "zstd": {"chunks": [5, 4], "compressor": {"id": "zstd", "level": 1}},
    "raw": {"chunks": [5, 4], "compressor": None},
}


@pytest.mark.parametrize("name", list(TENSORSTORE_V2))
def test_tensorstore_v2(name: str, tmp_path: Path) -> None:
    expected = write_with_tensorstore(tmp_path, "zarr", TENSORSTORE_V2[name], ">i4")
    np.testing.assert_array_equal(read_with_nczarr(tmp_path), expected)


# --- numcodecs: zarr-python 3, v2 ids and v3 numcodecs.* names ------------------------------

#: (dtype, filters, compressors) per case; each class takes the same parameters in v2 (plain
#: numcodecs) and v3 (zarr-python's ``numcodecs.*`` wrappers).
Factory = Callable[[Any], list[Any]]
NUMCODECS_CASES: dict[str, tuple[str, Factory, Factory]] = {
    "delta": ("i4", lambda m: [m.Delta(dtype="<i4")], lambda m: [m.Zlib(level=1)]),
    "fixedscaleoffset": ("f8", lambda m: [m.FixedScaleOffset(offset=1, scale=10, dtype="<f8", astype="<i2")],
                         lambda m: [m.Zstd(level=1)]),
    "quantize": ("f4", lambda m: [m.Quantize(digits=3, dtype="<f4")], lambda m: [m.BZ2(level=1)]),
    "bitround": ("f8", lambda m: [m.BitRound(keepbits=10)], lambda m: [m.LZMA()]),
    "astype": ("f8", lambda m: [m.AsType(encode_dtype="<f4", decode_dtype="<f8")], lambda m: [m.LZ4()]),
    "packbits": ("bool", lambda m: [m.PackBits()], lambda m: [m.GZip(level=1)]),
    "shuffle-blosc-lz4": ("i8", lambda m: [m.Shuffle(elementsize=8)],
                          lambda m: [m.Blosc(cname="lz4", clevel=5, shuffle=0)]),
    "blosc-zstd-bitshuffle": ("f4", lambda m: [], lambda m: [m.Blosc(cname="zstd", shuffle=2)]),
    "blosc-zlib-autoshuffle": ("u2", lambda m: [], lambda m: [m.Blosc(cname="zlib", shuffle=-1)]),
    "blosc-blosclz-lz4hc": ("i2", lambda m: [m.Blosc(cname="blosclz", shuffle=1)],
                            lambda m: [m.Blosc(cname="lz4hc", clevel=9)]),
    "checksums": ("i4", lambda m: [m.Adler32(), m.CRC32(), m.Fletcher32()],
                  lambda m: [m.JenkinsLookup3()]),
    "crc32c": ("u1", lambda m: [], lambda m: [m.CRC32C()]),
    "gzip": ("f8", lambda m: [], lambda m: [m.GZip(level=9)]),
}


#: The cases whose filters lose precision: zarr-python's reading is the reference.
LOSSY = {"fixedscaleoffset", "quantize", "bitround", "astype"}


def check_numcodecs_case(name: str, root: Path, written: np.ndarray) -> None:
    dtype = NUMCODECS_CASES[name][0]
    if name not in LOSSY:
        np.testing.assert_array_equal(written, sample(dtype))
    np.testing.assert_array_equal(read_with_nczarr(root), written)


@pytest.mark.parametrize("name", list(NUMCODECS_CASES))
def test_zarr_python_v3_numcodecs_names(name: str, tmp_path: Path) -> None:
    dtype, filters, compressors = NUMCODECS_CASES[name]
    filter_codecs, compressor_codecs = filters(znc), compressors(znc)
    # zarr-python runs every bytes->bytes numcodecs codec as a compressor in v3
    expected = write_with_zarr_python(
        tmp_path, dtype, 3,
        filters=[c for c in filter_codecs if isinstance(c, _ARRAY_ARRAY)],
        compressors=[c for c in filter_codecs if not isinstance(c, _ARRAY_ARRAY)] + compressor_codecs)
    check_numcodecs_case(name, tmp_path, expected)


_ARRAY_ARRAY = (znc.Delta, znc.FixedScaleOffset, znc.Quantize, znc.BitRound, znc.AsType, znc.PackBits)


@pytest.mark.parametrize("name", list(NUMCODECS_CASES))
def test_zarr_python_v2_numcodecs_ids(name: str, tmp_path: Path) -> None:
    dtype, filters, compressors = NUMCODECS_CASES[name]
    expected = write_with_zarr_python(tmp_path, dtype, 2, filters=filters(numcodecs),
                                      compressors=compressors(numcodecs)[0])
    check_numcodecs_case(name, tmp_path, expected)


def test_zarr_python_v2_categorize(tmp_path: Path) -> None:
    """Categorize has no v3 wrapper in zarr-python; in v2 it maps strings to small ints."""
    data = np.array(["b", "a", "c", "a"] * 3, dtype="<U1")
    array = zarr.create_array(LocalStore(tmp_path), shape=data.shape, chunks=(5,), dtype="<U1",
                              zarr_format=2, compressors=None,
                              filters=[numcodecs.Categorize(labels=["a", "b", "c"], dtype="<U1", astype="u1")])
    array[...] = data
    np.testing.assert_array_equal(read_with_nczarr(tmp_path), data)


# --- what nczarr cannot read ----------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_unknown_codec_names_itself_and_the_array(zarr_format: int, tmp_path: Path) -> None:
    root = zarr.open_group(LocalStore(tmp_path), mode="w", zarr_format=zarr_format)
    for name in ("fine", "odd"):
        root.create_array(name, shape=(3,), dtype="i2", fill_value=0,
                          compressors=[zc.ZstdCodec()] if zarr_format == 3 else numcodecs.Zstd())[...] = [1, 2, 3]
    metadata = tmp_path / "odd" / ("zarr.json" if zarr_format == 3 else ".zarray")
    metadata.write_text(metadata.read_text().replace('"zstd"', '"made-up-codec"'))
    store = DirectoryStore(str(tmp_path))
    message = rf"^array 'odd': unknown codec 'made-up-codec'; known v{zarr_format} codecs: "
    with pytest.raises(CodecError, match=message):
        open_array(store, "odd")
    assert open_array(store, "fine")[...].tolist() == [1, 2, 3]
