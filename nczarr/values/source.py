"""What every front end reads a dataset through (:class:`DatasetSource`: a Zarr store through
its format session, a netCDF-3 or HDF5 file, a parsed CDL text) and writes one through
(:class:`DatasetSink`): the tree, how each variable is stored, and raw netCDF values by
hyperslab. Raw values are netCDF4's before its automatic conversions (see
:mod:`nczarr.values.stored`)."""

from __future__ import annotations

from dataclasses import dataclass
from types import EllipsisType
from typing import Protocol

import numpy as np

from nczarr.model import Dataset, Variable
from nczarr.values.storage import VariableStorage

#: One slice per dimension, step 1, within the current shape; ``()`` for a scalar.
Hyperslab = tuple[slice, ...]


class DatasetSource(Protocol):
    """A netCDF dataset open for reading.

    ``dataset`` is the tree (unlimited dimensions hold their current length); ``storage``
    maps a variable's FQN to its chunking, compression and fill settings (absent: defaults);
    ``data_model`` is netCDF4's name of the file's kind (``NETCDF3_CLASSIC``,
    ``NETCDF3_64BIT_OFFSET``, ``NETCDF3_64BIT_DATA``, ``NETCDF4_CLASSIC``, ``NETCDF4``)."""

    @property
    def dataset(self) -> Dataset: ...

    @property
    def storage(self) -> dict[str, VariableStorage]: ...

    @property
    def data_model(self) -> str: ...

    def read(self, variable: Variable, selection: Hyperslab) -> np.ndarray:
        """The raw values of ``variable`` in ``selection``: numbers in the variable's byte
        order, ``S1`` for char, an object array of ``str`` for string, structured arrays
        (C-aligned, as netCDF4 shows them) for compound types, object arrays of 1-D arrays
        for vlen types, the base integers for enums, ``V<n>`` for opaque types."""
        ...

    def close(self) -> None:
        """Release the file."""
        ...


class DatasetSink(Protocol):
    """A netCDF dataset being written: its tree (with each variable's storage) was created
    when the sink was made; values arrive as raw values by hyperslab (see
    :meth:`DatasetSource.read`), and ``close`` makes everything durable."""

    @property
    def dataset(self) -> Dataset: ...

    def write(self, variable: Variable, selection: Hyperslab, values: np.ndarray) -> None:
        """Store the raw ``values`` of ``variable`` in ``selection`` (the values' shape)."""
        ...

    def close(self) -> None:
        """Write what is pending and release the target."""
        ...


class PaddedBlocks(Protocol):
    """The values of a variable too large to hold whole (what parsing a CDL text gives of
    one): a numpy array per block, and whether all values from a block's first one on (in C
    order) are fill values."""

    def __getitem__(self, selection: Hyperslab | EllipsisType) -> np.ndarray: ...

    def fill_from(self, selection: Hyperslab) -> bool: ...


@dataclass
class ArraysSource:
    """A tree and the raw values of each variable in memory (what parsing a CDL text
    gives), as a DatasetSource."""

    dataset: Dataset
    storage: dict[str, VariableStorage]
    data: dict[str, np.ndarray | PaddedBlocks]
    data_model: str

    def read(self, variable: Variable, selection: Hyperslab) -> np.ndarray:
        values = self.data[variable.fqn]
        return values[selection] if selection else values[...]  # [()] would unwrap a scalar

    def fill_from(self, variable: Variable, selection: Hyperslab) -> bool:
        """Whether all values from the block's first one on, in C order, are fill values
        (a new dataset need not be written there)."""
        values = self.data[variable.fqn]
        return not isinstance(values, np.ndarray) and values.fill_from(selection)

    def close(self) -> None:
        """Nothing to release."""
