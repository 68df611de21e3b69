"""The plan of one dataset made of many sources: concatenated along the record dimension as
NCO's ``ncrcat`` does, or merged as ``ncks -A`` does. Every source is opened and compared
before anything is written; a mismatch is one :class:`~nczarr.errors.CombineError` naming the
file, the variable and the difference. The plan knows nothing of copying: an archive copy
and a virtual dataset both follow it.

NCO 5.1.4's rules, checked live: ncrcat keeps the first file's attributes, and rebases the
record coordinate's values (the variable named as the record dimension, and only it) to the
first file's ``units`` (``days since 2001-01-01`` after ``days since 2000-01-01``: +366).
``ncks -A`` appends: attributes of a later file overwrite those of an earlier one, and a
variable both hold takes the later file's values. Where ncrcat copies raw values whose
``_FillValue``, ``scale_factor`` or ``add_offset`` differ from the first file's (silently
changing their meaning), the plan says so per variable (``refill``, ``repack``) and a copy
converts them; ncrcat also converts a variable of another type and ignores a variable the
first file lacks, where the plan refuses both.
"""

from __future__ import annotations

import copy as _copy
import logging
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import cftime
import numpy as np

from nczarr.convert.executor import Executor, InProcess, map_in_order
from nczarr.convert.sources import open_source
from nczarr.errors import CombineError
from nczarr.formats.location import local_matches, parse_location
from nczarr.model import AtomicType, Dataset, Dimension, Group, Variable, resolve_dimension
from nczarr.store.identity import SourceIdentity, source_identity
from nczarr.values.storage import VariableStorage
from nczarr.values.types import default_fill, fill_attribute, value_dtype

log = logging.getLogger(__name__)

#: The outcomes of a variable's values: copied as they are, or converted.
COPY, REBASE, REFILL, REPACK = "copy", "rebase", "refill", "repack"
_GLOB_CHARACTERS = "*?["


@dataclass(frozen=True)
class CombineOptions:
    """``concat_dim``: the dimension to concatenate along (None: the root group's unlimited
    one); ``merge``: sources may hold different variables on one grid; ``sort``: order the
    sources by their first record coordinate value instead of as given."""

    concat_dim: str | None = None
    merge: bool = False
    sort: bool = False
    storage_options: Mapping[str, object] = field(default_factory=dict)


def expand_sources(items: Sequence[str], storage_options: Mapping[str, object] | None = None) -> list[str]:
    """The sources ``items`` name, in order: paths and URLs as given, glob patterns (local or
    on an object store) replaced by their sorted matches, ``@list.txt`` by the sources listed
    in that file, one a line (blank lines and ``#`` comments skipped)."""
    found: list[str] = []
    for item in items:
        item = str(item)
        if item.startswith("@"):
            try:
                with open(item[1:], encoding="utf-8") as listing:
                    lines = [line.strip() for line in listing]
            except OSError as error:
                raise CombineError(f"{item[1:]}: cannot read the list of sources: {error.strerror or error}") from error
            found.extend(expand_sources([line for line in lines if line and not line.startswith("#")], storage_options))
        elif any(c in parse_location(item).target for c in _GLOB_CHARACTERS):
            matches = local_matches(item)
            if matches is None:
                matches = _remote_matches(item, storage_options)
            if not matches:
                raise CombineError(f"{item}: matches no file")
            found.extend(matches)
        else:
            found.append(item)
    if not found:
        raise CombineError("no sources given")
    return found


def _remote_matches(pattern: str, storage_options: Mapping[str, object] | None) -> list[str]:
    from nczarr.store.fsspec import import_fsspec

    location = parse_location(pattern, storage_options=storage_options)
    fs, path = import_fsspec().core.url_to_fs(location.target, **location.storage_options)
    protocol = location.target.split("://", 1)[0]
    return [f"{protocol}://{p}" for p in sorted(fs.glob(path))]


@dataclass(frozen=True)
class Conversion:
    """How one source's raw values of a variable become the target's: ``rebase`` (scale,
    offset) maps record coordinate values to the target's units; ``fill`` (source's, target's)
    replaces the source's fill value; ``packing`` (source scale, source offset, target scale,
    target offset) unpacks and packs again."""

    source: str
    variable: str
    rebase: tuple[float, float] | None = None
    fill: tuple[object, object] | None = None
    packing: tuple[float, float, float, float] | None = None

    @property
    def outcomes(self) -> frozenset[str]:
        return frozenset(
            name
            for name, given in (
                (REBASE, self.rebase),
                (REFILL, self.fill is not None and not _same(*self.fill)),
                (REPACK, self.packing),
            )
            if given
        )

    def apply(self, raw: np.ndarray) -> np.ndarray:
        """The target's raw values for this source's ``raw`` values."""
        out = raw
        missing = _equal(raw, self.fill[0]) if self.fill is not None else None
        if self.rebase is not None:
            scale, offset = self.rebase
            out = _cast(raw * scale + offset, raw.dtype, self)
        if self.packing is not None:
            s_in, o_in, s_out, o_out = self.packing
            out = _cast(np.rint((raw * s_in + o_in - o_out) / s_out), raw.dtype, self, missing)
        if missing is not None and self.fill is not None and missing.any():
            out = np.array(out, copy=True)
            out[missing] = self.fill[1]
        return out


def _equal(values: np.ndarray, fill: object) -> np.ndarray:
    if isinstance(fill, float) and math.isnan(fill):
        return np.isnan(values)
    return np.asarray(values == fill)


def _cast(values: np.ndarray, dtype: np.dtype, conversion: Conversion, ignore: np.ndarray | None = None) -> np.ndarray:
    """``values`` as ``dtype``; CombineError when an integer type cannot hold them."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bad = (values < info.min) | (values > info.max) | (values != np.rint(values))
        if ignore is not None:
            bad &= ~ignore
        if bad.any():
            raise CombineError(
                f"{conversion.source}: variable {conversion.variable}: values do not fit {dtype} "
                "once converted to the first file's units or packing"
            )
        values = np.where(ignore, 0, values) if ignore is not None else values
    return values.astype(dtype)


@dataclass(frozen=True)
class SourcePlan:
    """One source: where it is, its identity (to tell whether it changed), where its records
    go in the combined record dimension, the variables whose values it gives, and the
    conversions of those that are not copied as they are."""

    location: str
    identity: SourceIdentity
    record_offset: int
    record_length: int
    variables: tuple[str, ...]
    conversions: Mapping[str, Conversion] = field(default_factory=dict)


@dataclass(frozen=True)
class VariablePlan:
    """A target variable: whether it runs along the record dimension (first), the sources
    that give its values (in record order; one for a fixed variable), and the union of the
    outcomes of its values (``copy`` when nothing is converted)."""

    fqn: str
    record: bool
    sources: tuple[int, ...]
    outcomes: frozenset[str]


@dataclass(frozen=True)
class Piece:
    """Records ``start:stop`` of the target come from source ``source``'s records from
    ``source_start`` on."""

    source: int
    source_start: int
    start: int
    stop: int


@dataclass(frozen=True)
class CombinePlan:
    """The combined dataset: its tree (the record dimension at its combined length), each
    variable's storage (as its first source stores it), the data model, the record
    dimension's FQN (None for a merge without one), the sources and the variables."""

    dataset: Dataset
    storage: Mapping[str, VariableStorage]
    data_model: str
    record_dimension: str | None
    record_length: int
    sources: tuple[SourcePlan, ...]
    variables: Mapping[str, VariablePlan]

    def pieces(self, fqn: str, start: int = 0, stop: int | None = None) -> list[Piece]:
        """Where records ``start:stop`` of a record variable come from; for a fixed variable,
        the one source of all its values (``start``/``stop`` are then ignored)."""
        variable = self.variables[fqn]
        if not variable.record:
            return [Piece(variable.sources[0], 0, 0, 0)]
        stop = self.record_length if stop is None else stop
        found = []
        for index in variable.sources:
            part = self.sources[index]
            low, high = max(start, part.record_offset), min(stop, part.record_offset + part.record_length)
            if low < high:
                found.append(Piece(index, low - part.record_offset, low, high))
        return found

    def check_identities(self, storage_options: Mapping[str, object] | None = None) -> None:
        """SourceChangedError naming the first source that is not what the plan saw."""
        from nczarr.errors import SourceChangedError

        for part in self.sources:
            now = identify(part.location, storage_options)
            if now != part.identity:
                raise SourceChangedError(f"{part.location}: changed since the job started (size or modification time)")


def identify(location: str, storage_options: Mapping[str, object] | None = None) -> SourceIdentity:
    """The identity of a source given as nczarr opens it (netcdf-c URLs too)."""
    where = parse_location(location, storage_options=storage_options)
    return source_identity(where.target, where.storage_options)


# -- scanning and comparing -------------------------------------------------------------------


#: From this many local sources on, a job's executor scans them: opening netCDF-4 files holds
#: the GIL (h5py), so threads here scan one at a time, and a pool's start-up (about a second)
#: is repaid. 1,000 small files: 1.8 s on 2 local processes, 6.4 s on 8 threads.
SCAN_ON_EXECUTOR = 64


@dataclass
class SourceScan:
    """What planning needs of one source: its tree, its variables' storage settings, its
    data model, and (to sort by time) its first record coordinate value."""

    location: str
    identity: SourceIdentity
    dataset: Dataset
    storage: dict[str, VariableStorage]
    data_model: str
    first_time: float | None = None  # the first record coordinate value, rebased later


def scan_source(location: str, options: CombineOptions) -> SourceScan:
    storage_options = dict(options.storage_options) or None
    identity = identify(location, storage_options)
    source = open_source(location, storage_options=storage_options)
    try:
        scan = SourceScan(location, identity, source.dataset, dict(source.storage), source.data_model)
        if options.sort:
            dimension = _record_dimension(scan, options)
            coordinate = _coordinate(scan.dataset, dimension)
            if coordinate is None or dimension.size == 0:
                raise CombineError(f"{location}: no record coordinate {dimension.name} to sort by")
            scan.first_time = float(source.read(coordinate, (slice(0, 1),))[0])
        return scan
    finally:
        source.close()


def plan_combine(
    locations: Sequence[str], options: CombineOptions = CombineOptions(), executor: Executor | None = None
) -> CombinePlan:
    """Open and compare every source and plan the combined dataset (see the module). At
    least SCAN_ON_EXECUTOR local files are scanned on ``executor`` (the job's processes or
    cluster, not this process), others on threads here."""
    locations = list(locations)
    if not locations:
        raise CombineError("no sources given")
    if (
        executor is not None
        and not isinstance(executor, InProcess)
        and len(locations) >= SCAN_ON_EXECUTOR
        and not any("://" in where for where in locations)
    ):
        scans = map_in_order(executor, scan_source, locations, options)
    else:
        with ThreadPoolExecutor(max_workers=min(8, len(locations))) as pool:
            scans = list(pool.map(lambda where: scan_source(where, options), locations))
    return plan_scans(scans, options)


def plan_scans(scans: Sequence[SourceScan], options: CombineOptions = CombineOptions()) -> CombinePlan:
    """Compare sources scanned already (``scan_source``, or a caller's own scans holding the
    same) and plan the combined dataset; sorting needs each scan's ``first_time``."""
    scans = list(scans)
    if not scans:
        raise CombineError("no sources given")
    first = scans[0]
    record = _record_dimension(first, options, required=not options.merge)
    record_fqn = record.fqn if record is not None else None
    families = _families(scans, record_fqn, options.merge)
    if options.sort and record_fqn is not None:
        families = [sorted(f, key=lambda s: _rebased_first(s, f[0], record_fqn)) for f in families]
    for family in families:
        for scan in family[1:]:
            _compare(family[0], scan, record_fqn, same_variables=True)
    references = [family[0] for family in families]
    for later in references[1:]:
        _compare(references[0], later, record_fqn, same_variables=False)
    tree = _combined_tree(references)
    lengths = [sum(_record_length(s, record_fqn) for s in family) for family in families]
    if len(set(lengths)) > 1:
        raise CombineError(
            "the sources of different variables cover different record counts: "
            + ", ".join(f"{f[0].location} and the like: {n}" for f, n in zip(families, lengths))
        )
    if record_fqn is not None:
        target_record = _find_dimension(tree, record_fqn)
        assert target_record is not None
        target_record.size = lengths[0]
    return _plan(tree, families, record_fqn, lengths[0] if record_fqn else 0)


def _record_dimension(scan: SourceScan, options: CombineOptions, required: bool = True) -> Dimension:
    root = scan.dataset
    if options.concat_dim:
        name = options.concat_dim
        found = _find_dimension(root, name if name.startswith("/") else "/" + name)
        if found is None:
            raise CombineError(f"{scan.location}: no dimension {name} to concatenate along")
        return found
    found = next((d for d in root.dimensions if d.unlimited), None)
    if found is None and required:
        raise CombineError(f"{scan.location}: no unlimited dimension to concatenate along (name one with --concat DIM)")
    return found  # type: ignore[return-value]  # None only for a merge, whose caller allows it


def _find_dimension(tree: Group, fqn: str) -> Dimension | None:
    for group in tree.walk():
        for dimension in group.dimensions:
            if dimension.fqn == fqn:
                return dimension
    return None


def _coordinate(tree: Group, dimension: Dimension) -> Variable | None:
    group = dimension.group
    found = group.find_variable(dimension.name) if group is not None else None
    return found if found is not None and len(found.dimensions) == 1 else None


def _variables(tree: Group) -> dict[str, Variable]:
    return {v.fqn: v for group in tree.walk() for v in group.variables}


def _dimension_fqns(variable: Variable) -> list[str]:
    group = variable.group
    assert group is not None
    names = []
    for ref in variable.dimensions:
        found = None if isinstance(ref, int) else resolve_dimension(group, ref)
        names.append(found.fqn if found is not None else str(ref))
    return names


def _is_record(variable: Variable, record_fqn: str | None, location: str) -> bool:
    dimensions = _dimension_fqns(variable)
    if record_fqn is None or record_fqn not in dimensions:
        return False
    if dimensions[0] != record_fqn:
        raise CombineError(f"{location}: variable {variable.fqn}: the record dimension is not its first dimension")
    return True


def _record_length(scan: SourceScan, record_fqn: str | None) -> int:
    if record_fqn is None:
        return 0
    found = _find_dimension(scan.dataset, record_fqn)
    if found is None:
        raise CombineError(f"{scan.location}: no dimension {record_fqn} to concatenate along")
    return found.size


def _families(scans: list[SourceScan], record_fqn: str | None, merge: bool) -> list[list[SourceScan]]:
    """The sources grouped by the record variables they hold (one group when not merging),
    in the order given; each group is concatenated."""
    if not merge:
        return [scans]
    if record_fqn is None:
        return [[scan] for scan in scans]
    families: dict[frozenset[str], list[SourceScan]] = {}
    for scan in scans:
        key = frozenset(
            fqn for fqn, v in _variables(scan.dataset).items()
            if _is_record(v, record_fqn, scan.location) and v.name != record_fqn.rsplit("/", 1)[-1]
        )
        families.setdefault(key, []).append(scan)
    return list(families.values())


def _type_text(variable: Variable) -> str:
    return variable.type.value if isinstance(variable.type, AtomicType) else str(variable.type).rsplit("/", 1)[-1]


def _compare(reference: SourceScan, scan: SourceScan, record_fqn: str | None, *, same_variables: bool) -> None:
    """CombineError at the first difference of ``scan`` from ``reference`` that combining
    cannot bridge: groups, user types, dimensions other than the record one, and the
    variables (all of them when concatenating, those both hold when merging)."""
    where, other = scan.location, reference.location
    ours = {g.fqn: g for g in scan.dataset.walk()}
    theirs = {g.fqn: g for g in reference.dataset.walk()}
    if same_variables:
        for fqn in sorted(set(ours) ^ set(theirs)):
            if fqn in ours:
                raise CombineError(f"{where}: group {fqn}: not in {other}")
            raise CombineError(f"{where}: group {fqn}: missing (it is in {other})")
    for fqn in sorted(set(ours) & set(theirs)):
        for dimension in ours[fqn].dimensions:
            match = theirs[fqn].find_dimension(dimension.name)
            if match is None or dimension.fqn == record_fqn:
                continue
            if match.size != dimension.size:
                raise CombineError(
                    f"{where}: dimension {dimension.fqn}: length {dimension.size} here, {match.size} in {other}"
                )
        for user_type in ours[fqn].types:
            match_type = theirs[fqn].find_type(user_type.name)
            if match_type is not None and match_type != user_type:
                raise CombineError(f"{where}: type {user_type.fqn}: defined differently in {other}")
    mine, yours = _variables(scan.dataset), _variables(reference.dataset)
    if same_variables:
        for fqn in sorted(set(yours) - set(mine)):
            raise CombineError(f"{where}: variable {fqn}: missing (it is in {other})")
        for fqn in sorted(set(mine) - set(yours)):
            raise CombineError(f"{where}: variable {fqn}: not in {other} (use --merge for variables split across files)")
    for fqn in sorted(set(mine) & set(yours)):
        a, b = mine[fqn], yours[fqn]
        if _type_text(a) != _type_text(b):
            raise CombineError(f"{where}: variable {fqn}: type {_type_text(a)} here, {_type_text(b)} in {other}")
        dims_a, dims_b = _dimension_fqns(a), _dimension_fqns(b)
        if dims_a != dims_b:
            raise CombineError(
                f"{where}: variable {fqn}: dimensions ({', '.join(dims_a)}) here, ({', '.join(dims_b)}) in {other}"
            )
        _is_record(a, record_fqn, where)


def _combined_tree(references: list[SourceScan]) -> Dataset:
    """The first source's tree, with (merging) what later sources add; their attributes
    overwrite earlier ones, as ``ncks -A`` does."""
    tree: Dataset = _copy.deepcopy(references[0].dataset)
    for later in references[1:]:
        for group in later.dataset.walk():
            target = _ensure_group(tree, group)
            _merge_attributes(target, group)
            for dimension in group.dimensions:
                if target.find_dimension(dimension.name) is None:
                    target.add(_copy.deepcopy(dimension))
            for user_type in group.types:
                if target.find_type(user_type.name) is None:
                    target.add(_copy.deepcopy(user_type))
            for variable in group.variables:
                existing = target.find_variable(variable.name)
                if existing is None:
                    target.add(_copy.deepcopy(variable))
                else:
                    _merge_attributes(existing, variable)
    return tree


def _ensure_group(tree: Dataset, group: Group) -> Group:
    path: list[Group] = []
    node: Group | None = group
    while node is not None and node.group is not None:
        path.append(node)
        node = node.group
    target: Group = tree
    for step in reversed(path):
        found = target.find_group(step.name)
        target = found if found is not None else target.add_group(step.name)
    return target


def _merge_attributes(target: Group | Variable, source: Group | Variable) -> None:
    for attribute in source.attributes:
        existing = target.find_attribute(attribute.name)
        if existing is None:
            target.add_attribute(attribute.name, attribute.type, _copy.deepcopy(attribute.values))
        else:
            existing.type, existing.values = attribute.type, _copy.deepcopy(attribute.values)


def _plan(tree: Dataset, families: list[list[SourceScan]], record_fqn: str | None, record_length: int) -> CombinePlan:
    ordered = [scan for family in families for scan in family]
    index_of = {id(scan): i for i, scan in enumerate(ordered)}
    targets = _variables(tree)
    contributes: dict[int, list[str]] = {i: [] for i in range(len(ordered))}
    conversions: dict[int, dict[str, Conversion]] = {i: {} for i in range(len(ordered))}
    variables: dict[str, VariablePlan] = {}
    storage: dict[str, VariableStorage] = {}
    for fqn, target in targets.items():
        holders = [f for f in families if fqn in _variables(f[0].dataset)]
        record = _is_record(target, record_fqn, holders[0][0].location)
        # a record variable takes its values from every source of its family; a fixed one
        # from its last holder (ncks -A), the first source when concatenating
        chosen = holders[-1] if record else [holders[-1][0]]
        outcomes: set[str] = set()
        for scan in chosen:
            index = index_of[id(scan)]
            contributes[index].append(fqn)
            conversion = _conversion(scan, _variables(scan.dataset)[fqn], target, record_fqn)
            if conversion is not None:
                conversions[index][fqn] = conversion
                outcomes |= conversion.outcomes
        storage_of = chosen[0].storage.get(fqn)
        if storage_of is not None:
            storage[fqn] = storage_of
        variables[fqn] = VariablePlan(
            fqn, record, tuple(index_of[id(s)] for s in chosen), frozenset(outcomes) or frozenset({COPY})
        )
    sources = []
    for family in families:
        offset = 0
        for scan in family:
            index = index_of[id(scan)]
            length = _record_length(scan, record_fqn)
            sources.append(
                SourcePlan(scan.location, scan.identity, offset, length, tuple(contributes[index]), conversions[index])
            )
            offset += length
    data_model = "NETCDF4" if any(s.data_model == "NETCDF4" for s in ordered) else ordered[0].data_model
    return CombinePlan(tree, storage, data_model, record_fqn, record_length, tuple(sources), variables)


def _units(variable: Variable) -> str | None:
    found = variable.find_attribute("units")
    return found.values if found is not None and isinstance(found.values, str) else None


def _calendar(variable: Variable) -> str:
    found = variable.find_attribute("calendar")
    return found.values if found is not None and isinstance(found.values, str) else "standard"


def _rebase(source: Variable, target: Variable, location: str) -> tuple[float, float] | None:
    """(scale, offset) from the source's time units to the target's, None when equal."""
    units, wanted = _units(source), _units(target)
    if units is None or wanted is None or units == wanted or " since " not in units or " since " not in wanted:
        return None
    calendar = _calendar(target)
    try:
        zero = float(cftime.date2num(cftime.num2date(0, units, calendar), wanted, calendar))
        one = float(cftime.date2num(cftime.num2date(1, units, calendar), wanted, calendar))
    except (ValueError, TypeError) as error:
        raise CombineError(f"{location}: variable {source.fqn}: cannot rebase units {units!r} to {wanted!r}: {error}") from error
    return one - zero, zero


def _rebased_first(scan: SourceScan, first: SourceScan, record_fqn: str) -> float:
    name = record_fqn.rsplit("/", 1)[-1]
    dimension = _find_dimension(scan.dataset, record_fqn)
    reference_dimension = _find_dimension(first.dataset, record_fqn)
    assert dimension is not None and reference_dimension is not None and scan.first_time is not None
    mine, theirs = _coordinate(scan.dataset, dimension), _coordinate(first.dataset, reference_dimension)
    assert mine is not None and theirs is not None and mine.name == name
    rebase = _rebase(mine, theirs, scan.location)
    return scan.first_time if rebase is None else scan.first_time * rebase[0] + rebase[1]


def _packing(variable: Variable) -> tuple[float, float]:
    values = []
    for name, default in (("scale_factor", 1.0), ("add_offset", 0.0)):
        found = variable.find_attribute(name)
        given = found is not None and not isinstance(found.values, str) and found.values
        values.append(float(found.values[0]) if given and found is not None else default)
    return values[0], values[1]


def _effective_fill(variable: Variable) -> object:
    fill = fill_attribute(variable)
    if fill is not None:
        return fill
    assert isinstance(variable.type, AtomicType)
    return default_fill(value_dtype(variable.type))


def _conversion(scan: SourceScan, source: Variable, target: Variable, record_fqn: str | None) -> Conversion | None:
    """How the source's values of a variable become the target's; None: copied as they are."""
    if not isinstance(source.type, AtomicType) or source.type in (AtomicType.STRING, AtomicType.CHAR):
        return None
    rebase = None
    if record_fqn is not None and source.fqn == record_fqn:
        rebase = _rebase(source, target, scan.location)
    fill_in, fill_out = _effective_fill(source), _effective_fill(target)
    fill = None if _same(fill_in, fill_out) else (fill_in, fill_out)
    pack_in, pack_out = _packing(source), _packing(target)
    packing = None if pack_in == pack_out else (*pack_in, *pack_out)
    if packing is not None and fill is None:
        fill = (fill_in, fill_out)  # fill values stay fill values, never unpacked
    if rebase is None and fill is None and packing is None:
        return None
    return Conversion(scan.location, source.fqn, rebase, fill, packing)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


__all__ = [
    "COPY",
    "REBASE",
    "REFILL",
    "REPACK",
    "CombineOptions",
    "CombinePlan",
    "Conversion",
    "Piece",
    "SourcePlan",
    "SourceScan",
    "VariablePlan",
    "expand_sources",
    "identify",
    "plan_combine",
    "plan_scans",
    "scan_source",
]
