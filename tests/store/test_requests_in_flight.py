"""Requests to object stores: the bound on requests in flight (``nczarr.config.requests``),
S3's connection pool and one request per document, byte ranges merged, and chunks fetched in
batches while the last batch decodes; against moto's S3 server (test credentials only)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import s3fs
from motoserver import moto_s3

import nczarr
from nczarr import config
from nczarr.errors import ArgumentError
from nczarr.store import FsspecStore
from nczarr.store.fsspec import REMOTE_RANGE_MERGE_GAP, with_connections
from nczarr.zarr import create_array, open_array

BUCKET = "nczarr-requests"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with moto_s3(tmp_path_factory.mktemp("aws"), {BUCKET: None}) as url:
        yield url


def _store(endpoint: str, **options: object) -> FsspecStore:
    prefix = uuid.uuid4().hex[:8]
    return FsspecStore(f"s3://{BUCKET}/{prefix}", storage_options={"endpoint_url": endpoint, **options})


# -- the setting ---------------------------------------------------------------------------
def test_requests_setting_environment_and_default(monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv(config.REQUESTS_VARIABLE, raising=False)
    assert config.requests() == config.DEFAULT_REQUESTS
    monkeypatch.setenv(config.REQUESTS_VARIABLE, "7")
    assert config.requests() == 7
    with config.settings(requests=3):
        assert config.requests() == 3  # the setting wins over the variable
    assert config.requests() == 7
    monkeypatch.setenv(config.REQUESTS_VARIABLE, "many")
    with caplog.at_level(logging.WARNING, logger="nczarr.config"):
        assert config.requests() == config.DEFAULT_REQUESTS
    assert "NCZARR_REQUESTS='many'" in caplog.text
    for bad in (0, -1, True, 2.5, "4"):
        with pytest.raises(ArgumentError, match="requests must be an integer"):
            config.configure(requests=bad)  # type: ignore[arg-type]


def test_s3_gets_a_connection_pool_of_the_bound_and_one_request_per_object() -> None:
    with config.settings(requests=48):
        options = with_connections("s3://b/k", {"endpoint_url": "http://x"})
        assert options == {"endpoint_url": "http://x", "config_kwargs": {"max_pool_connections": 48},
                           "max_concurrency": 1}
        mine = with_connections("s3://b/k", {"config_kwargs": {"max_pool_connections": 5, "retries": {}},
                                             "max_concurrency": 4})
        assert mine == {"config_kwargs": {"max_pool_connections": 5, "retries": {}}, "max_concurrency": 4}
        assert with_connections("memory://x", {"a": 1}) == {"a": 1}
        assert with_connections("gs://b/k", None) == {}


# -- against moto --------------------------------------------------------------------------
def _record(monkeypatch: pytest.MonkeyPatch, store: FsspecStore, name: str) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    original = getattr(store.fs, name)

    def recording(*args: Any, **kwargs: Any) -> Any:
        calls.append({"args": args, **kwargs})
        return original(*args, **kwargs)

    monkeypatch.setattr(store.fs, name, recording)
    return calls


def test_batches_carry_the_bound(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(endpoint)
    assert isinstance(store.fs, s3fs.S3FileSystem)
    assert store.fs.max_concurrency == 1
    values = {f"k{i}": bytes([i]) * 100 for i in range(12)}
    pipes = _record(monkeypatch, store, "pipe")
    cats = _record(monkeypatch, store, "cat")
    ranges = _record(monkeypatch, store, "cat_ranges")
    with config.settings(requests=5):
        store.set_many(values)
        assert store.get_many([*values, "absent"]) == values
        assert store.get_many(list(values), (10, 5)) == {k: v[10:15] for k, v in values.items()}
    assert [c["batch_size"] for c in pipes + cats + ranges] == [5, 5, 5]


def test_nearby_ranges_are_one_request(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(endpoint)
    value = bytes(range(256)) * 12_000  # 3 MB
    store.set("v", value)
    calls = _record(monkeypatch, store, "cat_ranges")
    apart = REMOTE_RANGE_MERGE_GAP // 2
    wanted = [(0, 4), (apart, 4), (2 * apart, 4), (3 * apart + REMOTE_RANGE_MERGE_GAP + 1, 4)]
    assert store.get_ranges("v", wanted) == [value[o : o + n] for o, n in wanted]
    (call,) = calls
    assert len(call["args"][0]) == 2  # the first three within the gap, the last apart


@pytest.mark.parametrize("requests", [1, 3, 64])
def test_arrays_read_in_overlapping_batches(endpoint: str, requests: int) -> None:
    values = np.arange(20 * 12 * 6, dtype="f4").reshape(20, 12, 6)
    store = _store(endpoint)
    array = create_array(store, "v", shape=values.shape, dtype="f4", chunks=(2, 4, 6),
                         compressors=[{"name": "blosc", "configuration": {"cname": "zlib", "clevel": 1}}])
    array[...] = values
    array.close()
    with config.settings(requests=requests):
        reader = open_array(_reopen(store), "v")
        assert np.array_equal(reader[...], values)
        assert np.array_equal(reader[:, 5, 3], values[:, 5, 3])
        assert np.array_equal(reader[7], values[7])


def _reopen(store: FsspecStore) -> FsspecStore:
    return FsspecStore(store.fs, path=store.root, read_only=True)


def test_a_point_series_fetches_whole_chunks_when_its_ranges_span_them(endpoint: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.arange(40 * 30 * 24, dtype="f4").reshape(40, 30, 24)
    store = _store(endpoint)
    array = create_array(store, "v", shape=values.shape, dtype="f4", chunks=(10, 30, 24))
    array[...] = values
    array.close()
    reader = open_array(_reopen(store), "v")
    ranges = _record(monkeypatch, reader.store, "cat_ranges")  # type: ignore[arg-type]
    assert np.array_equal(reader[:, 3, 4], values[:, 3, 4])
    (call,) = ranges
    starts, ends = call["args"][1], call["args"][2]
    assert len(starts) == 4 and all(s == 0 for s in starts)  # one request per chunk, whole
    assert all(e >= 10 * 30 * 24 * 4 for e in ends)
    assert np.array_equal(reader[:2, 3, 4], values[:2, 3, 4])


def test_opening_a_dataset_reads_each_document_once(endpoint: str, tmp_path: Path) -> None:
    url = f"s3://{BUCKET}/{uuid.uuid4().hex[:8]}"
    options = {"endpoint_url": endpoint}
    with nczarr.Dataset(url, "w", storage_options=options) as ds:
        ds.createDimension("x", 3)
        for i in range(20):
            ds.createVariable(f"v{i}", "f4", ("x",))[:] = [i, i, i]
    info: list[str] = []
    original = s3fs.S3FileSystem._info

    async def counting(self: s3fs.S3FileSystem, path: str, **kwargs: Any) -> Any:
        info.append(path)
        return await original(self, path, **kwargs)

    with pytest.MonkeyPatch.context() as patch, config.settings(s3_client="fsspec"):  # s3fs's requests
        patch.setattr(s3fs.S3FileSystem, "_info", counting)
        with nczarr.Dataset(url, storage_options=options) as ds:
            assert sorted(ds.variables) == sorted(f"v{i}" for i in range(20))
            assert ds["v7"][:].tolist() == [7, 7, 7]
    # no HEAD (or listing) before each document: only the bucket's check
    assert [p for p in info if "/" in p.strip("/")] == []
