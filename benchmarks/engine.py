"""The storage engine against its peers, side by side in one run.

    python benchmarks/engine.py [--quick] [--only NAME] [--peers NAME] [--repeat N] [--json]

Workloads (see benchmarks/README.md): bulk write and cold bulk read of a float32 array of
50x720x1440 (207 MB) with chunks of one time step (``slab``, 1x720x1440) and of 10x180x360
(``tile``), uncompressed (``raw``) and with shuffle + zlib level 1 (``zlib``); a one-point
time series and one time slice, cold; 2,000 single-element writes into a 1-D array of
2,000,000 elements in chunks of 1,000, spread over the array and sequential.

Peers: nczarr (Zarr v3 and v2), zarr-python 3 (v3 and v2), netCDF4 on NCZarr (netcdf-c's
Zarr, which writes v2), netCDF4 on HDF5 (a reference) and a ``limit`` (one file written with
``tofile`` and read cold with ``np.fromfile``; for zlib, the same shuffle + deflate work done
on every core around that one file). ``--quick`` shrinks the array tenfold (50x360x288, chunks
1x360x288 and 10x90x72) and the single writes tenfold (200 into 200,000).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h

warnings.filterwarnings("ignore", message="Numcodecs codecs are not in the Zarr version 3 specification")

DTYPE = np.dtype("float32")
ZLIB_LEVEL = 1
#: Codecs of the zlib arrays, the same work for every Zarr peer. v3: the ``gzip`` core codec
#: (what nczarr writes for netCDF ``compression="zlib"``); v2: numcodecs ``zlib``, as netcdf-c.
V3_ZLIB = [
    {"name": "numcodecs.shuffle", "configuration": {"elementsize": DTYPE.itemsize}},
    {"name": "gzip", "configuration": {"level": ZLIB_LEVEL}},
]
V2_FILTERS = [{"id": "shuffle", "elementsize": DTYPE.itemsize}]
V2_ZLIB = {"id": "zlib", "level": ZLIB_LEVEL}
#: The blosc arrays: blosc with cname zlib, level 1 and byte shuffle, what TensorStore writes
#: for zlib + shuffle (it has no shuffle filter beside a compressor); v3 ``blosc`` codec.
V3_BLOSC = {"name": "blosc", "configuration": {
    "cname": "zlib", "clevel": ZLIB_LEVEL, "shuffle": "shuffle", "typesize": DTYPE.itemsize, "blocksize": 0}}
#: The codecs of each layout, by name.
CODECS = ("raw", "zlib", "blosc")
#: Titles of the codecs.
CODEC_TITLES = {"raw": "raw", "zlib": "zlib-1 + shuffle", "blosc": "blosc(zlib-1, shuffle)"}

NCZARR_V3, NCZARR_V2 = "nczarr v3", "nczarr v2"


@dataclass(frozen=True)
class Layout:
    """An array to write and read: chunking and compression."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    codec: str  # one of CODECS
    role: str  # "slab", "tile" or "1d"

    @property
    def compressed(self) -> bool:
        return self.codec != "raw"

    @property
    def key(self) -> str:
        return f"{self.codec}-{self.role}"

    @property
    def chunk_label(self) -> str:
        return "x".join(map(str, self.chunks))


@dataclass(frozen=True)
class Sizes:
    shape: tuple[int, int, int]
    slab: tuple[int, int, int]
    tile: tuple[int, int, int]
    n1d: int
    chunk1d: int
    nwrites: int

    @property
    def point(self) -> tuple[int, int]:
        return self.shape[1] // 2, self.shape[2] // 2

    @property
    def time_index(self) -> int:
        return self.shape[0] // 2


FULL = Sizes(shape=(50, 720, 1440), slab=(1, 720, 1440), tile=(10, 180, 360), n1d=2_000_000, chunk1d=1_000, nwrites=2_000)
QUICK = Sizes(shape=(50, 360, 288), slab=(1, 360, 288), tile=(10, 90, 72), n1d=200_000, chunk1d=1_000, nwrites=200)


def make_data(shape: tuple[int, int, int], seed: int = 0) -> np.ndarray:
    """A smooth field (a daily cycle over a latitude gradient and waves) plus noise: float32
    that shuffle + zlib compresses about as well as model output."""
    rng = np.random.default_rng(seed)
    nt, ny, nx = shape
    t = np.linspace(0, 2 * np.pi, nt, dtype=np.float32)[:, None, None]
    y = np.linspace(-np.pi / 2, np.pi / 2, ny, dtype=np.float32)[None, :, None]
    x = np.linspace(0, 2 * np.pi, nx, dtype=np.float32)[None, None, :]
    field = 273.0 + 30.0 * np.cos(y) + 5.0 * np.sin(3 * x + t) * np.cos(2 * y) + 2.0 * np.sin(t)
    field = field.astype(np.float32)
    field += rng.normal(0.0, 0.5, size=shape).astype(np.float32)
    return field


def chunk_slices(shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[tuple[slice, ...]]:
    grid = [range(0, n, c) for n, c in zip(shape, chunks)]
    out: list[tuple[slice, ...]] = [()]
    for axis, starts in enumerate(grid):
        out = [(*s, slice(i, min(i + chunks[axis], shape[axis]))) for s in out for i in starts]
    return out


# -- peers --------------------------------------------------------------------------------
class Peer:
    """A library writing and reading the benchmark's arrays. Every method opens and closes
    what it uses, so the time of a call covers the whole operation."""

    name: str
    reference: str | None = NCZARR_V3
    suffix = ".zarr"
    bulk_only = False  # the limit: no point reads or single writes
    #: The layouts' codecs this peer writes (CODECS).
    codecs: tuple[str, ...] = ("raw", "zlib")

    def path(self, root: str, what: str) -> str:
        return os.path.join(root, f"{self.name.replace(' ', '_')}-{what}{self.suffix}")

    def write(self, path: str, layout: Layout, data: np.ndarray) -> None:
        raise NotImplementedError

    def read(self, path: str, layout: Layout, selection: Any) -> np.ndarray:
        raise NotImplementedError

    def single_writes(self, path: str, layout: Layout, indices: np.ndarray, values: np.ndarray) -> None:
        raise NotImplementedError


class Nczarr(Peer):
    """nczarr's engine. ``deflate`` forces its zlib library (``nczarr.config``): ``"zlib"``,
    the standard library's, is what a plain install used before ISA-L and libdeflate
    became dependencies (the row ``nczarr v3 stdlib-zlib``)."""

    codecs = CODECS

    def __init__(self, zarr_format: int, deflate: str | None = None) -> None:
        from nczarr import config
        from nczarr.store import DirectoryStore
        from nczarr.zarr import create_array, open_array

        self.zarr_format = zarr_format
        self.name = NCZARR_V3 if zarr_format == 3 else NCZARR_V2
        self.reference = None
        if deflate is not None:
            self.name += f" stdlib-{deflate}" if deflate == "zlib" else f" {deflate}"
            self.reference = NCZARR_V3 if zarr_format == 3 else NCZARR_V2
        self._deflate = deflate
        self._config = config
        self._store, self._create, self._open = DirectoryStore, create_array, open_array

    def _codecs(self, layout: Layout) -> dict[str, Any]:
        if layout.codec == "raw":
            return {}
        if layout.codec == "blosc":
            if self.zarr_format == 3:
                return {"compressors": [V3_BLOSC]}
            return {"compressor": {"id": "blosc", "cname": "zlib", "clevel": ZLIB_LEVEL, "shuffle": 1, "blocksize": 0}}
        if self.zarr_format == 3:
            return {"compressors": V3_ZLIB}
        return {"filters": V2_FILTERS, "compressor": V2_ZLIB}

    def write(self, path: str, layout: Layout, data: np.ndarray) -> None:
        with self._config.settings(deflate=self._deflate):
            a = self._create(
                self._store(path), "v", zarr_format=self.zarr_format, shape=layout.shape, dtype=DTYPE,
                chunks=layout.chunks, write_empty_chunks=False, **self._codecs(layout),
            )
            a[...] = data
            a.close()

    def read(self, path: str, layout: Layout, selection: Any) -> np.ndarray:
        with self._config.settings(deflate=self._deflate):
            a = self._open(self._store(path, read_only=True), "v")
            return a[selection]

    def single_writes(self, path: str, layout: Layout, indices: np.ndarray, values: np.ndarray) -> None:
        a = self._open(self._store(path), "v", mode="r+")
        for i, x in zip(indices.tolist(), values.tolist()):
            a[i] = x
        a.close()


class ZarrPython(Peer):
    def __init__(self, zarr_format: int) -> None:
        import numcodecs
        import zarr
        from zarr.storage import LocalStore

        self.zarr_format = zarr_format
        self.name = f"zarr-python v{zarr_format}"
        self.reference = NCZARR_V3 if zarr_format == 3 else NCZARR_V2
        self.codecs = CODECS if zarr_format == 3 else ("raw", "zlib")
        self._zarr, self._numcodecs, self._store = zarr, numcodecs, LocalStore

    def _codecs(self, layout: Layout) -> dict[str, Any]:
        if not layout.compressed:
            return {"filters": None, "compressors": None}
        if layout.codec == "blosc":
            return {"filters": None, "compressors": [V3_BLOSC]}
        if self.zarr_format == 3:
            return {"filters": None, "compressors": V3_ZLIB}
        nc = self._numcodecs
        return {"filters": [nc.Shuffle(elementsize=DTYPE.itemsize)], "compressors": nc.Zlib(level=ZLIB_LEVEL)}

    def write(self, path: str, layout: Layout, data: np.ndarray) -> None:
        z = self._zarr.create_array(
            store=self._store(path), name="v", shape=layout.shape, dtype=DTYPE, chunks=layout.chunks,
            zarr_format=self.zarr_format, config={"write_empty_chunks": False}, **self._codecs(layout),
        )
        z[...] = data

    def read(self, path: str, layout: Layout, selection: Any) -> np.ndarray:
        z = self._zarr.open_array(store=self._store(path, read_only=True), path="v", mode="r")
        return z[selection]

    def single_writes(self, path: str, layout: Layout, indices: np.ndarray, values: np.ndarray) -> None:
        z = self._zarr.open_array(store=self._store(path), path="v", mode="r+")
        for i, x in zip(indices.tolist(), values.tolist()):
            z[i] = x


class Zarrs(ZarrPython):
    """zarr-python 3 with the codec pipeline of the zarrs Rust crate (zarrs-python), Zarr v3,
    not strict: a selection zarrs-python 0.2 does not take (a time slice of tiles) goes to
    zarr-python's own pipeline, as it does for its users."""

    PIPELINE: ClassVar[dict[str, Any]] = {"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": False}

    def __init__(self) -> None:
        import zarrs  # noqa: F401 - fail here, not on the first chunk, when it is missing

        super().__init__(3)
        self.name = "zarrs"

    def write(self, path: str, layout: Layout, data: np.ndarray) -> None:
        with self._zarr.config.set(self.PIPELINE):
            super().write(path, layout, data)

    def read(self, path: str, layout: Layout, selection: Any) -> np.ndarray:
        with self._zarr.config.set(self.PIPELINE):
            return super().read(path, layout, selection)

    def single_writes(self, path: str, layout: Layout, indices: np.ndarray, values: np.ndarray) -> None:
        with self._zarr.config.set(self.PIPELINE):
            super().single_writes(path, layout, indices, values)


class TensorStore(Peer):
    """Google's TensorStore (C++), its ``zarr3`` driver on a local directory, no cache. It has
    no shuffle filter beside a compressor, so it writes no zlib + shuffle arrays: its
    compressed arrays are the ``blosc`` rows (cname zlib, clevel 1, byte shuffle), compared
    with nczarr writing the same codec."""

    name = "tensorstore"
    codecs = ("raw", "blosc")

    def __init__(self) -> None:
        import tensorstore

        self._ts = tensorstore

    def _spec(self, path: str, layout: Layout | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.abspath(path)}}
        if layout is None:
            return spec
        codecs: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
        if layout.codec == "blosc":
            codecs.append(V3_BLOSC)
        spec["metadata"] = {
            "shape": list(layout.shape), "data_type": DTYPE.name, "fill_value": 0.0, "codecs": codecs,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(layout.chunks)}},
            "chunk_key_encoding": {"name": "default"},
        }
        spec["create"] = True
        spec["delete_existing"] = True
        return spec

    def write(self, path: str, layout: Layout, data: np.ndarray) -> None:
        array = self._ts.open(self._spec(path, layout)).result()
        array.write(data).result()

    def read(self, path: str, layout: Layout, selection: Any) -> np.ndarray:
        array = self._ts.open(self._spec(path), open=True).result()
        return np.asarray(array[selection].read().result())

    def single_writes(self, path: str, layout: Layout, indices: np.ndarray, values: np.ndarray) -> None:
        array = self._ts.open(self._spec(path), open=True).result()
        for i, x in zip(indices.tolist(), values.tolist()):
            array[i].write(x).result()


class NetCDF4(Peer):
    """netCDF4-python: on netcdf-c's NCZarr (a directory store; netcdf-c writes Zarr v2) or
    on HDF5. Raw values: no automatic mask or scale."""

    def __init__(self, backend: str) -> None:
        import netCDF4

        self._nc = netCDF4
        self.backend = backend
        if backend == "nczarr":
            self.name, self.reference, self.suffix = "netCDF4 NCZarr", NCZARR_V2, ".zarr"
        else:
            self.name, self.reference, self.suffix = "netCDF4 HDF5", NCZARR_V3, ".nc"

    def _url(self, path: str) -> str:
        return f"file://{os.path.abspath(path)}#mode=nczarr,file" if self.backend == "nczarr" else path

    def write(self, path: str, layout: Layout, data: np.ndarray) -> None:
        ds = self._nc.Dataset(self._url(path), "w", format="NETCDF4")
        try:
            dims = ("t", "y", "x")[-len(layout.shape):]
            for d, n in zip(dims, layout.shape):
                ds.createDimension(d, n)
            options: dict[str, Any] = {"chunksizes": layout.chunks}
            if layout.compressed:
                options.update(compression="zlib", complevel=ZLIB_LEVEL, shuffle=True)
            v = ds.createVariable("v", DTYPE, dims, **options)
            v.set_auto_maskandscale(False)
            v[...] = data
        finally:
            ds.close()

    def read(self, path: str, layout: Layout, selection: Any) -> np.ndarray:
        ds = self._nc.Dataset(self._url(path), "r")
        try:
            v = ds["v"]
            v.set_auto_maskandscale(False)
            return np.asarray(v[selection])
        finally:
            ds.close()

    def _open_for_update(self, url: str) -> Any:
        """``Dataset(url, "r+")``. netCDF4-python 1.7 turns "a"/"r+" into "w" (and so wipes
        the dataset) when ``os.path.exists(url)`` is false, as it is for any NCZarr URL; it is
        made to see the URL as existing for the call."""
        if url.startswith("file://"):
            exists = os.path.exists
            os.path.exists = lambda p: p == url or exists(p)
            try:
                return self._nc.Dataset(url, "r+")
            finally:
                os.path.exists = exists
        return self._nc.Dataset(url, "r+")

    def single_writes(self, path: str, layout: Layout, indices: np.ndarray, values: np.ndarray) -> None:
        ds = self._open_for_update(self._url(path))
        try:
            v = ds["v"]
            v.set_auto_maskandscale(False)
            for i, x in zip(indices.tolist(), values.tolist()):
                v[i] = x
        finally:
            ds.close()


class Limit(Peer):
    """The same bytes in one file: ``tofile`` / ``np.fromfile`` (cold). For zlib layouts, the
    chunks are shuffled and deflated (level 1) on every core and written one after the other
    into that file, and read back the same way: the codec work with no store around it."""

    reference = NCZARR_V3
    suffix = ".bin"
    bulk_only = True

    def __init__(self, threads: int | None = None) -> None:
        """``threads``: the codec threads (default every core; the name says when not)."""
        self.name = "limit" if threads is None else f"limit {threads} thread{'s' * (threads != 1)}"
        self._pool = ThreadPoolExecutor(max_workers=threads or os.cpu_count() or 1)

    @staticmethod
    def _encode(chunk: np.ndarray) -> bytes:
        shuffled = np.ascontiguousarray(chunk).view(np.uint8).reshape(-1, chunk.itemsize).T.copy()
        return zlib.compress(shuffled, ZLIB_LEVEL)

    def write(self, path: str, layout: Layout, data: np.ndarray) -> None:
        if not layout.compressed:
            data.tofile(path)
            return
        slices = chunk_slices(layout.shape, layout.chunks)
        encoded = list(self._pool.map(lambda s: self._encode(data[s]), slices))
        with open(path, "wb") as f:
            for piece in encoded:
                f.write(piece)
        np.save(path + ".idx.npy", np.array([len(p) for p in encoded], dtype=np.int64))

    def read(self, path: str, layout: Layout, selection: Any) -> np.ndarray:
        if not layout.compressed:
            return np.fromfile(path, dtype=DTYPE).reshape(layout.shape)[selection]
        raw = np.fromfile(path, dtype=np.uint8)
        sizes = np.load(path + ".idx.npy")
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        out = np.empty(layout.shape, dtype=DTYPE)
        slices = chunk_slices(layout.shape, layout.chunks)

        def decode(k: int) -> None:
            s = slices[k]
            shape = tuple(x.stop - x.start for x in s)
            planes = np.frombuffer(zlib.decompress(raw[offsets[k]:offsets[k + 1]]), dtype=np.uint8)
            out[s] = planes.reshape(DTYPE.itemsize, -1).T.copy().view(DTYPE).reshape(shape)

        list(self._pool.map(decode, range(len(slices))))
        return out[selection]


def make_peers(wanted: list[str]) -> list[Peer]:
    factories: list[tuple[str, Callable[[], Peer]]] = [
        (NCZARR_V3, lambda: Nczarr(3)),
        (NCZARR_V2, lambda: Nczarr(2)),
        (f"{NCZARR_V3} stdlib-zlib", lambda: Nczarr(3, "zlib")),
        ("zarr-python v3", lambda: ZarrPython(3)),
        ("zarr-python v2", lambda: ZarrPython(2)),
        ("netCDF4 NCZarr", lambda: NetCDF4("nczarr")),
        ("tensorstore", TensorStore),
        ("zarrs", Zarrs),
        ("netCDF4 HDF5", lambda: NetCDF4("hdf5")),
        ("limit", Limit),
        ("limit 1 thread", lambda: Limit(1)),
    ]
    peers: list[Peer] = h.build_peers(factories, wanted)
    return peers


# -- workloads ----------------------------------------------------------------------------
class Stores:
    """The stores the read workloads read, written once per peer and layout (by the write
    workload when it runs, else on first use)."""

    def __init__(self, root: str, data: np.ndarray, data1d: np.ndarray) -> None:
        self.root = root
        self.data = {3: data, 1: data1d}
        self.ready: set[str] = set()

    def path(self, peer: Peer, layout: Layout) -> str:
        return peer.path(self.root, layout.key)

    def ensure(self, peer: Peer, layout: Layout) -> str:
        path = self.path(peer, layout)
        if path not in self.ready:
            h.remove(path)
            peer.write(path, layout, self.data[len(layout.shape)])
            self.ready.add(path)
        return path


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:.0f} MB" if nbytes >= 1e7 else f"{nbytes / 1e6:.1f} MB"


def build_workloads(sizes: Sizes, peers: list[Peer], stores: Stores) -> list[h.Workload]:
    data = stores.data[3]
    nbytes = int(np.prod(sizes.shape)) * DTYPE.itemsize
    layouts = [
        Layout(sizes.shape, chunks, codec, role)
        for codec in CODECS
        for role, chunks in (("slab", sizes.slab), ("tile", sizes.tile))
    ]

    def writes(layout: Layout) -> list[Peer]:
        return [p for p in peers if layout.codec in p.codecs]
    workloads = []

    def write_case(peer: Peer, layout: Layout) -> h.Case:
        path = stores.path(peer, layout)

        def setup() -> None:
            stores.ready.discard(path)
            h.remove(path)
            h.remove(path + ".idx.npy")

        def done(state: Any) -> None:
            stores.ready.add(path)

        def check(state: Any, result: Any) -> None:
            got = peer.read(path, layout, sizes.time_index)
            if not np.array_equal(got, data[sizes.time_index]):
                raise AssertionError(f"{peer.name} wrote wrong data to {path}")

        return h.Case(peer.name, lambda s: peer.write(path, layout, data), setup=setup, check=check,
                      reference=peer.reference, teardown=done)

    def read_case(peer: Peer, layout: Layout, selection: Any) -> h.Case:
        def setup() -> None:
            path = stores.ensure(peer, layout)
            h.drop_cache(path)
            if os.path.exists(path + ".idx.npy"):
                h.drop_cache(path + ".idx.npy")

        def check(state: Any, result: np.ndarray) -> None:
            expected = data[selection]
            if result.shape != expected.shape or not np.array_equal(result, expected):
                raise AssertionError(f"{peer.name} read wrong data for {selection!r}")

        return h.Case(peer.name, lambda s: peer.read(stores.path(peer, layout), layout, selection),
                      setup=setup, check=check, reference=peer.reference)

    for layout in layouts:
        comp = CODEC_TITLES[layout.codec]
        workloads.append(h.Workload(
            f"write-{layout.key}", f"write {comp}, chunks {layout.chunk_label} ({_mb(nbytes)})",
            [write_case(p, layout) for p in writes(layout)], nbytes=nbytes,
        ))
    for layout in layouts:
        comp = CODEC_TITLES[layout.codec]
        workloads.append(h.Workload(
            f"read-{layout.key}", f"read {comp}, chunks {layout.chunk_label}, cold",
            [read_case(p, layout, Ellipsis) for p in writes(layout)], nbytes=nbytes,
        ))
    py, px = sizes.point
    point = (slice(None), py, px)
    for layout in layouts:
        comp = CODEC_TITLES[layout.codec]
        workloads.append(h.Workload(
            f"point-{layout.key}", f"one-point time series a[:, {py}, {px}], {comp}, chunks {layout.chunk_label}, cold",
            [read_case(p, layout, point) for p in writes(layout) if not p.bulk_only],
        ))
    for layout in layouts:
        comp = CODEC_TITLES[layout.codec]
        workloads.append(h.Workload(
            f"slice-{layout.key}", f"one time slice a[{sizes.time_index}], {comp}, chunks {layout.chunk_label}, cold",
            [read_case(p, layout, sizes.time_index) for p in writes(layout) if not p.bulk_only],
            nbytes=sizes.shape[1] * sizes.shape[2] * DTYPE.itemsize,
        ))

    # Single-element writes into an existing, filled 1-D array (raw), copied afresh for each
    # repetition from a template; the time covers open, the writes and the final flush/close.
    line = Layout((sizes.n1d,), (sizes.chunk1d,), False, "1d")
    n = sizes.nwrites
    patterns = {
        "spread": (np.arange(n, dtype=np.int64) * 997) % sizes.n1d,
        "seq": np.arange(n, dtype=np.int64),
    }
    values = (np.arange(n, dtype=np.float32) + 0.5) * -1.0
    for pattern, indices in patterns.items():
        def single_case(peer: Peer, indices: np.ndarray = indices, pattern: str = pattern) -> h.Case:
            target = peer.path(stores.root, f"single-{pattern}")

            def setup() -> None:
                h.copy(stores.ensure(peer, line), target)

            def check(state: Any, result: Any) -> None:
                got = peer.read(target, line, Ellipsis)
                expected = stores.data[1].copy()
                expected[indices] = values
                if not np.array_equal(got, expected):
                    raise AssertionError(f"{peer.name}: single writes ({pattern}) left wrong data")

            return h.Case(peer.name, lambda s: peer.single_writes(target, line, indices, values),
                          setup=setup, check=check, reference=peer.reference)

        desc = "i = k*997 mod n, each in another chunk" if pattern == "spread" else "i = k, sequential"
        workloads.append(h.Workload(
            f"single-{pattern}",
            f"{n:,} single-element writes ({desc}), 1-D of {sizes.n1d:,}, chunks {sizes.chunk1d:,}",
            [single_case(p) for p in peers if not p.bulk_only], ops=n, unit="writes",
        ))
    return workloads


#: The peers nczarr must beat (not the limits, not nczarr's own variants).
_RIVALS = ("zarr-python v3", "zarr-python v2", "zarrs", "tensorstore", "netCDF4 NCZarr", "netCDF4 HDF5")


def like_for_like(results: list[h.WorkloadResult], subject: str = NCZARR_V3) -> str:
    """Per case, nczarr's median over the fastest rival's writing the same codec (below 1:
    nczarr is faster), and the geometric mean and worst of the bulk cases (write-*, read-*),
    the goal of issue 29 (at most 0.8 and 1.0)."""
    lines = [f"Like for like: {subject} / fastest peer with the same codec (< 1: nczarr faster)", ""]
    bulk: list[float] = []
    for result in results:
        own = result.case(subject)
        rivals = [c for c in result.cases if c.peer in _RIVALS and c.samples]
        if own is None or not own.samples or not rivals:
            continue
        best = min(rivals, key=lambda c: c.wall)
        ratio = own.wall / best.wall
        if result.workload.name.startswith(("write-", "read-")):
            bulk.append(ratio)
        lines.append(f"  {result.workload.name:<18} {ratio:5.2f}  (fastest: {best.peer}, {best.wall:.3f} s)")
    if bulk:
        geomean = float(np.exp(np.mean(np.log(bulk))))
        lines.append(f"  bulk cases: geometric mean {geomean:.2f}, worst {max(bulk):.2f} ({len(bulk)} cases)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a 10x smaller array (about a minute)")
    h.add_common_arguments(parser)
    args = parser.parse_args(argv)
    only, wanted = h.split_option(args.only), h.split_option(args.peers)
    sizes = QUICK if args.quick else FULL

    peers = make_peers(wanted)
    if args.list:
        dummy = Stores("/nonexistent", np.empty((0, 0, 0), DTYPE), np.empty(0, DTYPE))
        for w in build_workloads(sizes, peers, dummy):
            print(f"{w.name:<18} {w.title}")
        print("peers:", ", ".join(p.name for p in peers))
        return 0

    data = make_data(sizes.shape)
    data1d = np.random.default_rng(1).normal(size=sizes.n1d).astype(DTYPE)
    meta = {
        "mode": "quick" if args.quick else "full", "shape": sizes.shape, "repeat": args.repeat,
        "warmup": args.warmup, "only": only, "peers": [p.name for p in peers],
        **h.environment(["nczarr", "zarr", "numcodecs", "netCDF4", "numpy", "tensorstore", "zarrs", "isal", "deflate"]),
    }
    print(f"nczarr engine benchmark ({meta['mode']}): float32 {'x'.join(map(str, sizes.shape))} "
          f"({data.nbytes / 1e6:.0f} MB); {args.repeat} timed runs after {args.warmup} warm-up, peers interleaved; "
          f"medians; ratio = peer / nczarr (> 1: nczarr faster)")
    print("versions:", ", ".join(f"{k} {v}" for k, v in meta["packages"].items()), f"| {meta['cpu_count']} CPUs")

    with h.scratch_directory(args.dir, keep=args.keep) as root:
        print(h.check_drop_cache(root))
        print()
        stores = Stores(root, data, data1d)
        workloads = h.select(build_workloads(sizes, peers, stores), only, wanted)
        results = h.run_workloads(workloads, repeat=args.repeat, warmup=args.warmup)
        sizes_line = []
        for peer in peers:
            for key in ("zlib-slab", "zlib-tile", "blosc-slab", "blosc-tile"):
                path = os.path.join(root, os.path.basename(peer.path(root, key)))
                if os.path.exists(path):
                    sizes_line.append(f"{peer.name} {key} {h.disk_usage(path) / 1e6:.0f} MB")
        if sizes_line:
            print("stored sizes:", "; ".join(sizes_line))
            meta["stored"] = sizes_line

    print("\nSummary (median wall time; in parentheses, peer / nczarr):\n")
    print(h.format_markdown(results, [p.name for p in peers]))
    print()
    print(like_for_like(results))
    slower = h.slower_cases(results, ["zarr-python"], threshold=0.95)
    if slower:
        print("\nnczarr slower than zarr-python by more than 5 % (check the spread before believing it):")
        for name, peer, ref, ratio in slower:
            print(f"  {name}: {peer} takes {ratio:.2f}x the time of {ref}")
    if args.json:
        print("\nresults written to", h.write_json(results, "engine" + ("-quick" if args.quick else ""), args.json, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
