"""How large and deep a text may make what it describes: what is built from it (numpy dtypes,
fill values, metadata) is walked and allocated, so absurd sizes are refused where the text
declares them, with the position, rather than exhausting memory or the stack later."""

from __future__ import annotations

import math
from dataclasses import dataclass

from nczarr.model import AtomicType

__all__ = ["MAX_CHAR_DATA", "MAX_FIELDS", "MAX_NESTING", "MAX_TYPE_SIZE", "TypeShape"]

#: How deep brackets may nest in a text, and user types in one another.
MAX_NESTING = 100
#: The most bytes one value of a user-defined type may take (compounds, opaques): each
#: fill value is one such value.
MAX_TYPE_SIZE = 1 << 24
#: The most atomic fields a compound type may hold, those of its compound fields included
#: (each is converted and written one by one).
MAX_FIELDS = 10_000
#: The most bytes the char data of one CDL variable may take once each string is padded
#: to its row (the last dimension), as ncgen lays them out.
MAX_CHAR_DATA = 1 << 28
_REFERENCE_SIZE = 16  # what a string or vlen value is counted as


@dataclass(frozen=True)
class TypeShape:
    """How a type is built: how deep its references to user types go (none: 0; an atomic
    type: -1), the bytes one value takes (strings and vlens counted as a reference), and
    its atomic fields."""

    depth: int
    size: int
    fields: int

    @classmethod
    def atomic(cls, type: AtomicType) -> TypeShape:
        return cls(-1, type.size or _REFERENCE_SIZE, 1)

    @classmethod
    def opaque(cls, size: int) -> TypeShape:
        return cls(0, size, 1)

    @classmethod
    def enum(cls, base: AtomicType) -> TypeShape:
        return cls(0, base.size or 1, 1)

    @classmethod
    def vlen(cls, base: TypeShape) -> TypeShape:
        return cls(base.depth + 1, _REFERENCE_SIZE, 1)

    @classmethod
    def compound(cls, fields: list[tuple[TypeShape, tuple[int, ...]]]) -> TypeShape:
        """A compound of fields, each a type's shape and the field's array shape."""
        return cls(
            1 + max((shape.depth for shape, _ in fields), default=-1),
            sum(shape.size * math.prod(dims) for shape, dims in fields),
            sum(shape.fields for shape, _ in fields),
        )

    def problem(self, name: str) -> str | None:
        """Why a type of this shape named ``name`` is refused, or None."""
        if self.depth >= MAX_NESTING:
            return f"type {name!r} nests user types deeper than {MAX_NESTING} levels"
        if self.size > MAX_TYPE_SIZE:
            return f"type {name!r} takes {self.size} bytes per value, more than the {MAX_TYPE_SIZE} allowed"
        if self.fields > MAX_FIELDS:
            return f"type {name!r} holds {self.fields} fields, more than the {MAX_FIELDS} allowed"
        return None
