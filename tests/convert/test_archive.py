"""Archives into one dataset: NCO's ncrcat and ncks -A are the oracle (nczarr dump of the
result equals ncdump of theirs), resumed after interruptions and SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import pytest
from archive_files import ROOT, dump, killable_job, month_cdl, monthly_archive, ncgen, ncrcat
from peers import body

from nczarr.convert import combine
from nczarr.convert.archive import DONE_PREFIX, JOB_KEY, copy_archive
from nczarr.convert.combine import CombineOptions
from nczarr.convert.copy import CopyOptions
from nczarr.convert.executor import LocalPool
from nczarr.errors import CombineError, SourceChangedError

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


@pytest.mark.parametrize("target", ["out.zarr", "out.nc"])
def test_concatenation_equals_ncrcat(tmp_path: Path, target: str) -> None:
    files = monthly_archive(tmp_path)
    expected = ncrcat(files, tmp_path / "ncrcat.nc")
    copy_archive(files, tmp_path / target, verify=True)
    assert dump(tmp_path / target) == expected
    assert not (tmp_path / target / ".nczarr_archive").exists()


def test_local_pool_and_small_memory_equal_ncrcat(tmp_path: Path) -> None:
    files = monthly_archive(tmp_path, (5, 2, 7, 1))
    expected = ncrcat(files, tmp_path / "ncrcat.nc")
    options = CopyOptions(chunking=("time/2",), max_memory=1)  # a task per chunk
    copy_archive(files, tmp_path / "out.zarr", options, executor=LocalPool(2))
    assert dump(tmp_path / "out.zarr") == expected


def test_many_local_sources_are_scanned_on_the_job_s_executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From SCAN_ON_EXECUTOR local files on, the job's processes scan them (threads here
    scan one file at a time: h5py holds the GIL); fewer files are scanned here."""
    files = monthly_archive(tmp_path, (2, 3, 1))
    expected = ncrcat(files, tmp_path / "ncrcat.nc")
    ran: list[str] = []

    class Recording(LocalPool):
        def run(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> Iterator[R]:
            # a scan runs as (scan_source, options) on each (index, file); a copy task as itself
            called = shared[0] if isinstance(shared, tuple) and callable(shared[0]) else function
            ran.append(called.__name__)
            return super().run(function, shared, tasks)

    monkeypatch.setattr(combine, "SCAN_ON_EXECUTOR", 3)
    copy_archive(files, tmp_path / "out.zarr", executor=Recording(2))
    assert dump(tmp_path / "out.zarr") == expected and ran[0] == "scan_source"
    ran.clear()
    copy_archive(files[:2], tmp_path / "two.zarr", executor=Recording(2))
    assert "scan_source" not in ran


def test_merge_equals_ncks_append(tmp_path: Path) -> None:
    one = ncgen(tmp_path, "u.nc", month_cdl(1, 3))
    v_cdl = month_cdl(1, 3).replace("float t(", "float v(").replace("t:", "v:").replace(" t = ", " v = ")
    two = ncgen(tmp_path, "v.nc", v_cdl.replace('title = "month 1"', 'title = "v"'))
    merged = tmp_path / "ncks.nc"
    merged.write_bytes(one.read_bytes())
    subprocess.run(["ncks", "-A", "-h", str(two), str(merged)], check=True)
    expected = body(subprocess.run(["ncdump", str(merged)], capture_output=True, text=True, check=True).stdout)
    copy_archive([one, two], tmp_path / "out.zarr", combine=CombineOptions(merge=True), verify=True)
    got = dump(tmp_path / "out.zarr")
    # ncks -A puts the appended variables after the others; nczarr keeps each file's order
    assert sorted(got.splitlines()) == sorted(expected.splitlines())


def test_differing_fill_and_packing_keep_their_meaning(tmp_path: Path) -> None:
    import netCDF4

    a = ncgen(tmp_path, "a.nc", month_cdl(1, 2))
    b = ncgen(tmp_path, "b.nc", month_cdl(2, 2, fill=-1.0, scale=0.25))
    copy_archive([a, b], tmp_path / "out.zarr")
    import nczarr

    with nczarr.Dataset(tmp_path / "out.zarr") as out, netCDF4.Dataset(b) as second:
        assert out["t"][2:].mask.tolist() == second["t"][:].mask.tolist()
        assert (abs(out["p"][2:] - second["p"][:]) <= 0.25).all()  # repacked at the first file's 0.5


def test_errors_before_anything_is_written(tmp_path: Path) -> None:
    a = ncgen(tmp_path, "m01.nc", month_cdl(1, 2))
    b = ncgen(tmp_path, "m02.nc", month_cdl(2, 1).replace("short p", "int p"))
    with pytest.raises(CombineError, match="m02.nc: variable /p: type int here, short in"):
        copy_archive([a, b], tmp_path / "out.zarr")
    assert not (tmp_path / "out.zarr").exists()


class Interrupted(Exception):
    pass


class StopsAfter:
    """Runs ``n`` tasks, then fails as a killed client would."""

    def __init__(self, n: int) -> None:
        self.n = n

    def run(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> Iterator[R]:
        for i, task in enumerate(tasks):
            if i == self.n:
                raise Interrupted
            yield function(shared, task)


def test_rerun_after_interruption_redoes_only_unfinished_tasks(tmp_path: Path) -> None:
    files = monthly_archive(tmp_path, (5, 2, 7, 1))
    expected = ncrcat(files, tmp_path / "ncrcat.nc")
    out = tmp_path / "out.zarr"
    options = CopyOptions(chunking=("time/2",), max_memory=1)
    with pytest.raises(Interrupted):
        copy_archive(files, out, options, executor=StopsAfter(3))
    assert (out / JOB_KEY).exists() and len(list((out / DONE_PREFIX).iterdir())) == 3
    progress: list[object] = []
    copy_archive(files, out, options, progress=progress.append)
    assert progress[0].tasks_done == 4  # type: ignore[attr-defined]  # the first redone task is the 4th
    assert dump(out) == expected
    assert not (out / ".nczarr_archive").exists()


def test_rerun_refuses_changed_sources(tmp_path: Path) -> None:
    files = monthly_archive(tmp_path, (3, 3))
    out = tmp_path / "out.zarr"
    with pytest.raises(Interrupted):
        copy_archive(files, out, CopyOptions(max_memory=1), executor=StopsAfter(1))
    ncgen(tmp_path, "m02.nc", month_cdl(2, 4))
    with pytest.raises(SourceChangedError, match="m02.nc: changed since the unfinished job"):
        copy_archive(files, out, CopyOptions(max_memory=1))


@pytest.mark.parametrize("seed", [1, 2])
def test_sigkill_of_the_client_and_workers_then_rerun(tmp_path: Path, seed: int) -> None:
    """The whole job (client and its worker processes) killed at a random point, then the
    same command again: the result equals ncrcat's."""
    out, expected, command = killable_job(tmp_path, "time/3")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, start_new_session=True)
    time.sleep(random.Random(seed).uniform(0.5, 3.0))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    rerun = subprocess.run(command, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert dump(out) == expected
