"""``Dataset`` and ``Group``: live handles on a netCDF dataset in a Zarr store, with
netCDF4-python's interface (reference: netcdf4-api.md §1.2, §1.3, §2).

A dataset is a :class:`~nczarr.formats.session.Session` (the tree in memory, the engine's
arrays) plus handles: one :class:`Group` per group, one :class:`Dimension`, ``Variable`` and
user-type handle per node, each created once, so every access returns the same object.
Metadata changes touch the tree only; ``sync()`` and ``close()`` write the documents that
changed. Data goes to the arrays as it is assigned.
"""

from __future__ import annotations

import atexit
import errno
import gc
import logging
import os
import posixpath
import unicodedata
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, cast

from nczarr.api import attributes as attrs
from nczarr.api.dimension import Dimension
from nczarr.api.filesession import FileSession, FileTarget, Loaded, SourceSession, image_source, load_file
from nczarr.api.handle import (
    ATTRIBUTE_NOT_FOUND,
    NAME_IN_USE,
    NOT_VALID_ID,
    READ_ONLY,
    RESERVED,
    Shared,
    checked_name,
    delete_attribute,
    rename_attribute,
    reserved_error,
    set_attribute,
)
from nczarr.api.library import FLAGS
from nczarr.api.location import ZARR_FORMATS, parse_format
from nczarr.api.types import CompoundType, EnumType, VLType, bind, handle_for
from nczarr.convert import sources
from nczarr.errors import (
    ArgumentError,
    AttributeNotFoundError,
    DatasetStateError,
    MissingFolderError,
    NameNotFoundError,
    NCZarrError,
    SelectionError,
    StoreError,
)
from nczarr.formats import convention as make_convention
from nczarr.formats import require_local, stored_dataset
from nczarr.formats.location import NETCDF_FILE_SUFFIXES, Location, parse_location
from nczarr.formats.session import Session
from nczarr.model import DataModel
from nczarr.model import Dataset as ModelDataset
from nczarr.model import Group as ModelGroup
from nczarr.model import nodes as model_nodes
from nczarr.model.resolve import anonymous_dimensions
from nczarr.store import open_store
from nczarr.store.base import Store
from nczarr.store.lock import AFTER_COLLECT, WriterLock, writer_lock
from nczarr.store.memory import MemoryStore
from nczarr.store.open import is_fsspec_object
from nczarr.store.zip import ZipStore

if TYPE_CHECKING:
    from nczarr.api.variable import Variable

log = logging.getLogger(__name__)

#: Attributes nczarr keeps to itself (netCDF4 hides _NCProperties too).
HIDDEN_ATTRIBUTES = frozenset({"_NCProperties"})
_CLASSIC_GROUPS = "NetCDF: Attempting netcdf-4 operation on strict nc3 netcdf-4 file"
_MODES = ("r", "w", "x", "a", "r+", "rs", "ws", "as", "r+s")


class Dataset:
    """A netCDF dataset in a Zarr store (the root group), opened or created like
    ``netCDF4.Dataset``. ``filename`` is a directory, a ``.zip`` file, an fsspec URL
    (``s3://...``, ``memory://...``) or a netcdf-c URL (``file:///p#mode=nczarr,file``);
    ``format`` is one of netCDF4's names (``NETCDF4``: the default convention;
    ``NETCDF4_CLASSIC`` and ``NETCDF3_*``: the classic data model) or one of nczarr's
    conventions (``NCZARR``, the default, ``NCZARR_V2``, ``ZARR``, ``ZARR_V2``, ``ZARR_V3_DRAFT``).

    A dataset open for writing in a local store holds the store's writer lock until it is
    closed; another writer waits up to ``lock_timeout`` seconds (default 10, or
    ``NCZARR_LOCK_TIMEOUT``) and then gets StoreLockedError (see docs/concurrency.md)."""

    __slots__ = (
        "__weakref__",
        "_dimensions",
        "_groups",
        "_keepweakref",
        "_ncstring_attrs",
        "_node",
        "_parent",
        "_shared",
        "_types",
        "_variables",
    )
    __orthogonal_indexing__ = True

    def __init__(
        self,
        filename: str | bytes | os.PathLike[str] | Store,
        mode: str = "r",
        clobber: bool = True,
        format: str = "NETCDF4",
        diskless: bool = False,
        persist: bool = False,
        keepweakref: bool = False,
        memory: object = None,
        encoding: str | None = None,
        parallel: bool = False,
        comm: object = None,
        info: object = None,
        auto_complex: bool = False,
        storage_options: Mapping[str, object] | None = None,
        lock_timeout: float | None = None,
        **kwargs: object,
    ) -> None:
        close_dropped()  # what the garbage collector found: written before this opens
        if mode not in _MODES:
            raise ArgumentError(f"mode must be 'w', 'x', 'r', 'a' or 'r+', got '{mode}'")
        if parallel:
            raise ArgumentError("parallel mode requires MPI enabled netcdf-c; nczarr has no MPI I/O")
        mode = mode.rstrip("s") or "r"
        if mode == "x":
            mode, clobber = "w", False
        if is_fsspec_object(filename):  # a mapper or filesystem: its store, emptied for 'w'
            store_mode = "w" if mode == "w" and clobber else "w-" if mode == "w" else mode
            filename = open_store(filename, store_mode, storage_options=storage_options)
        if isinstance(filename, Store):
            display, location = repr(filename), Location(filename)  # type: ignore[arg-type]
        else:
            display = filename.decode(encoding or "utf-8") if isinstance(filename, bytes) else os.fspath(filename)
            location = parse_location(display, storage_options=storage_options)
        convention_name, data_model, model_name = parse_format(format, location)
        if mode != "r" and memory is None and (persist or not diskless):
            _check_folder(location, mode, model_name)
        reopen: dict[str, object] = {"format": format, "storage_options": storage_options}
        if memory is not None and mode not in ("r", "w"):
            raise ArgumentError("if memory kwarg specified, mode must be 'r' or 'w'")
        file_kind = None if memory is not None else sources.file_kind(location.target)
        writer: WriterLock | None = None
        persist_to: Callable[[], memoryview | None] | None = None
        file_out: FileTarget | None = None
        loaded: Loaded | None = None
        if mode == "r" and (file_kind is not None or memory is not None):
            if memory is not None:
                source, cleanup = image_source(memory, display)
            else:
                source, cleanup = sources.open_source(location.target), None
            session: Any = SourceSession(source, cleanup)
            tree = source.dataset
            model_name = source.data_model
            disk = _file_disk_format(model_name)
        else:
            # a netCDF file (also a file image in memory) is built in memory, written at close
            file_target = mode != "r" and (
                memory is not None or (not location.mode and (file_kind is not None or _netcdf_file_target(location)))
            )
            if file_target:
                if file_kind is None:
                    mode = "w"  # netCDF4: 'a' and 'r+' on a missing file create it
                store, file_out, writer, loaded = _file_target(
                    location, display, mode, clobber, model_name, format, convention_name,
                    image=memory is not None, diskless=diskless, persist=persist, timeout=lock_timeout,
                )
                persist_to = file_out
            else:
                if model_name == "NETCDF3_64BIT_DATA":  # a Zarr store holds CDF-5's types in the netCDF-4 model, as in netCDF4
                    data_model, model_name = DataModel.ENHANCED, "NETCDF4"
                # one writer at a time, taken before 'w' replaces what is there
                writer = None if mode == "r" or diskless else _writer_lock(location, lock_timeout)
                try:
                    store, persist_to = _open_store(location, display, mode, clobber, diskless, persist)
                except BaseException:
                    if writer is not None:
                        writer.release()
                    raise
            # writers no lock serialises (object stores) check that nobody changed the metadata
            checks = writer is None and not diskless and persist_to is None and not file_target
            session_class = FileSession if file_target else Session
            try:
                stored = None if mode == "w" else stored_dataset(store, display, new_if_empty=mode in ("a", "r+"))
                if stored is None:
                    convention = make_convention(convention_name, **location.convention_options(convention_name))
                    tree = ModelDataset("", data_model=data_model)
                    session = session_class.create(store, tree, convention, check_conflicts=checks)
                    disk = _file_disk_format(model_name) if file_target else _disk_format(convention_name)
                else:
                    convention, root = stored
                    if mode == "r":  # an update keeps the store's convention (netcdf-c's drops NCZarr's keys)
                        convention = location.reading(convention)
                    session = session_class.open(
                        store, convention, read_only=mode == "r", root=root, check_conflicts=checks,
                        use_consolidated=location.use_consolidated, consolidated=location.consolidated,
                    )
                    tree = session.dataset
                    model_name = "NETCDF4_CLASSIC" if tree.data_model is DataModel.CLASSIC else "NETCDF4"
                    disk = _disk_format(convention.name)
                    if loaded is not None:
                        model_name, disk = loaded.data_model, loaded.disk_format
                        session.keep(loaded.storage)
                if file_out is not None:
                    file_out.session = session
            except BaseException:
                store.close()
                if writer is not None:
                    writer.release()
                raise
        shared = Shared(session, display, model_name, disk, persist_to, writer)
        shared.auto_complex = bool(auto_complex)
        if mode == "r" and not diskless and memory is None:
            shared.reopen = dict(reopen, filename=display)
        self._bind(shared, tree, None, keepweakref)
        self._load()
        weakref.finalize(self, _dropped, shared)  # also at exit, newest first (zip.py counts on it)
        if not _EXIT_DRAIN:  # after weakref's exit hook is registered: it runs before this one
            _EXIT_DRAIN.append(atexit.register(close_dropped))

    # -- construction of handles ----------------------------------------------------------
    def _bind(self, shared: Shared, node: ModelGroup, parent: Dataset | None, keepweakref: bool) -> None:
        self._shared = shared
        self._node = node
        # a weak proxy stands in for the parent it refers to
        self._parent = cast("Dataset", weakref.proxy(parent)) if keepweakref and parent is not None else parent
        self._keepweakref = keepweakref
        self._ncstring_attrs = False
        self._groups: dict[str, Group] = {}
        self._dimensions: dict[str, Dimension] = {}
        self._variables: dict[str, Any] = {}
        self._types: dict[str, Any] = {}

    def _load(self) -> None:
        """Handles for everything the tree holds below this group, parents first (with a
        stack, not recursion: a tree may be deeper than Python's recursion limit)."""
        from nczarr.api.variable import Variable

        pending: list[Dataset] = [self]
        while pending:
            handle = pending.pop()
            node = handle._node
            for dimension in node.dimensions:
                handle._dimensions[dimension.name] = Dimension._for(handle, dimension)
            if node.parent is None:  # a store's unnamed dimensions, named as netCDF4 lists them
                for dimension in anonymous_dimensions(node):
                    handle._dimensions.setdefault(dimension.name, Dimension._for(handle, dimension))
            for user_type in node.types:
                handle._types[user_type.name] = handle_for(handle, user_type)
            for variable in node.variables:
                handle._variables[variable.name] = Variable._for(handle, variable)
            children = []
            for child in node.groups:
                group = Group.__new__(Group)
                group._bind(handle._shared, child, handle, handle._keepweakref)
                handle._groups[child.name] = group
                children.append(group)
            pending.extend(reversed(children))  # in order: a type may be used after its group

    # -- properties -----------------------------------------------------------------------
    @property
    def groups(self) -> dict[str, Group]:
        return self._groups

    @property
    def dimensions(self) -> dict[str, Dimension]:
        return self._dimensions

    @property
    def variables(self) -> dict[str, Variable]:
        return self._variables

    @property
    def cmptypes(self) -> dict[str, CompoundType]:
        return {k: v for k, v in self._types.items() if isinstance(v, CompoundType)}

    @property
    def vltypes(self) -> dict[str, VLType]:
        return {k: v for k, v in self._types.items() if isinstance(v, VLType)}

    @property
    def enumtypes(self) -> dict[str, EnumType]:
        return {k: v for k, v in self._types.items() if isinstance(v, EnumType)}

    @property
    def data_model(self) -> str:
        return self._shared.data_model

    file_format = data_model

    @property
    def disk_format(self) -> str:
        return self._shared.disk_format

    @property
    def parent(self) -> Dataset | None:
        return self._parent

    @property
    def path(self) -> str:
        return self._node.fqn

    @property
    def name(self) -> str:
        return "/" if self._node.parent is None else self._node.name

    @property
    def keepweakref(self) -> bool:
        return self._keepweakref

    @property
    def auto_complex(self) -> bool:
        return self._shared.auto_complex

    @property
    def _ncstring_attrs__(self) -> bool:
        return self._ncstring_attrs

    # -- life cycle -----------------------------------------------------------------------
    def filepath(self, encoding: str | None = None) -> str:
        return self._shared.filename

    def isopen(self) -> bool:
        return self._shared.open

    def sync(self) -> None:
        """Write the chunks held in caches and the metadata that changed."""
        self._shared.check_open()
        with self._shared.lock:
            self._shared.session.sync()

    def close(self) -> memoryview | None:
        """Write what changed and close the store; using the dataset afterwards is an error.
        A dataset created in memory (``memory=``) gives its netCDF file image, as netCDF4."""
        self._shared.check_open()
        with self._shared.lock:
            image = self._shared.close()
        close_dropped()
        return image

    def __enter__(self) -> Dataset:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._shared.open:
            self.close()

    def __iter__(self) -> NoReturn:
        raise TypeError("Dataset is not iterable. Consider iterating on Dataset.variables.")

    def __contains__(self, key: object) -> NoReturn:
        raise TypeError(
            "Dataset does not support membership operations. Perhaps try 'varname in "
            "dataset.variables' or 'dimname in dataset.dimensions'."
        )

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        reopen = self._shared.reopen
        if reopen is None or not self._shared.open:
            raise NotImplementedError("Dataset is not picklable (only datasets open read-only are)")
        return (_reopen, (reopen, self.path))

    def set_fill_on(self) -> None:
        self._shared.fill_on = True

    def set_fill_off(self) -> None:
        self._shared.fill_on = False

    # -- attributes -----------------------------------------------------------------------
    def ncattrs(self) -> list[str]:
        if not self._shared.open:
            raise AttributeNotFoundError(NOT_VALID_ID)
        return [a.name for a in self._node.attributes if a.name not in HIDDEN_ATTRIBUTES]

    def getncattr(self, name: str, encoding: str = "utf-8") -> attrs.AttributeValue:
        self._shared.check_open()
        attribute = self._node.find_attribute(name)
        if attribute is None or name in HIDDEN_ATTRIBUTES:
            raise AttributeNotFoundError(ATTRIBUTE_NOT_FOUND)
        return attrs.to_python(attribute, encoding, char_as_bytes=self._char_as_bytes(name))

    def _char_as_bytes(self, name: str) -> bool:
        return False

    def setncattr(self, name: str, value: object) -> None:
        self._set_attribute(name, value, force_string=self._ncstring_attrs)

    def setncattr_string(self, name: str, value: object) -> None:
        self._set_attribute(name, value, force_string=True)

    def setncatts(self, attdict: Mapping[str, object]) -> None:
        for name, value in attdict.items():
            self.setncattr(name, value)

    def _set_attribute(self, name: str, value: object, *, force_string: bool) -> None:
        set_attribute(self._shared, self._node, name, value, force_string=force_string, changed=self._changed_attribute)

    def _changed_attribute(self) -> None:
        """Hook: a variable forgets what it derived from its attributes."""

    def delncattr(self, name: str) -> None:
        delete_attribute(self._shared, self._node, name, self._changed_attribute)

    def renameAttribute(self, oldname: str, newname: str) -> None:
        rename_attribute(self._shared, self._node, oldname, newname, self._changed_attribute)

    def __getattr__(self, name: str) -> attrs.AttributeValue | dict[str, attrs.AttributeValue]:
        if name.startswith("__") and name.endswith("__") and name != "__dict__":
            raise AttributeError(name)
        if name == "__dict__":
            return {n: self.getncattr(n) for n in self.ncattrs()}
        try:
            return self.getncattr(name)
        except DatasetStateError:
            raise AttributeNotFoundError(NOT_VALID_ID) from None

    def __setattr__(self, name: str, value: object) -> None:
        if name in _SLOTS:
            object.__setattr__(self, name, value)
        elif name in RESERVED:
            raise reserved_error(name, "rebind", "setncattr")
        else:
            if not self._shared.open:
                raise DatasetStateError(NOT_VALID_ID)
            if self._shared.session.read_only:
                raise AttributeNotFoundError(READ_ONLY)
            self.setncattr(name, value)

    def __delattr__(self, name: str) -> None:
        if name in RESERVED or name in _SLOTS:
            raise reserved_error(name, "delete", "delncattr")
        self.delncattr(name)

    # -- dimensions -----------------------------------------------------------------------
    def createDimension(self, dimname: str, size: int | None = None) -> Dimension:
        """A new dimension; ``size`` None or 0 makes it unlimited."""
        return Dimension(self, dimname, size)

    def _add_dimension(self, handle: Dimension, name: str, size: int | None) -> None:
        shared = self._shared
        shared.check_writable()
        name = checked_name(name)
        if name in self._dimensions:
            raise DatasetStateError(NAME_IN_USE)
        unlimited = not size
        if unlimited and shared.classic and any(
            d.unlimited for g in self._node.root.walk() for d in g.dimensions
        ):
            raise DatasetStateError("NetCDF: NC_UNLIMITED size already in use")
        if size is not None and int(size) < 0:
            raise ArgumentError(f"dimension {name!r}: size must not be negative, got {size}")
        with shared.lock:
            node = self._node.add_dimension(name, 0 if unlimited else int(size), unlimited)  # type: ignore[arg-type]
            handle._grp, handle._node = self, node
            self._dimensions[name] = handle

    def renameDimension(self, oldname: str, newname: str) -> None:
        self._rename(self._dimensions, oldname, newname, "dimension")

    # -- user types -----------------------------------------------------------------------
    def createCompoundType(self, datatype: object, datatype_name: str) -> CompoundType:
        return CompoundType(self, datatype, datatype_name)

    def createVLType(self, datatype: object, datatype_name: str) -> VLType:
        return VLType(self, datatype, datatype_name)

    def createEnumType(self, datatype: object, datatype_name: str, enum_dict: dict[str, int]) -> EnumType:
        return EnumType(self, datatype, datatype_name, enum_dict)

    def _define_type(self, node: model_nodes.UserType, handle: Any) -> None:
        """Add a user type made by a type handle's constructor."""
        shared = self._shared
        shared.check_writable()
        if shared.classic:
            raise DatasetStateError(_CLASSIC_GROUPS)
        node.name = checked_name(node.name, key=False)  # type names are not store keys
        if node.name in self._types:
            raise DatasetStateError(NAME_IN_USE)
        with shared.lock:
            self._node.add(node)
            problems = shared.session.convention.problems(shared.session.dataset)
            if problems:
                self._node.types.remove(node)
                # netCDF4 on NCZarr raises RuntimeError for user types
                raise DatasetStateError(f"{node.kind} {node.name!r}: " + "; ".join(problems))
            bind(handle, self, node)
            self._types[node.name] = handle

    # -- variables ------------------------------------------------------------------------
    def createVariable(
        self, varname: str, datatype: object, dimensions: str | Dimension | Sequence[str | Dimension] = (), **kwargs: object
    ) -> Variable:
        """A new variable (netCDF4's keywords: compression, zlib, complevel, shuffle,
        fletcher32, contiguous, chunksizes, endian, least_significant_digit,
        significant_digits, quantize_mode, fill_value, chunk_cache, blosc_shuffle...)."""
        from nczarr.api.variable import Variable

        group, name = self._parent_of(varname)
        variable = Variable(group, name, datatype, dimensions, **kwargs)  # type: ignore[arg-type]
        session = self._shared.session
        if kwargs.get("contiguous") and isinstance(session, FileSession):
            session.contiguous(variable._node)  # its Zarr array has one chunk; the file none
        return variable

    def _parent_of(self, path: str) -> tuple[Dataset, str]:
        """The group that a ``createVariable`` path names (created if missing) and the name."""
        if "/" not in path:
            return self, path
        dirname, name = posixpath.split(posixpath.normpath(path))
        group = self.createGroup(dirname) if dirname not in ("", ".") else self
        return group, name

    def renameVariable(self, oldname: str, newname: str) -> None:
        self._rename(self._variables, oldname, newname, "variable")

    def get_variables_by_attributes(self, **kwargs: object) -> list[Variable]:
        """The variables of this group whose attributes match every condition: a value to
        compare with, or a callable given the attribute's value (None when missing)."""
        return attrs.variables_by_attributes(self._variables.values(), kwargs)

    # -- groups ---------------------------------------------------------------------------
    def createGroup(self, groupname: str) -> Group:
        """The group at ``groupname`` (a name or a path), created with any missing parents."""
        self._shared.check_writable()
        if self._shared.classic:
            raise DatasetStateError(_CLASSIC_GROUPS)
        group: Dataset = self
        if posixpath.normpath(groupname) == ".":  # '' or '.': no group, refused as netCDF4 does
            checked_name(groupname)
        for part in posixpath.normpath(groupname).split("/"):
            if part in ("", "."):
                if groupname.startswith("/") and part == "":
                    group = _root(group)
                continue
            part = unicodedata.normalize("NFC", part)
            existing = group._groups.get(part)
            group = existing if existing is not None else Group(group, part)
        return group  # type: ignore[return-value]

    def _add_group(self, handle: Group, name: str) -> None:
        shared = self._shared
        shared.check_writable()
        if shared.classic:
            raise DatasetStateError(_CLASSIC_GROUPS)
        name = checked_name(name)
        if name in self._groups or name in self._variables:
            raise DatasetStateError(NAME_IN_USE)
        with shared.lock:
            node = self._node.add_group(name)
            handle._bind(shared, node, self, self._keepweakref)
            self._groups[name] = handle

    def renameGroup(self, oldname: str, newname: str) -> None:
        self._rename(self._groups, oldname, newname, "group")

    def _rename(self, handles: dict[str, Any], oldname: str, newname: str, kind: str) -> None:
        shared = self._shared
        shared.check_writable()
        if oldname not in handles:
            raise NameNotFoundError(f"{oldname} not a valid {kind} name")
        newname = checked_name(newname)
        # variables and groups share a namespace: both are store keys below this group
        taken = (handles,) if kind == "dimension" else (self._variables, self._groups)
        if any(newname in names for names in taken):
            raise DatasetStateError(NAME_IN_USE)
        handle = handles[oldname]
        with shared.lock:
            shared.session.rename(handle._node, newname)
            # as in netCDF4: the old key goes, the new one comes last
            handles[newname] = handles.pop(oldname)

    def __getitem__(self, elem: str) -> Dataset | Variable:
        """The group or variable at a path (relative to this group, or absolute)."""
        group: Dataset = _root(self) if elem.startswith("/") else self
        parts = [p for p in posixpath.normpath(elem).split("/") if p not in ("", ".")]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if part in group._groups:
                group = group._groups[part]
            elif last and part in group._variables:
                return group._variables[part]
            else:
                raise SelectionError(f"{elem} not found in {self.path}")
        return group

    # -- auto conversions -----------------------------------------------------------------
    def _walk_variables(self) -> Iterator[Any]:
        yield from self._variables.values()
        for group in self._groups.values():
            yield from group._walk_variables()

    def set_auto_chartostring(self, value: bool) -> None:
        for variable in self._walk_variables():
            variable.set_auto_chartostring(value)

    def set_auto_maskandscale(self, value: bool) -> None:
        for variable in self._walk_variables():
            variable.set_auto_maskandscale(value)

    def set_auto_mask(self, value: bool) -> None:
        for variable in self._walk_variables():
            variable.set_auto_mask(value)

    def set_auto_scale(self, value: bool) -> None:
        for variable in self._walk_variables():
            variable.set_auto_scale(value)

    def set_always_mask(self, value: bool) -> None:
        for variable in self._walk_variables():
            variable.set_always_mask(value)

    def set_ncstring_attrs(self, value: bool) -> None:
        self._ncstring_attrs = bool(value)
        for variable in self._variables.values():
            variable.set_ncstring_attrs(value)
        for group in self._groups.values():
            group.set_ncstring_attrs(value)

    # -- codecs -----------------------------------------------------------------------------
    def has_blosc_filter(self) -> bool:
        return bool(FLAGS["__has_blosc_support__"])

    def has_zstd_filter(self) -> bool:
        return bool(FLAGS["__has_zstandard_support__"])

    def has_bzip2_filter(self) -> bool:
        return bool(FLAGS["__has_bzip2_support__"])

    def has_szip_filter(self) -> bool:
        return False

    # -- CDL ------------------------------------------------------------------------------
    @staticmethod
    def fromcdl(
        cdlfilename: str | os.PathLike[str],
        ncfilename: str | os.PathLike[str] | None = None,
        mode: str = "a",
        format: str = "NETCDF4",
    ) -> Dataset:
        """Make a dataset from a CDL file (as ``ncgen``) and open it: ``ncfilename`` is a
        Zarr store, or a netCDF file for a ``.nc`` path (the default, as netCDF4 names it);
        ``format`` is a netCDF4 kind or a Zarr convention."""
        from nczarr.api.generate import generate

        target = ncfilename if ncfilename is not None else os.path.splitext(os.fspath(cdlfilename))[0] + ".nc"
        zarr_format = str(format).upper() in ZARR_FORMATS
        generate(cdlfilename, target, kind=None if zarr_format else format, format=format if zarr_format else None)
        return Dataset(target, mode if not os.fspath(target).lower().endswith(NETCDF_FILE_SUFFIXES) else "r")

    def tocdl(self, coordvars: bool = False, data: bool = False, outfile: str | os.PathLike[str] | None = None) -> str | None:
        """The dataset as CDL, as ``ncdump -sh`` prints it (``-sc`` with ``coordvars``, ``-s``
        with ``data``); written to ``outfile`` when given."""
        from nczarr.syntax.cdldump import DumpOptions, dump

        options = DumpOptions(special=True, header_only=not (coordvars or data), coordinates=coordvars)
        # the session's raw values: the user's handles keep their settings
        session = self._shared.session
        source = session.source if isinstance(session, SourceSession) else session
        text = "".join(dump(source, options, path=self.filepath()))
        if outfile is None:
            return text
        with open(outfile, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        return None

    # -- repr -----------------------------------------------------------------------------
    def __repr__(self) -> str:
        if not self._shared.open:
            return "<class 'netCDF4.Dataset'>\nroot group (closed)" if self._parent is None else "<closed group>"
        if self._node.parent is None:
            head = [
                "<class 'netCDF4.Dataset'>",
                f"root group ({self.data_model} data model, file format {self.disk_format}):",
            ]
        else:
            head = ["<class 'netCDF4.Group'>", f"group {self.path}:"]
        lines = [*head, *(f"    {name}: {self.getncattr(name)!s}" for name in self.ncattrs())]
        dims = ", ".join(f"{n}({len(d)})" for n, d in self._dimensions.items())
        lines.append(f"    dimensions(sizes): {dims}")
        variables = ", ".join(
            f"{v._type_label()} {n}({', '.join(v.dimensions)})" for n, v in self._variables.items()
        )
        lines.append(f"    variables(dimensions): {variables}")
        lines.append(f"    groups: {', '.join(self._groups)}")
        return "\n".join(lines)

    __str__ = __repr__


class Group(Dataset):
    """A group of a dataset; ``Group(parent, name)`` creates one (as ``createGroup``)."""

    __slots__ = ()

    def __init__(self, parent: Dataset, name: str, **kwargs: object) -> None:
        parent._add_group(self, name)

    def close(self) -> None:
        raise StoreError("cannot close a `Group` (only applies to Dataset)")

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        if self._shared.reopen is None:
            raise NotImplementedError("Group is not picklable (only groups of datasets open read-only are)")
        return (_reopen, (self._shared.reopen, self.path))


_SLOTS = frozenset(
    {
        "_shared", "_node", "_parent", "_groups", "_dimensions", "_variables", "_types",
        "_keepweakref", "_ncstring_attrs",
    }
)


#: The exit hook that closes the datasets still queued (registered once).
_EXIT_DRAIN: list[Callable[[], None]] = []
#: Datasets the garbage collector found dropped unclosed, to close at the next safe point.
_DROPPED: list[Shared] = []


#: Whether the garbage collector is collecting (its callbacks tell).
_COLLECTING = [False]


def _collecting(phase: str, info: dict[str, int]) -> None:
    _COLLECTING[0] = phase == "start"


gc.callbacks.append(_collecting)


def _dropped(shared: Shared) -> None:
    """A dataset was dropped unclosed: closed now when its last reference went, as netCDF4
    does. But the garbage collector (a dataset in a reference cycle) may start at any
    allocation, in any thread, even within C code that is not re-entrant (contextvars'
    ``ContextVar.set`` under numpy's ``errstate``: closing there, which enters ``errstate``
    again, crashed the interpreter): then it is only queued, and :func:`close_dropped`
    closes it at the next safe point."""
    _DROPPED.append(shared)
    if not _COLLECTING[0]:
        close_dropped()


def close_dropped() -> None:
    """Close the datasets dropped without close() (as netCDF4 does), from ordinary code: a
    new dataset's opening, a close, a writer waiting for a lock, the interpreter's exit."""
    while _DROPPED:
        try:
            shared = _DROPPED.pop()
        except IndexError:  # another thread took the last one
            return
        _close_at_exit(shared)


def _close_at_exit(shared: Shared) -> None:
    """Close a dataset dropped without close(); there is no caller to raise to, so a
    failure is logged."""
    try:
        with shared.lock:
            shared.close()
    except Exception:
        log.exception("could not write dataset %r when it was dropped unclosed", shared.filename)


AFTER_COLLECT.append(close_dropped)


def _root(group: Dataset) -> Dataset:
    while group._parent is not None:
        group = group._parent
    return group


def _disk_format(convention_name: str) -> str:
    return "NCZARR" if convention_name.startswith("NCZARR") else "ZARR"


def _open_store(
    location: Location,
    display: str,
    mode: str,
    clobber: bool,
    diskless: bool,
    persist: bool,
) -> tuple[Store, Callable[[], None] | None]:
    """The store to work in, and what writes a diskless dataset out at close (if anything)."""
    if isinstance(location.target, Store):
        return location.target, None
    if mode == "w" and not clobber and _taken(location):
        raise StoreError(-35, "NetCDF: File exists && NC_NOCLOBBER", display)
    if mode == "r":
        require_local(location.target, display)
    store_mode = {"r": "r", "r+": "r+", "a": "a", "w": "w"}[mode]

    def real(mode: str) -> Store:
        if location.zip:
            zip_mode = {"r": "r", "r+": "a", "a": "a"}.get(mode, "w")
            return ZipStore(location.target, zip_mode, folder=location.zip_folder)
        return open_store(location.target, mode, storage_options=location.storage_options)

    if not diskless:
        if mode == "r+" and not _exists(location):
            store_mode = "a"  # netCDF4: 'r+' on a missing file creates it too
        return real(store_mode), None
    memory = MemoryStore()
    if mode != "w" and _exists(location):
        source = real("r")
        try:
            memory.set_many(source.get_many(list(source.list())))
        finally:
            source.close()
    if not persist:
        return memory, None

    def write_out() -> None:
        target = real("w")
        try:
            target.set_many(memory.get_many(list(memory.list())))
        finally:
            target.close()

    return memory, write_out


def _netcdf_file_target(location: Location) -> bool:
    target = location.target
    return (
        isinstance(target, str)
        and location.local
        and not location.mode
        and target.lower().endswith(NETCDF_FILE_SUFFIXES)
        and not os.path.isdir(target)
    )


def _file_target(
    location: Location,
    display: str,
    mode: str,
    clobber: bool,
    model_name: str,
    format: str,
    convention: str,
    *,
    image: bool,
    diskless: bool,
    persist: bool,
    timeout: float | None,
) -> tuple[Store, FileTarget | None, WriterLock | None, Loaded | None]:
    """A netCDF file to write (``'w'``) or update (``'a'``, ``'r+'``): the dataset is built in
    a store in memory (an update's loaded from the file) and written at close as a netCDF-3
    file (the NETCDF3_* formats) or a netCDF-4 file (NETCDF4, NETCDF4_CLASSIC), or returned
    as a file image (``image``: ``memory=``); ``diskless`` without ``persist`` writes nothing.
    Gives the store, what writes it out, the writer lock held (one writer at a time, taken
    before anything is read or replaced) and, for an update, the file's data model and disk
    format."""
    if mode == "w" and str(format).upper() in ZARR_FORMATS:  # an update keeps the file's
        raise ArgumentError(
            f"{display!r} names a netCDF file; format {format!r} is a Zarr convention: "
            "give a directory or a .zip path for it"
        )
    if mode == "w" and not clobber and not image and _taken(location):
        raise StoreError(-35, "NetCDF: File exists && NC_NOCLOBBER", display)
    writes = image or not diskless or persist
    writer = _writer_lock(location, timeout) if writes and not image else None
    try:
        loaded = None if mode == "w" else load_file(location.target, display, convention)
        memory = MemoryStore() if loaded is None else loaded.store
        model_name = model_name if loaded is None else loaded.data_model
        out = FileTarget(memory, None if image else location.target, model_name) if writes else None
    except BaseException:
        if writer is not None:
            writer.release()
        raise
    return memory, out, writer, loaded


def _check_folder(location: Location, mode: str, model_name: str) -> None:
    """MissingFolderError when a local dataset would be made in a folder that does not
    exist: netcdf-c creates no parents, and a typo must not make folders. Its errno is
    netCDF4's for a netCDF file: ENOENT when a netCDF-3 file is created, else EACCES (HDF5's
    failed create, and netcdf-c's failed open for append); programs match its message."""
    target = location.target
    if location.local and isinstance(target, str):
        folder = os.path.dirname(os.path.abspath(target))
        if not os.path.isdir(folder):
            created_netcdf3 = mode == "w" and model_name.startswith("NETCDF3")
            if _netcdf_file_target(location) and not created_netcdf3:
                raise MissingFolderError(errno.EACCES, "Permission denied", target)
            raise MissingFolderError(errno.ENOENT, "No such file or directory", target)


def _file_disk_format(model_name: str) -> str:
    """netCDF4's ``disk_format`` of a netCDF file of this data model."""
    return "NETCDF3" if model_name.startswith("NETCDF3") else "HDF5"


def _taken(location: Location) -> bool:
    """Whether anything is at the location, as ``clobber=False`` (NC_NOCLOBBER) sees it:
    locally any file, folder (even empty) or link (even dangling); remotely any key."""
    if location.local:
        return os.path.lexists(location.target)
    return _exists(location)


def _exists(location: Location) -> bool:
    target = location.target
    if location.local:
        return os.path.exists(target) and (not os.path.isdir(target) or bool(os.listdir(target)))
    try:
        store = open_store(target, "r", storage_options=location.storage_options)
        try:
            return bool(next(iter(store.list_prefix("")), None))
        finally:
            store.close()
    except (NCZarrError, OSError):
        return False


def _writer_lock(location: Location, timeout: float | None) -> WriterLock | None:
    """The lock of the local store a dataset opens for writing, acquired (None for object
    stores); see docs/concurrency.md."""
    target = location.target
    if isinstance(target, Store):
        return writer_lock(target.local_path, timeout)
    return writer_lock(target, timeout) if location.local else None


def _reopen(reopen: dict[str, Any], path: str) -> Any:
    """Unpickling: the same dataset opened read-only, and the node at ``path`` in it."""
    dataset = Dataset(reopen["filename"], "r", format=reopen["format"], storage_options=reopen["storage_options"])
    return dataset if path == "/" else dataset[path]


__all__ = ["Dataset", "Group"]
