"""How a variable's values are stored: netCDF-4's chunking, filter and fill settings, and the
compression vocabulary every front end speaks (netCDF4-python's names, HDF5's filter ids,
Blosc's compressor names and codes), each fact once. Blosc's shuffle names, indexed by
netCDF4-python's ``blosc_shuffle`` (0, 1, 2), are the Zarr codec's ``BLOSC_SHUFFLES``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from nczarr.errors import FormatError
from nczarr.zarr.jsonvalue import JSON

#: netCDF4-python's ``compression`` values for Blosc, with Blosc's compressor (``cname``) and
#: the compressor's code in the parameters of HDF5's Blosc filter.
BLOSC_CNAMES = {
    "blosc_lz": "blosclz",
    "blosc_lz4": "lz4",
    "blosc_lz4hc": "lz4hc",
    "blosc_zlib": "zlib",
    "blosc_zstd": "zstd",
}
BLOSC_CODES = {"blosc_lz": 0, "blosc_lz4": 1, "blosc_lz4hc": 2, "blosc_zlib": 4, "blosc_zstd": 5}
#: netCDF4-python's ``compression`` values nczarr can write.
COMPRESSIONS = ("zlib", "zstd", "bzip2", *BLOSC_CNAMES)
#: Every ``compression`` value netCDF4-python accepts: szip too, which has no Zarr codec.
NETCDF4_COMPRESSIONS = ("zlib", "szip", "zstd", "bzip2", *BLOSC_CNAMES)

#: HDF5's filter ids that netCDF-4 uses (netcdf_filter.h and the registered plugins).
HDF5_DEFLATE, HDF5_SHUFFLE, HDF5_FLETCHER32, HDF5_SZIP = 1, 2, 3, 4
HDF5_BZIP2, HDF5_ZSTD, HDF5_BLOSC = 307, 32015, 32001
#: The HDF5 filter of each compression nczarr writes.
HDF5_FILTER_OF = {"zlib": HDF5_DEFLATE, "bzip2": HDF5_BZIP2, "zstd": HDF5_ZSTD, **dict.fromkeys(BLOSC_CNAMES, HDF5_BLOSC)}

#: Why szip is refused (netCDF4-python accepts it, numcodecs has no codec for it).
NO_SZIP = "szip compression has no Zarr codec (numcodecs has none); use zlib or zstd"


@dataclass(frozen=True)
class VariableStorage:
    """How a variable's data is stored: netCDF-4's chunking, filter and fill settings.

    ``chunks`` None lets the convention choose; ``fill`` False turns fill values off (netCDF4
    ``fill_value=False``). The fill value itself is the variable's ``_FillValue`` attribute,
    else the netCDF default for its type. ``codecs`` holds the codec metadata as read from a
    store (v3 ``codecs`` list, or v2 ``{"filters": ..., "compressor": ...}``), so a dataset
    that is read and written again keeps codecs the settings above cannot name."""

    chunks: tuple[int, ...] | None = None
    compression: str | None = None
    complevel: int = 4
    shuffle: bool = False
    fletcher32: bool = False
    endian: Literal["native", "little", "big"] = "native"
    fill: bool = True
    blosc_shuffle: int = 1
    codecs: JSON = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.compression == "szip":
            raise FormatError(NO_SZIP)
        if self.compression is not None and self.compression not in COMPRESSIONS:
            raise FormatError(f"unknown compression {self.compression!r}; use one of {', '.join(COMPRESSIONS)}")
        if self.endian not in ("native", "little", "big"):
            raise FormatError(f"endian must be 'native', 'little' or 'big', not {self.endian!r}")


#: netcdf-c's DEFAULT_CHUNK_SIZE in the CMake build of the wheel (§2.11.2 of the NCZarr notes).
NETCDF_CHUNK_BYTES = 16_777_216


def netcdf_chunks(sizes: Sequence[int], unlimited: Sequence[bool], itemsize: int) -> tuple[int, ...]:
    """netcdf-c's default chunks, unlimited dimensions taken as empty, as when a variable is
    defined before any data is written."""
    n = len(sizes)
    if n == 0:
        return (1,)
    if n == 1 and unlimited[0]:
        return (max(1, min(NETCDF_CHUNK_BYTES // itemsize, 4096) // itemsize),)
    if all(unlimited):
        return (int((NETCDF_CHUNK_BYTES / itemsize) ** (1 / n)),) * n
    fixed = [s for s, u in zip(sizes, unlimited) if not u]
    product = math.prod(max(1, s) for s in fixed) * itemsize
    scale = (NETCDF_CHUNK_BYTES / product) ** (1 / len(fixed))
    chunks = [1 if u else max(1, min(s, int(scale * s - 0.5))) for s, u in zip(sizes, unlimited)]
    while math.prod(chunks) * itemsize > 2**32 - 1:
        chunks = [max(1, c // 2) for c in chunks]
    for i, (s, u) in enumerate(zip(sizes, unlimited)):
        if not u and s > 0:
            count = -(-s // chunks[i])
            chunks[i] -= (count * chunks[i] - s) // count
    return tuple(chunks)
