"""Tree → store → tree is the identity, for every convention and every tree it can hold.

Trees are drawn with the model builders: groups nested up to three deep, dimensions (fixed,
unlimited where the convention keeps them, anonymous), variables of every type the
convention holds (user-defined types for NCZARR) referring to dimensions of their group and
of its ancestors, attributes of every type with edge values (NaN, infinities, extreme
integers, empty and unicode text). Attribute values must come back with their exact Python
types, not just equal values.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nczarr.formats import convention
from nczarr.formats.attributes import as_netcdf_c_writes
from nczarr.formats.session import Session
from nczarr.formats.tree import raw_fqn
from nczarr.model import (
    AtomicType,
    CompoundType,
    Dataset,
    EnumType,
    Group,
    OpaqueType,
    Resolver,
    UserType,
    VlenType,
    join_fqn,
)
from nczarr.store import MemoryStore
from nczarr.values.types import float32

NUMERIC = [t for t in AtomicType if t.is_integer or t.is_float]
NAME_CHARS = "abxyzAZé☃_ .:-0"
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def names(taken: set[str]) -> st.SearchStrategy[str]:
    """Legal netCDF names not in ``taken``: a letter first, no trailing blank."""
    return (
        st.text(NAME_CHARS, min_size=1, max_size=6)
        .map(lambda s: "n" + s.rstrip())
        .filter(lambda s: s not in taken)
    )


def text() -> st.SearchStrategy[str]:
    return st.text(st.characters(exclude_categories=("Cs",)), max_size=8)


def atomic_values(draw: Any, type: AtomicType, count: int) -> list[Any] | str:
    if type is AtomicType.CHAR:
        return draw(text())
    if type is AtomicType.STRING:
        return draw(st.lists(text(), min_size=count, max_size=count))
    if type is AtomicType.FLOAT:
        return draw(st.lists(st.floats(width=32).map(float32), min_size=count, max_size=count))
    if type is AtomicType.DOUBLE:
        return draw(st.lists(st.floats(), min_size=count, max_size=count))
    ints = st.integers(type.low, type.high)
    edges = st.sampled_from([type.low, type.high, 0])
    return draw(st.lists(ints | edges, min_size=count, max_size=count))


def _ref(node: Any, scope: Group, resolver: Resolver, kind: str) -> str:
    """The canonical reference to a dimension or type: its name when that resolves to it."""
    found = resolver.dimension(scope, node.name) if kind == "dimension" else resolver.type(scope, node.name)
    if found is node:
        return node.name
    return join_fqn(raw_fqn(node).split("/")[1:])


def _visible(group: Group, attr: str) -> list[Any]:
    nodes: list[Any] = []
    scope: Group | None = group
    while scope is not None:
        nodes.extend(getattr(scope, attr))
        scope = scope.group
    return nodes


def fill_value(draw: Any, type: AtomicType) -> list[Any] | str:
    """A ``_FillValue``: one value (char: one Latin-1 character)."""
    if type is AtomicType.CHAR:
        return draw(st.characters(max_codepoint=255))
    return atomic_values(draw, type, 1)


@st.composite
def user_types(draw: Any, group: Group, taken: set[str]) -> None:
    for kind in draw(st.lists(st.sampled_from(["enum", "opaque", "compound", "vlen"]), max_size=3)):
        name = draw(names(taken))
        taken.add(name)
        if kind == "enum":
            base = draw(st.sampled_from([t for t in NUMERIC if t.is_integer]))
            values = draw(st.lists(st.integers(base.low, base.high), min_size=1, max_size=3, unique=True))
            group.add_enum(name, base, {f"m{i}": v for i, v in enumerate(values)})
        elif kind == "opaque":
            group.add_opaque(name, draw(st.integers(1, 5)))
        elif kind == "compound":
            compound = group.add_compound(name)
            for i in range(draw(st.integers(1, 3))):
                shape = draw(st.sampled_from([(), (2,), (2, 3)]))
                compound.add_field(f"f{i}", draw(st.sampled_from(NUMERIC)), shape)
        else:
            group.add_vlen(name, draw(st.sampled_from(NUMERIC)))


def user_values(draw: Any, type: UserType, count: int) -> list[Any]:
    if isinstance(type, EnumType):
        return [draw(st.sampled_from([m.value for m in type.members])) for _ in range(count)]
    if isinstance(type, OpaqueType):
        return [draw(st.binary(min_size=type.size, max_size=type.size)) for _ in range(count)]
    if isinstance(type, VlenType):
        return [atomic_values(draw, type.base, draw(st.integers(0, 3))) for _ in range(count)]  # type: ignore[arg-type]
    assert isinstance(type, CompoundType)
    out = []
    for _ in range(count):
        record = []
        for f in type.fields:
            values = atomic_values(draw, f.type, math.prod(f.shape))  # type: ignore[arg-type]
            record.append(values if f.shape else values[0])
        out.append(tuple(record))
    return out


@st.composite
def attributes(draw: Any, owner: Any, types: list[Any], scope: Group, resolver: Resolver) -> None:
    taken: set[str] = set()
    for _ in range(draw(st.integers(0, 3))):
        name = draw(names(taken))
        taken.add(name)
        type = draw(st.sampled_from(types))
        count = draw(st.integers(1, 3))
        if isinstance(type, AtomicType):
            owner.add_attribute(name, type, atomic_values(draw, type, count))
        else:
            owner.add_attribute(name, _ref(type, scope, resolver, "type"), user_values(draw, type, count))


@st.composite
def nczarr_trees(draw: Any, zarr_version: str, with_user_types: bool) -> Dataset:
    """A tree for NCZARR_V2 (atomic types) or NCZARR (user types too)."""
    dataset = Dataset("", zarr_version=zarr_version)

    def fill(group: Group, depth: int) -> None:
        taken: set[str] = set()
        dims: set[str] = set()
        for _ in range(draw(st.integers(0, 2))):
            name = draw(names(dims))
            dims.add(name)
            unlimited = draw(st.booleans())
            group.add_dimension(name, draw(st.integers(0 if unlimited else 1, 4)), unlimited)
        if with_user_types:
            draw(user_types(group, taken))
        for _ in range(draw(st.integers(0, 3))):
            resolver = Resolver()
            name = draw(names(taken))
            taken.add(name)
            types: list[Any] = [*AtomicType, *(_visible(group, "types"))]
            type = draw(st.sampled_from(types))
            ref = type if isinstance(type, AtomicType) else _ref(type, group, resolver, "type")
            visible = _visible(group, "dimensions")
            refs = draw(st.lists(st.sampled_from(visible), max_size=3)) if visible else []
            dimensions = [_ref(d, group, resolver, "dimension") for d in refs]
            dimensions += draw(st.lists(st.integers(1, 3), max_size=1))  # anonymous
            variable = group.add_variable(name, ref, dimensions)
            if isinstance(type, AtomicType) and draw(st.booleans()):
                variable.add_attribute("_FillValue", type, fill_value(draw, type))
            draw(attributes(variable, types, group, resolver))
        draw(attributes(group, [*AtomicType, *(_visible(group, "types"))], group, Resolver()))
        if depth < 2:
            for _ in range(draw(st.integers(0, 2))):
                name = draw(names(taken))
                taken.add(name)
                fill(group.add_group(name), depth + 1)

    fill(dataset, 0)
    return dataset


PURE_ATTRIBUTE_TYPES = [AtomicType.CHAR, AtomicType.INT, AtomicType.DOUBLE]


@st.composite
def pure_trees(draw: Any, zarr_version: str) -> Dataset:
    """A tree pure Zarr can hold: what reading finds in such a store. Variables and groups
    sorted by name; each dimension defined where its first user (in reading order) is,
    unless an ancestor has one of that name; no unlimited dimensions; attributes
    of the types inference gives (char, int, double)."""
    dataset = Dataset("", zarr_version=zarr_version)

    def fill(group: Group, depth: int) -> None:
        taken: set[str] = set()
        variable_names = sorted(draw(st.sets(names(set()), max_size=3)))
        taken.update(variable_names)
        for name in variable_names:
            type = draw(st.sampled_from(list(AtomicType)))
            axes = draw(
                st.lists(
                    st.tuples(st.sampled_from(["x", "y", "ü z"]), st.integers(1, 3)),
                    max_size=3,
                    unique_by=lambda a: a[0],
                )
            )
            refs: list[Any] = []
            for dim_name, size in axes:
                # a new dimension never hides one of an ancestor: references made
                # earlier would then name another dimension
                if not any(d.name == dim_name for d in _visible(group, "dimensions")):
                    group.add_dimension(dim_name, size)
                refs.append(dim_name)
            refs += draw(st.lists(st.integers(1, 3), max_size=1))  # anonymous
            variable = group.add_variable(name, type, refs)
            draw(attributes(variable, PURE_ATTRIBUTE_TYPES, group, Resolver()))
        draw(attributes(group, PURE_ATTRIBUTE_TYPES, group, Resolver()))
        if depth < 2:
            for name in sorted(draw(st.sets(names(taken), max_size=2))):
                fill(group.add_group(name), depth + 1)

    fill(dataset, 0)
    return dataset


def round_trip(tree: Dataset, name: str) -> Dataset:
    store = MemoryStore()
    Session.create(store, tree, convention(name)).close()
    return convention(name).read(store).dataset


def assert_same(read: Dataset, tree: Dataset) -> None:
    assert read == tree
    for got_group, want_group in zip(read.walk(), tree.walk()):
        for got_owner, want_owner in zip(
            [got_group, *got_group.variables], [want_group, *want_group.variables]
        ):
            for got, want in zip(got_owner.attributes, want_owner.attributes):
                assert _types(got.values) == _types(want.values), got.fqn


def _types(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return type(value).__name__, [_types(v) for v in value]
    return type(value).__name__


def as_netcdf_c_writes_it(tree: Dataset) -> Dataset:
    """The tree with text as netcdf-c writes it to Zarr v2: each text up to its first NUL."""
    expected = copy.deepcopy(tree)
    for group in expected.walk():
        for owner in (group, *group.variables):
            for attribute in owner.attributes:
                if isinstance(attribute.type, AtomicType):
                    attribute.values = as_netcdf_c_writes(attribute.type, attribute.values)
    return expected


@SETTINGS
@given(nczarr_trees("2", with_user_types=False))
def test_nczarr_v2_round_trip(tree: Dataset) -> None:
    assert_same(round_trip(tree, "NCZARR_V2"), as_netcdf_c_writes_it(tree))


@SETTINGS
@given(nczarr_trees("3", with_user_types=True))
def test_nczarr_round_trip(tree: Dataset) -> None:
    assert_same(round_trip(tree, "NCZARR"), tree)


@SETTINGS
@given(pure_trees("3"))
def test_zarr_round_trip(tree: Dataset) -> None:
    assert_same(round_trip(tree, "ZARR"), tree)


@SETTINGS
@given(pure_trees("2"))
def test_zarr_v2_round_trip(tree: Dataset) -> None:
    assert_same(round_trip(tree, "ZARR_V2"), as_netcdf_c_writes_it(tree))


def test_float_attributes_keep_float32_values() -> None:
    """A float attribute is a float32: what comes back is its shortest decimal."""
    tree = Dataset("", zarr_version="2")
    tree.add_attribute("f", AtomicType.FLOAT, [0.1, float(np.float32(1 / 3)), -0.0])
    got = round_trip(tree, "NCZARR_V2").find_attribute("f").values
    assert got == [0.1, 0.33333334, -0.0] and math.copysign(1, got[2]) == -1
