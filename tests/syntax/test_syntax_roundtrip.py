"""parse(dump(tree)) == tree for generated trees, hostile names included."""

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nczarr.model import (
    AtomicType,
    DataModel,
    Dataset,
    Group,
    UserType,
    join_fqn,
)
from nczarr.syntax import dump, parse

# Model text holds any name but the empty one and those with a C0 control character or DEL.
NAME_CHARACTERS = st.characters(
    exclude_categories=("Cs",), exclude_characters=[chr(c) for c in range(32)] + ["\x7f"]
)
HOSTILE_NAMES = st.sampled_from(
    [
        "a b", " ", "a/b", "/", "\\", "\\/", "x\\", '"q"', "'", "{x}", "(x)", "[x]", "a,b", "a:b",
        "a=b", "#c", "10", "1d", "-1", "nan", "inf", "0x1f", "int", "string", "dimension",
        "variable", "zarr", "unlimited", "été", "名前", "e\u0301", "\u00a0", "\u2028", "\x85",
        "a\u200bb", "😀",
    ]
)
NAMES = st.one_of(HOSTILE_NAMES, st.text(NAME_CHARACTERS, min_size=1, max_size=8))

TEXT = st.text(max_size=8)  # strings hold anything but lone surrogates
INTEGER_TYPES = [t for t in AtomicType if t.is_integer]
FIXED_ATOMIC = [t for t in AtomicType if t.is_fixed_size]


def atomic_values(tp: AtomicType) -> st.SearchStrategy[Any]:
    if tp.is_integer:
        return st.integers(tp.low, tp.high)
    if tp is AtomicType.FLOAT:
        return st.floats(width=32)
    if tp is AtomicType.DOUBLE:
        return st.floats()
    if tp is AtomicType.CHAR:
        return st.characters(exclude_categories=("Cs",))
    return TEXT


class Types:
    """The user types made so far, with how to refer to them and what their values are."""

    def __init__(self) -> None:
        self.fixed: list[tuple[str, st.SearchStrategy[Any]]] = []
        self.any: list[tuple[str, st.SearchStrategy[Any]]] = []

    def add(self, tp: UserType, values: st.SearchStrategy[Any], fixed: bool) -> None:
        refs = [tp.fqn] if tp.group is None or tp.group.parent is not None else [tp.fqn, tp.name]
        for ref in refs:
            self.any.append((ref, values))
            if fixed:
                self.fixed.append((ref, values))


def choose_type(
    draw: st.DrawFn, types: list[tuple[str, st.SearchStrategy[Any]]], atomic: list[AtomicType]
) -> tuple[AtomicType | str, st.SearchStrategy[Any]]:
    if types and draw(st.booleans()):
        return draw(st.sampled_from(types))
    tp = draw(st.sampled_from(atomic))
    return tp, atomic_values(tp)


def add_types(draw: st.DrawFn, group: Group, types: Types) -> None:
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["compound", "enum", "opaque", "vlen"]))
        name = draw(NAMES)
        if kind == "opaque":
            size = draw(st.integers(1, 4))
            tp: UserType = group.add_opaque(name, size)
            types.add(tp, st.binary(min_size=size, max_size=size), fixed=True)
        elif kind == "enum":
            base = draw(st.sampled_from(INTEGER_TYPES))
            members = draw(st.dictionaries(NAMES, atomic_values(base), max_size=3))
            tp = group.add_enum(name, base, members)
            types.add(tp, atomic_values(base), fixed=True)
        elif kind == "vlen":
            base, values = choose_type(draw, types.any, list(AtomicType))
            tp = group.add_vlen(name, base)
            types.add(tp, st.lists(values, max_size=3), fixed=False)
        else:
            tp = group.add_compound(name)
            parts = []
            for _ in range(draw(st.integers(1, 3))):
                ftype, values = choose_type(draw, types.fixed, FIXED_ATOMIC)
                shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
                tp.add_field(draw(NAMES), ftype, shape)  # type: ignore[attr-defined]
                size = 1
                for n in shape:
                    size *= n
                parts.append(st.lists(values, min_size=size, max_size=size) if shape else values)
            types.add(tp, st.tuples(*parts), fixed=True)


def add_attributes(draw: st.DrawFn, owner: Any, types: Types) -> None:
    for _ in range(draw(st.integers(0, 3))):
        tp, values = choose_type(draw, types.any, list(AtomicType))
        if tp is AtomicType.CHAR:
            owner.add_attribute(draw(NAMES), tp, draw(TEXT))
        else:
            owner.add_attribute(draw(NAMES), tp, draw(st.lists(values, max_size=3)))


def fill(draw: st.DrawFn, group: Group, types: Types, dimensions: list[str], depth: int) -> None:
    for _ in range(draw(st.integers(0, 2))):
        dim = group.add_dimension(draw(NAMES), draw(st.integers(0, 2**40)), draw(st.booleans()))
        dimensions = [*dimensions, dim.fqn, dim.name]
    add_types(draw, group, types)
    for _ in range(draw(st.integers(0, 2))):
        tp, _values = choose_type(draw, types.any, list(AtomicType))
        # a name as a reference is relative: one starting with "/" would be an (unescaped) FQN
        relative = NAMES.filter(lambda name: not name.startswith("/"))
        refs = st.one_of(st.integers(0, 2**40), st.sampled_from(dimensions or ["/"]), relative)
        variable = group.add_variable(draw(NAMES), tp, draw(st.lists(refs, max_size=3)))
        add_attributes(draw, variable, types)
    add_attributes(draw, group, types)
    if depth < 2:
        for _ in range(draw(st.integers(0, 2))):
            fill(draw, group.add_group(draw(NAMES)), types, dimensions, depth + 1)


@st.composite
def datasets(draw: st.DrawFn) -> Dataset:
    dataset = Dataset(
        draw(st.one_of(st.just(""), NAMES)),
        zarr_version=draw(st.sampled_from(["2", "3", "2.0.0"])),
        data_model=draw(st.sampled_from(list(DataModel))),
    )
    fill(draw, dataset, Types(), [], 0)
    return dataset


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets())
def test_parse_inverts_dump(tree: Dataset) -> None:
    text = dump(tree)
    assert parse(text) == tree
    assert dump(parse(text)) == text


@given(st.lists(NAMES, min_size=1, max_size=4))
def test_any_path_of_names_reads_back_as_a_reference(names: list[str]) -> None:
    dataset = Dataset()
    dataset.add_variable("v", AtomicType.INT, [join_fqn(names), names[-1]])
    assert parse(dump(dataset)) == dataset
