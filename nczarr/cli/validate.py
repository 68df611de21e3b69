"""``nczarr validate``: check a model-text file and print every problem."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    validate = sub.add_parser("validate", help="check a model-text file and print every problem")
    validate.add_argument("file", help="a model-text (.nczm) file")
    validate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from nczarr.syntax import run_validate

    return run_validate(args.file, sys.stdout)
