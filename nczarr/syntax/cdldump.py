"""CDL out: the text ``ncdump`` (netcdf-c 4.9.0) prints for a dataset, byte for byte.

:func:`dump` walks a :class:`~nczarr.values.source.DatasetSource` (its model tree for the
header, its raw netCDF values for the data, read a slab at a time) and yields the lines ncdump
would print for a netCDF-4 file holding the same tree and values; :func:`kind_text` is
``ncdump -k``. Only the source is read: no handle of the caller changes.

The virtual attributes of ``-s`` describe the storage in netCDF-4's terms: a Zarr variable
with dimensions is always ``"chunked"`` (Zarr has no contiguous layout), a scalar is
``"contiguous"``; ``_Fletcher32``, ``_Shuffle`` and ``_DeflateLevel`` come first, in this
order, the other filters in ``_Filter`` with their HDF5 filter ids (zstd 32015, bzip2 307,
blosc 32001); with ``-F`` every filter is in ``_Filter``: an HDF5 file's with fletcher32 and
shuffle first (netcdf-c orders HDF5's pipeline so), a Zarr store's in its codec chain's order.
A Zarr store's filtered variable also shows the codecs themselves in ``_Codecs``, with or
without ``-F`` (as netcdf-c 4.10.1 shows NCZarr stores).
``_NCProperties`` and ``_SuperblockVersion`` are a netCDF-4 file's own; a store's
``_NCProperties`` names nczarr. ``_IsNetcdf4`` is 0 for the classic model and, as netcdf-c
decides it, for an HDF5 file with too few of netCDF-4's marks.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from nczarr.errors import DumpError
from nczarr.formats.dialect import dumps
from nczarr.formats.keys import NCZARR_NCPROPERTIES
from nczarr.formats.session import Session
from nczarr.model import (
    AtomicType,
    Attribute,
    CompoundType,
    Dimension,
    EnumType,
    Group,
    OpaqueType,
    TypeRef,
    UserType,
    Variable,
    VlenType,
)
from nczarr.model.resolve import ANONYMOUS_PREFIX, Resolver, anonymous_dimensions, shortest_reference
from nczarr.syntax.cdldump_ncml import ncml_lines
from nczarr.syntax.cdldump_times import TimeAxis, time_axes
from nczarr.syntax.cdlnumbers import Layout, c_printf, joined_values, lay_out
from nczarr.values.blocks import plan_blocks
from nczarr.values.source import DatasetSource
from nczarr.values.storage import (
    BLOSC_CNAMES,
    BLOSC_CODES,
    HDF5_BLOSC,
    HDF5_BZIP2,
    HDF5_DEFLATE,
    HDF5_FILTER_OF,
    HDF5_FLETCHER32,
    HDF5_SHUFFLE,
    HDF5_ZSTD,
    VariableStorage,
)
from nczarr.values.stored import plain_value
from nczarr.values.types import DEFAULT_FILL
from nczarr.zarr.codecs.compress import BLOSC_SHUFFLES

__all__ = ["DumpOptions", "dataset_name", "dump", "escape_name", "kind_text"]


@dataclass(frozen=True)
class DumpOptions:
    """ncdump's options: ``-h -c -v -g -s -F -k -t -i -n -p -d -l -x -b -f``.

    ``brief`` / ``full`` are ``-b`` / ``-f``: index comments in the data, with
    ``index_language`` ``"c"`` (0-based, last index fastest) or ``"f"`` (Fortran: 1-based,
    first index fastest); ncdump keeps one language for both. ``groups`` (``-g``): only
    these groups print data (names, or paths from the root). ``filters`` (``-F``): with
    ``special``, every filter as ``_Filter`` (and ``_Codecs``) instead of ``_Fletcher32``,
    ``_Shuffle`` and ``_DeflateLevel``. ``c_format_wins`` (``-d`` rather than ``-p``): a
    variable's ``C_format`` attribute still decides how its data prints."""

    header_only: bool = False
    coordinates: bool = False
    variables: tuple[str, ...] | None = None
    special: bool = False
    kind: bool = False
    times: str | None = None  # "t": -t, "i": -i (ISO 8601 "T" separator)
    name: str | None = None
    precision: tuple[int | None, int | None] | None = None
    line_length: int = 80
    ncml: bool = False
    brief: bool = False
    full: bool = False
    index_language: str = "c"
    groups: tuple[str, ...] | None = None
    filters: bool = False
    c_format_wins: bool = False


_KINDS = {
    "NETCDF4": "netCDF-4",
    "NETCDF4_CLASSIC": "netCDF-4 classic model",
    "NETCDF3_CLASSIC": "classic",
    "NETCDF3_64BIT_OFFSET": "64-bit offset",
    "NETCDF3_64BIT_DATA": "cdf5",
}

_ATTR_SUFFIX = {
    AtomicType.BYTE: "b",
    AtomicType.SHORT: "s",
    AtomicType.UBYTE: "UB",
    AtomicType.USHORT: "US",
    AtomicType.UINT: "U",
    AtomicType.INT64: "LL",
    AtomicType.UINT64: "ULL",
}

_TIME_SEPARATORS = {"t": " ", "i": "T"}
_KEYWORDS = frozenset({"variables", "dimensions", "data", "group", "types"})
_NAME_ESCAPES = re.compile(r"""[ !"#$&'()*,:;<=>?\[\]\\^`{|}~]""")
_DIGITS = frozenset("0123456789")
_SLAB_VALUES = 1 << 18  # values read and formatted at a time


# -- text -----------------------------------------------------------------------------------
def escape_name(name: str) -> str:
    """A name as ncdump prints it: special characters and a leading digit backslashed."""
    text = _NAME_ESCAPES.sub(r"\\\g<0>", name)
    return "\\" + text if text[:1] in _DIGITS else text


def _byte_table(char_data: bool) -> list[str]:
    table = []
    for b in range(256):
        c = chr(b)
        if c in "\b\f\n\r\t\v":
            text = "\\" + "bfnrtv"["\b\f\n\r\t\v".index(c)]
        elif c in "\\'\"":
            text = "\\" + c
        elif b < 0x20 or b == 0x7F or (char_data and b >= 0x80):
            text = f"\\{b:03o}"
        else:
            text = c  # bytes >= 0x80 stay raw: _escape decodes them as UTF-8
        table.append(text)
    return table


_TEXT_TABLE = _byte_table(False)
_STRING_DATA_TABLE = list(_TEXT_TABLE)
_STRING_DATA_TABLE[0x0B] = "\\n"  # ncdump prints \v in string data as \n
_CHAR_TABLE = _byte_table(True)


def _escape(data: bytes, table: list[str]) -> str:
    """``data`` escaped with ``table``; bytes >= 0x80 left raw come back as UTF-8 text."""
    text = "".join([table[b] for b in data])
    if any(b >= 0x80 for b in data) and table is not _CHAR_TABLE:
        return text.encode("latin-1").decode("utf-8", "surrogateescape")
    return text


def _quoted(data: bytes, table: list[str]) -> str:
    """Text in double quotes, trailing NULs dropped."""
    return '"' + _escape(data.rstrip(b"\0"), table) + '"'


def _to_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogateescape")


def _trim(text: str) -> str:
    """ncdump's ``tztrim``: trailing zeros of the mantissa dropped, the point kept."""
    mantissa, e, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0")
    return mantissa + e + exponent


def _special_float(x: float, suffix: str) -> str | None:
    if math.isnan(x):
        return "NaN" + suffix
    if math.isinf(x):
        return ("Infinity" if x > 0 else "-Infinity") + suffix
    return None


# -- the writer with ncdump's single column counter ---------------------------------------
class _Writer:
    """Output buffer and the wrapping printer (ncdump's ``lput``)."""

    def __init__(self, line_length: int) -> None:
        self.parts: list[str] = []
        self.col = 0
        self.max = line_length - 2
        self.indent = 0

    def raw(self, text: str) -> None:
        self.parts.append(text)

    def put(self, text: str) -> None:
        n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))
        if n + self.col > self.max and n > 2:
            self.parts.append("\n" + " " * (self.indent + 4))
            self.col = self.indent + 4
        self.parts.append(text)
        self.col += n
        if text.endswith("\n"):
            self.col = self.indent

    def put_row(self, values: list[str], last: str) -> None:
        """Every value but the last as ``"v, "``, the last as ``v + last``."""
        parts = self.parts
        col, limit, wrap = self.col, self.max, "\n" + " " * (self.indent + 4)
        for value in values[:-1]:
            n = (len(value) if value.isascii() else len(value.encode("utf-8", "surrogateescape"))) + 2
            if n + col > limit:
                parts.append(wrap)
                col = self.indent + 4
            parts.append(value + ", ")
            col += n
        self.col = col
        self.put(values[-1] + last)

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts.clear()
        return text


# -- formats ---------------------------------------------------------------------------------
@dataclass
class _Formats:
    float_attr: str = "%#.7g"
    double_attr: str = "%#.15g"
    float_data: str = "%.7g"
    double_data: str = "%.15g"

    @classmethod
    def of(cls, precision: tuple[int | None, int | None] | None) -> _Formats:
        formats = cls()
        if precision is not None:
            fdig, ddig = precision
            if fdig is not None:
                formats.float_attr, formats.float_data = f"%#.{fdig}g", f"%.{fdig}g"
            if ddig is not None:
                formats.double_attr, formats.double_data = f"%#.{ddig}g", f"%.{ddig}g"
        return formats


def _time_comment(texts: list[str], lead: str, line_length: int) -> str:
    """``ncdump -t``'s comment of an attribute's times: on the attribute's line for one or
    two values, else on lines of their own, each at most ``line_length`` columns wide with
    its ``<lead>  // `` counted as 21 (tabs as 8), as ncdump wraps them."""
    if len(texts) <= 2:
        return " // " + ", ".join(texts)
    items = [f"{text}," for text in texts[:-1]] + texts[-1:]
    room = line_length - 21
    lines: list[str] = []
    current = ""
    for item in items:
        if current and len(current) + 1 + len(item) > room:
            lines.append(current)
            current = item
        else:
            current = f"{current} {item}" if current else item
    lines.append(current)
    return "".join(f"\n{lead}  // {line}" for line in lines)


class _Dumper:
    def __init__(self, source: DatasetSource, options: DumpOptions, name: str) -> None:
        self.source = source
        self.data_model = source.data_model
        self.opts = options
        self.name = name
        self.tree = source.dataset
        self.resolver = Resolver()
        # an anonymous dimension (an int reference) shows as netcdf-c's root dimension
        # _Anonymous_Dim_<n> (unless the root has a dimension of that name already)
        self.anonymous = {
            d.size: d for d in anonymous_dimensions(self.tree) if self.tree.find_dimension(d.name) is None
        }
        self.formats = _Formats.of(options.precision)
        self.out = _Writer(options.line_length)
        self.classic = source.data_model != "NETCDF4"
        #: a netCDF-3 or HDF5 file, not a Zarr store
        self._file = not isinstance(source, Session)
        self.time_separator = _TIME_SEPARATORS[options.times] if options.times else None
        self.axes: dict[int, TimeAxis] = {}
        self.selected = self._selected_variables()
        self.wanted_groups = self._selected_groups()

    # -- selection -----------------------------------------------------------------------
    def _selected_variables(self) -> set[int] | None:
        if self.opts.variables is None:
            return None
        chosen: set[int] = set()
        for name in self.opts.variables:
            found = [v for g in self.tree.walk() for v in g.variables if _names_variable(name, v, g)]
            if not found:
                raise DumpError(f"{name}: No such variable")
            chosen.update(id(v) for v in found)
        return chosen

    def _selected_groups(self) -> set[int] | None:
        """ncdump's ``-g``: "" or "/" is the root, a path from the root names one group, a
        plain name every group of that name."""
        if self.opts.groups is None:
            return None
        if self.data_model != "NETCDF4":
            raise DumpError("-g: groups are selected in netCDF-4 files only")
        chosen: set[int] = set()
        for name in self.opts.groups:
            found: list[Group]
            if name in ("", "/"):
                found = [self.tree]
            elif name.startswith("/"):
                found = [g for g in self.tree.walk() if g.fqn == name]
            else:
                found = [g for g in self.tree.walk() if g.parent is not None and g.name == name]
            if not found:
                raise DumpError(f"{name}: No such group")
            chosen.update(id(g) for g in found)
        return chosen

    def _group_wanted(self, group: Group) -> bool:
        return self.wanted_groups is None or id(group) in self.wanted_groups

    def _wants_data(self, variable: Variable, group: Group) -> bool:
        if self.opts.header_only or not self._group_wanted(group):
            return False
        if self.selected is not None and id(variable) not in self.selected:
            return False
        return not self.opts.coordinates or self._is_coordinate(variable, group)

    def _is_coordinate(self, variable: Variable, group: Group) -> bool:
        scope: Group | None = group
        while scope is not None:
            if scope.find_dimension(variable.name) is not None:
                return True
            scope = scope.parent  # type: ignore[assignment]
        return False

    # -- names and references --------------------------------------------------------------
    def _type_name(self, ref: Any, scope: Group) -> str:
        """ncdump's rule (``print_type_name``): the plain name of a type defined in ``scope``
        or an ancestor, even one a nearer type of the name hides; else the FQN."""
        if isinstance(ref, AtomicType):
            return ref.value
        node = self._user_type(ref, scope)
        if _is_ancestor(node.group, scope):
            return escape_name(node.name)
        return _fqn(node)

    def _user_type(self, ref: str, scope: Group) -> UserType:
        node = self.resolver.type(scope, ref)
        if node is None:
            raise DumpError(f"type {ref!r} not found from {scope.fqn}")
        return node

    def _dim(self, ref: Any, scope: Group) -> Dimension:
        if isinstance(ref, int):  # anonymous: the root's own dimension of the name, when it has one
            anonymous = self.anonymous.get(ref)
            if anonymous is not None:
                return anonymous
            ref = f"/{ANONYMOUS_PREFIX}{ref}"
        node = self.resolver.dimension(scope, ref)
        if node is None:
            raise DumpError(f"dimension {ref!r} not found from {scope.fqn}")
        return node

    def _dim_name(self, node: Dimension, scope: Group) -> str:
        if node.parent is None:  # anonymous: a root dimension, hidden by a nearer one of its name
            plain = self.resolver.dimension(scope, node.name) is None
            return escape_name(node.name) if plain else "/" + escape_name(node.name)
        plain = shortest_reference(node, scope, self.resolver) == node.name
        return escape_name(node.name) if plain else _fqn(node)

    # -- the whole text -----------------------------------------------------------------------
    def ncml(self, location: str) -> Iterator[str]:
        def dimension_names(variable: Variable, group: Group) -> list[str]:
            return [self._dim(ref, group).name for ref in variable.dimensions]

        return ncml_lines(self.tree, location, dimension_names, self._wants_data, self._ncml_number)

    def _ncml_number(self, type_: AtomicType, value: object) -> str:
        if type_ is AtomicType.FLOAT:
            return _trim(self.formats.float_attr % value)
        if type_ is AtomicType.DOUBLE:
            return _trim(self.formats.double_attr % value)
        return str(value)

    def run(self) -> Iterator[str]:
        self.out.raw(f"netcdf {escape_name(self.name)} {{\n")
        yield from self._group(self.tree, 0)
        self.out.raw("}\n")
        yield self.out.take()

    def _group(self, group: Group, level: int) -> Iterator[str]:
        out = self.out
        ind = " " * (2 * level)
        out.indent = 2 * level
        if group.types:
            out.raw(f"{ind}types:\n")
            for node in group.types:
                self._type_decl(node, group, ind)
        dimensions = [*group.dimensions, *(self.anonymous.values() if group is self.tree else ())]
        if dimensions:
            out.raw(f"{ind}dimensions:\n")
            for dim in dimensions:
                size = f"UNLIMITED ; // ({dim.size} currently)" if dim.unlimited else f"{dim.size} ;"
                out.raw(f"{ind}\t{escape_name(dim.name)} = {size}\n")
        if self.time_separator is not None:
            self.axes.update(time_axes(group, self.time_separator))
        if group.variables:
            out.raw(f"{ind}variables:\n")
            for variable in group.variables:
                self._variable_header(variable, group, ind)
        is_root = group.parent is None
        if group.attributes or self.opts.special:
            out.raw(f"\n{ind}// {'global' if is_root else 'group'} attributes:\n")
            for attribute in group.attributes:
                self._attribute(attribute, "", group, ind)
            if self.opts.special and is_root:
                self._global_specials(ind)
        yield out.take()
        if group.variables and not self.opts.header_only and self._group_wanted(group):
            out.raw(f"{ind}data:\n")
            for variable in group.variables:
                if self._wants_data(variable, group):
                    yield from self._data(variable, group, ind)
        for child in group.groups:
            out.raw(f"\n{ind}group: {escape_name(child.name)} {{\n")
            yield from self._group(child, level + 1)
            out.indent = 2 * level
            out.raw(f"{ind}  }} // group {escape_name(child.name)}\n")
        yield out.take()

    def _type_decl(self, node: UserType, group: Group, ind: str) -> None:
        out = self.out
        name = escape_name(node.name)
        pad = ind + "  "
        if isinstance(node, EnumType):
            base = self._type_name(node.base, group)
            saved = out.indent
            out.indent += 2
            out.raw(pad)
            out.put(f"{base} enum {name} {{")
            members = node.members
            for i, member in enumerate(members):
                text = f"{escape_name(member.name)} = {_signed(member.value)}"
                out.put(text + ("} ;\n" if i == len(members) - 1 else ", "))
            out.indent = saved
        elif isinstance(node, OpaqueType):
            out.raw(f"{pad}opaque({node.size}) {name} ;\n")
        elif isinstance(node, VlenType):
            out.raw(f"{pad}{self._type_name(node.base, group)}(*) {name} ;\n")
        elif isinstance(node, CompoundType):
            out.raw(f"{pad}compound {name} {{\n")
            for field in node.fields:
                shape = f"({', '.join(map(str, field.shape))})" if field.shape else ""
                out.raw(f"{pad}  {self._type_name(field.type, group)} {escape_name(field.name)}{shape} ;\n")
            out.raw(f"{pad}}}; // {name}\n")

    def _variable_header(self, variable: Variable, group: Group, ind: str) -> None:
        dims = [self._dim_name(self._dim(ref, group), group) for ref in variable.dimensions]
        shape = f"({', '.join(dims)})" if dims else ""
        name = escape_name(variable.name)
        self.out.raw(f"{ind}\t{self._type_name(variable.type, group)} {name}{shape} ;\n")
        owner = name + " " if variable.name in _KEYWORDS else name
        axis = self.axes.get(id(variable))
        for attribute in variable.attributes:
            if attribute.name == "_FillValue" and attribute.type != variable.type and not self._file:
                # netcdf-c reads a Zarr store's fill value in the variable's type (a file's as stored)
                attribute = Attribute(attribute.name, variable.type, attribute.values)
            self._attribute(attribute, owner, group, ind, axis)
        if self.opts.special:
            self._variable_specials(variable, group, name, ind)  # no keyword space here, as ncdump

    # -- attributes -----------------------------------------------------------------------
    def _attribute(self, attribute: Attribute, owner: str, group: Group, ind: str, axis: TimeAxis | None = None) -> None:
        out = self.out
        type_ = attribute.type
        lead = f"{ind}\t\t"
        label = f"{owner}:{escape_name(attribute.name)}"
        values = attribute.values
        if not isinstance(type_, AtomicType):
            node = self._user_type(type_, group)
            out.raw(f"{lead}{self._type_name(type_, group)} {label} = ")
            texts = [self._value_text(node, v, group) for v in values]
            if isinstance(node, OpaqueType | EnumType):  # ncdump prints these past its column counter
                out.raw(", ".join(texts))
            elif texts:
                out.put_row(texts, "")
            out.raw(" ;\n")
            return
        prefix = "string " if type_ is AtomicType.STRING else ""
        comment = ""
        if axis is not None and type_ is not AtomicType.STRING and values and not isinstance(values, str):
            comment = _time_comment(axis.texts(values), lead, self.opts.line_length)
        out.raw(f"{lead}{prefix}{label} = {self._attribute_values(type_, values)} ;{comment}\n")

    def _attribute_values(self, type_: AtomicType, values: Any) -> str:
        if type_ is AtomicType.CHAR or len(values) == 0:
            if type_ is not AtomicType.CHAR:
                return '""'
            data = _to_bytes(values).rstrip(b"\0")
            # a classic file's text breaks its line after each newline (not after a backslash and n)
            lines = data.split(b"\n") if self.classic else [data]
            return '"' + '\\n",\n\t\t\t"'.join(_escape(line, _TEXT_TABLE) for line in lines) + '"'
        if type_ is AtomicType.STRING:
            return ", ".join("NIL" if v is None else f'"{_escape(_to_bytes(v), _TEXT_TABLE)}"' for v in values)
        if type_ is AtomicType.FLOAT:
            # the float32 itself, as C widens it (the model's shortest decimal may round otherwise)
            return ", ".join(
                _special_float(v, "f") or _trim(self.formats.float_attr % float(np.float32(v))) + "f" for v in values
            )
        if type_ is AtomicType.DOUBLE:
            return ", ".join(_special_float(v, "") or _trim(self.formats.double_attr % v) for v in values)
        suffix = _ATTR_SUFFIX.get(type_, "")
        return ", ".join(f"{int(v)}{suffix}" for v in values)

    # -- values of user types (attributes, data) -------------------------------------------------
    def _value_text(self, node: Any, value: Any, group: Group) -> str:
        """One value of a type, as ncdump prints it in data."""
        if isinstance(node, str):
            node = self._user_type(node, group)
        if isinstance(node, AtomicType):
            return _atomic_data_text(node, value, self.formats)
        if isinstance(node, EnumType):
            return self._enum_name(node, int(value))
        if isinstance(node, OpaqueType):
            data = bytes(value) if not isinstance(value, np.ndarray) else value.tobytes()
            return "0X" + data.hex().upper()
        if isinstance(node, VlenType):
            base = self._member_type(node, node.base)
            return "{" + ", ".join(self._value_text(base, v, group) for v in value) + "}"
        assert isinstance(node, CompoundType)
        texts = []
        for i, field in enumerate(node.fields):
            item = value[field.name] if isinstance(value, np.void) else value[i]
            ftype = self._member_type(node, field.type)
            texts.append(self._field_text(ftype, field.shape, item, group))
        return "{" + ", ".join(texts) + "}"

    def _field_text(self, ftype: Any, shape: tuple[int, ...], item: Any, group: Group) -> str:
        if ftype is AtomicType.CHAR:
            flat = _char_bytes(item)
            if not shape:
                return _quoted(flat[:1], _TEXT_TABLE)
            width = shape[-1]
            rows = [flat[i : i + width] for i in range(0, len(flat), width)]
            return "{" + ", ".join(_quoted(r, _TEXT_TABLE) for r in rows) + "}"
        if not shape:
            return self._value_text(ftype, item, group)
        items = np.asarray(item).reshape(-1) if not isinstance(item, list) else _flatten(item)
        return "{" + ", ".join(self._value_text(ftype, v, group) for v in items) + "}"

    def _enum_name(self, node: EnumType, value: int) -> str:
        for member in node.members:
            if member.value == value:
                return escape_name(member.name)
        raise DumpError(f"NetCDF: Invalid argument (value {value} is not a member of enum {node.name})")

    # -- specials (-s) ---------------------------------------------------------------------
    def _variable_specials(self, variable: Variable, group: Group, owner: str, ind: str) -> None:
        if self.data_model.startswith("NETCDF3"):
            return
        storage = self.source.storage.get(variable.fqn, VariableStorage())
        type_ = self._resolved(variable.type, group)
        lines: list[tuple[str, str]] = []
        # Zarr has no contiguous layout: a file's variable without chunks is contiguous
        chunks = storage.chunks if variable.dimensions else None
        if variable.fqn in getattr(self.source, "compact", ()):  # an HDF5 file's compact layout
            lines.append(("_Storage", '"compact"'))
        elif not chunks:
            lines.append(("_Storage", '"contiguous"'))
        else:
            lines.append(("_Storage", '"chunked"'))
            lines.append(("_ChunkSizes", ", ".join(map(str, chunks))))
        chain = _filter_chain(storage, chunks, _type_size(type_))
        lines.extend(_filter_lines(chain) if self.opts.filters else _named_filter_lines(chain))
        lines.extend(_codecs_line(storage))
        if _type_size(type_) > 1:
            lines.append(("_Endianness", f'"{_byte_order(storage)}"'))
        if not storage.fill:
            lines.append(("_NoFill", '"true"'))
        for key, text in lines:
            self.out.raw(f"{ind}\t\t{owner}:{key} = {text} ;\n")

    def _global_specials(self, ind: str) -> None:
        out = self.out
        model = self.data_model
        if model.startswith("NETCDF3"):
            out.raw(f'{ind}\t\t:_Format = "{_KINDS[model]}" ;\n')
            return
        # a netCDF-4 file says what it holds; a Zarr store is taken for one nczarr wrote
        properties = getattr(self.source, "properties", NCZARR_NCPROPERTIES)
        if properties is not None:
            out.raw(f'{ind}\t\t:_NCProperties = "{properties}" ;\n')
        out.raw(f"{ind}\t\t:_SuperblockVersion = {getattr(self.source, 'superblock_version', 2)} ;\n")
        out.raw(f"{ind}\t\t:_IsNetcdf4 = {1 if self._looks_netcdf4() else 0} ;\n")
        out.raw(f'{ind}\t\t:_Format = "{_KINDS[model]}" ;\n')

    def _looks_netcdf4(self) -> bool:
        """netcdf-c's ``_IsNetcdf4``: not the classic model, and, in an HDF5 file, the marks
        netCDF-4 leaves (the reader counts them as netcdf-c does)."""
        if self.data_model != "NETCDF4":
            return False
        return bool(getattr(self.source, "netcdf4_marks", True))

    def _resolved(self, ref: TypeRef, group: Group) -> AtomicType | UserType:
        return ref if isinstance(ref, AtomicType) else self._user_type(ref, group)

    def _member_type(self, owner: UserType, ref: TypeRef) -> AtomicType | UserType:
        """The type of a field or of a vlen's elements, seen from the group of ``owner``."""
        if owner.group is None:
            raise DumpError(f"type {owner.name!r} belongs to no group")
        return self._resolved(ref, owner.group)

    # -- data ---------------------------------------------------------------------------------
    def _data(self, variable: Variable, group: Group, ind: str) -> Iterator[str]:
        dimensions = [self._dim(ref, group) for ref in variable.dimensions]
        shape = tuple(d.size for d in dimensions)
        if any(n == 0 for n in shape):
            return
        out = self.out
        name = escape_name(variable.name)
        type_ = self._resolved(variable.type, group)
        rank = len(shape)
        if rank <= 1:
            out.raw(f"\n{ind} {name} = ")
            out.col = len(variable.name.encode("utf-8")) + 4 + out.indent
        else:
            out.raw(f"\n{ind} {name} =\n  ")
            out.col = 2 + out.indent
        is_char = type_ is AtomicType.CHAR
        braces = _braces(shape, [d.unlimited for d in dimensions])
        notes = _Annotations(name, shape, self.opts.index_language, ind)
        rows = _row_count(shape)
        if (
            isinstance(type_, AtomicType)
            and braces is None
            and not (self.opts.brief or self.opts.full)
            and self._plain_numbers(variable, type_)
        ):
            yield from self._number_data(variable, type_, shape)
            return
        chunks = self._char_rows(variable, shape) if is_char else self._value_rows(variable, type_, group, shape)
        for row, offset, texts, complete in chunks:
            opens, closes = braces(row) if braces is not None and offset == 0 else (0, 0)
            if opens:
                out.put("{" * opens)
            if offset == 0 and self.opts.brief and rank > 1:
                out.raw(notes.brief(row))
                out.col = out.indent + 4
            last_row = row == rows - 1
            if self.opts.full:
                out.raw(notes.full_row(row, offset, texts, "}" * closes, last_row if complete else None))
            elif not complete:  # a part of the only row of a 1-D variable
                out.put_row(texts, ", ")
            else:
                if is_char:
                    out.raw(texts[0])
                    out.put("}" * closes)
                else:
                    texts[-1] += "}" * closes
                    out.put_row(texts, "")
                if last_row:
                    out.put(" ;")
                    out.put("\n")
                else:
                    out.put(",\n")
                    out.put("  ")
            yield out.take()
        yield out.take()

    def _plain_numbers(self, variable: Variable, type_: AtomicType) -> bool:
        """Whether the data are numbers printed one format each, not times."""
        return (type_.is_integer or type_.is_float) and id(variable) not in self.axes

    def _number_data(self, variable: Variable, type_: AtomicType, shape: tuple[int, ...]) -> Iterator[str]:
        """The data of a numeric variable without index comments nor braces, a slab at a
        time formatted and laid out by :mod:`nczarr.syntax.cdlnumbers`."""
        out = self.out
        fmt = self._data_format(variable, type_)
        fill = self._fill_value(variable, type_)
        rank = len(shape)
        width = shape[-1] if shape else 1
        total = math.prod(shape)
        done = 0
        for raw in self._slabs(variable, shape, split_row=True):
            count = raw.size
            done += count
            complete = rank > 1 or done % width == 0
            fills = None if fill is None else _fill_mask(raw, type_, fill)
            joined = joined_values(raw, fmt, fills, "f" if type_ is AtomicType.FLOAT else "")
            texts = None
            if joined is None:  # values formatted one by one
                texts = _numeric_rows(raw.reshape(1, -1), type_, fmt, fill)[0]
                text = ", ".join(texts)
                joined = np.frombuffer(text.encode("ascii"), np.uint8) if text.isascii() else None
            layout = Layout(out.max, out.col, out.indent + 2, out.indent + 4)
            placed = None if joined is None else lay_out(joined, count, width if rank > 1 else count, layout, complete)
            if placed is None:  # a value the joined text cannot be split at (a C_format's comma)
                if texts is None:
                    texts = _numeric_rows(raw.reshape(1, -1), type_, fmt, fill)[0]
                rows = [texts[i : i + width] for i in range(0, count, width)] if rank > 1 else [texts]
                for k, row in enumerate(rows):
                    out.put_row(row, "" if complete else ", ")
                    if complete and k < len(rows) - 1:
                        out.put(",\n")
                        out.put("  ")
            else:
                out.raw(placed[0])
                out.col = placed[1]
            if complete and done == total:
                out.put(" ;")
                out.put("\n")
            elif complete:
                out.put(",\n")
                out.put("  ")
            yield out.take()

    def _value_rows(self, variable: Variable, type_: Any, group: Group, shape: tuple[int, ...]) -> Iterator[_Chunk]:
        """The texts of the values, a row (or, of a 1-D variable, a part of its row) at a
        time: (row number, offset in the row, texts, whether the row ends here)."""
        format_row = self._row_formatter(variable, type_, group)
        width = shape[-1] if shape else 1
        row = offset = 0
        for raw in self._slabs(variable, shape, split_row=True):
            for texts in format_row(raw.reshape(-1, width) if raw.size >= width else raw.reshape(1, -1)):
                complete = offset + len(texts) == width
                yield row, offset, texts, complete
                if complete:
                    row, offset = row + 1, 0
                else:
                    offset += len(texts)

    def _char_rows(self, variable: Variable, shape: tuple[int, ...]) -> Iterator[_Chunk]:
        """Each row of a char variable as one quoted text (a 0-D or 1-D variable is one row)."""
        width = shape[-1] if len(shape) > 1 else max(math.prod(shape), 1)
        row = 0
        for raw in self._slabs(variable, shape, split_row=False):
            data = np.ascontiguousarray(raw).tobytes()
            for i in range(0, len(data), width):
                piece = data[i : i + width]
                yield row, 0, ['"' + _escape(piece.rstrip(b"\0"), _CHAR_TABLE).replace("\\n", '\\n",\n    "') + '"'], True
                row += 1

    def _row_formatter(self, variable: Variable, type_: Any, group: Group) -> Callable[[np.ndarray], list[list[str]]]:
        fill = self._fill_value(variable, type_)
        axis = self.axes.get(id(variable))
        if axis is not None and isinstance(type_, AtomicType) and (type_.is_integer or type_.is_float):
            return lambda raw: _time_rows(raw, type_, axis, fill)
        if isinstance(type_, AtomicType) and type_ is not AtomicType.STRING:
            fmt = self._data_format(variable, type_)
            return lambda raw: _numeric_rows(raw, type_, fmt, fill)

        def text(value: Any) -> str:
            return "_" if fill is not None and _same(value, fill) else self._value_text(type_, value, group)

        def rows(raw: np.ndarray) -> list[list[str]]:
            return [[text(v) for v in row] for row in raw]

        return rows

    def _data_format(self, variable: Variable, type_: AtomicType) -> str | None:
        precision = self.opts.precision if not self.opts.c_format_wins else None
        if type_ is AtomicType.FLOAT and precision and precision[0] is not None:
            return self.formats.float_data
        if type_ is AtomicType.DOUBLE and precision and precision[1] is not None:
            return self.formats.double_data
        c_format = variable.find_attribute("C_format")
        if c_format is not None and c_format.type is AtomicType.CHAR:
            return str(c_format.values)
        return {AtomicType.FLOAT: self.formats.float_data, AtomicType.DOUBLE: self.formats.double_data}.get(type_)

    def _fill_value(self, variable: Variable, type_: Any) -> Any:
        attribute = variable.find_attribute("_FillValue")
        typed = attribute is not None and (attribute.type == variable.type or not isinstance(type_, AtomicType))
        if attribute is not None and typed and len(attribute.values) == 1:
            return attribute.values[0]
        if isinstance(type_, AtomicType) and type_ not in (AtomicType.BYTE, AtomicType.UBYTE):
            return DEFAULT_FILL.get(type_)
        return None

    def _slabs(self, variable: Variable, shape: tuple[int, ...], split_row: bool) -> Iterator[np.ndarray]:
        """The variable's raw values, a bounded slab of whole rows at a time (of a 1-D
        variable, parts of its one row if ``split_row``)."""
        # a row is formatted whole, except the one row of a 1-D variable when split_row
        for block in plan_blocks(shape, 1, _SLAB_VALUES, whole_rows=len(shape) > 1 or not split_row):
            yield np.asarray(self.source.read(variable, block))


# -- data helpers ---------------------------------------------------------------------------
#: A piece of a variable's data: (row number, offset in the row, value texts, whether the row ends).
_Chunk = tuple[int, int, list[str], bool]
#: What ncdump 4.9.0 prints as the Fortran index of a scalar with ``-f f``: it reads the
#: size_t before its one-element index array, glibc's header of that 8-byte allocation
#: (0x21), and adds 1. Kept, so that the text is ncdump's byte for byte.
_FORTRAN_SCALAR_INDEX = 34


@dataclass(frozen=True)
class _Annotations:
    """The index comments of ``-b`` (one before each row) and ``-f`` (one after each value)."""

    name: str
    shape: tuple[int, ...]
    language: str
    indent: str

    def _corner(self, row: int) -> list[int]:
        grid = self.shape[:-1]
        return [int(i) for i in np.unravel_index(row, grid)] if grid else []

    def brief(self, row: int) -> str:
        corner, width = self._corner(row), self.shape[-1]
        if self.language == "f":
            index = ("1" if width == 1 else f"1-{width} ") + "".join(f",{c + 1}" for c in reversed(corner))
        else:
            index = "".join(f"{c}," for c in corner) + ("0" if width == 1 else f" 0-{width - 1}")
        return f"// {self.name}({index})\n{self.indent}    "

    def full(self, row: int, column: int) -> str:
        corner = self._corner(row)
        if self.language == "f":
            first = column + 1 if self.shape else _FORTRAN_SCALAR_INDEX
            index = f"{first}" + "".join(f",{c + 1}" for c in reversed(corner))
        else:
            index = "".join(f"{c}," for c in corner) + str(column)
        return f"  // {self.name}({index})\n    "

    def full_row(self, row: int, offset: int, texts: list[str], closes: str, last_row: bool | None) -> str:
        """``texts`` (values ``offset``... of ``row``) each with its comment; ``last_row``
        None: the row goes on after them. A char row is one text, commented with the index
        of its last character."""
        end = len(texts) - (0 if last_row is None else 1)
        parts = [f"{texts[i]}, " + self.full(row, offset + i) for i in range(end)]
        if last_row is not None:
            column = self.shape[-1] - 1 if self.shape else 0
            parts.append(texts[-1] + closes + (";" if last_row else ",") + self.full(row, column))
        return "".join(parts)


def _names_variable(name: str, variable: Variable, group: Group) -> bool:
    """ncdump's ``-v`` names: ``v`` (in any group), ``/g/v`` (that one), ``g/v`` (``v`` in
    any group whose path ends with ``g``)."""
    path, slash, base = name.rpartition("/")
    if not slash:
        return variable.name == name
    if name.startswith("/"):
        return variable.fqn == name
    return variable.name == base and group.fqn.endswith(path)


def _row_count(shape: tuple[int, ...]) -> int:
    return math.prod(shape[:-1]) if len(shape) > 1 else 1


def _braces(shape: tuple[int, ...], unlimited: list[bool]) -> Callable[[int], tuple[int, int]] | None:
    """For variables with an unlimited dimension after the first: the number of braces that
    open before and close after row number ``n`` (one pair around the whole extent of each
    such dimension, per index of the dimensions before it, the last one too, also of char
    rows); None when there are none."""
    grid = shape[:-1]
    inner = [k for k in range(1, len(shape)) if unlimited[k]]
    if not inner:
        return None

    def counts(row: int) -> tuple[int, int]:
        index = [int(i) for i in np.unravel_index(row, grid)] if grid else []
        opens = sum(all(index[j] == 0 for j in range(k, len(grid))) for k in inner)
        closes = sum(all(index[j] == grid[j] - 1 for j in range(k, len(grid))) for k in inner)
        return opens, closes

    return counts


def _numeric_rows(raw: np.ndarray, type_: AtomicType, fmt: str | None, fill: Any) -> list[list[str]]:
    values = raw.tolist()
    if type_.is_float:
        suffix = "f" if type_ is AtomicType.FLOAT else ""
        assert fmt is not None
        finite = bool(np.isfinite(raw).all())
        if finite:
            texts = [[fmt % v for v in row] for row in values]
        else:
            texts = [[_special_float(v, suffix) or fmt % v for v in row] for row in values]
        if fill is not None:
            mask = _float_fill_mask(raw, fill, type_)
            if mask.any():
                for i, j in zip(*np.nonzero(mask)):
                    texts[i][j] = "_"
        return texts
    if fmt is not None:
        passed, fmt = c_printf(raw, fmt)
        texts = [[fmt % v for v in row] for row in passed.tolist()]
    else:
        texts = [list(map(str, row)) for row in values]
    if fill is not None:
        mask = raw == fill
        if mask.any():
            for i, j in zip(*np.nonzero(mask)):
                texts[i][j] = "_"
    return texts


def _fill_mask(raw: np.ndarray, type_: AtomicType, fill: Any) -> np.ndarray:
    if fill is None:
        return np.zeros(raw.shape, bool)
    return _float_fill_mask(raw, fill, type_) if type_.is_float else raw == fill


def _time_rows(raw: np.ndarray, type_: AtomicType, axis: TimeAxis, fill: Any) -> list[list[str]]:
    mask = _fill_mask(raw, type_, fill)
    texts = np.full(raw.shape, "_", dtype=object)
    texts[~mask] = axis.texts(raw[~mask].tolist())
    return texts.tolist()


def _float_fill_mask(raw: np.ndarray, fill: float, type_: AtomicType) -> np.ndarray:
    values = raw.astype(np.float64)
    if math.isnan(fill):
        return np.isnan(values)
    if math.isinf(fill):
        return values == fill
    eps = float(np.finfo(np.float32 if type_ is AtomicType.FLOAT else np.float64).eps)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(values - fill) <= eps * abs(fill)


def _same(value: Any, fill: Any) -> bool:
    """Whether a raw value equals the variable's fill (a model value): ncdump prints ``_``
    for it, whatever the type (compound, opaque, vlen too)."""
    if isinstance(value, np.ndarray | np.void) or isinstance(fill, tuple | list | bytes):
        return _equal(plain_value(value), fill)
    try:
        return bool(value == fill) or (value == "" and fill == "")
    except (TypeError, ValueError):
        return False


def _equal(raw: Any, model: Any) -> bool:
    """A plain raw value against a model value, as ncdump compares them (byte for byte): a
    char is bytes in one and text in the other, a char array bytes or one text, NaN equals
    NaN."""
    if isinstance(raw, list) and isinstance(model, str | bytes):  # a char array field
        raw = b"".join(_char_bytes(v) for v in raw)
    if isinstance(raw, bytes) and isinstance(model, str | bytes):
        return raw.rstrip(b"\0") == _char_bytes(model).rstrip(b"\0")
    if isinstance(raw, list | tuple) and isinstance(model, list | tuple):
        return len(raw) == len(model) and all(_equal(r, m) for r, m in zip(raw, model))
    if isinstance(raw, float) and isinstance(model, float) and math.isnan(raw):
        return math.isnan(model)
    try:
        return bool(raw == model)
    except (TypeError, ValueError):
        return False


def _atomic_data_text(type_: AtomicType, value: Any, formats: _Formats) -> str:
    if type_ is AtomicType.STRING:
        return "NIL" if value is None else f'"{_escape(_to_bytes(value), _STRING_DATA_TABLE)}"'
    if type_ is AtomicType.CHAR:
        return _quoted(_char_bytes(value), _TEXT_TABLE)
    if type_ is AtomicType.FLOAT:
        v = float(value)
        return _special_float(v, "f") or formats.float_data % v
    if type_ is AtomicType.DOUBLE:
        v = float(value)
        return _special_float(v, "") or formats.double_data % v
    return str(int(value))


def _char_bytes(value: Any) -> bytes:
    if isinstance(value, np.ndarray):
        return value.tobytes()
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value)
    if isinstance(value, list):  # a char array member of a compound attribute: one text a char
        return b"".join(_char_bytes(v) for v in _flatten(value))
    return str(value).encode("utf-8", "surrogateescape")


def _flatten(items: list[Any]) -> list[Any]:
    flat: list[Any] = []
    for item in items:
        flat.extend(_flatten(item) if isinstance(item, list) else [item])
    return flat


def _signed(value: int) -> int:
    return value - 2**64 if value > 2**63 - 1 else value


@dataclass(frozen=True)
class _Filter:
    """One filter of a variable as netCDF-4 shows it: an HDF5 filter id (None for a Zarr
    codec netcdf-c has no filter for) and its parameters."""

    id: int | None
    params: tuple[int, ...] = ()

    def text(self) -> str:
        return ",".join(map(str, (self.id, *self.params)))


#: HDF5's filter ids by Zarr codec name (v2 ``id``, v3 ``name`` without ``numcodecs.``).
_FILTER_OF_CODEC = {
    "zlib": HDF5_DEFLATE,
    "gzip": HDF5_DEFLATE,
    "shuffle": HDF5_SHUFFLE,
    "fletcher32": HDF5_FLETCHER32,
    "zstd": HDF5_ZSTD,
    "bz2": HDF5_BZIP2,
    "blosc": HDF5_BLOSC,
}
#: The v3 codecs that turn the array into bytes (netCDF-4 has no filter for them).
_SERIALIZERS = frozenset({"bytes", "vlen-utf8", "vlen-bytes", "transpose", "sharding_indexed"})
_BLOSC_CODE_OF_CNAME = {cname: BLOSC_CODES[name] for name, cname in BLOSC_CNAMES.items()}


def _stored_codecs(storage: VariableStorage) -> list[dict[str, Any]] | None:
    """A Zarr variable's codecs as stored, in chain order, without v3's serializer; None
    for a variable not read from a Zarr store (its settings say it all)."""
    codecs = storage.codecs
    if isinstance(codecs, dict):  # v2: filters, then the compressor
        filters = codecs.get("filters") or []
        compressor = codecs.get("compressor")
        chain = [*filters, *([compressor] if compressor else [])] if isinstance(filters, list) else []
        return [c for c in chain if isinstance(c, dict)]
    if isinstance(codecs, list):
        return [c for c in codecs if isinstance(c, dict) and _codec_name(c) not in _SERIALIZERS]
    return None


def _codec_name(codec: dict[str, Any]) -> object:
    name = codec.get("id", codec.get("name"))
    return name.removeprefix("numcodecs.") if isinstance(name, str) else name


def _codec_filter(codec: dict[str, Any], itemsize: int, chunk_bytes: int) -> _Filter:
    """The HDF5 filter netcdf-c shows for a Zarr codec (v2 or v3 form)."""
    name = _codec_name(codec)
    config = codec.get("configuration", codec)
    if isinstance(name, int):  # a codec named by its HDF5 filter id
        return _Filter(name)
    filter_id = _FILTER_OF_CODEC.get(str(name))
    if filter_id in (HDF5_DEFLATE, HDF5_ZSTD, HDF5_BZIP2):
        return _Filter(filter_id, (int(config.get("level", 0)),))
    if filter_id == HDF5_SHUFFLE:
        return _Filter(filter_id, (int(config.get("elementsize", itemsize)),))
    if filter_id == HDF5_BLOSC:
        level, shuffle = int(config.get("clevel", 0)), config.get("shuffle", 1)
        shuffle = BLOSC_SHUFFLES.index(shuffle) if shuffle in BLOSC_SHUFFLES else int(shuffle)  # v3 names it
        code = _BLOSC_CODE_OF_CNAME.get(str(config.get("cname")), 0)
        return _Filter(filter_id, (0, 0, itemsize, chunk_bytes, level, shuffle, code))
    return _Filter(filter_id)


def _filter_chain(storage: VariableStorage, chunks: tuple[int, ...] | None, itemsize: int) -> list[_Filter]:
    """A variable's filters in the order netCDF-4 lists them: a Zarr store's codecs in chain
    order (as NCZarr keeps them); for an HDF5 file, fletcher32 and shuffle first, then the
    compressor (as netcdf-c orders HDF5's pipeline)."""
    size = itemsize or 1
    chunk_bytes = size * math.prod(chunks) if chunks else size
    stored = _stored_codecs(storage)
    if stored is not None:
        return [_codec_filter(codec, itemsize, chunk_bytes) for codec in stored]
    chain = []
    if storage.fletcher32:
        chain.append(_Filter(HDF5_FLETCHER32))
    if storage.shuffle:
        chain.append(_Filter(HDF5_SHUFFLE, (size,)))
    compression = storage.compression
    if compression is not None and compression.startswith("blosc"):
        code = BLOSC_CODES.get(compression, 0)
        chain.append(_Filter(HDF5_BLOSC, (0, 0, size, chunk_bytes, storage.complevel, storage.blosc_shuffle, code)))
    elif compression is not None:
        chain.append(_Filter(HDF5_FILTER_OF[compression], (storage.complevel,)))
    return chain


def _named_filter_lines(chain: list[_Filter]) -> list[tuple[str, str]]:
    """ncdump's default: ``_Fletcher32``, ``_Shuffle``, ``_DeflateLevel`` (in this order),
    then every other filter in ``_Filter``."""
    ids = [f.id for f in chain]
    lines = []
    if HDF5_FLETCHER32 in ids:
        lines.append(("_Fletcher32", '"true"'))
    if HDF5_SHUFFLE in ids:
        lines.append(("_Shuffle", '"true"'))
    lines.extend(("_DeflateLevel", str(f.params[0])) for f in chain if f.id == HDF5_DEFLATE)
    others = [f.text() for f in chain if f.id not in (None, HDF5_FLETCHER32, HDF5_SHUFFLE, HDF5_DEFLATE)]
    if others:
        lines.append(("_Filter", '"' + "|".join(others) + '"'))
    return lines


def _filter_lines(chain: list[_Filter]) -> list[tuple[str, str]]:
    """``-F``: every filter in ``_Filter``."""
    known = [f.text() for f in chain if f.id is not None]
    return [("_Filter", '"' + "|".join(known) + '"')] if known else []


def _codecs_line(storage: VariableStorage) -> list[tuple[str, str]]:
    """A Zarr store's codecs in ``_Codecs``, with or without ``-F``, whatever the codec (as
    netcdf-c shows every filtered NCZarr variable; an HDF5 file has none), in netcdf-c's JSON:
    ``", "`` between members, ``","`` between codecs."""
    stored = _stored_codecs(storage)
    if not stored:
        return []
    text = "[" + ",".join(dumps(codec).decode() for codec in stored) + "]"
    return [("_Codecs", '"' + _escape(text.encode(), _TEXT_TABLE) + '"')]


def _byte_order(storage: VariableStorage) -> str:
    """The byte order values are stored in (``native`` is the machine's)."""
    return storage.endian if storage.endian != "native" else sys.byteorder


def _type_size(node: Any) -> int:
    if isinstance(node, AtomicType):
        return node.size or 0
    if isinstance(node, EnumType) and isinstance(node.base, AtomicType):
        return node.base.size or 0
    return 0


def _is_ancestor(owner: Group | None, scope: Group | None) -> bool:
    while scope is not None:
        if scope is owner:
            return True
        scope = scope.parent  # type: ignore[assignment]
    return False


def _fqn(node: Any) -> str:
    names = []
    current = node
    while current.parent is not None:
        names.append(escape_name(current.name))
        current = current.parent
    return "/" + "/".join(reversed(names))


# -- public -------------------------------------------------------------------------------
def kind_text(source: DatasetSource) -> str:
    """What ``ncdump -k`` prints for the dataset (without the newline)."""
    return _KINDS[source.data_model]


def dataset_name(path: str) -> str:
    """ncdump's default dataset name: the base name of the location without extension."""
    base = os.path.basename(path.rstrip("/").split("#", 1)[0].rstrip("/"))
    return os.path.splitext(base)[0]


def dump(
    source: DatasetSource, options: DumpOptions = DumpOptions(), name: str | None = None, path: str = ""
) -> Iterator[str]:
    """The text ``ncdump`` prints for the dataset of ``source``, in pieces (a line or many) with
    ``options``; ``path`` is its location, ``name`` the dataset name of the first line
    (``options.name`` wins, then ``name``, then the location's base name without extension)."""
    if options.kind:
        yield kind_text(source) + "\n"
        return
    if options.times is not None and options.times not in _TIME_SEPARATORS:
        raise DumpError(f"times must be 't' (-t) or 'i' (-i), not {options.times!r}")
    if options.line_length < 10:
        raise DumpError("-l: line length must be at least 10")
    dumper = _Dumper(source, options, options.name or name or dataset_name(path))
    if options.ncml:
        if source.data_model == "NETCDF4":
            raise DumpError("NcML output (-x) currently only permitted for netCDF classic model")
        yield from dumper.ncml(path)
        return
    for block in dumper.run():
        if block:
            yield block
