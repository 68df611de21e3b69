"""Codec metadata for new arrays from netCDF-style compression settings
(``netCDF4.Dataset.createVariable``'s ``compression``, ``complevel``, ``shuffle``, ...)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from nczarr.errors import CodecError
from nczarr.zarr.codecs.serialize import dtype_endian

#: netCDF4-python's ``compression`` values this package can write.
COMPRESSIONS = (
    "zlib", "zstd", "bzip2", "blosc_lz", "blosc_lz4", "blosc_lz4hc", "blosc_zlib", "blosc_zstd",
)
_BLOSC_CNAMES = {
    "blosc_lz": "blosclz", "blosc_lz4": "lz4", "blosc_lz4hc": "lz4hc",
    "blosc_zlib": "zlib", "blosc_zstd": "zstd",
}
_BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")


def _compressor(
    compression: str, complevel: int, blosc_shuffle: int, typesize: int
) -> tuple[str, dict[str, Any]]:
    """(numcodecs id, configuration) of a netCDF ``compression`` in numcodecs' form."""
    if compression == "zlib":
        return "zlib", {"level": complevel}
    if compression == "zstd":
        return "zstd", {"level": complevel, "checksum": False}
    if compression == "bzip2":
        return "bz2", {"level": max(complevel, 1)}  # bz2 levels are 1..9
    if compression in _BLOSC_CNAMES:
        return "blosc", {
            "cname": _BLOSC_CNAMES[compression], "clevel": complevel,
            "shuffle": blosc_shuffle, "blocksize": 0, "typesize": typesize,
        }
    raise CodecError(
        f"compression {compression!r} is not supported; use one of {list(COMPRESSIONS)}"
    )


def default_v3_codecs(
    dtype: np.dtype,
    *,
    compression: str | None = None,
    complevel: int = 4,
    shuffle: bool = False,
    blosc_shuffle: Literal[0, 1, 2] = 1,
    fletcher32: bool = False,
) -> list[dict[str, Any]]:
    """A v3 ``codecs`` list: ``bytes`` (little endian) or ``vlen-utf8`` for object arrays,
    then ``numcodecs.shuffle``, the compressor (``gzip`` for zlib, ``zstd``, ``blosc``,
    ``numcodecs.bz2``) and ``numcodecs.fletcher32`` as asked."""
    dtype = np.dtype(dtype)
    codecs: list[dict[str, Any]]
    if dtype.hasobject:
        codecs = [{"name": "vlen-utf8", "configuration": {}}]
    elif dtype_endian(dtype) is None:
        codecs = [{"name": "bytes"}]
    else:
        codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if shuffle and dtype.itemsize > 1 and not dtype.hasobject:
        codecs.append(
            {"name": "numcodecs.shuffle", "configuration": {"elementsize": dtype.itemsize}}
        )
    if compression is not None:
        codec_id, config = _compressor(compression, complevel, blosc_shuffle, dtype.itemsize)
        if codec_id == "zlib":  # the core v3 deflate codec every implementation reads
            codecs.append({"name": "gzip", "configuration": config})
        elif codec_id == "blosc":
            config["shuffle"] = _BLOSC_SHUFFLES[config["shuffle"]]
            codecs.append({"name": "blosc", "configuration": config})
        elif codec_id == "zstd":
            codecs.append({"name": "zstd", "configuration": config})
        else:
            codecs.append({"name": "numcodecs." + codec_id, "configuration": config})
    if fletcher32:
        codecs.append({"name": "numcodecs.fletcher32", "configuration": {}})
    return codecs


def default_v2_codecs(
    dtype: np.dtype,
    *,
    compression: str | None = None,
    complevel: int = 4,
    shuffle: bool = False,
    blosc_shuffle: Literal[0, 1, 2] = 1,
    fletcher32: bool = False,
) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """v2 ``(filters, compressor)``: ``vlen-utf8`` for object arrays, ``shuffle``,
    ``fletcher32`` (a filter: v2 applies every filter before the compressor) and the
    compressor as asked."""
    dtype = np.dtype(dtype)
    filters: list[dict[str, Any]] = []
    if dtype.hasobject:
        filters.append({"id": "vlen-utf8"})
    if shuffle and dtype.itemsize > 1 and not dtype.hasobject:
        filters.append({"id": "shuffle", "elementsize": dtype.itemsize})
    if fletcher32:
        filters.append({"id": "fletcher32"})
    compressor = None
    if compression is not None:
        codec_id, config = _compressor(compression, complevel, blosc_shuffle, dtype.itemsize)
        config.pop("typesize", None)  # numcodecs before 0.16 rejects it; v2 infers it
        compressor = {"id": codec_id, **config}
    return filters or None, compressor
