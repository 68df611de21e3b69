"""The private helpers code and tests import from ``netCDF4.utils``, with the same results.

``_StartCountStride`` describes a key as netCDF4's start/count/stride/index arrays; it is
computed from :func:`nczarr.values.indexing.normalise`, the same rules ``Variable`` indexing
uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from nczarr.errors import ArgumentError, NameNotFoundError, SelectionError
from nczarr.values.indexing import is_int as _is_int
from nczarr.values.indexing import normalise
from nczarr.values.rules import is_safe_cast as _safecast
from nczarr.values.rules import round_to_digit

__all__ = [
    "_StartCountStride",
    "_find_dim",
    "_is_container",
    "_is_int",
    "_out_array_shape",
    "_quantize",
    "_safecast",
    "_sortbylist",
    "_tostr",
    "_walk_grps",
]


def _StartCountStride(
    elem: Any,
    shape: Sequence[int],
    dimensions: Sequence[str] | None = None,
    grp: Any = None,
    datashape: tuple[int, ...] | None = None,
    put: bool = False,
    use_get_vars: bool = True,
    return_selection: bool = False,
) -> tuple[np.ndarray, ...] | tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any]]:
    """netCDF4's description of ``elem`` on a variable of ``shape``: start, count, stride
    and put/take indices, each with one leading axis per integer-array index (length 1
    otherwise) and a last axis per variable dimension; with ``return_selection`` also the
    normalised per-axis selectors."""
    ndim = len(shape) or 1
    unlimited: list[bool] = []
    if put and dimensions:
        if len(dimensions) < ndim:
            raise SelectionError(f"{type(dimensions).__name__} index out of range")
        unlimited = [bool(_find_dim(grp, dimensions[i]).isunlimited()) for i in range(ndim)]
    norm = normalise(elem, tuple(shape), unlimited, datashape, put=put, use_get_vars=use_get_vars)
    elems = list(norm.elems)

    compact = (1,) * ndim + (ndim,)
    start = np.empty(compact, dtype=np.intp)
    count = np.empty(compact, dtype=np.intp)
    stride = np.empty(compact, dtype=np.intp)
    indices = np.empty(compact, dtype=object)
    for i, e in enumerate(elems):
        start[..., i] = norm.start[i]
        count[..., i] = norm.count[i]
        stride[..., i] = norm.stride[i]
        indices[..., i] = slice(None) if type(e) is slice else (0 if isinstance(e, np.ndarray) else -1)

    # One chunk per element of each integer-array index (their Cartesian product).
    grid = tuple(len(e) if isinstance(e, np.ndarray) else 1 for e in elems)
    if 0 not in norm.count and grid != compact[:-1]:
        full = (*grid, ndim)
        start, count, stride, indices = (np.broadcast_to(a, full).copy() for a in (start, count, stride, indices))
        for i, e in enumerate(elems):
            if isinstance(e, np.ndarray):
                along = (1,) * i + (len(e),) + (1,) * (ndim - i - 1)
                start[..., i] = e.reshape(along)
                indices[..., i] = np.arange(len(e)).reshape(along)
                count[..., i] = 1
    if return_selection:
        return start, count, stride, indices, elems
    return start, count, stride, indices


def _out_array_shape(count: np.ndarray) -> list[int]:
    """The shape of the array a ``_StartCountStride`` count describes (integer axes as 1)."""
    out = []
    for i, n in enumerate(count.shape[:-1]):
        out.append(int(count[..., i].flat[0]) if n == 1 and count.size else n)
    return out


def _quantize(data: np.ndarray, least_significant_digit: int) -> np.ndarray:
    """``data`` rounded to keep ``least_significant_digit`` decimal digits (netCDF4's
    ``least_significant_digit`` packing)."""
    return round_to_digit(data, least_significant_digit)


def _is_container(a: Any) -> bool:
    """Whether ``a`` supports ``in`` and is not a string."""
    try:
        _ = 1 in a
    except Exception:
        return False
    return not isinstance(a, (str, bytes))


def _sortbylist(A: Sequence[Any], B: Sequence[Any]) -> list[Any]:
    """The items of ``A`` ordered by the values at the same positions in ``B``."""
    ranked = sorted(enumerate(A), key=lambda pair: B[pair[0]])
    return [item for _, item in ranked]


def _tostr(s: Any) -> Any:
    """``str(s)``, or ``s`` itself when it has no string form."""
    try:
        return str(s)
    except Exception:
        return s


def _find_dim(grp: Any, dimname: str) -> Any:
    """The dimension ``dimname`` seen from ``grp``: its own or the nearest ancestor's."""
    group = grp
    while group is not None:
        try:
            dim = group.dimensions[dimname]
        except Exception:
            group = getattr(group, "parent", None)
            continue
        if dim is None:
            raise NameNotFoundError(
                f"dimension {dimname} not defined in group {grp.path} or any group in its family tree"
            )
        return dim
    raise ArgumentError(f"cannot find dimension {dimname} in this group or parent groups")


def _walk_grps(topgrp: Any) -> Iterator[Any]:
    """The child groups of ``topgrp``, then of each of them, depth first: one
    ``groups.values()`` view per group visited."""
    yield topgrp.groups.values()
    for child in topgrp.groups.values():
        yield from _walk_grps(child)
