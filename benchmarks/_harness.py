"""Shared helpers of the benchmarks: timed repetitions with the peers interleaved, cold
caches, medians, tables of ratios and JSON results.

A benchmark builds :class:`Workload` objects, each holding one :class:`Case` per peer (a
library doing the same work), and hands them to :func:`run_workloads`. Every repetition runs
every case once, the peers interleaved (and rotated, so no peer always goes first), after a
warm-up repetition that is not counted. Each timed call is preceded by the case's untimed
``setup`` (e.g. :func:`drop_cache` for a cold read, or removing the last run's store), then
``os.sync()`` (so neither one peer's dirty pages nor the discards of a removed tree are
written back while the next is timed: on a file system mounted with ``discard``, creating
files right after deleting a large tree takes several times longer) and a garbage collection. The table gives
medians of wall and CPU time (CPU of every thread of the process, so cpu/wall near 2 means two
cores were busy) and the ratio of each peer's median to its reference's (the nczarr case it
is compared with): a ratio above 1 means nczarr is faster.

Typical use::

    parser = argparse.ArgumentParser()
    add_common_arguments(parser)
    args = parser.parse_args()
    workloads = select(build_workloads(), args.only, args.peers)
    results = run_workloads(workloads, repeat=args.repeat, warmup=args.warmup)
    print(format_table(results))
    if args.json:
        write_json(results, "engine", args.json, meta={...})
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ctypes.util
import datetime as _dt
import functools
import gc
import json
import mmap
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata as _metadata
from typing import Any

#: Where JSON results go by default (git-ignored).
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


# -- caches -------------------------------------------------------------------------------
def _files(path: str) -> Iterator[str]:
    if os.path.isfile(path):
        yield path
        return
    for root, _dirs, names in os.walk(path):
        for name in names:
            yield os.path.join(root, name)


def drop_cache(path: str | os.PathLike[str], *, sync: bool = True) -> int:
    """Evict the files at ``path`` (a file or every file under a directory) from the page
    cache, so the next read comes from the disk; returns the number of files. Dirty pages
    cannot be dropped, hence the ``os.sync()`` first. Directory entries and inodes stay
    cached: a cold read here still finds its files without touching the disk."""
    if sync:
        os.sync()
    count = 0
    for name in _files(os.fspath(path)):
        fd = os.open(name, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        count += 1
    return count


_libc: Any = None


def _mincore() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte))
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
        _libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    return _libc


def resident_bytes(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(bytes in the page cache, total bytes) of the files at ``path``, from ``mincore``;
    None where that is not available (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = _mincore()
    except (OSError, AttributeError):
        return None
    page = mmap.PAGESIZE
    resident = total = 0
    for name in _files(os.fspath(path)):
        size = os.path.getsize(name)
        total += size
        if size == 0:
            continue
        fd = os.open(name, os.O_RDONLY)
        try:
            addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                return None
            try:
                pages = (size + page - 1) // page
                vec = (ctypes.c_ubyte * pages)()
                if libc.mincore(addr, size, vec) != 0:
                    return None
                resident += sum(v & 1 for v in vec) * page
            finally:
                libc.munmap(addr, size)
        finally:
            os.close(fd)
    return min(resident, total), total


def check_drop_cache(directory: str, nbytes: int = 16 * 2**20) -> str:
    """Write a file, drop it from the cache and say how much of it is still resident: a
    one-line report of whether cold reads here are really cold."""
    name = os.path.join(directory, "_drop_cache_probe")
    with open(name, "wb") as f:
        f.write(os.urandom(nbytes))
    try:
        before = resident_bytes(name)
        drop_cache(name)
        after = resident_bytes(name)
    finally:
        os.unlink(name)
    if before is None or after is None:
        return "page cache: cannot check residency here (no mincore)"
    verdict = "ok" if after[0] == 0 else "NOT fully evicted"
    written, dropped = before[0] / 2**20, after[0] / 2**20
    return f"page cache: probe {written:.0f} MiB resident after writing, {dropped:.1f} MiB after drop_cache ({verdict})"


def remove(path: str | os.PathLike[str]) -> None:
    """Delete a file or a directory tree, if there is one."""
    path = os.fspath(path)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def copy(src: str, dst: str) -> None:
    """Copy a file or a directory tree to ``dst`` (replacing what is there)."""
    remove(dst)
    if os.path.isdir(src):
        shutil.copytree(src, dst)
    else:
        shutil.copy2(src, dst)


def disk_usage(path: str | os.PathLike[str]) -> int:
    """Bytes of the files at ``path`` (their sizes, not blocks)."""
    return sum(os.path.getsize(name) for name in _files(os.fspath(path)))


@contextmanager
def scratch_directory(parent: str | None = None, keep: bool = False, prefix: str = "nczarr-bench-") -> Iterator[str]:
    """A new directory for the stores of a run, removed afterwards unless ``keep``."""
    if parent:
        os.makedirs(parent, exist_ok=True)
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    try:
        yield path
    finally:
        if keep:
            print(f"stores kept in {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


# -- timing -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    wall: float  #: seconds, time.perf_counter
    cpu: float  #: seconds of CPU of the whole process (every thread), time.process_time
    #: bytes: the process's peak resident set during the call above its resident set before
    #: it (NaN where Linux's /proc is not there); the call's result counts, so a read of
    #: 207 MB shows at least 207 MB.
    peak: float = float("nan")


def _status_kib(field_name: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the process's peak RSS (VmHWM) to its current RSS (Linux: ``clear_refs``), after
    handing the C heap's free memory back to the system (``malloc_trim``): else a call that
    allocates what the last one freed would not show it."""
    with contextlib.suppress(OSError, AttributeError):
        _mincore().malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(fn: Callable[[], Any]) -> tuple[Sample, Any]:
    """Time one call: (wall and CPU seconds and peak RSS above the start, its result)."""
    tracked = _reset_peak()
    before = _status_kib("VmRSS") if tracked else None
    c0, t0 = time.process_time(), time.perf_counter()
    result = fn()
    t1, c1 = time.perf_counter(), time.process_time()
    after = _status_kib("VmHWM") if before is not None else None
    peak = float((after - before) * 1024) if after is not None and before is not None else float("nan")
    return Sample(t1 - t0, c1 - c0, peak), result


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Case:
    """One peer's version of a workload.

    ``run(state)`` is timed; ``state`` is what the untimed ``setup()`` returned (None without
    one). ``check(state, result)``, untimed, runs after the warm-up repetition (or the first
    one) and raises when the result is wrong. ``reference`` names the case this one's ratio is
    computed against (None: no ratio, e.g. for the nczarr cases themselves)."""

    peer: str
    run: Callable[[Any], Any]
    setup: Callable[[], Any] | None = None
    check: Callable[[Any, Any], None] | None = None
    reference: str | None = None
    teardown: Callable[[Any], None] | None = None


@dataclass
class Workload:
    """The same work done by several peers. ``nbytes`` (data moved) or ``ops`` (operations
    per call, named ``unit``) give a throughput column."""

    name: str
    title: str
    cases: list[Case]
    nbytes: int | None = None
    ops: int | None = None
    unit: str = "ops"


@dataclass
class CaseResult:
    peer: str
    reference: str | None
    samples: list[Sample] = field(default_factory=list)
    warmup: list[Sample] = field(default_factory=list)
    error: str | None = None

    @property
    def wall(self) -> float:
        return median([s.wall for s in self.samples])

    @property
    def cpu(self) -> float:
        return median([s.cpu for s in self.samples])

    @property
    def cpu_per_wall(self) -> float:
        return median([s.cpu / s.wall for s in self.samples if s.wall > 0])

    @property
    def peak(self) -> float:
        """The highest peak RSS above the start of the timed calls (bytes; NaN unknown)."""
        peaks = [s.peak for s in self.samples if s.peak == s.peak]
        return max(peaks) if peaks else float("nan")


@dataclass
class WorkloadResult:
    workload: Workload
    cases: list[CaseResult]

    def case(self, peer: str) -> CaseResult | None:
        return next((c for c in self.cases if c.peer == peer), None)

    def ratio(self, case: CaseResult) -> float | None:
        """The case's median wall time over its reference's (> 1: the reference is faster)."""
        if case.reference is None or not case.samples:
            return None
        ref = self.case(case.reference)
        if ref is None or not ref.samples or ref.wall <= 0:
            return None
        return case.wall / ref.wall


def _short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text[:160]


def run_workload(
    workload: Workload,
    *,
    repeat: int = 3,
    warmup: int = 1,
    sync: bool = True,
    progress: Callable[[str], None] | None = None,
) -> WorkloadResult:
    """Run every case ``warmup + repeat`` times, the cases interleaved within each
    repetition and their order rotated from one repetition to the next. A case that raises
    is reported (with its traceback on stderr) and left out of the remaining repetitions."""
    results = [CaseResult(c.peer, c.reference) for c in workload.cases]
    cases = list(zip(workload.cases, results))
    checked: set[str] = set()
    for rep in range(warmup + repeat):
        shift = rep % max(len(cases), 1)
        for case, result in cases[shift:] + cases[:shift]:
            if result.error is not None:
                continue
            try:
                state = case.setup() if case.setup else None
                if sync:
                    os.sync()
                gc.collect()
                sample, value = measure(functools.partial(case.run, state))
                if case.check is not None and case.peer not in checked:
                    case.check(state, value)
                    checked.add(case.peer)
                del value
                if case.teardown is not None:
                    case.teardown(state)
            except Exception as exc:  # a peer failing must not stop the others
                result.error = _short_error(exc)
                print(f"\n[{workload.name}] {case.peer} failed:", file=sys.stderr)
                traceback.print_exc(file=sys.stderr)
                continue
            (result.warmup if rep < warmup else result.samples).append(sample)
        if progress:
            progress(".")
    return WorkloadResult(workload, results)


def run_workloads(
    workloads: Iterable[Workload], *, repeat: int = 3, warmup: int = 1, sync: bool = True, verbose: bool = True
) -> list[WorkloadResult]:
    """Run workloads one after the other; with ``verbose``, print each one's table as it
    finishes (the whole run can take minutes)."""
    done = []
    for workload in workloads:
        if verbose:
            print(f"{workload.name} ", end="", flush=True)
        t0 = time.perf_counter()
        result = run_workload(
            workload, repeat=repeat, warmup=warmup, sync=sync,
            progress=(lambda s: print(s, end="", flush=True)) if verbose else None,
        )
        if verbose:
            print(f" {time.perf_counter() - t0:.0f} s")
            print(format_table([result]), flush=True)
        done.append(result)
    return done


def build_peers(factories: Sequence[tuple[str, Callable[[], Any]]], wanted: Sequence[str]) -> list[Any]:
    """The peers of ``factories`` (name, constructor) whose name contains one of ``wanted``
    (all when empty), and every nczarr one; a peer whose package is missing is skipped
    with a line on stderr."""
    peers = []
    for name, factory in factories:
        if wanted and not any(w in name for w in wanted) and not name.startswith("nczarr"):
            continue
        try:
            peers.append(factory())
        except ImportError as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
    return peers


def select(
    workloads: Iterable[Workload], only: Sequence[str] | None = None, peers: Sequence[str] | None = None
) -> list[Workload]:
    """The workloads whose name contains one of ``only`` (all when empty), keeping the cases
    whose peer contains one of ``peers`` (and the nczarr references they are compared with)."""
    chosen = []
    for w in workloads:
        if only and not any(o in w.name for o in only):
            continue
        if peers:
            keep = {c.peer for c in w.cases if any(p in c.peer for p in peers)}
            keep |= {c.reference for c in w.cases if c.peer in keep and c.reference}
            cases = [c for c in w.cases if c.peer in keep]
            if not cases:
                continue
            w = Workload(w.name, w.title, cases, w.nbytes, w.ops, w.unit)
        chosen.append(w)
    return chosen


# -- reports ------------------------------------------------------------------------------
def _seconds(x: float) -> str:
    if x != x:  # NaN
        return "—"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 0.1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def _mib(nbytes: float) -> str:
    return "—" if nbytes != nbytes else f"{nbytes / 2**20:,.0f}"


def _throughput(w: Workload, wall: float) -> str:
    if wall <= 0 or wall != wall:
        return ""
    if w.ops:
        return f"{w.ops / wall:,.0f} {w.unit}/s"
    if w.nbytes:
        return f"{w.nbytes / wall / 1e6:,.0f} MB/s"
    return ""


def format_table(results: Iterable[WorkloadResult]) -> str:
    """Per workload: each peer's median wall time (and range), median CPU time, cpu/wall,
    the ratio to its reference (> 1: nczarr faster) and a throughput."""
    lines = []
    header = (
        f"  {'peer':<24} {'wall s':>7} {'(min-max)':>14} {'cpu s':>7} {'cpu/wall':>8} {'ratio':>6}  {'vs':<10} "
        f"{'throughput':>16} {'peak MiB':>9}"
    )
    for r in results:
        lines.append(f"{r.workload.title}  [{r.workload.name}]")
        lines.append(header)
        for c in r.cases:
            if c.error is not None and not c.samples:
                lines.append(f"  {c.peer:<24} error: {c.error}")
                continue
            walls = [s.wall for s in c.samples]
            spread = f"{_seconds(min(walls))}-{_seconds(max(walls))}" if walls else ""
            ratio = r.ratio(c)
            lines.append(
                f"  {c.peer:<24} {_seconds(c.wall):>7} {spread:>14} {_seconds(c.cpu):>7} {c.cpu_per_wall:>8.2f} "
                f"{(f'{ratio:.2f}' if ratio is not None else '—'):>6}  {(c.reference or ''):<10} "
                f"{_throughput(r.workload, c.wall):>16} {_mib(c.peak):>9}"
            )
        lines.append("")
    return "\n".join(lines)


def format_markdown(results: Iterable[WorkloadResult], peers: Sequence[str]) -> str:
    """One row per workload, one column per peer: median wall time and, in parentheses, the
    ratio to the reference (the form of the README's Results section)."""
    out = ["| workload | " + " | ".join(peers) + " |", "|---|" + "---|" * len(peers)]
    for r in results:
        cells = []
        for p in peers:
            c = r.case(p)
            if c is None or not c.samples:
                cells.append("—" if c is None or c.error is None else "error")
                continue
            ratio = r.ratio(c)
            cell = f"{r.workload.ops / c.wall:,.0f}/s" if r.workload.ops else f"{_seconds(c.wall)} s"
            cells.append(cell + (f" ({ratio:.2f})" if ratio is not None else ""))
        out.append(f"| {r.workload.title} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def slower_cases(
    results: Iterable[WorkloadResult], peers: Sequence[str] | None = None, threshold: float = 1.0
) -> list[tuple[str, str, str, float]]:
    """(workload, peer, reference, ratio) where the peer beat its nczarr reference
    (ratio below ``threshold``), optionally only for peers containing one of ``peers``."""
    found = []
    for r in results:
        for c in r.cases:
            ratio = r.ratio(c)
            if ratio is None or ratio >= threshold:
                continue
            if peers and not any(p in c.peer for p in peers):
                continue
            found.append((r.workload.name, c.peer, c.reference or "", ratio))
    return found


def package_versions(names: Iterable[str]) -> dict[str, str]:
    versions = {}
    for name in names:
        try:
            versions[name] = _metadata.version(name)
        except _metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def environment(packages: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "packages": package_versions(packages),
    }


def write_json(
    results: Iterable[WorkloadResult], benchmark: str, path: str | None = None, meta: dict[str, Any] | None = None
) -> str:
    """Write every sample, median and ratio to ``path`` (default:
    ``benchmarks/results/<benchmark>-<UTC time>.json``); returns the file name."""
    if not path or path == "auto":
        os.makedirs(RESULTS_DIR, exist_ok=True)
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        path = os.path.join(RESULTS_DIR, f"{benchmark}-{stamp}.json")
    doc = {"benchmark": benchmark, "meta": meta or {}, "workloads": []}
    for r in results:
        w = r.workload
        doc["workloads"].append({
            "name": w.name, "title": w.title, "nbytes": w.nbytes, "ops": w.ops, "unit": w.unit,
            "cases": [
                {
                    "peer": c.peer, "reference": c.reference, "error": c.error,
                    "wall_median": c.wall if c.samples else None,
                    "cpu_median": c.cpu if c.samples else None,
                    "cpu_per_wall": c.cpu_per_wall if c.samples else None,
                    "ratio": r.ratio(c),
                    "peak_rss_above_start": c.peak if c.peak == c.peak else None,
                    "samples": [{"wall": s.wall, "cpu": s.cpu, "peak": s.peak} for s in c.samples],
                    "warmup": [{"wall": s.wall, "cpu": s.cpu} for s in c.warmup],
                }
                for c in r.cases
            ],
        })
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


# -- command line -------------------------------------------------------------------------
def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """--repeat, --warmup, --only, --peers, --json, --dir, --keep, --list."""
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions per case (default 3); medians are reported")
    parser.add_argument("--warmup", type=int, default=1, help="untimed repetitions first (default 1)")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run the workloads whose name contains NAME (repeatable, or comma-separated)")
    parser.add_argument("--peers", action="append", metavar="NAME",
                        help="keep the peers whose name contains NAME, plus their nczarr references"
                        " (repeatable, or comma-separated)")
    parser.add_argument("--json", nargs="?", const="auto", metavar="PATH",
                        help="write the results as JSON (default path: benchmarks/results/<benchmark>-<time>.json)")
    parser.add_argument("--dir", metavar="DIR", help="where to create the scratch stores (default: the temp directory)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch stores")
    parser.add_argument("--list", action="store_true", help="list the workloads and peers, and exit")


def split_option(values: Sequence[str] | None) -> list[str]:
    """``--only a,b --only c`` → ``["a", "b", "c"]``."""
    return [v for value in values or () for v in value.split(",") if v]
