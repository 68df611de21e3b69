"""``NCZARR_V2``: NCZarr 2.0.0 on Zarr v2, as netcdf-c 4.10.1 writes and reads it.

Every netCDF extra lives in ``.zattrs`` (§2): ``_nczarr_superblock`` and ``_NCProperties`` in
the root, ``_nczarr_group`` in every group, ``_nczarr_array`` in every array, ``_nczarr_attr``
(the attribute types) everywhere. Reading also accepts the layouts of older netcdf-c
versions (§3): keys inside ``.zgroup``/``.zarray``, upper-case keys, and the separate
``.ncz*`` objects of 4.8.0.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import numpy as np

from nczarr.config import netcdf_c_dimension_separator
from nczarr.errors import FormatError, MissingNodeError
from nczarr.formats.attributes import as_netcdf_c_writes, values_to_json
from nczarr.formats.base import Convention, StoredDataset, checked_scope, path_of
from nczarr.formats.chunks import chunks_for
from nczarr.formats.codecs import netcdf_chain, storage_from_chain, stored_v2_codecs
from nczarr.formats.dialect import RootDocuments, compact_json, dumps
from nczarr.formats.documents import DocumentSource, is_nczarr_v2_root, start_reading
from nczarr.formats.fills import char_byte, fill_json, fill_to_netcdf
from nczarr.formats.keys import (
    ARRAY,
    ARRAY_DIMENSIONS,
    ATTR,
    ATTRS,
    GROUP,
    NCPROPERTIES,
    NCZARR_NCPROPERTIES,
    NETCDF_C_NCPROPERTIES,
    OLD_UPPER,
    SUPERBLOCK,
    join_path,
)
from nczarr.formats.tree import (
    anonymous_dimensions,
    default_maxstrlen,
    drop_anonymous,
    group_dimensions_json,
    listed_children,
    maxstrlen,
    nczarr_problems,
    raw_fqn,
    read_attributes,
    read_dimension_refs,
    read_dimensions,
    variable_dimensions,
)
from nczarr.formats.typecodes import parse_v2_typestr, type_code, v2_typestr
from nczarr.model import (
    AtomicType,
    AttributeValue,
    DataModel,
    Dataset,
    Dimension,
    Group,
    Resolver,
    Variable,
)
from nczarr.store.base import Store
from nczarr.values.storage import VariableStorage
from nczarr.values.types import DEFAULT_FILL, fill_attribute, numpy_dtype
from nczarr.zarr.hierarchy import new_array_metadata
from nczarr.zarr.jsonvalue import JSONObject
from nczarr.zarr.metadata import ZARRAY, ZATTRS, ZGROUP, ArrayMetadata, ArrayMetadataV2

#: The separate objects of NCZarr 1.0.0 (netcdf-c 4.8.0 and 4.8.1-dev, §3.1); the superblock
#: is V1_SUPERBLOCK.
_V1_GROUP = ".nczgroup"
_V1_ARRAYS = (".nczarray", ".nczvar")
_V1_ATTRS = (".nczattrs", ".nczattr")
_ZARR_DOCS = (ZGROUP, ZARRAY, ZATTRS)
#: The Zarr documents read of a node its parent lists as a group, or as an array: a group's
#: ``.zarray`` and an array's ``.zgroup`` would never be used (one request a node fewer).
_GROUP_DOCS = (ZGROUP, ZATTRS)
_ARRAY_DOCS = (ZARRAY, ZATTRS)
_V1_DOCS = (_V1_GROUP, *_V1_ARRAYS, *_V1_ATTRS)
_NODE_DOCS = (*_ZARR_DOCS, *_V1_DOCS)


@dataclass(frozen=True)
class ArrayPlan:
    """Everything about the array that holds a variable, in netCDF terms."""

    type: AtomicType
    dimensions: list[Dimension]
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    strlen: int
    endian: Literal["little", "big"]
    fill: AttributeValue  # None: no fill
    filters: list[JSONObject] | None
    compressor: JSONObject | None

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.type, self.endian, self.strlen)


class NczarrV2(Convention):
    """NCZarr 2.0.0 on Zarr v2. ``byte_compatible`` writes every metadata document byte for
    byte as netcdf-c 4.10.1 does (floats with 6 significant digits, shuffle element size 0,
    netcdf-c's ``_NCProperties``) and, as netcdf-c, no ``.zmetadata`` unless ``consolidated``
    is True; by default floats are exact, shuffle works in zarr-python too and ``.zmetadata``
    is written."""

    name: ClassVar[str] = "NCZARR_V2"
    zarr_format: ClassVar[Literal[2, 3]] = 2

    def __init__(
        self, byte_compatible: bool = False, *, consolidated: bool | None = None, dimension_separator: str | None = None
    ) -> None:
        super().__init__(consolidated=not byte_compatible if consolidated is None else consolidated)
        self.byte_compatible = byte_compatible
        #: The chunk key separator of new arrays: netcdf-c's ``ZARR.DIMENSION_SEPARATOR`` when set, else ``.``.
        self.dimension_separator = dimension_separator or netcdf_c_dimension_separator() or "."

    # -- detection and checks ----------------------------------------------------------

    @classmethod
    def recognises(cls, root_documents: Mapping[str, bytes]) -> bool:
        return is_nczarr_v2_root(root_documents)

    def problems(self, dataset: Dataset, only: Variable | None = None) -> list[str]:
        found = nczarr_problems(dataset, only)
        for group, variables, whole in checked_scope(dataset, only):
            for user_type in group.types if whole else ():
                found.append(
                    f"{user_type.fqn}: user-defined types cannot be stored in {self.name} "
                    "(netcdf-c cannot read them from Zarr); use NCZARR"
                )
            for variable in variables:
                if not isinstance(variable.type, AtomicType):
                    found.append(
                        f"{variable.fqn}: variable of user-defined type {variable.type} cannot be "
                        f"stored in {self.name}; use NCZARR"
                    )
            owners: list[Group | Variable] = [group, *variables] if whole else list(variables)
            for owner in owners:
                for attribute in owner.attributes:
                    if not isinstance(attribute.type, AtomicType):
                        found.append(
                            f"{attribute.fqn}: attribute of user-defined type {attribute.type} "
                            f"cannot be stored in {self.name}; use NCZARR"
                        )
        return found

    # -- reading -----------------------------------------------------------------------

    def read(
        self, store: Store, *, use_consolidated: bool | None = None, root: RootDocuments | None = None
    ) -> StoredDataset:
        source, dataset, stored = start_reading(self, store, use_consolidated, root)
        pending: list[tuple[Group, str, dict[str, Any]]] = []
        self._read_group(source, "", dataset, pending)
        resolver = Resolver()
        for group, name, docs in pending:
            self._read_array(group, name, docs, resolver, stored)
        drop_anonymous(dataset)
        return stored

    def _read_group(
        self,
        source: DocumentSource,
        path: str,
        group: Group,
        pending: list[tuple[Group, str, dict[str, Any]]],
    ) -> None:
        """Read the group at ``path`` and every group below it, parents first (with a stack,
        not recursion: a tree may be deeper than Python's recursion limit)."""
        groups = [(path, group)]
        while groups:
            path, group = groups.pop()
            docs = _node_documents(source, [path], _GROUP_DOCS)[path]
            if ZGROUP not in docs:
                raise MissingNodeError(f"{join_path(path, ZGROUP)}: missing; group {group.fqn} is listed but absent")
            info = _first_dict(
                docs, (ZATTRS, GROUP), (ZGROUP, GROUP), (ZGROUP, OLD_UPPER[GROUP]), (_V1_GROUP,)
            )
            where = join_path(path, ZATTRS)
            superblock = docs.get(ZATTRS, {}).get(SUPERBLOCK) if path == "" and isinstance(docs.get(ZATTRS), dict) else None
            if isinstance(superblock, dict) and superblock.get("data_model") == DataModel.CLASSIC.value:
                assert isinstance(group, Dataset)  # the root
                group.data_model = DataModel.CLASSIC
            read_dimensions(group, info, where)
            _read_attributes(group, docs, path, None)
            names, group_names = listed_children(info, where, "arrays", "vars")
            found = _node_documents(source, [join_path(path, name) for name in names], _ARRAY_DOCS)
            for name in names:
                array_docs = found[join_path(path, name)]
                if ZARRAY not in array_docs:
                    raise MissingNodeError(
                        f"{join_path(join_path(path, name), ZARRAY)}: missing; array is listed in {where}"
                    )
                pending.append((group, name, array_docs))
            children = [(join_path(path, name), group.add_group(name)) for name in group_names]
            groups.extend(reversed(children))

    def _read_array(
        self, group: Group, name: str, docs: dict[str, Any], resolver: Resolver, stored: StoredDataset
    ) -> None:
        path = join_path(path_of(group.fqn), name)
        where = join_path(path, ZARRAY)
        zarray = dict(docs[ZARRAY])
        type = parse_v2_typestr(zarray.get("dtype"), where)[0]
        info = _first_dict(
            docs,
            (ZATTRS, ARRAY),
            (ZARRAY, ARRAY),
            (ZARRAY, OLD_UPPER[ARRAY]),
            (_V1_ARRAYS[0],),
            (_V1_ARRAYS[1],),
        )
        refs = info.get("dimension_references", info.get("dimrefs", []))
        scalar = "scalar" in info or info.get("storage") == "scalar"
        shape = tuple(zarray.get("shape", ()))
        variable = group.add_variable(name, type)
        read_dimension_refs(variable, [] if scalar else refs, () if scalar else shape, where, resolver)
        # the _FillValue attribute is the one .zattrs holds (netcdf-c 4.10.1 shows no other);
        # a fill_value without it still fills missing chunks
        _read_attributes(variable, docs, path, type)
        stored_fill = zarray.get("fill_value")
        metadata = _engine_metadata(zarray, type, docs.get(ZATTRS, {}), where)
        endian = "big" if metadata.dtype.byteorder == ">" and metadata.dtype.itemsize > 1 else "native"
        chain = [*(metadata.filters or ()), *([metadata.compressor] if metadata.compressor else [])]
        raw = {"filters": zarray.get("filters"), "compressor": zarray.get("compressor")}
        stored.storage[variable.fqn] = storage_from_chain(
            chain, metadata.chunks, endian, stored_fill is not None, raw
        )
        stored.arrays[variable.fqn] = metadata

    # -- writing -----------------------------------------------------------------------

    def plan(
        self,
        variable: Variable,
        storage: VariableStorage,
        resolver: Resolver | None = None,
        read: ArrayMetadata | None = None,
    ) -> ArrayPlan:
        """How ``variable`` is stored with these settings (``read``: the metadata its array
        was read with, whose numeric fill value stays when no ``_FillValue`` says another)."""
        resolver = resolver or Resolver()
        type = variable.type
        if not isinstance(type, AtomicType):
            raise FormatError(f"{variable.fqn}: user-defined type {type} cannot be stored in {self.name}")
        dimensions = variable_dimensions(variable, resolver)
        strlen = maxstrlen(variable) if type is AtomicType.STRING else 1
        itemsize = 8 if type is AtomicType.STRING else type.size or 1
        shape = tuple(d.size for d in dimensions) or (1,)
        chunks = chunks_for(storage, dimensions, shape, itemsize)
        endian: Literal["little", "big"] = "big" if storage.endian == "big" else "little"
        fill = None
        if storage.fill:
            value = fill_attribute(variable)
            fill = DEFAULT_FILL[type] if value is None else value
            if value is None and read is not None and read.fill_value is not None and _is_number(type):
                fill = fill_to_netcdf(type, read.fill_value)
        stored_v2 = stored_v2_codecs(storage)
        if stored_v2 is not None:
            filters, compressor = stored_v2
            if not self.byte_compatible:
                filters = [_real_shuffle(f, itemsize) for f in filters] if filters else filters
        else:
            chain = netcdf_chain(
                storage, numpy_dtype(type, endian, strlen).itemsize, self.byte_compatible
            )
            filters, compressor = (chain[:-1] or None, chain[-1]) if chain else (None, None)
        return ArrayPlan(type, dimensions, shape, chunks, strlen, endian, fill, filters, compressor)

    def array_metadata(self, variable: Variable, storage: VariableStorage) -> ArrayMetadata:
        plan = self.plan(variable, storage)
        fill = plan.fill
        if isinstance(fill, str):
            fill = char_byte(fill) if plan.type is AtomicType.CHAR else fill.encode()
        metadata = new_array_metadata(
            zarr_format=2,
            shape=plan.shape,
            dtype=plan.dtype,
            chunks=plan.chunks,
            fill_value=fill,
            filters=plan.filters,
            compressor=plan.compressor,
            dimension_separator=self.dimension_separator,  # type: ignore[arg-type]
        )
        return metadata if plan.fill is not None else replace(metadata, fill_value=None)

    def documents(self, stored: StoredDataset) -> dict[str, bytes]:
        dataset = stored.dataset
        resolver = Resolver()
        out: dict[str, bytes] = {}
        dump = self._dump
        for group in dataset.walk():
            path = path_of(group.fqn)
            attrs, types = self._attributes(group, default_maxstrlen(dataset))
            is_root = group is dataset
            if is_root:
                attrs[NCPROPERTIES] = (
                    NETCDF_C_NCPROPERTIES if self.byte_compatible else NCZARR_NCPROPERTIES
                )
                types[NCPROPERTIES] = ">S1"
            dimensions = [*group.dimensions, *(anonymous_dimensions(dataset) if is_root else [])]
            attrs[GROUP] = {
                "dimensions": group_dimensions_json(dimensions, dict_form=False),
                "arrays": [v.name for v in group.variables],
                "groups": [g.name for g in group.groups],
            }
            types[GROUP] = "|J0"
            if is_root:
                attrs[SUPERBLOCK] = {"version": "2.0.0"}
                if dataset.data_model is DataModel.CLASSIC and not self.byte_compatible:
                    # as NCZARR (v3) records it; netcdf-c ignores the key
                    attrs[SUPERBLOCK]["data_model"] = DataModel.CLASSIC.value
                types[SUPERBLOCK] = "|J0"
            out[join_path(path, ZGROUP)] = dump({"zarr_format": 2})
            out[join_path(path, ZATTRS)] = dump(_with_types(attrs, types))
            for variable in group.variables:
                vpath = join_path(path, variable.name)
                storage = stored.storage.get(variable.fqn, VariableStorage())
                read = stored.arrays.get(variable.fqn)
                plan = self.plan(variable, storage, resolver, read)
                zarray = {
                    "zarr_format": 2,
                    "shape": list(plan.shape),
                    "dtype": v2_typestr(plan.type, plan.endian, plan.strlen),
                    "chunks": list(plan.chunks),
                    "fill_value": None if plan.fill is None else fill_json(plan.type, plan.fill),
                    "order": "C",
                    "compressor": plan.compressor,
                    "filters": plan.filters,
                }
                # the stored array's chunk keys stay; netcdf-c names the separator when not "."
                separator = getattr(read, "dimension_separator", None) or self.dimension_separator
                if separator != ".":
                    zarray["dimension_separator"] = separator
                attrs, types = self._attributes(variable, maxstrlen(variable))
                attrs[ARRAY_DIMENSIONS] = [d.name for d in plan.dimensions] or ["_scalar_"]
                info: dict[str, Any] = {"dimension_references": [raw_fqn(d) for d in plan.dimensions]}
                if not plan.dimensions:
                    info["scalar"] = 1
                info["storage"] = "chunked"
                attrs[ARRAY] = info
                types[ARRAY] = "|J0"
                out[join_path(vpath, ZARRAY)] = dump(zarray)
                out[join_path(vpath, ZATTRS)] = dump(_with_types(attrs, types))
        return out

    def _dump(self, obj: Any) -> bytes:
        return dumps(obj, byte_compatible=self.byte_compatible)

    def _attributes(self, owner: Group | Variable, strlen: int) -> tuple[dict[str, Any], dict[str, str]]:
        attrs: dict[str, Any] = {}
        types: dict[str, str] = {}
        for attribute in owner.attributes:
            type = attribute.type
            assert isinstance(type, AtomicType)  # problems() refuses user types
            attrs[attribute.name] = values_to_json(type, as_netcdf_c_writes(type, attribute.values))
            types[attribute.name] = type_code(type, strlen)
        return attrs, types


def _real_shuffle(codec: dict[str, Any], itemsize: int) -> dict[str, Any]:
    if codec.get("id") == "shuffle" and not codec.get("elementsize"):
        return {**codec, "elementsize": itemsize}
    return codec


def _with_types(attrs: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    types[ATTR] = "|J0"
    attrs[ATTR] = {"types": types}
    return attrs


def _read_attributes(
    owner: Group | Variable, docs: dict[str, Any], path: str, var_type: AtomicType | None
) -> None:
    holder = _first_dict(
        docs,
        (ZATTRS, ATTR),
        (ZATTRS, ATTRS),
        (ZATTRS, OLD_UPPER[ATTR]),
        (_V1_ATTRS[0],),
        (_V1_ATTRS[1],),
    )
    types = holder.get("types", holder.get("attribute_types", {}))
    read_attributes(owner, docs.get(ZATTRS, {}), types, join_path(path, ZATTRS), var_type)


def _is_number(type: AtomicType) -> bool:
    return type not in (AtomicType.CHAR, AtomicType.STRING)


def _engine_metadata(
    zarray: dict[str, Any], type: AtomicType, attrs: dict[str, Any], where: str
) -> ArrayMetadataV2:
    """The engine's metadata for a netcdf-c array: char as one byte, string fill values as
    text (netcdf-c) rather than base64 (zarr-python), a missing ``order`` taken as C."""
    doc = dict(zarray)
    doc.setdefault("order", "C")
    for key in (ARRAY, OLD_UPPER[ARRAY]):
        doc.pop(key, None)
    if type is AtomicType.CHAR:
        doc["dtype"] = ">S1"
    fill = doc.get("fill_value")
    if type in (AtomicType.CHAR, AtomicType.STRING) and fill is not None:
        text = fill if isinstance(fill, str) else compact_json(fill)
        raw = char_byte(text) if type is AtomicType.CHAR else text.encode()
        doc["fill_value"] = base64.standard_b64encode(raw).decode()
    try:
        return ArrayMetadataV2.from_json(doc, attrs)
    except ValueError as exc:
        raise FormatError(f"{where}: {exc}") from exc


def _node_documents(source: DocumentSource, paths: list[str], names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The documents of the nodes at ``paths`` (by path, then by document name): the Zarr
    documents ``names`` in one batch, then, in a second, the NCZarr 1.0 documents of the
    nodes whose Zarr documents carry no NCZarr key (netcdf-c 4.8.0 kept its keys in documents
    of their own): a dataset of netcdf-c 4.8.1 or later, or nczarr's, costs 2 reads a node,
    not 8."""
    found = source.documents(join_path(path, name) for path in paths for name in names)
    legacy = [path for path in paths if not _carries_nczarr_keys(found, path)]
    if legacy:
        found |= source.documents(join_path(path, name) for path in legacy for name in _V1_DOCS)
    return {
        path: {name: found[key] for name in _NODE_DOCS if (key := join_path(path, name)) in found}
        for path in paths
    }


def _carries_nczarr_keys(found: dict[str, Any], path: str) -> bool:
    """Whether a Zarr document of the node at ``path`` holds a ``_nczarr_*`` (or
    ``_NCZARR_*``) key."""
    for name in _ZARR_DOCS:
        doc = found.get(join_path(path, name))
        if isinstance(doc, dict) and any(isinstance(k, str) and k.lower().startswith("_nczarr") for k in doc):
            return True
    return False


def _first_dict(docs: dict[str, Any], *places: tuple[str, ...]) -> dict[str, Any]:
    """The first object found at one of ``places`` (a document, or a document and a key)."""
    for place in places:
        value: Any = docs.get(place[0])
        if value is not None and len(place) > 1:
            value = value.get(place[1])
        if isinstance(value, dict):
            return value
    return {}
