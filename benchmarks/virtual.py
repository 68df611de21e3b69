"""Virtual datasets: making references, against kerchunk and VirtualiZarr, and reading through
them, against netCDF4 reading the files.

    python benchmarks/virtual.py [--quick] [--dir DIR] [--repeat N] [--only NAME]

Workloads (each peer in a child process of its own, so that its peak RSS is its own):

- ``files``: references for 1,000 small netCDF-4 files (``--quick``: 100), one record each of
  a 50 x 50 float32 variable, combined along the record dimension: ``nczarr virtualize`` to an
  NCZarr target (Parquet table) and ``--kerchunk`` JSON; kerchunk (``SingleHdf5ToZarr`` of each
  file + ``MultiZarrToZarr``); VirtualiZarr (``open_virtual_dataset`` of each + ``xr.concat``,
  written as kerchunk JSON).
- ``chunks``: references for one netCDF-4 file of a million chunks (1000 x 1000 int16, chunks
  of 1 x 1; ``--quick``: 100 x 100): nczarr to its Parquet table and to kerchunk Parquet;
  kerchunk to JSON; VirtualiZarr to kerchunk Parquet.
- ``reads``: a point and a 100-row slab of a 2000 x 2000 float32 file (deflated chunks of
  100 x 100) read through the virtual dataset (``nczarr.Dataset``) and through netCDF4 on the
  ``.nc``; medians of repeated reads in one process, after the open.

Each line gives the median seconds, peak RSS (MB) and the size of the reference set on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # this checkout, not an installed nczarr

#: What each peer runs, as a child process: ``{paths}`` (a JSON list), ``{out}``.
PEERS = {
    "files": {
        "nczarr": "from nczarr.convert.virtual import virtualize, VirtualOptions\n"
        "virtualize(paths, out + '.zarr', VirtualOptions(workers=2))",
        "nczarr --kerchunk": "from nczarr.convert.virtual import export_kerchunk, VirtualOptions\n"
        "export_kerchunk(paths, out + '.json', VirtualOptions(workers=2))",
        "kerchunk": "import json\nfrom kerchunk.hdf import SingleHdf5ToZarr\nfrom kerchunk.combine import MultiZarrToZarr\n"
        "refs = [SingleHdf5ToZarr(p).translate() for p in paths]\n"
        "json.dump(MultiZarrToZarr(refs, concat_dims=['t']).translate(), open(out + '.json', 'w'))",
        "virtualizarr": "import xarray as xr\n" + "\n".join((
            "from virtualizarr import open_virtual_dataset",
            "from virtualizarr.parsers import HDFParser",
            "from obspec_utils.registry import ObjectStoreRegistry",
            "from obstore.store import LocalStore",
            "reg = ObjectStoreRegistry({'file://': LocalStore()})",
            "vds = [open_virtual_dataset('file://' + p, registry=reg, parser=HDFParser()) for p in paths]",
            "combined = xr.concat(vds, dim='t', coords='minimal', compat='override')",
            "combined.vz.to_kerchunk(out + '.json', format='json')",
        )),
    },
    "chunks": {
        "nczarr": "from nczarr.convert.virtual import virtualize\nvirtualize(paths, out + '.zarr')",
        "nczarr --kerchunk": "from nczarr.convert.virtual import export_kerchunk\nexport_kerchunk(paths, out + '.parq')",
        "kerchunk": "import json\nfrom kerchunk.hdf import SingleHdf5ToZarr\n"
        "json.dump(SingleHdf5ToZarr(paths[0]).translate(), open(out + '.json', 'w'))",
        "virtualizarr": "\n".join((
            "from virtualizarr import open_virtual_dataset",
            "from virtualizarr.parsers import HDFParser",
            "from obspec_utils.registry import ObjectStoreRegistry",
            "from obstore.store import LocalStore",
            "reg = ObjectStoreRegistry({'file://': LocalStore()})",
            "vds = open_virtual_dataset('file://' + paths[0], registry=reg, parser=HDFParser())",
            "vds.vz.to_kerchunk(out + '.parq', format='parquet')",
        )),
    },
}

CHILD = """
import json, os, sys, time, warnings
warnings.simplefilter("ignore")
paths, out = json.loads(sys.argv[1]), sys.argv[2]
started = time.perf_counter()
{code}
seconds = time.perf_counter() - started
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so it would count the parent's pages
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({{"seconds": seconds, "rss": peak / 1024}}))
"""


def make_files(folder: str, count: int) -> list[str]:
    import netCDF4

    paths = []
    for i in range(count):
        path = os.path.join(folder, f"f{i:04d}.nc")
        paths.append(path)
        if os.path.exists(path):
            continue
        with netCDF4.Dataset(path, "w") as d:
            d.createDimension("t", None)
            d.createDimension("y", 50)
            d.createDimension("x", 50)
            d.createVariable("t", "f8", ("t",))[:] = [i]
            v = d.createVariable("v", "f4", ("t", "y", "x"), zlib=True, chunksizes=(1, 50, 50))
            v[:] = np.full((1, 50, 50), i, "f4")
    return paths


def make_chunked(folder: str, side: int) -> str:
    import netCDF4

    path = os.path.join(folder, f"chunks{side}.nc")
    if not os.path.exists(path):
        with netCDF4.Dataset(path, "w") as d:
            d.createDimension("y", side)
            d.createDimension("x", side)
            v = d.createVariable("v", "i2", ("y", "x"), chunksizes=(1, 1))
            v[:] = np.arange(side * side, dtype="i2").reshape(side, side)
    return path


def make_reads(folder: str) -> str:
    import netCDF4

    path = os.path.join(folder, "reads.nc")
    if not os.path.exists(path):
        with netCDF4.Dataset(path, "w") as d:
            d.createDimension("y", 2000)
            d.createDimension("x", 2000)
            v = d.createVariable("v", "f4", ("y", "x"), zlib=True, complevel=1, chunksizes=(100, 100))
            v[:] = np.random.default_rng(0).random((2000, 2000), "f4")
    return path


def size_of(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(r, n)) for r, _, names in os.walk(path) for n in names)


def run_child(code: str, paths: list[str], out: str) -> dict[str, float]:
    environment = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(code=code), json.dumps(paths), out],
        capture_output=True, text=True, env=environment, check=False,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def references(workload: str, paths: list[str], folder: str, repeat: int) -> None:
    print(f"\n## {workload}: {len(paths)} file(s)\n")
    print("| peer | seconds | peak RSS MB | reference set |")
    print("|---|---|---|---|")
    for peer, code in PEERS[workload].items():
        out = os.path.join(folder, f"out-{workload}-{peer.replace(' ', '').replace('-', '')}")
        runs = []
        for _ in range(repeat):
            for old in (out + ".zarr", out + ".json", out + ".parq"):
                shutil.rmtree(old, ignore_errors=True) if os.path.isdir(old) else os.path.exists(old) and os.remove(old)
            runs.append(run_child(code, paths, out))
        if "error" in runs[-1]:
            print(f"| {peer} | failed: {runs[-1]['error'][:100]} | | |")
            continue
        made = next(p for p in (out + ".zarr", out + ".json", out + ".parq") if os.path.exists(p))
        table = os.path.join(made, ".references") if made.endswith(".zarr") else made
        seconds = statistics.median(r["seconds"] for r in runs)
        rss = max(r["rss"] for r in runs)
        print(f"| {peer} | {seconds:.2f} | {rss:.0f} | {size_of(table) / 1e6:.2f} MB ({os.path.basename(made)}) |")


def reads(folder: str, repeat: int) -> None:
    import netCDF4

    import nczarr
    from nczarr.convert.virtual import virtualize

    path = make_reads(folder)
    target = os.path.join(folder, "reads.zarr")
    virtualize([path], target)
    rng = np.random.default_rng(1)
    points = [tuple(int(i) for i in rng.integers(0, 2000, 2)) for _ in range(20 * repeat)]
    print("\n## reads: a point and a 100 x 2000 slab of 2000 x 2000 float32 (deflated 100 x 100 chunks)\n")
    print("| reader | point ms | slab ms |")
    print("|---|---|---|")
    for name, opener in (("nczarr virtual", lambda: nczarr.Dataset(target)), ("netCDF4 .nc", lambda: netCDF4.Dataset(path))):
        with opener() as d:
            v = d["v"]
            point, slab = [], []
            for y, x in points:
                started = time.perf_counter()
                v[y, x]
                point.append(time.perf_counter() - started)
            for i in range(5 * repeat):
                started = time.perf_counter()
                v[(i % 19) * 100 : (i % 19) * 100 + 100, :]
                slab.append(time.perf_counter() - started)
        print(f"| {name} | {statistics.median(point) * 1e3:.2f} | {statistics.median(slab) * 1e3:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 files, 10,000 chunks")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "nczarr-bench-virtual"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=("files", "chunks", "reads"))
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, peak RSS of this process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB before")
    if args.only in (None, "files"):
        files = os.path.join(args.dir, "files")
        os.makedirs(files, exist_ok=True)
        references("files", make_files(files, 100 if args.quick else 1000), args.dir, args.repeat)
    if args.only in (None, "chunks"):
        references("chunks", [make_chunked(args.dir, 100 if args.quick else 1000)], args.dir, args.repeat)
    if args.only in (None, "reads"):
        reads(args.dir, args.repeat)


if __name__ == "__main__":
    main()
