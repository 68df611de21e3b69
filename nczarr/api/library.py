"""Module-level settings and facts of netCDF4-python's interface: chunk cache, alignment and
rc settings (kept so that code setting them runs; nczarr's own caches are per array), the
library version and the feature flags (true only for what nczarr does)."""

from __future__ import annotations

import sys
from typing import Any

from nczarr._version import __version__

#: The netcdf-c release whose NCZarr format nczarr reads and writes.
NETCDF_C_VERSION = "4.10.1"

_chunk_cache: list[Any] = [16 * 1024 * 1024, 4133, 0.75]
_alignment: list[int] = [0, 0]
_rc: dict[str, str] = {}


def getlibversion() -> str:
    """The netcdf-c version nczarr is compatible with, as netCDF4 reports its library."""
    return f"{NETCDF_C_VERSION} of nczarr {__version__} (pure Python) $"


def get_chunk_cache() -> tuple[int, int, float]:
    """netCDF4's default chunk cache (size in bytes, elements, preemption), as last set."""
    return tuple(_chunk_cache)


def set_chunk_cache(size: int | None = None, nelems: int | None = None, preemption: float | None = None) -> None:
    """Set netCDF4's default chunk cache (kept and reported; nczarr caches per array)."""
    for i, value in enumerate((size, nelems, preemption)):
        if value is not None:
            _chunk_cache[i] = value


def get_alignment() -> tuple[int, int]:
    """netCDF4's HDF5 alignment (threshold, alignment), as last set."""
    return tuple(_alignment)  # type: ignore[return-value]


def set_alignment(threshold: int, alignment: int) -> None:
    """Set netCDF4's HDF5 alignment (kept and reported; Zarr stores have no file layout to align)."""
    _alignment[:] = [int(threshold), int(alignment)]


def rc_get(key: str) -> str | None:
    """The value of netcdf-c's rc setting ``key`` set by :func:`rc_set`, or None."""
    return _rc.get(key)


def rc_set(key: str, value: str) -> None:
    """Set netcdf-c's rc setting ``key`` (kept for :func:`rc_get`; nczarr reads none of them)."""
    _rc[key] = value


def dtype_is_complex(dtype: object) -> bool:
    """Whether ``dtype`` names a complex type (``"c8"``, ``"c16"``), as netCDF4's helper says."""
    return dtype in ("c8", "c16")


def _has_codec(codec_id: str) -> int:
    import numcodecs

    try:
        numcodecs.get_codec({"id": codec_id})
    except (ValueError, ImportError, KeyError):
        return 0
    return 1


is_native_little = sys.byteorder == "little"
is_native_big = not is_native_little
default_encoding = "utf-8"
unicode_error = "replace"
NC_DISKLESS = 8
NC_PERSIST = 0x4000

FLAGS = {
    "__has_rename_grp__": 1,
    "__has_nc_inq_path__": 1,
    "__has_nc_inq_format_extended__": 1,
    "__has_cdf5_format__": 0,
    "__has_nc_open_mem__": 0,
    "__has_nc_create_mem__": 0,
    "__has_parallel4_support__": 0,
    "__has_pnetcdf_support__": 0,
    "__has_parallel_support__": 0,
    "__has_quantization_support__": 1,
    "__has_zstandard_support__": _has_codec("zstd"),
    "__has_bzip2_support__": _has_codec("bz2"),
    "__has_blosc_support__": _has_codec("blosc"),
    "__has_szip_support__": 0,
    "__has_set_alignment__": 0,
    "__has_ncfilter__": 1,
    "__has_nc_rc_set__": 1,
}
