"""Opening a dataset of many variables, with and without consolidated metadata.

    python benchmarks/consolidated.py [--arrays N] [--only v3] [--peers xarray] [--repeat N] [--json]

The store: one group holding N arrays (default 1,000) of 100 float32 values (one chunk each,
written), each with a dimension name (v3 ``dimension_names``; v2 the ``_ARRAY_DIMENSIONS``
attribute, which xarray needs) and two attributes; written by nczarr, which leaves
consolidated metadata on close. One store per Zarr format.

The work, timed cold (the store's files evicted from the page cache first): open the group
and list every array's name, shape and attributes. Peers, each with the consolidated metadata
used and not (``no-cons``): nczarr (``open_group(store, use_consolidated=...)`` then
``arrays()``), zarr-python 3 (``zarr.open_group(..., use_consolidated=...)`` then
``arrays()``), xarray (``xr.open_zarr(..., consolidated=..., chunks=None)`` then its
``data_vars``). Every peer is told the Zarr format.

The same at the netCDF dataset level (workloads ``dataset-v3``, ``dataset-v2``): an NCZARR
(v3) and an NCZARR_V2 dataset of N variables in 3 groups, 10 attributes each, written by an
nczarr Session (which leaves consolidated metadata on close). The work: open cold with
``Session.open(store, detect(store), use_consolidated=...)`` and read every variable's
attributes. For the NCZARR_V2 dataset netCDF4 is a peer (``file://...#mode=nczarr,file``,
and with ``,consolidated`` to make netcdf-c read the ``.zmetadata``); its requests are not
counted.

Besides the times, the store requests of one more (untimed) run of each peer are counted:
``gets`` are values read (a batch read of n keys counts n), ``lists`` are directory listings.
nczarr's are counted by a DirectoryStore subclass, zarr-python's and xarray's by zarr-python's
``LoggingStore``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import netCDF4
import numpy as np
import xarray as xr
import zarr
from zarr.storage import LocalStore, LoggingStore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h

from nczarr.formats import convention, detect
from nczarr.formats.session import Session
from nczarr.model import AtomicType, Dataset
from nczarr.store import DirectoryStore
from nczarr.zarr import create_group, open_group

warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")

LENGTH = 100
NCZARR, NCZARR_PLAIN = "nczarr", "nczarr no-cons"


class CountingDirectoryStore(DirectoryStore):
    """A DirectoryStore that counts the values it reads and the listings it makes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gets = 0
        self.lists = 0

    def _get(self, key: str, byte_range: Any) -> bytes | None:
        self.gets += 1
        return super()._get(key, byte_range)

    def _exists(self, key: str) -> bool:
        self.gets += 1
        return super()._exists(key)

    def _list_prefix(self, prefix: str) -> Any:
        self.lists += 1
        return super()._list_prefix(prefix)

    def _list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        self.lists += 1
        return super()._list_dir(prefix)


def build(path: str, zarr_format: int, count: int) -> None:
    """The dataset: ``count`` variables of LENGTH values along dimension ``x``."""
    with create_group(DirectoryStore(path), zarr_format=zarr_format, attributes={"title": "many variables"}) as root:
        data = np.arange(LENGTH, dtype="f4")
        for i in range(count):
            attributes: dict[str, Any] = {"units": "m", "long_name": f"variable {i}"}
            if zarr_format == 2:
                options: dict[str, Any] = {"attributes": attributes | {"_ARRAY_DIMENSIONS": ["x"]}}
            else:
                options = {"attributes": attributes, "dimension_names": ["x"]}
            root.create_array(f"v{i:04d}", shape=(LENGTH,), dtype="f4", chunks=(LENGTH,), **options)[:] = data


# -- what each peer does: open, then (name, shape, attributes) of every array -----------------
Listing = list[tuple[str, tuple[int, ...], dict[str, Any]]]


def nczarr_listing(store: DirectoryStore, zarr_format: int, consolidated: bool) -> Listing:
    root = open_group(store, zarr_format=zarr_format, use_consolidated=consolidated)
    return [(name, a.shape, dict(a.attrs)) for name, a in root.arrays().items()]


def zarr_python_listing(store: Any, zarr_format: int, consolidated: bool) -> Listing:
    group = zarr.open_group(store, mode="r", zarr_format=zarr_format, use_consolidated=consolidated)
    return [(name, a.shape, dict(a.attrs)) for name, a in group.arrays()]


def xarray_listing(store: Any, zarr_format: int, consolidated: bool) -> Listing:
    ds = xr.open_zarr(store, consolidated=consolidated, chunks=None, zarr_format=zarr_format)
    return [(str(name), v.shape, dict(v.attrs)) for name, v in ds.data_vars.items()]


#: peer → (how it lists, a store for timing, a counting store → (gets, lists), consolidated?)
def peers(path: str) -> dict[str, tuple[Callable[..., Listing], Callable[[], Any], Callable[[], Any], bool]]:
    def local() -> LocalStore:
        return LocalStore(path, read_only=True)

    def logging_store() -> LoggingStore:
        return LoggingStore(local(), log_level="DEBUG", log_handler=logging.NullHandler())

    def nczarr_store() -> DirectoryStore:
        return DirectoryStore(path, read_only=True)

    def counting() -> CountingDirectoryStore:
        return CountingDirectoryStore(path, read_only=True)

    out = {}
    for consolidated in (True, False):
        suffix = "" if consolidated else " no-cons"
        out["nczarr" + suffix] = (nczarr_listing, nczarr_store, counting, consolidated)
        out["zarr-python" + suffix] = (zarr_python_listing, local, logging_store, consolidated)
        out["xarray" + suffix] = (xarray_listing, local, logging_store, consolidated)
    return out


def count_requests(store: Any) -> tuple[int, int]:
    """(gets, lists) made through a counting store."""
    if isinstance(store, CountingDirectoryStore):
        return store.gets, store.lists
    counter = store.counter
    gets = counter["get"] + counter["get_partial_values"] + counter["exists"] + counter["getsize"]
    return gets, counter["list"] + counter["list_dir"] + counter["list_prefix"]


def workload(path: str, zarr_format: int, count: int) -> tuple[h.Workload, dict[str, tuple[int, int]]]:
    """The timed cases of one store, and the requests each peer makes."""
    cases, requests = [], {}
    for peer, (listing, store, counting, consolidated) in peers(path).items():
        counted = counting()
        result = listing(counted, zarr_format, consolidated)
        requests[peer] = count_requests(counted)
        check_listing(result, count)

        def run(_: Any, listing: Callable[..., Listing] = listing, store: Callable[[], Any] = store,
                consolidated: bool = consolidated) -> Listing:
            return listing(store(), zarr_format, consolidated)

        if peer == NCZARR:
            reference = None
        elif consolidated:
            reference = NCZARR
        else:
            reference = NCZARR if peer == NCZARR_PLAIN else NCZARR_PLAIN
        cases.append(h.Case(
            peer, run, setup=lambda: h.drop_cache(path), check=lambda _, r: check_listing(r, count), reference=reference
        ))
    title = f"cold open + list {count:,} arrays (name, shape, attributes), Zarr v{zarr_format}"
    return h.Workload(f"open-list-v{zarr_format}", title, cases, ops=count, unit="arrays"), requests


def check_listing(listing: Listing, count: int) -> None:
    names = sorted(name for name, _, _ in listing)
    if len(names) != count or names[0] != "v0000":
        raise AssertionError(f"listed {len(names)} arrays ({names[:3]}...), expected {count}")
    name, shape, attrs = min(listing)
    if shape != (LENGTH,) or attrs.get("units") != "m":
        raise AssertionError(f"{name}: shape {shape}, attributes {attrs}")


# -- the netCDF dataset level -----------------------------------------------------------------
DATASET_GROUPS, DATASET_ATTRIBUTES = 3, 10
#: A netCDF listing: (FQN of every variable, its attributes by name).
Attributes = list[tuple[str, dict[str, Any]]]


def build_dataset(path: str, fmt: str, count: int) -> None:
    """``count`` float variables along ``x`` in DATASET_GROUPS groups, DATASET_ATTRIBUTES
    int attributes each, written by a Session (no data: the work reads metadata only)."""
    dataset = Dataset("")
    dataset.add_dimension("x", LENGTH)
    groups = [dataset.add_group(f"g{i}") for i in range(DATASET_GROUPS)]
    for i in range(count):
        variable = groups[i % DATASET_GROUPS].add_variable(f"v{i:04d}", AtomicType.FLOAT, ["/x"])
        for j in range(DATASET_ATTRIBUTES):
            variable.add_attribute(f"a{j}", AtomicType.INT, [i * DATASET_ATTRIBUTES + j])
    Session.create(DirectoryStore(path), dataset, convention(fmt)).close()


def nczarr_dataset(store: DirectoryStore, consolidated: bool) -> Attributes:
    session = Session.open(store, detect(store), read_only=True, use_consolidated=None if consolidated else False)
    return [
        (v.fqn, {a.name: a.values for a in v.attributes})
        for g in session.dataset.walk()
        for v in g.variables
    ]


def netcdf4_dataset(path: str, consolidated: bool) -> Attributes:
    mode = "nczarr,file,consolidated" if consolidated else "nczarr,file"
    with netCDF4.Dataset(f"file://{os.path.abspath(path)}#mode={mode}", "r") as ds:
        return [
            (f"/{g.name}/{name}", {a: v.getncattr(a) for a in v.ncattrs()})
            for g in ds.groups.values()
            for name, v in g.variables.items()
        ]


def check_dataset(listing: Attributes, count: int) -> None:
    if len(listing) != count:
        raise AssertionError(f"read {len(listing)} variables, expected {count}")
    fqn, attrs = min(listing)
    if fqn != "/g0/v0000" or len(attrs) != DATASET_ATTRIBUTES or list(np.ravel(attrs["a9"])) != [9]:
        raise AssertionError(f"{fqn}: attributes {attrs}")


def dataset_workload(path: str, fmt: str, count: int) -> tuple[h.Workload, dict[str, tuple[int, int] | None]]:
    """The timed cases of one netCDF dataset, and the requests each peer makes."""
    cases, requests = [], {}
    for consolidated in (True, False):
        peer = NCZARR if consolidated else NCZARR_PLAIN
        counted = CountingDirectoryStore(path, read_only=True)
        check_dataset(nczarr_dataset(counted, consolidated), count)
        requests[peer] = (counted.gets, counted.lists)

        def run(_: Any, consolidated: bool = consolidated) -> Attributes:
            return nczarr_dataset(DirectoryStore(path, read_only=True), consolidated)

        cases.append(h.Case(
            peer, run, setup=lambda: h.drop_cache(path), check=lambda _, r: check_dataset(r, count),
            reference=None if consolidated else NCZARR,
        ))
        if fmt == "NCZARR_V2":
            peer = "netCDF4" + ("" if consolidated else " no-cons")
            requests[peer] = None

            def run_netcdf4(_: Any, consolidated: bool = consolidated) -> Attributes:
                return netcdf4_dataset(path, consolidated)

            cases.append(h.Case(
                peer, run_netcdf4, setup=lambda: h.drop_cache(path), check=lambda _, r: check_dataset(r, count),
                reference=NCZARR if consolidated else NCZARR_PLAIN,
            ))
    zarr_format = 3 if fmt == "NCZARR" else 2
    title = f"cold open {fmt} dataset + read {count:,} variables' attributes, Zarr v{zarr_format}"
    return h.Workload(f"dataset-v{zarr_format}", title, cases, ops=count, unit="variables"), requests


def summary(results: list[h.WorkloadResult], requests: dict[str, dict[str, tuple[int, int] | None]]) -> str:
    """Per workload and peer: the requests of one run (— where not counted), the median
    time, the ratio."""
    lines = ["| workload | peer | gets | lists | median s | ratio | vs |", "|---|---|---:|---:|---:|---:|---|"]
    for r in results:
        for c in r.cases:
            counted = requests[r.workload.name][c.peer]
            gets, lists = ("—", "—") if counted is None else (f"{counted[0]:,}", f"{counted[1]:,}")
            ratio = r.ratio(c)
            wall = f"{c.wall:.3f}" if c.samples else "error"
            lines.append(
                f"| {r.workload.name} | {c.peer} | {gets} | {lists} | {wall} | "
                f"{f'{ratio:.2f}' if ratio is not None else '—'} | {c.reference or ''} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    h.add_common_arguments(parser)
    parser.add_argument("--arrays", type=int, default=1000, help="variables in the dataset (default 1000)")
    args = parser.parse_args()
    if args.list:
        print("workloads: open-list-v3, open-list-v2, dataset-v3, dataset-v2")
        print("peers:", ", ".join([*peers("."), "netCDF4", "netCDF4 no-cons"]))
        return
    with h.scratch_directory(args.dir, args.keep) as scratch:
        print(h.check_drop_cache(scratch))
        workloads, requests = [], {}
        for zarr_format in (3, 2):
            path = os.path.join(scratch, f"many-v{zarr_format}.zarr")
            build(path, zarr_format, args.arrays)
            w, counted = workload(path, zarr_format, args.arrays)
            workloads.append(w)
            requests[w.name] = counted
        for fmt in ("NCZARR", "NCZARR_V2"):
            path = os.path.join(scratch, f"dataset-{fmt}.zarr")
            build_dataset(path, fmt, args.arrays)
            w, dataset_counted = dataset_workload(path, fmt, args.arrays)
            workloads.append(w)
            requests[w.name] = dataset_counted
        chosen = h.select(workloads, h.split_option(args.only), h.split_option(args.peers))
        results = h.run_workloads(chosen, repeat=args.repeat, warmup=args.warmup)
        print(summary(results, requests))
        if args.json:
            meta = {"arrays": args.arrays, "requests": requests}
            print("wrote", h.write_json(results, "consolidated", None if args.json == "auto" else args.json, meta=meta))


if __name__ == "__main__":
    main()
