"""Where a dataset is and how netcdf-c's URL says to store it: a path, a URL, or netcdf-c's
URL (``file:///p#mode=nczarr,file``, ``s3://bucket/key#mode=zarr``, ...), so that locations
written for netcdf-c keep working wherever nczarr opens a dataset (the API, MFDataset, the
xarray engine, every command).

Where the keys are is :mod:`nczarr.store.url`'s; this module reads the convention words as
netcdf-c 4.10.1 does (checked file by file against what it writes):

- ``nczarr``: NCZarr 2.0.0 (``NCZARR_V2``); ``zarr`` or ``xarray``: pure Zarr v2 with
  ``_ARRAY_DIMENSIONS`` (``ZARR_V2``); ``noxarray``, with or without ``zarr`` or ``nczarr``:
  pure Zarr v2 without them (every dimension anonymous); ``v3``: the Zarr v3 conventions
  instead (netcdf-c 4.10.1 builds without v3 and writes v2 anyway); ``v2``: the default.
- ``consolidated`` (or netcdf-c's ``NCZARR_CONSOLIDATED=TRUE``): ``.zmetadata`` is written
  and read; a URL with mode words but not this one (or ``NCZARR_CONSOLIDATED=FALSE``) writes
  none and reads the nodes (plain paths keep the conventions' default: consolidated).
- ``NCZARRFORMAT=3``: the Zarr v3 conventions for a URL that names neither ``v2`` nor ``v3``.
- Reading: ``zarr``, ``xarray`` or ``noxarray`` read any store as pure Zarr (an NCZarr store's
  ``_nczarr_*`` keys ignored; ``noxarray``: its ``_ARRAY_DIMENSIONS`` too); ``nczarr`` reads
  whatever the store holds, as netcdf-c falls back to pure Zarr.
"""

from __future__ import annotations

import glob
import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass

from nczarr.config import netcdf_c_consolidated, netcdf_c_zarr_format
from nczarr.errors import ArgumentError
from nczarr.formats.base import Convention
from nczarr.formats.purezarr import PureZarr, PureZarrV2
from nczarr.store.url import StoreURL, parse_store_url

#: File name endings that make a path name a netCDF file rather than a Zarr store (as a
#: target: a source file is known by its first bytes).
NETCDF_FILE_SUFFIXES = (".nc", ".nc3", ".nc4", ".cdf", ".netcdf")
#: The mode words that ask for pure Zarr, reading and writing.
_PURE_WORDS = frozenset({"zarr", "xarray", "noxarray"})


@dataclass(frozen=True)
class Location(StoreURL):
    """A parsed dataset location: where its keys are (:class:`~nczarr.store.url.StoreURL`)
    and what the netcdf-c URL's mode words ask for: the convention to write, whether
    dimension names and consolidated metadata are written, how to read."""

    @property
    def convention(self) -> str | None:
        """The convention the mode words name (``NCZARR_V2``, ``ZARR_V2``, ``NCZARR``,
        ``ZARR``), None when they name none."""
        words = set(self.mode)
        if words & _PURE_WORDS:
            name = "ZARR"
        elif "nczarr" in words:
            name = "NCZARR"
        else:
            return None
        v3 = "v3" in words or ("v2" not in words and netcdf_c_zarr_format() == 3)
        return name if v3 else f"{name}_V2"

    @property
    def xarray(self) -> bool:
        """Whether dimension names are stored and read (``_ARRAY_DIMENSIONS``); not with ``noxarray``."""
        return "noxarray" not in self.mode

    @property
    def consolidated(self) -> bool | None:
        """Whether consolidated metadata is written: always when the mode words name
        ``consolidated``, else as ``NCZARR_CONSOLIDATED`` says when it is set, else not for a
        URL with mode words, and None (the convention's default) for any other location."""
        if "consolidated" in self.mode:
            return True
        setting = netcdf_c_consolidated()
        if setting is not None:
            return setting
        return False if self.mode else None

    @property
    def use_consolidated(self) -> bool | None:
        """Whether reading may use consolidated metadata (None: when there is some, see
        :meth:`Convention.read`): not when ``NCZARR_CONSOLIDATED`` is set to no, nor, as in
        netcdf-c, for a URL with mode words that names neither ``consolidated`` nor that
        setting; a copy that is not there is no error (netcdf-c reads the nodes then too)."""
        return None if self.consolidated is not False else False

    def convention_options(self, name: str) -> dict[str, bool]:
        """The options the mode words give the convention ``name`` a new dataset here is
        written in (for :func:`nczarr.formats.convention`)."""
        options: dict[str, bool] = {}
        if self.consolidated is not None:
            options["consolidated"] = self.consolidated
        if name.upper() == "ZARR_V2" and self.mode:
            options["netcdf_c_layout"] = True  # netcdf-c 4.10.1 reads neither shape [] scalars nor vlen-utf8
        if not self.xarray and name.upper().startswith("ZARR"):
            options["xarray"] = False
        return options

    def reading(self, detected: Convention) -> Convention:
        """The convention to read the store with, given the one its documents show: pure Zarr
        of the same Zarr version when the mode words ask for it, else the detected one."""
        if not set(self.mode) & _PURE_WORDS or (isinstance(detected, PureZarr) and self.xarray):
            return detected
        pure = PureZarr if detected.zarr_format == 3 else PureZarrV2
        return pure(xarray=self.xarray)


def parse_location(
    filename: str | bytes | os.PathLike[str],
    encoding: str | None = None,
    storage_options: Mapping[str, object] | None = None,
) -> Location:
    """The location of a dataset's name: a path, a URL, or a netcdf-c URL whose ``#mode=``
    words name the storage (``file``, ``zip``, ``s3``, ``gs3``) and the convention (see the
    module's docstring); ``storage_options`` win over those the URL implies. ArgumentError
    for an unknown mode word, naming it and the URL."""
    if isinstance(filename, bytes):
        filename = filename.decode(encoding or "utf-8")
    target = os.fspath(filename) if isinstance(filename, os.PathLike) else filename
    if not isinstance(target, str):
        raise ArgumentError(f"a dataset location must be a path or URL, not {filename!r}")
    return Location(**vars(parse_store_url(target, storage_options)))


def local_matches(pattern: str) -> list[str] | None:
    """The local files a glob pattern names, sorted: paths, or for a netcdf-c URL
    (``file:///d/x*.file#mode=zarr,file``) file URLs, each with the pattern's fragment. None
    for a remote location (which the caller globs, or not)."""
    location = parse_location(pattern)
    if not location.local:
        return None
    found = sorted(glob.glob(location.target))
    if location.target == pattern:
        return found
    fragment = f"#{location.fragment}" if location.fragment else ""
    return [pathlib.Path(os.path.abspath(path)).as_uri() + fragment for path in found]
