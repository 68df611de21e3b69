"""The JSON dialect of netcdf-c's metadata documents (§1.4), writing and reading, and the
documents at a store's root parsed once."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping

import numpy as np

from nczarr.errors import FormatError, MetadataError
from nczarr.formats.keys import ROOT_DOCUMENT_KEYS
from nczarr.store.base import Store
from nczarr.zarr.jsonvalue import JSON, WrittenFloat, WrittenInt
from nczarr.zarr.metadata import ZARR_JSON, ZARRAY, ZATTRS, ZGROUP, ZMETADATA, load_json


def float_to_json(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_TO_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def dumps(obj: object, *, byte_compatible: bool = False) -> bytes:
    """JSON as netcdf-c writes it (§1.4): ``", "`` between object members, ``","`` between
    list items, raw UTF-8, no newline. Floats are exact (shortest round-trip text) unless
    ``byte_compatible``, which writes them with ``%g`` as netcdf-c does and leaves control
    characters other than ``\\b \\f \\n \\r \\t`` raw as netcdf-c does (strict parsers reject
    those; otherwise they are written as ``\\u00XX``)."""
    return "".join(_dump(obj, byte_compatible)).encode()


def _dump(obj: object, compat: bool, as_written: bool = False) -> Iterator[str]:
    if as_written and isinstance(obj, WrittenFloat | WrittenInt):
        yield obj.text
        return
    if as_written and isinstance(obj, float) and not math.isfinite(obj):
        yield str(float_to_json(obj))  # bare, as the document had it (JSON's NaN, Infinity)
        return
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, str):
        yield _string(obj, compat)
    elif obj is None:
        yield "null"
    elif isinstance(obj, bool):
        yield "true" if obj else "false"
    elif isinstance(obj, int):
        yield str(obj)
    elif isinstance(obj, float):
        if not math.isfinite(obj):
            yield _string(str(float_to_json(obj)), compat)
        else:
            yield f"{obj:g}" if compat else repr(obj)
    elif isinstance(obj, Mapping):
        yield "{"
        for i, (key, value) in enumerate(obj.items()):
            yield (", " if i else "") + _string(str(key), compat) + ": "
            yield from _dump(value, compat, as_written)
        yield "}"
    elif isinstance(obj, list | tuple):
        yield "["
        for i, value in enumerate(obj):
            if i:
                yield ","
            yield from _dump(value, compat, as_written)
        yield "]"
    else:
        raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _string(text: str, compat: bool) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match[0]
        if char in _ESCAPES:
            return _ESCAPES[char]
        # lone surrogates (bytes that were not UTF-8) cannot be written raw in either dialect
        return char if compat and char < "\ud800" else f"\\u{ord(char):04x}"

    return '"' + _TO_ESCAPE.sub(escape, text) + '"'


def loads(data: bytes, key: str) -> JSON:
    """Parse a metadata document as netcdf-c does, accepting raw control characters and bare
    ``NaN``/``Infinity``; FormatError naming ``key`` when it is not JSON."""
    try:
        return load_json(data, key, strict=False)
    except MetadataError as exc:
        raise FormatError(str(exc)) from None


def compact_json(data: object) -> str:
    """JSON text of a value that a char attribute holds (netcdf-c's dialect), its numbers as
    the document wrote them (netcdf-c shows ``[0.,0.,1.]``, ``[1,02]`` and ``NaN`` as
    written)."""
    return "".join(_dump(data, False, as_written=True))


class RootDocuments(dict[str, bytes]):
    """The documents at a store's root as read (bytes by key), each parsed at most once:
    detecting the convention and reading the dataset both need the root ``zarr.json``,
    which holds the consolidated metadata of the whole tree."""

    def __init__(self, values: Mapping[str, bytes]) -> None:
        super().__init__(values)
        self._parsed: dict[str, JSON] = {}

    @classmethod
    def read(cls, store: Store) -> RootDocuments:
        root = cls(store.get_many(list(ROOT_DOCUMENT_KEYS)))
        root._lift_consolidated()
        return root

    def _lift_consolidated(self) -> None:
        """A v2 root document that only the consolidated copy holds (a store of ``.zmetadata``
        and chunks: netcdf-c reads it all from there), taken from that copy."""
        if ZMETADATA not in self or ZARR_JSON in self:
            return
        try:
            copy = self.parsed(ZMETADATA)
        except FormatError:
            return  # the reader that needs the copy says what is wrong with it
        documents = copy.get("metadata") if isinstance(copy, dict) else None
        if not isinstance(documents, dict):
            return
        for key in (ZGROUP, ZATTRS, ZARRAY):
            if key not in self and isinstance(documents.get(key), dict):
                self[key] = json.dumps(documents[key]).encode()

    def parsed(self, key: str) -> JSON:
        """The document at ``key`` parsed (see :func:`loads`); not to be modified."""
        if key not in self._parsed:
            self._parsed[key] = loads(self[key], key)
        return self._parsed[key]


def root_document(root_documents: Mapping[str, bytes], key: str) -> JSON:
    """The root document at ``key`` parsed, once when ``root_documents`` is RootDocuments."""
    if isinstance(root_documents, RootDocuments):
        return root_documents.parsed(key)
    return loads(root_documents[key], key)
