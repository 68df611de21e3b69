"""Reading and writing a tree's structure in NCZarr metadata: attributes with their types,
dimensions and the references to them (anonymous ones included), user type references,
the children a group lists, string lengths, and what no NCZarr convention can store."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from nczarr.errors import FormatError, MetadataError
from nczarr.formats.attributes import infer_attribute, values_from_json
from nczarr.formats.base import checked_scope
from nczarr.formats.dialect import compact_json
from nczarr.formats.fills import xarray_fill_value
from nczarr.formats.keys import (
    DEFAULT_MAXSTRLEN,
    DEFAULT_STRLEN,
    HIDDEN,
    MAXSTRLEN,
    RESERVED,
    key_name_problem,
)
from nczarr.formats.typecodes import parse_type_code
from nczarr.model import (
    AtomicType,
    AttributeValue,
    Dataset,
    Dimension,
    Group,
    Node,
    Resolver,
    TypeRef,
    UserType,
    Variable,
    join_fqn,
)
from nczarr.model.resolve import ANONYMOUS_PREFIX, name_anonymous, shortest_reference
from nczarr.model.resolve import anonymous_dimensions as anonymous_dimensions  # the conventions' import
from nczarr.zarr.jsonvalue import JSON, JSONObject
from nczarr.zarr.metadata import MAX_ELEMENTS
from nczarr.zarr.node import check_node_name

#: Decodes an attribute value of a user type: ``(types-map code, JSON, where)`` to the
#: attribute's type and values, or None when the code names no user type.
UserDecoder = Callable[[JSON, JSON, str], "tuple[TypeRef, list[AttributeValue]] | None"]


def read_attributes(
    owner: Group | Variable,
    attrs: Mapping[str, JSON],
    types: Mapping[str, JSON],
    where: str,
    var_type: object = None,
    user: UserDecoder | None = None,
    xarray_fill: bool = False,
) -> None:
    """Add the user attributes of a JSON attributes object to ``owner``, typed by the types
    map, else (netcdf-c's rule) ``_FillValue`` by ``var_type``, else by inference.
    ``user(code, data, where)`` decodes a value of a user type, or returns None when ``code``
    names none. ``xarray_fill``: a ``_FillValue`` is encoded as xarray encodes it in v3."""
    for what, value in (("attributes", attrs), ("attribute types", types)):
        if not isinstance(value, Mapping):
            raise FormatError(f"{where}: {what} must be a JSON object, not {compact_json(value)}")
    for name, data in attrs.items():
        if name in HIDDEN:
            continue
        at = f"{where}: attribute {name!r}"
        code = types.get(name)
        decoded = user(code, data, at) if user is not None and code is not None else None
        if decoded is not None:
            owner.add_attribute(name, *decoded)
            continue
        type = parse_type_code(code, at) if code is not None else None
        values: list[AttributeValue] | str
        if code == "json":  # the fork's char attribute written as parsed JSON (§5.2)
            owner.add_attribute(name, AtomicType.CHAR, data if isinstance(data, str) else compact_json(data))
            continue
        if type is None and code is not None:
            raise FormatError(f"{at}: type {code!r} is only for internal attributes")
        if type is None and name == "_FillValue" and isinstance(var_type, AtomicType):
            type = var_type
        if type is None:
            type, values = infer_attribute(data)
        elif name == "_FillValue" and xarray_fill:
            values = xarray_fill_value(type, data, at)
        else:
            values = values_from_json(type, data, at)
        if name == "_FillValue" and isinstance(values, list) and len(values) != 1:
            raise FormatError(f"{at}: a fill value is one value, not {len(values)}")  # as netCDF rules
        if name == "_FillValue" and values == "" and type is AtomicType.CHAR:
            values = "\x00"  # how netcdf-c writes a NUL fill (its text ends there), and reads it back
        owner.add_attribute(name, type, values)


def nczarr_problems(dataset: Dataset, only: Variable | None = None) -> list[str]:
    """What no NCZarr convention can store: names that are not store keys, reserved
    attribute names, dimension references that do not resolve (``only``: see
    :meth:`Convention.problems`)."""
    found: list[str] = []
    resolver = Resolver()
    for group, variables, whole in checked_scope(dataset, only):
        nodes = (*group.groups, *group.dimensions) if whole else ()
        for node in (*variables, *nodes):
            problem = key_name_problem(node.name)
            if problem is not None:
                found.append(f"{node.fqn}: {problem}")
        found.extend(
            f"{node.fqn}: name {node.name!r} cannot be a Zarr key (no '/', no leading '.')"
            for node in (group.types if whole else ())
            if not node.name or "/" in node.name or node.name.startswith(".")
        )
        owners: list[Group | Variable] = [group, *variables] if whole else list(variables)
        found.extend(
            f"{attribute.fqn}: attribute name {attribute.name!r} is reserved"
            for owner in owners
            for attribute in owner.attributes
            if attribute.name in RESERVED
        )
        found.extend(
            f"{variable.fqn}: dimension reference {ref!r} does not resolve"
            for variable in variables
            for ref in variable.dimensions
            if isinstance(ref, str) and resolver.dimension(group, ref) is None
        )
    return found


def default_maxstrlen(dataset: Group) -> int:
    """The root's ``_nczarr_default_maxstrlen``, else 128 (§2.8.3)."""
    return _int_attribute(dataset, DEFAULT_MAXSTRLEN) or DEFAULT_STRLEN


def maxstrlen(variable: Variable) -> int:
    """The stored length of a string variable's values (and the length in the types entry
    of its string attributes): its ``_nczarr_maxstrlen``, else the default (§2.8.3)."""
    own = _int_attribute(variable, MAXSTRLEN)
    group = variable.group
    return own or (default_maxstrlen(group.root) if group is not None else DEFAULT_STRLEN)


def _int_attribute(owner: Group | Variable, name: str) -> int | None:
    found = owner.find_attribute(name)
    if found is not None and isinstance(found.values, list) and found.values:
        return int(found.values[0])
    return None


def raw_fqn(node: Node) -> str:
    """A node's FQN as netcdf-c writes it in NCZarr metadata: the names unescaped, joined
    by ``/`` (netCDF names cannot hold ``/``); a detached node counts as a root child."""
    names: list[str] = []
    current: Node | None = node
    while current is not None and current.parent is not None:
        names.append(current.name)
        current = current.parent
    if current is not None and not isinstance(current, Group):
        names.append(current.name)
    return "/" + "/".join(reversed(names))


def dimension_at(root: Group, fqn: object, resolver: Resolver) -> Dimension | None:
    """The dimension at a raw FQN, or None."""
    group, name = _group_of(root, fqn, resolver)
    return None if group is None else next((d for d in group.dimensions if d.name == name), None)


def type_at(root: Group, fqn: object, resolver: Resolver) -> UserType | None:
    """The user type at a raw FQN, or None."""
    group, name = _group_of(root, fqn, resolver)
    return None if group is None else next((t for t in group.types if t.name == name), None)


def _group_of(root: Group, fqn: object, resolver: Resolver) -> tuple[Group | None, str]:
    """The group that holds the node at a raw FQN, and the node's name."""
    if not isinstance(fqn, str) or not fqn.startswith("/"):
        return None, ""
    names = fqn.split("/")[1:]
    return resolver.group(root, names[:-1]), names[-1]


def variable_dimensions(variable: Variable, resolver: Resolver) -> list[Dimension]:
    """The dimensions of a variable, anonymous ones as root dimensions named
    ``_Anonymous_Dim_<size>`` (how netcdf-c names dimensions an array does not name)."""
    dims = []
    for ref in variable.dimensions:
        if isinstance(ref, int):
            dims.append(Dimension(f"{ANONYMOUS_PREFIX}{ref}", ref))
            continue
        found = resolver.dimension(variable.group, ref)  # type: ignore[arg-type]
        if found is None:
            raise FormatError(f"{variable.fqn}: dimension reference {ref!r} does not resolve")
        dims.append(found)
    return dims


def drop_anonymous(dataset: Dataset) -> None:
    """Remove the root dimensions that stood for anonymous dimensions (every reference to
    them became a size); one no variable uses stays a dimension, as netcdf-c lists it.

    Anonymous dimensions show after the root's others, in order of first use: where the
    store declares them otherwise (a file's own dimensions of those names), dropping them
    would reorder what netcdf-c lists, so they stay named dimensions."""
    references = [ref for group in dataset.walk() for variable in group.variables for ref in variable.dimensions]
    used = {ref for ref in references if isinstance(ref, str)}
    sizes = {ref for ref in references if isinstance(ref, int)}

    def stands_for_anonymous(d: Dimension) -> bool:
        return (
            d.name.startswith(ANONYMOUS_PREFIX)
            and d.name[len(ANONYMOUS_PREFIX) :] == str(d.size)
            and not d.unlimited
            and d.size in sizes
            and d.name not in used
            and f"/{d.name}" not in used
        )

    kept = [d for d in dataset.dimensions if not stands_for_anonymous(d)]
    dropped = [d for d in dataset.dimensions if stands_for_anonymous(d)]
    first_use = [d.size for d in anonymous_dimensions(dataset)]
    shown = kept + sorted(dropped, key=lambda d: first_use.index(d.size))
    if [id(d) for d in shown] != [id(d) for d in dataset.dimensions]:
        name_anonymous(dataset)
        return
    dataset.dimensions[:] = kept


def reference_of(dimension_fqn: str, scope: Group, resolver: Resolver) -> str | int:
    """How a tree refers to a dimension read by FQN: its plain name when that resolves to it
    from ``scope``, else its FQN; an anonymous root dimension becomes its size."""
    names = dimension_fqn.split("/")[1:]
    name = names[-1]
    if len(names) == 1 and name.startswith(ANONYMOUS_PREFIX):
        size = name[len(ANONYMOUS_PREFIX) :]
        found = scope.root.find_dimension(name)
        if size.isdigit() and found is not None and found.size == int(size) and not found.unlimited:
            return int(size)
    target = resolver.group(scope.root, names[:-1])
    dimension = target.find_dimension(name) if target is not None else None
    return join_fqn(names) if dimension is None else shortest_reference(dimension, scope, resolver)


def canonical_type_ref(fqn: str, scope: Group, resolver: Resolver) -> str:
    """How a tree refers to the user type at a raw FQN: its plain name when that resolves to
    it from ``scope``, else its (escaped) FQN."""
    target = type_at(scope.root, fqn, resolver)
    return join_fqn(fqn.split("/")[1:]) if target is None else shortest_reference(target, scope, resolver)


def read_dimensions(group: Group, info: Mapping[str, JSON], where: str) -> None:
    """Add the dimensions of an ``_nczarr_group`` object (``dimensions`` or ``dims``; a
    size, or ``{"size": n, "unlimited": 0|1}``) to ``group``."""
    dimensions = info.get("dimensions", info.get("dims", {}))
    if not isinstance(dimensions, dict):
        raise FormatError(f"{where}: dimensions must be an object, not {compact_json(dimensions)}")
    for name, value in dimensions.items():
        if isinstance(value, dict):
            size, unlimited = value.get("size"), bool(value.get("unlimited", 0))
        else:
            size, unlimited = value, False
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_ELEMENTS:
            raise FormatError(f"{where}: dimension {name!r} has no valid size: {compact_json(size)}")
        group.add_dimension(name, size, unlimited)


def object_member(obj: Mapping[str, JSON], name: str, where: str) -> JSONObject:
    """The member ``name`` of a document object, which must be an object when present
    (``{}`` when absent); FormatError naming ``where`` otherwise."""
    value = obj.get(name, {})
    if not isinstance(value, dict):
        raise FormatError(f"{where}: {name} must be a JSON object, not {compact_json(value)}")
    return value


def listed_children(info: Mapping[str, JSON], where: str, *array_keys: str) -> tuple[list[str], list[str]]:
    """The names of the arrays (under the first of ``array_keys`` it has) and of the groups
    an ``_nczarr_group`` lists; FormatError naming ``where`` when a name is in both."""
    arrays, groups = _listed_names(info, where, *array_keys), _listed_names(info, where, "groups")
    both = set(arrays) & set(groups)
    if both:
        raise FormatError(f"{where}: {min(both)!r} is listed as an array and as a group")
    return arrays, groups


def _listed_names(info: Mapping[str, JSON], where: str, *keys: str) -> list[str]:
    """The child names an ``_nczarr_group`` lists under the first of ``keys`` it has: a list
    of distinct names that are store keys (a name with ``/`` or of periods only would
    reach another node). FormatError naming ``where`` otherwise."""
    key = next((k for k in keys if k in info), keys[0])
    names = info.get(key, [])
    if not isinstance(names, list):
        raise FormatError(f"{where}: {key} must be a list of names, not {compact_json(names)}")
    checked = []
    for name in names:
        try:
            checked.append(check_node_name(name))  # type: ignore[arg-type]  # it checks the type too
        except MetadataError as exc:
            raise FormatError(f"{where}: {key}: {exc}") from None
    if len(set(checked)) != len(checked):
        raise FormatError(f"{where}: {key} lists a name twice: {compact_json(names)}")
    return checked


def group_dimensions_json(dimensions: Sequence[Dimension], dict_form: bool) -> JSONObject:
    """The ``dimensions`` of ``_nczarr_group``: netcdf-c 4.10.1 writes a fixed dimension as
    its size and an unlimited one as an object (§2.4); the v3 form is always the object."""
    return {
        d.name: {"size": d.size, "unlimited": int(d.unlimited)} if dict_form or d.unlimited else d.size
        for d in dimensions
    }


def read_dimension_refs(
    variable: Variable, refs: JSON, shape: Sequence[int], where: str, resolver: Resolver
) -> None:
    """Set a variable's dimensions from the raw FQNs of ``dimension_references``, checking
    them against the array's shape."""
    group = variable.group
    assert group is not None
    if not isinstance(shape, list | tuple) or not all(isinstance(n, int) for n in shape):
        raise FormatError(f"{where}: shape {compact_json(shape)} is not a list of integers")
    if not isinstance(refs, list) or len(refs) != len(shape):
        raise FormatError(
            f"{where}: dimension references {compact_json(refs)} do not match shape {list(shape)}"
        )
    for ref, length in zip(refs, shape):
        dimension = dimension_at(group.root, ref, resolver)
        if dimension is None:
            raise FormatError(f"{where}: dimension reference {compact_json(ref)} is not declared")
        if not dimension.unlimited and dimension.size != length:
            raise FormatError(f"{where}: dimension {ref} has size {dimension.size}, the array {length}")
        variable.dimensions.append(reference_of(str(ref), group, resolver))  # dimension_at found it by FQN
