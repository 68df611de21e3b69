"""Multi-file datasets: netCDF4-python's ``MFDataset`` and ``MFTime`` over nczarr datasets.

A multi-file dataset opens every member read-only and joins the variables of the root group
whose first dimension is the aggregation dimension; everything else comes from the master
member. Data are read only from the members a selection covers.
"""

from __future__ import annotations

import datetime
import os
import posixpath
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import cftime
import numpy as np

from nczarr.api.attributes import AttributeValue, variables_by_attributes
from nczarr.errors import (
    ArgumentError,
    AttributeNotFoundError,
    DataTypeError,
    NameNotFoundError,
    SelectionError,
    StoreError,
)
from nczarr.formats.location import local_matches, parse_location
from nczarr.values.indexing import normalise

if TYPE_CHECKING:
    from nczarr.api.dataset import Group
    from nczarr.api.variable import Variable

__all__ = ["MFDataset", "MFTime"]


def _open_member(path: str | os.PathLike) -> Any:
    """Open one member read-only as an nczarr Dataset."""
    from nczarr.api.dataset import Dataset

    return Dataset(path)


def _file_list(files: str | Sequence[str | os.PathLike]) -> list:
    """The member list: ``files`` itself, or the sorted matches of a glob pattern."""
    files = _matches(files) if isinstance(files, str) else list(files)
    if not files:
        raise StoreError("no files specified (file list is empty)")
    return files


def _matches(pattern: str) -> list[str]:
    """The members a glob pattern names, sorted (see :func:`local_matches`). A remote netcdf-c
    URL (``s3://bucket/key#mode=nczarr``) is one member: object stores are not globbed."""
    found = local_matches(pattern)
    if found is None:
        if not parse_location(pattern).mode and pattern.startswith("http"):
            raise ArgumentError("cannot using file globbing for remote (OPeNDAP) datasets")
        return [pattern]
    return found


def _walk_groups(groups: dict) -> Iterator[Any]:
    """Every group in ``groups`` and below, parents first."""
    for group in groups.values():
        yield group
        yield from _walk_groups(group.groups)


def _unmask_if_clear(data: Any) -> Any:
    """A masked array with a fresh default fill value, or plain data when nothing is masked."""
    if np.ma.getmask(data) is not np.ma.nomask and np.ma.getmaskarray(data).any():
        return np.ma.masked_array(np.ma.getdata(data), mask=np.ma.getmaskarray(data))
    return np.ma.getdata(data)


class _Dimension:
    """The aggregation dimension of an MFDataset: always unlimited, as long as all members."""

    def __init__(self, name: str, lengths: list[int]) -> None:
        self._name = name
        self._lengths = lengths

    @property
    def name(self) -> str:
        return self._name

    @property
    def size(self) -> int:
        return len(self)

    def __len__(self) -> int:
        return sum(self._lengths)

    def isunlimited(self) -> bool:
        return True

    def __repr__(self) -> str:
        kind = f"\"<class 'netCDF4.{type(self).__name__}'>\""
        return f"{kind} (unlimited): name = '{self._name}', size = {len(self)}"


class _Variable:
    """A variable joined along its first dimension across the members of an MFDataset."""

    def __init__(self, dataset: MFDataset, name: str, master: Any, members: list, lengths: list[int]) -> None:
        self._dataset = dataset
        self._name = name
        self._master = master
        self._members = members
        self._lengths = lengths
        self._attributes = {key: master.getncattr(key) for key in master.ncattrs()}
        self.dimensions: tuple[str, ...] = tuple(master.dimensions)
        self.dtype = master.dtype

    def __getattr__(self, name: str) -> AttributeValue:
        attributes = self.__dict__.get("_attributes", {})
        if name in attributes:
            return attributes[name]
        raise AttributeNotFoundError(name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def shape(self) -> tuple[int, ...]:
        return (sum(self._lengths), *self._master.shape[1:])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return sum(self._lengths)

    def typecode(self) -> np.dtype:
        return self.dtype

    def ncattrs(self) -> list[str]:
        return list(self._attributes)

    def _set_on_members(self, method: str, value: bool) -> None:
        for var in self._members:
            getattr(var, method)(value)

    def set_auto_chartostring(self, value: bool) -> None:
        self._set_on_members("set_auto_chartostring", value)

    def set_auto_maskandscale(self, value: bool) -> None:
        self._set_on_members("set_auto_maskandscale", value)

    def set_auto_mask(self, value: bool) -> None:
        self._set_on_members("set_auto_mask", value)

    def set_auto_scale(self, value: bool) -> None:
        self._set_on_members("set_auto_scale", value)

    def set_always_mask(self, value: bool) -> None:
        self._set_on_members("set_always_mask", value)

    def __repr__(self) -> str:
        lines = [f"<class 'netCDF4.{type(self).__name__}'>", f"{self.dtype} {self._name}{self.dimensions}"]
        lines += [f"    {key}: {getattr(self, key)}" for key in self.ncattrs()]
        dimensions = self._dataset.dimensions
        unlimited = tuple(name for name in self.dimensions if dimensions[name].isunlimited())
        lines.append(f"unlimited dimensions = {unlimited!r}")
        lines.append(f"current size = {self.shape!r}")
        return "\n".join(lines)

    def __getitem__(self, key: Any) -> Any:
        """The selected records, read from the members the selection covers (netCDF4's
        indexing rules except negative steps; plain arrays when nothing is masked)."""
        norm = normalise(key, self.shape)
        if any(step < 0 for step in norm.stride):
            raise SelectionError("negative strides not allowed when slicing MFVariable Variable instance")
        first, rest = norm.elems[0], norm.elems[1:]
        starts = np.cumsum([0, *self._lengths])
        if type(first) is int:
            record = norm.start[0]  # the index counted from the start
            if record >= len(self):
                raise SelectionError("index exceeds dimension bounds")
            member = int(np.searchsorted(starts, record, side="right")) - 1
            data = self._members[member][(record - int(starts[member]), *rest)]
            if not isinstance(data, np.ndarray):
                return data
            data = _unmask_if_clear(data)
            return data[()] if data.ndim == 0 else data
        records = np.arange(*first.indices(len(self))) if isinstance(first, slice) else np.asarray(first)
        if not len(records):
            # an empty read of the first member gives the trailing shape and the dtype
            return _unmask_if_clear(self._members[0][(slice(0, 0), *rest)])
        owners = np.searchsorted(starts, records, side="right") - 1
        runs = np.split(np.arange(len(records)), np.flatnonzero(np.diff(owners)) + 1)
        parts = []
        for run in runs:
            member = owners[run[0]]
            parts.append(self._members[member][(records[run] - starts[member], *rest)])
        masked = any(np.ma.getmask(part) is not np.ma.nomask for part in parts)
        return _unmask_if_clear(np.ma.concatenate(parts) if masked else np.concatenate(parts))


class MFDataset:
    """Several datasets read as one: the variables of their root groups whose first dimension
    is ``aggdim`` (default: the master's unlimited dimension) are joined along it."""

    # How a member is opened; tests may replace it with another netCDF4-like opener.
    _open: Callable[[Any], Any] = staticmethod(_open_member)

    def __init__(
        self,
        files: str | Sequence[str | os.PathLike],
        check: bool = False,
        aggdim: str | None = None,
        exclude: Sequence[str] = (),
        master_file: str | os.PathLike | None = None,
    ) -> None:
        files = _file_list(files)
        if master_file is not None and master_file not in files:
            raise ArgumentError("master_file not in files list")
        master_name = files[0] if master_file is None else master_file
        self._files = files
        self._opened: list = []  # each member once, in opening order
        try:
            self._aggregate(master_name, check, aggdim, exclude)
        except BaseException:
            self.close()
            raise
        self.data_model = [member.data_model for member in self._members]
        self.file_format = [member.file_format for member in self._members]
        self.disk_format = [member.disk_format for member in self._members]
        self.path = "/"

    def _aggregate(self, master_name: Any, check: bool, aggdim: str | None, exclude: Sequence[str]) -> None:
        master = self._open(master_name)
        self._opened.append(master)
        aggname = None
        for name, dim in master.dimensions.items():
            # like netCDF4, the last unlimited dimension wins
            if (aggdim is None and dim.isunlimited()) or name == aggdim:
                aggname = name
        if aggname is None:
            raise StoreError(f"master dataset {master_name} does not have a aggregation dimension")
        joined = [
            name
            for name, var in master.variables.items()
            if name not in exclude and tuple(var.dimensions[:1]) == (aggname,)
        ]
        if not joined:
            raise StoreError(f"master dataset {master_name} does not have any variables to aggregate")

        members = []
        records: dict[str, list] = {name: [] for name in joined}
        lengths: list[int] = []
        for path in self._files:
            if path == master_name:
                member = master
            else:
                member = self._open(path)
                self._opened.append(member)
            for name in joined:
                if check:
                    _check_member(name, master.variables[name], master_name, member, path)
                if name not in member.variables:
                    raise NameNotFoundError(name)
                records[name].append(member.variables[name])
            members.append(member)
            lengths.append(len(member.dimensions[aggname]))
        self._members = members
        self._master = master
        self._attributes = {key: master.getncattr(key) for key in master.ncattrs()}
        self.groups = master.groups
        self.dimensions = {
            name: _Dimension(name, lengths) if name == aggname else dim
            for name, dim in master.dimensions.items()
        }
        self.variables: dict[str, Variable | _Variable] = {
            name: _Variable(self, name, var, records[name], lengths) if name in records else var
            for name, var in master.variables.items()
        }

    def __getattr__(self, name: str) -> AttributeValue:
        if name.startswith("__"):
            raise AttributeNotFoundError(name)
        attributes = self.__dict__.get("_attributes", {})
        if name in attributes:
            return attributes[name]
        raise AttributeNotFoundError("NetCDF: Attribute not found")

    def ncattrs(self) -> list[str]:
        """The names of the master's global attributes."""
        return list(self._attributes)

    def __getitem__(self, path: str) -> Group | Variable | _Variable:
        """The group or variable at ``path``."""
        folder, last = posixpath.split(posixpath.normpath(path))
        group: Any = self
        for name in folder.split("/"):
            if name:
                if name not in group.groups:
                    raise NameNotFoundError(name)
                group = group.groups[name]
        if last in group.groups:
            return group.groups[last]
        if last in group.variables:
            return group.variables[last]
        raise SelectionError(f"{last} not found in {group.path}")

    def get_variables_by_attributes(self, **kwargs: object) -> list[Variable | _Variable]:
        """The root variables whose attributes satisfy every ``name=value`` or
        ``name=callable`` condition (the callable gets the value or None)."""

        return variables_by_attributes(self.variables.values(), kwargs)

    def _set_on_variables(self, method: str, value: bool) -> None:
        for var in self.variables.values():
            getattr(var, method)(value)
        for group in _walk_groups(self.groups):
            for var in group.variables.values():
                getattr(var, method)(value)

    def set_auto_chartostring(self, value: bool) -> None:
        self._set_on_variables("set_auto_chartostring", value)

    def set_auto_maskandscale(self, value: bool) -> None:
        self._set_on_variables("set_auto_maskandscale", value)

    def set_auto_mask(self, value: bool) -> None:
        self._set_on_variables("set_auto_mask", value)

    def set_auto_scale(self, value: bool) -> None:
        self._set_on_variables("set_auto_scale", value)

    def set_always_mask(self, value: bool) -> None:
        self._set_on_variables("set_always_mask", value)

    def close(self) -> None:
        """Close every member."""
        for member in self._opened:
            member.close()

    def isopen(self) -> bool:
        """True while every member is open."""
        return all(member.isopen() for member in self._opened)

    def __enter__(self) -> MFDataset:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator:
        raise DataTypeError("Dataset is not iterable. Consider iterating on Dataset.variables.")

    def __contains__(self, key: object) -> bool:
        raise DataTypeError(
            "Dataset does not support membership operations. Perhaps try 'varname in dataset.variables' "
            "or 'dimname in dataset.dimensions'."
        )

    def __reduce__(self) -> NoReturn:
        raise NotImplementedError("MFDataset is not picklable")

    def __repr__(self) -> str:
        lines = [
            f"<class 'netCDF4.{type(self).__name__}'>",
            f"root group ({self.data_model[0]} data model, file format {self.disk_format[0]}):",
        ]
        lines += [f"    {key}: {value}" for key, value in self._attributes.items()]
        lines.append(f"    dimensions = {tuple(self.dimensions)}")
        lines.append(f"    variables = {tuple(self.variables)}")
        lines.append("    groups = ()")
        return "\n".join(lines)


def _check_member(name: str, master_var: Any, master_name: Any, member: Any, path: Any) -> None:
    """Raise unless ``member`` defines ``name`` like the master does (check=True)."""
    if name not in member.variables:
        raise StoreError(f"aggregation variable {name} not defined in {path}")
    var = member.variables[name]
    master_dims, dims = tuple(master_var.dimensions), tuple(var.dimensions)
    if master_dims != dims:
        raise StoreError(
            f"variable {name} : dimensions mismatch between master {master_name} ({master_dims}) "
            f"and extension {path} ({dims})"
        )
    if len(master_var.shape) != len(var.shape):
        raise StoreError(
            f"variable {name} : rank mismatch between master {master_name} ({len(master_var.shape)}) "
            f"and extension {path} ({len(var.shape)})"
        )
    if tuple(master_var.shape[1:]) != tuple(var.shape[1:]):
        raise StoreError(
            f"variable {name} : shape mismatch between master {master_name} ({master_var.shape}) "
            f"and extension {path} ({var.shape})"
        )
    if master_var.dtype != var.dtype:
        raise StoreError(
            f"variable {name} : data type mismatch between master {master_name} ({master_var.dtype}) "
            f"and extension {path} ({var.dtype})"
        )


class MFTime(_Variable):
    """An MFDataset time variable whose values are converted to one ``units`` (default: the
    master's) and ``calendar`` (default: the one calendar all members declare)."""

    def __init__(self, time: _Variable, units: str | None = None, calendar: str | None = None) -> None:
        super().__init__(time._dataset, time.name, time._master, time._members, time._lengths)
        if calendar is None:
            if not all(hasattr(var, "calendar") for var in self._members):
                raise ArgumentError(
                    "MFTime requires that the time variable in all files have a calendar attribute "
                    "if no default calendar is provided."
                )
            calendars = {var.calendar for var in self._members}
            if len(calendars) > 1:
                raise ArgumentError(
                    "MFTime requires that the same time calendar is used by all files if no default "
                    "calendar is provided."
                )
            (calendar,) = calendars
        self.calendar = calendar
        self.units = units or time.units
        # per record: the value of a common reference date in these units minus in the member's
        reference = datetime.datetime(1900, 1, 1)
        target = cftime.date2num(reference, self.units, self.calendar)
        self._delta = np.concatenate(
            [
                np.full(n, target - cftime.date2num(reference, var.units, self.calendar), dtype=time.dtype)
                for var, n in zip(self._members, self._lengths, strict=True)
            ]
        )

    def __getitem__(self, key: object) -> np.ndarray | np.generic:
        return super().__getitem__(key) + self._delta[key]  # type: ignore[call-overload]
