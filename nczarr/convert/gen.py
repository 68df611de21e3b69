"""``nczarr gen``: a CDL text made into a dataset, as ``ncgen`` makes a netCDF file of it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nczarr.convert.copy import CopyOptions, copy_source
from nczarr.convert.sources import ArraysSource
from nczarr.model import validate
from nczarr.model.types import DataModel
from nczarr.syntax.cdl import normalize_kind, parse_cdl


def generate(cdl_path: str | os.PathLike[str], dst: Any | None = None, *, kind: str | None = None, format: str | None = None) -> str:
    """Make the dataset a CDL file describes at ``dst`` (a Zarr store, or a netCDF file for a
    ``.nc`` path; default: the CDL's dataset name with ``.zarr``) and return where it went.
    ``kind`` is ncgen's ``-k``; ``format`` the Zarr convention. A bad CDL text raises one
    clear error and writes nothing; so does a failure while writing."""
    path = Path(cdl_path)
    parsed = parse_cdl(path.read_text(encoding="utf-8", errors="surrogateescape"), str(path), kind=kind)
    if dst is None:
        dst = f"{parsed.dataset.name or path.stem}.zarr"
    data_model = parsed.kind or _default_kind(parsed.dataset, dst)
    source = ArraysSource(parsed.dataset, parsed.storage, parsed.data, data_model)
    copy_source(source, dst, CopyOptions(kind=data_model, format=format))
    return os.fspath(dst)


def _default_kind(dataset: Any, dst: Any) -> str:
    """ncgen writes the classic kind unless the text needs netCDF-4; Zarr is netCDF-4."""
    to_file = isinstance(dst, (str, os.PathLike)) and os.fspath(dst).lower().endswith((".nc", ".cdf"))
    if not to_file:
        return "NETCDF4" if dataset.data_model is DataModel.ENHANCED else "NETCDF4_CLASSIC"
    dataset.data_model = DataModel.CLASSIC
    classic = not any(p.severity == "error" for p in validate(dataset))
    dataset.data_model = DataModel.ENHANCED
    return "NETCDF3_CLASSIC" if classic else "NETCDF4"


__all__ = ["generate", "normalize_kind"]
