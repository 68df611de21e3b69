"""Zarr metadata documents as typed objects, for both Zarr formats.

A node's documents are handled as a dict of key relative to the node → bytes, so v2 and v3
look alike to callers: ``{"zarr.json": ...}`` for v3, ``{".zarray" or ".zgroup": ...,
".zattrs": ...}`` for v2.

Node metadata classes (frozen dataclasses; ``from_json`` builds one from parsed JSON,
``to_json`` gives the main document's JSON, ``documents()`` the bytes to store):

* :class:`ArrayMetadataV3`, :class:`GroupMetadataV3` (``zarr.json``);
* :class:`ArrayMetadataV2` (``.zarray`` + ``.zattrs``), :class:`GroupMetadataV2` (``.zgroup`` +
  ``.zattrs``).

Both array classes expose the same names (``zarr_format``, ``shape``, ``chunk_shape``,
``data_type``, ``dtype``, ``fill_value``, ``fill_value_or_default``, ``attributes``,
``dimension_names``, ``order``, ``ndim``, ``chunk_key()``, ``with_shape()``,
``with_attributes()``, ``documents()``, ``document_keys()``) so an engine can treat them alike.

Reading: :func:`parse_node` turns whatever documents exist for one node into its metadata.

Consolidated metadata (documents only; the hierarchy code decides when to use them):

* :func:`consolidated_from_root` reads the descendants' metadata from a root's documents: the
  inline ``consolidated_metadata`` of a v3 root ``zarr.json``, or a v2 ``.zmetadata``;
* :func:`make_consolidated_v3` returns a v3 root group carrying its descendants' metadata;
* :func:`make_zmetadata` builds the bytes of a v2 ``.zmetadata``.

In both directions the mapping is relative path (``"a"``, ``"a/b"``) → node metadata for every
descendant of the root (the root itself excluded), and the groups in it carry no
consolidated metadata of their own.

JSON is written by :func:`dump_json` in zarr-python's key order. Fill values are encoded as
JSON strings where JSON has no number for them; NaN and infinities inside *attributes* are
written as the bare tokens ``NaN``/``Infinity``/``-Infinity``, as zarr-python 3 does, so
attributes round-trip through zarr-python as floats.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Self, TypeAlias, TypeVar

import numpy as np

from nczarr.errors import MetadataError, NodeNotFoundError
from nczarr.zarr.chunkspec import FillValue
from nczarr.zarr.dtypes import DataType, object_codec_id_of
from nczarr.zarr.jsonvalue import JSON, JSONObject, WrittenFloat, loads_netcdf_c
from nczarr.zarr.node import check_node_name

__all__ = [
    "MAX_DIMENSIONS",
    "MAX_ELEMENTS",
    "MAX_JSON_DEPTH",
    "ZARRAY",
    "ZARR_JSON",
    "ZATTRS",
    "ZGROUP",
    "ZMETADATA",
    "ArrayMetadata",
    "ArrayMetadataV2",
    "ArrayMetadataV3",
    "GroupMetadata",
    "GroupMetadataV2",
    "GroupMetadataV3",
    "NodeMetadata",
    "check_nesting",
    "consolidated_from_root",
    "dump_json",
    "load_json",
    "make_consolidated_v3",
    "make_zmetadata",
    "parse_node",
]

ZARR_JSON = "zarr.json"
ZARRAY = ".zarray"
ZGROUP = ".zgroup"
ZATTRS = ".zattrs"
ZMETADATA = ".zmetadata"

_V3_ARRAY_MEMBERS = frozenset(
    {
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
        "attributes",
        "dimension_names",
        "storage_transformers",
    }
)
_V3_GROUP_MEMBERS = frozenset({"zarr_format", "node_type", "attributes", "consolidated_metadata"})
_DEFAULT_SEPARATOR = {"default": "/", "v2": "."}

#: The most levels of arrays and objects a node's metadata document may nest when written:
#: far more than any real document needs, and few enough that code walking a parsed document
#: recursively (encoders, comparisons, copies) stays well inside Python's recursion limit.
MAX_JSON_DEPTH = 128
#: The levels consolidated metadata puts around a node's document (v3: consolidated_metadata,
#: metadata, path); documents read may nest this much more than MAX_JSON_DEPTH.
_COPY_LEVELS = 3
#: The most dimensions an array may have: numpy's limit (NPY_MAXDIMS).
MAX_DIMENSIONS = 64
#: The largest number of elements an array, chunk or dimension may have: what int64 holds.
MAX_ELEMENTS = 2**63 - 1


def dump_json(obj: object, max_depth: int | None = MAX_JSON_DEPTH) -> bytes:
    """Serialise one metadata document: UTF-8 on one line (the C encoder: indenting would
    make creating many variables several times slower); numpy scalars and arrays become JSON
    numbers and lists. MetadataError when it nests deeper than ``max_depth`` (a node's
    document deeper than MAX_JSON_DEPTH could not be read back once consolidated; None: as
    deep as Python can write)."""
    too_deep = (
        "a document nests deeper than Python can write as JSON"
        if max_depth is None
        else f"a document may nest at most {max_depth} levels of arrays and objects"
    )
    try:
        text = json.dumps(obj, ensure_ascii=False, allow_nan=True, default=_json_default)
    except RecursionError:
        raise MetadataError(too_deep) from None
    try:
        data = text.encode()
    except UnicodeEncodeError:
        # lone surrogates (bytes that were not UTF-8, kept by surrogate escapes) can only be
        # written as JSON escapes, and only occur inside strings
        data = _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text).encode()
    if max_depth is not None and _nesting_depth(data, max_depth) > max_depth:
        raise MetadataError(too_deep)
    return data


_SURROGATE = re.compile("[\ud800-\udfff]")


def load_json(data: bytes | str, key: str, *, strict: bool = True) -> JSON:
    """Parse one metadata document; MetadataError naming ``key`` when it is not JSON (not
    UTF-8, truncated, numbers too long to convert) or nests deeper than a node's document
    may once consolidated (MAX_JSON_DEPTH and the consolidated levels around it).
    ``strict`` False reads JSON as netcdf-c does: raw control characters inside strings, and
    where the text is not JSON, the rest of netcdf-c's dialect (:func:`loads_netcdf_c`)."""
    limit = MAX_JSON_DEPTH + _COPY_LEVELS
    try:
        # netcdf-c's dialect keeps the text of numbers (a char attribute shows JSON as written)
        obj: JSON = json.loads(data, strict=strict, parse_float=None if strict else WrittenFloat)
    except RecursionError:
        raise MetadataError(f"{key}: not valid JSON: nested deeper than {limit} levels") from None
    except json.JSONDecodeError as exc:
        if strict:
            raise MetadataError(f"{key}: not valid JSON: {exc}") from None
        try:  # netcdf-c's dialect, for documents JSON refuses (a rare path)
            return loads_netcdf_c(exc.doc, limit)
        except ValueError:
            raise MetadataError(f"{key}: not valid JSON: {exc}") from None
    except ValueError as exc:  # UnicodeDecodeError too
        raise MetadataError(f"{key}: not valid JSON: {exc}") from None
    if _nesting_depth(data, limit) > limit:
        raise MetadataError(f"{key}: not valid JSON: nested deeper than {limit} levels")
    return obj


def check_nesting(value: object) -> None:
    """MetadataError when a parsed JSON value nests deeper than :func:`load_json` accepts
    (for values that did not come through it, e.g. ZOM documents)."""
    limit = MAX_JSON_DEPTH + _COPY_LEVELS
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            raise MetadataError(f"a value nests deeper than {limit} levels")
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


_MARKS = b'"[]{}'
_NOT_MARKS = bytes(sorted(set(range(256)) - set(_MARKS)))
_MARK_STEP = np.zeros(256, np.int8)
_MARK_STEP[[ord("["), ord("{")]] = 1
_MARK_STEP[[ord("]"), ord("}")]] = -1


def _nesting_depth(data: bytes | str, limit: int) -> int:
    """How deep the arrays and objects of a valid JSON text nest (0 when it cannot exceed
    ``limit``, the common case: counting brackets costs little). Brackets inside strings
    do not count: escapes are blanked so that every quote left delimits a string."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return 0
    raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_MARKS)
    marks = np.frombuffer(raw, np.uint8)
    outside = np.cumsum(marks == ord('"'), dtype=np.int32) % 2 == 0
    steps = np.where(outside, _MARK_STEP[marks], 0)
    return int(np.cumsum(steps, dtype=np.int32).max(initial=0))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic | np.ndarray):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


# -- shared pieces of the node classes -------------------------------------------------------


class _Node:
    """Equality of node metadata: same class and same documents, so that NaN fill values
    and attributes compare equal to themselves."""

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self) or not isinstance(other, _Node):
            return NotImplemented
        return self.documents() == other.documents()

    __hash__ = None  # type: ignore[assignment]  # mutable attributes dicts inside

    def documents(self) -> dict[str, bytes]:
        """The node's metadata documents by key, as stored."""
        raise NotImplementedError


class _ArrayCommon(_Node):
    """Properties and methods that read the same for v2 and v3 arrays."""

    shape: tuple[int, ...]
    data_type: DataType
    fill_value: FillValue
    attributes: JSONObject

    @property
    def dtype(self) -> np.dtype:
        """The in-memory numpy dtype."""
        return self.data_type.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def fill_value_or_default(self) -> FillValue:
        """The fill value, or the data type's default when there is none (v2 null)."""
        return self.data_type.default_fill() if self.fill_value is None else self.fill_value

    def with_shape(self, new_shape: Sequence[int]) -> Self:
        """The same metadata for a resized array (same number of dimensions; only the shape
        is checked again: appending record by record calls this for every record)."""
        shape = _shape(new_shape, "shape", 0)
        if len(shape) != len(self.shape):
            raise MetadataError(f"cannot resize {len(self.shape)} dimensions to shape {list(shape)}")
        return _copy_with(self, "shape", shape)

    def with_attributes(self, attrs: Mapping[str, JSON]) -> Self:
        """The same metadata with the attributes replaced (the rest was checked when it was
        made: writing every array's document calls this, so it is not checked again)."""
        return _copy_with(self, "attributes", _attributes(attrs))


def _check_array(meta: Any, chunk_name: str) -> None:
    """Normalise and check the members v2 and v3 arrays share (in ``__post_init__``);
    ``chunk_name`` is the field holding the chunk shape."""
    _set(meta, "shape", _shape(meta.shape, "shape", 0))
    chunk_shape = _shape(getattr(meta, chunk_name), chunk_name, 1)
    _set(meta, chunk_name, chunk_shape)
    if len(chunk_shape) != len(meta.shape):
        raise MetadataError(
            f"{chunk_name} {list(chunk_shape)} does not match the {len(meta.shape)} dimensions "
            f"of shape {list(meta.shape)}"
        )
    if not isinstance(meta.data_type, DataType) or meta.data_type.zarr_format != meta.zarr_format:
        raise MetadataError(f"data_type must be a Zarr v{meta.zarr_format} DataType")
    _set(meta, "fill_value", meta.data_type.cast_fill(meta.fill_value))
    _set(meta, "attributes", _attributes(meta.attributes))


def _v2_chunk_key(coords: Sequence[int], separator: str) -> str:
    return separator.join(map(str, coords)) if coords else "0"


# -- Zarr v3 ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ArrayMetadataV3(_ArrayCommon):
    """A v3 array's ``zarr.json``. The chunk grid is regular (``chunk_shape``);
    ``chunk_key_encoding`` is ``"default"`` (separator ``"/"`` unless given) or ``"v2"``
    (separator ``"."`` unless given). ``extensions`` are the unknown members marked
    ``"must_understand": false``, written back unchanged."""

    shape: tuple[int, ...]
    data_type: DataType
    chunk_shape: tuple[int, ...]
    fill_value: FillValue
    codecs: tuple[JSONObject, ...]
    attributes: JSONObject = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    chunk_key_encoding: Literal["default", "v2"] = "default"
    separator: Literal["/", "."] | None = None
    extensions: JSONObject = field(default_factory=dict)

    zarr_format: ClassVar[Literal[3]] = 3
    node_type: ClassVar[Literal["array"]] = "array"
    order: ClassVar[Literal["C"]] = "C"  # v3 expresses F order with a transpose codec

    def __post_init__(self) -> None:
        _check_array(self, "chunk_shape")
        _set(self, "codecs", tuple(_named_object(c, "codec") for c in _list(self.codecs, "codecs")))
        if self.dimension_names is not None:
            names = tuple(_list(self.dimension_names, "dimension_names"))
            if len(names) != self.ndim or not all(n is None or isinstance(n, str) for n in names):
                raise MetadataError(
                    f"dimension_names must be {self.ndim} strings or nulls, "
                    f"got {_show(list(names))}"
                )
            _set(self, "dimension_names", names)
        if self.chunk_key_encoding not in _DEFAULT_SEPARATOR:
            raise MetadataError(f"unsupported chunk_key_encoding {self.chunk_key_encoding!r}")
        if self.separator is None:
            _set(self, "separator", _DEFAULT_SEPARATOR[self.chunk_key_encoding])
        _check_separator(self.separator)
        _set(self, "extensions", _extensions(self.extensions, _V3_ARRAY_MEMBERS))

    @classmethod
    def from_json(cls, obj: Mapping[str, JSON]) -> ArrayMetadataV3:
        """Build from a parsed v3 array ``zarr.json``."""
        _check_v3_header(obj, "array")
        shape = _required(obj, "shape")
        data_type = DataType.from_v3(_required(obj, "data_type"))
        grid_name, grid = _named(_required(obj, "chunk_grid"), "chunk_grid")
        if grid_name != "regular":
            raise MetadataError(
                f"unsupported chunk_grid {grid_name!r} (only 'regular' is supported)"
            )
        encoding, encoding_config = _named(
            _required(obj, "chunk_key_encoding"), "chunk_key_encoding"
        )
        fill_value = data_type.fill_from_json(_required(obj, "fill_value"))
        if obj.get("storage_transformers", []) != []:
            raise MetadataError(
                f"storage_transformers are not supported, got {_show(obj['storage_transformers'])}"
            )
        return cls(
            shape=shape,
            data_type=data_type,
            chunk_shape=_required(grid, "chunk_shape", "chunk_grid configuration"),
            fill_value=fill_value,
            codecs=_required(obj, "codecs"),
            attributes=_member(obj, "attributes", {}),
            dimension_names=_member(obj, "dimension_names"),
            chunk_key_encoding=_checked(encoding),  # a str; __post_init__ checks the name
            separator=_member(encoding_config, "separator"),
            extensions={k: v for k, v in obj.items() if k not in _V3_ARRAY_MEMBERS},
        )

    def to_json(self) -> JSONObject:
        """The ``zarr.json`` object, in zarr-python's key order."""
        out: JSONObject = {
            "shape": list(self.shape),
            "data_type": self.data_type.to_v3(),
            "chunk_grid": self.chunk_grid,
            "chunk_key_encoding": {
                "name": self.chunk_key_encoding,
                "configuration": {"separator": self.separator},
            },
            "fill_value": self.data_type.fill_to_json(self.fill_value),
            "codecs": list(self.codecs),
            "attributes": self.attributes,
        }
        if self.dimension_names is not None:
            out["dimension_names"] = list(self.dimension_names)
        out |= {"zarr_format": 3, "node_type": "array", "storage_transformers": []}
        return out | self.extensions

    @property
    def chunk_grid(self) -> JSONObject:
        """The ``chunk_grid`` member."""
        return {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}}

    def chunk_key(self, coords: Sequence[int]) -> str:
        """The key of chunk ``coords`` relative to the array (``"c/0/1"``, ``"0.1"``...)."""
        if self.chunk_key_encoding == "v2":
            assert self.separator is not None, "set by __post_init__"
            return _v2_chunk_key(coords, self.separator)
        return "c" + "".join(f"{self.separator}{c}" for c in coords)

    def documents(self) -> dict[str, bytes]:
        return {ZARR_JSON: dump_json(self.to_json())}

    def document_keys(self) -> tuple[str, ...]:
        return (ZARR_JSON,)


@dataclass(frozen=True, eq=False)
class GroupMetadataV3(_Node):
    """A v3 group's ``zarr.json``. ``consolidated`` maps each descendant's relative path to
    its metadata when the group carries inline consolidated metadata, else None."""

    attributes: JSONObject = field(default_factory=dict)
    consolidated: dict[str, NodeMetadata] | None = None
    extensions: JSONObject = field(default_factory=dict)

    zarr_format: ClassVar[Literal[3]] = 3
    node_type: ClassVar[Literal["group"]] = "group"

    def __post_init__(self) -> None:
        _set(self, "attributes", _attributes(self.attributes))
        _set(self, "extensions", _extensions(self.extensions, _V3_GROUP_MEMBERS))
        if self.consolidated is not None:
            _set(self, "consolidated", _consolidated_nodes(self.consolidated, 3))

    @classmethod
    def from_json(cls, obj: Mapping[str, JSON]) -> GroupMetadataV3:
        """Build from a parsed v3 group ``zarr.json``."""
        _check_v3_header(obj, "group")
        consolidated = obj.get("consolidated_metadata")
        return cls(
            attributes=_member(obj, "attributes", {}),
            consolidated=None if consolidated is None else _inline_consolidated(consolidated),
            extensions={k: v for k, v in obj.items() if k not in _V3_GROUP_MEMBERS},
        )

    def to_json(self) -> JSONObject:
        """The ``zarr.json`` object, in zarr-python's key order."""
        out: JSONObject = {"attributes": self.attributes, "zarr_format": 3}
        if self.consolidated is not None:
            out["consolidated_metadata"] = {
                "kind": "inline",
                "must_understand": False,
                "metadata": {
                    path: _consolidated_entry(node)
                    for path, node in sorted(self.consolidated.items(), key=consolidated_order)
                },
            }
        out["node_type"] = "group"
        return out | self.extensions

    def with_attributes(self, attrs: Mapping[str, JSON]) -> GroupMetadataV3:
        """The same metadata with the attributes replaced."""
        return replace(self, attributes=dict(attrs))

    def documents(self) -> dict[str, bytes]:
        levels = 0 if self.consolidated is None else _COPY_LEVELS
        return {ZARR_JSON: dump_json(self.to_json(), MAX_JSON_DEPTH + levels)}

    def document_keys(self) -> tuple[str, ...]:
        return (ZARR_JSON,)


def _consolidated_entry(node: NodeMetadata) -> JSONObject:
    # zarr-python gives each group inside consolidated metadata an empty mapping of its own
    if isinstance(node, GroupMetadataV3):
        node = replace(node, consolidated={})
    return node.to_json()


def _check_v3_header(obj: Mapping[str, JSON], node_type: str) -> None:
    if _required(obj, "zarr_format") != 3:
        raise MetadataError(f"zarr_format must be 3, got {_show(obj['zarr_format'])}")
    if _required(obj, "node_type") != node_type:
        raise MetadataError(f"node_type must be {node_type!r}, got {_show(obj['node_type'])}")


def _v3_node(obj: Any) -> ArrayMetadataV3 | GroupMetadataV3:
    """The metadata of a parsed ``zarr.json`` object."""
    node_type = _required(_object(obj), "node_type")
    if node_type == "array":
        return ArrayMetadataV3.from_json(obj)
    if node_type == "group":
        return GroupMetadataV3.from_json(obj)
    raise MetadataError(f"unknown node_type {_show(node_type)}")


def _inline_consolidated(value: Any) -> dict[str, NodeMetadata]:
    """The nodes of a ``consolidated_metadata`` member (zarr-python's inline layout)."""
    if not isinstance(value, dict) or value.get("kind") != "inline":
        raise MetadataError(f"unsupported consolidated_metadata {_show(value)}")
    metadata = _required(value, "metadata", "consolidated_metadata")
    if not isinstance(metadata, dict):
        raise MetadataError("consolidated_metadata 'metadata' must be an object")
    nodes: dict[str, NodeMetadata] = {}
    for path, obj in metadata.items():
        with _about(f"consolidated_metadata {path!r}"):
            nodes[path] = _v3_node(obj)
    return nodes


# -- Zarr v2 ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ArrayMetadataV2(_ArrayCommon):
    """A v2 array's ``.zarray`` plus its ``.zattrs``. ``fill_value`` None means no fill."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    data_type: DataType
    fill_value: FillValue
    order: Literal["C", "F"] = "C"
    compressor: JSONObject | None = None
    filters: tuple[JSONObject, ...] | None = None
    dimension_separator: Literal[".", "/"] = "."
    attributes: JSONObject = field(default_factory=dict)

    zarr_format: ClassVar[Literal[2]] = 2
    node_type: ClassVar[Literal["array"]] = "array"
    dimension_names: ClassVar[None] = None

    def __post_init__(self) -> None:
        _check_array(self, "chunks")
        if self.order not in ("C", "F"):
            raise MetadataError(f"order must be 'C' or 'F', got {_show(self.order)}")
        if self.compressor is not None:
            _v2_codec(self.compressor, "compressor")
        if self.filters is not None:
            filters = _list(self.filters, "filters")
            _set(self, "filters", tuple(_v2_codec(f, "filter") for f in filters))
        _check_separator(self.dimension_separator)
        codec_id = object_codec_id_of([*(self.filters or ()), self.compressor])
        if self.data_type.object_codec_id != codec_id:
            raise MetadataError(
                f"dtype {self.data_type} needs object codec {self.data_type.object_codec_id!r} "
                f"in filters, found {codec_id!r}"
            )

    @classmethod
    def from_json(
        cls, obj: Mapping[str, JSON], attributes: Mapping[str, JSON] | None = None
    ) -> ArrayMetadataV2:
        """Build from a parsed ``.zarray`` and ``.zattrs`` (unknown members are ignored, as
        zarr-python does)."""
        if _required(obj, "zarr_format") != 2:
            raise MetadataError(f"zarr_format must be 2, got {_show(obj['zarr_format'])}")
        shape, chunks = _required(obj, "shape"), _required(obj, "chunks")
        filters, compressor = obj.get("filters"), obj.get("compressor")
        codec_id = object_codec_id_of([*(filters if isinstance(filters, list) else ()), compressor])
        data_type = DataType.from_v2(_required(obj, "dtype"), codec_id)
        return cls(
            shape=shape,
            chunks=chunks,
            data_type=data_type,
            fill_value=data_type.fill_from_json(_required(obj, "fill_value")),
            order=_required(obj, "order"),
            compressor=_member(obj, "compressor"),
            filters=_member(obj, "filters"),
            dimension_separator=_member(obj, "dimension_separator", "."),
            attributes=_attributes({} if attributes is None else attributes),
        )

    def to_json(self) -> JSONObject:
        """The ``.zarray`` object, in zarr-python's key order."""
        return {
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": self.data_type.to_v2(),
            "fill_value": self.data_type.fill_to_json(self.fill_value),
            "order": self.order,
            "filters": None if self.filters is None else list(self.filters),
            "dimension_separator": self.dimension_separator,
            "compressor": self.compressor,
            "zarr_format": 2,
        }

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        return self.chunks

    def chunk_key(self, coords: Sequence[int]) -> str:
        """The key of chunk ``coords`` relative to the array (``"0.1"``, ``"0/1"``, ``"0"``)."""
        return _v2_chunk_key(coords, self.dimension_separator)

    def documents(self) -> dict[str, bytes]:
        """``.zarray``, and ``.zattrs`` when there are attributes."""
        return _v2_documents(ZARRAY, self.to_json(), self.attributes)

    def document_keys(self) -> tuple[str, ...]:
        """Every key this node may own, including a ``.zattrs`` to delete when stale."""
        return (ZARRAY, ZATTRS)


@dataclass(frozen=True, eq=False)
class GroupMetadataV2(_Node):
    """A v2 group's ``.zgroup`` plus its ``.zattrs``."""

    attributes: JSONObject = field(default_factory=dict)

    zarr_format: ClassVar[Literal[2]] = 2
    node_type: ClassVar[Literal["group"]] = "group"

    def __post_init__(self) -> None:
        _set(self, "attributes", _attributes(self.attributes))

    @classmethod
    def from_json(
        cls, obj: Mapping[str, JSON], attributes: Mapping[str, JSON] | None = None
    ) -> GroupMetadataV2:
        """Build from a parsed ``.zgroup`` and ``.zattrs``."""
        if _required(obj, "zarr_format") != 2:
            raise MetadataError(f"zarr_format must be 2, got {_show(obj['zarr_format'])}")
        return cls(attributes=_attributes({} if attributes is None else attributes))

    def to_json(self) -> JSONObject:
        """The ``.zgroup`` object."""
        return {"zarr_format": 2}

    def with_attributes(self, attrs: Mapping[str, JSON]) -> GroupMetadataV2:
        """The same metadata with the attributes replaced."""
        return replace(self, attributes=dict(attrs))

    def documents(self) -> dict[str, bytes]:
        """``.zgroup``, and ``.zattrs`` when there are attributes."""
        return _v2_documents(ZGROUP, self.to_json(), self.attributes)

    def document_keys(self) -> tuple[str, ...]:
        """Every key this node may own, including a ``.zattrs`` to delete when stale."""
        return (ZGROUP, ZATTRS)


def _v2_documents(key: str, obj: JSONObject, attributes: JSONObject) -> dict[str, bytes]:
    docs = {key: dump_json(obj)}
    if attributes:
        docs[ZATTRS] = dump_json(attributes)
    return docs


def _v2_codec(value: Any, what: str) -> JSONObject:
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise MetadataError(f"{what} must be an object with an 'id', got {_show(value)}")
    return value


ArrayMetadata: TypeAlias = ArrayMetadataV3 | ArrayMetadataV2
GroupMetadata: TypeAlias = GroupMetadataV3 | GroupMetadataV2
NodeMetadata: TypeAlias = ArrayMetadata | GroupMetadata


# -- reading nodes ----------------------------------------------------------------------


def parse_node(docs: Mapping[str, bytes], path: str = "") -> NodeMetadata:
    """The metadata of the node at ``path`` from those of its documents that exist
    (``zarr.json``, ``.zarray``, ``.zgroup``, ``.zattrs``); ``zarr.json`` wins over v2 ones.
    ``path`` only names the node in messages. MetadataError when a document is corrupt or
    invalid; NodeNotFoundError when there is neither ``zarr.json``, ``.zarray`` nor ``.zgroup``."""
    parsed = {}
    for name in (ZARR_JSON, ZARRAY, ZGROUP, ZATTRS):
        if name in docs:
            parsed[name] = load_json(docs[name], _key(path, name))
            if ZARR_JSON in parsed:
                break  # v2 documents next to a zarr.json are not this node's metadata
    return _node_from_json(parsed, path)


def _node_from_json(docs: Mapping[str, JSON], path: str) -> NodeMetadata:
    """:func:`parse_node` on documents already parsed from JSON."""
    if ZARR_JSON in docs:
        with _about(_key(path, ZARR_JSON)):
            return _v3_node(docs[ZARR_JSON])
    attributes = None
    if ZATTRS in docs:
        with _about(_key(path, ZATTRS)):
            attributes = _attributes(docs[ZATTRS])
    if ZARRAY in docs and ZGROUP in docs:
        raise MetadataError(f"{_key(path, ZARRAY)}: the node also has a {ZGROUP}")
    for name, cls in ((ZARRAY, ArrayMetadataV2), (ZGROUP, GroupMetadataV2)):
        if name in docs:
            with _about(_key(path, name)):
                return cls.from_json(_object(docs[name]), attributes)
    raise NodeNotFoundError(f"no {ZARR_JSON}, {ZARRAY} or {ZGROUP} at {path or '/'!r}")


# -- consolidated metadata --------------------------------------------------------------


def consolidated_from_root(
    docs: Mapping[str, bytes], path: str = ""
) -> dict[str, NodeMetadata] | None:
    """The descendants' metadata consolidated in a root's documents: the inline
    ``consolidated_metadata`` of its ``zarr.json``, else its ``.zmetadata``; None when the
    documents hold none. Keys are paths relative to the root."""
    if ZARR_JSON in docs:
        root = parse_node({ZARR_JSON: docs[ZARR_JSON]}, path)
        return root.consolidated if isinstance(root, GroupMetadataV3) else None
    if ZMETADATA not in docs:
        return None
    key = _key(path, ZMETADATA)
    obj = load_json(docs[ZMETADATA], key)
    with _about(key):
        obj = _object(obj)
        if _required(obj, "zarr_consolidated_format") != 1:
            raise MetadataError(
                f"unsupported zarr_consolidated_format {_show(obj['zarr_consolidated_format'])}"
            )
        metadata = _object(_required(obj, "metadata"))
        by_node: dict[str, JSONObject] = {}
        for doc_key, doc in metadata.items():
            node_path, _, name = doc_key.rpartition("/")
            if name not in (ZARRAY, ZGROUP, ZATTRS):
                raise MetadataError(f"unexpected key {doc_key!r} in metadata")
            by_node.setdefault(node_path, {})[name] = doc
        by_node.pop("", None)  # the root's own documents are read directly
        nodes = {}
        for node_path, node_docs in by_node.items():
            try:
                nodes[node_path] = _node_from_json(node_docs, node_path)
            except NodeNotFoundError as exc:
                raise MetadataError(f"{node_path}/{ZATTRS} has no {ZARRAY} or {ZGROUP}") from exc
        return _consolidated_nodes(nodes, 2)


def make_consolidated_v3(
    root: GroupMetadataV3, nodes: Mapping[str, NodeMetadata]
) -> GroupMetadataV3:
    """``root`` carrying ``nodes`` (relative path → v3 metadata of every descendant) as
    inline consolidated metadata; groups among ``nodes`` lose their own consolidated metadata."""
    return replace(root, consolidated=dict(nodes))


def make_zmetadata(root: GroupMetadataV2, nodes: Mapping[str, NodeMetadata]) -> bytes:
    """The bytes of a v2 ``.zmetadata`` for ``root`` and ``nodes`` (relative path → v2
    metadata of every descendant), laid out as zarr-python writes it."""
    metadata: JSONObject = {ZGROUP: root.to_json(), ZATTRS: root.attributes}
    for path, node in sorted(_consolidated_nodes(nodes, 2).items(), key=consolidated_order):
        metadata[f"{path}/{ZATTRS}"] = node.attributes
        metadata[f"{path}/{ZARRAY if node.node_type == 'array' else ZGROUP}"] = node.to_json()
    return dump_json({"metadata": metadata, "zarr_consolidated_format": 1}, MAX_JSON_DEPTH + _COPY_LEVELS)


def _consolidated_nodes(nodes: Mapping[str, object], zarr_format: int) -> dict[str, NodeMetadata]:
    """Check a consolidated mapping: relative paths, metadata of the right format; groups
    stripped of their own consolidated metadata."""
    out: dict[str, NodeMetadata] = {}
    for path, node in nodes.items():
        try:
            for name in path.split("/"):
                check_node_name(name)
        except (AttributeError, MetadataError):
            raise MetadataError(f"consolidated path {path!r} is not a relative node path") from None
        if not isinstance(node, NodeMetadata) or node.zarr_format != zarr_format:
            raise MetadataError(f"consolidated node {path!r} is not Zarr v{zarr_format} metadata")
        out[path] = replace(node, consolidated=None) if isinstance(node, GroupMetadataV3) else node
    return out


def consolidated_order(item: tuple[str, object]) -> tuple[int, str]:
    """zarr-python's order of consolidated entries: by depth, then case-folded name."""
    return item[0].count("/"), unicodedata.normalize("NFKC", item[0]).casefold()


# -- validation helpers -----------------------------------------------------------------


@contextmanager
def _about(label: str) -> Iterator[None]:
    """Prefix MetadataErrors raised inside with ``label`` (a document key)."""
    try:
        yield
    except MetadataError as exc:
        raise MetadataError(f"{label}: {exc}") from exc


def _key(path: str, name: str) -> str:
    path = path.strip("/")
    return f"{path}/{name}" if path else name


_Copied = TypeVar("_Copied")


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # normalising a frozen dataclass in __post_init__


def _copy_with(obj: _Copied, name: str, value: object) -> _Copied:
    """A copy of a frozen dataclass with one field replaced, without checking it again
    (copy.copy costs several times as much, and appending calls this for every record)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    _set(new, name, value)
    return new


def _show(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _member(obj: Mapping[str, JSON], name: str, default: JSON = None) -> Any:
    """A member (or ``default``) that the node's ``__post_init__`` checks."""
    return obj.get(name, default)


def _checked(value: object) -> Any:
    """A value that the node's ``__post_init__`` checks (typed as what it checks it to be)."""
    return value


def _required(obj: Mapping[str, JSON], name: str, where: str = "") -> Any:
    if name not in obj:
        raise MetadataError(f"missing required member {name!r}" + (f" in {where}" if where else ""))
    return obj[name]


def _object(value: Any) -> JSONObject:
    if not isinstance(value, dict):
        raise MetadataError(f"expected a JSON object, got {_show(value)}")
    return value


def _attributes(value: Any) -> JSONObject:
    if not isinstance(value, Mapping):
        raise MetadataError(f"attributes must be a JSON object, got {_show(value)}")
    return dict(value)


def _list(value: Any, name: str) -> Sequence[Any]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise MetadataError(f"{name!r} must be a list, got {_show(value)}")
    return value


def _shape(value: Any, name: str, minimum: int) -> tuple[int, ...]:
    """A shape or chunk shape: at most MAX_DIMENSIONS integers >= ``minimum`` whose product
    fits in int64 (numpy and the chunk arithmetic hold no more)."""
    items = _list(value, name)
    if not all(_is_count(n) and n >= minimum for n in items):
        what = "non-negative" if minimum == 0 else "positive"
        raise MetadataError(f"{name!r} must be a list of {what} integers, got {_show(value)}")
    if len(items) > MAX_DIMENSIONS:
        raise MetadataError(f"{name!r} has {len(items)} dimensions, more than the {MAX_DIMENSIONS} numpy allows")
    shape = tuple(int(n) for n in items)
    if any(n > MAX_ELEMENTS for n in shape) or math.prod(shape) > MAX_ELEMENTS:
        raise MetadataError(f"{name!r} {_show(list(shape))} has more elements than int64 can count")
    return shape


def _is_count(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _named(value: Any, what: str) -> tuple[str, JSONObject]:
    """A v3 name-and-configuration member (or a bare name) → (name, configuration)."""
    if isinstance(value, str):
        return value, {}
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        config = value.get("configuration", {})
        if isinstance(config, dict):
            return value["name"], config
    raise MetadataError(f"{what} must be a name or an object with a 'name', got {_show(value)}")


def _named_object(value: Any, what: str) -> JSONObject:
    """A codec as a dict: a bare name ``"gzip"`` becomes ``{"name": "gzip"}``."""
    _named(value, what)
    return {"name": value} if isinstance(value, str) else dict(value)


def _check_separator(separator: Any) -> None:
    if separator not in ("/", "."):
        raise MetadataError(f"separator must be '/' or '.', got {_show(separator)}")


def _extensions(members: Mapping[str, JSON], known: frozenset[str]) -> JSONObject:
    for name, value in members.items():
        if name in known or not (isinstance(value, dict) and value.get("must_understand") is False):
            raise MetadataError(
                f"unknown member {name!r} (an extension must be an object with "
                '"must_understand": false)'
            )
    return dict(members)
