"""Model text (``*.nczm``): parse it into a model tree, and dump a tree back into it.

The grammar is ``grammar/model.lark``; :class:`~nczarr.syntax.lalr.LalrParser` runs its
LALR(1) tables and builds the tree while it reduces, each node keeping the line and column
of its name. :func:`dump` is the inverse of :func:`parse`: ``parse(dump(tree)) == tree`` for
every tree whose names are non-empty and free of control characters (model text cannot hold
those).
"""

from __future__ import annotations

import functools
import numbers
import re
from collections.abc import Sequence
from os import PathLike
from typing import Any

from nczarr.errors import ParseError
from nczarr.model import (
    AtomicType,
    Attribute,
    CompoundType,
    DataModel,
    Dataset,
    Dimension,
    DimRef,
    EnumMember,
    EnumType,
    Field,
    Group,
    ModelError,
    Node,
    OpaqueType,
    Resolver,
    TypeRef,
    UserType,
    Variable,
    VlenType,
    join_fqn,
    split_fqn,
    unescape_name,
)
from nczarr.store import read_regular_file
from nczarr.syntax.grammars import grammar_path
from nczarr.syntax.lalr import LalrParser, Token
from nczarr.syntax.limits import TypeShape

__all__ = ["dump", "parse", "parse_file"]

_INDENT = "    "
_NAME_SPECIAL = re.compile(r'[ {}()\[\],:="#\\/]')  # the characters a bare name cannot hold
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ZARR_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_STRING_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)
_STRING_SPECIAL = re.compile(r'[\\"\x00-\x1f\x7f-\x9f\ud800-\udfff]')
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t"}
_SIMPLE_QUOTES = {char: "\\" + letter for letter, char in _SIMPLE_ESCAPES.items()}

_ATOMIC_TYPES = {tp.value: tp for tp in AtomicType}
_TERMINAL_WORDS = {
    "NAME": "a name",
    "FQN": "an FQN",
    "SIZE": "a size",
    "ZARRVERSION": "a Zarr version",
    "CONSTANT": "a value",
    "$END": "end of text",
}


def parse(text: str, filename: str | None = None) -> Dataset:
    """The tree that model text describes; raises :class:`ParseError` on bad syntax, and
    on user types too deep or too large to build (see :mod:`nczarr.syntax.limits`)."""
    try:
        dataset: Dataset = _parser().parse(text)
        _check_types(dataset)
        return dataset
    except ParseError as exc:
        exc.filename = filename
        raise


def _check_types(dataset: Dataset) -> None:
    """Refuse a user type that nests other user types too deep, or whose values would be
    too large (see :mod:`nczarr.syntax.limits`); unresolved references and cycles are left
    to the checks, which report them."""
    resolver = Resolver()
    shapes: dict[int, TypeShape] = {}
    for group in dataset.walk():
        for root in group.types:
            # depth first without recursion: a type's shape once all it refers to have one
            stack = [root]
            visiting = {id(root)}
            while stack:
                tp = stack[-1]
                parts = _type_parts(tp, resolver)
                todo = [
                    t for t, _ in parts
                    if not isinstance(t, AtomicType) and id(t) not in shapes and id(t) not in visiting
                ]
                if todo:
                    stack.extend(todo)
                    visiting.update(id(t) for t in todo)
                    continue
                stack.pop()
                shape = _shape(tp, [(_known(t, shapes), dims) for t, dims in parts])
                problem = shape.problem(tp.name)
                if problem is not None:
                    raise ParseError(problem, *(tp.position or (1, 1)), tp.name)
                shapes[id(tp)] = shape


def _type_parts(tp: UserType, resolver: Resolver) -> list[tuple[AtomicType | UserType, tuple[int, ...]]]:
    """The types a type is made of (fields, or a vlen's or enum's base) that resolve, each
    with its array shape."""
    refs = [(f.type, f.shape) for f in tp.fields] if isinstance(tp, CompoundType) else [(getattr(tp, "base", None), ())]
    parts: list[tuple[AtomicType | UserType, tuple[int, ...]]] = []
    for ref, dims in refs:
        if isinstance(ref, AtomicType):
            found: AtomicType | UserType | None = ref
        else:
            found = resolver.type(tp.group, ref) if isinstance(ref, str) and tp.group else None
        if found is not None:
            parts.append((found, tuple(dims)))
    return parts


def _known(tp: AtomicType | UserType, shapes: dict[int, TypeShape]) -> TypeShape:
    """The shape of a type (one in a cycle, not known yet, counts as a plain value)."""
    return TypeShape.atomic(tp) if isinstance(tp, AtomicType) else shapes.get(id(tp), TypeShape.opaque(1))


def _shape(tp: UserType, parts: list[tuple[TypeShape, tuple[int, ...]]]) -> TypeShape:
    if isinstance(tp, CompoundType):
        return TypeShape.compound(parts)
    if isinstance(tp, VlenType):
        return TypeShape.vlen(parts[0][0] if parts else TypeShape.opaque(1))
    if isinstance(tp, OpaqueType):
        return TypeShape.opaque(tp.size)
    return TypeShape.opaque(parts[0][0].size if parts else 1)  # an enum: its base's size


def parse_file(path: str | PathLike[str]) -> Dataset:
    """The tree a model-text file (UTF-8) describes."""
    return parse(read_regular_file(path).decode("utf-8"), filename=str(path))


def dump(dataset: Dataset) -> str:
    """The model text of a tree (the inverse of :func:`parse`).

    Raises :class:`~nczarr.model.ModelError` for what model text cannot hold: an empty name,
    a name with a control character, a malformed Zarr version or a value of a foreign type.
    """
    version = dataset.zarr_version
    if not _ZARR_VERSION.fullmatch(version):
        raise ModelError(f"Zarr version {version!r} cannot be written in model text")
    name = f"{_text_name(dataset.name)} " if dataset.name else ""
    lines = [f"dataset {name}zarr {version} {dataset.data_model.value} {{"]
    _dump_body(dataset, 1, lines)
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- parsing ----------------------------------------------------------------------------------


@functools.cache
def _parser() -> LalrParser[Dataset]:
    return LalrParser(
        grammar_path("model.lark").read_text(encoding="utf-8"),
        start="dataset",
        builder=_Builder(),
        word="NAME",
        word_kinds=("CONSTANT", "SIZE", "ZARRVERSION"),
        leading=(("CONSTANT", '"'), ("FQN", "/")),  # a quote starts a string, a slash an FQN
        describe=_TERMINAL_WORDS,
    )


def _name(token: Token) -> str:
    text = token.text
    return unescape_name(text) if "\\" in text else text


def _type_reference(item: str | Token) -> TypeRef:
    """A type reference: an atomic type's keyword, an FQN or a name."""
    return _ATOMIC_TYPES[item] if isinstance(item, str) else _path(item)


def _dimension_reference(token: Token) -> DimRef:
    """A dimension reference: a size, an FQN or a name."""
    return int(token.text) if token.type == "SIZE" else _path(token)


def _path(token: Token) -> str:
    """The FQN or the name a token stands for."""
    text = token.text
    if token.type == "FQN":
        # With a backslash, the text may use escapes the FQN does not ("\{"): rebuild it.
        return join_fqn(split_fqn(text)) if "\\" in text else text
    return unescape_name(text)


def _constant(item: Any) -> Any:
    if type(item) is not Token:  # already built: a compound or vlen constant
        return item
    text = item.text
    first = text[0]
    if first == '"':
        body = text[1:-1]
        return _unquote(body, item) if "\\" in body else body
    if first == "0" and text[1:2] in ("x", "X"):
        if len(text) % 2:
            raise ParseError(
                f"opaque value {text} has an odd number of hex digits", *item.position, text
            )
        return bytes.fromhex(text[2:])
    if text.isdigit() or (first in "+-" and text[1:].isdigit()):
        return int(text)
    # What the token's syntax leaves: a point or an exponent, NaN or an infinity.
    return float(text)


def _unquote(body: str, token: Token) -> str:
    def replace(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[escape]
        if len(escape) > 1 and int(escape[1:], 16) <= 0x10FFFF:
            return chr(int(escape[1:], 16))
        line, column = token.lines.position(token.offset + 1 + match.start())
        raise ParseError(f"invalid escape \\{escape} in a string", line, column, token.text)

    return _STRING_ESCAPE.sub(replace, body)


def _fill(group: Group, declarations: list[Node]) -> Group:
    for node in declarations:
        group.add(node)
    return group


class _Builder:
    """Builds the tree while the parser reduces: one method per grammar rule.

    Value tokens arrive as :class:`Token`; keywords kept by ``!rules`` (the atomic types)
    as plain strings.
    """

    def dataset(self, children: Sequence[Any]) -> Dataset:
        name, version, model, *declarations = children
        dataset = Dataset(
            "" if name is None else _name(name),
            zarr_version=version.text,
            data_model=model or DataModel.ENHANCED,
            position=(name or version).position,
        )
        return _fill(dataset, declarations)  # type: ignore[return-value]

    def data_model(self, children: Sequence[str]) -> DataModel:
        return DataModel(children[0])

    def group(self, children: Sequence[Any]) -> Group:
        name, *declarations = children
        return _fill(Group(_name(name), position=name.position), declarations)

    def dimension(self, children: Sequence[Any]) -> Dimension:
        name, size = children
        if type(size) is Token:
            return Dimension(_name(name), int(size.text), position=name.position)
        return Dimension(_name(name), size, True, position=name.position)

    def unlimited(self, children: Sequence[Token | None]) -> int:
        (size,) = children
        return 0 if size is None else int(size.text)

    def variable(self, children: Sequence[Any]) -> Variable:
        tp, name, dimensions, attributes = children
        return Variable(
            _name(name), _type_reference(tp), dimensions or [], attributes or [], position=name.position
        )

    def dimrefs(self, children: Sequence[Token | None]) -> list[DimRef]:
        return [_dimension_reference(token) for token in children if token is not None]

    def attributes(self, children: Sequence[Attribute]) -> list[Attribute]:
        return list(children)

    def attribute(self, children: Sequence[Any]) -> Attribute:
        # The most frequent node: atomic types and plain values are handled inline.
        tp, name, *constants = children
        values: list[Any] | str = [_constant(c) for c in constants]
        if tp == "char" and values and all(type(v) is str for v in values):
            values = "".join(values)  # "ab", "cd" is the text "abcd"
        return Attribute(
            _name(name),
            _ATOMIC_TYPES[tp] if type(tp) is str else _type_reference(tp),
            values,
            position=name.lines.position(name.offset),
        )

    def compound_constant(self, children: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(map(_constant, children))

    def vlen_constant(self, children: Sequence[Any]) -> list[Any]:
        return list(map(_constant, children))

    def compound(self, children: Sequence[Any]) -> CompoundType:
        name, *fields = children
        return CompoundType(_name(name), fields, position=name.position)

    def field(self, children: Sequence[Any]) -> Field:
        tp, name, shape = children
        return Field(_name(name), _type_reference(tp), shape or (), position=name.position)

    def shape(self, children: Sequence[Token | None]) -> tuple[int, ...]:
        return tuple(int(token.text) for token in children if token is not None)

    def enum(self, children: Sequence[Any]) -> EnumType:
        base, name, *members = children
        return EnumType(_name(name), _type_reference(base), members, position=name.position)

    def member(self, children: Sequence[Token]) -> EnumMember:
        name, value = children
        return EnumMember(_name(name), _constant(value), position=name.position)

    def opaque(self, children: Sequence[Token]) -> OpaqueType:
        name, size = children
        return OpaqueType(_name(name), int(size.text), position=name.position)

    def vlen(self, children: Sequence[Any]) -> VlenType:
        base, name = children
        return VlenType(_name(name), _type_reference(base), position=name.position)


# -- printing ---------------------------------------------------------------------------------


def _text_name(name: str) -> str:
    if not name or _CONTROL.search(name):
        raise ModelError(f"name {name!r} cannot be written in model text")
    text = _NAME_SPECIAL.sub(r"\\\g<0>", name)
    # A leading digit could read as a size, a keyword as that keyword.
    if "0" <= name[0] <= "9" or name in _parser().keywords:
        text = "\\" + text
    return text


def _text_reference(ref: TypeRef | DimRef) -> str:
    if isinstance(ref, AtomicType):
        return ref.value
    if isinstance(ref, int):
        return str(ref)
    if ref.startswith("/"):
        return "/" + "/".join(map(_text_name, split_fqn(ref)))
    return _text_name(ref)


def _quote(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        char = match.group()
        if char in _SIMPLE_QUOTES:
            return _SIMPLE_QUOTES[char]
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return '"' + _STRING_SPECIAL.sub(replace, text) + '"'


def _text_value(value: Any) -> str:
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, tuple):
        return "{" + ", ".join(map(_text_value, value)) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(map(_text_value, value)) + "]"
    raise ModelError(f"value {value!r} cannot be written in model text")


def _text_attribute(attribute: Attribute) -> str:
    values = attribute.values
    items = [values] if isinstance(values, str) else values
    text = f"attribute {_text_reference(attribute.type)} {_text_name(attribute.name)} ="
    return text + " " + ", ".join(map(_text_value, items)) if items else text


def _dump_body(group: Group, depth: int, lines: list[str]) -> None:
    pad = _INDENT * depth
    for dim in group.dimensions:
        if not dim.unlimited:
            size = str(dim.size)
        else:
            size = f"unlimited({dim.size})" if dim.size else "unlimited"
        lines.append(f"{pad}dimension {_text_name(dim.name)} = {size}")
    for tp in group.types:
        _dump_type(tp, pad, lines)
    for var in group.variables:
        line = f"{pad}variable {_text_reference(var.type)} {_text_name(var.name)}"
        if var.dimensions:
            line += "(" + ", ".join(map(_text_reference, var.dimensions)) + ")"
        if not var.attributes:
            lines.append(line)
            continue
        lines.append(line + " {")
        lines.extend(f"{pad}{_INDENT}{_text_attribute(a)}" for a in var.attributes)
        lines.append(pad + "}")
    lines.extend(pad + _text_attribute(a) for a in group.attributes)
    for sub in group.groups:
        lines.append(f"{pad}group {_text_name(sub.name)} {{")
        _dump_body(sub, depth + 1, lines)
        lines.append(pad + "}")


def _dump_type(tp: UserType, pad: str, lines: list[str]) -> None:
    name = _text_name(tp.name)
    if isinstance(tp, OpaqueType):
        lines.append(f"{pad}opaque {name}({tp.size})")
    elif isinstance(tp, VlenType):
        lines.append(f"{pad}vlen {_text_reference(tp.base)} {name}")
    elif isinstance(tp, EnumType):
        lines.append(f"{pad}enum {_text_reference(tp.base)} {name} {{")
        members = [
            f"{pad}{_INDENT}{_text_name(m.name)} = {_text_value(m.value)}" for m in tp.members
        ]
        if members:
            lines.append(",\n".join(members))
        lines.append(pad + "}")
    else:
        assert isinstance(tp, CompoundType)
        lines.append(f"{pad}compound {name} {{")
        for fld in tp.fields:
            line = f"{pad}{_INDENT}field {_text_reference(fld.type)} {_text_name(fld.name)}"
            if fld.shape:
                line += "(" + ", ".join(map(str, fld.shape)) + ")"
            lines.append(line)
        lines.append(pad + "}")
