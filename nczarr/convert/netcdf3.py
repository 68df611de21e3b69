"""netCDF-3 files natively: the classic format (CDF-1), the 64-bit offset format (CDF-2) and
the 64-bit data format (CDF-5), read as a :class:`~nczarr.values.source.DatasetSource` and
written from any source.

Facts are from Unidata's "NetCDF File Format Specification" (the header grammar, XDR
encoding, 4-byte padding, record layout) and from what netcdf-c writes (padding filled with
the variable's fill value, a single record variable stored without padding).
"""

from __future__ import annotations

import logging
import math
import mmap
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from nczarr.errors import DatasetNotFoundError, Netcdf3Error
from nczarr.formats import FormatError
from nczarr.model import AtomicType, DataModel, Dataset, Dimension, Group, Resolver, Variable
from nczarr.store import ANY_FILE, FileState, replace_file, temp_beside
from nczarr.values.blocks import first_index, plan_blocks
from nczarr.values.source import DatasetSource
from nczarr.values.storage import VariableStorage
from nczarr.values.types import DEFAULT_FILL, fill_attribute, numpy_dtype

log = logging.getLogger(__name__)

__all__ = ["DATA_MODELS", "Netcdf3Reader", "problems", "write_netcdf3"]

#: netCDF4's data model names by the version byte after ``CDF``.
DATA_MODELS = {1: "NETCDF3_CLASSIC", 2: "NETCDF3_64BIT_OFFSET", 5: "NETCDF3_64BIT_DATA"}
_VERSION_OF = {name: version for version, name in DATA_MODELS.items()}

_NC_DIMENSION = 0x0A
_NC_VARIABLE = 0x0B
_NC_ATTRIBUTE = 0x0C

_TYPE_OF_CODE = {
    1: AtomicType.BYTE,
    2: AtomicType.CHAR,
    3: AtomicType.SHORT,
    4: AtomicType.INT,
    5: AtomicType.FLOAT,
    6: AtomicType.DOUBLE,
    7: AtomicType.UBYTE,
    8: AtomicType.USHORT,
    9: AtomicType.UINT,
    10: AtomicType.INT64,
    11: AtomicType.UINT64,
}
_CODE_OF_TYPE = {t: code for code, t in _TYPE_OF_CODE.items()}
#: The types CDF-1 and CDF-2 hold; CDF-5 holds all of ``_TYPE_OF_CODE``.
_CLASSIC_TYPES = frozenset(t for code, t in _TYPE_OF_CODE.items() if code <= 6)

_INT_MAX = 2**31 - 1
_UINT_MAX = 2**32 - 1


@dataclass(frozen=True)
class _Kind:
    """The field widths of one netCDF-3 format version."""

    version: int

    @property
    def size_bytes(self) -> int:
        """Width of NON_NEG values (counts, lengths, vsize, numrecs, dimension ids)."""
        return 8 if self.version == 5 else 4

    @property
    def offset_bytes(self) -> int:
        """Width of a variable's ``begin``."""
        return 4 if self.version == 1 else 8

    @property
    def name(self) -> str:
        return DATA_MODELS[self.version]


def _padded(size: int) -> int:
    return size + (-size % 4)


# -- reading --------------------------------------------------------------------------------


@dataclass
class _Layout:
    """Where a variable's values are: its first byte, shape and file dtype, and whether the
    first dimension is the record dimension (then records are ``recsize`` apart)."""

    begin: int
    shape: tuple[int, ...]
    dtype: np.dtype
    record: bool


class _Cursor:
    """Reads XDR values from the header, failing clearly when the file ends too early."""

    def __init__(self, data: Any, kind: _Kind, path: str) -> None:
        self.data = data
        self.kind = kind
        self.path = path
        self.pos = 4

    def take(self, count: int) -> bytes:
        end = self.pos + count
        if end > len(self.data):
            raise Netcdf3Error(f"{self.path}: the netCDF-3 header is truncated at byte {self.pos}")
        chunk = bytes(self.data[self.pos : end])
        self.pos = end
        return chunk

    def uint(self, width: int) -> int:
        return int.from_bytes(self.take(width), "big")

    def non_neg(self) -> int:
        return self.uint(self.kind.size_bytes)

    def padded(self, count: int) -> bytes:
        chunk = self.take(count)
        self.take(-count % 4)
        return chunk

    def name(self) -> str:
        """A name, ending at its first NUL as netcdf-c's C strings do (some writers pad
        names with NULs inside their counted length)."""
        return self.padded(self.non_neg()).partition(b"\0")[0].decode("utf-8", errors="surrogateescape")

    def list_header(self, tag: int, what: str) -> int:
        """The number of elements of a dim, att or var list (0 when ABSENT), refused when
        the rest of the file could not hold that many (a hostile count is not looped over)."""
        found = self.uint(4)
        count = self.non_neg()
        if found == 0 and count == 0:
            return 0
        if found != tag:
            raise Netcdf3Error(f"{self.path}: corrupt netCDF-3 header: expected the {what} list at byte {self.pos}")
        # every element starts with its name's length and one more field of at least 4 bytes
        smallest = self.kind.size_bytes + 4
        if count * smallest > len(self.data) - self.pos:
            raise Netcdf3Error(
                f"{self.path}: corrupt netCDF-3 header: {count} {what}s declared at byte {self.pos}, "
                f"more than the file's {len(self.data)} bytes can hold"
            )
        return count

    def nc_type(self) -> AtomicType:
        code = self.uint(4)
        type = _TYPE_OF_CODE.get(code)
        if type is None or (self.kind.version != 5 and type not in _CLASSIC_TYPES):
            raise Netcdf3Error(f"{self.path}: corrupt netCDF-3 header: unknown type code {code}")
        return type


class _RangeBytes:
    """A file read by byte ranges as if it were bytes (``len`` and slices): a remote file
    through fsspec, whose header and values are fetched as they are read."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self._size = file.seek(0, os.SEEK_END)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, where: slice) -> bytes:
        start, stop, _ = where.indices(self._size)
        self._file.seek(start)
        return self._file.read(max(0, stop - start))


class Netcdf3Reader:
    """A netCDF-3 file (CDF-1, CDF-2 or CDF-5) open for reading, as a ``DatasetSource``.

    Values are read through a memory map (a remote file: by byte ranges), so only the bytes
    of a selection are touched."""

    dataset: Dataset
    storage: dict[str, VariableStorage]
    data_model: str

    def __init__(self, path: str | os.PathLike[str], *, file: BinaryIO | None = None) -> None:
        """``file``: the file open for reading (a remote one, through fsspec), ``path`` its name."""
        self.path = os.fspath(path)
        try:
            self._file = file if file is not None else open(self.path, "rb")  # noqa: SIM115 (open until close())
        except FileNotFoundError:
            raise DatasetNotFoundError(f"{self.path}: no such file") from None
        try:
            if file is not None:
                self._map: Any = _RangeBytes(file)
            else:
                size = os.fstat(self._file.fileno()).st_size
                self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            self._layouts: dict[str, _Layout] = {}
            self._parse()
        except BaseException:
            self.close()
            raise

    def _parse(self) -> None:
        head = bytes(self._map[:4])
        if head[:3] != b"CDF" or head[3:4] not in (b"\x01", b"\x02", b"\x05"):
            raise Netcdf3Error(f"{self.path}: not a netCDF-3 file: it starts with {head!r}")
        kind = _Kind(head[3])
        self.data_model = kind.name
        cursor = _Cursor(self._map, kind, self.path)
        numrecs = cursor.non_neg()
        streaming = numrecs == 2 ** (8 * kind.size_bytes) - 1
        dataset = Dataset(data_model=DataModel.CLASSIC)
        dimensions: list[Dimension] = []
        for _ in range(cursor.list_header(_NC_DIMENSION, "dimension")):
            name = cursor.name()
            length = cursor.non_neg()
            dimensions.append(dataset.add_dimension(name, length, unlimited=length == 0))
        self._read_attributes(cursor, dataset)
        recsizes: list[int] = []
        for _ in range(cursor.list_header(_NC_VARIABLE, "variable")):
            name = cursor.name()
            try:
                dims = [dimensions[cursor.non_neg()] for _ in range(cursor.non_neg())]
            except IndexError:
                problem = f"corrupt netCDF-3 header: variable {name!r} has a bad dimension id"
                raise Netcdf3Error(f"{self.path}: {problem}") from None
            variable = dataset.add_variable(name, AtomicType.BYTE, [d.name for d in dims])
            self._read_attributes(cursor, variable)
            variable.type = cursor.nc_type()
            cursor.non_neg()  # vsize: recomputed from the shape, as readers must for big variables
            begin = cursor.uint(kind.offset_bytes)
            record = bool(dims) and dims[0].unlimited
            layout = _Layout(begin, tuple(d.size for d in dims), numpy_dtype(variable.type, "big"), record)
            self._layouts[variable.fqn] = layout
            if record:
                recsizes.append(math.prod(layout.shape[1:]) * layout.dtype.itemsize)
        self._recsize = recsizes[0] if len(recsizes) == 1 else sum(map(_padded, recsizes))
        if streaming:
            begins = [lay.begin for lay in self._layouts.values() if lay.record]
            numrecs = (len(self._map) - min(begins)) // self._recsize if begins and self._recsize else 0
        for dim in dimensions:
            if dim.unlimited:
                dim.size = numrecs
        for layout in self._layouts.values():
            if layout.record:
                layout.shape = (numrecs, *layout.shape[1:])
        self.dataset = dataset
        self.storage = {fqn: VariableStorage() for fqn in self._layouts}

    def _read_attributes(self, cursor: _Cursor, owner: Group | Variable) -> None:
        for _ in range(cursor.list_header(_NC_ATTRIBUTE, "attribute")):
            name = cursor.name()
            type = cursor.nc_type()
            count = cursor.non_neg()
            dtype = numpy_dtype(type, "big")
            raw = cursor.padded(count * dtype.itemsize)
            if type is AtomicType.CHAR:
                owner.add_attribute(name, type, raw.decode("utf-8", errors="surrogateescape"))
            else:
                owner.add_attribute(name, type, np.frombuffer(raw, dtype).tolist())

    def byte_layout(self, variable: Variable) -> tuple[int, tuple[int, ...], np.dtype, bool, int]:
        """Where ``variable``'s values are in the file: its first byte, shape, file dtype
        (big-endian), whether its first dimension is the record dimension, and the bytes
        from one record to the next (references into the file need no more)."""
        layout = self._layouts[variable.fqn]
        return layout.begin, layout.shape, layout.dtype, layout.record, self._recsize

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        """The values of ``variable`` in ``selection``: numbers in native byte order, ``S1``
        for char."""
        layout = self._layouts.get(variable.fqn)
        if layout is None:
            raise FormatError(f"{self.path}: no variable {variable.fqn}")
        native = layout.dtype if layout.dtype.kind == "S" else layout.dtype.newbyteorder("=")
        if 0 in layout.shape:
            shape = tuple(len(range(*s.indices(n))) for s, n in zip(selection, layout.shape))
            try:
                return np.empty(shape, native)
            except ValueError:  # numpy refuses huge dimensions even beside a zero
                raise Netcdf3Error(f"{self.path}: {variable.fqn}: a selection of shape {shape} is too large") from None
        strides = _c_strides(layout)
        if layout.record:
            strides[0] = self._recsize
        extent = layout.begin + sum((n - 1) * s for n, s in zip(layout.shape, strides)) + layout.dtype.itemsize
        if extent > len(self._map):
            raise Netcdf3Error(
                f"{self.path}: file is truncated: {variable.fqn} needs {extent} bytes, the file has {len(self._map)}"
            )
        if not isinstance(self._map, _RangeBytes):
            view = np.ndarray(layout.shape, layout.dtype, buffer=self._map, offset=layout.begin, strides=tuple(strides))
            return np.array(view[selection], dtype=native)
        # a remote file: only the bytes from the selection's first value to its last
        ranges = [range(*s.indices(n)) for s, n in zip(selection, layout.shape)]
        shape = tuple(len(r) for r in ranges)
        if 0 in shape:
            return np.empty(shape, native)
        low = layout.begin + sum(min(r[0], r[-1]) * stride for r, stride in zip(ranges, strides))
        high = layout.begin + sum(max(r[0], r[-1]) * stride for r, stride in zip(ranges, strides)) + layout.dtype.itemsize
        first = layout.begin + sum(r[0] * stride for r, stride in zip(ranges, strides)) - low
        steps = tuple(r.step * stride for r, stride in zip(ranges, strides))
        view = np.ndarray(shape, layout.dtype, buffer=self._map[low:high], offset=first, strides=steps)
        return np.array(view, dtype=native)

    def close(self) -> None:
        """Release the memory map and the file."""
        if isinstance(self._map, mmap.mmap):
            self._map.close()
        self._map = b""
        self._file.close()

    def __enter__(self) -> Netcdf3Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _c_strides(layout: _Layout) -> list[int]:
    strides = [layout.dtype.itemsize] * len(layout.shape)
    for axis in range(len(layout.shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * layout.shape[axis + 1]
    return strides


# -- planning a file ---------------------------------------------------------------------------


@dataclass
class _PlannedVariable:
    variable: Variable
    type: AtomicType
    dimids: list[int]
    shape: tuple[int, ...]  # record variables: the current number of records first
    record: bool
    dtype: np.dtype
    vsize: int = 0  # bytes of one record (record variables) or of all values, padded
    begin: int = 0
    fill: bytes = b""  # one fill value in the file's encoding


@dataclass
class _Plan:
    kind: _Kind
    dataset: Dataset
    dimensions: list[Dimension] = field(default_factory=list)
    variables: list[_PlannedVariable] = field(default_factory=list)
    numrecs: int = 0
    recsize: int = 0
    header: bytes = b""
    size: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def fixed(self) -> list[_PlannedVariable]:
        return [v for v in self.variables if not v.record]

    @property
    def records(self) -> list[_PlannedVariable]:
        return [v for v in self.variables if v.record]


def problems(dataset: Dataset, data_model: str) -> list[str]:
    """What a netCDF-3 file of kind ``data_model`` cannot hold of ``dataset``, each naming the
    node's FQN (empty: it can be written)."""
    return _plan(dataset, data_model).problems


def _kind_of(data_model: str) -> _Kind:
    version = _VERSION_OF.get(data_model.upper())
    if version is None:
        raise FormatError(f"unknown netCDF-3 data model {data_model!r}; use one of {', '.join(_VERSION_OF)}")
    return _Kind(version)


def _plan(dataset: Dataset, data_model: str) -> _Plan:
    plan = _Plan(_kind_of(data_model), dataset)
    kind, found = plan.kind, plan.problems
    found += [f"{g.fqn}: netCDF-3 has no groups" for g in dataset.groups]
    found += [f"{t.fqn}: netCDF-3 has no user-defined types" for t in dataset.types]
    dim_max = {1: _INT_MAX - 3, 2: _UINT_MAX - 3, 5: 2**63 - 4}[kind.version]
    for dim in dataset.dimensions:
        if dim.unlimited and any(d.unlimited for d in plan.dimensions):
            found.append(f"{dim.fqn}: a second unlimited dimension; netCDF-3 has only one")
        elif not dim.unlimited and not 0 < dim.size <= dim_max:
            found.append(f"{dim.fqn}: length {dim.size} does not fit {kind.name} (1 to {dim_max})")
        plan.dimensions.append(dim)
    unlimited = next((d for d in plan.dimensions if d.unlimited), None)
    plan.numrecs = unlimited.size if unlimited is not None else 0
    if unlimited is not None and kind.version != 5 and plan.numrecs >= _UINT_MAX:
        found.append(f"{unlimited.fqn}: {plan.numrecs} records do not fit {kind.name}")
    for attribute in dataset.attributes:
        _check_attribute(plan, attribute)
    resolver = Resolver()
    for variable in dataset.variables:
        planned = _plan_variable(plan, variable, resolver)
        if planned is not None:
            plan.variables.append(planned)
    _lay_out(plan)
    return plan


def _type_problem(kind: _Kind, type: Any) -> str | None:
    if not isinstance(type, AtomicType):
        return f"user-defined type {type} has no netCDF-3 equivalent"
    if type not in _CODE_OF_TYPE:
        return f"type {type} has no netCDF-3 equivalent"
    if kind.version != 5 and type not in _CLASSIC_TYPES:
        return f"type {type} needs NETCDF3_64BIT_DATA (CDF-5)"
    return None


def _plan_variable(plan: _Plan, variable: Variable, resolver: Resolver) -> _PlannedVariable | None:
    found = plan.problems
    bad = False
    problem = _type_problem(plan.kind, variable.type)
    if problem:
        found.append(f"{variable.fqn}: {problem}")
        bad = True
    dimids: list[int] = []
    for position, ref in enumerate(variable.dimensions):
        dim = resolver.dimension(plan.dataset, ref) if isinstance(ref, str) else None
        if dim is None or not any(dim is d for d in plan.dimensions):
            found.append(f"{variable.fqn}: dimension {ref!r} is not a named dimension of the root group")
            bad = True
            continue
        if dim.unlimited and position:
            found.append(f"{variable.fqn}: unlimited dimension {dim.name!r} is not the first; netCDF-3 needs it first")
            bad = True
        dimids.append(next(i for i, d in enumerate(plan.dimensions) if d is dim))
    for attribute in variable.attributes:
        _check_attribute(plan, attribute)
    if bad:
        return None
    type = variable.type
    assert isinstance(type, AtomicType)  # _type_problem refused the others
    dtype = numpy_dtype(type, "big")
    dims = [plan.dimensions[i] for i in dimids]
    fill = fill_attribute(variable)
    fill = DEFAULT_FILL[type] if fill is None else fill
    try:
        fill_bytes = _encode(type, fill if type is AtomicType.CHAR else [fill])[: dtype.itemsize]
    except (OverflowError, ValueError, TypeError):
        found.append(f"{variable.fqn}: _FillValue {fill!r} does not fit type {type}")
        return None
    return _PlannedVariable(
        variable, type, dimids, tuple(d.size for d in dims), bool(dims) and dims[0].unlimited, dtype, fill=fill_bytes
    )


def _check_attribute(plan: _Plan, attribute: Any) -> None:
    problem = _type_problem(plan.kind, attribute.type)
    if problem is None:
        try:
            _encode(attribute.type, attribute.values)
        except (OverflowError, ValueError, TypeError):
            problem = f"values {attribute.values!r} do not fit type {attribute.type}"
    if problem:
        plan.problems.append(f"{attribute.fqn}: {problem}")


def _encode(type: AtomicType, values: Any) -> bytes:
    if type is AtomicType.CHAR:
        text = values if isinstance(values, str) else "".join(values)
        return text.encode("utf-8", errors="surrogateescape")
    return np.array(values, dtype=numpy_dtype(type, "big")).tobytes()


def _lay_out(plan: _Plan) -> None:
    """Compute sizes and offsets, the header, and the size limits of the kind."""
    kind = plan.kind
    for planned in plan.variables:
        inner = planned.shape[1:] if planned.record else planned.shape
        planned.vsize = _padded(math.prod(inner) * planned.dtype.itemsize)
    records = plan.records
    if len(records) == 1:  # the format stores a lone record variable without padding
        only = records[0]
        plan.recsize = math.prod(only.shape[1:]) * only.dtype.itemsize
    else:
        plan.recsize = sum(v.vsize for v in records)
    plan.header = _header(plan)  # begins are placeholders: the header's size does not depend on them
    offset = len(plan.header)
    for planned in plan.fixed:
        planned.begin = offset
        offset += planned.vsize
    for planned in records:
        planned.begin = offset
        offset += planned.vsize
    plan.size = offset - sum(v.vsize for v in records) + plan.numrecs * plan.recsize
    plan.header = _header(plan)
    if kind.version == 5:
        return
    vlen_max = (_INT_MAX if kind.version == 1 else _UINT_MAX) - 3
    # Only the last variable (the last record variable if there are any) may be larger.
    may_be_large = (records or plan.fixed)[-1] if plan.variables else None
    for planned in plan.variables:
        which = "record" if planned.record else "fixed-size"
        if planned.vsize > vlen_max and planned is not may_be_large:
            plan.problems.append(
                f"{planned.variable.fqn}: {planned.vsize} bytes{' per record' if planned.record else ''} do not fit "
                f"{kind.name} (at most {vlen_max} unless it is the last {which} variable)"
            )
        if kind.version == 1 and planned.begin > _INT_MAX:
            plan.problems.append(
                f"{planned.variable.fqn}: starts at byte {planned.begin}, beyond NETCDF3_CLASSIC's 2 GiB offsets; "
                "use NETCDF3_64BIT_OFFSET"
            )


def _header(plan: _Plan) -> bytes:
    kind = plan.kind
    out: list[bytes] = [b"CDF", bytes([kind.version])]

    def non_neg(value: int) -> None:
        out.append(value.to_bytes(kind.size_bytes, "big"))

    def padded(data: bytes) -> None:
        out.append(data + b"\x00" * (-len(data) % 4))

    def name(text: str) -> None:
        data = text.encode("utf-8", errors="surrogateescape")
        non_neg(len(data))
        padded(data)

    def list_header(tag: int, count: int) -> None:
        out.append((tag if count else 0).to_bytes(4, "big"))
        non_neg(count)

    def attributes(owner: Group | Variable) -> None:
        valid = [a for a in owner.attributes if _type_problem(kind, a.type) is None]
        list_header(_NC_ATTRIBUTE, len(valid))
        for attribute in valid:
            type = attribute.type
            assert isinstance(type, AtomicType)  # _type_problem refused the others
            name(attribute.name)
            out.append(_CODE_OF_TYPE[type].to_bytes(4, "big"))
            try:
                data = _encode(type, attribute.values)
            except (OverflowError, ValueError, TypeError):
                data = b""  # reported by _check_attribute
            non_neg(len(data) // numpy_dtype(type, "big").itemsize)
            padded(data)

    non_neg(plan.numrecs)
    list_header(_NC_DIMENSION, len(plan.dimensions))
    for dim in plan.dimensions:
        name(dim.name)
        non_neg(0 if dim.unlimited else dim.size)
    attributes(plan.dataset)
    list_header(_NC_VARIABLE, len(plan.variables))
    vsize_max = 2 ** (8 * kind.size_bytes) - 1
    for planned in plan.variables:
        name(planned.variable.name)
        non_neg(len(planned.dimids))
        for dimid in planned.dimids:
            non_neg(dimid)
        attributes(planned.variable)
        out.append(_CODE_OF_TYPE[planned.type].to_bytes(4, "big"))
        non_neg(min(planned.vsize, vsize_max))
        # A begin beyond CDF-1's offsets is reported as a problem; the header is never written.
        out.append(min(planned.begin, 2 ** (8 * kind.offset_bytes) - 1).to_bytes(kind.offset_bytes, "big"))
    return b"".join(out)


# -- writing ------------------------------------------------------------------------------------


def write_netcdf3(
    path: str | os.PathLike[str],
    source: DatasetSource,
    data_model: str = "NETCDF3_CLASSIC",
    *,
    progress: Callable[[int], None] | None = None,
    max_memory: int = 64 << 20,
    replaces: FileState | str | None = ANY_FILE,
) -> None:
    """Write ``source`` as a netCDF-3 file of kind ``data_model``, holding at most about
    ``max_memory`` bytes of values at a time; ``progress(nbytes)`` is called as the bytes
    after the header (values and their padding) are written. Raises FormatError, before
    creating anything, listing what the kind cannot hold; the file appears only once complete,
    and only over the file ``replaces`` says is there (:func:`~nczarr.store.replace_file`)."""
    plan = _plan(source.dataset, data_model)
    if plan.problems:
        raise FormatError(f"{os.fspath(path)}: cannot write {plan.kind.name}:\n  " + "\n  ".join(plan.problems))
    target = os.path.abspath(os.fspath(path))
    try:
        descriptor, temporary = temp_beside(target)
    except OSError as error:
        raise Netcdf3Error(f"{target}: cannot create the file: {error.strerror or error}") from error
    try:
        with open(descriptor, "wb") as out:
            writer = _Writer(out, source, plan, progress, max(1, max_memory))
            out.write(plan.header)
            writer.fixed()
            writer.records()
        replace_file(temporary, target, replaces=replaces)  # fsynced when NCZARR_FSYNC asks
    except BaseException:
        os.unlink(temporary)
        raise
    log.debug("wrote %s (%s, %d bytes)", target, plan.kind.name, plan.size)


class _Writer:
    """Streams the values of a planned file from a source, slab by slab."""

    def __init__(
        self, out: Any, source: DatasetSource, plan: _Plan, progress: Callable[[int], None] | None, budget: int
    ) -> None:
        self.out = out
        self.source = source
        self.plan = plan
        self.progress = progress
        # A slab is held twice at most (as read and in the file's byte order).
        self.budget = max(1, budget // 2)

    def fixed(self) -> None:
        for planned in self.plan.fixed:
            self._variable(planned, planned.begin, planned.shape, ())
            self._pad(planned, planned.begin)

    def records(self) -> None:
        records = self.plan.records
        recsize = self.plan.recsize
        if not records or not recsize or not self.plan.numrecs:
            return
        batch = self.budget // (2 * recsize)  # the batch's buffer, and the slabs that fill it
        if batch == 0:
            for record in range(self.plan.numrecs):
                for planned in records:
                    base = planned.begin + record * recsize
                    self._variable(planned, base, planned.shape[1:], (slice(record, record + 1),))
                    if len(records) > 1:
                        self._pad(planned, base)
            return
        template = np.zeros(recsize, np.uint8)
        for planned in records:
            start = planned.begin - records[0].begin
            span = min(planned.vsize, recsize - start)  # a lone record variable has no padding
            template[start : start + span] = np.frombuffer(_pattern(planned, span), np.uint8)
        for first in range(0, self.plan.numrecs, batch):
            count = min(batch, self.plan.numrecs - first)
            buffer = np.tile(template, count).reshape(count, recsize)
            for planned in records:
                start = planned.begin - records[0].begin
                size = math.prod(planned.shape[1:]) * planned.dtype.itemsize
                values = self._values(planned, (slice(first, first + count), *(slice(0, n) for n in planned.shape[1:])))
                buffer[:, start : start + size] = values.reshape(count, -1).view(np.uint8).reshape(count, size)
            self._write(records[0].begin + first * recsize, buffer)

    def _variable(self, planned: _PlannedVariable, base: int, shape: tuple[int, ...], lead: tuple[slice, ...]) -> None:
        """Write the values of ``shape`` (after the leading ``lead`` selection) from ``base``."""
        for selection in plan_blocks(shape, planned.dtype.itemsize, self.budget):
            values = self._values(planned, (*lead, *selection))
            self._write(base + first_index(selection, shape) * planned.dtype.itemsize, values)

    def _values(self, planned: _PlannedVariable, selection: tuple[slice, ...]) -> np.ndarray:
        values = np.asarray(self.source.read(planned.variable, selection))
        expected = tuple(s.stop - s.start for s in selection)
        if values.shape != expected:
            raise FormatError(f"{planned.variable.fqn}: the source gave shape {values.shape} for {expected}")
        return np.ascontiguousarray(values.astype(planned.dtype, copy=False))

    def _pad(self, planned: _PlannedVariable, base: int) -> None:
        size = math.prod(planned.shape[1:] if planned.record else planned.shape) * planned.dtype.itemsize
        if planned.vsize > size:
            self._write(base + size, np.frombuffer(_pattern(planned, planned.vsize - size), np.uint8))

    def _write(self, offset: int, values: np.ndarray) -> None:
        if self.out.tell() != offset:
            self.out.seek(offset)
        self.out.write(values.data.cast("B"))
        if self.progress is not None:
            self.progress(values.nbytes)


def _pattern(planned: _PlannedVariable, size: int) -> bytes:
    """``size`` bytes of the variable's fill value, repeated (netcdf-c fills padding so)."""
    return (planned.fill * (size // len(planned.fill) + 1))[:size]
