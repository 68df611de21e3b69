"""Archive copies meeting faults: an object store that throttles (the task retries with
backoff), one that keeps failing (the job fails naming the file and key, a rerun resumes),
and a local worker process SIGKILLed mid-job (the job fails saying so, a rerun finishes it)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import fsspec
import psutil
import pytest
from archive_files import ROOT, dump, killable_job, monthly_archive
from fsspec.implementations.memory import MemoryFileSystem

import nczarr
from nczarr.convert.archive import DONE_PREFIX, ArchiveProgress, Retries, copy_archive
from nczarr.convert.copy import CopyOptions
from nczarr.errors import CopyError
from nczarr.store._files import TEMP_PREFIX

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")
#: A task a record: many small tasks. Waits of a millisecond: no real sleeps.
OPTIONS = CopyOptions(chunking=("time/1",), max_memory=1)
QUICK = Retries(attempts=3, first_wait=0.001)


class Throttling(MemoryFileSystem):
    """An in-memory object store that answers ``failures`` requests (reads and writes) with
    S3's throttling error before it serves them again."""

    protocol = ("throttling",)
    store: ClassVar[dict[str, Any]] = {}
    pseudo_dirs: ClassVar[list[str]] = [""]
    failures: ClassVar[int] = 0
    failed: ClassVar[int] = 0

    def _request(self) -> None:
        if Throttling.failures > 0:
            Throttling.failures -= 1
            Throttling.failed += 1
            raise OSError("An error occurred (SlowDown) when calling the PutObject operation: 503 Reduce your request rate")

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        self._request()
        return super().cat_file(path, start, end, **kwargs)  # type: ignore[no-any-return]

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        self._request()
        super().pipe_file(path, value, mode, **kwargs)


@pytest.fixture
def throttling() -> Iterator[type[Throttling]]:
    fsspec.register_implementation("throttling", Throttling, clobber=True)
    Throttling.store.clear()
    Throttling.failures = Throttling.failed = 0
    yield Throttling
    Throttling.store.clear()
    Throttling.failures = 0


class FailingFrom:
    """Runs the tasks here; from task ``start`` on, the store fails its next ``count`` requests."""

    def __init__(self, start: int, count: int) -> None:
        self.start, self.count = start, count

    def run(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> Iterator[R]:
        for index, task in enumerate(tasks):
            if index == self.start:
                Throttling.failures = self.count
            yield function(shared, task)


def test_throttled_requests_are_retried_with_backoff(throttling: type[Throttling], tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    files = monthly_archive(tmp_path)
    target = "throttling://bucket/out.zarr"
    with caplog.at_level(logging.WARNING, logger="nczarr.convert.archive"):
        copy_archive(files, target, OPTIONS, executor=FailingFrom(1, 3), retries=QUICK, verify=True)
    assert throttling.failed == 3 and throttling.failures == 0
    assert "SlowDown" in caplog.text and "trying again in 0.00" in caplog.text
    local = tmp_path / "local.zarr"
    copy_archive(files, local, OPTIONS)
    with nczarr.Dataset(target) as got, nczarr.Dataset(local) as expected:
        assert (got["t"][:] == expected["t"][:]).all() and (got["time"][:] == expected["time"][:]).all()


def test_persistent_store_error_fails_naming_file_and_key_and_a_rerun_resumes(
    throttling: type[Throttling], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = monthly_archive(tmp_path, (3, 1, 4))
    target = "throttling://bucket/out.zarr"
    with pytest.raises(CopyError) as raised, caplog.at_level(logging.WARNING, logger="nczarr.convert.archive"):
        copy_archive(files, target, OPTIONS, executor=FailingFrom(2, 10**6), retries=QUICK)
    message = str(raised.value)
    assert "throttling://bucket/out.zarr: variable " in message and "(from " in message
    assert "m0" in message and ".nc" in message  # the source file
    assert "cannot read '" in message or "cannot write '" in message  # the key
    assert caplog.text.count("trying again") == QUICK.attempts
    assert message.endswith("; 2 of 33 tasks are done: run the same copy again to do the others")
    throttling.failures = 0
    done = [k for k in throttling.store if f"/{DONE_PREFIX}" in k]
    assert len(done) == 2
    progress: list[ArchiveProgress] = []
    copy_archive(files, target, OPTIONS, retries=QUICK, progress=progress.append, verify=True)
    assert progress[0].tasks_done == 3  # the two done before are not redone
    assert not [k for k in throttling.store if "/.nczarr_archive/" in k]


def _workers(client: int) -> list[psutil.Process]:
    """The local pool's worker processes of the command with process id ``client``."""
    found = []
    for child in psutil.Process(client).children():
        with_command = " ".join(child.cmdline())
        if "spawn_main" in with_command and "resource_tracker" not in with_command:
            found.append(child)
    return found


def test_sigkill_of_one_local_worker_then_rerun(tmp_path: Path) -> None:
    out, expected, command = killable_job(tmp_path, "time/1")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    done = out / DONE_PREFIX
    while not (done.exists() and any(done.iterdir())):
        assert process.poll() is None, process.communicate()[1]
        time.sleep(0.01)
    workers = _workers(process.pid)
    assert len(workers) == 2
    for worker in workers:  # held still, so that the job cannot end before the kill
        worker.send_signal(signal.SIGSTOP)
    workers[0].send_signal(signal.SIGKILL)
    workers[1].send_signal(signal.SIGCONT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode != 0
    assert "a worker process of the local pool died" in stderr and "run the same copy again" in stderr
    assert "Traceback" not in stderr
    assert any(done.iterdir())  # the finished tasks are kept
    # what a worker killed mid-write leaves, whichever key it was writing
    half_written = [done / f"{TEMP_PREFIX}0123456789abcdef", out / "t" / f"{TEMP_PREFIX}fedcba9876543210"]
    for path in half_written:
        path.write_bytes(b"half")
    rerun = subprocess.run(command, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert dump(out) == expected
    assert not (out / ".nczarr_archive").exists()
    assert not list(out.rglob(f"{TEMP_PREFIX}*"))
