"""Malformed and hostile CDL and model text: parsing, checking and generating a dataset from
it must end in a dataset or an NCZarrError (with a position for bad text), never in a
traceback of another class (RecursionError, MemoryError, IndexError, TypeError...).

The samples (``samples/``, and the CDL texts of the syntax tests) are mutated by hypothesis
(slices dropped, repeated or swapped, tokens of the languages and hostile numbers inserted,
the text truncated); random token soups and deep nesting are drawn too. Each CDL text goes
through ``parse_cdl`` and then, as ``nczarr gen`` does, into a memory store; each model text
through ``parse``, the checks and ``Session.create`` in a memory store. Hand-picked cases
pin what issue 14 names: deep groups, braces and types, huge dimensions and chunk sizes.
"""

from __future__ import annotations

import ast
import contextlib
import math
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nczarr
from nczarr.convert.copy import CopyOptions, copy_source
from nczarr.errors import NCZarrError
from nczarr.formats import convention
from nczarr.formats.session import Session
from nczarr.model import validate
from nczarr.store import MemoryStore
from nczarr.syntax import ParseError, parse
from nczarr.syntax.cdl import parse_cdl
from nczarr.syntax.cdlvalues import PaddedValues
from nczarr.syntax.limits import MAX_FIELDS, MAX_NESTING, MAX_TYPE_SIZE
from nczarr.values.source import ArraysSource

ROOT = Path(__file__).resolve().parents[2]
_FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _cdl_texts_of_tests() -> list[str]:
    """The CDL texts written out in the syntax tests (string constants that start so)."""
    texts: list[str] = []
    for path in sorted((ROOT / "tests" / "syntax").glob("test_cdl_*.py")):
        constants = (n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Constant))
        texts.extend(c for c in constants if isinstance(c, str) and c.lstrip().startswith("netcdf ") and "{" in c)
    return texts


CDL_SAMPLES = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples" / "cdl").glob("*.cdl"))]
CDL_SAMPLES += _cdl_texts_of_tests()
MODEL_SAMPLES = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples").glob("*.nczm"))]

_CDL_TOKENS = [
    "netcdf", "dimensions:", "variables:", "data:", "types:", "group:", "{", "}", "(", ")", "=", ";",
    ",", ":", "_", "int", "byte", "char", "string", "double", "ubyte", "uint64", "compound", "enum",
    "opaque", "(*)", "unlimited", "UNLIMITED", "x", "v", "/g/v", "/", "_FillValue", "_ChunkSizes",
    "_Storage", "_Filter", "_Codecs", "_NoFill", '"chunked"', '"text"', "'c'", "'\\377'", "0x0f",
    "NaN", "-Infinityf", "1e308", "1e-400", "0", "-1", "3", "4000000000", "18446744073709551616",
    "9223372036854775807", "1u", "255ub", "010", "time(\"2020-01-01\")", "NIL", "\\", '"', "/*",
    "//", "\n", " ", "\x00", "\ud800", "é",
]
_MODEL_TOKENS = [
    "dataset", "zarr", "3", "2", "enhanced", "classic", "group", "dimension", "variable",
    "attribute", "compound", "field", "enum", "opaque", "vlen", "unlimited", "{", "}", "(", ")",
    "[", "]", "=", ",", "int", "char", "string", "double", "uint64", "x", "t", "/g/x", "/",
    '"text"', '"\\x00"', "0x0f", "0x", "nan", "-inf", "1e308", "0", "-1", "4000000000",
    "18446744073709551616", "#", "\\", '"', "\n", " ", "\x00", "\ud800", "\udcff",
]


_NUMBER = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]*)?")
_HOSTILE_NUMBERS = ["0", "1", "-1", "255", "65536", "2147483648", "4000000000", "9223372036854775808", "1e308", "nan"]


def _mutated(samples: list[str], tokens: list[str]) -> st.SearchStrategy[str]:
    """A sample with a few edits: a number made hostile, a line dropped or repeated, a slice
    dropped, repeated or replaced by tokens, or the end cut."""

    @st.composite
    def build(draw: st.DrawFn) -> str:
        text = draw(st.sampled_from(samples))
        for _ in range(draw(st.integers(1, 3))):
            edit = draw(st.sampled_from(["number", "number", "line", "drop", "repeat", "insert", "replace", "cut"]))
            if edit == "number":
                numbers = list(_NUMBER.finditer(text))
                if numbers:
                    found = draw(st.sampled_from(numbers))
                    text = text[: found.start()] + draw(st.sampled_from(_HOSTILE_NUMBERS)) + text[found.end() :]
                continue
            if edit == "line":
                lines = text.splitlines(keepends=True)
                index = draw(st.integers(0, max(0, len(lines) - 1)))
                times = draw(st.integers(0, 3))  # 0: dropped
                text = "".join(lines[:index] + lines[index : index + 1] * times + lines[index + 1 :])
                continue
            n = len(text)
            start = draw(st.integers(0, n))
            stop = draw(st.integers(start, min(n, start + 40)))
            words = " ".join(draw(st.lists(st.sampled_from(tokens), min_size=1, max_size=6)))
            if edit == "drop":
                text = text[:start] + text[stop:]
            elif edit == "repeat":
                text = text[:stop] + text[start:stop] * draw(st.integers(1, 50)) + text[stop:]
            elif edit == "insert":
                text = text[:start] + f" {words} " + text[start:]
            elif edit == "replace":
                text = text[:start] + words + text[stop:]
            else:
                text = text[:start]
        return text

    return build()


def _soup(head: str, tokens: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(tokens), max_size=60).map(lambda words: head + " ".join(words) + "\n}\n")


def gen_cdl(text: str) -> None:
    """What ``nczarr gen`` does with a text, into a memory store; a CdlError or another
    NCZarrError is an answer, anything else fails the test."""
    try:
        parsed = parse_cdl(text, "fuzz.cdl")
    except ParseError as error:
        assert error.line >= 1 and error.column >= 1, error
        return
    source = ArraysSource(parsed.dataset, parsed.storage, parsed.data, parsed.kind or "NETCDF4")
    options = CopyOptions(kind=parsed.kind or "NETCDF4", data_variables=tuple(parsed.given), max_memory=16 << 20)
    with contextlib.suppress(NCZarrError):
        copy_source(source, MemoryStore(), options)


def create_model(text: str) -> None:
    """Model text parsed, checked, and created (no data) in a memory store."""
    try:
        tree = parse(text, "fuzz.nczm")
    except ParseError as error:
        assert error.line >= 1 and error.column >= 1, error
        return
    try:
        problems = validate(tree)
        if not any(p.severity == "error" for p in problems):
            Session.create(MemoryStore(), tree, convention("NCZARR")).close()
    except NCZarrError:
        pass


@_FUZZ
@given(_mutated(CDL_SAMPLES, _CDL_TOKENS))
def test_mutated_cdl_gives_a_dataset_or_an_nczarr_error(text: str) -> None:
    gen_cdl(text)


@_FUZZ
@given(_soup("netcdf fuzz {\n", _CDL_TOKENS))
def test_cdl_token_soup_gives_an_nczarr_error(text: str) -> None:
    gen_cdl(text)


@_FUZZ
@given(_mutated(MODEL_SAMPLES, _MODEL_TOKENS))
def test_mutated_model_text_gives_a_tree_or_an_nczarr_error(text: str) -> None:
    create_model(text)


@_FUZZ
@given(_soup("dataset zarr 3 {\n", _MODEL_TOKENS))
def test_model_token_soup_gives_an_nczarr_error(text: str) -> None:
    create_model(text)


_NESTINGS = {
    "cdl groups": lambda n: "netcdf d {\n" + "group: g {\n" * n + "}\n" * n + "}\n",
    "cdl braces": lambda n: "netcdf d {\ndimensions: x = 2;\nvariables: int v(x);\ndata: v = "
    + "{" * n + "1" + "}" * n + ";\n}\n",
    "cdl compounds": lambda n: "netcdf d {\ntypes:\n compound t0 { int a; };\n"
    + "".join(f" compound t{i} {{ t{i - 1} a; }};\n" for i in range(1, n))
    + f"dimensions: x = 2;\nvariables: t{n - 1} v(x);\n}}\n",
    "cdl vlens": lambda n: "netcdf d {\ntypes:\n int(*) t0;\n"
    + "".join(f" t{i - 1}(*) t{i};\n" for i in range(1, n))
    + f"dimensions: x = 2;\nvariables: t{n - 1} v(x);\n}}\n",
    "model groups": lambda n: "dataset zarr 3 {\n" + "group g {\n" * n + "}\n" * n + "}\n",
    "model values": lambda n: "dataset zarr 3 {\nattribute int a = " + "{" * n + "1" + "}" * n + "\n}\n",
    "model vlen values": lambda n: "dataset zarr 3 {\nattribute int a = " + "[" * n + "1" + "]" * n + "\n}\n",
    "model compounds": lambda n: "dataset zarr 3 {\ncompound t0 { field int a }\n"
    + "".join(f"compound t{i} {{ field t{i - 1} a }}\n" for i in range(1, n))
    + f"dimension x = 2\nvariable t{n - 1} v(x)\n}}\n",
}


@pytest.mark.parametrize("kind", sorted(_NESTINGS))
@pytest.mark.parametrize("depth", [MAX_NESTING - 2, 5000])
def test_deep_nesting_is_built_or_refused_with_a_position(kind: str, depth: int) -> None:
    text = _NESTINGS[kind](depth)
    run = gen_cdl if kind.startswith("cdl") else create_model
    run(text)  # no RecursionError
    if depth > MAX_NESTING:
        parser = parse_cdl if kind.startswith("cdl") else parse
        with pytest.raises(ParseError, match=f"deeper than {MAX_NESTING} levels") as caught:
            parser(text)
        assert caught.value.line > 1


@pytest.mark.parametrize(
    "types, problem",
    [
        # each level doubles the fields: 2**14 fields, built in linear time or refused
        ("".join(f" compound t{i} {{ t{i - 1} a; t{i - 1} b; }};\n" for i in range(1, 40)), f"more than the {MAX_FIELDS}"),
        (" opaque(100000000) t39;\n", f"more than the {MAX_TYPE_SIZE} allowed"),
        (" compound t39 { int a(100000, 100000); };\n", f"more than the {MAX_TYPE_SIZE} allowed"),
    ],
)
def test_huge_types_are_refused_where_declared(types: str, problem: str) -> None:
    text = f"netcdf d {{\ntypes:\n compound t0 {{ int a; }};\n{types}dimensions: x = 2;\nvariables: t39 v(x);\n}}\n"
    with pytest.raises(ParseError, match=problem) as caught:
        parse_cdl(text)
    assert caught.value.line >= 3
    model = "dataset zarr 3 {\ncompound t0 { field int a }\n" + "".join(
        f"compound t{i} {{ field t{i - 1} a field t{i - 1} b }}\n" for i in range(1, 40)
    ) + "}\n"
    with pytest.raises(ParseError, match=f"more than the {MAX_FIELDS}"):
        parse(model)


def test_a_huge_dimension_with_a_few_values_is_written_in_bounded_memory() -> None:
    text = "netcdf h {\ndimensions: x = 4000000000 ;\nvariables: byte v(x) ; byte w(x) ;\ndata: v = 1, 2, 3 ;\n}\n"
    tracemalloc.start()
    try:
        parsed = parse_cdl(text)
        store = MemoryStore()
        source = ArraysSource(parsed.dataset, parsed.storage, parsed.data, "NETCDF4")
        copy_source(source, store, CopyOptions(data_variables=tuple(parsed.given)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 512 << 20, f"{peak >> 20} MiB for a 4 GB variable"
    assert parsed.given == {"/v"}
    values = parsed.data["/v"]
    assert values.shape == (4_000_000_000,)
    assert values[(slice(0, 5),)].tolist() == [1, 2, 3, -127, -127]
    assert values[(slice(3_999_999_998, 4_000_000_000),)].tolist() == [-127, -127]
    with nczarr.Dataset(store) as ds:
        assert ds["v"][:4].filled(0).tolist() == [1, 2, 3, 0]
        assert ds["w"][1_000_000:1_000_002].mask.all()


def test_chunk_sizes_above_the_dimension_are_refused_as_ncgen_does() -> None:
    text = "netcdf h {\ndimensions: x = 10 ;\nvariables: byte v(x) ; v:_ChunkSizes = 1000000000 ;\n}\n"
    with pytest.raises(ParseError, match="bad chunk size 1000000000 for dimension .x.") as caught:
        parse_cdl(text)
    assert (caught.value.line, caught.value.column) == (3, 26)


@given(
    shape=st.lists(st.integers(0, 6), max_size=4).map(tuple),
    data=st.data(),
)
@settings(max_examples=150, deadline=None)
def test_padded_values_give_the_blocks_of_the_whole_array(shape: tuple[int, ...], data: st.DataObject) -> None:
    """CDL values of a large variable are kept as the data and the fill: every block read
    is the block of the whole array."""
    size = math.prod(shape)
    given_count = data.draw(st.integers(0, size))
    text = "netcdf p {\n"
    dims = [f"d{i}" for i in range(len(shape))]
    if dims:
        text += "dimensions: " + ", ".join(f"{d} = {n}" for d, n in zip(dims, shape)) + " ;\n"
    values = ", ".join(str(i + 1) for i in range(given_count))
    text += f"variables: int v{'(' + ', '.join(dims) + ')' if dims else ''} ;\n"
    if given_count:
        text += f"data: v = {values} ;\n"
    text += "}\n"
    parsed = parse_cdl(text)
    whole = np.concatenate([np.arange(1, given_count + 1), np.full(size - given_count, -2147483647)])
    whole = whole.astype("i4").reshape(shape)
    padded = PaddedValues(np.arange(1, given_count + 1, dtype="i4"), -2147483647, shape, np.dtype("i4"))
    assert np.array_equal(parsed.data["/v"][...], whole)
    selection = tuple(
        slice(a, b) for a, b in (sorted(data.draw(st.tuples(st.integers(0, n), st.integers(0, n)))) for n in shape)
    )
    assert np.array_equal(padded[selection] if selection else padded[...], whole[selection] if selection else whole)
    if all(s.stop > s.start for s in selection):  # the first value of a block decides
        first = np.ravel_multi_index(tuple(s.start for s in selection), shape) if shape else 0
        assert padded.fill_from(selection) == (first >= given_count)
