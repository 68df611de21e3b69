"""Attacks on the zip store: hostile member names, decompression bombs and lying headers
(peak memory measured in a subprocess), SIGKILL after sync() and during it, temporary files
left behind, and the fsync setting."""

from __future__ import annotations

import json
import os
import re
import signal
import struct
import subprocess
import sys
import textwrap
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

import nczarr
from nczarr.config import FSYNC_VARIABLE, fsync_enabled
from nczarr.errors import InvalidKeyError, NCZarrError, StoreError
from nczarr.store import DirectoryStore, ZipStore

MiB = 1 << 20
#: Peak resident memory a subprocess may reach while reading a bomb (a bare import of
#: nczarr with numpy takes about 70 MB).
MEMORY_LIMIT = 200 * MiB
WORK_PREFIX = ".tmp-nczarr-zip-"


# -- building hostile archives ------------------------------------------------------------
def raw_zip(path: Path, members: list[tuple[str, int, bytes, int, int]]) -> None:
    """Write an archive byte by byte, so headers can lie: each member is (name, method,
    data as stored, declared inflated size, declared CRC)."""
    body = bytearray()
    directory = bytearray()
    for name, method, data, size, crc in members:
        encoded = name.encode()
        offset = len(body)
        # version 2.0, no flags, 1980-01-01 00:00, no extra field
        common = (method, 0, 0x21, crc, len(data), size, len(encoded), 0)
        body += struct.pack("<IHH" + "HHHIIIHH", 0x04034B50, 20, 0, *common) + encoded + data
        attributes = (0, 0, 0, 0o100644 << 16, offset)  # comment, disk, internal, external, where
        directory += struct.pack("<IHHH" + "HHHIIIHH" + "HHHII", 0x02014B50, 20, 20, 0, *common, *attributes)
        directory += encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(directory), len(body), 0)
    path.write_bytes(bytes(body + directory + end))


def deflated_zeros(mebibytes: int) -> bytes:
    """A raw deflate stream of ``mebibytes`` MiB of zeros (about 1 KB per MiB), made by
    repeating one fully flushed block rather than compressing gigabytes."""
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    one = block.compress(bytes(MiB)) + block.flush(zlib.Z_FULL_FLUSH)
    return one * mebibytes + zlib.compressobj(9, zlib.DEFLATED, -15).flush()


def members_of(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".tmp-nczarr"))


def run(script: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


# -- names ------------------------------------------------------------------------------
UNSAFE = ["../evil", "a/../../evil", "/etc/evil", "C:\\evil", "C:/evil", "a\\b", "a//b", "./a"]


@pytest.mark.parametrize("name", UNSAFE)
def test_unsafe_members_are_never_keys_when_reading(
    tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("zarr.json", b"{}")
        archive.writestr(name, b"hostile")
    with ZipStore(path) as store:
        assert list(store.list()) == ["zarr.json"]
        assert not any(store.exists(key) for key in ("evil", "etc/evil", "a/b", "b"))
    assert repr(name) in caplog.text


@pytest.mark.parametrize("name", UNSAFE)
def test_an_archive_with_unsafe_members_is_refused_for_writing(tmp_path: Path, name: str) -> None:
    inside = tmp_path / "inside"
    inside.mkdir()
    path = inside / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("zarr.json", b"{}")
        archive.writestr(name, b"hostile")
    before = path.read_bytes()
    with pytest.raises(InvalidKeyError, match=re.escape(repr(name)) + ".*refusing to rewrite") as info:
        ZipStore(path, "a")
    assert isinstance(info.value, NCZarrError)
    with pytest.raises(NCZarrError, match="refusing to rewrite"):
        nczarr.Dataset(str(path), "a")
    # Nothing extracted or written anywhere, the archive untouched.
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["inside", "x.zip"]
    assert path.read_bytes() == before


@pytest.mark.parametrize("mode", ["r", "a"])
def test_duplicate_members_are_refused(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "x.zip"
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(path, "w") as archive:
        archive.writestr("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
        archive.writestr("v/c/0", b"first")
        archive.writestr("v/c/0", b"second")
    with pytest.raises(StoreError, match="2 members named 'v/c/0'.*ambiguous"):
        ZipStore(path, mode)
    with pytest.raises(NCZarrError, match="ambiguous"):
        nczarr.Dataset(str(path), "r")


@pytest.mark.parametrize("key", ["C:/evil", "../evil", "/evil", "a\\b"])
def test_unsafe_keys_are_never_written(tmp_path: Path, key: str) -> None:
    path = tmp_path / "x.zip"
    with ZipStore(path, "w") as store:
        with pytest.raises(InvalidKeyError):
            store.set(key, b"v")
        store.set("ok", b"v")
    assert members_of(path) == {"ok": b"v"}


# -- bounded reads ----------------------------------------------------------------------
BOMB = 1024  # MiB inflated, from about 1 MB in the archive


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Archives with a deflate bomb as a raw key, as a chunk of a dataset, as a metadata
    document, and members whose header claims less or more than their data holds."""
    root = tmp_path_factory.mktemp("bombs")
    zeros = deflated_zeros(BOMB)
    raw_zip(root / "raw.zip", [("c/0", zipfile.ZIP_DEFLATED, zeros, BOMB * MiB, 0)])
    # claims 4 KiB, holds 1 GiB (zipfile must stop inflating at 4 KiB)
    raw_zip(root / "lie.zip", [("c/0", zipfile.ZIP_DEFLATED, zeros, 4096, zlib.crc32(bytes(4096 + 1)))])
    # claims 1 MiB stored but holds 100 bytes (with their right CRC)
    raw_zip(root / "short.zip", [("c/0", zipfile.ZIP_STORED, bytes(100), MiB, zlib.crc32(bytes(100)))])
    raw_zip(root / "meta.zip", [("zarr.json", zipfile.ZIP_DEFLATED, zeros, BOMB * MiB, 0)])
    # a real dataset whose only chunk is replaced by the bomb
    source = root / "source.zip"
    with nczarr.Dataset(str(source), "w") as ds:
        ds.createDimension("x", 10)
        ds.createDimension("y", 10)
        ds.createVariable("v", "u1", ("x", "y"))[:] = np.ones((10, 10), "u1")
        ds.createVariable("z", "u1", ("x", "y"), zlib=True)[:] = np.ones((10, 10), "u1")
    entries = members_of(source)
    chunks = [name for name in entries if name.startswith(("v/", "z/")) and "/c" in name]
    assert len(chunks) == 2, entries.keys()
    raw_zip(
        root / "dataset.zip",
        [
            (name, zipfile.ZIP_DEFLATED, zeros, BOMB * MiB, 0)
            if name in chunks
            else (name, zipfile.ZIP_STORED, value, len(value), zlib.crc32(value))
            for name, value in entries.items()
        ],
    )
    return root


def test_bombs_are_refused_with_bounded_memory(bombs: Path) -> None:
    result = run(
        """
        import json, resource
        import nczarr
        from nczarr.store import ZipStore
        outcomes = {}
        def attempt(name, action):
            try:
                action()
                outcomes[name] = "no error"
            except Exception as exc:
                outcomes[name] = [type(exc).__name__, isinstance(exc, nczarr.NCZarrError), str(exc)]
        attempt("get", lambda: ZipStore("raw.zip").get("c/0"))
        attempt("range", lambda: ZipStore("raw.zip").get("c/0", (-100, None)))
        attempt("get_into", lambda: ZipStore("raw.zip").get_into("c/0", bytearray(100)))
        attempt("lie", lambda: ZipStore("lie.zip").get("c/0"))
        attempt("lie_into", lambda: ZipStore("lie.zip").get_into("c/0", bytearray(4096)))
        attempt("short", lambda: ZipStore("short.zip").get("c/0"))
        attempt("short_into", lambda: ZipStore("short.zip").get_into("c/0", bytearray(1 << 20)))
        attempt("metadata", lambda: nczarr.Dataset("meta.zip"))
        attempt("raw_chunk", lambda: nczarr.Dataset("dataset.zip")["v"][:])
        attempt("zlib_chunk", lambda: nczarr.Dataset("dataset.zip")["z"][:])
        def rewrite():
            store = ZipStore("raw.zip", "a")
            store.set("k", b"v")
            store.close()
        attempt("rewrite", rewrite)
        # VmHWM: ru_maxrss of a child on Linux starts at its parent's peak (kept across
        # exec), so in a long pytest run it measures pytest; getrusage where there is no /proc
        try:
            with open("/proc/self/status") as status:
                peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
        except OSError:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"outcomes": outcomes, "peak": peak}))
        """,
        bombs,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    for name, outcome in report["outcomes"].items():
        assert outcome != "no error", name
        kind, is_ours, message = outcome
        assert is_ours, (name, kind, message)
        # the member is named (the dataset reads name the chunk key)
        assert "c/0" in message or "zarr.json" in message or "/c" in message, (name, message)
    messages = {name: outcome[2] for name, outcome in report["outcomes"].items()}
    assert "decompression bomb" in messages["get"]
    assert "CRC" in messages["lie"] or "Bad" in messages["lie"]
    assert "ends after 100 bytes" in messages["short_into"]
    assert report["peak"] < MEMORY_LIMIT, f"peak RSS {report['peak'] / MiB:.0f} MiB"


def test_encrypted_and_bzip2_members_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as archive:
        archive.writestr("k", b"v" * 100)
    with ZipStore(path) as store, pytest.raises(StoreError, match="'k'.*compression method 12"):
        store.get("k")


# -- durability -------------------------------------------------------------------------
WRITER = """
    import os, signal
    import numpy as np
    import nczarr
    ds = nczarr.Dataset("x.zip", "w")
    ds.createDimension("t", None)
    v = ds.createVariable("v", "i4", ("t",))
    v[0:100] = np.arange(100)
    ds.sync()
    ds.createVariable("late", "i4", ("t",))[:] = np.arange(100)  # after sync: may be lost
    v[100:200] = np.arange(100)
    from nczarr.store import ZipStore
    other = ZipStore("other.zip", "w")
    other.set("k", b"buffered, never flushed")
    {before_kill}
    os.kill(os.getpid(), signal.SIGKILL)
"""


def check_synced(path: Path) -> None:
    with nczarr.Dataset(str(path)) as ds:
        assert ds["v"][:100].tolist() == list(range(100))


def test_sync_survives_sigkill_and_leftovers_are_cleaned(tmp_path: Path) -> None:
    result = run(WRITER.format(before_kill=""), tmp_path)
    assert result.returncode == -signal.SIGKILL, result.stderr
    check_synced(tmp_path / "x.zip")
    # The killed process left only a work directory of ours (of other.zip, never flushed),
    # besides the writers' lock files, which are reused...
    others = [p.name for p in tmp_path.iterdir() if not p.name.startswith(WORK_PREFIX)]
    assert [name for name in others if not name.endswith(".nczarr-lock")] == ["x.zip"]
    assert leftovers(tmp_path) and all(name.startswith(WORK_PREFIX) for name in leftovers(tmp_path))
    with ZipStore(tmp_path / "x.zip"):  # ...which reading leaves alone...
        assert leftovers(tmp_path)
    ZipStore(tmp_path / "x.zip", "a").close()  # ...and opening to write removes
    assert leftovers(tmp_path) == []
    check_synced(tmp_path / "x.zip")


def test_a_kill_while_sync_writes_the_archive_leaves_the_previous_one(tmp_path: Path) -> None:
    # Killed halfway through writing the new archive: the old one is still whole.
    kill_midway = """
    from nczarr.store import zip as zipmodule
    def half(self, file):
        file.write(b"PK half an archive")
        os.kill(os.getpid(), signal.SIGKILL)
    zipmodule.ZipStore._write_archive = half
    ds.sync()
    """
    result = run(WRITER.format(before_kill=textwrap.indent(textwrap.dedent(kill_midway), "    ").strip()), tmp_path)
    assert result.returncode == -signal.SIGKILL, result.stderr
    check_synced(tmp_path / "x.zip")
    with nczarr.Dataset(str(tmp_path / "x.zip")) as ds:
        assert "late" not in ds.variables
    ZipStore(tmp_path / "x.zip", "a").close()
    assert leftovers(tmp_path) == []


def test_flush_replaces_the_archive_and_the_store_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:  # netcdf-c's layout
        archive.writestr("x/", b"")
        archive.writestr("x/zarr.json", b"{}")
        archive.writestr("x/old", b"old")
        archive.writestr("x/gone", b"gone")
    store = ZipStore(path, "a")
    store.set("new", b"new")
    store.delete("gone")
    store.flush()
    assert members_of(path) == {"x/": b"", "x/zarr.json": b"{}", "x/old": b"old", "x/new": b"new"}
    assert leftovers(tmp_path) == []  # buffers went into the archive
    assert store.get("new") == b"new" and store.get("old") == b"old" and not store.exists("gone")
    store.set("old", b"changed")
    assert store.get("old") == b"changed"
    store.flush()
    store.flush()  # nothing changed: nothing written
    store.set("after", b"a")
    store.close()
    assert members_of(path)["x/old"] == b"changed"
    assert members_of(path)["x/after"] == b"a"
    assert leftovers(tmp_path) == []


def test_no_temporary_files_after_errors_drops_and_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.zip"
    with pytest.raises(RuntimeError), nczarr.Dataset(str(path), "w") as ds:
        ds.createDimension("t", 3)
        ds.createVariable("v", "i4", ("t",))[:] = [1, 2, 3]
        raise RuntimeError("the user's code fails")
    assert leftovers(tmp_path) == []
    assert nczarr.Dataset(str(path))["v"][:].tolist() == [1, 2, 3]

    store = ZipStore(path, "a")
    store.set("k", b"v")

    def no_space(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", no_space)
        with pytest.raises(StoreError, match="No space left"):
            store.flush()
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["x.zip"]
    assert store.get("k") == b"v"  # the failed flush lost nothing
    del store  # dropped unclosed: the archive is as it was, the buffers are gone
    assert leftovers(tmp_path) == []
    assert "k" not in members_of(path)

    result = run(
        """
        from nczarr.store import ZipStore
        store = ZipStore("y.zip", "w")
        store.set("k", b"v")
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert leftovers(tmp_path) == []


def test_a_dataset_left_open_at_exit_is_written_whole(tmp_path: Path) -> None:
    # Values reach the store (reading them waits for the write behind) after the Dataset is
    # opened: the store's buffers must outlive the Dataset's own close at exit.
    with nczarr.Dataset(str(tmp_path / "x.zip"), "w") as ds:
        ds.createDimension("t", 3)
        ds.createVariable("v", "i4", ("t",))[:] = [1, 2, 3]
    result = run(
        """
        import nczarr
        ds = nczarr.Dataset("x.zip", "a")
        ds["v"][:] = [4, 5, 6]
        assert ds["v"][:].tolist() == [4, 5, 6]
        assert ds._shared.session.store._pending  # buffered, not yet in the archive
        """,
        tmp_path,
    )
    assert result.returncode == 0 and "could not write" not in result.stderr, result.stderr
    with nczarr.Dataset(str(tmp_path / "x.zip")) as ds:
        assert ds["v"][:].tolist() == [4, 5, 6]
    assert leftovers(tmp_path) == []


def test_a_store_in_use_keeps_its_buffers_when_another_opens(tmp_path: Path) -> None:
    first = ZipStore(tmp_path / "a.zip", "w")
    first.set("k", b"v")
    ZipStore(tmp_path / "b.zip", "w").close()  # cleans only what no live store holds
    assert first.get("k") == b"v"
    first.close()
    assert members_of(tmp_path / "a.zip") == {"k": b"v"}


# -- fsync ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, False), ("", False), ("0", False), ("off", False), ("1", True), ("TRUE", True), ("yes", True)],
)
def test_fsync_setting_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: bool
) -> None:
    if value is None:
        monkeypatch.delenv(FSYNC_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(FSYNC_VARIABLE, value)
    assert fsync_enabled() is expected


def test_fsync_reaches_files_and_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append("dir" if os.path.isdir(f"/proc/self/fd/{fd}") else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.delenv(FSYNC_VARIABLE, raising=False)
    DirectoryStore(tmp_path / "off").set("a/b", b"v")
    ZipStore(tmp_path / "off.zip", "w").close()
    assert synced == []

    monkeypatch.setenv(FSYNC_VARIABLE, "1")  # stores opened from now on follow it
    directory = DirectoryStore(tmp_path / "on")
    directory.set("a/b", b"v")
    assert synced.count("file") == 1 and synced.count("dir") >= 2  # new "a" in root, "b" in "a"
    assert directory.overwrite("a/b", b"w") and synced.count("file") == 2
    synced.clear()
    ZipStore(tmp_path / "on.zip", "w").close()
    assert synced.count("file") == 1 and "dir" in synced
    synced.clear()
    assert DirectoryStore(tmp_path / "kw", fsync=False).set("k", b"v") is None and synced == []
    with nczarr.Dataset(str(tmp_path / "x.nc"), "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("t", 2)
    assert synced.count("file") == 1 and "dir" in synced
