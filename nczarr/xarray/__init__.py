"""nczarr in xarray: the ``nczarr`` engine of ``xarray.open_dataset`` (read-only for now).

Registered under the ``xarray.backends`` entry point, so ``xr.open_dataset(path,
engine="nczarr")`` works once nczarr and xarray are installed. Importing this package needs
xarray (the ``xarray`` extra)."""

from __future__ import annotations

from nczarr.xarray.backend import NczarrArray, NczarrBackendEntrypoint, NczarrDataStore

__all__ = ["NczarrArray", "NczarrBackendEntrypoint", "NczarrDataStore"]
