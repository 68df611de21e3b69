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
import threading
import zlib
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

    def decode(self, data: Buffer, out: np.ndarray | None = None) -> memoryview:
        """Every block: the whole decoded chunk, into ``out`` (a writable, contiguous uint8
        array of ``nbytes``: the chunk's place in a result) when given."""
        view = byte_view(data)
        if out is None:
            out = np.empty(self.nbytes, dtype=np.uint8)
        elif out.nbytes != self.nbytes:
            raise self._error(f"it holds {self.nbytes} bytes, the chunk's place {out.nbytes}")
        if self.flags & _MEMCPYED:
            out[:] = np.frombuffer(view, dtype=np.uint8, count=self.nbytes, offset=HEADER_NBYTES)
        elif self.nbytes:
            self._blocks(view, 0, self.nblocks, out)
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
        # a shuffled block stays shuffled: the few elements asked are gathered from its
        # planes (a point of a chunk of one block of 415 KB: no unshuffle of the block)
        shuffled = bool(self.flags & _DOSHUFFLE) and self.typesize > 1
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
                    self._blocks(view, index, index + 1, block, unshuffle=False)
                start = offset - index * self.blocksize
                take = min(end - offset, len(block) - start)
                if shuffled:
                    out[position : position + take] = _unshuffled_bytes(block, self.typesize, start, take)
                else:
                    out[position : position + take] = block[start : start + take]
                position += take
                offset += take
        return byte_view(out)

    def _check_range(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > self.nbytes:
            raise self._error(f"bytes {offset}..{offset + length} asked of a chunk of {self.nbytes}")

    def _blocks(self, view: memoryview, first: int, stop: int, dest: np.ndarray, unshuffle: bool = True) -> None:
        """Decode blocks ``first`` to ``stop - 1`` into ``dest``, a uint8 array of their size
        (with ``unshuffle`` False, a shuffled block is left shuffled: its planes one after
        the other). Unshuffled, the planes go straight into ``dest``; shuffled, each plane goes, as it is
        decoded, as a stored stream into a blosc frame of those blocks (``_stored_frame``),
        which the blosc library unshuffles into ``dest`` (its SIMD unshuffle: 4.2 ms for 50
        chunks of 415 KB against 7.4 ms for numpy's strided copies, one core). One loop over
        the streams, no list of planes: the Python work per stream is most of what is not
        inflating on a chunk of small planes."""
        library = fastzlib.decompressor() if self.flags >> 5 == _ZLIB else None
        shuffled = unshuffle and bool(self.flags & _DOSHUFFLE) and self.typesize > 1
        frame_end = len(view)
        unpack_length = _LENGTH.unpack_from
        if shuffled:
            scratch, starts, cbytes = self._unshuffle_frame(first, stop, dest.nbytes)
            target = memoryview(scratch)
            pack_length = _LENGTH.pack_into
            out = starts[0] if starts else 0
        else:
            target = byte_view(dest)
            out = 0
        for index in range(first, stop):
            size = min(self.blocksize, self.nbytes - index * self.blocksize)
            nsplits = self._nsplits(size)
            plane = size // nsplits
            if plane * nsplits != size:
                raise self._error(f"block {index} of {size} bytes does not split into {nsplits} planes")
            position = self.starts[index]
            for _ in range(nsplits):
                if position + 4 > frame_end:
                    raise self._error(f"block {index} runs past the end of the frame")
                (length,) = unpack_length(view, position)
                position += 4
                if length < 0 or length > frame_end - position:
                    raise self._error(f"a stream of block {index} claims {length} bytes")
                if length == plane:  # stored as is
                    piece: Buffer = view[position : position + length]
                else:
                    piece = self._inflate(view[position : position + length], plane, library)
                    if len(piece) != plane:
                        raise self._error(f"a stream of block {index} decodes to {len(piece)} bytes, not {plane}")
                position += length
                if shuffled:
                    pack_length(scratch, out, plane)
                    out += 4
                target[out : out + plane] = piece
                out += plane
        if shuffled:
            try:
                _decode_stored(scratch, cbytes, dest)
            except CodecError as e:
                raise self._error(str(e)) from None

    def _nsplits(self, size: int) -> int:
        """How many streams a block of ``size`` bytes is stored as: its ``typesize`` byte
        planes when it is split, else 1 (the whole block)."""
        split = (
            not self.flags & _DONT_SPLIT
            and self.typesize <= _MAX_SPLITS
            and size // self.typesize >= _MIN_SPLIT_NBYTES
            and size == self.blocksize
        )
        return self.typesize if split else 1

    def _unshuffle_frame(self, first: int, stop: int, nbytes: int) -> tuple[bytearray, list[int], int]:
        """The scratch frame of stored streams into which the planes of blocks ``first`` to
        ``stop - 1`` (``nbytes`` in all) are written for the blosc library to unshuffle:
        the buffer, where each block starts in it and its size."""
        flags = self.flags & (_DOSHUFFLE | _DONT_SPLIT)
        blocksize = self.blocksize
        if nbytes < blocksize:  # a short block alone: blosc wants it whole and unsplit
            flags, blocksize = flags | _DONT_SPLIT, nbytes
        starts = []
        position = HEADER_NBYTES + 4 * (stop - first)
        for index in range(first, stop):
            size = min(self.blocksize, self.nbytes - index * self.blocksize)
            starts.append(position)
            position += size + 4 * self._nsplits(size)
        return _stored_frame(flags, self.typesize, nbytes, blocksize, starts, position), starts, position

    def _inflate(self, stream: memoryview, size: int, library: fastzlib.DeflateLibrary | None) -> Buffer:
        code = self.flags >> 5
        try:
            if code == _ZLIB:
                return fastzlib.decompress(self.name, stream, size, library)
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


_LENGTH = struct.Struct("<i")


def _unshuffled_bytes(block: np.ndarray, typesize: int, start: int, take: int) -> np.ndarray:
    """Bytes ``start`` to ``start + take - 1`` of the unshuffled ``block`` (uint8), gathered
    from the block as blosc shuffled it: plane ``i`` holds byte ``i`` of each element, and
    the bytes past the last whole element stay as they are."""
    count = len(block) // typesize
    whole = count * typesize
    end = start + take
    pieces = []
    if start < whole:
        first, stop = start // typesize, -(-min(end, whole) // typesize)
        elements = block[:whole].reshape(typesize, count)[:, first:stop].T.ravel()
        pieces.append(elements[start - first * typesize : min(end, whole) - first * typesize])
    if end > whole:
        pieces.append(block[max(start, whole) : end])
    return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


def _stored_frame(flags: int, typesize: int, nbytes: int, blocksize: int, starts: list[int], cbytes: int) -> bytearray:
    """This thread's scratch buffer (a fresh one faults in every page), of at least
    ``cbytes``, holding the header and block offsets of a blosc frame whose streams are all
    stored as they are (compressor code 0; a stream as long as its block or plane is
    stored): the caller writes each stream, its int32 length first, at its block's start."""
    scratch = getattr(_scratch, "frame", None)
    if scratch is None or len(scratch) < cbytes:
        scratch = bytearray(cbytes)
        if cbytes <= _MAX_SCRATCH:  # a thread keeps no more than this between chunks
            _scratch.frame = scratch
    _HEADER.pack_into(scratch, 0, 2, 1, flags, typesize, nbytes, blocksize, cbytes)
    struct.pack_into(f"<{len(starts)}i", scratch, HEADER_NBYTES, *starts)
    return scratch


def _decode_stored(scratch: bytearray, cbytes: int, dest: np.ndarray) -> None:
    """The blosc library copies and unshuffles the stored frame in ``scratch`` into ``dest``
    with its SIMD unshuffle (on the calling thread, the GIL released, in a pool thread; see
    compress._blosc_threads)."""
    import numcodecs.blosc

    try:
        numcodecs.blosc.decompress(memoryview(scratch)[:cbytes], dest)
    except Exception as e:  # numcodecs raises RuntimeError
        raise CodecError(f"the blosc library does not unshuffle it ({e})") from None


#: Per thread, the buffer in which a frame of stored streams is laid out, when at most
#: _MAX_SCRATCH bytes.
_scratch = threading.local()
_MAX_SCRATCH = 64 * 1024 * 1024
#: The elements of a block when ``unshuffle`` unshuffles numcodecs' layout.
_UNSHUFFLE_BLOCK = 128 * 1024
#: What blosc 1 takes: an element of at most 255 bytes, a buffer below 2 GiB.
MAX_TYPESIZE = 255
MAX_NBYTES = 2**31 - 1 - 2 * HEADER_NBYTES


def unshuffle(planes: np.ndarray, typesize: int, dest: np.ndarray) -> None:
    """numcodecs' (and HDF5's) byte unshuffle: ``planes`` (uint8) holds byte ``i`` of every
    element in its plane ``i``; ``dest`` (contiguous uint8 of the same size, a whole number
    of ``typesize`` elements, at most MAX_TYPESIZE and MAX_NBYTES) gets the elements. The
    planes go, cut in blocks of elements, as the stored blocks of a blosc frame (one numpy
    copy of contiguous runs), and the blosc library unshuffles them: 50 chunks of 415 KB in
    2.5 ms against 8.6 ms for numpy's strided copy of each plane."""
    count = planes.size // typesize
    if not count:
        return
    per_block = min(max(1, _UNSHUFFLE_BLOCK // typesize), count)
    blocksize = per_block * typesize
    full, rest = divmod(count, per_block)
    nblocks = full + (1 if rest else 0)
    first = HEADER_NBYTES + 4 * nblocks
    starts = [first + k * (4 + blocksize) for k in range(nblocks)]
    cbytes = first + full * (4 + blocksize) + (4 + rest * typesize if rest else 0)
    # DONT_SPLIT: each block is one stream, its elements' planes one after the other
    scratch = _stored_frame(_DOSHUFFLE | _DONT_SPLIT, typesize, planes.size, blocksize, starts, cbytes)
    buffer = np.frombuffer(scratch, dtype=np.uint8, count=cbytes)
    byplane = planes.reshape(typesize, count)
    blocks = buffer[first : first + full * (4 + blocksize)].reshape(full, 4 + blocksize)
    blocks[:, :4] = np.frombuffer(_LENGTH.pack(blocksize), dtype=np.uint8)
    blocks[:, 4:].reshape(full, typesize, per_block)[...] = (
        byplane[:, : full * per_block].reshape(typesize, full, per_block).transpose(1, 0, 2)
    )
    if rest:
        position = first + full * (4 + blocksize)
        _LENGTH.pack_into(scratch, position, rest * typesize)
        buffer[position + 4 :].reshape(typesize, rest)[...] = byplane[:, full * per_block :]
    _decode_stored(scratch, cbytes, dest)


_L1 = 32 * 1024
_MAX_BLOCKSIZE = 1 << 28
#: c-blosc 1's block size factor per compression level, for zlib (a codec "for high
#: compression ratios", whose blocks are twice as large).
_LEVEL_FACTORS = {1: 0.5, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 8, 8: 8, 9: 16}
_HIGHEST_LEVEL = 9


def zlib_blocksize(nbytes: int, typesize: int, clevel: int, forced: int = 0) -> int:
    """The block size of a zlib frame: ``forced`` as c-blosc 1 takes it
    (``compute_blocksize``); automatic, the block c-blosc picks at its highest level (1 MiB
    for elements of 4 bytes or more: a chunk up to that size is one block), a little smaller
    so that the chunk is a whole number of blocks (at most twice as many) when its elements
    allow it. Every reader takes the block size from the frame's header.

    Large blocks: each block costs a reader a few Python steps and a release of the GIL per
    plane whatever its size (50 slab chunks of 415 KB decode in 10.3 ms of CPU as one block
    each, 13.4 ms as four blocks of 104 KB), and the fewer releases a chunk needs, the
    better threads share the GIL. What it costs: a read of a few elements of a chunk decodes
    the whole block that holds them. Whole blocks: blosc never splits the short last block
    into byte planes, and deflated whole, its exponent bytes and noise inflate 3 times
    slower than as planes."""
    blocksize = _cblosc_blocksize(nbytes, typesize, clevel if forced else _HIGHEST_LEVEL, forced)
    count, odd = divmod(nbytes, typesize)
    if forced or odd or not nbytes % blocksize or typesize > _MAX_SPLITS:
        return blocksize
    fewest = -(-nbytes // blocksize)
    for nblocks in range(fewest, 2 * fewest + 1):
        if not count % nblocks and count // nblocks >= _MIN_SPLIT_NBYTES:
            return count // nblocks * typesize
    return blocksize


def _cblosc_blocksize(nbytes: int, typesize: int, clevel: int, forced: int) -> int:
    """The block size c-blosc 1 chooses for a zlib frame (``compute_blocksize``)."""
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


#: A plane that compresses more than this many times is mostly long runs of one byte (the
#: exponent byte of a smooth float field). ISA-L and libdeflate code a run as copies at
#: distance 1, which every inflater copies byte by byte (70 us for 32 KB, 4 times an
#: incompressible plane); the standard zlib at level 1 codes it so that it inflates in 4 us,
#: and compresses such a plane fast: the engine benchmark's blosc slab array compresses 14 %
#: slower, 0.2 % bigger, and inflates 2.2 times faster.
_RUNS_RATIO = 32


def encode_zlib(data: Buffer, typesize: int, clevel: int, shuffle: bool, forced_blocksize: int = 0) -> bytes:
    """``data`` as a blosc 1 frame of zlib streams at ``clevel`` (1-9), byte-shuffled or not,
    laid out as c-blosc lays it out, the streams deflated by the fast deflate library
    (``fastzlib``: ISA-L at levels 1-3), those of long runs by the standard zlib at level 1
    (``_RUNS_RATIO``). Every blosc 1 reader decodes it. Needs at least
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
            if len(packed) * _RUNS_RATIO < plane:
                packed = zlib.compress(byte_view(stream), 1)
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
    """Blosc's byte shuffle of one block into ``dest``: plane ``i`` holds byte ``i`` of each
    element; the bytes past the last whole element stay as they are."""
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
