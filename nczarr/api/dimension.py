"""``Dimension``: a handle on a dimension of a group, as netCDF4-python has it."""

from __future__ import annotations

from typing import NoReturn, Protocol

from nczarr.model import Dimension as ModelDimension


class DimensionGroup(Protocol):
    """What a dimension sees of its group (a ``Dataset`` or ``Group``)."""

    @property
    def path(self) -> str: ...

    def _add_dimension(self, handle: Dimension, name: str, size: int | None) -> None: ...


class Dimension:
    """A named dimension; an unlimited one reports its current length."""

    __slots__ = ("_grp", "_node")
    _grp: DimensionGroup
    _node: ModelDimension

    def __init__(self, grp: DimensionGroup, name: str, size: int | None = None, **kwargs: object) -> None:
        """Create a dimension in ``grp`` (as ``grp.createDimension(name, size)``)."""
        grp._add_dimension(self, name, size)

    @classmethod
    def _for(cls, grp: DimensionGroup, node: ModelDimension) -> Dimension:
        handle = cls.__new__(cls)
        handle._grp, handle._node = grp, node
        return handle

    @property
    def name(self) -> str:
        return self._node.name

    @property
    def size(self) -> int:
        return self._node.size

    def __len__(self) -> int:
        return self._node.size

    def isunlimited(self) -> bool:
        return self._node.unlimited

    def group(self) -> DimensionGroup:
        return self._grp

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("name", "size"):
            raise AttributeError(f"the {name} of a dimension cannot be set (use renameDimension)")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        kind = " (unlimited)" if self.isunlimited() else ""
        return f"\"<class 'netCDF4.Dimension'>\"{kind}: name = '{self.name}', size = {self.size}"

    def __reduce__(self) -> NoReturn:
        raise NotImplementedError("Dimension is not picklable")
