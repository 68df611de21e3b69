"""nccopy's option texts, parsed as netcdf-c parses them: ``-F`` filter specs
(``var1&var2,id,p1,p2|id,...``, ``*``, ``none``), ``-c`` chunk specs (``var:n1,n2,...`` and
``dim1/n1,dim2/n2,...``), and the sizes with a K/M/G/T/P suffix of ``-m``, ``-h`` and ``-e``.

Filter parameters are netcdf-c's constants (its filters.md): an untagged number is a 32-bit
integer (negative ones kept as their bit pattern); the tags ``b``/``s`` (signed byte, short),
``ub``/``us``, ``u``, ``f`` (float bits) and ``d``/``l``/``ul`` (two 32-bit words, little
endian) as ncaux_h5filterspec_parse reads them. Where nccopy silently reads junk (``0x5`` as 0,
``4294967296`` as 0), this parser refuses it instead, naming the part it cannot read. Filter
names (``deflate``, ``zstd``, ...) are accepted where nccopy 4.9.0 wants the HDF5 id.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from nczarr.errors import ArgumentError
from nczarr.values.storage import (
    BLOSC_CODES,
    HDF5_BLOSC,
    HDF5_BZIP2,
    HDF5_DEFLATE,
    HDF5_FLETCHER32,
    HDF5_SHUFFLE,
    HDF5_SZIP,
    HDF5_ZSTD,
    NO_SZIP,
    VariableStorage,
    netcdf_chunks,
)

#: The names a filter id may be given by instead of its number.
FILTER_IDS = {
    "deflate": HDF5_DEFLATE,
    "zlib": HDF5_DEFLATE,
    "shuffle": HDF5_SHUFFLE,
    "fletcher32": HDF5_FLETCHER32,
    "szip": HDF5_SZIP,
    "bzip2": HDF5_BZIP2,
    "zstd": HDF5_ZSTD,
    "blosc": HDF5_BLOSC,
}

#: nccopy's suffixes of ``-m``, ``-h`` and ``-e`` (powers of 1000, as its double_with_suffix).
_SIZE_SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15}

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_UINT32 = 1 << 32


@dataclass(frozen=True)
class FilterSpec:
    """One HDF5 filter: its id and its parameters as 32-bit unsigned integers."""

    id: int
    params: tuple[int, ...] = ()


@dataclass(frozen=True)
class FilterOption:
    """One ``-F``: the variables it names (FQNs, or ``*`` for all) and the filters to apply,
    or none at all (``none``: the variables' filters are removed)."""

    variables: tuple[str, ...]
    filters: tuple[FilterSpec, ...] = ()
    none: bool = False

    def names(self, fqn: str) -> bool:
        """Whether this option speaks of the variable ``fqn``."""
        return "*" in self.variables or fqn in self.variables


@dataclass(frozen=True)
class VariableChunks:
    """``-c var:n1,n2,...``: the chunk shape of one variable (0: nccopy's choice there)."""

    variable: str
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class DimensionChunks:
    """``-c dim1/n1,dim2/n2,...``: the chunk length along each named dimension (FQNs)."""

    sizes: dict[str, int]


ChunkSpec = VariableChunks | DimensionChunks


def parse_size(text: str, flag: str) -> int:
    """A byte or element count with nccopy's optional K/M/G/T/P suffix (powers of 1000)."""
    body = text.strip()
    scale = 1
    if body and body[-1].lower() in _SIZE_SUFFIXES:
        scale = _SIZE_SUFFIXES[body[-1].lower()]
        body = body[:-1]
    if not _NUMBER.fullmatch(body) or body.startswith("-"):
        raise ArgumentError(f"{flag} {text!r}: expected a non-negative number with an optional K, M, G, T or P suffix")
    return int(float(body) * scale)


def parse_count(text: str, flag: str) -> int:
    """A plain non-negative integer (``-d``, ``-M``, ``-L``)."""
    if not text.strip().isdigit():
        raise ArgumentError(f"{flag} {text!r}: expected a non-negative integer")
    return int(text)


def _fqn(name: str) -> str:
    """A variable or dimension named in a spec: a full path, or a name in the root group.
    nccopy escapes more characters than an FQN does; only an FQN's escapes are kept."""
    name = re.sub(r"\\(.)", lambda m: m.group(0) if m.group(1) in "/\\ " else m.group(1), name)
    return name if name == "*" or name.startswith("/") else "/" + name


def _split_unescaped(text: str, separator: str) -> list[str]:
    parts, current, escaped = [], "", False
    for char in text:
        if escaped:
            current += "\\" + char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current + ("\\" if escaped else ""))
    return parts


def parse_filter_option(text: str) -> FilterOption:
    """One ``-F`` argument: ``none`` / ``*,none`` (no filters anywhere unless named),
    ``VARS,none`` or ``VARS,FILTER|FILTER...`` with ``VARS`` ``*`` or ``v1&v2&...`` and each
    ``FILTER`` an id (or name) and its parameters, comma-separated."""
    if text.strip().lower() in ("none", "*,none"):
        return FilterOption(("*",), none=True)
    head = _split_unescaped(text, ",")[0]
    rest = text[len(head) + 1 :]
    variables = tuple(_fqn(v.strip()) for v in _split_unescaped(head, "&") if v.strip())
    if not variables:
        raise ArgumentError(f"-F {text!r}: no variable named before the filter (use '*' for all)")
    if not rest.strip():
        raise ArgumentError(f"-F {text!r}: no filter given after the variables (expected VARS,ID[,PARAMS...] or VARS,none)")
    if rest.strip().lower() == "none":
        return FilterOption(variables, none=True)
    return FilterOption(variables, tuple(parse_filter(part, text) for part in rest.split("|")))


def parse_filter(text: str, whole: str | None = None) -> FilterSpec:
    """One filter: ``ID[,P1,P2,...]`` with ``ID`` a number or a known filter name."""
    where = f"-F {(whole or text)!r}"
    parts = [p.strip() for p in text.split(",")]
    name = parts[0]
    if not name:
        raise ArgumentError(f"{where}: empty filter (expected ID[,PARAMS...])")
    if name.isdigit():
        filter_id = int(name)
        if filter_id >= _UINT32:
            raise ArgumentError(f"{where}: filter id {name} is not a 32-bit unsigned integer")
    elif name.lower() in FILTER_IDS:
        filter_id = FILTER_IDS[name.lower()]
    else:
        known = ", ".join(FILTER_IDS)
        raise ArgumentError(f"{where}: unknown filter {name!r} (give an HDF5 filter id or one of {known})")
    params: list[int] = []
    for part in parts[1:]:
        params.extend(parse_parameter(part, where))
    return FilterSpec(filter_id, tuple(params))


def parse_parameter(text: str, where: str = "-F") -> list[int]:
    """One filter parameter as the 32-bit words netcdf-c makes of it."""
    lowered = text.strip().lower()
    for tag in ("ul", "ub", "us", "u", "b", "s", "l", "f", "d", ""):
        if lowered.endswith(tag) and lowered[: len(lowered) - len(tag)]:
            body = lowered[: len(lowered) - len(tag)]
            break
    else:
        raise ArgumentError(f"{where}: empty filter parameter")
    if tag in ("f", "d"):
        if not _NUMBER.fullmatch(body):
            raise ArgumentError(f"{where}: bad {tag!r} parameter {text!r}")
        if tag == "f":
            return [struct.unpack("<I", struct.pack("<f", float(body)))[0]]
        return list(struct.unpack("<II", struct.pack("<d", float(body))))
    if not _INTEGER.fullmatch(body):
        raise ArgumentError(f"{where}: bad filter parameter {text!r} (expected an integer, or a number tagged f or d)")
    value = int(body)
    if tag in ("l", "ul"):
        low, high = (-(1 << 63), (1 << 63) - 1) if tag == "l" else (0, (1 << 64) - 1)
        _check_range(value, low, high, text, where)
        return list(struct.unpack("<II", (value % (1 << 64)).to_bytes(8, "little")))
    bits = {"b": 8, "ub": 8, "s": 16, "us": 16}.get(tag, 32)
    signed = tag in ("b", "s") or (tag == "" and value < 0)
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    _check_range(value, low, high, text, where)
    return [value % (1 << bits)]


def _check_range(value: int, low: int, high: int, text: str, where: str) -> None:
    if not low <= value <= high:
        raise ArgumentError(f"{where}: filter parameter {text!r} is out of range [{low}, {high}]")


def parse_chunk_spec(text: str) -> ChunkSpec:
    """One ``-c`` argument: ``var:n1,n2,...`` or ``dim1/n1,dim2/n2,...`` (not both)."""
    spec = text.strip()
    if ":" in spec:
        name, _, sizes = spec.rpartition(":")
        if not name or "/" in sizes:
            raise ArgumentError(f"-c {text!r}: expected var:N1,N2,... or dim1/N1,dim2/N2,... (not both in one -c)")
        return VariableChunks(_fqn(name.strip()), tuple(_chunk_length(n, text, allow_zero=True) for n in sizes.split(",")))
    lengths: dict[str, int] = {}
    for item in spec.split(","):
        name, slash, size = item.rpartition("/")
        if not slash or not name.strip("/ "):
            raise ArgumentError(f"-c {text!r}: bad item {item!r}; expected dim/N (or var:N1,N2,... alone)")
        lengths[_fqn(name.strip())] = _chunk_length(size, text, allow_zero=False)
    return DimensionChunks(lengths)


def _chunk_length(text: str, spec: str, *, allow_zero: bool) -> int:
    if not text.strip().isdigit():
        raise ArgumentError(f"-c {spec!r}: bad chunk length {text.strip()!r} (expected a positive integer)")
    length = int(text)
    if length == 0 and not allow_zero:
        raise ArgumentError(f"-c {spec!r}: a chunk length must be positive")
    return length



# -- what the options make of a variable's storage ------------------------------------------

#: nccopy's default ``-M``: a netCDF-4 variable whose chunk is smaller stays contiguous.
NCCOPY_MIN_CHUNK_BYTES = 8192
#: netCDF-4's deflate levels (``-d``).
DEFLATE_LEVELS = range(10)


@dataclass(frozen=True)
class Shape:
    """What the chunking rules need of a variable: its dimensions' FQNs, lengths, whether
    each is unlimited, and the bytes of one value."""

    dimensions: tuple[str, ...]
    sizes: tuple[int, ...]
    unlimited: tuple[bool, ...]
    itemsize: int


@dataclass(frozen=True)
class StorageRequest:
    """nccopy's storage options, parsed: ``-F`` filter options, ``-c`` chunk specs, ``-d``,
    ``-s`` and ``-M``, and the storage they give each variable (netcdf-c's copy_var_specials
    and copy_chunking rules)."""

    filters: tuple[FilterOption, ...] = ()
    chunks: tuple[ChunkSpec, ...] = ()
    deflate: int | None = None
    shuffle: bool = False
    min_chunk_bytes: int = 0

    @classmethod
    def parse(
        cls, filters: Sequence[str], chunks: Sequence[str], deflate: int | None, shuffle: bool, min_chunk_bytes: int
    ) -> StorageRequest:
        if deflate is not None and deflate not in DEFLATE_LEVELS:
            raise ArgumentError(f"-d {deflate}: the deflate level must be 0 to 9")
        if min_chunk_bytes < 0:
            raise ArgumentError(f"-M {min_chunk_bytes}: the minimum chunk size must not be negative")
        return cls(
            tuple(parse_filter_option(f) for f in filters),
            tuple(parse_chunk_spec(c) for c in chunks),
            deflate,
            shuffle,
            min_chunk_bytes,
        )

    @property
    def asks_filters(self) -> bool:
        """Whether some ``-F`` adds filters (which nccopy writes in netCDF-4 only)."""
        return any(not option.none for option in self.filters)

    @property
    def dimension_chunks(self) -> dict[str, int]:
        """The chunk lengths of the last ``-c dim/n,...`` (each replaces the one before)."""
        found = [spec.sizes for spec in self.chunks if isinstance(spec, DimensionChunks)]
        return found[-1] if found else {}

    def variable_chunks(self, fqn: str) -> tuple[int, ...] | None:
        """The first ``-c var:n,...`` of a variable (nccopy keeps the first)."""
        return next((s.sizes for s in self.chunks if isinstance(s, VariableChunks) and s.variable == fqn), None)

    def unknown_names(self, variables: Iterable[str], dimensions: Iterable[str]) -> list[str]:
        """The variables and dimensions the specs name that the dataset lacks."""
        known_variables, known_dimensions = set(variables), set(dimensions)
        missing = [f"-F: no variable {v}" for o in self.filters for v in o.variables if v != "*" and v not in known_variables]
        for spec in self.chunks:
            if isinstance(spec, VariableChunks) and spec.variable not in known_variables:
                missing.append(f"-c: no variable {spec.variable}")
            elif isinstance(spec, DimensionChunks):
                missing += [f"-c: no dimension {d}" for d in spec.sizes if d not in known_dimensions]
        return missing

    def filtered(self, fqn: str, stored: VariableStorage) -> VariableStorage:
        """A variable's filters: none where ``-F none`` speaks of it; ``-d 0`` removes
        deflate, shuffle and other filters (Fletcher32 stays); ``-d n`` deflates at level n
        (shuffled with ``-s``) whatever ``-F`` says, as nccopy; else the ``-F`` filters naming
        the variable replace the source's; else the source's stay (``-s`` alone does nothing)."""
        if any(o.none and o.names(fqn) for o in self.filters):
            return replace(stored, compression=None, shuffle=False, fletcher32=False, codecs=None)
        if self.deflate == 0:
            return replace(stored, compression=None, shuffle=False, codecs=None)
        if self.deflate is not None:
            return replace(stored, compression="zlib", complevel=self.deflate, shuffle=self.shuffle, codecs=None)
        specs = [f for o in self.filters if o.names(fqn) for f in o.filters]
        if not specs:
            return stored
        return storage_of_filters(specs, replace(stored, compression=None, shuffle=False, fletcher32=False, codecs=None), fqn)

    def chunked(self, fqn: str, shape: Shape, stored: VariableStorage, filtered: bool) -> tuple[int, ...] | None:
        """A variable's chunk shape, None for contiguous (netcdf-c's copy_chunking): ``-c
        var:`` first, then ``-c dim/n``, then the source's chunks, then netCDF's default; a
        variable is chunked when the source's is, when a spec names it or one of its
        dimensions, when it has an unlimited dimension or a filter; one whose chunk is smaller
        than ``-M`` bytes and that has no unlimited dimension is contiguous (with filters,
        which need chunks: netCDF's default chunks)."""
        if not shape.dimensions:
            return None
        own = self.variable_chunks(fqn)
        per_dimension = self.dimension_chunks
        source = stored.chunks if stored.chunks and len(stored.chunks) == len(shape.sizes) else None
        chunked = bool(
            source or own or any(shape.unlimited) or filtered or self._chunks_all_but(fqn)
            or any(d in per_dimension for d in shape.dimensions)
        )
        if not chunked:
            return None
        if own is not None and len(own) != len(shape.sizes):
            raise ArgumentError(f"-c {fqn}: {len(own)} chunk lengths given, the variable has {len(shape.sizes)} dimensions")
        default = netcdf_chunks(shape.sizes, shape.unlimited, max(1, shape.itemsize))
        chunks = []
        for i, dimension in enumerate(shape.dimensions):
            length = (own[i] if own else 0) or per_dimension.get(dimension, 0) or (source[i] if source else 0) or default[i]
            asked = bool(own and own[i]) or dimension in per_dimension
            if asked and not shape.unlimited[i] and length > max(1, shape.sizes[i]):
                raise ArgumentError(f"-c: chunk length {length} of {fqn} exceeds its dimension {dimension} ({shape.sizes[i]})")
            chunks.append(max(1, length))
        if math.prod(chunks) * shape.itemsize < self.min_chunk_bytes and not any(shape.unlimited):
            return default if filtered else None  # netCDF-4 chunks a filtered variable by default
        return tuple(chunks)


    def _chunks_all_but(self, fqn: str) -> bool:
        """nccopy chunks a variable when a ``-F`` names another one and none says ``none``
        for it (netcdf-c's varfiltersactive counts the options *not* naming the variable),
        before ``-M`` may make it contiguous again; mirrored so that the files match."""
        if any(o.none and o.names(fqn) for o in self.filters):
            return False
        return any(not o.names(fqn) for o in self.filters)


def storage_of_filters(specs: Sequence[FilterSpec], storage: VariableStorage, fqn: str) -> VariableStorage:
    """The storage settings that HDF5 filters stand for (the later of two same filters
    wins, as in netcdf-c); a filter nczarr has no codec for is refused, naming it."""
    for spec in specs:
        storage = _with_filter(spec, storage, fqn)
    return storage


def _with_filter(spec: FilterSpec, storage: VariableStorage, fqn: str) -> VariableStorage:
    params = spec.params
    if spec.id == HDF5_SHUFFLE:
        return replace(storage, shuffle=True)
    if spec.id == HDF5_FLETCHER32:
        return replace(storage, fletcher32=True)
    if spec.id == HDF5_SZIP:
        raise ArgumentError(f"-F {fqn}: filter 4 (szip): {NO_SZIP}")
    if spec.id in _LEVELLED:
        name, low, high, default = _LEVELLED[spec.id]
        level = params[0] if params else default
        if not low <= level <= high:
            raise ArgumentError(f"-F {fqn}: filter {spec.id} ({name}) level {level} is not in {low}..{high}")
        return replace(_one_compressor(storage, fqn, name), compression=name, complevel=level)
    if spec.id == HDF5_BLOSC:
        # HDF5's Blosc parameters: 4 the filter fills in, then level, shuffle, compressor code
        level, shuffle, code = (list(params[4:7]) + [5, 1, 0][len(params[4:7]) :])[:3]
        compression = next((n for n, c in BLOSC_CODES.items() if c == code), None)
        if compression is None or not 0 <= level <= 9 or shuffle not in (0, 1, 2):
            raise ArgumentError(f"-F {fqn}: filter 32001 (blosc) parameters {list(params)} name no Blosc setting nczarr writes")
        return replace(_one_compressor(storage, fqn, "blosc"), compression=compression, complevel=level, blosc_shuffle=shuffle)
    raise ArgumentError(f"-F {fqn}: unknown filter {spec.id}; nczarr writes {', '.join(f'{i} ({n})' for n, i in _KNOWN)}")


#: The compressors with one level parameter: name, lowest and highest level, default.
_LEVELLED = {HDF5_DEFLATE: ("zlib", 0, 9, 6), HDF5_BZIP2: ("bzip2", 1, 9, 9), HDF5_ZSTD: ("zstd", -131072, 22, 3)}
_KNOWN = [(n, i) for n, i in FILTER_IDS.items() if n != "zlib" and i != HDF5_SZIP]


def _one_compressor(storage: VariableStorage, fqn: str, name: str) -> VariableStorage:
    """The storage, which must not have another compressor (the same one again is fine)."""
    held = storage.compression
    if held is not None and held.split("_")[0] != name:
        raise ArgumentError(f"-F {fqn}: {name} after {held}; nczarr writes one compressor per variable")
    return storage

__all__ = [
    "DEFLATE_LEVELS",
    "FILTER_IDS",
    "NCCOPY_MIN_CHUNK_BYTES",
    "ChunkSpec",
    "DimensionChunks",
    "FilterOption",
    "FilterSpec",
    "Shape",
    "StorageRequest",
    "VariableChunks",
    "parse_chunk_spec",
    "parse_count",
    "parse_filter",
    "parse_filter_option",
    "parse_parameter",
    "parse_size",
    "storage_of_filters",
]
