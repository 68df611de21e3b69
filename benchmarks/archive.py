"""Archives: many netCDF-4 files into one Zarr dataset, nczarr against its peers, and what a
rerun after a kill redoes.

    python benchmarks/archive.py [--quick | --medium] [--repeat N] [--dir DIR] [--skip-kill]

The archive: ``--files`` netCDF-4 files (netCDF4 writes them) of ``--records`` records each of
a float32 field (time, lat, lon), uncompressed, the record dimension unlimited, each file's
time axis in its own units (``days since`` its first day, so the combined axis is rebased).
Sizes: ``--quick`` 100 files of 4 x 100 x 100 (16 MB); ``--medium`` 100 files of
24 x 180 x 240 (415 MB); the default 120 files of 30 x 360 x 400 (2.07 GB). Every peer writes
Zarr v2 chunks of one file's records (``records x lat x lon``), uncompressed, so the data
written are the same.

Peers (each timed call interleaved with the others, medians of ``--repeat``):

- ``nczarr dask``: ``nczarr.copy(files, out, client=client)`` on a 2-worker
  ``distributed.LocalCluster`` (one thread a worker), the reference of the ratios;
- ``nczarr pool``: the same with ``workers=2`` (a local pool of 2 spawned processes, started
  anew by each copy, as ``nczarr copy --workers 2`` does);
- ``xarray dask``: ``xr.open_mfdataset(files, parallel=True, combine="nested",
  concat_dim="time")`` + ``.to_zarr`` on the same LocalCluster;
- ``ncrcat + nczarr``: ``ncrcat`` of the files into one netCDF file, then ``nczarr copy`` of
  it (one process each, one after the other).

Each line gives the median wall time, files/s, MB/s of data, the ratio to ``nczarr dask``
(above 1: nczarr faster), the peak RSS of the client process above its start, and per
worker process (the highest among the workers of a run): its peak RSS (``VmHWM``; the dask
workers' peaks are reset before each run) and its growth, the peak above its RSS when the
run started (the dask workers are long-lived, with every peer's imports done; the pool's
processes, ncrcat and the nczarr command are new processes, their growth is their whole
peak); medians over the repetitions.

The kill-and-rerun: ``nczarr copy FILES out.zarr --workers 2`` as a child process, SIGKILLed
(the client, not its workers) when half of its tasks are recorded done; the orphaned pool
workers finish or exit; the same command is run again with ``--verify`` and says how many
tasks it did and how many it found done.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # this checkout, not an installed nczarr
# the workers (dask's and the pool's) import this checkout too
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)

from benchmarks._harness import (  # noqa: E402
    Case,
    Workload,
    check_drop_cache,
    drop_cache,
    environment,
    format_table,
    median,
    remove,
    run_workloads,
    scratch_directory,
    write_json,
)

SIZES = {  # files, records a file, lat, lon
    "quick": (100, 4, 100, 100),
    "medium": (100, 24, 180, 240),
    "full": (120, 30, 360, 400),
}
VARIABLE = "t2m"


# -- the archive --------------------------------------------------------------------------
def make_archive(folder: str, files: int, records: int, lat: int, lon: int) -> list[str]:
    """The archive's files, written once per size and reused (their names say the size)."""
    import netCDF4

    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(28)
    paths = []
    for index in range(files):
        path = os.path.join(folder, f"f{index:04d}.nc")
        paths.append(path)
        if os.path.exists(path):
            continue
        partial = path + ".part"
        with netCDF4.Dataset(partial, "w", format="NETCDF4") as ds:
            ds.title = "nczarr archive benchmark"
            ds.createDimension("time", None)
            ds.createDimension("lat", lat)
            ds.createDimension("lon", lon)
            time_var = ds.createVariable("time", "f8", ("time",))
            day = index * records
            time_var.units = _units(day)
            time_var.calendar = "standard"
            ds.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-90, 90, lat, dtype="f4")
            ds.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 360, lon, endpoint=False, dtype="f4")
            field_var = ds.createVariable(VARIABLE, "f4", ("time", "lat", "lon"), chunksizes=(records, lat, lon))
            field_var.units = "K"
            time_var[:] = np.arange(records, dtype="f8")
            field_var[:] = (rng.standard_normal((records, lat, lon), dtype="f4") + 280).astype("f4")
        os.replace(partial, path)
    return paths


def _units(day: int) -> str:
    """``days since`` the archive's ``day``-th day (of 2000 and on)."""
    import datetime

    start = datetime.date(2000, 1, 1) + datetime.timedelta(days=day)
    return f"days since {start.isoformat()}"


def data_bytes(files: int, records: int, lat: int, lon: int) -> int:
    return files * records * (lat * lon * 4 + 8) + lat * 4 + lon * 4


# -- peak RSS of the worker processes -----------------------------------------------------
def _status_kib(pid: int, name: str) -> int | None:
    """A field of /proc/PID/status in KiB (VmHWM: the peak RSS, VmRSS: the RSS now)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_hwm(pid: int) -> None:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


@dataclass
class WorkerPeaks:
    """Samples the peak RSS (VmHWM) of the worker processes while a call runs: ``pids()``
    names them (dask's workers), or when it is None every process below this one but those
    of ``besides`` (the idle dask workers, while another peer runs)."""

    pids: Callable[[], list[int]] | None = None
    besides: frozenset[int] = frozenset()
    interval: float = 0.05
    peaks: dict[int, int] = field(default_factory=dict)
    #: each process's RSS when the call started (KiB; 0 for those it started)
    starts: dict[int, int] = field(default_factory=dict)

    def _current(self) -> list[int]:
        if self.pids is not None:
            return self.pids()
        import psutil

        return [p.pid for p in psutil.Process().children(recursive=True) if p.pid not in self.besides]

    @contextlib.contextmanager
    def watch(self) -> Iterator[None]:
        for pid in self._current():
            _reset_hwm(pid)
            self.starts[pid] = _status_kib(pid, "VmRSS") or 0
        stop = threading.Event()

        def sample() -> None:
            while True:
                for pid in self._current():
                    kib = _status_kib(pid, "VmHWM")
                    if kib is not None:
                        self.peaks[pid] = max(self.peaks.get(pid, 0), kib)
                if stop.wait(self.interval):
                    return

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def highest(self) -> tuple[float, float]:
        """The highest peak RSS of one worker and the highest growth of one (its peak above
        its RSS at the start; the whole peak for a process the call started), in bytes. The
        resource tracker and other small helpers are below them."""
        peak = max(self.peaks.values(), default=0)
        growth = max((kib - self.starts.get(pid, 0) for pid, kib in self.peaks.items()), default=0)
        return float(peak * 1024), float(growth * 1024)


# -- the peers ----------------------------------------------------------------------------
@dataclass
class Peer:
    name: str
    run: Callable[[str], None]
    pids: Callable[[], list[int]] | None = None
    besides: frozenset[int] = frozenset()
    worker_peaks: list[tuple[float, float]] = field(default_factory=list)


def _chunking(records: int, lat: int, lon: int) -> str:
    return f"time/{records},lat/{lat},lon/{lon}"


def build_peers(paths: list[str], records: int, lat: int, lon: int, client: object) -> list[Peer]:
    import nczarr
    from nczarr.convert.copy import CopyOptions

    options = CopyOptions(chunking=_chunking(records, lat, lon))
    worker_pids = sorted(client.run(os.getpid).values())  # type: ignore[attr-defined]

    def nczarr_dask(out: str) -> None:
        nczarr.copy(paths, out, options, client=client)

    def nczarr_pool(out: str) -> None:
        nczarr.copy(paths, out, options, workers=2)

    def xarray_dask(out: str) -> None:
        import xarray as xr

        with xr.open_mfdataset(
            paths, parallel=True, combine="nested", concat_dim="time", engine="netcdf4", chunks={}
        ) as ds:
            encoding = {name: {"compressors": None} for name in ds.variables}
            ds.to_zarr(out, mode="w", zarr_format=2, encoding=encoding, consolidated=True)

    def ncrcat_nczarr(out: str) -> None:
        joined = out + ".nc"
        try:
            subprocess.run(["ncrcat", "-O", "-h", *paths, joined], check=True)
            command = [sys.executable, "-m", "nczarr.cli", "-q", "copy", "-c", _chunking(records, lat, lon), joined, out]
            subprocess.run(command, check=True)
        finally:
            remove(joined)

    return [
        Peer("nczarr dask", nczarr_dask, lambda: worker_pids),
        Peer("nczarr pool", nczarr_pool, besides=frozenset(worker_pids)),
        Peer("xarray dask", xarray_dask, lambda: worker_pids),
        Peer("ncrcat + nczarr", ncrcat_nczarr, besides=frozenset(worker_pids)),
    ]


def check_result(out: str, paths: list[str], records: int) -> None:
    """The copy holds every record, in order, on one time axis."""
    import nczarr

    with nczarr.Dataset(out) as ds:
        values = ds[VARIABLE]
        assert values.shape[0] == len(paths) * records, values.shape
        time_values = np.asarray(ds["time"][:])
        assert np.array_equal(time_values, np.arange(len(paths) * records)), time_values[:8]
    import netCDF4

    with netCDF4.Dataset(paths[-1]) as last, nczarr.Dataset(out) as ds:
        assert np.array_equal(np.asarray(ds[VARIABLE][-1]), last[VARIABLE][-1])


def timed_workload(
    peers: list[Peer], paths: list[str], folder: str, size: tuple[int, int, int, int], nbytes: int
) -> Workload:
    files, records, _, _ = size

    def case(peer: Peer) -> Case:
        out = os.path.join(folder, peer.name.replace(" ", "-").replace("+", "") + ".zarr")

        def setup() -> str:
            remove(out)
            drop_cache(os.path.dirname(paths[0]))
            return out

        def run(target: str) -> None:
            watcher = WorkerPeaks(peer.pids, peer.besides)
            with watcher.watch():
                peer.run(target)
            peer.worker_peaks.append(watcher.highest())

        return Case(
            peer.name, run, setup,
            check=lambda target, _result: check_result(target, paths, records),
            reference=None if peer.name == "nczarr dask" else "nczarr dask",
            teardown=lambda target: remove(target),
        )

    title = f"{files} netCDF-4 files, {nbytes / 1e6:,.0f} MB, into one Zarr dataset"
    return Workload("archive", title, [case(p) for p in peers], nbytes=nbytes, ops=files, unit="files")


# -- kill and rerun -----------------------------------------------------------------------
_TASKS = re.compile(r"(\d+) tasks to do, (\d+) done before")

#: The command, with nczarr's log at INFO so that it says how many tasks it has to do.
_COMMAND = (
    "import logging, sys; logging.basicConfig(level=logging.INFO, format='nczarr: %(message)s'); "
    "from nczarr.cli import main; sys.exit(main(sys.argv[1:]))"
)


def kill_and_rerun(paths: list[str], folder: str, records: int, lat: int, lon: int) -> dict[str, int]:
    """SIGKILL ``nczarr copy --workers 2`` when half its tasks are done; rerun it; how many
    tasks the rerun did of how many."""
    out = os.path.join(folder, "killed.zarr")
    remove(out)
    command = [sys.executable, "-c", _COMMAND, "-q", "copy", "--workers", "2", "-c", _chunking(records, lat, lon), *paths, out]
    child = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stderr is not None
    total = 0
    for line in child.stderr:
        found = _TASKS.search(line)
        if found:
            total = int(found.group(1))
            break
    assert total, "the command did not say how many tasks it has"
    done_folder = os.path.join(out, ".nczarr_archive", "done")
    at = max(1, total // 2)
    while _count(done_folder) < at and child.poll() is None:
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)  # the client only: its workers are orphaned
    child.wait()
    _wait_for_group(child.pid)
    done_at_kill = _count(done_folder)
    rerun = subprocess.run([*command[:5], "--verify", *command[5:]], stderr=subprocess.PIPE, text=True)
    if rerun.returncode != 0:
        raise RuntimeError(f"the rerun failed: {rerun.stderr[-2000:]}")
    found = _TASKS.search(rerun.stderr)
    assert found, rerun.stderr
    redone, skipped = int(found.group(1)), int(found.group(2))
    assert not os.path.exists(os.path.join(out, ".nczarr_archive")), "the job record is left behind"
    check_result(out, paths, records)
    remove(out)
    return {"tasks": total, "killed_after": at, "done_at_kill": done_at_kill, "rerun_did": redone, "rerun_skipped": skipped}


def _count(folder: str) -> int:
    try:
        return len(os.listdir(folder))
    except FileNotFoundError:
        return 0


def _wait_for_group(group: int, seconds: float = 60.0) -> None:
    """Wait for the killed client's orphaned workers to end (they finish the task they hold,
    or see their pipe close), then kill what is left of the group."""
    import psutil

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in psutil.process_iter() if _group(p) == group]
        if not alive:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)


def _group(process: object) -> int | None:
    try:
        return os.getpgid(process.pid)  # type: ignore[attr-defined]
    except OSError:
        return None


# -- the report ---------------------------------------------------------------------------
def summary(result: object, peers: list[Peer], nbytes: int, files: int) -> str:
    lines = [
        f"  {'peer':<18} {'wall s':>7} {'files/s':>8} {'MB/s':>6} {'ratio':>6} {'client MiB':>10} {'worker MiB':>10}"
        f" {'growth MiB':>10}",
    ]
    for peer in peers:
        case = result.case(peer.name)  # type: ignore[attr-defined]
        if case is None or not case.samples:
            lines.append(f"  {peer.name:<18} error: {case.error if case else '?'}")
            continue
        ratio = result.ratio(case)  # type: ignore[attr-defined]
        client = median([s.peak for s in case.samples]) / 2**20
        # the warm-up's peaks come first
        timed = peer.worker_peaks[-len(case.samples):]
        worker = statistics.median(p for p, _ in timed) / 2**20
        growth = statistics.median(g for _, g in timed) / 2**20
        lines.append(
            f"  {peer.name:<18} {case.wall:>7.2f} {files / case.wall:>8.1f} {nbytes / case.wall / 1e6:>6.0f} "
            f"{(f'{ratio:.2f}' if ratio is not None else '—'):>6} {client:>10.0f} {worker:>10.0f} {growth:>10.0f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="100 files, 16 MB")
    size.add_argument("--medium", action="store_true", help="100 files, 415 MB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--dir", help="where the archive and the copies go (a real disk; default: the temp directory)")
    parser.add_argument("--keep", action="store_true", help="keep the archive's files (a later run of the same size reuses them)")
    parser.add_argument("--skip-kill", action="store_true", help="no kill-and-rerun")
    parser.add_argument("--peers", help="comma-separated substrings of the peers to run (nczarr dask always runs)")
    parser.add_argument("--json", nargs="?", const="auto", metavar="PATH")
    args = parser.parse_args()
    label = "quick" if args.quick else "medium" if args.medium else "full"
    files, records, lat, lon = SIZES[label]
    nbytes = data_bytes(files, records, lat, lon)

    import distributed

    archive = os.path.join(args.dir or tempfile.gettempdir(), f"nczarr-bench-archive-{label}")
    with scratch_directory(args.dir, prefix="nczarr-bench-archive-copies-") as folder:
        print(check_drop_cache(folder))
        started = time.perf_counter()
        paths = make_archive(archive, files, records, lat, lon)
        print(f"archive: {files} files, {nbytes / 1e6:,.0f} MB of data ({time.perf_counter() - started:.0f} s to write)")
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, memory_limit="2GiB", dashboard_address=None
        ) as cluster, distributed.Client(cluster) as client:
            peers = build_peers(paths, records, lat, lon, client)
            if args.peers:
                wanted = [w for w in args.peers.split(",") if w]
                peers = [p for p in peers if p.name == "nczarr dask" or any(w in p.name for w in wanted)]
            workload = timed_workload(peers, paths, folder, (files, records, lat, lon), nbytes)
            [result] = run_workloads([workload], repeat=args.repeat, warmup=args.warmup, verbose=False)
        print(format_table([result]))
        print(summary(result, peers, nbytes, files))
        killed = None
        if not args.skip_kill:
            killed = kill_and_rerun(paths, folder, records, lat, lon)
            print(
                f"kill and rerun: {killed['tasks']} tasks; the client SIGKILLed once {killed['killed_after']} were"
                f" recorded done ({killed['done_at_kill']} done when its workers had stopped); the rerun did"
                f" {killed['rerun_did']} and skipped {killed['rerun_skipped']}, and its --verify passed"
            )
        if args.json:
            meta = {
                "size": label, "files": files, "records": records, "lat": lat, "lon": lon, "kill": killed,
                "worker_peaks": {p.name: p.worker_peaks for p in peers},
                "environment": environment(["numpy", "xarray", "dask", "distributed", "zarr", "netCDF4"]),
            }
            print("results:", write_json([result], "archive", args.json, meta=meta))
    if not args.keep:
        shutil.rmtree(archive, ignore_errors=True)


if __name__ == "__main__":
    main()
