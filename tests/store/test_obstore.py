"""ObstoreStore (S3 through obstore) against moto's S3 server, beside FsspecStore (s3fs): which
client opens a URL, storage options mapped or refused, data written by one client (and by
zarr-python) read by the other, the bound on requests in flight, merged ranges, and hostile
input. The contract every store keeps is in test_contract.py (kinds s3-obstore, s3-fsspec).
obstore, s3fs and moto are test requirements: without them these tests fail, never skip."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import obstore
import pytest
import requests
import zarr
from conftest import S3_BUCKET
from obstore.store import S3Store

import nczarr
from nczarr import config
from nczarr.errors import ArgumentError, KeyNotFoundError, StoreError
from nczarr.store import FsspecStore, open_store
from nczarr.store.fsspec import REMOTE_RANGE_MERGE_GAP
from nczarr.store.obstore import ObstoreStore, OptionsNotMapped, s3_config
from nczarr.zarr import create_array, open_array


@pytest.fixture
def url() -> str:
    return f"s3://{S3_BUCKET}/{uuid.uuid4().hex[:12]}"


@pytest.fixture
def options(s3_endpoint: str) -> dict[str, object]:
    return {"endpoint_url": s3_endpoint}


def _fill(url: str, options: dict[str, object], fmt: str = "NCZARR") -> None:
    with nczarr.Dataset(url, "w", format=fmt, storage_options=options) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f4", ("t", "x"), chunksizes=(1, 3))
        v.units = "K"
        v[:] = np.arange(12, dtype="f4").reshape(4, 3)
        ds.createGroup("g").createVariable("c", "i2", ("x",))[:] = [5, 6, 7]


def _check(ds: nczarr.Dataset) -> None:
    assert ds["v"][:].tolist() == np.arange(12, dtype="f4").reshape(4, 3).tolist()
    assert ds["v"].units == "K"
    assert ds["g/c"][:].tolist() == [5, 6, 7]
    assert ds.dimensions["t"].isunlimited()


# -- which client ------------------------------------------------------------------------------
def test_s3_urls_open_with_obstore_and_either_client_can_be_forced(
    url: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(open_store(url, "a", storage_options=options), ObstoreStore)
    with config.settings(s3_client="fsspec"):
        assert isinstance(open_store(url, "a", storage_options=options), FsspecStore)
    monkeypatch.setenv(config.S3_CLIENT_VARIABLE, "fsspec")
    assert isinstance(open_store(url, "a", storage_options=options), FsspecStore)
    with config.settings(s3_client="obstore"):  # the setting wins over the variable
        assert isinstance(open_store(url, "a", storage_options=options), ObstoreStore)
    monkeypatch.setenv(config.S3_CLIENT_VARIABLE, "curl")
    assert config.s3_client() == "auto"
    with pytest.raises(ArgumentError, match="s3_client must be one of auto, obstore, fsspec"):
        config.configure(s3_client="boto")
    assert isinstance(open_store("memory://x", "a"), FsspecStore)  # other protocols: fsspec


def test_options_only_s3fs_takes_fall_back_to_fsspec_with_a_log_line(
    url: str, options: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    fsspec_only = {**options, "config_kwargs": {"retries": {"max_attempts": 2}}, "version_aware": False}
    with caplog.at_level(logging.INFO, logger="nczarr.store.open"):
        store = open_store(url, "a", storage_options=fsspec_only)
    assert isinstance(store, FsspecStore)
    assert "with s3fs, not obstore" in caplog.text
    assert "config_kwargs['retries'], 'version_aware' only s3fs takes" in caplog.text
    with config.settings(s3_client="obstore"), pytest.raises(StoreError, match="cannot open .* with obstore"):
        open_store(url, "a", storage_options=fsspec_only)


def test_storage_options_map_onto_obstore(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
                 "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    given = {"endpoint_url": "http://127.0.0.1:9", "key": "k", "secret": "s", "token": "t", "requester_pays": True,
             "client_kwargs": {"region_name": "eu-west-3"}, "skip_instance_cache": True,
             "config_kwargs": {"max_pool_connections": 64}, "max_concurrency": 1}
    location = s3_config("s3://bucket/a/b/", given)
    assert (location.bucket, location.prefix, location.url) == ("bucket", "a/b", "s3://bucket/a/b")
    assert location.settings == {"endpoint": "http://127.0.0.1:9", "access_key_id": "k", "secret_access_key": "s",
                                 "session_token": "t", "request_payer": True, "region": "eu-west-3"}
    assert location.client_options == {"allow_http": True}
    anonymous = s3_config("s3://bucket", {"anon": True, "client_kwargs": {"region_name": "us-west-2"}})
    assert anonymous.settings == {"skip_signature": True, "region": "us-west-2"} and anonymous.prefix == ""
    refusals = [
        ({"profile": "lab", "client_kwargs": {"region_name": "x"}}, "'profile' only s3fs takes"),
        ({"anon": True}, "no region named"),  # Amazon's endpoint: s3fs finds the bucket's region
        ({"endpoint_url": "http://h"}, "no credentials"),  # where only botocore looks
    ]
    for options, reason in refusals:
        with pytest.raises(OptionsNotMapped, match=reason):
            s3_config("s3://bucket/k", options)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    assert s3_config("s3://bucket/k", {"endpoint_url": "https://h"}).client_options == {}
    monkeypatch.setenv("AWS_SESSION_TOKEN", "t")
    with pytest.raises(OptionsNotMapped, match="AWS_SESSION_TOKEN"):
        s3_config("s3://bucket/k", {"endpoint_url": "http://h", "key": "k", "secret": "s"})
    assert s3_config("s3://bucket/k", {"endpoint_url": "http://h", "key": "k", "secret": "s", "token": "t"}).settings
    monkeypatch.setenv("AWS_PROFILE", "lab")
    with pytest.raises(OptionsNotMapped, match="AWS_PROFILE"):
        s3_config("s3://bucket/k", {"endpoint_url": "http://h"})
    with pytest.raises(OptionsNotMapped, match="not an s3://bucket/key URL"):
        s3_config("gs://bucket/k")


# -- one client reads what the other wrote ---------------------------------------------------------
@pytest.mark.parametrize(("writer", "reader"), [("obstore", "fsspec"), ("fsspec", "obstore")])
def test_a_dataset_written_by_one_client_reads_with_the_other(
    url: str, options: dict[str, object], writer: str, reader: str
) -> None:
    for fmt in ("NCZARR", "NCZARR_V2"):
        with config.settings(s3_client=writer):
            _fill(f"{url}/{fmt}", options, fmt)
        with config.settings(s3_client=reader):
            assert type(open_store(f"{url}/{fmt}", storage_options=options)).__name__ == f"{reader.title()}Store"
            with nczarr.Dataset(f"{url}/{fmt}", storage_options=options) as ds:
                _check(ds)
        with config.settings(s3_client=reader), nczarr.Dataset(f"{url}/{fmt}", "a", storage_options=options) as ds:
            ds["v"][4] = [12, 13, 14]
        with config.settings(s3_client=writer), nczarr.Dataset(f"{url}/{fmt}", storage_options=options) as ds:
            assert ds["v"].shape == (5, 3) and ds["v"][4].tolist() == [12, 13, 14]


def _zarr_obstore(url: str, endpoint: str, read_only: bool = False) -> zarr.storage.ObjectStore:
    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    store = S3Store(bucket, prefix=prefix, endpoint=endpoint, region="us-east-1", client_options={"allow_http": True})
    return zarr.storage.ObjectStore(store, read_only=read_only)


@pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")
def test_zarr_python_and_nczarr_read_each_other_through_obstore(url: str, options: dict[str, object],
                                                               s3_endpoint: str) -> None:
    values = np.arange(6 * 8, dtype="i4").reshape(6, 8)
    theirs = zarr.create_array(store=_zarr_obstore(f"{url}/theirs", s3_endpoint), name="a", shape=values.shape,
                               dtype="i4", chunks=(2, 4), dimension_names=["y", "x"])
    theirs[...] = values
    zarr.consolidate_metadata(_zarr_obstore(f"{url}/theirs", s3_endpoint))
    with nczarr.Dataset(f"{url}/theirs", storage_options=options) as ds:
        assert ds["a"][:].tolist() == values.tolist()
    _fill(f"{url}/ours", options, "ZARR")
    group = zarr.open_group(store=_zarr_obstore(f"{url}/ours", s3_endpoint, read_only=True), mode="r")
    assert group["v"][...].tolist() == np.arange(12, dtype="f4").reshape(4, 3).tolist()
    assert group["g/c"][...].tolist() == [5, 6, 7]


# -- requests ----------------------------------------------------------------------------------------
class _InFlight:
    """Wraps obstore's calls to count how many run at once."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
        self.now = self.most = self.calls = 0
        self._lock = threading.Lock()
        for name in names:
            monkeypatch.setattr(obstore, name, self._wrap(getattr(obstore, name)))

    def _wrap(self, call: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.calls += 1
                self.now += 1
                self.most = max(self.most, self.now)
            try:
                time.sleep(0.005)  # long enough for the others of a batch to start
                return call(*args, **kwargs)
            finally:
                with self._lock:
                    self.now -= 1

        return counted


@pytest.mark.parametrize("bound", [1, 4])
def test_batches_keep_the_bound_on_requests_in_flight(url: str, options: dict[str, object], bound: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    store = ObstoreStore(url, storage_options=options)
    values = {f"k/{i}": bytes([i]) * 1000 for i in range(16)}
    counter = _InFlight(monkeypatch, "put", "get", "get_range")
    with config.settings(requests=bound):
        store.set_many(values)
        assert counter.most == bound and counter.calls == 16
        assert store.get_many([*values, "absent"]) == values
        assert store.get_ranges_many({key: [(10, 5)] for key in values}) == {k: [v[10:15]] for k, v in values.items()}
    assert counter.most == bound and counter.calls == 16 + 17 + 16
    with config.settings(requests=bound):
        arrived = dict(pair for group in store.get_arriving([*values, "absent"]) for pair in group)
    assert arrived == {**values, "absent": None}
    assert counter.most == bound and counter.calls == 16 + 17 + 16 + 17


def test_arriving_values_wait_for_no_batch(url: str, options: dict[str, object],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A request goes out as soon as one is answered: one slow answer holds up no other key
    (batches of the bound would wait for their slowest), and closing the iterator early
    waits for the requests in flight."""
    store = ObstoreStore(url, storage_options=options)
    values = {f"k/{i}": bytes([i]) * 100 for i in range(12)}
    store.set_many(values)
    get = obstore.get

    def slow_first(client: Any, path: str, **kwargs: Any) -> Any:
        time.sleep(0.5 if path.endswith("k/0") else 0.01)
        return get(client, path, **kwargs)

    monkeypatch.setattr(obstore, "get", slow_first)
    with config.settings(requests=4):
        order = [key for group in store.get_arriving(values) for key, _ in group]
        assert sorted(order) == sorted(values) and order[-1] == "k/0"
        arriving = store.get_arriving(values)
        next(arriving)
        started = time.perf_counter()
        arriving.close()  # k/0 was in flight: closing waits for it
        assert time.perf_counter() - started > 0.2


def test_nearby_ranges_are_one_request(url: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    store = ObstoreStore(url, storage_options=options)
    value = bytes(range(256)) * 12_000  # 3 MB
    store.set("v", value)
    counter = _InFlight(monkeypatch, "get_range")
    apart = REMOTE_RANGE_MERGE_GAP // 2
    wanted = [(0, 4), (apart, 4), (2 * apart, 4), (3 * apart + REMOTE_RANGE_MERGE_GAP + 1, 4)]
    assert store.get_ranges("v", wanted) == [value[o : o + n] for o, n in wanted]
    assert counter.calls == 2  # the first three within the gap, the last apart


def test_arrays_through_obstore(url: str, options: dict[str, object]) -> None:
    values = np.arange(20 * 12 * 6, dtype="f4").reshape(20, 12, 6)
    array = create_array(ObstoreStore(url, storage_options=options), "v", shape=values.shape, dtype="f4",
                         chunks=(2, 4, 6), compressors=[{"name": "blosc", "configuration": {"cname": "zlib"}}])
    array[...] = values
    array.close()
    for requests_in_flight in (1, 64):
        with config.settings(requests=requests_in_flight):
            reader = open_array(ObstoreStore(url, read_only=True, storage_options=options), "v")
            assert np.array_equal(reader[...], values)
            assert np.array_equal(reader[:, 5, 3], values[:, 5, 3])
            assert np.array_equal(reader[7], values[7])


def test_mode_w_replaces_only_a_dataset_and_deletes_by_prefix(url: str, options: dict[str, object]) -> None:
    _fill(url, options)
    store = ObstoreStore(url, storage_options=options)
    neighbour = ObstoreStore(f"{url}-neighbour", storage_options=options)
    neighbour.set("keep", b"1")
    _fill(url, options, "ZARR_V2")  # 'w' over a dataset: the old keys go, the neighbour stays
    assert not any(key.endswith("zarr.json") for key in store.list())
    assert neighbour.get("keep") == b"1"
    store.set("notes.txt", b"mine")
    with pytest.raises(nczarr.NCZarrError, match="refusing to replace .*'notes.txt'"):
        _fill(url, options)
    assert store.get("notes.txt") == b"mine"
    store.delete_prefix("")
    assert list(store.list()) == [] and neighbour.get("keep") == b"1"


# -- hostile input -----------------------------------------------------------------------------------
def test_a_missing_bucket_is_named(options: dict[str, object], s3_endpoint: str) -> None:
    for mode in ("r", "w", "a"):
        with pytest.raises(StoreError, match=f"S3 bucket 'no-such-bucket' at {s3_endpoint} does not exist"):
            nczarr.Dataset("s3://no-such-bucket/ds", mode, storage_options=options)
    store = ObstoreStore("s3://no-such-bucket/ds", storage_options=options)
    for call in (lambda: store.get("k"), lambda: store.set("k", b"1"), lambda: list(store.list()),
                 lambda: store.list_dir(""), lambda: store.get_many(["a", "b"])):
        with pytest.raises(StoreError, match="S3 bucket 'no-such-bucket'"):
            call()
    buckets = requests.get(s3_endpoint, timeout=10).text
    assert "no-such-bucket" not in buckets  # never created


def test_wrong_credentials_say_access_denied(url: str, options: dict[str, object], s3_endpoint: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """moto checks credentials between the two reset-auth calls (it knows none but IAM users
    it made, so every key is wrong), then accepts any again."""
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)  # keys alone, as obstore takes them
    _fill(url, options)
    wrong = {**options, "key": "wrong", "secret": "wrong"}
    requests.post(f"{s3_endpoint}/moto-api/reset-auth", data=b"0", timeout=10)
    try:
        with pytest.raises(StoreError) as read:
            nczarr.Dataset(url, storage_options=wrong)
        store = ObstoreStore(url, storage_options=wrong)
        with pytest.raises(StoreError) as written:
            store.set("k", b"1")
    finally:
        requests.post(f"{s3_endpoint}/moto-api/reset-auth", data=b"inf", timeout=10)
    message = str(read.value)
    assert message.startswith("access denied: cannot read ") and "ObstoreStore(" in message, message
    assert "403" in message and "InvalidAccessKeyId" in message and "check the credentials" in message
    assert "Debug source" not in message and "\n" not in message
    assert str(written.value).startswith("access denied: cannot write 'k' to ObstoreStore(")


def test_a_key_that_is_a_folder_is_absent(url: str, options: dict[str, object]) -> None:
    store = ObstoreStore(url, storage_options=options)
    store.set("a/b/c", b"1")
    for key in ("a", "a/b"):
        with pytest.raises(KeyNotFoundError, match=repr(key)):
            store.get(key)
        with pytest.raises(KeyNotFoundError):
            store.getsize(key)
        assert not store.exists(key)
        assert store.get_many([key]) == {}
    with pytest.raises(nczarr.NCZarrError):
        nczarr.Dataset(f"{url}/a")  # a folder of keys, no dataset: a clear error, no traceback


@pytest.fixture
def endpoint_down() -> Iterator[str]:
    """An endpoint on 127.0.0.1 where nothing listens."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


def test_an_unreachable_endpoint_is_a_store_error(url: str, endpoint_down: str) -> None:
    store = ObstoreStore(url, storage_options={"endpoint_url": endpoint_down})
    store.s3 = S3Store(store.location.bucket, endpoint=endpoint_down, client_options={"allow_http": True},
                       retry_config={"max_retries": 0})  # obstore retries for minutes by default
    with pytest.raises(StoreError, match=r"cannot read 'zarr.json' from ObstoreStore\("):
        store.get("zarr.json")


def test_a_process_that_used_obstore_exits_cleanly(url: str, s3_endpoint: str) -> None:
    """obstore's runtime threads must not call into a finalizing interpreter: with its
    async calls, 8 runs in 60 of this script ended in SIGABRT after their work was done
    when both cores were busy (2 in 30 before an at-exit shutdown of the loop)."""
    script = (
        "import sys\n"
        "from nczarr.store import ObstoreStore\n"
        "store = ObstoreStore(sys.argv[1], storage_options={'endpoint_url': sys.argv[2]})\n"
        "store.set_many({f'k{i}': b'1' for i in range(20)})\n"
        "assert len(store.get_many([f'k{i}' for i in range(20)])) == 20\n"
    )
    for _ in range(6):
        done = subprocess.run([sys.executable, "-c", script, url, s3_endpoint], capture_output=True, text=True,
                              check=False, env=dict(os.environ))
        assert done.returncode == 0, (done.returncode, done.stderr)
