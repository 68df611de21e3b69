"""``nczarr copy``: a dataset between netCDF-3, netCDF-4 and every Zarr convention, with
nccopy's options."""

from __future__ import annotations

import argparse
import logging

from nczarr.cli.shared import add_kind_flags


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    copy = sub.add_parser(
        "copy",
        help="copy a dataset between netCDF-3, netCDF-4 and every Zarr convention (nccopy's options)",
        description="SRC and DST are netCDF files (.nc) or Zarr stores (directories, .zip files, URLs).",
    )
    copy.add_argument("src")
    copy.add_argument("dst")
    copy.add_argument(
        "-k",
        dest="kind",
        metavar="KIND",
        help="output kind: classic, 64-bit offset, cdf5, netCDF-4, netCDF-4 classic model (or 1-5)",
    )
    add_kind_flags(copy)
    copy.add_argument(
        "--format", metavar="FORMAT", help="Zarr convention of a Zarr target: NCZARR (default), NCZARR_V2, ZARR, ZARR_V2"
    )
    copy.add_argument("-d", dest="deflate", type=int, metavar="N", help="deflate (zlib) level, 0 for none")
    copy.add_argument("-s", dest="shuffle", action="store_true", help="add shuffle to deflation")
    copy.add_argument("-c", dest="chunking", metavar="SPEC", help="chunking: 'dim/N,dim/N,...' or 'var:N,N,...'")
    copy.add_argument("-u", dest="fix_unlimited", action="store_true", help="make unlimited dimensions fixed")
    copy.add_argument("-v", dest="data_variables", metavar="VARS", help="data of these variables only (all definitions)")
    copy.add_argument("-V", dest="variables", metavar="VARS", help="these variables only")
    copy.add_argument("-g", dest="data_groups", metavar="GROUPS", help="data of variables in these groups only")
    copy.add_argument("-G", dest="groups", metavar="GROUPS", help="variables of these groups only")
    copy.add_argument("--skip-unsupported", action="store_true", help="leave out what the target cannot hold instead of refusing")
    copy.add_argument("-m", "--memory", type=int, default=256, metavar="MB", help="data held in memory at once (default 256 MB)")
    copy.set_defaults(run=run, creates=creates)


def _names(text: str | None) -> tuple[str, ...] | None:
    """A comma-separated list of names, or None when the option is absent."""
    return None if text is None else tuple(n.strip() for n in text.split(",") if n.strip())


def run(args: argparse.Namespace) -> int:
    from nczarr.convert.copy import CopyOptions, ProgressBar, copy

    options = CopyOptions(
        kind=args.kind,
        format=args.format,
        chunking=args.chunking,
        deflate=args.deflate,
        shuffle=args.shuffle,
        data_variables=_names(args.data_variables),
        variables=_names(args.variables),
        data_groups=_names(args.data_groups),
        groups=_names(args.groups),
        fix_unlimited=args.fix_unlimited,
        skip_unsupported=args.skip_unsupported,
        max_memory=args.memory << 20,
    )
    bar = ProgressBar(quiet=args.quiet)
    report = copy(args.src, args.dst, options, progress=bar)
    bar.finish()
    for skipped in report.skipped:
        logging.getLogger("nczarr").warning("left out: %s", skipped)
    return 0


def creates(args: argparse.Namespace) -> str:
    """The dataset ``copy`` makes (removed again if it fails)."""
    return str(args.dst)
