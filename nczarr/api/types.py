"""netCDF types as netCDF4-python shows them: numpy dtypes for the atomic types, and handles
on user-defined types (:class:`CompoundType`, :class:`VLType`, :class:`EnumType`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from nczarr.errors import ArgumentError, DataTypeError, NameNotFoundError
from nczarr.formats.common import atomic_type_of, numpy_dtype
from nczarr.model import AtomicType, resolve_type
from nczarr.model import Group as ModelGroup
from nczarr.model import nodes as model_nodes

if TYPE_CHECKING:
    from nczarr.api.dataset import Group

#: The dtype codes netCDF4 accepts for primitive variables and attributes (its error lists them).
PRIMITIVE_CODES = ("S1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8")


def dtype_of(type: AtomicType) -> np.dtype:
    """The native numpy dtype of an atomic type (char: ``S1``); not for string."""
    return numpy_dtype(type).newbyteorder("=") if type is not AtomicType.CHAR else np.dtype("S1")


def is_string_datatype(datatype: Any) -> bool:
    """Whether netCDF4 reads ``datatype`` as the variable-length string type: ``str``, or any
    numpy ``U`` or ``S<n>`` (n > 1) dtype."""
    if datatype is str:
        return True
    if isinstance(datatype, (VLType, CompoundType, EnumType)):
        return False
    try:
        dtype = np.dtype(datatype)
    except TypeError:
        return False
    return dtype.kind == "U" or (dtype.kind == "S" and dtype.itemsize > 1)


def atomic_of(datatype: Any, where: str) -> AtomicType:
    """The atomic type named by a numpy dtype-like (``'f4'``, ``'c'``, ``np.int16``, ``float``);
    netCDF4's TypeError for the others."""
    if datatype is str or is_string_datatype(datatype):
        return AtomicType.STRING
    try:
        dtype = np.dtype("S1" if datatype == "c" else datatype)
    except (TypeError, ValueError):
        dtype = None
    found = None if dtype is None else atomic_type_of(dtype)
    if found is None:
        shown = getattr(dtype, "name", datatype)
        raise DataTypeError(
            f"Illegal primitive data type, must be one of {_codes()}, got {shown} {where}".rstrip()
        )
    return found


def _codes() -> str:
    return f"dict_keys({list(PRIMITIVE_CODES)!r})"


class _UserType:
    """A handle on a user-defined type of a group."""

    _node: model_nodes.UserType
    _group: Group

    @property
    def name(self) -> str:
        return self._node.name

    def __reduce__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} is not picklable")


class CompoundType(_UserType):
    """A compound (struct) type: ``dtype`` is the C-aligned numpy dtype netCDF4 shows, with
    char-array fields as ``('S1', n)``; ``dtype_view`` shows them as ``S<n>`` strings."""

    def __init__(self, grp: Group, dt: Any, dtype_name: str, **kwargs: Any) -> None:
        dtype = np.dtype(dt)
        if dtype.fields is None:
            raise DataTypeError(f"compound type {dtype_name!r} needs a structured numpy dtype, got {dtype}")
        node = model_nodes.CompoundType(dtype_name)
        for field_name, (field_dtype, *_rest) in dtype.fields.items():
            base, shape = field_dtype.base, field_dtype.shape
            if base.kind == "S" and base.itemsize > 1:
                shape, base = (*shape, base.itemsize), np.dtype("S1")
            if base.fields is not None:
                member: Any = _registered_compound(grp, base, field_name)
            else:
                member = atomic_of(base, f"(compound field {field_name!r})")
                if member is AtomicType.STRING:
                    raise DataTypeError(f"compound field {field_name!r}: strings must be fixed-length 'S<n>'")
            node.add_field(field_name, member, shape)
        grp._define_type(node, self)

    @property
    def dtype(self) -> np.dtype:
        return compound_dtype(self._group, self._node, view=False)

    @property
    def dtype_view(self) -> np.dtype:
        return compound_dtype(self._group, self._node, view=True)

    def __repr__(self) -> str:
        return f"<class 'netCDF4.CompoundType'>: name = '{self.name}', numpy dtype = {self.dtype}"


class VLType(_UserType):
    """A variable-length sequence type of a primitive base type."""

    def __init__(self, grp: Group, dt: Any, dtype_name: str, **kwargs: Any) -> None:
        try:
            base = atomic_of(dt, "")
        except DataTypeError:
            raise NameNotFoundError(f"unsupported datatype specified for VLEN: {dt!r}") from None
        node = model_nodes.VlenType(dtype_name, base)
        grp._define_type(node, self)

    @property
    def name(self) -> str | None:
        return None if self._node is None else self._node.name

    @property
    def dtype(self) -> Any:
        if self._node is None:
            return str
        return element_dtype(self._node, "base", packed=False)

    @property
    def stored_dtype(self) -> np.dtype:
        """The layout of the elements as stored: little-endian, no padding."""
        return element_dtype(self._node, "base", packed=True)

    def __repr__(self) -> str:
        if self._node is None:
            return "\"<class 'netCDF4.VLType'>\": string type"
        return f"\"<class 'netCDF4.VLType'>\": name = '{self.name}', numpy dtype = {self.dtype}"


def string_vltype(grp: Group) -> VLType:
    """The handle netCDF4 gives as ``datatype`` of a string variable: a VLType of ``str``."""
    handle = VLType.__new__(VLType)
    handle._node, handle._group = None, grp  # type: ignore[assignment]
    return handle


class EnumType(_UserType):
    """Named values of an integer base type."""

    def __init__(self, grp: Group, dt: Any, dtype_name: str, enum_dict: dict[str, int], **kwargs: Any) -> None:
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
        return dtype_of(self._node.base)  # type: ignore[attr-defined]

    @property
    def enum_dict(self) -> dict[str, Any]:
        return {m.name: m.value for m in self._node.members}  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return (
            f"\"<class 'netCDF4.EnumType'>\": name = '{self.name}', numpy dtype = {self.dtype}, "
            f"fields/values ={self.enum_dict}"
        )


def bind(handle: _UserType, grp: Group, node: model_nodes.UserType) -> None:
    """Make ``handle`` the handle of ``node`` in ``grp``."""
    handle._node = node
    handle._group = grp


def handle_for(grp: Group, node: model_nodes.UserType) -> _UserType:
    """A handle on a type read from a store."""
    cls = {
        model_nodes.CompoundType: CompoundType,
        model_nodes.VlenType: VLType,
        model_nodes.EnumType: EnumType,
    }.get(type(node))
    if cls is None:  # opaque: netCDF4-python has no handle class; show it as a compound-like blob
        cls = _OpaqueType
    handle = cls.__new__(cls)
    bind(handle, grp, node)
    return handle


class _OpaqueType(_UserType):
    @property
    def dtype(self) -> np.dtype:
        return np.dtype(f"V{self._node.size}")  # type: ignore[attr-defined]


def _registered_compound(grp: Group, dtype: np.dtype, field_name: str) -> str:
    """The FQN of a compound type already defined in reach of ``grp`` whose dtype is ``dtype``
    (netCDF4 needs nested compounds registered first)."""
    group: ModelGroup | None = grp._node
    while group is not None:
        for node in group.types:
            if isinstance(node, model_nodes.CompoundType) and _same_fields(
                compound_dtype(grp, node, view=True), dtype
            ):
                return node.fqn
        group = group.parent  # type: ignore[assignment]
    raise DataTypeError(f"compound field {field_name!r}: nested compound types must be created first")


def _same_fields(a: np.dtype, b: np.dtype) -> bool:
    return [(n, a.fields[n][0].base.str, a.fields[n][0].shape) for n in a.names or ()] == [  # type: ignore[index]
        (n, b.fields[n][0].base.str, b.fields[n][0].shape) for n in b.names or ()  # type: ignore[index]
    ]


def element_dtype(node: model_nodes.UserType, attribute: str, *, packed: bool) -> np.dtype:
    """The numpy dtype of the type a user type refers to (a vlen's base): as netCDF4 shows it,
    or as stored (``packed``: little-endian, no padding)."""
    ref = getattr(node, attribute)
    member = ref if isinstance(ref, AtomicType) else resolve_type(node.group, ref)
    if isinstance(member, AtomicType):
        return numpy_dtype(member) if packed else dtype_of(member)
    if isinstance(member, model_nodes.CompoundType):
        return compound_dtype(None, member, view=False, packed=packed)
    if isinstance(member, model_nodes.EnumType):
        return element_dtype(member, "base", packed=packed)
    if isinstance(member, model_nodes.OpaqueType):
        return np.dtype(f"V{member.size}")
    return np.dtype(object)


def compound_dtype(grp: Any, node: model_nodes.CompoundType, *, view: bool, packed: bool = False) -> np.dtype:
    """The numpy dtype of a compound type: C-aligned as netCDF4 shows it (``packed``: no
    padding, little-endian, as stored); char-array fields as ``S<n>`` when ``view``."""
    scope = node.group
    fields = []
    for f in node.fields:
        member = f.type if isinstance(f.type, AtomicType) else resolve_type(scope, f.type)
        shape = f.shape
        if isinstance(member, AtomicType):
            dtype = numpy_dtype(member) if packed else dtype_of(member)
            if member is AtomicType.CHAR and view and shape:
                dtype, shape = np.dtype(f"S{shape[-1]}"), shape[:-1]
        elif isinstance(member, model_nodes.CompoundType):
            dtype = compound_dtype(grp, member, view=view, packed=packed)
        elif isinstance(member, model_nodes.EnumType):
            dtype = numpy_dtype(member.base) if packed else dtype_of(member.base)  # type: ignore[arg-type]
        elif isinstance(member, model_nodes.OpaqueType):
            dtype = np.dtype(f"V{member.size}")
        else:
            raise ArgumentError(f"compound type {node.fqn}: field {f.name!r} has no fixed size")
        fields.append((f.name, dtype, shape) if shape else (f.name, dtype))
    return np.dtype(fields, align=not packed)
