"""Opening any netCDF container as a :class:`~nczarr.convert.source.DatasetSource`, and the
adapters between sources and the API: a Zarr dataset read through the API as a source, and
any source as the read-only session behind an API ``Dataset`` (``nczarr.Dataset('x.nc')``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, Protocol

import numpy as np

from nczarr.errors import NCZarrError
from nczarr.formats import VariableStorage
from nczarr.model import Dataset, Variable

#: The first bytes of the containers nczarr reads besides Zarr stores.
NETCDF3_MAGIC = (b"CDF\x01", b"CDF\x02", b"CDF\x05")
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def file_kind(location: Any) -> str | None:
    """``"netcdf3"`` or ``"hdf5"`` for a local file of that kind, else None (a Zarr store)."""
    path = os.fspath(location) if isinstance(location, (str, os.PathLike)) else None
    if path is None or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as error:  # a special file, or no permission
        raise ContainerError(f"{path}: cannot read it: {error.strerror or error}") from error
    if head[:4] in NETCDF3_MAGIC:
        return "netcdf3"
    if head == HDF5_MAGIC:
        return "hdf5"
    return None


def open_source(location: Any, *, storage_options: dict[str, Any] | None = None) -> Any:
    """A DatasetSource for a netCDF-3 file, a netCDF-4 (HDF5) file or any Zarr store."""
    kind = file_kind(location)
    if kind == "netcdf3":
        from nczarr.convert.netcdf3 import Netcdf3Reader

        return Netcdf3Reader(location)
    if kind == "hdf5":
        from nczarr.convert.hdf5 import Hdf5Reader

        return Hdf5Reader(location)
    return zarr_source(location, storage_options=storage_options)


class ApiSource:
    """An open API Dataset (any Zarr convention) as a DatasetSource, read through the API's
    raw path; ``owned``: closing the source closes the dataset."""

    def __init__(self, api: Any, *, owned: bool = False) -> None:
        self._api = api
        self._owned = owned
        session = api._shared.session
        self.dataset: Dataset = session.dataset
        self.storage: dict[str, VariableStorage] = dict(session.stored.storage)
        self.data_model: str = api.data_model

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        return self._api[variable.fqn]._raw(selection)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._owned and self._api.isopen():
            self._api.close()


def zarr_source(location: Any, *, storage_options: dict[str, Any] | None = None) -> ApiSource:
    """A Zarr dataset opened read-only as a DatasetSource."""
    from nczarr.api.dataset import Dataset as ApiDataset

    return ApiSource(ApiDataset(location, "r", storage_options=storage_options), owned=True)


class PaddedBlocks(Protocol):
    """The values of a variable too large to hold whole (what parsing a CDL text gives of
    one): a numpy array per block, and whether all values from a block's first one on (in C
    order) are fill values."""

    def __getitem__(self, selection: tuple[slice, ...] | EllipsisType) -> np.ndarray: ...

    def fill_from(self, selection: tuple[slice, ...]) -> bool: ...


@dataclass
class ArraysSource:
    """A tree and the raw values of each variable in memory (what parsing a CDL text
    gives), as a DatasetSource."""

    dataset: Dataset
    storage: dict[str, VariableStorage]
    data: dict[str, np.ndarray | PaddedBlocks]
    data_model: str

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        values = self.data[variable.fqn]
        return values[selection] if selection else values[...]  # [()] would unwrap a scalar

    def fill_from(self, variable: Variable, selection: tuple[slice, ...]) -> bool:
        """Whether all values from the block's first one on, in C order, are fill values
        (a new dataset need not be written there)."""
        values = self.data[variable.fqn]
        return not isinstance(values, np.ndarray) and values.fill_from(selection)

    def close(self) -> None:
        """Nothing to release."""


# -- a source as the read-only session behind an API Dataset --------------------------------


@dataclass
class _Stored:
    storage: dict[str, VariableStorage]


class SourceArray:
    """A variable of a source with the part of the engine Array interface the API reads
    through; ``raw`` tells the API the values are netCDF values already."""

    raw = True

    def __init__(self, source: Any, variable: Variable, shape: tuple[int, ...]) -> None:
        self._source = source
        self._variable = variable
        self.shape = shape
        self.ndim = len(shape)
        storage = source.storage.get(variable.fqn)
        #: a file's variable without chunks is contiguous (netCDF-3, HDF5 contiguous layout)
        self.contiguous = storage is None or not storage.chunks
        self.chunks = shape if self.contiguous else storage.chunks

    def get_orthogonal_selection(self, selection: tuple[Any, ...]) -> np.ndarray:
        """The values of an orthogonal selection (ints, slices, integer arrays): the bounding
        box is read, then indexed."""
        bounds: list[slice] = []
        within: list[Any] = []
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
        block = self._source.read(self._variable, tuple(bounds))
        out = block
        axis = 0
        for index in within:
            if isinstance(index, int):
                out = np.take(out, index, axis=axis)
            else:
                out = np.take(out, index, axis=axis)
                axis += 1
        return out


class SourceSession:
    """Any DatasetSource as the read-only session an API Dataset works with."""

    read_only = True

    def __init__(self, source: Any) -> None:
        self.source = source
        self.dataset: Dataset = source.dataset
        self.stored = _Stored(source.storage)
        self.store = _Closer(source)
        self._arrays: dict[str, SourceArray] = {}

    def array(self, variable: Variable) -> SourceArray:
        array = self._arrays.get(variable.fqn)
        if array is None:
            from nczarr.model import resolve_dimension

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


@dataclass
class _Closer:
    source: Any
    closed: bool = field(default=False)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.source.close()


class ContainerError(NCZarrError, OSError):
    """A netCDF file nczarr cannot open or write the way asked."""


def read_only_file(location: Any, mode: str) -> None:
    """netCDF-3 and netCDF-4 files are opened read-only: other modes are refused clearly."""
    if mode != "r":
        raise ContainerError(
            f"{os.fspath(location)!r} is a netCDF file: nczarr opens those read-only "
            "(use 'nczarr copy' to make a Zarr dataset of it)"
        )
