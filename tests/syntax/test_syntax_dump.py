"""Dumping a tree as model text."""

import numpy
import pytest

from nczarr.model import AtomicType as T
from nczarr.model import DataModel, Dataset, EnumMember, EnumType, ModelError
from nczarr.syntax import dump, parse


def test_dump_writes_every_kind_of_node() -> None:
    dataset = Dataset("d x", zarr_version="2", data_model=DataModel.CLASSIC)
    dataset.add_dimension("time", 0, unlimited=True)
    dataset.add_dimension("step", 4, unlimited=True)
    dataset.add_dimension("x", 3)
    compound = dataset.add_compound("c")
    compound.add_field("f", T.FLOAT, (2, 3))
    compound.add_field("o", "/o")
    dataset.add_enum("e", T.UBYTE, {"a": 0, "b": 1})
    dataset.add_enum("none", T.INT, {})
    dataset.add_opaque("o", 4)
    dataset.add_vlen("v", "c")
    variable = dataset.add_variable("t", T.DOUBLE, ["time", "/x", 2])
    variable.add_attribute("units", T.STRING, ["K", ""])
    dataset.add_variable("s", "e")
    dataset.add_attribute("title", T.CHAR, 'say "hi"\n')
    dataset.add_attribute("f", T.FLOAT, [1, 1.5, -0.0, float("nan"), float("-inf"), 1e300])
    dataset.add_attribute("u", "c", [([1.0] * 6, b"\x00\xff\x10\x01")])
    dataset.add_attribute("w", "v", [[], [(1,)]])
    dataset.add_attribute("empty", T.INT, [])
    dataset.add_group("g").add_group("h").add_dimension("y", 1)
    assert dump(dataset) == (
        "dataset d\\ x zarr 2 classic {\n"
        "    dimension time = unlimited\n"
        "    dimension step = unlimited(4)\n"
        "    dimension x = 3\n"
        "    compound c {\n"
        "        field float f(2, 3)\n"
        "        field /o o\n"
        "    }\n"
        "    enum ubyte e {\n"
        "        a = 0,\n"
        "        b = 1\n"
        "    }\n"
        "    enum int none {\n"
        "    }\n"
        "    opaque o(4)\n"
        "    vlen c v\n"
        "    variable double t(time, /x, 2) {\n"
        '        attribute string units = "K", ""\n'
        "    }\n"
        "    variable e s\n"
        '    attribute char title = "say \\"hi\\"\\n"\n'
        "    attribute float f = 1, 1.5, -0.0, nan, -inf, 1e+300\n"
        "    attribute c u = {[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 0x00ff1001}\n"
        "    attribute v w = [], [{1}]\n"
        "    attribute int empty =\n"
        "    group g {\n"
        "        group h {\n"
        "            dimension y = 1\n"
        "        }\n"
        "    }\n"
        "}\n"
    )
    assert parse(dump(dataset)) == dataset


def test_a_dataset_without_a_name() -> None:
    assert dump(Dataset()) == "dataset zarr 3 enhanced {\n}\n"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("a b", "a\\ b"),
        ("a/b\\c", "a\\/b\\\\c"),
        ('{}()[],:="#', '\\{\\}\\(\\)\\[\\]\\,\\:\\=\\"\\#'),
        ("10", "\\10"),
        ("1d", "\\1d"),
        ("variable", "\\variable"),
        ("int64", "\\int64"),
        ("integer", "integer"),
        ("nan", "nan"),
        ("-x", "-x"),
        ("été", "été"),
        ("\u00a0", "\u00a0"),
    ],
)
def test_names_are_escaped_where_needed(name: str, text: str) -> None:
    dataset = Dataset()
    dataset.add_variable(name, T.INT)
    assert dump(dataset).splitlines()[1] == f"    variable int {text}"
    assert parse(dump(dataset)) == dataset


def test_references_are_written_as_names_or_fqns() -> None:
    dataset = Dataset()
    dataset.add_variable("v", "int", ["a b", "/g/a\\ b", "/", 7])
    assert dump(dataset).splitlines()[1] == "    variable \\int v(a\\ b, /g/a\\ b, /, 7)"
    assert parse(dump(dataset)) == dataset


def test_strings_escape_what_text_cannot_hold() -> None:
    dataset = Dataset()
    dataset.add_attribute("s", T.STRING, ["\x00\x1f\x7f\x85\t\r\\\"\ud800é€"])
    line = dump(dataset).splitlines()[1]
    assert line == '    attribute string s = "\\x00\\x1f\\x7f\\x85\\t\\r\\\\\\"\\ud800é€"'
    assert parse(dump(dataset)) == dataset


def unwritable(variable: str = "v", value: object = 1, version: str = "3") -> Dataset:
    dataset = Dataset(zarr_version=version)
    dataset.add_variable(variable, T.INT)
    dataset.add_attribute("a", T.INT, [value])
    return dataset


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        (unwritable(variable=""), "name '' cannot be written in model text"),
        (unwritable(variable="a\nb"), "name 'a\\nb' cannot be written in model text"),
        (unwritable(value=None), "value None cannot be written in model text"),
        (unwritable(version="v3"), "Zarr version 'v3' cannot be written in model text"),
    ],
)
def test_what_model_text_cannot_hold(dataset: Dataset, message: str) -> None:
    with pytest.raises(ModelError) as caught:
        dump(dataset)
    assert str(caught.value) == message


def test_numpy_numbers_are_written_as_numbers() -> None:
    dataset = Dataset()
    dataset.add_attribute("a", T.INT, [numpy.int16(-3), numpy.float32(0.5), True])
    assert dump(dataset).splitlines()[1] == "    attribute int a = -3, 0.5, 1"


def test_members_may_hold_any_constant() -> None:
    dataset = Dataset()
    dataset.add(EnumType("e", T.INT, [EnumMember("a", 1.5)]))  # type: ignore[arg-type]
    assert parse(dump(dataset)) == dataset
