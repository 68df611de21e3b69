"""Attacks on the directory store's containment: symbolic links out of the store (folders,
chunk files, /dev/zero), links that loop, FIFOs. Whatever is tried, files outside the store
stay byte for byte as they were, and every refusal is an NCZarrError naming the key."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nczarr
from nczarr import zarr as engine
from nczarr.errors import InvalidKeyError, NCZarrError, StoreError
from nczarr.store import DirectoryStore

CONVENTIONS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry below ``folder`` (links not followed): file bytes, or a link's target."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[name] = path.read_bytes()
        else:
            found[name] = "dir"
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside every store, holding a sentinel and what looks like a Zarr group."""
    folder = tmp_path / "outside"
    (folder / "c").mkdir(parents=True)
    (folder / "sentinel").write_bytes(b"do not touch")
    (folder / "zarr.json").write_bytes(b'{"zarr_format": 3, "node_type": "group"}')
    (folder / "c" / "0").write_bytes(b"12345678")
    return folder


def finishes(call: Callable[[], Any], fifo: Path, seconds: float = 5.0) -> Any:
    """``call()``'s result, failing (not hanging) if it blocks on ``fifo``: after ``seconds``
    the FIFO is opened for writing, which releases a reader stuck waiting for a writer."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(seconds)
        pytest.fail(f"reading a FIFO blocked for {seconds} s instead of being refused")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


# -- the store -------------------------------------------------------------------------------

STORE_OPERATIONS: dict[str, Callable[[DirectoryStore], Any]] = {
    "get": lambda s: s.get("g/zarr.json"),
    "get range": lambda s: s.get("g/c/0", (-4, None)),
    "get_into": lambda s: s.get_into("g/c/0", bytearray(8)),
    "getsize": lambda s: s.getsize("g/sentinel"),
    "exists": lambda s: s.exists("g/zarr.json"),
    "get_many": lambda s: s.get_many(["g/zarr.json"]),
    "set": lambda s: s.set("g/sentinel", b"overwritten"),
    "set new": lambda s: s.set("g/new/c/0", b"x"),
    "overwrite": lambda s: s.overwrite("g/c/0", b"abcdefgh"),
    "delete": lambda s: s.delete("g/sentinel"),
    "delete_many": lambda s: s.delete_many(["g/zarr.json", "g/c/0"]),
    "delete_prefix": lambda s: s.delete_prefix("g/"),
    "list_prefix": lambda s: list(s.list_prefix("g/")),
    "list_dir": lambda s: s.list_dir("g/"),
    "list": lambda s: list(s.list()),
    "list_dir of the root": lambda s: s.list_dir(""),
}


@pytest.mark.parametrize("operation", STORE_OPERATIONS)
def test_no_store_operation_goes_through_a_folder_linked_outside(
    tmp_path: Path, outside: Path, operation: str
) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "zarr.json").write_bytes(b"{}")
    (root / "g").symlink_to(outside)
    before = snapshot(outside)
    store = DirectoryStore(root)
    with pytest.raises(InvalidKeyError) as info:
        STORE_OPERATIONS[operation](store)
    message = str(info.value)
    assert "'g" in message and str(root) in message and str(outside) in message
    assert snapshot(outside) == before


def test_a_folder_link_deeper_down_is_refused_too(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "store"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "out").symlink_to(os.path.relpath(outside, root / "a" / "b"))
    before = snapshot(outside)
    store = DirectoryStore(root)
    with pytest.raises(InvalidKeyError, match="'a/b/out' is a symbolic link to '[.][.]/"):
        store.set("a/b/out/c/0", b"x")
    with pytest.raises(InvalidKeyError, match="a/b/out"):
        list(store.list())
    assert snapshot(outside) == before


def test_a_key_linked_outside_is_refused_for_reading_and_replaced_for_writing(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "store"
    (root / "v" / "c").mkdir(parents=True)
    chunk = root / "v" / "c" / "0"
    chunk.symlink_to(outside / "c" / "0")
    before = snapshot(outside)
    store = DirectoryStore(root)
    for read in (lambda: store.get("v/c/0"), lambda: store.get_into("v/c/0", bytearray(8)),
                 lambda: store.getsize("v/c/0"), lambda: store.exists("v/c/0")):
        with pytest.raises(InvalidKeyError, match=f"'v/c/0'.*{outside}"):
            read()
    # same size as the target: an in-place write would go through the link
    assert store.overwrite("v/c/0", b"abcdefgh") is False
    store.set("v/c/0", b"abcdefgh")
    assert not chunk.is_symlink() and chunk.read_bytes() == b"abcdefgh"
    chunk.unlink()
    chunk.symlink_to(outside / "sentinel")
    store.delete("v/c/0")
    assert not os.path.lexists(chunk)
    assert snapshot(outside) == before


def test_a_link_to_dev_zero_is_refused_before_reading(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "0.0").symlink_to("/dev/zero")
    store = DirectoryStore(root)
    with pytest.raises(InvalidKeyError, match="'0.0'.*/dev/zero"):
        store.get("0.0")
    with pytest.raises(InvalidKeyError, match="/dev/zero"):
        store.get_into("0.0", bytearray(1 << 20))
    with pytest.raises(InvalidKeyError, match="/dev/zero"):
        list(store.list())


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "v" / "c").mkdir(parents=True)
    fifo = root / "v" / "c" / "0"
    os.mkfifo(fifo)
    (root / "v" / "alias").symlink_to("c/0")  # a link inside the store to the FIFO
    store = DirectoryStore(root)
    reads: list[Callable[[], Any]] = [
        lambda: store.get("v/c/0"),
        lambda: store.get("v/c/0", (0, 4)),
        lambda: store.get_into("v/c/0", bytearray(4)),
        lambda: store.getsize("v/c/0"),
        lambda: store.exists("v/c/0"),
        lambda: store.get("v/alias"),
    ]
    for read in reads:
        with pytest.raises(StoreError, match="'v/(c/0|alias)'.*a FIFO"):
            finishes(read, fifo)
    assert finishes(lambda: store.overwrite("v/c/0", b"abcd"), fifo) is False
    store.set("v/c/0", b"abcd")  # a write replaces the FIFO with a value
    assert store.get("v/alias") == b"abcd"


def test_links_inside_the_store_are_read_but_never_written_through(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = DirectoryStore(root)
    store.set("g/a", b"original")
    (root / "g2").symlink_to("g")  # a folder link that stays inside
    (root / "k").symlink_to("g/a")  # a key that is a link inside
    assert store.get("g2/a") == store.get("k") == b"original"
    assert store.getsize("k") == 8 and store.exists("k")
    assert sorted(store.list()) == ["g/a", "g2/a", "k"]
    assert store.list_dir("") == (["k"], ["g", "g2"])
    assert store.overwrite("k", b"OVERWRIT") is False
    store.set("k", b"new value")
    assert not (root / "k").is_symlink() and store.get("g/a") == b"original"
    store.set("g2/b", b"through an inside folder link")
    assert (root / "g" / "b").read_bytes() == b"through an inside folder link"
    (root / "k").unlink()
    (root / "k").symlink_to("g/a")
    store.delete("k")
    assert store.get("g/a") == b"original"


def test_a_root_reached_through_a_link_works(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    store = DirectoryStore(tmp_path / "link")
    store.set("g/c/0", b"x")
    assert store.get("g/c/0") == b"x" and list(store.list()) == ["g/c/0"]
    assert (tmp_path / "real" / "g" / "c" / "0").read_bytes() == b"x"


@pytest.mark.parametrize(
    ("links", "looping"),
    [
        ({"g/self": "."}, "g/"),  # a group that contains itself
        ({"g/up": ".."}, "g/"),  # a group that contains the root
        ({"a/l1": "../b", "b/l2": "../a"}, "a/l1/"),  # two folders that contain each other
    ],
)
def test_listing_a_link_loop_ends_with_an_error(
    tmp_path: Path, links: dict[str, str], looping: str
) -> None:
    root = tmp_path / "store"
    for name, target in links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).parent.joinpath("zarr.json").write_bytes(b"{}")
        (root / name).symlink_to(target)
    store = DirectoryStore(root)
    with pytest.raises(StoreError, match="a loop"):
        list(itertools.islice(store.list(), 10_000))
    with pytest.raises(StoreError, match="a loop"):
        store.list_dir(looping)
    with pytest.raises(StoreError, match="a loop"):
        list(itertools.islice(store.list_prefix(looping), 10_000))


def test_a_key_that_is_a_link_to_itself_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "k").symlink_to("k")
    store = DirectoryStore(root)
    with pytest.raises(StoreError, match="'k'"):
        store.get("k")
    store.set("k", b"fixed")
    assert store.get("k") == b"fixed"


# -- the netCDF4-compatible API --------------------------------------------------------------


def make_dataset(path: Path, convention: str) -> None:
    with nczarr.Dataset(path, "w", format=convention) as ds:
        ds.createDimension("x", 4)
        ds.createVariable("top", "i4", ("x",))[:] = np.arange(4)
        group = ds.createGroup("g")
        variable = group.createVariable("v", "i4", ("x",), chunksizes=(2,))
        variable[:] = np.arange(4)
        variable.units = "m"


def chunk_files(folder: Path) -> list[Path]:
    """The chunk files below an array's folder (every convention's key forms)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "zarr.json" and not p.name.startswith("."))


API_OPERATIONS: dict[str, Callable[[Path], Any]] = {
    "renameGroup": lambda p: _in(p, "a", lambda ds: ds.renameGroup("g", "h")),
    "renameVariable": lambda p: _in(p, "a", lambda ds: ds["g"].renameVariable("v", "w")),
    "write data": lambda p: _in(p, "r+", lambda ds: ds["g/v"].__setitem__(slice(None), 9)),
    "read data": lambda p: _in(p, "r", lambda ds: ds["g/v"][:]),
    "new attribute": lambda p: _in(p, "a", lambda ds: ds["g"].setncattr("new", 1)),
    "new variable": lambda p: _in(p, "a", lambda ds: ds["g"].createVariable("n", "f4", ("x",))),
    "delete attribute": lambda p: _in(p, "a", lambda ds: ds["g/v"].delncattr("units")),
    "mode w": lambda p: nczarr.Dataset(p, "w").close(),
}


def _in(path: Path, mode: str, action: Callable[[Any], Any]) -> None:
    with nczarr.Dataset(path, mode) as ds:
        action(ds)


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("operation", API_OPERATIONS)
def test_dataset_operations_never_reach_a_group_folder_linked_outside(
    tmp_path: Path, convention: str, operation: str
) -> None:
    store = tmp_path / "store"
    make_dataset(store, convention)
    outside = tmp_path / "outside"
    shutil.move(store / "g", outside)  # the group's folder now lives outside, linked back
    (outside / "sentinel").write_bytes(b"do not touch")
    (store / "g").symlink_to(outside)
    before = snapshot(outside)
    with pytest.raises(NCZarrError) as info:
        API_OPERATIONS[operation](store)
    assert "'g" in str(info.value)
    assert snapshot(outside) == before
    (store / "g").unlink()
    shutil.move(outside, store / "g")
    with nczarr.Dataset(store) as ds:  # the refusal left the dataset as it was
        assert ds["g/v"][:].tolist() == [0, 1, 2, 3]
        assert ds["top"][:].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_writing_a_chunk_that_is_a_link_replaces_the_link(tmp_path: Path, convention: str) -> None:
    store = tmp_path / "store"
    make_dataset(store, convention)
    chunks = chunk_files(store / "g" / "v")
    secret = tmp_path / "secret"
    secret.write_bytes(chunks[0].read_bytes())  # same size: tempting for an in-place write
    chunks[0].unlink()
    chunks[0].symlink_to(secret)
    before = secret.read_bytes()
    with nczarr.Dataset(store, "r") as ds, pytest.raises(InvalidKeyError, match=str(secret)):
        ds["g/v"][:]
    with nczarr.Dataset(store, "a") as ds:
        ds["g/v"][:] = [7, 7, 7, 7]
    assert secret.read_bytes() == before
    assert not chunks[0].is_symlink()
    with nczarr.Dataset(store) as ds:
        assert ds["g/v"][:].tolist() == [7, 7, 7, 7]


def test_reading_a_chunk_that_is_a_fifo_fails_fast(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_dataset(store, "NCZARR")
    chunk = chunk_files(store / "g" / "v")[0]
    chunk.unlink()
    os.mkfifo(chunk)
    # In a child process: a reader stuck on the FIFO (in any thread) is killed at the timeout.
    script = "import nczarr, sys\nwith nczarr.Dataset(sys.argv[1]) as ds:\n    ds['g/v'][:]\n"
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(store)], capture_output=True, text=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("reading a chunk that is a FIFO hung instead of being refused")
    assert done.returncode != 0
    assert "StoreError" in done.stderr and f"{chunk.name}' " in done.stderr and "a FIFO" in done.stderr


def test_a_pure_zarr_group_that_contains_itself_is_an_error(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_dataset(store, "ZARR_V2")
    (store / ".zmetadata").unlink()  # groups are then found by listing
    (store / "g" / "self").symlink_to(".")
    with pytest.raises(NCZarrError, match="loop|self"), nczarr.Dataset(store) as ds:
        assert ds.groups["g"].groups == {}


# -- the engine ------------------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_engine_refuses_a_node_linked_outside(tmp_path: Path, zarr_format: int) -> None:
    store = DirectoryStore(tmp_path / "store")
    root = engine.create_group(store, zarr_format=zarr_format)
    root.create_array("b", shape=(4,), dtype="i4", chunks=(2,))[:] = np.arange(4)
    outside = tmp_path / "outside"
    shutil.move(tmp_path / "store" / "b", outside)
    (outside / "sentinel").write_bytes(b"keep")
    (tmp_path / "store" / "b").symlink_to(outside)
    before = snapshot(outside)
    store = DirectoryStore(tmp_path / "store")
    group = engine.open_group(store, mode="a")
    for attack in (lambda: group["b"], lambda: group.delete("b"),
                   lambda: group.create_array("b", shape=(4,), dtype="i4", overwrite=True)):
        with pytest.raises(NCZarrError, match="'b"):
            attack()
    assert snapshot(outside) == before
