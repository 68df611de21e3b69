"""The tree: Dataset ▸ Group ▸ Dimension, Variable, Attribute and user-defined types.

Nodes are plain dataclasses. Two trees compare equal when their names, types, values and
children are equal; ``parent`` and ``position`` (line and column in a source text) take no
part in equality. Children are kept in lists, in insertion order, so that a tree may hold
duplicate names (parsed text can); the checks in :mod:`nczarr.model.checks` report them.

A type reference (:data:`TypeRef`) is an :class:`AtomicType` or a string naming a user type:
an FQN (escaped, see :mod:`nczarr.model.fqn`) if it starts with ``/``, otherwise the plain,
unescaped name of a type in the group of the referring node or one of its ancestors. A
dimension reference (:data:`DimRef`) is an int (an anonymous dimension of that size) or a
string read the same way as a type reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, Union

from nczarr.model.fqn import escape_name, join_fqn
from nczarr.model.types import AtomicType, DataModel

Position = tuple[int, int]
"""A (line, column) pair, both counted from 1."""

TypeRef = Union[AtomicType, str]
DimRef = Union[int, str]
AttributeValue = Any
"""int, float, str, bytes (opaque), tuple (compound) or list (vlen, array field)."""

_N = TypeVar("_N", bound="Node")


@dataclass
class Node:
    """A named node of the tree."""

    kind: ClassVar[str] = "node"

    name: str
    parent: Node | None = field(default=None, kw_only=True, compare=False, repr=False)
    position: Position | None = field(default=None, kw_only=True, compare=False, repr=False)

    @property
    def group(self) -> Group | None:
        """The group the node is defined in (for a group: its parent group)."""
        parent = self.parent
        while parent is not None and not isinstance(parent, Group):
            parent = parent.parent
        return parent

    @property
    def fqn(self) -> str:
        """The fully qualified name; the root group is ``/`` whatever the dataset's name."""
        names: list[str] = []
        node: Node = self
        while node.parent is not None:
            names.append(node.name)
            node = node.parent
        if not isinstance(node, Group):  # a detached node is its own root's only child
            names.append(node.name)
        return join_fqn(reversed(names))


@dataclass(eq=False)
class Attribute(Node):
    """A named, typed list of values attached to a group or a variable.

    ``values`` is a list of Python values of ``type``, except for the char type, whose value
    is one ``str``. Equality treats NaN as equal to NaN.
    """

    kind: ClassVar[str] = "attribute"

    type: TypeRef
    values: list[AttributeValue] | str

    @property
    def fqn(self) -> str:
        """The owner's FQN, a colon, and the escaped attribute name (``/g/v:units``)."""
        owner = "" if self.parent is None else self.parent.fqn
        return f"{owner}:{escape_name(self.name)}"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Attribute)
        return (
            self.name == other.name
            and self.type == other.type
            and _nan_aware(self.values) == _nan_aware(other.values)
        )


class _NaN:
    """Stands for every NaN when attribute values are compared."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NaN)


_NAN = _NaN()


def _nan_aware(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return _NAN
    if isinstance(value, (list, tuple)):
        return type(value)(map(_nan_aware, value))
    return value


class _AttributeOwner:
    """Builders and look-ups shared by groups and variables."""

    attributes: list[Attribute]

    def add_attribute(self, name: str, type: TypeRef, values: list[Any] | str) -> Attribute:
        """Append a new attribute; ``values`` is a list, or a ``str`` for the char type."""
        attribute = Attribute(name, type, values)
        attribute.parent = self  # type: ignore[assignment]
        self.attributes.append(attribute)
        return attribute

    def find_attribute(self, name: str) -> Attribute | None:
        """The first attribute with this name, or None."""
        return _first(self.attributes, name)


@dataclass
class Dimension(Node):
    """A named dimension; an unlimited one has its current length in ``size``."""

    kind: ClassVar[str] = "dimension"

    size: int = 0
    unlimited: bool = False


@dataclass
class Variable(Node, _AttributeOwner):
    """A typed array whose shape is given by dimension references (none: a scalar)."""

    kind: ClassVar[str] = "variable"

    type: TypeRef
    dimensions: list[DimRef] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=list)

    def __post_init__(self) -> None:
        _adopt(self, self.attributes)


@dataclass
class UserType(Node):
    """A user-defined type, defined in a group and referred to by name or FQN."""

    kind: ClassVar[str] = "type"


@dataclass
class Field:
    """A compound field: a fixed-size type, possibly an array of the given ``shape``."""

    name: str
    type: TypeRef
    shape: tuple[int, ...] = ()
    position: Position | None = field(default=None, kw_only=True, compare=False, repr=False)


@dataclass
class CompoundType(UserType):
    """A record of named fields, like a C struct."""

    kind: ClassVar[str] = "compound type"

    fields: list[Field] = field(default_factory=list)

    def add_field(self, name: str, type: TypeRef, shape: Iterable[int] = ()) -> Field:
        """Append a field; ``shape`` makes it an array field."""
        new = Field(name, type, tuple(shape))
        self.fields.append(new)
        return new


@dataclass
class EnumMember:
    """A named value of an enum type."""

    name: str
    value: int
    position: Position | None = field(default=None, kw_only=True, compare=False, repr=False)


@dataclass
class EnumType(UserType):
    """Named values of an integer base type."""

    kind: ClassVar[str] = "enum type"

    base: TypeRef
    members: list[EnumMember] = field(default_factory=list)


@dataclass
class OpaqueType(UserType):
    """Uninterpreted blobs of ``size`` bytes."""

    kind: ClassVar[str] = "opaque type"

    size: int


@dataclass
class VlenType(UserType):
    """Variable-length sequences of a base type."""

    kind: ClassVar[str] = "vlen type"

    base: TypeRef


@dataclass
class Group(Node, _AttributeOwner):
    """A group: dimensions, types, variables, attributes and subgroups."""

    kind: ClassVar[str] = "group"

    dimensions: list[Dimension] = field(default_factory=list)
    types: list[UserType] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    def __post_init__(self) -> None:
        for children in (self.dimensions, self.types, self.variables, self.attributes, self.groups):
            _adopt(self, children)

    def add(self, node: _N) -> _N:
        """Append a dimension, type, variable, attribute or group and make this its parent."""
        for cls, attr in _CHILD_LISTS:
            if isinstance(node, cls):
                getattr(self, attr).append(node)
                node.parent = self
                return node
        raise TypeError(f"a group cannot hold {node!r}")

    def add_group(self, name: str) -> Group:
        """Append a new empty subgroup."""
        return self.add(Group(name))

    def add_dimension(self, name: str, size: int = 0, unlimited: bool = False) -> Dimension:
        """Append a dimension; ``size`` is the current length of an unlimited one."""
        return self.add(Dimension(name, size, unlimited))

    def add_variable(
        self, name: str, type: TypeRef, dimensions: Iterable[DimRef] = ()
    ) -> Variable:
        """Append a variable with these dimension references (none for a scalar)."""
        return self.add(Variable(name, type, list(dimensions)))

    def add_compound(self, name: str, fields: Iterable[Field] = ()) -> CompoundType:
        """Append a compound type (add fields with :meth:`CompoundType.add_field`)."""
        return self.add(CompoundType(name, list(fields)))

    def add_enum(self, name: str, base: TypeRef, members: Mapping[str, int]) -> EnumType:
        """Append an enum type with these member names and values."""
        return self.add(EnumType(name, base, [EnumMember(k, v) for k, v in members.items()]))

    def add_opaque(self, name: str, size: int) -> OpaqueType:
        """Append an opaque type of ``size`` bytes."""
        return self.add(OpaqueType(name, size))

    def add_vlen(self, name: str, base: TypeRef) -> VlenType:
        """Append a vlen type of ``base`` elements."""
        return self.add(VlenType(name, base))

    def find_dimension(self, name: str) -> Dimension | None:
        """The first dimension of this group with this name, or None."""
        return _first(self.dimensions, name)

    def find_type(self, name: str) -> UserType | None:
        """The first user type of this group with this name, or None."""
        return _first(self.types, name)

    def find_variable(self, name: str) -> Variable | None:
        """The first variable of this group with this name, or None."""
        return _first(self.variables, name)

    def find_group(self, name: str) -> Group | None:
        """The first subgroup with this name, or None."""
        return _first(self.groups, name)

    @property
    def root(self) -> Group:
        """The topmost group above this one (itself if it has no parent)."""
        group = self
        while group.parent is not None:
            group = group.parent  # type: ignore[assignment]
        return group

    def walk(self) -> Iterator[Group]:
        """This group and all groups below it, depth first, in order."""
        stack = [self]
        while stack:
            group = stack.pop()
            yield group
            stack.extend(reversed(group.groups))


@dataclass
class Dataset(Group):
    """The root group, with the Zarr version and the data model the dataset follows."""

    name: str = ""
    zarr_version: str = "3"
    data_model: DataModel = DataModel.ENHANCED


_CHILD_LISTS: tuple[tuple[type, str], ...] = (
    (Dimension, "dimensions"),
    (UserType, "types"),
    (Variable, "variables"),
    (Attribute, "attributes"),
    (Group, "groups"),
)


def _adopt(parent: Node, children: Iterable[Node]) -> None:
    for child in children:
        child.parent = parent


def _first(nodes: Iterable[Any], name: str) -> Any:
    return next((node for node in nodes if node.name == name), None)
