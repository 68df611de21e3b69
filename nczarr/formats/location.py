"""Where a dataset is: a path, a URL, or netcdf-c's NCZarr URL (``file:///p#mode=nczarr,file``)
whose mode words name the storage and the convention, so that locations written for
netcdf-c keep working wherever nczarr opens a dataset (the API, ``nczarr copy``, ``dump``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit
from urllib.request import url2pathname

from nczarr.errors import ArgumentError

#: File name endings that make a path name a netCDF file rather than a Zarr store (as a
#: target: a source file is known by its first bytes).
NETCDF_FILE_SUFFIXES = (".nc", ".nc3", ".nc4", ".cdf", ".netcdf")
#: netcdf-c mode words that name a storage kind, a convention, or an option we can ignore.
_STORAGE_WORDS = {"file", "zip", "s3", "gs3"}
_CONVENTION_WORDS = {"nczarr", "zarr"}
_IGNORED_WORDS = {"xarray", "noxarray", "consolidated", "log", "show"}


@dataclass(frozen=True)
class Location:
    """A parsed dataset location: where the store is (a path or URL ``open_store`` takes),
    whether it is a zip archive, and the convention its netcdf-c URL names (None: not named)."""

    target: str
    zip: bool = False
    convention: str | None = None


def parse_location(filename: str | bytes | os.PathLike[str], encoding: str | None = None) -> Location:
    """The store location of a dataset's name: a path, a URL, or a netcdf-c NCZarr URL
    whose ``#mode=`` words name the storage (``file``, ``zip``, ``s3``) and the convention
    (``nczarr``: NCZarr, ``zarr``: pure Zarr; Zarr v2 unless ``v3`` is named, as netcdf-c
    4.10 writes)."""
    if isinstance(filename, bytes):
        filename = filename.decode(encoding or "utf-8")
    target = os.fspath(filename) if isinstance(filename, os.PathLike) else filename
    if not isinstance(target, str):
        raise ArgumentError(f"a dataset location must be a path or URL, not {filename!r}")
    base, hash_, fragment = target.partition("#")
    words = _mode_words(fragment) if hash_ else []
    if not words:
        return Location(target, zip=target.lower().endswith(".zip"))
    unknown = [w for w in words if w not in _STORAGE_WORDS | _CONVENTION_WORDS | _IGNORED_WORDS | {"v2", "v3"}]
    if unknown:
        raise ArgumentError(f"unknown mode word(s) {', '.join(unknown)} in {target!r}")
    convention = None
    if "nczarr" in words or "zarr" in words:
        name = "NCZARR" if "nczarr" in words else "ZARR"
        convention = name if "v3" in words else f"{name}_V2"
    if "s3" in words or "gs3" in words:
        base = _s3_url(base)
    if "zip" in words and urlsplit(base).scheme == "file":  # a zip archive is opened by its path
        base = url2pathname(urlsplit(base).path)
    return Location(base, zip="zip" in words, convention=convention)


def _mode_words(fragment: str) -> list[str]:
    words: list[str] = []
    for item in fragment.split("&"):
        key, _, value = item.partition("=")
        if key.strip().lower() == "mode":
            words.extend(w.strip().lower() for w in value.split(",") if w.strip())
    return words


def _s3_url(url: str) -> str:
    """An fsspec ``s3://bucket/key`` URL for netcdf-c's path-style S3 URLs
    (``https://s3.<region>.amazonaws.com/bucket/key``); other URLs unchanged."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc.split(".")[0] == "s3":
        bucket_and_key = parts.path.lstrip("/")
        return urlunsplit(("s3", "", bucket_and_key, "", "")).replace("s3:///", "s3://", 1)
    return url
