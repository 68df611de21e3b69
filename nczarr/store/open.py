"""Opening the right store for a path, a URL, an fsspec mapper or filesystem, or an existing
store."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, NoReturn

from nczarr import config
from nczarr.errors import (
    ForeignContentError,
    InvalidModeError,
    NodeExistsError,
    ReadOnlyError,
    StoreError,
)
from nczarr.store._files import is_temp_name, remove_contents
from nczarr.store.base import Store
from nczarr.store.directory import DirectoryStore
from nczarr.store.fsspec import CREDENTIALS_HINT, FsspecStore
from nczarr.store.obstore import S3_SCHEMES, ObstoreStore
from nczarr.store.references import TABLE_FOLDER, has_table, is_kerchunk, open_kerchunk, open_virtual
from nczarr.store.url import parse_store_url
from nczarr.store.zip import ZipStore

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem
    from fsspec.mapping import FSMap

logger = logging.getLogger(__name__)

#: Open modes, as in netCDF4-python and zarr-python.
MODES = {
    "r": "read-only; the location must exist",
    "r+": "read and write; the location must exist",
    "a": "read and write; the location is created if missing",
    "w": "create, replacing whatever is at the location",
    "w-": "create; the location must not exist",
    "x": "create; the location must not exist",
}


def open_store(
    location: Store | str | os.PathLike[str] | FSMap | AbstractFileSystem,
    mode: str = "r",
    *,
    storage_options: Mapping[str, object] | None = None,
) -> Store:
    """The store at ``location``, opened in ``mode`` (see ``MODES``).

    A Store is returned as it is. An fsspec mapper (``fsspec.get_mapper(url)``) is the store
    at its root; an fsspec filesystem object the store at the filesystem's root (a
    ``DirFileSystem``, a ``ZipFileSystem``...); both take no ``storage_options`` (they were
    given when the object was made). ``location`` may be a netcdf-c URL
    (``file:///p#mode=nczarr,file``, ``file:///p.zip#mode=zarr,zip``, ``s3://bucket/key``,
    ``https://HOST/bucket/key#mode=nczarr,s3``: see :mod:`nczarr.store.url`; its convention
    words are for the callers to read). A local path or ``file:`` URL opens a ZipStore when it
    ends in ``.zip`` or names ``zip``, else a DirectoryStore; an ``s3://`` URL an ObstoreStore
    when ``nczarr.config.s3_client()`` allows it (see :func:`remote_store`); any other URL an
    FsspecStore, with the ``storage_options`` the URL implies and those given.
    """
    if mode not in MODES:
        raise InvalidModeError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if isinstance(location, Store):
        return location
    if isinstance(location, os.PathLike):
        location = os.fspath(location)
    if not isinstance(location, str):
        fsspec_store = _fsspec_object_store(location, mode, storage_options)
        if fsspec_store is None:
            raise StoreError(
                f"cannot open a store at {location!r}: expected a path, URL, fsspec mapper or filesystem, or Store"
            )
        return _prepared(fsspec_store, repr(fsspec_store), mode)
    where = parse_store_url(location, storage_options)
    if is_kerchunk(where.target, where.storage_options):
        if mode != "r":
            raise ReadOnlyError(f"{location!r} holds kerchunk references, which nczarr opens read-only")
        return open_kerchunk(where.target, where.storage_options)
    if not where.local:
        if where.target.lower().endswith(".zip") and "::" not in where.target:
            return _open_remote_zip(where.target, mode, where.storage_options)
        return _open_fsspec(where.target, mode, where.storage_options)
    if where.zip:
        return _open_zip(where.target, mode, where.zip_folder)
    if mode == "r" and has_table(where.target):  # references into sources the options may open
        return open_virtual(where.target, DirectoryStore(where.target, read_only=True), where.storage_options)
    return _open_directory(where.target, mode)


def _refuse_existing(location: str) -> NoReturn:
    raise NodeExistsError(f"{location!r} already exists (mode 'w-' creates only new datasets)")


#: Metadata documents, at any level of a hierarchy: Zarr v3, Zarr v2 (with consolidated
#: metadata) and NCZarr v1 (netcdf-c 4.8). A folder holding one is a node of the hierarchy.
_METADATA_NAMES = frozenset(
    {"zarr.json", ".zgroup", ".zarray", ".zattrs", ".zmetadata"}
    | {".nczarr", ".nczgroup", ".nczarray", ".nczvar", ".nczattrs", ".nczattr"}
)
#: A segment of a chunk (or shard) key below its array's folder: v3 ``c/0/1`` and ``c.0.1``
#: (``c`` alone for a scalar), v2 ``0.1`` and ``0/1``.
_CHUNK_SEGMENT = re.compile(r"(?:c|[0-9]+)(?:\.[0-9]+)*")
#: The 2019 v3 draft's keys below its entry point ``zarr.json``: node documents
#: ``meta/root/<path>.group.json`` / ``.array.json`` and chunks ``data/root/<path>/c0/1``
#: (zarr-python 2.18), ``c0.1`` or ``0.0`` (the draft text).
_DRAFT_DOCUMENT = re.compile(r"meta/root(?:/.+)?\.(?:group|array)\.json")
_DRAFT_CHUNK = re.compile(r"data/root/(?:.+/)?(?:c?[0-9]+(?:\.[0-9]+)*|c)")
#: How many of the keys in the way an error names.
_NAMED = 5


def foreign_keys(keys: Iterable[str]) -> list[str]:
    """The keys that are not part of a Zarr hierarchy whose root is the top, sorted.

    Part of a hierarchy are: metadata documents (``_METADATA_NAMES``) in any folder, which
    makes that folder a node; below a node, keys whose name is a chunk key segment
    (``_CHUNK_SEGMENT``), also in folders that hold no document: the chunks of arrays whose
    documents a killed writer never wrote (chunks are stored before the documents that make
    them visible); and our own temporary files. Names decide, so nothing is read (groups and
    arrays are not told apart: a file named ``0`` beside a group's ``zarr.json`` passes).
    Everything else, such as a user's ``notes.txt`` beside a ``zarr.json``, or any key when
    the top holds no metadata document, is foreign."""
    keys = [key for key in keys if not is_temp_name(key.rpartition("/")[2])]
    if not any(key in _METADATA_NAMES for key in keys):
        return sorted(keys)
    return sorted(key for key in keys if not _in_hierarchy(key))


def _in_hierarchy(key: str) -> bool:
    name = key.rpartition("/")[2]
    if name in _METADATA_NAMES or _CHUNK_SEGMENT.fullmatch(name) is not None:
        return True
    if key.startswith(TABLE_FOLDER + "/"):  # a virtual dataset's reference table
        return True
    return _DRAFT_DOCUMENT.fullmatch(key) is not None or _DRAFT_CHUNK.fullmatch(key) is not None


def _refuse_foreign(keys: Iterable[str], location: str) -> None:
    """Mode 'w' replaces a Zarr hierarchy; it must not delete anything else."""
    keys = list(keys)
    foreign = foreign_keys(keys)
    if not foreign:
        return
    if any(key in _METADATA_NAMES for key in keys):
        what = "besides a Zarr dataset it holds"
        names = sorted(foreign, key=lambda key: (key.count("/"), key))  # the shallowest first
    else:
        what = "it holds no Zarr dataset (no metadata document at its top) but holds"
        names = sorted({key.partition("/")[0] + key.partition("/")[1] for key in foreign})
    named = ", ".join(repr(name) for name in names[:_NAMED])
    more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    raise ForeignContentError(
        f"refusing to replace {location!r}: {what} {named}{more}; move these away or "
        "choose another location"
    )


def _open_directory(path: str, mode: str) -> DirectoryStore:
    if mode in ("r", "r+") and os.path.isfile(path):
        _refuse_file(path)
    if has_table(path) and mode in ("r+", "a"):
        raise ReadOnlyError(
            f"{path!r} is a virtual dataset (its chunks are references into other files): it opens read-only; "
            "nczarr copy makes a dataset of its own"
        )
    if mode == "r":
        return DirectoryStore(path, read_only=True)
    if mode == "r+":
        return DirectoryStore(path, create=False)
    if mode in ("w-", "x") and os.path.lexists(path):
        _refuse_existing(path)
    if mode == "w" and os.path.lexists(path):
        if not os.path.isdir(path):
            raise StoreError(f"refusing to replace {path!r} with a dataset: it is not a directory")
        # A link to a directory is replaced where it points, as netCDF4 replaces the file a
        # link names; the link itself stays.
        real = os.path.realpath(path)
        try:
            _refuse_foreign(_local_keys(real), path)
            logger.debug("removing the dataset in %r to create a new one there", path)
            remove_contents(real)
        except ForeignContentError:
            raise
        except OSError as exc:
            raise StoreError(f"cannot remove the dataset in {path!r} to create a new one: {exc}") from exc
    return DirectoryStore(path)


def _refuse_file(path: str) -> NoReturn:
    """A file where a Zarr store (a folder) was expected: what it is not, and a zip archive's way in."""
    try:
        with open(path, "rb") as file:
            zipped = file.read(4) == b"PK\x03\x04"
    except OSError as exc:
        raise StoreError(f"cannot read {path!r}: {exc.strerror or exc}") from exc
    if zipped:
        raise StoreError(f"{path!r} is a zip archive: name it '.zip' or open 'file://{os.path.abspath(path)}#mode=nczarr,zip'")
    raise StoreError(
        f"{path!r} is a file but neither a netCDF file (no netCDF-3 or HDF5 signature) nor a Zarr store (a folder or a .zip)"
    )


def _local_keys(root: str) -> Iterator[str]:
    """Every file below ``root`` as a key; links (to folders too) are keys, never followed."""
    stack = [""]
    while stack:
        prefix = stack.pop()
        with os.scandir(os.path.join(root, prefix)) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(f"{prefix}{entry.name}/")
                else:
                    yield prefix + entry.name


def _open_zip(path: str, mode: str, folder: str | None) -> ZipStore:
    exists = os.path.lexists(path)
    if mode == "r+" and not exists:
        raise StoreError(f"zip archive {path!r} does not exist")
    if mode in ("w-", "x") and exists:
        _refuse_existing(path)
    zip_mode = {"r": "r", "r+": "a", "a": "a"}.get(mode, "w")
    return ZipStore(path, zip_mode, folder=folder)


def is_fsspec_object(location: object) -> bool:
    """Whether ``location`` is an fsspec mapper or filesystem object (``open_store`` takes
    both); False without fsspec installed."""
    try:
        from fsspec import AbstractFileSystem
        from fsspec.mapping import FSMap
    except ImportError:
        return False
    return isinstance(location, FSMap | AbstractFileSystem)


def _fsspec_object_store(location: object, mode: str, storage_options: Mapping[str, object] | None) -> FsspecStore | None:
    """The store of an fsspec mapper or filesystem object, None for anything else."""
    if not is_fsspec_object(location):
        return None
    if storage_options:
        raise StoreError(f"storage_options apply to a URL, not to {type(location).__name__} {location!r}")
    from fsspec.mapping import FSMap

    if isinstance(location, FSMap):
        return FsspecStore(location.fs, read_only=mode == "r", path=location.root)
    return FsspecStore(location, read_only=mode == "r")


def _open_remote_zip(url: str, mode: str, storage_options: Mapping[str, object]) -> Store:
    """A URL ending in ``.zip``: the archive when it is a file there, read through fsspec's
    chained ``zip::``; else the folder store of that name."""
    probe = FsspecStore(url, read_only=True, storage_options=storage_options or None)
    if not probe.fs.isfile(probe.root):
        return _open_fsspec(url, mode, storage_options)
    if mode != "r":
        raise StoreError(
            f"{url!r} is a zip archive: nczarr reads archives in object stores but writes only local ones "
            "(write it locally and upload it, or write a folder store)"
        )
    protocol = url.partition("://")[0]  # the options are those of the archive's filesystem, the chain's last link
    return _open_fsspec(f"zip::{url}", mode, {protocol: dict(storage_options)} if storage_options else {})


def remote_store(url: str, *, read_only: bool, storage_options: Mapping[str, object] | None = None) -> Store:
    """The store of a remote ``url``: for ``s3://`` an ObstoreStore unless
    ``nczarr.config.s3_client()`` says ``fsspec``, or (``auto``, the default) obstore is not
    installed or the storage options need s3fs (logged, with the reason); else an
    FsspecStore. ``s3_client`` ``obstore`` refuses such options (StoreError) rather than use
    fsspec."""
    client = config.s3_client()
    if client != "fsspec" and url.partition("://")[0].lower() in S3_SCHEMES:
        if client == "auto" and importlib.util.find_spec("obstore") is None:
            logger.info("opening %r with s3fs: obstore is not installed", url)
        else:
            try:
                return ObstoreStore(url, read_only=read_only, storage_options=storage_options)
            except StoreError as exc:  # OptionsNotMapped, or a setting obstore refuses
                if client == "obstore":
                    raise StoreError(f"cannot open {url!r} with obstore (s3_client 'obstore'): {exc}") from exc
                logger.info("opening %r with s3fs, not obstore: %s", url, exc)
    return FsspecStore(url, read_only=read_only, storage_options=storage_options)


def _open_fsspec(url: str, mode: str, storage_options: Mapping[str, object]) -> Store:
    store = remote_store(url, read_only=mode == "r", storage_options=storage_options or None)
    return _prepared(store, url, mode)


def _prepared(store: Store, url: str, mode: str) -> Store:
    """``store`` checked and emptied as ``mode`` asks. No existence check for 'r': over HTTP
    the root itself need not be fetchable."""
    if isinstance(store, FsspecStore):
        _require_bucket(store, url)
        exists = mode in ("w", "w-", "x") and store.fs.exists(store.root)
    else:  # an object store has no folders: something is there when a key is (a missing bucket is named)
        exists = mode in ("w", "w-", "x") and next(iter(store.list()), None) is not None
    if exists:
        if mode != "w":
            _refuse_existing(url)
        _refuse_foreign(store.list(), url)
        logger.debug("removing %r to create a new dataset there", url)
        if isinstance(store, FsspecStore):
            store.fs.rm(store.root, recursive=True)
        else:
            store.delete_prefix("")
    return store


def _require_bucket(store: FsspecStore, url: str) -> None:
    """StoreError naming the bucket when an S3 dataset's bucket does not exist: s3fs would
    report every key missing (``No such file or directory``) or, writing, try to create the
    bucket. One request (HeadBucket); any other answer (403: HeadBucket needs the list
    permission, which readers of public data often lack; a server without HeadBucket; an
    unreachable endpoint) is left for the reads to report, but for missing credentials."""
    protocols = store.fs.protocol if isinstance(store.fs.protocol, tuple) else (store.fs.protocol,)
    if "s3" not in protocols or not store.root:
        return
    bucket = store.root.split("/", 1)[0]
    endpoint = getattr(store.fs, "endpoint_url", None) or store.fs.storage_options.get("endpoint_url")
    at = f" at {endpoint}" if endpoint else ""
    try:
        store.fs.info(bucket)
    except FileNotFoundError:
        raise StoreError(f"S3 bucket {bucket!r}{at} does not exist (opening {url!r})") from None
    except Exception as exc:  # botocore's own errors are no OSError
        if type(exc).__name__ == "NoCredentialsError":
            raise StoreError(f"no S3 credentials found to open {url!r}; {CREDENTIALS_HINT}") from exc
