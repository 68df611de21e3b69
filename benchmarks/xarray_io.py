"""xarray on nczarr against xarray's own engines, on the same data.

    python benchmarks/xarray_io.py [--quick] [--only load] [--peers zarr] [--repeat N] [--json]

The data: one float32 variable (time, y, x) = (240, 256, 256), 60 MiB (``--quick``: a
quarter of the time steps), chunks of (24, 128, 128) = 1.5 MiB, uncompressed, with its
coordinates and CF attributes. Each engine gets it as it writes it: the ``nczarr`` engine an
NCZarr (v3) store written by ``to_nczarr``, ``netcdf4`` a netCDF-4 file written by
``to_netcdf(engine="netcdf4")`` with those chunks, ``zarr`` a Zarr v3 store written by
``to_zarr`` with those chunks.

Workloads:

- ``load``: ``xr.open_dataset(path, engine=...)`` then ``.load()``, cold (the files evicted
  from the page cache first);
- ``dask-write``: the same data as a dask array in memory (chunks = the stored chunks) written
  by dask's threaded scheduler: ``to_nczarr`` (parallel, chunk by chunk), ``to_netcdf``
  (netCDF4: one writer, serialised by xarray's lock), ``to_zarr`` (parallel).

The ratio column is each peer's median wall time over nczarr's (above 1: nczarr is faster).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import dask
import dask.array as da
import numpy as np
import xarray as xr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h

from nczarr.xarray import to_nczarr

warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")

NCZARR = "nczarr"
PEERS = ("netcdf4", "zarr")
CHUNKS = (24, 128, 128)


def dataset(steps: int, lazy: bool = False) -> xr.Dataset:
    """The benchmark's data (a dask array of the stored chunks when ``lazy``)."""
    rng = np.random.default_rng(0)
    values = rng.standard_normal((steps, 256, 256), dtype="f4") + 288
    data = da.from_array(values, chunks=CHUNKS) if lazy else values
    return xr.Dataset(
        {"tas": (("time", "y", "x"), data, {"units": "K", "standard_name": "air_temperature"})},
        coords={"time": np.arange(steps, dtype="f8"), "y": np.arange(256.0), "x": np.arange(256.0)},
    )


def write(engine: str, ds: xr.Dataset, path: str) -> None:
    """``ds`` written at ``path`` by ``engine``'s writer, with the stored chunks and no compression."""
    h.remove(path)
    if engine == NCZARR:
        to_nczarr(ds, path, encoding={"tas": {"chunksizes": CHUNKS}})
    elif engine == "netcdf4":
        ds.to_netcdf(path, engine="netcdf4", encoding={"tas": {"chunksizes": CHUNKS}})
    else:
        ds.to_zarr(path, mode="w", zarr_format=3, consolidated=True, encoding={"tas": {"chunks": CHUNKS, "compressors": None}})


def _path(scratch: str, engine: str, kind: str) -> str:
    return os.path.join(scratch, f"{kind}-{engine}.{'nc' if engine == 'netcdf4' else 'zarr'}")


def load_workload(scratch: str, steps: int) -> h.Workload:
    source = dataset(steps)
    cases = []
    for engine in (NCZARR, *PEERS):
        path = _path(scratch, engine, "load")
        write(engine, source, path)

        def run(_: Any, path: str = path, engine: str = engine) -> xr.Dataset:
            with xr.open_dataset(path, engine=engine) as ds:
                return ds.load()

        def check(_: Any, loaded: xr.Dataset) -> None:
            np.testing.assert_array_equal(loaded["tas"].values, source["tas"].values)

        setup: Callable[[], Any] = lambda path=path: h.drop_cache(path)  # noqa: E731
        cases.append(h.Case(engine, run, setup=setup, check=check, reference=None if engine == NCZARR else NCZARR))
    return h.Workload("load", "open_dataset + .load(), cold", cases, nbytes=source["tas"].nbytes)


def write_workload(scratch: str, steps: int) -> h.Workload:
    source = dataset(steps, lazy=True)
    expected = source["tas"].values
    cases = []
    for engine in (NCZARR, *PEERS):
        path = _path(scratch, engine, "write")

        def run(_: Any, path: str = path, engine: str = engine) -> str:
            with dask.config.set(scheduler="threads"):
                write(engine, source, path)
            return path

        def check(_: Any, path: str, engine: str = engine) -> None:
            with xr.open_dataset(path, engine=engine) as written:
                np.testing.assert_array_equal(written["tas"].values, expected)

        cases.append(h.Case(engine, run, check=check, reference=None if engine == NCZARR else NCZARR))
    return h.Workload("dask-write", "a dask array written in parallel (threads)", cases, nbytes=expected.nbytes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    h.add_common_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="a quarter of the data (60 time steps)")
    args = parser.parse_args()
    if args.list:
        print("workloads: load, dask-write")
        print("peers:", ", ".join((NCZARR, *PEERS)))
        return
    steps = 60 if args.quick else 240
    with h.scratch_directory(args.dir, args.keep) as scratch:
        print(h.check_drop_cache(scratch))
        workloads = [load_workload(scratch, steps), write_workload(scratch, steps)]
        chosen = h.select(workloads, h.split_option(args.only), h.split_option(args.peers))
        results = h.run_workloads(chosen, repeat=args.repeat, warmup=args.warmup)
        if args.json:
            path = h.write_json(results, "xarray_io", None if args.json == "auto" else args.json, meta={"steps": steps})
            print("wrote", path)


if __name__ == "__main__":
    main()
