"""What every reader of a netCDF container gives the rest of nczarr: the tree, how each
variable is stored, and the raw values of any hyperslab."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from nczarr.formats import VariableStorage
from nczarr.model import Dataset, Variable


class DatasetSource(Protocol):
    """A netCDF dataset open for reading.

    ``dataset`` is the tree (unlimited dimensions hold their current length); ``storage``
    maps a variable's FQN to its chunking, compression and fill settings (absent: defaults);
    ``data_model`` is netCDF4's name of the file's kind (``NETCDF3_CLASSIC``,
    ``NETCDF3_64BIT_OFFSET``, ``NETCDF3_64BIT_DATA``, ``NETCDF4_CLASSIC``, ``NETCDF4``)."""

    dataset: Dataset
    storage: dict[str, VariableStorage]
    data_model: str

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        """The raw values of ``variable`` in ``selection`` (one slice per dimension, step 1,
        within the current shape; ``()`` for a scalar): numbers in the variable's byte order,
        ``S1`` for char, an object array of ``str`` for string, structured arrays (C-aligned,
        as netCDF4 shows them) for compound types, object arrays of 1-D arrays for vlen types,
        the base integers for enums, ``V<n>`` for opaque types."""
        ...

    def close(self) -> None:
        """Release the file."""
        ...
