"""A writer killed with SIGKILL at a random moment leaves a store that opens and holds
everything up to its last completed sync(), in every convention.

Each run starts a writer process on the store the last one left (NCZARR conventions; pure
Zarr does not record that a dimension is unlimited, so there each writer makes a new
store): it appends records to an unlimited dimension, adds attributes and variables, renames one now
and then, and syncs every two records, printing what it has synced after each sync returns.
The test kills it at a random moment, opens the store and checks every variable against
the last line printed. The seed is in the failure message.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import nczarr
from nczarr.store.lock import lock_path

CONVENTIONS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]
KILLS = 3

WRITER = r"""
import os, sys
import numpy as np
import nczarr

path, fmt = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    ds = nczarr.Dataset(path, "a")
else:
    ds = nczarr.Dataset(path, "w", format=fmt)
    ds.createDimension("time", None)
    ds.createDimension("x", 3)
    ds.createVariable("time", "f8", ("time",))
    ds.createVariable("a", "i4", ("time", "x"), zlib=True)
    ds.createGroup("g").createVariable("c", "i2", ("time",))
    ds.sync()
g = ds["g"]

def synced():
    extra = sorted(n for n in ds.variables if n[0] in "vr")
    print("synced", len(ds.dimensions["time"]), *extra, flush=True)

synced()
i = len(ds.dimensions["time"])
while True:
    ds["time"][i] = i
    ds["a"][i, :] = [i, 2 * i, 3 * i]
    g["c"][i] = i % 30000
    if i % 3 == 0:
        ds.setncattr(f"att{i}", i)
    if i % 5 == 4:
        v = ds.createVariable(f"v{i}", "i4", ("time",))
        v[:] = np.arange(i + 1)
    if i % 7 == 6:
        names = [n for n in ds.variables if n.startswith("v")]
        if names:
            ds.renameVariable(names[0], "r" + names[0][1:])
    i += 1
    if i % 2 == 0:
        ds.sync()
        synced()
"""


def run_writer(path: str, fmt: str, rng: random.Random) -> list[str]:
    """Start a writer, kill it at a random moment after its first sync; its synced lines."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, path, fmt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    first = child.stdout.readline()  # type: ignore[union-attr]
    if not first.startswith("synced"):
        child.kill()
        raise AssertionError(f"the writer failed before writing: {child.communicate()[1]}")
    time.sleep(rng.uniform(0.0, 0.3))
    child.send_signal(signal.SIGKILL)
    out, err = child.communicate()
    assert child.returncode == -signal.SIGKILL, f"the writer ended before it was killed: {err}"
    complete = out.split("\n")[:-1]  # the kill can cut the last line short: it says nothing
    return [first.strip(), *(line for line in complete if line.startswith("synced"))]


def check(path: str, last: str) -> int:
    """The store opens, every variable reads, and it holds what ``last`` says was synced."""
    _, length, *extra = last.split()
    synced = int(length)
    with nczarr.Dataset(path) as ds:
        n = len(ds.dimensions["time"])
        assert n >= synced
        for variable in ds.variables.values():
            assert variable[:].shape[0] == n, variable.name
        # pure Zarr names dimensions, and finds them in ancestors only at the same length: a
        # kill can leave g/c longer than /time, which then reads with a dimension of its own
        assert ds["g"]["c"][:].shape[0] >= synced
        records = np.arange(synced)
        assert np.array_equal(ds["time"][:synced], records)
        assert np.array_equal(ds["a"][:synced], np.stack([records, 2 * records, 3 * records], axis=1))
        assert np.array_equal(ds["g"]["c"][:synced], records % 30000)
        for name in extra:  # created (and maybe renamed since) before the sync
            number = int(name[1:])
            found = [v for v in (f"v{number}", f"r{number}") if v in ds.variables]
            assert found, f"{name} is gone"
            assert np.array_equal(ds[found[0]][: number + 1], np.arange(number + 1))
    return synced


@pytest.mark.parametrize(
    "fmt, suffix", [*((fmt, ".zarr") for fmt in CONVENTIONS), ("NCZARR", ".zip")], ids=[*CONVENTIONS, "NCZARR-zip"]
)
def test_a_writer_killed_at_random_keeps_everything_synced(tmp_path, fmt, suffix):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    before = 0
    for kill in range(KILLS):
        path = str(tmp_path / (f"killed{suffix}" if fmt.startswith("NCZARR") else f"killed{kill}{suffix}"))
        lines = run_writer(path, fmt, rng)
        # the killed writer's lock file stays; the next writer takes it (the kernel let go)
        assert os.path.exists(lock_path(path))
        try:
            synced = check(path, lines[-1])
        except Exception as exc:
            raise AssertionError(f"seed {seed}, kill {kill}, after {lines[-1]!r}: {exc!r}") from exc
        if fmt.startswith("NCZARR"):
            assert synced >= before
            before = synced


def test_the_reader_takes_the_longest_length_of_an_unlimited_dimension(tmp_path):
    # what a kill between two arrays' documents leaves, made by hand: one array grown, the
    # other (and for NCZARR the group's record of the dimension) not yet
    path = str(tmp_path / "torn.zarr")
    with nczarr.Dataset(path, "w", format="NCZARR") as ds:
        ds.createDimension("t", None)
        ds.createVariable("a", "i4", ("t",))[:] = [1, 2, 3]
        ds.createVariable("b", "i4", ("t",))[:] = [4, 5, 6]
    document = tmp_path / "torn.zarr" / "a" / "zarr.json"
    doc = json.loads(document.read_text())
    doc["shape"] = [2]
    document.write_text(json.dumps(doc))
    root = tmp_path / "torn.zarr" / "zarr.json"
    doc = json.loads(root.read_text())
    doc.pop("consolidated_metadata", None)
    root.write_text(json.dumps(doc))
    with nczarr.Dataset(path) as ds:
        assert len(ds.dimensions["t"]) == 3
        # a reads past its own shape: the chunk holds the third value, as netCDF would show
        assert ds["a"][:].tolist() == [1, 2, 3] and ds["b"][:].tolist() == [4, 5, 6]
    document = tmp_path / "torn.zarr" / "b" / "zarr.json"
    doc = json.loads(document.read_text())
    doc["shape"] = [5]  # longer than the group records: the group was not written yet
    document.write_text(json.dumps(doc))
    with nczarr.Dataset(path) as ds:
        assert len(ds.dimensions["t"]) == 5
        assert ds["a"][:].filled(0).tolist() == [1, 2, 3, 0, 0]
        assert ds["b"][:3].tolist() == [4, 5, 6]


def test_a_stale_consolidated_copy_is_set_aside(tmp_path, caplog):
    # a program that does not keep .zmetadata current (netcdf-c) added a variable
    path = tmp_path / "stale.zarr"
    with nczarr.Dataset(path, "w", format="NCZARR_V2") as ds:
        ds.createDimension("t", None)
        ds.createVariable("a", "i4", ("t",))[:] = [1, 2, 3]
    old = (path / ".zmetadata").read_bytes()
    with nczarr.Dataset(path, "a") as ds:
        ds.createVariable("b", "i4", ("t",))[:] = [4, 5, 6, 7]
    (path / ".zmetadata").write_bytes(old)
    with nczarr.Dataset(path) as ds:
        assert ds["a"][:3].tolist() == [1, 2, 3] and ds["b"][:].tolist() == [4, 5, 6, 7]
    assert "consolidated metadata disagrees" in caplog.text
