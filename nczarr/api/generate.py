"""``nczarr gen`` and ``Dataset.fromcdl``: a CDL text made into a dataset, as ``ncgen`` makes a
netCDF file of it. The CDL reader (``syntax``) and the writers (``convert``) are siblings that
do not know each other: this is where they meet."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import numpy as np

from nczarr.convert.copy import CopyOptions, copy_source
from nczarr.convert.sources import DatasetLocation
from nczarr.model import Dataset, validate
from nczarr.model.types import DataModel
from nczarr.store import read_regular_file
from nczarr.syntax.cdl import parse_cdl
from nczarr.values.source import ArraysSource, PaddedBlocks
from nczarr.values.storage import VariableStorage

__all__ = ["generate", "output_path"]

_Target = TypeVar("_Target", bound=DatasetLocation)


def generate(
    cdl_path: str | os.PathLike[str],
    dst: DatasetLocation | None = None,
    *,
    kind: str | None = None,
    format: str | None = None,
    fill: bool = True,
    header_only: bool = False,
) -> str:
    """Make the dataset a CDL file describes at ``dst`` (a Zarr store, or a netCDF file for a
    ``.nc`` path; default: as ncgen names its output, the CDL file's name with its suffix
    replaced (by ``.zarr``) in the current folder, never a path the text names) and return
    where it went.
    ``kind`` is ncgen's ``-k``; ``format`` the Zarr convention; ``fill`` False is ncgen's
    ``-x`` (no fill values), ``header_only`` its ``-H`` (the data section ignored). A bad CDL
    text raises one clear error and writes nothing; so does a failure while writing."""
    path = Path(cdl_path)
    parsed = parse_cdl(read_regular_file(path).decode("utf-8", "surrogateescape"), str(path), kind=kind)
    target = output_path(path, dst)
    data_model = parsed.kind or _default_kind(parsed.dataset, target)
    data: dict[str, np.ndarray | PaddedBlocks] = dict(parsed.data)
    given = () if header_only else tuple(parsed.given)
    if header_only:  # unlimited dimensions grow with data only
        for group in parsed.dataset.walk():
            for dimension in group.dimensions:
                if dimension.unlimited:
                    dimension.size = 0
    storage = parsed.storage
    if not fill:
        variables = (v.fqn for g in parsed.dataset.walk() for v in g.variables)
        storage = {fqn: replace(storage.get(fqn, VariableStorage()), fill=False) for fqn in variables}
    source = ArraysSource(parsed.dataset, storage, data, data_model)
    # a variable without data holds fill values, which a new dataset reads without them
    # being written: a huge one costs nothing
    copy_source(source, target, CopyOptions(kind=data_model, format=format, data_variables=given))
    return os.fspath(target) if isinstance(target, (str, os.PathLike)) else str(target)


def output_path(cdl_path: str | os.PathLike[str], dst: _Target | None = None) -> _Target | str:
    """Where :func:`generate` writes: ``dst``, or by default the CDL file's name with
    ``.zarr`` for its suffix, in the current folder."""
    return f"{Path(cdl_path).stem}.zarr" if dst is None else dst


def _default_kind(dataset: Dataset, dst: DatasetLocation) -> str:
    """ncgen writes the classic kind unless the text needs netCDF-4; Zarr is netCDF-4."""
    to_file = isinstance(dst, (str, os.PathLike)) and os.fspath(dst).lower().endswith((".nc", ".cdf"))
    if not to_file:
        return "NETCDF4" if dataset.data_model is DataModel.ENHANCED else "NETCDF4_CLASSIC"
    dataset.data_model = DataModel.CLASSIC
    classic = not any(p.severity == "error" for p in validate(dataset))
    dataset.data_model = DataModel.ENHANCED
    return "NETCDF3_CLASSIC" if classic else "NETCDF4"
