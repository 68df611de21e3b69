"""The ``nczarr`` engine of ``xarray.open_dataset``: any dataset nczarr opens (NCZarr, netcdf-c's
NCZarr and pure Zarr, zarr-python's and xarray's stores, netCDF files), read lazily.

The engine is a face: it opens an :class:`nczarr.Dataset` (through xarray's file manager, so
that a dask worker reopens it by name), hands xarray each variable's stored values with
netCDF4-python's automatic mask, scale and char-to-string rules turned off, and leaves CF
decoding to xarray, exactly as xarray's own netCDF4 engine does; the data types, dimension
names and attributes nczarr gives a pure Zarr store (anonymous and renamed dimensions, mapped
data types) are the api's, so the engine shows what ``nczarr dump`` shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, suppress
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, ClassVar

from xarray.backends.common import BackendEntrypoint, datatree_from_dict_with_io_cleanup
from xarray.backends.store import StoreBackendEntrypoint
from xarray.core.utils import close_on_error

from nczarr.formats import detect
from nczarr.formats.location import parse_location
from nczarr.store import ZipStore, open_store
from nczarr.store.fsspec import FsspecStore
from nczarr.xarray.store import NczarrDataStore

if TYPE_CHECKING:
    import xarray as xr

#: The conventions whose stores are unambiguously nczarr's to open when no engine is named
#: (pure Zarr stays with xarray's zarr engine, ``.nc`` files with its netCDF engines).
#: NCZarr, and the 2019 Zarr v3 draft layout, which no other engine reads (zarr-python 3 refuses it)
_CLAIMED_CONVENTIONS = frozenset({"NCZARR", "NCZARR_V2", "ZARR_V3_DRAFT"})


def _claims(path: str) -> bool:
    """Whether ``path`` is unambiguously nczarr's: a netcdf-c URL naming its Zarr storage
    (``#mode=...``), or a local folder or zip archive holding an NCZarr dataset or a Zarr v3
    draft store."""
    with suppress(Exception):  # whatever is not readable as a store is not ours
        location = parse_location(path)
        if location.convention is not None:
            return True
        if not (os.path.isdir(location.target) or (location.zip and os.path.isfile(location.target))):
            return False
        store = ZipStore(location.target, "r") if location.zip else open_store(location.target, "r")
        try:
            return detect(store).name in _CLAIMED_CONVENTIONS
        finally:
            store.close()
    return False


def _claims_mapper(mapper: object) -> bool:
    """Whether ``mapper`` is an fsspec mapper onto an NCZarr dataset."""
    fs, root = getattr(mapper, "fs", None), getattr(mapper, "root", None)
    if fs is None or not isinstance(root, str):
        return False
    with suppress(Exception):  # whatever is not readable as a store is not ours
        store = FsspecStore(fs, read_only=True, path=root)
        try:
            return detect(store).name in _CLAIMED_CONVENTIONS
        finally:
            store.close()
    return False


class NczarrBackendEntrypoint(BackendEntrypoint):
    """Opens any dataset nczarr opens with xarray: ``xr.open_dataset(path, engine="nczarr")``.

    ``group``: the path of one group (default: the root); ``storage_options``: fsspec's, for
    URLs; ``lock``: serialises reads of one store (default: one lock per store). xarray's decoding
    keywords (``mask_and_scale``, ``decode_times``, ...) work as for its netCDF4 engine."""

    description = "Open NCZarr, Zarr and netCDF datasets with nczarr in xarray"
    url = "https://github.com/nczarr/nczarr/blob/main/docs/xarray.md"
    supports_groups = True
    open_dataset_parameters: ClassVar[tuple[str, ...]] = (
        "filename_or_obj",
        "mask_and_scale",
        "decode_times",
        "concat_characters",
        "decode_coords",
        "drop_variables",
        "use_cftime",
        "decode_timedelta",
        "group",
        "storage_options",
        "lock",
        "auto_complex",
    )

    def guess_can_open(self, filename_or_obj: object) -> bool:
        if isinstance(filename_or_obj, str | os.PathLike):
            return _claims(os.fspath(filename_or_obj))
        return _claims_mapper(filename_or_obj)

    @staticmethod
    def open_store(
        filename_or_obj: object,
        mode: str = "r",
        *,
        format: str | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> NczarrDataStore:
        """The data store the engine reads and ``to_nczarr`` writes (an xarray
        ``AbstractWritableDataStore``), as xarray's own stores open:
        ``NczarrBackendEntrypoint.open_store("out.zarr", mode="w")``."""
        return NczarrDataStore.open(
            filename_or_obj, mode, format=format, group=group, storage_options=storage_options, lock=lock
        )

    def open_dataset(
        self,
        filename_or_obj: object,
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
        auto_complex: bool | None = None,
    ) -> xr.Dataset:
        store = NczarrDataStore.open(
            filename_or_obj, "r", group=group, storage_options=storage_options, lock=lock, auto_complex=auto_complex
        )
        decoders = _Decoders(
            mask_and_scale, decode_times, concat_characters, decode_coords, drop_variables, use_cftime, decode_timedelta
        )
        return decoders.open(store)

    def open_groups_as_dict(
        self,
        filename_or_obj: object,
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
        auto_complex: bool | None = None,
    ) -> dict[str, xr.Dataset]:
        """Every group at or below ``group``, by its path relative to ``group`` (``/`` first)."""
        store = NczarrDataStore.open(
            filename_or_obj, "r", group=group, storage_options=storage_options, lock=lock, auto_complex=auto_complex
        )
        decoders = _Decoders(
            mask_and_scale, decode_times, concat_characters, decode_coords, drop_variables, use_cftime, decode_timedelta
        )
        groups: dict[str, xr.Dataset] = {}
        try:
            for path in store.group_paths():
                groups[path] = decoders.open(store.get_child_store(path))
        except BaseException:
            for opened in groups.values():
                opened.close()
            raise
        return groups

    def open_datatree(
        self,
        filename_or_obj: object,
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        storage_options: Mapping[str, object] | None = None,
        lock: AbstractContextManager[object] | None = None,
        auto_complex: bool | None = None,
    ) -> xr.DataTree:
        groups = self.open_groups_as_dict(
            filename_or_obj,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
            group=group,
            storage_options=storage_options,
            lock=lock,
            auto_complex=auto_complex,
        )
        return datatree_from_dict_with_io_cleanup(groups)


@dataclass(frozen=True)
class _Decoders:
    """xarray's CF decoding keywords, as ``open_dataset`` takes them."""

    mask_and_scale: bool
    decode_times: bool
    concat_characters: bool
    decode_coords: bool
    drop_variables: str | Iterable[str] | None
    use_cftime: bool | None
    decode_timedelta: bool | None

    def open(self, store: NczarrDataStore) -> xr.Dataset:
        """The decoded dataset of ``store`` (closed again when decoding fails)."""
        with close_on_error(store):
            return StoreBackendEntrypoint().open_dataset(store, **asdict(self))
