"""Where a convention's reader gets a dataset's metadata documents (:class:`DocumentSource`:
the consolidated copy at the root, else the store), what the root's documents say about
the convention, and the consolidated copy sessions write (:func:`consolidated_copy`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Literal

from nczarr.errors import FormatError, MissingNodeError
from nczarr.formats.base import Convention, StoredDataset
from nczarr.formats.dialect import RootDocuments, loads, root_document
from nczarr.formats.keys import OLD_UPPER, SUPERBLOCK, V1_SUPERBLOCK, join_path
from nczarr.model import Dataset
from nczarr.store.base import Store
from nczarr.zarr.jsonvalue import JSON, JSONObject
from nczarr.zarr.metadata import (
    ZARR_JSON,
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ZMETADATA,
    GroupMetadataV3,
    consolidated_order,
    dump_json,
    parse_node,
)
from nczarr.zarr.node import is_node_name

#: The root keys a source reads first, by Zarr format: the root's documents and the
#: document that carries the consolidated copy (v3: inside ``zarr.json``).
log = logging.getLogger(__name__)

_ROOT_KEYS = {3: (ZARR_JSON,), 2: (ZGROUP, ZATTRS, ZMETADATA)}


def root_attributes(root_documents: Mapping[str, bytes]) -> JSONObject | None:
    """The attributes of a v3 root group, or None when the root is not one."""
    if ZARR_JSON not in root_documents:
        return None
    try:
        doc = root_document(root_documents, ZARR_JSON)
    except FormatError:
        return None
    if not isinstance(doc, dict) or doc.get("node_type") != "group":
        return None
    attributes = doc.get("attributes", {})
    return attributes if isinstance(attributes, dict) else None


def is_nczarr_v2_root(root_documents: Mapping[str, bytes]) -> bool:
    """Whether a v2 root holds an NCZarr superblock: NCZarr 1.0.0's ``.nczarr`` object, or
    ``_nczarr_superblock`` in ``.zattrs`` (in ``.zgroup`` too, upper-case, before 4.9)."""
    if V1_SUPERBLOCK in root_documents:
        return True
    for key, names in ((ZATTRS, (SUPERBLOCK,)), (ZGROUP, (SUPERBLOCK, OLD_UPPER[SUPERBLOCK]))):
        if key in root_documents:
            try:
                doc = root_document(root_documents, key)
            except FormatError:
                return False
            if isinstance(doc, dict) and any(n in doc for n in names):
                return True
    return False


def start_reading(
    convention: Convention, store: Store, use_consolidated: bool | None, root: RootDocuments | None
) -> tuple[DocumentSource, Dataset, StoredDataset]:
    """What every convention's ``read`` starts from: the documents' source, an empty tree of
    the convention's Zarr version, and the StoredDataset that will hold it."""
    source = DocumentSource(store, convention.zarr_format, use_consolidated, root)
    dataset = Dataset("", zarr_version=str(convention.zarr_format))
    return source, dataset, StoredDataset(dataset, consolidated=source.has_consolidated)


class DocumentSource:
    """Where a convention's reader gets a dataset's metadata documents (parsed JSON objects by
    store key). The root's documents are read once; when they carry consolidated metadata
    (v3: ``consolidated_metadata`` in the root ``zarr.json``; v2: ``.zmetadata``) every other
    document is served from it without reading the store, else from the store in batches.

    ``use_consolidated``: None uses the copy when there is one, False never does, True
    requires one (FormatError naming the key otherwise). ``root``: the root's documents when
    they have been read already (to detect the convention)."""

    def __init__(
        self,
        store: Store,
        zarr_format: Literal[2, 3],
        use_consolidated: bool | None = None,
        root: RootDocuments | None = None,
    ) -> None:
        self.store = store
        root_keys = _ROOT_KEYS[zarr_format]
        self._read_first = frozenset(root_keys)
        if root is None:
            root = RootDocuments(store.get_many(root_keys))
        self._root = {key: _object_document(root.parsed(key), key) for key in root_keys if key in root and key != ZMETADATA}
        #: Whether the store's root holds consolidated metadata (used or not).
        self.has_consolidated = ZMETADATA in root or "consolidated_metadata" in self._root.get(ZARR_JSON, {})
        if use_consolidated and not self.has_consolidated:
            raise FormatError(f"{root_keys[-1]}: the store holds no consolidated metadata (use_consolidated=True)")
        self._copy = None
        if use_consolidated is not False:
            try:
                if ZMETADATA in root:
                    self._root[ZMETADATA] = _object_document(root.parsed(ZMETADATA), ZMETADATA)
                self._copy = _consolidated_documents(self._root, zarr_format)
            except FormatError as exc:
                if use_consolidated:
                    raise
                # as netcdf-c does: a consolidated copy that cannot be used is left aside
                log.warning("%s; reading the metadata documents themselves", exc)
        if zarr_format == 3 and ZARR_JSON in self._root:
            # readers want the root's own document; the copy is this source's business
            self._root[ZARR_JSON] = {k: v for k, v in self._root[ZARR_JSON].items() if k != "consolidated_metadata"}
        self._root.pop(ZMETADATA, None)

    def documents(self, keys: Iterable[str]) -> dict[str, JSONObject]:
        """Those of ``keys`` that exist, each a JSON object (FormatError naming the key when a
        document is not one); read in one batch when they come from the store."""
        keys = list(keys)
        found = {key: self._root[key] for key in keys if key in self._root}
        rest = [key for key in keys if key not in found and key not in self._read_first]
        if self._copy is not None:
            return found | {key: self._copy[key] for key in rest if key in self._copy}
        return found | {key: _object_document(loads(value, key), key) for key, value in self.store.get_many(rest).items()}

    def document(self, key: str) -> JSONObject:
        """The document at ``key``; FormatError when it is missing."""
        found = self.documents([key]).get(key)
        if found is None:
            raise MissingNodeError(f"{key}: missing")
        return found

    def children(self, path: str) -> list[str]:
        """The names below the group at ``path`` that may be nodes, sorted: the nodes in the
        consolidated copy, else the store's sub-prefixes."""
        if self._copy is None:
            # a listing naming "..", "." or "a/b" would lead a walk outside this group, or round it
            return [name for name in self.store.list_dir(path + "/" if path else "")[1] if is_node_name(name)]
        prefix = path + "/" if path else ""
        names = {key[len(prefix) :].partition("/")[0] for key in self._copy if key.startswith(prefix)}
        return sorted(name for name in names if any(f"{prefix}{name}/{doc}" in self._copy for doc in _NODE_KEYS))


_NODE_KEYS = (ZARR_JSON, ZARRAY, ZGROUP)


def _object_document(doc: JSON, key: str) -> JSONObject:
    if not isinstance(doc, dict):
        raise FormatError(f"{key}: not a JSON object")
    return doc


def _consolidated_documents(root: Mapping[str, JSONObject], zarr_format: int) -> dict[str, JSONObject] | None:
    """The node documents (by store key, the root's excluded) in the consolidated copy of a
    root's documents, or None when they carry none. The documents are taken as stored, not
    through typed metadata, so the readers see exactly what each node's writer wrote."""
    if zarr_format == 3:
        inline = root.get(ZARR_JSON, {}).get("consolidated_metadata")
        if inline is None:
            return None
        nodes = inline.get("metadata") if isinstance(inline, dict) and inline.get("kind") == "inline" else None
        if not isinstance(nodes, dict) or not all(isinstance(doc, dict) for doc in nodes.values()):
            raise FormatError(f"{ZARR_JSON}: consolidated_metadata is not inline metadata of JSON objects")
        return {join_path(path, ZARR_JSON): doc for path, doc in nodes.items() if isinstance(doc, dict)}
    zmetadata = root.get(ZMETADATA)
    if zmetadata is None:
        return None
    docs = zmetadata.get("metadata")
    if zmetadata.get("zarr_consolidated_format") != 1 or not isinstance(docs, dict) or not docs:
        raise FormatError(f"{ZMETADATA}: not zarr_consolidated_format 1 metadata of at least one node")
    for key, doc in docs.items():
        if key.rpartition("/")[2] not in (ZARRAY, ZGROUP, ZATTRS) or not isinstance(doc, dict):
            raise FormatError(f"{ZMETADATA}: {key!r} is not a Zarr v2 node document")
    return {key: doc for key, doc in docs.items() if "/" in key and isinstance(doc, dict)}


def consolidated_copy(documents: Mapping[str, bytes], zarr_format: Literal[2, 3]) -> tuple[str, bytes]:
    """The key and bytes of the document that carries the consolidated metadata of a
    hierarchy's ``documents`` (every node's, by store key): v3 the root ``zarr.json`` with
    the inline copy, as zarr-python 3 writes it; v2 ``.zmetadata``.

    The documents go in as the bytes they are (parsing and writing every one again cost as
    much as computing them): for v3 only groups are rewritten, as zarr-python gives each
    group in the copy an empty copy of its own."""
    if zarr_format == 3:
        entries = []
        nodes = sorted(
            ((key.rpartition("/")[0], value) for key, value in documents.items() if key != ZARR_JSON),
            key=consolidated_order,
        )
        for path, value in nodes:
            text = value.decode()
            if b'"node_type": "group"' in value:
                group = parse_node({ZARR_JSON: value}, path)
                assert isinstance(group, GroupMetadataV3)
                text = dump_json(replace(group, consolidated={}).to_json()).decode()
            entries.append(f"{json.dumps(path, ensure_ascii=False)}: {text}")
        root = parse_node({ZARR_JSON: documents[ZARR_JSON]})
        assert isinstance(root, GroupMetadataV3)  # every convention's root is a group
        copy = '{"kind": "inline", "must_understand": false, "metadata": {' + ", ".join(entries) + "}}"
        # zarr-python's key order: attributes, zarr_format, consolidated_metadata, node_type
        rest = root.to_json()
        head = {"attributes": rest.pop("attributes"), "zarr_format": rest.pop("zarr_format")}
        document = dump_json(head)[:-1] + b', "consolidated_metadata": ' + copy.encode() + b", " + dump_json(rest)[1:]
        return ZARR_JSON, document
    # v2 documents go in as written: typed v2 metadata would rewrite netcdf-c's char
    # dtype ">S1" as "|S1", which netcdf-c and nczarr read as a string
    metadata = ", ".join(f"{json.dumps(key, ensure_ascii=False)}: {documents[key].decode()}" for key in sorted(documents))
    return ZMETADATA, ('{"metadata": {' + metadata + '}, "zarr_consolidated_format": 1}').encode()
