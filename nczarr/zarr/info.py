"""A tree view of a store: groups, arrays, shapes, types, chunking, codecs, sizes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from nczarr.store import open_store
from nczarr.store.base import Store
from nczarr.zarr.draft import DraftStore
from nczarr.zarr.hierarchy import Group, open_node
from nczarr.zarr.metadata import ArrayMetadata, NodeMetadata


def _codec_names(codecs: Any) -> list[str]:
    return [c["name"] for c in codecs]


def _chunking(metadata: ArrayMetadata) -> str:
    """``chunks 1x72x144, codecs bytes, gzip``; sharded arrays name their shards and the
    codecs inside them."""
    if metadata.zarr_format == 2:
        codecs_v2 = [*(metadata.filters or ()), *([metadata.compressor] if metadata.compressor else [])]
        names = [str(codec["id"]) for codec in codecs_v2]
        return f"chunks {_dims(metadata.chunk_shape, '-')}, codecs {', '.join(names) or 'none'}"
    codecs = metadata.codecs
    if len(codecs) == 1 and codecs[0]["name"] == "sharding_indexed":
        inner: Any = codecs[0]["configuration"]  # normalized when the array was opened
        return (
            f"shards {_dims(metadata.chunk_shape, '-')} of chunks {_dims(inner['chunk_shape'], '-')}, "
            f"codecs {', '.join(_codec_names(inner['codecs']))}"
        )
    return f"chunks {_dims(metadata.chunk_shape, '-')}, codecs {', '.join(_codec_names(codecs)) or 'none'}"


def _dims(shape: Iterable[int], empty: str) -> str:
    return "x".join(map(str, shape)) or empty


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _array_line(name: str, metadata: ArrayMetadata, stored: int) -> str:
    names = metadata.dimension_names
    dims = f" ({', '.join(str(d) for d in names)})" if names else ""
    return (
        f"{name}{dims}: {_dims(metadata.shape, 'scalar')} {metadata.data_type}, "
        f"{_chunking(metadata)}, stored {_human(stored)}"
    )


def _attributes_line(metadata: NodeMetadata, indent: str) -> list[str]:
    attrs = metadata.attributes
    if not attrs:
        return []
    text = json.dumps(attrs, ensure_ascii=False, default=str)
    if len(text) > 100:
        text = text[:97] + "..."
    return [f"{indent}  @ {text}"]


def _stored_bytes(store: Store, arrays: set[str]) -> dict[str, int]:
    """Bytes stored under each array path (chunks and metadata), from one listing."""
    sizes = dict.fromkeys(arrays, 0)
    for key in store.list():
        owner = key.rpartition("/")[0]
        while owner not in sizes and owner:
            owner = owner.rpartition("/")[0]
        if owner in sizes:
            sizes[owner] += store.getsize(key)
    return sizes


def _tree_lines(nodes: Mapping[str, NodeMetadata], sizes: Mapping[str, int]) -> list[str]:
    lines = []
    for path, metadata in nodes.items():
        depth = path.count("/") + 1
        indent, name = "  " * depth, path.rpartition("/")[2]
        if metadata.node_type == "group":
            lines.append(f"{indent}{name}/")
        else:
            lines.append(indent + _array_line(name, metadata, sizes[path]))
        lines.extend(_attributes_line(metadata, indent))
    return lines


def describe(location: str | Store) -> str:
    """The tree view of the store at ``location`` (a path, ``.zip`` file, URL or Store): each
    group and array below the root with its attributes; for arrays the dimension names,
    shape, data type, chunks (and shards), codecs and bytes stored; then the totals."""
    opened = store = open_store(location, mode="r")
    try:
        root = open_node(store)
        store = root.store  # a store in the v3 draft layout is read through its final v3 view
        consolidated = isinstance(root, Group) and root.uses_consolidated
        layout = "Zarr v3 draft (2019 core protocol)" if isinstance(store, DraftStore) else f"Zarr v{root.zarr_format}"
        lines = [f"{location} ({layout}{', consolidated metadata' if consolidated else ''})"]
        if not isinstance(root, Group):
            lines.append("  " + _array_line("/", root.metadata, _stored_bytes(store, {""})[""]))
            return "\n".join(lines) + "\n"
        nodes = root.descendants()
        arrays = {path for path, metadata in nodes.items() if metadata.node_type == "array"}
        sizes = _stored_bytes(store, arrays)
        lines += _attributes_line(root.metadata, "")
        lines += _tree_lines(nodes, sizes)
        groups = len(nodes) - len(arrays)
        lines.append(
            f"{groups} group{'s' * (groups != 1)}, {len(arrays)} array{'s' * (len(arrays) != 1)}, "
            f"{_human(sum(sizes.values()))} stored"
        )
        return "\n".join(lines) + "\n"
    finally:
        if opened is not location:
            opened.close()
