"""The netCDF4-python compatible interface: ``import nczarr as netCDF4`` and code written for
netCDF4-python runs against Zarr stores (see ``docs/api.md``).

Names are loaded from their modules on first use, so importing one module of the interface
(say ``nczarr.api.library``) does not import all of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see of the names loaded on first use
    from nczarr.api.dataset import Dataset as Dataset
    from nczarr.api.dataset import Group as Group
    from nczarr.api.dimension import Dimension as Dimension
    from nczarr.api.library import FLAGS as FLAGS
    from nczarr.api.library import NC_DISKLESS as NC_DISKLESS
    from nczarr.api.library import NC_PERSIST as NC_PERSIST
    from nczarr.api.library import default_encoding as default_encoding
    from nczarr.api.library import dtype_is_complex as dtype_is_complex
    from nczarr.api.library import get_alignment as get_alignment
    from nczarr.api.library import get_chunk_cache as get_chunk_cache
    from nczarr.api.library import getlibversion as getlibversion
    from nczarr.api.library import is_native_big as is_native_big
    from nczarr.api.library import is_native_little as is_native_little
    from nczarr.api.library import rc_get as rc_get
    from nczarr.api.library import rc_set as rc_set
    from nczarr.api.library import set_alignment as set_alignment
    from nczarr.api.library import set_chunk_cache as set_chunk_cache
    from nczarr.api.library import unicode_error as unicode_error
    from nczarr.api.multifile import MFDataset as MFDataset
    from nczarr.api.multifile import MFTime as MFTime
    from nczarr.api.types import CompoundType as CompoundType
    from nczarr.api.types import EnumType as EnumType
    from nczarr.api.types import VLType as VLType
    from nczarr.api.variable import Variable as Variable
    from nczarr.errors import NetCDF4MissingFeatureException as NetCDF4MissingFeatureException
    from nczarr.values.strings import chartostring as chartostring
    from nczarr.values.strings import stringtoarr as stringtoarr
    from nczarr.values.strings import stringtochar as stringtochar
    from nczarr.values.types import default_fillvals as default_fillvals

#: Where each public name lives.
_MODULES = {
    "Dataset": "nczarr.api.dataset",
    "Group": "nczarr.api.dataset",
    "Dimension": "nczarr.api.dimension",
    "Variable": "nczarr.api.variable",
    "CompoundType": "nczarr.api.types",
    "EnumType": "nczarr.api.types",
    "VLType": "nczarr.api.types",
    "MFDataset": "nczarr.api.multifile",
    "MFTime": "nczarr.api.multifile",
    "NetCDF4MissingFeatureException": "nczarr.errors",
    "chartostring": "nczarr.values.strings",
    "stringtoarr": "nczarr.values.strings",
    "stringtochar": "nczarr.values.strings",
    "default_fillvals": "nczarr.values.types",
    **dict.fromkeys(
        [
            "FLAGS", "NC_DISKLESS", "NC_PERSIST", "default_encoding", "dtype_is_complex", "get_alignment",
            "get_chunk_cache", "getlibversion", "is_native_big", "is_native_little", "rc_get", "rc_set",
            "set_alignment", "set_chunk_cache", "unicode_error",
        ],
        "nczarr.api.library",
    ),
}
_CFTIME = ("date2index", "date2num", "num2date")

__all__ = sorted([*_MODULES, *_CFTIME])


def __getattr__(name: str) -> object:
    if name in _CFTIME:
        return getattr(importlib.import_module("cftime"), name)
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'nczarr.api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
