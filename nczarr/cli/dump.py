"""``nczarr dump``: a dataset as CDL, as ncdump prints it (ncdump's options)."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dump = sub.add_parser(
        "dump",
        add_help=False,
        help="print a dataset as CDL, exactly as ncdump does (ncdump's options)",
        description="Print a Zarr store or netCDF file as CDL, as ncdump prints it.",
    )
    dump.add_argument("--help", action="help", help="show this help and exit")
    dump.add_argument("store", help="a Zarr store (directory, .zip, URL) or a netCDF file")
    dump.add_argument("-h", dest="header", action="store_true", help="header only, no data")
    dump.add_argument("-c", dest="coordinates", action="store_true", help="data of coordinate variables only")
    dump.add_argument("-v", dest="variables", metavar="VARS", help="data of these variables only (names or paths)")
    dump.add_argument("-s", dest="special", action="store_true", help="show special virtual attributes")
    dump.add_argument("-k", dest="kind", action="store_true", help="print the kind of the dataset only")
    dump.add_argument("-t", dest="times", action="store_const", const="t", help="times as date-time strings")
    dump.add_argument("-i", dest="times", action="store_const", const="i", help="times as ISO 8601 strings")
    dump.add_argument("-n", dest="name", metavar="NAME", help="the dataset name to print")
    dump.add_argument("-p", dest="precision", metavar="F[,D]", help="significant digits of floats and doubles")
    dump.add_argument("-l", dest="line_length", type=int, default=80, metavar="LEN", help="line length of data (default 80)")
    dump.add_argument("-x", dest="ncml", action="store_true", help="NcML instead of CDL")
    dump.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from nczarr.convert.sources import open_source
    from nczarr.syntax.cdldump import DumpOptions, dump

    precision = None
    if args.precision:
        float_digits, _, double_digits = args.precision.partition(",")
        precision = (int(float_digits), int(double_digits) if double_digits else None)
    options = DumpOptions(
        header_only=args.header,
        coordinates=args.coordinates,
        variables=None if args.variables is None else tuple(v for v in args.variables.split(",") if v),
        special=args.special,
        kind=args.kind,
        times=args.times,
        name=args.name,
        precision=precision,
        line_length=args.line_length,
        ncml=args.ncml,
    )
    out = sys.stdout.buffer
    source = open_source(args.store)
    try:
        for line in dump(source, options, path=args.store):
            out.write(line.encode("utf-8", "surrogateescape"))
    finally:
        source.close()
    out.flush()
    return 0
