"""``nczarr info``: the groups and arrays of a store (or a netCDF file) as a tree."""

from __future__ import annotations

import argparse
import sys

from nczarr.cli.shared import add_storage_flags, storage_options


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    info = sub.add_parser("info", help="show the groups and arrays of a store (or a netCDF file) as a tree")
    info.add_argument("store", help="a directory, .zip file, fsspec URL or netCDF file")
    add_storage_flags(info)
    info.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from nczarr.convert.sources import file_kind

    if file_kind(args.store) is not None:
        from nczarr.convert.info import describe_file

        sys.stdout.write(describe_file(args.store))
        return 0
    from nczarr.store import open_store
    from nczarr.zarr.info import describe

    options = storage_options(args)
    sys.stdout.write(describe(open_store(args.store, "r", storage_options=options) if options else args.store))
    return 0
