"""The ``nczarr`` command: parse arguments, call the rooms, print."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from nczarr import __version__
from nczarr.errors import NCZarrError

def _info(args: argparse.Namespace) -> int:
    from nczarr.zarr.info import describe

    sys.stdout.write(describe(args.store))
    return 0


def _validate(args: argparse.Namespace) -> int:
    from nczarr.syntax import run_validate

    return run_validate(args.file, sys.stdout)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nczarr", description="The netCDF data model on Zarr.")
    parser.add_argument("--version", action="version", version=f"nczarr {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    info = sub.add_parser("info", help="show the groups and arrays of a store as a tree")
    info.add_argument("store", help="a directory, .zip file or fsspec URL")
    info.set_defaults(run=_info)

    validate = sub.add_parser("validate", help="check a model-text file and print every problem")
    validate.add_argument("file", help="a model-text (.nczm) file")
    validate.set_defaults(run=_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR if args.quiet else logging.WARNING, format="nczarr: %(message)s")
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.run(args)
    except NCZarrError as e:
        sys.stderr.write(f"nczarr: error: {e}\n")
        return 1
    except BrokenPipeError:  # e.g. piped into head
        return 0


if __name__ == "__main__":
    sys.exit(main())
