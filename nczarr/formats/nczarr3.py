"""``NCZARR`` (the default): NCZarr on Zarr v3.

Plain Zarr v3 that zarr-python 3, xarray and TensorStore open without help
(``dimension_names``, standard codecs, the ``string`` data type), with the netCDF extras named
as in netcdf-c's experimental Zarr v3 work (§5): ``_nczarr_superblock`` (root),
``_nczarr_group`` and a group's ``_nczarr_attrs`` in group attributes (zarr-python 3.1
refuses extra members in a group's ``zarr.json``; xarray hides ``_nc*`` group attributes);
an array's ``_nczarr_array`` and ``_nczarr_attrs`` as extension members of its ``zarr.json``
marked ``"must_understand": false`` (Zarr v3 §extensions), so that plain Zarr readers show
the user's attributes only. Arrays written before keep them in their attributes, which is
read too. User-defined types are defined in their group's ``_nczarr_group["types"]`` and
stored as data types zarr-python opens (docs/format.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from nczarr.errors import FormatError, MissingNodeError, UnsizedTypeError
from nczarr.formats.attributes import values_from_json, values_to_json
from nczarr.formats.base import Convention, StoredDataset, checked_scope, path_of
from nczarr.formats.chunks import chunks_for, keep_chunk_keys
from nczarr.formats.codecs import storage_from_chain, stored_v3_codecs, v3_codecs
from nczarr.formats.dialect import RootDocuments
from nczarr.formats.documents import DocumentSource, root_attributes, start_reading
from nczarr.formats.fills import char_byte, fill_to_netcdf, keep_fill, xarray_fill_json
from nczarr.formats.keys import ARRAY, ATTR, ATTRS, GROUP, SUPERBLOCK, join_path
from nczarr.formats.tree import (
    UserDecoder,
    anonymous_dimensions,
    canonical_type_ref,
    drop_anonymous,
    group_dimensions_json,
    listed_children,
    nczarr_problems,
    object_member,
    raw_fqn,
    read_attributes,
    read_dimension_refs,
    read_dimensions,
    type_at,
    variable_dimensions,
)
from nczarr.formats.typecodes import ATOMIC_BY_NAME, parse_type_code, type_code
from nczarr.model import (
    AtomicType,
    AttributeValue,
    CompoundType,
    DataModel,
    Dataset,
    Dimension,
    EnumMember,
    EnumType,
    Field,
    Group,
    OpaqueType,
    Resolver,
    TypeRef,
    UserType,
    Variable,
    VlenType,
)
from nczarr.store.base import Store
from nczarr.values.storage import VariableStorage
from nczarr.values.types import DEFAULT_FILL, fill_attribute, is_fixed_size, numpy_dtype, packed_dtype
from nczarr.zarr.codecs.compress import BLOSC_SHUFFLES
from nczarr.zarr.hierarchy import new_array_metadata
from nczarr.zarr.jsonvalue import JSON
from nczarr.zarr.metadata import (
    ZARR_JSON,
    ArrayMetadata,
    ArrayMetadataV3,
    GroupMetadataV3,
    dump_json,
)

SUPERBLOCK_VERSION = "3.0.0"
#: Codec names of the netcdf-c fork (numcodecs v2 ids, §5.3) → names this engine reads.
_FORK_CODECS = {"shuffle": "numcodecs.shuffle", "fletcher32": "numcodecs.fletcher32", "bz2": "numcodecs.bz2"}
#: What makes a ``zarr.json`` member an extension that readers may ignore (Zarr v3).
MUST_UNDERSTAND = "must_understand"
#: The array extras stored as extension members of the array's ``zarr.json``.
_ARRAY_MEMBERS = (ARRAY, ATTRS)

Resolved = AtomicType | UserType


@dataclass(frozen=True)
class ArrayPlanV3:
    """Everything about the v3 array that holds a variable."""

    type: Resolved
    dimensions: list[Dimension]
    dtype: np.dtype
    string_kind: Literal["string", "bytes"]
    fill: AttributeValue  # None: the data type's default
    nczarr_type: str | None


class Nczarr(Convention):
    """NCZarr on Zarr v3 (``format="NCZARR"``)."""

    name: ClassVar[str] = "NCZARR"
    zarr_format: ClassVar[Literal[2, 3]] = 3

    def __init__(self, *, consolidated: bool = True) -> None:
        super().__init__(consolidated=consolidated)
        self._metadata_cache: dict[Any, ArrayMetadataV3] = {}

    @classmethod
    def recognises(cls, root_documents: Mapping[str, bytes]) -> bool:
        attributes = root_attributes(root_documents)
        return attributes is not None and SUPERBLOCK in attributes

    def problems(self, dataset: Dataset, only: Variable | None = None) -> list[str]:
        found = nczarr_problems(dataset, only)
        resolver = Resolver()
        for group, variables, whole in checked_scope(dataset, only):
            for user_type in group.types if whole else ():
                if isinstance(user_type, VlenType) and _resolve(user_type.base, group, resolver) is None:
                    found.append(f"{user_type.fqn}: type {user_type.base!r} does not resolve")
                if isinstance(user_type, CompoundType):
                    try:  # variable-length fields are stored in the record encoding
                        is_fixed_size(user_type, resolver=resolver)
                    except UnsizedTypeError as exc:
                        found.append(str(exc))
                if isinstance(user_type, EnumType) and not (
                    isinstance(user_type.base, AtomicType) and user_type.base.is_integer
                ):
                    found.append(f"{user_type.fqn}: enum base {user_type.base} is not an integer type")
            owners: list[Group | Variable] = [group, *variables] if whole else list(variables)
            for owner in owners:
                refs = [a.type for a in owner.attributes]
                if isinstance(owner, Variable):
                    refs.append(owner.type)
                for ref in refs:
                    if isinstance(ref, str) and _resolve(ref, group, resolver) is None:
                        found.append(f"{owner.fqn}: type {ref!r} does not resolve")
        return found

    # -- reading -----------------------------------------------------------------------

    def read(
        self, store: Store, *, use_consolidated: bool | None = None, root: RootDocuments | None = None
    ) -> StoredDataset:
        source, dataset, stored = start_reading(self, store, use_consolidated, root)
        groups: list[tuple[Group, dict[str, Any], str]] = []
        arrays: list[tuple[Group, str, dict[str, Any]]] = []
        self._read_group(source, "", dataset, groups, arrays)
        superblock = groups[0][1].get(SUPERBLOCK)
        if isinstance(superblock, dict) and superblock.get("data_model") == DataModel.CLASSIC.value:
            dataset.data_model = DataModel.CLASSIC
        resolver = Resolver()
        for group, _attrs, _where in groups:
            for user_type in group.types:
                _canonical_type(user_type, group, resolver)
        for group, attrs, where in groups:
            types = _types_map(attrs, where)
            read_attributes(group, attrs, types, where, None, _user_decoder(group, resolver))
        parsed: dict[str, ArrayMetadataV3] = {}
        for group, name, doc in arrays:
            self._read_array(group, name, doc, resolver, stored, parsed)
        drop_anonymous(dataset)
        return stored

    def _read_group(
        self,
        source: DocumentSource,
        path: str,
        group: Group,
        groups: list[tuple[Group, dict[str, Any], str]],
        arrays: list[tuple[Group, str, dict[str, Any]]],
    ) -> None:
        """Read the group at ``path`` and every group below it, parents first (with a stack,
        not recursion: a tree may be deeper than Python's recursion limit)."""
        pending = [(path, group)]
        while pending:
            path, group = pending.pop()
            where = join_path(path, ZARR_JSON)
            doc = source.document(where)
            if doc.get("node_type") != "group":
                raise FormatError(f"{where}: group {group.fqn} is listed but is not a group")
            attrs = object_member(doc, "attributes", where)
            info = object_member(attrs, GROUP, where)
            read_dimensions(group, info, where)
            for name, definition in object_member(info, "types", where).items():
                group.add(_type_from_json(name, definition, f"{where}: type {name!r}"))
            groups.append((group, attrs, where))
            names, group_names = listed_children(info, where, "arrays")
            found = source.documents(join_path(join_path(path, name), ZARR_JSON) for name in names)
            for name in names:
                array_where = join_path(join_path(path, name), ZARR_JSON)
                array_doc = found.get(array_where)
                if array_doc is None:
                    raise MissingNodeError(f"{array_where}: missing")
                if array_doc.get("node_type") != "array":
                    raise FormatError(f"{array_where}: array {name!r} is listed in {where} but is not an array")
                arrays.append((group, name, array_doc))
            children = [(join_path(path, name), group.add_group(name)) for name in group_names]
            pending.extend(reversed(children))

    def _read_array(
        self,
        group: Group,
        name: str,
        doc: dict[str, Any],
        resolver: Resolver,
        stored: StoredDataset,
        parsed: dict[str, ArrayMetadataV3],
    ) -> None:
        """Read one array into ``group``; ``parsed``: the engine metadata already made in this
        read, by document without attributes (arrays on one grid share theirs)."""
        where = join_path(join_path(path_of(group.fqn), name), ZARR_JSON)
        attrs = object_member(doc, "attributes", where)
        # the extras are members of zarr.json; arrays written before kept them in attributes
        extras = doc if ARRAY in doc else attrs
        info = object_member(extras, ARRAY, where)
        nczarr_type = info.get("nczarr_type")
        data_type = doc.get("data_type")
        type: TypeRef
        if isinstance(nczarr_type, str) and nczarr_type.startswith("/"):
            type = canonical_type_ref(nczarr_type, group, resolver)
        elif nczarr_type in ("char", "string"):
            type = ATOMIC_BY_NAME[nczarr_type]
        elif data_type == "string":
            type = AtomicType.STRING
        else:
            type = parse_type_code(data_type, where) or AtomicType.CHAR
        variable = group.add_variable(name, type)
        shape = doc.get("shape", [])
        refs = info.get("dimension_references", [])
        read_dimension_refs(variable, refs, shape, where, resolver)
        resolved = _resolve(type, group, resolver)
        read_attributes(
            variable,
            attrs,
            _types_map(doc if ATTRS in doc else attrs, where),
            where,
            resolved,
            _user_decoder(group, resolver),
            xarray_fill=True,
        )
        # the engine document differs from the stored one only for char and string types
        grid = {k: v for k, v in doc.items() if k != "attributes" and k not in _ARRAY_MEMBERS}
        key = repr((resolved if resolved in _TEXT_TYPES else None, grid))
        metadata = parsed.get(key)
        if metadata is None:
            try:
                metadata = parsed[key] = ArrayMetadataV3.from_json(_engine_document(grid, resolved))
            except ValueError as exc:
                raise FormatError(f"{where}: {exc}") from exc
        metadata = metadata.with_attributes({k: v for k, v in attrs.items() if k not in _ARRAY_MEMBERS})
        fill = info.get("fill", True) is not False
        if fill and isinstance(resolved, AtomicType):
            keep_fill(variable, resolved, fill_to_netcdf(resolved, metadata.fill_value))
        endian = "native"
        for codec in metadata.codecs:
            config = codec.get("configuration")
            if codec.get("name") == "bytes" and isinstance(config, dict) and config.get("endian") == "big":
                endian = "big"
        stored.storage[variable.fqn] = storage_from_chain(
            list(metadata.codecs), metadata.chunk_shape, endian, fill, list(doc.get("codecs", []))
        )
        stored.arrays[variable.fqn] = metadata

    # -- writing -----------------------------------------------------------------------

    def plan(self, variable: Variable, resolver: Resolver | None = None) -> ArrayPlanV3:
        """The data type, fill value and dimensions of ``variable``'s array."""
        resolver = resolver or Resolver()
        group = variable.group
        assert group is not None
        type = _resolve(variable.type, group, resolver)
        if type is None:
            raise FormatError(f"{variable.fqn}: type {variable.type!r} does not resolve")
        dimensions = variable_dimensions(variable, resolver)
        fill = fill_attribute(variable)
        nczarr_type = None
        kind: Literal["string", "bytes"] = "string"
        if isinstance(type, AtomicType):
            dtype = _atomic_dtype(type)
            fill = DEFAULT_FILL[type] if fill is None else fill
            if type is AtomicType.CHAR:
                nczarr_type, fill = "char", char_byte(str(fill))[0]
        else:
            nczarr_type = raw_fqn(type)
            dtype = _user_dtype(type, resolver)
            if isinstance(type, EnumType):
                fill = DEFAULT_FILL[type.base] if fill is None else fill  # type: ignore[index]
            else:
                fill = None
            if dtype.kind == "O":  # vlens, compounds with variable-length fields
                kind = "bytes"
        return ArrayPlanV3(type, dimensions, dtype, kind, fill, nczarr_type)

    def array_metadata(self, variable: Variable, storage: VariableStorage) -> ArrayMetadata:
        return self._array_metadata(self.plan(variable), storage)

    def _array_metadata(self, plan: ArrayPlanV3, storage: VariableStorage) -> ArrayMetadataV3:
        """:func:`_array_metadata`, remembered: a sync computes every array's metadata again,
        and building it (codecs checked against the data type) costs more than the rest."""
        key = (
            plan.dtype.str,
            repr(plan.fill),
            tuple((d.name, d.size) for d in plan.dimensions),
            plan.string_kind,
            storage,
            repr(storage.codecs),
        )
        cache = self._metadata_cache
        metadata = cache.get(key)
        if metadata is None:
            if len(cache) > 10_000:
                cache.clear()
            metadata = cache[key] = _array_metadata(plan, storage)
        return metadata

    def documents(self, stored: StoredDataset) -> dict[str, bytes]:
        dataset = stored.dataset
        resolver = Resolver()
        out: dict[str, bytes] = {}
        for group in dataset.walk():
            path = path_of(group.fqn)
            attrs, types = _attributes(group, group, resolver)
            dimensions = [*group.dimensions, *(anonymous_dimensions(dataset) if group is dataset else [])]
            info: dict[str, Any] = {
                "dimensions": group_dimensions_json(dimensions, dict_form=True),
                "arrays": [v.name for v in group.variables],
                "groups": [g.name for g in group.groups],
            }
            if group.types:
                info["types"] = {t.name: _type_to_json(t, group, resolver) for t in group.types}
            attrs[GROUP] = info
            if group is dataset:
                attrs[SUPERBLOCK] = {"version": SUPERBLOCK_VERSION}
                if dataset.data_model is DataModel.CLASSIC:
                    # netcdf-c keeps no data model in NCZarr; ours keeps the classic one
                    attrs[SUPERBLOCK]["data_model"] = DataModel.CLASSIC.value
            if types:
                attrs[ATTRS] = {"attribute_types": types}
            out[join_path(path, ZARR_JSON)] = GroupMetadataV3(attributes=attrs).documents()[ZARR_JSON]
            for variable in group.variables:
                storage = stored.storage.get(variable.fqn, VariableStorage())
                plan = self.plan(variable, resolver)
                metadata = keep_chunk_keys(self._array_metadata(plan, storage), stored.arrays.get(variable.fqn))
                attrs, types = _attributes(variable, group, resolver)
                array_info: dict[str, Any] = {
                    MUST_UNDERSTAND: False,
                    "dimension_references": [raw_fqn(d) for d in plan.dimensions],
                }
                if plan.nczarr_type is not None:
                    array_info["nczarr_type"] = plan.nczarr_type
                if not storage.fill:
                    array_info["fill"] = False
                extras = {ARRAY: array_info}
                if types:
                    extras[ATTRS] = {MUST_UNDERSTAND: False, "attribute_types": types}
                document = dump_json(metadata.with_attributes(attrs).to_json() | extras)
                out[join_path(join_path(path, variable.name), ZARR_JSON)] = document
        return out


def _array_metadata(plan: ArrayPlanV3, storage: VariableStorage) -> ArrayMetadataV3:
    """The v3 array metadata of a planned variable with these storage settings."""
    shape = tuple(d.size for d in plan.dimensions)
    itemsize = 8 if plan.dtype.hasobject else plan.dtype.itemsize
    chunks = chunks_for(storage, plan.dimensions, shape, itemsize)
    codecs = stored_v3_codecs(storage) or v3_codecs(plan.dtype, storage, plan.string_kind)
    metadata = new_array_metadata(
        zarr_format=3,
        shape=shape,
        dtype=plan.dtype,
        chunks=chunks,
        fill_value=plan.fill,
        codecs=codecs,
        dimension_names=[d.name for d in plan.dimensions] if shape else None,
        string_kind=plan.string_kind,
        # flat chunk keys (c.0.1): nested ones cost two directories per chunk when records
        # are appended one at a time
        dimension_separator=".",
    )
    assert isinstance(metadata, ArrayMetadataV3)
    return metadata


# -- types ---------------------------------------------------------------------------------


def _resolve(ref: TypeRef, scope: Group, resolver: Resolver) -> Resolved | None:
    return ref if isinstance(ref, AtomicType) else resolver.type(scope, ref)


def _resolved(ref: TypeRef, scope: Group, resolver: Resolver) -> Resolved:
    found = _resolve(ref, scope, resolver)
    if found is None:
        raise FormatError(f"{scope.fqn}: type {ref!r} does not resolve")
    return found


def _atomic_dtype(type: AtomicType) -> np.dtype:
    if type is AtomicType.STRING:
        return np.dtype(object)
    if type is AtomicType.CHAR:
        return np.dtype("u1")
    return numpy_dtype(type).newbyteorder("=")


def _user_dtype(type: UserType, resolver: Resolver) -> np.dtype:
    """The numpy dtype of a user type's array: an enum's base, opaque bytes, a compound as a
    structured type when Zarr v3 can express it (scalar numeric fields) else raw bytes, a
    vlen or a compound with variable-length fields as variable-length bytes (the record
    encoding of ``values.stored``)."""
    if isinstance(type, EnumType):
        return _atomic_dtype(type.base)  # type: ignore[arg-type]
    if isinstance(type, VlenType) or not is_fixed_size(type, resolver=resolver):
        return np.dtype(object)
    packed = packed_dtype(type, resolver=resolver)
    fields: Mapping[str, Any] = packed.fields or {}
    if isinstance(type, CompoundType) and all(
        not f.shape and fields[f.name][0].kind in "iuf" for f in type.fields
    ):
        return packed
    return np.dtype(f"V{packed.itemsize}")


def _ref_to_json(ref: TypeRef, scope: Group, resolver: Resolver) -> str:
    if isinstance(ref, AtomicType):
        return ref.value
    found = resolver.type(scope, ref)
    if found is None:
        raise FormatError(f"{scope.fqn}: type {ref!r} does not resolve")
    return raw_fqn(found)


def _ref_from_json(text: Any, where: str) -> TypeRef:
    if isinstance(text, str) and text.startswith("/"):
        return text  # made canonical once every type exists
    if text not in ATOMIC_BY_NAME:
        raise FormatError(f"{where}: {json.dumps(text)} is not a type")
    return ATOMIC_BY_NAME[text]


def _type_to_json(type: UserType, scope: Group, resolver: Resolver) -> dict[str, Any]:
    if isinstance(type, CompoundType):
        return {
            "class": "compound",
            "fields": [
                {"name": f.name, "type": _ref_to_json(f.type, scope, resolver), "shape": list(f.shape)}
                for f in type.fields
            ],
        }
    if isinstance(type, EnumType):
        return {
            "class": "enum",
            "base": _ref_to_json(type.base, scope, resolver),
            "members": {m.name: m.value for m in type.members},
        }
    if isinstance(type, OpaqueType):
        return {"class": "opaque", "size": type.size}
    assert isinstance(type, VlenType)
    return {"class": "vlen", "base": _ref_to_json(type.base, scope, resolver)}


def _type_from_json(name: str, data: Any, where: str) -> UserType:
    kind = data.get("class") if isinstance(data, dict) else None
    try:
        if kind == "compound":
            return CompoundType(
                name,
                [
                    Field(f["name"], _ref_from_json(f["type"], where), tuple(f.get("shape", ())))
                    for f in data["fields"]
                ],
            )
        if kind == "enum":
            members = [EnumMember(k, int(v)) for k, v in data["members"].items()]
            return EnumType(name, _ref_from_json(data["base"], where), members)
        if kind == "opaque":
            return OpaqueType(name, int(data["size"]))
        if kind == "vlen":
            return VlenType(name, _ref_from_json(data["base"], where))
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"{where}: invalid type definition {json.dumps(data)}") from exc
    raise FormatError(f"{where}: unknown type class {json.dumps(kind)}")


def _canonical_type(user_type: UserType, group: Group, resolver: Resolver) -> None:
    """Turn the raw FQNs read into a type definition into the tree's references."""

    def canonical(ref: TypeRef) -> TypeRef:
        return ref if isinstance(ref, AtomicType) else canonical_type_ref(ref, group, resolver)

    if isinstance(user_type, CompoundType):
        for f in user_type.fields:
            f.type = canonical(f.type)
    elif isinstance(user_type, EnumType | VlenType):
        user_type.base = canonical(user_type.base)


# -- attribute values ------------------------------------------------------------------------


def _attributes(
    owner: Group | Variable, scope: Group, resolver: Resolver
) -> tuple[dict[str, Any], dict[str, str]]:
    attrs: dict[str, Any] = {}
    types: dict[str, str] = {}
    for attribute in owner.attributes:
        type = _resolve(attribute.type, scope, resolver)
        if type is None:
            raise FormatError(f"{attribute.fqn}: type {attribute.type!r} does not resolve")
        if isinstance(type, AtomicType) and attribute.name == "_FillValue" and isinstance(owner, Variable):
            attrs[attribute.name] = xarray_fill_json(type, attribute.values, char_as_number=True)
            types[attribute.name] = type_code(type, zarr_format=3)
        elif isinstance(type, AtomicType):
            attrs[attribute.name] = _plain_floats(type, values_to_json(type, attribute.values))
            types[attribute.name] = type_code(type, zarr_format=3)
        else:
            attrs[attribute.name] = [_value_to_json(type, v, scope, resolver) for v in attribute.values]
            types[attribute.name] = raw_fqn(type)
    return attrs, types


def _plain_floats(type: AtomicType, data: Any) -> Any:
    """A float type's NaN and infinities as JSON numbers (zarr-python's bare tokens), not
    strings; the text "NaN" of a char or string attribute stays text."""
    if not type.is_float:
        return data
    if isinstance(data, list):
        return [_plain_floats(type, v) for v in data]
    if data in ("NaN", "Infinity", "-Infinity"):
        return float(data.replace("Infinity", "inf"))
    return data


def _value_to_json(type: Resolved, value: Any, scope: Group, resolver: Resolver) -> Any:
    if isinstance(type, AtomicType):
        return _plain_floats(type, values_to_json(type, value if type is AtomicType.CHAR else [value]))
    if isinstance(type, EnumType):
        return int(value)
    if isinstance(type, OpaqueType):
        return bytes(value).hex()
    if isinstance(type, VlenType):
        base = _resolved(type.base, type.group or scope, resolver)
        return [_value_to_json(base, v, scope, resolver) for v in value]
    assert isinstance(type, CompoundType)
    out = []
    for f, v in zip(type.fields, value):
        member = _resolved(f.type, type.group or scope, resolver)
        if f.shape:
            out.append([_value_to_json(member, x, scope, resolver) for x in v])
        else:
            out.append(_value_to_json(member, v, scope, resolver))
    return out


def _value_from_json(type: Resolved, data: Any, scope: Group, resolver: Resolver, where: str) -> Any:
    if isinstance(type, AtomicType):
        values = values_from_json(type, data, where)
        return values if type is AtomicType.CHAR else values[0]
    if isinstance(type, EnumType):
        return values_from_json(type.base, data, where)[0]  # type: ignore[arg-type]
    if isinstance(type, OpaqueType):
        try:
            return bytes.fromhex(data)
        except (TypeError, ValueError):
            raise FormatError(f"{where}: {json.dumps(data)} is not opaque hex") from None
    if isinstance(type, VlenType):
        base = _resolved(type.base, type.group or scope, resolver)
        return [_value_from_json(base, v, scope, resolver, where) for v in _as_list(data, where)]
    assert isinstance(type, CompoundType)
    items = _as_list(data, where)
    if len(items) != len(type.fields):
        raise FormatError(f"{where}: {json.dumps(data)} does not have {len(type.fields)} fields")
    out = []
    for f, v in zip(type.fields, items):
        member = _resolved(f.type, type.group or scope, resolver)
        if f.shape:
            out.append([_value_from_json(member, x, scope, resolver, where) for x in _as_list(v, where)])
        else:
            out.append(_value_from_json(member, v, scope, resolver, where))
    return tuple(out)


def _as_list(data: Any, where: str) -> list[Any]:
    if not isinstance(data, list):
        raise FormatError(f"{where}: {json.dumps(data)} is not a list")
    return data


def _user_decoder(scope: Group, resolver: Resolver) -> UserDecoder:
    def decode(code: JSON, data: JSON, where: str) -> tuple[TypeRef, list[AttributeValue]] | None:
        if not (isinstance(code, str) and code.startswith("/")):
            return None
        found = type_at(scope.root, code, resolver)
        if found is None:
            raise FormatError(f"{where}: type {code} is not defined")
        values = [_value_from_json(found, v, scope, resolver, where) for v in _as_list(data, where)]
        return canonical_type_ref(code, scope, resolver), values

    return decode


def _types_map(attrs: Mapping[str, Any], where: str) -> dict[str, Any]:
    holder = attrs.get(ATTRS, attrs.get(ATTR, {}))
    types = holder.get("attribute_types", holder.get("types", {})) if isinstance(holder, dict) else None
    if not isinstance(types, dict):
        raise FormatError(f"{where}: {ATTRS} must hold an attribute_types object")
    return types


# -- arrays ----------------------------------------------------------------------------------


#: The types whose fill values _engine_document rewrites.
_TEXT_TYPES = (AtomicType.CHAR, AtomicType.STRING)


def _engine_document(doc: dict[str, Any], type: Resolved | None) -> dict[str, Any]:
    """A ``zarr.json`` as the engine reads it: the fork's codec names (§5.3) renamed, and its
    string fill values of char (``uint8``) and ``r<bits>`` arrays made numbers. Members of
    the wrong JSON type are left as they are, for the engine to name."""
    doc = dict(doc)
    if isinstance(doc.get("codecs"), list):
        doc["codecs"] = [_engine_codec(codec) if isinstance(codec, dict) else codec for codec in doc["codecs"]]
    fill = doc.get("fill_value")
    data_type = doc.get("data_type")
    raw_bits = re.fullmatch(r"r([1-9][0-9]{0,5})", data_type) if isinstance(data_type, str) else None
    if isinstance(fill, str) and type is AtomicType.CHAR and data_type == "uint8":
        doc["fill_value"] = ord(fill[:1] or "\x00")
    elif isinstance(fill, str) and raw_bits is not None and type is AtomicType.STRING:
        doc["fill_value"] = list(fill.encode().ljust(int(raw_bits[1]) // 8, b"\x00"))
    return doc


def _engine_codec(codec: dict[str, Any]) -> dict[str, Any]:
    """One codec of a ``zarr.json`` as the engine names it (the fork's names, §5.3)."""
    codec = dict(codec)
    name = codec.get("name")
    if isinstance(name, str) and name in _FORK_CODECS:
        codec["name"] = _FORK_CODECS[name]
        if name == "shuffle":
            codec.setdefault("configuration", {})
    config = codec.get("configuration", {})
    if name == "blosc" and isinstance(config, dict):
        shuffle = config.get("shuffle")
        if isinstance(shuffle, int) and 0 <= shuffle < len(BLOSC_SHUFFLES):
            config = config | {"shuffle": BLOSC_SHUFFLES[shuffle]}
        codec["configuration"] = dict(config)
    return codec
