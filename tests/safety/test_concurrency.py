"""Two writers of one store never lose data silently.

Local stores (directory, zip): a dataset open for writing holds the store's lock; a second
writer waits for it, then either works on what the first wrote or fails with
StoreLockedError. Object stores: a sync that would overwrite metadata another writer
changed fails with ConcurrentWriteError. Engine writers of disjoint regions of existing
arrays take no lock and lose nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import nczarr
from nczarr.errors import ConcurrentWriteError, NCZarrError, StoreLockedError
from nczarr.store.directory import DirectoryStore
from nczarr.store.fsspec import FsspecStore
from nczarr.store.lock import LOCK_TIMEOUT_ENV, lock_path

#: A writer that adds three variables and appends two records per variable to the shared
#: unlimited dimension, slowly enough that two of them overlap. Once open it waits for a line
#: on its input, so the test decides how long it holds the store.
RACER = r"""
import sys, time
import nczarr

path, name, ident = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    ds = nczarr.Dataset(path, "a")
except nczarr.NCZarrError as exc:
    print("refused", type(exc).__name__, exc, flush=True)
    sys.exit(3)
print("opened", flush=True)
sys.stdin.readline()
for j in range(3):
    ds.createVariable(f"{name}{j}", "i4", ("x",))[:] = [ident, j, 7]
    start = len(ds.dimensions["time"])
    ds["rec"][start : start + 2] = [ident * 100 + j, ident * 100 + j]
    ds.sync()
    time.sleep(0.3)
ds.close()
print("done", flush=True)
"""


def new_store(path: str) -> None:
    with nczarr.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 3)
        ds.createVariable("rec", "i4", ("time",))


def race(path: str, timeout: str | None = None) -> list[tuple[int, str]]:
    """Run two racers at once; each one's exit code and output. With a ``timeout``, the
    first to open holds the store until the other has given up."""
    env = dict(os.environ)
    env.pop(LOCK_TIMEOUT_ENV, None)
    if timeout is not None:
        env[LOCK_TIMEOUT_ENV] = timeout
    children = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, path, name, str(ident)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for ident, name in ((1, "a"), (2, "b"))
    ]
    # each prints "opened" or "refused" first; a waiting writer prints once it has the lock
    first = [child.stdout.readline() for child in children] if timeout is not None else ["", ""]  # type: ignore[union-attr]
    for child in children:
        try:
            child.stdin.write("go\n")  # type: ignore[union-attr]
            child.stdin.close()  # type: ignore[union-attr]
        except BrokenPipeError:  # refused and gone
            pass
    results = []
    for child, line in zip(children, first):
        with child:  # closes the pipes
            out, err = child.stdout.read(), child.stderr.read()  # type: ignore[union-attr]
        results.append((child.wait(timeout=60), line + out + err))
    return results


def check_nothing_lost(path: str, results: list[tuple[int, str]]) -> None:
    """Every racer that says it is done has all it wrote in the store; the others failed
    with a clear error and wrote nothing."""
    with nczarr.Dataset(path) as ds:
        records = ds["rec"][:].tolist()
        for (code, output), (ident, name) in zip(results, ((1, "a"), (2, "b"))):
            if code == 0:
                assert "done" in output
                for j in range(3):
                    assert ds[f"{name}{j}"][:].tolist() == [ident, j, 7]
                    assert records.count(ident * 100 + j) == 2
            else:
                assert code == 3, output  # refused, not a traceback
                assert "StoreLockedError" in output and "open for writing by another writer" in output
                assert not any(f"{name}{j}" in ds.variables for j in range(3))
        expected = 6 * sum(code == 0 for code, _ in results)
        assert len(records) == expected, records


@pytest.mark.parametrize("kind", ["directory", "zip"])
def test_a_second_writer_waits_for_the_first_and_loses_nothing(tmp_path, kind):
    path = str(tmp_path / ("race.zip" if kind == "zip" else "race.zarr"))
    new_store(path)
    results = race(path)
    assert [code for code, _ in results] == [0, 0], results
    check_nothing_lost(path, results)
    assert not os.path.exists(lock_path(path))  # the lock file goes with its last holder


@pytest.mark.parametrize("kind", ["directory", "zip"])
def test_a_second_writer_that_waits_too_long_fails_clearly(tmp_path, kind):
    path = str(tmp_path / ("race.zip" if kind == "zip" else "race.zarr"))
    new_store(path)
    results = race(path, timeout="0.2")
    assert sorted(code for code, _ in results) == [0, 3], results
    check_nothing_lost(path, results)


def test_the_lock_in_one_process(tmp_path):
    path = str(tmp_path / "one.zarr")
    new_store(path)
    first = nczarr.Dataset(path, "a")
    try:
        with pytest.raises(StoreLockedError) as caught:
            nczarr.Dataset(path, "r+", lock_timeout=0.1)
        assert isinstance(caught.value, BlockingIOError) and isinstance(caught.value, NCZarrError)
        assert repr(path) in str(caught.value) and "another writer" in str(caught.value)
        # readers neither wait nor see the lock
        with nczarr.Dataset(path) as reader:
            assert list(reader.variables) == ["rec"]
        assert ".nczarr-lock" not in " ".join(DirectoryStore(path, read_only=True).list())
        assert os.path.dirname(lock_path(path)) == str(tmp_path)
    finally:
        first.close()
    with nczarr.Dataset(path, "a", lock_timeout=0) as second:
        second.createVariable("after", "i4", ("x",))
    # a writer dropped without close() lets go when it is collected
    nczarr.Dataset(path, "a")
    nczarr.Dataset(path, "a", lock_timeout=0).close()


def test_mode_w_waits_for_the_writer_before_replacing_the_store(tmp_path):
    path = str(tmp_path / "replaced.zarr")
    new_store(path)
    with nczarr.Dataset(path, "a") as writer:
        with pytest.raises(StoreLockedError):
            nczarr.Dataset(path, "w", lock_timeout=0)
        writer.createVariable("kept", "i4", ("x",))[:] = [1, 2, 3]
    with nczarr.Dataset(path) as ds:
        assert ds["kept"][:].tolist() == [1, 2, 3]


def test_a_bad_timeout_is_refused(tmp_path, monkeypatch):
    path = str(tmp_path / "t.zarr")
    new_store(path)
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "soon")
    with pytest.raises(NCZarrError, match="NCZARR_LOCK_TIMEOUT"):
        nczarr.Dataset(path, "a")
    with pytest.raises(NCZarrError, match="lock timeout"):
        nczarr.Dataset(path, "a", lock_timeout=-1)


#: An engine writer: opens one existing array of the store and writes its own rows.
REGION_WRITER = r"""
import sys
import numpy as np
from nczarr.store.directory import DirectoryStore
from nczarr.zarr import open_array

path, part = sys.argv[1], int(sys.argv[2])
array = open_array(DirectoryStore(path), "v", mode="r+")
for row in range(part * 8, part * 8 + 8):
    array[row] = np.full(500, row * 1000 + part, dtype="i4")
array.close()
"""


def test_engine_writers_of_disjoint_regions_lose_nothing(tmp_path):
    path = str(tmp_path / "regions.zarr")
    with nczarr.Dataset(path, "w") as ds:
        ds.createDimension("row", 32)
        ds.createDimension("col", 500)
        ds.createVariable("v", "i4", ("row", "col"), chunksizes=(1, 500))
    # a Dataset holds the writer lock meanwhile: engine writers of data do not take it
    with nczarr.Dataset(path, "a"):
        children = [
            subprocess.Popen([sys.executable, "-c", REGION_WRITER, path, str(part)], stderr=subprocess.PIPE, text=True)
            for part in range(4)
        ]
        for child in children:
            _, err = child.communicate(timeout=60)
            assert child.returncode == 0, err
    with nczarr.Dataset(path) as ds:
        values = ds["v"][:]
    expected = np.array([[row * 1000 + row // 8] * 500 for row in range(32)])
    assert np.array_equal(values, expected)


# -- object stores: no lock; metadata writes check what they replace ----------------------


def memory_url(tmp_path) -> str:
    return f"memory://{tmp_path.name}/shared"


def test_an_object_store_writer_does_not_overwrite_another_ones_metadata(tmp_path):
    url = memory_url(tmp_path)
    new_store(url)
    first = nczarr.Dataset(FsspecStore(url), "a")
    second = nczarr.Dataset(FsspecStore(url), "a")
    first.createVariable("from_first", "i4", ("x",))[:] = [1, 2, 3]
    first.close()
    second.createVariable("from_second", "i4", ("x",))
    with pytest.raises(ConcurrentWriteError, match="another writer changed zarr.json"):
        second.sync()
    with pytest.raises(ConcurrentWriteError):
        second.close()
    with nczarr.Dataset(url) as ds:
        assert set(ds.variables) == {"rec", "from_first"}
        assert ds["from_first"][:].tolist() == [1, 2, 3]


def test_object_store_appenders_fail_loudly_not_silently(tmp_path):
    url = memory_url(tmp_path)
    new_store(url)
    first = nczarr.Dataset(url, "a")
    second = nczarr.Dataset(url, "a")
    first["rec"][0:3] = [1, 2, 3]
    first.sync()
    # the same records: the second has not seen the first's. Its chunks are not checked
    # (docs/concurrency.md): what it stored of them may replace the first's values.
    second["rec"][0:2] = [8, 9]
    with pytest.raises(ConcurrentWriteError):
        second.sync()
    with pytest.raises(ConcurrentWriteError):
        second.close()
    first["rec"][3] = 4  # the first goes on: its view is still the store's
    first.close()
    with nczarr.Dataset(url) as ds:
        assert len(ds.dimensions["time"]) == 4
        assert ds["rec"][3] == 4


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"])
def test_a_writer_that_reopens_sees_the_change_and_may_write(tmp_path, fmt):
    url = memory_url(tmp_path)
    with nczarr.Dataset(url, "w", format=fmt) as ds:
        ds.createDimension("x", 2)
    stale = nczarr.Dataset(url, "a")
    with nczarr.Dataset(url, "a") as other:
        other.setncattr("title", "other")
    stale.setncattr("history", "stale")
    with pytest.raises(ConcurrentWriteError):
        stale.sync()
    with pytest.raises(ConcurrentWriteError):
        stale.close()
    with nczarr.Dataset(url, "a") as fresh:
        fresh.setncattr("history", "fresh")
    with nczarr.Dataset(url) as ds:
        assert (ds.title, ds.history) == ("other", "fresh")
