"""Resolving dimension and type references with netCDF-4 scoping."""

import pytest

from nczarr.model import (
    AtomicType,
    Dataset,
    Dimension,
    FQNError,
    Resolver,
    resolve_dimension,
    resolve_type,
)


def tree() -> Dataset:
    dataset = Dataset()
    dataset.add_dimension("time", 10)
    dataset.add_dimension("x", 1)
    dataset.add_vlen("t", AtomicType.INT)
    outer = dataset.add_group("outer")
    outer.add_dimension("x", 2)
    inner = outer.add_group("inner")
    inner.add_dimension("y", 3)
    inner.add_dimension("y", 4)  # a duplicate: the first one counts
    dataset.add_group("other").add_dimension("z", 5)
    return dataset


def test_a_plain_name_is_looked_up_in_the_group_then_its_ancestors() -> None:
    dataset = tree()
    inner = dataset.groups[0].groups[0]
    assert resolve_dimension(inner, "y") is inner.dimensions[0]
    assert resolve_dimension(inner, "x") is dataset.groups[0].dimensions[0]  # nearest first
    assert resolve_dimension(inner, "time") is dataset.dimensions[0]
    assert resolve_dimension(dataset, "x") is dataset.dimensions[1]


def test_a_plain_name_is_not_looked_up_in_other_groups() -> None:
    dataset = tree()
    assert resolve_dimension(dataset.groups[0], "z") is None
    assert resolve_dimension(dataset, "y") is None


def test_an_fqn_is_absolute() -> None:
    dataset = tree()
    inner = dataset.groups[0].groups[0]
    assert resolve_dimension(inner, "/other/z") is dataset.groups[1].dimensions[0]
    assert resolve_dimension(dataset.groups[1], "/outer/inner/y") is inner.dimensions[0]
    assert resolve_dimension(inner, "/x") is dataset.dimensions[1]
    assert resolve_dimension(inner, "/outer/x") is dataset.groups[0].dimensions[0]


def test_an_fqn_to_nothing_resolves_to_none() -> None:
    dataset = tree()
    assert resolve_dimension(dataset, "/") is None
    assert resolve_dimension(dataset, "/nope/x") is None
    assert resolve_dimension(dataset, "/outer/nope/y") is None
    assert resolve_dimension(dataset, "/outer/z") is None


def test_types_resolve_like_dimensions_in_their_own_namespace() -> None:
    dataset = tree()
    inner = dataset.groups[0].groups[0]
    assert resolve_type(inner, "t") is dataset.types[0]
    assert resolve_type(inner, "/t") is dataset.types[0]
    assert resolve_type(inner, "time") is None


def test_a_malformed_fqn_raises() -> None:
    with pytest.raises(FQNError, match="has an empty name"):
        resolve_dimension(tree(), "/outer//x")


def test_a_resolver_indexes_each_group_once() -> None:
    dataset = tree()
    resolver = Resolver()
    assert resolver.dimension(dataset, "x") is dataset.dimensions[1]
    dataset.dimensions.insert(0, Dimension("x", 99))
    # The index of the root group was built before the change.
    assert resolver.dimension(dataset, "x").size == 1  # type: ignore[union-attr]
    assert Resolver().dimension(dataset, "x").size == 99  # type: ignore[union-attr]
    assert resolver.group(dataset, ["outer", "inner"]) is dataset.groups[0].groups[0]
    assert resolver.group(dataset, ["inner"]) is None
    assert resolver.group(dataset, ["nope", "inner"]) is None
