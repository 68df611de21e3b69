"""``nczarr gen``: a CDL text made into a dataset, as ``ncgen`` makes a netCDF file of it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from nczarr.convert.copy import CopyOptions, copy_source
from nczarr.convert.sources import ArraysSource
from nczarr.model import validate
from nczarr.model.types import DataModel
from nczarr.store import read_regular_file
from nczarr.syntax.cdl import normalize_kind, parse_cdl

_Target = TypeVar("_Target")


def generate(cdl_path: str | os.PathLike[str], dst: Any | None = None, *, kind: str | None = None, format: str | None = None) -> str:
    """Make the dataset a CDL file describes at ``dst`` (a Zarr store, or a netCDF file for a
    ``.nc`` path; default: as ncgen names its output, the CDL file's name with its suffix
    replaced (by ``.zarr``) in the current folder, never a path the text names) and return
    where it went.
    ``kind`` is ncgen's ``-k``; ``format`` the Zarr convention. A bad CDL text raises one
    clear error and writes nothing; so does a failure while writing."""
    path = Path(cdl_path)
    parsed = parse_cdl(read_regular_file(path).decode("utf-8", "surrogateescape"), str(path), kind=kind)
    dst = output_path(path, dst)
    data_model = parsed.kind or _default_kind(parsed.dataset, dst)
    source = ArraysSource(parsed.dataset, parsed.storage, parsed.data, data_model)
    # a variable without data holds fill values, which a new dataset reads without them
    # being written: a huge one costs nothing
    copy_source(source, dst, CopyOptions(kind=data_model, format=format, data_variables=tuple(parsed.given)))
    return os.fspath(dst)


def output_path(cdl_path: str | os.PathLike[str], dst: _Target | None = None) -> _Target | str:
    """Where :func:`generate` writes: ``dst``, or by default the CDL file's name with
    ``.zarr`` for its suffix, in the current folder."""
    return f"{Path(cdl_path).stem}.zarr" if dst is None else dst


def _default_kind(dataset: Any, dst: Any) -> str:
    """ncgen writes the classic kind unless the text needs netCDF-4; Zarr is netCDF-4."""
    to_file = isinstance(dst, (str, os.PathLike)) and os.fspath(dst).lower().endswith((".nc", ".cdf"))
    if not to_file:
        return "NETCDF4" if dataset.data_model is DataModel.ENHANCED else "NETCDF4_CLASSIC"
    dataset.data_model = DataModel.CLASSIC
    classic = not any(p.severity == "error" for p in validate(dataset))
    dataset.data_model = DataModel.ENHANCED
    return "NETCDF3_CLASSIC" if classic else "NETCDF4"


__all__ = ["generate", "normalize_kind", "output_path"]
