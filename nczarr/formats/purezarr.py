"""``ZARR`` and ``ZARR_V2``: pure Zarr as xarray writes it.

Dimensions are named by ``dimension_names`` (v3) or the ``_ARRAY_DIMENSIONS`` attribute (v2);
attributes are plain JSON whose types are inferred on reading as netcdf-c infers them
(§2.10.4), except those a type hint names: the one ``_nczarr_*`` key written, only for
attributes inference would type otherwise (a float32, a short, one string), which netcdf-c
reads in pure Zarr too and xarray hides (see :func:`_attributes`). Compounds are kept as
xarray keeps numpy's records: arrays as structured data types, attributes as lists of their
field values. Reading accepts any Zarr hierarchy without NCZarr keys (xarray, zarr-python,
netcdf-c's ``mode=zarr``): groups and arrays are found by listing, sorted by name (§4.2).
Unnamed axes are anonymous dimensions (netcdf-c's ``_Anonymous_Dim_<n>``); a name reused
with other lengths in one group (an image pyramid) becomes ``<name>_2``, ... (see
:class:`_GroupDimensions` and docs/format.md).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import numpy as np

from nczarr.config import netcdf_c_dimension_separator
from nczarr.errors import FormatError, UnsizedTypeError
from nczarr.formats.attributes import as_netcdf_c_writes, infer_attribute, values_to_json
from nczarr.formats.base import Convention, StoredDataset, checked_scope, path_of
from nczarr.formats.chunks import chunks_for, keep_chunk_keys
from nczarr.formats.codecs import netcdf_chain, storage_from_chain, stored_v2_codecs, stored_v3_codecs, v3_codecs
from nczarr.formats.dialect import RootDocuments
from nczarr.formats.documents import DocumentSource, is_nczarr_v2_root, root_attributes, start_reading
from nczarr.formats.fills import (
    add_view_attributes,
    added_view_attributes,
    char_byte,
    fill_json,
    xarray_fill_json,
)
from nczarr.formats.keys import ANONYMOUS_PREFIX, ARRAY_DIMENSIONS, ATTR, ATTRS, SUPERBLOCK, join_path
from nczarr.formats.tree import maxstrlen, nczarr_problems, raw_fqn, read_attributes, reference_of, variable_dimensions
from nczarr.formats.typecodes import type_code
from nczarr.model import (
    AtomicType,
    CompoundType,
    Dataset,
    Dimension,
    EnumType,
    Group,
    Resolver,
    TypeRef,
    UserType,
    Variable,
)
from nczarr.store.base import Store
from nczarr.values.storage import VariableStorage
from nczarr.values.types import (
    DEFAULT_FILL,
    NetcdfView,
    complex_dtype_of,
    fill_attribute,
    member_type,
    netcdf_view,
    numpy_dtype,
    packed_dtype,
)
from nczarr.zarr.draft import DRAFT_MEMBER, create_draft, draft_view, is_draft_entry_point
from nczarr.zarr.dtypes import DataType
from nczarr.zarr.hierarchy import new_array_metadata
from nczarr.zarr.jsonvalue import JSON, JSONObject
from nczarr.zarr.metadata import (
    ZARR_JSON,
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ArrayMetadata,
    ArrayMetadataV2,
    ArrayMetadataV3,
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
    #: Whether the ``_FillValue`` attribute is encoded as xarray encodes it for final v3
    #: (else plain JSON, as in v2).
    encoded_fill: ClassVar[bool] = True
    #: Whether a ``_FillValue`` attribute is written besides ``fill_value`` (not in the v3
    #: draft, where xarray kept it in ``fill_value`` only).
    fill_attribute: ClassVar[bool] = True

    def __init__(
        self,
        *,
        consolidated: bool = True,
        xarray: bool = True,
        netcdf_c_layout: bool = False,
        dimension_separator: str | None = None,
    ) -> None:
        super().__init__(consolidated=consolidated)
        #: The chunk key separator of new v2 arrays: netcdf-c's ``ZARR.DIMENSION_SEPARATOR``
        #: when set, else ``.``.
        self.dimension_separator = dimension_separator or netcdf_c_dimension_separator() or "."
        #: Whether dimension names are written and read (``dimension_names`` / ``_ARRAY_DIMENSIONS``);
        #: not in netcdf-c's ``#mode=noxarray``, where every dimension is anonymous.
        self.xarray = xarray
        #: Whether v2 scalars and strings are written as netcdf-c writes them (its ``#mode=zarr``
        #: URLs), which netcdf-c 4.10.1 needs to read them: scalars of shape [1] with dimension
        #: ``_scalar_`` rather than xarray's shape [], strings as fixed-length bytes of the
        #: variable's ``_nczarr_maxstrlen`` rather than vlen-utf8. A scalar read the netcdf-c way
        #: is written back that way anyway.
        self.netcdf_c_layout = netcdf_c_layout

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
                # a compound is kept as the data type of its arrays and in its attributes
                if complex_dtype_of(user_type) is None and _structured(user_type, resolver) is None:
                    found.append(f"{user_type.fqn}: pure Zarr has no such user-defined type; use NCZARR")
            for variable in variables:
                if _zarr_type(variable, resolver) is None:
                    found.append(f"{variable.fqn}: pure Zarr has no such user-defined type; use NCZARR")
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
                    if not isinstance(attribute.type, AtomicType) and _json_record_type(attribute.type, group, resolver) is None:
                        found.append(f"{attribute.fqn}: pure Zarr has no such user-defined type; use NCZARR")
        return found

    # -- reading -----------------------------------------------------------------------

    def read(
        self, store: Store, *, use_consolidated: bool | None = None, root: RootDocuments | None = None
    ) -> StoredDataset:
        source, dataset, stored = start_reading(self, store, use_consolidated, root)
        root_node = self._nodes(source, [""])[""]
        if root_node is None or root_node.node_type != "group":
            raise FormatError(f"{store!r}: the root of the store is not a Zarr v{self.zarr_format} group")
        axes: list[_Axes] = []
        self._read_group(source, "", dataset, root_node, stored, axes)
        # a group's dimensions are named once all its arrays are known, and a later one may
        # hide an earlier one, so references are made once all exist
        found = _find_dimensions(axes)
        resolver = Resolver()
        for array, dimensions in zip(axes, found):
            group = array.variable.group
            assert group is not None
            array.variable.dimensions = [
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
            docs = {
                n: json.dumps(_base64_fill(found[key]) if n == ZARRAY else found[key]).encode()
                for n in names
                if (key := join_path(path, n)) in found
            }
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
        axes: list[_Axes],
    ) -> None:
        """Read the group at ``path`` and every group below it, parents first (with a stack,
        not recursion: a tree may be deeper than Python's recursion limit)."""
        pending = [(path, group, metadata)]
        while pending:
            path, group, metadata = pending.pop()
            where = join_path(path, ZARR_JSON if self.zarr_format == 3 else ZATTRS)
            read_attributes(group, metadata.attributes, _type_hints(metadata.attributes, where), where)
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
        axes: list[_Axes],
    ) -> None:
        path = join_path(path_of(group.fqn), name)
        where = join_path(path, ZARR_JSON if self.zarr_format == 3 else ZARRAY)
        found = _netcdf_type(group, name, metadata, where)
        if found is None:
            stored.left_out[path] = metadata
            return
        type, view = found
        attrs = metadata.attributes
        names: Any = metadata.dimension_names if self.zarr_format == 3 else None
        if names is None:
            names = attrs.get(ARRAY_DIMENSIONS)
        if not self.xarray:
            names = None
        shape = tuple(metadata.shape)
        if shape == (1,) and names == [NETCDF_SCALAR]:
            shape, names = (), []
        axis_names = _fitted_names(names, shape, where)
        variable = group.add_variable(name, type)
        axes.append(_Axes(variable, list(axis_names), shape, where))
        # v2: the _FillValue attribute is only the one .zattrs holds, as netcdf-c 4.10.1 reads
        # it; fill_value alone fills missing chunks but is no attribute (xarray writes it there)
        hints = _type_hints(attrs, where, getattr(metadata, "extensions", None))
        read_attributes(variable, attrs, hints, where, type, xarray_fill=self.encoded_fill)
        add_view_attributes(variable, view)
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
        if not view.same_layout:  # codecs the settings cannot name may not fit netCDF's values
            raw = None
        stored.storage[variable.fqn] = storage_from_chain(
            chain, tuple(metadata.chunk_shape), endian, metadata.fill_value is not None, raw
        )
        stored.arrays[variable.fqn] = metadata

    # -- writing -----------------------------------------------------------------------

    def array_metadata(self, variable: Variable, storage: VariableStorage) -> ArrayMetadata:
        return self._metadata(variable, storage, Resolver())

    def _metadata(
        self, variable: Variable, storage: VariableStorage, resolver: Resolver, read: ArrayMetadata | None = None
    ) -> ArrayMetadata:
        """The metadata of ``variable``'s array (``read``: the metadata it was read with)."""
        type = _zarr_type(variable, resolver)
        if type is None:
            raise FormatError(f"{variable.fqn}: pure Zarr has no user-defined types; use NCZARR")
        dimensions = variable_dimensions(variable, resolver)
        shape = tuple(d.size for d in dimensions)
        netcdf_scalar = (
            not shape and self.zarr_format == 2 and (self.netcdf_c_layout or (read is not None and tuple(read.shape) == (1,)))
        )
        if netcdf_scalar:
            shape = (1,)
        endian = storage.endian if self.zarr_format == 2 else "little"
        dtype = _dtype(type, endian) if isinstance(type, AtomicType) else type.newbyteorder(">" if endian == "big" else "<")
        if type is AtomicType.STRING and self.zarr_format == 2 and self.netcdf_c_layout:
            dtype = np.dtype(f"S{maxstrlen(variable)}")  # netcdf-c 4.10.1 reads no vlen-utf8
        chunks = (1,) if netcdf_scalar else chunks_for(storage, dimensions, shape, 8 if dtype.hasobject else dtype.itemsize)
        value = fill_attribute(variable)
        # complex and structured: Zarr's default, zeros (netCDF's compound has none)
        fill: object = np.zeros((), dtype)[()] if dtype.fields is not None else 0
        if isinstance(type, AtomicType):
            fill = DEFAULT_FILL[type] if value is None else value
        if type is AtomicType.CHAR:
            fill = char_byte(str(fill))
        if dtype.kind == "S" and isinstance(fill, str):
            fill = fill.encode("utf-8")
        if value is None and read is not None and read.fill_value is not None and read.dtype == dtype:
            fill = read.fill_value  # a fill_value without a _FillValue attribute stays as read
        names = _stored_names(variable, dimensions, read, resolver)
        codecs: dict[str, Any] = {}
        stored_v2 = stored_v2_codecs(storage)
        if self.zarr_format == 3:
            codecs["codecs"] = stored_v3_codecs(storage) or v3_codecs(dtype, storage)
            codecs["dimension_names"] = names if shape and self.xarray else None
        elif stored_v2 is not None:
            codecs["filters"], codecs["compressor"] = stored_v2
        else:
            chain = netcdf_chain(storage, 1 if dtype.hasobject else dtype.itemsize, False)
            if dtype.hasobject:
                chain = [k for k in chain if k["id"] != "shuffle"]
            codecs["filters"], codecs["compressor"] = (
                (chain[:-1] or None, chain[-1]) if chain else (None, None)
            )
        if self.zarr_format == 2:
            codecs["dimension_separator"] = self.dimension_separator
        metadata = new_array_metadata(
            zarr_format=self.zarr_format, shape=shape, dtype=dtype, chunks=chunks, fill_value=fill, **codecs
        )
        if self.zarr_format == 2 and (not storage.fill or dtype.fields is not None):
            # a structured fill_value is null as xarray writes it (it fails on any other)
            metadata = replace(metadata, fill_value=None)
        return metadata

    def documents(self, stored: StoredDataset) -> dict[str, bytes]:
        resolver = Resolver()
        out: dict[str, bytes] = {}
        for group in stored.dataset.walk():
            path = path_of(group.fqn)
            attrs, hints = _attributes(group, self.zarr_format)
            if hints:  # in the attributes: zarr-python refuses other members of a group
                attrs[ATTR if self.zarr_format == 2 else ATTRS] = _hint_json(hints, self.zarr_format)
            node: Any = (
                GroupMetadataV3(attributes=attrs)
                if self.zarr_format == 3
                else GroupMetadataV2(attributes=attrs)
            )
            out |= {join_path(path, k): v for k, v in node.documents().items()}
            for variable in group.variables:
                storage = stored.storage.get(variable.fqn, VariableStorage())
                read = stored.arrays.get(variable.fqn)
                view = None if read is None else netcdf_view(read.data_type)
                mapped = isinstance(view, NetcdfView) and _is_mapped(variable, read)
                if mapped:  # a data type netCDF lacks, read as another: kept as stored
                    assert read is not None
                    metadata = read
                else:
                    metadata = keep_chunk_keys(self._metadata(variable, storage, resolver, read), read)
                attrs, hints = _attributes(variable, self.zarr_format)
                if hints and self.zarr_format == 2:
                    attrs[ATTR] = _hint_json(hints, 2)
                if isinstance(metadata, ArrayMetadataV3):  # a member zarr-python and xarray skip
                    extensions = {k: v for k, v in metadata.extensions.items() if k != ATTRS}
                    if hints:
                        extensions[ATTRS] = {"must_understand": False, **_hint_json(hints, 3)}
                    metadata = replace(metadata, extensions=extensions)
                fill = variable.find_attribute("_FillValue")
                if self.encoded_fill and fill is not None and isinstance(fill.type, AtomicType):
                    attrs["_FillValue"] = xarray_fill_json(fill.type, fill.values, char_as_number=False)
                if mapped and isinstance(view, NetcdfView):
                    for name in added_view_attributes(variable, view):
                        attrs.pop(name, None)
                if not self.fill_attribute:
                    attrs.pop("_FillValue", None)
                elif not self.encoded_fill and fill is not None and isinstance(fill.type, AtomicType):
                    # the fill value is fill_value (xarray's v2 convention) and, as netcdf-c
                    # writes it, the _FillValue attribute (the one netcdf-c reads) too
                    attrs["_FillValue"] = fill_json(fill.type, fill_attribute(variable))
                if self.zarr_format == 2 and self.xarray:
                    netcdf_scalar = not variable.dimensions and tuple(metadata.shape) == (1,)
                    attrs = {
                        ARRAY_DIMENSIONS: [NETCDF_SCALAR]
                        if netcdf_scalar
                        else _stored_names(variable, variable_dimensions(variable, resolver), read, resolver),
                        **attrs,
                    }
                documents = metadata.with_attributes(attrs).documents()
                out |= {join_path(join_path(path, variable.name), k): v for k, v in documents.items()}
        groups = {path_of(group.fqn) for group in stored.dataset.walk()}
        for path, metadata in stored.left_out.items():
            if path.rpartition("/")[0] in groups:  # not when its group was renamed or removed
                out |= {join_path(path, k): v for k, v in metadata.documents().items()}
        return out


class PureZarrV2(PureZarr):
    """Pure Zarr v2 (``format="ZARR_V2"``): ``_ARRAY_DIMENSIONS``, plain attributes."""

    name: ClassVar[str] = "ZARR_V2"
    zarr_format: ClassVar[Literal[2, 3]] = 2
    encoded_fill: ClassVar[bool] = False


class PureZarrDraft(PureZarr):
    """Pure Zarr in the layout of the Zarr v3 core-protocol draft (``format="ZARR_V3_DRAFT"``),
    as zarr-python 2.11–2.18's experimental v3 API and xarray on it wrote it: dimensions in
    ``_ARRAY_DIMENSIONS``, no consolidated metadata. A session works in the store's final v3
    view (:mod:`nczarr.zarr.draft`), so reading and writing are those of ``ZARR`` but for the
    fill value, which is xarray's: ``fill_value`` alone holds ``_FillValue`` (read as that
    attribute unless it is netCDF's default fill), and null is netCDF's "no fill"."""

    name: ClassVar[str] = "ZARR_V3_DRAFT"
    encoded_fill: ClassVar[bool] = False
    fill_attribute: ClassVar[bool] = False

    def __init__(self, *, consolidated: bool = False, xarray: bool = True, netcdf_c_layout: bool = False) -> None:
        super().__init__(consolidated=False, xarray=xarray, netcdf_c_layout=netcdf_c_layout)

    @classmethod
    def recognises(cls, root_documents: Mapping[str, bytes]) -> bool:
        return is_draft_entry_point(root_documents.get(ZARR_JSON))

    def storage_view(self, store: Store) -> Store:
        return draft_view(store) if store.read_only else create_draft(store)

    def _read_array(
        self, group: Group, name: str, metadata: ArrayMetadata, stored: StoredDataset, axes: list[_Axes]
    ) -> None:
        super()._read_array(group, name, metadata, stored, axes)
        variable = group.find_variable(name)
        kept = metadata.extensions.get(DRAFT_MEMBER) if isinstance(metadata, ArrayMetadataV3) else None
        no_fill = isinstance(kept, dict) and "fill_value" in kept and kept["fill_value"] is None
        if variable is None or variable.fqn not in stored.storage:
            return
        if no_fill:
            stored.storage[variable.fqn] = replace(stored.storage[variable.fqn], fill=False)
        elif (
            variable.find_attribute("_FillValue") is None
            and isinstance(variable.type, AtomicType)
            and metadata.dtype.kind in "iuf"
            and metadata.fill_value is not None
        ):
            fill = np.asarray(metadata.fill_value).item()
            default = DEFAULT_FILL.get(variable.type)
            if not (fill == default or (isinstance(fill, float) and np.isnan(fill) and default != default)):
                variable.add_attribute("_FillValue", variable.type, [fill])

    def _metadata(
        self, variable: Variable, storage: VariableStorage, resolver: Resolver, read: ArrayMetadata | None = None
    ) -> ArrayMetadata:
        metadata = super()._metadata(variable, storage, resolver, read)
        # no fill (nccopy's default) is null unless fill_value must hold _FillValue, which matters more
        if not storage.fill and variable.find_attribute("_FillValue") is None and isinstance(metadata, ArrayMetadataV3):
            metadata = replace(metadata, extensions={DRAFT_MEMBER: {"must_understand": False, "fill_value": None}})
        return metadata


_FIXED_BYTES = re.compile(r"[<>|]S([0-9]+)")


def _base64_fill(zarray: JSONObject) -> JSONObject:
    """A ``.zarray`` whose fixed-length bytes fill value is netcdf-c's text (``"z"``) rather
    than zarr-python's base64, with that text as base64 (a fill value that is valid base64
    of at most the item's size stays base64)."""
    dtype, fill = zarray.get("dtype"), zarray.get("fill_value")
    size = _FIXED_BYTES.fullmatch(dtype) if isinstance(dtype, str) else None
    if size is None or not isinstance(fill, str):
        return zarray
    try:
        if len(base64.b64decode(fill, validate=True)) <= int(size[1]):
            return zarray
    except binascii.Error:
        pass
    text = fill.encode("utf-8", errors="surrogateescape")[: int(size[1])]
    return {**zarray, "fill_value": base64.standard_b64encode(text).decode()}


def _stored_names(
    variable: Variable, dimensions: list[Dimension], read: ArrayMetadata | None, resolver: Resolver
) -> list[str]:
    """The dimension names an array stores: its dimensions' names, except where reading
    renamed a reused name (``y`` read as ``y_2``, see :class:`_GroupDimensions`): the name
    the array had stays, so that writing to a store does not rename its arrays' axes."""
    names = [d.name for d in dimensions]
    had = None if read is None else _axis_names(read)
    if had is None or len(had) != len(names) or variable.group is None:
        return names
    return [
        old if isinstance(old, str) and _renames(dimension, old, variable.group, resolver) else dimension.name
        for dimension, old in zip(dimensions, had)
    ]


def _axis_names(metadata: ArrayMetadata) -> list[object] | None:
    """The dimension names an array's metadata gives (None: none)."""
    names: object = metadata.dimension_names
    if names is None:
        names = metadata.attributes.get(ARRAY_DIMENSIONS)
    return list(names) if isinstance(names, list | tuple) else None


def _renames(dimension: Dimension, old: str, scope: Group, resolver: Resolver) -> bool:
    """Whether ``dimension`` is a renaming reading made of the name ``old``: it is named
    ``<old>_<k>`` and ``old`` names another dimension, of another length, in scope."""
    suffix = dimension.name.removeprefix(f"{old}_")
    other = resolver.dimension(scope, old)
    return (
        suffix != dimension.name and suffix.isdigit() and other is not None and other.size != dimension.size
    )


def _attributes(owner: Group | Variable, zarr_format: int) -> tuple[dict[str, Any], dict[str, str]]:
    """Attribute values as plain JSON (NaN and infinities as JSON's bare tokens; a float's
    values as the doubles they equal, as xarray writes them), and the type codes of those
    whose type reading would infer otherwise (a float, a short, one string...): the type
    hint netcdf-c reads in pure Zarr too (``_nczarr_attr`` in v2's attributes, which xarray
    hides as it hides every ``_nc*`` attribute; in v3 ``_nczarr_attrs``, as NCZARR writes
    it). Without hints, the attributes are exactly those xarray writes."""
    out: dict[str, Any] = {}
    hints: dict[str, str] = {}
    scope = owner if isinstance(owner, Group) else owner.group
    resolver = Resolver()
    for attribute in owner.attributes:
        type = attribute.type
        if not isinstance(type, AtomicType):
            assert scope is not None
            record = _json_record_type(type, scope, resolver)
            assert record is not None  # problems() refuses other user types
            rows: list[JSON] = [_record_json(record, value, resolver) for value in attribute.values]
            record_json: JSON = rows[0] if len(rows) == 1 else rows
            out[attribute.name] = record_json
            flat = record_json if isinstance(record_json, list) else []
            if any(isinstance(v, float) for v in flat) and infer_attribute(record_json)[0] is not AtomicType.DOUBLE:
                # netcdf-c would read [1, 2.5] as int, by its first value
                hints[attribute.name] = type_code(AtomicType.DOUBLE, zarr_format=zarr_format)
            continue
        values = as_netcdf_c_writes(type, attribute.values) if zarr_format == 2 else attribute.values
        data = values_to_json(type, values)
        if type is AtomicType.STRING and len(values) == 1:
            data = values[0]
        if type.is_float:
            data = _plain_floats(data, exact_float32=type is AtomicType.FLOAT)
        out[attribute.name] = data
        if attribute.name != "_FillValue" and infer_attribute(data)[0] is not type:  # _FillValue: the array's
            hints[attribute.name] = type_code(type, zarr_format=zarr_format)
    return out, hints


def _hint_json(hints: dict[str, str], zarr_format: int) -> dict[str, Any]:
    return {"types": hints} if zarr_format == 2 else {"attribute_types": hints}


def _type_hints(attrs: Mapping[str, Any], where: str, extensions: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """The attribute types a pure Zarr node's hint gives (see :func:`_attributes`; either
    key, either spelling, in the attributes or a v3 array's ``extensions``), else none."""
    holder = attrs.get(ATTR, attrs.get(ATTRS, (extensions or {}).get(ATTRS)))
    if holder is None:
        return {}
    types = holder.get("types", holder.get("attribute_types")) if isinstance(holder, dict) else None
    if not isinstance(types, dict):
        raise FormatError(f"{where}: {ATTR if ATTR in attrs else ATTRS} must hold a types object")
    return types


def _plain_floats(data: Any, *, exact_float32: bool) -> Any:
    """Floats as JSON numbers; a float attribute's values as the doubles they equal, as
    xarray writes them (the shortest float32 text, read back as a double, would change the
    values a float32 ``scale_factor`` decodes to)."""
    if isinstance(data, list):
        return [_plain_floats(v, exact_float32=exact_float32) for v in data]
    if isinstance(data, str):
        return float(data.replace("Infinity", "inf"))
    return float(np.float32(data)) if exact_float32 else data


def _dtype(type: AtomicType, endian: str) -> np.dtype:
    if type is AtomicType.STRING:
        return np.dtype(object)
    return numpy_dtype(type, endian)


def _zarr_type(variable: Variable, resolver: Resolver) -> AtomicType | np.dtype | None:
    """What pure Zarr stores a variable as: its atomic type, the complex data type of a type
    of netCDF4-python's complex convention (a Zarr complex array read back), the structured
    data type of another compound type (as xarray stores numpy's), else None."""
    if isinstance(variable.type, AtomicType):
        return variable.type
    found = None if variable.group is None else resolver.type(variable.group, variable.type)
    if found is None:
        return None
    complex_dtype = complex_dtype_of(found)
    return complex_dtype if complex_dtype is not None else _structured(found, resolver)


def _structured(type: UserType, resolver: Resolver) -> np.dtype | None:
    """The structured data type (packed, little-endian: netCDF's layout) pure Zarr stores
    a compound type's values as, read back as a compound type of the same fields; None for
    other types and for compounds holding strings or vlens."""
    if not isinstance(type, CompoundType):
        return None
    try:
        dtype = packed_dtype(type, resolver=resolver)
    except UnsizedTypeError:
        return None
    if dtype.hasobject:
        return None
    return dtype if isinstance(netcdf_view(DataType.from_numpy(dtype, 3)), NetcdfView) else None


def _json_record_type(ref: TypeRef, scope: Group, resolver: Resolver) -> CompoundType | None:
    """The compound type of an attribute that pure Zarr holds as xarray writes a numpy record
    (a JSON list of its field values): one whose fields are numbers, enums or such records at
    any depth; None for any other type."""
    found = resolver.type(scope, ref) if isinstance(ref, str) else None
    return found if isinstance(found, CompoundType) and _is_json_record(found, resolver) else None


def _is_json_record(type: object, resolver: Resolver) -> bool:
    if not isinstance(type, CompoundType) or complex_dtype_of(type) is not None:
        return False
    for f in type.fields:
        try:
            member = member_type(type, f.type, resolver, f.name)
        except UnsizedTypeError:
            return False
        if isinstance(member, AtomicType):
            if not (member.is_integer or member.is_float):
                return False
        elif not isinstance(member, EnumType) and not _is_json_record(member, resolver):
            return False
    return True


def _record_json(type: CompoundType, value: Any, resolver: Resolver) -> list[JSON]:
    """A compound value as xarray writes a numpy record attribute: its field values in a
    list (array fields as lists, floats as the doubles they equal)."""
    out: list[JSON] = []
    for f, item in zip(type.fields, value):
        member = member_type(type, f.type, resolver, f.name)
        out.append([_member_json(member, x, resolver) for x in item] if f.shape else _member_json(member, item, resolver))
    return out


def _member_json(member: AtomicType | UserType, value: Any, resolver: Resolver) -> Any:
    if isinstance(member, CompoundType):
        return _record_json(member, value, resolver)
    if member is AtomicType.FLOAT:
        return float(np.float32(value))
    return float(value) if isinstance(member, AtomicType) and member.is_float else int(value)


def _is_mapped(variable: Variable, read: ArrayMetadata | None) -> bool:
    """Whether a variable was read from an array of another data type than nczarr writes
    for its type (float16, complex, times, bool, fixed-length strings, structured, raw
    bytes)."""
    if read is None:
        return False
    if not isinstance(variable.type, AtomicType):
        return True
    return read.data_type.dtype.newbyteorder("=") != _dtype(variable.type, "native").newbyteorder("=")


def _netcdf_type(group: Group, name: str, metadata: ArrayMetadata, where: str) -> tuple[TypeRef, NetcdfView] | None:
    """The netCDF type of the array ``name``'s data type (:func:`netcdf_view`): a compound
    type of complex defined in the root group, the array's own type (structured, raw bytes)
    in its group; None, with a warning naming the array, when netCDF has none (netcdf-c
    refuses the whole store)."""
    view = netcdf_view(metadata.data_type, name)
    if isinstance(view, NetcdfView) and view.local:
        taken = [t.name for t in (*view.nested, view.type) if isinstance(t, UserType) and group.find_type(t.name)]
        if taken:  # another array's nested field type, named <array>.<field>_t
            view = f"its type name {taken[0]!r} is taken in {group.fqn}"
    if isinstance(view, str):
        log.warning("%s: array left out: %s", where, view)
        return None
    if view.note is not None:
        log.log(view.note_level, "%s: %s", where, view.note)
    if isinstance(view.type, AtomicType):
        return view.type, view
    if view.local:
        for user_type in (*view.nested, view.type):
            group.add(user_type)
        return view.type.name, view
    root = group.root
    if root.find_type(view.type.name) is None:
        root.add(view.type)
    return view.type.name, view


def _fitted_names(names: Any, shape: tuple[int, ...], where: str) -> list[object]:
    """The dimension name of each axis (None: anonymous) from ``_ARRAY_DIMENSIONS`` or
    ``dimension_names``, read as netcdf-c 4.10.1 reads those that do not fit the shape rather
    than refused: a 0-d array is a scalar whatever names it lists; a value that is no list
    leaves every axis anonymous; a list longer than the shape names the axes with its first
    names; a shorter one leaves the axes past its end anonymous (netcdf-c crashes there); a
    number or boolean is a name as JSON writes it (``1``, ``true``)."""
    if names is None:
        return [None] * len(shape)
    if not shape:
        if names:
            log.debug("%s: reading a 0-d array as a scalar; its dimension names %s are ignored", where, json.dumps(names))
        return []
    if not isinstance(names, list | tuple):
        log.warning("%s: dimension names %s are no list: reading every axis as anonymous", where, json.dumps(names))
        return [None] * len(shape)
    if len(names) != len(shape):
        log.warning(
            "%s: dimension names %s do not match shape %s: naming the axes with the first ones",
            where, json.dumps(names), list(shape),
        )
    fitted = [*names[: len(shape)], *[None] * (len(shape) - len(names))]
    return [json.dumps(n) if isinstance(n, int | float) else n for n in fitted]


@dataclass
class _Axes:
    """The axes of an array as read: its dimension names (None: unnamed) and lengths."""

    variable: Variable
    names: list[object]
    shape: tuple[int, ...]
    where: str


def _find_dimensions(arrays: list[_Axes]) -> list[list[Dimension | int]]:
    """The dimension of each axis of each array (arrays of one group together, parent
    groups first, as read); an int for an anonymous dimension."""
    by_group: dict[int, list[_Axes]] = {}
    for array in arrays:
        by_group.setdefault(id(array.variable.group), []).append(array)
    found: dict[int, list[Dimension | int]] = {}
    for members in by_group.values():
        namer = _GroupDimensions(members)
        for array in members:
            found[id(array)] = [namer.dimension(array, name, length) for name, length in zip(array.names, array.shape)]
    return [found[id(array)] for array in arrays]


class _GroupDimensions:
    """Names the dimensions of the arrays of one group (docs/format.md, "Reading").

    An axis without a name (or with netcdf-c's anonymous name for its length) is an
    anonymous dimension. A named one is the group's dimension of that name, else the
    nearest ancestor's of that name when the length agrees, else new in the group. When
    arrays of the group give one name several lengths, the first array (by name) keeps the
    name; each other length becomes a dimension ``<name>_2``, ``<name>_3``, ... (the first
    suffix no array of the group, no dimension in scope and no array name uses), with a
    warning: an image pyramid's levels, or arrays that disagree. Except for a dimension with
    a coordinate variable (an array of its name, of that one dimension): a netCDF dimension,
    which disagreeing arrays only leave when a writer was killed while growing it; it reads
    as unlimited, as long as the longest (as in netCDF)."""

    def __init__(self, arrays: list[_Axes]) -> None:
        group = arrays[0].variable.group
        assert group is not None
        self.group = group
        self.coordinates = {a.variable.name for a in arrays if a.names == [a.variable.name]}
        self.taken = {n for a in arrays for n in a.names if isinstance(n, str)} | {a.variable.name for a in arrays}
        self.first: dict[str, str] = {}  # dimension name -> the array that gave its length
        self.renamed: dict[tuple[str, int], Dimension] = {}

    def dimension(self, array: _Axes, name: object, length: int) -> Dimension | int:
        if name is None or name == f"{ANONYMOUS_PREFIX}{length}":
            return self._anonymous(length)
        if not isinstance(name, str) or not name or "/" in name:
            raise FormatError(f"{array.where}: dimension name {json.dumps(name)} is not a netCDF name")
        group = self.group
        found = group.find_dimension(name)
        if found is None and name.startswith(ANONYMOUS_PREFIX) and name[len(ANONYMOUS_PREFIX):].isdigit():
            # netcdf-c's name for an anonymous dimension of another length: the anonymous
            # dimensions own that name (netcdf-c refuses the dataset)
            return self._renamed(array, name, length, None)
        if found is None:
            inherited = self._inherited(name, length)
            if inherited is not None:
                return inherited
            self.first[name] = array.where
            # netcdf-c: a dimension of length 0 is unlimited (NC_UNLIMITED is 0)
            return group.add_dimension(name, length, unlimited=length == 0)
        if found.size == length:
            return found
        if name in self.coordinates:
            log.log(
                logging.DEBUG if found.unlimited else logging.WARNING,
                "%s: dimension %r has length %d here and %d elsewhere in %s: reading it as "
                "unlimited, of the longest length (a writer was interrupted?)",
                array.where, name, length, found.size, group.fqn,
            )
            found.unlimited = True
            found.size = max(found.size, length)
            return found
        return self._renamed(array, name, length, found)

    def _renamed(self, array: _Axes, name: str, length: int, found: Dimension | None) -> Dimension:
        """The dimension ``<name>_<k>`` that stands for ``name`` at this length."""
        other = self.renamed.get((name, length))
        if other is None:
            fresh = self._fresh(name)
            other = self.renamed[name, length] = self.group.add_dimension(fresh, length, unlimited=length == 0)
            elsewhere = "netcdf-c names anonymous dimensions so" if found is None else (
                f"{found.size} in {self.first.get(name, self.group.fqn)}"
            )
            log.warning(
                "%s: dimension %r has length %d here and %s: reading it as dimension %r",
                array.where, name, length, elsewhere, other.name,
            )
        return other

    def _anonymous(self, length: int) -> Dimension | int:
        """An anonymous dimension: its length, except for length 0, which netcdf-c makes the
        unlimited root dimension ``_Anonymous_Dim_0`` (a netCDF dimension is never empty)."""
        if length:
            return length
        root = self.group.root
        name = f"{ANONYMOUS_PREFIX}0"
        found = root.find_dimension(name)
        if found is None:
            return root.add_dimension(name, 0, unlimited=True)
        if found.size == 0:
            found.unlimited = True
            return found
        return root.add_dimension(self._fresh(name), 0, unlimited=True)

    def _inherited(self, name: str, length: int) -> Dimension | None:
        """The nearest ancestor's dimension of this name when its length agrees."""
        scope = self.group.group
        while scope is not None:
            found = scope.find_dimension(name)
            if found is not None:
                return found if found.size == length else None
            scope = scope.group
        return None

    def _fresh(self, name: str) -> str:
        """The first ``<name>_<k>`` (k >= 2) that nothing in the group's scope uses."""
        k = 2
        while (candidate := f"{name}_{k}") in self.taken or self._in_scope(candidate):
            k += 1
        self.taken.add(candidate)
        return candidate

    def _in_scope(self, name: str) -> bool:
        scope: Group | None = self.group
        while scope is not None:
            if scope.find_dimension(name) is not None:
                return True
            scope = scope.group
        return False
