"""nczarr in xarray: the ``nczarr`` engine of ``xarray.open_dataset`` and ``to_nczarr``, its writer.

Registered under the ``xarray.backends`` entry point, so ``xr.open_dataset(path,
engine="nczarr")`` works once nczarr and xarray are installed; ``to_nczarr(dataset, path)``
writes a Dataset or DataTree, dask arrays in parallel. Importing this package needs xarray
(the ``xarray`` extra)."""

from __future__ import annotations

from nczarr.xarray.backend import NczarrBackendEntrypoint
from nczarr.xarray.store import ChunkWriter, NczarrArray, NczarrDataStore
from nczarr.xarray.writer import to_nczarr

__all__ = ["ChunkWriter", "NczarrArray", "NczarrBackendEntrypoint", "NczarrDataStore", "to_nczarr"]
