"""Syntax errors: where, what was found, what was expected; never a Lark exception."""

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nczarr.errors import NCZarrError
from nczarr.syntax import ParseError, parse, parse_file

GROUP_BODY = (
    "'attribute', 'compound', 'dimension', 'enum', 'group', 'opaque', 'variable', 'vlen', '}'"
)
VALUES_OR_GROUP_BODY = GROUP_BODY.replace("'vlen', '}'", "'vlen', '{', '}'")


@pytest.mark.parametrize(
    ("text", "line", "column", "token", "message"),
    [
        ("", 1, 1, None, "unexpected end of text; expected 'dataset'"),
        ("  \n  # only a comment", 2, 19, None, "unexpected end of text; expected 'dataset'"),
        ("data", 1, 1, "data", "unexpected 'data'; expected 'dataset'"),
        ("dataset x y", 1, 11, "y", "unexpected 'y'; expected 'zarr'"),
        ("dataset zarr three {}", 1, 14, "three", "unexpected 'three'; expected a Zarr version"),
        ("dataset zarr 3 {", 1, 17, None, f"unexpected end of text; expected one of {GROUP_BODY}"),
        ("dataset zarr 3 {}\n}", 2, 1, "}", "unexpected '}'; expected end of text"),
        (
            "dataset zarr 3 {\n  dimension x 3\n}",
            2,
            15,
            "3",
            "unexpected '3'; expected '='",
        ),
        (
            "dataset zarr 3 { dimension x = -1 }",
            1,
            32,
            "-1",
            "unexpected '-1'; expected one of 'unlimited', a size",
        ),
        (
            "dataset zarr 3 { variable int v( }",
            1,
            34,
            "}",
            "unexpected '}'; expected one of ')', a name, a size, an FQN",
        ),
        (
            "dataset zarr 3 { variable v }",
            1,
            29,
            "}",
            "unexpected '}'; expected a name",
        ),
        (
            "dataset zarr 3 { attribute int a = 1 2 }",
            1,
            38,
            "2",
            f"unexpected '2'; expected one of ',', {GROUP_BODY}",
        ),
        (
            "dataset zarr 3 { attribute int a = x }",
            1,
            36,
            "x",
            f"unexpected 'x'; expected one of '[', {VALUES_OR_GROUP_BODY}, a value",
        ),
        (
            'dataset zarr 3 { attribute string a = "abc\n" }',
            1,
            39,
            '"',
            f"unterminated string; expected one of '[', {VALUES_OR_GROUP_BODY}, a value",
        ),
        (
            "dataset zarr 3 {\n dimension \x01 = 3 }",
            2,
            12,
            "\x01",
            "unexpected character '\\x01'; expected a name",
        ),
        (
            'dataset zarr 3 { dimension "x" = 3 }',
            1,
            28,
            '"x"',
            "unexpected '\"x\"'; expected a name",
        ),
        (
            "dataset zarr 3 { field int f }",
            1,
            18,
            "field",
            f"unexpected 'field'; expected one of {GROUP_BODY}",
        ),
        (
            "dataset zarr 3 { variable int v(x) { dimension y = 1 } }",
            1,
            38,
            "dimension",
            "unexpected 'dimension'; expected one of 'attribute', '}'",
        ),
    ],
)
def test_syntax_errors(text: str, line: int, column: int, token: str | None, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text)
    error = caught.value
    assert (error.line, error.column, error.token, error.message) == (line, column, token, message)
    assert str(error) == f"{line}:{column}: {message}"
    assert error.filename is None
    assert isinstance(error, NCZarrError) and isinstance(error, ValueError)


def test_expected_lists_what_the_parser_really_accepts() -> None:
    with pytest.raises(ParseError) as caught:
        parse("dataset zarr 3 { variable int v")
    # LALR tables would also list '=' and 'field' here; they cannot come next.
    assert caught.value.expected == (
        "'('",
        "'attribute'",
        "'compound'",
        "'dimension'",
        "'enum'",
        "'group'",
        "'opaque'",
        "'variable'",
        "'vlen'",
        "'{'",
        "'}'",
    )


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ('attribute string a = "x\\q"', 2, 24, "invalid escape \\q in a string"),
        ('attribute string a = "ok", "\\x4"', 2, 29, "invalid escape \\x in a string"),
        ('attribute string a = "\\U00110000"', 2, 23, "invalid escape \\U00110000 in a string"),
        ("attribute o a = 0x123", 2, 17, "opaque value 0x123 has an odd number of hex digits"),
    ],
)
def test_bad_constants(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse("dataset zarr 3 {\n" + text + "\n}", filename="f.nczm")
    error = caught.value
    assert (error.line, error.column, error.message) == (line, column, message)
    assert str(error) == f"f.nczm:{line}:{column}: {message}"


def test_parse_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.nczm"
    path.write_text("dataset zarr 3 {\n", encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        parse_file(path)
    assert caught.value.filename == str(path)
    assert str(caught.value).startswith(f"{path}:2:1: unexpected end of text")


VALID = (
    'dataset d zarr 3 { dimension x = 2 compound c { field int f(2) } enum byte e { a = 1 }\n'
    'variable float v(x, /x, 3) { attribute string u = "K", "\\n" attribute c z = {[1, 2]} }\n'
    "group g { opaque o(2) vlen int w attribute double n = nan, -1e3 } }"
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_damage_gives_a_parse_error_or_a_tree(data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(VALID)))
    end = data.draw(st.integers(start, min(len(VALID), start + 8)))
    insert = data.draw(st.text(alphabet='{}()[],:="#\\/ \n\x00ab1.-é', max_size=4))
    text = VALID[:start] + insert + VALID[end:]
    try:
        parse(text)
    except ParseError as error:
        assert 1 <= error.line <= text.count("\n") + 1
        assert error.column >= 1
        assert error.message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_text_gives_a_parse_error_or_a_tree(text: str) -> None:
    with contextlib.suppress(ParseError):
        parse("dataset zarr 3 { " + text)
