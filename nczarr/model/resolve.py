"""Resolve dimension and type references with netCDF-4 scoping.

A reference that starts with ``/`` is an absolute FQN. Any other reference is a plain name,
looked up in the referring node's group and then in each ancestor group, nearest first.
When a group holds several nodes of one name, the first one counts.
"""

from __future__ import annotations

from nczarr.model.fqn import split_fqn
from nczarr.model.nodes import Dimension, Group, Node, UserType

_Table = dict[str, Node]


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
