"""The Zarr Object Model (ZOM, the ZEP 6 draft): a hierarchy's structure as one JSON document.

A ZOM document is a node: a group is its metadata (``zarr_format``, v3 ``node_type``,
``attributes``) plus ``members``, its children by name; an array is exactly its Zarr metadata
for that version (v3: the ``zarr.json`` object; v2: the ``.zarray`` object plus
``attributes``). There is no data in it. Every node of one document has the same
``zarr_format``. A v3 node is told apart by ``node_type``; a v2 node is an array when it has a
``shape``, else a group.

* :func:`export` describes a store (or a group or array) as a document;
* :func:`validate` checks a document against the JSON Schema of its version
  (``nczarr/schemas/zom-v2.json``, ``zom-v3.json``, see :func:`schema`) and then against
  nczarr's reading of the metadata, listing every problem with its JSON path;
* :func:`create` makes the hierarchy a document describes (all groups and arrays, no data);
* :func:`compare` lists every difference between a document and a store, by node path;
* :func:`flatten` / :func:`unflatten` turn a document into the flat form (node path →
  metadata, ``""`` being the root) and back: the form consolidated metadata stores;
* :func:`consolidated_differences` compares a store's consolidated metadata with the
  documents of its nodes.

Documents are plain JSON values (dicts); the flat form holds the typed metadata of
:mod:`nczarr.zarr.metadata`, which does all the parsing and printing of node metadata.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Literal

from nczarr.errors import (
    CodecError,
    DocumentError,
    MetadataError,
    NodeExistsError,
    SchemaUnavailableError,
    StoreError,
)
from nczarr.store.base import Store
from nczarr.zarr.array import Array, build_pipeline
from nczarr.zarr.hierarchy import Group, open_node
from nczarr.zarr.jsonvalue import JSON, JSONObject
from nczarr.zarr.metadata import (
    ZMETADATA,
    ArrayMetadataV2,
    ArrayMetadataV3,
    GroupMetadataV2,
    GroupMetadataV3,
    NodeMetadata,
    check_nesting,
    dump_json,
    make_consolidated_v3,
    make_zmetadata,
)
from nczarr.zarr.node import check_node_name, join_path, key_prefix

__all__ = [
    "Difference",
    "DocumentError",
    "Problem",
    "SchemaUnavailableError",
    "compare",
    "consolidated_differences",
    "create",
    "dumps",
    "export",
    "flatten",
    "read_document",
    "schema",
    "unflatten",
    "validate",
    "write_document",
]

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    """Something wrong in a ZOM document: where (a JSON path such as
    ``$.members.g1.shape[0]``) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Difference:
    """How a store differs from a document at one node (``path``: ``/`` for the root, else
    ``/a/b``). ``missing``: in the document, not the store; ``extra``: in the store, not the
    document; ``changed``: ``property`` (a metadata member, ``attributes.NAME`` for one
    attribute, ``node_type`` when a group stands where an array is expected or the other way
    round) is ``expected`` in the document and ``actual`` in the store."""

    path: str
    kind: Literal["missing", "extra", "changed"]
    property: str | None = None
    expected: JSON = None
    actual: JSON = None

    def __str__(self) -> str:
        if self.kind != "changed":
            return f"{self.path}: {self.kind}"
        return f"{self.path}: changed {self.property}: {_show(self.expected)} != {_show(self.actual)}"


#: Shown for an attribute or member that one side lacks.
_ABSENT = object()


def _show(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


# -- JSON paths --------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _json_path(parts: Iterable[str | int]) -> str:
    """``$.members.g1.shape[0]``; names that are not identifiers in brackets: ``$["a b"]``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.match(part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _node_label(path: str) -> str:
    return "/" + path


# -- documents <-> flat form ---------------------------------------------------------------


def _zarr_format(document: Any) -> Literal[2, 3]:
    if not isinstance(document, dict):
        raise DocumentError("$", f"a ZOM document must be a JSON object, got {_show_type(document)}")
    zarr_format = document.get("zarr_format")
    if zarr_format not in (2, 3) or isinstance(zarr_format, bool):
        raise DocumentError("$.zarr_format", f"must be 2 or 3, got {_show(document.get('zarr_format', _ABSENT))}")
    return 2 if zarr_format == 2 else 3


def _show_type(value: Any) -> str:
    names: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
    return names.get(type(value), json.dumps(value))


def _is_group(node: dict[str, Any], zarr_format: int) -> bool:
    if zarr_format == 3:
        return node.get("node_type") != "array"
    return "shape" not in node


def _nodes(document: JSON, zarr_format: int) -> Iterator[tuple[str, JsonPath, dict[str, Any]]]:
    """(node path, JSON path, node object) of every node of a document, parents first.
    DocumentError when the tree itself is malformed."""
    pending: list[tuple[str, JsonPath, Any]] = [("", (), document)]
    while pending:
        path, where, node = pending.pop()
        if not isinstance(node, dict):
            raise DocumentError(_json_path(where), f"a node must be a JSON object, got {_show_type(node)}")
        yield path, where, node
        if not _is_group(node, zarr_format):
            continue
        members = node.get("members")
        if not isinstance(members, dict):
            what = "a group needs members" if members is None else f"must be an object, got {_show_type(members)}"
            raise DocumentError(_json_path((*where, "members")), what)
        for name in sorted(members, reverse=True):  # popped in name order
            try:
                check_node_name(name)
            except MetadataError as exc:
                raise DocumentError(_json_path((*where, "members")), str(exc)) from None
            pending.append((join_path(path, name), (*where, "members", name), members[name]))


def _parse_node(node: dict[str, Any], zarr_format: int, where: JsonPath) -> NodeMetadata:
    """The metadata of one document node (its ``members`` aside)."""
    body = {k: v for k, v in node.items() if k != "members"}
    try:
        check_nesting(body)
        if body.get("zarr_format") != zarr_format:
            found = _show(body.get("zarr_format", _ABSENT))
            raise MetadataError(f"zarr_format must be {zarr_format}, as at the root, got {found}")
        group = _is_group(node, zarr_format)
        if group and "attributes" not in body:
            raise MetadataError("missing required member 'attributes'")
        if zarr_format == 3:
            return (GroupMetadataV3 if group else ArrayMetadataV3).from_json(body)
        attributes = body.pop("attributes", {})
        return (GroupMetadataV2 if group else ArrayMetadataV2).from_json(body, attributes)
    except MetadataError as exc:
        raise DocumentError(_json_path(where), str(exc)) from None


def flatten(document: JSON) -> dict[str, NodeMetadata]:
    """The metadata of every node of a ZOM document by node path (``""``: the root, then
    ``"a"``, ``"a/b"``...), parents first. DocumentError at the first problem."""
    zarr_format = _zarr_format(document)
    return {path: _parse_node(node, zarr_format, where) for path, where, node in _nodes(document, zarr_format)}


def _node_json(metadata: NodeMetadata) -> dict[str, Any]:
    """One node of a document, without ``members``: exactly its Zarr metadata (consolidated
    metadata aside), with ``attributes``; ``zarr_format`` and ``node_type`` first."""
    if isinstance(metadata, GroupMetadataV3):
        obj = replace(metadata, consolidated=None).to_json()
    elif metadata.zarr_format == 3:
        obj = metadata.to_json()
    else:
        obj = metadata.to_json() | {"attributes": metadata.attributes}
    return {k: obj[k] for k in ("zarr_format", "node_type") if k in obj} | obj


def unflatten(nodes: Mapping[str, NodeMetadata]) -> JSONObject:
    """The ZOM document of a flat form (node path → metadata, ``""`` the root): members
    nested by name, in name order. MetadataError when the root is missing, formats are mixed,
    or a node's parent is not a group of the form."""
    if "" not in nodes:
        raise MetadataError("the flat form has no root (path '')")
    zarr_format = nodes[""].zarr_format
    documents: dict[str, dict[str, Any]] = {}
    for path in sorted(nodes, key=lambda p: (p.count("/") if p else -1, p)):
        metadata = nodes[path]
        if metadata.zarr_format != zarr_format:
            raise MetadataError(
                f"{_node_label(path)}: Zarr v{metadata.zarr_format} metadata in a v{zarr_format} hierarchy"
            )
        document = _node_json(metadata)
        if metadata.node_type == "group":
            document["members"] = {}
        documents[path] = document
        if path:
            parent, _, name = path.rpartition("/")
            check_node_name(name)
            if "members" not in documents.get(parent, {}):
                raise MetadataError(
                    f"{_node_label(path)}: its parent {_node_label(parent)} is not a group of the flat form"
                )
            documents[parent]["members"][name] = document
    return documents[""]


# -- export, create, compare -----------------------------------------------------------------


def _flat_of(source: Store | Group | Array, path: str, use_consolidated: bool | None) -> dict[str, NodeMetadata]:
    node = source if isinstance(source, Group | Array) else open_node(source, path, use_consolidated=use_consolidated)
    if isinstance(node, Array):
        return {"": node.metadata}
    return {"": node.metadata, **node.descendants()}


def export(source: Store | Group | Array, path: str = "", *, use_consolidated: bool | None = None) -> JSONObject:
    """The ZOM document of a group or array, or of the node at ``path`` in a store (read
    through its consolidated metadata when present, unless ``use_consolidated`` is False)."""
    return unflatten(_flat_of(source, path, use_consolidated))


def create(document: JSON, store: Store, *, overwrite: bool = False, consolidate: bool = True) -> Group | Array:
    """Make the hierarchy ``document`` describes at the root of ``store``: every group and
    array, no data, with consolidated metadata unless ``consolidate`` is False. Every node is
    checked before anything is written; a store that is not empty is an error unless
    ``overwrite``, which clears it first. Returns the root, open for writing."""
    nodes = flatten(document)
    for path, metadata in nodes.items():
        if metadata.node_type == "array":
            try:
                build_pipeline(metadata)
            except (CodecError, MetadataError) as exc:  # e.g. an unknown codec: nczarr could not open it
                raise type(exc)(f"{_node_label(path)}: {exc}") from None
    if next(iter(store.list_prefix("")), None) is not None:
        if not overwrite:
            raise NodeExistsError(f"{store!r} is not empty (overwrite replaces what it holds)")
        store.delete_prefix("")
    root, descendants = nodes[""], {p: m for p, m in nodes.items() if p}
    documents: dict[str, bytes] = {}
    if isinstance(root, GroupMetadataV3) and consolidate:
        root = make_consolidated_v3(root, descendants)
    elif isinstance(root, GroupMetadataV2) and consolidate:
        documents[ZMETADATA] = make_zmetadata(root, descendants)
    for path, metadata in {"": root, **descendants}.items():
        documents.update({key_prefix(path) + k: v for k, v in metadata.documents().items()})
    store.set_many(documents)
    return open_node(store, mode="r+")


def _differences(expected: Mapping[str, NodeMetadata], actual: Mapping[str, NodeMetadata]) -> list[Difference]:
    """Every difference between two flat forms, by node path (then property)."""
    out: list[Difference] = []
    for path in sorted(expected.keys() | actual.keys(), key=lambda p: p.split("/")):
        label = _node_label(path)
        if path not in actual:
            out.append(Difference(label, "missing"))
        elif path not in expected:
            out.append(Difference(label, "extra"))
        elif expected[path].node_type != actual[path].node_type:
            out.append(Difference(label, "changed", "node_type", expected[path].node_type, actual[path].node_type))
        else:
            out.extend(_changed(label, _node_json(expected[path]), _node_json(actual[path])))
    return out


def _changed(label: str, expected: dict[str, Any], actual: dict[str, Any], prefix: str = "") -> Iterator[Difference]:
    """Each member of two nodes' JSON whose values differ; attributes one by one (every node
    has ``attributes``)."""
    for name in [*expected, *(k for k in actual if k not in expected)]:
        mine, theirs = expected.get(name, _ABSENT), actual.get(name, _ABSENT)
        if name == "attributes" and not prefix:
            yield from _changed(label, mine, theirs, "attributes.")
        elif _canonical(mine) != _canonical(theirs):
            yield Difference(label, "changed", prefix + name, mine, theirs)


def _canonical(value: Any) -> str:
    """A JSON text equal for equal values (NaN equal to NaN, key order ignored)."""
    if value is _ABSENT:
        return ""
    return json.dumps(value, sort_keys=True, allow_nan=True)


def compare(
    document: JSON, source: Store | Group | Array, path: str = "", *, use_consolidated: bool | None = False
) -> list[Difference]:
    """Every difference between a ZOM document and a store (or the node at ``path`` in it,
    or a group or array), by node path: nodes missing from the store, extra in it, and each
    property that differs. The store is read node by node unless ``use_consolidated``."""
    return _differences(flatten(document), _flat_of(source, path, use_consolidated))


def consolidated_differences(store: Store, path: str = "") -> list[Difference]:
    """How the consolidated metadata of the group at ``path`` differs from the documents of
    its nodes (``expected`` is what the consolidated metadata says): empty when it is
    current. NodeNotFoundError when there is none."""
    consolidated = _flat_of(store, path, True)
    return _differences(consolidated, _flat_of(store, path, False))


# -- validation ----------------------------------------------------------------------------


def schema(zarr_format: Literal[2, 3]) -> JSONObject:
    """The JSON Schema (draft 2020-12) of ZOM documents of a Zarr version (a new copy)."""
    if zarr_format not in (2, 3):
        raise MetadataError(f"there is no ZOM schema for Zarr v{zarr_format}")
    text = resources.files("nczarr").joinpath("schemas", f"zom-v{zarr_format}.json").read_text(encoding="utf-8")
    parsed: JSONObject = json.loads(text)
    return parsed


@functools.cache
def _validator(zarr_format: Literal[2, 3]) -> Any:
    try:
        import jsonschema
    except ImportError:
        raise SchemaUnavailableError(
            "validating ZOM documents needs the jsonschema package: pip install 'nczarr[schema]'"
        ) from None
    return jsonschema.Draft202012Validator(schema(zarr_format))


def validate(document: JSON) -> list[Problem]:
    """Every problem of a ZOM document, by JSON path: first against the JSON Schema of its
    Zarr version; when it passes, against the metadata rules nczarr reads it with (data types,
    fill values, codecs as metadata, names). Empty when the document is valid."""
    try:
        zarr_format = _zarr_format(document)
    except DocumentError as exc:
        return [Problem(exc.path, exc.reason)]
    try:
        errors = _validator(zarr_format).iter_errors(document)
        problems = [Problem(_json_path(e.absolute_path), e.message) for e in errors]
    except RecursionError:
        return [Problem("$", "the document nests deeper than the schema validator can follow")]
    if not problems:
        for _, where, node in _nodes(document, zarr_format):
            try:
                _parse_node(node, zarr_format, where)
            except DocumentError as exc:
                problems.append(Problem(exc.path, exc.reason))
    return sorted(problems, key=lambda p: p.path)


def dumps(document: JSON) -> str:
    """A document as JSON text (NaN and Infinity as in Zarr attributes). Members are written
    with a stack, not recursion, so a hierarchy deeper than Python's recursion limit can be
    written (though Python's JSON parser cannot read it back, see :func:`read_document`)."""
    parts: list[str] = []
    pending: list[tuple[bool, Any]] = [(False, document)]  # (is text to write, node or text)
    while pending:
        is_text, item = pending.pop()
        members = item.get("members") if isinstance(item, dict) else None
        if is_text or not isinstance(members, dict):
            parts.append(item if is_text else dump_json(item, None).decode())
            continue
        body = dump_json({k: v for k, v in item.items() if k != "members"}, None).decode()
        parts.append(body[:-1] + (", " if body != "{}" else "") + '"members": {')
        pending.append((True, "}}"))
        for i, (name, child) in reversed(list(enumerate(members.items()))):
            pending += [(False, child), (True, (", " if i else "") + dump_json(name, None).decode() + ": ")]
    return "".join(parts) + "\n"


def write_document(document: JSON, file: str | os.PathLike[str]) -> None:
    """Write a document to ``file`` as :func:`dumps` prints it; StoreError when it cannot."""
    try:
        with open(file, "w", encoding="utf-8") as f:
            f.write(dumps(document))
    except OSError as exc:
        raise StoreError(f"cannot write {os.fspath(file)!r}: {exc.strerror or exc}") from None


def read_document(file: str | os.PathLike[str]) -> JSON:
    """The JSON value in ``file`` (NaN and Infinity allowed, as in Zarr attributes).
    StoreError when it cannot be read, MetadataError when it is not JSON."""
    try:
        with open(file, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StoreError(f"cannot read {os.fspath(file)!r}: {reason}") from None
    try:
        document: JSON = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MetadataError(f"{os.fspath(file)}: not valid JSON: {exc}") from None
    except RecursionError:
        raise MetadataError(f"{os.fspath(file)}: nests deeper than Python's JSON parser can read") from None
    return document
