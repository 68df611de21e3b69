"""``ZARR`` and ``ZARR_V2``: pure Zarr as xarray writes it, without any ``_nczarr_*`` key.

Dimensions are named by ``dimension_names`` (v3) or the ``_ARRAY_DIMENSIONS`` attribute (v2);
attributes are plain JSON whose types are inferred on reading as netcdf-c infers them
(§2.10.4). Reading accepts any Zarr hierarchy without NCZarr keys (xarray, zarr-python,
netcdf-c's ``mode=zarr``): groups and arrays are found by listing, sorted by name (§4.2).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar, Literal

import numpy as np

from nczarr.errors import FormatError
from nczarr.formats.attributes import values_to_json
from nczarr.formats.base import Convention, StoredDataset, checked_scope, path_of
from nczarr.formats.chunks import chunks_for, keep_chunk_keys
from nczarr.formats.codecs import netcdf_chain, storage_from_chain, stored_v2_codecs, stored_v3_codecs, v3_codecs
from nczarr.formats.dialect import RootDocuments
from nczarr.formats.documents import DocumentSource, is_nczarr_v2_root, root_attributes, start_reading
from nczarr.formats.fills import char_byte, fill_to_netcdf, keep_fill, xarray_fill_json
from nczarr.formats.keys import ANONYMOUS_PREFIX, ARRAY_DIMENSIONS, SUPERBLOCK, join_path
from nczarr.formats.tree import nczarr_problems, raw_fqn, read_attributes, reference_of, variable_dimensions
from nczarr.formats.typecodes import parse_v2_typestr
from nczarr.model import AtomicType, Dataset, Group, Resolver, Variable
from nczarr.store.base import Store
from nczarr.values.storage import VariableStorage
from nczarr.values.types import DEFAULT_FILL, fill_attribute, numpy_dtype
from nczarr.zarr.hierarchy import new_array_metadata
from nczarr.zarr.metadata import (
    ZARR_JSON,
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ArrayMetadata,
    ArrayMetadataV2,
    GroupMetadataV2,
    GroupMetadataV3,
    parse_node,
)

log = logging.getLogger(__name__)

#: What netcdf-c 4.10.1 writes for a scalar in pure Zarr: shape [1] and this name (§4.1).
NETCDF_SCALAR = "_scalar_"


class PureZarr(Convention):
    """Pure Zarr v3 (``format="ZARR"``): ``dimension_names``, plain attributes."""

    name: ClassVar[str] = "ZARR"
    zarr_format: ClassVar[Literal[2, 3]] = 3

    @classmethod
    def recognises(cls, root_documents: Mapping[str, bytes]) -> bool:
        if cls.zarr_format == 3:
            attributes = root_attributes(root_documents)
            return attributes is not None and SUPERBLOCK not in attributes
        return ZGROUP in root_documents and not is_nczarr_v2_root(root_documents)

    def problems(self, dataset: Dataset, only: Variable | None = None) -> list[str]:
        found = nczarr_problems(dataset, only)
        resolver = Resolver()
        for group, variables, whole in checked_scope(dataset, only):
            for user_type in group.types if whole else ():
                found.append(f"{user_type.fqn}: pure Zarr has no user-defined types; use NCZARR")
            for variable in variables:
                if not isinstance(variable.type, AtomicType):
                    found.append(f"{variable.fqn}: pure Zarr has no user-defined types; use NCZARR")
                for ref in variable.dimensions:
                    if not isinstance(ref, str):
                        continue
                    dimension = resolver.dimension(group, ref)
                    if dimension is not None and resolver.dimension(group, dimension.name) is not dimension:
                        found.append(
                            f"{variable.fqn}: dimension {dimension.fqn} is hidden by another "
                            f"{dimension.name!r} nearer to the variable; pure Zarr names dimensions "
                            "by their plain names"
                        )
            owners: list[Group | Variable] = [group, *variables] if whole else list(variables)
            for owner in owners:
                for attribute in owner.attributes:
                    if not isinstance(attribute.type, AtomicType):
                        found.append(f"{attribute.fqn}: pure Zarr has no user-defined types; use NCZARR")
        return found

    # -- reading -----------------------------------------------------------------------

    def read(
        self, store: Store, *, use_consolidated: bool | None = None, root: RootDocuments | None = None
    ) -> StoredDataset:
        source, dataset, stored = start_reading(self, store, use_consolidated, root)
        root_node = self._nodes(source, [""])[""]
        if root_node is None or root_node.node_type != "group":
            raise FormatError(f"{store!r}: the root of the store is not a Zarr v{self.zarr_format} group")
        axes: list[tuple[Variable, list[Any]]] = []
        self._read_group(source, "", dataset, root_node, stored, axes)
        # dimensions are found by name as arrays are read and a later one may hide an
        # earlier one, so references are made once all exist
        resolver = Resolver()
        for variable, dimensions in axes:
            group = variable.group
            assert group is not None
            variable.dimensions = [
                d if isinstance(d, int) else reference_of(raw_fqn(d), group, resolver) for d in dimensions
            ]
        return stored

    def _nodes(self, source: DocumentSource, paths: list[str]) -> dict[str, Any]:
        """The metadata of the nodes at ``paths`` (None where there is none), in one batch."""
        names = (ZARR_JSON,) if self.zarr_format == 3 else (ZARRAY, ZGROUP, ZATTRS)
        found = source.documents(join_path(path, n) for path in paths for n in names)
        nodes: dict[str, Any] = {}
        for path in paths:
            # parse_node reads the documents' bytes: those the source parsed are written back
            docs = {n: json.dumps(found[key]).encode() for n in names if (key := join_path(path, n)) in found}
            if not any(n in docs for n in (ZARR_JSON, ZARRAY, ZGROUP)):
                nodes[path] = None
                continue
            try:
                nodes[path] = parse_node(docs, path)
            except ValueError as exc:  # MetadataError names the document already
                raise FormatError(str(exc)) from exc
        return nodes

    def _read_group(
        self,
        source: DocumentSource,
        path: str,
        group: Group,
        metadata: Any,
        stored: StoredDataset,
        axes: list[tuple[Variable, list[Any]]],
    ) -> None:
        """Read the group at ``path`` and every group below it, parents first (with a stack,
        not recursion: a tree may be deeper than Python's recursion limit)."""
        pending = [(path, group, metadata)]
        while pending:
            path, group, metadata = pending.pop()
            where = join_path(path, ZARR_JSON if self.zarr_format == 3 else ZATTRS)
            read_attributes(group, metadata.attributes, {}, where)
            children = source.children(path)
            found = self._nodes(source, [join_path(path, name) for name in children])
            subgroups = []
            for name in children:
                node = found[join_path(path, name)]
                if node is None:
                    continue
                if node.node_type == "group":
                    subgroups.append((join_path(path, name), group.add_group(name), node))
                else:
                    self._read_array(group, name, node, stored, axes)
            pending.extend(reversed(subgroups))

    def _read_array(
        self,
        group: Group,
        name: str,
        metadata: ArrayMetadata,
        stored: StoredDataset,
        axes: list[tuple[Variable, list[Any]]],
    ) -> None:
        path = join_path(path_of(group.fqn), name)
        where = join_path(path, ZARR_JSON if self.zarr_format == 3 else ZARRAY)
        type = _netcdf_type(metadata, where)
        attrs = metadata.attributes
        names: Any = metadata.dimension_names if self.zarr_format == 3 else None
        if names is None:
            names = attrs.get(ARRAY_DIMENSIONS)
        shape = tuple(metadata.shape)
        if shape == (1,) and names == [NETCDF_SCALAR]:
            shape, names = (), []
        if names is not None and (not isinstance(names, list | tuple) or len(names) != len(shape)):
            raise FormatError(
                f"{where}: dimension names {json.dumps(names)} do not match shape {list(shape)}"
            )
        variable = group.add_variable(name, type)
        axis_names = [None] * len(shape) if names is None else names
        axes.append((variable, [_dimension_for(group, n, size, where) for n, size in zip(axis_names, shape)]))
        read_attributes(variable, attrs, {}, where, type, xarray_fill=self.zarr_format == 3)
        if self.zarr_format == 2 and metadata.fill_value is not None:
            # xarray's v2 convention: fill_value is the _FillValue (v3 keeps it an attribute)
            keep_fill(variable, type, fill_to_netcdf(type, metadata.fill_value))
        raw: Any
        if self.zarr_format == 3:
            chain, raw = list(metadata.codecs), list(metadata.codecs)  # type: ignore[union-attr]
            endian = (
                "big"
                if any(
                    k.get("name") == "bytes" and k.get("configuration", {}).get("endian") == "big"
                    for k in chain
                )
                else "native"
            )
        else:
            assert isinstance(metadata, ArrayMetadataV2)
            chain = [*(metadata.filters or ()), *([metadata.compressor] if metadata.compressor else [])]
            raw = {
                "filters": list(metadata.filters) if metadata.filters else None,
                "compressor": metadata.compressor,
            }
            endian = "big" if metadata.dtype.byteorder == ">" else "native"
        stored.storage[variable.fqn] = storage_from_chain(
            chain, tuple(metadata.chunk_shape), endian, metadata.fill_value is not None, raw
        )
        stored.arrays[variable.fqn] = metadata

    # -- writing -----------------------------------------------------------------------

    def array_metadata(self, variable: Variable, storage: VariableStorage) -> ArrayMetadata:
        return self._metadata(variable, storage, Resolver())

    def _metadata(self, variable: Variable, storage: VariableStorage, resolver: Resolver) -> ArrayMetadata:
        type = variable.type
        if not isinstance(type, AtomicType):
            raise FormatError(f"{variable.fqn}: pure Zarr has no user-defined types; use NCZARR")
        dimensions = variable_dimensions(variable, resolver)
        shape = tuple(d.size for d in dimensions)
        dtype = _dtype(type, storage.endian if self.zarr_format == 2 else "little")
        chunks = chunks_for(storage, dimensions, shape, 8 if dtype.hasobject else dtype.itemsize)
        value = fill_attribute(variable)
        fill = DEFAULT_FILL[type] if value is None else value
        if type is AtomicType.CHAR:
            fill = char_byte(str(fill))
        names = [d.name for d in dimensions]
        codecs: dict[str, Any] = {}
        stored_v2 = stored_v2_codecs(storage)
        if self.zarr_format == 3:
            codecs["codecs"] = stored_v3_codecs(storage) or v3_codecs(dtype, storage)
            codecs["dimension_names"] = names if shape else None
        elif stored_v2 is not None:
            codecs["filters"], codecs["compressor"] = stored_v2
        else:
            chain = netcdf_chain(storage, 1 if dtype.hasobject else dtype.itemsize, False)
            if dtype.hasobject:
                chain = [k for k in chain if k["id"] != "shuffle"]
            codecs["filters"], codecs["compressor"] = (
                (chain[:-1] or None, chain[-1]) if chain else (None, None)
            )
        metadata = new_array_metadata(
            zarr_format=self.zarr_format, shape=shape, dtype=dtype, chunks=chunks, fill_value=fill, **codecs
        )
        if not storage.fill and self.zarr_format == 2:
            metadata = replace(metadata, fill_value=None)
        return metadata

    def documents(self, stored: StoredDataset) -> dict[str, bytes]:
        resolver = Resolver()
        out: dict[str, bytes] = {}
        for group in stored.dataset.walk():
            path = path_of(group.fqn)
            attrs = _attributes(group)
            node: Any = (
                GroupMetadataV3(attributes=attrs)
                if self.zarr_format == 3
                else GroupMetadataV2(attributes=attrs)
            )
            out |= {join_path(path, k): v for k, v in node.documents().items()}
            for variable in group.variables:
                storage = stored.storage.get(variable.fqn, VariableStorage())
                metadata = keep_chunk_keys(self._metadata(variable, storage, resolver), stored.arrays.get(variable.fqn))
                attrs = _attributes(variable)
                fill = variable.find_attribute("_FillValue")
                if self.zarr_format == 3 and fill is not None and isinstance(fill.type, AtomicType):
                    attrs["_FillValue"] = xarray_fill_json(fill.type, fill.values, char_as_number=False)
                if self.zarr_format == 2:
                    # xarray's v2 convention: the fill value is fill_value, not an attribute
                    attrs.pop("_FillValue", None)
                    attrs = {
                        ARRAY_DIMENSIONS: [d.name for d in variable_dimensions(variable, resolver)],
                        **attrs,
                    }
                documents = metadata.with_attributes(attrs).documents()
                out |= {join_path(join_path(path, variable.name), k): v for k, v in documents.items()}
        return out


class PureZarrV2(PureZarr):
    """Pure Zarr v2 (``format="ZARR_V2"``): ``_ARRAY_DIMENSIONS``, plain attributes."""

    name: ClassVar[str] = "ZARR_V2"
    zarr_format: ClassVar[Literal[2, 3]] = 2


def _attributes(owner: Group | Variable) -> dict[str, Any]:
    """Attribute values as plain JSON (NaN and infinities as JSON's bare tokens)."""
    out: dict[str, Any] = {}
    for attribute in owner.attributes:
        data = values_to_json(attribute.type, attribute.values)  # type: ignore[arg-type]
        if attribute.type is AtomicType.STRING and len(attribute.values) == 1:
            data = attribute.values[0]
        out[attribute.name] = _plain_floats(data) if attribute.type.is_float else data  # type: ignore[union-attr]
    return out


def _plain_floats(data: Any) -> Any:
    if isinstance(data, list):
        return [_plain_floats(v) for v in data]
    if isinstance(data, str):
        return float(data.replace("Infinity", "inf"))
    return data


def _dtype(type: AtomicType, endian: str) -> np.dtype:
    if type is AtomicType.STRING:
        return np.dtype(object)
    return numpy_dtype(type, endian)


def _netcdf_type(metadata: ArrayMetadata, where: str) -> AtomicType:
    """The netCDF type of an array's data type: strings of every kind are string, one-byte
    fixed bytes char, booleans ubyte."""
    data_type = metadata.data_type
    kind, dtype = data_type.kind, data_type.dtype
    if kind in ("string", "fixed_unicode"):
        return AtomicType.STRING
    if kind == "fixed_bytes":
        return AtomicType.CHAR if dtype.itemsize == 1 else AtomicType.STRING
    if kind == "bool":
        return AtomicType.UBYTE
    if kind in ("int", "uint", "float"):
        try:
            return parse_v2_typestr("<" + dtype.str[1:], where)[0]
        except FormatError:
            pass
    raise FormatError(f"{where}: data type {data_type} has no netCDF type")


def _dimension_for(group: Group, name: Any, length: int, where: str) -> Any:
    """The dimension an array axis names: found in the array's group or the nearest ancestor
    that has one of that name when the length agrees, else new in the array's group; an axis
    without a name (or with netcdf-c's anonymous name for its length) is an anonymous
    dimension, its length.

    Arrays of one group that name one dimension with different lengths are what a writer
    killed while growing it leaves (each array has its own document): the dimension is
    then unlimited and as long as the longest, as in netCDF (netcdf-c refuses the dataset)."""
    if name is None or name == f"{ANONYMOUS_PREFIX}{length}":
        return length
    if not isinstance(name, str) or not name or "/" in name:
        raise FormatError(f"{where}: dimension name {json.dumps(name)} is not a netCDF name")
    scope: Group | None = group
    while scope is not None:
        found = scope.find_dimension(name)
        if found is not None:
            if found.size == length:
                return found
            if scope is group:
                log.log(
                    logging.DEBUG if found.unlimited else logging.WARNING,
                    "%s: dimension %r has length %d here and %d elsewhere in %s: reading it as "
                    "unlimited, of the longest length (a writer was interrupted?)",
                    where, name, length, found.size, group.fqn,
                )
                found.unlimited = True
                found.size = max(found.size, length)
                return found
            break
        scope = scope.group
    return group.add_dimension(name, length)
