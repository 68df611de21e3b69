"""The type of a JSON document as ``json.loads`` gives it (metadata documents, attributes),
and netcdf-c's lenient reading of JSON (:func:`loads_netcdf_c`)."""

from __future__ import annotations

import re
from typing import TypeAlias

#: Any JSON value; code that reads one checks the shape it needs with isinstance.
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
#: A JSON object (a metadata document, a codec's configuration).
JSONObject: TypeAlias = "dict[str, JSON]"

class WrittenFloat(float):
    """A JSON number read as a float that keeps the text it was written as (``0.``,
    ``1.50``, ``1e5``): netcdf-c shows a JSON value held by a char attribute with its numbers
    as written."""

    text: str

    def __new__(cls, text: str, value: float | None = None) -> WrittenFloat:
        written = super().__new__(cls, _float_of(text) if value is None else value)
        written.text = text
        return written


class WrittenInt(int):
    """A JSON integer that netcdf-c reads but JSON does not write (``02``, ``+3``), keeping
    its text as :class:`WrittenFloat` does."""

    text: str

    def __new__(cls, text: str) -> WrittenInt:
        written = super().__new__(cls, int(text))
        written.text = text
        return written


def _float_of(text: str) -> float:
    """The value of a decimal or C hexadecimal number's text."""
    if _HEXADECIMAL.fullmatch(text):
        return (-1.0 if text.startswith("-") else 1.0) * float.fromhex(text.lstrip("+-"))
    return float(text)


# netcdf-c's lexer (libdispatch/ncjson.c): a run of these characters is one word, told apart
# as a boolean, an integer (C's %lld), a double (C's %lg), null, else a bare string
_WORD = re.compile(r"[A-Za-z0-9_$+\-.]+")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL)
_SPACE = re.compile(r"[\x00-\x20\x7f]*")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEXADECIMAL = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
_SPECIAL_DOUBLES = {
    "nan": float("nan"), "nanf": float("nan"), "+nan": float("nan"), "-nan": float("nan"),
    "inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf"),
    "infinity": float("inf"), "+infinity": float("inf"), "-infinity": float("-inf"),
    "infinityf": float("inf"), "-infinityf": float("-inf"),
}  # fmt: skip
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_UNICODE_ESCAPE = re.compile(r"u[0-9a-fA-F]{4}")


def loads_netcdf_c(text: str, max_depth: int) -> JSON:
    """Parse JSON as netcdf-c 4.10.1 does, which accepts more than JSON: numbers with leading
    zeros (``02``), a ``+`` sign, ``1.``, ``.5``, hexadecimal, ``NaN``/``nan``/``Infinity``/
    ``inf`` in any case, ``True``/``NULL`` in any case, bare words as strings, a comma before
    a closing bracket or brace. Like netcdf-c it refuses text after the value (only
    whitespace may follow), comments and single quotes. ``\\uXXXX`` escapes are decoded
    (netcdf-c drops their backslash). ValueError saying where the text is not readable."""
    parser = _Parser(text, max_depth)
    value = parser.value()
    parser.skip_space()
    if parser.pos != len(text):
        raise ValueError(f"unexpected text at char {parser.pos}")
    return value


class _Parser:
    """netcdf-c's recursive descent (the depth is bounded, so recursion is safe)."""

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.pos = 0
        self.max_depth = max_depth

    def skip_space(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def value(self, depth: int = 0) -> JSON:
        token = self._token()
        if token == "[":
            return self._list(depth + 1)
        if token == "{":
            return self._object(depth + 1)
        if isinstance(token, str):
            raise ValueError(f"unexpected {token!r} at char {self.pos - 1}")
        return token[0]

    def _list(self, depth: int) -> list[JSON]:
        self._check_depth(depth)
        items: list[JSON] = []
        while not self._closes("]"):  # netcdf-c lets a comma stand before the bracket
            items.append(self.value(depth))
            if self._closes("]"):
                break
            self._expect(",")
        return items

    def _object(self, depth: int) -> dict[str, JSON]:
        self._check_depth(depth)
        members: dict[str, JSON] = {}
        while not self._closes("}"):  # netcdf-c lets a comma stand before the brace
            token = self._token()
            if isinstance(token, str) or isinstance(token[0], dict | list) or token[0] is None:
                raise ValueError(f"expected a key at char {self.pos}")
            self._expect(":")
            members[token[1]] = self.value(depth)
            if self._closes("}"):
                break
            self._expect(",")
        return members

    def _check_depth(self, depth: int) -> None:
        if depth > self.max_depth:
            raise ValueError(f"nested deeper than {self.max_depth} levels at char {self.pos}")

    def _expect(self, mark: str) -> None:
        if not self._closes(mark):
            raise ValueError(f"expected {mark!r} at char {self.pos}")

    def _closes(self, mark: str) -> bool:
        self.skip_space()
        if self.text.startswith(mark, self.pos):
            self.pos += 1
            return True
        return False

    def _token(self) -> str | tuple[JSON, str]:
        """A punctuation mark, or (value, its text) for a word or a string."""
        self.skip_space()
        if self.pos >= len(self.text):
            raise ValueError("unexpected end of text")
        char = self.text[self.pos]
        if char == '"':
            match = _STRING.match(self.text, self.pos)
            if match is None:
                raise ValueError(f"unterminated string at char {self.pos}")
            self.pos = match.end()
            text = _unescape(match[1])
            return text, text
        match = _WORD.match(self.text, self.pos)
        if match is None:
            if char in "{}[],:":
                self.pos += 1
                return char
            raise ValueError(f"unexpected {char!r} at char {self.pos}")
        self.pos = match.end()
        return _word(match[0]), match[0]


def _word(word: str) -> JSON:
    lower = word.lower()
    if lower in ("true", "false"):
        return lower == "true"
    if _INTEGER.fullmatch(word):
        return int(word) if str(int(word)) == word else WrittenInt(word)
    if lower in _SPECIAL_DOUBLES:
        return WrittenFloat(word, _SPECIAL_DOUBLES[lower])
    if _DECIMAL.fullmatch(word) or _HEXADECIMAL.fullmatch(word):
        return WrittenFloat(word)
    if lower == "null":
        return None
    return word


def _unescape(text: str) -> str:
    """netcdf-c's unescaping (``\\b \\f \\n \\r \\t``, else the escaped character itself), plus
    JSON's ``\\uXXXX``."""
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        escaped = text[i + 1]
        if _UNICODE_ESCAPE.match(text, i + 1):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(escaped, escaped))
        i += 2
    return "".join(out)
