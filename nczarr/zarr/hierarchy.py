"""Groups and the hierarchy: create and open nodes by path, list children (groups implied by
descendants included), delete subtrees, consolidate metadata."""

from __future__ import annotations

import math
from dataclasses import replace
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from nczarr.errors import InvalidModeError, MetadataError, NodeExistsError, NodeNotFoundError
from nczarr.store.base import Store
from nczarr.zarr.array import Array, build_pipeline
from nczarr.zarr.dtypes import DataType
from nczarr.zarr.metadata import (
    ZARR_JSON,
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ZMETADATA,
    ArrayMetadataV2,
    ArrayMetadataV3,
    GroupMetadataV2,
    GroupMetadataV3,
    NodeMetadata,
    consolidated_from_root,
    make_consolidated_v3,
    make_zmetadata,
    parse_node,
)
from nczarr.zarr.node import Node, check_node_name, join_path, key_prefix

ZarrFormat = Literal[2, 3]
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


def _default_serializer(data_type: DataType) -> dict[str, Any]:
    if data_type.kind == "string":
        return {"name": "vlen-utf8"}
    if data_type.kind == "bytes":
        return {"name": "vlen-bytes"}
    if data_type.dtype.itemsize == 1 or data_type.kind in ("fixed_bytes", "raw"):
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": "little"}}


def new_array_metadata(
    *,
    zarr_format: ZarrFormat,
    shape: Sequence[int],
    dtype: Any,
    chunks: Sequence[int] | None = None,
    fill_value: Any = None,
    codecs: Sequence[Mapping[str, Any]] | None = None,
    filters: Sequence[Mapping[str, Any]] | None = None,
    compressors: Sequence[Mapping[str, Any]] | None = None,
    compressor: Mapping[str, Any] | None = None,
    order: Literal["C", "F"] = "C",
    dimension_names: Sequence[str | None] | None = None,
    attributes: Mapping[str, Any] | None = None,
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
    fill = data_type.default_fill() if fill_value is None else data_type.cast_fill(fill_value)
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
        head: list[dict[str, Any]] = [dict(f) for f in filters or []]
        if order == "F" and len(shape) > 1:
            head.insert(0, {"name": "transpose", "configuration": {"order": list(range(len(shape)))[::-1]}})
        codecs = [*head, _default_serializer(data_type), *(dict(c) for c in compressors or [])]
    elif filters or compressors or order == "F":
        raise MetadataError("give either a whole 'codecs' chain or filters/compressors/order, not both")
    grid = chunks
    if shards is not None:
        grid = tuple(int(s) for s in shards)
        if any(s % c for s, c in zip(grid, chunks)) or len(grid) != len(chunks):
            raise MetadataError(f"shard shape {grid} must be a multiple of the chunk shape {chunks}")
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": list(chunks), "codecs": list(codecs)}}]
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
    if metadata.zarr_format == 3:
        return replace(metadata, codecs=tuple(normalized))
    filters, compressor = normalized
    return replace(metadata, filters=tuple(filters) if filters else None, compressor=compressor)


class Group(Node):
    """A Zarr group (v2 or v3). ``consolidated``, when given, holds the metadata of every
    node below the root by path, so opening children reads nothing more from the store."""

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: GroupMetadataV2 | GroupMetadataV3,
        *,
        read_only: bool = False,
        consolidated: dict[str, NodeMetadata] | None = None,
    ) -> None:
        super().__init__(store, path, metadata, read_only=read_only)
        self._consolidated = consolidated

    def __repr__(self) -> str:
        return f"<nczarr.Group {self.path or '/'!r} zarr_format={self.zarr_format}>"

    # -- children ------------------------------------------------------------------------
    def _metadata_of(self, path: str) -> NodeMetadata | None:
        if self._consolidated is not None:
            return self._consolidated.get(path)
        return read_metadata(self.store, path, self.zarr_format)

    def _node(self, path: str, metadata: NodeMetadata | None) -> Group | Array:
        if metadata is None:
            if self._consolidated is not None or not _has_descendant_node(self.store, path):
                raise NodeNotFoundError(f"no group or array at {path!r}")
            # An implicit group: no document of its own, but nodes below it.
            metadata = GroupMetadataV3() if self.zarr_format == 3 else GroupMetadataV2()
        if metadata.node_type == "array":
            return Array(self.store, path, metadata, read_only=self.read_only)
        return Group(self.store, path, metadata, read_only=self.read_only, consolidated=self._consolidated)

    def __getitem__(self, name: str) -> Group | Array:
        path = join_path(self.path, _normalize_path(name))
        return self._node(path, self._metadata_of(path))

    def get(self, name: str, default: Any = None) -> Group | Array | Any:
        try:
            return self[name]
        except NodeNotFoundError:
            return default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def _child_names(self) -> list[str]:
        if self._consolidated is not None:
            depth = self.path.count("/") + 1 if self.path else 0
            prefix = key_prefix(self.path)
            return sorted(
                p[len(prefix) :] for p in self._consolidated if p.startswith(prefix) and p.count("/") == depth
            )
        _, prefixes = self.store.list_dir(key_prefix(self.path))
        return prefixes

    def members(self) -> dict[str, Group | Array]:
        """Children by name, sorted; groups implied by deeper nodes are included."""
        out: dict[str, Group | Array] = {}
        for name in self._child_names():
            path = join_path(self.path, name)
            metadata = self._metadata_of(path)
            if metadata is None and (self._consolidated is not None or not _has_descendant_node(self.store, path)):
                continue  # e.g. a v3 array's chunk directory is not a child
            out[name] = self._node(path, metadata)
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self.members())

    def groups(self) -> dict[str, Group]:
        return {k: v for k, v in self.members().items() if isinstance(v, Group)}

    def arrays(self) -> dict[str, Array]:
        return {k: v for k, v in self.members().items() if isinstance(v, Array)}

    def walk(self) -> Iterator[Group | Array]:
        """Every node below this group, depth first, parents before children."""
        for node in self.members().values():
            yield node
            if isinstance(node, Group):
                yield from node.walk()

    # -- creating and deleting ------------------------------------------------------------
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
            self._forget(path)
            self.store.delete_prefix(key_prefix(path))
        return path

    def _record(self, path: str, metadata: NodeMetadata) -> None:
        if self._consolidated is not None:
            self._consolidated[path] = metadata

    def _forget(self, path: str) -> None:
        if self._consolidated is not None:
            for p in [p for p in self._consolidated if p == path or p.startswith(path + "/")]:
                del self._consolidated[p]

    def create_group(self, name: str, *, attributes: Mapping[str, Any] | None = None, overwrite: bool = False) -> Group:
        self._check_writable()
        path = self._claim(name, overwrite)
        metadata = GroupMetadataV3(dict(attributes or {})) if self.zarr_format == 3 else GroupMetadataV2(dict(attributes or {}))
        group = Group(self.store, path, metadata, consolidated=self._consolidated)
        group._set_metadata(metadata)
        self._record(path, metadata)
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
        dtype: Any,
        overwrite: bool = False,
        cache_bytes: int | None = None,
        write_empty_chunks: bool = False,
        **metadata_options: Any,
    ) -> Array:
        """A new array; ``metadata_options`` are those of :func:`new_array_metadata`."""
        self._check_writable()
        metadata = new_array_metadata(zarr_format=self.zarr_format, shape=shape, dtype=dtype, **metadata_options)
        path = self._claim(name, overwrite)
        array = _new_array(self.store, path, metadata, cache_bytes, write_empty_chunks)
        self._record(path, metadata)
        return array

    def delete(self, name: str) -> None:
        """Remove the child ``name`` and everything below it."""
        self._check_writable()
        node = self[name]
        self._forget(node.path)
        self.store.delete_prefix(key_prefix(node.path))

    __delitem__ = delete

    # -- consolidated metadata -------------------------------------------------------------
    def consolidate(self) -> None:
        """Write the metadata of every node below this group into it (v3: inline in its
        ``zarr.json``, as zarr-python does; v2: ``.zmetadata``)."""
        self._check_writable()
        plain = Group(self.store, self.path, self.metadata, read_only=self.read_only)
        prefix = key_prefix(self.path)
        nodes = {node.path[len(prefix) :]: node.metadata for node in plain.walk()}
        if self.zarr_format == 3:
            self._set_metadata(make_consolidated_v3(self.metadata, nodes))
        else:
            self.store.set(prefix + ZMETADATA, make_zmetadata(self.metadata, nodes))


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
) -> Group | Array:
    """The group or array at ``path``. Consolidated metadata of a root group is used when
    present unless ``use_consolidated`` is False (True makes its absence an error)."""
    read_only, _, _ = _mode_flags(mode)
    path = _normalize_path(path)
    metadata = read_metadata(store, path, zarr_format)
    if metadata is None:
        if path and _has_descendant_node(store, path):
            metadata = GroupMetadataV3() if zarr_format != 2 else GroupMetadataV2()
        else:
            raise NodeNotFoundError(f"no group or array at {path or '/'!r} in {store!r}")
    if metadata.node_type == "array":
        return Array(store, path, metadata, read_only=read_only)
    consolidated = _read_consolidated(store, path, metadata) if use_consolidated is not False else None
    if consolidated is None and use_consolidated:
        raise NodeNotFoundError(f"no consolidated metadata at {path or '/'!r} in {store!r}")
    return Group(store, path, metadata, read_only=read_only, consolidated=consolidated)


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


def open_group(store: Store, path: str = "", **options: Any) -> Group:
    node = open_node(store, path, **options)
    if not isinstance(node, Group):
        raise NodeNotFoundError(f"{path or '/'!r} is an array, not a group")
    return node


def open_array(store: Store, path: str = "", **options: Any) -> Array:
    node = open_node(store, path, **options)
    if not isinstance(node, Array):
        raise NodeNotFoundError(f"{path or '/'!r} is a group, not an array")
    return node


def create_group(
    store: Store,
    path: str = "",
    *,
    zarr_format: ZarrFormat = 3,
    attributes: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> Group:
    """A new group at ``path`` (the root by default); ``overwrite`` replaces what is there."""
    path = _normalize_path(path)
    if read_metadata(store, path) is not None:
        if not overwrite:
            raise NodeExistsError(f"a node already exists at {path or '/'!r} in {store!r}")
        store.delete_prefix(key_prefix(path))
    metadata = GroupMetadataV3(dict(attributes or {})) if zarr_format == 3 else GroupMetadataV2(dict(attributes or {}))
    group = Group(store, path, metadata)
    group._set_metadata(metadata)
    return group


def create_array(
    store: Store,
    path: str = "",
    *,
    zarr_format: ZarrFormat = 3,
    overwrite: bool = False,
    cache_bytes: int | None = None,
    write_empty_chunks: bool = False,
    **metadata_options: Any,
) -> Array:
    """A new array at ``path`` (``""``: the store holds just this array); groups on the way
    are created; ``metadata_options`` are those of :func:`new_array_metadata`."""
    path = _normalize_path(path)
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
            path, overwrite=overwrite, cache_bytes=cache_bytes, write_empty_chunks=write_empty_chunks, **metadata_options
        )
    if read_metadata(store, "") is not None:
        if not overwrite:
            raise NodeExistsError(f"a node already exists at '/' in {store!r}")
        store.delete_prefix("")
    metadata = new_array_metadata(zarr_format=zarr_format, **metadata_options)
    return _new_array(store, "", metadata, cache_bytes, write_empty_chunks)


def _new_array(
    store: Store, path: str, metadata: ArrayMetadataV2 | ArrayMetadataV3, cache_bytes: int | None, write_empty_chunks: bool
) -> Array:
    options = {} if cache_bytes is None else {"cache_bytes": cache_bytes}
    array = Array(store, path, metadata, write_empty_chunks=write_empty_chunks, **options)
    array._set_metadata(metadata)
    return array
