"""The netCDF4-python compatible API (``nczarr.Dataset``) against its peers, side by side.

    python benchmarks/api.py [--small] [--raw] [--only NAME] [--peers NAME] [--repeat N] [--json]

Workloads (see the "API" section of benchmarks/README.md): append 500 records of 180x360
float32 one at a time along an unlimited dimension; create 200 variables with 10 attributes
each in 3 groups; open that dataset cold and list everything; 2,000 single-element writes
spread over a 1-D float64 variable of 2,000,000 in chunks of 1,000; and the bulk rows of
``engine.py`` through the API (write raw and zlib-1 + shuffle with chunks of one time step,
read both cold, a one-point time series of chunks 10x180x360).

Peers: nczarr (``nczarr.Dataset(path)``: NCZarr on Zarr v3, the reference of every ratio),
netCDF4 on netcdf-c's NCZarr (``file://<path>#mode=nczarr,file``), netCDF4 on HDF5 and
zarr-python 3 (groups, arrays and attributes: its own way of doing the same work). The first
three run the same functions, written against the netCDF4 API, with the module passed in.
``--small`` shrinks every workload (bulk array 50x360x288, 100 records, 50 variables, 200
writes into 200,000 elements). netCDF4's defaults hold (auto mask and scale on) unless
``--raw``, which turns them off on every variable, as ``engine.py`` does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h
import engine

NCZARR = "nczarr"
DTYPE = engine.DTYPE
DTYPE_1D = np.dtype("float64")


@dataclass(frozen=True)
class Sizes:
    """How big each workload is."""

    bulk: engine.Sizes  #: the bulk array, its chunks and the single writes (float64 here)
    records: int
    record: tuple[int, int]
    nvars: int
    ngroups: int
    nattrs: int
    var_shape: tuple[int, int]


FULL = Sizes(engine.FULL, records=500, record=(180, 360), nvars=200, ngroups=3, nattrs=10, var_shape=(10, 20))
SMALL = Sizes(engine.QUICK, records=100, record=(180, 360), nvars=50, ngroups=3, nattrs=10, var_shape=(10, 20))


def attributes(j: int, n: int) -> dict[str, Any]:
    """The attributes of variable ``j``: str, float and int values in turn."""
    out: dict[str, Any] = {}
    for k in range(n):
        kind = k % 3
        out[f"a{k}"] = f"text {k} of variable {j}" if kind == 0 else j + k / 8 if kind == 1 else j * 100 + k
    return out


def _bulk_codecs(compressed: bool) -> dict[str, Any]:
    return {"compression": "zlib", "complevel": engine.ZLIB_LEVEL, "shuffle": True} if compressed else {}


# -- peers --------------------------------------------------------------------------------
class Peer:
    """A library doing the workloads. Every method opens and closes what it uses, so the time
    of a call covers the whole operation."""

    name: str
    reference: str | None = NCZARR
    suffix = ".zarr"

    def path(self, root: str, what: str) -> str:
        return os.path.join(root, f"{self.name.replace(' ', '_')}-{what}{self.suffix}")

    def append(self, path: str, records: np.ndarray, compressed: bool = False) -> None:
        raise NotImplementedError

    def create_variables(self, path: str, sizes: Sizes) -> None:
        raise NotImplementedError

    def list_all(self, path: str) -> dict[str, Any]:
        """Every group (by path) with its dimensions, attributes and variables (dimensions,
        shape, dtype, attributes)."""
        raise NotImplementedError

    def write_line(self, path: str, data: np.ndarray, chunk: int) -> None:
        raise NotImplementedError

    def single_writes(self, path: str, indices: np.ndarray, values: np.ndarray) -> None:
        raise NotImplementedError

    def write(self, path: str, layout: engine.Layout, data: np.ndarray) -> None:
        raise NotImplementedError

    def read(self, path: str, selection: Any) -> np.ndarray:
        raise NotImplementedError


class NetCDFApi(Peer):
    """The netCDF4-python API of ``module`` (nczarr or netCDF4) on a store: nczarr's own
    (``nczarr``), netcdf-c's NCZarr (``ncz-url``) or an HDF5 file (``hdf5``)."""

    def __init__(self, module: ModuleType, name: str, backend: str, raw: bool) -> None:
        self.name, self.backend, self.raw = name, backend, raw
        self.Dataset = module.Dataset  # fails early when the API is missing
        if backend == NCZARR:
            self.reference = None
        if backend == "hdf5":
            self.suffix = ".nc"
        self._updater = engine.NetCDF4("nczarr") if backend == "ncz-url" else None

    def _url(self, path: str) -> str:
        return f"file://{os.path.abspath(path)}#mode=nczarr,file" if self.backend == "ncz-url" else path

    def _open(self, path: str, mode: str = "r") -> Any:
        if mode == "r+" and self._updater is not None:
            # netCDF4 1.7 turns "r+" on any NCZarr URL into "w"; engine.py works around it
            return self._updater._open_for_update(self._url(path))
        return self.Dataset(self._url(path), mode)

    def _tune(self, v: Any) -> Any:
        if self.raw:
            v.set_auto_maskandscale(False)
        return v

    def append(self, path: str, records: np.ndarray, compressed: bool = False) -> None:
        ds = self._open(path, "w")
        try:
            ds.createDimension("time", None)
            ds.createDimension("lat", records.shape[1])
            ds.createDimension("lon", records.shape[2])
            v = self._tune(ds.createVariable("v", DTYPE, ("time", "lat", "lon"), chunksizes=(1, *records.shape[1:]),
                                             **_bulk_codecs(compressed)))
            for i, record in enumerate(records):
                v[i] = record
        finally:
            ds.close()

    def create_variables(self, path: str, sizes: Sizes) -> None:
        ds = self._open(path, "w")
        try:
            ds.createDimension("y", sizes.var_shape[0])
            ds.createDimension("x", sizes.var_shape[1])
            groups = [ds.createGroup(f"g{k}") for k in range(sizes.ngroups)]
            for j in range(sizes.nvars):
                v = groups[j % sizes.ngroups].createVariable(f"v{j}", DTYPE, ("y", "x"))
                for key, value in attributes(j, sizes.nattrs).items():
                    v.setncattr(key, value)
        finally:
            ds.close()

    def list_all(self, path: str) -> dict[str, Any]:
        ds = self._open(path)
        try:
            out: dict[str, Any] = {}
            pending = [ds]
            while pending:
                g = pending.pop()
                out[g.path] = {
                    "dims": {name: len(d) for name, d in g.dimensions.items()},
                    "attrs": {a: g.getncattr(a) for a in g.ncattrs()},
                    "vars": {
                        name: (v.dimensions, v.shape, v.dtype, {a: v.getncattr(a) for a in v.ncattrs()})
                        for name, v in g.variables.items()
                    },
                }
                pending.extend(g.groups.values())
            return out
        finally:
            ds.close()

    def write_line(self, path: str, data: np.ndarray, chunk: int) -> None:
        ds = self._open(path, "w")
        try:
            ds.createDimension("n", data.size)
            v = self._tune(ds.createVariable("v", data.dtype, ("n",), chunksizes=(chunk,)))
            v[:] = data
        finally:
            ds.close()

    def single_writes(self, path: str, indices: np.ndarray, values: np.ndarray) -> None:
        ds = self._open(path, "r+")
        try:
            v = self._tune(ds["v"])
            for i, x in zip(indices.tolist(), values.tolist()):
                v[i] = x
        finally:
            ds.close()

    def write(self, path: str, layout: engine.Layout, data: np.ndarray) -> None:
        ds = self._open(path, "w")
        try:
            for d, n in zip(("t", "y", "x"), layout.shape):
                ds.createDimension(d, n)
            v = self._tune(ds.createVariable("v", DTYPE, ("t", "y", "x"), chunksizes=layout.chunks,
                                             **_bulk_codecs(layout.compressed)))
            v[:] = data
        finally:
            ds.close()

    def read(self, path: str, selection: Any) -> np.ndarray:
        ds = self._open(path)
        try:
            return self._tune(ds["v"])[selection]
        finally:
            ds.close()


class ZarrPython(Peer):
    """zarr-python 3 writing Zarr v3: groups, arrays with ``dimension_names`` and attributes;
    appending is ``resize`` + assignment."""

    name = "zarr-python v3"

    def __init__(self) -> None:
        import zarr
        from zarr.storage import LocalStore

        self._zarr, self._store = zarr, LocalStore

    def _group(self, path: str, mode: str) -> Any:
        return self._zarr.open_group(store=self._store(path, read_only=mode == "r"), mode=mode)

    def append(self, path: str, records: np.ndarray, compressed: bool = False) -> None:
        _, ny, nx = records.shape
        z = self._group(path, "w").create_array(
            "v", shape=(0, ny, nx), chunks=(1, ny, nx), dtype=DTYPE, dimension_names=("time", "lat", "lon"),
            filters=None, compressors=engine.V3_ZLIB if compressed else None,
        )
        for i, record in enumerate(records):
            z.resize((i + 1, ny, nx))
            z[i] = record

    def create_variables(self, path: str, sizes: Sizes) -> None:
        root = self._group(path, "w")
        groups = [root.create_group(f"g{k}") for k in range(sizes.ngroups)]
        for j in range(sizes.nvars):
            groups[j % sizes.ngroups].create_array(
                f"v{j}", shape=sizes.var_shape, chunks=sizes.var_shape, dtype=DTYPE, dimension_names=("y", "x"),
                filters=None, compressors=None, attributes=attributes(j, sizes.nattrs),
            )

    def list_all(self, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        pending = [("/", self._group(path, "r"))]
        while pending:
            where, g = pending.pop()
            out[where] = {
                "dims": {},
                "attrs": dict(g.attrs),
                "vars": {
                    name: (tuple(a.metadata.dimension_names or ()), a.shape, a.dtype, dict(a.attrs))
                    for name, a in g.arrays()
                },
            }
            pending.extend((f"{where.rstrip('/')}/{name}", sub) for name, sub in g.groups())
        return out

    def write_line(self, path: str, data: np.ndarray, chunk: int) -> None:
        z = self._group(path, "w").create_array(
            "v", shape=data.shape, chunks=(chunk,), dtype=data.dtype, dimension_names=("n",),
            filters=None, compressors=None,
        )
        z[:] = data

    def single_writes(self, path: str, indices: np.ndarray, values: np.ndarray) -> None:
        z = self._group(path, "r+")["v"]
        for i, x in zip(indices.tolist(), values.tolist()):
            z[i] = x

    def write(self, path: str, layout: engine.Layout, data: np.ndarray) -> None:
        z = self._group(path, "w").create_array(
            "v", shape=layout.shape, chunks=layout.chunks, dtype=DTYPE, dimension_names=("t", "y", "x"),
            filters=None, compressors=engine.V3_ZLIB if layout.compressed else None,
        )
        z[:] = data

    def read(self, path: str, selection: Any) -> np.ndarray:
        return self._group(path, "r")["v"][selection]


def make_peers(wanted: list[str], raw: bool) -> list[Peer]:
    def api(module_name: str, name: str, backend: str) -> Callable[[], Peer]:
        return lambda: NetCDFApi(importlib.import_module(module_name), name, backend, raw)

    factories: list[tuple[str, Callable[[], Peer]]] = [
        (NCZARR, api("nczarr", NCZARR, NCZARR)),
        ("netCDF4 NCZarr", api("netCDF4", "netCDF4 NCZarr", "ncz-url")),
        ("netCDF4 HDF5", api("netCDF4", "netCDF4 HDF5", "hdf5")),
        ("zarr-python v3", ZarrPython),
    ]
    peers = []
    for name, factory in factories:
        if wanted and name != NCZARR and not any(w in name for w in wanted):
            continue
        try:
            peers.append(factory())
        except (ImportError, AttributeError) as exc:
            print(f"skipping {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return peers


# -- workloads ----------------------------------------------------------------------------
class Stores:
    """Stores that a workload reads or updates, made once per peer (by the workload that
    writes them when it runs, else on first use)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.ready: set[str] = set()

    def path(self, peer: Peer, what: str) -> str:
        return peer.path(self.root, what)

    def ensure(self, peer: Peer, what: str, make: Callable[[str], None]) -> str:
        path = self.path(peer, what)
        if path not in self.ready:
            h.remove(path)
            make(path)
            self.ready.add(path)
        return path


@dataclass
class Data:
    records: np.ndarray
    bulk: np.ndarray
    line: np.ndarray

    @classmethod
    def make(cls, sizes: Sizes) -> Data:
        records = engine.make_data((sizes.records, *sizes.record), seed=2)
        line = np.random.default_rng(1).normal(size=sizes.bulk.n1d).astype(DTYPE_1D)
        return cls(records, engine.make_data(sizes.bulk.shape), line)


def _values(x: Any) -> np.ndarray:
    """The data of what a read returned (a masked array by netCDF4's defaults); fails when
    something is masked."""
    if np.ma.isMaskedArray(x) and np.ma.count_masked(x):
        raise AssertionError("the read returned masked values")
    return np.ma.getdata(x)


def _check_listing(peer: Peer, listing: dict[str, Any], sizes: Sizes) -> None:
    found = 0
    for j in range(sizes.nvars):
        group = listing.get(f"/g{j % sizes.ngroups}")
        if group is None or f"v{j}" not in group["vars"]:
            raise AssertionError(f"{peer.name}: variable /g{j % sizes.ngroups}/v{j} not listed")
        dims, shape, dtype, attrs = group["vars"][f"v{j}"]
        expected = attributes(j, sizes.nattrs)
        got = {k: attrs.get(k) for k in expected}
        if dims != ("y", "x") or tuple(shape) != sizes.var_shape or dtype != DTYPE or got != expected:
            raise AssertionError(f"{peer.name}: v{j} listed as {dims} {shape} {dtype} {got}")
        found += 1
    total = sum(len(g["vars"]) for g in listing.values())
    if total != found:
        raise AssertionError(f"{peer.name}: {total} variables listed, {found} expected")


def build_workloads(sizes: Sizes, peers: list[Peer], stores: Stores, data: Data) -> list[h.Workload]:
    b = sizes.bulk
    workloads = []

    def fresh(path: str) -> Callable[[], None]:
        def setup() -> None:
            stores.ready.discard(path)
            h.remove(path)
        return setup

    # 1. appending records, raw and compressed
    def append_case(peer: Peer, compressed: bool) -> h.Case:
        path = stores.path(peer, "append-zlib" if compressed else "append")

        def check(state: Any, result: Any) -> None:
            got = _values(peer.read(path, Ellipsis))
            if got.shape != data.records.shape or not np.array_equal(got, data.records):
                raise AssertionError(f"{peer.name}: the appended records read back wrong")

        return h.Case(peer.name, lambda s: peer.append(path, data.records, compressed), setup=fresh(path),
                      check=check, reference=peer.reference)

    ny, nx = sizes.record
    workloads.append(h.Workload(
        "append", f"append {sizes.records} records of {ny}x{nx} float32, one at a time (v[i] = record), close",
        [append_case(p, False) for p in peers],
    ))
    workloads.append(h.Workload(
        "append-zlib", f"append {sizes.records} records of {ny}x{nx} float32 as append, zlib-1 + shuffle, close",
        [append_case(p, True) for p in peers],
    ))

    # 2. many variables with attributes, and 3. listing them cold
    def make_meta(peer: Peer) -> Callable[[str], None]:
        return lambda path: peer.create_variables(path, sizes)

    def create_case(peer: Peer) -> h.Case:
        path = stores.path(peer, "meta")
        return h.Case(
            peer.name, lambda s: peer.create_variables(path, sizes), setup=fresh(path),
            check=lambda s, r: _check_listing(peer, peer.list_all(path), sizes),
            teardown=lambda s: stores.ready.add(path), reference=peer.reference,
        )

    def list_case(peer: Peer) -> h.Case:
        def setup() -> str:
            path = stores.ensure(peer, "meta", make_meta(peer))
            h.drop_cache(path)
            return path

        return h.Case(peer.name, peer.list_all, setup=setup, check=lambda s, r: _check_listing(peer, r, sizes),
                      reference=peer.reference)

    workloads.append(h.Workload(
        "create-vars",
        f"create {sizes.nvars} float32 variables {sizes.var_shape[0]}x{sizes.var_shape[1]} x {sizes.nattrs} "
        f"attributes (str/float/int) in {sizes.ngroups} groups, close",
        [create_case(p) for p in peers],
    ))
    workloads.append(h.Workload(
        "open-list", "cold open + list every group, dimension, variable and attribute value, close",
        [list_case(p) for p in peers],
    ))

    # 4. single-element writes into a filled variable, copied afresh from a template each time
    indices = (np.arange(b.nwrites, dtype=np.int64) * 997) % b.n1d
    values = (np.arange(b.nwrites, dtype=DTYPE_1D) + 0.5) * -1.0

    def single_case(peer: Peer) -> h.Case:
        target = stores.path(peer, "single")

        def setup() -> None:
            h.copy(stores.ensure(peer, "line", lambda p: peer.write_line(p, data.line, b.chunk1d)), target)

        def check(state: Any, result: Any) -> None:
            expected = data.line.copy()
            expected[indices] = values
            if not np.array_equal(_values(peer.read(target, Ellipsis)), expected):
                raise AssertionError(f"{peer.name}: single writes left wrong data")

        return h.Case(peer.name, lambda s: peer.single_writes(target, indices, values), setup=setup, check=check,
                      reference=peer.reference)

    workloads.append(h.Workload(
        "single-spread",
        f"{b.nwrites:,} single-element writes v[i] = x (i = k*997 mod n), float64 1-D of {b.n1d:,}, "
        f"chunks {b.chunk1d:,}, close",
        [single_case(p) for p in peers], ops=b.nwrites, unit="writes",
    ))

    # 5. the bulk rows of engine.py
    nbytes = int(np.prod(b.shape)) * DTYPE.itemsize
    raw, zlib = (engine.Layout(b.shape, b.slab, c, "slab") for c in (False, True))
    tile = engine.Layout(b.shape, b.tile, True, "tile")

    def make_bulk(peer: Peer, layout: engine.Layout) -> Callable[[str], None]:
        return lambda path: peer.write(path, layout, data.bulk)

    def write_case(peer: Peer, layout: engine.Layout) -> h.Case:
        path = stores.path(peer, layout.key)

        def check(state: Any, result: Any) -> None:
            if not np.array_equal(_values(peer.read(path, b.time_index)), data.bulk[b.time_index]):
                raise AssertionError(f"{peer.name} wrote wrong data to {path}")

        return h.Case(peer.name, lambda s: peer.write(path, layout, data.bulk), setup=fresh(path), check=check,
                      teardown=lambda s: stores.ready.add(path), reference=peer.reference)

    def read_case(peer: Peer, layout: engine.Layout, selection: Any) -> h.Case:
        def setup() -> str:
            path = stores.ensure(peer, layout.key, make_bulk(peer, layout))
            h.drop_cache(path)
            return path

        def check(state: Any, result: Any) -> None:
            expected = data.bulk[selection]
            got = _values(result)
            if got.shape != expected.shape or not np.array_equal(got, expected):
                raise AssertionError(f"{peer.name} read wrong data for {selection!r}")

        return h.Case(peer.name, lambda path: peer.read(path, selection), setup=setup, check=check,
                      reference=peer.reference)

    mb = f"{nbytes / 1e6:.0f} MB"
    for layout in (raw, zlib):
        comp = "zlib-1 + shuffle" if layout.compressed else "raw"
        workloads.append(h.Workload(
            f"write-{layout.key}", f"write {comp} v[:] = data, chunks {layout.chunk_label} ({mb}), close",
            [write_case(p, layout) for p in peers], nbytes=nbytes,
        ))
    for layout in (raw, zlib):
        comp = "zlib-1 + shuffle" if layout.compressed else "raw"
        workloads.append(h.Workload(
            f"read-{layout.key}", f"read {comp} v[:], chunks {layout.chunk_label}, cold",
            [read_case(p, layout, Ellipsis) for p in peers], nbytes=nbytes,
        ))
    py, px = b.point
    workloads.append(h.Workload(
        "point-zlib-tile", f"one-point time series v[:, {py}, {px}], zlib, chunks {tile.chunk_label}, cold",
        [read_case(p, tile, (slice(None), py, px)) for p in peers],
    ))
    return workloads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="smaller workloads (about a minute)")
    parser.add_argument("--raw", action="store_true", help="turn auto mask and scale off on every variable")
    h.add_common_arguments(parser)
    args = parser.parse_args(argv)
    only, wanted = h.split_option(args.only), h.split_option(args.peers)
    sizes = SMALL if args.small else FULL

    peers = make_peers(wanted, args.raw)
    if args.list:
        dummy = Data(np.empty((0, 0, 0), DTYPE), np.empty((0, 0, 0), DTYPE), np.empty(0, DTYPE_1D))
        for w in build_workloads(sizes, peers, Stores("/nonexistent"), dummy):
            print(f"{w.name:<16} {w.title}")
        print("peers:", ", ".join(p.name for p in peers))
        return 0

    data = Data.make(sizes)
    meta = {
        "mode": "small" if args.small else "full", "raw": args.raw, "repeat": args.repeat, "warmup": args.warmup,
        "only": only, "peers": [p.name for p in peers],
        **h.environment(["nczarr", "zarr", "numcodecs", "netCDF4", "numpy"]),
    }
    print(f"nczarr netCDF4-API benchmark ({meta['mode']}, auto mask/scale {'off' if args.raw else 'on'}): "
          f"{args.repeat} timed runs after {args.warmup} warm-up, peers interleaved; medians; "
          f"ratio = peer / nczarr (> 1: nczarr faster)")
    print("versions:", ", ".join(f"{k} {v}" for k, v in meta["packages"].items()), f"| {meta['cpu_count']} CPUs")

    with h.scratch_directory(args.dir, keep=args.keep) as root:
        print(h.check_drop_cache(root))
        print()
        workloads = h.select(build_workloads(sizes, peers, Stores(root), data), only, wanted)
        results = h.run_workloads(workloads, repeat=args.repeat, warmup=args.warmup)

    print("\nSummary (median wall time; in parentheses, peer / nczarr):\n")
    print(h.format_markdown(results, [p.name for p in peers]))
    slower = h.slower_cases(results, ["zarr-python", "NCZarr"], threshold=0.95)
    if slower:
        print("\nnczarr slower than a Zarr-based peer by more than 5 % (check the spread before believing it):")
        for name, peer, ref, ratio in slower:
            print(f"  {name}: {peer} takes {ratio:.2f}x the time of {ref}")
    if args.json:
        name = "api" + ("-small" if args.small else "")
        print("\nresults written to", h.write_json(results, name, args.json, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
