"""nczarr: the netCDF data model on Zarr, in pure Python.

The package is also a drop-in for netCDF4-python: ``import nczarr as netCDF4`` gives
``Dataset``, ``Variable``, ``MFDataset``, the cftime helpers and the rest of its interface
(``nczarr.api``), over Zarr stores.
"""

from __future__ import annotations

from nczarr._version import __version__
from nczarr.errors import NCZarrError

#: The netCDF4-python compatible names, loaded on first use (``nczarr.api``), so that the
#: engine and the command line do not pay for the interface they do not use.
_API_NAMES = frozenset(
    [
        "CompoundType", "Dataset", "Dimension", "EnumType", "Group", "MFDataset", "MFTime",
        "NC_DISKLESS", "NC_PERSIST", "NetCDF4MissingFeatureException", "VLType", "Variable",
        "chartostring", "date2index", "date2num", "default_encoding", "default_fillvals",
        "dtype_is_complex", "get_alignment", "get_chunk_cache", "getlibversion", "is_native_big",
        "is_native_little", "num2date", "rc_get", "rc_set", "set_alignment", "set_chunk_cache",
        "stringtoarr", "stringtochar", "unicode_error",
    ]
)  # nczarr.api.__all__ without FLAGS (whose flags are module attributes here)
#: netCDF4 reports the HDF5 library it uses; nczarr uses none.
__hdf5libversion__ = "none"


def __getattr__(name: str) -> object:
    import importlib

    if name == "grammar_path":  # where the CDL and model-text grammars are (nczarr.syntax)
        return importlib.import_module("nczarr.syntax.grammars").grammar_path
    if name == "virtualize":  # netCDF files as a dataset of references (nczarr.convert.virtual)
        return importlib.import_module("nczarr.convert.virtual").virtualize
    if name == "copy":  # nczarr.copy(sources, target, ...): one file, or many into one dataset
        return importlib.import_module("nczarr.convert.archive").copy
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
    return sorted({*globals(), *_API_NAMES, "api", "utils", "grammar_path", "virtualize", "copy"})


__all__ = ["NCZarrError", "__version__", "grammar_path", "virtualize", *sorted(_API_NAMES)]
