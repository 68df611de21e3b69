"""The ``nczarr`` command: parse arguments, call the rooms, print."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any

from nczarr import __version__
from nczarr.errors import NCZarrError

#: Set to anything but empty or 0 to see tracebacks, as ``--debug`` does.
DEBUG_VARIABLE = "NCZARR_DEBUG"


def _report(findings: Sequence[object], all_clear: str) -> int:
    """Print each finding (exit status 1), or ``all_clear`` when there is none."""
    sys.stdout.writelines(f"{f}\n" for f in findings)
    if findings:
        return 1
    sys.stdout.write(all_clear + "\n")
    return 0


def _info(args: argparse.Namespace) -> int:
    from nczarr.convert.sources import file_kind

    if file_kind(args.store) is not None:
        from nczarr.convert.info import describe_file

        sys.stdout.write(describe_file(args.store))
        return 0
    from nczarr.zarr.info import describe

    sys.stdout.write(describe(args.store))
    return 0


def _validate(args: argparse.Namespace) -> int:
    from nczarr.syntax import run_validate

    return run_validate(args.file, sys.stdout)


def _zom_export(args: argparse.Namespace) -> int:
    from nczarr.store import open_store
    from nczarr.zarr import zom

    with open_store(args.store, mode="r") as store:
        document = zom.export(store, use_consolidated=False if args.no_consolidated else None)
    if args.output:
        zom.write_document(document, args.output)
    else:
        sys.stdout.write(zom.dumps(document))
    return 0


def _zom_create(args: argparse.Namespace) -> int:
    from nczarr.store import open_store
    from nczarr.zarr import zom

    document = zom.read_document(args.doc)
    # Mode "w" replaces a Zarr dataset but refuses to wipe a directory of something else.
    with open_store(args.store, mode="w" if args.overwrite else "a") as store:
        zom.create(document, store, consolidate=not args.no_consolidated)
    return 0


def _zom_check(args: argparse.Namespace) -> int:
    from nczarr.store import open_store
    from nczarr.zarr import zom

    document = zom.read_document(args.doc)
    with open_store(args.store, mode="r") as store:
        differences = zom.compare(document, store)
    return _report(differences, f"{args.store} matches {args.doc}")


def _zom_validate(args: argparse.Namespace) -> int:
    from nczarr.zarr import zom

    return _report(zom.validate(zom.read_document(args.doc)), f"{args.doc} is a valid ZOM document")


def _dump(args: argparse.Namespace) -> int:
    import nczarr
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
    with nczarr.Dataset(args.store) as dataset:
        for line in dump(dataset, options):
            out.write(line.encode("utf-8", "surrogateescape"))
    out.flush()
    return 0


def _add_dump(sub: argparse._SubParsersAction) -> None:
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
    dump.set_defaults(run=_dump)


def _gen(args: argparse.Namespace) -> int:
    from nczarr.convert.gen import generate

    generate(args.cdl, args.output, kind=args.kind, format=args.format)
    return 0


def _add_gen(sub: argparse._SubParsersAction) -> None:
    gen = sub.add_parser(
        "gen",
        help="make a dataset from a CDL file, as ncgen does",
        description="Make a Zarr store (or a netCDF file, for a .nc OUTPUT) from CDL, with ncgen's rules.",
    )
    gen.add_argument("cdl", help="a CDL file")
    gen.add_argument("-o", dest="output", metavar="OUTPUT", help="the store or .nc file to make (default, as ncgen: the CDL file's name with .zarr, here)")
    gen.add_argument("-k", dest="kind", metavar="KIND", help="ncgen's kind: classic, 64-bit offset, cdf5, netCDF-4, netCDF-4 classic model (or 1-5, nc3...)")
    for flag, kind in (("-3", "classic"), ("-6", "64-bit offset"), ("-5", "cdf5"), ("-4", "netCDF-4"), ("-7", "netCDF-4 classic model")):
        gen.add_argument(flag, dest="kind", action="store_const", const=kind, help=f"same as -k '{kind}'")
    gen.add_argument("--format", metavar="FORMAT", help="Zarr convention: NCZARR (default), NCZARR_V2, ZARR, ZARR_V2")
    gen.set_defaults(run=_gen)


def _copy(args: argparse.Namespace) -> int:
    from nczarr.convert.copy import CopyOptions, ProgressBar, copy

    def names(text: str | None) -> tuple[str, ...] | None:
        return None if text is None else tuple(n.strip() for n in text.split(",") if n.strip())

    options = CopyOptions(
        kind=args.kind,
        format=args.format,
        chunking=args.chunking,
        deflate=args.deflate,
        shuffle=args.shuffle,
        data_variables=names(args.data_variables),
        variables=names(args.variables),
        data_groups=names(args.data_groups),
        groups=names(args.groups),
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


def _add_copy(sub: argparse._SubParsersAction) -> None:
    copy = sub.add_parser(
        "copy",
        help="copy a dataset between netCDF-3, netCDF-4 and every Zarr convention (nccopy's options)",
        description="SRC and DST are netCDF files (.nc) or Zarr stores (directories, .zip files, URLs).",
    )
    copy.add_argument("src")
    copy.add_argument("dst")
    copy.add_argument("-k", dest="kind", metavar="KIND", help="output kind: classic, 64-bit offset, cdf5, netCDF-4, netCDF-4 classic model (or 1-5)")
    for flag, kind in (("-3", "classic"), ("-6", "64-bit offset"), ("-5", "cdf5"), ("-4", "netCDF-4"), ("-7", "netCDF-4 classic model")):
        copy.add_argument(flag, dest="kind", action="store_const", const=kind, help=f"same as -k '{kind}'")
    copy.add_argument("--format", metavar="FORMAT", help="Zarr convention of a Zarr target: NCZARR (default), NCZARR_V2, ZARR, ZARR_V2")
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
    copy.set_defaults(run=_copy)


def _add_zom(sub: argparse._SubParsersAction) -> None:
    zom = sub.add_parser("zom", help="Zarr Object Model documents: export, create, check, validate")
    commands = zom.add_subparsers(dest="zom_command", metavar="ZOM_COMMAND", required=True)
    store_help = "a directory, .zip file or fsspec URL"

    export = commands.add_parser("export", help="print the ZOM document (JSON) of a store")
    export.add_argument("store", help=store_help)
    export.add_argument("-o", "--output", metavar="FILE", help="write the document to FILE")
    export.add_argument("--no-consolidated", action="store_true", help="read every node, not the consolidated metadata")
    export.set_defaults(run=_zom_export)

    create = commands.add_parser("create", help="create the groups and arrays (no data) a ZOM document describes")
    create.add_argument("doc", help="a ZOM document (JSON file)")
    create.add_argument("store", help=store_help)
    create.add_argument("--overwrite", action="store_true", help="replace what a non-empty store holds")
    create.add_argument("--no-consolidated", action="store_true", help="do not write consolidated metadata")
    create.set_defaults(run=_zom_create)

    check = commands.add_parser(
        "check", help="list every difference between a ZOM document and a store (exit 1 when there is one)"
    )
    check.add_argument("doc", help="a ZOM document (JSON file)")
    check.add_argument("store", help=store_help)
    check.set_defaults(run=_zom_check)

    validate = commands.add_parser(
        "validate", help="check a ZOM document against the JSON Schema of its Zarr version (exit 1 on problems)"
    )
    validate.add_argument("doc", help="a ZOM document (JSON file)")
    validate.set_defaults(run=_zom_validate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nczarr", description="The netCDF data model on Zarr.")
    parser.add_argument("--version", action="version", version=f"nczarr {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    parser.add_argument(
        "--debug", action="store_true", help=f"show the traceback of an error (or set {DEBUG_VARIABLE}=1)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    info = sub.add_parser("info", help="show the groups and arrays of a store (or a netCDF file) as a tree")
    info.add_argument("store", help="a directory, .zip file, fsspec URL or netCDF file")
    info.set_defaults(run=_info)

    validate = sub.add_parser("validate", help="check a model-text file and print every problem")
    validate.add_argument("file", help="a model-text (.nczm) file")
    validate.set_defaults(run=_validate)

    _add_dump(sub)
    _add_gen(sub)
    _add_copy(sub)
    _add_zom(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; every failure is one ``nczarr: error:`` line and a non-zero
    status (``--debug`` or ``NCZARR_DEBUG=1``: the traceback instead); Ctrl-C exits 130."""
    debug = os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")
    interrupts = _Interrupts()
    try:
        with interrupts:
            parser = build_parser()
            args = parser.parse_args(argv)
            debug = debug or args.debug
            logging.basicConfig(level=logging.ERROR if args.quiet else logging.WARNING, format="nczarr: %(message)s")
            if args.command is None:
                parser.print_help()
                return 2
            with _NewOutput(_output_of(args)) as output:
                status = int(args.run(args))
                if interrupts.seen:  # a library swallowed the interrupt: it counts all the same
                    output.remove()
        return _fail("interrupted", 130) if interrupts.seen else status
    except BrokenPipeError:  # e.g. piped into head: quiet, and no second complaint at exit
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        if debug:
            raise
        return _fail("interrupted", 130)
    except Exception as error:  # noqa: BLE001 - the one place every failure becomes a line
        if debug:
            raise
        return _fail(_describe(error), 1)


def _output_of(args: argparse.Namespace) -> str | None:
    """The dataset ``gen`` or ``copy`` makes, or None."""
    if args.command == "copy":
        return str(args.dst)
    if args.command == "gen":
        from nczarr.convert.gen import output_path

        return output_path(args.cdl, args.output)
    return None


class _NewOutput:
    """A command's output that did not exist before it ran: removed when the command fails
    or is interrupted, even after it was complete (an interrupt may be raised late, see
    :class:`_Interrupts`); what existed before is never touched."""

    def __init__(self, path: str | None) -> None:
        from nczarr.convert.copy import local_path_exists

        self.path = path if path is not None and not local_path_exists(path) else None

    def __enter__(self) -> _NewOutput:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None:
            self.remove()

    def remove(self) -> None:
        from nczarr.convert.copy import remove_local

        if self.path is not None:
            remove_local(self.path)


class _Interrupts:
    """Ctrl-C (SIGINT) as a KeyboardInterrupt raised where it is not lost: one raised inside
    a finalizer (``__del__``, a weakref callback, which h5py runs often) would be printed and
    ignored, and the command would go on; there it is raised a moment later instead (on a
    SIGALRM, taken only then). Used as a context manager around a command (in the main
    thread; elsewhere it does nothing)."""

    _RETRY = 0.02  # seconds

    def __init__(self) -> None:
        self.seen = False
        self._pending = False
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._saved[signal.SIGINT] = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._saved.items():
            if number != signal.SIGINT:  # the alarm of a retry
                signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(number, handler)
        self._saved = {}

    def _handle(self, number: int, frame: FrameType | None) -> None:
        if number == signal.SIGINT:
            self.seen = self._pending = True
        if not self._pending:
            return
        if hasattr(signal, "setitimer") and _in_finalizer(frame):
            if signal.SIGALRM not in self._saved:
                self._saved[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._handle)
            signal.setitimer(signal.ITIMER_REAL, self._RETRY)
            return
        self._pending = False
        raise KeyboardInterrupt


def _in_finalizer(frame: FrameType | None) -> bool:
    """Whether Python runs a finalizer here, where exceptions are printed and ignored."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or os.path.basename(code.co_filename) in ("weakref.py", "_weakrefset.py"):
            return True
        frame = frame.f_back
    return False


def _describe(error: Exception) -> str:
    """What went wrong, in words: nczarr's own message, the system's for an I/O error,
    a plain statement for exhausted memory or nesting, the class for anything else."""
    if isinstance(error, NCZarrError):
        return str(error)
    if isinstance(error, RecursionError):
        return "the input is nested too deeply to process"
    if isinstance(error, MemoryError):
        return f"out of memory{': ' + str(error) if str(error) else ''}"
    if isinstance(error, OSError) and error.strerror:
        where = error.filename if error.filename is not None else ""
        return f"{where}: {error.strerror}" if where else error.strerror
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _fail(message: str, status: int) -> int:
    """Print ``message`` as one line on stderr and give ``status``."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    text = lines[0] + (" " + "; ".join(lines[1:]) if len(lines) > 1 else "") if lines else "failed"
    try:
        sys.stderr.write(f"nczarr: error: {text}\n")
        sys.stderr.flush()
    except OSError:  # stderr closed: the status alone tells
        pass
    return status


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (captured output)
        pass


if __name__ == "__main__":
    sys.exit(main())
