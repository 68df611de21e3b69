"""Behaviour of the engine's Array: selections, fill, chunk skipping, resize, the write-back
cache, concurrency and errors."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from nczarr.errors import CodecError, NCZarrError, ReadOnlyError, SelectionError
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.zarr import create_array, open_array
from nczarr.zarr.array import Array

FORMATS = [2, 3]


def make(store=None, *, zarr_format=3, shape=(10, 7), chunks=(4, 3), dtype="f4", fill_value=-1, **kw):
    store = MemoryStore() if store is None else store
    return create_array(store, "a", zarr_format=zarr_format, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill_value, **kw)


def outer_index(ref: np.ndarray, selection) -> np.ndarray:
    """numpy's result for an orthogonal selection, one dimension at a time."""
    sel = selection if isinstance(selection, tuple) else (selection,)
    if any(s is Ellipsis for s in sel):
        i = next(i for i, s in enumerate(sel) if s is Ellipsis)
        sel = sel[:i] + (slice(None),) * (ref.ndim - len(sel) + 1) + sel[i + 1 :]
    out, axis = ref, 0
    for s in sel:
        out = out[(slice(None),) * axis + (s,)]
        axis += not isinstance(s, int)
    return out


def reference(shape=(10, 7), dtype="f4"):
    return np.arange(np.prod(shape), dtype=dtype).reshape(shape)


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize(
    "selection",
    [
        (slice(None),),
        (3,),
        (-1, -2),
        (slice(1, 9, 3), slice(None, None, 2)),
        (slice(None, None, -1),),
        (slice(8, 1, -3), slice(6, None, -4)),
        ([7, 1, 1, -2], slice(None)),
        ([2, 0], [6, 0, 3]),
        (np.array([True, False] * 5), [1]),
        (Ellipsis, 2),
        (2, Ellipsis),
        (slice(20, 30),),
        ([],),
    ],
    ids=repr,
)
def test_read_matches_numpy_orthogonal_indexing(zarr_format, selection):
    a = make(zarr_format=zarr_format)
    a[...] = reference()
    np.testing.assert_array_equal(a[selection], outer_index(reference(), selection))


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_partial_writes_and_broadcasting(zarr_format):
    a = make(zarr_format=zarr_format)
    ref = np.full((10, 7), -1, dtype="f4")
    a[1:9:2, [5, 0]] = [[1, 2]]
    ref[1:9:2][:, [5, 0]] = [[1, 2]]
    a[::-1, 3] = np.arange(10)
    ref[::-1, 3] = np.arange(10)
    a[4] = 7.5
    ref[4] = 7.5
    np.testing.assert_array_equal(a[:], ref)
    a.flush()
    np.testing.assert_array_equal(open_array(a.store, "a")[:], ref)


def test_missing_chunks_read_as_fill_and_all_fill_chunks_are_not_stored():
    store = MemoryStore()
    a = make(store)
    a[0:4, 0:3] = 5  # exactly chunk (0, 0)
    a[4:8, 0:3] = -1  # exactly chunk (1, 0), all fill
    keys = set(store.list())
    assert "a/c/0/0" in keys and "a/c/1/0" not in keys
    assert a[5, 1] == -1 and a[9, 6] == -1
    a[0:4, 0:3] = -1  # overwriting with fill deletes the stored chunk
    assert "a/c/0/0" not in set(store.list())


def test_write_empty_chunks_stores_fill_chunks():
    store = MemoryStore()
    a = make(store, write_empty_chunks=True)
    a[0:4, 0:3] = -1
    assert "a/c/0/0" in set(store.list())


def test_nan_fill_chunks_are_skipped():
    store = MemoryStore()
    a = make(store, fill_value=float("nan"))
    a[0:4, 0:3] = np.nan
    assert not [k for k in store.list() if "/c/" in k]
    assert np.isnan(a[9, 6])


def test_edge_chunks_are_padded_with_fill():
    store = MemoryStore()
    a = make(store, shape=(5,), chunks=(4,), dtype="i2", fill_value=-7)
    a[:] = np.arange(5)
    raw = np.frombuffer(store.get("a/c/1"), dtype="<i2")
    assert raw.tolist() == [4, -7, -7, -7]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_resize_deletes_chunks_outside_and_resets_cut_edges(zarr_format):
    store = MemoryStore()
    a = make(store, zarr_format=zarr_format)
    a[:] = reference()
    before = len(list(store.list()))
    a.resize(5, 4)
    assert a.shape == (5, 4)
    assert len(list(store.list())) < before
    a.resize(10, 7)
    expected = np.full((10, 7), -1, dtype="f4")
    expected[:5, :4] = reference()[:5, :4]
    np.testing.assert_array_equal(a[:], expected)
    assert open_array(store, "a").shape == (10, 7)


def test_append_grows_the_first_dimension():
    a = make(shape=(0, 3), chunks=(2, 3))
    for i in range(5):
        a.append(np.full((1, 3), i))
    assert a.shape == (5, 3)
    assert a[:, 0].tolist() == [0, 1, 2, 3, 4]


def test_write_back_cache_holds_small_writes_until_flush():
    store = MemoryStore()
    a = make(store, shape=(1000,), chunks=(100,))
    a[:] = 0
    a[5] = 1
    a[6] = 2
    assert open_array(store, "a")[5] == 0  # not written yet
    assert a[5] == 1  # but visible through the array
    a.flush()
    assert open_array(store, "a")[5:7].tolist() == [1, 2]


def test_dirty_chunks_are_flushed_when_the_array_is_collected():
    store = MemoryStore()
    a = make(store, shape=(1000,), chunks=(100,))
    a[5] = 1
    del a
    gc.collect()
    assert open_array(store, "a")[5] == 1


def test_cache_evicts_dirty_chunks_to_the_store_when_full():
    store = MemoryStore()
    a = make(store, shape=(1000,), chunks=(100,), dtype="f8", cache_bytes=2 * 800)
    for i in range(0, 1000, 100):
        a[i] = i
    # Ten dirty chunks, room for two: at least eight are already in the store.
    stored = open_array(store, "a")[::100]
    assert (stored == np.arange(0, 1000, 100)).sum() >= 8
    a.flush()
    assert open_array(store, "a")[::100].tolist() == list(range(0, 1000, 100))


@pytest.mark.parametrize("on_disk", [False, True], ids=["memory", "directory"])
def test_scalar_array(on_disk, tmp_path):
    store = DirectoryStore(tmp_path) if on_disk else MemoryStore()
    a = make(store, shape=(), chunks=(), dtype="i8", fill_value=3)
    assert open_array(store, "a")[()] == 3
    a[()] = 42
    assert open_array(store, "a")[...] == 42 and a.nchunks == 1


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_fortran_order(zarr_format):
    store = MemoryStore()
    a = make(store, zarr_format=zarr_format, order="F", dtype="i4")
    a[:] = reference(dtype="i4")
    np.testing.assert_array_equal(open_array(store, "a")[:], reference(dtype="i4"))
    chunk = a.pipeline.decode(store.get(a.chunk_key((0, 0))))
    np.testing.assert_array_equal(chunk, reference(dtype="i4")[:4, :3])


def test_strings_round_trip():
    a = make(shape=(5,), chunks=(2,), dtype=object, fill_value="")
    a[:3] = ["α", "b b", ""]
    assert a[:].tolist() == ["α", "b b", "", "", ""]


def test_one_string_fills_whole_chunks_and_scalars():
    """A broadcast value is a read-only view, and a 0-d object array indexed by () gives its
    element: both used to fail in the vlen codec or the chunk assembly."""
    a = make(shape=(4,), chunks=(2,), dtype=object, fill_value="")
    a[:] = "same"
    assert a[:].tolist() == ["same"] * 4
    s = make(shape=(), chunks=(), dtype=object, fill_value="")
    s[...] = "only"
    assert s[...] == "only"
    a[1] = np.array("one", dtype=object)  # one element: the 0-d array's item is stored
    assert a[:].tolist() == ["same", "one", "same", "same"]


def test_compressed_chunks_decode_concurrently(tmp_path):
    gzip = {"name": "gzip", "configuration": {"level": 1}}
    a = make(DirectoryStore(tmp_path), shape=(64, 64), chunks=(8, 8), dtype="f8", compressors=[gzip])
    ref = np.random.default_rng(0).standard_normal((64, 64))
    a[:] = ref
    np.testing.assert_array_equal(open_array(DirectoryStore(tmp_path), "a")[:], ref)


def test_raw_reads_go_straight_into_the_result(tmp_path):
    store = DirectoryStore(tmp_path)
    a = make(store, shape=(8, 6), chunks=(2, 6), dtype="<f4")
    a[:] = reference((8, 6))
    b = open_array(store, "a")
    assert b.pipeline.is_raw
    np.testing.assert_array_equal(b[:], reference((8, 6)))
    np.testing.assert_array_equal(b[::-1], reference((8, 6))[::-1])


def test_selection_errors_name_the_problem():
    a = make()
    with pytest.raises(SelectionError, match="index 10 is out of bounds for dimension 0 of size 10"):
        a[10]
    with pytest.raises(IndexError, match=r"index -8 is out of bounds for dimension 1 of size 7"):
        a[0, [1, -8]]
    with pytest.raises(SelectionError, match=r"boolean index of shape \(3,\) does not match dimension 0 of size 10"):
        a[np.array([True, False, True])]
    with pytest.raises(SelectionError, match="too many indices: 3 for an array of 2 dimension"):
        a[0, 0, 0]
    with pytest.raises(SelectionError, match="only have a single ellipsis"):
        a[..., ...]
    with pytest.raises(SelectionError, match=r"cannot assign a value of shape \(3,\) to a selection of shape \(10, 7\)"):
        a[:] = [1, 2, 3]


def test_read_only_array_refuses_writes():
    store = MemoryStore()
    make(store)
    b = open_array(store, "a", mode="r")
    with pytest.raises(ReadOnlyError, match="'a' is open read-only"):
        b[0, 0] = 1
    with pytest.raises(ReadOnlyError):
        b.resize(3, 3)
    with pytest.raises(ReadOnlyError):
        b.attrs["x"] = 1


def test_corrupt_chunk_error_names_the_key():
    store = MemoryStore()
    a = make(store, shape=(4,), chunks=(4,), dtype="f4")
    a[:] = 1
    store.set("a/c/0", b"\x00" * 3)
    with pytest.raises(CodecError, match=r"chunk 'a/c/0' of array 'a'") as info:
        open_array(store, "a")[:]
    assert isinstance(info.value, NCZarrError)


def test_attributes_are_written_at_once():
    store = MemoryStore()
    a = make(store)
    a.attrs["units"] = "K"
    a.attrs.update({"long_name": "temperature", "valid_range": [0, 400]})
    del a.attrs["units"]
    assert dict(open_array(store, "a").attrs) == {"long_name": "temperature", "valid_range": [0, 400]}


def test_reading_part_of_a_shard_fetches_only_what_it_needs(recording_store):
    store = recording_store()
    a = make(store, shape=(64, 64), chunks=(8, 8), shards=(64, 64), dtype="f8", fill_value=0)
    ref = np.random.default_rng(1).standard_normal((64, 64))
    a[:] = ref
    b = open_array(store, "a")
    store.reset()
    np.testing.assert_array_equal(b[3, [60, 2]], ref[3, [60, 2]])
    np.testing.assert_array_equal(b[10:20, 5], ref[10:20, 5])
    # Two inner chunks for the first read, two for the second, plus the index each time:
    # far less than the 32 KiB shard.
    assert store.bytes_read < 8 * 1024
    assert b[:].tolist() == ref.tolist()


def test_dirty_chunks_are_flushed_at_interpreter_exit(tmp_path):
    import subprocess
    import sys

    script = (
        "from nczarr.store import DirectoryStore\n"
        "from nczarr.zarr import create_array\n"
        f"a = create_array(DirectoryStore({str(tmp_path)!r}), 'a', shape=(1000,), chunks=(100,), dtype='i4')\n"
        "a[5] = 7\n"
        "a[950] = 8\n"  # two dirty chunks: the exit flush must not need the thread pool
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert open_array(DirectoryStore(tmp_path), "a")[[5, 950]].tolist() == [7, 8]


def test_concurrent_reads_from_many_threads_agree(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    ref = np.random.default_rng(2).standard_normal((40, 30))
    zstd = {"name": "zstd", "configuration": {"level": 1}}
    a = make(DirectoryStore(tmp_path), shape=(40, 30), chunks=(7, 4), dtype="f8", compressors=[zstd])
    a[:] = ref
    b = open_array(DirectoryStore(tmp_path), "a")
    selections = [(slice(i % 40, None, 1 + i % 3), [i % 30, (7 * i) % 30]) for i in range(200)] + [
        (i % 40, i % 30) for i in range(200)
    ]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda s: b[s], selections))
    for s, got in zip(selections, results):
        np.testing.assert_array_equal(got, outer_index(ref, s))


def test_stored_raw_chunks_are_rewritten_in_place_and_others_replaced(tmp_path):
    """Replacing a file costs far more than writing over it; an uncompressed chunk written
    over in place keeps every element whole (see Store.overwrite), a compressed one cannot."""
    store = DirectoryStore(tmp_path)
    raw = make(store, shape=(8,), chunks=(4,), dtype="f8")
    packed = create_array(store, "z", zarr_format=3, shape=(8,), chunks=(4,), dtype="f8", fill_value=-1,
                          compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    for array in (raw, packed):
        array[:] = np.arange(8)
    raw_chunk, packed_chunk = tmp_path / "a" / "c" / "0", tmp_path / "z" / "c" / "0"
    before = raw_chunk.stat().st_ino, packed_chunk.stat().st_ino
    for array in (raw, packed):
        array[1] = 10
        array.flush()
    assert raw_chunk.stat().st_ino == before[0]
    assert packed_chunk.stat().st_ino != before[1]
    for name in ("a", "z"):
        assert open_array(store, name)[:].tolist() == [0, 10, 2, 3, 4, 5, 6, 7]


def test_write_behind_reads_its_own_writes_and_reports_failures(tmp_path):
    """Encoded chunks stored behind the caller: reads and partial writes of pending chunks
    wait for them, other readers see them after flush, and a failed store surfaces at flush.
    Raw chunks are stored before the write returns."""
    store = DirectoryStore(tmp_path)
    ref = np.zeros((40, 30), "f8")
    gzip = [{"name": "gzip", "configuration": {"level": 1}}]
    metadata = create_array(store, "b", zarr_format=3, shape=ref.shape, chunks=(4, 3), dtype="f8", fill_value=0,
                            compressors=gzip).metadata
    a = Array(store, "b", metadata, write_behind=True)
    rng = np.random.default_rng(1)
    for _ in range(200):
        i, j = rng.integers(0, 36), rng.integers(0, 27)
        block = rng.random((4, 3))
        a[i : i + 4, j : j + 3] = block  # whole chunks when aligned, partial otherwise
        ref[i : i + 4, j : j + 3] = block
        if rng.random() < 0.2:
            np.testing.assert_array_equal(a[:], ref)
    a.flush()
    np.testing.assert_array_equal(open_array(store, "b")[:], ref)

    buffer = np.ones((4, 3))
    a[0:4, 0:3] = buffer  # a whole chunk: its bytes are taken before the call returns
    buffer[:] = 7
    a.flush()
    assert (open_array(store, "b")[0:4, 0:3] == 1).all()

    raw_metadata = create_array(store, "r", zarr_format=3, shape=(8,), chunks=(4,), dtype="f8", fill_value=0).metadata
    raw = Array(store, "r", raw_metadata, write_behind=True)
    raw[0:4] = 5.0
    assert open_array(store, "r")[:].tolist() == [5.0] * 4 + [0.0] * 4  # no flush needed

    class Failing(MemoryStore):
        def _set_many(self, items):
            raise OSError("disk full")

    failing = Failing()
    c = Array(failing, "c", a.metadata, write_behind=True)
    c[0:4, 0:3] = 1.0  # a whole chunk: stored behind the caller
    with pytest.raises(OSError, match="disk full"):
        c.flush()


def test_write_behind_encodes_behind_the_caller(tmp_path, monkeypatch):
    """A compressed chunk is encoded after the write returns (so records appended one by
    one are compressed on other cores); a codec's failure then surfaces at flush."""
    store = DirectoryStore(tmp_path)
    metadata = create_array(store, "z", zarr_format=3, shape=(8,), chunks=(4,), dtype="f8", fill_value=0,
                            compressors=[{"name": "gzip", "configuration": {"level": 1}}]).metadata
    a = Array(store, "z", metadata, write_behind=True)

    def fail(key, chunk):
        raise CodecError("no room in the codec")

    monkeypatch.setattr(a._writer, "encode", fail)
    a[0:4] = 1.0  # returns: the encoding has not happened yet
    with pytest.raises(CodecError, match="no room in the codec"):
        a.flush()
