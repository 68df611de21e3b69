"""What the commands of the ``nczarr`` command line share: argument helpers, the one-line
error report, Ctrl-C handling and the removal of a half-made output."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType

from nczarr.errors import ArgumentError, NCZarrError

#: Set to anything but empty or 0 to see tracebacks, as ``--debug`` does.
DEBUG_VARIABLE = "NCZARR_DEBUG"

#: ncgen's and nccopy's one-letter kind flags (``gen`` and ``copy``), each a shorthand of ``-k``.
KIND_FLAGS = (("-3", "classic"), ("-6", "64-bit offset"), ("-5", "cdf5"), ("-4", "netCDF-4"), ("-7", "netCDF-4 classic model"))

#: What ``signal.signal`` takes and gives back.
SignalHandler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


def add_kind_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``-3 -6 -5 -4 -7``, each storing its kind where ``-k KIND`` does."""
    for flag, kind in KIND_FLAGS:
        parser.add_argument(flag, dest="kind", action="store_const", const=kind, help=f"same as -k '{kind}'")


def add_storage_flags(parser: argparse.ArgumentParser, side: str = "") -> None:
    """Add ``--storage-options JSON``, ``--anon`` and ``--profile NAME`` (with ``side``, e.g.
    ``src``: ``--src-storage-options``...), read back by :func:`storage_options`."""
    flag = f"--{side}-" if side else "--"
    of = f" for {side.upper()}" if side else ""
    parser.add_argument(
        f"{flag}storage-options", dest=f"{side}_storage_options", metavar="JSON",
        help=f"fsspec storage options{of}, a JSON object (e.g. '{{\"endpoint_url\": \"http://127.0.0.1:9000\"}}')",
    )
    parser.add_argument(
        f"{flag}anon", dest=f"{side}_anon", action="store_true",
        help=f"no credentials{of}: public S3 buckets (storage option anon=true)",
    )
    parser.add_argument(
        f"{flag}profile", dest=f"{side}_profile", metavar="NAME",
        help=f"the AWS profile{of} (~/.aws; storage option profile=NAME)",
    )


def storage_options(args: argparse.Namespace, side: str = "") -> dict[str, object]:
    """The storage options ``add_storage_flags`` read for ``side``; ArgumentError naming the
    flag when its JSON is not an object."""
    text = getattr(args, f"{side}_storage_options")
    options: dict[str, object] = {}
    if text is not None:
        flag = f"--{side}-storage-options" if side else "--storage-options"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ArgumentError(f"{flag}: not JSON ({exc.msg} at character {exc.pos}): {text}") from None
        if not isinstance(value, dict):
            raise ArgumentError(f"{flag} must be a JSON object, not {text}")
        options.update(value)
    if getattr(args, f"{side}_anon"):
        options["anon"] = True
    if getattr(args, f"{side}_profile") is not None:
        options["profile"] = getattr(args, f"{side}_profile")
    return options


def report(findings: Sequence[object], all_clear: str) -> int:
    """Print each finding (exit status 1), or ``all_clear`` when there is none."""
    sys.stdout.writelines(f"{f}\n" for f in findings)
    if findings:
        return 1
    sys.stdout.write(all_clear + "\n")
    return 0


class NewOutput:
    """A command's output that did not exist before it ran: removed when the command fails
    or is interrupted, even after it was complete (an interrupt may be raised late, see
    :class:`Interrupts`); what existed before is never touched."""

    def __init__(self, path: str | None) -> None:
        self.path: str | None = None
        if path is not None:  # commands that make nothing (dump, info) import no converter
            from nczarr.convert.copy import local_path_exists

            self.path = None if local_path_exists(path) else path

    def __enter__(self) -> NewOutput:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None:
            self.remove()

    def remove(self) -> None:
        from nczarr.convert.copy import remove_local

        if self.path is not None:
            remove_local(self.path)


class Interrupts:
    """Ctrl-C (SIGINT) as a KeyboardInterrupt raised where it is not lost: one raised inside
    a finalizer (``__del__``, a weakref callback, which h5py runs often) would be printed and
    ignored, and the command would go on; there it is raised a moment later instead (on a
    SIGALRM, taken only then). Used as a context manager around a command (in the main
    thread; elsewhere it does nothing)."""

    _RETRY = 0.02  # seconds

    def __init__(self) -> None:
        self.seen = False
        self._pending = False
        self._saved: dict[int, SignalHandler] = {}

    def __enter__(self) -> Interrupts:
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


def describe(error: Exception) -> str:
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


def fail(message: str, status: int) -> int:
    """Print ``message`` as one line on stderr and give ``status``."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    text = lines[0] + (" " + "; ".join(lines[1:]) if len(lines) > 1 else "") if lines else "failed"
    try:
        sys.stderr.write(f"nczarr: error: {text}\n")
        sys.stderr.flush()
    except OSError:  # stderr closed: the status alone tells
        pass
    return status


def silence_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (captured output)
        pass
