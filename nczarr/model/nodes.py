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
from typing import Any, ClassVar, TypeVar, cast

from nczarr.model.fqn import escape_name, join_fqn
from nczarr.model.types import AtomicType, DataModel

Position = tuple[int, int]
"""A (line, column) pair, both counted from 1."""

TypeRef = AtomicType | str
DimRef = int | str
AttributeValue = Any
"""int, float, str, bytes (opaque), tuple (compound) or list (vlen, array field)."""

_N = TypeVar("_N", bound="Node")


class NodeList(list[_N]):
    """The children of one kind of a node: a list that also finds a child by name in constant
    time (a name scan per look-up made adding n attributes quadratic). The name index is built
    at the first look-up, kept up to date by appends and removals, and dropped by any other
    change and by the rename of a child (see :meth:`Node.__setattr__`)."""

    __slots__ = ("_index", "_shared_names")

    def __init__(self, nodes: Iterable[_N] = ()) -> None:
        super().__init__(nodes)
        self._index: dict[str, _N] | None = None
        self._shared_names = False  # whether two children of the index have one name

    def find(self, name: str) -> _N | None:
        """The first child with this name, or None."""
        index = self._index
        if index is None:
            index = {}
            for node in reversed(self):  # the first of duplicate names wins
                index[node.name] = node
            self._index = index
            self._shared_names = len(index) < len(self)
        return index.get(name)

    def forget(self) -> None:
        """Drop the name index: a child was renamed."""
        self._index = None

    def append(self, node: _N) -> None:
        super().append(node)
        if self._index is not None and self._index.setdefault(node.name, node) is not node:
            self._shared_names = True

    def remove(self, node: _N) -> None:
        super().remove(node)
        index = self._index
        if index is not None:  # kept: deleting attributes one by one must not rebuild it each time
            if not self._shared_names and index.get(node.name) is node:
                del index[node.name]
            else:
                self._index = None

    def __reduce__(self) -> tuple[type, tuple[list[_N]]]:  # copies and pickles carry no index
        return type(self), (list(self),)


def _forgetting(method: str) -> Any:
    """A list method that also drops the name index (it may move, replace or drop children)."""
    inner = getattr(list, method)

    def mutate(self: NodeList[Any], *args: Any, **kwargs: Any) -> Any:
        self._index = None
        return inner(self, *args, **kwargs)

    mutate.__name__ = method
    return mutate


for _method in (
    "extend", "insert", "pop", "clear", "sort", "reverse", "__setitem__", "__delitem__", "__iadd__", "__imul__"
):
    setattr(NodeList, _method, _forgetting(_method))
del _method


@dataclass
class Node:
    """A named node of the tree."""

    kind: ClassVar[str] = "node"
    #: The fields that hold child nodes, always as a :class:`NodeList`.
    child_lists: ClassVar[tuple[str, ...]] = ()

    name: str
    parent: Node | None = field(default=None, kw_only=True, compare=False, repr=False)
    position: Position | None = field(default=None, kw_only=True, compare=False, repr=False)

    def __setattr__(self, key: str, value: object, /) -> None:
        if key == "name":
            parent = self.__dict__.get("parent")
            if parent is not None:  # its lists find children by their old names
                for attr in parent.child_lists:
                    getattr(parent, attr).forget()
        elif key in self.child_lists and type(value) is not NodeList:
            value = NodeList(cast("Iterable[Node]", value))
        object.__setattr__(self, key, value)

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

    # The most numerous nodes skip Node.__setattr__ (a Python call per field set, a fifth of
    # reading a dataset's attributes): whoever renames an attribute calls ``forget()`` on the
    # attribute list of its parent.
    __setattr__ = object.__setattr__

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

    def add_attribute(self, name: str, type: TypeRef, values: list[AttributeValue] | str) -> Attribute:
        """Append a new attribute; ``values`` is a list, or a ``str`` for the char type."""
        attribute = Attribute(name, type, values, parent=cast(Node, self))  # a Group or Variable
        self.attributes.append(attribute)
        return attribute

    def find_attribute(self, name: str) -> Attribute | None:
        """The first attribute with this name, or None."""
        return _find(self.attributes, name)


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
    child_lists: ClassVar[tuple[str, ...]] = ("attributes",)

    type: TypeRef
    dimensions: list[DimRef] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=NodeList)

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
    child_lists: ClassVar[tuple[str, ...]] = ("dimensions", "types", "variables", "attributes", "groups")

    dimensions: list[Dimension] = field(default_factory=NodeList)
    types: list[UserType] = field(default_factory=NodeList)
    variables: list[Variable] = field(default_factory=NodeList)
    attributes: list[Attribute] = field(default_factory=NodeList)
    groups: list[Group] = field(default_factory=NodeList)

    def __post_init__(self) -> None:
        for attr in self.child_lists:
            _adopt(self, getattr(self, attr))

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
        return _find(self.dimensions, name)

    def find_type(self, name: str) -> UserType | None:
        """The first user type of this group with this name, or None."""
        return _find(self.types, name)

    def find_variable(self, name: str) -> Variable | None:
        """The first variable of this group with this name, or None."""
        return _find(self.variables, name)

    def find_group(self, name: str) -> Group | None:
        """The first subgroup with this name, or None."""
        return _find(self.groups, name)

    @property
    def root(self) -> Group:
        """The topmost group above this one (itself if it has no parent)."""
        group: Group = self
        while (parent := group.group) is not None:  # for a group: its parent group
            group = parent
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


def _find(nodes: list[_N], name: str) -> _N | None:
    return cast(NodeList[_N], nodes).find(name)  # Node.__setattr__ makes every child list one
