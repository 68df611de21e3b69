"""The context-sensitive checks: one failing example per check, with its exact message."""

import unicodedata

import pytest

from nczarr.errors import NCZarrError
from nczarr.model import (
    AtomicType as T,
)
from nczarr.model import (
    Attribute,
    CompoundType,
    DataModel,
    Dataset,
    EnumMember,
    EnumType,
    Field,
    OpaqueType,
    Problem,
    ValidationError,
    Variable,
    VlenType,
    ensure_valid,
    fits_atomic,
    name_problem,
    validate,
)


def found(dataset: Dataset) -> list[tuple[str, str, str]]:
    return [(p.severity, p.fqn, p.message) for p in validate(dataset)]


def error(fqn: str, message: str) -> list[tuple[str, str, str]]:
    return [("error", fqn, message)]


def test_a_valid_tree_has_no_problem() -> None:
    dataset = Dataset("d")
    dataset.add_dimension("time", 0, unlimited=True)
    dataset.add_dimension("lat", 3)
    group = dataset.add_group("g")
    group.add_dimension("level", 2)
    variable = group.add_variable("t", T.FLOAT, ["time", "/lat", "level", 5])
    variable.add_attribute("units", T.STRING, ["K"])
    variable.add_attribute("_FillValue", T.FLOAT, [float("nan")])
    assert validate(dataset) == []
    assert ensure_valid(dataset) == []


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "name is empty"),
        ("a/b", "name 'a/b' contains '/'"),
        ("a\x01", "name 'a\\x01' contains a control character"),
        ("a\x7f", "name 'a\\x7f' contains a control character"),
        ("a\udc80", "name 'a\\udc80' is not valid Unicode"),
        ("-x", "name '-x' must start with a letter, a digit, '_' or a non-ASCII character"),
        (" x", "name ' x' must start with a letter, a digit, '_' or a non-ASCII character"),
        ("x ", "name 'x ' ends with a blank"),
        ("é" * 129, f"name {'é' * 129!r} is longer than 256 bytes in UTF-8"),
    ],
)
def test_illegal_names(name: str, message: str) -> None:
    assert name_problem(name) == message
    dataset = Dataset()
    dataset.add_dimension(name, 1)
    assert found(dataset) == error(dataset.dimensions[0].fqn, message)


@pytest.mark.parametrize(
    "name", ["x", "_x", "1x", "a b", "a.b-c+d@e", "été", "名前", "x" * 256]
)
def test_legal_names(name: str) -> None:
    assert name_problem(name) is None
    dataset = Dataset()
    dataset.add_variable(name, T.INT)
    assert validate(dataset) == []


def test_a_name_not_in_nfc_is_a_warning() -> None:
    dataset = Dataset()
    dataset.add_variable(unicodedata.normalize("NFD", "é"), T.INT)
    assert found(dataset) == [
        ("warning", "/e\u0301", "name 'e\u0301' is not in Unicode normalization form NFC")
    ]


def test_every_kind_of_name_is_checked() -> None:
    dataset = Dataset()
    group = dataset.add_group("g/")
    compound = group.add_compound("c/")
    compound.add_field("f/", T.INT)
    group.add_enum("e/", T.INT, {"m/": 1})
    group.add_variable("v/", T.INT).add_attribute("a/", T.INT, [1])
    assert found(dataset) == [
        ("error", "/g\\/", "name 'g/' contains '/'"),
        ("error", "/g\\//c\\/", "name 'c/' contains '/'"),
        ("error", "/g\\//c\\/", "name 'f/' contains '/'"),
        ("error", "/g\\//e\\/", "name 'e/' contains '/'"),
        ("error", "/g\\//e\\/", "name 'm/' contains '/'"),
        ("error", "/g\\//v\\/", "name 'v/' contains '/'"),
        ("error", "/g\\//v\\/:a\\/", "name 'a/' contains '/'"),
    ]


def test_the_dataset_name_is_not_checked() -> None:
    assert validate(Dataset("some/file name.nc ")) == []


# -- duplicates and case ------------------------------------------------------------------------


def test_two_dimensions_of_a_group_share_a_name() -> None:
    dataset = Dataset()
    dataset.add_dimension("x", 1)
    dataset.add_dimension("x", 2)
    assert found(dataset) == error("/x", "name 'x' is already used by dimension /x")


def test_a_dimension_and_a_variable_may_share_a_name() -> None:
    dataset = Dataset()
    dataset.add_dimension("x", 1)
    dataset.add_variable("x", T.INT, ["x"])  # a coordinate variable
    assert validate(dataset) == []


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("variable", "name 'x' is already used by opaque type /x"),
        ("group", "name 'x' is already used by opaque type /x"),
        ("type", "name 'x' is already used by opaque type /x"),
    ],
)
def test_variables_groups_and_types_share_one_namespace(second: str, message: str) -> None:
    dataset = Dataset()
    dataset.add_opaque("x", 1)
    if second == "variable":
        dataset.add_variable("x", T.INT)
    elif second == "group":
        dataset.add_group("x")
    else:
        dataset.add_opaque("x", 2)
    assert found(dataset) == error("/x", message)


def test_a_group_named_like_a_variable() -> None:
    dataset = Dataset()
    dataset.add_variable("x", T.INT)
    dataset.add_group("x")
    assert found(dataset) == error("/x", "name 'x' is already used by variable /x")


def test_two_attributes_of_one_owner_share_a_name() -> None:
    dataset = Dataset()
    variable = dataset.add_variable("v", T.INT)
    variable.add_attribute("a", T.INT, [1])
    variable.add_attribute("a", T.INT, [2])
    dataset.add_attribute("a", T.INT, [3])  # another owner: fine
    assert found(dataset) == error("/v:a", "name 'a' is already used by attribute /v:a")


def test_names_that_differ_only_in_case_are_a_warning() -> None:
    dataset = Dataset()
    dataset.add_variable("temp", T.INT)
    dataset.add_group("Temp")
    dataset.add_variable("TEMP", T.INT)
    dataset.add_dimension("temp", 1)
    assert found(dataset) == [
        ("warning", "/TEMP", "name 'TEMP' differs only in case from variable /temp"),
        ("warning", "/Temp", "name 'Temp' differs only in case from variable /temp"),
    ]


# -- references ---------------------------------------------------------------------------------


def test_a_dimension_reference_that_does_not_resolve() -> None:
    dataset = Dataset()
    dataset.add_group("a").add_dimension("x", 1)
    dataset.add_group("b").add_variable("v", T.INT, ["x", "/a/x"])
    assert found(dataset) == error("/b/v", "dimension reference 'x' does not resolve")


def test_a_malformed_dimension_reference() -> None:
    dataset = Dataset()
    dataset.add_variable("v", T.INT, ["/a//x"])
    assert found(dataset) == error(
        "/v", "dimension reference '/a//x' is malformed: FQN '/a//x' has an empty name"
    )


def test_a_type_reference_that_does_not_resolve() -> None:
    dataset = Dataset()
    dataset.add_group("g").add_vlen("t", T.INT)
    dataset.add_variable("v", "t")
    dataset.add_variable("w", "/g/t")
    assert found(dataset) == error("/v", "type reference 't' does not resolve")


def test_a_type_that_is_not_a_type() -> None:
    dataset = Dataset()
    dataset.add_variable("v", 3)  # type: ignore[arg-type]
    assert found(dataset) == error("/v", "3 is not a type")


# -- dimensions and the data models -----------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "unlimited", "message"),
    [
        (0, False, "dimension size must be at least 1, not 0"),
        (-1, True, "dimension size must be at least 0, not -1"),
    ],
)
def test_dimension_sizes(size: int, unlimited: bool, message: str) -> None:
    dataset = Dataset()
    dataset.add_dimension("d", size, unlimited)
    assert found(dataset) == error("/d", message)


def test_an_anonymous_dimension_of_size_zero() -> None:
    dataset = Dataset()
    dataset.add_variable("v", T.INT, [0])
    assert found(dataset) == error("/v", "anonymous dimension size must be at least 1, not 0")


def classic() -> Dataset:
    return Dataset(data_model=DataModel.CLASSIC)


def test_classic_model_allows_one_unlimited_dimension() -> None:
    dataset = classic()
    dataset.add_dimension("time", unlimited=True)
    dataset.add_dimension("step", unlimited=True)
    assert found(dataset) == error(
        "/step",
        "the classic data model allows one unlimited dimension, and /time is one already",
    )


def test_classic_model_wants_the_unlimited_dimension_first() -> None:
    dataset = classic()
    dataset.add_dimension("time", unlimited=True)
    dataset.add_dimension("x", 2)
    dataset.add_variable("ok", T.INT, ["time", "x"])
    dataset.add_variable("v", T.INT, ["x", "time"])
    assert found(dataset) == error(
        "/v", "unlimited dimension 'time' must be the first dimension in the classic data model"
    )


def test_the_enhanced_model_allows_several_unlimited_dimensions_anywhere() -> None:
    dataset = Dataset()
    dataset.add_dimension("time", unlimited=True)
    dataset.add_dimension("step", unlimited=True)
    dataset.add_variable("v", T.INT, ["step", "time"])
    assert validate(dataset) == []


def test_classic_model_has_no_groups_user_types_or_new_atomic_types() -> None:
    dataset = classic()
    dataset.add_group("g")
    dataset.add_opaque("o", 1)
    dataset.add_variable("v", T.UBYTE)
    dataset.add_attribute("a", T.STRING, ["x"])
    assert found(dataset) == [
        ("error", "/o", "the classic data model has no user-defined types"),
        ("error", "/v", "type ubyte is not in the classic data model"),
        ("error", "/:a", "type string is not in the classic data model"),
        ("error", "/g", "the classic data model has no groups"),
    ]


def test_the_zarr_version() -> None:
    assert validate(Dataset(zarr_version="2.0.0")) == []
    assert found(Dataset(zarr_version="4")) == error(
        "/", "Zarr version '4' is not supported; expected 2 or 3"
    )


# -- attributes -------------------------------------------------------------------------------


def with_attribute(tp: T | str, values: object) -> Dataset:
    dataset = Dataset()
    dataset.add_attribute("a", tp, values)  # type: ignore[arg-type]
    return dataset


def test_an_attribute_without_a_value() -> None:
    assert found(with_attribute(T.INT, [])) == error("/:a", "attribute has no value")
    assert found(with_attribute(T.CHAR, [])) == error("/:a", "attribute has no value")


@pytest.mark.parametrize(
    ("tp", "value", "shown"),
    [
        (T.BYTE, 300, "300"),
        (T.BYTE, -129, "-129"),
        (T.UBYTE, -1, "-1"),
        (T.USHORT, 65536, "65536"),
        (T.INT, 2**31, "2147483648"),
        (T.UINT64, 2**64, "18446744073709551616"),
        (T.INT, 1.5, "1.5"),
        (T.INT, 2.0, "2.0"),
        (T.INT, True, "True"),
        (T.INT, "1", "'1'"),
        (T.FLOAT, 1e39, "1e+39"),
        (T.FLOAT, "x", "'x'"),
        (T.DOUBLE, 10**400, str(10**400)),
        (T.DOUBLE, True, "True"),
        (T.STRING, 1, "1"),
        (T.STRING, b"x", "0x78"),
    ],
)
def test_a_value_that_does_not_fit_its_type(tp: T, value: object, shown: str) -> None:
    assert not fits_atomic(value, tp)
    assert found(with_attribute(tp, [value])) == error(
        "/:a", f"value {shown} does not fit {tp.value}"
    )


@pytest.mark.parametrize(
    ("tp", "values"),
    [
        (T.BYTE, [-128, 127]),
        (T.UINT64, [0, 2**64 - 1]),
        (T.FLOAT, [3.4e38, -3.4e38, float("nan"), float("inf"), 1]),
        (T.DOUBLE, [1.5, 2, float("-inf")]),
        (T.STRING, ["", "x"]),
    ],
)
def test_values_that_fit(tp: T, values: list[object]) -> None:
    assert validate(with_attribute(tp, values)) == []


def test_every_value_is_checked() -> None:
    assert found(with_attribute(T.BYTE, [300, 1, -300])) == [
        ("error", "/:a", "value 300 does not fit byte"),
        ("error", "/:a", "value -300 does not fit byte"),
    ]


def test_a_char_attribute_holds_one_text() -> None:
    assert validate(with_attribute(T.CHAR, "")) == []
    assert validate(with_attribute(T.CHAR, "été")) == []
    assert found(with_attribute(T.CHAR, ["a"])) == error(
        "/:a", "the value of a char attribute is one text, not ['a']"
    )


def test_other_attributes_hold_a_list() -> None:
    assert found(with_attribute(T.STRING, "abc")) == error(
        "/:a", "the values of an attribute are a list, not 'abc'"
    )


def user_types() -> Dataset:
    dataset = Dataset()
    dataset.add_enum("e", T.BYTE, {"a": 1})
    dataset.add_opaque("o", 2)
    dataset.add_vlen("v", T.UBYTE)
    compound = dataset.add_compound("c")
    compound.add_field("x", T.BYTE)
    compound.add_field("xs", T.SHORT, (2, 2))
    compound.add_field("o", "o")
    dataset.add_vlen("vc", "c")
    return dataset


@pytest.mark.parametrize(
    ("tp", "values"),
    [
        ("e", [1, 5]),  # a value of the base type need not be a member
        ("o", [b"ab"]),
        ("v", [[], [1, 255]]),
        ("c", [(1, [1, 2, 3, 4], b"xy")]),
        ("vc", [[(1, [1, 2, 3, 4], b"xy")], []]),
    ],
)
def test_values_of_user_types_that_fit(tp: str, values: list[object]) -> None:
    dataset = user_types()
    dataset.add_attribute("a", tp, values)
    assert validate(dataset) == []


@pytest.mark.parametrize(
    ("tp", "value", "message"),
    [
        ("e", 300, "value 300 does not fit enum type /e"),
        ("o", b"abc", "value 0x616263 does not fit opaque type /o"),
        ("o", "ab", "value 'ab' does not fit opaque type /o"),
        ("v", 1, "value 1 does not fit vlen type /v"),
        ("v", [1, 256], "value 256 does not fit ubyte"),
        ("c", (1, [1, 2, 3, 4]), "value (1, [1, 2, 3, 4]) does not fit compound type /c"),
        (
            "c",
            [1, [1, 2, 3, 4], b"xy"],
            "value [1, [1, 2, 3, 4], b'xy'] does not fit compound type /c",
        ),
        ("c", (300, [1, 2, 3, 4], b"xy"), "value 300 does not fit byte"),
        ("c", (1, [1, 2, 3], b"xy"), "value [1, 2, 3] does not fit short"),
        ("c", (1, [1, 2, 3, 1e9], b"xy"), "value 1000000000.0 does not fit short"),
        ("c", (1, [1, 2, 3, 4], b"x"), "value 0x78 does not fit opaque type /o"),
        ("vc", [(1, [1, 2, 3, 40000], b"xy")], "value 40000 does not fit short"),
    ],
)
def test_values_of_user_types_that_do_not_fit(tp: str, value: object, message: str) -> None:
    dataset = user_types()
    dataset.add_attribute("a", tp, [value])
    assert found(dataset) == error("/:a", message)


def test_values_of_unresolved_parts_are_not_checked_again() -> None:
    dataset = Dataset()
    dataset.add_vlen("v", "nope")
    dataset.add_enum("e", "nope", {"a": 1})
    compound = dataset.add_compound("c")
    compound.add_field("f", "nope")
    dataset.add_attribute("a", "v", [["anything"]])
    dataset.add_attribute("b", "e", ["anything"])
    dataset.add_attribute("c", "c", [("anything",)])
    dataset.add_attribute("d", "nope", ["anything"])
    assert found(dataset) == [
        ("error", "/v", "type reference 'nope' does not resolve"),
        ("error", "/e", "type reference 'nope' does not resolve"),
        ("error", "/c", "type reference 'nope' does not resolve"),
        ("error", "/:d", "type reference 'nope' does not resolve"),
    ]


def test_fill_value_has_the_variables_type() -> None:
    dataset = Dataset()
    dataset.add_opaque("o", 1)
    dataset.add_variable("v", T.FLOAT).add_attribute("_FillValue", T.DOUBLE, [1.0])
    dataset.add_variable("w", "o").add_attribute("_FillValue", "/o", [b"x"])
    assert found(dataset) == error(
        "/v:_FillValue", "_FillValue has type double, not the variable's type float"
    )


def test_fill_value_has_one_value() -> None:
    dataset = Dataset()
    dataset.add_variable("v", T.FLOAT).add_attribute("_FillValue", T.FLOAT, [1.0, 2.0])
    dataset.add_variable("c", T.CHAR).add_attribute("_FillValue", T.CHAR, "ab")
    dataset.add_variable("d", T.CHAR).add_attribute("_FillValue", T.CHAR, "a")
    assert found(dataset) == [
        ("error", "/v:_FillValue", "_FillValue has 2 values instead of one"),
        ("error", "/c:_FillValue", "_FillValue has 2 values instead of one"),
    ]


# -- user-defined types -------------------------------------------------------------------------


def test_a_compound_without_fields() -> None:
    dataset = Dataset()
    dataset.add_compound("c")
    assert found(dataset) == error("/c", "compound type has no field")


def test_compound_field_names_are_unique() -> None:
    dataset = Dataset()
    dataset.add(CompoundType("c", [Field("a", T.INT), Field("a", T.INT, position=(4, 9))]))
    assert validate(dataset) == [Problem("error", "/c", "field name 'a' is used twice", 4, 9)]


def test_compound_fields_may_vary_in_size_but_not_hold_their_type() -> None:
    dataset = Dataset()
    dataset.add_vlen("v", T.INT)
    dataset.add_opaque("o", 1)
    dataset.add_enum("e", T.INT, {"a": 1})
    inner = dataset.add_compound("inner")
    inner.add_field("o", "o")
    inner.add_field("e", "e")
    outer = dataset.add_compound("outer")
    outer.add_field("ok", "inner", (2,))
    outer.add_field("s", T.STRING)
    outer.add_field("v", "v")
    outer.add_field("me", "outer")
    dataset.add_vlen("vo", "outer")
    outer.add_field("through_vlen", "vo")
    assert found(dataset) == [
        ("error", "/outer", "field 'me' has type compound type /outer, which holds /outer itself"),
        ("error", "/outer", "field 'through_vlen' has type vlen type /vo, which holds /outer itself"),
    ]


def test_a_compound_that_holds_a_compound_that_holds_a_vlen() -> None:
    dataset = Dataset()
    dataset.add_vlen("v", T.INT)
    dataset.add_compound("a").add_field("v", "v")
    dataset.add_compound("b").add_field("a", "a")
    assert found(dataset) == []


def test_compound_field_sizes_are_positive() -> None:
    dataset = Dataset()
    dataset.add_compound("c").add_field("f", T.INT, (2, 0))
    assert found(dataset) == error("/c", "field 'f' dimension size must be at least 1, not 0")


def test_opaque_sizes_are_positive() -> None:
    dataset = Dataset()
    dataset.add(OpaqueType("o", 0))
    assert found(dataset) == error("/o", "opaque size must be at least 1, not 0")


def test_an_enum_base_is_an_integer_type() -> None:
    dataset = Dataset()
    dataset.add_opaque("o", 1)
    dataset.add_enum("e", T.FLOAT, {"a": 1})
    dataset.add_enum("f", "o", {"a": 1})
    assert found(dataset) == [
        ("error", "/e", "enum base type float is not an integer type"),
        ("error", "/f", "enum base type opaque type /o is not an integer type"),
    ]


def test_an_enum_without_members() -> None:
    dataset = Dataset()
    dataset.add_enum("e", T.INT, {})
    assert found(dataset) == error("/e", "enum type has no member")


def test_enum_members_are_unique_and_fit_the_base() -> None:
    dataset = Dataset()
    dataset.add(
        EnumType(
            "e",
            T.BYTE,
            [
                EnumMember("a", 1),
                EnumMember("a", 2, position=(3, 5)),
                EnumMember("b", 1),
                EnumMember("big", 300),
            ],
        )
    )
    assert validate(dataset) == [
        Problem("error", "/e", "member name 'a' is used twice", 3, 5),
        Problem("error", "/e", "member value 1 is used twice"),
        Problem("error", "/e", "member 'big' value 300 does not fit byte"),
    ]


def test_a_malformed_type_reference_inside_a_type() -> None:
    dataset = Dataset()
    dataset.add_compound("c").add_field("f", "/a//b")
    dataset.add_compound("d").add_field("c", "c")
    assert found(dataset) == error(
        "/c", "type reference '/a//b' is malformed: FQN '/a//b' has an empty name"
    )


def test_char_elements_are_single_characters() -> None:
    dataset = Dataset()
    dataset.add_vlen("v", T.CHAR)
    dataset.add_attribute("a", "v", [["a", "b"], []])
    dataset.add_attribute("b", "v", [["ab"]])
    assert found(dataset) == error("/:b", "value 'ab' does not fit char")


def test_a_vlen_base_resolves() -> None:
    dataset = Dataset()
    dataset.add(VlenType("v", "nope"))
    assert found(dataset) == error("/v", "type reference 'nope' does not resolve")


def test_types_in_nested_groups_resolve_from_their_group() -> None:
    dataset = Dataset()
    dataset.add_opaque("o", 2)
    group = dataset.add_group("g")
    group.add_vlen("v", "o")
    group.add_compound("c").add_field("o", "o")
    group.add_variable("x", "v").add_attribute("a", "c", [(b"ab",)])
    group.add_attribute("b", "v", [[b"ab"], [b"cd", b"ef"]])
    assert validate(dataset) == []


# -- problems and errors --------------------------------------------------------------------


def test_problems_print_with_their_position() -> None:
    assert str(Problem("error", "/g/v", "bad", 3, 7)) == "3:7: error: /g/v: bad"
    assert str(Problem("warning", "/g", "odd")) == "warning: /g: odd"
    assert str(Problem("error", "", "syntax", 1, 2)) == "1:2: error: syntax"


def test_problems_carry_the_position_of_the_node() -> None:
    dataset = Dataset()
    dataset.add(Variable("v", T.INT, ["nope"], position=(12, 14)))
    dataset.add(Attribute("a", T.BYTE, [300], position=(20, 5)))
    assert validate(dataset) == [
        Problem("error", "/v", "dimension reference 'nope' does not resolve", 12, 14),
        Problem("error", "/:a", "value 300 does not fit byte", 20, 5),
    ]


def test_ensure_valid_raises_with_every_problem() -> None:
    dataset = Dataset()
    dataset.add_dimension("x", 0)
    dataset.add_variable("Y", T.INT)
    dataset.add_variable("y", T.INT, ["z"])
    with pytest.raises(ValidationError) as caught:
        ensure_valid(dataset)
    assert [p.message for p in caught.value.problems] == [
        "name 'y' differs only in case from variable /Y",
        "dimension size must be at least 1, not 0",
        "dimension reference 'z' does not resolve",
    ]
    assert str(caught.value) == (
        "2 error(s) in the model: error: /x: dimension size must be at least 1, not 0; "
        "error: /y: dimension reference 'z' does not resolve"
    )
    assert isinstance(caught.value, NCZarrError) and isinstance(caught.value, ValueError)


def test_ensure_valid_returns_the_warnings() -> None:
    dataset = Dataset()
    dataset.add_variable("Y", T.INT)
    dataset.add_variable("y", T.INT)
    assert [p.severity for p in ensure_valid(dataset)] == ["warning"]


def test_model_errors_live_in_nczarr_errors() -> None:
    import nczarr.errors
    import nczarr.model

    for name in ("ModelError", "FQNError", "ValidationError"):
        assert getattr(nczarr.model, name) is getattr(nczarr.errors, name)
    assert issubclass(nczarr.errors.ValidationError, (NCZarrError, ValueError))
