"""The netCDF data model as a tree: nodes, fully qualified names, resolution and checks.

This room knows nothing of storage; every front end builds these trees and every format
writes them.
"""

from __future__ import annotations

from nczarr.errors import FQNError, ModelError, ValidationError
from nczarr.model.checks import (
    Problem,
    Severity,
    ensure_valid,
    fits_atomic,
    name_problem,
    validate,
)
from nczarr.model.fqn import escape_name, join_fqn, split_fqn, unescape_name
from nczarr.model.nodes import (
    Attribute,
    AttributeValue,
    CompoundType,
    Dataset,
    Dimension,
    DimRef,
    EnumMember,
    EnumType,
    Field,
    Group,
    Node,
    OpaqueType,
    Position,
    TypeRef,
    UserType,
    Variable,
    VlenType,
)
from nczarr.model.resolve import Resolver, resolve_dimension, resolve_type
from nczarr.model.types import AtomicType, DataModel

__all__ = [
    "AtomicType",
    "Attribute",
    "AttributeValue",
    "CompoundType",
    "DataModel",
    "Dataset",
    "DimRef",
    "Dimension",
    "EnumMember",
    "EnumType",
    "FQNError",
    "Field",
    "Group",
    "ModelError",
    "Node",
    "OpaqueType",
    "Position",
    "Problem",
    "Resolver",
    "Severity",
    "TypeRef",
    "UserType",
    "ValidationError",
    "Variable",
    "VlenType",
    "ensure_valid",
    "escape_name",
    "fits_atomic",
    "join_fqn",
    "name_problem",
    "resolve_dimension",
    "resolve_type",
    "split_fqn",
    "unescape_name",
    "validate",
]
