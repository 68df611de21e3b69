"""netCDF types as netCDF4-python shows them: numpy dtypes for the atomic types, and handles
on user-defined types (:class:`CompoundType`, :class:`VLType`, :class:`EnumType`)."""

from __future__ import annotations

from typing import NoReturn, Protocol

import numpy as np

from nczarr.errors import DataTypeError, NameNotFoundError
from nczarr.model import AtomicType
from nczarr.model import Group as ModelGroup
from nczarr.model import nodes as model_nodes
from nczarr.values.types import NUMPY_CODE, atomic_type_of, compound_dtype, dtype_of, element_dtype

#: The dtype codes netCDF4 accepts for primitive variables and attributes (its error lists them).
PRIMITIVE_CODES = ("S1", *NUMPY_CODE.values())


def is_string_datatype(datatype: object) -> bool:
    """Whether netCDF4 reads ``datatype`` as the variable-length string type: ``str``, or any
    numpy ``U`` or ``S<n>`` (n > 1) dtype."""
    if datatype is str:
        return True
    if isinstance(datatype, (VLType, CompoundType, EnumType)):
        return False
    try:
        dtype = np.dtype(datatype)  # type: ignore[call-overload]
    except TypeError:
        return False
    return dtype.kind == "U" or (dtype.kind == "S" and dtype.itemsize > 1)


def atomic_of(datatype: object, where: str) -> AtomicType:
    """The atomic type named by a numpy dtype-like (``'f4'``, ``'c'``, ``np.int16``, ``float``);
    netCDF4's TypeError for the others."""
    if datatype is str or is_string_datatype(datatype):
        return AtomicType.STRING
    try:
        dtype = np.dtype("S1" if datatype == "c" else datatype)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        dtype = None
    found = None if dtype is None else atomic_type_of(dtype)
    if found is None:
        shown = getattr(dtype, "name", datatype)
        raise DataTypeError(
            f"Illegal primitive data type, must be one of {_codes()}, got {shown} {where}".rstrip()
        )
    return found


class TypeGroup(Protocol):
    """What a user type sees of its group (a ``Dataset`` or ``Group``)."""

    @property
    def _node(self) -> ModelGroup: ...

    def _define_type(self, node: model_nodes.UserType, handle: _UserType) -> None: ...


def _codes() -> str:
    return f"dict_keys({list(PRIMITIVE_CODES)!r})"


class _UserType:
    """A handle on a user-defined type of a group."""

    _node: model_nodes.UserType
    _group: TypeGroup

    @property
    def name(self) -> str:
        return self._node.name

    def __reduce__(self) -> NoReturn:
        raise NotImplementedError(f"{type(self).__name__} is not picklable")


class CompoundType(_UserType):
    """A compound (struct) type: ``dtype`` is the C-aligned numpy dtype netCDF4 shows, with
    char-array fields as ``('S1', n)``; ``dtype_view`` shows them as ``S<n>`` strings."""

    _node: model_nodes.CompoundType

    def __init__(self, grp: TypeGroup, dt: object, dtype_name: str, **kwargs: object) -> None:
        dtype = np.dtype(dt)  # type: ignore[call-overload]
        if dtype.fields is None:
            raise DataTypeError(f"compound type {dtype_name!r} needs a structured numpy dtype, got {dtype}")
        node = model_nodes.CompoundType(dtype_name)
        for field_name, (field_dtype, *_rest) in dtype.fields.items():
            base, shape = field_dtype.base, field_dtype.shape
            if base.kind == "S" and base.itemsize > 1:
                shape, base = (*shape, base.itemsize), np.dtype("S1")
            if base.fields is not None:
                member: AtomicType | str = _registered_compound(grp, base, field_name)
            else:
                member = atomic_of(base, f"(compound field {field_name!r})")
                if member is AtomicType.STRING:
                    raise DataTypeError(f"compound field {field_name!r}: strings must be fixed-length 'S<n>'")
            node.add_field(field_name, member, shape)
        grp._define_type(node, self)

    @property
    def dtype(self) -> np.dtype:
        return compound_dtype(self._node)

    @property
    def dtype_view(self) -> np.dtype:
        return compound_dtype(self._node, view=True)

    def __repr__(self) -> str:
        return f"<class 'netCDF4.CompoundType'>: name = '{self.name}', numpy dtype = {self.dtype}"


class VLType(_UserType):
    """A variable-length sequence type of a primitive base type (no node: netCDF4's
    string type)."""

    _node: model_nodes.VlenType | None  # type: ignore[assignment]

    def __init__(self, grp: TypeGroup, dt: object, dtype_name: str, **kwargs: object) -> None:
        try:
            base = atomic_of(dt, "")
        except DataTypeError:
            raise NameNotFoundError(f"unsupported datatype specified for VLEN: {dt!r}") from None
        node = model_nodes.VlenType(dtype_name, base)
        grp._define_type(node, self)

    @property
    def name(self) -> str | None:  # type: ignore[override]  # netCDF4's string type has none
        return None if self._node is None else self._node.name

    @property
    def dtype(self) -> np.dtype | type[str]:
        if self._node is None:
            return str
        return element_dtype(self._node, packed=False)

    @property
    def stored_dtype(self) -> np.dtype:
        """The layout of the elements as stored: little-endian, no padding."""
        assert self._node is not None, "the string type has no stored elements"
        return element_dtype(self._node, packed=True)

    def __repr__(self) -> str:
        if self._node is None:
            return "\"<class 'netCDF4.VLType'>\": string type"
        return f"\"<class 'netCDF4.VLType'>\": name = '{self.name}', numpy dtype = {self.dtype}"


def string_vltype(grp: TypeGroup) -> VLType:
    """The handle netCDF4 gives as ``datatype`` of a string variable: a VLType of ``str``."""
    handle = VLType.__new__(VLType)
    handle._node, handle._group = None, grp
    return handle


class EnumType(_UserType):
    """Named values of an integer base type."""

    _node: model_nodes.EnumType

    def __init__(self, grp: TypeGroup, dt: object, dtype_name: str, enum_dict: dict[str, int], **kwargs: object) -> None:
        try:
            base = atomic_of(dt, "")
        except DataTypeError:
            base = None
        if base is None or not base.is_integer:
            raise NameNotFoundError("unsupported datatype specified for ENUM (must be integer)")
        node = model_nodes.EnumType(dtype_name, base, [])
        for key, value in enum_dict.items():
            node.members.append(model_nodes.EnumMember(key, int(value)))
        grp._define_type(node, self)

    @property
    def dtype(self) -> np.dtype:
        return dtype_of(self._node.base)  # type: ignore[arg-type]

    @property
    def enum_dict(self) -> dict[str, int]:
        return {m.name: m.value for m in self._node.members}

    def __repr__(self) -> str:
        return (
            f"\"<class 'netCDF4.EnumType'>\": name = '{self.name}', numpy dtype = {self.dtype}, "
            f"fields/values ={self.enum_dict}"
        )


def bind(handle: _UserType, grp: TypeGroup, node: model_nodes.UserType) -> None:
    """Make ``handle`` the handle of ``node`` in ``grp``."""
    handle._node = node
    handle._group = grp


def handle_for(grp: TypeGroup, node: model_nodes.UserType) -> _UserType:
    """A handle on a type read from a store."""
    classes: dict[type, type[_UserType]] = {
        model_nodes.CompoundType: CompoundType,
        model_nodes.VlenType: VLType,
        model_nodes.EnumType: EnumType,
    }
    # opaque: netCDF4-python has no handle class; show it as a compound-like blob
    cls = classes.get(type(node), _OpaqueType)
    handle = cls.__new__(cls)
    bind(handle, grp, node)
    return handle


class _OpaqueType(_UserType):
    _node: model_nodes.OpaqueType

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(f"V{self._node.size}")


def _registered_compound(grp: TypeGroup, dtype: np.dtype, field_name: str) -> str:
    """The FQN of a compound type already defined in reach of ``grp`` whose dtype is ``dtype``
    (netCDF4 needs nested compounds registered first)."""
    group: ModelGroup | None = grp._node
    while group is not None:
        for node in group.types:
            if isinstance(node, model_nodes.CompoundType) and _same_fields(
                compound_dtype(node, view=True), dtype
            ):
                return node.fqn
        group = group.parent  # type: ignore[assignment]
    raise DataTypeError(f"compound field {field_name!r}: nested compound types must be created first")


def _same_fields(a: np.dtype, b: np.dtype) -> bool:
    return [(n, a.fields[n][0].base.str, a.fields[n][0].shape) for n in a.names or ()] == [  # type: ignore[index]
        (n, b.fields[n][0].base.str, b.fields[n][0].shape) for n in b.names or ()  # type: ignore[index]
    ]
