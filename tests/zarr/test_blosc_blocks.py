"""Blosc frames decoded block by block (nczarr.zarr.codecs.bloscframe): the same bytes as the
blosc library for every frame it serves, only the blocks a selection touches, frames written
by numcodecs, zarr-python and TensorStore, netCDF4 reading the blosc nczarr writes, and
corrupt frames refused with a CodecError."""

from __future__ import annotations

import struct
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import tensorstore as ts
import zarr
from numcodecs import Blosc

import nczarr
from nczarr.errors import CodecError
from nczarr.store import DirectoryStore
from nczarr.zarr import create_array, open_array
from nczarr.zarr.chunkspec import Buffer
from nczarr.zarr.codecs import bloscframe

RNG = np.random.default_rng(7)


def field(shape: tuple[int, ...], dtype: str = "f4") -> np.ndarray:
    values = np.linspace(0, 30, int(np.prod(shape))).reshape(shape) + RNG.normal(0, 0.5, shape)
    return values.astype(dtype)


FRAMES = [
    (shape, dtype, cname, shuffle, clevel, blocksize)
    for shape, dtype in (((10, 30, 24), "f4"), ((1001,), "f8"), ((37,), "i2"), ((5, 7, 3), "u1"), ((4099,), "i4"))
    for cname in ("zlib", "zstd", "lz4", "lz4hc")
    for shuffle in (Blosc.NOSHUFFLE, Blosc.SHUFFLE)
    for clevel in (0, 1, 9)
    for blocksize in (0, 256, 1000)
]


@pytest.mark.parametrize(("shape", "dtype", "cname", "shuffle", "clevel", "blocksize"), FRAMES)
def test_frames_decode_as_blosc_does(
    shape: tuple[int, ...], dtype: str, cname: str, shuffle: int, clevel: int, blocksize: int
) -> None:
    values = field(shape, dtype)
    encoded = Blosc(cname=cname, clevel=clevel, shuffle=shuffle, blocksize=blocksize).encode(values)
    frame = bloscframe.parse("blosc", encoded)
    assert frame is not None
    raw = values.tobytes()
    assert bytes(frame.decode(encoded)) == raw
    n = len(raw)
    ranges = [(n // 3, min(9, n - n // 3)), (0, 1), (n - 1, 1), (n // 2, n - n // 2), (min(5, n - 1), 1)]
    ranges += [(n - 7, 6), (1, 6)] if n >= 8 else []
    assert bytes(frame.decode_ranges(encoded, ranges)) == b"".join(raw[o : o + k] for o, k in ranges)


@pytest.mark.parametrize(("cname", "shuffle"), [("blosclz", Blosc.SHUFFLE), ("zlib", Blosc.BITSHUFFLE)])
def test_frames_it_does_not_serve_go_to_blosc(cname: str, shuffle: int) -> None:
    encoded = Blosc(cname=cname, clevel=5, shuffle=shuffle).encode(field((2000,)))
    assert bloscframe.parse("blosc", encoded) is None


def _count_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    original = bloscframe.BloscFrame._blocks

    def counting(
        self: bloscframe.BloscFrame, view: memoryview, first: int, stop: int, dest: np.ndarray, unshuffle: bool = True
    ) -> None:
        seen.extend(range(first, stop))
        original(self, view, first, stop, dest, unshuffle)

    monkeypatch.setattr(bloscframe.BloscFrame, "_blocks", counting)
    return seen


BLOSC_V3 = {"name": "blosc", "configuration": {"cname": "zlib", "clevel": 1, "shuffle": "shuffle", "typesize": 4,
                                               "blocksize": 4096}}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_point_series_decodes_one_block_per_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zarr_format: int
) -> None:
    values = field((40, 30, 24))
    codecs = (
        {"compressors": [BLOSC_V3]} if zarr_format == 3
        else {"compressor": {"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 1, "blocksize": 4096}}
    )
    array = create_array(DirectoryStore(tmp_path / "a.zarr"), "v", zarr_format=zarr_format, shape=values.shape,
                         dtype="f4", chunks=(10, 30, 24), **codecs)
    array[...] = values
    array.close()
    seen = _count_blocks(monkeypatch)
    reader = open_array(DirectoryStore(tmp_path / "a.zarr", read_only=True), "v")
    assert np.array_equal(reader[:, 17, 5], values[:, 17, 5])
    assert len(seen) == 4  # one 4 KiB block of each of the 4 chunks of 28.8 KB
    seen.clear()
    assert np.array_equal(reader[13], values[13])  # a tenth of a chunk: 1 or 2 of its 8 blocks
    assert 1 <= len(seen) <= 2
    seen.clear()
    selection = (slice(3, 38, 4), slice(2, 29, 5), [0, 7, 23])
    assert np.array_equal(reader[selection], values[selection])


def test_zarr_python_and_tensorstore_blosc_read_in_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    values = field((20, 30, 24))
    zpath = tmp_path / "zp.zarr"
    z = zarr.create_array(store=str(zpath), name="v", shape=values.shape, dtype="f4", chunks=(10, 30, 24),
                          compressors=[zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="shuffle", blocksize=2048)])
    z[...] = values
    tpath = tmp_path / "ts.zarr"
    spec = {
        "driver": "zarr3", "kvstore": {"driver": "file", "path": str(tpath / "v")}, "create": True,
        "metadata": {"shape": list(values.shape), "data_type": "float32", "fill_value": 0.0,
                     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 30, 24]}},
                     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, BLOSC_V3]},
    }
    ts.open(spec).result().write(values).result()
    seen = _count_blocks(monkeypatch)
    for path in (zpath, tpath):
        reader = open_array(DirectoryStore(path, read_only=True), "v")
        assert np.array_equal(reader[:, 3, 4], values[:, 3, 4])
        assert np.array_equal(reader[...], values)
    assert seen  # the partial path ran


@pytest.mark.parametrize("threads", [1, 4])
def test_whole_zlib_chunks_decode_through_bloscframe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     threads: int) -> None:
    values = field((40, 30, 24))
    array = create_array(DirectoryStore(tmp_path / "a.zarr"), "v", shape=values.shape, dtype="f4",
                         chunks=(10, 30, 24), compressors=[BLOSC_V3])
    array[...] = values
    array.close()
    calls: list[tuple[int, bool]] = []
    original = bloscframe.BloscFrame.decode

    def recording(self: bloscframe.BloscFrame, data: Buffer, out: np.ndarray | None = None) -> memoryview:
        calls.append((self.nbytes, out is not None))
        return original(self, data, out)

    monkeypatch.setattr(bloscframe.BloscFrame, "decode", recording)
    with nczarr.config.settings(threads=threads):
        reader = open_array(DirectoryStore(tmp_path / "a.zarr", read_only=True), "v")
        assert np.array_equal(reader[...], values)
    # each whole chunk decodes straight into its place in the result
    assert calls == [(28800, True)] * 4


def test_numcodecs_blosc_frames_decode_into_a_buffer_of_their_size() -> None:
    values = field((1001,), "f8")
    encoded = Blosc(cname="zlib", clevel=1, shuffle=Blosc.SHUFFLE, blocksize=1024).encode(values)
    frame = bloscframe.parse("blosc", encoded)
    assert frame is not None
    out = np.empty(values.nbytes, dtype=np.uint8)
    frame.decode(encoded, out)
    assert out.tobytes() == values.tobytes()
    with pytest.raises(CodecError, match="the chunk's place 8000"):
        frame.decode(encoded, np.empty(8000, dtype=np.uint8))


def test_netcdf4_reads_the_blosc_nczarr_writes(tmp_path: Path) -> None:
    values = field((100, 36))
    path = tmp_path / "b.zarr"
    with nczarr.Dataset(path, "w", format="NCZARR_V2") as ds:
        ds.createDimension("t", 100)
        ds.createDimension("x", 36)
        variable = ds.createVariable("v", "f4", ("t", "x"), compression="blosc_zlib", complevel=1, shuffle=True,
                                     chunksizes=(25, 36))
        variable[:] = values
    with netCDF4.Dataset(f"file://{path}#mode=nczarr,file") as ds:
        assert ds["v"].filters()["blosc"] == {"compressor": "blosc_zlib", "shuffle": 1}
        assert np.array_equal(ds["v"][:], values)
    with nczarr.Dataset(path) as ds:
        assert np.array_equal(ds["v"][:, 7], values[:, 7])


@pytest.mark.parametrize("clevel", [1, 2, 3, 5, 7, 9])
@pytest.mark.parametrize(("shape", "dtype"), [((10, 30, 24), "f4"), ((1001,), "f8"), ((70,), "i2"), ((9000,), "u1"),
                                              ((300001,), "f4"), ((3000,), "S5")])
@pytest.mark.parametrize("blocksize", [0, 256, 5000])
def test_zlib_frames_nczarr_writes_are_blosc_frames(shape: tuple[int, ...], dtype: str, clevel: int,
                                                    blocksize: int) -> None:
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    values = np.frombuffer(field((size // 4 + 1,)).tobytes()[:size], dtype=dtype).reshape(shape)
    for shuffle in (False, True):
        ours = bloscframe.encode_zlib(values.tobytes(), np.dtype(dtype).itemsize, clevel, shuffle, blocksize)
        theirs = bytes(Blosc(cname="zlib", clevel=clevel, shuffle=int(shuffle), blocksize=blocksize).encode(values))
        # the header as c-blosc writes it (whether it stored the data as is may differ)
        assert ours[:2] == theirs[:2] and ours[2] | 2 == theirs[2] | 2 and ours[3:8] == theirs[3:8]
        # a forced block size as c-blosc takes it; automatic, c-blosc's at its highest level, or
        # a smaller one that cuts the chunk into whole blocks
        highest = bytes(Blosc(cname="zlib", clevel=9, shuffle=int(shuffle), blocksize=blocksize).encode(values))
        ours_block, theirs_block, highest_block = (int.from_bytes(f[8:12], "little") for f in (ours, theirs, highest))
        if blocksize:
            assert ours_block == theirs_block
        else:
            assert ours_block == highest_block or (size % ours_block == 0 and ours_block < highest_block)
        assert bytes(Blosc().decode(ours)) == values.tobytes()


def test_peers_read_the_blosc_nczarr_writes(tmp_path: Path) -> None:
    values = field((20, 30, 24))
    path = tmp_path / "a.zarr"
    array = create_array(DirectoryStore(path), "v", shape=values.shape, dtype="f4", chunks=(10, 30, 24),
                         compressors=[{"name": "blosc", "configuration": {"cname": "zlib", "clevel": 1,
                                                                          "shuffle": "shuffle"}}])
    array[...] = values
    array.close()
    assert np.array_equal(zarr.open_array(str(path), path="v", mode="r")[...], values)
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path / "v")}}
    assert np.array_equal(ts.open(spec, open=True).result().read().result(), values)


# -- corrupt frames ------------------------------------------------------------------------
def _frame() -> bytes:
    return bytes(Blosc(cname="zlib", clevel=1, shuffle=1, blocksize=1024).encode(field((4000,))))


def _with(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d[:10],  # no header
        lambda d: d[:40],  # a truncated block table
        lambda d: _with(d, 16, "<i", 3),  # a block starting inside the header
        lambda d: _with(d, 16, "<i", len(d) + 5),  # a block starting past the end
        lambda d: _with(d, struct.unpack_from("<i", d, 16)[0], "<i", 1 << 30),  # a stream longer than the frame
        lambda d: _with(d, struct.unpack_from("<i", d, 16)[0], "<i", -4),  # a negative stream length
        lambda d: _with(d, 8, "<I", 7),  # a block size that does not split into planes
        lambda d: _with(d, 12, "<I", len(d) + 1),  # cbytes past the end
        lambda d: d[:-4] + b"\xde\xad\xbe\xef",  # a deflated stream (the last plane's) that is corrupt
        lambda d: _with(d, 4, "<I", 2 * struct.unpack_from("<I", d, 4)[0]),  # more bytes than its blocks hold
        lambda d: _with(d, 4, "<I", struct.unpack_from("<I", d, 4)[0] - 4),  # fewer
    ],
)
def test_corrupt_frames_are_refused(corrupt: object) -> None:
    data = corrupt(_frame())  # type: ignore[operator]
    with pytest.raises(CodecError):
        frame = bloscframe.parse("blosc", data)
        assert frame is not None
        frame.decode(data)
        frame.decode_ranges(data, [(100, 8)])


def test_a_corrupt_chunk_names_its_key(tmp_path: Path) -> None:
    values = field((40, 30, 24))
    array = create_array(DirectoryStore(tmp_path / "a.zarr"), "v", shape=values.shape, dtype="f4",
                         chunks=(10, 30, 24), compressors=[BLOSC_V3])
    array[...] = values
    array.close()
    chunk = tmp_path / "a.zarr" / "v" / "c" / "1" / "0" / "0"
    data = chunk.read_bytes()
    chunk.write_bytes(_with(data, 16, "<i", len(data) + 5))
    reader = open_array(DirectoryStore(tmp_path / "a.zarr", read_only=True), "v")
    with pytest.raises(CodecError, match="c/1/0/0"):
        reader[:, 3, 4]
    with pytest.raises(CodecError, match="c/1/0/0"):
        reader[...]


def test_a_plane_of_long_runs_is_deflated_so_that_it_inflates_fast() -> None:
    # the exponent byte of a smooth float field is one value: ISA-L codes its runs as copies at
    # distance 1 (slow to inflate), so that plane goes through the standard zlib at level 1
    import zlib

    values = (1.5 + np.linspace(0, 0.4, 64 * 1024)).astype("f4")
    encoded = bloscframe.encode_zlib(values, 4, 1, True)
    frame = bloscframe.parse("blosc", encoded)
    assert frame is not None and not frame.flags & 0x10  # split into byte planes
    plane = frame.blocksize // 4
    streams = []
    position = frame.starts[0]
    for _ in range(4):
        (length,) = struct.unpack_from("<i", encoded, position)
        streams.append(encoded[position + 4 : position + 4 + length])
        position += 4 + length
    top = values[: plane].view(np.uint8).reshape(-1, 4)[:, 3].tobytes()
    assert len(set(top)) <= 2 and streams[3] == zlib.compress(top, 1)
    assert bytes(frame.decode(encoded)) == values.tobytes()
    assert Blosc().decode(encoded) == values.tobytes()


def test_a_chunk_of_up_to_1_mib_is_one_block() -> None:
    # c-blosc at level 1 would make two blocks of 128 KiB and a short one
    values = field((10, 90, 72))
    encoded = bloscframe.encode_zlib(values, 4, 1, True)
    frame = bloscframe.parse("blosc", encoded)
    assert frame is not None and (frame.blocksize, frame.nblocks) == (259200, 1)
    assert Blosc().decode(encoded) == values.tobytes()


def test_a_chunk_is_cut_into_whole_blocks_that_every_reader_decodes(tmp_path: Path) -> None:
    # c-blosc would make a block of 1 MiB and a short one it never splits into byte planes
    values = field((10, 150, 180))
    encoded = bloscframe.encode_zlib(values, 4, 1, True)
    frame = bloscframe.parse("blosc", encoded)
    assert frame is not None and (frame.blocksize, frame.nblocks) == (540000, 2)
    assert Blosc().decode(encoded) == values.tobytes()
    path = tmp_path / "a.zarr"
    array = create_array(DirectoryStore(path), "v", shape=(20, 150, 180), dtype="f4", chunks=(10, 150, 180),
                         compressors=[BLOSC_V3 | {"configuration": BLOSC_V3["configuration"] | {"blocksize": 0}}])
    both = np.concatenate([values, values[::-1]])
    array[...] = both
    array.close()
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path / "v")}}
    assert np.array_equal(ts.open(spec).result().read().result(), both)
    assert np.array_equal(zarr.open_array(str(path), path="v", mode="r")[...], both)
    assert np.array_equal(open_array(DirectoryStore(path, read_only=True), "v")[:, 75, 30], both[:, 75, 30])


@pytest.mark.parametrize("nbytes", [4003, 40_003, 300_002])
@pytest.mark.parametrize("blocksize", [0, 1000])
@pytest.mark.parametrize("cname", ["zlib", "zstd"])
def test_ranges_of_shuffled_blocks_with_bytes_past_the_last_element(nbytes: int, blocksize: int, cname: str) -> None:
    # a point read gathers its elements from the shuffled planes: blocks split into planes,
    # whole shuffled blocks and the short last one, whose trailing bytes blosc leaves as they are
    raw = field((nbytes // 4 + 1,)).tobytes()[:nbytes]
    frames = [bytes(Blosc(cname=cname, clevel=1, shuffle=1, blocksize=blocksize, typesize=4).encode(raw))]
    if cname == "zlib":
        frames.append(bloscframe.encode_zlib(raw, 4, 1, True, blocksize))
    rng = np.random.default_rng(nbytes + blocksize)
    starts = rng.integers(0, nbytes, 40)
    ranges = [(int(s), int(rng.integers(1, min(64, nbytes - s) + 1))) for s in starts]
    ranges += [(nbytes - 3, 3), (nbytes - 9, 9), (0, nbytes)]
    for encoded in frames:
        frame = bloscframe.parse("blosc", encoded)
        assert frame is not None
        assert bytes(frame.decode_ranges(encoded, ranges)) == b"".join(raw[o : o + k] for o, k in ranges)
