"""``nczarr info`` of a netCDF file: its groups, dimensions and variables as a tree (Zarr stores
are described by :mod:`nczarr.zarr.info`)."""

from __future__ import annotations

import os
from typing import Any


def describe_file(path: str | os.PathLike[str]) -> str:
    """A tree of the netCDF file at ``path``: kind, groups, dimensions, and each variable's
    dimensions, type, chunking and filters."""
    from nczarr.api.dataset import Dataset

    with Dataset(path) as ds:
        lines = [f"{os.fspath(path)} ({ds.data_model}, {ds.disk_format})"]
        _group(ds, 1, lines)
    return "\n".join(lines) + "\n"


def _group(group: Any, depth: int, lines: list[str]) -> None:
    indent = "  " * depth
    for name, dim in group.dimensions.items():
        size = f"UNLIMITED ({len(dim)})" if dim.isunlimited() else str(len(dim))
        lines.append(f"{indent}{name} = {size}")
    for name, var in group.variables.items():
        label = var._type_label().replace("<class 'str'>", "string")
        text = f"{indent}{name} ({', '.join(var.dimensions)}): {label}"
        chunking = var.chunking()
        if isinstance(chunking, list):
            text += ", chunks " + "x".join(map(str, chunking))
        filters = var.filters() or {}
        used = [k for k in ("zlib", "zstd", "bzip2", "shuffle", "fletcher32") if filters.get(k)]
        if filters.get("blosc"):
            used.append(filters["blosc"]["compressor"])
        if used:
            text += ", " + ", ".join(used)
        lines.append(text)
    for name, child in group.groups.items():
        lines.append(f"{indent}{name}/")
        _group(child, depth + 1, lines)
