"""Decompression bombs and absurd chunk shapes: reading them must fail with an NCZarrError
naming the chunk, and never take much memory.

Each bomb is a few KB to a few MB of compressed zeros that inflate to 1 GiB, stored by hand
as the one chunk of a 10x10 float64 array (800 bytes decoded) and of a 1000x1000 one, for
every codec, v2 and v3, and inside shards. The bombs are read in one child process whose
peak RSS is measured; the child also has an address-space limit, so that a regression fails
with MemoryError instead of exhausting the machine.
"""

from __future__ import annotations

import bz2
import functools
import json
import lzma
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import Any

import crc32c
import numpy as np
import pytest
from numcodecs import LZ4, Blosc

import nczarr.zarr.array
from nczarr.errors import ChunkTooLargeError, CodecError
from nczarr.store.memory import MemoryStore
from nczarr.zarr import create_array, open_array
from nczarr.zarr.chunkspec import ChunkSpec
from nczarr.zarr.codecs import pipeline_from_v2, pipeline_from_v3

GIB = 2**30
#: Peak RSS allowed to the child that reads every bomb (it starts at about 80 MB).
MAX_RSS_MB = 200
LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
BLOSC_CNAMES = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")


# --- bombs: valid compressed streams of zeros, built without compressing a GiB -----------


def _raw_deflate_zeros(total: int) -> bytes:
    """Raw deflate of ``total`` zero bytes: one fully flushed 1 MiB segment repeated (a
    segment after a full flush does not refer to what came before), then a final block."""
    segment = 2**20

    def flushed() -> bytes:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        return compressor.compress(bytes(segment)) + compressor.flush(zlib.Z_FULL_FLUSH)

    final = zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    return flushed() * (total // segment) + final


@functools.cache
def _crc32_of_zeros(total: int) -> int:
    crc, block = 0, bytes(2**24)
    for _ in range(total // len(block)):
        crc = zlib.crc32(block, crc)
    return crc


def zlib_bomb(total: int = GIB) -> bytes:
    adler = ((total % 65521) << 16) | 1  # Adler-32 of zeros: a stays 1, b counts them
    return b"\x78\xda" + _raw_deflate_zeros(total) + adler.to_bytes(4, "big")


def gzip_bomb(total: int = GIB) -> bytes:
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", _crc32_of_zeros(total), total % 2**32)
    return header + _raw_deflate_zeros(total) + trailer


def zstd_bomb(total: int = GIB, declare_size: bool = True) -> bytes:
    """A zstd frame of RLE blocks (128 KiB of zeros in 4 bytes each)."""
    frame = bytearray(b"\x28\xb5\x2f\xfd")
    if declare_size:
        frame += b"\xe0" + struct.pack("<Q", total)  # single segment, 8-byte content size
    else:
        frame += b"\x00" + bytes([7 << 3])  # no content size, 128 KiB window
    block = 2**17
    for start in range(0, total, block):
        size = min(block, total - start)
        header = int(start + size == total) | (1 << 1) | (size << 3)  # RLE block, `size` bytes
        frame += header.to_bytes(3, "little") + b"\x00"
    return bytes(frame)


def blosc_bomb(cname: str, total: int = GIB) -> bytes:
    """A blosc frame of ``total`` zeros: the blocks of a small real frame, repeated."""
    small = Blosc(cname, clevel=5, shuffle=0).encode(np.zeros(2**22, np.uint8))
    header = bytearray(small[:16])
    _, nbytes, blocksize, _ = struct.unpack_from("<4I", small, 0)
    starts = sorted(struct.unpack_from(f"<{nbytes // blocksize}i", small, 16))
    block = bytes(small[starts[0] : starts[1]])  # every block of zeros encodes the same
    count = total // blocksize
    first = 16 + 4 * count
    struct.pack_into("<I", header, 4, total)
    struct.pack_into("<I", header, 12, first + count * len(block))
    offsets = struct.pack(f"<{count}i", *range(first, first + count * len(block), len(block)))
    return bytes(header) + offsets + block * count


def concatenated_bomb(compress: Any, total: int = GIB) -> bytes:
    """bz2 and xz streams may be concatenated: one stream of 8 MiB of zeros, repeated."""
    piece = 2**23
    return compress(bytes(piece)) * (total // piece)


def lz4_bomb(total: int = GIB) -> bytes:
    return bytes(LZ4().encode(np.zeros(total, np.uint8)))  # calloc'd pages: no RSS here


# --- stores written by hand ---------------------------------------------------------------


def _v2_array(root: Path, name: str, compressor: dict[str, Any] | None, chunk: bytes | None,
              *, shape: tuple[int, ...] = (10, 10), chunks: tuple[int, ...] = (10, 10),
              dtype: str = "<f8", filters: list[dict[str, Any]] | None = None) -> str:
    folder = root / name
    folder.mkdir(parents=True)
    meta = {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype,
            "compressor": compressor, "fill_value": 0 if dtype != "|O" else "", "order": "C",
            "filters": filters}
    (folder / ".zarray").write_text(json.dumps(meta))
    key = ".".join("0" * len(shape))
    if chunk is not None:
        (folder / key).write_bytes(chunk)
    return f"{name}/{key}"


def _v3_array(root: Path, name: str, codecs: list[dict[str, Any]], chunk: bytes | None,
              *, shape: tuple[int, ...] = (10, 10), chunks: tuple[int, ...] = (10, 10),
              data_type: str = "float64") -> str:
    folder = root / name
    folder.mkdir(parents=True)
    meta = {
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0 if data_type != "string" else "", "codecs": codecs, "attributes": {},
    }
    (folder / "zarr.json").write_text(json.dumps(meta))
    key = "c/" + "/".join("0" * len(shape))
    if chunk is not None:
        (folder / key).parent.mkdir(parents=True)
        (folder / key).write_bytes(chunk)
    return f"{name}/{key}"


def _shard(inner: list[bytes | None], index_entries: list[tuple[int, int]] | None = None) -> bytes:
    """A shard of inner chunks (None: absent) with its index at the end (bytes + crc32c)."""
    empty = 2**64 - 1
    body, entries, offset = b"", [], 0
    for chunk in inner:
        if chunk is None:
            entries.append((empty, empty))
        else:
            entries.append((offset, len(chunk)))
            body += chunk
            offset += len(chunk)
    index = b"".join(struct.pack("<QQ", *e) for e in (index_entries or entries))
    return body + index + struct.pack("<I", crc32c.crc32c(index))


def _sharded_codecs(inner_codecs: list[dict[str, Any]], inner_shape: tuple[int, ...] = (5, 5)
                    ) -> list[dict[str, Any]]:
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner_shape), "codecs": [LITTLE, *inner_codecs],
        "index_codecs": [LITTLE, {"name": "crc32c"}], "index_location": "end"}}]


# --- the child that reads them ------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))  # a regression fails, not the machine
    from nczarr.errors import NCZarrError
    from nczarr.store.directory import DirectoryStore
    from nczarr.zarr import open_array
    def peak_rss_mb():
        # VmHWM belongs to this program's memory map; ru_maxrss would also count the parent's
        # peak, which Linux carries over into a child spawned by vfork and exec.
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results = []
    for root, path, action in json.loads(sys.argv[1]):
        outcome = {"path": path, "action": action}
        try:
            writing = action == "write"
            array = open_array(DirectoryStore(root, read_only=not writing), path, mode="r+" if writing else "r")
            if action == "write":
                array[:] = np.arange(array.size, dtype=array.dtype).reshape(array.shape)
                array.flush()
            values = array[...]
            outcome["values"] = np.asarray(values, dtype=object).ravel().tolist()[:20]
        except Exception as e:
            outcome.update(error=type(e).__name__, message=str(e), nczarr=isinstance(e, NCZarrError))
        outcome["rss_mb"] = peak_rss_mb()
        results.append(outcome)
    print(json.dumps(results))
""")


def _read_in_child(cases: list[tuple[Path, str, str]]) -> list[dict[str, Any]]:
    env = {**os.environ, "MALLOC_ARENA_MAX": "2"}  # thread arenas count against RLIMIT_AS
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps([(str(r), p, a) for r, p, a in cases])],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


#: A chunk of 1000x1000 float64 (8 MB) may be stored as up to 16 MB, so its bombs get past
#: the check of the stored size and reach the codecs' own output limits.
BIG = {"shape": (1000, 1000), "chunks": (1000, 1000)}


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every bomb array, v2 and v3, and what the child made of each:
    {"v2:<name>": (chunk key, outcome)}. Each bomb is the chunk of a 10x10 array (refused
    because it is larger than any such chunk encodes to) and of a 1000x1000 one,
    ``<name>-big`` (refused by the codec when its output passes 8 MB)."""
    v2 = tmp_path_factory.mktemp("v2")
    v3 = tmp_path_factory.mktemp("v3")
    keys: dict[str, tuple[Path, str]] = {}  # chunk key -> (store root, array name)

    def add_v2(name: str, compressor: dict[str, Any], chunk: bytes, *, big: bool = True,
               **options: Any) -> None:
        for suffix, shape in (("", {}), ("-big", BIG))[: 1 + big]:
            key = _v2_array(v2, name + suffix, compressor, chunk, **shape, **options)
            keys[key] = (v2, name + suffix)

    def add_v3(name: str, codecs: list[dict[str, Any]], chunk: bytes, *, big: bool = True,
               **options: Any) -> None:
        for suffix, shape in (("", {}), ("-big", BIG))[: 1 + big]:
            key = _v3_array(v3, name + suffix, codecs, chunk, **shape, **options)
            keys[key] = (v3, name + suffix)

    zlib_chunk, gzip_chunk = zlib_bomb(), gzip_bomb()
    xz_chunk = concatenated_bomb(lambda data: lzma.compress(data, preset=0))
    add_v2("zlib", {"id": "zlib", "level": 1}, zlib_chunk)
    add_v2("gzip", {"id": "gzip", "level": 1}, gzip_chunk)
    add_v2("zstd", {"id": "zstd", "level": 1}, zstd_bomb())
    add_v2("zstd-nosize", {"id": "zstd", "level": 1}, zstd_bomb(declare_size=False))
    for cname in BLOSC_CNAMES:
        compressor = {"id": "blosc", "cname": cname, "clevel": 5, "shuffle": 0, "blocksize": 0}
        add_v2(f"blosc-{cname}", compressor, blosc_bomb(cname))
    add_v2("lz4", {"id": "lz4", "acceleration": 1}, lz4_bomb())
    add_v2("bz2", {"id": "bz2", "level": 1}, concatenated_bomb(bz2.compress))
    add_v2("lzma", {"id": "lzma"}, xz_chunk)
    add_v2("shuffle-zlib", {"id": "zlib", "level": 1}, zlib_chunk,
           filters=[{"id": "shuffle", "elementsize": 8}])
    # variable-length chunks decode to at most 32 MiB + 256 bytes per item (a million items
    # may take 290 MB: too much for this child), so only 10x10 ones here
    add_v2("vlen", {"id": "zlib", "level": 1}, zlib_chunk, dtype="|O",
           filters=[{"id": "vlen-utf8"}], big=False)

    gzip_codec = {"name": "gzip", "configuration": {"level": 1}}
    add_v3("gzip", [LITTLE, gzip_codec], gzip_chunk)
    add_v3("zstd", [LITTLE, {"name": "zstd", "configuration": {"level": 0}}],
           zstd_bomb(declare_size=False))
    add_v3("blosc", [LITTLE, {"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 5, "shuffle": "noshuffle", "typesize": 8, "blocksize": 0}}],
        blosc_bomb("zstd"))
    add_v3("crc-gzip", [LITTLE, gzip_codec, {"name": "crc32c"}],
           gzip_chunk + struct.pack("<I", crc32c.crc32c(gzip_chunk)))
    add_v3("lzma", [LITTLE, {"name": "numcodecs.lzma", "configuration": {}}], xz_chunk)
    add_v3("vlen", [{"name": "vlen-utf8"}, gzip_codec], gzip_chunk, data_type="string",
           big=False)
    # shards of 10x10 holding four 5x5 inner chunks, the first one a bomb
    add_v3("shard", _sharded_codecs([gzip_codec]), _shard([gzip_chunk, None, None, None]),
           big=False)
    add_v3("shard-zstd", _sharded_codecs([{"name": "zstd", "configuration": {"level": 0}}]),
           _shard([zstd_bomb(), None, None, None]), big=False)
    # an index that points far past the shard's end and claims a huge inner chunk
    add_v3("shard-index", _sharded_codecs([gzip_codec]),
           _shard([b"x"], [(2**62, 2**62), (0, 1), (2**64 - 1,) * 2, (2**64 - 1,) * 2]),
           big=False)

    outcomes = _read_in_child([(root, name, "read") for root, name in keys.values()])
    return {f"{root.name[:2]}:{name}": (key, outcome)
            for (key, (root, name)), outcome in zip(keys.items(), outcomes, strict=True)}


def _bomb_cases() -> list[str]:
    v2 = ["zlib", "gzip", "zstd", "zstd-nosize", *(f"blosc-{c}" for c in BLOSC_CNAMES), "lz4",
          "bz2", "lzma", "shuffle-zlib"]
    v3 = ["gzip", "zstd", "blosc", "crc-gzip", "lzma"]
    big = [f"v2:{n}-big" for n in v2] + [f"v3:{n}-big" for n in v3]
    v2.append("vlen")
    v3.append("vlen")
    sharded = ["v3:shard", "v3:shard-zstd", "v3:shard-index"]
    return [f"v2:{n}" for n in v2] + [f"v3:{n}" for n in v3] + big + sharded


@pytest.mark.parametrize("case", _bomb_cases())
def test_a_bomb_is_refused_naming_its_chunk_in_bounded_memory(bombs: dict[str, Any], case: str) -> None:
    key, outcome = bombs[case]
    assert outcome.get("nczarr"), outcome
    assert outcome["error"] == "CodecError", outcome
    assert repr(key) in outcome["message"], outcome
    if case.endswith(("-big", ":vlen")) or case == "v3:shard-zstd":
        assert "bytes expected" in outcome["message"], outcome  # the codec's own limit
    if case == "v3:shard-index":
        assert "shard index entry (0, 0) claims" in outcome["message"], outcome
    assert outcome["rss_mb"] < MAX_RSS_MB, outcome


# --- chunk shapes far beyond the array ----------------------------------------------------

HUGE = 10**9


def test_chunks_far_larger_than_the_array_read_and_write_in_bounded_memory(tmp_path: Path) -> None:
    """shape 10, chunks 10**9: an absent chunk reads as fill, a stored one (the full chunk,
    compressed, as zarr-python writes it) and any write are refused, naming the chunk."""
    v2, v3 = tmp_path / "v2", tmp_path / "v3"
    full_chunk = zlib_bomb(8 * HUGE)  # 10**9 float64 zeros: what a writer of it stores
    zlib_v2 = {"id": "zlib", "level": 1}
    zlib_v3 = [LITTLE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]
    huge = {"shape": (10,), "chunks": (HUGE,)}
    stored = [_v2_array(v2, "stored", zlib_v2, full_chunk, **huge),
              _v3_array(v3, "stored", zlib_v3, full_chunk, **huge)]
    for root, make in ((v2, _v2_array), (v3, _v3_array)):
        for name in ("absent", "written"):
            make(root, name, zlib_v2 if root == v2 else zlib_v3, None, **huge)  # type: ignore[operator]
        make(root, "raw", None if root == v2 else [LITTLE], None, **huge)  # type: ignore[operator]
    cases = [(v2, "stored", "read"), (v3, "stored", "read")]
    for root in (v2, v3):
        cases += [(root, "absent", "read"), (root, "written", "write"), (root, "raw", "write")]
    outcomes = _read_in_child(cases)
    for (root, name, _action), outcome in zip(cases, outcomes, strict=True):
        assert outcome["rss_mb"] < MAX_RSS_MB, outcome
        if name == "absent":
            assert outcome["values"] == [0.0] * 10, outcome
            continue
        assert outcome["error"] == "ChunkTooLargeError" and outcome["nczarr"], outcome
        key = stored[0] if root == v2 else stored[1]
        assert repr(key.replace("stored", name)) in outcome["message"], outcome
    for root in (v2, v3):  # the refused writes stored nothing
        assert not any(p.is_file() and p.name not in (".zarray", "zarr.json")
                       for p in (root / "written").rglob("*"))


def test_shards_far_larger_than_the_array_are_read_in_part(tmp_path: Path) -> None:
    """shape 10, shards of 2**27 float64 (1 GiB) in inner chunks of 2**16: only the shard
    index and the inner chunk inside the array are read. Inner chunks of 10 in a shard of
    10**9 would need an index of 1.6 GB: refused. Writes are refused."""
    inner = 2**16
    first = np.zeros(inner)
    first[:10] = np.arange(10)
    shard = _shard([zlib.compress(first.tobytes()), *([None] * (2**27 // inner - 1))])
    gzip_codec = [{"name": "gzip", "configuration": {"level": 1}}]
    key = _v3_array(tmp_path, "part", _sharded_codecs(gzip_codec, (inner,)), shard,
                    shape=(10,), chunks=(2**27,))
    _v3_array(tmp_path, "tiny-inner", _sharded_codecs(gzip_codec, (10,)), b"\0" * 64,
              shape=(10,), chunks=(HUGE,))
    cases = [(tmp_path, "part", "read"), (tmp_path, "tiny-inner", "read"),
             (tmp_path, "part", "write")]
    read, tiny, write = _read_in_child(cases)
    assert read["values"] == list(range(10)) and read["rss_mb"] < MAX_RSS_MB, read
    assert tiny["error"] == "ChunkTooLargeError" and "'tiny-inner/c/0'" in tiny["message"], tiny
    assert write["error"] == "ChunkTooLargeError" and repr(key) in write["message"], write
    assert tiny["rss_mb"] < MAX_RSS_MB and write["rss_mb"] < MAX_RSS_MB


def test_huge_chunk_arithmetic_does_not_overflow() -> None:
    """Chunk and grid sizes beyond int64 are Python ints: a clear error, not OverflowError."""
    array = create_array(MemoryStore(), zarr_format=3, shape=(10, 10), chunks=(2**31, 2**31),
                         dtype="f8")  # 2**65 bytes a chunk
    assert array.nchunks == 1
    assert np.all(array[:] == 0)
    with pytest.raises(ChunkTooLargeError, match=r"chunk 'c/0/0'.*refused"):
        array[0, 0] = 1.0
    wide = create_array(MemoryStore(), zarr_format=2, shape=(2**31, 2**31), chunks=(1, 2),
                        dtype="u1")
    assert wide.nchunks == 2**61 and wide.size == 2**62


def test_a_chunk_shape_inside_the_array_is_not_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit concerns chunk shapes beyond the array's: an edge chunk mostly outside an
    array whose other chunks are as big is read and written as usual."""
    monkeypatch.setattr(nczarr.zarr.array, "CHUNK_MEMORY_FLOOR", 2**20)
    chunk = 4 * 2**20  # four times the floor
    array = create_array(MemoryStore(), zarr_format=3, shape=(2 * chunk + 1,), chunks=(chunk,),
                         dtype="u1", compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    array[-1] = 7
    array.flush()
    assert open_array(array.store)[-1] == 7
    beyond = create_array(MemoryStore(), zarr_format=3, shape=(chunk // 20,), chunks=(chunk,),
                          dtype="u1")
    with pytest.raises(ChunkTooLargeError, match="for at most 209715 bytes inside the array"):
        beyond[-1] = 7
    beyond.resize(chunk // 16)  # now a sixteenth of the chunk is inside: allowed
    beyond[-1] = 7
    assert beyond[-1] == 7


# --- the decoding limits themselves, in process ----------------------------------------------

SPEC = ChunkSpec((10, 10), np.dtype("f8"), 0.0)


@pytest.mark.parametrize("chain, encoded", [
    ([LITTLE, {"name": "gzip", "configuration": {"level": 1}}], zlib.compress(bytes(792))),
    ([LITTLE, {"name": "zstd", "configuration": {"level": 0}}], zstd_bomb(792)),
    ([LITTLE, {"name": "zstd", "configuration": {"level": 0}}], zstd_bomb(792, declare_size=False)),
    ([LITTLE, {"name": "blosc", "configuration": {"cname": "lz4"}}],
     bytes(Blosc("lz4").encode(bytes(792)))),
    ([LITTLE, {"name": "numcodecs.bz2", "configuration": {"level": 1}}], bz2.compress(bytes(792))),
    ([LITTLE, {"name": "numcodecs.lz4", "configuration": {}}], bytes(LZ4().encode(bytes(792)))),
])
def test_too_little_output_is_refused_naming_the_codec(chain: list[dict[str, Any]], encoded: bytes) -> None:
    name = chain[-1]["name"]
    with pytest.raises(CodecError, match=rf"codec '{name}'.*792.*800|codec '{name}'.*800.*792"):
        pipeline_from_v3(chain, SPEC).decode(encoded)


@pytest.mark.parametrize("compressor, encoded", [
    ({"id": "zlib", "level": 1}, zlib.compress(bytes(808))),
    ({"id": "zstd", "level": 1}, zstd_bomb(808)),
    ({"id": "zstd", "level": 1}, zstd_bomb(808, declare_size=False)),
    ({"id": "blosc", "cname": "zstd"}, bytes(Blosc("zstd").encode(bytes(808)))),
    ({"id": "lzma"}, lzma.compress(bytes(808))),
    ({"id": "lz4"}, bytes(LZ4().encode(bytes(808)))),
])
def test_too_much_output_is_refused_naming_the_codec(compressor: dict[str, Any], encoded: bytes) -> None:
    with pytest.raises(CodecError, match=rf"codec 'numcodecs.{compressor['id']}'.*800"):
        pipeline_from_v2(None, compressor, SPEC).decode(encoded)


def test_compressed_chunks_of_the_right_size_still_decode() -> None:
    values = np.arange(100, dtype="f8").reshape(10, 10)
    for compressor in ({"id": "zlib"}, {"id": "gzip"}, {"id": "zstd"}, {"id": "bz2"},
                       {"id": "lzma"}, {"id": "lz4"}, {"id": "blosc", "cname": "zlib"}):
        pipeline = pipeline_from_v2([{"id": "shuffle", "elementsize": 8}], compressor, SPEC)
        assert np.array_equal(pipeline.decode(pipeline.encode(values)), values)
    # bz2 and xz readers accept concatenated streams, as numcodecs does
    two = bz2.compress(bytes(400)) + bz2.compress(bytes(400))
    assert not pipeline_from_v2(None, {"id": "bz2"}, SPEC).decode(two).any()


def test_a_stored_value_larger_than_any_chunk_is_refused_unread() -> None:
    array = create_array(MemoryStore(), zarr_format=2, shape=(10, 10), chunks=(10, 10),
                         dtype="f8", compressor={"id": "zlib", "level": 1})
    array.store.set("0.0", bytes(10 * 2**20))
    with pytest.raises(CodecError, match=r"chunk '0.0'.*more than \d+ bytes"):
        array[:]


def test_a_remote_store_fetches_no_more_of_a_stored_value_than_a_chunk_can_be(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Remote stores read chunks in batches; a hostile 10 MB value as the chunk of a 10x10
    array must not be downloaded whole before it is refused."""
    import fsspec

    from nczarr.store import FsspecStore

    url = f"memory://bombs-{os.getpid()}"
    array = create_array(FsspecStore(url), zarr_format=2, shape=(10, 30), chunks=(10, 10),
                         dtype="f8", compressor={"id": "zlib", "level": 1})
    array[:] = 1.0
    array.store.set("0.1", bytes(10 * 2**20))
    fetched: list[int] = []
    filesystem = type(fsspec.filesystem("memory"))
    cat_ranges = filesystem.cat_ranges

    def counting(self: Any, *args: Any, **kwargs: Any) -> list[Any]:
        values = cat_ranges(self, *args, **kwargs)
        fetched.extend(len(v) for v in values if isinstance(v, bytes))
        return values

    monkeypatch.setattr(filesystem, "cat_ranges", counting)
    try:
        with pytest.raises(CodecError, match=r"chunk '0.1'.*more than \d+ bytes"):
            open_array(FsspecStore(url))[:]
        assert fetched and max(fetched) < 2**20
    finally:
        fsspec.filesystem("memory").rm(url, recursive=True)


def test_vlen_chunks_are_bounded_and_too_big_ones_are_not_written() -> None:
    spec = ChunkSpec((2,), np.dtype(object), "")
    pipeline = pipeline_from_v3([{"name": "vlen-utf8"}], spec)
    with pytest.raises(CodecError, match="at most"):
        pipeline.encode(np.array(["x" * 40 * 2**20, "y" * 40 * 2**20], dtype=object))
    # a header counting four billion items is refused before numcodecs allocates them
    with pytest.raises(CodecError, match="4294967295 items, expected 2"):
        pipeline.decode(b"\xff\xff\xff\xff")
