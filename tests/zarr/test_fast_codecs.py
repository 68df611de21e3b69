"""zlib and gzip through the fast deflate libraries (ISA-L, libdeflate, zlib-ng): each writes
streams every reader decodes (the standard library, zarr-python, TensorStore, netCDF4), reads
what the others write, keeps the decoding bounds, and nczarr falls back to the standard
library when a library is missing."""

from __future__ import annotations

import logging
import sys
import zlib
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import tensorstore as ts
import zarr
from zarr.storage import LocalStore

import nczarr
from nczarr import config
from nczarr.errors import CodecError
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.zarr import create_array, open_array
from nczarr.zarr.codecs import fastzlib

LIBRARIES = list(config.DEFLATE_LIBRARIES)
#: The import each library's loader does, to simulate it missing.
MODULES = {"isal": "isal", "libdeflate": "deflate", "zlib-ng": "zlib_ng"}
SHUFFLE = {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}
CODECS = {
    "gzip": [SHUFFLE, {"name": "gzip", "configuration": {"level": 1}}],
    "zlib": [SHUFFLE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}],
    "gzip-9": [{"name": "gzip", "configuration": {"level": 9}}],
    "zlib-default": [{"name": "numcodecs.zlib", "configuration": {"level": -1}}],
}


def sample() -> np.ndarray:
    rng = np.random.default_rng(3)
    return (np.linspace(0, 50, 24 * 30 * 20).reshape(24, 30, 20) + rng.normal(0, 0.1, (24, 30, 20))).astype("f4")


@pytest.fixture(autouse=True)
def fresh_libraries() -> object:
    fastzlib.installed.cache_clear()
    yield
    fastzlib.installed.cache_clear()


def test_every_library_is_installed() -> None:
    """The test extra installs them all (fails loudly rather than skip when one is missing)."""
    assert [name for name in LIBRARIES if fastzlib.installed(name) is None] == []


def test_the_fastest_is_chosen() -> None:
    assert fastzlib.compressor_for(1).name == "isal"
    assert fastzlib.compressor_for(3).name == "isal"
    assert fastzlib.compressor_for(6).name == "libdeflate"
    assert fastzlib.compressor_for(-1).name == "libdeflate"
    assert fastzlib.compressor_for(0).name == "zlib"  # stored blocks
    assert fastzlib.decompressor().name == "libdeflate"


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("codecs", list(CODECS))
def test_round_trip_and_stdlib_decodes(library: str, codecs: str) -> None:
    data = sample()
    store = MemoryStore()
    with config.settings(deflate=library):
        assert fastzlib.compressor_for(1).name == library
        a = create_array(store, "v", shape=data.shape, dtype="f4", chunks=(5, 30, 20), compressors=CODECS[codecs])
        a[...] = data
        a.close()
        assert np.array_equal(open_array(store, "v")[...], data)
    # every chunk is a plain stream the standard library inflates
    chunk = data[:5]
    stored = store.get("v/c/0/0/0")
    raw = zlib.decompress(stored, 47)
    if codecs in ("gzip", "zlib"):
        raw = np.frombuffer(raw, np.uint8).reshape(4, -1).T.copy().tobytes()
    assert raw == chunk.tobytes()
    assert stored[:2] == (b"\x1f\x8b" if codecs.startswith("gzip") else stored[:2])
    if codecs.startswith("zlib"):
        assert stored[0] & 0x0F == 8  # a zlib header: deflate


@pytest.mark.parametrize("writer", LIBRARIES)
@pytest.mark.parametrize("reader", LIBRARIES)
def test_each_library_reads_the_others(writer: str, reader: str) -> None:
    data = sample()
    store = MemoryStore()
    with config.settings(deflate=writer):
        a = create_array(store, "v", shape=data.shape, dtype="f4", chunks=(7, 11, 20), compressors=CODECS["gzip"])
        a[...] = data
        a.close()
    with config.settings(deflate=reader):
        assert np.array_equal(open_array(store, "v")[...], data)


@pytest.mark.parametrize("library", ["isal", "libdeflate", "zlib-ng"])
def test_zarr_python_and_tensorstore_read_them(library: str, tmp_path: Path) -> None:
    data = sample()
    with config.settings(deflate=library):
        a = create_array(DirectoryStore(tmp_path), "v", shape=data.shape, dtype="f4", chunks=(5, 30, 20),
                         compressors=[{"name": "gzip", "configuration": {"level": 1}}])
        a[...] = data
        a.close()
    assert np.array_equal(zarr.open_array(LocalStore(tmp_path), path="v", mode="r")[...], data)
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "v")}}
    assert np.array_equal(ts.open(spec, open=True).result().read().result(), data)


@pytest.mark.parametrize("library", ["isal", "libdeflate", "zlib-ng"])
def test_netcdf4_reads_them(library: str, tmp_path: Path) -> None:
    data = sample()
    path = tmp_path / "x.zarr"
    with config.settings(deflate=library):
        ds = nczarr.Dataset(path, "w", format="NCZARR_V2")
        for name, n in zip("tyx", data.shape):
            ds.createDimension(name, n)
        v = ds.createVariable("v", "f4", ("t", "y", "x"), compression="zlib", complevel=1, shuffle=True,
                              chunksizes=(5, 30, 20))
        v[...] = data
        ds.close()
    theirs = netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "r")
    try:
        assert np.array_equal(theirs["v"][...], data)
    finally:
        theirs.close()


@pytest.mark.parametrize("library", LIBRARIES)
def test_zarr_python_written_data_reads(library: str, tmp_path: Path) -> None:
    data = sample()
    z = zarr.create_array(LocalStore(tmp_path), name="v", shape=data.shape, dtype="f4", chunks=(5, 30, 20),
                          filters=None, compressors=[{"name": "gzip", "configuration": {"level": 6}}])
    z[...] = data
    with config.settings(deflate=library):
        assert np.array_equal(open_array(DirectoryStore(tmp_path), "v")[...], data)


@pytest.mark.parametrize("library", LIBRARIES)
def test_bounds_hold(library: str) -> None:
    """A stream that inflates to more than a chunk, a truncated one and garbage are
    CodecErrors naming the chunk, whichever library decodes."""
    store = MemoryStore()
    a = create_array(store, "v", shape=(100,), dtype="u1", chunks=(100,), compressors=[{"name": "gzip"}])
    with config.settings(deflate=library):
        bomb = zlib.compressobj(1, zlib.DEFLATED, 31)
        store.set("v/c/0", bomb.compress(bytes(10_000_000)) + bomb.flush())
        with pytest.raises(CodecError, match="more than|decoded to"):
            a[...]
        good = zlib.compressobj(1, zlib.DEFLATED, 31)
        stream = good.compress(bytes(range(100))) + good.flush()
        store.set("v/c/0", stream[:-12])
        with pytest.raises(CodecError, match="truncated|corrupt|decod"):
            a[...]
        store.set("v/c/0", b"\x1f\x8b not a stream at all")
        with pytest.raises(CodecError, match="v/c/0"):
            a[...]
        store.set("v/c/0", stream)
        assert a[...].tolist() == list(range(100))


@pytest.mark.parametrize("missing", ["isal", "libdeflate", "zlib-ng"])
def test_falls_back_when_a_library_is_missing(missing: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, MODULES[missing], None)  # import raises ImportError
    assert fastzlib.installed(missing) is None
    assert missing not in (fastzlib.compressor_for(1).name, fastzlib.compressor_for(6).name)
    data = sample()
    store = MemoryStore()
    a = create_array(store, "v", shape=data.shape, dtype="f4", chunks=(5, 30, 20), compressors=CODECS["gzip"])
    a[...] = data
    a.close()
    assert np.array_equal(open_array(store, "v")[...], data)


def test_standard_library_alone(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    for module in MODULES.values():
        monkeypatch.setitem(sys.modules, module, None)
    assert fastzlib.compressor_for(1).name == fastzlib.decompressor().name == "zlib"
    with caplog.at_level(logging.WARNING), config.settings(deflate="isal"):
        fastzlib._warn_missing.cache_clear()
        assert fastzlib.compressor_for(1).name == "zlib"  # asked for, missing: said, not fatal
    assert "isal" in caplog.text
    data = sample()
    store = MemoryStore()
    a = create_array(store, "v", shape=data.shape, dtype="f4", chunks=(5, 30, 20), compressors=CODECS["zlib"])
    a[...] = data
    a.close()
    assert np.array_equal(open_array(store, "v")[...], data)


def test_environment_variable(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(config.DEFLATE_VARIABLE, "zlib-ng")
    assert fastzlib.compressor_for(1).name == "zlib-ng"
    with config.settings(deflate="zlib"):  # the setting wins over the environment
        assert fastzlib.compressor_for(1).name == "zlib"
    monkeypatch.setenv(config.DEFLATE_VARIABLE, "snappy")
    with caplog.at_level(logging.WARNING):
        assert config.deflate_library() is None
    assert "snappy" in caplog.text
    with pytest.raises(ValueError, match="deflate must be one of"):
        config.configure(deflate="snappy")
