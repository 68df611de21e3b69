"""``nczarr copy``: a dataset between netCDF-3, netCDF-4 and every Zarr convention, with
nccopy's options and their meaning (``nccopy`` without arguments lists them)."""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nczarr.cli.shared import add_kind_flags, add_storage_flags, storage_options

if TYPE_CHECKING:
    from nczarr.convert.archive import ArchiveProgress
    from nczarr.convert.copy import CopyOptions

#: nczarr's copy buffer when ``-m`` is not given (nccopy's is 5 MB; a larger one is faster).
DEFAULT_MEMORY = 256 << 20


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    copy = sub.add_parser(
        "copy",
        help="copy a dataset between netCDF-3, netCDF-4 and every Zarr convention (nccopy's options)",
        description="SRC and DST are netCDF files (.nc) or Zarr stores (directories, .zip files, URLs). "
        "Several SRC (paths, globs, URLs, @list.txt) make one dataset: concatenated along the record "
        "dimension as ncrcat does, or merged (--merge) as ncks -A does; rerunning an interrupted "
        "copy to a Zarr store resumes it.",
        add_help=False,  # -h is nccopy's chunk cache size
    )
    copy.add_argument("src", nargs="+", metavar="SRC")
    copy.add_argument("dst", metavar="DST")
    copy.add_argument(
        "-k",
        dest="kind",
        metavar="KIND",
        help="output kind: classic, 64-bit offset, cdf5, netCDF-4, netCDF-4 classic model (or nccopy's other spellings)",
    )
    add_kind_flags(copy)
    copy.add_argument(
        "--format", metavar="FORMAT", help="Zarr convention of a Zarr target: NCZARR (default), NCZARR_V2, ZARR, ZARR_V2, "
        "ZARR_V3_DRAFT (the 2019 v3 draft layout of zarr-python 2.18)"
    )
    copy.add_argument("-d", dest="deflate", metavar="N", help="deflate level 0-9 of every variable (0: no filters)")
    copy.add_argument("-s", dest="shuffle", action="store_true", help="add shuffle to -d's deflation")
    copy.add_argument(
        "-c", dest="chunking", action="append", default=[], metavar="SPEC",
        help="chunking: 'var:N1,N2,...' or 'dim1/N1,dim2/N2,...' (may be repeated)",
    )
    copy.add_argument(
        "-F", dest="filters", action="append", default=[], metavar="SPEC",
        help="filters: 'var1&var2,ID,P1,...|ID,...', '*,ID,...', 'var,none' or 'none' (may be repeated)",
    )
    copy.add_argument("-u", dest="fix_unlimited", action="store_true", help="make unlimited dimensions fixed")
    copy.add_argument("-v", dest="data_variables", metavar="VARS", help="data of these variables only (all definitions)")
    copy.add_argument("-V", dest="variables", metavar="VARS", help="these variables only")
    copy.add_argument("-g", dest="data_groups", metavar="GROUPS", help="data of variables in these groups only")
    copy.add_argument("-G", dest="groups", metavar="GROUPS", help="variables of these groups only")
    copy.add_argument("-m", dest="memory", metavar="N", help="copy buffer in bytes (K, M, G, T, P suffixes: powers of 1000)")
    copy.add_argument("--memory", dest="memory_mb", type=int, metavar="MB", help="copy buffer in MiB (nczarr's spelling of -m)")
    copy.add_argument("-M", dest="min_chunk", metavar="N", help="minimum chunk size in bytes: smaller stays contiguous")
    copy.add_argument("-h", dest="cache_size", metavar="N", help="chunk cache size in bytes (accepted; no effect)")
    copy.add_argument("-e", dest="cache_elements", metavar="N", help="chunk cache elements (accepted; no effect)")
    copy.add_argument("-r", action="store_true", help="read the input into memory first (accepted; no effect)")
    copy.add_argument("-w", action="store_true", help="write the output from memory at the end (accepted; no effect)")
    copy.add_argument("-L", dest="log_level", metavar="N", help="netcdf-c's log level (accepted; no effect)")
    archive = copy.add_argument_group("many sources into one dataset")
    archive.add_argument("--concat", metavar="DIM", help="the dimension to concatenate along (default: the unlimited one)")
    archive.add_argument("--merge", action="store_true", help="sources hold different variables on one grid (ncks -A)")
    archive.add_argument("--sort", action="store_true", help="order the sources by their first record coordinate value")
    archive.add_argument("--verify", action="store_true", help="compare the result with the sources (values and attributes)")
    archive.add_argument("--workers", type=int, metavar="N", help="run the tasks in N local processes")
    archive.add_argument("--scheduler", metavar="ADDRESS", help="run the tasks on a running dask.distributed cluster")
    copy.add_argument("--skip-unsupported", action="store_true", help="leave out what the target cannot hold instead of refusing")
    add_storage_flags(copy)  # both SRC and DST; the --src-/--dst- ones win for their side
    add_storage_flags(copy, "src")
    add_storage_flags(copy, "dst")
    copy.add_argument("--help", action="help", help="show this help message and exit")
    copy.set_defaults(run=run, creates=creates)


def _names(text: str | None) -> tuple[str, ...] | None:
    """A comma-separated list of names, or None when the option is absent."""
    return None if text is None else tuple(n.strip() for n in text.split(",") if n.strip())


def run(args: argparse.Namespace) -> int:
    from nczarr.convert.copy import CopyOptions, ProgressBar, copy_source
    from nczarr.convert.sources import open_source
    from nczarr.convert.specs import parse_count, parse_size

    for flag, value in (("-h", args.cache_size), ("-e", args.cache_elements)):
        if value is not None:
            parse_size(value, flag)  # nccopy's syntax; nczarr has no chunk cache to size
    if args.log_level is not None:
        parse_count(args.log_level, "-L")
    options = CopyOptions(
        kind=args.kind,
        format=args.format,
        chunking=tuple(args.chunking),
        filters=tuple(args.filters),
        deflate=None if args.deflate is None else parse_count(args.deflate, "-d"),
        shuffle=args.shuffle,
        data_variables=_names(args.data_variables),
        variables=_names(args.variables),
        data_groups=_names(args.data_groups),
        groups=_names(args.groups),
        fix_unlimited=args.fix_unlimited,
        min_chunk_bytes=None if args.min_chunk is None else parse_count(args.min_chunk, "-M"),
        skip_unsupported=args.skip_unsupported,
        max_memory=_memory(args),
        storage_options={**storage_options(args), **storage_options(args, "dst")},
    )
    if _is_archive(args):
        return _run_archive(args, options)
    bar = ProgressBar(quiet=args.quiet)
    source = open_source(args.src[0], storage_options={**storage_options(args), **storage_options(args, "src")} or None)
    try:
        report = copy_source(source, args.dst, options, progress=bar)
    finally:
        source.close()
    bar.finish()
    for skipped in report.skipped:
        logging.getLogger("nczarr").warning("left out: %s", skipped)
    return 0


def _is_archive(args: argparse.Namespace) -> bool:
    """Whether the copy combines sources (several, a pattern, a list, or archive options)."""
    single = args.src[0]
    return (
        len(args.src) > 1
        or single.startswith("@")
        or (any(c in single for c in "*?[") and not os.path.exists(single))
        or bool(args.concat or args.merge or args.sort or args.verify or args.workers or args.scheduler)
    )


def _run_archive(args: argparse.Namespace, options: CopyOptions) -> int:
    from nczarr.convert.archive import copy_archive
    from nczarr.convert.combine import CombineOptions
    from nczarr.convert.executor import executor_for

    options = replace(options, storage_options={**options.storage_options, **storage_options(args, "src")})
    executor = executor_for(scheduler=args.scheduler, workers=args.workers)
    bar = ArchiveBar(quiet=args.quiet)
    try:
        report = copy_archive(
            args.src,
            args.dst,
            options,
            CombineOptions(concat_dim=args.concat, merge=args.merge, sort=args.sort),
            executor=executor,
            progress=bar,
            verify=args.verify,
        )
    finally:
        bar.close()
        close = getattr(executor, "close", None)
        if close is not None:
            close()
    for skipped in report.skipped:
        logging.getLogger("nczarr").warning("left out: %s", skipped)
    return 0


class ArchiveBar:
    """A tqdm progress bar of an archive copy: bytes, rate and time left, with tasks and
    files beside them; nothing with ``-q``."""

    def __init__(self, quiet: bool) -> None:
        self._quiet = quiet
        self._bar: Any = None

    def __call__(self, progress: ArchiveProgress) -> None:
        if self._quiet:
            return
        if self._bar is None:
            from tqdm import tqdm

            # disable=None: off when stderr is not a terminal
            self._bar = tqdm(total=progress.bytes_total, unit="B", unit_scale=True, desc="copy", disable=None)
        self._bar.n = progress.bytes_done
        self._bar.set_postfix_str(f"tasks {progress.tasks_done}/{progress.tasks_total}, {progress.files} files", refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _memory(args: argparse.Namespace) -> int:
    """The copy buffer in bytes: ``-m`` (nccopy's bytes), else ``--memory`` (MiB)."""
    from nczarr.convert.specs import parse_size

    if args.memory is not None:
        return max(1, parse_size(args.memory, "-m"))
    return DEFAULT_MEMORY if args.memory_mb is None else max(1, args.memory_mb) << 20


def creates(args: argparse.Namespace) -> str | None:
    """The dataset ``copy`` makes (removed again if it fails); None for an archive copy to a
    Zarr store, which a rerun resumes."""
    from nczarr.formats.location import NETCDF_FILE_SUFFIXES

    dst = str(args.dst)
    if _is_archive(args) and not dst.lower().endswith(NETCDF_FILE_SUFFIXES):
        return None
    return dst
