"""What groups and arrays share: a store, a path, metadata documents, and attributes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Generic, Literal, Protocol, Self, TypeVar

from nczarr.errors import MetadataError, NodeNotFoundError, ReadOnlyError
from nczarr.store.base import Store
from nczarr.zarr.jsonvalue import JSON, JSONObject

MAX_NAME_LENGTH = 255


def check_node_name(name: str) -> str:
    """Return ``name`` if it may name a group or array, else raise MetadataError naming it."""
    if not isinstance(name, str) or name == "":
        raise MetadataError(f"node name must be a non-empty string, not {name!r}")
    if "/" in name:
        raise MetadataError(f"node name {name!r} must not contain '/'")
    if name.strip(".") == "":
        raise MetadataError(f"node name {name!r} must not consist only of periods")
    if len(name) > MAX_NAME_LENGTH:
        raise MetadataError(f"node name {name[:20]!r}... is longer than {MAX_NAME_LENGTH} characters")
    return name


def is_node_name(name: object) -> bool:
    """Whether ``name`` may name a group or array (see :func:`check_node_name`)."""
    if not isinstance(name, str):
        return False
    try:
        check_node_name(name)
    except MetadataError:
        return False
    return True


def join_path(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def key_prefix(path: str) -> str:
    """The store prefix under which the node at ``path`` keeps its keys."""
    return f"{path}/" if path else ""


class NodeDocuments(Protocol):
    """What a node needs of its metadata (``nczarr.zarr.metadata.NodeMetadata``)."""

    @property
    def zarr_format(self) -> Literal[2, 3]: ...

    @property
    def attributes(self) -> JSONObject: ...

    def with_attributes(self, attrs: Mapping[str, JSON]) -> Self: ...

    def documents(self) -> dict[str, bytes]: ...

    def document_keys(self) -> tuple[str, ...]: ...


class AttributeOwner(Protocol):
    """What :class:`Attributes` reads and writes through (a :class:`Node`)."""

    @property
    def path(self) -> str: ...

    @property
    def metadata(self) -> NodeDocuments: ...

    def update_attributes(self, new: Mapping[str, JSON]) -> None: ...

    def replace_attributes(self, attrs: Mapping[str, JSON]) -> None: ...


_Metadata = TypeVar("_Metadata", bound=NodeDocuments)


class Node(Generic[_Metadata]):
    """A group or array at ``path`` (``""`` is the root) in ``store``."""

    def __init__(self, store: Store, path: str, metadata: _Metadata, *, read_only: bool = False) -> None:
        self.store = store
        self.path = path
        self.metadata = metadata
        self.read_only = read_only or store.read_only
        #: Called as ``on_metadata_change(path, metadata)`` after each metadata write; the
        #: hierarchy a node was opened from sets it, to keep its consolidated metadata current.
        self.on_metadata_change: Callable[[str, _Metadata], None] | None = None

    @property
    def name(self) -> str:
        """The last segment of the path (``"/"`` for the root)."""
        return self.path.rsplit("/", 1)[-1] if self.path else "/"

    @property
    def zarr_format(self) -> Literal[2, 3]:
        return self.metadata.zarr_format

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"{type(self).__name__.lower()} {self.path or '/'!r} is open read-only")

    def _set_metadata(self, metadata: _Metadata) -> None:
        """Replace the metadata and write its documents (removing stale ones, e.g. an emptied
        v2 ``.zattrs``)."""
        self._check_writable()
        prefix = key_prefix(self.path)
        documents = metadata.documents()
        self.store.set_many({prefix + k: v for k, v in documents.items()})
        stale = [prefix + k for k in metadata.document_keys() if k not in documents]
        if stale:
            self.store.delete_many(stale)
        self.metadata = metadata
        if self.on_metadata_change is not None:
            self.on_metadata_change(self.path, metadata)

    def update_attributes(self, new: Mapping[str, JSON]) -> None:
        """Merge ``new`` into the attributes with one metadata write."""
        self.replace_attributes({**self.metadata.attributes, **new})

    def replace_attributes(self, attrs: Mapping[str, JSON]) -> None:
        """Make ``attrs`` the attributes, with one metadata write."""
        self._set_metadata(self.metadata.with_attributes(attrs))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.store is self.store and other.path == self.path

    def __hash__(self) -> int:
        return hash((id(self.store), self.path))


class Attributes(MutableMapping[str, JSON]):
    """The attributes of a node; every change is written to the store at once."""

    def __init__(self, node: AttributeOwner) -> None:
        self._node = node

    def _current(self) -> JSONObject:
        return self._node.metadata.attributes

    def __getitem__(self, key: str) -> JSON:
        try:
            return self._current()[key]
        except KeyError:
            raise NodeNotFoundError(f"no attribute {key!r} on {self._node.path or '/'!r}") from None

    def __setitem__(self, key: str, value: JSON) -> None:
        self._node.update_attributes({key: value})

    def __delitem__(self, key: str) -> None:
        current = dict(self._current())
        if key not in current:
            raise NodeNotFoundError(f"no attribute {key!r} on {self._node.path or '/'!r}")
        del current[key]
        self._node.replace_attributes(current)

    def update(  # type: ignore[override]  # one write, not one per key
        self, other: Mapping[str, JSON] | Iterable[tuple[str, JSON]] = (), /, **kwargs: JSON
    ) -> None:
        self._node.update_attributes({**dict(other), **kwargs})

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._current()))

    def __len__(self) -> int:
        return len(self._current())

    def asdict(self) -> JSONObject:
        return dict(self._current())

    def __repr__(self) -> str:
        return f"Attributes({self._current()!r})"
