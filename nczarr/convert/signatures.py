"""The first bytes of the file containers nczarr reads besides Zarr stores: one table for the
readers and for sniffing a path's kind, importable without loading any reader."""

from __future__ import annotations

#: netCDF-3: classic, 64-bit offset and CDF-5 (64-bit data).
NETCDF3_MAGIC = (b"CDF\x01", b"CDF\x02", b"CDF\x05")
#: HDF5 (netCDF-4), at the file's start: netCDF-4 has no user block.
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
