"""The ``nczarr`` command: parse arguments, call the rooms, print. One module per command
(each with ``add_parser`` and ``run``); what they share is in :mod:`nczarr.cli.shared`."""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence

from nczarr._version import __version__
from nczarr.cli import copy, dump, gen, info, validate, virtualize, zom
from nczarr.cli.shared import DEBUG_VARIABLE, Interrupts, NewOutput, describe, fail, silence_stdout

__all__ = ["build_parser", "command", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; each sets ``run`` (and, if it makes a dataset, ``creates``)."""
    parser = argparse.ArgumentParser(prog="nczarr", description="The netCDF data model on Zarr.")
    parser.add_argument("--version", action="version", version=f"nczarr {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    parser.add_argument(
        "--debug", action="store_true", help=f"show the traceback of an error (or set {DEBUG_VARIABLE}=1)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in (info, validate, dump, gen, copy, virtualize, zom):
        command.add_parser(sub)
    return parser


def command() -> int:
    """The ``nczarr`` command's own process (the console script, ``python -m nczarr.cli``):
    ``main`` with numpy's OpenBLAS on one thread unless the environment says otherwise. No
    command does linear algebra, and OpenBLAS starts a thread per core at import whose
    spinning costs every command about 100 ms of CPU (a third of ``nczarr dump -h``)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; every failure is one ``nczarr: error:`` line and a non-zero
    status (``--debug`` or ``NCZARR_DEBUG=1``: the traceback instead); Ctrl-C exits 130."""
    debug = os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")
    interrupts = Interrupts()
    try:
        with interrupts:
            parser = build_parser()
            args = parser.parse_args(argv)
            debug = debug or args.debug
            logging.basicConfig(level=logging.ERROR if args.quiet else logging.WARNING, format="nczarr: %(message)s")
            if args.command is None:
                parser.print_help()
                return 2
            creates = getattr(args, "creates", None)
            with NewOutput(creates(args) if creates is not None else None) as output:
                status = int(args.run(args))
                if interrupts.seen:  # a library swallowed the interrupt: it counts all the same
                    output.remove()
        return fail("interrupted", 130) if interrupts.seen else status
    except BrokenPipeError:  # e.g. piped into head: quiet, and no second complaint at exit
        silence_stdout()
        return 0
    except KeyboardInterrupt:
        if debug:
            raise
        return fail("interrupted", 130)
    except Exception as error:  # the one place every failure becomes a line
        if debug:
            raise
        return fail(describe(error), 1)
