"""One interface for every on-disk convention: a netCDF model tree to and from a Zarr hierarchy.

A convention does two things: it reads a whole tree (and how each variable is stored) from a
store, and it computes every metadata document of a tree. Writing is then the same for all:
a :class:`~nczarr.formats.session.Session` computes the documents and stores those that
changed since it last wrote, so creating a dataset and applying changes to one (new or
renamed nodes, new or deleted attributes, a grown unlimited dimension) are one mechanism.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from nczarr.formats.dialect import RootDocuments
from nczarr.model import Dataset, Group, Variable, split_fqn
from nczarr.store.base import Store
from nczarr.values.storage import VariableStorage
from nczarr.zarr.metadata import ArrayMetadata


@dataclass
class StoredDataset:
    """What a convention reads: the tree, for each variable (by FQN) its storage and the
    metadata of the Zarr array that holds its data, and whether the store's root held
    consolidated metadata."""

    dataset: Dataset
    storage: dict[str, VariableStorage] = field(default_factory=dict)
    arrays: dict[str, ArrayMetadata] = field(default_factory=dict)
    consolidated: bool = False
    #: Arrays left out of the tree (a data type netCDF lacks), by store path: their documents
    #: are written back as read, so that other readers still find them.
    left_out: dict[str, ArrayMetadata] = field(default_factory=dict)


class Convention(ABC):
    """An on-disk convention, by the name users pass as ``format=``. ``consolidated``: whether
    sessions write consolidated metadata (v3 inline in the root ``zarr.json``, v2
    ``.zmetadata``) after changing a dataset."""

    #: The ``format=`` name: NCZARR, NCZARR_V2, ZARR or ZARR_V2.
    name: ClassVar[str]
    zarr_format: ClassVar[Literal[2, 3]]

    def __init__(self, *, consolidated: bool = True) -> None:
        self.consolidated = consolidated

    @classmethod
    @abstractmethod
    def recognises(cls, root_documents: Mapping[str, bytes]) -> bool:
        """Whether a store whose root has these documents (``zarr.json`` or ``.zgroup`` and
        ``.zattrs``, whichever exist) follows this convention."""

    @abstractmethod
    def problems(self, dataset: Dataset, only: Variable | None = None) -> list[str]:
        """What in ``dataset`` this convention cannot hold (empty when it can hold it all),
        each naming the node's FQN. Checked before anything is written. ``only``: check just
        this variable of the tree (when it is the one thing added since the last check)."""

    @abstractmethod
    def read(
        self, store: Store, *, use_consolidated: bool | None = None, root: RootDocuments | None = None
    ) -> StoredDataset:
        """The whole dataset in ``store``, its documents from the consolidated metadata at the
        root when there is one (``use_consolidated`` None), never (False), or necessarily
        (True: FormatError when there is none). ``root``: the root's documents, when they
        were read to detect the convention."""

    @abstractmethod
    def array_metadata(self, variable: Variable, storage: VariableStorage) -> ArrayMetadata:
        """The metadata of the array that will hold ``variable``'s data (its shape from its
        dimensions' current sizes)."""

    @abstractmethod
    def documents(self, stored: StoredDataset) -> dict[str, bytes]:
        """Every metadata document of the hierarchy by store key (groups and arrays)."""

    def storage_view(self, store: Store) -> Store:
        """The store a session works in: ``store`` itself, or a view of it with final Zarr
        keys for a convention whose layout differs (the v3 draft layout)."""
        return store


def checked_scope(dataset: Dataset, only: Variable | None) -> Iterator[tuple[Group, list[Variable], bool]]:
    """What a ``problems`` check walks: each group with the variables to check in it, and
    whether the group's own nodes (types, attributes, subgroups) are checked too."""
    if only is None:
        for group in dataset.walk():
            yield group, group.variables, True
    else:
        assert only.group is not None
        yield only.group, [only], False


def path_of(fqn: str) -> str:
    """The store path of the node with this FQN (names are stored unescaped)."""
    return "/".join(split_fqn(fqn))
