"""The LALR driver builds what Lark's own parser builds, on a grammar of every rule shape."""

from typing import Any

import pytest
from lark import Lark
from lark import Token as LarkToken

from nczarr.syntax import ParseError
from nczarr.syntax.lalr import LalrParser, Lines, Token

GRAMMAR = r"""
start: _item*
_item: pair | triple | maybe | listy | kw | empty | wrap | number | quoted | arrow
number: NUMBER -> integer
pair: "pair" NAME _names NAME ";"
_names: "(" NAME* ")"
triple: "triple" ["<" NAME ">"] NAME ["=" NAME] ";"
maybe: "maybe" NAME? ";"
listy: "list" "[" (NAME ("," NAME)*)? "]"
!kw: "kw" ("a" | "b")
empty: "(" ")"
?wrap: "wrap" _names
quoted: "quote" STRING
arrow: "go" NAME "->" NAME
NAME: /[a-z0-9_]+/
NUMBER: /[0-9]+/
STRING: /'[^']*'/
%ignore /[ \t\n]+/
"""


class Builder:
    """Builds (rule, children) for every rule."""

    def __getattr__(self, rule: str) -> Any:
        if not rule.islower() or rule.startswith("_"):  # not terminals, not inlined rules
            raise AttributeError(rule)
        return lambda children: (rule, [normal(child) for child in children])


def normal(value: Any) -> Any:
    """Tokens of both parsers as (type, text); keywords as text."""
    if isinstance(value, Token):
        return (value.type, value.text)
    if isinstance(value, LarkToken):
        valued = value.type in ("NAME", "NUMBER", "STRING")
        return (value.type, str(value)) if valued else str(value)
    return value


@pytest.fixture(scope="module")
def parsers() -> tuple[LalrParser, Lark]:
    ours = LalrParser(
        GRAMMAR, "start", Builder(), word="NAME", word_kinds=["NUMBER"], leading=[("STRING", "'")]
    )
    theirs = Lark(GRAMMAR, parser="lalr", maybe_placeholders=True, transformer=Builder())
    return ours, theirs


@pytest.mark.parametrize(
    "text",
    [
        "",
        "pair x ( ) y ;",
        "pair x (a b c) y;",
        "triple x ; triple <a> x ; triple x = y ; triple <a> x = y ;",
        "maybe ; maybe x ;",
        "list [ ] list [a] list [a, b, c]",
        "kw a kw b",
        "( )",
        "wrap (x) wrap () wrap (x y)",
        "12 7",
        "quote 'a b' quote ''",
        "go a -> b go x->y",
        "pair p (x) q ; 3 list [m, n] wrap (w) kw b triple t ; ( ) maybe m ;",
    ],
)
def test_the_same_values_as_lark(parsers: tuple[LalrParser, Lark], text: str) -> None:
    ours, theirs = parsers
    assert ours.parse(text) == theirs.parse(text)


def test_words_take_the_terminal_the_parser_accepts(parsers: tuple[LalrParser, Lark]) -> None:
    ours, _ = parsers
    # "pair", "list" and "12" are names where only a name can stand.
    assert ours.parse("pair pair (list 12) x ;") == (
        "start",
        [("pair", [("NAME", "pair"), ("NAME", "list"), ("NAME", "12"), ("NAME", "x")])],
    )
    assert ours.keywords == {
        "pair": "PAIR", "triple": "TRIPLE", "maybe": "MAYBE", "list": "LIST", "kw": "KW",
        "a": "A", "b": "B", "wrap": "WRAP", "quote": "QUOTE", "go": "GO",
    }


def test_errors_say_what_was_expected(parsers: tuple[LalrParser, Lark]) -> None:
    ours, _ = parsers
    with pytest.raises(ParseError) as caught:
        ours.parse("pair x (y)\n ;")
    assert (caught.value.line, caught.value.column) == (2, 2)
    assert caught.value.message == "unexpected ';'; expected NAME"
    with pytest.raises(ParseError) as caught:
        ours.parse("list [a,")
    assert caught.value.message == "unexpected end of text; expected NAME"
    with pytest.raises(ParseError) as caught:
        ours.parse("kw c")
    assert caught.value.message == "unexpected 'c'; expected one of 'a', 'b'"
    with pytest.raises(ParseError) as caught:
        ours.parse("quote 'open")
    assert caught.value.message == "unexpected character \"'\"; expected STRING"


def test_a_rule_without_a_method_is_refused_at_once() -> None:
    class Partial:
        def start(self, children: list[Any]) -> Any:
            return children

    with pytest.raises(TypeError, match="^Partial has no method for the rule '[a-z]+'$"):
        LalrParser(GRAMMAR, "start", Partial(), word="NAME")


def test_lines_and_token_positions() -> None:
    lines = Lines("ab\ncd\n\nef")
    assert [lines.position(i) for i in (0, 1, 3, 6, 7, 9)] == [
        (1, 1), (1, 2), (2, 1), (3, 1), (4, 1), (4, 3)
    ]
    assert Token("NAME", "cd", 3, lines).position == (2, 1)
