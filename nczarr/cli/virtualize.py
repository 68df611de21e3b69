"""``nczarr virtualize``: netCDF files read as an NCZarr dataset whose chunks are references
into them (no data copied), kerchunk references of them, and the refresh of stale
references (docs/virtual.md)."""

from __future__ import annotations

import argparse
import logging
import sys

from nczarr.cli.shared import add_storage_flags, storage_options
from nczarr.errors import ArgumentError

log = logging.getLogger("nczarr")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    virtualize = sub.add_parser(
        "virtualize",
        help="read netCDF files as an NCZarr dataset of references into them (no data copied)",
        description=(
            "SRC... TARGET: netCDF-4/HDF5 and netCDF-3 files become the NCZarr dataset TARGET (a folder) whose chunks "
            "are byte ranges in them. --kerchunk OUT SRC...: kerchunk references instead (JSON, or Parquet for "
            "an OUT ending in .parq). --icechunk REPO SRC...: a new icechunk repository of virtual chunks. "
            "--refresh TARGET: scan TARGET's sources again. --check TARGET: list the sources that changed."
        ),
    )
    virtualize.add_argument("paths", nargs="+", metavar="PATH", help="SRC... TARGET (or SRC... with --kerchunk, --icechunk)")
    mode = virtualize.add_mutually_exclusive_group()
    mode.add_argument("--kerchunk", metavar="OUT", help="write kerchunk references to OUT (.json, or a .parq folder)")
    mode.add_argument("--icechunk", metavar="REPO", help="write a new icechunk repository REPO of virtual chunks (local files)")
    mode.add_argument("--refresh", action="store_true", help="PATH is a virtual dataset: reference its sources anew")
    mode.add_argument("--check", action="store_true", help="PATH is a virtual dataset: list the sources that changed")
    virtualize.add_argument(
        "--format", metavar="FORMAT",
        help="Zarr convention of the references: NCZARR (default), ZARR, ZARR_V2 (the default of --kerchunk), NCZARR_V2",
    )
    virtualize.add_argument(
        "--copy-mismatched", action="store_true",
        help="copy the record variables whose files cannot share one chunk grid (chunks, codecs, lengths) instead of refusing",
    )
    virtualize.add_argument("--workers", type=int, metavar="N", help="scan the files in N local processes")
    virtualize.add_argument("--scheduler", metavar="ADDRESS", help="scan the files on a running dask.distributed cluster")
    virtualize.add_argument("--report", action="store_true", help="print what was referenced, inlined or copied")
    add_storage_flags(virtualize)
    virtualize.set_defaults(run=run, creates=creates)


def run(args: argparse.Namespace) -> int:
    from nczarr.convert.executor import executor_for
    from nczarr.convert.virtual import (
        VirtualOptions,
        export_icechunk,
        export_kerchunk,
        refresh,
        stale_sources,
        virtualize,
    )

    options = VirtualOptions(
        format=args.format,
        copy_mismatched=args.copy_mismatched,
        workers=args.workers,
        progress=not args.quiet and sys.stderr.isatty(),
        storage_options=storage_options(args),
    )
    if args.check:
        stale = [line for target in args.paths for line in stale_sources(target, options.storage_options)]
        for line in stale:
            print(f"changed: {line}")
        return 1 if stale else 0
    executor = executor_for(scheduler=args.scheduler, workers=args.workers) if args.scheduler else None
    try:
        if args.refresh:
            reports = [refresh(target, options, executor=executor) for target in args.paths]
        elif args.kerchunk:
            reports = [export_kerchunk(args.paths, args.kerchunk, options, executor=executor)]
        elif args.icechunk:
            reports = [export_icechunk(args.paths, args.icechunk, options, executor=executor)]
        else:
            if len(args.paths) < 2:
                raise ArgumentError("virtualize: give SRC... TARGET (or --kerchunk OUT SRC...)")
            reports = [virtualize(args.paths[:-1], args.paths[-1], options, executor=executor)]
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()
    for report in reports:
        lines = report.lines()
        if args.report:
            print("\n".join(lines))
        else:
            if report.container is not None:  # what readers of the repository must authorize
                print(f"icechunk virtual chunk container: {report.container}")
            for line in lines:
                if line.startswith(("inlined", "copied")):
                    log.warning("%s", line)
    return 0


def creates(args: argparse.Namespace) -> str | None:
    """The dataset ``virtualize`` makes (removed again if it fails)."""
    if args.check or args.refresh:
        return None
    return args.kerchunk or args.icechunk or args.paths[-1]
