"""Bytes-to-bytes codecs implemented here for speed: zlib, gzip, zstd, blosc, shuffle and
crc32c. Each serves its v3 name and, where numcodecs has the same codec, the v2 id and the
``numcodecs.*`` v3 name. The compressors run in C with the GIL released, so an Array's
thread pool compresses chunks in parallel; zlib and gzip go through the fastest deflate
library installed (``fastzlib``)."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from nczarr import config
from nczarr.errors import CodecError
from nczarr.zarr.chunkspec import Buffer, ChunkData, ChunkSpec
from nczarr.zarr.codecs import bloscframe, fastzlib
from nczarr.zarr.codecs.base import (
    Codec,
    Kind,
    as_buffer,
    byte_view,
    missing_package,
    nbytes,
    output_limit,
    register,
    too_much_output,
)

if TYPE_CHECKING:  # numcodecs is imported when a codec needs it: commands start faster
    from numcodecs.blosc import Blosc
    from numcodecs.zstd import Zstd

logger = logging.getLogger(__name__)

@dataclass(frozen=True, kw_only=True)
class ZlibCodec(Codec):
    """``zlib`` (netcdf-c's v3 name), ``numcodecs.zlib`` and v2 ``zlib``: a zlib stream."""

    name: str = "numcodecs.zlib"
    level: int = 1

    KIND: ClassVar[Kind] = "bytes->bytes"
    MIN_LEVEL: ClassVar[int] = -1  # zlib's "default level"

    def __post_init__(self) -> None:
        self.check_int("level", self.level, self.MIN_LEVEL, 9)

    #: Whether the stream has a gzip header (else zlib's); decoding accepts either.
    GZIP: ClassVar[bool] = False

    def encode(self, data: ChunkData, spec: ChunkSpec) -> Buffer:
        return fastzlib.compress(as_buffer(data), self.level, self.GZIP)

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> Buffer:
        return fastzlib.decompress(self.name, as_buffer(data), output_limit(spec, max_size))


@dataclass(frozen=True, kw_only=True)
class GzipCodec(ZlibCodec):
    """``gzip`` (v3), ``numcodecs.gzip`` and v2 ``gzip``: a gzip stream, header included, as
    zarr-python writes it."""

    name: str = "gzip"
    level: int = 5

    MIN_LEVEL: ClassVar[int] = 0
    GZIP: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class ZstdCodec(Codec):
    """``zstd`` (v3), ``numcodecs.zstd`` and v2 ``zstd``."""

    name: str = "zstd"
    level: int = 0
    checksum: bool = False
    impl: Zstd | None = field(default=None, repr=False, compare=False)

    KIND: ClassVar[Kind] = "bytes->bytes"

    def __post_init__(self) -> None:
        self.check_int("level", self.level, -131072, 22)
        if not isinstance(self.checksum, bool):
            raise self.bad_parameter("checksum", self.checksum, "true or false")
        from numcodecs.zstd import Zstd

        object.__setattr__(self, "impl", Zstd(level=self.level, checksum=self.checksum))

    def encode(self, data: ChunkData, spec: ChunkSpec) -> bytes:
        assert self.impl is not None, "set by __post_init__"
        encoded: bytes = self.impl.encode(data)
        return encoded

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> memoryview:
        limit = output_limit(spec, max_size)
        declared = _zstd_content_size(byte_view(data))
        if declared is not None and declared > limit:
            raise too_much_output(self.name, limit)
        # numcodecs decodes into a given buffer without growing it, and raises when the
        # frame produces more, or (without a declared size) less, than the buffer holds.
        out = np.empty(limit if declared is None else declared, dtype=np.uint8)
        import numcodecs.zstd

        try:
            numcodecs.zstd.decompress(data, out)
        except RuntimeError as e:
            message = str(e)
            if "too small" in message:
                raise too_much_output(self.name, limit) from None
            short = _ZSTD_SHORT.search(message)
            if short is None:
                raise
            raise CodecError(
                f"codec {self.name!r}: a frame without a declared size decoded to {short[1]} "
                f"bytes, not the {out.size} expected"
            ) from None
        return byte_view(out)


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: How numcodecs says a frame without a declared size decoded to less than its buffer.
_ZSTD_SHORT = re.compile(r"expected to decompress \d+, got (\d+)")


def _zstd_content_size(data: memoryview) -> int | None:
    """The decompressed size the first zstd frame header declares, or None (no size, or
    not a plain frame: the decoder then says what is wrong)."""
    if data.nbytes < 6 or data[:4] != _ZSTD_MAGIC:
        return None
    descriptor = data[4]
    single_segment = (descriptor >> 5) & 1
    width = (single_segment, 2, 4, 8)[descriptor >> 6]
    if not width:
        return None
    start = 5 + (1 - single_segment) + (0, 1, 2, 4)[descriptor & 3]  # window, dictionary id
    if data.nbytes < start + width:
        return None
    return int.from_bytes(data[start : start + width], "little") + (256 if width == 2 else 0)


_BLOSC_CNAMES = ("blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd")
BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
_AUTOSHUFFLE = -1


@dataclass(frozen=True, kw_only=True)
class BloscCodec(Codec):
    """``blosc`` (v3: ``shuffle`` is a name, ``typesize`` and ``shuffle`` default from the
    dtype) and ``numcodecs.blosc`` / v2 ``blosc`` (numcodecs' form: ``shuffle`` is 0, 1, 2 or
    -1 for automatic, ``typesize`` optional). Defaults follow zarr-python and numcodecs."""

    name: str = "blosc"
    cname: str | None = None
    clevel: int = 5
    shuffle: str | int | None = None
    typesize: int | None = None
    blocksize: int = 0
    impl: Blosc | None = field(default=None, repr=False, compare=False)
    #: (typesize, byte shuffle) when ``bloscframe.encode_zlib`` writes the frames: zlib
    #: with byte shuffle or none, deflated by ISA-L (6 times the blosc library's speed at
    #: level 1, the same frames); None: the blosc library encodes.
    zlib_frames: tuple[int, bool] | None = field(default=None, repr=False, compare=False)

    KIND: ClassVar[Kind] = "bytes->bytes"

    @property
    def numcodecs_style(self) -> bool:
        """Whether the configuration is in numcodecs' form (v2 and ``numcodecs.blosc``)."""
        return self.name != "blosc"

    def __post_init__(self) -> None:
        if self.cname is None:
            object.__setattr__(self, "cname", "lz4" if self.numcodecs_style else "zstd")
        if self.cname not in _BLOSC_CNAMES:
            raise self.bad_parameter("cname", self.cname, f"one of {list(_BLOSC_CNAMES)}")
        self.check_int("clevel", self.clevel, 0, 9)
        self.check_int("blocksize", self.blocksize, 0)
        if self.typesize is not None:
            self.check_int("typesize", self.typesize, 1)
        if self.numcodecs_style:
            if self.shuffle is None:
                object.__setattr__(self, "shuffle", 1)
            if self.shuffle not in (_AUTOSHUFFLE, 0, 1, 2) or isinstance(self.shuffle, bool):
                raise self.bad_parameter("shuffle", self.shuffle, "0, 1, 2 or -1")
        elif self.shuffle is not None and self.shuffle not in BLOSC_SHUFFLES:
            raise self.bad_parameter("shuffle", self.shuffle, f"one of {list(BLOSC_SHUFFLES)}")

    def evolve(self, spec: ChunkSpec) -> BloscCodec:
        typesize = self.typesize or (1 if spec.dtype.hasobject else spec.dtype.itemsize)
        if self.numcodecs_style:
            # The JSON keeps what it said (older numcodecs rejects a typesize key); only the
            # compressor gets the element size, as numcodecs takes it from a typed buffer.
            shuffle = self.shuffle
            if shuffle == _AUTOSHUFFLE:
                shuffle = 2 if typesize == 1 else 1
            evolved = self
        else:
            name = self.shuffle or ("bitshuffle" if typesize == 1 else "shuffle")
            shuffle = BLOSC_SHUFFLES.index(name)
            evolved = replace(self, shuffle=name, typesize=typesize)
        from numcodecs.blosc import Blosc

        impl = Blosc(
            cname=self.cname, clevel=self.clevel, shuffle=shuffle,
            blocksize=self.blocksize, typesize=typesize,
        )
        ours = self.cname == "zlib" and self.clevel >= 1 and shuffle in (0, 1) and typesize <= _BLOSC_MAX_TYPESIZE
        return replace(evolved, impl=impl, zlib_frames=(typesize, shuffle == 1) if ours else None)

    def encode(self, data: ChunkData, spec: ChunkSpec) -> bytes:
        assert self.impl is not None, "a pipeline evolves its codecs"
        if self.zlib_frames is not None and nbytes(data) >= _BLOSC_MIN_NBYTES:
            typesize, shuffle = self.zlib_frames
            return bloscframe.encode_zlib(as_buffer(data), typesize, self.clevel, shuffle, self.blocksize)
        _blosc_threads()
        encoded: bytes = self.impl.encode(data)
        return encoded

    def _checked_frame(self, data: ChunkData, limit: int) -> memoryview:
        _blosc_threads()  # bloscframe unshuffles through the blosc library too
        view = byte_view(data)
        if view.nbytes < _BLOSC_HEADER_NBYTES:
            raise CodecError(f"codec {self.name!r}: {view.nbytes} bytes cannot hold a blosc header")
        # numcodecs allocates what the header declares before decoding: check it first
        if int.from_bytes(view[4:8], "little") > limit:
            raise too_much_output(self.name, limit)
        # blosc reads as many bytes as the header says the frame has, not the buffer's size
        if int.from_bytes(view[12:16], "little") > view.nbytes:
            raise CodecError(f"codec {self.name!r}: the blosc frame is truncated")
        return view

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> Buffer:
        assert self.impl is not None, "a pipeline evolves its codecs"
        view = self._checked_frame(data, output_limit(spec, max_size))
        # A zlib frame decodes faster block by block through libdeflate (bloscframe) than
        # in the blosc library, even with blosc's own threads on the main thread (a chunk of
        # 4 MB: 3.9 ms against 4.7 ms with 1 or 2 blosc threads; of 260 KB: 0.26 against 0.32).
        if view[2] >> 5 == _BLOSC_ZLIB:
            frame = bloscframe.parse(self.name, view)
            if frame is not None:
                return frame.decode(view)
        decoded: bytes = self.impl.decode(data)
        return decoded

    def decode_into(self, data: ChunkData, out: np.ndarray, limit: int) -> bool:
        """Decode a whole frame of ``limit`` bytes into ``out`` (writable, contiguous uint8 of
        that size); False when bloscframe does not serve the frame (then ``decode``)."""
        found = self._served_frame(data, limit)
        if found is None:
            return False
        frame, view = found
        frame.decode(view, out)
        return True

    def decode_ranges(self, data: ChunkData, ranges: Sequence[tuple[int, int]], limit: int) -> memoryview | None:
        """The decoded bytes of ``ranges`` ((offset, length) of the decoded chunk of ``limit``
        bytes) one after the other, decoding only the blosc blocks they touch; None when
        bloscframe does not serve the frame (then ``decode`` does the whole chunk)."""
        found = self._served_frame(data, limit)
        if found is None:
            return None
        frame, view = found
        return frame.decode_ranges(view, ranges)

    def _served_frame(self, data: ChunkData, limit: int) -> tuple[bloscframe.BloscFrame, memoryview] | None:
        """The frame of a chunk of ``limit`` bytes when bloscframe decodes it, and its bytes."""
        view = self._checked_frame(data, limit)
        frame = bloscframe.parse(self.name, view)
        if frame is None:
            return None
        if frame.nbytes != limit:
            raise CodecError(f"codec {self.name!r}: the blosc frame holds {frame.nbytes} bytes, a chunk {limit}")
        return frame, view


#: Blosc 1's code of zlib in a frame's flags (flags >> 5).
_BLOSC_ZLIB = 3
#: c-blosc stores smaller buffers as they are; its largest element size.
_BLOSC_MIN_NBYTES = 128
_BLOSC_MAX_TYPESIZE = 255
_blosc_nthreads: int | None = None


def _blosc_threads() -> None:
    """Blosc's own threads follow ``nczarr.config.threads()``: one per core of it (Blosc
    computes; it waits on no disk). They never add to the pool's: numcodecs
    (``blosc.use_threads`` None) runs Blosc on one thread when it is called from any thread
    but the main one, so only a chunk coded on the caller's thread (a single chunk, or
    ``threads=1``, then one thread) uses them."""
    global _blosc_nthreads
    wanted = max(1, config.threads() // config.THREADS_PER_CORE)
    if wanted != _blosc_nthreads:
        import numcodecs.blosc

        numcodecs.blosc.set_nthreads(wanted)
        _blosc_nthreads = wanted


#: A blosc 1 header: version, versionlz, flags, typesize, then uint32 nbytes (the decoded
#: size), blocksize and cbytes.
_BLOSC_HEADER_NBYTES = 16


@dataclass(frozen=True, kw_only=True)
class ShuffleCodec(Codec):
    """``numcodecs.shuffle`` and v2 ``shuffle``: byte *i* of every element goes to plane *i*
    (the HDF5 and numcodecs layout). An ``elementsize`` of 0 (what netcdf-c writes) or none
    means the dtype's item size; 1 leaves the data as is."""

    name: str = "numcodecs.shuffle"
    elementsize: int | None = None

    KIND: ClassVar[Kind] = "bytes->bytes"
    OVERHEAD: ClassVar[int | None] = 0

    def __post_init__(self) -> None:
        if self.elementsize is not None:
            self.check_int("elementsize", self.elementsize, 0)

    def evolve(self, spec: ChunkSpec) -> ShuffleCodec:
        if self.elementsize:
            return self
        return replace(self, elementsize=spec.dtype.itemsize)

    def _planes(self, data: Buffer, size: int) -> tuple[np.ndarray, int]:
        flat = np.frombuffer(data, dtype=np.uint8)
        if flat.size % size:
            raise CodecError(
                f"codec {self.name!r}: {flat.size} bytes are not a whole number of "
                f"{size}-byte elements"
            )
        return flat, flat.size // size

    # numcodecs' Shuffle holds the GIL and is slower than numpy's copies; one strided copy per
    # byte plane is faster than a single transposing copy. Decoding, the blosc library's
    # unshuffle is faster still (bloscframe.unshuffle).
    def encode(self, data: ChunkData, spec: ChunkSpec) -> Buffer:
        size = self.elementsize or 1
        if size == 1:
            return as_buffer(data)
        flat, count = self._planes(as_buffer(data), size)
        elements = flat.reshape(count, size)
        planes = np.empty((size, count), dtype=np.uint8)
        for i in range(size):
            planes[i] = elements[:, i]
        return byte_view(planes.reshape(-1))

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> Buffer:
        size = self.elementsize or 1
        if size == 1:
            return as_buffer(data)
        out = np.empty(nbytes(data), dtype=np.uint8)
        self.decode_into(as_buffer(data), out)
        return byte_view(out)

    def decode_into(self, data: Buffer, out: np.ndarray) -> None:
        """Unshuffle ``data`` into ``out`` (writable, contiguous uint8 of its size): through
        the blosc library's unshuffle (bloscframe.unshuffle) where blosc takes the element
        size and the buffer, else one strided numpy copy per byte plane."""
        size = self.elementsize or 1
        if out.nbytes != nbytes(data):
            raise CodecError(f"codec {self.name!r}: {nbytes(data)} bytes to unshuffle into {out.nbytes}")
        flat, count = self._planes(data, size)
        if size == 1:
            out[:] = flat
        elif size <= bloscframe.MAX_TYPESIZE and flat.size <= bloscframe.MAX_NBYTES:
            _blosc_threads()
            bloscframe.unshuffle(flat, size, out)
        else:
            elements, planes = out.reshape(count, size), flat.reshape(size, count)
            for i in range(size):
                elements[:, i] = planes[i]


def _crc32c_of_crc32c() -> Callable[[Buffer], int]:
    import crc32c  # optional: takes any contiguous buffer without a copy

    function: Callable[[Buffer], int] = crc32c.crc32c
    return function


def _crc32c_of_google_crc32c() -> Callable[[Buffer], int]:
    import google_crc32c  # a core dependency (zarr-python's too); its C function takes bytes only

    def value(data: Buffer) -> int:
        checksum: int = google_crc32c.value(data if isinstance(data, bytes) else bytes(data))
        return checksum

    return value


#: The CRC-32C implementations, by the package that provides them, in order of preference.
CRC32C_IMPLEMENTATIONS: dict[str, Callable[[], Callable[[Buffer], int]]] = {
    "crc32c": _crc32c_of_crc32c,
    "google-crc32c": _crc32c_of_google_crc32c,
}


@functools.cache
def _crc32c_function() -> Callable[[Buffer], int]:
    """The first CRC-32C implementation whose package is installed."""
    for package, load in CRC32C_IMPLEMENTATIONS.items():
        try:
            function = load()
        except ImportError:
            continue
        logger.debug("crc32c: using the %s package", package)
        return function
    raise missing_package("crc32c", "google-crc32c")  # the core dependency


@dataclass(frozen=True, kw_only=True)
class Crc32cCodec(Codec):
    """``crc32c``: appends the CRC-32C of the data as a little-endian uint32; decode checks it."""

    name: str = "crc32c"

    KIND: ClassVar[Kind] = "bytes->bytes"
    OVERHEAD: ClassVar[int | None] = 4
    OMIT_EMPTY_CONFIGURATION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _crc32c_function()  # fail when the array is opened, not on the first chunk

    @property
    def checksum_first(self) -> bool:
        """Whether the checksum precedes the data (numcodecs' ``location: "start"``)."""
        return False

    def encode(self, data: ChunkData, spec: ChunkSpec) -> bytes:
        payload = as_buffer(data)
        checksum = _crc32c_function()(payload).to_bytes(4, "little")
        return b"".join((checksum, payload) if self.checksum_first else (payload, checksum))

    def decode(self, data: ChunkData, spec: ChunkSpec, max_size: int | None = None) -> memoryview:
        view = byte_view(data)
        if view.nbytes < 4:
            raise CodecError(f"codec {self.name!r}: {view.nbytes} bytes cannot hold a checksum")
        payload, checksum = (view[4:], view[:4]) if self.checksum_first else (view[:-4], view[-4:])
        stored = int.from_bytes(checksum, "little")
        computed = _crc32c_function()(payload)
        if stored != computed:
            raise CodecError(
                f"codec {self.name!r}: checksum mismatch (stored {stored:#010x}, "
                f"computed {computed:#010x}); the data is corrupt"
            )
        return payload


@dataclass(frozen=True, kw_only=True)
class NumcodecsCrc32cCodec(Crc32cCodec):
    """``numcodecs.crc32c`` and v2 ``crc32c``: numcodecs' CRC32C, the checksum at the end (as
    ``crc32c``) or, with ``location: "start"``, before the data. Served here rather than by
    numcodecs, which offers it only with a CRC-32C package it chooses itself."""

    name: str = "numcodecs.crc32c"
    location: str | None = None

    OMIT_EMPTY_CONFIGURATION: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.location not in (None, "start", "end"):
            raise self.bad_parameter("location", self.location, '"start" or "end"')
        super().__post_init__()

    @property
    def checksum_first(self) -> bool:
        return self.location == "start"


register("zlib", ZlibCodec.from_config)
register("numcodecs.zlib", ZlibCodec.from_config)
register("gzip", GzipCodec.from_config)
register("numcodecs.gzip", GzipCodec.from_config)
register("zstd", ZstdCodec.from_config)
register("numcodecs.zstd", ZstdCodec.from_config)
register("blosc", BloscCodec.from_config)
register("numcodecs.blosc", BloscCodec.from_config)
register("numcodecs.shuffle", ShuffleCodec.from_config)
register("crc32c", Crc32cCodec.from_config)
register("numcodecs.crc32c", NumcodecsCrc32cCodec.from_config)
