"""Groups and the hierarchy: create and open nodes by path, list children (groups implied by
descendants included), delete subtrees, consolidate metadata.

Consolidated metadata (v3: inline in the root ``zarr.json``, as zarr-python 3 writes it; v2:
``.zmetadata``) is used by default when a group that has it is opened, so opening a hierarchy
and listing every node costs one read. It is *current* by this rule: every change nczarr
makes through a hierarchy drops the consolidated metadata that describes it on the first
change (so a stale copy is never left behind, even if the hierarchy is not closed), keeps
the in-memory view current, and writes consolidated metadata again on ``Group.close()``.
Changes made behind nczarr's back (another writer) cannot be seen cheaply: open with
``use_consolidated=False`` to read every node, and see :mod:`nczarr.zarr.zom` to compare.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Final, Literal, TypedDict, TypeVar, Unpack, overload

import numpy as np

from nczarr.errors import InvalidModeError, MetadataError, NodeExistsError, NodeNotFoundError
from nczarr.store.base import Store
from nczarr.zarr.array import DEFAULT_CACHE_BYTES, Array, build_pipeline
from nczarr.zarr.chunkspec import FillValue
from nczarr.zarr.draft import DraftStore, create_draft, draft_view
from nczarr.zarr.dtypes import DataType, DTypeSpec
from nczarr.zarr.jsonvalue import JSON, JSONObject
from nczarr.zarr.metadata import (
    ZARR_JSON,
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ZMETADATA,
    ArrayMetadata,
    ArrayMetadataV2,
    ArrayMetadataV3,
    GroupMetadata,
    GroupMetadataV2,
    GroupMetadataV3,
    NodeMetadata,
    consolidated_from_root,
    make_consolidated_v3,
    make_zmetadata,
    parse_node,
)
from nczarr.zarr.node import Node, check_node_name, is_node_name, join_path, key_prefix

ZarrFormat = Literal[2, 3]
#: The ``zarr_format`` that creates a hierarchy in the storage layout of the Zarr v3
#: core-protocol draft (zarr-python 2.18's experimental v3, see :mod:`nczarr.zarr.draft`).
DRAFT_FORMAT: Final = "v3-draft"
_DOCUMENTS = {3: (ZARR_JSON,), 2: (ZARRAY, ZGROUP, ZATTRS)}
#: Chunks chosen by default hold about this many bytes.
TARGET_CHUNK_BYTES = 4 * 2**20


def _normalize_path(path: str) -> str:
    parts = [p for p in path.strip("/").split("/") if p] if path else []
    for part in parts:
        check_node_name(part)
    return "/".join(parts)


def read_metadata(store: Store, path: str, zarr_format: ZarrFormat | None = None) -> NodeMetadata | None:
    """The metadata of the node at ``path``, or None when no document names a node there.
    With no ``zarr_format`` given, v3 is tried first, then v2."""
    if zarr_format is None:
        return read_metadata(store, path, 3) or read_metadata(store, path, 2)
    prefix = key_prefix(path)
    docs = store.get_many([prefix + name for name in _DOCUMENTS[zarr_format]])
    if not docs:
        return None
    found = {key[len(prefix) :]: value for key, value in docs.items()}
    if ZARR_JSON not in found and ZARRAY not in found and ZGROUP not in found:
        return None  # a stray .zattrs names no node
    return parse_node(found, path)


def _has_descendant_node(store: Store, path: str) -> bool:
    names = (ZARR_JSON, ZARRAY, ZGROUP)
    return any(key.rsplit("/", 1)[-1] in names for key in store.list_prefix(key_prefix(path)))


def default_chunks(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Chunks of about TARGET_CHUNK_BYTES: halve the largest dimension until they fit."""
    chunks = [max(1, n) for n in shape]
    while math.prod(chunks) * max(itemsize, 1) > TARGET_CHUNK_BYTES:
        axis = int(np.argmax(chunks))
        if chunks[axis] == 1:
            break
        chunks[axis] = -(-chunks[axis] // 2)
    return tuple(chunks)


def _default_serializer(data_type: DataType) -> JSONObject:
    if data_type.kind == "string":
        return {"name": "vlen-utf8"}
    if data_type.kind == "bytes":
        return {"name": "vlen-bytes"}
    if data_type.dtype.itemsize == 1 or data_type.kind in ("fixed_bytes", "raw"):
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": "little"}}


class ArrayOptions(TypedDict, total=False):
    """The options of :func:`new_array_metadata` besides ``zarr_format``, ``shape`` and
    ``dtype`` (what ``create_array`` passes on)."""

    chunks: Sequence[int] | None
    fill_value: object
    codecs: Sequence[Mapping[str, JSON]] | None
    filters: Sequence[Mapping[str, JSON]] | None
    compressors: Sequence[Mapping[str, JSON]] | None
    compressor: Mapping[str, JSON] | None
    order: Literal["C", "F"]
    dimension_names: Sequence[str | None] | None
    attributes: Mapping[str, JSON] | None
    chunk_key_encoding: Literal["default", "v2"] | None
    dimension_separator: Literal[".", "/"] | None
    shards: Sequence[int] | None
    string_kind: Literal["string", "bytes"]


class OpenOptions(TypedDict, total=False):
    """The options of :func:`open_node` (what ``open_group`` and ``open_array`` pass on)."""

    mode: str
    zarr_format: ZarrFormat | None
    use_consolidated: bool | None
    write_consolidated: bool


_Default = TypeVar("_Default")


def new_array_metadata(
    *,
    zarr_format: ZarrFormat,
    shape: Sequence[int],
    dtype: DTypeSpec,
    chunks: Sequence[int] | None = None,
    fill_value: object = None,
    codecs: Sequence[Mapping[str, JSON]] | None = None,
    filters: Sequence[Mapping[str, JSON]] | None = None,
    compressors: Sequence[Mapping[str, JSON]] | None = None,
    compressor: Mapping[str, JSON] | None = None,
    order: Literal["C", "F"] = "C",
    dimension_names: Sequence[str | None] | None = None,
    attributes: Mapping[str, JSON] | None = None,
    chunk_key_encoding: Literal["default", "v2"] | None = None,
    dimension_separator: Literal[".", "/"] | None = None,
    shards: Sequence[int] | None = None,
    string_kind: Literal["string", "bytes"] = "string",
) -> ArrayMetadataV2 | ArrayMetadataV3:
    """Metadata for a new array. v3 takes either a whole ``codecs`` chain or ``filters``
    (array→array) and ``compressors`` (bytes→bytes) around the default serializer, and
    optionally ``shards`` (the chunks become inner chunks of shards of that shape); v2 takes
    numcodecs ``filters`` and one ``compressor``. ``fill_value`` None means the type's default."""
    shape = tuple(int(n) for n in shape)
    data_type = DataType.from_numpy(dtype, zarr_format, string_kind=string_kind)
    if chunks is None:
        chunks = default_chunks(shape, data_type.dtype.itemsize)
    chunks = tuple(int(c) for c in chunks)
    fill: FillValue = data_type.default_fill() if fill_value is None else data_type.cast_fill(fill_value)
    attributes = dict(attributes or {})
    if zarr_format == 2:
        if codecs is not None or compressors is not None or shards is not None:
            raise MetadataError("Zarr v2 arrays take 'filters' and 'compressor', not codecs or shards")
        filters = list(filters or [])
        codec_id = data_type.object_codec_id
        if codec_id and not any(f.get("id") == codec_id for f in filters):
            filters.insert(0, {"id": codec_id})
        metadata: ArrayMetadataV2 | ArrayMetadataV3 = ArrayMetadataV2(
            shape=shape,
            chunks=chunks,
            data_type=data_type,
            fill_value=fill,
            order=order,
            compressor=dict(compressor) if compressor else None,
            filters=tuple(dict(f) for f in filters) or None,
            dimension_separator=dimension_separator or ".",
            attributes=attributes,
        )
        return _with_normalized_codecs(metadata)
    if compressor is not None:
        raise MetadataError("Zarr v3 arrays take 'compressors' (a list), not 'compressor'")
    if codecs is None:
        head: list[JSONObject] = [dict(f) for f in filters or []]
        if order == "F" and len(shape) > 1:
            reverse: list[JSON] = [*range(len(shape) - 1, -1, -1)]
            head.insert(0, {"name": "transpose", "configuration": {"order": reverse}})
        codecs = [*head, _default_serializer(data_type), *(dict(c) for c in compressors or [])]
    elif filters or compressors or order == "F":
        raise MetadataError("give either a whole 'codecs' chain or filters/compressors/order, not both")
    grid = chunks
    if shards is not None:
        grid = tuple(int(s) for s in shards)
        if any(s % c for s, c in zip(grid, chunks)) or len(grid) != len(chunks):
            raise MetadataError(f"shard shape {grid} must be a multiple of the chunk shape {chunks}")
        inner: list[JSON] = [dict(c) for c in codecs]
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": list(chunks), "codecs": inner}}]
    metadata = ArrayMetadataV3(
        shape=shape,
        data_type=data_type,
        chunk_shape=grid,
        fill_value=fill,
        codecs=tuple(dict(c) for c in codecs),
        attributes=attributes,
        dimension_names=tuple(dimension_names) if dimension_names is not None else None,
        chunk_key_encoding=chunk_key_encoding or "default",
        separator=dimension_separator,
    )
    return _with_normalized_codecs(metadata)


def _with_normalized_codecs(metadata: ArrayMetadataV2 | ArrayMetadataV3) -> ArrayMetadataV2 | ArrayMetadataV3:
    """The metadata with its codecs as the pipeline spells them (a missing configuration or
    element size filled in), checked against the data type before anything is stored."""
    normalized = build_pipeline(metadata).to_json()
    if isinstance(metadata, ArrayMetadataV3):
        assert isinstance(normalized, list), "a v3 pipeline gives its codecs list"
        return replace(metadata, codecs=tuple(normalized))
    assert isinstance(normalized, tuple), "a v2 pipeline gives (filters, compressor)"
    filters, compressor = normalized
    return replace(metadata, filters=tuple(filters) if filters else None, compressor=compressor)


class _Hierarchy:
    """What the groups and arrays opened from one group (the hierarchy's root) share: the
    consolidated view they read nodes from, whether anything changed through them, and the
    consolidated metadata to write again when the hierarchy is closed.

    The currency rule: the first change made through a hierarchy removes the stored
    consolidated metadata that describes it (its root's own, and the store root's), so what a
    store holds never describes a hierarchy that nczarr has changed since; ``close()`` writes
    it again from what the hierarchy knows. A hierarchy rooted at the store root always gets
    consolidated metadata when it is closed after changes."""

    def __init__(self, root: Group, nodes: dict[str, NodeMetadata] | None, write_consolidated: bool) -> None:
        self.root = root
        #: store path → metadata of every node below the root, kept current by every change
        #: made through the hierarchy; None: nodes are read from the store.
        self.nodes = nodes
        self.write_consolidated = write_consolidated
        self.changed = False
        #: Whether the root's own consolidated metadata is to be written on close.
        self._root_copy = False
        #: For a hierarchy below the store root whose consolidated metadata was dropped: the
        #: store root's metadata and the entries of that copy outside this hierarchy.
        self._store_root_copy: tuple[GroupMetadata, dict[str, NodeMetadata]] | None = None
        self._arrays: weakref.WeakValueDictionary[int, Array] = weakref.WeakValueDictionary()

    # -- changes -------------------------------------------------------------------------
    def change(self) -> None:
        """Note that the hierarchy is about to change; the first change drops the stored
        consolidated metadata that describes it."""
        if self.changed:
            return
        self.changed = True
        root = self.root
        if isinstance(root.metadata, GroupMetadataV3):
            self._root_copy = not root.path or root.metadata.consolidated is not None
            if root.metadata.consolidated is not None:
                Node._set_metadata(root, _without_copy(root.metadata))
        else:
            prefix = key_prefix(root.path)
            self._root_copy = not root.path or root.store.exists(prefix + ZMETADATA)
            if self._root_copy:
                root.store.delete(prefix + ZMETADATA)
        if root.path:  # the store root's copy describes this hierarchy too
            dropped = _drop_store_root_copy(root.store, root.zarr_format)
            if dropped is not None:
                metadata, entries = dropped
                self._store_root_copy = (metadata, {p: m for p, m in entries.items() if not _is_within(p, root.path)})

    def record(self, path: str, metadata: NodeMetadata) -> None:
        """The node at ``path`` was written with ``metadata`` (the hook of arrays)."""
        self.change()
        if self.nodes is not None and path != self.root.path:
            self.nodes[path] = metadata

    def forget(self, path: str) -> None:
        """The node at ``path`` and everything below it are about to be deleted."""
        self.change()
        if self.nodes is not None:
            for p in [p for p in self.nodes if _is_within(p, path)]:
                del self.nodes[p]

    def track(self, array: Array) -> Array:
        """Hand out ``array``: report its metadata changes, flush it on close."""
        array.on_metadata_change = self.record
        self._arrays[id(array)] = array
        return array

    # -- consolidated metadata -------------------------------------------------------------
    def nodes_below(self, group: Group) -> dict[str, NodeMetadata]:
        """Path relative to ``group`` → metadata of every node below it: from the view when
        there is one, else by walking the store."""
        if self.nodes is None:
            return group.descendants()
        prefix = key_prefix(group.path)
        return {p[len(prefix) :]: m for p, m in self.nodes.items() if p.startswith(prefix)}

    def consolidated(self, group: Group) -> None:
        """``group`` was just consolidated: its copy is current, not one to write on close."""
        if group is self.root:
            self._root_copy = False
        if not group.path:
            self._store_root_copy = None
        self.changed = self._root_copy or self._store_root_copy is not None

    def close(self) -> None:
        """Flush the arrays handed out; when the hierarchy changed, write the consolidated
        metadata that the change dropped (and the store root's, when rooted there)."""
        for array in list(self._arrays.values()):
            array.flush()
        root = self.root
        if self.changed and self.write_consolidated and not root.read_only:
            inside = self.nodes_below(root)
            if self._root_copy:
                root.metadata = _write_copy(root.store, root.path, _without_copy(root.metadata), inside)
            if self._store_root_copy is not None:
                metadata, outside = self._store_root_copy
                below = {join_path(root.path, p): m for p, m in inside.items()}
                _write_copy(root.store, "", metadata, {**outside, root.path: root.metadata, **below})
        self._root_copy, self._store_root_copy, self.changed = False, None, False


def _drop_store_root_copy(store: Store, zarr_format: ZarrFormat) -> tuple[GroupMetadata, dict[str, NodeMetadata]] | None:
    """Remove the consolidated metadata of the store root; (the root's metadata without it,
    its entries), or None when there was none."""
    metadata = read_metadata(store, "", zarr_format)
    if metadata is None or metadata.node_type != "group":
        return None
    entries = _read_consolidated(store, "", metadata)
    if entries is None:
        return None
    if isinstance(metadata, GroupMetadataV3):
        metadata = _without_copy(metadata)
        store.set_many(metadata.documents())
    else:
        store.delete(ZMETADATA)
    return metadata, entries


def _dropping_store_root_copy(store: Store, zarr_format: ZarrFormat) -> Callable[[str, ArrayMetadata], None]:
    """The metadata hook of an array opened on its own, below the store root: its first change
    drops the root's consolidated metadata, which describes the array too (an array has no
    hierarchy whose close() would write it again)."""
    dropped = False

    def hook(path: str, metadata: ArrayMetadata) -> None:
        nonlocal dropped
        if not dropped:
            dropped = True
            _drop_store_root_copy(store, zarr_format)

    return hook


def _is_within(path: str, ancestor: str) -> bool:
    """Whether ``path`` is ``ancestor`` or below it (every path is below the root ``""``)."""
    return not ancestor or path == ancestor or path.startswith(ancestor + "/")


def _without_copy(metadata: GroupMetadata) -> GroupMetadata:
    if isinstance(metadata, GroupMetadataV3) and metadata.consolidated is not None:
        return replace(metadata, consolidated=None)
    return metadata


def _write_copy(store: Store, path: str, metadata: GroupMetadata, nodes: Mapping[str, NodeMetadata]) -> GroupMetadata:
    """Store ``nodes`` (path relative to the group → metadata) as the consolidated metadata of
    the group at ``path`` (v3: inline in its ``zarr.json``; v2: ``.zmetadata``); the group's
    metadata as it now is."""
    prefix = key_prefix(path)
    if isinstance(metadata, GroupMetadataV3):
        metadata = make_consolidated_v3(metadata, nodes)
        store.set_many({prefix + k: v for k, v in metadata.documents().items()})
    else:
        store.set(prefix + ZMETADATA, make_zmetadata(metadata, nodes))
    return metadata


class Group(Node[GroupMetadata]):
    """A Zarr group (v2 or v3).

    A group opened or created by the functions below is the root of a *hierarchy* that the
    groups and arrays opened through it share. ``consolidated``, when given, holds the
    metadata of every node below the group by store path, so opening children reads nothing
    more from the store; changes made through the hierarchy keep it current. ``close()`` (or
    the end of a ``with`` block) flushes the arrays opened through the hierarchy and, when
    anything changed through it, writes its consolidated metadata (unless
    ``write_consolidated`` is False)."""

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: GroupMetadataV2 | GroupMetadataV3,
        *,
        read_only: bool = False,
        consolidated: dict[str, NodeMetadata] | None = None,
        write_consolidated: bool = True,
        hierarchy: _Hierarchy | None = None,
    ) -> None:
        super().__init__(store, path, metadata, read_only=read_only)
        #: The hierarchy this group belongs to (internal: given to the children of a group).
        self._hierarchy = hierarchy or _Hierarchy(self, consolidated, write_consolidated)

    def __repr__(self) -> str:
        return f"<nczarr.Group {self.path or '/'!r} zarr_format={self.zarr_format}>"

    @property
    def uses_consolidated(self) -> bool:
        """Whether nodes are read from consolidated metadata rather than from the store."""
        return self._hierarchy.nodes is not None

    # -- children ------------------------------------------------------------------------
    def _metadata_of(self, path: str) -> NodeMetadata | None:
        view = self._hierarchy.nodes
        if view is not None:
            return view.get(path)
        return read_metadata(self.store, path, self.zarr_format)

    def _node(self, path: str, metadata: NodeMetadata | None) -> Group | Array:
        if metadata is None:
            if self._hierarchy.nodes is not None or not _has_descendant_node(self.store, path):
                raise NodeNotFoundError(f"no group or array at {path!r}")
            # An implicit group: no document of its own, but nodes below it.
            metadata = GroupMetadataV3() if self.zarr_format == 3 else GroupMetadataV2()
        if metadata.node_type == "array":
            return self._hierarchy.track(Array(self.store, path, metadata, read_only=self.read_only))
        return Group(self.store, path, metadata, read_only=self.read_only, hierarchy=self._hierarchy)

    def __getitem__(self, name: str) -> Group | Array:
        path = join_path(self.path, _normalize_path(name))
        return self._node(path, self._metadata_of(path))

    @overload
    def get(self, name: str) -> Group | Array | None: ...

    @overload
    def get(self, name: str, default: _Default) -> Group | Array | _Default: ...

    def get(self, name: str, default: object = None) -> object:
        try:
            return self[name]
        except NodeNotFoundError:
            return default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def _child_names(self) -> list[str]:
        view = self._hierarchy.nodes
        if view is not None:
            depth = self.path.count("/") + 1 if self.path else 0
            prefix = key_prefix(self.path)
            return sorted(p[len(prefix) :] for p in view if p.startswith(prefix) and p.count("/") == depth)
        _, prefixes = self.store.list_dir(key_prefix(self.path))
        # a listing naming "..", "." or "a/b" would lead a walk outside this group, or round it
        return [name for name in prefixes if is_node_name(name)]

    def _children(self) -> Iterator[tuple[str, NodeMetadata]]:
        """(path, metadata) of each child, sorted by name; groups implied by deeper nodes
        are included."""
        for name in self._child_names():
            path = join_path(self.path, name)
            metadata = self._metadata_of(path)
            if metadata is None:
                if self._hierarchy.nodes is not None or not _has_descendant_node(self.store, path):
                    continue  # e.g. a v3 array's chunk directory is not a child
                metadata = GroupMetadataV3() if self.zarr_format == 3 else GroupMetadataV2()
            yield path, metadata

    def members(self) -> dict[str, Group | Array]:
        """Children by name, sorted; groups implied by deeper nodes are included."""
        return {path.rsplit("/", 1)[-1]: self._node(path, metadata) for path, metadata in self._children()}

    def __iter__(self) -> Iterator[str]:
        return iter(self.members())

    def groups(self) -> dict[str, Group]:
        return {k: v for k, v in self.members().items() if isinstance(v, Group)}

    def arrays(self) -> dict[str, Array]:
        return {k: v for k, v in self.members().items() if isinstance(v, Array)}

    def walk(self) -> Iterator[Group | Array]:
        """Every node below this group, depth first, parents before children (with a stack,
        not recursion: a tree may be deeper than Python's recursion limit)."""
        if self._hierarchy.nodes is not None:  # one pass over the view, as descendants() does
            for path, metadata in self.descendants().items():
                yield self._node(join_path(self.path, path), metadata)
            return
        pending = [iter(self.members().values())]
        while pending:
            node = next(pending[-1], None)
            if node is None:
                pending.pop()
                continue
            yield node
            if isinstance(node, Group):
                pending.append(iter(node.members().values()))

    def descendants(self) -> dict[str, NodeMetadata]:
        """The metadata of every node below this group by path relative to it, depth first
        (the form consolidated metadata stores); read without opening the arrays."""
        out: dict[str, NodeMetadata] = {}
        prefix = key_prefix(self.path)
        view = self._hierarchy.nodes
        if view is not None:  # one pass over the view: asking it for each group's children costs n²
            groups = {self.path}
            for path in sorted((p for p in view if p.startswith(prefix)), key=lambda p: p.split("/")):
                if path.rpartition("/")[0] in groups:  # below a node of the view, as _children() sees it
                    out[path[len(prefix) :]] = metadata = view[path]
                    if metadata.node_type == "group":
                        groups.add(path)
            return out
        pending = [self._children()]
        while pending:
            child = next(pending[-1], None)
            if child is None:
                pending.pop()
                continue
            path, metadata = child
            out[path[len(prefix) :]] = metadata
            if metadata.node_type == "group":
                group = Group(self.store, path, metadata, read_only=True, hierarchy=self._hierarchy)
                pending.append(group._children())
        return out

    # -- creating and deleting ------------------------------------------------------------
    def _set_metadata(self, metadata: GroupMetadata) -> None:
        self._check_writable()
        self._hierarchy.change()
        # Consolidated metadata is written by consolidate() and close() only, never kept stale.
        Node._set_metadata(self, _without_copy(metadata))
        self._hierarchy.record(self.path, self.metadata)

    def _claim(self, name: str, overwrite: bool) -> str:
        """The path for a new child ``name`` (which may be ``a/b``: missing groups between are
        created); an existing node there is an error unless ``overwrite``."""
        parts = _normalize_path(name).split("/")
        if parts == [""]:
            raise MetadataError("a child needs a non-empty name")
        parent: Group = self
        for part in parts[:-1]:
            parent = parent.require_group(part)
        path = join_path(parent.path, parts[-1])
        if parent._metadata_of(path) is not None:
            if not overwrite:
                raise NodeExistsError(f"a node already exists at {path!r}")
            self._check_writable()
            self._hierarchy.forget(path)
            self.store.delete_prefix(key_prefix(path))
        return path

    def create_group(self, name: str, *, attributes: Mapping[str, JSON] | None = None, overwrite: bool = False) -> Group:
        self._check_writable()
        path = self._claim(name, overwrite)
        metadata = GroupMetadataV3(dict(attributes or {})) if self.zarr_format == 3 else GroupMetadataV2(dict(attributes or {}))
        group = Group(self.store, path, metadata, hierarchy=self._hierarchy)
        group._set_metadata(metadata)
        return group

    def require_group(self, name: str) -> Group:
        """The child group ``name``, created when missing."""
        node = self.get(name)
        if node is None:
            return self.create_group(name)
        if not isinstance(node, Group):
            raise NodeExistsError(f"{node.path!r} is an array, not a group")
        return node

    def create_array(
        self,
        name: str,
        *,
        shape: Sequence[int],
        dtype: DTypeSpec,
        overwrite: bool = False,
        cache_bytes: int | None = None,
        write_empty_chunks: bool = False,
        **metadata_options: Unpack[ArrayOptions],
    ) -> Array:
        """A new array; ``metadata_options`` are those of :func:`new_array_metadata`."""
        self._check_writable()
        metadata = new_array_metadata(zarr_format=self.zarr_format, shape=shape, dtype=dtype, **metadata_options)
        path = self._claim(name, overwrite)
        return _new_array(self.store, path, metadata, cache_bytes, write_empty_chunks, self._hierarchy)

    def delete(self, name: str) -> None:
        """Remove the child ``name`` and everything below it."""
        self._check_writable()
        node = self[name]
        self._hierarchy.forget(node.path)
        self.store.delete_prefix(key_prefix(node.path))

    __delitem__ = delete

    # -- consolidated metadata and closing -------------------------------------------------
    def consolidate(self) -> None:
        """Write the metadata of every node below this group into it (v3: inline in its
        ``zarr.json``, as zarr-python does; v2: ``.zmetadata``)."""
        self._check_writable()
        nodes = self._hierarchy.nodes_below(self)
        self.metadata = _write_copy(self.store, self.path, _without_copy(self.metadata), nodes)
        self._hierarchy.consolidated(self)

    def close(self) -> None:
        """Close the hierarchy this group belongs to: flush the arrays opened through it and,
        when anything changed through it, write its consolidated metadata."""
        self._hierarchy.close()

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _mode_flags(mode: str) -> tuple[bool, bool, bool]:
    """(read_only, must_not_exist, clear)."""
    flags = {"r": (True, False, False), "r+": (False, False, False), "a": (False, False, False),
             "w": (False, False, True), "w-": (False, True, False), "x": (False, True, False)}
    if mode not in flags:
        raise InvalidModeError(f"unknown mode {mode!r}; use one of {', '.join(flags)}")
    return flags[mode]


def open_node(
    store: Store,
    path: str = "",
    *,
    mode: str = "r",
    zarr_format: ZarrFormat | None = None,
    use_consolidated: bool | None = None,
    write_consolidated: bool = True,
) -> Group | Array:
    """The group or array at ``path``. The consolidated metadata of a group is used when
    present unless ``use_consolidated`` is False (True makes its absence an error). A group
    opened writable writes consolidated metadata when it is closed after changes, unless
    ``write_consolidated`` is False (see :class:`Group`)."""
    read_only, _, _ = _mode_flags(mode)
    path = _normalize_path(path)
    try:
        metadata = read_metadata(store, path, zarr_format)
    except MetadataError:
        metadata = None  # a root zarr.json that is no node: the entry point of the v3 draft?
        if not isinstance(draft_view(store), DraftStore):
            raise
    if metadata is None and zarr_format != 2 and isinstance(view := draft_view(store), DraftStore):
        store, metadata = view, read_metadata(view, path, 3)
    if isinstance(store, DraftStore):
        write_consolidated = False  # the draft layout has no consolidated metadata
    if metadata is None:
        if path and _has_descendant_node(store, path):
            metadata = GroupMetadataV3() if zarr_format != 2 else GroupMetadataV2()
        else:
            raise NodeNotFoundError(f"no group or array at {path or '/'!r} in {store!r}")
    if metadata.node_type == "array":
        array = Array(store, path, metadata, read_only=read_only)
        if path and not array.read_only:
            array.on_metadata_change = _dropping_store_root_copy(store, metadata.zarr_format)
        return array
    consolidated = _read_consolidated(store, path, metadata) if use_consolidated is not False else None
    if consolidated is None and use_consolidated:
        raise NodeNotFoundError(f"no consolidated metadata at {path or '/'!r} in {store!r}")
    return Group(
        store, path, metadata, read_only=read_only, consolidated=consolidated, write_consolidated=write_consolidated
    )


def _read_consolidated(
    store: Store, path: str, metadata: GroupMetadataV2 | GroupMetadataV3
) -> dict[str, NodeMetadata] | None:
    """The consolidated metadata of the group at ``path`` keyed by store path, or None."""
    prefix = key_prefix(path)
    if metadata.zarr_format == 3:
        nodes = metadata.consolidated
    else:
        found = store.get_many([prefix + ZMETADATA])
        nodes = consolidated_from_root({ZMETADATA: found[prefix + ZMETADATA]}, path) if found else None
    return None if nodes is None else {prefix + p: m for p, m in nodes.items()}


def open_group(store: Store, path: str = "", **options: Unpack[OpenOptions]) -> Group:
    node = open_node(store, path, **options)
    if not isinstance(node, Group):
        raise NodeNotFoundError(f"{path or '/'!r} is an array, not a group")
    return node


def open_array(store: Store, path: str = "", **options: Unpack[OpenOptions]) -> Array:
    node = open_node(store, path, **options)
    if not isinstance(node, Array):
        raise NodeNotFoundError(f"{path or '/'!r} is a group, not an array")
    return node


def create_group(
    store: Store,
    path: str = "",
    *,
    zarr_format: ZarrFormat | Literal["v3-draft"] = 3,
    attributes: Mapping[str, JSON] | None = None,
    overwrite: bool = False,
    write_consolidated: bool = True,
) -> Group:
    """A new group at ``path`` (the root by default); ``overwrite`` replaces what is there.
    Closing it writes consolidated metadata unless ``write_consolidated`` is False.
    ``zarr_format`` :data:`DRAFT_FORMAT` writes the v3 draft layout (no consolidated metadata)."""
    path = _normalize_path(path)
    store, zarr_format = _layout(store, zarr_format)
    if isinstance(store, DraftStore):
        write_consolidated = False
    if read_metadata(store, path) is not None:
        if not overwrite:
            raise NodeExistsError(f"a node already exists at {path or '/'!r} in {store!r}")
        store.delete_prefix(key_prefix(path))
    metadata = GroupMetadataV3(dict(attributes or {})) if zarr_format == 3 else GroupMetadataV2(dict(attributes or {}))
    group = Group(store, path, metadata, write_consolidated=write_consolidated)
    group._set_metadata(metadata)
    return group


def create_array(
    store: Store,
    path: str = "",
    *,
    shape: Sequence[int],
    dtype: DTypeSpec,
    zarr_format: ZarrFormat | Literal["v3-draft"] = 3,
    overwrite: bool = False,
    cache_bytes: int | None = None,
    write_empty_chunks: bool = False,
    **metadata_options: Unpack[ArrayOptions],
) -> Array:
    """A new array at ``path`` (``""``: the store holds just this array); groups on the way
    are created; ``metadata_options`` are those of :func:`new_array_metadata`."""
    path = _normalize_path(path)
    store, zarr_format = _layout(store, zarr_format)
    if path:
        root_metadata = read_metadata(store, "")
        if root_metadata is None:
            root = create_group(store, zarr_format=zarr_format)
        elif root_metadata.node_type == "group":
            root = Group(store, "", root_metadata)
        else:
            raise NodeExistsError(f"the root of {store!r} is an array")
        if root.zarr_format != zarr_format:
            raise MetadataError(f"cannot create a Zarr v{zarr_format} array in a Zarr v{root.zarr_format} hierarchy")
        return root.create_array(
            path,
            shape=shape,
            dtype=dtype,
            overwrite=overwrite,
            cache_bytes=cache_bytes,
            write_empty_chunks=write_empty_chunks,
            **metadata_options,
        )
    if read_metadata(store, "") is not None:
        if not overwrite:
            raise NodeExistsError(f"a node already exists at '/' in {store!r}")
        store.delete_prefix("")
    metadata = new_array_metadata(zarr_format=zarr_format, shape=shape, dtype=dtype, **metadata_options)
    return _new_array(store, "", metadata, cache_bytes, write_empty_chunks)


def _layout(store: Store, zarr_format: ZarrFormat | Literal["v3-draft"]) -> tuple[Store, ZarrFormat]:
    """The store to create nodes in and their Zarr format: a store in the v3 draft layout
    is seen as final v3 (see :mod:`nczarr.zarr.draft`)."""
    if zarr_format == DRAFT_FORMAT:
        return create_draft(store), 3
    view = draft_view(store)
    if isinstance(view, DraftStore) and zarr_format != 3:
        raise MetadataError(f"cannot create a Zarr v{zarr_format} node in the Zarr v3 draft hierarchy of {store!r}")
    return view, 3 if isinstance(view, DraftStore) else zarr_format


def _new_array(
    store: Store,
    path: str,
    metadata: ArrayMetadataV2 | ArrayMetadataV3,
    cache_bytes: int | None,
    write_empty_chunks: bool,
    hierarchy: _Hierarchy | None = None,
) -> Array:
    array = Array(
        store,
        path,
        metadata,
        write_empty_chunks=write_empty_chunks,
        cache_bytes=DEFAULT_CACHE_BYTES if cache_bytes is None else cache_bytes,
    )
    if hierarchy is not None:
        hierarchy.track(array)
    array._set_metadata(metadata)
    return array
