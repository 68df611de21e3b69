"""The context-sensitive checks of a tree, like a compiler's semantic pass.

:func:`validate` runs every check and returns every problem it finds, in tree order; each
:class:`Problem` names the node by its FQN and, for a tree parsed from text, gives the line and
column of the node's name.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
import struct
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from nczarr.errors import FQNError, ValidationError
from nczarr.model.nodes import (
    Attribute,
    CompoundType,
    Dataset,
    Dimension,
    EnumMember,
    EnumType,
    Field,
    Group,
    Node,
    OpaqueType,
    Position,
    TypeRef,
    UserType,
    Variable,
    VlenType,
)
from nczarr.model.resolve import Resolver
from nczarr.model.types import AtomicType, DataModel

Severity = Literal["error", "warning"]
_Found = TypeVar("_Found", Dimension, UserType)

MAX_NAME_BYTES = 256
"""NC_MAX_NAME: the longest name netCDF accepts, in bytes of UTF-8."""

SUPPORTED_ZARR_VERSIONS = ("2", "3")

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FLOAT_FORMATS = {AtomicType.FLOAT: "<f", AtomicType.DOUBLE: "<d"}
_FLT_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class Problem:
    """One finding of the checks: an error, or a warning about something legal but risky."""

    severity: Severity
    fqn: str
    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = "" if self.line is None else f"{self.line}:{self.column}: "
        subject = f"{self.fqn}: " if self.fqn else ""
        return f"{where}{self.severity}: {subject}{self.message}"


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a legal netCDF name (the rules of netcdf-c), or None if it is."""
    if not name:
        return "name is empty"
    if "/" in name:
        return f"name {name!r} contains '/'"
    if _CONTROL.search(name):
        return f"name {name!r} contains a control character"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate
        return f"name {name!r} is not valid Unicode"
    first = name[0]
    if first.isascii() and not (first.isalnum() or first == "_"):
        return f"name {name!r} must start with a letter, a digit, '_' or a non-ASCII character"
    if name.endswith(" "):
        return f"name {name!r} ends with a blank"
    if size > MAX_NAME_BYTES:
        return f"name {name!r} is longer than {MAX_NAME_BYTES} bytes in UTF-8"
    return None


def validate(dataset: Dataset) -> list[Problem]:
    """Every problem of the tree, errors and warnings, in tree order."""
    return _Checker(dataset).run()


def ensure_valid(dataset: Dataset) -> list[Problem]:
    """The warnings of a valid tree; raises :class:`ValidationError` if it has errors."""
    problems = validate(dataset)
    if any(problem.severity == "error" for problem in problems):
        raise ValidationError(problems)
    return problems


def type_label(tp: AtomicType | UserType) -> str:
    """How messages name a type: ``float``, ``compound type /obs_t``."""
    return tp.value if isinstance(tp, AtomicType) else f"{tp.kind} {tp.fqn}"


def show_value(value: object) -> str:
    """How messages show an attribute value."""
    if isinstance(value, bytes):
        return "0x" + value.hex()
    return repr(value)


class _Checker:
    """One pass over a tree, group by group, collecting problems."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.classic = dataset.data_model is DataModel.CLASSIC
        self.resolver = Resolver()
        self.problems: list[Problem] = []
        self.unlimited: Dimension | None = None  # the first one, for the classic model
        self.good_names: set[str] = set()  # names repeat: units, long_name...

    def run(self) -> list[Problem]:
        version = self.dataset.zarr_version
        if version.split(".")[0] not in SUPPORTED_ZARR_VERSIONS:
            self.error(self.dataset, f"Zarr version {version!r} is not supported; expected 2 or 3")
        for group in self.dataset.walk():
            self.group(group)
        return self.problems

    # -- reporting --------------------------------------------------------------------------

    def report(self, severity: Severity, node: Node, message: str, at: Position | None) -> None:
        line, column = at or node.position or (None, None)
        self.problems.append(Problem(severity, node.fqn, message, line, column))

    def error(self, node: Node, message: str, at: Position | None = None) -> None:
        self.report("error", node, message, at)

    def warning(self, node: Node, message: str, at: Position | None = None) -> None:
        self.report("warning", node, message, at)

    # -- names ------------------------------------------------------------------------------

    def name(self, node: Node, name: str, at: Position | None = None) -> None:
        if name in self.good_names:
            return
        problem = name_problem(name)
        if problem is not None:
            self.error(node, problem, at)
        elif not name.isascii() and not unicodedata.is_normalized("NFC", name):
            self.warning(node, f"name {name!r} is not in Unicode normalization form NFC", at)
        else:
            self.good_names.add(name)

    def unique(self, nodes: Sequence[Node]) -> None:
        seen: dict[str, Node] = {}
        for node in nodes:
            first = seen.setdefault(node.name, node)
            if first is not node:
                self.error(node, f"name {node.name!r} is already used by {first.kind} {first.fqn}")

    def case_clashes(self, nodes: Sequence[Node]) -> None:
        # Variables and groups become store keys; some stores fold case when comparing keys.
        seen: dict[str, Node] = {}
        for node in nodes:
            first = seen.setdefault(node.name.casefold(), node)
            if first.name != node.name:
                self.warning(
                    node, f"name {node.name!r} differs only in case from {first.kind} {first.fqn}"
                )

    # -- references -------------------------------------------------------------------------

    def lookup(self, scope: Group, ref: TypeRef) -> AtomicType | UserType | None:
        """The type ``ref`` names, silently None when it does not resolve."""
        if isinstance(ref, AtomicType):
            return ref
        try:
            return self.resolver.type(scope, ref)
        except FQNError:
            return None

    def type_ref(
        self, node: Node, scope: Group, ref: TypeRef, at: Position | None = None
    ) -> AtomicType | UserType | None:
        if isinstance(ref, AtomicType):
            if self.classic and not ref.in_classic_model:
                self.error(node, f"type {ref} is not in the classic data model", at)
            return ref
        if not isinstance(ref, str):
            self.error(node, f"{ref!r} is not a type", at)
            return None
        return self.resolve(node, ref, "type", functools.partial(self.resolver.type, scope), at)

    def resolve(
        self,
        node: Node,
        ref: str,
        what: str,
        find: Callable[[str], _Found | None],
        at: Position | None = None,
    ) -> _Found | None:
        """What ``find`` gives for ``ref``; reports a reference that is malformed or that
        does not resolve."""
        try:
            found = find(ref)
        except FQNError as exc:
            self.error(node, f"{what} reference '{ref}' is malformed: {exc}", at)
            return None
        if found is None:
            self.error(node, f"{what} reference '{ref}' does not resolve", at)
        return found

    # -- nodes ------------------------------------------------------------------------------

    def group(self, group: Group) -> None:
        if group.parent is not None:
            self.name(group, group.name)
            if self.classic:
                self.error(group, "the classic data model has no groups")
        self.unique(group.dimensions)
        self.unique([*group.types, *group.variables, *group.groups])
        self.case_clashes([*group.variables, *group.groups])
        for dimension in group.dimensions:
            self.dimension(dimension)
        for tp in group.types:
            self.user_type(tp, group)
        for variable in group.variables:
            self.variable(variable, group)
        self.attributes(group.attributes, group)

    def dimension(self, dim: Dimension) -> None:
        self.name(dim, dim.name)
        self.size(dim, dim.size, 0 if dim.unlimited else 1, "dimension size")
        if dim.unlimited and self.classic:
            if self.unlimited is None:
                self.unlimited = dim
            else:
                self.error(
                    dim,
                    "the classic data model allows one unlimited dimension, and "
                    f"{self.unlimited.fqn} is one already",
                )

    def size(
        self, node: Node, size: int, minimum: int, what: str, at: Position | None = None
    ) -> None:
        if size < minimum:
            self.error(node, f"{what} must be at least {minimum}, not {size}", at)

    def variable(self, variable: Variable, group: Group) -> None:
        self.name(variable, variable.name)
        tp = self.type_ref(variable, group, variable.type)
        for index, ref in enumerate(variable.dimensions):
            if isinstance(ref, int):
                self.size(variable, ref, 1, "anonymous dimension size")
                continue
            dim = self.resolve(variable, ref, "dimension", functools.partial(self.resolver.dimension, group))
            if self.classic and index > 0 and isinstance(dim, Dimension) and dim.unlimited:
                self.error(
                    variable,
                    f"unlimited dimension '{ref}' must be the first dimension "
                    "in the classic data model",
                )
        self.attributes(variable.attributes, group)
        fill = variable.find_attribute("_FillValue")
        if fill is not None and tp is not None:
            self.fill_value(fill, tp, group)

    def fill_value(self, fill: Attribute, tp: AtomicType | UserType, group: Group) -> None:
        fill_type = self.lookup(group, fill.type)
        if fill_type is not None and fill_type is not tp:
            self.error(
                fill,
                f"_FillValue has type {type_label(fill_type)}, "
                f"not the variable's type {type_label(tp)}",
            )
        elif isinstance(fill.values, (list, str)) and len(fill.values) > 1:
            self.error(fill, f"_FillValue has {len(fill.values)} values instead of one")

    def attributes(self, attributes: list[Attribute], scope: Group) -> None:
        self.unique(attributes)
        for attribute in attributes:
            self.name(attribute, attribute.name)
            tp = self.type_ref(attribute, scope, attribute.type)
            self.values(attribute, tp)

    def values(self, attribute: Attribute, tp: AtomicType | UserType | None) -> None:
        values = attribute.values
        if not values and values != "":
            self.error(attribute, "attribute has no value")
            return
        if tp is AtomicType.CHAR:
            if not isinstance(values, str):
                self.error(attribute, f"the value of a char attribute is one text, not {values!r}")
            return
        if not isinstance(values, list):
            self.error(attribute, f"the values of an attribute are a list, not {values!r}")
            return
        if tp is None or (isinstance(tp, AtomicType) and _all_fit(values, tp)):
            return
        for value in values:
            misfit = self.misfit(value, tp)
            if misfit is not None:
                bad, bad_type = misfit
                message = f"value {show_value(bad)} does not fit {type_label(bad_type)}"
                self.error(attribute, message)

    def misfit(
        self, value: object, tp: AtomicType | UserType
    ) -> tuple[object, AtomicType | UserType] | None:
        """The innermost part of ``value`` that does not fit, with its type; None if all fits."""
        if isinstance(tp, AtomicType):
            return None if fits_atomic(value, tp) else (value, tp)
        scope = tp.group or self.dataset
        if isinstance(tp, EnumType):
            base = self.lookup(scope, tp.base)
            if isinstance(base, AtomicType) and base.is_integer:
                return None if fits_atomic(value, base) else (value, tp)
            return None  # a bad base is reported with the type
        if isinstance(tp, OpaqueType):
            fits = isinstance(value, bytes) and len(value) == tp.size
            return None if fits else (value, tp)
        if isinstance(tp, VlenType):
            if not isinstance(value, list):
                return value, tp
            base = self.lookup(scope, tp.base)
            return None if base is None else self.first_misfit(value, base)
        assert isinstance(tp, CompoundType)
        if not isinstance(value, tuple) or len(value) != len(tp.fields):
            return value, tp
        for item, fld in zip(value, tp.fields):
            ftype = self.lookup(scope, fld.type)
            if ftype is None:
                continue
            if not fld.shape:
                misfit = self.misfit(item, ftype)
            elif isinstance(item, list) and len(item) == math.prod(fld.shape):
                misfit = self.first_misfit(item, ftype)
            else:
                misfit = item, ftype
            if misfit is not None:
                return misfit
        return None

    def first_misfit(
        self, items: Sequence[object], tp: AtomicType | UserType
    ) -> tuple[object, AtomicType | UserType] | None:
        for item in items:
            misfit = self.misfit(item, tp)
            if misfit is not None:
                return misfit
        return None

    # -- user types -------------------------------------------------------------------------

    def user_type(self, tp: UserType, group: Group) -> None:
        self.name(tp, tp.name)
        if self.classic:
            self.error(tp, "the classic data model has no user-defined types")
        if isinstance(tp, CompoundType):
            self.compound(tp, group)
        elif isinstance(tp, EnumType):
            self.enum(tp, group)
        elif isinstance(tp, OpaqueType):
            self.size(tp, tp.size, 1, "opaque size")
        elif isinstance(tp, VlenType):
            self.type_ref(tp, group, tp.base)

    def part_names(self, tp: UserType, parts: list[Field] | list[EnumMember], what: str) -> None:
        """The names of a compound's fields or an enum's members: legal and distinct."""
        seen: set[str] = set()
        for part in parts:
            self.name(tp, part.name, part.position)
            if part.name in seen:
                self.error(tp, f"{what} name {part.name!r} is used twice", part.position)
            seen.add(part.name)

    def compound(self, tp: CompoundType, group: Group) -> None:
        if not tp.fields:
            self.error(tp, "compound type has no field")
        self.part_names(tp, tp.fields, "field")
        for fld in tp.fields:
            at = fld.position
            ftype = self.type_ref(tp, group, fld.type, at)
            # fields may be of any size (strings, vlens: netCDF-4 allows them), but a type
            # cannot be defined in terms of itself
            if ftype is not None and self.holds(ftype, tp, set()):
                label = type_label(ftype)
                self.error(tp, f"field {fld.name!r} has type {label}, which holds {tp.fqn} itself", at)
            for size in fld.shape:
                self.size(tp, size, 1, f"field {fld.name!r} dimension size", at)

    def holds(self, tp: AtomicType | UserType, wanted: CompoundType, seen: set[int]) -> bool:
        """Whether ``tp`` is ``wanted`` or holds it in a field or as a vlen's base, at any
        depth (``seen``: the types already walked in this search, each walked once)."""
        if tp is wanted:
            return True
        if isinstance(tp, AtomicType | EnumType | OpaqueType) or id(tp) in seen:
            return False
        seen.add(id(tp))
        scope = tp.group or self.dataset
        assert isinstance(tp, VlenType | CompoundType)
        refs = [tp.base] if isinstance(tp, VlenType) else [f.type for f in tp.fields]
        return any((found := self.lookup(scope, ref)) is not None and self.holds(found, wanted, seen) for ref in refs)

    def enum(self, tp: EnumType, group: Group) -> None:
        base = self.type_ref(tp, group, tp.base)
        integer_base = isinstance(base, AtomicType) and base.is_integer
        if base is not None and not integer_base:
            self.error(tp, f"enum base type {type_label(base)} is not an integer type")
        if not tp.members:
            self.error(tp, "enum type has no member")
        self.part_names(tp, tp.members, "member")
        values: set[int] = set()
        for member in tp.members:
            at = member.position
            if isinstance(base, AtomicType) and integer_base and not fits_atomic(member.value, base):
                message = f"member {member.name!r} value {member.value!r} does not fit {base}"
                self.error(tp, message, at)
            elif member.value in values:
                self.error(tp, f"member value {member.value!r} is used twice", at)
            values.add(member.value)


def _all_fit(values: Sequence[object], tp: AtomicType) -> bool:
    """A quick yes for the common lists of plain ints, floats or strs; False means: look."""
    if tp.low is not None and tp.high is not None:
        ints = [v for v in values if type(v) is int]
        return len(ints) == len(values) and tp.low <= min(ints) and max(ints) <= tp.high
    if tp is AtomicType.DOUBLE:
        return all(type(v) is float for v in values)
    if tp is AtomicType.FLOAT:  # NaN and infinities fit; large finite values need a look
        return all(type(v) is float and (-_FLT_MAX <= v <= _FLT_MAX or v != v) for v in values)
    if tp is AtomicType.STRING:
        return all(type(v) is str or v is None for v in values)
    return False


def fits_atomic(value: object, tp: AtomicType) -> bool:
    """Whether a Python value is a value of an atomic type (300 is not a byte)."""
    if tp.low is not None and tp.high is not None:
        if type(value) is int:
            return tp.low <= value <= tp.high
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):  # bool: no integer
            return tp.low <= int(value) <= tp.high
        return False
    if tp.is_float:
        if type(value) is float and tp is AtomicType.DOUBLE:
            return True
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            return False
        try:
            struct.pack(_FLOAT_FORMATS[tp], value)  # fails when it would round to infinity
        except (OverflowError, struct.error):  # struct.error: an int too large for a double
            return False
        return True
    if tp is AtomicType.CHAR:
        return isinstance(value, str) and len(value) == 1
    return isinstance(value, str) or value is None  # None: a NULL string (CDL's NIL)
