"""The on-disk conventions that map a netCDF model tree onto a Zarr hierarchy, by the names
users pass as ``format=``: ``NCZARR`` (the default, NCZarr on Zarr v3), ``NCZARR_V2``
(netcdf-c's NCZarr 2.0.0), ``ZARR`` and ``ZARR_V2`` (pure Zarr as xarray writes it),
``ZARR_V3_DRAFT`` (pure Zarr in the layout of the Zarr v3 core-protocol draft of 2019).

This room is the only one that knows the ``_nczarr_*`` attribute names. Opening a store
needs no name: :func:`detect` recognises the convention from the root's documents.
"""

from __future__ import annotations

import errno
import os

from nczarr.errors import DatasetNotFoundError, FormatError, MetadataError
from nczarr.formats.base import Convention, StoredDataset, path_of
from nczarr.formats.dialect import RootDocuments
from nczarr.formats.nczarr2 import NczarrV2
from nczarr.formats.nczarr3 import Nczarr
from nczarr.formats.purezarr import PureZarr, PureZarrDraft, PureZarrV2
from nczarr.store.base import Store
from nczarr.zarr.metadata import ZARR_JSON, ZARRAY, ZGROUP, parse_node

#: The conventions by ``format=`` name.
CONVENTIONS: dict[str, type[Convention]] = {
    cls.name: cls for cls in (Nczarr, NczarrV2, PureZarr, PureZarrV2, PureZarrDraft)
}
DEFAULT_FORMAT = "NCZARR"
#: The order in which :func:`detect` asks: the v3 draft's entry point first (its root
#: ``zarr.json`` is no node), then NCZarr before pure Zarr, v3 before v2.
_DETECTION = (PureZarrDraft, Nczarr, PureZarr, NczarrV2, PureZarrV2)


def convention(name: str = DEFAULT_FORMAT, **options: bool) -> Convention:
    """The convention named ``name`` (case-insensitive); ``options`` go to its constructor
    (``byte_compatible=True`` for ``NCZARR_V2``)."""
    cls = CONVENTIONS.get(name.upper())
    if cls is None:
        raise FormatError(f"unknown format {name!r}; use one of {', '.join(CONVENTIONS)}")
    return cls(**options)


def detect(store: Store, root: RootDocuments | None = None) -> Convention:
    """The convention of the dataset in ``store``, from the documents at its root (``root``:
    as read by :meth:`RootDocuments.read`, to be handed on to the convention's ``read``)."""
    if root is None:
        root = RootDocuments.read(store)
    for cls in _DETECTION:
        if cls.recognises(root):
            return cls()
    if ZARRAY in root or b'"array"' in root.get(ZARR_JSON, b""):
        raise FormatError(f"{store!r}: the root is a Zarr array, not a group; open it as a Zarr array")
    for key in (ZARR_JSON, ZGROUP):
        if key in root:  # a root document no convention recognises: say what is wrong with it
            try:
                parse_node({key: root[key]}) if key == ZARR_JSON else root.parsed(key)
            except MetadataError as exc:
                raise FormatError(f"{store!r}: {exc}") from None
    raise FormatError(f"{store!r} holds no Zarr dataset: no zarr.json, .zgroup or .nczarr at its root")


def stored_dataset(store: Store, display: str, *, new_if_empty: bool = False) -> tuple[Convention, RootDocuments] | None:
    """The convention and root documents of the dataset ``store`` holds. An empty store holds
    none: None where it may become a new dataset (``new_if_empty``: netCDF4's 'a' and 'r+'
    create one), else DatasetNotFoundError naming ``display``, as for a missing file."""
    root = RootDocuments.read(store)
    try:
        return detect(store, root), root
    except FormatError:
        if next(iter(store.list_prefix("")), None) is not None:
            raise
        if new_if_empty:
            return None
        raise DatasetNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), display) from None


def require_local(target: str, display: str) -> None:
    """DatasetNotFoundError naming ``display`` where ``target`` is a local path that does not
    exist (a URL is asked when its store opens)."""
    if "://" not in target and not os.path.exists(target):
        raise DatasetNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), display)


__all__ = [
    "CONVENTIONS",
    "DEFAULT_FORMAT",
    "Convention",
    "FormatError",
    "Nczarr",
    "NczarrV2",
    "PureZarr",
    "PureZarrDraft",
    "PureZarrV2",
    "RootDocuments",
    "StoredDataset",
    "convention",
    "detect",
    "path_of",
    "require_local",
    "stored_dataset",
]
