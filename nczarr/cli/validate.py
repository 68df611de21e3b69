"""``nczarr validate``: check a model-text file and print every problem."""

from __future__ import annotations

import argparse
import os
import sys

from nczarr.errors import ArgumentError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    validate = sub.add_parser("validate", help="check a model-text file and print every problem")
    validate.add_argument("file", help="a model-text (.nczm) file")
    validate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from nczarr.syntax import run_validate

    if os.path.isdir(args.file):  # a Zarr store: what checks one is another command
        raise ArgumentError(
            f"{args.file!r} is a folder: validate checks a model-text (.nczm) file; a store is checked by "
            "'nczarr info' or 'nczarr dump' (they read all of its metadata) and 'nczarr zom check'"
        )
    return run_validate(args.file, sys.stdout)
