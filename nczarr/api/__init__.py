"""The netCDF4-python compatible interface: ``import nczarr as netCDF4`` and code written for
netCDF4-python runs against Zarr stores (see ``docs/api.md``).

Names are loaded from their modules on first use, so importing one module of the interface
(say ``nczarr.api.strings``) does not import all of it.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Where each public name lives.
_MODULES = {
    "Dataset": "dataset",
    "Group": "dataset",
    "Dimension": "dimension",
    "Variable": "variable",
    "CompoundType": "types",
    "EnumType": "types",
    "VLType": "types",
    "MFDataset": "multifile",
    "MFTime": "multifile",
    "chartostring": "strings",
    "stringtoarr": "strings",
    "stringtochar": "strings",
    "default_fillvals": "maskscale",
    **{
        name: "library"
        for name in (
            "FLAGS NC_DISKLESS NC_PERSIST NetCDF4MissingFeatureException default_encoding "
            "dtype_is_complex get_alignment get_chunk_cache getlibversion is_native_big "
            "is_native_little rc_get rc_set set_alignment set_chunk_cache unicode_error"
        ).split()
    },
}
_CFTIME = ("date2index", "date2num", "num2date")

__all__ = sorted([*_MODULES, *_CFTIME])


def __getattr__(name: str) -> Any:
    if name in _CFTIME:
        return getattr(importlib.import_module("cftime"), name)
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'nczarr.api' has no attribute {name!r}")
    return getattr(importlib.import_module(f"nczarr.api.{module}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
