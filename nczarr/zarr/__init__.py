"""The storage engine: Zarr v2 and v3 metadata, data types, codecs, arrays and groups."""

from nczarr.zarr.array import Array
from nczarr.zarr.hierarchy import (
    Group,
    create_array,
    create_group,
    new_array_metadata,
    open_array,
    open_group,
    open_node,
)

__all__ = [
    "Array",
    "Group",
    "create_array",
    "create_group",
    "new_array_metadata",
    "open_array",
    "open_group",
    "open_node",
]
