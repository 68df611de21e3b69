"""Opening any netCDF container as a :class:`~nczarr.values.source.DatasetSource`: a netCDF-3
file, a netCDF-4 (HDF5) file, or a Zarr dataset read through its format session (the other
way, any source as the session behind an API ``Dataset``, is :mod:`nczarr.api.filesession`)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from nczarr.convert.signatures import HDF5_MAGIC, NETCDF3_MAGIC
from nczarr.errors import ContainerError, DatasetNotFoundError
from nczarr.formats import require_local, stored_dataset
from nczarr.formats.location import NETCDF_FILE_SUFFIXES, parse_location
from nczarr.formats.session import Session
from nczarr.store import Store, ZipStore, open_store
from nczarr.store.fsspec import import_fsspec
from nczarr.values.source import DatasetSource

#: Where a dataset is: a path, a URL (fsspec's, or netcdf-c's ``file:///p#mode=nczarr,file``)
#: or an open store.
DatasetLocation = str | os.PathLike[str] | Store


def file_kind(location: object) -> str | None:
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


def open_source(location: DatasetLocation, *, storage_options: Mapping[str, object] | None = None) -> DatasetSource:
    """A DatasetSource for a netCDF-3 file, a netCDF-4 (HDF5) file or any Zarr dataset."""
    kind = file_kind(location)
    if kind is None:
        url = remote_file_url(location)
        if url is not None:
            return open_remote_file(url, storage_options)
        return zarr_source(location, storage_options=storage_options)
    assert not isinstance(location, Store)  # file_kind names local files only
    # imported here: a command on a Zarr store (nczarr dump, info) starts without them
    if kind == "netcdf3":
        from nczarr.convert.netcdf3 import Netcdf3Reader

        return Netcdf3Reader(location)
    from nczarr.convert.hdf5 import Hdf5Reader

    return Hdf5Reader(location)


def remote_file_url(location: object) -> str | None:
    """The URL of a netCDF file on an fsspec filesystem (``s3://bucket/run/m01.nc``: a URL
    whose name ends as a netCDF file's, without netcdf-c's ``#mode=``), else None."""
    if not isinstance(location, (str, os.PathLike)):
        return None
    text = os.fspath(location)
    remote = "://" in text and not text.startswith("file:") and "#" not in text
    return text if remote and text.lower().endswith(NETCDF_FILE_SUFFIXES) else None


def open_remote_file(url: str, storage_options: Mapping[str, object] | None = None) -> DatasetSource:
    """A netCDF-3 or netCDF-4/HDF5 file at an fsspec URL, read in place by ranged reads (the
    header or metadata, then the bytes of each selection). DatasetNotFoundError where there
    is no such object; ContainerError for anything else."""
    fsspec = import_fsspec()
    try:
        file = fsspec.open(url, "rb", **dict(storage_options or {})).open()
    except FileNotFoundError:
        raise DatasetNotFoundError(f"{url}: no such file or object") from None
    except (OSError, ValueError) as error:
        raise ContainerError(f"{url}: cannot open it: {error}") from error
    head = file.read(8)
    file.seek(0)
    if head[:4] in NETCDF3_MAGIC:  # its header read by byte ranges, its data likewise
        from nczarr.convert.netcdf3 import Netcdf3Reader

        return Netcdf3Reader(url, file=file)
    if head != HDF5_MAGIC:
        file.close()
        raise ContainerError(f"{url}: not a netCDF-3 or netCDF-4/HDF5 file: it starts with {head[:4]!r}")
    from nczarr.convert.hdf5 import Hdf5Reader

    return Hdf5Reader(url, file=file)


class _StoreSession(Session):
    """A read-only format session over a store of its own, which closing the session closes."""

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.store.close()


def zarr_source(location: DatasetLocation, *, storage_options: Mapping[str, object] | None = None) -> Session:
    """A Zarr dataset (any convention) opened read-only as a DatasetSource; closing it closes
    its store. DatasetNotFoundError where there is none, as ``nczarr.Dataset(location)``
    raises."""
    where = None
    if isinstance(location, Store):
        store, display = location, repr(location)
    else:
        display = os.fspath(location)
        where = parse_location(display, storage_options=storage_options)
        require_local(where.target, display)
        if where.zip:  # also a zip archive whose name does not say so (``#mode=zip``)
            store = ZipStore(where.target, "r")
        else:
            store = open_store(where.target, "r", storage_options=where.storage_options)
    try:
        stored = stored_dataset(store, display)
        assert stored is not None  # not new_if_empty
        convention, root = stored
        if where is not None:  # netcdf-c's #mode=zarr reads any store as pure Zarr
            convention = where.reading(convention)
        use_consolidated = None if where is None else where.use_consolidated
        return _StoreSession.open(store, convention, read_only=True, root=root, use_consolidated=use_consolidated)
    except BaseException:
        store.close()
        raise
