"""netCDF-3 and netCDF-4/HDF5 files behind an API ``Dataset``.

Read (``nczarr.Dataset('x.nc')``, or a file image with ``memory=``): any
:class:`~nczarr.values.source.DatasetSource` as a read-only session. The API reads a session's
variables through the part of the engine ``Array`` interface given here (``shape``,
``chunks``, ``get_orthogonal_selection``); ``SourceArray.raw`` tells it that the values are raw
netCDF values already (no stored form to convert).

Written (``'w'``) and updated (``'a'``, ``'r+'``): the dataset lives in a Zarr
:class:`~nczarr.store.memory.MemoryStore` (an update loads the file into it, as ``nczarr
copy`` does) and is written out whole at close, to a temporary file that then replaces the
file, so that the file is either the old one or the new one, never a mix.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from nczarr.convert import sources
from nczarr.convert.copy import CopyOptions, copy_source
from nczarr.errors import ArgumentError, ContainerError, NCZarrError
from nczarr.formats.session import Session
from nczarr.model import Dataset, Variable, resolve_dimension
from nczarr.model.resolve import name_anonymous
from nczarr.store import FileState, file_state
from nczarr.store.memory import MemoryStore
from nczarr.values.indexing import Selector
from nczarr.values.source import DatasetSource
from nczarr.values.storage import VariableStorage


def image_source(memory: object, display: str) -> tuple[DatasetSource, Callable[[], None]]:
    """A netCDF-3 or netCDF-4 file image (``memory=``: bytes-like) opened as a source, and
    what removes the temporary copy it is read from once the source is closed."""
    try:
        data = memoryview(memory).tobytes()  # type: ignore[arg-type]
    except TypeError:
        raise ArgumentError(
            f"memory= must hold a netCDF file image (bytes-like) to open {display!r}, "
            f"not {type(memory).__name__}"
        ) from None
    handle, path = tempfile.mkstemp(prefix="nczarr-image-", suffix=".nc")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        if sources.file_kind(path) is None:
            raise ContainerError(f"{display!r}: memory= holds no netCDF-3 or netCDF-4 file image")
        try:
            source = sources.open_source(path)
        except NCZarrError as error:  # named by the temporary copy: say what the user gave
            problem = str(error).replace(f"{path}: ", "").replace(path, "the image")
            raise ContainerError(f"{display!r}: memory= holds no readable file image: {problem}") from None
    except BaseException:
        os.unlink(path)
        raise
    return source, lambda: Path(path).unlink(missing_ok=True)


def file_writer(data_model: str) -> Callable[..., None]:
    """The writer of a netCDF file of ``data_model`` (``write(path, source, data_model)``)."""
    if data_model.startswith("NETCDF3"):
        from nczarr.convert.netcdf3 import write_netcdf3

        return write_netcdf3
    from nczarr.convert.hdf5 import require_h5netcdf
    from nczarr.convert.hdf5write import write_hdf5

    require_h5netcdf()
    return write_hdf5


class FileSession(Session):
    """The session of a netCDF file built in memory. It remembers the storage settings each
    variable was defined with (or, for a file loaded to update, had in the file), which its
    Zarr store cannot tell: no chunks asked for means netCDF4's contiguous layout."""

    requested: dict[int, tuple[Variable, VariableStorage]]

    def define(self, variable: Variable, storage: VariableStorage | None = None) -> None:
        super().define(variable, storage)
        self._requested()[id(variable)] = (variable, storage or VariableStorage())

    def contiguous(self, variable: Variable) -> None:
        """``variable`` was asked to be contiguous (no chunks in the file)."""
        requested = self._requested()
        if id(variable) in requested:
            requested[id(variable)] = (variable, replace(requested[id(variable)][1], chunks=None))

    def keep(self, storage: Mapping[str, VariableStorage]) -> None:
        """The storage settings the loaded file's variables (by FQN) had."""
        requested = self._requested()
        for group in self.dataset.walk():
            for variable in group.variables:
                if variable.fqn in storage:
                    requested[id(variable)] = (variable, storage[variable.fqn])

    def file_storage(self, stored: Mapping[str, VariableStorage]) -> dict[str, VariableStorage]:
        """The storage to write each variable with: as asked or loaded, by its FQN now (it
        may have been renamed), else as ``stored`` (the Zarr store's)."""
        storage = dict(stored)
        for variable, setting in self._requested().values():
            if variable.group is not None and variable.fqn in storage:
                storage[variable.fqn] = setting
        return storage

    def _requested(self) -> dict[int, tuple[Variable, VariableStorage]]:
        if "requested" not in self.__dict__:
            self.requested = {}
        return self.requested


class FileTarget:
    """Writes the dataset in a FileSession's memory store at close as a netCDF file of
    ``data_model``: to ``target`` (atomically), or (``None``) to a file image it returns as
    netCDF4 returns it."""

    def __init__(self, memory: MemoryStore, target: str | None, data_model: str) -> None:
        self.memory, self.target, self.data_model = memory, target, data_model
        self.write = file_writer(data_model)
        self.session: FileSession | None = None  # set once opened
        # the file at the target when opened (None: none): only that one is replaced at
        # close, never a file the program (or anyone) wrote there meanwhile (netCDF4 writes
        # as it goes, into its own file)
        self.replaces = None if target is None else file_state(target)

    def __call__(self) -> memoryview | None:
        if self.target is not None:
            self._write(self.target, self.replaces)
            self.replaces = file_state(self.target)
            return None
        folder = tempfile.mkdtemp(prefix="nczarr-image-")
        try:
            path = os.path.join(folder, "image.nc")
            self._write(path, None)
            return memoryview(Path(path).read_bytes())
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _write(self, path: str, replaces: FileState | None) -> None:
        source = sources.zarr_source(self.memory)
        try:
            name_anonymous(source.dataset)  # a netCDF file names every dimension, as copy does
            if self.data_model.startswith("NETCDF3") or self.session is None:
                self.write(path, source, self.data_model, replaces=replaces)
            else:
                storage = self.session.file_storage(source.storage)
                self.write(path, source, self.data_model, storage=storage, replaces=replaces)
        finally:
            source.close()


@dataclass
class Loaded:
    """A netCDF file loaded into a Zarr store in memory to update it."""

    store: MemoryStore
    data_model: str
    disk_format: str
    storage: dict[str, VariableStorage]  # the file's variables' storage settings, by FQN


def load_file(path: str, display: str, convention: str) -> Loaded:
    """The netCDF file at ``path`` loaded into a Zarr store in memory (``convention``) for an
    update. What the file's writer could not write back is refused here, before anything
    changes."""
    source = sources.open_source(path)
    try:
        data_model = source.data_model
        found = _update_problems(source, data_model)
        if found:
            raise ContainerError(
                f"{display!r}: nczarr cannot write this file back, so it cannot update it "
                "(open it with mode='r'):\n  " + "\n  ".join(found)
            )
        data: dict[str, bytes] = {}
        copy_source(source, MemoryStore(data), CopyOptions(format=convention))
        disk = "NETCDF3" if data_model.startswith("NETCDF3") else "HDF5"
        return Loaded(MemoryStore(data), data_model, disk, dict(source.storage))
    finally:
        source.close()


def _update_problems(source: DatasetSource, data_model: str) -> list[str]:
    if data_model.startswith("NETCDF3"):
        from nczarr.convert.netcdf3 import problems as netcdf3_problems

        return netcdf3_problems(source.dataset, data_model)
    from nczarr.convert.hdf5write import problems

    found = problems(source.dataset, data_model, source.storage)
    # the filters the reader found and the writer would leave out (Hdf5Reader.unsupported)
    unsupported: Mapping[str, str] = getattr(source, "unsupported", {})
    return found + [f"{fqn}: {what}, which nczarr does not write" for fqn, what in unsupported.items()]


@dataclass
class _Stored:
    storage: dict[str, VariableStorage]


@dataclass
class _Closer:
    """The session's "store": closing it closes the source, once."""

    source: DatasetSource
    cleanup: Callable[[], None] | None = None  # what removes a file image's temporary copy
    closed: bool = field(default=False)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.source.close()
            finally:
                if self.cleanup is not None:
                    self.cleanup()


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

    def __init__(self, source: DatasetSource, cleanup: Callable[[], None] | None = None) -> None:
        self.source = source
        self.dataset: Dataset = source.dataset
        self.stored = _Stored(source.storage)
        self.store = _Closer(source, cleanup)
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
