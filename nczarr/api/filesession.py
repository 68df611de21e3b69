"""Any :class:`~nczarr.values.source.DatasetSource` as the read-only session behind an API
``Dataset``: what ``nczarr.Dataset('x.nc')`` reads a netCDF-3 or netCDF-4/HDF5 file through.

The API reads a session's variables through the part of the engine ``Array`` interface
given here (``shape``, ``chunks``, ``get_orthogonal_selection``); ``SourceArray.raw`` tells it
that the values are raw netCDF values already (no stored form to convert).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from nczarr.errors import ContainerError
from nczarr.model import Dataset, Variable, resolve_dimension
from nczarr.values.indexing import Selector
from nczarr.values.source import DatasetSource
from nczarr.values.storage import VariableStorage


def read_only_file(location: str | os.PathLike[str], mode: str) -> None:
    """netCDF-3 and netCDF-4 files are opened read-only: other modes are refused clearly."""
    if mode != "r":
        raise ContainerError(
            f"{os.fspath(location)!r} is a netCDF file: nczarr opens those read-only "
            "(use 'nczarr copy' to make a Zarr dataset of it)"
        )


@dataclass
class _Stored:
    storage: dict[str, VariableStorage]


@dataclass
class _Closer:
    """The session's "store": closing it closes the source, once."""

    source: DatasetSource
    closed: bool = field(default=False)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.source.close()


class SourceArray:
    """A variable of a source with the part of the engine Array interface the API reads
    through; ``raw`` tells the API the values are netCDF values already."""

    raw = True

    def __init__(self, source: DatasetSource, variable: Variable, shape: tuple[int, ...]) -> None:
        self._source = source
        self._variable = variable
        self.shape = shape
        self.ndim = len(shape)
        storage = source.storage.get(variable.fqn)
        #: a file's variable without chunks is contiguous (netCDF-3, HDF5 contiguous layout)
        self.contiguous = storage is None or not storage.chunks
        self.chunks = shape if storage is None or not storage.chunks else storage.chunks

    def get_orthogonal_selection(self, selection: tuple[Selector, ...]) -> np.ndarray:
        """The values of an orthogonal selection (ints, slices, integer arrays): the bounding
        box is read, then indexed."""
        bounds: list[slice] = []
        within: list[int | np.ndarray] = []
        for entry, size in zip(selection, self.shape):
            if isinstance(entry, slice):
                start, stop, step = entry.indices(size)
                picked = np.arange(start, stop, step)
            elif isinstance(entry, (int, np.integer)):
                picked = np.array([int(entry)])
            else:
                entry = np.asarray(entry)
                picked = np.flatnonzero(entry) if entry.dtype == bool else entry.astype(np.int64)
                picked = np.where(picked < 0, picked + size, picked)
            low = int(picked.min()) if picked.size else 0
            high = int(picked.max()) + 1 if picked.size else 0
            bounds.append(slice(low, high))
            within.append(int(entry) - low if isinstance(entry, (int, np.integer)) else picked - low)
        out = self._source.read(self._variable, tuple(bounds))
        axis = 0
        for index in within:
            out = np.take(out, index, axis=axis)
            if not isinstance(index, int):
                axis += 1
        return out


class SourceSession:
    """Any DatasetSource as the read-only session an API Dataset works with."""

    read_only = True

    def __init__(self, source: DatasetSource) -> None:
        self.source = source
        self.dataset: Dataset = source.dataset
        self.stored = _Stored(source.storage)
        self.store = _Closer(source)
        self._arrays: dict[str, SourceArray] = {}

    def array(self, variable: Variable) -> SourceArray:
        array = self._arrays.get(variable.fqn)
        if array is None:
            shape = tuple(
                ref if isinstance(ref, int) else resolve_dimension(variable.group, ref).size  # type: ignore[arg-type, union-attr]
                for ref in variable.dimensions
            )
            array = self._arrays[variable.fqn] = SourceArray(self.source, variable, shape)
        return array

    def sync(self) -> None:
        """Nothing to write: the dataset is read-only."""

    def close(self) -> None:
        self._arrays.clear()
