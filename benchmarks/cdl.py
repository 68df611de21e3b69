"""CDL out (and in): ``nczarr dump`` against ncdump, and ``ncgen`` against nczarr's generator.

    python benchmarks/cdl.py [--only NAME] [--peers NAME] [--repeat N] [--json]

Workloads: dumping one million values as CDL text, for a float32 1000x1000 variable
(``dump-float``), an int32 1000x1000 variable (``dump-int``) and a double 1-D variable of
1,000,000 (``dump-double``), that one also with ``-p 9,17`` (``dump-double-p``); and
generating a dataset from the CDL text of the float32 one (``gen-float``). Each dataset is
written once by netCDF4 (``.nc``, chunks of 100 rows) and by nczarr (an NCZARR store, the
same chunks); the text goes to ``/dev/null``.

Peers: ``nczarr dump`` (in this process: open the store, :func:`nczarr.syntax.cdldump.dump`,
write the text) against ``ncdump`` (netcdf-c, a subprocess: its start-up is counted, a few
milliseconds); ``nczarr gen`` (in this process: :func:`nczarr.api.generate.generate`, an
NCZARR store) against ``ncgen -4`` (a subprocess); ``python start-up`` is what the ``nczarr
gen`` command adds to that: a Python process importing the CLI and the generator, reported
apart. The ratio is the peer's median over nczarr's: above 1, nczarr is faster; the targets
(issue 18) are at least 1 for dump and 0.8 for gen.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h

import nczarr
from nczarr.api.generate import generate
from nczarr.convert.sources import open_source
from nczarr.syntax.cdldump import DumpOptions, dump

NCZARR_DUMP, NCDUMP = "nczarr dump", "ncdump"
NCZARR_GEN, NCGEN = "nczarr gen", "ncgen"

#: name -> (netCDF type code, shape, chunks)
DATASETS: dict[str, tuple[str, tuple[int, ...], tuple[int, ...]]] = {
    "float": ("f4", (1000, 1000), (100, 1000)),
    "int": ("i4", (1000, 1000), (100, 1000)),
    "double": ("f8", (1_000_000,), (100_000,)),
}
#: dump workloads: name -> (dataset, ncdump's -p)
DUMPS: dict[str, tuple[str, tuple[int, int] | None]] = {
    "float": ("float", None),
    "int": ("int", None),
    "double": ("double", None),
    "double-p": ("double", (9, 17)),
}
STARTUP = "python start-up"


def make_values(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype.startswith("i"):
        return rng.integers(-(10**6), 10**6, size=shape, dtype=dtype)
    return (rng.normal(size=shape) * 1000).astype(dtype)


def write_datasets(root: str) -> dict[str, tuple[str, str]]:
    """For each dataset: (the .nc file, the nczarr store)."""
    import netCDF4

    made = {}
    for name, (dtype, shape, chunks) in DATASETS.items():
        values = make_values(dtype, shape)
        nc, store = os.path.join(root, f"{name}.nc"), os.path.join(root, f"{name}.zarr")
        dims = [f"d{i}" for i in range(len(shape))]
        with netCDF4.Dataset(nc, "w") as ds:
            for dim, size in zip(dims, shape):
                ds.createDimension(dim, size)
            ds.createVariable("v", dtype, dims, chunksizes=chunks)[...] = values
        with nczarr.Dataset(store, "w") as ds:
            for dim, size in zip(dims, shape):
                ds.createDimension(dim, size)
            ds.createVariable("v", dtype, dims, chunksizes=chunks)[...] = values
        made[name] = (nc, store)
    return made


def ncdump_arguments(precision: tuple[int, int] | None) -> list[str]:
    return ["ncdump", *(["-p", f"{precision[0]},{precision[1]}"] if precision else []), "-n", "v"]


def run_ncdump(nc: str, precision: tuple[int, int] | None) -> int:
    with open(os.devnull, "wb") as sink:
        subprocess.run([*ncdump_arguments(precision), nc], stdout=sink, check=True)
    return 0


def run_nczarr_dump(store: str, precision: tuple[int, int] | None) -> int:
    pieces = 0
    source = open_source(store)
    try:
        with open(os.devnull, "w", encoding="utf-8", errors="surrogateescape") as sink:
            for piece in dump(source, DumpOptions(precision=precision), name="v"):
                sink.write(piece)
                pieces += 1
    finally:
        source.close()
    return pieces


def build_workloads(root: str) -> list[h.Workload]:
    files = write_datasets(root)
    workloads = []
    for name, (dataset, precision) in DUMPS.items():
        nc, store = files[dataset]
        dtype, shape, _ = DATASETS[dataset]
        expected = subprocess.run([*ncdump_arguments(precision), nc], capture_output=True, check=True).stdout

        def check(state: Any, result: Any, store: str = store, expected: bytes = expected,
                  precision: tuple[int, int] | None = precision) -> None:
            source = open_source(store)
            try:
                text = "".join(dump(source, DumpOptions(precision=precision), name="v"))
            finally:
                source.close()
            if text.encode("utf-8", "surrogateescape") != expected:
                raise AssertionError("nczarr dump differs from ncdump")

        size = int(np.prod(shape))
        flag = f" -p {precision[0]},{precision[1]}" if precision else ""
        workloads.append(h.Workload(
            f"dump-{name}", f"dump{flag} {dtype} {'x'.join(map(str, shape))} ({size:,} values) as CDL",
            [
                h.Case(NCZARR_DUMP, lambda s, store=store, p=precision: run_nczarr_dump(store, p), check=check),
                h.Case(NCDUMP, lambda s, nc=nc, p=precision: run_ncdump(nc, p), reference=NCZARR_DUMP),
            ],
            ops=size, unit="values",
        ))
    cdl = os.path.join(root, "float.cdl")
    with open(cdl, "wb") as f:
        subprocess.run(["ncdump", "-n", "v", files["float"][0]], stdout=f, check=True)

    def gen_ncgen(state: Any) -> None:
        subprocess.run(["ncgen", "-4", "-o", os.path.join(root, "gen.nc"), cdl], check=True)

    def gen_nczarr(state: Any) -> None:
        target = os.path.join(root, "gen.zarr")
        shutil.rmtree(target, ignore_errors=True)
        generate(cdl, target)

    def check_gen(state: Any, result: Any) -> None:
        import netCDF4

        reference = os.path.join(root, "check.nc")
        subprocess.run(["ncgen", "-4", "-o", reference, cdl], check=True)
        with nczarr.Dataset(os.path.join(root, "gen.zarr")) as ours, netCDF4.Dataset(reference) as theirs:
            if not np.array_equal(ours["v"][...], theirs["v"][...]):
                raise AssertionError("nczarr gen's values differ from ncgen's")

    def python_startup(state: Any) -> None:
        subprocess.run([sys.executable, "-c", "import nczarr.cli.gen, nczarr.api.generate"], check=True)

    workloads.append(h.Workload(
        "gen-float", "generate a dataset from the CDL of float32 1000x1000 (Python start-up apart)",
        [
            h.Case(NCZARR_GEN, gen_nczarr, check=check_gen),
            h.Case(NCGEN, gen_ncgen, reference=NCZARR_GEN),
            h.Case(STARTUP, python_startup),
        ],
        ops=10**6, unit="values",
    ))
    return workloads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_common_arguments(parser)
    args = parser.parse_args(argv)
    only, wanted = h.split_option(args.only), h.split_option(args.peers)
    if args.list:
        for name, (dataset, precision) in DUMPS.items():
            dtype, shape, _ = DATASETS[dataset]
            flag = f" -p {precision[0]},{precision[1]}" if precision else ""
            print(f"dump-{name:<12} dump{flag} {dtype} {'x'.join(map(str, shape))}")
        print("gen-float         generate from the CDL of the float dataset")
        print("peers:", ", ".join((NCZARR_DUMP, NCDUMP, NCZARR_GEN, NCGEN, STARTUP)))
        return 0
    meta = {"repeat": args.repeat, "warmup": args.warmup, "only": only,
            **h.environment(["nczarr", "netCDF4", "numpy"])}
    print(f"nczarr CDL benchmark: {args.repeat} timed runs after {args.warmup} warm-up, peers interleaved; "
          "medians; ratio = peer / nczarr (> 1: nczarr faster)")
    with h.scratch_directory(args.dir, keep=args.keep) as root:
        workloads = h.select(build_workloads(root), only, wanted)
        results = h.run_workloads(workloads, repeat=args.repeat, warmup=args.warmup)
    print("\nSummary (median wall time; in parentheses, peer / nczarr):\n")
    print(h.format_markdown(results, [NCZARR_DUMP, NCDUMP, NCZARR_GEN, NCGEN, STARTUP]))
    if args.json:
        print("results:", h.write_json(results, "cdl", args.json, meta=meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
