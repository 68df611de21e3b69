"""Reading only what a selection needs: byte ranges of a value in every store (merged where
adjacent), and selections of uncompressed chunks that read just their bytes."""

from __future__ import annotations

import zipfile
from pathlib import Path

import fsspec
import numpy as np
import pytest

from nczarr.errors import InvalidKeyError
from nczarr.store import DirectoryStore, FsspecStore, MemoryStore, ZipStore
from nczarr.store.base import Store, merge_ranges, split_ranges
from nczarr.zarr import create_array, open_array

VALUE = bytes(range(256)) * 64  # 16 KiB


def test_merge_ranges() -> None:
    assert merge_ranges([(10, 5), (0, 4), (15, 1)], gap=0) == [(0, 4), (10, 6)]
    assert merge_ranges([(0, 4), (5, 1)], gap=0) == [(0, 4), (5, 1)]
    assert merge_ranges([(0, 4), (5, 1)], gap=1) == [(0, 6)]
    assert merge_ranges([(0, 10), (2, 3)], gap=0) == [(0, 10)]  # inside another
    assert merge_ranges([(0, 4), (10_000, 4)]) == [(0, 4), (10_000, 4)]
    assert merge_ranges([]) == []


def test_split_ranges() -> None:
    ranges = [(10, 5), (0, 4), (15, 1)]
    merged = merge_ranges(ranges, gap=0)
    values = [VALUE[o : o + n] for o, n in merged]
    assert split_ranges(ranges, merged, values) == [VALUE[10:15], VALUE[0:4], VALUE[15:16]]


def _stores(tmp_path: Path) -> dict[str, Store]:
    directory = DirectoryStore(tmp_path / "dir")
    directory.set("a/b", VALUE)
    memory = MemoryStore()
    memory.set("a/b", VALUE)
    archive = tmp_path / "x.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a/b", VALUE, compress_type=zipfile.ZIP_STORED)
    remote = FsspecStore("memory://ranges-test")
    remote.set("a/b", VALUE)
    return {"directory": directory, "memory": memory, "zip": ZipStore(archive, mode="r"), "fsspec": remote}


@pytest.fixture
def stores(tmp_path: Path) -> dict[str, Store]:
    found = _stores(tmp_path)
    yield found
    fsspec.filesystem("memory").rm("/ranges-test", recursive=True)


@pytest.mark.parametrize("kind", ["directory", "memory", "zip", "fsspec"])
def test_get_ranges(stores: dict[str, Store], kind: str) -> None:
    store = stores[kind]
    ranges = [(100, 10), (0, 3), (110, 5), (16_380, 100), (9_000, 0)]
    assert store.get_ranges("a/b", ranges) == [VALUE[100:110], VALUE[0:3], VALUE[110:115], VALUE[16_380:], b""]
    assert store.get_ranges("a/none", [(0, 4)]) is None
    found = store.get_ranges_many({"a/b": [(1, 2)], "a/none": [(0, 1)]})
    assert found == {"a/b": [VALUE[1:3]]}
    with pytest.raises(InvalidKeyError):
        store.get_ranges("../a", [(0, 1)])
    with pytest.raises(InvalidKeyError):
        store.get_ranges("a/b", [(-1, 2)])


class CountingStore(MemoryStore):
    """A memory store that counts what is read: whole values and ranged bytes."""

    def __init__(self) -> None:
        super().__init__()
        self.whole = 0
        self.ranged = 0

    def _get(self, key: str, byte_range: tuple[int, int | None] | None) -> bytes | None:
        value = super()._get(key, byte_range)
        if value is not None and "/c/" in key:
            if byte_range is None or byte_range[1] is None or byte_range[1] > len(value) * 2:
                self.whole += len(value)
            else:
                self.ranged += len(value)
        return value


def test_point_series_reads_only_its_bytes() -> None:
    store = CountingStore()
    values = np.arange(20 * 30 * 40, dtype="f8").reshape(20, 30, 40)
    a = create_array(store, "v", shape=values.shape, dtype="f8", chunks=(1, 30, 40))
    a[...] = values
    a.close()
    store.whole = store.ranged = 0
    b = open_array(store, "v")
    assert np.array_equal(b[:, 7, 11], values[:, 7, 11])
    assert (store.whole, store.ranged) == (0, 20 * 8)


def test_adjacent_ranges_are_merged(tmp_path: Path) -> None:
    calls: list[list[tuple[int, int]]] = []

    class Recording(DirectoryStore):
        def _read_ranges(self, key: str, ranges: list[tuple[int, int]]) -> list[bytes] | None:
            calls.append(ranges)
            return super()._read_ranges(key, ranges)

    values = np.arange(8 * 50 * 60, dtype="i2").reshape(8, 50, 60)
    a = create_array(Recording(tmp_path), "v", shape=values.shape, dtype="i2", chunks=(8, 50, 60))
    a[...] = values
    a.close()
    b = open_array(Recording(tmp_path), "v")
    # rows 3 of every plane: 8 ranges of 120 bytes, 6,000 bytes apart: apart
    assert np.array_equal(b[:, 3, :], values[:, 3, :])
    assert calls[-1] == [(k * 6000 + 360, 120) for k in range(8)]
    # columns 2-3 of rows 10-12 in plane 1: 3 ranges 120 bytes apart: one read
    assert np.array_equal(b[1, 10:13, 2:4], values[1, 10:13, 2:4])
    assert calls[-1] == [(6000 + 10 * 120 + 4, 2 * 120 + 4)]


SELECTIONS = [
    np.s_[:, 6, 9],
    np.s_[2, 1:12:3, [0, 5, 16]],
    np.s_[[1, 4, 6], 3, :],
    np.s_[::-2, 2:3, 5],
    np.s_[..., 0],
    np.s_[0],
    np.s_[1, 2, 3],
    np.s_[[6, 0, 3], [12, 0], [16, 1, 2]],
    np.s_[:, :, 3:4],
]


def _expected(values: np.ndarray, selection: tuple[object, ...]) -> np.ndarray:
    """Orthogonal indexing with numpy: one axis at a time."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    if Ellipsis in selection:
        i = selection.index(Ellipsis)
        selection = selection[:i] + (slice(None),) * (values.ndim - len(selection) + 1) + selection[i + 1 :]
    selection = selection + (slice(None),) * (values.ndim - len(selection))
    out = values
    axis = 0
    for s in selection:
        if isinstance(s, int):
            out = np.take(out, s, axis=axis)
            continue
        out = out[(slice(None),) * axis + (s,)]
        axis += 1
    return out


@pytest.mark.parametrize("kind", ["directory", "memory", "zip", "fsspec"])
def test_partial_reads_in_every_store(tmp_path: Path, kind: str) -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(size=(7, 13, 17)).astype("f4")
    stores = {
        "directory": lambda: DirectoryStore(tmp_path / "d"),
        "memory": MemoryStore,
        "zip": lambda: ZipStore(tmp_path / "z.zip", mode="a"),
        "fsspec": lambda: FsspecStore("memory://partial-test"),
    }
    store = stores[kind]()
    try:
        a = create_array(store, "v", shape=values.shape, dtype="f4", chunks=(3, 5, 4), fill_value=-9)
        a[...] = values
        a[:, :, 8:12] = -9  # absent chunks read as fill
        a.close()
        values[:, :, 8:12] = -9
        b = open_array(store, "v")
        for selection in SELECTIONS:
            assert np.array_equal(b[selection], _expected(values, selection)), selection
    finally:
        store.close()
        if kind == "fsspec":
            fsspec.filesystem("memory").rm("/partial-test", recursive=True)


def test_short_chunk_is_an_error() -> None:
    store = MemoryStore()
    a = create_array(store, "v", shape=(10, 100), dtype="f4", chunks=(10, 100))
    a[...] = 1
    a.close()
    store.set("v/c/0/0", store.get("v/c/0/0")[:100])
    with pytest.raises(ValueError, match="v/c/0/0"):
        open_array(store, "v")[9, 99]


def test_many_ranges_of_one_chunk() -> None:
    """A column of a chunk: one range per row (1,000, within PART_MAX_RANGES)."""
    store = CountingStore()
    values = np.arange(100 * 10 * 10, dtype="i2").reshape(100, 10, 10)
    a = create_array(store, "v", shape=values.shape, dtype="i2", chunks=values.shape)
    a[...] = values
    a.close()
    store.whole = store.ranged = 0
    b = open_array(store, "v")
    assert np.array_equal(b[:, :, 3], values[:, :, 3])
    assert np.array_equal(b[::7, 2:9, [1, 8]], values[::7, 2:9][:, :, [1, 8]])
    assert store.whole == 0
