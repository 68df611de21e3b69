"""The tree's nodes: builders, parents, FQNs, equality, look-ups."""

import math

import pytest

from nczarr.model import (
    AtomicType,
    Attribute,
    CompoundType,
    DataModel,
    Dataset,
    Dimension,
    EnumMember,
    EnumType,
    Field,
    Group,
    OpaqueType,
    Variable,
    VlenType,
)


def sample() -> Dataset:
    dataset = Dataset("ignored name")
    dataset.add_dimension("time", unlimited=True)
    dataset.add_attribute("title", AtomicType.CHAR, "a title")
    group = dataset.add_group("a b")
    group.add_dimension("x/y", 3)
    obs = group.add_compound("obs_t")
    obs.add_field("position", AtomicType.FLOAT, (3,))
    group.add_enum("cloud_t", AtomicType.UBYTE, {"clear": 0, "cloudy": 1})
    group.add_opaque("blob_t", 16)
    group.add_vlen("ragged_t", AtomicType.INT)
    variable = group.add_variable("v\\w", AtomicType.DOUBLE, ["/time", "x/y", 4])
    variable.add_attribute("units", AtomicType.STRING, ["m"])
    group.add_group("inner")
    return dataset


def test_builders_set_parents_and_kinds() -> None:
    dataset = sample()
    group = dataset.groups[0]
    variable = group.variables[0]
    assert dataset.dimensions[0].parent is dataset
    assert dataset.attributes[0].parent is dataset
    assert group.parent is dataset
    assert [t.parent for t in group.types] == [group] * 4
    assert variable.parent is group
    assert variable.attributes[0].parent is variable
    assert [type(t) for t in group.types] == [CompoundType, EnumType, OpaqueType, VlenType]
    assert group.types[1].members == [EnumMember("clear", 0), EnumMember("cloudy", 1)]
    assert group.types[0].fields == [Field("position", AtomicType.FLOAT, (3,))]
    assert variable.dimensions == ["/time", "x/y", 4]
    assert dataset.zarr_version == "3" and dataset.data_model is DataModel.ENHANCED


def test_fqns_ignore_the_dataset_name_and_escape_names() -> None:
    dataset = sample()
    group = dataset.groups[0]
    assert dataset.fqn == "/"
    assert dataset.dimensions[0].fqn == "/time"
    assert dataset.attributes[0].fqn == "/:title"
    assert group.fqn == "/a\\ b"
    assert group.dimensions[0].fqn == "/a\\ b/x\\/y"
    assert group.types[0].fqn == "/a\\ b/obs_t"
    assert group.variables[0].fqn == "/a\\ b/v\\\\w"
    assert group.variables[0].attributes[0].fqn == "/a\\ b/v\\\\w:units"
    assert group.groups[0].fqn == "/a\\ b/inner"


def test_a_detached_node_is_its_own_roots_child() -> None:
    assert Variable("v", AtomicType.INT).fqn == "/v"
    assert Group("g").fqn == "/"
    assert Attribute("a", AtomicType.INT, [1]).fqn == ":a"


def test_group_of_a_node() -> None:
    dataset = sample()
    group = dataset.groups[0]
    assert group.variables[0].attributes[0].group is group
    assert group.group is dataset
    assert dataset.group is None
    assert group.groups[0].root is dataset


def test_constructor_children_get_their_parent() -> None:
    attribute = Attribute("a", AtomicType.INT, [1])
    variable = Variable("v", AtomicType.INT, [], [attribute])
    dimension = Dimension("d", 2)
    group = Group("g", dimensions=[dimension], variables=[variable])
    assert attribute.parent is variable
    assert variable.parent is group and dimension.parent is group


def test_equality_ignores_parent_and_position() -> None:
    one = sample()
    two = sample()
    two.groups[0].variables[0].position = (3, 4)
    assert one == two
    two.groups[0].variables[0].dimensions[2] = 5
    assert one != two


def test_dataset_and_group_are_different() -> None:
    assert Dataset("g") != Group("g")


def test_attribute_equality_treats_nan_as_equal() -> None:
    nan = float("nan")
    first = Attribute("a", AtomicType.DOUBLE, [nan, 1.0, (nan, [nan])])
    second = Attribute("a", AtomicType.DOUBLE, [float("nan"), 1.0, (math.nan, [math.nan])])
    assert first == second
    assert first != Attribute("a", AtomicType.DOUBLE, [0.0, 1.0, (math.nan, [math.nan])])
    assert first != Attribute("b", AtomicType.DOUBLE, [nan, 1.0, (nan, [nan])])
    assert (first == "a") is False


def test_nodes_are_not_hashable() -> None:
    with pytest.raises(TypeError):
        hash(Attribute("a", AtomicType.INT, [1]))


def test_lookups_return_the_first_match_or_none() -> None:
    dataset = sample()
    group = dataset.groups[0]
    first = group.add_dimension("x/y", 5)
    assert group.find_dimension("x/y") is group.dimensions[0] is not first
    assert group.find_type("cloud_t") is group.types[1]
    assert group.find_variable("v\\w") is group.variables[0]
    assert group.find_group("inner") is group.groups[0]
    assert group.variables[0].find_attribute("units") is group.variables[0].attributes[0]
    assert group.find_dimension("nope") is None
    assert dataset.find_attribute("nope") is None


def test_walk_visits_groups_depth_first_in_order() -> None:
    dataset = Dataset()
    a = dataset.add_group("a")
    a1 = a.add_group("a1")
    b = dataset.add_group("b")
    assert list(dataset.walk()) == [dataset, a, a1, b]
    assert [g.name for g in dataset.walk()] == ["", "a", "a1", "b"]


def test_add_puts_each_node_in_its_list() -> None:
    group = Group("g")
    nodes = [
        Dimension("d", 1),
        VlenType("t", AtomicType.INT),
        Variable("v", AtomicType.INT),
        Attribute("a", AtomicType.INT, [1]),
        Group("s"),
    ]
    for node in nodes:
        assert group.add(node) is node
        assert node.parent is group
    assert group == Group("g", [nodes[0]], [nodes[1]], [nodes[2]], [nodes[3]], [nodes[4]])


def test_add_refuses_what_a_group_cannot_hold() -> None:
    with pytest.raises(TypeError, match="a group cannot hold"):
        Group("g").add(Field("f", AtomicType.INT))  # type: ignore[type-var]


def test_atomic_types() -> None:
    assert AtomicType("uint64") is AtomicType.UINT64
    assert (AtomicType.BYTE.low, AtomicType.BYTE.high) == (-128, 127)
    assert (AtomicType.UINT64.low, AtomicType.UINT64.high) == (0, 2**64 - 1)
    assert [t.value for t in AtomicType if t.in_classic_model] == [
        "byte", "short", "int", "float", "double", "char"
    ]
    assert [t.value for t in AtomicType if t.is_float] == ["float", "double"]
    assert sum(t.is_integer for t in AtomicType) == 8
    assert [t.value for t in AtomicType if not t.is_fixed_size] == ["string"]
    assert str(AtomicType.DOUBLE) == "double"
