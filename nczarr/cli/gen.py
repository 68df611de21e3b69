"""``nczarr gen``: a dataset from a CDL file, with ncgen's rules and options."""

from __future__ import annotations

import argparse
import os

from nczarr.cli.shared import add_kind_flags, add_storage_flags, storage_options

#: ncgen's ``-l`` languages (each spelling it takes); only binary output is made here.
LANGUAGES = {"b": "b", "c": "c", "C": "c", "f77": "f77", "fortran77": "f77", "Fortran77": "f77", "j": "java", "java": "java"}


class _Language(argparse.Action):
    """``-b``, ``-n``, ``-l LANG`` (and ncgen's old ``-c``, ``-f``): the one output language."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option: object = None
    ) -> None:
        if getattr(namespace, "language", None) is not None:
            parser.error("Please specify only one language")
        language = self.const if values is None or values == [] else values
        if language not in LANGUAGES:
            parser.error(f"output language {language} not implemented")
        namespace.language = LANGUAGES[str(language)]
        if option == "-n":  # ncgen's old -b: a default output name ending .cdf
            namespace.suffix = ".cdf"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gen = sub.add_parser(
        "gen",
        help="make a dataset from a CDL file, as ncgen does",
        description=(
            "Make a Zarr store (or a netCDF file, for a .nc OUTPUT) from CDL, with ncgen's rules and flags. "
            "Unlike ncgen, which only checks the text unless -b, -k or -o is given, the dataset is always made."
        ),
    )
    gen.add_argument("cdl", help="a CDL file")
    gen.add_argument(
        "-o",
        dest="output",
        metavar="OUTFILE",
        help=(
            "the store, URL (file:///p#mode=nczarr,file) or .nc file to make (default, as ncgen: the CDL file's "
            "name with .nc when -b, -l b or a kind is given; else with .zarr)"
        ),
    )
    gen.add_argument(
        "-k",
        "-v",
        dest="kind",
        metavar="KIND",
        help="ncgen's kind: classic, 64-bit offset, cdf5, netCDF-4, netCDF-4 classic model (or nc3, nc6, nc5, nc4, nc7, 1-5)",
    )
    add_kind_flags(gen)
    gen.add_argument("-1", dest="ignored", action="store_true", help="accepted, no effect (as ncgen 4.9.0)")
    for flag, language, what in (
        ("-b", "b", "binary output (the default): the dataset itself"),
        ("-n", "b", "binary output; a default output name ends .cdf (ncgen's old -b)"),
        ("-c", "c", argparse.SUPPRESS),
        ("-f", "f77", argparse.SUPPRESS),
    ):
        gen.add_argument(flag, dest="language", action=_Language, nargs=0, const=language, help=what)
    gen.add_argument("-l", dest="language", action=_Language, metavar="b|c|f77|java", help="output language: only b is made here")
    gen.add_argument("-x", dest="nofill", action="store_true", help="no fill values (netCDF's nofill mode)")
    gen.add_argument("-H", dest="header_only", action="store_true", help="the header only: the data section is ignored")
    gen.add_argument("-N", dest="dataset_name", metavar="DATASETNAME", help="the dataset name (not stored in a dataset)")
    gen.add_argument("-M", dest="main_name", metavar="NAME", help="main function name of generated code (no effect with -lb)")
    gen.add_argument("-d", dest="debug_level", action="store_const", const=1, help="debug output, as -D1 (no effect here)")
    gen.add_argument("-D", dest="debug_level", type=int, metavar="N", help="debug level (no effect here)")
    gen.add_argument("-L", dest="log_level", type=int, metavar="N", help="log level (no effect here)")
    gen.add_argument("-P", dest="diskless", action="store_true", help="build in memory, then persist (no effect here)")
    gen.add_argument("-W", dest="whole_var_size", metavar="N", help="largest variable written in one call (no effect here)")
    gen.add_argument("-B", dest="buffer_size", metavar="N", help=argparse.SUPPRESS)
    gen.add_argument(
        "--format", metavar="FORMAT", help="Zarr convention: NCZARR (default), NCZARR_V2, ZARR, ZARR_V2, ZARR_V3_DRAFT"
    )
    add_storage_flags(gen)
    gen.set_defaults(run=run, creates=creates, language=None, suffix=".zarr")


def run(args: argparse.Namespace) -> int:
    from nczarr.api.generate import generate
    from nczarr.errors import ArgumentError
    from nczarr.formats.location import parse_location
    from nczarr.store import Store, open_store

    if args.language not in (None, "b"):
        raise ArgumentError(f"output language {args.language} is not supported: nczarr gen writes datasets only (-lb)")
    output: str | Store = _output(args)
    format = args.format
    options = storage_options(args)
    where = parse_location(str(output))
    if options and not where.local:  # the store opened here; the URL's mode words still name the convention
        format = format or where.convention
        output = open_store(str(output), "w", storage_options=options)
    generate(args.cdl, output, kind=args.kind, format=format, fill=not args.nofill, header_only=args.header_only)
    return 0


def _output(args: argparse.Namespace) -> str:
    if args.output is not None:
        return str(args.output)
    return os.path.splitext(os.path.basename(args.cdl))[0] + _default_suffix(args)


def _default_suffix(args: argparse.Namespace) -> str:
    """ncgen's default output: ``<cdl name>.nc`` in the current folder when ``-b``, ``-l b``
    or a kind asks for a file (``.cdf`` with ``-n``); with none of them (ncgen: only check
    the text), or a Zarr ``--format``, nczarr makes the store ``<cdl name>.zarr``."""
    if args.suffix != ".zarr":
        return str(args.suffix)
    asks_for_file = args.language == "b" or args.kind is not None
    return ".nc" if asks_for_file and args.format is None else ".zarr"


def creates(args: argparse.Namespace) -> str | None:
    """The dataset ``gen`` makes (removed again if it fails); none for a refused language."""
    return _output(args) if args.language in (None, "b") else None
