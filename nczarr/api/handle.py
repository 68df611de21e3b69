"""What every handle of one open dataset shares (:class:`Shared`), the rules for the names
handles give, and the attribute writes groups and variables have in common. Below the handle
modules (dimension, types, variable, dataset), which import it and never each other upward."""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable

from nczarr.api import attributes as attrs
from nczarr.errors import AttributeNotFoundError, DatasetStateError, InvalidNameError
from nczarr.formats.keys import RESERVED as RESERVED_ATTRIBUTES
from nczarr.formats.keys import key_name_problem
from nczarr.formats.session import Session
from nczarr.model import Group as ModelGroup
from nczarr.model import Variable as ModelVariable
from nczarr.model import name_problem
from nczarr.store.lock import WriterLock

# netCDF4's messages (netcdf-c's error texts)
NOT_VALID_ID = "NetCDF: Not a valid ID"
READ_ONLY = "NetCDF: Write to read only"
NAME_IN_USE = "NetCDF: String match to name in use"
ATTRIBUTE_NOT_FOUND = "NetCDF: Attribute not found"

#: Python attributes of Dataset, Group and Variable objects that are not netCDF attributes
#: (netCDF4's list): assigning or deleting one is an error, setncattr still writes one.
RESERVED = frozenset(
    [
        "_grpid", "_grp", "_varid", "groups", "dimensions", "variables", "dtype", "data_model", "disk_format",
        "_nunlimdim", "path", "parent", "ndim", "mask", "scale", "cmptypes", "vltypes", "enumtypes", "_isprimitive",
        "file_format", "_isvlen", "_isenum", "_iscompound", "_cmptype", "_vltype", "_enumtype", "name", "keepweakref",
        "_has_lsd", "always_mask", "_buffer", "chartostring", "_use_get_vars", "_ncstring_attrs__", "auto_complex",
        "__orthogoral_indexing__",
    ]
)


class Shared:
    """What every handle of one open dataset shares."""

    def __init__(
        self,
        session: Session,
        filename: str,
        data_model: str,
        disk_format: str,
        persist: Callable[[], memoryview | None] | None,
        writer: WriterLock | None = None,
    ) -> None:
        self.session = session
        self.writer = writer  # the store's writer lock, held until the store is closed
        self.filename = filename
        self.data_model = data_model
        self.disk_format = disk_format
        self.persist = persist
        self.fill_on = True
        self.auto_complex = False  # netCDF4's complex numbers (variable.py)
        self.open = True
        self.lock = threading.RLock()
        self.reopen: dict[str, object] | None = None  # how a read-only dataset reopens (pickling)

    @property
    def classic(self) -> bool:
        return self.data_model != "NETCDF4"

    def check_open(self) -> None:
        if not self.open:
            raise DatasetStateError(NOT_VALID_ID)

    def check_writable(self) -> None:
        self.check_open()
        if self.session.read_only:
            raise DatasetStateError(READ_ONLY)

    def close(self) -> memoryview | None:
        """Write what changed and close; a file image made in memory is returned."""
        if not self.open:
            return None
        self.open = False
        try:
            self.session.close()
            return self.persist() if self.persist is not None else None
        finally:
            try:
                self.session.store.close()
            finally:
                if self.writer is not None:
                    self.writer.release()


def reserved_error(name: str, verb: str, instead: str) -> AttributeNotFoundError:
    """netCDF4's error for rebinding or deleting a reserved Python attribute."""
    return AttributeNotFoundError(
        f"'{name}' is one of the reserved attributes {tuple(sorted(RESERVED))}, cannot {verb}. Use {instead} instead."
    )


def checked_name(name: str, *, key: bool = True) -> str:
    """``name`` in Unicode NFC (netcdf-c keeps names so: two spellings of one name are one
    name, and one folder on file systems that normalize) if a new dimension, variable, group
    (``key``: the rules of store keys too, the same on every convention) or type may have
    it; InvalidNameError naming the name and the rule otherwise. Called before anything
    changes, so that a refused name leaves nothing behind."""
    if not isinstance(name, str):
        raise InvalidNameError(f"a name must be a str, not {name!r}")
    name = unicodedata.normalize("NFC", name)
    problem = name_problem(name) or (key_name_problem(name) if key else None)
    if problem:
        raise InvalidNameError(f"invalid name {name!r}: {problem}")
    return name


def check_attribute_name(name: str) -> None:
    """Refuse, as netCDF4 does with AttributeError, an attribute name that breaks the netCDF
    rules or that the conventions keep for their own metadata (such an attribute would be
    dropped when written, or would make the store unreadable)."""
    problem = name_problem(name) if isinstance(name, str) else "a name must be a str"
    if problem:
        raise AttributeNotFoundError(f"NetCDF: Name contains illegal characters: {problem}")
    if name in RESERVED_ATTRIBUTES:
        raise AttributeNotFoundError(
            f"NetCDF: String match to name in use: attribute name {name!r} is reserved for the metadata of netCDF and NCZarr"
        )


# -- attribute writes of a group or a variable node --------------------------------------------


def set_attribute(
    shared: Shared,
    node: ModelGroup | ModelVariable,
    name: str,
    value: object,
    *,
    force_string: bool,
    changed: Callable[[], None],
) -> None:
    """Write attribute ``name`` of ``node`` as netCDF4 stores ``value``; ``changed`` tells
    the handle first (a variable forgets what it derived from its attributes)."""
    shared.check_open()
    if shared.session.read_only:  # netCDF4 raises AttributeError here, not RuntimeError
        raise AttributeNotFoundError(READ_ONLY)
    check_attribute_name(name)
    type, values = attrs.from_python(name, value, force_string=force_string, classic=shared.classic)
    with shared.lock:
        changed()
        existing = node.find_attribute(name)
        if existing is not None:
            existing.type, existing.values = type, values
        else:
            node.add_attribute(name, type, values)


def delete_attribute(shared: Shared, node: ModelGroup | ModelVariable, name: str, changed: Callable[[], None]) -> None:
    """Remove attribute ``name`` of ``node``."""
    shared.check_writable()
    attribute = node.find_attribute(name)
    if attribute is None:
        raise DatasetStateError(ATTRIBUTE_NOT_FOUND)
    with shared.lock:
        changed()
        node.attributes.remove(attribute)


def rename_attribute(
    shared: Shared, node: ModelGroup | ModelVariable, oldname: str, newname: str, changed: Callable[[], None]
) -> None:
    """Rename attribute ``oldname`` of ``node``."""
    shared.check_writable()
    attribute = node.find_attribute(oldname)
    if attribute is None:
        raise DatasetStateError(ATTRIBUTE_NOT_FOUND)
    check_attribute_name(newname)
    if node.find_attribute(newname) is not None:
        raise DatasetStateError(NAME_IN_USE)
    with shared.lock:
        changed()
        attribute.name = newname
        node.attributes.forget()  # type: ignore[attr-defined]  # it finds attributes by their old names
