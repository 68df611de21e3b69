"""CDL in: the text form of netCDF datasets read into a model tree and its data, as ncgen does.

The grammar is ``grammar/cdl.lark``, run by :class:`~nczarr.syntax.lalr.LalrParser`; the
parse gives a list of declarations per group, and :class:`_Builder` then walks them in text
order, as ncgen does (no forward references): it builds the tree, types untyped attributes,
turns the special attributes into :class:`~nczarr.formats.VariableStorage`, and converts
each variable's data list into a numpy array of its full shape (:mod:`nczarr.syntax.cdlvalues`;
a variable too large to hold whole keeps its data and fill: :class:`PaddedValues`).
Every problem is a :class:`CdlError` with the file, line, column and the offending text.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nczarr.errors import CdlError, NCZarrError, ParseError
from nczarr.model import (
    AtomicType,
    CompoundType,
    DataModel,
    Dataset,
    Dimension,
    Group,
    UserType,
    Variable,
)
from nczarr.model.resolve import shortest_reference
from nczarr.model.types import KIND_SPELLINGS, netcdf_kind
from nczarr.syntax.cdlbulk import run_values
from nczarr.syntax.cdlvalues import (
    Const,
    PaddedValues,
    Values,
    constant,
    infer_attribute,
    name_of,
    typed_attribute,
)
from nczarr.syntax.grammars import grammar_path
from nczarr.syntax.lalr import LalrParser, Lines, Token
from nczarr.syntax.limits import TypeShape
from nczarr.values.storage import HDF5_BLOSC, HDF5_FILTER_OF, HDF5_FLETCHER32, HDF5_SHUFFLE, VariableStorage
from nczarr.values.types import NUMPY_CODE
from nczarr.zarr.metadata import MAX_DIMENSIONS

__all__ = ["CdlDataset", "normalize_kind", "parse_cdl"]

#: ncgen's -k spellings and netCDF4's names of the five kinds, by netCDF4's name.
_CLASSIC_MODEL = ("NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF4_CLASSIC")

_GLOBAL_SPECIALS = ("_Format", "_NCProperties", "_IsNetcdf4", "_SuperblockVersion")
_VARIABLE_SPECIALS = (
    "_Storage",
    "_ChunkSizes",
    "_Fletcher32",
    "_DeflateLevel",
    "_Shuffle",
    "_Endianness",
    "_NoFill",
    "_Filter",
    "_Codecs",
)
#: The special attribute names ncgen's lexer reads as their own tokens: never names of
#: dimensions, variables, types or groups, and attributes only where its grammar has them.
_SPECIAL_TOKENS = frozenset(
    (*_GLOBAL_SPECIALS, *_VARIABLE_SPECIALS, "_FillValue", "_QuantizeGranularBitRoundNumberOfSignificantDigits")
)
#: Words ncgen never takes as a name (besides the grammar's keywords and numbers).
_RESERVED = _SPECIAL_TOKENS | {"netcdf", "NETCDF", "netCDF", "_"}
_TRUE = {"true": True, "1": True, "false": False, "0": False}
#: The bytes of values held as whole arrays in a CdlDataset; beyond, PaddedValues.
EAGER_BYTES = 64 << 20
# The HDF5 filters of _Filter (ids or names) that have a Zarr codec, and those that are
# flags of VariableStorage; any other has no codec.
_FILTER_CODECS = {
    **{str(HDF5_FILTER_OF[c]): c for c in ("zlib", "zstd", "bzip2")}, "deflate": "zlib", "zlib": "zlib",
    "zstd": "zstd", "bzip2": "bzip2", str(HDF5_BLOSC): "blosc_lz", "blosc": "blosc_lz",
}
_FILTER_FLAGS = {
    str(HDF5_SHUFFLE): "shuffle", "shuffle": "shuffle", str(HDF5_FLETCHER32): "fletcher32", "fletcher32": "fletcher32",
}
_HEADER = re.compile(
    r"\A\ufeff?(?:[ \t\f\r\n]+|//[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)*(netcdf|NETCDF|netCDF)([^{]*)"
)
# Long lists of numbers after "=" are read by numpy, not token by token: the scan skips
# escaped characters of names, comments, strings and character constants so that it sees
# only real lists. A list numpy cannot read exactly as ncgen would (octal, long integers,
# suffixes...) is read token by token.
_RUN_LENGTH = 64
_ELEMENT = r"[-+]?[0-9.][-+0-9.eE]*+"
_SCAN = re.compile(
    r"\\.|//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z)|\"[^\"\\]*(?:\\.[^\"\\]*)*\"?|'(?:\\.|[^\\])'?"
    rf"|=[ \t\r\n]*({_ELEMENT}(?:[ \t\r\n]*,[ \t\r\n]*{_ELEMENT}){{{_RUN_LENGTH},}}+)"
    r"(?=[ \t\r\n]*;)|[^/\"'=\\]+|."
)
_BLANK_RUN = str.maketrans(dict.fromkeys("-+0123456789.eE, \t\r", " "))
_DESCRIBE = {
    "IDENT": "a name",
    "PATH": "a path",
    "NUMBER": "a number",
    "STRING": "a string",
    "CHARCONST": "a character constant",
    "NIL": "NIL",
    "$END": "end of text",
}


@dataclass
class CdlDataset:
    """What a CDL text describes: the tree, each variable's data and storage, the kind asked."""

    dataset: Dataset
    data: dict[str, np.ndarray | PaddedValues] = field(default_factory=dict)
    storage: dict[str, VariableStorage] = field(default_factory=dict)
    kind: str | None = None
    #: The FQNs of the variables the text gives data for (the others hold fill values only).
    given: frozenset[str] = frozenset()


def normalize_kind(kind: str) -> str:
    """netCDF4's name (``NETCDF4``, ``NETCDF3_CLASSIC``...) of a kind in any ncgen spelling."""
    found = netcdf_kind(kind)
    if found is None:
        raise CdlError(f"unknown kind {kind!r}; use one of {', '.join(KIND_SPELLINGS)}", 1, 1)
    return found


def parse_cdl(text: str, filename: str = "<cdl>", *, kind: str | None = None) -> CdlDataset:
    """The dataset a CDL text describes; ``kind`` is ncgen's ``-k`` (any of its spellings).

    Raises :class:`CdlError` (a :class:`~nczarr.errors.ParseError`) naming the file,
    line, column and offending text of the first problem.
    """
    try:
        asked = None if kind is None else normalize_kind(kind)
        _refuse_lone_surrogates(text)
        name, body = _blank_header(text)
        body, runs = _pack_runs(body)
        if asked is not None:
            statements = _parser(_TYPE_WORDS_AS_NAMES.get(asked, _NETCDF4_TYPE_WORDS)).parse(body)
            return _Builder(name, asked, runs).build(statements)
        try:  # no -k: netCDF-4 CDL, else classic CDL using netCDF-4's type words as names
            return _Builder(name, asked, runs).build(_parser().parse(body))
        except ParseError as netcdf4_error:
            try:
                return _Builder(name, asked, runs).build(_parser(_NETCDF4_TYPE_WORDS).parse(body))
            except ParseError:
                raise netcdf4_error from None
    except ParseError as exc:
        exc.filename = filename
        raise


# Surrogates stand for undecodable bytes (U+DC80..U+DCFF, "surrogateescape"); others
# cannot be bytes of a file.
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _refuse_lone_surrogates(text: str) -> None:
    found = None if text.isascii() else _LONE_SURROGATE.search(text)  # isascii: one fast pass
    if found is not None:
        line, column = Lines(text).position(found.start())
        raise CdlError(f"character U+{ord(found.group()):04X} is not text (a lone surrogate)", line, column)


def _blank_header(text: str) -> tuple[str, str]:
    """The dataset name, and the text with ``netcdf NAME`` blanked (lines and columns kept)."""
    found = _HEADER.match(text)
    if found is None:
        start = len(text) - len(text.lstrip())
        line, column = Lines(text).position(start)
        word = text[start:].split(None, 1)[0] if text.strip() else None
        shown = f"unexpected {word!r}" if word else "unexpected end of text"
        raise CdlError(f"{shown}; expected 'netcdf'", line, column, word)
    name = "".join(char for char in found.group(2) if char > " ")
    if not name:
        line, column = Lines(text).position(found.end())
        raise CdlError("the dataset name is missing after 'netcdf'", line, column, "{")
    head = text[: found.end()].replace("\ufeff", " ", 1)
    start = found.start(1)
    return name, head[:start] + re.sub(r"[^\n]", " ", head[start:]) + text[found.end() :]


_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdDlL]?"
    r"|[0-9]+[eE][+-]?[0-9]+[fFdDlL]?|[0-9]+)"
)


def _pack_runs(text: str) -> tuple[str, dict[int, str]]:
    """The text with each long run of plain numbers made one string token of the same
    length (lines and columns kept), and those runs by the token's offset."""
    runs: dict[int, str] = {}
    pieces: list[str] = []
    last = 0
    for found in _SCAN.finditer(text):
        if found.group(1) is None:
            continue
        start, end = found.span(1)
        run = found.group(1)
        runs[start] = run
        pieces += [text[last:start], '"', run[1:-1].translate(_BLANK_RUN), '"']
        last = end
    if not runs:
        return text, runs
    pieces.append(text[last:])
    return "".join(pieces), runs


# ncgen reads the type words of types a format lacks as names (``string = 2 ;`` in classic
# CDL); a name ``int64`` used as a type still names the type. Without -k, ncgen reads them as
# classic; gen, which makes a netCDF-4 dataset then, reads netCDF-4 CDL first.
_NETCDF4_TYPE_WORDS = frozenset({"string", "int64", "uint64", "ubyte", "ushort", "uint", "ulong", "uinteger"})
_TYPE_WORDS_AS_NAMES = {"NETCDF4": frozenset(), "NETCDF3_64BIT_DATA": frozenset({"string"})}


@functools.cache
def _parser(names: frozenset[str] = frozenset()) -> LalrParser[list[Any]]:
    return LalrParser(
        grammar_path("cdl.lark").read_text(encoding="utf-8"),
        start="start",
        builder=_Syntax(),
        word="IDENT",
        word_kinds=("NUMBER", "NIL"),
        leading=(("PATH", "/"), ("STRING", '"'), ("CHARCONST", "'")),
        describe=_DESCRIBE,
        reserved=True,
        names=names,
    )


_PRIMITIVES = {
    "char": AtomicType.CHAR,
    "byte": AtomicType.BYTE,
    "short": AtomicType.SHORT,
    "int": AtomicType.INT,
    "long": AtomicType.INT,
    "integer": AtomicType.INT,
    "float": AtomicType.FLOAT,
    "real": AtomicType.FLOAT,
    "double": AtomicType.DOUBLE,
    "ubyte": AtomicType.UBYTE,
    "ushort": AtomicType.USHORT,
    "uint": AtomicType.UINT,
    "ulong": AtomicType.UINT,
    "uinteger": AtomicType.UINT,
    "int64": AtomicType.INT64,
    "uint64": AtomicType.UINT64,
    "string": AtomicType.STRING,
}


def _flat(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if type(item) is list:
            out.extend(item)
        elif item is not None:
            out.append(item)
    return out


class _Syntax:
    """Reducers: each declaration becomes a tuple whose first item says what it declares."""

    def start(self, c: Any) -> list[Any]:
        return [*c[0], *c[1]]

    def groupbody(self, c: Any) -> list[Any]:
        return [item for section in c for item in _flat(section)]

    def subgroups(self, c: Any) -> list[Any]:
        return _flat(c)

    def namedgroup(self, c: Any) -> list[Any]:
        return [("group", c[0], [*c[1], *c[2]]), *c[3]]

    def attrdecls(self, c: Any) -> list[Any]:
        return list(c)

    typesection = dimsection = vasection = datasection = attrdecls

    def typedecl(self, c: Any) -> Any:
        return c[0]

    def enumdecl(self, c: Any) -> Any:
        return ("enum", c[1], c[0], list(c[2:]))

    def enumid(self, c: Any) -> Any:
        return (c[0], c[1])

    def opaquedecl(self, c: Any) -> Any:
        return ("opaque", c[0], c[1])

    def vlendecl(self, c: Any) -> Any:
        return ("vlen", c[0], c[1])

    def compounddecl(self, c: Any) -> Any:
        return ("compound", c[0], list(c[1:]))

    def field(self, c: Any) -> Any:
        return (c[0], list(c[1:]))

    def fieldspec(self, c: Any) -> Any:
        return (c[0], [item for item in c[1:] if item is not None])

    def dimdecls(self, c: Any) -> list[Any]:
        return list(c)

    def dimdecl(self, c: Any) -> Any:
        return ("dim", c[0], c[1])

    def unlimited(self, c: Any) -> Any:
        return None

    def vardecl(self, c: Any) -> Any:
        return ("var", c[0], list(c[1:]))

    def varspec(self, c: Any) -> Any:
        return (c[0], [item for item in c[1:] if item is not None])

    def ident(self, c: Any) -> Token:
        return c[0]

    def datadecl(self, c: Any) -> Any:
        return ("data", c[0], c[1])

    def gatt(self, c: Any) -> Any:
        return ("att", None, None, c[0], c[1])

    def vatt(self, c: Any) -> Any:
        return ("att", None, c[0], c[1], c[2])

    def typed_vatt(self, c: Any) -> Any:
        return ("att", c[0], c[1], c[2], c[3])

    def datalist(self, c: Any) -> list[Any]:
        return c if type(c) is list else list(c)

    def empty(self, c: Any) -> list[Any]:
        return []

    def function(self, c: Any) -> Any:
        return Const("call", (c[0], list(c[1:])), c[0])

    def nil(self, c: Any) -> Any:
        return Const("nil", None, c[0])

    def primtype(self, c: Any) -> AtomicType:
        return _PRIMITIVES[c[0]]


class _Builder:
    """Walks the declarations in text order and builds the tree, the data and the storage."""

    def __init__(self, name: str, kind: str | None, runs: dict[int, str]) -> None:
        self.root = Dataset(name)
        self.runs = runs
        self.asked = kind
        self.format: str | None = None
        # The first netCDF-4 construct, and the first type of CDF5 and netCDF-4 only.
        self.enhanced: tuple[str, Token | None] | None = None
        self.extended: tuple[str, Token | None] | None = None
        self.storage: dict[str, VariableStorage] = {}
        # By variable id: its dimensions, its name token, its storage settings.
        self.info: dict[int, dict[str, Any]] = {}
        self.pending: dict[int, tuple[Variable, Group, list[Any], Token]] = {}
        # The user types by FQN, and how each is built, by id.
        self.types: dict[str, UserType] = {}
        # What whole arrays of values may still take; larger variables stay PaddedValues.
        self.eager_bytes = EAGER_BYTES
        self.shapes: dict[int, TypeShape] = {}
        # By type id: numpy dtypes and fill values, built once (compounds share field types).
        self.dtypes: dict[int, np.dtype] = {}
        self.fills: dict[int, np.ndarray] = {}

    # -- errors and netCDF-4 constructs ---------------------------------------------------

    def error(self, message: str, token: Any) -> CdlError:
        if isinstance(token, Token):
            line, column = token.position
            return CdlError(message, line, column, token.text)
        return CdlError(message, 1, 1, None)

    def enhanced_use(self, what: str, token: Any) -> None:
        if self.enhanced is None:
            self.enhanced = (what, token)

    def type_use(self, type: AtomicType, token: Any) -> None:
        """Note a type the classic formats lack (CDF5 has all but string)."""
        if type is AtomicType.STRING:
            self.enhanced_use("the type string", token)
        elif not type.in_classic_model and self.extended is None:
            self.extended = (f"the type {type}", token)

    # -- the walk ---------------------------------------------------------------------------

    def build(self, statements: list[Any]) -> CdlDataset:
        self.walk(self.root, statements)
        kind = self.asked or self.format
        refused = [self.enhanced] if kind == "NETCDF3_64BIT_DATA" else \
            [self.enhanced, self.extended] if kind in _CLASSIC_MODEL else []
        for use in refused:
            if use is not None:
                what, token = use
                raise self.error(f"{what} is not allowed in the {kind} format", token)
        if kind in _CLASSIC_MODEL:
            self.root.data_model = DataModel.CLASSIC
            self.check_unlimited()
        data = self.fill_data()
        # ncgen defines the types that refer to no other user type first, then the others
        # in text order (its later passes take each once those it refers to are defined,
        # and CDL has no forward references); ncdump lists them so
        for group in self.root.walk():
            group.types.sort(key=lambda t: self.shapes[id(t)].depth > 0)
        given = frozenset(variable.fqn for variable, *_ in self.pending.values())
        return CdlDataset(self.root, data, self.storage, kind, given)

    def walk(self, group: Group, statements: list[Any]) -> None:
        for statement in statements:
            getattr(self, "do_" + statement[0])(group, *statement[1:])

    def do_group(self, group: Group, name: Token, statements: list[Any]) -> None:
        self.enhanced_use("a group", name)
        self.unique(group, name)
        self.walk(group.add_group(name_of(name)), statements)

    def unique(self, group: Group, name: Token, dimension: bool = False) -> None:
        """Refuse a name already used in the group: dimensions have their own namespace;
        variables, types and groups share one."""
        self.not_reserved(name)
        text = name_of(name)
        lists = (group.dimensions,) if dimension else (group.variables, group.types, group.groups)
        if any(node.name == text for nodes in lists for node in nodes):
            raise self.error(f"duplicate name {text!r}", name)

    def not_reserved(self, name: Token) -> None:
        """Refuse a word ncgen's lexer never reads as a name."""
        if name.text in _RESERVED:
            raise self.error(f"unexpected {name.text!r}; expected a name", name)

    # -- types ----------------------------------------------------------------------------

    def do_enum(self, group: Group, name: Token, base: AtomicType, members: list[Any]) -> None:
        self.enhanced_use("an enum type", name)
        self.unique(group, name)
        if not base.is_integer:
            raise self.error(f"the base type of an enum must be an integer type, not {base}", name)
        values: dict[str, int] = {}
        for member, number in members:
            self.not_reserved(member)
            text = name_of(member)
            if text in values:
                raise self.error(f"duplicate enum member {text!r}", member)
            values[text] = int(typed_attribute(base, [constant(number)], self.error)[0])
        self.add_type(group.add_enum(name_of(name), base, values), TypeShape.enum(base))

    def do_opaque(self, group: Group, size: Token, name: Token) -> None:
        self.enhanced_use("an opaque type", name)
        self.unique(group, name)
        shape = TypeShape.opaque(self.positive(size))
        self.check_shape(shape, name)
        self.add_type(group.add_opaque(name_of(name), shape.size), shape)

    def do_vlen(self, group: Group, base: Any, name: Token) -> None:
        self.enhanced_use("a vlen type", name)
        self.unique(group, name)
        base_ref = self.type_ref(group, base, name)
        shape = TypeShape.vlen(self.shape_of(base_ref))
        self.check_shape(shape, name)
        self.add_type(group.add_vlen(name_of(name), base_ref), shape)

    def do_compound(self, group: Group, name: Token, fields: list[Any]) -> None:
        self.enhanced_use("a compound type", name)
        self.unique(group, name)
        compound = CompoundType(name_of(name))
        for type_token, specs in fields:
            ref = self.type_ref(group, type_token, specs[0][0])
            for field_name, sizes in specs:
                self.not_reserved(field_name)
                text = name_of(field_name)
                if any(f.name == text for f in compound.fields):
                    raise self.error(f"duplicate field {text!r}", field_name)
                compound.add_field(text, ref, [self.positive(size) for size in sizes])
        shape = TypeShape.compound([(self.shape_of(f.type), f.shape) for f in compound.fields])
        self.check_shape(shape, name)
        self.add_type(group.add(compound), shape)

    def add_type(self, user_type: UserType, shape: TypeShape) -> None:
        self.types[user_type.fqn] = user_type
        self.shapes[id(user_type)] = shape

    def shape_of(self, ref: AtomicType | str) -> TypeShape:
        """How a type is built."""
        if isinstance(ref, AtomicType):
            return TypeShape.atomic(ref)
        return self.shapes[id(self.types[ref])]

    def check_shape(self, shape: TypeShape, name: Token) -> None:
        """Refuse a type whose values would be absurdly large or deep (see limits)."""
        problem = shape.problem(name.text)
        if problem is not None:
            raise self.error(problem, name)

    def positive(self, token: Token) -> int:
        value = constant(token)
        if not (isinstance(value.type, AtomicType) and value.type.is_integer) or value.number() <= 0:
            raise self.error("a size must be a positive integer", token)
        return int(value.number())

    def lookup_type(self, group: Group, token: Any) -> AtomicType | UserType | None:
        """The type a reference names (ncgen's rules), or None."""
        if isinstance(token, AtomicType):
            return token
        text = token.text
        if token.type == "PATH":
            *groups, last = _path_names(text)
            owner = self.group_at(groups)
            return None if owner is None else owner.find_type(last)
        name = name_of(token)
        if name in _PRIMITIVES:
            return _PRIMITIVES[name]
        scope: Group | None = group
        while scope is not None:
            found = scope.find_type(name)
            if found is not None:
                return found
            scope = scope.parent  # type: ignore[assignment]
        matches = [t for g in self.root.walk() for t in g.types if t.name == name]
        if len(matches) > 1:
            raise self.error(f"ambiguous type name {name!r}", token)
        return matches[0] if matches else None

    def type_ref(self, group: Group, token: Any, where: Token) -> AtomicType | str:
        """The reference to the type ``token`` names; ``where`` places errors for a keyword."""
        found = self.lookup_type(group, token)
        if found is None:
            raise self.error(f"undefined type {token.text!r}", token)
        if isinstance(found, AtomicType):
            self.type_use(found, token if isinstance(token, Token) else where)
            return found
        return found.fqn

    def group_at(self, names: list[str]) -> Group | None:
        """The group reached from the root through ``names``, or None."""
        group: Group | None = self.root
        for name in names:
            group = group.find_group(name) if group is not None else None
        return group

    def user_type(self, group: Group, fqn: str) -> UserType:
        """The user type a tree's type reference (an FQN) names."""
        return self.types[fqn]

    # -- dimensions and variables ----------------------------------------------------------

    def do_dim(self, group: Group, name: Token, size: Token | None) -> None:
        self.unique(group, name, dimension=True)
        if size is None:
            group.add_dimension(name_of(name), 0, unlimited=True)
            return
        value = constant(size)
        if not (isinstance(value.type, AtomicType) and value.type.is_integer) or value.number() < 0:
            raise self.error("a dimension size must be a non-negative integer", size)
        # Size 0 makes an unlimited dimension, as in netCDF-4.
        group.add_dimension(name_of(name), int(value.number()), unlimited=value.number() == 0)

    def find_dimension(self, group: Group, token: Token) -> Dimension:
        if token.type == "PATH":
            *groups, last = _path_names(token.text)
            owner = self.group_at(groups)
            found = None if owner is None else owner.find_dimension(last)
        else:
            name = name_of(token)
            scope: Group | None = group
            found = None
            while scope is not None and found is None:
                found = scope.find_dimension(name)
                scope = scope.parent  # type: ignore[assignment]
        if found is None:
            raise self.error(f"undefined dimension {token.text!r}", token)
        return found

    def do_var(self, group: Group, type_token: Any, specs: list[Any]) -> None:
        ref = self.type_ref(group, type_token, specs[0][0])
        for name, dims in specs:
            self.unique(group, name)
            if len(dims) > MAX_DIMENSIONS:
                raise self.error(f"{len(dims)} dimensions, more than the {MAX_DIMENSIONS} numpy allows", name)
            found = [self.find_dimension(group, dim) for dim in dims]
            refs = [shortest_reference(d, group) for d in found]
            variable = group.add_variable(name_of(name), ref, refs)
            variable.position = name.position
            self.info[id(variable)] = {"dims": found, "name": name}

    def variable_of(self, group: Group, token: Any) -> Variable | None:
        if not isinstance(token, Token):
            return None
        if token.type == "PATH":
            *groups, last = _path_names(token.text)
            owner = self.group_at(groups)
            return None if owner is None else owner.find_variable(last)
        return group.find_variable(name_of(token))

    # -- attributes ---------------------------------------------------------------------------

    def do_att(
        self, group: Group, type_token: Any, ref: Any, name: Token, values: list[Any]
    ) -> None:
        text = name_of(name)
        values = self.unpack(values)
        owner: Group | Variable = group
        declared: AtomicType | UserType | None = None
        if ref is not None:
            variable = self.variable_of(group, ref)
            if variable is not None:
                owner = variable
            elif type_token is None:  # "T :att = ..." a typed global attribute
                declared = self.lookup_type(group, ref)
                if declared is None:
                    raise self.error(f"undefined variable or type {ref.text!r}", ref)
                self.type_ref(group, ref, name)
            else:
                shown = ref.text if isinstance(ref, Token) else str(ref)
                raise self.error(f"undefined variable {shown!r}", ref)
        if type_token is not None:
            declared = self.lookup_type(group, type_token)
            if declared is None:
                raise self.error(f"undefined type {type_token.text!r}", type_token)
            self.type_ref(group, type_token, name)
        if name.text in _SPECIAL_TOKENS:
            self.special_allowed(owner is group, declared is not None, name)
        else:
            self.not_reserved(name)
        if isinstance(owner, Variable) and text in _VARIABLE_SPECIALS:
            self.variable_special(owner, text, name, values)
            return
        if owner is group and text in _GLOBAL_SPECIALS and declared is None:
            self.global_special(text, name, values)
            return
        if text == "_FillValue" and isinstance(owner, Variable):
            declared = owner.type if isinstance(owner.type, AtomicType) else \
                self.user_type(group, owner.type)
            if len(values) != 1 or _has_fill(values):
                raise self.error("_FillValue needs exactly one value", name)
            fill_char = typed_attribute(AtomicType.CHAR, values, self.error) if declared is AtomicType.CHAR else ""
            if len(str(fill_char).encode("utf-8", "surrogateescape")) > 1:
                raise self.error("the _FillValue of a char variable is one character", name)
        if declared is None:
            atype, converted = infer_attribute(values, name, self.error)
            self.type_use(atype, name)
            self.set_attribute(owner, text, atype, converted)
            return
        if not values and declared is not AtomicType.CHAR:
            raise self.error(f"attribute {text!r} has no values", name)
        if isinstance(declared, AtomicType):
            converted = typed_attribute(declared, values, self.error)
            self.set_attribute(owner, text, declared, converted)
        else:
            converted = Values(self, group).attribute(declared, values, name)
            self.set_attribute(owner, text, declared.fqn, converted)

    def special_allowed(self, is_global: bool, typed: bool, name: Token) -> None:
        """Refuse a special attribute where ncgen's grammar has none: the global ones on the
        dataset, the others on a variable, none typed but ``_FillValue``."""
        if is_global:
            allowed = name.text in _GLOBAL_SPECIALS and not typed
        else:
            allowed = name.text == "_FillValue" or (name.text not in _GLOBAL_SPECIALS and not typed)
        if not allowed:
            raise self.error(f"unexpected {name.text!r}; the special attribute cannot stand here", name)

    @staticmethod
    def set_attribute(owner: Group | Variable, name: str, type: Any, values: Any) -> None:
        """Add an attribute; one defined again keeps its place and takes the new value."""
        found = owner.find_attribute(name)
        if found is None:
            owner.add_attribute(name, type, values)
        else:
            found.type, found.values = type, values

    def global_special(self, name: str, token: Token, values: list[Any]) -> None:
        consts = [constant(item) for item in values]
        if name == "_IsNetcdf4":
            self.special_bool(token, consts)
        elif name == "_SuperblockVersion":
            self.special_int(token, consts)
        else:
            value = self.special_string(token, consts)
        if name != "_Format":
            return  # what ncdump -s shows of the file; nothing to build
        try:
            self.format = normalize_kind(value)
        except CdlError:
            raise self.error(f"unknown _Format {value!r}", token) from None

    def special_string(self, token: Token, values: list[Any]) -> str:
        if len(values) != 1 or values[0].kind != "text":
            raise self.error(f"{token.text} needs one string value", token)
        return values[0].text()

    def special_int(self, token: Token, values: list[Any]) -> int:
        if len(values) != 1 or values[0].kind != "number" or not values[0].type.is_integer:
            raise self.error(f"{token.text} needs one integer value", token)
        return int(values[0].number())

    def special_bool(self, token: Token, values: list[Any]) -> bool:
        if len(values) == 1:
            item = values[0]
            key = item.text() if item.kind == "text" else str(item.value)
            if key.lower() in _TRUE:
                return _TRUE[key.lower()]
        raise self.error(f"{token.text} needs one of \"true\", \"false\", 1, 0", token)

    def variable_special(
        self, variable: Variable, name: str, token: Token, raw: list[Any]
    ) -> None:
        info = self.info[id(variable)]
        values = [constant(item) for item in raw]
        settings = info.setdefault("storage", {})
        if name == "_Storage":
            layout = self.special_string(token, values)
            if layout not in ("contiguous", "compact", "chunked"):
                raise self.error(f"unknown _Storage {layout!r}", token)
            settings["layout"] = layout
            if layout != "chunked":  # the last of _Storage and _ChunkSizes counts
                settings.pop("chunks", None)
        elif name == "_ChunkSizes":
            if not values or any(v.kind != "number" or v.type is None or not v.type.is_integer for v in values):
                raise self.error("_ChunkSizes needs integer values", token)
            settings["layout"] = "chunked"
            settings["chunks"] = self.chunk_sizes([int(v.number()) for v in values], info["dims"], token)
        elif name == "_DeflateLevel":
            level = self.special_int(token, values)
            if level > 9:
                raise self.error("_DeflateLevel must be from 0 to 9", token)
            settings["compression"] = "zlib" if level > 0 else None
            settings["complevel"] = max(level, 0)
        elif name in ("_Shuffle", "_Fletcher32"):
            settings[name[1:].lower()] = self.special_bool(token, values)
        elif name == "_NoFill":
            settings["fill"] = not self.special_bool(token, values)
        elif name == "_Endianness":
            endian = self.special_string(token, values)
            if endian not in ("little", "big", "native"):
                raise self.error(f"unknown _Endianness {endian!r}", token)
            settings["endian"] = endian
        elif name == "_Filter":
            self.filters(settings, self.special_string(token, values), token)
        else:  # _Codecs: the Zarr codecs as JSON
            text = self.special_string(token, values)
            try:
                settings["codecs"] = json.loads(text)
            except ValueError:
                raise self.error("_Codecs is not valid JSON", token) from None

    def chunk_sizes(self, sizes: list[int], dims: list[Dimension], token: Token) -> tuple[int, ...]:
        """A chunk shape as ncgen takes _ChunkSizes: one size per dimension, the extra ones
        ignored, a missing or 0 size the dimension's (netcdf-c's "Bad chunk sizes" for a
        negative size or one beyond a fixed dimension)."""
        if not dims:  # netcdf-c: "Invalid argument"
            raise self.error("_ChunkSizes needs one positive size per dimension (0)", token)
        shape = []
        for index, dim in enumerate(dims):
            size = sizes[index] if index < len(sizes) else 0
            if size < 0 or (not dim.unlimited and size > dim.size):
                raise self.error(f"_ChunkSizes: bad chunk size {size} for dimension {dim.name!r} ({dim.size})", token)
            shape.append(size or max(1, dim.size))
        return tuple(shape)

    def filters(self, settings: dict[str, Any], spec: str, token: Token) -> None:
        for part in filter(None, (p.strip() for p in spec.split("|"))):
            ident, *params = [p.strip() for p in part.split(",")]
            key = ident.lower()
            if key in _FILTER_CODECS:
                settings["compression"] = _FILTER_CODECS[key]
                if params and params[0].lstrip("-").isdigit():
                    settings["complevel"] = int(params[0])
            elif key in _FILTER_FLAGS:
                settings[_FILTER_FLAGS[key]] = True
            else:
                what = "szip" if key in ("4", "szip") else f"filter {ident!r}"
                raise self.error(f"_Filter: {what} has no Zarr codec", token)

    # -- data -----------------------------------------------------------------------------------

    def unpack(self, items: list[Any]) -> list[Any]:
        """The items with each packed run of numbers (see :func:`_pack_runs`) as tokens."""
        if not self.runs:
            return items
        out: list[Any] = []
        for item in items:
            if item.__class__ is Token and item.offset in self.runs:
                run = self.runs[item.offset]
                for found in re.finditer(r"[^\s,]+", run):
                    token = Token("NUMBER", found.group(), item.offset + found.start(), item.lines)
                    if not _NUMBER.fullmatch(token.text):
                        raise self.error(f"unexpected {token.text!r}", token)
                    out.append(token)
            else:
                out.append(self.unpack(item) if item.__class__ is list else item)
        return out

    def packed(self, items: list[Any], type: Any) -> np.ndarray | None:
        """The values of a data list that is one packed run, for a numeric type; else None."""
        if len(items) != 1 or items[0].__class__ is not Token or items[0].offset not in self.runs:
            return None
        if not isinstance(type, AtomicType) or not (type.is_integer or type.is_float):
            return None
        return run_values(self.runs[items[0].offset], np.dtype(NUMPY_CODE[type]))

    def do_data(self, group: Group, ref: Token, values: list[Any]) -> None:
        """Keep a variable's data list (given twice, the last one counts, as in ncgen)."""
        variable = self.variable_of(group, ref)
        if variable is None:
            raise self.error(f"undefined variable {ref.text!r}", ref)
        self.pending[id(variable)] = (variable, group, values, ref)

    def name_token(self, variable: Variable) -> Token:
        """The name token of a variable of the tree being built."""
        return self.info[id(variable)]["name"]

    def dimensions_of(self, variable: Variable) -> list[Dimension]:
        """The dimensions of a variable of the tree being built."""
        return self.info[id(variable)]["dims"]

    def fill_data(self) -> dict[str, np.ndarray | PaddedValues]:
        """Size the unlimited dimensions from the data, then build every variable's array."""
        plans = {}
        for group in self.root.walk():
            for variable in group.variables:
                info = self.info[id(variable)]
                pending = self.pending.get(id(variable))
                converter = Values(self, group)
                plan = converter.plan(variable, info["dims"], pending)
                plans[id(variable)] = (variable, group, plan, converter)
        data: dict[str, np.ndarray | PaddedValues] = {}
        for variable, _group, plan, converter in plans.values():
            info = self.info[id(variable)]
            shape = tuple(d.size for d in info["dims"])
            data[variable.fqn] = converter.build(variable, shape, plan)
            storage = self.make_storage(variable, shape, info.get("storage"))
            if storage is not None:
                self.storage[variable.fqn] = storage
        return data

    def make_storage(
        self, variable: Variable, shape: tuple[int, ...], settings: dict[str, Any] | None
    ) -> VariableStorage | None:
        if not settings:
            return None
        settings = dict(settings)
        layout = settings.pop("layout", "chunked")
        if layout != "chunked" and "chunks" not in settings and shape:
            settings["chunks"] = tuple(max(1, n) for n in shape)
        try:
            return VariableStorage(**settings)
        except NCZarrError as exc:
            info = self.info[id(variable)]
            raise self.error(str(exc), info["name"]) from None

    def check_unlimited(self) -> None:
        for group in self.root.walk():
            for variable in group.variables:
                dims = self.info[id(variable)]["dims"]
                for index, dim in enumerate(dims):
                    if dim.unlimited and index:
                        token = self.info[id(variable)]["name"]
                        raise self.error(
                            f"only the first dimension of {variable.name!r} may be unlimited "
                            "in a classic-model format",
                            token,
                        )


def _has_fill(values: list[Any]) -> bool:
    return any(item.__class__ is not list and constant(item).kind == "fill" for item in values)


def _path_names(text: str) -> list[str]:
    """The unescaped names along a CDL path (``/g/v`` → ``["g", "v"]``)."""
    names = re.findall(r"(?:\\.|[^/\\])+", text)
    return [re.sub(r"\\(.)", r"\1", name) for name in names]

