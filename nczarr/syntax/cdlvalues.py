"""CDL constants and values as ncgen reads them: numbers with their inferred types, strings and
characters with ncgen's escapes, the types of untyped attributes, and each variable's data
list turned into a numpy array of its full shape (or, for a large variable, its data and fill
value: :class:`PaddedValues`)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, Protocol, cast

import numpy as np

from nczarr.errors import CdlError, ParseError
from nczarr.model import (
    AtomicType,
    AttributeValue,
    CompoundType,
    Dimension,
    EnumType,
    Group,
    OpaqueType,
    UserType,
    Variable,
    VlenType,
)
from nczarr.syntax.lalr import Token
from nczarr.syntax.limits import MAX_CHAR_DATA
from nczarr.values.stored import char_texts
from nczarr.values.types import DEFAULT_FILL, value_dtype

ErrorMaker = Callable[[str, Any], ParseError]


@dataclass(slots=True)
class Const:
    """A constant of a CDL list: its kind, value and token.

    Kinds: ``number`` (``type`` says which), ``char`` (a character constant: a byte), ``text``
    (bytes), ``opaque`` (hex digits), ``fill`` (``_``), ``nil``, ``enum`` (a name or path),
    ``call`` (a function), ``braced`` (a list of items).
    """

    kind: str
    value: object  # read it through the accessor of its kind
    token: Token | None
    type: AtomicType | None = None

    def text(self) -> str:
        """The text of a string constant."""
        return self.data().decode("utf-8", "surrogateescape")

    def number(self) -> int | float:
        """The value of a ``number`` constant."""
        return cast("int | float", self.value)

    def byte(self) -> int:
        """The byte of a ``char`` constant, signed."""
        return cast(int, self.value)

    def data(self) -> bytes:
        """The bytes of a ``text`` constant."""
        return cast(bytes, self.value)

    def digits(self) -> str:
        """The hexadecimal digits of an ``opaque`` constant."""
        return cast(str, self.value)

    def reference(self) -> Token:
        """The name or path of an ``enum`` constant."""
        return cast(Token, self.value)

    def items(self) -> list[DataItem]:
        """The items of a ``braced`` constant."""
        return cast("list[DataItem]", self.value)

    def call(self) -> tuple[Token, list[DataItem]]:
        """The function name and the arguments of a ``call`` constant."""
        return cast("tuple[Token, list[DataItem]]", self.value)


#: An item of a data list as the parser gives it: a token, a constant it built (a function
#: call, NIL), or the items of a braced list.
DataItem = Token | Const | list["DataItem"]
#: A variable's data list as the CDL reader keeps it: the variable, its group, the items and
#: the name token of its data declaration.
Pending = tuple[Variable, Group, list[DataItem], Token]
#: What :meth:`Values.plan` makes of a data list: its items, flattened as far as the type
#: allows (a numeric run already converted), and the name token.
Plan = tuple[np.ndarray | list[DataItem], Token]


class DataContext(Protocol):
    """What turning data lists into arrays needs of the CDL reader that walks the text
    (``nczarr.syntax.cdl``): its errors, its types and their dtype and fill caches, each
    variable's dimensions and name, and the bytes whole arrays may still take."""

    dtypes: dict[int, np.dtype]
    fills: dict[int, np.ndarray]
    eager_bytes: int

    def error(self, message: str, token: Token | None) -> CdlError: ...

    def user_type(self, group: Group, fqn: str) -> UserType: ...

    def lookup_type(self, group: Group, token: Token) -> AtomicType | UserType | None: ...

    def unpack(self, items: list[DataItem]) -> list[DataItem]: ...

    def packed(self, items: list[DataItem], type: AtomicType | UserType) -> np.ndarray | None: ...

    def dimensions_of(self, variable: Variable) -> list[Dimension]: ...

    def name_token(self, variable: Variable) -> Token: ...


_INTEGER = re.compile(r"([+-]?)([0-9]+)([a-zA-Z]*)")
_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]+)([a-zA-Z]*)")
_SPECIAL_FLOATS = {
    "NaN": (AtomicType.DOUBLE, math.nan),
    "nan": (AtomicType.DOUBLE, math.nan),
    "Infinity": (AtomicType.DOUBLE, math.inf),
    "+Infinity": (AtomicType.DOUBLE, math.inf),
    "-Infinity": (AtomicType.DOUBLE, -math.inf),
    "DoubleInf": (AtomicType.DOUBLE, math.inf),
    "NaNf": (AtomicType.FLOAT, math.nan),
    "nanf": (AtomicType.FLOAT, math.nan),
    "Infinityf": (AtomicType.FLOAT, math.inf),
    "+Infinityf": (AtomicType.FLOAT, math.inf),
    "-Infinityf": (AtomicType.FLOAT, -math.inf),
    "Inff": (AtomicType.FLOAT, math.inf),
    "+Inff": (AtomicType.FLOAT, math.inf),
    "-Inff": (AtomicType.FLOAT, -math.inf),
    "FloatInf": (AtomicType.FLOAT, math.inf),
}
_TAGS = {
    ("", False): None,
    ("", True): AtomicType.UINT,
    ("b", False): AtomicType.BYTE,
    ("b", True): AtomicType.UBYTE,
    ("s", False): AtomicType.SHORT,
    ("s", True): AtomicType.USHORT,
    ("l", False): AtomicType.INT,
    ("l", True): AtomicType.UINT,
    ("ll", False): AtomicType.INT64,
    ("ll", True): AtomicType.UINT64,
}
# The signed size class of each integer type; ties go to the later constant (ncgen).
_RANK = {
    AtomicType.BYTE: 1,
    AtomicType.UBYTE: 1,
    AtomicType.SHORT: 2,
    AtomicType.USHORT: 2,
    AtomicType.INT: 3,
    AtomicType.UINT: 3,
    AtomicType.INT64: 4,
    AtomicType.UINT64: 4,
}
_ESCAPE = re.compile(rb"\\(?:([0-7]{3})|[xX]([0-9a-fA-F]{2})|(.))", re.DOTALL)
_SIMPLE = {
    b"a": b"\a", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v",
    b"?": b"\x7f",
}
_DIGITS_AFTER = re.compile(rb"\\[0-7]")


def name_of(token: Token) -> str:
    """The name an identifier stands for (backslash escapes removed)."""
    return unescape(token.text)


def unescape(text: str) -> str:
    """A name's text with its backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", text) if "\\" in text else text


def constant(item: DataItem, error: ErrorMaker | None = None) -> Const:
    """The constant a token (or an already built item) stands for."""
    if isinstance(item, Const):
        return item
    if isinstance(item, list):  # a braced list
        return Const("braced", item, None)
    kind, text = item.type, item.text
    if kind == "NUMBER":
        return _number(text, item, error)
    if kind == "STRING":
        return Const("text", _unescape(text[1:-1], item, error), item)
    if kind == "CHARCONST":
        # '\0' is NUL, as in netcdf-c after 4.9.0 (4.9.0 itself reads the digit "0")
        body = b"\x00" if text == "'\\0'" else _unescape(text[1:-1], item, error)
        value = body[0] if len(body) == 1 else 0
        return Const("char", value - 256 if value > 127 else value, item, AtomicType.BYTE)
    if kind == "IDENT" and text == "_":
        return Const("fill", None, item)
    return Const("enum", item, item)


def _fail(error: ErrorMaker | None, message: str, token: Token) -> ParseError:
    if error is not None:
        return error(message, token)
    line, column = token.position
    return CdlError(message, line, column, token.text)


def _number(text: str, token: Token, error: ErrorMaker | None) -> Const:
    special = _SPECIAL_FLOATS.get(text)
    if special is not None:
        return Const("number", special[1], token, special[0])
    found = _HEX.fullmatch(text)
    if found is not None:
        sign, digits, suffix = found.groups()
        if sign:
            raise _fail(error, "a hexadecimal constant cannot be signed", token)
        if not suffix:
            return Const("opaque", digits.lower(), token)
        # ncgen reads hexadecimal integers as 32-bit unsigned, whatever their suffix.
        return Const("number", min(int(digits, 16), 2**32 - 1), token, AtomicType.UINT)
    found = _INTEGER.fullmatch(text)
    if found is None:
        last = text[-1]
        if last in "fF":
            return Const("number", float(np.float32(float(text[:-1]))), token, AtomicType.FLOAT)
        body = text[:-1] if last in "dDlL" else text
        return Const("number", float(body), token, AtomicType.DOUBLE)
    sign, digits, suffix = found.groups()
    letters = suffix.lower()
    unsigned = "u" in letters
    tag = _TAGS[letters.replace("u", ""), unsigned]
    if digits[0] == "0":  # octal; a digit 8 or 9 ends the conversion, as strtoull does
        octal = re.match(r"[0-7]*", digits).group(0)  # type: ignore[union-attr]
        raw = int(octal, 8) if octal else 0
    else:
        raw = int(digits)
    if raw >= 2**64:
        raise _fail(error, f"integer constant out of range: {text}", token)
    if sign == "-" and unsigned:
        raise _fail(error, f"unsigned integer cannot be signed: {text}", token)
    if tag is None:
        value = raw - 2**64 if raw >= 2**63 else raw
        if sign == "-":
            value = -value
        if -(2**31) <= value < 2**31:
            return Const("number", value, token, AtomicType.INT)
        if 0 <= value < 2**32:
            return Const("number", value, token, AtomicType.UINT)
        return Const("number", value, token, AtomicType.INT64 if value < 0 else AtomicType.UINT64)
    value = -raw if sign == "-" else raw
    if unsigned and value > tag.high:  # type: ignore[operator]
        raise _fail(error, f"value out of range for {tag}: {text}", token)
    return Const("number", wrap(value, tag), token, tag)


def wrap(value: int, type: AtomicType) -> int:
    """An integer cast to an integer type as C does (modulo 2**bits)."""
    bits = 8 * type.size  # type: ignore[operator]
    value &= (1 << bits) - 1
    if type.low and value > type.high:  # type: ignore[operator]
        value -= 1 << bits
    return value


def float_to_int(value: float, type: AtomicType) -> int:
    """A float cast to an integer type as ncgen's C casts do on x86 (out of range: the
    smallest int32 or int64, then wrapped)."""
    small = type.size <= 4 and type is not AtomicType.UINT  # type: ignore[operator]
    low, high = (-(2**31), 2**31) if small else (-(2**63), 2**63)
    if math.isnan(value) or not low <= value < high:
        return wrap(low, type)
    return wrap(int(value), type)


def _unescape(body: str, token: Token, error: ErrorMaker | None) -> bytes:
    raw = body.encode("utf-8", "surrogateescape")
    if b"\\" not in raw:
        return raw

    def one(found: re.Match[bytes]) -> bytes:
        octal, hexa, other = found.groups()
        if octal is not None:
            return bytes([int(octal, 8) & 0xFF])
        if hexa is not None:
            return bytes([int(hexa, 16)])
        if other in b"01234567":  # fewer than three octal digits
            raise _fail(error, f"bad octal escape in {token.text}", token)
        return _SIMPLE.get(other, other)

    return _ESCAPE.sub(one, raw)


def _time(call: Const, error: ErrorMaker) -> float:
    """ncgen's ``time("date")``: hours since 1970-01-01 in the proleptic Gregorian calendar
    (netcdf-c's cdtime: ``cdChar2Comp`` then ``Cdh2e``)."""
    name, args = call.call()
    if name.text.lower() != "time":
        raise error(f"Unknown function name: {name.text}", name)
    texts = [constant(arg) for arg in args]
    if not 1 <= len(texts) <= 2 or any(t.kind != "text" for t in texts):
        raise error("Expected function signature: time([string,]string)", name)
    if len(texts) == 2:
        raise error(f"Time conversion '{texts[0].text()}' not supported", name)
    return _cd_hours(texts[0].text())


# cdChar2Comp's sscanf "%ld-%hd-%hd %d:%d:%lf": the fields read up to the first that fails.
_CD_TIME = re.compile(
    r"\s*([+-]?\d+)(?:-\s*([+-]?\d+)(?:-\s*([+-]?\d+)(?:\s*([+-]?\d+)(?::\s*([+-]?\d+)"
    r"(?::\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))?)?)?)?)?"
)
_DAYS_BEFORE_MONTH = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def _cd_hours(text: str) -> float:
    """Hours since 1970 of a date as cdtime reads it: unread fields take month 1, day 1,
    hour 0; an hour, minute or second out of range stops the reading there; a month out of
    range counts as January; a day is not checked."""
    found = _CD_TIME.match(text)
    year, month, day, hour = 0, 1, 1, 0.0
    if found is not None:
        fields = found.groups()
        year = int(fields[0])
        month = int(fields[1]) if fields[1] else 1
        day = int(fields[2]) if fields[2] else 1
        hours, minutes, seconds = fields[3:]
        if hours is not None and 0 <= int(hours) <= 23:
            hour = float(hours)
            if minutes is not None and 0 <= int(minutes) <= 59:
                hour += int(minutes) / 60
                if seconds is not None and 0 <= float(seconds) <= 60:
                    hour += float(seconds) / 3600
    if not 1 <= month <= 12:
        month = 1
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    day_of_year = _DAYS_BEFORE_MONTH[month - 1] + day + (1 if leap and month > 2 else 0)
    days = _days_before_year(year) - _days_before_year(1970)
    return (days + day_of_year - 1) * 24.0 + hour


def _days_before_year(year: int) -> int:
    """Days from year 0 to the start of ``year`` (proleptic Gregorian, any integer year)."""
    return 365 * year - (-year // 4) + (-year // 100) - (-year // 400)


# C's strtod: the longest prefix that is a number (after blanks), else 0.
_STRTOD = re.compile(
    r"\s*([+-]?)(?:(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|([iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    r"|([nN][aA][nN](?:\([0-9A-Za-z_]*\))?))"
)
_STRTOL = re.compile(r"\s*([+-]?[0-9]+)")


def _string_number(text: str, type: AtomicType) -> int | float:
    """A string converted to a number as ncgen does (``sscanf``): the number it starts
    with, else 0; integers read as decimal integers and wrapped into the type."""
    if type.is_integer:
        found = _STRTOL.match(text)
        whole = int(found.group(1)) if found is not None else 0
        return wrap(max(-(2**63), min(whole, 2**64 - 1)), type)
    number = _STRTOD.match(text)
    value: float = 0.0
    if number is not None:
        sign, hexa, decimal, infinite, _ = number.groups()
        if hexa is not None:
            value = float.fromhex(hexa if "p" in hexa.lower() else hexa + "p0")
        elif decimal is not None:
            value = float(decimal)
        else:
            value = math.inf if infinite is not None else math.nan
        value = -value if sign == "-" else value
    return float(np.float32(value)) if type is AtomicType.FLOAT else value


# -- attributes -------------------------------------------------------------------------------


def _atomic_value(item: Const, type: AtomicType, error: ErrorMaker) -> Any:
    """One constant converted to a numeric or string type (C casts for numbers)."""
    kind = item.kind
    if kind == "call":
        item = Const("number", _time(item, error), item.call()[0], AtomicType.DOUBLE)
        kind = "number"
    if type is AtomicType.STRING:
        if kind == "text":
            return item.text().split("\x00", 1)[0]
        if kind == "nil":
            return None  # a NULL string
        if kind in ("number", "char"):
            return str(item.value)
    elif kind == "text":
        return _string_number(item.text(), type)
    elif kind in ("number", "char", "opaque"):
        value = int(item.digits(), 16) if kind == "opaque" else item.number()
        if type.is_integer:
            return float_to_int(value, type) if isinstance(value, float) else wrap(value, type)
        return float(np.float32(value)) if type is AtomicType.FLOAT else float(value)
    what = {"text": "a string", "nil": "NIL", "fill": "'_'", "enum": "a name"}.get(kind, "a list")
    token = item.token
    raise error(f"{what} is not a value of type {type}", token)


def typed_attribute(type: AtomicType, items: list[DataItem], error: ErrorMaker) -> list[AttributeValue] | str:
    """The values of an attribute declared with an atomic type (char: one ``str``)."""
    consts = [constant(item, error) for item in items]
    if type is AtomicType.CHAR:
        for item in consts:
            if item.kind == "fill":
                raise error("'_' is not allowed in an attribute", item.token)
            if item.kind not in ("text", "char"):
                raise error("Encountered non-string and non-char constant in datalist", item.token)
        return _char_bytes(consts).decode("utf-8", "surrogateescape")
    for item in consts:
        if item.kind == "fill":
            raise error("'_' is not allowed in an attribute", item.token)
    return [_atomic_value(item, type, error) for item in consts]


def infer_attribute(
    items: list[DataItem], name: Token, error: ErrorMaker
) -> tuple[AtomicType, list[AttributeValue] | str]:
    """The type ncgen gives an untyped attribute, and its values."""
    consts = [constant(item, error) for item in items]
    if not consts or all(c.kind == "text" for c in consts):
        return AtomicType.CHAR, b"".join(c.data() for c in consts).decode("utf-8", "surrogateescape")
    for c in consts:
        if c.kind == "fill":
            raise error("'_' is not allowed in an attribute", c.token)
        if c.kind not in ("number", "char"):
            where = c.token if c.token is not None else name
            raise error(
                "non-simple list of values for an untyped attribute (give it a type)", where
            )
    types = [c.type for c in consts if c.type is not None]  # numbers and chars have one
    if AtomicType.DOUBLE in types:
        chosen = AtomicType.DOUBLE
    elif AtomicType.FLOAT in types:
        chosen = AtomicType.FLOAT
    elif any(c.type is AtomicType.UINT64 and c.number() > 2**63 - 1 for c in consts):
        chosen = AtomicType.UINT64
    else:
        chosen = types[0]
        for type in types[1:]:
            if _RANK[type] >= _RANK[chosen]:
                chosen = type
    return chosen, [_atomic_value(c, chosen, error) for c in consts]


def _char_bytes(consts: list[Const]) -> bytes:
    """Strings and characters concatenated (numbers are ignored, as ncgen does)."""
    return b"".join(
        c.data() if c.kind == "text" else bytes([c.byte() & 0xFF]) if c.kind == "char" else b""
        for c in consts
    )


# -- data -------------------------------------------------------------------------------------


class Values:
    """Converts data lists to numpy arrays for the variables of one group."""

    def __init__(self, builder: DataContext, group: Group) -> None:
        self.builder = builder
        self.group = group
        self.error = builder.error

    def _resolve(self, type: Any) -> AtomicType | UserType:
        if isinstance(type, AtomicType):
            return type
        return self.builder.user_type(self.group, type)

    # -- dtypes and fills ---------------------------------------------------------------

    def _dtype(self, type: AtomicType | UserType) -> np.dtype:
        """The numpy dtype of a type as netCDF4 shows it (compounds C-aligned, built once)."""
        if not isinstance(type, CompoundType):
            return value_dtype(type)
        found = self.builder.dtypes.get(id(type))
        if found is None:
            found = self.builder.dtypes[id(type)] = value_dtype(type)
        return found

    def _default_fill(self, type: AtomicType | UserType) -> Any:
        if isinstance(type, AtomicType):
            fill = DEFAULT_FILL[type]
            return str(fill).encode() if type is AtomicType.CHAR else fill
        if isinstance(type, EnumType):
            return 0
        if isinstance(type, OpaqueType):
            return bytes(type.size)
        if isinstance(type, VlenType):  # ncgen pads with one element of the base's fill
            base = self._resolve(type.base)
            return np.array([self._default_fill(base)], self._dtype(base))
        assert isinstance(type, CompoundType)
        record = self.builder.fills.get(id(type))
        if record is None:
            record = self.builder.fills[id(type)] = np.zeros((), self._dtype(type))
            for f in type.fields:
                ftype = self._resolve(f.type)
                if self._dtype(ftype).kind == "O":  # a vlen's array stays one object per element
                    holder = np.empty(f.shape, object)
                    for index in np.ndindex(f.shape):
                        holder[index] = self._default_fill(ftype)
                    record[f.name][...] = holder
                else:
                    record[f.name] = self._default_fill(ftype)
        return record.copy()[()]

    def _fill_of(self, variable: Variable, type: AtomicType | UserType) -> Any:
        attribute = variable.find_attribute("_FillValue")
        if attribute is None:
            return self._default_fill(type)
        if type is AtomicType.CHAR:
            return str(attribute.values or "\x00").encode("utf-8", "surrogateescape")[:1]
        value = attribute.values[0]
        if isinstance(type, CompoundType):
            return np.array(value, self._dtype(type))[()]
        return value

    # -- user-typed attributes --------------------------------------------------------

    def attribute(self, type: UserType, items: list[DataItem], name: Token) -> list[AttributeValue]:
        """The values of an attribute of a user-defined type, as model values."""
        return [self._model_chars(type, self._model_value(type, constant(item, self.error), name)) for item in items]

    def _model_chars(self, type: AtomicType | UserType, value: Any) -> Any:
        """An attribute value with each char array member of a compound as the model holds
        it: one-character texts (a NUL ``"\\x00"``), not numpy's bytes."""
        if isinstance(type, VlenType):
            base = self._resolve(type.base)
            return [self._model_chars(base, v) for v in value]
        if not isinstance(type, CompoundType):
            return value
        fields = []
        for f, item in zip(type.fields, value):
            ftype = self._resolve(f.type)
            if f.shape and ftype is AtomicType.CHAR:
                item = char_texts(item)
            elif not f.shape:
                item = self._model_chars(ftype, item)
            fields.append(item)
        return tuple(fields)

    def _model_value(self, type: AtomicType | UserType, item: Const, where: Any) -> Any:
        if item.kind == "fill":
            raise self.error("'_' is not allowed in an attribute", item.token)
        if isinstance(type, AtomicType):
            if type is AtomicType.CHAR:
                return _char_bytes([item]).decode("utf-8", "surrogateescape")
            return _atomic_value(item, type, self.error)
        if isinstance(type, EnumType):
            return self._enum_value(type, item)
        if isinstance(type, OpaqueType):
            return self._opaque_value(type, item)
        if item.kind != "braced":
            raise self.error(f"a value of {type.kind} {type.name!r} needs braces", item.token)
        # (a braced item has no token of its own: errors inside it point at its first value)
        inner = self._inner_items(item)
        if isinstance(type, VlenType):
            base = self._resolve(type.base)
            return [self._model_value(base, i, where) for i in inner]
        assert isinstance(type, CompoundType)
        if len(inner) > len(type.fields):
            extra = inner[len(type.fields)]
            raise self.error(
                f"more values than the {len(type.fields)} fields of {type.name!r}",
                _first_token(extra) or where,
            )
        values = []
        for index, f in enumerate(type.fields):
            ftype = self._resolve(f.type)
            if index >= len(inner):
                default = np.full(f.shape, self._default_fill(ftype), self._dtype(ftype))
                values.append(default.tolist())
            elif f.shape:
                values.append(self._array_field(ftype, f.shape, inner[index]).tolist())
            elif ftype is AtomicType.CHAR:
                values.append(self._char_field(inner[index]))
            else:
                values.append(self._model_value(ftype, inner[index], where))
        return tuple(values)

    def _char_field(self, item: Const) -> str:
        """A compound's one char: a character constant, or a string's first character
        (``"-x"`` is ``'-'``, ``""`` a NUL), as ncgen takes them; a number is refused, as ncgen does."""
        if item.kind not in ("text", "char"):
            raise self.error("a char field takes a character or a string, not a number (ncgen: illegal conversion)", item.token)
        return _char_bytes([item])[:1].decode("utf-8", "surrogateescape") or "\x00"

    def _inner_items(self, item: Const) -> list[Const]:
        """The items of a braced value of a user type; NIL is refused there, as ncgen does."""
        inner = [constant(i, self.error) for i in item.items()]
        for i in inner:
            if i.kind == "nil":
                raise self.error("NIL data can only be assigned to variables or attributes of type string", i.token)
        return inner

    def _array_field(self, type: AtomicType | UserType, shape: tuple[int, ...], item: Const) -> Any:
        if item.kind != "braced":
            raise self.error("an array field needs braces", item.token)
        inner = self._inner_items(item)
        if type is AtomicType.CHAR:
            return char_array(inner, shape, b"\x00")
        fill = self._default_fill(type)
        out = np.full(shape, fill, self._dtype(type))
        flat = out.reshape(-1)
        for index, i in enumerate(inner[: flat.size]):
            flat[index] = self._element(type, i, fill)
        return out

    def _enum_value(self, type: EnumType, item: Const) -> int:
        if item.kind != "enum":
            if item.kind == "number" and type.base is not AtomicType.CHAR:
                return wrap(int(item.number()), type.base)  # type: ignore[arg-type]
            raise self.error(f"expected a member of enum {type.name!r}", item.token)
        token = item.reference()
        text = token.text
        member = text.rsplit("/", 1)[-1]
        if "." in member and not any(m.name == unescape(member) for m in type.members):
            # "T.c" (after a path too): T is the type its name finds from this group, as
            # ncgen looks it up
            owner, member = member.rsplit(".", 1)
            found = self.builder.lookup_type(self.group, Token("IDENT", owner, token.offset, token.lines))
            if found is not type:
                raise self.error(f"Undefined enum constant: {text.rsplit('/', 1)[-1]}", token)
        wanted = unescape(member)
        for m in type.members:
            if m.name == wanted:
                return m.value
        raise self.error(f"{text!r} is not a member of enum {type.name!r}", token)

    def _opaque_value(self, type: OpaqueType, item: Const) -> bytes:
        if item.kind != "opaque":
            raise self.error(f"expected an opaque constant (0x...) for {type.name!r}", item.token)
        digits = item.digits() + "0" * (len(item.digits()) % 2)
        return bytes.fromhex(digits)[: type.size].ljust(type.size, b"\x00")

    def _element(self, type: AtomicType | UserType, item: Const, fill: Any) -> Any:
        """One data element as numpy takes it."""
        if item.kind == "fill":
            return fill
        if isinstance(type, VlenType):
            base = self._resolve(type.base)
            if item.kind != "braced":
                raise self.error(f"a value of vlen type {type.name!r} needs braces", item.token)
            inner = self._inner_items(item)
            return self._flat_array(base, inner, len(inner), self._default_fill(base))
        return self._model_value(type, item, item.token)

    def _flat_array(
        self, type: AtomicType | UserType, items: np.ndarray | list[Any], size: int, fill: Any
    ) -> np.ndarray:
        """``size`` elements from ``items`` (missing ones: ``fill``)."""
        dtype = np.dtype(object) if isinstance(type, OpaqueType) else self._dtype(type)
        if isinstance(items, np.ndarray):  # a packed run, already converted
            if len(items) >= size:
                return items[:size]
            return np.concatenate([items, np.full(size - len(items), fill, dtype)])
        out = np.empty(size, dtype)
        if dtype.kind == "O" or dtype.fields is not None:
            for index in range(size):
                out[index] = fill
        else:
            out[...] = fill
        for index, item in enumerate(items[:size]):
            value = self._element(type, constant(item, self.error), fill)
            if dtype.fields is not None:
                out[index] = np.array(value, dtype)[()] if isinstance(value, tuple) else value
            else:
                out[index] = value
        return out

    # -- variables -------------------------------------------------------------------------

    def plan(self, variable: Variable, dims: list[Dimension], pending: Pending | None) -> Plan | None:
        """The variable's data items (flattened as far as its type allows), after sizing its
        unlimited dimensions from them; None when the CDL gives no data."""
        if pending is None:
            return None
        _, _, items, ref = pending
        type = self._resolve(variable.type)
        if type is AtomicType.CHAR:
            return list(self._char_plan(variable, dims, self.builder.unpack(items), ref)), ref
        if any(d.unlimited for d in dims[1:]):
            tree = self._nest(dims, 0, self.builder.unpack(items))
            _size_unlimited(dims, 0, tree)
            return tree, ref
        flat: np.ndarray | list[DataItem] | None = self.builder.packed(items, type)
        if flat is None:
            items = self.builder.unpack(items)
            flat = items if _is_flat(items) else _flatten(items, type)
        count = len(flat)
        if not dims and count > 1:
            raise self.error(f"scalar variable {variable.name!r} has {count} values", ref)
        if dims and dims[0].unlimited:
            rest = math.prod(d.size for d in dims[1:])
            records = -(-count // rest) if rest else 0
            dims[0].size = max(dims[0].size, records)
        return flat, ref

    def _char_plan(self, variable: Variable, dims: list[Dimension], items: list[DataItem], ref: Token) -> list[Const]:
        """The constants of char data, braces dropped, after sizing the unlimited dimensions
        from them (with an unlimited dimension that is not the first, as ncgen sizes them:
        from the braces, counting characters)."""
        consts = [constant(item, self.error) for item in _flatten(items, AtomicType.CHAR)]
        unit = _char_unit(dims)
        count = _char_size(consts, unit)
        if count > MAX_CHAR_DATA:
            raise self.error(
                f"the char data of {variable.name!r} take {count} bytes once each string is padded "
                f"to its row of {unit}, more than the {MAX_CHAR_DATA} allowed",
                ref,
            )
        first = next((index for index, dim in enumerate(dims) if dim.unlimited), None)
        if first is not None and any(d.unlimited for d in dims[1:]):
            for item in items if first else [items]:
                if item.__class__ is not list:
                    raise self.error("UNLIMITED dimension (other than first) must be enclosed in {}", _first_token(item))
                self._char_unlimited_sizes(dims, first, item)
        elif dims and dims[0].unlimited:
            rest = math.prod(d.size for d in dims[1:])
            dims[0].size = max(dims[0].size, -(-count // rest) if rest else 0)
        return consts

    def _char_unlimited_sizes(self, dims: list[Dimension], index: int, items: list[DataItem]) -> None:
        """Grow the unlimited ``dims[index]`` and those after it to fit a braced list, as
        ncgen 4.9.0 does: a list per instance up to the last unlimited dimension, where the
        characters (strings unpadded) are counted."""
        following = next((i for i in range(index + 1, len(dims)) if dims[i].unlimited), len(dims))
        product = math.prod(d.size for d in dims[index + 1 : following])
        if following < len(dims):
            length = len(items)
            for item in items:
                if item.__class__ is not list:
                    raise self.error("each instance of an unlimited dimension that is not the first needs braces",
                                     _first_token(item))
                self._char_unlimited_sizes(dims, following, item)
        else:
            nested = next((item for item in items if item.__class__ is list), None)
            if nested is not None:
                raise self.error("Expected character constant, found {...}", _first_token(nested))
            consts = [constant(item, self.error) for item in items]
            length = sum(1 if c.kind == "char" else len(c.data()) if c.kind == "text" else 0 for c in consts)
        if product:
            dims[index].size = max(dims[index].size, -(-length // product))

    def _nest(self, dims: list[Dimension], level: int, items: list[Any]) -> list[Any]:
        """The items of one instance of ``dims[level:]`` as a list along ``dims[level]``,
        nested one list per dimension; ncgen wants each instance of an unlimited dimension
        other than the first in braces."""
        if level == len(dims) - 1:
            return items
        if dims[level + 1].unlimited:
            children = []
            for item in items:
                if item.__class__ is not list:
                    raise self.error(
                        "each instance of an unlimited dimension that is not the first needs "
                        "braces",
                        _first_token(item),
                    )
                children.append(self._nest(dims, level + 1, item))
            return children
        end = level + 1
        while end < len(dims) and not dims[end].unlimited:
            end += 1
        chunk = math.prod(d.size for d in dims[level + 1 : end])
        if not chunk:
            return []
        return [
            self._nest(dims, level + 1, items[i : i + chunk]) for i in range(0, len(items), chunk)
        ]

    def _place(self, type: Any, out: np.ndarray, tree: np.ndarray | list[Any], fill: Any) -> None:
        """Write nested data (see :meth:`_nest`) into ``out``; the rest keeps the fill."""
        if out.ndim == 1:
            size = min(len(tree), out.shape[0])
            out[:size] = self._flat_array(type, tree, size, fill)
            return
        for index, child in enumerate(tree[: out.shape[0]]):
            self._place(type, out[index], child, fill)

    def build(self, variable: Variable, shape: tuple[int, ...], plan: Plan | None) -> np.ndarray | PaddedValues:
        """The variable's values: its data, then fill values; an array when the builder's
        budget for whole arrays allows, else the data and the fill (nothing of a huge
        variable with little or no data is allocated)."""
        type = self._resolve(variable.type)
        fill = self._fill_of(variable, type)
        size = math.prod(shape)
        items = [] if plan is None else plan[0]
        if type is AtomicType.CHAR:
            unit = _char_unit(self.builder.dimensions_of(variable))
            text = _char_layout([constant(c) for c in items], unit, fill)[:size]
            values = PaddedValues(np.frombuffer(text, dtype="S1"), fill, shape, np.dtype("S1"))
        elif len(shape) > 1 and any(d.unlimited for d in self.builder.dimensions_of(variable)[1:]):
            dtype = np.dtype(object) if isinstance(type, OpaqueType) else self._dtype(type)
            if size * _itemsize(dtype) > self.builder.eager_bytes:
                raise self.error(
                    f"{variable.name!r} is too large to build in memory ({size} values) with an unlimited "
                    "dimension that is not the first",
                    self.builder.name_token(variable),
                )
            out = self._flat_array(type, [], size, fill).reshape(shape)
            self._place(type, out, items, fill)
            self.builder.eager_bytes -= size * _itemsize(dtype)
            return out
        else:
            given = self._flat_array(type, items, min(len(items), size), fill)
            values = PaddedValues(given, fill, shape, given.dtype)
        nbytes = size * _itemsize(values.dtype)
        if nbytes > self.builder.eager_bytes:
            return values
        self.builder.eager_bytes -= nbytes
        return values[...]


def _itemsize(dtype: np.dtype) -> int:
    """Bytes per value, counting an object's reference only."""
    return max(1, dtype.itemsize)


class PaddedValues:
    """The values of a variable as CDL gives them without holding them all: the first
    values in C order (``given``, 1-D), then ``fill`` up to ``shape``. Indexing with slices
    of step 1 (or ``...``) gives a numpy array of just that block."""

    def __init__(self, given: np.ndarray, fill: object, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.given = given
        self.fill = fill
        self.shape = shape
        self.dtype = dtype

    def __getitem__(self, selection: tuple[slice, ...] | slice | EllipsisType) -> np.ndarray:
        if selection is Ellipsis:
            selection = ()
        if not isinstance(selection, tuple):
            selection = (selection,)
        bounds = [s.indices(n)[:2] for s, n in zip(selection, self.shape)]
        bounds += [(0, n) for n in self.shape[len(bounds) :]]
        starts = [start for start, _ in bounds]
        block = tuple(max(0, stop - start) for start, stop in bounds)
        out = np.empty(block, self.dtype)
        flat = out.reshape(-1)
        if self.dtype.kind == "O":  # one fill per element (a vlen's fill is an array)
            for index in range(flat.size):
                flat[index] = self.fill
        else:
            flat[...] = self.fill
        count = self._given_in(block, starts)
        if count and not block:  # a scalar
            flat[0] = self.given[0]
        elif count:
            where = np.unravel_index(np.arange(count), block)
            strides = _c_strides(self.shape)
            offsets = sum((axis + start) * stride for axis, start, stride in zip(where, starts, strides))
            flat[:count] = self.given[np.asarray(offsets, dtype=np.int64)]
        return out

    def fill_from(self, selection: tuple[slice, ...]) -> bool:
        """Whether all values from the block's first one on, in C order, are fill values."""
        first = sum(s.indices(n)[0] * stride for s, n, stride in zip(selection, self.shape, _c_strides(self.shape)))
        return first >= len(self.given)

    def _given_in(self, block: tuple[int, ...], starts: list[int]) -> int:
        """How many values of the block, in C order, come from ``given``: the flat index in
        the whole shape grows along the block, so those are the first ones (found by
        bisection)."""
        strides = _c_strides(self.shape)

        def offset(position: int) -> int:
            total = 0
            for size, start, stride in zip(reversed(block), reversed(starts), reversed(strides)):
                position, index = divmod(position, size)
                total += (index + start) * stride
            return total

        low, high = 0, math.prod(block)
        while low < high:
            middle = (low + high) // 2
            if offset(middle) < len(self.given):
                low = middle + 1
            else:
                high = middle
        return low


def _c_strides(shape: tuple[int, ...]) -> list[int]:
    """Elements between neighbours along each axis of a C-ordered array."""
    strides = [1] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    return strides


def _size_unlimited(dims: list[Dimension], level: int, tree: list[Any]) -> None:
    """Grow the unlimited dimensions to the longest list found at their level."""
    if level == len(dims):
        return
    if dims[level].unlimited:
        dims[level].size = max(dims[level].size, len(tree))
    if level + 1 < len(dims):
        for child in tree:
            _size_unlimited(dims, level + 1, child)


def _first_token(item: Any) -> Token | None:
    """The first token of an item (of a braced list: of its first item)."""
    while type(item) is Const and item.token is None and item.kind == "braced" and item.items():
        item = item.items()[0]
    if type(item) is list:
        return _first_token(item[0]) if item else None
    return item if type(item) is Token else item.token if type(item) is Const else None




def _is_flat(items: list[Any]) -> bool:
    return not any(type(item) is list for item in items)


def _flatten(items: list[Any], type: AtomicType | UserType) -> list[Any]:
    """Braces dropped, except around the values of compound and vlen types."""
    if isinstance(type, (CompoundType, VlenType)):
        return items
    out: list[Any] = []
    for item in items:
        if item.__class__ is list:
            out.extend(_flatten(item, type))
        else:
            out.append(item)
    return out


def _char_unit(dims: list[Dimension]) -> int:
    """The length ncgen pads each string of char data to a multiple of: the last dimension's,
    unless the variable has rank 0 or 1 or its last dimension is unlimited."""
    return dims[-1].size if len(dims) > 1 and not dims[-1].unlimited else 1


def _char_pieces(consts: list[Const], unit: int) -> Iterator[tuple[bytes, int]]:
    """Char data as ncgen 4.9.0 lays it out, piece by piece, with each piece's padded length:
    runs of character constants merged into strings, each string padded to a multiple of
    ``unit`` (an empty one to a whole unit); the fill marker ``_`` is ``unit - 1`` fill
    characters; numbers are ignored."""
    run: list[int] = []
    for c in consts:
        if c.kind == "char":
            run.append(c.byte() & 0xFF)
            continue
        if run:
            yield bytes(run), max(1, -(-len(run) // unit)) * unit
            run = []
        if c.kind == "text":
            yield c.data(), max(1, -(-len(c.data()) // unit)) * unit
        elif c.kind == "fill":
            yield b"", unit - 1
    if run:
        yield bytes(run), max(1, -(-len(run) // unit)) * unit


def _char_size(consts: list[Const], unit: int) -> int:
    """The bytes of char data once laid out (see :func:`_char_pieces`)."""
    return sum(size for _, size in _char_pieces(consts, unit))


def _char_layout(consts: list[Const], unit: int, fill: bytes = b"\x00") -> bytes:
    """Char data laid out as ncgen does (see :func:`_char_pieces`), padded with ``fill``."""
    return b"".join(data.ljust(size, fill) for data, size in _char_pieces(consts, unit))


def char_array(consts: list[Const], shape: tuple[int, ...] | list[int], fill: bytes) -> np.ndarray:
    """Char data of ``shape`` (``S1``), padded with the fill character."""
    shape = tuple(shape)
    text = _char_layout([constant(c) for c in consts], shape[-1] if len(shape) > 1 else 1, fill)
    size = math.prod(shape)
    text = text[:size].ljust(size, fill)
    return np.frombuffer(text, dtype="S1").reshape(shape).copy()
