"""Chunk shapes of the arrays that hold variables: the stored ones kept, else netCDF-4's
default (§2.11.2), and the chunk key encoding of arrays already stored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from nczarr.model import Dimension
from nczarr.values.storage import VariableStorage, netcdf_chunks
from nczarr.zarr.metadata import ArrayMetadata, ArrayMetadataV3


def keep_chunk_keys(metadata: ArrayMetadata, stored: ArrayMetadata | None) -> ArrayMetadata:
    """The metadata computed for an array that is already stored keeps the stored chunk key
    encoding: the keys name the chunks there (another writer may have chosen another one)."""
    if stored is None or stored.zarr_format != metadata.zarr_format:
        return metadata
    if isinstance(metadata, ArrayMetadataV3):
        if (metadata.chunk_key_encoding, metadata.separator) == (stored.chunk_key_encoding, stored.separator):  # type: ignore[union-attr]
            return metadata
        return replace(metadata, chunk_key_encoding=stored.chunk_key_encoding, separator=stored.separator)  # type: ignore[union-attr]
    if metadata.dimension_separator == stored.dimension_separator:  # type: ignore[union-attr]
        return metadata
    return replace(metadata, dimension_separator=stored.dimension_separator)  # type: ignore[union-attr]


def chunks_for(
    storage: VariableStorage, dimensions: Sequence[Dimension], shape: Sequence[int], itemsize: int
) -> tuple[int, ...]:
    """An array's chunk shape: the stored one when it fits the array's rank (a netcdf-c
    scalar's ``[1]`` does not fit a ``[]`` array), else netcdf-c's default; ``()`` for a
    shape ``[]`` array."""
    if storage.chunks is not None and len(storage.chunks) == len(shape):
        return tuple(storage.chunks)
    if not shape:
        return ()
    return netcdf_chunks([d.size for d in dimensions], [d.unlimited for d in dimensions], itemsize)
