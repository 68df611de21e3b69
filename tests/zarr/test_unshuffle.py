"""Byte unshuffle through the blosc library (bloscframe.unshuffle), as numcodecs' Shuffle
lays bytes out, and shuffled and blosc chunks decoded straight into their place in a result:
the same values as zarr-python reads, for every element size, chunk place and byte order."""

from __future__ import annotations

from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

from nczarr.errors import CodecError
from nczarr.store import DirectoryStore
from nczarr.zarr import create_array, open_array
from nczarr.zarr.codecs import bloscframe
from nczarr.zarr.codecs.compress import ShuffleCodec

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("typesize", [2, 3, 4, 8, 16, 17, 255])
@pytest.mark.parametrize("count", [1, 127, 32768, 32769, 100003])
def test_unshuffle_inverts_numcodecs_shuffle(typesize: int, count: int) -> None:
    values = RNG.integers(0, 256, count * typesize, dtype=np.uint8)
    shuffled = np.frombuffer(numcodecs.Shuffle(typesize).encode(values), dtype=np.uint8)
    out = np.empty_like(values)
    bloscframe.unshuffle(shuffled, typesize, out)
    assert np.array_equal(out, values)


def test_an_element_size_blosc_refuses_unshuffles_by_numpy() -> None:
    values = RNG.integers(0, 256, 300 * 7, dtype=np.uint8)
    codec = ShuffleCodec(elementsize=300)
    shuffled = numcodecs.Shuffle(300).encode(values)
    assert bytes(codec.decode(shuffled, None)) == values.tobytes()  # type: ignore[arg-type]
    with pytest.raises(CodecError, match="whole number of 300-byte elements"):
        codec.decode(shuffled[:-1], None)  # type: ignore[arg-type]


def _codecs(codec: str, zarr_format: int, itemsize: int) -> dict[str, object]:
    if codec == "shuffle":
        if zarr_format == 3:
            return {"compressors": [{"name": "numcodecs.shuffle", "configuration": {"elementsize": itemsize}},
                                    {"name": "gzip", "configuration": {"level": 1}}]}
        return {"filters": [{"id": "shuffle", "elementsize": itemsize}], "compressor": {"id": "zlib", "level": 1}}
    shuffle = codec == "blosc-shuffle"
    if zarr_format == 3:
        return {"compressors": [{"name": "blosc", "configuration": {
            "cname": "zlib", "clevel": 1, "typesize": itemsize, "shuffle": "shuffle" if shuffle else "noshuffle"}}]}
    return {"compressor": {"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": int(shuffle)}}


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize(("codec", "dtype"), [
    *(("shuffle", dtype) for dtype in ("<f4", "<f8", "<i2", "u1", ">f4", "<c16")),
    ("blosc-shuffle", "<f4"), ("blosc-noshuffle", "<f4"),
])
def test_whole_chunks_read_into_every_place(tmp_path: Path, zarr_format: int, codec: str, dtype: str) -> None:
    # contiguous places (decoded straight into the result), strided ones, edge chunks
    values = (RNG.normal(0, 100, (23, 30, 25))).astype(dtype)
    codecs = _codecs(codec, zarr_format, np.dtype(dtype).itemsize)
    for chunks in ((10, 30, 25), (5, 30, 10), (23, 30, 25)):
        path = tmp_path / f"{chunks}.zarr"
        array = create_array(DirectoryStore(path), "v", zarr_format=zarr_format, shape=values.shape, dtype=dtype,
                             chunks=chunks, **codecs)
        array[...] = values
        array.close()
        reader = open_array(DirectoryStore(path, read_only=True), "v")
        assert np.array_equal(reader[...], values)
        assert np.array_equal(reader[10:20], values[10:20])
        assert np.array_equal(reader[:, :, 10:20], values[:, :, 10:20])
        assert np.array_equal(zarr.open_array(str(path), path="v", mode="r")[...], values)


def test_whole_shuffled_chunks_decode_straight_into_the_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    values = RNG.normal(0, 1, (40, 30, 24)).astype("f4")
    path = tmp_path / "a.zarr"
    array = create_array(DirectoryStore(path), "v", shape=values.shape, dtype="f4", chunks=(10, 30, 24),
                         compressors=[{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                                      {"name": "gzip", "configuration": {"level": 1}}])
    array[...] = values
    array.close()
    into_result: list[bool] = []
    original = ShuffleCodec.decode_into

    def recording(self: ShuffleCodec, data: bytes, out: np.ndarray) -> None:
        into_result.append(out.base is not None)  # a view of the result, not a buffer of its own
        original(self, data, out)

    monkeypatch.setattr(ShuffleCodec, "decode_into", recording)
    assert np.array_equal(open_array(DirectoryStore(path, read_only=True), "v")[...], values)
    assert into_result == [True] * 4


def test_a_chunk_that_inflates_to_the_wrong_size_is_an_error_naming_it(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "a.zarr"
    array = create_array(DirectoryStore(path), "v", shape=(100,), dtype="f4", chunks=(50,),
                         compressors=[{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                                      {"name": "gzip", "configuration": {"level": 1}}])
    array[...] = np.arange(100, dtype="f4")
    array.close()
    (path / "v" / "c" / "1").write_bytes(gzip.compress(b"\0" * 196))
    with pytest.raises(CodecError, match="'v/c/1'.*196 bytes, expected 200"):
        open_array(DirectoryStore(path, read_only=True), "v")[...]


def test_a_thread_keeps_no_large_scratch_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setattr(bloscframe, "_MAX_SCRATCH", 10_000)
    kept: dict[int, object] = {}

    def unshuffle(count: int) -> None:
        values = RNG.integers(0, 256, count * 4, dtype=np.uint8)
        out = np.empty_like(values)
        bloscframe.unshuffle(np.frombuffer(numcodecs.Shuffle(4).encode(values), dtype=np.uint8), 4, out)
        assert np.array_equal(out, values)
        kept[count] = getattr(bloscframe._scratch, "frame", None)

    for count in (1000, 100_000):  # a frame of 4 KB is kept for the next chunk, one of 400 KB is not
        thread = threading.Thread(target=unshuffle, args=(count,))
        thread.start()
        thread.join()
    assert kept[1000] is not None and kept[100_000] is None
