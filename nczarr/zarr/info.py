"""A tree view of a store: groups, arrays, shapes, types, chunking, codecs, sizes."""

from __future__ import annotations

import json
from typing import Any

from nczarr.store import open_store
from nczarr.zarr.array import Array
from nczarr.zarr.hierarchy import Group, open_node


def _codecs(array: Array) -> str:
    metadata: Any = array.metadata
    if metadata.zarr_format == 3:
        names = [c["name"] for c in metadata.codecs]
    else:
        names = [f["id"] for f in metadata.filters or ()] + ([metadata.compressor["id"]] if metadata.compressor else [])
    return ", ".join(names) or "none"


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _array_line(array: Array) -> str:
    shape = "x".join(map(str, array.shape)) or "scalar"
    chunks = "x".join(map(str, array.chunks)) or "-"
    dims = f" ({', '.join(str(d) for d in array.dimension_names)})" if array.dimension_names else ""
    return (
        f"{array.name}{dims}: {shape} {array.metadata.data_type}, chunks {chunks}, "
        f"codecs {_codecs(array)}, stored {_human(array.nbytes_stored())}"
    )


def _attributes_line(node: Group | Array, indent: str) -> list[str]:
    attrs = node.metadata.attributes
    if not attrs:
        return []
    text = json.dumps(attrs, ensure_ascii=False, default=str)
    if len(text) > 100:
        text = text[:97] + "..."
    return [f"{indent}  @ {text}"]


def describe(location: str) -> str:
    """The tree view of the store at ``location`` (a path, ``.zip`` file or URL)."""
    store = open_store(location, mode="r")
    try:
        root = open_node(store)
        lines = [f"{location} (Zarr v{root.zarr_format})"]
        if isinstance(root, Array):
            lines.append("  " + _array_line(root))
            return "\n".join(lines) + "\n"
        lines += _attributes_line(root, "")

        def visit(group: Group, depth: int) -> None:
            indent = "  " * depth
            for node in group.members().values():
                if isinstance(node, Group):
                    lines.append(f"{indent}{node.name}/")
                    lines.extend(_attributes_line(node, indent))
                    visit(node, depth + 1)
                else:
                    lines.append(indent + _array_line(node))
                    lines.extend(_attributes_line(node, indent))

        visit(root, 1)
        return "\n".join(lines) + "\n"
    finally:
        store.close()
