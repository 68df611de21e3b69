"""The one concurrency setting (``nczarr.config``: ``threads`` / ``NCZARR_THREADS``): the
pool that encodes, decodes and stores chunks follows it, one thread works inline, and
every setting writes the same bytes and reads the same values."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from nczarr import config
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.zarr import create_array, open_array
from nczarr.zarr.codecs import workers
from nczarr.zarr.codecs.pipeline import Pipeline

ZLIB = [{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}, {"name": "gzip", "configuration": {"level": 1}}]
BLOSC = [{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "shuffle"}}]


def data() -> np.ndarray:
    return np.arange(40 * 30 * 20, dtype="f4").reshape(40, 30, 20) % 977


def test_default_is_every_core_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.THREADS_VARIABLE, raising=False)
    assert config.threads() == config.THREADS_PER_CORE * config._cores() >= 2


def test_setting_environment_and_errors(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(config.THREADS_VARIABLE, "3")
    assert config.threads() == 3
    with config.settings(threads=5):  # the setting wins over the environment
        assert config.threads() == 5
    assert config.threads() == 3
    monkeypatch.setenv(config.THREADS_VARIABLE, "many")
    with caplog.at_level(logging.WARNING):
        assert config.threads() == config.THREADS_PER_CORE * config._cores()
    assert "NCZARR_THREADS='many'" in caplog.text
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="threads must be"):
            config.configure(threads=bad)  # type: ignore[arg-type]


def test_pool_follows_the_setting() -> None:
    with config.settings(threads=3):
        assert workers.executor()._max_workers == 3
    with config.settings(threads=2):
        assert workers.executor()._max_workers == 2


def _threads_used(monkeypatch: pytest.MonkeyPatch, *methods: str) -> set[str]:
    names: set[str] = set()
    for method in methods:
        original = getattr(Pipeline, method)

        def recording(self: Pipeline, *args: object, original: Callable[..., object] = original) -> object:
            names.add(threading.current_thread().name)
            return original(self, *args)

        monkeypatch.setattr(Pipeline, method, recording)
    return names


@pytest.mark.parametrize("codecs", [ZLIB, BLOSC, None], ids=["zlib", "blosc", "raw"])
def test_chunks_work_in_the_pool(codecs: list[dict[str, object]] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    encoders = _threads_used(monkeypatch, "encode")
    values = data()
    with config.settings(threads=4):
        a = create_array(MemoryStore(), "v", shape=values.shape, dtype="f4", chunks=(4, 10, 20), compressors=codecs)
        a[...] = values
        a.close()
        assert np.array_equal(a[...], values)
    assert encoders and all(name.startswith("nczarr") for name in encoders)


def test_one_thread_works_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    encoders = _threads_used(monkeypatch, "encode")
    decoders = _threads_used(monkeypatch, "decode", "decode_into")
    values = data()
    with config.settings(threads=1):
        a = create_array(MemoryStore(), "v", shape=values.shape, dtype="f4", chunks=(4, 10, 20), compressors=ZLIB)
        a[...] = values
        a.close()
        assert np.array_equal(a[...], values)
    assert encoders == decoders == {threading.current_thread().name}


@pytest.mark.parametrize("codecs", [ZLIB, None], ids=["zlib", "raw"])
def test_every_setting_writes_the_same_bytes(codecs: list[dict[str, object]] | None, tmp_path: Path) -> None:
    values = data()
    stored = []
    for threads in (1, 2, 7):
        root = tmp_path / str(threads)
        with config.settings(threads=threads):
            a = create_array(DirectoryStore(root), "v", shape=values.shape, dtype="f4", chunks=(3, 7, 20),
                             compressors=codecs)
            a[...] = values
            a[5:9, 2] = -1.0  # partial chunks: the write-back cache, then rewritten
            a.close()
        stored.append({p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()})
    assert stored[0] == stored[1] == stored[2]
    expected = values.copy()
    expected[5:9, 2] = -1.0
    assert np.array_equal(open_array(DirectoryStore(tmp_path / "7"), "v")[...], expected)


def test_many_readers_at_once(tmp_path: Path) -> None:
    values = data()
    a = create_array(DirectoryStore(tmp_path), "v", shape=values.shape, dtype="f4", chunks=(4, 10, 20), compressors=ZLIB)
    a[...] = values
    a.close()
    reader = open_array(DirectoryStore(tmp_path, read_only=True), "v")
    selections = [np.s_[i : i + 9, :, i % 20] for i in range(30)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda s: reader[s], selections))
    for s, got in zip(selections, results):
        assert np.array_equal(got, values[s])


def test_empty_chunks_are_deleted_by_parallel_writes(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    a = create_array(store, "v", shape=(40,), dtype="i4", chunks=(4,), fill_value=0)
    a[...] = np.arange(1, 41)
    a.close()
    assert len(list(store.list_prefix("v/c/"))) == 10
    a[...] = 0
    a.close()
    assert list(store.list_prefix("v/c/")) == []


def test_inner_chunks_of_a_shard_work_in_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """One shard written and read, whole and in part: its inner chunks are coded on the
    pool's threads (the shard index is decoded by the caller)."""
    encoders = _threads_used(monkeypatch, "encode")
    decoders = _threads_used(monkeypatch, "decode", "decode_into")
    values = data()
    store = MemoryStore()
    with config.settings(threads=3):
        a = create_array(store, "v", shape=values.shape, dtype="f4", chunks=(4, 10, 20), shards=values.shape,
                         compressors=ZLIB)
        a[...] = values
        a.close()
        assert np.array_equal(open_array(store, "v")[...], values)
        assert np.array_equal(open_array(store, "v")[3:30, 4, 2:19], values[3:30, 4, 2:19])
    pool = {name for name in encoders | decoders if name.startswith("nczarr")}
    assert len(pool) > 1
