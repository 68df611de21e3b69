"""``nczarr dump``: a dataset as CDL, as ncdump prints it, with ncdump's options."""

from __future__ import annotations

import argparse
import re
import sys

from nczarr.cli.shared import add_storage_flags, storage_options

_LEADING_INT = re.compile(r"\s*[+-]?\d+")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dump = sub.add_parser(
        "dump",
        add_help=False,
        help="print a dataset as CDL, exactly as ncdump does (ncdump's options)",
        description="Print a Zarr store or netCDF file as CDL, as ncdump prints it (flags combine as in ncdump: -hs, -bc).",
    )
    dump.add_argument("--help", action="help", help="show this help and exit")
    dump.add_argument("store", help="a Zarr store (directory, .zip, URL: file:///p#mode=nczarr,file) or a netCDF file")
    dump.add_argument("-c", dest="coordinates", action="store_true", help="data of coordinate variables only")
    dump.add_argument("-h", dest="header", action="store_true", help="header only, no data")
    dump.add_argument("-v", dest="variables", metavar="VAR1[,...]", help="data of these variables only (names or paths)")
    for flag, dest, what in (("-b", "brief", "brief"), ("-f", "full", "full")):
        dump.add_argument(
            flag, dest=dest, action=_Annotations, metavar="c|f", type=_language(flag), help=f"{what} index comments (C, F)"
        )
    dump.add_argument("-l", dest="line_length", type=_line_length, default=80, metavar="LEN", help="line length of data")
    dump.add_argument("-n", dest="name", metavar="NAME", help="the dataset name to print (default: from the file name)")
    dump.add_argument("-p", dest="precision", type=_digits, metavar="N[,N]", help="significant digits of floats[,doubles]")
    dump.add_argument("-d", dest="sigdigs", type=_digits, metavar="N[,N]", help="as -p, but C_format attributes still win")
    dump.add_argument("-k", dest="kind", action="store_true", help="print the kind of the dataset only")
    dump.add_argument("-s", dest="special", action="store_true", help="show special virtual attributes")
    dump.add_argument("-t", dest="times", action="store_const", const="t", help="times as date-time strings")
    dump.add_argument("-i", dest="times", action="store_const", const="i", help="times as ISO 8601 date-time strings")
    dump.add_argument("-g", dest="groups", metavar="GRP1[,...]", help="data of these groups only (names or paths)")
    dump.add_argument("-w", dest="cache", action="store_true", help="client-side caching of DAP URLs (no effect here)")
    dump.add_argument("-x", dest="ncml", action="store_true", help="NcML instead of CDL")
    dump.add_argument("-F", dest="filters", action="store_true", help="with -s: every filter in _Filter (and _Codecs)")
    dump.add_argument("-X", dest="extra", metavar="p|m", type=_extra_option, help="-Xp: no _NCProperties in NcML; -Xm: in memory")
    dump.add_argument("-L", dest="log_level", type=int, metavar="N", help="log level (accepted, as ncdump without logging)")
    add_storage_flags(dump)
    dump.set_defaults(run=run)


class _Annotations(argparse.Action):
    """``-b`` / ``-f``: turn the comments on; the index language is the last one given, as
    ncdump keeps one for both."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option: object = None
    ) -> None:
        setattr(namespace, self.dest, True)
        namespace.index_language = values


def _language(flag: str) -> argparse._ActionType:
    """ncdump's ``-b`` / ``-f`` argument: its first letter, c or f, in either case."""

    def parse(text: str) -> str:
        language = text[:1].lower()
        if language not in ("c", "f"):
            raise argparse.ArgumentTypeError(f"invalid value for {flag} option: {text}")
        return language

    return parse


def _line_length(text: str) -> int:
    number = _strtol(text)
    if number < 10:
        raise argparse.ArgumentTypeError(f"unreasonably small line length specified: {number}")
    return number


def _extra_option(text: str) -> str:
    if text[:1].lower() not in ("p", "m"):
        raise argparse.ArgumentTypeError(f"invalid value for -X option: {text}")
    return text[:1].lower()


def _strtol(text: str) -> int:
    """C's ``strtol(text, 0, 0)``: the leading decimal, 0x hexadecimal or 0 octal integer."""
    match = re.match(r"\s*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9]\d*))", text)
    if match is None:
        return 0
    sign, hexadecimal, octal, decimal = match.groups()
    number = int(hexadecimal, 16) if hexadecimal else int(octal, 8) if octal else int(decimal)
    return -number if sign == "-" else number


def _digits(text: str) -> tuple[int | None, int | None]:
    """ncdump's ``-p F[,D]``: float and double significant digits, each 1 to 20; a part
    left out keeps its default (None). As ncdump reads it, ``,D`` alone changes nothing."""
    if not text or text.startswith(","):
        return None, None
    match = _LEADING_INT.match(text)
    floats = int(match.group(0)) if match else 0
    rest = text[match.end() :] if match else text
    if not 1 <= floats <= 20:
        raise argparse.ArgumentTypeError(f"unreasonable value for float significant digits: {floats}")
    doubles: int | None = None
    if rest.startswith(","):
        match = _LEADING_INT.match(rest[1:])
        doubles = int(match.group(0)) if match else 0
        if not 1 <= doubles <= 20:
            raise argparse.ArgumentTypeError(f"unreasonable value for double significant digits: {doubles}")
    return floats, doubles


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(text.split(","))


def run(args: argparse.Namespace) -> int:
    from nczarr.convert.sources import open_source
    from nczarr.syntax.cdldump import DumpOptions, dump

    options = DumpOptions(
        header_only=args.header,
        coordinates=args.coordinates,
        variables=None if args.variables is None else tuple(v for v in args.variables.split(",") if v),
        special=args.special,
        kind=args.kind,
        times=args.times,
        name=args.name,
        precision=args.precision or args.sigdigs,
        line_length=args.line_length,
        ncml=args.ncml,
        brief=bool(args.brief),
        full=bool(args.full),
        index_language=getattr(args, "index_language", "c"),
        groups=_names(args.groups),
        filters=args.filters,
        c_format_wins=args.precision is None and args.sigdigs is not None,
    )
    out = sys.stdout.buffer
    source = open_source(args.store, storage_options=storage_options(args) or None)
    try:
        for line in dump(source, options, path=args.store):
            out.write(line.encode("utf-8", "surrogateescape"))
    finally:
        source.close()
    out.flush()
    return 0
