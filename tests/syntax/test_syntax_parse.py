"""Parsing model text into a tree."""

import math

from nczarr.model import (
    AtomicType as T,
)
from nczarr.model import (
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
from nczarr.syntax import parse


def body(text: str) -> Dataset:
    return parse("dataset zarr 3 {\n" + text + "\n}")


def test_the_header() -> None:
    assert parse("dataset zarr 3 {}") == Dataset("", zarr_version="3")
    tree = parse("dataset my\\ data zarr 2.0.0 classic { }")
    assert tree == Dataset("my data", zarr_version="2.0.0", data_model=DataModel.CLASSIC)
    assert parse("dataset d zarr 3 enhanced {}").data_model is DataModel.ENHANCED


def test_dimensions() -> None:
    tree = body("dimension x = 3 dimension t = unlimited dimension u = unlimited(12)")
    assert tree.dimensions == [
        Dimension("x", 3),
        Dimension("t", 0, True),
        Dimension("u", 12, True),
    ]


def test_variables_and_their_dimension_references() -> None:
    tree = body(
        "variable int scalar\n"
        "variable double empty()\n"
        "variable float v(x, /g/y, 10, \\10, 1d, /a\\ b/c\\{d\\})\n"
    )
    assert tree.variables == [
        Variable("scalar", T.INT),
        Variable("empty", T.DOUBLE),
        Variable("v", T.FLOAT, ["x", "/g/y", 10, "10", "1d", "/a\\ b/c{d}"]),
    ]


def test_attributes_of_groups_and_variables() -> None:
    tree = body(
        'variable float v { attribute string units = "K" attribute int n = 1, 2 }\n'
        "variable int w {}\n"
        "attribute double g = 1.5"
    )
    assert tree.variables[0].attributes == [
        Attribute("units", T.STRING, ["K"]),
        Attribute("n", T.INT, [1, 2]),
    ]
    assert tree.variables[1].attributes == []
    assert tree.attributes == [Attribute("g", T.DOUBLE, [1.5])]
    assert tree.variables[0].attributes[0].parent is tree.variables[0]


def test_constants() -> None:
    tree = body(
        "attribute double a = 1, -2, +3, 1.5, -.5e3, 2e10, 1E-2, nan, NaN, -inf, +Infinity, 0.\n"
        'attribute string s = "", "a\\"b", "\\\\", "\\n\\r\\t",\n'
        '    "\\x41\\u00e9\\U0001F600", "é#{}"\n'
        "attribute o o = 0x, 0x00Ff\n"
        "attribute c c = {1, [2, 3], {}}, [], [{}]"
    )
    values = [a.values for a in tree.attributes]
    assert values[0][:7] == [1, -2, 3, 1.5, -500.0, 2e10, 0.01]
    assert [type(v) for v in values[0][:3]] == [int, int, int]
    assert math.isnan(values[0][7]) and math.isnan(values[0][8])
    assert values[0][9:] == [-math.inf, math.inf, 0.0]
    assert values[1] == ["", 'a"b', "\\", "\n\r\t", "Aé\U0001f600", "é#{}"]
    assert values[2] == [b"", b"\x00\xff"]
    assert values[3] == [(1, [2, 3], ()), [], [()]]


def test_char_text_pieces_are_joined() -> None:
    tree = body('attribute char c = "ab", "cd" attribute char e = "" attribute char n = "a", 1')
    assert [a.values for a in tree.attributes] == ["abcd", "", ["a", 1]]


def test_an_attribute_without_values_parses() -> None:
    tree = body("attribute int a =\nattribute char b =")
    assert [a.values for a in tree.attributes] == [[], []]


def test_user_types() -> None:
    tree = body(
        "compound c { field double t field float p(3) field short f(2, 2) field /o raw }\n"
        "compound empty {}\n"
        "enum ubyte e { a = 0, b = 255 }\n"
        "enum int none {}\n"
        "opaque o(16)\n"
        "vlen c v\n"
    )
    assert tree.types == [
        CompoundType(
            "c",
            [
                Field("t", T.DOUBLE),
                Field("p", T.FLOAT, (3,)),
                Field("f", T.SHORT, (2, 2)),
                Field("raw", "/o"),
            ],
        ),
        CompoundType("empty"),
        EnumType("e", T.UBYTE, [EnumMember("a", 0), EnumMember("b", 255)]),
        EnumType("none", T.INT),
        OpaqueType("o", 16),
        VlenType("v", "c"),
    ]


def test_every_atomic_type() -> None:
    text = "\n".join(f"variable {t.value} v_{t.value}" for t in T)
    assert [v.type for v in body(text).variables] == list(T)


def test_groups_nest() -> None:
    tree = body("group a { group b { dimension x = 1 } variable int v } attribute int z = 1")
    assert tree.groups == [
        Group("a", variables=[Variable("v", T.INT)], groups=[Group("b", [Dimension("x", 1)])])
    ]
    assert tree.groups[0].groups[0].dimensions[0].fqn == "/a/b/x"
    assert tree.groups[0].parent is tree


def test_declarations_may_come_in_any_order() -> None:
    tree = body("attribute int a = 1 variable int v group g {} dimension d = 1 opaque o(1)")
    assert [len(tree.attributes), len(tree.variables), len(tree.groups)] == [1, 1, 1]
    assert [len(tree.dimensions), len(tree.types)] == [1, 1]


def test_keywords_are_names_where_no_keyword_can_stand() -> None:
    tree = body(
        "dimension dimension = 1\n"
        "variable int variable(dimension) { attribute int attribute = 1 }\n"
        "group group {}\n"
        "opaque int(1)\n"
        "variable \\int x\n"
        "variable int nan\n"
    )
    assert tree.dimensions[0].name == "dimension"
    assert tree.variables[0] == Variable(
        "variable", T.INT, ["dimension"], [Attribute("attribute", T.INT, [1])]
    )
    assert tree.groups[0].name == "group"
    assert tree.types[0].name == "int"
    assert tree.variables[1].type == "int"  # the user type, not the atomic one
    assert tree.variables[2].name == "nan"
    assert parse("dataset \\zarr zarr 3 {}").name == "zarr"


def test_escapes_in_names() -> None:
    tree = body("variable int a\\ b\\/c\\\\d\\{\\}\\#\\1é")
    assert tree.variables[0].name == "a b/c\\d{}#1é"


def test_comments_and_blanks() -> None:
    tree = parse("# first\n\tdataset # here\n d zarr 3 {  # there\n}  # end\n# last")
    assert tree == Dataset("d")


def test_nodes_know_the_position_of_their_name() -> None:
    tree = parse(
        "dataset d zarr 3 {\n"
        "    dimension x = 1\n"
        "    variable int v(x) {\n"
        "        attribute int a = 1\n"
        "    }\n"
        "    compound c { field int f }\n"
        "    enum int e { m = 1 }\n"
        "  group g {}\n"
        "}"
    )
    assert tree.position == (1, 9)
    assert tree.dimensions[0].position == (2, 15)
    assert tree.variables[0].position == (3, 18)
    assert tree.variables[0].attributes[0].position == (4, 23)
    compound, enum = tree.types
    assert compound.position == (6, 14)
    assert compound.fields[0].position == (6, 28)  # type: ignore[attr-defined]
    assert enum.position == (7, 14)
    assert enum.members[0].position == (7, 18)  # type: ignore[attr-defined]
    assert tree.groups[0].position == (8, 9)
    assert parse("\n dataset zarr 3 {}").position == (2, 15)
