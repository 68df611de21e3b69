"""``Dimension``: a handle on a dimension of a group, as netCDF4-python has it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nczarr.model import Dimension as ModelDimension

if TYPE_CHECKING:
    from nczarr.api.dataset import Dataset


class Dimension:
    """A named dimension; an unlimited one reports its current length."""

    __slots__ = ("_node", "_grp")

    def __init__(self, grp: Dataset, name: str, size: int | None = None, **kwargs: Any) -> None:
        """Create a dimension in ``grp`` (as ``grp.createDimension(name, size)``)."""
        grp._add_dimension(self, name, size)

    @classmethod
    def _for(cls, grp: Dataset, node: ModelDimension) -> Dimension:
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

    def group(self) -> Dataset:
        return self._grp

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("name", "size"):
            raise AttributeError(f"the {name} of a dimension cannot be set (use renameDimension)")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        kind = " (unlimited)" if self.isunlimited() else ""
        return f"\"<class 'netCDF4.Dimension'>\"{kind}: name = '{self.name}', size = {self.size}"

    def __reduce__(self) -> Any:
        raise NotImplementedError("Dimension is not picklable")
