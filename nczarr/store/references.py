"""A read-only store that answers keys from a table of references: byte ranges of other
files (local paths or fsspec URLs), inline bytes, or a base store for what the table lacks.

The references are kerchunk's (``[url]``, ``[url, offset, length]``, or bytes), as fsspec's
``ReferenceFileSystem`` reads them from JSON v1 or a Parquet folder; this module reads and
writes both forms, and a columnar table (``ReferenceTable``) that holds millions of them in a
few arrays. Each source's identity (size and modification time, or ETag) is recorded when the
references are made: a read from a source that changed since is refused, naming it
(``StaleReferenceError``). Nothing here knows netCDF or Zarr documents.
"""

from __future__ import annotations

import base64
import builtins
import json
import os
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from nczarr.errors import MissingExtraError, StaleReferenceError, StoreError
from nczarr.store.base import ByteRange, Store, slice_range
from nczarr.store.identity import SourceIdentity, source_identity

#: A kerchunk reference: inline bytes, a whole file ``(url,)``, or ``(url, offset, length)``.
Reference = bytes | tuple[str] | tuple[str, int, int]

#: The folder, inside a virtual dataset's store, that holds its reference table.
TABLE_FOLDER = ".references"
_SOURCES = "sources.json"
_PARQUET = "chunks.parq"
_JSON = "chunks.json"
TABLE_VERSION = 1
#: kerchunk's Parquet references: references per file of a variable.
PARQUET_RECORD_SIZE = 100_000


def change(recorded: SourceIdentity, now: SourceIdentity) -> str | None:
    """How a source's identity ``now`` differs from the one ``recorded`` (None: it does not)."""
    if now.size != recorded.size:
        return f"its size is {now.size} bytes, was {recorded.size}"
    if now.stamp != recorded.stamp:
        return f"its modification time or ETag is {now.stamp}, was {recorded.stamp}"
    return None


def is_local(url: str) -> bool:
    """Whether ``url`` names a local file (a path or a ``file://`` URL)."""
    return "://" not in url or url.startswith("file://")


def local_path(url: str) -> str:
    return url.removeprefix("file://") if url.startswith("file://") else url


def _filesystem(url: str, storage_options: Mapping[str, object] | None) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError as exc:
        raise MissingExtraError("references into remote files need fsspec: pip install 'nczarr[remote]'") from exc
    try:
        fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    except (ImportError, ValueError) as exc:
        raise StoreError(f"cannot open a filesystem for {url!r}: {exc}") from exc
    return fs, path


# -- the columnar table ---------------------------------------------------------------------


class ReferenceTable(Mapping[str, Reference]):
    """Byte-range references by key, held as columns (source index, offset, length) beside
    a list of sources: a million references take tens of MB, not a Python object each."""

    def __init__(
        self,
        sources: Sequence[SourceIdentity],
        keys: Sequence[str],
        source: np.ndarray,
        offset: np.ndarray,
        length: np.ndarray,
    ) -> None:
        if not len(keys) == len(source) == len(offset) == len(length):
            raise StoreError("a reference table's columns differ in length")
        self.sources = list(sources)
        self.keys_ = list(keys)
        self.source = np.asarray(source, np.int32)
        self.offset = np.asarray(offset, np.int64)
        self.length = np.asarray(length, np.int64)
        if len(self.source) and (self.source.min() < 0 or self.source.max() >= len(self.sources)):
            raise StoreError("a reference table names a source it does not list")
        if len(self.offset) and (self.offset.min() < 0 or self.length.min() < 0):
            raise StoreError("a reference table holds a negative offset or length")
        self._rows = {key: row for row, key in enumerate(self.keys_)}

    def __getitem__(self, key: str) -> Reference:
        row = self._rows[key]
        return (self.sources[self.source[row]].location, int(self.offset[row]), int(self.length[row]))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_)

    def __len__(self) -> int:
        return len(self.keys_)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def identities(self) -> dict[str, SourceIdentity]:
        return {source.location: source for source in self.sources}

    # -- in a store's folder ----------------------------------------------------------------
    def write(self, folder: str) -> None:
        """Write the table into ``folder`` (Parquet when fastparquet is installed, else JSON)."""
        os.makedirs(folder, exist_ok=True)
        sources = {"version": TABLE_VERSION, "sources": [s.to_json() for s in self.sources]}
        try:
            import fastparquet
            import pandas as pd
        except ImportError:
            fastparquet = None
        for stale in (_PARQUET, _JSON):
            path = os.path.join(folder, stale)
            if os.path.isfile(path):
                os.remove(path)
        if fastparquet is not None:
            frame = pd.DataFrame({"key": self.keys_, "source": self.source, "offset": self.offset, "length": self.length})
            fastparquet.write(os.path.join(folder, _PARQUET), frame, compression="ZSTD", stats=False)
        else:
            rows = {"keys": self.keys_, **{name: getattr(self, name).tolist() for name in ("source", "offset", "length")}}
            _write_json(os.path.join(folder, _JSON), rows)
        _write_json(os.path.join(folder, _SOURCES), sources)

    @classmethod
    def read(cls, folder: str) -> ReferenceTable:
        """The table written in ``folder``."""
        try:
            with open(os.path.join(folder, _SOURCES), "rb") as file:
                document = json.load(file)
            listed = document["sources"]
            if not all(isinstance(s, dict) and isinstance(s.get("size"), int) and "location" in s for s in listed):
                raise StoreError(f"the reference table in {folder!r} lists a source without a location and size")
            sources = [SourceIdentity.from_json(s) for s in listed]
            if os.path.isfile(os.path.join(folder, _PARQUET)):
                frame = _read_parquet(os.path.join(folder, _PARQUET))
                columns = (frame[name].to_numpy() for name in ("source", "offset", "length"))
                return cls(sources, frame["key"].tolist(), *columns)
            with open(os.path.join(folder, _JSON), "rb") as file:
                rows = json.load(file)
            return cls(sources, rows["keys"], np.array(rows["source"]), np.array(rows["offset"]), np.array(rows["length"]))
        except (OSError, KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot read the reference table in {folder!r}: {exc}") from exc


def _read_parquet(path: str) -> Any:
    try:
        import fastparquet
    except ImportError as exc:
        raise MissingExtraError(f"{path} is a Parquet reference table: pip install 'nczarr[virtual]'") from exc
    return fastparquet.ParquetFile(path).to_pandas()


def _write_json(path: str, document: object) -> None:
    with open(path, "w", encoding="utf-8") as file:
        json.dump(document, file, separators=(",", ":"))


def has_table(folder: str) -> bool:
    """Whether the local folder ``folder`` holds a reference table (a virtual dataset)."""
    return os.path.isfile(os.path.join(folder, TABLE_FOLDER, _SOURCES))


# -- kerchunk's forms -----------------------------------------------------------------------


def _reference(value: object, key: str) -> Reference:
    """A kerchunk reference value as a ``Reference``."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return base64.b64decode(value[7:]) if value.startswith("base64:") else value.encode("utf-8")
    if isinstance(value, list | tuple) and value and isinstance(value[0], str):
        if len(value) == 1:
            return (value[0],)
        if len(value) == 3 and all(isinstance(v, int | np.integer) and v >= 0 for v in value[1:]):
            return (value[0], int(value[1]), int(value[2]))
    if isinstance(value, dict):  # a metadata document kept as JSON
        return json.dumps(value).encode("utf-8")
    raise StoreError(f"the reference of {key!r} is neither bytes, [url] nor [url, offset ≥ 0, length ≥ 0]: {value!r}")


class _KerchunkParquet(Mapping[str, Reference]):
    """kerchunk's Parquet references (fsspec's LazyReferenceMapper), read as needed."""

    def __init__(self, root: str, storage_options: Mapping[str, object] | None) -> None:
        from fsspec.implementations.reference import LazyReferenceMapper

        fs, path = _filesystem(root, storage_options)
        self._lazy = LazyReferenceMapper(path, fs=fs)

    def __getitem__(self, key: str) -> Reference:
        try:
            value = self._lazy[key]
        except (ValueError, IndexError, FileNotFoundError):  # a key that is no chunk of an array it lists
            raise KeyError(key) from None
        return _reference(value, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._lazy)

    def __len__(self) -> int:
        return len(self._lazy)

    def __contains__(self, key: object) -> bool:
        try:
            self[str(key)]
        except KeyError:
            return False
        return True


def load_kerchunk(location: str, storage_options: Mapping[str, object] | None = None) -> Mapping[str, Reference]:
    """kerchunk references: a JSON file (versions 0 and 1, templates expanded) or a Parquet
    folder (``.zmetadata`` plus ``<variable>/refs.<n>.parq``)."""
    if (is_local(location) and os.path.isdir(local_path(location))) or location.rstrip("/").endswith(".parq"):
        return _KerchunkParquet(location, storage_options)
    try:
        if is_local(location):
            with open(local_path(location), "rb") as file:
                document = json.load(file)
        else:
            fs, path = _filesystem(location, storage_options)
            document = json.loads(fs.cat_file(path))
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read kerchunk references from {location!r}: {exc}") from exc
    if not isinstance(document, dict):
        raise StoreError(f"{location!r} holds no kerchunk references (not a JSON object)")
    refs = document.get("refs", document) if document.get("version") == 1 else document
    if not isinstance(refs, dict):
        raise StoreError(f"{location!r}: kerchunk references need a 'refs' object")
    templates = document.get("templates") or {}
    out: dict[str, Reference] = {}
    for key, value in refs.items():
        reference = _reference(value, key)
        if isinstance(reference, tuple) and "{{" in reference[0]:
            url = reference[0]
            for name, text in templates.items():
                url = url.replace("{{" + name + "}}", str(text)).replace("{{ " + name + " }}", str(text))
            reference = (url, *reference[1:])
        out[key] = reference
    return out


def is_kerchunk(location: str, storage_options: Mapping[str, object] | None = None) -> bool:
    """Whether ``location`` holds kerchunk references: a ``.json`` file (a Zarr store is
    never one file of JSON) or a folder whose ``.zmetadata`` has kerchunk's ``record_size``
    (a ``.parq`` URL, remotely)."""
    if not is_local(location):
        return location.lower().endswith(".json") or location.rstrip("/").lower().endswith(".parq")
    path = local_path(location)
    if os.path.isfile(path):
        return path.lower().endswith(".json")
    try:
        with open(os.path.join(path, ".zmetadata"), "rb") as file:
            ends = file.read(4096)
            file.seek(max(len(ends), os.fstat(file.fileno()).st_size - 4096))
            ends += file.read()
    except OSError:
        return False
    # looked for at both ends (json.dumps puts the keys in order around "metadata"), not
    # parsed: a Zarr store's consolidated .zmetadata is parsed once, by its reader
    return b'"record_size"' in ends and b'"zarr_consolidated_format"' not in ends


def kerchunk_value(reference: Reference) -> object:
    """A reference as kerchunk JSON writes it: text, ``base64:`` text, or a list."""
    if isinstance(reference, bytes):
        try:
            return reference.decode("ascii")
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(reference).decode("ascii")
    return list(reference)


def write_kerchunk_json(path: str, references: Mapping[str, Reference]) -> None:
    """kerchunk's JSON v1 (``{"version": 1, "refs": {...}}``)."""
    refs = {key: kerchunk_value(value) for key, value in references.items()}
    try:
        _write_json(path, {"version": 1, "refs": refs})
    except OSError as exc:
        raise StoreError(f"cannot write {path!r}: {exc.strerror or exc}") from exc


def write_kerchunk_parquet(path: str, references: Mapping[str, Reference], record_size: int = PARQUET_RECORD_SIZE) -> None:
    """kerchunk's Parquet references as fsspec's LazyReferenceMapper writes them (Zarr v2
    metadata: the mapper finds each chunk's row from ``.zarray``)."""
    try:
        import fastparquet  # noqa: F401  (the mapper's default engine)
        from fsspec.implementations.reference import LazyReferenceMapper
    except ImportError as exc:
        raise MissingExtraError("Parquet references need fastparquet and fsspec: pip install 'nczarr[virtual]'") from exc
    os.makedirs(path, exist_ok=True)
    lazy = LazyReferenceMapper.create(path, record_size=record_size)
    metadata = sorted(key for key in references if key.rpartition("/")[2].startswith(".z"))
    for key in metadata:  # the documents first: a chunk's row comes from its .zarray
        lazy[key] = references[key]
    for key, value in references.items():
        if key not in metadata:
            lazy[key] = value if isinstance(value, bytes) else list(value)
    lazy.flush()


def write_icechunk(path: str, references: Mapping[str, Reference], message: str = "virtual references") -> str:
    """A new icechunk repository in the local folder ``path`` holding ``references`` (Zarr v3
    documents and inline chunks as bytes, byte ranges of local files as icechunk's virtual
    chunks) in one commit on ``main``; returns the URL prefix of its virtual chunk container,
    which readers authorize (``authorize_virtual_chunk_access={prefix: None}``)."""
    try:
        import icechunk
        from zarr.core.buffer import default_buffer_prototype
        from zarr.core.sync import sync
    except ImportError as exc:
        raise MissingExtraError("icechunk repositories need icechunk: pip install icechunk") from exc
    files = {value[0] for value in references.values() if not isinstance(value, bytes)}
    if any("://" in file and not file.startswith("file://") for file in files):
        raise StoreError(f"{path}: icechunk references are written to local source files only")
    folders = [os.path.dirname(file.removeprefix("file://")) for file in files]
    prefix = "file://" + os.path.join(os.path.commonpath(folders), "") if folders else "file:///"
    if os.path.lexists(path):
        raise StoreError(f"{path}: already exists (an icechunk repository is written anew)")
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(prefix)))
    try:
        repository = icechunk.Repository.create(
            icechunk.local_filesystem_storage(path), config, authorize_virtual_chunk_access={prefix: None}
        )
        session = repository.writable_session("main")
        store = session.store
        buffer = default_buffer_prototype().buffer
        for key, value in references.items():
            if isinstance(value, bytes):
                sync(store.set(key, buffer.from_bytes(value)))  # zarr's own event loop
                continue
            file = value[0].removeprefix("file://")
            offset, length = (value[1], value[2]) if len(value) == 3 else (0, os.path.getsize(file))
            store.set_virtual_ref(key, "file://" + file, offset=offset, length=length)
        session.commit(message)
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)  # the folder did not exist: nothing of the caller's is lost
        raise
    return prefix


# -- the store --------------------------------------------------------------------------------


class ReferenceStore(Store):
    """Keys answered from ``references`` (then from ``base``, when given); read-only.

    ``identities``: each source's identity when the references were made; a read from a
    source whose identity changed raises StaleReferenceError naming it. Local sources are
    looked at before every batch of reads (a stat costs a microsecond), remote ones once per
    store."""

    supports_writes = False
    prefers_concurrency = True

    def __init__(
        self,
        references: Mapping[str, Reference],
        *,
        base: Store | None = None,
        identities: Mapping[str, SourceIdentity] | None = None,
        storage_options: Mapping[str, object] | None = None,
        name: str = "references",
    ) -> None:
        super().__init__(read_only=True)
        self.references = references
        self.base = base
        self.identities = dict(identities or {})
        self.storage_options = dict(storage_options or {})
        self.name = name
        self.local_path = base.local_path if base is not None else None
        self._checked: set[str] = set()
        self._files: dict[str, int] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ReferenceStore({self.name!r})"

    # -- sources ----------------------------------------------------------------------------
    def check_source(self, url: str) -> None:
        """StaleReferenceError when ``url`` changed since its references were made."""
        recorded = self.identities.get(url)
        if recorded is None or (url in self._checked and not is_local(url)):
            return
        try:
            now = source_identity(url, self.storage_options)
        except StoreError as exc:
            raise StaleReferenceError(f"the source {url!r} of {self.name!r} is gone: {exc}") from exc
        how = change(recorded, now)
        if how is not None:
            raise StaleReferenceError(
                f"the source {url!r} changed since {self.name!r} referenced it ({how}): "
                "refusing to read it; refresh the references (nczarr virtualize --refresh)"
            )
        self._checked.add(url)

    def _read(self, url: str, ranges: builtins.list[tuple[int, int | None]]) -> builtins.list[bytes]:
        """The bytes of each ``(offset, length)`` of ``url`` (length None: to the end)."""
        self.check_source(url)
        try:
            if is_local(url):
                return [self._pread(url, offset, length) for offset, length in ranges]
            fs, path = _filesystem(url, self.storage_options)
            if len(ranges) == 1 and ranges[0][1] is None:
                return [fs.cat_file(path, start=ranges[0][0])]
            starts = [offset for offset, _ in ranges]
            ends = [offset + (length or 0) for offset, length in ranges]
            values = fs.cat_ranges([path] * len(ranges), starts, ends, on_error="raise")
        except Exception as exc:  # fsspec's backends raise their own errors (botocore's are no OSError)
            raise StoreError(f"cannot read the source {url!r}: {exc}") from exc
        return [bytes(v) for v in values]

    def _pread(self, url: str, offset: int, length: int | None) -> bytes:
        with self._lock:
            fd = self._files.get(url)
            if fd is None:
                fd = os.open(local_path(url), os.O_RDONLY)
                self._files[url] = fd
        if length is None:
            length = max(0, os.fstat(fd).st_size - offset)
        return os.pread(fd, length, offset)

    # -- the Store interface ----------------------------------------------------------------
    def _resolve(self, key: str, byte_range: ByteRange | None) -> tuple[str, int, int | None] | bytes | None:
        """Where ``key``'s bytes (``byte_range`` of them) are: inline bytes, a range of a
        source, or None (then the base store's)."""
        try:
            reference = self.references[key]
        except KeyError:
            return None
        if isinstance(reference, bytes):
            return slice_range(reference, byte_range)
        if len(reference) == 1:
            start, size = 0, None
        else:
            start, size = reference[1], reference[2]
        if byte_range is not None:
            offset, length = byte_range
            if offset < 0:
                if size is None:
                    raise StoreError(f"a suffix of {key!r}, a reference to a whole file, is not supported")
                offset = max(0, size + offset)
            if size is not None:
                length = max(0, min(size - offset, length if length is not None else size))
            start, size = start + offset, length
        return (reference[0], start, size)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        where = self._resolve(key, byte_range)
        if where is None:
            return self.base._get(key, byte_range) if self.base is not None else None
        if isinstance(where, bytes):
            return where
        return self._read(where[0], [(where[1], where[2])])[0]

    def _get_many(self, keys: builtins.list[str], byte_range: ByteRange | None = None) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        by_source: dict[str, builtins.list[tuple[str, int, int | None]]] = {}
        rest: builtins.list[str] = []
        for key in keys:
            where = self._resolve(key, byte_range)
            if where is None:
                rest.append(key)
            elif isinstance(where, bytes):
                found[key] = where
            else:
                by_source.setdefault(where[0], []).append((key, where[1], where[2]))
        for url, wanted in by_source.items():
            values = self._read(url, [(offset, length) for _, offset, length in wanted])
            found.update(zip((key for key, _, _ in wanted), values))
        if rest and self.base is not None:
            found.update(self.base._get_many(rest, byte_range))
        return found

    def _exists(self, key: str) -> bool:
        if key in self.references:
            return True
        return self.base is not None and self.base._exists(key)

    def _getsize(self, key: str) -> int | None:
        where = self._resolve(key, None)
        if where is None:
            return self.base._getsize(key) if self.base is not None else None
        if isinstance(where, bytes):
            return len(where)
        if where[2] is not None:
            return where[2]
        return source_identity(where[0], self.storage_options).size

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        seen: set[str] = set()
        for key in self.references:
            if key.startswith(prefix):
                seen.add(key)
                yield key
        if self.base is not None:
            for key in self.base._list_prefix(prefix):
                if key not in seen and not key.startswith(TABLE_FOLDER + "/"):
                    yield key

    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        raise AssertionError("unreachable: a ReferenceStore is read-only")

    def _delete(self, key: str) -> None:
        raise AssertionError("unreachable: a ReferenceStore is read-only")

    def close(self) -> None:
        with self._lock:
            for fd in self._files.values():
                os.close(fd)
            self._files.clear()
        if self.base is not None:
            self.base.close()


def open_virtual(folder: str, base: Store, storage_options: Mapping[str, object] | None = None) -> ReferenceStore:
    """The virtual dataset whose documents and inline chunks are in ``base`` (the local
    folder ``folder``) and whose reference table is in its ``.references`` folder;
    ``storage_options`` open its remote sources."""
    table = ReferenceTable.read(os.path.join(folder, TABLE_FOLDER))
    return ReferenceStore(table, base=base, identities=table.identities(), storage_options=storage_options, name=folder)


def open_kerchunk(location: str, storage_options: Mapping[str, object] | None = None) -> ReferenceStore:
    """kerchunk references (JSON or a Parquet folder) made by kerchunk, VirtualiZarr or
    nczarr, as a store (the sources' identities are not recorded there)."""
    return ReferenceStore(load_kerchunk(location, storage_options), storage_options=storage_options, name=location)
