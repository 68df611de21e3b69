"""``nczarr info`` of a netCDF file: its groups, dimensions and variables as a tree (Zarr stores
are described by :mod:`nczarr.zarr.info`)."""

from __future__ import annotations

import os

from nczarr.convert.sources import file_kind, open_source
from nczarr.model import AtomicType, Group, Resolver, Variable
from nczarr.model import nodes as model_nodes
from nczarr.values.storage import VariableStorage
from nczarr.values.stored import raw_dtype

#: How a variable of a user-defined type shows its type.
_KIND_LABELS: dict[type[object], str] = {
    model_nodes.CompoundType: "compound",
    model_nodes.VlenType: "vlen",
    model_nodes.EnumType: "enum",
    model_nodes.OpaqueType: "opaque",
}
#: The filters a line names when a variable uses them (blosc by its compressor's name).
_FILTERS = ("zlib", "zstd", "bzip2")


def describe_file(path: str | os.PathLike[str]) -> str:
    """A tree of the netCDF file at ``path``: kind, groups, dimensions, and each variable's
    dimensions, type, chunking and filters."""
    disk_format = "NETCDF3" if file_kind(path) == "netcdf3" else "HDF5"
    source = open_source(path)
    try:
        lines = [f"{os.fspath(path)} ({source.data_model}, {disk_format})"]
        netcdf3 = source.data_model.startswith("NETCDF3")
        _group(source.dataset, source.storage, netcdf3, Resolver(), 1, lines)
    finally:
        source.close()
    return "\n".join(lines) + "\n"


def _group(
    group: Group, storage: dict[str, VariableStorage], netcdf3: bool, resolver: Resolver, depth: int, lines: list[str]
) -> None:
    indent = "  " * depth
    for dimension in group.dimensions:
        size = f"UNLIMITED ({dimension.size})" if dimension.unlimited else str(dimension.size)
        lines.append(f"{indent}{dimension.name} = {size}")
    for variable in group.variables:
        stored = storage.get(variable.fqn, VariableStorage())
        names = [_dimension_name(variable, ref, resolver) for ref in variable.dimensions]
        text = f"{indent}{variable.name} ({', '.join(names)}): {_type_label(variable, stored, resolver)}"
        if not netcdf3:  # netCDF-3 files have neither chunks nor filters
            text += _storage_label(variable, stored)
        lines.append(text)
    for child in group.groups:
        lines.append(f"{indent}{child.name}/")
        _group(child, storage, netcdf3, resolver, depth + 1, lines)


def _dimension_name(variable: Variable, ref: str | int, resolver: Resolver) -> str:
    group = variable.group
    assert group is not None
    dimension = None if isinstance(ref, int) else resolver.dimension(group, ref)
    return str(ref) if dimension is None else dimension.name


def _type_label(variable: Variable, storage: VariableStorage, resolver: Resolver) -> str:
    """The type as netCDF4 shows a variable's dtype: numbers in their stored byte order,
    ``|S1`` for char, the kind of a user-defined type."""
    nc_type = variable.type
    if nc_type is AtomicType.STRING:
        return "string"
    if isinstance(nc_type, AtomicType):
        return str(raw_dtype(nc_type, storage.endian))
    group = variable.group
    assert group is not None
    user_type = resolver.type(group, nc_type)
    return _KIND_LABELS.get(type(user_type), nc_type)


def _storage_label(variable: Variable, storage: VariableStorage) -> str:
    text = ""
    if storage.chunks and variable.dimensions:
        text += ", chunks " + "x".join(map(str, storage.chunks))
    used = [name for name in _FILTERS if storage.compression == name]
    if storage.shuffle:
        used.append("shuffle")
    if storage.fletcher32:
        used.append("fletcher32")
    if storage.compression is not None and storage.compression.startswith("blosc"):
        used.append(storage.compression)
    return text + (", " + ", ".join(used) if used else "")
