"""nczarr: the netCDF data model on Zarr, in pure Python.

The package is also a drop-in for netCDF4-python: ``import nczarr as netCDF4`` gives
``Dataset``, ``Variable``, ``MFDataset``, the cftime helpers and the rest of its interface
(``nczarr.api``), over Zarr stores.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from nczarr.errors import NCZarrError

# nczarr's own version (netCDF4's API level that nczarr follows is 1.7.5; see docs/api.md)
__version__ = "0.1.0"


def grammar_path(name: str) -> Path:
    """Path of a grammar file such as ``model.lark``, in a wheel or in a source checkout."""
    installed = resources.files("nczarr") / "grammar" / name
    if installed.is_file():
        return Path(str(installed))
    checkout = Path(__file__).resolve().parent.parent / "grammar" / name
    if checkout.is_file():
        return checkout
    raise FileNotFoundError(f"grammar {name!r} is not installed with nczarr")


#: The netCDF4-python compatible names, loaded on first use (``nczarr.api``), so that the
#: engine and the command line do not pay for the interface they do not use.
_API_NAMES = frozenset(
    """CompoundType Dataset Dimension EnumType Group MFDataset MFTime NC_DISKLESS NC_PERSIST
    NetCDF4MissingFeatureException VLType Variable chartostring date2index date2num
    default_encoding default_fillvals dtype_is_complex get_alignment get_chunk_cache
    getlibversion is_native_big is_native_little num2date rc_get rc_set set_alignment
    set_chunk_cache stringtoarr stringtochar unicode_error""".split()
)  # nczarr.api.__all__ without FLAGS (whose flags are module attributes here)
#: netCDF4 reports the HDF5 library it uses; nczarr uses none.
__hdf5libversion__ = "none"


def __getattr__(name: str) -> Any:
    import importlib

    if name in ("api", "utils"):
        return importlib.import_module(f"nczarr.{name}")
    if name in _API_NAMES:
        return getattr(importlib.import_module("nczarr.api"), name)
    if name == "__netcdf4libversion__" or name.startswith("__has_"):
        library = importlib.import_module("nczarr.api.library")
        if name == "__netcdf4libversion__":
            return library.NETCDF_C_VERSION
        if name in library.FLAGS:
            return library.FLAGS[name]
    raise AttributeError(f"module 'nczarr' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API_NAMES, "api", "utils"})


__all__ = ["NCZarrError", "__version__", "grammar_path", *sorted(_API_NAMES)]
