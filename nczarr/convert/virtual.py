"""Virtual datasets: netCDF-4/HDF5 and netCDF-3 files read as Zarr without copying their data
(``nczarr virtualize``, ``nczarr.virtualize``).

Each file is scanned for where its variables' chunks are (``scan``): HDF5 chunks by h5py's
chunk index, HDF5 contiguous data and netCDF-3 fixed variables cut into regular chunks by
offset arithmetic, netCDF-3 record variables one record per chunk (records interleave, so a
chunk cannot span two). The target is an NCZarr dataset written by the ordinary format
session, whose chunk keys are answered from a reference table (``nczarr.store.references``)
instead of the store: the HDF5 filter pipeline becomes the Zarr codec chain (deflate,
shuffle, Fletcher-32 checked and stripped, zstd, bzip2). What cannot be referenced is copied
into the target (inline) and said in the report: compact storage, variable-length data,
filters without a codec, chunks HDF5 stored unfiltered, contiguous tails shorter than a
chunk, and unallocated chunks whose fill differs from the Zarr fill value. Every referenced
variable is checked once, reading a chunk through the references against the file as
netcdf-c reads it: a chain that decodes differently is copied, never served wrong.
"""

from __future__ import annotations

import array as arrays
import copy as _copy
import itertools
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from nczarr.convert import sources as _sources
from nczarr.convert.combine import COPY, CombineOptions, Conversion, SourceScan, plan_scans
from nczarr.convert.executor import Executor, InProcess, executor_for, map_in_order
from nczarr.convert.hdf5 import BLOSC_NAME_OF_CODE, Hdf5Reader
from nczarr.convert.netcdf3 import Netcdf3Reader
from nczarr.errors import CopyError, NCZarrError
from nczarr.formats import convention as make_convention
from nczarr.formats.session import Session
from nczarr.model import Dataset, Variable, resolve_dimension
from nczarr.store import MemoryStore, Store, open_store
from nczarr.store.identity import SourceIdentity, source_identity
from nczarr.store.references import (
    TABLE_FOLDER,
    Reference,
    ReferenceStore,
    ReferenceTable,
    change,
    has_table,
    write_icechunk,
    write_kerchunk_json,
    write_kerchunk_parquet,
)
from nczarr.values.source import DatasetSource, Hyperslab
from nczarr.values.storage import (
    BLOSC_CNAMES,
    HDF5_BLOSC,
    HDF5_BZIP2,
    HDF5_DEFLATE,
    HDF5_FLETCHER32,
    HDF5_SHUFFLE,
    HDF5_SZIP,
    HDF5_ZSTD,
    VariableStorage,
)
from nczarr.zarr.codecs.compress import BLOSC_SHUFFLES
from nczarr.zarr.jsonvalue import JSONObject

log = logging.getLogger(__name__)

#: The size a contiguous variable's chunks are cut to: a point read fetches no more.
CONTIGUOUS_CHUNK_BYTES = 1 << 20
#: A record variable holding at most this many bytes in each file is copied when its files
#: cannot share one chunk grid: the time coordinate of a file of few records (netCDF's
#: default chunks of 1-D record variables hold 512 or more) costs less to copy than to refuse.
SMALL_BYTES = 64 << 10
#: The values of a file's record variables read during its scan, at most (smallest first):
#: a record coordinate copied from every file (see SMALL_BYTES) then needs no second open.
SCANNED_VALUES_BYTES = 4 << 10
#: The source files a build holds open at once.
OPEN_FILES = 8
#: The values copied at once.
COPY_BLOCK_BYTES = 64 << 20
#: Chunk coordinates on a variable's grid.
Coords = tuple[int, ...]


@dataclass(frozen=True)
class VirtualOptions:
    """``format``: the target's convention (NCZARR; kerchunk exports default to ZARR_V2,
    what kerchunk's readers expect); ``contiguous_chunk_bytes``: the chunks contiguous data
    is cut into; ``copy_mismatched``: record variables whose files cannot share one chunk
    grid (chunk shapes, codecs, records off the grid) are copied into the target instead of
    refused (files that differ in packing, types or fills are always refused: one set of
    metadata would decode some wrong), and so are, always, those of at most ``small_bytes`` in each file (coordinates
    such as time, whose netCDF default chunks are longer than a file's records);
    ``workers``: files scanned at once in a local pool of processes (None: in this
    process; a dask.distributed ``client`` passed to :func:`virtualize` wins);
    ``progress``: show a tqdm bar."""

    format: str | None = None
    contiguous_chunk_bytes: int = CONTIGUOUS_CHUNK_BYTES
    copy_mismatched: bool = False
    small_bytes: int = SMALL_BYTES
    workers: int | None = None
    progress: bool = False
    storage_options: dict[str, object] = field(default_factory=dict)


@dataclass
class VirtualReport:
    """What a virtualization made: per variable FQN, the chunks referenced, and why values
    were copied inline (the whole variable, or some chunks)."""

    sources: list[str] = field(default_factory=list)
    referenced: dict[str, int] = field(default_factory=dict)
    inlined: dict[str, str] = field(default_factory=dict)
    copied: dict[str, str] = field(default_factory=dict)
    references: int = 0
    seconds: float = 0.0
    #: an icechunk export: the URL prefix readers authorize as its virtual chunk container
    container: str | None = None

    def lines(self) -> list[str]:
        """The report as text, one line per fact."""
        out = [f"{len(self.sources)} source(s), {self.references} chunk reference(s), {self.seconds:.2f} s"]
        if self.container is not None:
            out.append(f"icechunk virtual chunk container: {self.container}")
        out += [f"referenced {fqn}: {n} chunk(s)" for fqn, n in self.referenced.items()]
        out += [f"inlined {fqn}: {why}" for fqn, why in self.inlined.items()]
        out += [f"copied {fqn}: {why}" for fqn, why in self.copied.items()]
        return out


# -- finding the chunks of one file -------------------------------------------------------


@dataclass
class VariableChunks:
    """Where one variable's chunks are in one file. ``reason`` set: the variable is copied
    whole (why). Else ``chunks`` is the Zarr chunk shape, ``filters`` the HDF5 pipeline as
    codecs (encode order), ``endian`` the file's byte order, ``refs`` each stored chunk's
    grid coordinates, offset and length, ``inline`` the chunks to copy (with why)."""

    chunks: tuple[int, ...] = ()
    filters: list[tuple[str, JSONObject]] = field(default_factory=list)
    endian: str = "little"
    refs: list[tuple[Coords, int, int]] = field(default_factory=list)
    inline: dict[Coords, str] = field(default_factory=dict)
    reason: str | None = None
    #: the shape of the data in the file, when shorter than the variable (an HDF5 dataset
    #: along an unlimited dimension other variables grew)
    extent: tuple[int, ...] | None = None
    #: the data type and shape of the data in the file
    dtype: np.dtype = field(default_factory=lambda: np.dtype("u1"))
    shape: tuple[int, ...] = ()


@dataclass
class FileScan:
    """One source file: its tree, its storage settings and its variables' chunks. The file
    is closed after the scan (HDF5 slows down with every file held open: h5py's close looks
    at every open object) and opened again by ``source`` when values must be read."""

    url: str
    identity: SourceIdentity
    tree: Dataset
    storage: dict[str, VariableStorage]
    variables: dict[str, VariableChunks]
    data_model: str
    options: VirtualOptions = field(default_factory=lambda: VirtualOptions(), repr=False)
    #: The whole values of its smallest record variables, read during the scan
    #: (SCANNED_VALUES_BYTES at most).
    values: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _reader: DatasetSource | None = field(default=None, repr=False)

    @property
    def source(self) -> DatasetSource:
        """The file open for reading (opened again when it was closed)."""
        if self._reader is None:
            self._reader = _open(self.url, self.options)
        return self._reader

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def _open(url: str, options: VirtualOptions) -> DatasetSource:
    return _sources.open_source(url) if "://" not in url else _sources.open_remote_file(url, options.storage_options)


def scan(path: str, options: VirtualOptions = VirtualOptions()) -> FileScan:
    """Find every variable's chunks in the netCDF file at ``path``."""
    url = os.path.abspath(path) if "://" not in path else path
    identity = source_identity(url, options.storage_options)
    source = _open(url, options)
    try:
        if isinstance(source, Hdf5Reader):
            found = {v.fqn: _hdf5_chunks(source, v, options, identity.size) for v in _variables(source.dataset)}
        elif isinstance(source, Netcdf3Reader):
            found = {v.fqn: _netcdf3_chunks(source, v, options, identity.size) for v in _variables(source.dataset)}
        else:
            raise CopyError(f"{path}: not a netCDF-3 or netCDF-4/HDF5 file (a Zarr store needs no references)")
        for variable in _variables(source.dataset):
            found[variable.fqn].dtype, found[variable.fqn].shape = _file_layout(source, variable)
        values = _small_values(source, found)
    except CopyError as exc:
        if str(exc).startswith(path):
            raise
        raise CopyError(f"{path}: {exc}") from exc
    finally:
        source.close()
    return FileScan(url, identity, source.dataset, source.storage, found, source.data_model, options, values)


def _small_values(source: DatasetSource, found: dict[str, VariableChunks]) -> dict[str, np.ndarray]:
    """The whole values of the file's record variables of fixed-size types, smallest first,
    up to SCANNED_VALUES_BYTES in all."""
    record = {v.fqn: v for v in _variables(source.dataset) if _on_records(v) and not found[v.fqn].dtype.hasobject}
    sizes = {fqn: math.prod(found[fqn].shape) * found[fqn].dtype.itemsize for fqn in record}
    values: dict[str, np.ndarray] = {}
    budget = SCANNED_VALUES_BYTES
    for fqn in sorted(sizes, key=sizes.__getitem__):
        if sizes[fqn] > budget:
            break
        values[fqn] = source.read(record[fqn], tuple(slice(0, n) for n in found[fqn].shape))
        budget -= sizes[fqn]
    return values


def _on_records(variable: Variable) -> bool:
    """Whether ``variable``'s first dimension is an unlimited one."""
    if not variable.dimensions or isinstance(variable.dimensions[0], int) or variable.group is None:
        return False
    dimension = resolve_dimension(variable.group, variable.dimensions[0])
    return dimension is not None and dimension.unlimited


def _hdf5_chunks(reader: Hdf5Reader, variable: Variable, options: VirtualOptions, size: int) -> VariableChunks:
    import h5py

    h5ds = reader.h5dataset(variable)
    dsid = h5ds.id
    plist = dsid.get_create_plist()
    dtype = h5ds.dtype
    if dtype.hasobject or h5py.check_vlen_dtype(dtype) is not None:
        return VariableChunks(reason="variable-length data (strings, vlens) has no fixed bytes to reference")
    if any(h5py.check_vlen_dtype(dtype.fields[f][0]) is not None for f in dtype.names or ()):
        return VariableChunks(reason="variable-length members have no fixed bytes to reference")
    if _padded(dtype):
        return VariableChunks(reason="records with padding on disk (aligned members): Zarr's structured type has none")
    layout = plist.get_layout()
    if layout == h5py.h5d.COMPACT:
        return VariableChunks(reason="compact storage: the values are inside the HDF5 object header")
    endian = "big" if _is_big(dtype) else "little"
    filters: list[tuple[str, JSONObject]] = []
    for i in range(plist.get_nfilters()):
        code, _flags, values, name = plist.get_filter(i)
        codec = _codec_of_filter(code, values, dtype.itemsize)
        if codec is None:
            what = "szip" if code == HDF5_SZIP else f"HDF5 filter {code} ({name.decode(errors='replace')})"
            return VariableChunks(reason=f"{what} has no Zarr codec")
        if codec[0] == "numcodecs.shuffle" and ("numcodecs.fletcher32", {}) in filters and 4 % dtype.itemsize:
            # HDF5 shuffles the checksum's 4 bytes too, leaving the last ones where they are;
            # the Zarr codec (numcodecs' as nczarr's) takes whole elements only
            why = f"shuffle over the Fletcher-32 checksum with {dtype.itemsize}-byte elements has no Zarr codec"
            return VariableChunks(reason=why)
        filters.append(codec)
    shape = h5ds.shape
    if layout == h5py.h5d.CHUNKED:
        chunks = tuple(h5ds.chunks)
        found = VariableChunks(chunks, filters, endian, extent=tuple(shape))

        def record(info: Any) -> None:
            coords = tuple(o // c for o, c in zip(info.chunk_offset, chunks))
            if info.filter_mask:  # HDF5 skipped a filter for this chunk: the chain would not decode it
                found.inline[coords] = "stored with some filters skipped"
            else:
                found.refs.append((coords, int(info.byte_offset), int(info.size)))

        if hasattr(dsid, "chunk_iter"):
            dsid.chunk_iter(record)
        else:  # HDF5 < 1.12.3
            for n in range(dsid.get_num_chunks()):
                record(dsid.get_chunk_info(n))
        return found
    offset = dsid.get_offset()
    return _contiguous(variable, shape, dtype, endian, offset, options, size)


def _padded(dtype: np.dtype) -> bool:
    """Whether records of ``dtype`` have bytes that belong to no member (at any depth)."""
    if dtype.fields is None:
        return dtype.subdtype is not None and _padded(dtype.subdtype[0])
    members = [dtype.fields[name] for name in dtype.names or ()]
    packed = sum(member[0].itemsize for member in members) == dtype.itemsize
    in_order = all(a[1] + a[0].itemsize == b[1] for a, b in itertools.pairwise(members))
    return not (packed and in_order) or any(_padded(member[0]) for member in members)


def _is_big(dtype: np.dtype) -> bool:
    if dtype.fields is not None:
        return any(_is_big(dtype.fields[name][0]) for name in dtype.names or ())
    if dtype.subdtype is not None:
        return _is_big(dtype.subdtype[0])
    return dtype.byteorder == ">"


def _codec_of_filter(code: int, values: Sequence[int], itemsize: int) -> tuple[str, JSONObject] | None:
    """The Zarr codec (name, configuration) that decodes what an HDF5 filter encoded."""
    if code == HDF5_DEFLATE:
        return "numcodecs.zlib", {"level": int(values[0]) if values else 4}
    if code == HDF5_SHUFFLE:
        return "numcodecs.shuffle", {"elementsize": itemsize}
    if code == HDF5_FLETCHER32:
        return "numcodecs.fletcher32", {}
    if code == HDF5_ZSTD:
        return "zstd", {"level": int(values[0]) if values else 0, "checksum": False}
    if code == HDF5_BZIP2:
        return "numcodecs.bz2", {"level": max(1, int(values[0])) if values else 9}
    if code == HDF5_BLOSC and len(values) >= 7 and values[6] in BLOSC_NAME_OF_CODE and values[5] < len(BLOSC_SHUFFLES):
        # the parameters: filter version, format version, typesize, chunk bytes, clevel, shuffle, compressor
        cname = BLOSC_CNAMES[BLOSC_NAME_OF_CODE[values[6]]]
        shuffle = BLOSC_SHUFFLES[values[5]]
        return "blosc", {"cname": cname, "clevel": int(values[4]), "shuffle": shuffle, "typesize": itemsize, "blocksize": 0}
    return None


def _contiguous(
    variable: Variable, shape: tuple[int, ...], dtype: np.dtype, endian: str, offset: int | None, options: VirtualOptions,
    size: int,
) -> VariableChunks:
    """Contiguous values at ``offset`` (None: never written) cut into chunks of whole rows of
    the first dimension, about ``contiguous_chunk_bytes`` each; a last chunk shorter than
    the others is copied (Zarr's chunks are all the same size). CopyError when the values
    would end beyond the file's ``size``."""
    if offset is not None:
        _check_within(variable, offset + math.prod(shape) * dtype.itemsize, size)
    if not shape:
        found = VariableChunks((), [], endian)
        if offset is not None:
            found.refs.append(((), offset, dtype.itemsize))
        return found
    row = math.prod(shape[1:]) * dtype.itemsize
    rows = max(1, min(shape[0], options.contiguous_chunk_bytes // max(1, row)))
    found = VariableChunks((rows, *shape[1:]), [], endian)
    if offset is None or row == 0:
        return found
    for i in range(-(-shape[0] // rows)):
        coords = (i,) + (0,) * (len(shape) - 1)
        if (i + 1) * rows <= shape[0]:
            found.refs.append((coords, offset + i * rows * row, rows * row))
        else:
            found.inline[coords] = "the last rows of contiguous data, shorter than a chunk"
    return found


def _check_within(variable: Variable, end: int, size: int) -> None:
    """CopyError unless a variable's values, ending at byte ``end``, are inside the file."""
    if end > size:
        raise CopyError(f"file is truncated: {variable.fqn} needs {end} bytes, the file has {size}")


def _netcdf3_chunks(reader: Netcdf3Reader, variable: Variable, options: VirtualOptions, size: int) -> VariableChunks:
    begin, shape, dtype, record, recsize = reader.byte_layout(variable)
    if not record:
        return _contiguous(variable, shape, dtype, "big", begin, options, size)
    if shape[0]:
        _check_within(variable, begin + (shape[0] - 1) * recsize + math.prod(shape[1:]) * dtype.itemsize, size)
    # records interleave: one chunk per record, the variable's part of it
    part = math.prod(shape[1:]) * dtype.itemsize
    found = VariableChunks((1, *shape[1:]), [], "big")
    if not part:  # no values to reference, however many records the header claims
        return found
    for r in range(shape[0]):
        found.refs.append(((r,) + (0,) * (len(shape) - 1), begin + r * recsize, part))
    return found


# -- the target ------------------------------------------------------------------------------


def _codecs(chunks: VariableChunks, dtype: np.dtype, zarr_format: int) -> object:
    """The codec metadata of a referenced variable, as VariableStorage.codecs keeps it: the
    v3 ``codecs`` list, or v2's ``{"filters", "compressor"}``."""
    if zarr_format == 2:
        filters = [_v2_codec(name, config) for name, config in chunks.filters]
        # a chain ending in a compressor keeps it as v2's compressor: the same decoding, and
        # readers that decompress only there (GDAL's Zarr driver) read it
        compressor = filters.pop() if filters and filters[-1]["id"] not in _V2_FILTERS else None
        return {"filters": filters or None, "compressor": compressor}
    serializer: dict[str, Any] = {"name": "bytes"}
    if dtype.fields is None and dtype.itemsize > 1 and dtype.kind not in "SUV":
        serializer["configuration"] = {"endian": chunks.endian}
    return [serializer, *({"name": name, "configuration": config} for name, config in chunks.filters)]


#: The codecs of an HDF5 pipeline that are v2 filters, not compressors.
_V2_FILTERS = frozenset({"shuffle", "fletcher32"})


def _v2_codec(name: str, config: JSONObject) -> JSONObject:
    """A codec in numcodecs' JSON (v2 ``filters``)."""
    if name == "blosc":  # v2 numbers Blosc's shuffle, v3 names it
        shuffle = config["shuffle"]
        config = {**config, "shuffle": BLOSC_SHUFFLES.index(shuffle) if isinstance(shuffle, str) else shuffle}
        config.pop("typesize", None)
    return {"id": name.removeprefix("numcodecs."), **config}


def _storage(scanned: VariableChunks, original: VariableStorage, dtype: np.dtype, zarr_format: int) -> VariableStorage:
    if scanned.reason is not None:
        return replace(original, codecs=None)
    return VariableStorage(
        chunks=scanned.chunks or None,
        endian="big" if scanned.endian == "big" else "little",
        fill=original.fill,
        codecs=_codecs(scanned, dtype, zarr_format),  # type: ignore[arg-type]
        shuffle=any(name == "numcodecs.shuffle" for name, _ in scanned.filters),
        fletcher32=any(name == "numcodecs.fletcher32" for name, _ in scanned.filters),
    )


def _variables(tree: Dataset) -> Iterator[Variable]:
    for group in tree.walk():
        yield from group.variables


def _find(tree: Dataset, fqn: str) -> Variable:
    return next(v for v in _variables(tree) if v.fqn == fqn)


def _file_layout(source: DatasetSource, variable: Variable) -> tuple[np.dtype, tuple[int, ...]]:
    """A variable's data type and shape in its file."""
    if isinstance(source, Hdf5Reader):
        h5ds = source.h5dataset(variable)
        return np.dtype(h5ds.dtype), tuple(h5ds.shape)
    assert isinstance(source, Netcdf3Reader)
    _, shape, dtype, _, _ = source.byte_layout(variable)
    return dtype, shape


def _grid(shape: tuple[int, ...], chunks: tuple[int, ...]) -> Iterator[Coords]:
    return itertools.product(*(range(-(-n // c)) for n, c in zip(shape, chunks)))


def _region(coords: Coords, chunks: tuple[int, ...], shape: tuple[int, ...]) -> Hyperslab:
    return tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coords, chunks, shape))


def _straddles(coords: Coords, chunks: tuple[int, ...], extent: tuple[int, ...] | None, shape: tuple[int, ...]) -> bool:
    """Whether a chunk reaches past the file's ``extent`` into a longer variable."""
    if extent is None:
        return False
    return any((i + 1) * c > e and n > e for i, c, e, n in zip(coords, chunks, extent, shape))


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays of raw values hold the same values (NaN equal to NaN; records
    field by field, their padding left out)."""
    if a.shape != b.shape:
        return False
    if a.dtype.fields is not None and b.dtype.fields is not None:
        return a.dtype.names == b.dtype.names and all(_same(a[name], b[name]) for name in a.dtype.names or ())
    if a.dtype.kind in "SUVO" or b.dtype.kind in "SUVO":
        return a.tobytes() == b.astype(a.dtype).tobytes() if a.dtype.kind != "O" else bool(np.all(a == b))
    return bool(np.array_equal(a, b.astype(a.dtype), equal_nan=a.dtype.kind in "fc"))


class _Rows:
    """The references made so far, as columns (a million chunks take tens of MB)."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.source = arrays.array("i")
        self.offset = arrays.array("q")
        self.length = arrays.array("q")

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, source: int, offset: int, length: int) -> None:
        self.keys.append(key)
        self.source.append(source)
        self.offset.append(offset)
        self.length.append(length)

    def table(self, sources: Sequence[SourceIdentity]) -> ReferenceTable:
        return ReferenceTable(
            sources, self.keys, np.frombuffer(self.source, np.int32), np.frombuffer(self.offset, np.int64),
            np.frombuffer(self.length, np.int64),
        )


@dataclass
class _Placement:
    """Where one file's records go in the combined dataset."""

    index: int
    scan: FileScan
    offset: int  # the first record's index along the record dimension
    records: int  # how many records the file holds
    conversions: Mapping[str, Conversion] = field(default_factory=dict)  # values to convert, by FQN


class _Builder:
    """Writes one virtual dataset: the documents and inline chunks into ``store``, the
    references into a table. Many files combine along the record dimension: record
    variables take each file's records at its offset, the others come from the first file."""

    def __init__(
        self, store: Store, scans: Sequence[FileScan], format_name: str, report: VirtualReport,
        options: VirtualOptions = VirtualOptions(),
    ) -> None:
        self.store = store
        self.options = options
        self.scans = scans
        self.convention = make_convention(format_name)
        self.report = report
        self.rows = _Rows()
        self.record: set[str] = set()
        self._open: dict[int, FileScan] = {}

    def _source(self, scan: FileScan) -> DatasetSource:
        """``scan``'s file, open; the files opened longest ago are closed beyond a few."""
        self._open.pop(id(scan), None)
        self._open[id(scan)] = scan
        while len(self._open) > OPEN_FILES:
            oldest = next(iter(self._open))
            self._open.pop(oldest).close()
        return scan.source

    def _read(self, scan: FileScan, variable: Variable, region: Hyperslab) -> np.ndarray:
        """``scan``'s raw values of ``variable`` (a variable of its file's tree) in
        ``region``: from the values read during the scan when it holds them, else the file."""
        known = scan.values.get(variable.fqn)
        if known is not None and len(region) == known.ndim and all(
            s.stop is not None and s.stop <= n for s, n in zip(region, known.shape)
        ):
            return known[region].copy()
        return self._source(scan).read(variable, region)

    def build(self) -> ReferenceTable:
        tree, record, placed, converted = combine_records(self.scans, self.options)
        self.record = record
        whole = self._mismatches(tree, placed, converted)
        for fqn, places in placed.items():
            why = next((p.scan.variables[fqn].reason for p in places if p.scan.variables[fqn].reason), None)
            if why is not None:
                whole.setdefault(fqn, why)
        zarr_format = self.convention.zarr_format
        storage = {}
        for variable in _variables(tree):
            holder = placed[variable.fqn][0].scan  # the first file that holds the variable
            scanned = holder.variables[variable.fqn]
            original = holder.storage.get(variable.fqn, VariableStorage())
            storage[variable.fqn] = _storage(scanned, original, scanned.dtype, zarr_format)
        for fqn, why in self._check(tree, storage, placed, set(whole)).items():
            whole[fqn] = why
            storage[fqn] = replace(placed[fqn][0].scan.storage.get(fqn, VariableStorage()), codecs=None)  # nczarr's own chain
        session = Session.create(self.store, tree, self.convention, storage)
        try:
            for variable in _variables(tree):
                if variable.fqn in whole:
                    self._copy_all(session, variable, placed[variable.fqn], whole[variable.fqn])
                    continue
                for place in placed[variable.fqn]:
                    self._variable(session, variable, place)
        finally:
            session.close()
        return self.rows.table([s.identity for s in self.scans])

    def _check(
        self, tree: Dataset, storage: Mapping[str, VariableStorage], placed: Mapping[str, list[_Placement]], copied: set[str]
    ) -> dict[str, str]:
        """Before anything is written: read one chunk of each variable to reference (in the
        first and the last file) through its references, with the metadata the target will
        have, and compare it with the file as netcdf-c reads it; the variables whose chunk
        differs (or does not decode), with why."""
        memory = MemoryStore()
        planned = Session.create(memory, _copy.deepcopy(tree), self.convention, storage)
        probes = _Rows()
        checks: list[tuple[Variable, _Placement, Coords]] = []
        for variable in _variables(planned.dataset):
            if variable.fqn in copied:
                continue
            array = planned.array(variable)
            for place in {id(p): p for p in (placed[variable.fqn][0], placed[variable.fqn][-1])}.values():
                refs = place.scan.variables[variable.fqn].refs
                if refs:
                    shift = place.offset // array.chunks[0] if place.offset else 0
                    probes.add(array.chunk_key(_shifted(refs[0][0], shift)), place.index, refs[0][1], refs[0][2])
                    checks.append((variable, place, refs[0][0]))
        planned.close()
        table = probes.table([s.identity for s in self.scans])
        view = ReferenceStore(table, base=memory, storage_options=self.options.storage_options)
        reader = Session.open(view, self.convention, read_only=True)
        failed: dict[str, str] = {}
        for variable, place, coords in checks:
            if variable.fqn in failed:
                continue
            array = reader.array(variable)
            region = _region(coords, array.chunks, _local_shape(array.shape, place, variable.fqn in self.record))
            expected = self._read(place.scan, _find(place.scan.tree, variable.fqn), region)
            try:
                same = _same(reader.read(variable, _moved(region, place.offset)), expected)
            except NCZarrError as exc:
                log.info("%s: %s does not decode through its references: %s", place.scan.url, variable.fqn, exc)
                same = False
            if not same:
                failed[variable.fqn] = f"its chunks in {place.scan.url} decode differently through references than from the file"
        return failed

    def _mismatches(self, tree: Dataset, placed: Mapping[str, list[_Placement]], converted: Mapping[str, str]) -> dict[str, str]:
        """The record variables whose files cannot share one chunk grid and codec chain, and
        those whose values must be converted, with why: copied when the options allow (or
        when small), else refused before anything is written."""
        found: dict[str, str] = dict(converted)
        for fqn in sorted(self.record - set(converted)):
            placements = placed[fqn]
            first = placements[0].scan.variables[fqn]
            if any(place.scan.variables[fqn].reason is not None for place in placements):
                continue  # copied from every file anyway (compact, vlen, no codec in one of them)
            for place in placements:
                scanned = place.scan.variables[fqn]
                why = None
                if (scanned.chunks, _codec_names(scanned), scanned.endian) != (first.chunks, _codec_names(first), first.endian):
                    why = (
                        f"{place.scan.url} stores {fqn} in chunks {scanned.chunks} with {_chain(scanned)}, "
                        f"{placements[0].scan.url} in {first.chunks} with {_chain(first)}"
                    )
                elif first.chunks and place.offset % first.chunks[0]:
                    previous = placements[placements.index(place) - 1]
                    why = (
                        f"{previous.scan.url} holds {previous.records} records, not a whole number of chunks of "
                        f"{first.chunks[0]}: {fqn}'s records do not fit a regular chunk grid"
                    )
                if why is not None:
                    found[fqn] = why
                    break
        refused = {fqn: why for fqn, why in found.items() if self._file_bytes(fqn, placed[fqn]) > self.options.small_bytes}
        if refused and not self.options.copy_mismatched:
            raise CopyError(
                "the files cannot be referenced as one dataset; nothing was written (--copy-mismatched copies "
                "these variables):\n  " + "\n  ".join(f"{fqn}: {why}" for fqn, why in refused.items())
            )
        return found

    def _file_bytes(self, fqn: str, placements: list[_Placement]) -> int:
        """The most bytes a record variable holds in one file."""
        scan = placements[0].scan
        dtype, shape = scan.variables[fqn].dtype, scan.variables[fqn].shape
        return max(p.records for p in placements) * math.prod(shape[1:]) * dtype.itemsize

    def _variable(self, session: Session, variable: Variable, place: _Placement) -> None:
        scanned = place.scan.variables[variable.fqn]
        array = session.array(variable)
        local = _local_shape(array.shape, place, variable.fqn in self.record)
        shift = place.offset // array.chunks[0] if place.offset else 0
        before = len(self.rows)
        for coords, offset, length in scanned.refs:
            if _straddles(coords, array.chunks, scanned.extent, local):
                # netcdf-c reads fill beyond the dataset's end, the chunk holds what HDF5 padded it with
                why = "a chunk across the end of an HDF5 dataset shorter than its dimension"
                self._inline(session, variable, place, coords, local, why)
            else:
                self.rows.add(array.chunk_key(_shifted(coords, shift)), place.index, offset, length)
        self.report.referenced[variable.fqn] = self.report.referenced.get(variable.fqn, 0) + len(self.rows) - before
        for coords, why in scanned.inline.items():
            self._inline(session, variable, place, coords, local, why)
        self._fill_unallocated(session, variable, place, local)

    def _inline(
        self, session: Session, variable: Variable, place: _Placement, coords: Coords, local: tuple[int, ...], why: str
    ) -> None:
        """Copy one chunk of a file's variable into the target."""
        array = session.array(variable)
        region = _region(coords, array.chunks, local)
        values = self._read(place.scan, _find(place.scan.tree, variable.fqn), region)
        session.write(variable, _moved(region, place.offset), values)
        self.report.inlined.setdefault(variable.fqn, why)

    def _fill_unallocated(self, session: Session, variable: Variable, place: _Placement, local: tuple[int, ...]) -> None:
        """Chunks the file never stored read as its fill value (HDF5's, as netcdf-c reads
        it): left out when that is the Zarr fill value, else copied."""
        array = session.array(variable)
        scanned = place.scan.variables[variable.fqn]
        if len(scanned.refs) + len(scanned.inline) >= math.prod(-(-n // c) for n, c in zip(local, array.chunks)):
            return  # every chunk stored (a scalar's one too)
        if 0 in local:
            return
        stored = {coords for coords, _, _ in scanned.refs} | set(scanned.inline)
        # looked at lazily: a sparse variable may have far more chunks unallocated than stored
        missing = (c for c in _grid(local, array.chunks) if c not in stored)
        first = next(missing, None)
        if first is None:
            return
        original = _find(place.scan.tree, variable.fqn)
        region = _region(first, array.chunks, local)
        in_file = self._read(place.scan, original, region)
        if _same(session.read(variable, _moved(region, place.offset)), in_file):
            return
        fill = in_file.reshape(-1)[:1].reshape(())
        for coords in itertools.chain([first], missing):
            region = _moved(_region(coords, array.chunks, local), place.offset)
            session.write(variable, region, np.broadcast_to(fill, [s.stop - s.start for s in region]))
        self.report.inlined.setdefault(variable.fqn, "unallocated chunks whose fill value is not the Zarr fill value")

    def _copy(self, session: Session, variable: Variable, place: _Placement, why: str) -> None:
        """Copy a file's values of a variable (its records, for a record variable) into the target."""
        original = _find(place.scan.tree, variable.fqn)
        array = session.array(variable)
        local = _local_shape(array.shape, place, variable.fqn in self.record)
        step = max(1, COPY_BLOCK_BYTES // max(1, math.prod(local[1:]) * max(1, array.dtype.itemsize))) if local else 1
        if not local:
            session.write(variable, (), _converted(place, variable, self._read(place.scan, original, ())))
        else:
            for start in range(0, local[0], step):
                region = (slice(start, min(start + step, local[0])), *(slice(0, n) for n in local[1:]))
                values = _converted(place, variable, self._read(place.scan, original, region))
                session.write(variable, _moved(region, place.offset), values)
        self.report.copied[variable.fqn] = why

    def _copy_all(self, session: Session, variable: Variable, places: list[_Placement], why: str) -> None:
        """Copy a variable from every file: at once when it is small (many files' records
        then fill a chunk in one write, not one rewrite of the chunk per file)."""
        array = session.array(variable)
        local = [_local_shape(array.shape, p, variable.fqn in self.record) for p in places]
        if len(places) == 1 or sum(math.prod(s) for s in local) * max(1, array.dtype.itemsize) > COPY_BLOCK_BYTES:
            for place in places:
                self._copy(session, variable, place, why)
            return
        parts = []
        for place, shape in zip(places, local):
            values = self._read(place.scan, _find(place.scan.tree, variable.fqn), tuple(slice(0, n) for n in shape))
            parts.append(_converted(place, variable, values))
        session.write(variable, tuple(slice(0, n) for n in array.shape), np.concatenate(parts))
        self.report.copied[variable.fqn] = why


def combine_records(
    scans: Sequence[FileScan], options: VirtualOptions
) -> tuple[Dataset, set[str], dict[str, list[_Placement]], dict[str, str]]:
    """The combined tree, its record variables, where each variable's values come from
    (the files' records at their offsets; one file for the others) and the variables whose
    values must be converted (packing, fill values, units that differ: values, not bytes),
    with why. Many files follow the archive copy's plan (``convert/combine.py``: its checks,
    its messages); one file is its own plan."""
    first = scans[0]
    if len(scans) == 1:
        tree: Dataset = _copy.deepcopy(first.tree)
        unlimited = next((d for d in tree.dimensions if d.unlimited), None)
        record = {v.fqn for v in _variables(tree) if unlimited is not None and _starts_with(v, unlimited.fqn)}
        placement = _Placement(0, first, 0, unlimited.size if unlimited is not None else 0)
        return tree, record, {v.fqn: [placement] for v in _variables(tree)}, {}
    # the archive copy's plan, from these scans (no file opened again to compare them)
    plan = plan_scans([SourceScan(scan.url, scan.identity, scan.tree, dict(scan.storage), scan.data_model)
                       for scan in scans], CombineOptions(storage_options=options.storage_options))
    index = {scan.url: i for i, scan in enumerate(scans)}
    placements = [
        _Placement(index[part.location], scans[index[part.location]], part.record_offset, part.record_length, part.conversions)
        for part in plan.sources
    ]
    placed = {fqn: [placements[i] for i in variable.sources] for fqn, variable in plan.variables.items()}
    converted = {
        fqn: f"its values must be converted ({', '.join(sorted(variable.outcomes))}): "
        + ", ".join(sorted({placements[i].scan.url for i in variable.sources if fqn in placements[i].conversions}))
        + f" store them otherwise than {first.url}"
        for fqn, variable in plan.variables.items()
        if variable.outcomes != {COPY}
    }
    record = {fqn for fqn, variable in plan.variables.items() if variable.record}
    return plan.dataset, record, placed, converted


def _starts_with(variable: Variable, dimension: str) -> bool:
    """Whether ``variable``'s first dimension is the dimension of FQN ``dimension``."""
    if not variable.dimensions or isinstance(variable.dimensions[0], int) or variable.group is None:
        return False
    found = resolve_dimension(variable.group, variable.dimensions[0])
    return found is not None and found.fqn == dimension


def _converted(place: _Placement, variable: Variable, values: np.ndarray) -> np.ndarray:
    """A file's raw values as the combined dataset stores them (the plan's conversion)."""
    conversion = place.conversions.get(variable.fqn)
    return conversion.apply(values) if conversion is not None else values


def _codec_names(scanned: VariableChunks) -> list[str]:
    """The codecs of a variable's chain (their levels do not change how they decode)."""
    return [name for name, _ in scanned.filters]


def _chain(scanned: VariableChunks) -> str:
    return " + ".join(name.removeprefix("numcodecs.") for name, _ in scanned.filters) or "no filters"


def _local_shape(shape: tuple[int, ...], place: _Placement, record: bool) -> tuple[int, ...]:
    """A variable's shape in one file: the file's records along the record dimension."""
    return (place.records, *shape[1:]) if record and shape else shape


def _shifted(coords: Coords, shift: int) -> Coords:
    return (coords[0] + shift, *coords[1:]) if shift else coords


def _moved(region: Hyperslab, offset: int) -> Hyperslab:
    if not offset or not region:
        return region
    first = region[0]
    return (slice(first.start + offset, first.stop + offset), *region[1:])


# -- the public functions -------------------------------------------------------------------


def _progress(total: int, enabled: bool, what: str) -> Callable[[], None]:
    if not enabled:
        return lambda: None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="file", desc=what)
    return lambda: bar.update(1)


def scan_all(
    paths: Sequence[str], options: VirtualOptions, *, client: object | None = None, executor: Executor | None = None
) -> list[FileScan]:
    """Scan every file, in the order given, on the archive copy's executors: ``executor``,
    else a dask.distributed ``client``, else a local pool of ``options.workers`` processes,
    else this process (and always this process for one file, not worth starting others)."""
    if executor is None:
        many = client is not None or len(paths) > 1
        executor = executor_for(client=client, workers=options.workers) if many else InProcess()
    return map_in_order(executor, scan, paths, options, _progress(len(paths), options.progress, "scanning"))


def _build(
    scans: Sequence[FileScan], store: Store, format_name: str, report: VirtualReport, options: VirtualOptions
) -> ReferenceTable:
    return _Builder(store, scans, format_name, report, options).build()


def virtualize(
    paths: Sequence[str | os.PathLike[str]],
    target: str | os.PathLike[str],
    options: VirtualOptions = VirtualOptions(),
    *,
    client: object | None = None,
    executor: Executor | None = None,
) -> VirtualReport:
    """Make the NCZarr dataset at the local folder ``target`` whose chunks are references
    into the netCDF files ``paths`` (replacing a dataset there); what cannot be referenced
    is copied into it. The reference table is in ``target``'s ``.references`` folder, which
    ``nczarr.Dataset(target)`` and every command read transparently. The files are scanned
    as ``nczarr.copy`` runs its tasks: on a dask.distributed ``client``, an ``executor``
    (nczarr.convert.executor), or ``options.workers`` local processes."""
    started = time.perf_counter()
    names = [os.fspath(p) for p in paths]
    if not names:
        raise CopyError("virtualize needs at least one source file")
    folder = os.fspath(target)
    if "://" in folder:
        raise CopyError(f"{folder}: a virtual dataset is written to a local folder")
    report = VirtualReport(sources=names)
    scans = scan_all(names, options, client=client, executor=executor)
    existed = os.path.lexists(folder)
    try:
        store = open_store(folder, "w")
        try:
            table = _build(scans, store, options.format or "NCZARR", report, options)
        finally:
            store.close()
        table.write(os.path.join(folder, TABLE_FOLDER))
    except BaseException:
        if not existed:
            from nczarr.convert.copy import remove_local

            remove_local(folder)
        raise
    finally:
        for found in scans:
            found.close()
    report.references = len(table)
    report.seconds = time.perf_counter() - started
    return report


def export_kerchunk(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    options: VirtualOptions = VirtualOptions(),
    *,
    client: object | None = None,
    executor: Executor | None = None,
) -> VirtualReport:
    """Write kerchunk references to the netCDF files ``paths``: JSON v1 at ``out``, or a
    Parquet folder when ``out`` ends in ``.parq``, as fsspec's ReferenceFileSystem reads
    them (so zarr-python, xarray's zarr engine and GDAL read them without nczarr). The Zarr
    metadata is pure Zarr v2 (``_ARRAY_DIMENSIONS``) unless ``options.format`` names
    another convention; what cannot be referenced is inline. ``client``, ``executor``: where
    the files are scanned, as for :func:`virtualize`."""
    started = time.perf_counter()
    names = [os.fspath(p) for p in paths]
    if not names:
        raise CopyError("a kerchunk export needs at least one source file")
    destination = os.fspath(out)
    parquet = destination.rstrip("/").lower().endswith(".parq")
    format_name = options.format or "ZARR_V2"
    if parquet and make_convention(format_name).zarr_format != 2:
        raise CopyError(
            f"{destination}: kerchunk's Parquet references hold Zarr v2 metadata: use ZARR_V2 or NCZARR_V2, not {format_name}"
        )
    report = VirtualReport(sources=names)
    references, report.references = _references(names, options, format_name, report, client, executor)
    if parquet:
        references.pop(".zmetadata", None)  # the Parquet folder's own .zmetadata lists the documents
        write_kerchunk_parquet(destination, references)
    else:
        write_kerchunk_json(destination, references)
    report.seconds = time.perf_counter() - started
    return report


def _references(
    names: Sequence[str],
    options: VirtualOptions,
    format_name: str,
    report: VirtualReport,
    client: object | None,
    executor: Executor | None,
) -> tuple[dict[str, Reference], int]:
    """Every key of the virtual dataset of ``names``: documents and inline chunks as bytes,
    the others as byte ranges; and how many are byte ranges."""
    scans = scan_all(names, options, client=client, executor=executor)
    try:
        memory = MemoryStore()
        table = _build(scans, memory, format_name, report, options)
        references: dict[str, Reference] = {key: memory.get(key) for key in memory.list()}
        references.update(table)
    finally:
        for found in scans:
            found.close()
    return references, len(table)


def export_icechunk(
    paths: Sequence[str | os.PathLike[str]],
    repository: str | os.PathLike[str],
    options: VirtualOptions = VirtualOptions(),
    *,
    client: object | None = None,
    executor: Executor | None = None,
) -> VirtualReport:
    """Write a new icechunk repository in the local folder ``repository`` whose chunks are
    virtual references to the local netCDF files ``paths`` (pure Zarr v3 metadata unless
    ``options.format`` names another v3 convention; what cannot be referenced is stored in
    it), committed on ``main``. Readers authorize the files' folder as a virtual chunk
    container: the report's first line names it."""
    started = time.perf_counter()
    names = [os.fspath(p) for p in paths]
    if not names:
        raise CopyError("an icechunk export needs at least one source file")
    format_name = options.format or "ZARR"
    if make_convention(format_name).zarr_format != 3:
        raise CopyError(f"{os.fspath(repository)}: icechunk holds Zarr v3: use ZARR or NCZARR, not {format_name}")
    report = VirtualReport(sources=names)
    references, report.references = _references(names, options, format_name, report, client, executor)
    report.container = write_icechunk(os.fspath(repository), references)
    report.seconds = time.perf_counter() - started
    return report


def recorded_sources(target: str | os.PathLike[str]) -> list[str]:
    """The source files of the virtual dataset at ``target``, in order (for a refresh)."""
    return [s.location for s in _table(target).sources]


def _table(target: str | os.PathLike[str]) -> ReferenceTable:
    """The reference table of the virtual dataset at ``target``."""
    folder = os.fspath(target)
    if not has_table(folder):
        raise CopyError(f"{folder}: not a virtual dataset (no {TABLE_FOLDER} folder)")
    return ReferenceTable.read(os.path.join(folder, TABLE_FOLDER))


def refresh(
    target: str | os.PathLike[str],
    options: VirtualOptions = VirtualOptions(),
    *,
    client: object | None = None,
    executor: Executor | None = None,
) -> VirtualReport:
    """Scan the sources of the virtual dataset at ``target`` again and rewrite it: the
    references then point at the files as they are now."""
    return virtualize(recorded_sources(target), target, options, client=client, executor=executor)


def stale_sources(target: str | os.PathLike[str], storage_options: Mapping[str, object] | None = None) -> list[str]:
    """The sources of the virtual dataset at ``target`` that changed since it was made, each
    with how."""
    stale = []
    for recorded in _table(target).sources:
        try:
            how = change(recorded, source_identity(recorded.location, storage_options))
        except NCZarrError as exc:
            how = str(exc)
        if how is not None:
            stale.append(f"{recorded.location}: {how}")
    return stale


__all__ = [
    "FileScan",
    "VirtualOptions",
    "VirtualReport",
    "export_icechunk",
    "export_kerchunk",
    "recorded_sources",
    "refresh",
    "scan",
    "stale_sources",
    "virtualize",
]
