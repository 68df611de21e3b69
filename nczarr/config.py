"""Settings read from the environment, each read in one place (floor 0: imports nothing of
nczarr, so every floor may ask)."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator

from nczarr.errors import ArgumentError

logger = logging.getLogger(__name__)

#: ``NCZARR_FSYNC=1`` makes every write survive a power cut (see :func:`fsync_enabled`).
FSYNC_VARIABLE = "NCZARR_FSYNC"
_FALSE = frozenset({"", "0", "false", "no", "off"})
_TRUE = frozenset({"1", "true", "yes", "on"})


def fsync_enabled() -> bool:
    """Whether stores and file writers fsync what they write by default (``NCZARR_FSYNC``).

    Off unless set: writes are atomic either way (a reader or a killed process never sees half
    a value), fsync adds durability across a power cut at a cost in speed. Read at each call,
    so a store opened after the variable changes follows it.
    """
    value = os.environ.get(FSYNC_VARIABLE, "").strip().lower()
    if value in _FALSE:
        return False
    if value not in _TRUE:
        # Someone asked for something: durability is the safe reading.
        logger.warning("%s=%r is not one of 0/1/true/false/yes/no/on/off: fsync is on", FSYNC_VARIABLE, value)
    return True


# -- concurrency and codec libraries -------------------------------------------------------
#: ``NCZARR_THREADS=N`` sets how many threads encode, decode and move chunks (see :func:`threads`).
THREADS_VARIABLE = "NCZARR_THREADS"
#: ``NCZARR_DEFLATE=name`` picks the zlib/gzip library (see :func:`deflate_library`).
DEFLATE_VARIABLE = "NCZARR_DEFLATE"
#: ``NCZARR_REQUESTS=N`` bounds the requests a remote store keeps in flight (see :func:`requests`).
REQUESTS_VARIABLE = "NCZARR_REQUESTS"
#: ``NCZARR_S3_CLIENT=obstore|fsspec|auto`` picks the client of ``s3://`` stores (see :func:`s3_client`).
S3_CLIENT_VARIABLE = "NCZARR_S3_CLIENT"
#: The clients an ``s3://`` store can use: ``auto`` is obstore when it is installed and the
#: storage options map onto it, else fsspec (s3fs).
S3_CLIENTS = ("auto", "obstore", "fsspec")
#: Requests in flight by default: on an object store 20 ms away, 64 requests at once move
#: 64 chunks per round trip (s3fs alone keeps 10, botocore's connection pool).
DEFAULT_REQUESTS = 64
#: The zlib/gzip-compatible libraries nczarr can use, by the name :func:`deflate_library` takes.
#: Each writes ordinary zlib and gzip streams that every reader decodes.
DEFLATE_LIBRARIES = ("isal", "libdeflate", "zlib-ng", "zlib")


class Settings:
    """The process-wide performance settings, each None until set: then the environment
    variable decides, then the default. Set them with :func:`configure` (for the rest of the
    process) or :func:`settings` (for a ``with`` block), as zarr-python's ``zarr.config.set``:

    >>> import nczarr.config
    >>> nczarr.config.configure(threads=4)          # or NCZARR_THREADS=4 in the environment
    >>> with nczarr.config.settings(deflate="zlib"):  # or NCZARR_DEFLATE=zlib
    ...     pass
    >>> nczarr.config.configure(requests=128)       # or NCZARR_REQUESTS=128
    """

    def __init__(self) -> None:
        self.threads: int | None = None
        self.deflate: str | None = None
        self.requests: int | None = None
        self.s3_client: str | None = None


_settings = Settings()


def configure(
    *,
    threads: int | None = None,
    deflate: str | None = None,
    requests: int | None = None,
    s3_client: str | None = None,
) -> None:
    """Set ``threads`` (how many threads work on chunks, at least 1), ``deflate`` (the
    zlib/gzip library, one of :data:`DEFLATE_LIBRARIES`), ``requests`` (how many requests
    a remote store keeps in flight, at least 1) and ``s3_client`` (one of
    :data:`S3_CLIENTS`); None leaves a setting as it is. A bad value raises ArgumentError
    (a ValueError) naming it."""
    for name, value in (("threads", threads), ("requests", requests)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ArgumentError(f"{name} must be an integer of at least 1, not {value!r}")
            setattr(_settings, name, value)
    if deflate is not None:
        if deflate not in DEFLATE_LIBRARIES:
            raise ArgumentError(f"deflate must be one of {', '.join(DEFLATE_LIBRARIES)}, not {deflate!r}")
        _settings.deflate = deflate
    if s3_client is not None:
        if s3_client not in S3_CLIENTS:
            raise ArgumentError(f"s3_client must be one of {', '.join(S3_CLIENTS)}, not {s3_client!r}")
        _settings.s3_client = s3_client


@contextlib.contextmanager
def settings(
    *,
    threads: int | None = None,
    deflate: str | None = None,
    requests: int | None = None,
    s3_client: str | None = None,
) -> Iterator[Settings]:
    """``with settings(threads=..., deflate=..., requests=..., s3_client=...):`` the
    settings of :func:`configure` for the block, restored after it."""
    old = dict(vars(_settings))
    try:
        configure(threads=threads, deflate=deflate, requests=requests, s3_client=s3_client)
        yield _settings
    finally:
        vars(_settings).update(old)


#: Threads per core by default: every core computes while as many threads wait on the disk
#: (reading cold chunks with 2 threads per core took 0.24 s where one per core took 0.39 s,
#: and compressed writes 0.36 s against 0.57 s, on 2 cores; benchmarks/engine.py).
THREADS_PER_CORE = 2


def _positive_variable(name: str) -> int | None:
    """The whole number ≥ 1 in the environment variable ``name``; None (logged when set to
    something else) when there is none."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count >= 1:
        return count
    logger.warning("%s=%r is not a whole number of at least 1: the default is used", name, value)
    return None


def requests() -> int:
    """How many requests a remote (fsspec) store keeps in flight, reading or writing: the
    ``requests`` setting, else ``NCZARR_REQUESTS``, else :data:`DEFAULT_REQUESTS`."""
    if _settings.requests is not None:
        return _settings.requests
    count = _positive_variable(REQUESTS_VARIABLE)
    return DEFAULT_REQUESTS if count is None else count


def s3_client() -> str:
    """The client of ``s3://`` stores (one of :data:`S3_CLIENTS`): the ``s3_client``
    setting, else ``NCZARR_S3_CLIENT``, else ``auto``. An unknown name is logged and ignored."""
    if _settings.s3_client is not None:
        return _settings.s3_client
    value = os.environ.get(S3_CLIENT_VARIABLE, "").strip().lower()
    if value and value not in S3_CLIENTS:
        logger.warning("%s=%r is not one of %s: auto is used", S3_CLIENT_VARIABLE, value, ", ".join(S3_CLIENTS))
        return "auto"
    return value or "auto"


def threads() -> int:
    """How many threads encode, decode and move chunks: the ``threads`` setting, else
    ``NCZARR_THREADS``, else ``THREADS_PER_CORE`` per core this process may run on, so that
    every core is busy while some threads wait on the disk. One thread does everything on
    the caller's thread."""
    if _settings.threads is not None:
        return _settings.threads
    count = _positive_variable(THREADS_VARIABLE)
    return THREADS_PER_CORE * _cores() if count is None else count


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def deflate_library() -> str | None:
    """The zlib/gzip library asked for: the ``deflate`` setting, else ``NCZARR_DEFLATE``,
    else None (the fastest one installed). An unknown name is logged and ignored."""
    if _settings.deflate is not None:
        return _settings.deflate
    value = os.environ.get(DEFLATE_VARIABLE, "").strip().lower()
    if not value:
        return None
    if value not in DEFLATE_LIBRARIES:
        logger.warning("%s=%r is not one of %s: the fastest installed is used", DEFLATE_VARIABLE, value,
                       ", ".join(DEFLATE_LIBRARIES))
        return None
    return value


# -- netcdf-c's settings that change what is stored ----------------------------------------
#: ``NCZARR_CONSOLIDATED``: netcdf-c writes and reads ``.zmetadata`` when it is a positive
#: number, ``true`` or ``yes`` (see :func:`netcdf_c_consolidated`).
CONSOLIDATED_VARIABLE = "NCZARR_CONSOLIDATED"
#: ``NCZARRFORMAT=2|3``: the Zarr version netcdf-c writes when a URL names none.
ZARR_FORMAT_VARIABLE = "NCZARRFORMAT"
#: netcdf-c's ``.ncrc`` key for the chunk key separator of new Zarr v2 arrays.
DIMENSION_SEPARATOR_KEY = "ZARR.DIMENSION_SEPARATOR"
#: The files netcdf-c reads its settings from, in each of the home and current folders;
#: a later one overrides an earlier one.
RC_FILE_NAMES = (".ncrc", ".daprc", ".dodsrc")


def netcdf_c_consolidated() -> bool | None:
    """``NCZARR_CONSOLIDATED`` read as netcdf-c reads it: None when unset, True for a
    (leading) positive whole number, ``true`` or ``yes`` in any case, False for anything else."""
    value = os.environ.get(CONSOLIDATED_VARIABLE)
    if value is None:
        return None
    digits = re.match(r"\s*[+-]?\d+", value)
    return (digits is not None and int(digits[0]) > 0) or value.lower() in ("true", "yes")


def netcdf_c_zarr_format() -> int | None:
    """``NCZARRFORMAT`` as netcdf-c reads it (2 or 3; anything else: None)."""
    digits = re.match(r"\s*[+-]?\d+", os.environ.get(ZARR_FORMAT_VARIABLE, ""))
    version = int(digits[0]) if digits else None
    return version if version in (2, 3) else None


def netcdf_c_rc(key: str) -> str | None:
    """The value of ``key`` in netcdf-c's settings files, as netcdf-c 4.10.1 reads them:
    ``NCRCENV_RC`` names the only file, else ``.ncrc``, ``.daprc``, ``.dodsrc`` in the home
    folder (``NCRCENV_HOME``, else ``HOME``) then in the current one, a later file winning;
    none at all with ``NCRCENV_IGNORE``. A line is ``KEY=VALUE`` exactly (no blanks around
    either; ``#`` starts a comment line); lines limited to some URLs (``[url]KEY=VALUE``) are
    not read."""
    if os.environ.get("NCRCENV_IGNORE"):
        return None
    only = os.environ.get("NCRCENV_RC")
    if only:
        paths = [only]
    else:
        home = os.environ.get("NCRCENV_HOME") or os.path.expanduser("~")
        paths = [os.path.join(folder, name) for folder in (home, os.getcwd()) for name in RC_FILE_NAMES]
    found = None
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                lines = file.read().splitlines()
        except OSError:
            continue
        for line in lines:
            name, equals, value = line.partition("=")
            if equals and name == key:
                found = value
    return found


def netcdf_c_dimension_separator() -> str | None:
    """The chunk key separator netcdf-c's settings ask of new Zarr v2 arrays (``.`` or ``/``,
    from ``ZARR.DIMENSION_SEPARATOR``), None for none (any other value is ignored, as
    netcdf-c ignores it)."""
    value = netcdf_c_rc(DIMENSION_SEPARATOR_KEY)
    return value if value in (".", "/") else None
