"""The storage layout of the Zarr v3 core-protocol draft of 2019, which zarr-python 2.11–2.18
wrote with its experimental v3 API (``ZARR_V3_EXPERIMENTAL_API=1``), seen as final Zarr v3.

A draft hierarchy has an entry point ``zarr.json`` at the root (``zarr_format`` is the
protocol URI, ``metadata_encoding``, ``metadata_key_suffix``, ``extensions``), one metadata
document per explicit node under ``meta/`` (``meta/root.group.json``,
``meta/root/<path>.array.json`` / ``.group.json``) and chunks under ``data/root/<path>/``.
Groups may be implicit: only their descendants' documents imply them.

:class:`DraftStore` is a view of such a store with final v3 keys: ``<path>/zarr.json`` holds
each node's document translated to final v3 (implicit groups get an empty group document)
and ``<path>/c/0/1`` the chunks. Everything that works on a final v3 store (hierarchies,
arrays, the conventions, info, ZOM) thus works on a draft store through the view, and
writing through it writes draft documents as zarr-python 2.18 writes them. The translation,
key by key, is in docs/zarr-v3-draft.md:

* ``data_type``: core identifiers (``bool``, ``i1``, ``<f8``, ``>i4``...) and extension data
  types (complex, fixed bytes and text, datetimes as zarr-python 2.18 spells them; another
  extension by its ``fallback``) ⇄ the final data type plus the ``bytes`` codec's endian;
* ``chunk_grid`` ``separator`` ⇄ ``chunk_key_encoding`` (zarr-python's ``c0/1`` keys: the
  default encoding; the draft text's ``0.1``, without separator: the v2 encoding);
* ``chunk_memory_layout`` ``F`` ⇄ a ``transpose`` codec;
* ``compressor`` (zarr-python) or ``chunk_codecs`` (the draft text), named by codec URI, and
  the filters zarr-python 2.18 keeps in ``attributes["filters"]`` ⇄ ``numcodecs.*`` codecs;
* ``fill_value`` (``"NaN"``, ``"Infinity"``, ``null``...) ⇄ the final fill value; null, which
  final v3 lacks, becomes the type's default and is remembered in the member
  :data:`DRAFT_MEMBER`, as are the node's ``extensions`` that need not be understood;
* the ``_ARRAY_DIMENSIONS`` attribute (xarray's dimension names) ⇄ ``dimension_names``.

An extension marked ``must_understand`` (in the entry point or a node document) is refused
with MetadataError: nczarr knows none.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from nczarr.errors import MetadataError
from nczarr.store.base import ByteRange, Store, slice_range
from nczarr.zarr.codecs.base import NUMCODECS_PREFIX, lookup
from nczarr.zarr.codecs.compress import BLOSC_SHUFFLES
from nczarr.zarr.dtypes import DataType
from nczarr.zarr.jsonvalue import JSON, JSONObject
from nczarr.zarr.metadata import _V3_ARRAY_MEMBERS, _V3_GROUP_MEMBERS, ZARR_JSON, dump_json, load_json

__all__ = [
    "ARRAY_DIMENSIONS",
    "DRAFT_MEMBER",
    "PROTOCOL_URI",
    "DraftStore",
    "EntryPoint",
    "create_draft",
    "draft_entry_point",
    "draft_to_v3",
    "draft_view",
    "is_draft_entry_point",
    "v3_to_draft",
]

#: The protocol URI zarr-python 2.18 writes as ``zarr_format`` (the draft text writes
#: ``http://purl.org/zarr/spec/protocol/core/3.0``; any ``.../protocol/core/3.*`` is read).
PROTOCOL_URI = "https://purl.org/zarr/spec/protocol/core/3.0"
_PROTOCOL = re.compile(r"https?://purl\.org/zarr/spec/protocol/core/3(\.[0-9]+)?(/.*)?")
#: The codec URIs: zarr-python 2.18's ``.../codec/gzip/1.0``, the draft text's ``.../codec/gzip``.
_CODEC_URI = "https://purl.org/zarr/spec/codec/"
_CODEC = re.compile(r"https?://purl\.org/zarr/spec/codec/([a-z0-9_-]+)(/[0-9.]+)?/?")
#: The codecs zarr-python 2.18 names by URI (as its compressor), by numcodecs id.
_URI_CODECS = ("gzip", "zlib", "blosc", "bz2", "lz4", "lzma", "zstd")
#: What zarr-python 2.18 writes as the entry point's ``metadata_encoding`` (the protocol URI,
#: a slip of its own), and what the draft's design update writes.
_ENCODINGS = (PROTOCOL_URI, "application/json")
#: The member of a translated final v3 document that keeps what final v3 cannot say: a
#: ``fill_value`` null and the node's ``extensions``.
DRAFT_MEMBER = "zarr_v3_draft"
#: xarray's attribute naming an array's dimensions where Zarr metadata has no member for them.
ARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"
#: The extension URIs zarr-python 2.18 writes for data types outside the core set.
_EXTENSION_URI = {
    "c": "https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/extensions/complex-dtypes/v1.0.html",
    "S": "TODO: bytestring array protocol URL",
    "U": "TODO: unicode array protocol URL",
    "O": "TODO: object array protocol URL",
    "M": "https://zarr-specs.readthedocs.io/en/latest/extensions/data-types/datetime/v1.0.html",
    "m": "https://zarr-specs.readthedocs.io/en/latest/extensions/data-types/datetime/v1.0.html",
}
_CORE_TYPES = frozenset(
    {"bool", "i1", "u1"}
    | {f"{e}{k}{n}" for e in "<>" for k in "iuf" for n in "248"}
    | {f"{e}c{n}" for e in "<>" for n in (8, 16)}
)
_META = "meta/"
_DATA = "data/root/"


# -- the entry point -----------------------------------------------------------------------


@dataclass(frozen=True)
class EntryPoint:
    """The entry point ``zarr.json`` of a draft hierarchy."""

    zarr_format: str = PROTOCOL_URI
    metadata_encoding: str = PROTOCOL_URI
    metadata_key_suffix: str = ".json"
    extensions: tuple[JSONObject, ...] = ()

    def to_json(self) -> JSONObject:
        return {
            "extensions": list(self.extensions),
            "metadata_encoding": self.metadata_encoding,
            "metadata_key_suffix": self.metadata_key_suffix,
            "zarr_format": self.zarr_format,
        }


def _is_entry_point(doc: JSON) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("zarr_format"), str) and "node_type" not in doc


def draft_entry_point(store: Store) -> EntryPoint | None:
    """The entry point of the draft hierarchy in ``store``, or None when its root holds none
    (no ``zarr.json``, or a final v3 one). MetadataError when the entry point is one nczarr
    cannot follow: another protocol, encoding, or an extension it must understand."""
    doc = _entry_document(store.get_many([ZARR_JSON]).get(ZARR_JSON))
    if doc is None:
        return None
    zarr_format, encoding = str(doc["zarr_format"]), doc.get("metadata_encoding", PROTOCOL_URI)  # a str: _is_entry_point
    if not _PROTOCOL.fullmatch(zarr_format):
        raise MetadataError(f"{ZARR_JSON}: unsupported zarr_format {json.dumps(zarr_format)} (not Zarr's v3 core protocol)")
    if encoding not in _ENCODINGS:
        raise MetadataError(f"{ZARR_JSON}: unsupported metadata_encoding {json.dumps(encoding)} (only JSON is read)")
    suffix = doc.get("metadata_key_suffix", ".json")
    if not isinstance(suffix, str) or "/" in suffix:
        raise MetadataError(f"{ZARR_JSON}: metadata_key_suffix must be a string without '/', got {json.dumps(suffix)}")
    extensions = _extension_list(doc.get("extensions", []), ZARR_JSON)
    return EntryPoint(zarr_format, encoding, suffix, tuple(extensions))


def _extension_list(value: Any, where: str) -> list[JSONObject]:
    """A draft ``extensions`` list, refusing any extension that must be understood."""
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise MetadataError(f"{where}: extensions must be a list of objects, got {json.dumps(value)}")
    for extension in value:
        if extension.get("must_understand") is not False:
            raise MetadataError(
                f"{where}: extension {json.dumps(extension.get('extension'))} must be understood "
                "and nczarr does not know it"
            )
    return value


def _entry_document(value: bytes | None) -> JSONObject | None:
    """The bytes of a root ``zarr.json`` parsed when they are a draft entry point, else None
    (a final v3 node, or not JSON: the final v3 reader says what is wrong with it)."""
    if value is None or b'"node_type"' in value:  # a final v3 node: not worth parsing here
        return None
    try:
        doc = load_json(value, ZARR_JSON)
    except MetadataError:
        return None
    return doc if isinstance(doc, dict) and _is_entry_point(doc) else None


def is_draft_entry_point(value: bytes | None) -> bool:
    """Whether the bytes of a root ``zarr.json`` are a draft entry point (not a final v3 node)."""
    return _entry_document(value) is not None


def draft_view(store: Store) -> Store:
    """``store`` seen as final Zarr v3 when it holds a draft hierarchy, else ``store``."""
    if isinstance(store, DraftStore):
        return store
    entry = draft_entry_point(store)
    return store if entry is None else DraftStore(store, entry)


def create_draft(store: Store) -> DraftStore:
    """A view of ``store`` for a new draft hierarchy: the entry point is written unless the
    store has one (MetadataError when its root holds final Zarr v3)."""
    if isinstance(store, DraftStore):
        return store
    entry = draft_entry_point(store)
    if entry is None:
        if store.exists(ZARR_JSON):
            raise MetadataError(f"{store!r} holds a final Zarr v3 hierarchy, not the v3 draft layout")
        entry = EntryPoint()
        store.set(ZARR_JSON, _draft_json(entry.to_json()))
    return DraftStore(store, entry)


def _draft_json(obj: object) -> bytes:
    """A draft document as zarr-python 2.18 writes it (sorted keys, indented by 4)."""
    return json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=True, separators=(",", ": "), default=_plain).encode()


def _plain(obj: Any) -> Any:
    if isinstance(obj, np.generic | np.ndarray):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


# -- data types and fill values ------------------------------------------------------------


def _numpy_dtype(data_type: JSON, where: str) -> np.dtype:
    """The numpy dtype (byte order as stored) of a draft ``data_type``."""
    if isinstance(data_type, dict):
        kind = data_type.get("type")
        if isinstance(kind, str) and re.fullmatch(r"[<>|]([cSUM]|m)[0-9]*(\[[a-zA-Z]+\])?|\|O", kind):
            return np.dtype(kind)
        fallback = data_type.get("fallback")
        if fallback in _CORE_TYPES:
            return _numpy_dtype(fallback, where)
        raise MetadataError(
            f"{where}: data type extension {json.dumps(data_type.get('extension'))} is unknown and has no fallback"
        )
    if data_type not in _CORE_TYPES:
        raise MetadataError(f"{where}: unsupported data_type {json.dumps(data_type)}")
    assert isinstance(data_type, str)
    return np.dtype({"bool": "|b1"}.get(data_type, data_type))


def _draft_data_type(dtype: np.dtype) -> JSON:
    """The draft ``data_type`` of ``dtype`` (byte order as stored), as zarr-python 2.18 writes it."""
    text = dtype.str
    if text in ("|b1", "|i1", "|u1"):
        return {"|b1": "bool", "|i1": "i1", "|u1": "u1"}[text]
    if text in _CORE_TYPES and dtype.kind != "c":
        return text
    uri = _EXTENSION_URI.get(dtype.kind)
    if uri is None:
        raise MetadataError(f"data type {text!r} has no spelling in the Zarr v3 draft")
    return {"extension": uri, "fallback": None, "type": text}


def _fill_from_draft(data: JSON, dtype: np.dtype) -> object:
    """The fill value a draft ``fill_value`` (not null) stands for, as zarr-python 2.18 reads it."""
    if dtype.kind == "c" and isinstance(data, list) and len(data) == 2:
        real, imag = (float(_fill_from_draft(part, np.dtype(float))) for part in data)  # type: ignore[arg-type]
        return complex(real, imag)
    if dtype.kind == "f" and isinstance(data, str):
        return float({"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(data, data))
    if dtype.kind == "S" and isinstance(data, str):
        try:
            return base64.b64decode(data, validate=True)
        except binascii.Error:
            return data.encode()
    if dtype.kind in "mM" and isinstance(data, int):
        return np.array(data, "i8").view(dtype.newbyteorder("="))[()]
    return data


def _fill_to_draft(value: Any, dtype: np.dtype) -> JSON:
    """A fill value as zarr-python 2.18 writes it."""
    if dtype.kind == "f":
        number = float(value)
        if np.isnan(number):
            return "NaN"
        if np.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        return number
    if dtype.kind == "c":
        return [_fill_to_draft(np.real(value), np.dtype(float)), _fill_to_draft(np.imag(value), np.dtype(float))]
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    if dtype.kind == "S":
        return base64.standard_b64encode(bytes(value)).decode()
    if dtype.kind in "mM":
        return int(np.asarray(value).view("i8"))
    return str(value)


# -- codecs ----------------------------------------------------------------------------------


def _codec_from_uri(entry: Any, where: str) -> JSONObject:
    """A numcodecs configuration (``{"id": ...}``) from a codec named by URI: zarr-python's
    ``{"codec", "configuration"}`` or the draft text's ``{"codec", <parameters>...}``."""
    uri = entry.get("codec") if isinstance(entry, dict) else None
    match = _CODEC.fullmatch(uri) if isinstance(uri, str) else None
    if match is None or match[1] not in _URI_CODECS:
        raise MetadataError(f"{where}: unsupported codec {json.dumps(entry)}")
    config = entry.get("configuration", {k: v for k, v in entry.items() if k != "codec"})
    if not isinstance(config, dict):
        raise MetadataError(f"{where}: codec configuration must be an object, got {json.dumps(config)}")
    return {**config, "id": match[1]}


def _numcodecs_v3(config: JSONObject, where: str) -> JSONObject:
    """The final v3 codec entry of a numcodecs configuration."""
    codec_id = config.get("id")
    name = NUMCODECS_PREFIX + str(codec_id)
    if codec_id in ("vlen-utf8", "vlen-bytes"):
        return {"name": str(codec_id)}
    if lookup(name) is None:
        raise MetadataError(f"{where}: unknown codec {json.dumps(config)}")
    return {"name": name, "configuration": {k: v for k, v in config.items() if k != "id"}}


#: The parameters of numcodecs' array filters that name a dtype.
_DTYPE_PARAMETERS = ("dtype", "astype", "encode_dtype", "decode_dtype")


def _with_byte_order(codec: JSONObject, order: Literal["<", ">", "="]) -> JSONObject:
    """An array filter whose dtype parameters have byte order ``order``: zarr-python 2.18
    hands filters the chunk in its stored order, a final v3 chain in native order (the
    ``bytes`` codec swaps afterwards), so the same filter names the dtype differently."""
    config: Any = codec.get("configuration", codec)
    changed = dict(config)
    for name in _DTYPE_PARAMETERS:
        value = config.get(name)
        if isinstance(value, str):
            try:
                dtype = np.dtype(value)
            except TypeError:
                continue
            if dtype.itemsize > 1 and dtype.byteorder != "|":
                changed[name] = dtype.newbyteorder(order).str
    return {**codec, "configuration": changed} if "configuration" in codec else changed


def _kind(codec: JSONObject) -> str:
    factory = lookup(str(codec["name"]))
    assert factory is not None, "translated codecs are registered"
    configuration = codec.get("configuration", {})
    return factory(str(codec["name"]), configuration if isinstance(configuration, dict) else {}).kind


def _v3_chain(filters: list[JSONObject], dtype: np.dtype, layout: str, ndim: int, where: str) -> list[JSON]:
    """The final v3 codecs of a draft array: its layout, filters and compressor."""
    if layout not in ("C", "F"):
        raise MetadataError(f"{where}: unsupported chunk_memory_layout {json.dumps(layout)}")
    head: list[JSONObject] = []
    if layout == "F" and ndim > 1:
        head.append({"name": "transpose", "configuration": {"order": list(range(ndim - 1, -1, -1))}})
    serializer: JSONObject = {"name": "bytes"}
    if dtype.itemsize > 1 and dtype.kind not in "SO" and dtype.byteorder != "|":
        serializer["configuration"] = {"endian": "big" if dtype.byteorder == ">" else "little"}
    tail: list[JSONObject] = []
    for config in filters:
        codec = _numcodecs_v3(config, where)
        kind = _kind(codec)
        if kind == "array->bytes":
            serializer = codec
        elif kind == "array->array":
            if tail or serializer["name"] != "bytes":
                raise MetadataError(f"{where}: array filter {json.dumps(config)} follows a bytes filter (final v3 cannot)")
            head.append(_with_byte_order(codec, "="))
        else:
            tail.append(codec)
    return [*head, serializer, *tail]


def _draft_codecs(codecs: list[JSONObject], ndim: int, where: str) -> tuple[str, str, list[JSONObject], JSONObject | None]:
    """(memory layout, endian, filters, compressor) of a final v3 codec chain."""
    layout, endian = "C", "little"
    rest: list[Any] = list(codecs)
    if rest and rest[0]["name"] == "transpose":
        order = rest.pop(0).get("configuration", {}).get("order")
        if order == list(range(ndim - 1, -1, -1)):
            layout = "F"
        elif order != list(range(ndim)):
            raise MetadataError(f"{where}: transpose order {json.dumps(order)} has no Zarr v3 draft layout")
    v2: list[JSONObject] = []
    for codec in rest:
        name = str(codec["name"])
        if name == "bytes":
            configuration: Any = codec.get("configuration", {})
            endian = configuration.get("endian", "little") if isinstance(configuration, dict) else "little"
            continue
        if name in ("vlen-utf8", "vlen-bytes"):
            v2.append({"id": name})
            continue
        factory = lookup(name)
        if factory is None or name in ("sharding_indexed", "transpose"):
            raise MetadataError(f"{where}: codec {name!r} has no Zarr v3 draft spelling")
        configuration = codec.get("configuration", {})
        config = factory(name, configuration if isinstance(configuration, dict) else {}).to_json(2)
        if config["id"] == "blosc" and isinstance(config.get("shuffle"), str):  # v3's blosc: numcodecs' spelling
            shuffle = BLOSC_SHUFFLES.index(str(config["shuffle"]))
            config = {k: v for k, v in config.items() if k != "typesize"} | {"shuffle": shuffle}
        v2.append(config)
    # zarr-python 2.18 runs the filters, then the compressor: one named by URI, last
    filters = [_with_byte_order(config, ">" if endian == "big" else "<") for config in v2]
    compressor = filters.pop() if filters and filters[-1]["id"] in _URI_CODECS else None
    return layout, endian, filters, compressor


# -- documents -------------------------------------------------------------------------------


def draft_to_v3(document: JSON, node_type: str, where: str) -> JSONObject:
    """The final v3 ``zarr.json`` object of a draft node document (``node_type``: ``array`` or
    ``group``, as its key says); ``where`` names the document in messages."""
    if not isinstance(document, dict):
        raise MetadataError(f"{where}: expected a JSON object, got {json.dumps(document)}")
    doc: dict[str, Any] = document
    if "zarr_format" in doc and not (isinstance(doc["zarr_format"], str) and _PROTOCOL.fullmatch(doc["zarr_format"])):
        raise MetadataError(f"{where}: unsupported zarr_format {json.dumps(doc['zarr_format'])}")
    extensions = _extension_list(doc.get("extensions", []), where)
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, dict):
        raise MetadataError(f"{where}: attributes must be a JSON object, got {json.dumps(attributes)}")
    attributes = dict(attributes)
    kept: dict[str, Any] = {"must_understand": False}
    # an extension named by a plain name (no URI) is a final v3 member that nczarr wrote there
    members: JSONObject = {
        str(e["extension"]): {k: v for k, v in e.items() if k != "extension"} for e in extensions if _is_member(e)
    }
    extensions = [e for e in extensions if not _is_member(e)]
    if extensions:
        kept["extensions"] = list(extensions)
    if node_type == "group":
        out: JSONObject = {"attributes": attributes, "zarr_format": 3, "node_type": "group"}
        return out | members | ({DRAFT_MEMBER: kept} if extensions else {})
    for name in ("shape", "data_type", "chunk_grid"):
        if name not in doc:
            raise MetadataError(f"{where}: missing required member {name!r}")
    if doc.get("storage_transformers"):
        raise MetadataError(f"{where}: storage_transformers are not supported, got {json.dumps(doc['storage_transformers'])}")
    shape = doc["shape"]
    dtype = _numpy_dtype(doc["data_type"], where)
    grid = doc["chunk_grid"]
    if not isinstance(grid, dict) or grid.get("type") != "regular" or "chunk_shape" not in grid:
        raise MetadataError(f"{where}: unsupported chunk_grid {json.dumps(grid)} (a regular grid with chunk_shape is read)")
    separator = grid.get("separator")
    encoding: JSONObject = (
        {"name": "v2", "configuration": {"separator": "."}}
        if separator is None
        else {"name": "default", "configuration": {"separator": separator}}
    )
    filters: list[JSONObject] = []
    stored_filters = attributes.get("filters")
    if isinstance(stored_filters, list) and all(isinstance(f, dict) and "id" in f for f in stored_filters):
        filters = list(attributes.pop("filters"))
    if dtype.kind == "O" and not any(f.get("id") in ("vlen-utf8", "vlen-bytes") for f in filters):
        raise MetadataError(f"{where}: data type '|O' needs a vlen-utf8 or vlen-bytes filter")
    for entry in doc.get("chunk_codecs", []):
        filters.append(_codec_from_uri(entry, where))
    if doc.get("compressor") is not None:
        filters.append(_codec_from_uri(doc["compressor"], where))
    ndim = len(shape) if isinstance(shape, list) else 0
    codecs = _v3_chain(filters, dtype, doc.get("chunk_memory_layout", "C"), ndim, where)
    fill = doc.get("fill_value")
    held: Literal["string", "bytes"] = "bytes" if any(f.get("id") == "vlen-bytes" for f in filters) else "string"
    data_type = DataType.from_numpy(dtype, 3, string_kind=held)
    if fill is None:
        kept["fill_value"] = None
        value = data_type.default_fill()
    elif dtype.kind == "O" and isinstance(fill, int) and fill == 0:
        value = data_type.default_fill()  # zarr-python 2.18 writes 0 as its object arrays' fill value
    else:
        try:
            value = data_type.cast_fill(_fill_from_draft(fill, dtype))
        except MetadataError as error:
            raise MetadataError(f"{where}: {error}") from error
    names = attributes.get(ARRAY_DIMENSIONS)
    dimension_names = None
    if isinstance(names, list) and len(names) == ndim and all(n is None or isinstance(n, str) for n in names):
        dimension_names = attributes.pop(ARRAY_DIMENSIONS)
    out = {
        "shape": shape,
        "data_type": data_type.to_v3(),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": grid["chunk_shape"]}},
        "chunk_key_encoding": encoding,
        "fill_value": data_type.fill_to_json(value),
        "codecs": codecs,
        "attributes": attributes,
    }
    if dimension_names is not None:
        out["dimension_names"] = dimension_names
    out |= {"zarr_format": 3, "node_type": "array"}
    return out | members | ({DRAFT_MEMBER: kept} if len(kept) > 1 else {})


def _is_member(extension: JSONObject) -> bool:
    name = extension.get("extension")
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


def _member_extensions(doc: dict[str, Any], known: frozenset[str]) -> list[JSONObject]:
    """The extension members of a final v3 document (``must_understand`` false) as draft
    extensions named by the member's name, so that they come back on reading."""
    return [{"extension": k, **v} for k, v in doc.items() if k not in known and k != DRAFT_MEMBER and isinstance(v, dict)]


def v3_to_draft(document: JSONObject, where: str) -> JSONObject:
    """The draft node document of a final v3 ``zarr.json`` object, as zarr-python 2.18 writes
    it (consolidated metadata, which the draft lacks, is left out)."""
    doc: dict[str, Any] = document
    kept = doc.get(DRAFT_MEMBER, {})
    kept = kept if isinstance(kept, dict) else {}
    attributes = dict(doc.get("attributes", {}))
    if doc.get("node_type") == "group":
        extensions = [*kept.get("extensions", []), *_member_extensions(doc, _V3_GROUP_MEMBERS)]
        return {"attributes": attributes} | ({"extensions": extensions} if extensions else {})
    extensions = [*kept.get("extensions", []), *_member_extensions(doc, _V3_ARRAY_MEMBERS)]
    data_type = DataType.from_v3(doc["data_type"])
    codecs = [c if isinstance(c, dict) else {"name": c} for c in doc.get("codecs", [])]
    shape = doc["shape"]
    assert isinstance(shape, list)
    layout, endian, filters, compressor = _draft_codecs(codecs, len(shape), where)
    dtype = data_type.dtype
    if dtype.itemsize > 1 and dtype.byteorder != "|":
        dtype = dtype.newbyteorder(">" if endian == "big" else "<")
    encoding: Any = doc.get("chunk_key_encoding", {})
    separator = encoding.get("configuration", {}).get("separator", "/") if isinstance(encoding, dict) else "/"
    grid: Any = doc["chunk_grid"]
    chunk_grid: JSONObject = {"chunk_shape": grid["configuration"]["chunk_shape"], "type": "regular"}
    if not (isinstance(encoding, dict) and encoding.get("name") == "v2"):
        chunk_grid["separator"] = separator
    elif separator != ".":
        raise MetadataError(f"{where}: chunk key encoding v2 with separator {separator!r} has no Zarr v3 draft spelling")
    if doc.get("storage_transformers"):
        raise MetadataError(f"{where}: storage transformers have no Zarr v3 draft spelling")
    if filters:
        attributes["filters"] = filters
    if doc.get("dimension_names") is not None:
        attributes[ARRAY_DIMENSIONS] = doc["dimension_names"]
    fill: JSON
    if "fill_value" in kept and kept["fill_value"] is None:
        fill = None
    else:
        fill = _fill_to_draft(data_type.fill_from_json(doc["fill_value"]), dtype)
    out: JSONObject = {
        "attributes": attributes,
        "chunk_grid": chunk_grid,
        "chunk_memory_layout": layout,
        "data_type": _draft_data_type(dtype),
        "extensions": extensions,
        "fill_value": fill,
        "shape": shape,
    }
    if compressor is not None:
        out["compressor"] = {
            "codec": f"{_CODEC_URI}{compressor['id']}/1.0",
            "configuration": {k: v for k, v in compressor.items() if k != "id"},
        }
    return out


# -- the view --------------------------------------------------------------------------------


class DraftStore(Store):
    """A draft hierarchy in ``base`` seen with final v3 keys and documents (see the module's
    docstring). Chunk keys: ``<array>/c/0/1`` ⇄ ``data/root/<array>/c0/1`` (zarr-python's
    keys), ``<array>/0.1`` ⇄ ``data/root/<array>/0.1`` (the draft text's)."""

    def __init__(self, base: Store, entry: EntryPoint) -> None:
        super().__init__(read_only=base.read_only)
        self.base = base
        self.entry = entry
        self.local_path = base.local_path
        self._array_suffix = ".array" + entry.metadata_key_suffix
        self._group_suffix = ".group" + entry.metadata_key_suffix
        #: array path → the separator of its zarr-python chunk keys (``c0/1``), or None for
        #: the draft text's keys (``0.1``), learnt when its document is read or written
        self._arrays: dict[str, str | None] = {}
        #: the paths of arrays without dimensions, whose one chunk zarr-python 2.18 keys ``c0``
        self._scalars: set[str] = set()

    def __repr__(self) -> str:
        return repr(self.base)

    @property
    def prefers_concurrency(self) -> bool:  # type: ignore[override]  # as the store it views
        return self.base.prefers_concurrency

    # -- keys ------------------------------------------------------------------------------
    def _meta_key(self, path: str, suffix: str) -> str:
        return f"meta/root/{path}{suffix}" if path else f"meta/root{suffix}"

    def _array_of(self, key: str) -> str | None:
        """The path of the array that a (virtual) chunk key belongs to, or None."""
        parts = key.split("/")
        for end in range(len(parts) - 1, -1, -1):
            path = "/".join(parts[:end])
            if path in self._arrays:
                return path
        for end in range(len(parts) - 1, -1, -1):
            path = "/".join(parts[:end])
            found = self.base.get_many([self._meta_key(path, self._array_suffix)])
            if found:
                self._document(path, "array", next(iter(found.values())))
                return path
        # a chunk written before its array's document (writers store documents last): the
        # final v3 default chunk key ("c", then the indices) says where the array ends
        for end in range(len(parts) - 1, -1, -1):
            if parts[end] == "c" and all(p.isdigit() for p in parts[end + 1 :]):
                if end + 1 == len(parts):
                    self._scalars.add("/".join(parts[:end]))
                return self._note("/".join(parts[:end]), "/")
            if re.fullmatch(r"c(\.[0-9]+)+", parts[end]) and end == len(parts) - 1:
                return self._note("/".join(parts[:end]), ".")
        return None

    def _note(self, path: str, separator: str) -> str:
        self._arrays[path] = separator
        return path

    def _data_key(self, key: str) -> str:
        """The base key of a virtual chunk key."""
        path = self._array_of(key)
        if path is None:
            return _DATA + key
        rest = key[len(path) + 1 :] if path else key
        separator = self._arrays[path]
        if separator is not None and rest == "c":
            rest = "c0"
        elif separator is not None and rest.startswith("c" + separator):
            rest = "c" + rest[2:]
        return f"{_DATA}{path}/{rest}" if path else _DATA + rest

    def _virtual_data_key(self, key: str, arrays: Mapping[str, str | None]) -> str | None:
        """The virtual key of a base chunk key (None when no array owns it)."""
        inner = key[len(_DATA) :]
        parts = inner.split("/")
        for end in range(len(parts) - 1, -1, -1):
            path = "/".join(parts[:end])
            if path in arrays:
                rest = "/".join(parts[end:])
                separator = arrays[path]
                if separator is not None and path in self._scalars and rest == "c0":
                    rest = "c"
                elif separator is not None and rest.startswith("c"):
                    rest = "c" + (separator + rest[1:] if len(rest) > 1 else "")
                return f"{path}/{rest}" if path else rest
        return None

    # -- documents -------------------------------------------------------------------------
    def _document(self, path: str, node_type: str, value: bytes) -> JSONObject:
        """A node's draft document translated, noting an array's chunk key style."""
        where = self._meta_key(path, self._array_suffix if node_type == "array" else self._group_suffix)
        doc = draft_to_v3(load_json(value, where), node_type, where)
        if node_type == "array":
            encoding: Any = doc["chunk_key_encoding"]
            self._arrays[path] = encoding["configuration"]["separator"] if encoding["name"] == "default" else None
            if doc["shape"] == []:
                self._scalars.add(path)
        return doc

    def _node_document(self, path: str) -> bytes | None:
        array_key, group_key = self._meta_key(path, self._array_suffix), self._meta_key(path, self._group_suffix)
        found = self.base.get_many([array_key, group_key])
        if array_key in found:
            return dump_json(self._document(path, "array", found[array_key]))
        if group_key in found:
            return dump_json(self._document(path, "group", found[group_key]))
        if next(iter(self.base.list_prefix(f"meta/root/{path}/" if path else _META)), None) is not None:
            return dump_json({"attributes": {}, "zarr_format": 3, "node_type": "group"})  # an implicit group
        return None

    @staticmethod
    def _node_path(key: str) -> str | None:
        """The node path of a virtual ``zarr.json`` key, else None."""
        if key == ZARR_JSON:
            return ""
        head, _, name = key.rpartition("/")
        return head if name == ZARR_JSON else None

    # -- Store -----------------------------------------------------------------------------
    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        path = self._node_path(key)
        if path is None:
            return self.base._get(self._data_key(key), byte_range)
        value = self._node_document(path)
        return None if value is None else slice_range(value, byte_range)

    def _get_into(self, key: str, view: memoryview) -> bool:
        if self._node_path(key) is None:
            return self.base._get_into(self._data_key(key), view)
        return super()._get_into(key, view)

    def _getsize(self, key: str) -> int | None:
        if self._node_path(key) is None:
            return self.base._getsize(self._data_key(key))
        return super()._getsize(key)

    def _exists(self, key: str) -> bool:
        if self._node_path(key) is None:
            return self.base._exists(self._data_key(key))
        return self._get(key, None) is not None

    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        path = self._node_path(key)
        if path is None:
            self.base.set(self._data_key(key), value)
            return
        where = self._meta_key(path, "")
        doc = load_json(bytes(value), key)
        if not isinstance(doc, dict) or doc.get("node_type") not in ("array", "group"):
            raise MetadataError(f"{key}: not a Zarr v3 node document")
        node_type = str(doc["node_type"])
        draft = v3_to_draft(doc, where)
        suffix, other = (
            (self._array_suffix, self._group_suffix) if node_type == "array" else (self._group_suffix, self._array_suffix)
        )
        self.base.set(self._meta_key(path, suffix), _draft_json(draft))
        self.base.delete(self._meta_key(path, other))
        if node_type == "array":
            self._document(path, "array", _draft_json(draft))
        else:
            self._arrays.pop(path, None)

    def _delete(self, key: str) -> None:
        path = self._node_path(key)
        if path is None:
            self.base.delete(self._data_key(key))
            return
        self.base.delete_many([self._meta_key(path, self._array_suffix), self._meta_key(path, self._group_suffix)])

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        arrays: dict[str, str | None] = {}
        keys: builtins.list[str] = []
        for key in self.base.list_prefix(_META):
            for suffix, node_type in ((self._array_suffix, "array"), (self._group_suffix, "group")):
                if key.endswith(suffix) and (key.startswith("meta/root/") or key == f"meta/root{suffix}"):
                    path = key[len("meta/root/") : -len(suffix)] if key != f"meta/root{suffix}" else ""
                    keys.append(f"{path}/{ZARR_JSON}" if path else ZARR_JSON)
                    if node_type == "array":
                        if path not in self._arrays:
                            self._document(path, "array", self.base.get(key))
                        arrays[path] = self._arrays[path]
                    break
        data_prefix = _DATA + prefix if prefix and not any(p and prefix.startswith(p + "/") for p in arrays) else _DATA
        for key in self.base.list_prefix(data_prefix):
            virtual = self._virtual_data_key(key, arrays)
            if virtual is not None:
                keys.append(virtual)
        return iter(sorted(k for k in keys if k.startswith(prefix)))

    def _list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        path = prefix.rstrip("/")
        names, subdirs = self.base.list_dir(f"meta/root/{path}/" if path else "meta/root/")
        children = set(subdirs)
        for name in names:
            for suffix in (self._array_suffix, self._group_suffix):
                if name.endswith(suffix):
                    children.add(name[: -len(suffix)])
        keys: set[str] = set()
        if self._node_document(path) is not None:
            keys.add(ZARR_JSON)
        if path in self._arrays or self.base.exists(self._meta_key(path, self._array_suffix)):
            chunk_keys, chunk_dirs = super()._list_dir(prefix)  # by the listing of its chunks
            keys |= set(chunk_keys)
            children |= set(chunk_dirs)
        return sorted(keys), sorted(children)

    def flush(self) -> None:
        self.base.flush()

    def close(self) -> None:
        self.base.close()
