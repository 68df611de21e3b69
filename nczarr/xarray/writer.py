"""``to_nczarr``: an xarray Dataset or DataTree written with nczarr, as ``to_netcdf`` writes
one (xarray's CF encoding, netCDF4's storage keywords), plus ``to_zarr``'s ways to add to a
dataset (``append_dim``, ``region``) and dask arrays written in parallel.

xarray writes only through the engines of its own table, so the writer is ours. It follows
``to_netcdf``: ``dump_to_store`` encodes the variables into an :class:`NczarrDataStore`,
which creates the dimensions, variables and attributes and writes numpy data at once. Dask
arrays go to :class:`~nczarr.xarray.store.ChunkWriter` targets: the client writes all the
metadata (and grows unlimited dimensions) first and closes the dataset, then each dask task
writes whole chunks of its own, wherever it runs (threads, processes, a dask.distributed
cluster), so metadata is written once and a failed task leaves a readable dataset.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import TYPE_CHECKING

import xarray as xr
from xarray.backends.common import ArrayWriter
from xarray.conventions import decode_cf_variables

from nczarr.errors import ArgumentError
from nczarr.xarray.store import NczarrDataStore, Where, is_dask

try:  # where xarray keeps to_netcdf's checks (moved between releases)
    from xarray.backends.writers import _sanitize_unlimited_dims, _validate_attrs, _validate_dataset_names, dump_to_store
except ImportError:  # pragma: no cover  (xarray before 2025.9)
    from xarray.backends.api import (  # type: ignore[no-redef,attr-defined]
        _sanitize_unlimited_dims,
        _validate_attrs,
        _validate_dataset_names,
        dump_to_store,
    )

if TYPE_CHECKING:
    from dask.delayed import Delayed

#: Encoding keys xarray adds on reading that say nothing about how to store a variable.
_READING_ONLY = ("source", "original_shape", "preferred_chunks")


def to_nczarr(
    data: xr.Dataset | xr.DataTree,
    target: object,
    *,
    mode: str | None = None,
    format: str | None = None,
    group: str | None = None,
    encoding: Mapping[Hashable, Mapping[str, object]] | None = None,
    unlimited_dims: Iterable[Hashable] | Mapping[str, Iterable[Hashable]] | None = None,
    compute: bool = True,
    append_dim: Hashable | None = None,
    region: Mapping[Hashable, slice] | None = None,
    storage_options: Mapping[str, object] | None = None,
    auto_complex: bool | None = None,
) -> Delayed | None:
    """Write ``data`` (an xarray Dataset or DataTree) to ``target`` with nczarr.

    ``target``: a path (a folder, a ``.zip``, or a ``.nc`` file for ``format="NETCDF4"``), a URL
    (fsspec's, with ``storage_options``, or netcdf-c's with ``#mode=``), an fsspec mapper or
    filesystem. ``mode``: ``"w"`` (the default: replace), ``"a"`` (add to or overwrite in an
    existing dataset; the default with ``append_dim`` or ``region``). ``format``: ``NCZARR``
    (the default), ``NCZARR_V2``, ``ZARR``, ``ZARR_V2``. ``group``: the group to write (created
    when missing). ``encoding``: per variable, ``to_netcdf``'s keys (``dtype``, ``_FillValue``,
    ``scale_factor``, ``units``, ``chunksizes``, ``zlib``, ``complevel``, ``shuffle``,
    ``compression`` = ``"zlib"``, ``"zstd"``, ``"blosc_lz4"``..., ``contiguous``...) and
    ``to_zarr``'s ``chunks``; for a DataTree, one such mapping per group path, as
    ``DataTree.to_netcdf`` takes it (``unlimited_dims`` too). ``auto_complex``: netCDF4's
    (complex variables stored as netCDF4-python stores them).

    ``append_dim``: grow that unlimited dimension of the stored dataset with ``data`` (variables
    without it are overwritten). ``region``: ``{dim: slice}`` of existing variables to write
    ``data`` into. Both encode as the stored variables are encoded (their units, dtype, fill).

    Dask arrays are written in parallel, each task writing whole chunks (dask blocks that are
    not aligned with the stored chunks are rechunked, with a warning). ``compute=False``
    returns a dask Delayed that writes them (the metadata is written at once). Returns None
    when ``compute`` is true.
    """
    if isinstance(data, xr.DataTree):
        if append_dim is not None or region is not None:
            raise ArgumentError("append_dim and region write into one dataset: write the DataTree's groups one by one")
        return _write_tree(
            data, target, mode or "w", format, group, encoding, unlimited_dims, compute, storage_options, auto_complex
        )
    if not isinstance(data, xr.Dataset):
        raise ArgumentError(f"to_nczarr writes an xarray Dataset or DataTree, not {type(data).__name__}")
    if isinstance(unlimited_dims, Mapping):
        raise ArgumentError("unlimited_dims by group path is for a DataTree; give a list of dimension names")
    return _write_dataset(
        data, target, mode, format, group, encoding, unlimited_dims, compute, append_dim, region, storage_options, auto_complex
    )


def _write_tree(
    tree: xr.DataTree,
    target: object,
    mode: str,
    format: str | None,
    group: str | None,
    encoding: Mapping[Hashable, Mapping[str, object]] | None,
    unlimited_dims: Iterable[Hashable] | Mapping[str, Iterable[Hashable]] | None,
    compute: bool,
    storage_options: Mapping[str, object] | None,
    auto_complex: bool | None,
) -> Delayed | None:
    """Each group of the tree, the root first (in ``mode``), then the others added to it."""
    encodings = dict(encoding or {})
    unlimited = dict(unlimited_dims) if isinstance(unlimited_dims, Mapping) else {}
    unknown = sorted(str(path) for path in [*encodings, *unlimited] if str(path) not in tree.groups)
    if unknown:
        raise ArgumentError(f"encoding or unlimited_dims name groups the DataTree does not have: {unknown}")
    writes = []
    for index, node in enumerate(tree.subtree):
        path = node.path
        where = "/".join(part for part in (group or "", path) if part.strip("/")) or None
        written = _write_dataset(
            node.to_dataset(inherit=False),
            target,
            mode if index == 0 else "a",
            format,
            where,
            encodings.get(path),  # type: ignore[arg-type]
            unlimited.get(path),
            compute,
            None,
            None,
            storage_options,
            auto_complex,
        )
        writes.append(written)
    if compute:
        return None
    import dask

    return dask.delayed(_done)(writes)


def _done(writes: object) -> None:
    """What the delayed object of a written tree or dataset computes to (after the writes)."""
    del writes


def _write_dataset(
    dataset: xr.Dataset,
    target: object,
    mode: str | None,
    format: str | None,
    group: str | None,
    encoding: Mapping[Hashable, Mapping[str, object]] | None,
    unlimited_dims: Iterable[Hashable] | None,
    compute: bool,
    append_dim: Hashable | None,
    region: Mapping[Hashable, slice] | None,
    storage_options: Mapping[str, object] | None,
    auto_complex: bool | None,
) -> Delayed | None:
    adding = append_dim is not None or region is not None
    if append_dim is not None and region is not None:
        raise ArgumentError("give append_dim or region, not both")
    mode = mode or ("a" if adding else "w")
    if mode not in ("w", "a", "r+"):
        raise ArgumentError(f"mode must be 'w' or 'a', got {mode!r}")
    if adding and mode == "w":
        raise ArgumentError("append_dim and region write into an existing dataset: use mode='a'")
    encoding = dict(encoding or {})
    unknown = sorted(str(name) for name in encoding if name not in dataset.variables)
    if unknown:  # before anything is replaced (xarray's KeyError)
        raise KeyError(f"encoding given for variables not in the dataset: {unknown}")
    _validate_dataset_names(dataset)
    _validate_attrs(dataset, "nczarr")
    unlimited = _sanitize_unlimited_dims(dataset, unlimited_dims)
    where = Where.of(target, storage_options)
    if not compute and not where.parallel and any(is_dask(v.data) for v in dataset.variables.values()):
        raise ArgumentError(
            f"compute=False needs a store dask tasks can write to by themselves (a folder or an object store), "
            f"not {where.name}"
        )
    store = NczarrDataStore.open(
        target, mode, format=format, group=group, storage_options=storage_options, auto_complex=auto_complex
    )
    try:
        dataset = _as_stored(dataset, store, encoding, append_dim, region)
        writer = ArrayWriter()
        dump_to_store(dataset, store, writer, encoding=encoding, unlimited_dims=unlimited)
        if store.parallel:
            # the metadata, once, before any task writes a chunk
            store.close()
            writes = writer.sync(compute=compute)
            if compute:
                return None
            import dask

            return dask.delayed(_done)(writes)
        # dask arrays into a dataset only this process can write: through it, here
        writer.sync(compute=True, chunkmanager_store_kwargs={"scheduler": "threads"})
    finally:
        store.close()
    return None


def _as_stored(
    dataset: xr.Dataset,
    store: NczarrDataStore,
    encoding: Mapping[Hashable, Mapping[str, object]],
    append_dim: Hashable | None,
    region: Mapping[Hashable, slice] | None,
) -> xr.Dataset:
    """The dataset to write, its variables that the store has already encoded as the stored
    ones are (their units, dtype, fill: xarray's reading of them); the store told where to
    write (``region``, or the records after the stored ones for ``append_dim``)."""
    stored_names = [name for name in dataset.variables if str(name) in store.ds.variables]
    if append_dim is not None:
        dimensions = store.get_dimensions()
        if str(append_dim) not in dimensions:
            raise ArgumentError(f"append_dim {append_dim!r} is not a dimension of the stored dataset ({sorted(dimensions)})")
        unlimited = store.get_encoding()["unlimited_dims"]
        if str(append_dim) not in unlimited and not store.grow_in_pure_zarr(str(append_dim)):
            raise ArgumentError(
                f"append_dim {append_dim!r} is not unlimited in the stored dataset: only an unlimited dimension grows "
                "(write it first with unlimited_dims=[...])"
            )
        start = dimensions[str(append_dim)]
        store.region = {str(append_dim): slice(start, start + dataset.sizes[append_dim])}
    elif region is not None:
        store.region = _checked_region(dataset, store, region)
    if not stored_names:
        return dataset
    given = sorted(str(name) for name in stored_names if name in encoding)
    if given and store.region:
        raise ArgumentError(f"variables {given} are already stored: their encoding is the stored one, give none")
    if store.region:
        missing = sorted(str(name) for name in dataset.variables if name not in stored_names)
        if region is not None and missing:
            raise ArgumentError(f"region writes into stored variables only; not stored: {missing}")
    stored = {str(name): store.open_store_variable(str(name), store.ds.variables[str(name)]) for name in stored_names}
    decoded, _, _ = decode_cf_variables(stored, dict(store.get_attrs()))
    dataset = dataset.copy(deep=False)
    for name in stored_names:
        if name in encoding:
            continue
        kept = {k: v for k, v in decoded[str(name)].encoding.items() if k not in _READING_ONLY}
        dataset[name].encoding = kept
    return dataset


def _checked_region(dataset: xr.Dataset, store: NczarrDataStore, region: Mapping[Hashable, slice]) -> dict[str, slice]:
    """``region`` as slices with a start and stop inside the stored dimensions, matching the
    dataset's lengths."""
    dimensions = store.get_dimensions()
    unlimited = store.get_encoding()["unlimited_dims"]
    checked: dict[str, slice] = {}
    for dim, part in region.items():
        name = str(dim)
        if not isinstance(part, slice) or part.step not in (None, 1):
            raise ArgumentError(f"region[{name!r}] must be a slice with step 1, got {part!r}")
        if name not in dimensions:
            raise ArgumentError(f"region names {name!r}, not a dimension of the stored dataset ({sorted(dimensions)})")
        if (part.start or 0) < 0 or (part.stop or 0) < 0:
            raise ArgumentError(f"region[{name!r}] = {part!r}: give the slice from the start, without negative indices")
        start = part.start or 0
        stop = part.stop if part.stop is not None else start + dataset.sizes.get(dim, dimensions[name] - start)
        if dim in dataset.sizes and stop - start != dataset.sizes[dim]:
            raise ArgumentError(
                f"region[{name!r}] = {part!r} holds {stop - start} elements; the dataset has {dataset.sizes[dim]}"
            )
        if stop > dimensions[name] and name not in unlimited:
            raise ArgumentError(f"region[{name!r}] = {part!r} reaches past the stored length {dimensions[name]}")
        checked[name] = slice(start, stop)
    for key, variable in dataset.variables.items():
        if not set(map(str, variable.dims)) & set(checked):
            raise ArgumentError(
                f"variable {key!r} has none of the region's dimensions {sorted(checked)}: drop it from the dataset"
            )
    return checked
