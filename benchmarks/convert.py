"""Converting a netCDF-4 file to Zarr: ``nczarr copy`` against nccopy, netCDF4 and xarray.

    python benchmarks/convert.py [--small] [--dir DIR] [--repeat N] [--only NAME] [--peers NAME] [--json]

The input is a netCDF-4 file written once with netCDF4 and kept in ``--dir`` (default
``<tmp>/nczarr-bench-convert``, reused between runs): three float32 variables of time x lat x
lon (0.25 degree grid, 88 time steps, 1.10 GB uncompressed), chunks of one time step, zlib
level 1 + shuffle, with CF coordinates and attributes; and the same data uncompressed.
``--small``: a 0.5 degree grid and 16 steps (50 MB).

Workloads: ``zlib`` converts the zlib file keeping zlib + shuffle and the chunks; ``raw``
converts the uncompressed file to uncompressed Zarr. ``memory``: the peak RSS of ``nczarr
copy`` for both inputs, with the default budget and ``--memory 64``.

Every peer runs as a child process, from the command line as a user would (interpreter
start-up and imports included), so that each run's CPU time and peak RSS can be read (with
GNU time): nczarr (``python -m nczarr.cli copy``, NCZarr v3 and ``--format NCZARR_V2``),
nccopy (Debian's netcdf-bin, to a ``#mode=nczarr,file`` URL), netCDF4-python (the wheel's
netcdf-c, variables copied to a ``#mode=nczarr,file`` URL) and xarray (``open_dataset`` +
``to_zarr``, v3 and v2, the source's chunks and codecs given as encoding). The input's page
cache is dropped before each run; every output is checked once, untimed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h

NCZARR, NCZARR_V2 = "nczarr", "nczarr v2"
VARIABLES = (
    ("t2m", "2 metre temperature", "K", 273.0, 30.0),
    ("u10", "10 metre U wind component", "m s-1", 0.0, 8.0),
    ("v10", "10 metre V wind component", "m s-1", 0.0, 6.0),
)
FILL = np.float32(1.0e20)


@dataclass(frozen=True)
class Sizes:
    label: str
    nt: int
    ny: int
    nx: int

    @property
    def nbytes(self) -> int:
        """Uncompressed bytes of the data variables."""
        return len(VARIABLES) * self.nt * self.ny * self.nx * 4


FULL = Sizes("full", 88, 721, 1440)
SMALL = Sizes("small", 16, 361, 720)


# -- the input ------------------------------------------------------------------------------
def _field(sizes: Sizes, k: int, step: int, rng: np.random.Generator) -> np.ndarray:
    """One time step of variable ``k``: a smooth field moving with time, plus noise."""
    _name, _long, _units, offset, amplitude = VARIABLES[k]
    y = np.linspace(np.pi / 2, -np.pi / 2, sizes.ny, dtype=np.float32)[:, None]
    x = np.linspace(0, 2 * np.pi, sizes.nx, endpoint=False, dtype=np.float32)[None, :]
    t = np.float32(2 * np.pi * step / 24)
    values = offset + amplitude * (np.cos(y) + 0.3 * np.sin(3 * x + t + k) * np.cos(2 * y))
    values = values.astype(np.float32)
    values += rng.standard_normal((sizes.ny, sizes.nx), dtype=np.float32) * np.float32(0.02 * amplitude + 0.1)
    return values


def _define(nc: Any, path: str, sizes: Sizes, compressed: bool) -> Any:
    ds = nc.Dataset(path, "w", format="NETCDF4")
    ds.setncatts({
        "Conventions": "CF-1.8", "title": "nczarr conversion benchmark: a reanalysis-like surface dataset",
        "institution": "synthetic", "source": "benchmarks/convert.py", "history": "written with netCDF4-python",
    })
    ds.createDimension("time", None)
    ds.createDimension("lat", sizes.ny)
    ds.createDimension("lon", sizes.nx)
    time_ = ds.createVariable("time", "f8", ("time",))
    time_.setncatts({"standard_name": "time", "units": "hours since 2000-01-01 00:00:00", "calendar": "standard", "axis": "T"})
    lat = ds.createVariable("lat", "f4", ("lat",))
    lat.setncatts({"standard_name": "latitude", "units": "degrees_north", "axis": "Y"})
    lat[:] = np.linspace(90, -90, sizes.ny, dtype=np.float32)
    lon = ds.createVariable("lon", "f4", ("lon",))
    lon.setncatts({"standard_name": "longitude", "units": "degrees_east", "axis": "X"})
    lon[:] = np.linspace(0, 360, sizes.nx, endpoint=False, dtype=np.float32)
    codecs = {"compression": "zlib", "complevel": 1, "shuffle": True} if compressed else {}
    for name, long_name, units, _o, _a in VARIABLES:
        v = ds.createVariable(name, "f4", ("time", "lat", "lon"), chunksizes=(1, sizes.ny, sizes.nx),
                              fill_value=FILL, **codecs)
        v.setncatts({"long_name": long_name, "units": units, "grid_mapping": "crs"})
        v.set_auto_maskandscale(False)
    return ds


def input_paths(directory: str, sizes: Sizes) -> dict[str, str]:
    return {kind: os.path.join(directory, f"input-{sizes.label}-{kind}.nc") for kind in ("zlib", "raw")}


def make_inputs(directory: str, sizes: Sizes) -> dict[str, str]:
    """The zlib and the uncompressed input (the same values), written unless already there;
    a file is renamed into place only when complete."""
    import netCDF4

    paths = input_paths(directory, sizes)
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    os.makedirs(directory, exist_ok=True)
    print(f"writing the inputs ({sizes.nbytes / 1e9:.2f} GB uncompressed each) into {directory} ...", flush=True)
    t0 = time.perf_counter()
    partial = {kind: path + ".partial" for kind, path in paths.items()}
    datasets = [_define(netCDF4, partial[kind], sizes, kind == "zlib") for kind in paths]
    try:
        for k, (name, *_rest) in enumerate(VARIABLES):
            rng = np.random.default_rng(k)
            for step in range(sizes.nt):
                values = _field(sizes, k, step, rng)
                for ds in datasets:
                    ds[name][step] = values
        for ds in datasets:
            ds["time"][:] = np.arange(sizes.nt, dtype="f8") * 6.0
    finally:
        for ds in datasets:
            ds.close()
    for kind, path in paths.items():
        os.replace(partial[kind], path)
    print(f"  done in {time.perf_counter() - t0:.0f} s: "
          + ", ".join(f"{kind} {os.path.getsize(p) / 1e6:,.0f} MB" for kind, p in paths.items()), flush=True)
    return paths


# -- child processes ------------------------------------------------------------------------
@dataclass
class Child:
    """One finished child process: wall seconds, CPU seconds (user + system) and peak RSS."""

    wall: float
    cpu: float
    max_rss: int  #: bytes


#: GNU time, to read a child's peak RSS: ``wait4`` on a child of this process would report at
#: least this process's own RSS, which Linux carries over through fork and exec.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def child_environment(directory: str) -> dict[str, str]:
    """The children's environment: Python byte code cached (under ``directory``) as for an
    installed package, even where the calling shell sets PYTHONDONTWRITEBYTECODE; otherwise
    every run of a pure-Python peer compiles its modules again."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(directory, "pycache")
    return env


def run_child(argv: list[str], env: dict[str, str] | None = None) -> Child:
    """Run ``argv`` to its end and read its CPU time and peak RSS (through GNU time; without
    it, from ``wait4``, an upper bound); raises with the child's stderr when it fails."""
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as usage_file:
        wrapped = [GNU_TIME, "-f", "%U %S %M", "-o", usage_file.name, *argv] if GNU_TIME else argv
        t0 = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            message = err.read().decode(errors="replace").strip()
            raise RuntimeError(f"{os.path.basename(argv[0])} exited with {proc.returncode}: {message[-2000:]}")
        if GNU_TIME:
            user, system, max_rss_kb = usage_file.read().split()[-3:]
            return Child(wall, float(user) + float(system), int(max_rss_kb) * 1024)
    return Child(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)


def nczarr_argv(src: str, dst: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "nczarr.cli", "-q", "copy", *extra, src, dst]


def nczarr_url(path: str) -> str:
    return f"file://{os.path.abspath(path)}#mode=nczarr,file"


#: netCDF4-python copying a dataset (flat, as the input) to an NCZarr URL: the definitions
#: with the source's chunking, compression and fill value, then every variable in one call.
NETCDF4_COPY = r"""
import sys, netCDF4
src, dst = netCDF4.Dataset(sys.argv[1]), netCDF4.Dataset(sys.argv[2], "w", format="NETCDF4")
src.set_auto_maskandscale(False)
dst.setncatts({a: src.getncattr(a) for a in src.ncattrs()})
for d in src.dimensions.values():
    dst.createDimension(d.name, None if d.isunlimited() else len(d))
for v in src.variables.values():
    f = v.filters()
    chunks = v.chunking()
    w = dst.createVariable(
        v.name, v.dtype, v.dimensions, compression="zlib" if f["zlib"] else None, complevel=f["complevel"],
        shuffle=f["shuffle"], chunksizes=None if chunks == "contiguous" else chunks,
        fill_value=getattr(v, "_FillValue", None))
    w.setncatts({a: v.getncattr(a) for a in v.ncattrs() if a != "_FillValue"})
    w.set_auto_maskandscale(False)
    w[...] = v[...]
dst.close()
src.close()
"""

#: xarray: open_dataset + to_zarr, the data variables with the source's chunks and codecs.
XARRAY_COPY = r"""
import sys, warnings, xarray, numcodecs
warnings.filterwarnings("ignore")
src, dst, zarr_format, compressed = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "zlib"
ds = xarray.open_dataset(src, engine="netcdf4")
encoding = {}
for name, v in ds.data_vars.items():
    enc = {"chunks": v.encoding["chunksizes"]}
    if zarr_format == 3:
        from numcodecs.zarr3 import Shuffle
        from zarr.codecs import GzipCodec
        enc["compressors"] = [Shuffle(elementsize=4), GzipCodec(level=1)] if compressed else None
    else:
        enc["filters"] = [numcodecs.Shuffle(elementsize=4)] if compressed else None
        enc["compressors"] = numcodecs.Zlib(level=1) if compressed else None
    encoding[name] = enc
ds.to_zarr(dst, mode="w", zarr_format=zarr_format, encoding=encoding)
ds.close()
"""


@dataclass
class Peer:
    """A converter: its command line ``argv(src, dst)``, the nczarr case it is compared with,
    and the resource usage of each of its runs."""

    name: str
    reference: str | None
    argv: Callable[[str, str], list[str]]
    runs: list[Child] = field(default_factory=list)


def make_peers(kind: str) -> list[Peer]:
    py = sys.executable
    peers = [
        Peer(NCZARR, None, lambda s, d: nczarr_argv(s, d)),
        Peer(NCZARR_V2, None, lambda s, d: nczarr_argv(s, d, "--format", "NCZARR_V2")),
        Peer("netCDF4 NCZarr", NCZARR_V2, lambda s, d: [py, "-c", NETCDF4_COPY, s, nczarr_url(d)]),
        Peer("xarray v3", NCZARR, lambda s, d: [py, "-c", XARRAY_COPY, s, d, "3", kind]),
        Peer("xarray v2", NCZARR_V2, lambda s, d: [py, "-c", XARRAY_COPY, s, d, "2", kind]),
    ]
    nccopy = shutil.which("nccopy")
    if nccopy and kind == "raw":
        # Debian's nccopy 4.9.0 writes NCZarr without its filters (no zlib, no shuffle, even
        # with -d 1 -s), so it only does the same work as the others when nothing is
        # compressed; and its NCZarr refuses unlimited dimensions ("Invalid dimension size")
        # unless -u makes them fixed.
        peers.insert(2, Peer("nccopy NCZarr", NCZARR_V2, lambda s, d: [nccopy, "-u", s, nczarr_url(d)]))
    return peers


# -- checks ---------------------------------------------------------------------------------
def check_output(src: str, dst: str, sizes: Sizes, compressed: bool) -> None:
    """Compare the coordinates, a few time steps and a box over every time step of each data
    variable with the input; the data variables must keep their units, chunks, and zlib +
    shuffle exactly when asked."""
    import netCDF4

    import nczarr

    steps = sorted({0, sizes.nt // 2, sizes.nt - 1})
    box = (slice(sizes.ny // 4, sizes.ny // 4 + 50), slice(sizes.nx // 3, sizes.nx // 3 + 70))
    with netCDF4.Dataset(src) as a, nczarr.Dataset(dst) as b:
        a.set_auto_maskandscale(False)
        b.set_auto_maskandscale(False)
        for name in ("lat", "lon"):
            if not np.array_equal(a[name][:], b[name][:]):
                raise AssertionError(f"{dst}: {name} differs")
        for name, *_rest in VARIABLES:
            va, vb = a[name], b[name]
            if vb.shape != va.shape:
                raise AssertionError(f"{dst}: {name} has shape {vb.shape}, not {va.shape}")
            for sel in [(step,) for step in steps] + [(slice(None), *box)]:
                if not np.array_equal(va[sel], vb[sel]):
                    raise AssertionError(f"{dst}: {name}{list(sel)} differs from the input")
            if vb.getncattr("units") != va.getncattr("units"):
                raise AssertionError(f"{dst}: {name} lost its units")
            filters = vb.filters() or {}
            got = bool(filters.get("zlib")) and bool(filters.get("shuffle"))
            if got != compressed:
                raise AssertionError(f"{dst}: {name} filters {filters}, expected zlib + shuffle: {compressed}")
            if tuple(vb.chunking()) != (1, sizes.ny, sizes.nx):
                raise AssertionError(f"{dst}: {name} chunks {vb.chunking()}")


# -- workloads ------------------------------------------------------------------------------
TITLES = {
    "zlib": "netCDF-4 (zlib-1 + shuffle) to Zarr, keeping zlib + shuffle and chunks 1x{ny}x{nx}",
    "raw": "netCDF-4 (uncompressed) to uncompressed Zarr, chunks 1x{ny}x{nx}",
}


def output_path(root: str, kind: str, peer: Peer) -> str:
    return os.path.join(root, f"{kind}-{peer.name.replace(' ', '_')}.zarr")


def build_workloads(
    sizes: Sizes, inputs: dict[str, str], root: str, env: dict[str, str]
) -> tuple[list[h.Workload], dict[str, list[Peer]]]:
    workloads, peers_of = [], {}
    for kind, src in inputs.items():
        peers = make_peers(kind)
        peers_of[kind] = peers

        def case(peer: Peer, kind: str = kind, src: str = src) -> h.Case:
            dst = output_path(root, kind, peer)

            def setup() -> None:
                h.remove(dst)
                h.drop_cache(src)

            def run(_state: Any) -> Child:
                child = run_child(peer.argv(src, dst), env)
                peer.runs.append(child)
                return child

            return h.Case(peer.name, run, setup=setup, reference=peer.reference,
                          check=lambda _s, _r: check_output(src, dst, sizes, kind == "zlib"))

        workloads.append(h.Workload(
            f"copy-{kind}", TITLES[kind].format(ny=sizes.ny, nx=sizes.nx), [case(p) for p in peers], nbytes=sizes.nbytes,
        ))
    return workloads, peers_of


def format_children(result: h.WorkloadResult, peers: list[Peer], warmup: int, root: str, kind: str) -> str:
    """The table of a workload: wall, CPU of the child, cpu/wall, peak RSS, output size."""
    lines = [f"{result.workload.title}  [{result.workload.name}]",
             f"  {'peer':<16} {'wall s':>7} {'(min-max)':>13} {'cpu s':>7} {'cpu/wall':>8} {'peak RSS':>9} "
             f"{'output':>9} {'ratio':>6}  vs"]
    by_name = {p.name: p for p in peers}
    for c in result.cases:
        peer = by_name[c.peer]
        if c.error is not None and not c.samples:
            lines.append(f"  {c.peer:<16} error: {c.error}")
            continue
        timed = peer.runs[warmup:] or peer.runs
        walls = [s.wall for s in c.samples]
        cpu = h.median([r.cpu for r in timed])
        rss = max(r.max_rss for r in timed)
        out = output_path(root, kind, peer)
        size = h.disk_usage(out) if os.path.exists(out) else 0
        ratio = result.ratio(c)
        lines.append(
            f"  {c.peer:<16} {c.wall:>7.2f} {min(walls):>6.2f}-{max(walls):<6.2f} {cpu:>7.2f} {cpu / c.wall:>8.2f} "
            f"{rss / 2**20:>6.0f} MiB {size / 1e6:>6.0f} MB {(f'{ratio:.2f}' if ratio is not None else '—'):>6}  "
            f"{c.reference or ''}"
        )
    return "\n".join(lines)


def measure_memory(inputs: dict[str, str], root: str, directory: str, env: dict[str, str]) -> list[dict[str, Any]]:
    """Peak RSS of ``nczarr copy`` for each input, default budget and ``--memory 64``, after a
    baseline (a copy of a tiny file: the interpreter and the imports)."""
    import netCDF4

    tiny = os.path.join(directory, "tiny.nc")
    if not os.path.exists(tiny):
        with netCDF4.Dataset(tiny, "w") as ds:
            ds.createDimension("x", 4)
            ds.createVariable("v", "f4", ("x",), zlib=True)[:] = np.arange(4)
    rows = []
    dst = os.path.join(root, "memory.zarr")
    runs: list[tuple[str, str, list[str]]] = [("tiny", tiny, [])]
    runs += [(kind, src, extra) for kind, src in inputs.items() for extra in ([], ["--memory", "64"])]
    for kind, src, extra in runs:
        h.remove(dst)
        h.drop_cache(src)
        child = run_child(nczarr_argv(src, dst, *extra), env)
        row = {
            "input": kind, "file_bytes": os.path.getsize(src), "budget": " ".join(extra) or "default (256 MB)",
            "wall": child.wall, "cpu": child.cpu, "max_rss": child.max_rss,
        }
        rows.append(row)
        print(f"  {kind:<5} file {row['file_bytes'] / 1e6:>8,.0f} MB  {row['budget']:<17} "
              f"peak RSS {child.max_rss / 2**20:>6.0f} MiB  wall {child.wall:6.2f} s  cpu {child.cpu:6.2f} s", flush=True)
    h.remove(dst)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="a 50 MB input instead of 1.1 GB")
    h.add_common_arguments(parser)
    parser.set_defaults(dir=os.path.join(tempfile.gettempdir(), "nczarr-bench-convert"))
    parser.set_defaults(repeat=3)
    args = parser.parse_args(argv)
    only, wanted = h.split_option(args.only), h.split_option(args.peers)
    sizes = SMALL if args.small else FULL

    if args.list:
        for kind, title in TITLES.items():
            print(f"copy-{kind:<6} {title.format(ny=sizes.ny, nx=sizes.nx)}")
            print("  peers:", ", ".join(p.name for p in make_peers(kind)))
        print("memory       peak RSS of nczarr copy, default budget and --memory 64")
        return 0

    meta: dict[str, Any] = {
        "mode": sizes.label, "shape": (sizes.nt, sizes.ny, sizes.nx), "repeat": args.repeat, "warmup": args.warmup,
        "only": only, "load_average_start": os.getloadavg(),
        **h.environment(["nczarr", "zarr", "numcodecs", "netCDF4", "xarray", "h5py", "h5netcdf", "numpy"]),
    }
    inputs = make_inputs(args.dir, sizes)
    print(f"nczarr conversion benchmark ({sizes.label}): {len(VARIABLES)} float32 variables of "
          f"{sizes.nt}x{sizes.ny}x{sizes.nx} ({sizes.nbytes / 1e9:.2f} GB uncompressed); inputs "
          + ", ".join(f"{k} {os.path.getsize(p) / 1e6:,.0f} MB" for k, p in inputs.items()))
    print(f"{args.repeat} timed runs after {args.warmup} warm-up, peers interleaved, each a child process; "
          "medians; ratio = peer / nczarr (> 1: nczarr faster)")
    print("versions:", ", ".join(f"{k} {v}" for k, v in meta["packages"].items()), f"| {meta['cpu_count']} CPUs",
          f"| load average {meta['load_average_start'][0]:.2f}")

    results: list[h.WorkloadResult] = []
    with h.scratch_directory(args.dir, keep=args.keep, prefix="outputs-") as root:
        print(h.check_drop_cache(root))
        env = child_environment(args.dir)
        workloads, peers_of = build_workloads(sizes, inputs, root, env)
        for workload in h.select(workloads, only, wanted):
            kind = workload.name.removeprefix("copy-")
            print(f"\n{workload.name} ", end="", flush=True)
            t0 = time.perf_counter()
            result = h.run_workload(workload, repeat=args.repeat, warmup=args.warmup,
                                    progress=lambda s: print(s, end="", flush=True))
            print(f" {time.perf_counter() - t0:.0f} s, load average {os.getloadavg()[0]:.2f}")
            print(format_children(result, peers_of[kind], args.warmup, root, kind), flush=True)
            results.append(result)
            meta[f"children-{kind}"] = {
                p.name: [{"wall": r.wall, "cpu": r.cpu, "max_rss": r.max_rss} for r in p.runs] for p in peers_of[kind]
            }
        if not only or any("memory" in o for o in only):
            print("\npeak RSS of nczarr copy (one cold run each):")
            meta["memory"] = measure_memory(inputs, root, args.dir, env)
    meta["load_average_end"] = os.getloadavg()

    if results:
        names = list(dict.fromkeys(c.peer for r in results for c in r.cases))
        print("\nSummary (median wall time; in parentheses, peer / its nczarr reference):\n")
        print(h.format_markdown(results, names))
        slower = h.slower_cases(results)
        for name, peer, ref, ratio in slower:
            print(f"  {name}: {peer} takes {ratio:.2f}x the time of {ref}: nczarr is slower")
    print(f"load average at the end {meta['load_average_end'][0]:.2f}")
    if args.json:
        print("\nresults written to", h.write_json(results, "convert" + ("-small" if args.small else ""), args.json, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
