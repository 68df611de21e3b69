"""``nczarr gen``: a dataset from a CDL file, with ncgen's rules."""

from __future__ import annotations

import argparse

from nczarr.cli.shared import add_kind_flags


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gen = sub.add_parser(
        "gen",
        help="make a dataset from a CDL file, as ncgen does",
        description="Make a Zarr store (or a netCDF file, for a .nc OUTPUT) from CDL, with ncgen's rules.",
    )
    gen.add_argument("cdl", help="a CDL file")
    gen.add_argument(
        "-o",
        dest="output",
        metavar="OUTPUT",
        help="the store or .nc file to make (default, as ncgen: the CDL file's name with .zarr, here)",
    )
    gen.add_argument(
        "-k",
        dest="kind",
        metavar="KIND",
        help="ncgen's kind: classic, 64-bit offset, cdf5, netCDF-4, netCDF-4 classic model (or 1-5, nc3...)",
    )
    add_kind_flags(gen)
    gen.add_argument("--format", metavar="FORMAT", help="Zarr convention: NCZARR (default), NCZARR_V2, ZARR, ZARR_V2")
    gen.set_defaults(run=run, creates=creates)


def run(args: argparse.Namespace) -> int:
    from nczarr.api.generate import generate

    generate(args.cdl, args.output, kind=args.kind, format=args.format)
    return 0


def creates(args: argparse.Namespace) -> str:
    """The dataset ``gen`` makes (removed again if it fails)."""
    from nczarr.api.generate import output_path

    return output_path(args.cdl, args.output)
