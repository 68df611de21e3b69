"""Escaping names and building and splitting fully qualified names."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nczarr.errors import NCZarrError
from nczarr.model import FQNError, escape_name, join_fqn, split_fqn, unescape_name

# Any code point at all, including blanks, slashes, backslashes, controls and surrogates.
ANY_TEXT = st.text(st.characters(exclude_categories=()))
HOSTILE = st.sampled_from(
    ["/", "\\", " ", "\\/", "/ \\", "a b/c\\d", "été", "名前", "\\\\", "x\\"]
)
NAMES = st.one_of(HOSTILE, ANY_TEXT).filter(bool)


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        ("plain", "plain"),
        ("a/b", "a\\/b"),
        ("a\\b", "a\\\\b"),
        ("a b", "a\\ b"),
        ("/ \\", "\\/\\ \\\\"),
        ("été", "été"),
        ("", ""),
    ],
)
def test_escape_name_uses_the_nczarr_table(name: str, escaped: str) -> None:
    assert escape_name(name) == escaped
    assert unescape_name(escaped) == name


def test_unescape_accepts_a_backslash_before_any_character() -> None:
    assert unescape_name("\\{x\\}") == "{x}"


def test_unescape_rejects_a_lone_trailing_backslash() -> None:
    with pytest.raises(FQNError, match=r"^name 'a\\\\' ends with a lone backslash$"):
        unescape_name("a\\")


@pytest.mark.parametrize(
    ("names", "fqn"),
    [
        ([], "/"),
        (["g"], "/g"),
        (["g", "v"], "/g/v"),
        (["a/b", "c d", "e\\f"], "/a\\/b/c\\ d/e\\\\f"),
    ],
)
def test_join_and_split(names: list[str], fqn: str) -> None:
    assert join_fqn(names) == fqn
    assert split_fqn(fqn) == names


@pytest.mark.parametrize(
    ("fqn", "message"),
    [
        ("g/v", "FQN 'g/v' does not start with '/'"),
        ("/a//b", "FQN '/a//b' has an empty name"),
        ("/a/", "FQN '/a/' has an empty name"),
        ("/a\\", "FQN '/a\\\\' ends with a lone backslash"),
        ("/a\\/b\\", "FQN '/a\\\\/b\\\\' ends with a lone backslash"),
        ("/a b", "FQN '/a b' has a blank that is not escaped"),
        ("/a\\ b c", "FQN '/a\\\\ b c' has a blank that is not escaped"),
    ],
)
def test_split_rejects_malformed_fqns(fqn: str, message: str) -> None:
    with pytest.raises(FQNError) as caught:
        split_fqn(fqn)
    assert str(caught.value) == message
    assert isinstance(caught.value, NCZarrError) and isinstance(caught.value, ValueError)


def test_split_reads_extra_escapes() -> None:
    assert split_fqn("/\\{g\\}/v") == ["{g}", "v"]


@given(ANY_TEXT)
def test_escape_round_trips_every_name(name: str) -> None:
    assert unescape_name(escape_name(name)) == name


@given(st.lists(NAMES, max_size=6))
def test_join_round_trips_every_path(names: list[str]) -> None:
    fqn = join_fqn(names)
    assert split_fqn(fqn) == names
    assert join_fqn(split_fqn(fqn)) == fqn
