"""``to_nczarr`` against the real tools: what it writes reads as ``to_netcdf``'s netCDF-4 file
reads (xarray's netCDF4 engine, and netCDF4-python itself on netcdf-c's URL); appends,
regions, DataTrees; dask arrays written in parallel, chunk by chunk, on threads and on a
``dask.distributed`` cluster of worker processes."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import dask
import dask.array as da
import netCDF4
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from dask.delayed import Delayed
from xarray.backends.common import AbstractWritableDataStore

from nczarr.errors import ArgumentError
from nczarr.store.base import Store
from nczarr.xarray import NczarrBackendEntrypoint, NczarrDataStore, to_nczarr


def _dataset() -> xr.Dataset:
    """CF data: times, masked and packed values, strings, chars, an enum-free mix."""
    temperature = np.arange(48, dtype="f4").reshape(8, 6) / 4
    temperature[1, 2] = np.nan
    return xr.Dataset(
        {
            "tas": (("time", "lat"), temperature, {"units": "K", "long_name": "air temperature"}),
            "packed": (("time", "lat"), temperature.astype("f8")),
            "station": ("lat", np.array(["a", "bb", "ccc", "", "é", "f"], object)),
            "code": ("lat", np.array([b"u", b"v", b"w", b"x", b"y", b"z"])),
            "level": ((), np.int32(850)),
        },
        coords={"time": pd.date_range("2000-01-01", periods=8, freq="6h"), "lat": np.linspace(-50, 50, 6)},
        attrs={"title": "ünïcödé", "count": np.int32(3), "history": ["a", "b"]},
    )


ENCODING = {
    "tas": {"zlib": True, "complevel": 3, "shuffle": True, "chunksizes": (4, 3), "_FillValue": np.float32(-999)},
    "packed": {"dtype": "i2", "scale_factor": 0.25, "add_offset": -10.0, "_FillValue": np.int16(-1), "chunks": (8, 6)},
    "code": {"dtype": "S1"},
    "time": {"units": "hours since 1999-12-31", "dtype": "i4"},
}
#: The same for to_netcdf, which knows no ``chunks`` (to_zarr's name, which to_nczarr takes too).
NC_ENCODING = {
    name: {("chunksizes" if key == "chunks" else key): value for key, value in settings.items()}
    for name, settings in ENCODING.items()
}


@pytest.mark.parametrize("form", ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"])
def test_reads_as_to_netcdf_writes(tmp_path: Path, form: str) -> None:
    ds = _dataset()
    ds.to_netcdf(tmp_path / "ref.nc", engine="netcdf4", encoding=NC_ENCODING, unlimited_dims=["time"])
    assert to_nczarr(ds, tmp_path / "out.zarr", format=form, encoding=ENCODING, unlimited_dims=["time"]) is None
    with (
        xr.open_dataset(tmp_path / "ref.nc", engine="netcdf4") as theirs,
        xr.open_dataset(tmp_path / "out.zarr", engine="nczarr") as ours,
    ):
        xr.testing.assert_identical(ours, theirs)
        for name in ours.variables:
            for key in ("dtype", "_FillValue", "scale_factor", "add_offset", "units", "zlib", "complevel", "shuffle"):
                if key == "_FillValue" and form == "ZARR_V2":
                    continue  # a pure Zarr v2 array's fill_value is its _FillValue (as xarray's zarr engine reads it)
                assert (key in ours[name].encoding) == (key in theirs[name].encoding), (name, key)
                if key in ours[name].encoding:
                    np.testing.assert_equal(ours[name].encoding[key], theirs[name].encoding[key])
        assert ours["tas"].encoding["chunksizes"] == (4, 3) and ours["packed"].encoding["chunksizes"] == (8, 6)
        if form.startswith("NCZARR"):  # pure Zarr records no unlimited dimension
            assert ours.encoding["unlimited_dims"] == {"time"}
        # a round trip keeps the storage settings
        to_nczarr(ours, tmp_path / "again.zarr", format=form)
    with xr.open_dataset(tmp_path / "again.zarr", engine="nczarr") as again:
        assert again["tas"].encoding["chunksizes"] == (4, 3) and again["tas"].encoding["zlib"]
        assert again["packed"].encoding["dtype"] == np.int16


def test_netcdf_c_reads_nczarr_v2(tmp_path: Path) -> None:
    """The real netcdf-c (netCDF4-python's) reads the NCZARR_V2 store on its URL."""
    to_nczarr(_dataset(), tmp_path / "c.zarr", format="NCZARR_V2", encoding=ENCODING)
    url = f"file://{tmp_path / 'c.zarr'}#mode=nczarr,file"
    with xr.open_dataset(url, engine="netcdf4") as theirs, xr.open_dataset(tmp_path / "c.zarr", engine="nczarr") as ours:
        xr.testing.assert_identical(ours, theirs)
    with netCDF4.Dataset(url) as nc:
        assert nc["tas"].chunking() == [4, 3] and nc["tas"].filters()["zlib"]


def test_netcdf4_file(tmp_path: Path) -> None:
    to_nczarr(_dataset(), tmp_path / "out.nc", format="NETCDF4", encoding=ENCODING)
    with netCDF4.Dataset(tmp_path / "out.nc") as nc:
        assert nc.data_model == "NETCDF4" and nc["tas"].filters()["zlib"]
    with xr.open_dataset(tmp_path / "out.nc", engine="netcdf4") as theirs:
        xr.testing.assert_identical(theirs, _dataset())


def test_open_store_is_xarrays_writable_store(tmp_path: Path) -> None:
    with NczarrBackendEntrypoint.open_store(tmp_path / "s.zarr", mode="w") as store:
        assert isinstance(store, AbstractWritableDataStore)
        _dataset().dump_to_store(store)
    with xr.open_dataset(tmp_path / "s.zarr", engine="nczarr") as ds:
        xr.testing.assert_identical(ds, _dataset())


def test_append_and_region(tmp_path: Path) -> None:
    ds, path = _dataset(), tmp_path / "a.zarr"
    to_nczarr(ds.isel(time=slice(0, 5)), path, encoding=ENCODING, unlimited_dims=["time"])
    to_nczarr(ds.isel(time=slice(5, 8)).drop_vars(["station", "code", "level"]), path, append_dim="time")
    with xr.open_dataset(path, engine="nczarr") as out:
        xr.testing.assert_identical(out, ds)
        assert out["time"].encoding["units"] == "hours since 1999-12-31"  # encoded as stored
    patch = ds[["tas"]].isel(time=slice(2, 4), lat=slice(0, 3)) * 0 + 7
    to_nczarr(patch.drop_vars(["time", "lat"]), path, region={"time": slice(2, 4), "lat": slice(0, 3)})
    with xr.open_dataset(path, engine="nczarr") as out:
        assert (out["tas"].values[2:4, :3] == 7).all() and out["tas"].values[4, 0] == ds["tas"].values[4, 0]
    with pytest.raises(ValueError, match="not unlimited"):
        to_nczarr(ds, path, append_dim="lat")
    with pytest.raises(ValueError, match="not a dimension"):
        to_nczarr(ds, path, append_dim="nowhere")
    with pytest.raises(ValueError, match="past the stored length"):
        to_nczarr(patch.drop_vars(["time", "lat"]), path, region={"time": slice(2, 4), "lat": slice(5, 8)})
    with pytest.raises(ArgumentError, match="mode='a'"):
        to_nczarr(ds, path, mode="w", append_dim="time")


def test_datatree(tmp_path: Path) -> None:
    tree = xr.DataTree.from_dict(
        {"/": _dataset(), "/forecast": xr.Dataset({"step": ("step", [1, 2])}), "/forecast/deep": xr.Dataset({"s": 1.5})}
    )
    encoding = {"/forecast/deep": {"s": {"dtype": "f4"}}}
    to_nczarr(tree, tmp_path / "t.zarr", encoding={"/": ENCODING, **encoding})
    tree.to_netcdf(tmp_path / "t.nc", engine="netcdf4", encoding={"/": NC_ENCODING, **encoding})
    with (
        xr.open_datatree(tmp_path / "t.zarr", engine="nczarr") as ours,
        xr.open_datatree(tmp_path / "t.nc", engine="netcdf4") as theirs,
    ):
        xr.testing.assert_identical(ours, theirs)
    delayed = to_nczarr(tree.chunk(), tmp_path / "lazy.zarr", group="under/here", compute=False)
    assert isinstance(delayed, Delayed)
    delayed.compute()
    with xr.open_datatree(tmp_path / "lazy.zarr", engine="nczarr", group="under/here") as lazy:
        xr.testing.assert_identical(lazy, tree)
    with pytest.raises(ArgumentError, match="groups the DataTree does not have"):
        to_nczarr(tree, tmp_path / "u.zarr", encoding={"/nowhere": {}})


def test_bad_input_is_refused_before_anything_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "keep.zarr"
    to_nczarr(_dataset(), path)
    with pytest.raises(KeyError, match="not in the dataset"):
        to_nczarr(_dataset(), path, encoding={"nowhere": {}})
    with pytest.raises(ValueError, match="unexpected encoding"):
        to_nczarr(_dataset(), tmp_path / "other.zarr", encoding={"tas": {"colour": "red"}})
    with pytest.raises(ArgumentError, match="Dataset or DataTree"):
        to_nczarr(_dataset()["tas"], path)  # type: ignore[arg-type]
    with xr.open_dataset(path, engine="nczarr") as kept:
        xr.testing.assert_identical(kept, _dataset())


# -- dask --------------------------------------------------------------------------------------
def _lazy(rows: int = 64, cols: int = 40, chunks: tuple[int, int] = (16, 20)) -> xr.Dataset:
    values = da.arange(rows * cols, dtype="f8", chunks=rows * cols).reshape(rows, cols).rechunk(chunks)
    return xr.Dataset({"v": (("t", "x"), values, {"units": "m"})}, coords={"x": np.arange(cols)})


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys every store of this process writes from now on."""
    keys: list[str] = []
    set_many = Store.set_many

    def recording(self: Store, items: dict[str, bytes]) -> None:
        keys.extend(items)
        set_many(self, items)

    monkeypatch.setattr(Store, "set_many", recording)
    monkeypatch.setattr(Store, "set", lambda self, key, value: recording(self, {key: value}))
    return keys


def _is_chunk(key: str) -> bool:
    return not key.rsplit("/", 1)[-1].startswith((".z", "zarr.json", ".nczarr"))


@pytest.mark.parametrize("form", ["NCZARR", "ZARR_V2"])
def test_dask_writes_chunks_in_parallel_without_loading(tmp_path: Path, writes: list[str], form: str) -> None:
    ds = _lazy()
    delayed = to_nczarr(ds, tmp_path / "d.zarr", format=form, unlimited_dims=["t"], compute=False)
    assert isinstance(delayed, Delayed)
    metadata = [key for key in writes if not _is_chunk(key)]
    assert metadata and not [key for key in writes if _is_chunk(key) and key.startswith("v/")]
    del writes[:]
    with dask.config.set(scheduler="threads"):
        delayed.compute()
    assert all(_is_chunk(key) for key in writes)  # the tasks write chunks only
    assert len([key for key in writes if key.startswith("v/")]) == 4 * 2  # one write per chunk
    with xr.open_dataset(tmp_path / "d.zarr", engine="nczarr", chunks={}) as out:
        xr.testing.assert_identical(out.compute(), ds.compute())
        assert out["v"].encoding["chunksizes"] == (16, 20) and out["v"].chunks == ((16,) * 4, (20, 20))
        assert out.encoding["unlimited_dims"] == ({"t"} if form == "NCZARR" else set())


def test_misaligned_dask_chunks_are_rechunked_with_a_warning(tmp_path: Path) -> None:
    ds = _lazy(chunks=(10, 40))
    with pytest.warns(UserWarning, match="do not align with the stored chunks"):
        to_nczarr(ds, tmp_path / "m.zarr", encoding={"v": {"chunksizes": (16, 20)}})
    to_nczarr(_lazy(rows=60, chunks=(16, 40)), tmp_path / "a.zarr", unlimited_dims=["t"])
    more = _lazy(rows=20, chunks=(16, 40)).drop_vars("x")
    with pytest.warns(UserWarning, match="written from"):  # after 60 rows: a first block of 4 fills chunk 4
        to_nczarr(more.assign(v=more["v"] + 1), tmp_path / "a.zarr", append_dim="t")
    with xr.open_dataset(tmp_path / "m.zarr", engine="nczarr") as out:
        xr.testing.assert_identical(out, ds.compute())
    with xr.open_dataset(tmp_path / "a.zarr", engine="nczarr") as out:
        np.testing.assert_array_equal(out["v"].values[60:], more["v"].values + 1)
        np.testing.assert_array_equal(out["v"].values[:60], _lazy(rows=60)["v"].values)


def test_a_failed_task_leaves_the_store_readable(tmp_path: Path) -> None:
    ds = _lazy()

    def fail_on_third(block: np.ndarray, block_info: dict | None = None) -> np.ndarray:
        if block_info is not None and block_info[0]["chunk-location"] == (2, 1):
            raise RuntimeError("task failed")
        return block

    broken = ds.assign(v=ds["v"].copy(data=ds["v"].data.map_blocks(fail_on_third, dtype="f8")))
    with pytest.raises(RuntimeError, match="task failed"), dask.config.set(scheduler="threads"):
        to_nczarr(broken, tmp_path / "f.zarr", encoding={"v": {"_FillValue": -1.0}})
    with xr.open_dataset(tmp_path / "f.zarr", engine="nczarr", mask_and_scale=False) as out:
        assert out["v"].shape == (64, 40) and out["v"].attrs["units"] == "m"
        values, expected = out["v"].values, ds["v"].values
        assert (values[32:48, 20:] == -1).all()  # never written: fill
        assert ((values == expected) | (values == -1)).all()  # the blocks that ran before it stopped


def test_stores_that_only_this_process_writes(tmp_path: Path) -> None:
    """A zip archive and a .nc file: the dask arrays are written through the dataset, here."""
    for name in ("z.zip", "n.nc"):
        to_nczarr(_lazy(), tmp_path / name)
        with xr.open_dataset(tmp_path / name, engine="nczarr") as out:
            xr.testing.assert_identical(out, _lazy().compute())
        with pytest.raises(ArgumentError, match="compute=False"):
            to_nczarr(_lazy(), tmp_path / name, compute=False)
        with xr.open_dataset(tmp_path / name, engine="nczarr") as kept:  # refused before anything was replaced
            xr.testing.assert_identical(kept, _lazy().compute())


# -- the engine on every kind of location -------------------------------------------------------
def test_locations_mfdataset_and_fsspec(tmp_path: Path) -> None:
    import fsspec
    from fsspec.implementations.dirfs import DirFileSystem

    ds = _lazy().compute()
    parts = [tmp_path / f"part{i}.zarr" for i in range(4)]
    for i, path in enumerate(parts):
        to_nczarr(ds.isel(t=slice(16 * i, 16 * (i + 1))), path)
    with xr.open_mfdataset(parts, engine="nczarr", parallel=True, combine="nested", concat_dim="t") as joined:
        xr.testing.assert_identical(joined.compute(), ds)
    mapper = fsspec.get_mapper(f"file://{parts[0]}")
    assert NczarrBackendEntrypoint().guess_can_open(mapper)
    assert not NczarrBackendEntrypoint().guess_can_open(fsspec.get_mapper(f"file://{tmp_path}"))
    with xr.open_dataset(mapper) as by_mapper:  # no engine named: an NCZarr store is ours
        xr.testing.assert_identical(by_mapper, ds.isel(t=slice(0, 16)))
    filesystem = DirFileSystem(str(parts[1]), fsspec.filesystem("file"))
    with xr.open_dataset(filesystem, engine="nczarr") as by_filesystem:
        xr.testing.assert_identical(by_filesystem, ds.isel(t=slice(16, 32)))
    to_nczarr(ds, fsspec.get_mapper("memory://nczarr-test/m.zarr"))
    with xr.open_dataset("memory://nczarr-test/m.zarr", engine="nczarr", storage_options={}) as in_memory:
        xr.testing.assert_identical(in_memory, ds)
    with pytest.raises(ArgumentError, match="cannot open"):
        NczarrDataStore.open(42)


# -- dask.distributed ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster() -> object:
    from dask.distributed import Client, LocalCluster

    with (
        warnings.catch_warnings(),
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, memory_limit="256MiB", dashboard_address=None
        ) as local,
        Client(local) as client,
    ):
        warnings.simplefilter("ignore")
        yield client


def _metadata_files(path: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(path)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in path.rglob("*")
        if p.is_file() and not _is_chunk(p.name)
    }


def test_distributed_writes_more_than_a_worker_holds(tmp_path: Path, cluster: object) -> None:
    """288 MiB through two worker processes of 256 MiB each: every value lands, the workers
    write chunks only (the metadata files are not touched after the client wrote them)."""
    rows, cols = 36 * 2**10, 2**10  # float64: 288 MiB
    values = da.arange(rows * cols, dtype="f8", chunks=2**21).reshape(rows, cols).rechunk((2**11, cols))
    ds = xr.Dataset({"v": (("t", "x"), values)})
    path = tmp_path / "big.zarr"
    delayed = to_nczarr(ds, path, compute=False)
    before = _metadata_files(path)
    delayed.compute()  # type: ignore[union-attr]
    assert _metadata_files(path) == before
    with xr.open_dataset(path, engine="nczarr", chunks={}) as out:
        n = rows * cols
        assert float(out["v"].sum().compute()) == (n - 1) * n / 2
        for row, col in [(0, 0), (12345, 7), (rows - 1, cols - 1)]:
            assert out["v"][row, col].values == row * cols + col


def test_distributed_reads_pickle_by_reference(tmp_path: Path, cluster: object) -> None:
    to_nczarr(_lazy(), tmp_path / "r.zarr")
    with xr.open_dataset(tmp_path / "r.zarr", engine="nczarr", chunks={"t": 16}) as out:
        assert float(out["v"].sum().compute()) == float(_lazy()["v"].sum().compute())
    assert os.path.isdir(tmp_path / "r.zarr")
