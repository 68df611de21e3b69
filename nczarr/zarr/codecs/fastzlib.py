"""zlib and gzip streams through the fastest deflate library installed.

The streams are ordinary zlib (RFC 1950) and gzip (RFC 1952): every reader decodes them,
whichever library wrote them. Measured on the benchmark data (float32 tiles after shuffle,
one core, level 1, 2026-11-28): the C zlib behind the standard library compresses 73-87
MB/s and decompresses 1,070 MB/s; ISA-L (``isal``) 800-990 and 640-780 MB/s at the same
ratio; libdeflate (``deflate``) 190 and 2,600-3,100 MB/s; zlib-ng (``zlib-ng``) 180-190 and
640 MB/s (a ratio 10 % worse). ISA-L and libdeflate are core dependencies (wheels for every
platform nczarr supports), so a plain install compresses with ISA-L and decompresses with
libdeflate; zlib-ng is used when asked for and installed. All release the GIL, so chunks
compress on every core. ``nczarr.config`` (``deflate``, or ``NCZARR_DEFLATE``) forces one.

Which library does what, when none is forced:

- compressing at levels 1-3: ISA-L at the same level (ISA-L's levels stop at 3; its level 1
  compresses as zlib's level 1 does); at levels 4-9 and -1 (zlib's default, 6): libdeflate
  at that level (its ratio at a level is at least zlib's); level 0 (stored blocks) and
  anything the fast libraries lack: the standard library;
- decompressing: libdeflate into a buffer of the chunk's bounded size (it refuses more),
  else ISA-L or zlib-ng, else the standard library, each bounded the same way. A stream
  libdeflate refuses is decoded again by the standard library, which says what is wrong.
"""

from __future__ import annotations

import functools
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from nczarr import config
from nczarr.zarr.chunkspec import Buffer
from nczarr.zarr.codecs.base import Decompressor, decompress_bounded

logger = logging.getLogger(__name__)

# 32 + 15: inflate accepts a zlib or a gzip header, so either codec reads the other's data.
ANY_HEADER_WBITS = 47
GZIP_WBITS = 31
ZLIB_WBITS = 15
_GZIP_MAGIC = b"\x1f\x8b"
#: zlib's level -1.
_DEFAULT_LEVEL = 6
#: The highest level of ISA-L's deflate.
_ISAL_MAX_LEVEL = 3


@dataclass(frozen=True)
class DeflateLibrary:
    """One library's zlib/gzip functions. ``compress(data, level, wbits)`` writes a zlib
    (``wbits`` 15) or gzip (31) stream; ``decompressobj(wbits)`` makes a bounded
    decompressor; ``decompress_into(data, max_size)``, where the library has one, decodes
    either header into at most ``max_size`` bytes, raising on more or on a bad stream."""

    name: str
    compress: Callable[[Buffer, int, int], Buffer]
    decompressobj: Callable[[int], Decompressor]
    decompress_into: Callable[[Buffer, int], Buffer] | None = None
    max_level: int = 9


def _stdlib_compress(data: Buffer, level: int, wbits: int) -> bytes:
    if wbits == ZLIB_WBITS:
        return zlib.compress(data, level)
    compressor = zlib.compressobj(level, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


def _zlib_like(module: ModuleType, name: str, max_level: int = 9) -> DeflateLibrary:
    """A library with the standard zlib module's interface (isal_zlib, zlib_ng)."""

    def compress(data: Buffer, level: int, wbits: int) -> bytes:
        level = min(_DEFAULT_LEVEL if level < 0 else level, max_level)
        if wbits == ZLIB_WBITS:
            out: bytes = module.compress(data, level)
            return out
        compressor = module.compressobj(level, module.DEFLATED, wbits)
        return bytes(compressor.compress(data) + compressor.flush())

    return DeflateLibrary(name, compress, module.decompressobj, max_level=max_level)


def _load_isal() -> DeflateLibrary:
    from isal import isal_zlib

    return _zlib_like(isal_zlib, "isal", _ISAL_MAX_LEVEL)


def _load_zlib_ng() -> DeflateLibrary:
    from zlib_ng import zlib_ng

    return _zlib_like(zlib_ng, "zlib-ng")


def _load_libdeflate() -> DeflateLibrary:
    import deflate

    def compress(data: Buffer, level: int, wbits: int) -> Buffer:
        level = _DEFAULT_LEVEL if level < 0 else max(1, min(level, 12))
        function = deflate.zlib_compress if wbits == ZLIB_WBITS else deflate.gzip_compress
        out: bytearray = function(data, level)
        return out

    def decompress_into(data: Buffer, max_size: int) -> Buffer:
        view = memoryview(data)
        function = deflate.gzip_decompress if view[:2] == _GZIP_MAGIC else deflate.zlib_decompress
        # the buffer is max_size bytes: libdeflate fails rather than write past it
        out: bytearray = function(data, max(1, max_size))
        return out

    # libdeflate has no streaming decoder: the standard library's bounds its error path
    return DeflateLibrary("libdeflate", compress, zlib.decompressobj, decompress_into, max_level=12)


def _load_zlib() -> DeflateLibrary:
    return DeflateLibrary("zlib", _stdlib_compress, zlib.decompressobj)


#: How each library of config.DEFLATE_LIBRARIES is loaded (ImportError when not installed).
_LOADERS: dict[str, Callable[[], DeflateLibrary]] = {
    "isal": _load_isal,
    "libdeflate": _load_libdeflate,
    "zlib-ng": _load_zlib_ng,
    "zlib": _load_zlib,
}


@functools.cache
def installed(name: str) -> DeflateLibrary | None:
    """The library ``name`` (one of ``config.DEFLATE_LIBRARIES``), or None when its package
    is not installed."""
    try:
        library = _LOADERS[name]()
    except ImportError:
        logger.debug("deflate: %s is not installed", name)
        return None
    return library


def _first(*names: str) -> DeflateLibrary:
    for name in names:
        library = installed(name)
        if library is not None:
            return library
    return _load_zlib()


def _forced() -> DeflateLibrary | None:
    name = config.deflate_library()
    if name is None:
        return None
    library = installed(name)
    if library is None:
        _warn_missing(name)
    return library


@functools.cache
def _warn_missing(name: str) -> None:
    logger.warning("deflate library %r was asked for but is not installed: using the fastest installed", name)


def compressor_for(level: int) -> DeflateLibrary:
    """The library that compresses at ``level`` (see the module's docstring)."""
    forced = _forced()
    if forced is not None:
        return forced
    if level == 0:
        return _load_zlib()
    if 1 <= level <= _ISAL_MAX_LEVEL:
        return _first("isal", "libdeflate", "zlib-ng")
    return _first("libdeflate", "zlib-ng")


def decompressor() -> DeflateLibrary:
    """The library that decompresses (see the module's docstring)."""
    forced = _forced()
    if forced is not None:
        return forced
    return _first("libdeflate", "isal", "zlib-ng")


def compress(data: Buffer, level: int, gzip: bool) -> Buffer:
    """``data`` as one zlib stream (or gzip, with ``gzip``) at zlib's ``level`` (-1 to 9)."""
    return compressor_for(level).compress(data, level, GZIP_WBITS if gzip else ZLIB_WBITS)


def decompress(name: str, data: Buffer, max_size: int, library: DeflateLibrary | None = None) -> Buffer:
    """One zlib or gzip stream (either header) decoded to at most ``max_size`` bytes; more,
    or a truncated or corrupt stream, is a CodecError naming the codec ``name``. ``library``:
    the ``decompressor()`` of a caller that decodes many streams (looked up once)."""
    library = library or decompressor()
    if library.decompress_into is not None:
        try:
            return library.decompress_into(data, max_size)
        except Exception:  # any failure: the bounded decoder below says why
            pass
    return decompress_bounded(name, lambda: library.decompressobj(ANY_HEADER_WBITS), data, max_size)
