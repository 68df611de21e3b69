"""Blosc 1 frames decoded block by block, here rather than by the blosc library: only the
blocks a selection touches (a point of a time series decodes one block of a chunk, as
TensorStore does), and zlib blocks through the fast deflate library (``fastzlib``).

A blosc 1 frame (what numcodecs, zarr-python, TensorStore and netcdf-c's blosc filter write)
is a 16-byte header (version, versionlz, flags, typesize, then little-endian uint32 nbytes,
blocksize and cbytes), then, unless the data is stored as is (flag 0x2), one int32 offset
per block, and per block one or ``typesize`` streams (the block is split into byte planes
when flag 0x10 is clear, the element has at most 16 bytes, a plane has at least 128 bytes
and the block is not the short last one), each an int32 length and that many bytes: a
stream of the frame's compressor, or the plane itself when the length equals its size. With
flag 0x1 each block is byte-shuffled (its trailing ``blocksize % typesize`` bytes are not).

Served: compressors zlib, zstd and lz4/lz4hc, with byte shuffle or none. Anything else
(bit shuffle, blosclz, snappy, a blosc 2 frame) returns None from :func:`parse`: the blosc
library decodes those chunks whole. Every offset and length is checked against the frame,
and every stream must decode to exactly its plane's size: a corrupt or hostile frame is a
CodecError, never a read outside it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import Buffer
from nczarr.zarr.codecs import fastzlib
from nczarr.zarr.codecs.base import byte_view

HEADER_NBYTES = 16
_HEADER = struct.Struct("<BBBBIII")
_DOSHUFFLE, _MEMCPYED, _DOBITSHUFFLE, _DONT_SPLIT = 0x1, 0x2, 0x4, 0x10
_MAX_SPLITS = 16
_MIN_SPLIT_NBYTES = 128
#: Blosc 1's compressor codes (flags >> 5) this module decodes.
_ZLIB, _ZSTD, _LZ4 = 3, 4, 1
_FORMATS = {_LZ4: "lz4", _ZLIB: "zlib", _ZSTD: "zstd"}


@dataclass(frozen=True)
class BloscFrame:
    """The header of one blosc 1 frame and the offsets of its blocks."""

    #: the codec's name, for errors
    name: str
    flags: int
    typesize: int
    nbytes: int
    blocksize: int
    cbytes: int
    #: where each block starts in the frame (empty when the data is stored as is)
    starts: tuple[int, ...]

    @property
    def nblocks(self) -> int:
        return -(-self.nbytes // self.blocksize) if self.nbytes else 0

    def _error(self, what: str) -> CodecError:
        return CodecError(f"codec {self.name!r}: corrupt blosc frame: {what}")

    def decode(self, data: Buffer) -> memoryview:
        """Every block: the whole decoded chunk."""
        view = byte_view(data)
        if self.flags & _MEMCPYED:
            return self.decode_ranges(view, [(0, self.nbytes)])
        out = np.empty(self.nbytes, dtype=np.uint8)
        for index in range(self.nblocks):
            start = index * self.blocksize
            self._block(view, index, out[start : start + self.blocksize])
        return byte_view(out)

    def decode_ranges(self, data: Buffer, ranges: Sequence[tuple[int, int]]) -> memoryview:
        """The decoded bytes of ``ranges`` ((offset, length) of the decoded chunk), one after
        the other, decoding each block they touch once."""
        view = byte_view(data)
        out = np.empty(sum(length for _, length in ranges), dtype=np.uint8)
        if self.flags & _MEMCPYED:
            position = 0
            for offset, length in ranges:
                self._check_range(offset, length)
                out[position : position + length] = view[HEADER_NBYTES + offset : HEADER_NBYTES + offset + length]
                position += length
            return byte_view(out)
        blocks: dict[int, np.ndarray] = {}
        position = 0
        for offset, length in ranges:
            self._check_range(offset, length)
            end = offset + length
            while offset < end:
                index = offset // self.blocksize
                block = blocks.get(index)
                if block is None:
                    size = min(self.blocksize, self.nbytes - index * self.blocksize)
                    block = blocks[index] = np.empty(size, dtype=np.uint8)
                    self._block(view, index, block)
                start = offset - index * self.blocksize
                take = min(end - offset, len(block) - start)
                out[position : position + take] = block[start : start + take]
                position += take
                offset += take
        return byte_view(out)

    def _check_range(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > self.nbytes:
            raise self._error(f"bytes {offset}..{offset + length} asked of a chunk of {self.nbytes}")

    def _block(self, view: memoryview, index: int, dest: np.ndarray) -> None:
        """Decode (and unshuffle) block ``index`` into ``dest``, a uint8 array of its size."""
        size = len(dest)
        short = size < self.blocksize
        split = (
            not self.flags & _DONT_SPLIT
            and self.typesize <= _MAX_SPLITS
            and size // self.typesize >= _MIN_SPLIT_NBYTES
            and not short
        )
        nsplits = self.typesize if split else 1
        plane = size // nsplits
        if plane * nsplits != size:
            raise self._error(f"block {index} of {size} bytes does not split into {nsplits} planes")
        shuffled = bool(self.flags & _DOSHUFFLE) and self.typesize > 1
        planes: list[np.ndarray] = []
        position = self.starts[index]
        for _ in range(nsplits):
            if position + 4 > len(view):
                raise self._error(f"block {index} runs past the end of the frame")
            (length,) = struct.unpack_from("<i", view, position)
            position += 4
            if length < 0 or length > len(view) - position:
                raise self._error(f"a stream of block {index} claims {length} bytes")
            stream = view[position : position + length]
            position += length
            piece = stream if length == plane else self._inflate(stream, plane)
            if len(piece) != plane:
                raise self._error(f"a stream of block {index} decodes to {len(piece)} bytes, not {plane}")
            planes.append(np.frombuffer(piece, dtype=np.uint8))
        if shuffled:
            _unshuffle(planes[0] if nsplits == 1 else planes, self.typesize, dest)
        else:
            for j, values in enumerate(planes):
                dest[j * plane : (j + 1) * plane] = values

    def _inflate(self, stream: memoryview, size: int) -> Buffer:
        code = self.flags >> 5
        try:
            if code == _ZLIB:
                return fastzlib.decompress(self.name, stream, size)
            if code == _ZSTD:
                import numcodecs.zstd

                out = np.empty(size, dtype=np.uint8)
                numcodecs.zstd.decompress(stream, out)
                return byte_view(out)
            import numcodecs.lz4

            # numcodecs' lz4 frame: the decoded size (int32, little-endian), then the block
            decoded: bytes = numcodecs.lz4.decompress(size.to_bytes(4, "little") + bytes(stream))
            return decoded
        except CodecError:
            raise
        except Exception as e:  # numcodecs raises RuntimeError and others
            raise self._error(f"a {_FORMATS[code]} stream does not decode ({e})") from None


def _unshuffle(planes: np.ndarray | list[np.ndarray], typesize: int, dest: np.ndarray) -> None:
    """Blosc's byte unshuffle of one block into ``dest``: plane ``i`` holds byte ``i`` of
    each element; the bytes past the last whole element are copied as they are. ``planes``:
    the block, or (a split block) its ``typesize`` planes. One strided copy per plane (a
    transposing copy takes five times as long)."""
    count = len(dest) // typesize
    whole = count * typesize
    elements = dest[:whole].reshape(count, typesize)
    if isinstance(planes, list):
        for i, values in enumerate(planes):
            elements[:, i] = values
        return
    for i in range(typesize):
        elements[:, i] = planes[i * count : (i + 1) * count]
    dest[whole:] = planes[whole:]


_L1 = 32 * 1024
_MAX_BLOCKSIZE = 1 << 28
#: c-blosc 1's block size factor per compression level, for zlib (a codec "for high
#: compression ratios", whose blocks are twice as large).
_LEVEL_FACTORS = {1: 0.5, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 8, 8: 8, 9: 16}


def zlib_blocksize(nbytes: int, typesize: int, clevel: int, forced: int = 0) -> int:
    """The block size c-blosc 1 chooses for a zlib frame (``compute_blocksize``): the same
    blocks as the blosc library, so readers that decode in part find what they expect."""
    if nbytes < typesize:
        return 1
    if forced:
        blocksize = min(max(forced, _MIN_SPLIT_NBYTES), _MAX_BLOCKSIZE)
    elif nbytes >= _L1:
        blocksize = int(_L1 * 2 * _LEVEL_FACTORS[clevel])
    else:
        blocksize = nbytes
    if typesize <= _MAX_SPLITS and blocksize // typesize >= _MIN_SPLIT_NBYTES:
        blocksize = min(max(min(blocksize, 1 << 18) * typesize, 1 << 16), 1 << 20)
    blocksize = min(blocksize, nbytes)
    if blocksize > typesize:
        blocksize = blocksize // typesize * typesize
    return blocksize


def encode_zlib(data: Buffer, typesize: int, clevel: int, shuffle: bool, forced_blocksize: int = 0) -> bytes:
    """``data`` as a blosc 1 frame of zlib streams at ``clevel`` (1-9), byte-shuffled or not,
    laid out as c-blosc lays it out, the streams deflated by the fast deflate library
    (``fastzlib``: ISA-L at levels 1-3). Every blosc 1 reader decodes it. Needs at least
    128 bytes (c-blosc stores less as is; the blosc library encodes those)."""
    raw = np.frombuffer(byte_view(data), dtype=np.uint8)
    nbytes = len(raw)
    blocksize = zlib_blocksize(nbytes, typesize, clevel, forced_blocksize)
    nblocks = -(-nbytes // blocksize)
    flags = (_ZLIB << 5) | (_DOSHUFFLE if shuffle else 0)
    if not (typesize <= _MAX_SPLITS and blocksize // typesize >= _MIN_SPLIT_NBYTES):
        flags |= _DONT_SPLIT
    pieces: list[Buffer] = []
    starts: list[int] = []
    position = HEADER_NBYTES + 4 * nblocks
    shuffled = np.empty(blocksize, dtype=np.uint8) if shuffle and typesize > 1 else None
    for index in range(nblocks):
        block = raw[index * blocksize : (index + 1) * blocksize]
        size = len(block)
        if shuffled is not None:
            block = _shuffle(block, typesize, shuffled[:size])
        split = not flags & _DONT_SPLIT and size == blocksize
        nsplits = typesize if split else 1
        plane = size // nsplits
        starts.append(position)
        for j in range(nsplits):
            stream = block[j * plane : (j + 1) * plane]
            packed = fastzlib.compress(byte_view(stream), clevel, False)
            if len(packed) >= plane:  # stored as is: a length equal to the plane's says so
                packed = stream.tobytes()
            pieces.append(struct.pack("<i", len(packed)))
            pieces.append(packed)
            position += 4 + len(packed)
    if position > HEADER_NBYTES + nbytes:  # as c-blosc: the data stored as is is smaller
        header = _HEADER.pack(2, 1, flags | _MEMCPYED, typesize, nbytes, blocksize, HEADER_NBYTES + nbytes)
        return header + raw.tobytes()
    header = _HEADER.pack(2, 1, flags, typesize, nbytes, blocksize, position)
    return b"".join([header, struct.pack(f"<{nblocks}i", *starts), *pieces])


def _shuffle(block: np.ndarray, typesize: int, dest: np.ndarray) -> np.ndarray:
    """Blosc's byte shuffle of one block into ``dest`` (the inverse of ``_unshuffle``)."""
    count = len(block) // typesize
    whole = count * typesize
    elements = block[:whole].reshape(count, typesize)
    for i in range(typesize):
        dest[i * count : (i + 1) * count] = elements[:, i]
    dest[whole:] = block[whole:]
    return dest


def parse(name: str, data: Buffer) -> BloscFrame | None:
    """The frame of ``data`` when this module decodes it (see the module's docstring), None
    when the blosc library must; a header that contradicts the frame is a CodecError."""
    view = byte_view(data)
    if len(view) < HEADER_NBYTES:
        raise CodecError(f"codec {name!r}: {len(view)} bytes cannot hold a blosc header")
    version, _, flags, typesize, nbytes, blocksize, cbytes = _HEADER.unpack_from(view)
    if version not in (1, 2) or flags & _DOBITSHUFFLE or ((flags >> 5) not in _FORMATS and not flags & _MEMCPYED):
        return None
    if cbytes > len(view) or typesize == 0:
        raise CodecError(f"codec {name!r}: corrupt blosc frame: the header does not match the data")
    if flags & _MEMCPYED:
        if HEADER_NBYTES + nbytes > len(view):
            raise CodecError(f"codec {name!r}: corrupt blosc frame: stored data is truncated")
        return BloscFrame(name, flags, typesize, nbytes, max(blocksize, 1), cbytes, ())
    if blocksize == 0:
        if nbytes:
            raise CodecError(f"codec {name!r}: corrupt blosc frame: a block size of 0")
        blocksize = 1
    nblocks = -(-nbytes // blocksize)
    if HEADER_NBYTES + 4 * nblocks > len(view):
        raise CodecError(f"codec {name!r}: corrupt blosc frame: the block table is truncated")
    starts = struct.unpack_from(f"<{nblocks}i", view, HEADER_NBYTES)
    if any(s < HEADER_NBYTES or s >= len(view) for s in starts):
        raise CodecError(f"codec {name!r}: corrupt blosc frame: a block starts outside it")
    return BloscFrame(name, flags, typesize, nbytes, blocksize, cbytes, starts)
