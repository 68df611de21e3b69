"""nczarr against its peers on an object store with a latency, side by side in one run.

    python benchmarks/cloud.py [--delay 0.02] [--only NAME] [--peers NAME] [--repeat N] [--json]

The store is moto's S3 server on localhost (as the tests use it) behind a small proxy in
this script that holds every request ``--delay`` seconds (20 ms by default, a request to
a nearby region) before passing it on, and counts the requests, the most in flight at once
and the bytes sent back. Every peer reads and writes the same float32 array of 50x360x288
(21 MB, no compression, so the work is the requests), in chunks of 10x90x72 (80 chunks of
259 KB): write the whole array, read it whole, a one-point time series, a time slice; and
opens a group of 200 variables (with and without consolidated metadata) and lists them.

Peers: nczarr on obstore (its engine and ObstoreStore, what an ``s3://`` URL opens when
obstore is installed; the reference of every ratio) and on s3fs (FsspecStore), TensorStore (its ``s3`` kvstore with an
endpoint), zarr-python 3 on fsspec (s3fs) and on obstore (``zarr.storage.ObjectStore``).
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h

warnings.filterwarnings("ignore", message="Numcodecs codecs are not in the Zarr version 3 specification")
warnings.filterwarnings("ignore", message=".*consolidated metadata.*")

DTYPE = np.dtype("float32")
SHAPE = (50, 360, 288)
CHUNKS = (10, 90, 72)
NVARIABLES = 200
BUCKET = "bench"
REGION = "us-east-1"
#: The row every other is compared with: nczarr as an s3:// URL opens by default.
REFERENCE = "nczarr obstore"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}


# -- the store: moto behind a delaying, counting proxy -------------------------------------
@dataclass
class Traffic:
    """What the proxy saw since the last ``reset``."""

    requests: int = 0
    bytes_out: int = 0  # response bodies: what the clients fetched
    bytes_in: int = 0  # request bodies: what they wrote
    in_flight: int = 0
    peak_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reset(self) -> None:
        with self.lock:
            self.requests = self.bytes_out = self.bytes_in = self.peak_in_flight = 0

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return {"requests": self.requests, "peak_in_flight": self.peak_in_flight,
                    "bytes_out": self.bytes_out, "bytes_in": self.bytes_in}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _proxy_handler(upstream: int, delay: float, traffic: Traffic) -> type[http.server.BaseHTTPRequestHandler]:
    local = threading.local()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in two writes: with Nagle's algorithm the body waited for
        # the client's delayed ACK of the headers, 40 ms a response on top of --delay
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _control(self) -> bool:
            """The benchmark's own requests to the proxy: not forwarded, not counted."""
            if self.path == "/__traffic__":
                data = json.dumps(traffic.snapshot()).encode()
            elif self.path == "/__reset__":
                traffic.reset()
                data = b"{}"
            else:
                return False
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return True

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if self._control():
                return
            with traffic.lock:
                traffic.requests += 1
                traffic.in_flight += 1
                traffic.peak_in_flight = max(traffic.peak_in_flight, traffic.in_flight)
                traffic.bytes_in += length
            try:
                time.sleep(delay)
                connection = getattr(local, "connection", None)
                if connection is None:
                    connection = local.connection = http.client.HTTPConnection("127.0.0.1", upstream, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                except (http.client.HTTPException, OSError):
                    connection.close()
                    connection = local.connection = http.client.HTTPConnection("127.0.0.1", upstream, timeout=120)
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                data = response.read()
                self.send_response(response.status, response.reason)
                for k, v in response.getheaders():
                    if k.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                with traffic.lock:
                    traffic.bytes_out += len(data) if self.command != "HEAD" else 0
            finally:
                with traffic.lock:
                    traffic.in_flight -= 1

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    return Handler


def serve(delay: float) -> None:
    """Run moto's S3 server and the proxy in this process (a child of the benchmark, so that
    neither competes for the peers' GIL), print the proxy's port, and serve until stdin
    closes."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    traffic = Traffic()
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _proxy_handler(port, delay, traffic))
    proxy.daemon_threads = True
    proxy.request_queue_size = 1024
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}").create_bucket(Bucket=BUCKET)
        print(proxy.server_address[1], flush=True)
        sys.stdin.read()  # until the benchmark closes it
    finally:
        proxy.shutdown()
        server.stop()


class ProxyTraffic:
    """The counts of the proxy in the server process, reset and read over HTTP."""

    def __init__(self, port: int) -> None:
        self.port = port

    def _call(self, method: str, path: str) -> dict[str, int]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path)
            counts: dict[str, int] = json.loads(connection.getresponse().read())
            return counts
        finally:
            connection.close()

    def reset(self) -> None:
        self._call("POST", "/__reset__")

    def snapshot(self) -> dict[str, int]:
        return self._call("GET", "/__traffic__")


@contextmanager
def s3_with_latency(delay: float) -> Iterator[tuple[str, ProxyTraffic]]:
    """moto's S3 server with the bucket behind the proxy, in a process of their own:
    (the proxy's endpoint, its counts). The peers get test credentials only, in AWS files of
    the benchmark's own (no peer reads ~/.aws)."""
    aws = tempfile.mkdtemp(prefix="nczarr-cloud-aws-")
    with open(os.path.join(aws, "credentials"), "w") as f:
        f.write(f"[default]\naws_access_key_id = {CREDENTIALS['AWS_ACCESS_KEY_ID']}\n"
                f"aws_secret_access_key = {CREDENTIALS['AWS_SECRET_ACCESS_KEY']}\n")
    with open(os.path.join(aws, "config"), "w") as f:
        f.write(f"[default]\nregion = {REGION}\n")
    os.environ.update(CREDENTIALS, AWS_SHARED_CREDENTIALS_FILE=os.path.join(aws, "credentials"),
                      AWS_CONFIG_FILE=os.path.join(aws, "config"))
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        os.environ.pop(name, None)
    process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", str(delay)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdin is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}", ProxyTraffic(port)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(aws, ignore_errors=True)


# -- peers --------------------------------------------------------------------------------
class Peer:
    """A library reading and writing arrays under ``s3://bench/<prefix>``; every call opens
    what it uses (no cache of data or metadata survives from one call to the next). The
    fsspec peers reuse their s3fs filesystem, as calls in one process do (fsspec's instance
    cache): a new one costs 0.3-1.4 s on its first request here (botocore's client)."""

    name: str
    reference: str | None = REFERENCE
    groups = True  # takes part in the open-a-group cases

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def write(self, prefix: str, data: np.ndarray) -> None:
        raise NotImplementedError

    def read(self, prefix: str, selection: Any) -> np.ndarray:
        raise NotImplementedError

    def write_group(self, prefix: str, consolidated: bool) -> None:
        raise NotImplementedError

    def open_group(self, prefix: str, consolidated: bool) -> list[str]:
        raise NotImplementedError


class Nczarr(Peer):
    """nczarr's engine (arrays) and Dataset (groups) on one S3 client: ``obstore``
    (ObstoreStore, what an ``s3://`` URL opens when obstore is installed) or ``fsspec``
    (FsspecStore on s3fs, ``NCZARR_S3_CLIENT=fsspec``)."""

    def __init__(self, endpoint: str, client: str) -> None:
        super().__init__(endpoint)
        import nczarr
        from nczarr import config
        from nczarr.store import FsspecStore
        from nczarr.store.obstore import ObstoreStore
        from nczarr.zarr import create_array, open_array

        self.name = f"nczarr {client}"
        self.reference = None if client == "obstore" else REFERENCE
        self.client = client
        self._nczarr, self._config = nczarr, config
        self._store = ObstoreStore if client == "obstore" else FsspecStore
        self._create, self._open = create_array, open_array

    def _fs(self, prefix: str, read_only: bool = False) -> Any:
        return self._store(f"s3://{BUCKET}/{prefix}", read_only=read_only,
                           storage_options={"endpoint_url": self.endpoint})

    def write(self, prefix: str, data: np.ndarray) -> None:
        array = self._create(self._fs(prefix), "v", shape=data.shape, dtype=DTYPE, chunks=CHUNKS, fill_value=0.0,
                             overwrite=True)
        array[...] = data
        array.close()

    def read(self, prefix: str, selection: Any) -> np.ndarray:
        return self._open(self._fs(prefix, read_only=True), "v")[selection]

    def write_group(self, prefix: str, consolidated: bool) -> None:
        url = f"s3://{BUCKET}/{prefix}"
        options = {"endpoint_url": self.endpoint}
        fmt = "NCZARR" if consolidated else "NCZARR_V2"
        with self._config.settings(s3_client=self.client), \
                self._nczarr.Dataset(url, "w", format=fmt, storage_options=options) as ds:
            ds.createDimension("x", 4)
            for i in range(NVARIABLES):
                variable = ds.createVariable(f"v{i:03d}", "f4", ("x",))
                variable.units = "K"
        if not consolidated:  # nczarr consolidates v2 too (.zmetadata): as netcdf-c's, without
            self._fs(prefix).delete(".zmetadata")

    def open_group(self, prefix: str, consolidated: bool) -> list[str]:
        url = f"s3://{BUCKET}/{prefix}"
        with self._config.settings(s3_client=self.client), \
                self._nczarr.Dataset(url, storage_options={"endpoint_url": self.endpoint}) as ds:
            return sorted(ds.variables)


class ZarrPython(Peer):
    def __init__(self, endpoint: str, backend: str) -> None:
        super().__init__(endpoint)
        import zarr

        self._zarr = zarr
        self.backend = backend
        self.name = f"zarr-python {backend}"

    def _store(self, prefix: str, read_only: bool = False) -> Any:
        if self.backend == "fsspec":
            return self._zarr.storage.FsspecStore.from_url(
                f"s3://{BUCKET}/{prefix}", read_only=read_only,
                storage_options={"endpoint_url": self.endpoint})
        from obstore.store import S3Store

        store = S3Store(BUCKET, prefix=prefix, endpoint=self.endpoint, region=REGION,
                        access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                        secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                        client_options={"allow_http": True})
        return self._zarr.storage.ObjectStore(store, read_only=read_only)

    def write(self, prefix: str, data: np.ndarray) -> None:
        z = self._zarr.create_array(store=self._store(prefix), name="v", shape=data.shape, dtype=DTYPE,
                                    chunks=CHUNKS, compressors=None, filters=None, fill_value=0.0, overwrite=True)
        z[...] = data

    def read(self, prefix: str, selection: Any) -> np.ndarray:
        z = self._zarr.open_array(store=self._store(prefix, read_only=True), path="v", mode="r")
        return z[selection]

    def write_group(self, prefix: str, consolidated: bool) -> None:
        store = self._store(prefix)
        root = self._zarr.create_group(store=store, zarr_format=3 if consolidated else 2)
        for i in range(NVARIABLES):
            array = root.create_array(f"v{i:03d}", shape=(4,), dtype="f4", dimension_names=["x"] if consolidated
                                      else None, compressors=None)
            array.attrs["units"] = "K"
        if consolidated:
            self._zarr.consolidate_metadata(store)

    def open_group(self, prefix: str, consolidated: bool) -> list[str]:
        group = self._zarr.open_group(store=self._store(prefix, read_only=True), mode="r",
                                      use_consolidated=consolidated or None)
        return sorted(name for name, _ in group.arrays())


class TensorStore(Peer):
    name = "tensorstore"
    groups = False  # no groups: it opens arrays one by one

    def __init__(self, endpoint: str) -> None:
        super().__init__(endpoint)
        import tensorstore

        self._ts = tensorstore
        self._context = None

    def _spec(self, prefix: str, data: np.ndarray | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "driver": "zarr3",
            "kvstore": {"driver": "s3", "bucket": BUCKET, "path": f"{prefix}/v/", "endpoint": self.endpoint,
                        "aws_region": REGION},
            "context": {"cache_pool": {"total_bytes_limit": 0}},
        }
        if data is not None:
            spec["metadata"] = {
                "shape": list(data.shape), "data_type": DTYPE.name, "fill_value": 0.0,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(CHUNKS)}},
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            }
            spec["create"] = True
            spec["delete_existing"] = True
        return spec

    def write(self, prefix: str, data: np.ndarray) -> None:
        array = self._ts.open(self._spec(prefix, data)).result()
        array.write(data).result()

    def read(self, prefix: str, selection: Any) -> np.ndarray:
        array = self._ts.open(self._spec(prefix), open=True).result()
        return np.asarray(array[selection].read().result())


def make_peers(endpoint: str, wanted: list[str]) -> list[Peer]:
    factories: list[tuple[str, Callable[[], Peer]]] = [
        ("nczarr obstore", lambda: Nczarr(endpoint, "obstore")),
        ("nczarr fsspec", lambda: Nczarr(endpoint, "fsspec")),
        ("tensorstore", lambda: TensorStore(endpoint)),
        ("zarr-python fsspec", lambda: ZarrPython(endpoint, "fsspec")),
        ("zarr-python obstore", lambda: ZarrPython(endpoint, "obstore")),
    ]
    peers: list[Peer] = h.build_peers(factories, wanted)
    return peers


# -- workloads ----------------------------------------------------------------------------
def _prefix(peer: Peer, what: str) -> str:
    return f"{peer.name.replace(' ', '_')}/{what}"


def build_workloads(peers: list[Peer], data: np.ndarray, traffic: ProxyTraffic,
                    counts: dict[tuple[str, str], list[dict[str, int]]]) -> list[h.Workload]:
    written: set[str] = set()

    def counted(workload: str, peer: Peer, run: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def call(state: Any) -> Any:
            traffic.reset()
            result = run(state)
            counts.setdefault((workload, peer.name), []).append(traffic.snapshot())
            return result
        return call

    def write_case(peer: Peer) -> h.Case:
        prefix = _prefix(peer, "array")

        def check(state: Any, result: Any) -> None:
            if not np.array_equal(peer.read(prefix, 7), data[7]):
                raise AssertionError(f"{peer.name} wrote wrong data")
            written.add(peer.name)

        return h.Case(peer.name, counted("write", peer, lambda s: peer.write(prefix, data)), check=check,
                      reference=peer.reference)

    def read_case(workload: str, peer: Peer, selection: Any) -> h.Case:
        prefix = _prefix(peer, "array")

        def setup() -> None:
            if peer.name not in written:
                peer.write(prefix, data)
                written.add(peer.name)

        def check(state: Any, result: np.ndarray) -> None:
            if not np.array_equal(result, data[selection]):
                raise AssertionError(f"{peer.name} read wrong data for {selection!r}")

        return h.Case(peer.name, counted(workload, peer, lambda s: peer.read(prefix, selection)), setup=setup,
                      check=check, reference=peer.reference)

    def group_case(workload: str, peer: Peer, consolidated: bool) -> h.Case:
        prefix = _prefix(peer, f"group-{'c' if consolidated else 'n'}")
        made: list[bool] = []

        def setup() -> None:
            if not made:
                peer.write_group(prefix, consolidated)
                made.append(True)

        def check(state: Any, result: list[str]) -> None:
            if result != [f"v{i:03d}" for i in range(NVARIABLES)]:
                raise AssertionError(f"{peer.name} listed {len(result)} variables")

        return h.Case(peer.name, counted(workload, peer, lambda s: peer.open_group(prefix, consolidated)),
                      setup=setup, check=check, reference=peer.reference)

    nbytes = data.nbytes
    t, y, x = SHAPE[0] // 2, SHAPE[1] // 2 + 3, SHAPE[2] // 2 + 5
    workloads = [
        h.Workload("write", f"write {'x'.join(map(str, SHAPE))} float32 ({nbytes / 1e6:.0f} MB), chunks "
                   f"{'x'.join(map(str, CHUNKS))}", [write_case(p) for p in peers], nbytes=nbytes),
        h.Workload("read", "read the whole array", [read_case("read", p, Ellipsis) for p in peers], nbytes=nbytes),
        h.Workload("point", f"one-point time series a[:, {y}, {x}]",
                   [read_case("point", p, (slice(None), y, x)) for p in peers]),
        h.Workload("slice", f"one time slice a[{t}]", [read_case("slice", p, t) for p in peers]),
    ]
    for consolidated in (True, False):
        name = f"open-{'consolidated' if consolidated else 'plain'}"
        title = (f"open a group of {NVARIABLES} variables and list them, "
                 f"{'consolidated (Zarr v3)' if consolidated else 'not consolidated (Zarr v2)'}")
        workloads.append(h.Workload(name, title, [group_case(name, p, consolidated) for p in peers if p.groups]))
    return workloads


def traffic_table(counts: dict[tuple[str, str], list[dict[str, int]]], workloads: list[str], peers: list[str]) -> str:
    """Per case and peer: requests, the most in flight at once, MB fetched / written (medians)."""
    lines = ["| case | " + " | ".join(peers) + " |", "|---|" + "---|" * len(peers)]
    for workload in workloads:
        cells = []
        for peer in peers:
            samples = counts.get((workload, peer))
            if not samples:
                cells.append("—")
                continue
            def med(key: str, samples: list[dict[str, int]] = samples) -> float:
                return float(np.median([s[key] for s in samples]))
            moved = med("bytes_in") if workload == "write" else med("bytes_out")
            cells.append(f"{med('requests'):.0f} req, {med('peak_in_flight'):.0f} in flight, {moved / 1e6:.2f} MB")
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.02, help="seconds the proxy holds each request (0.02)")
    parser.add_argument("--serve", type=float, metavar="DELAY", help=argparse.SUPPRESS)  # the server process
    h.add_common_arguments(parser)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve)
        return 0
    only, wanted = h.split_option(args.only), h.split_option(args.peers)
    data = np.random.default_rng(0).normal(280, 5, SHAPE).astype(DTYPE)
    with s3_with_latency(args.delay) as (endpoint, traffic):
        peers = make_peers(endpoint, wanted)
        counts: dict[tuple[str, str], list[dict[str, int]]] = {}
        workloads = h.select(build_workloads(peers, data, traffic, counts), only, wanted)
        if args.list:
            for w in workloads:
                print(f"{w.name:<18} {w.title}")
            print("peers:", ", ".join(p.name for p in peers))
            return 0
        meta = {"delay": args.delay, "repeat": args.repeat, "warmup": args.warmup, "peers": [p.name for p in peers],
                **h.environment(["nczarr", "zarr", "tensorstore", "s3fs", "fsspec", "obstore", "moto"])}
        print(f"nczarr cloud benchmark: moto S3 behind a proxy holding each request {args.delay * 1e3:.0f} ms; "
              f"{args.repeat} timed runs after {args.warmup} warm-up, peers interleaved; medians; "
              "ratio = peer / nczarr obstore (> 1: nczarr faster)")
        print("versions:", ", ".join(f"{k} {v}" for k, v in meta["packages"].items()), f"| {meta['cpu_count']} CPUs")
        print()
        results = h.run_workloads(workloads, repeat=args.repeat, warmup=args.warmup, sync=False)
    names = [p.name for p in peers]
    print("\nSummary (median wall time; in parentheses, peer / nczarr obstore):\n")
    print(h.format_markdown(results, names))
    print("\nRequests (median per call), the most in flight at once, and bytes fetched (writes: sent):\n")
    print(traffic_table(counts, [r.workload.name for r in results], names))
    behind = [(r.workload.name, c.peer, r.ratio(c)) for r in results for c in r.cases
              if (ratio := r.ratio(c)) is not None and ratio < 1]
    print("\nPeers faster than nczarr:" if behind else "\nNo peer is faster than nczarr on any case.")
    for name, peer, ratio in behind:
        print(f"  {name}: {peer} takes {ratio:.2f}x nczarr's time")
    if args.json:
        meta["traffic"] = {f"{w}|{p}": v for (w, p), v in counts.items()}
        print("\nresults written to", h.write_json(results, "cloud", args.json, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
