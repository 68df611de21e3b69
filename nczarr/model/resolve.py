"""Resolve dimension and type references with netCDF-4 scoping.

A reference that starts with ``/`` is an absolute FQN. Any other reference is a plain name,
looked up in the referring node's group and then in each ancestor group, nearest first.
When a group holds several nodes of one name, the first one counts.
"""

from __future__ import annotations

from nczarr.model.fqn import split_fqn
from nczarr.model.nodes import Dimension, Group, Node, UserType

_Table = dict[str, Node]

#: How netcdf-c names a dimension that an array (or a tree, by an int reference) does not
#: name: ``_Anonymous_Dim_<length>``, a dimension of the root group.
ANONYMOUS_PREFIX = "_Anonymous_Dim_"


class Resolver:
    """Resolves references in one tree, indexing each group's names the first time it is
    searched; build a new one after changing the tree."""

    def __init__(self) -> None:
        self._dimensions: dict[int, _Table] = {}
        self._types: dict[int, _Table] = {}
        self._groups: dict[int, _Table] = {}

    def dimension(self, scope: Group, ref: str) -> Dimension | None:
        """The dimension ``ref`` names, seen from group ``scope``; None if none.

        Raises FQNError when ``ref`` is a malformed FQN.
        """
        found = self._resolve(scope, ref, self._dimensions, "dimensions")
        return found if isinstance(found, Dimension) else None

    def type(self, scope: Group, ref: str) -> UserType | None:
        """The user type ``ref`` names, seen from group ``scope``; None if none.

        Raises FQNError when ``ref`` is a malformed FQN.
        """
        found = self._resolve(scope, ref, self._types, "types")
        return found if isinstance(found, UserType) else None

    def group(self, root: Group, names: list[str]) -> Group | None:
        """The group reached from ``root`` through subgroup ``names``; None if none."""
        group: Group | None = root
        for name in names:
            if group is None:
                return None
            found = self._table(self._groups, group, "groups").get(name)
            group = found if isinstance(found, Group) else None
        return group

    def _resolve(
        self, scope: Group, ref: str, cache: dict[int, _Table], attr: str
    ) -> Node | None:
        if ref.startswith("/"):
            names = split_fqn(ref)
            if not names:
                return None
            holder = self.group(scope.root, names[:-1])
            return None if holder is None else self._table(cache, holder, attr).get(names[-1])
        group: Group | None = scope
        while group is not None:
            found = self._table(cache, group, attr).get(ref)
            if found is not None:
                return found
            group = group.group  # for a group: its parent group
        return None

    @staticmethod
    def _table(cache: dict[int, _Table], group: Group, attr: str) -> _Table:
        table = cache.get(id(group))
        if table is None:
            # Reversed so that the first of several equal names wins.
            nodes = getattr(group, attr)
            table = cache[id(group)] = {node.name: node for node in reversed(nodes)}
        return table


def resolve_dimension(scope: Group, ref: str) -> Dimension | None:
    """The dimension ``ref`` names, seen from group ``scope`` (see :class:`Resolver`)."""
    return Resolver().dimension(scope, ref)


def resolve_type(scope: Group, ref: str) -> UserType | None:
    """The user type ``ref`` names, seen from group ``scope`` (see :class:`Resolver`)."""
    return Resolver().type(scope, ref)


def shortest_reference(node: Dimension | UserType, scope: Group, resolver: Resolver | None = None) -> str:
    """How group ``scope`` refers to ``node``: its plain name when that name resolves to it
    from ``scope`` (no nearer node of the name hides it), else its FQN."""
    finder = resolver or Resolver()
    found = finder.dimension(scope, node.name) if isinstance(node, Dimension) else finder.type(scope, node.name)
    return node.name if found is node else node.fqn


def anonymous_dimensions(root: Group) -> list[Dimension]:
    """The ``_Anonymous_Dim_<n>`` root dimensions that stand for the tree's anonymous
    dimensions (int references), in order of first use, as netcdf-c shows them."""
    sizes: dict[int, None] = {}
    for group in root.walk():
        for variable in group.variables:
            for ref in variable.dimensions:
                if isinstance(ref, int):
                    sizes[ref] = None
    return [Dimension(f"{ANONYMOUS_PREFIX}{n}", n) for n in sizes]


def name_anonymous(root: Group) -> None:
    """Give the tree's anonymous dimensions netcdf-c's names, for targets whose dimensions
    all have names (netCDF files): each int reference becomes a reference to the root
    dimension ``_Anonymous_Dim_<n>``, added when the root has none of that name (one it has
    of another length leaves the reference an int, for the target to report)."""
    named: dict[int, Dimension] = {}
    for dimension in anonymous_dimensions(root):
        found = root.find_dimension(dimension.name)
        if found is None:
            named[dimension.size] = root.add(dimension)
        elif found.size == dimension.size and not found.unlimited:
            named[dimension.size] = found
    resolver = Resolver()
    for group in root.walk():
        for variable in group.variables:
            variable.dimensions = [
                shortest_reference(named[ref], group, resolver) if isinstance(ref, int) and ref in named else ref
                for ref in variable.dimensions
            ]
