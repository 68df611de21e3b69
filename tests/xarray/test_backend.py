"""The ``nczarr`` xarray engine against xarray's own engines on the same data: netCDF4 on the
``.nc`` original, zarr on the stores xarray and zarr-python wrote; the wild stores (unnamed and
renamed dimensions, data types netCDF lacks, mixed attributes) as ``nczarr dump`` and ``copy``
show them; lazy reads that touch only the chunks a selection needs."""

from __future__ import annotations

import pickle
import re
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest
import xarray as xr
import zarr

from nczarr.cli import main
from nczarr.store.base import Store
from nczarr.xarray import NczarrBackendEntrypoint

ZARR_KINDS = ["NCZARR", "NCZARR_V2", "netcdf-c"]


def _cf_dataset() -> xr.Dataset:
    """CF data as people keep it: times, a masked and packed variable, strings, a scalar."""
    temperature = np.arange(24, dtype="f4").reshape(4, 6) / 4
    temperature[1, 2] = np.nan
    return xr.Dataset(
        {
            "tas": (("time", "lat"), temperature, {"units": "K", "valid_range": np.array([0, 400], "f4")}),
            "packed": (("time", "lat"), temperature.astype("f8"), {"long_name": "packed"}),
            "station": ("lat", np.array(["a", "bb", "ccc", "", "é", "f"], object)),
            "code": ("time", np.array([b"w", b"x", b"y", b"z"])),
            "level": ((), np.int32(850)),
            "ok": ("time", np.array([True, False, True, True])),
            "height": ("lat", np.arange(6.0), {"coordinates": "station"}),
        },
        coords={"time": pd.date_range("2000-01-01", periods=4, freq="6h"), "lat": np.linspace(-50, 50, 6)},
        attrs={"title": "ünïcödé", "count": np.int32(3), "ratio": 2.5},
    )


def _write_nc(path: Path) -> Path:
    ds = _cf_dataset()
    ds["tas"].encoding.update(_FillValue=np.float32(-999), zlib=True, chunksizes=(2, 3))
    ds["packed"].encoding.update(dtype="i2", scale_factor=0.25, add_offset=1.0, _FillValue=np.int16(-1))
    ds["code"].encoding.update(dtype="S1")
    ds.to_netcdf(path, engine="netcdf4", unlimited_dims=["time"])
    with netCDF4.Dataset(path, "a") as nc:  # a group, for group=
        sub = nc.createGroup("forecast").createGroup("deep")
        sub.createDimension("step", 3)
        sub.createVariable("spread", "f8", ("step",), fill_value=-1.0)[:] = [0.5, -1.0, 2.5]
        sub.note = "deep"
        nc.createVariable("big", ">i4", ("lat",), endian="big")[:] = np.arange(6) - 3
        unsigned = nc.createVariable("ubyte", "i1", ("lat",))
        unsigned.set_auto_maskandscale(False)
        unsigned[:] = np.array([0, 1, 127, -128, -2, -1], "i1")
        unsigned._Unsigned = "true"
    return path


def _zarr_copy(nc: Path, kind: str, tmp_path: Path) -> Path:
    """The ``.nc`` file as nczarr writes it (NCZARR, NCZARR_V2) or as netcdf-c does."""
    target = tmp_path / f"{kind}.zarr"
    if kind == "netcdf-c":
        with netCDF4.Dataset(nc) as src, netCDF4.Dataset(f"file://{target}#mode=nczarr,file", "w") as dst:
            _copy_group(src, dst)
    else:
        assert main(["copy", "--format", kind, str(nc), str(target)]) == 0
    return target


def _copy_group(src: netCDF4.Group, dst: netCDF4.Group) -> None:
    for name, dim in src.dimensions.items():
        dst.createDimension(name, None if dim.isunlimited() else len(dim))
    dst.setncatts({k: src.getncattr(k) for k in src.ncattrs()})
    for name, var in src.variables.items():
        fill = var.getncattr("_FillValue") if "_FillValue" in var.ncattrs() else None
        chunks, filters = var.chunking(), var.filters()
        out = dst.createVariable(
            name,
            var.dtype.newbyteorder(">") if var.endian() == "big" else var.datatype,
            var.dimensions,
            fill_value=fill,
            chunksizes=None if chunks == "contiguous" else chunks,
            zlib=filters["zlib"],
            complevel=filters["complevel"],
            endian=var.endian(),
        )
        out.setncatts({k: var.getncattr(k) for k in var.ncattrs() if k != "_FillValue"})
        var.set_auto_maskandscale(False)
        out.set_auto_maskandscale(False)
        out[...] = var[...]
    for name, group in src.groups.items():
        _copy_group(group, dst.createGroup(name))


@pytest.fixture(scope="module")
def nc_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_nc(tmp_path_factory.mktemp("nc") / "cf.nc")


@pytest.fixture(params=ZARR_KINDS)
def zarr_store(request: pytest.FixtureRequest, nc_file: Path, tmp_path: Path) -> Path:
    return _zarr_copy(nc_file, request.param, tmp_path)


# -- the same as xarray's netCDF4 engine ----------------------------------------------------
@pytest.mark.parametrize("decode", [True, False], ids=["decoded", "raw"])
def test_same_as_netcdf4_on_the_nc_original(nc_file: Path, zarr_store: Path, decode: bool) -> None:
    options = {"mask_and_scale": decode, "decode_times": decode, "concat_characters": decode}
    with (
        xr.open_dataset(nc_file, engine="netcdf4", **options) as theirs,
        xr.open_dataset(zarr_store, engine="nczarr", **options) as ours,
    ):
        xr.testing.assert_identical(ours, theirs)
        if decode:
            assert np.isnan(ours["tas"].values[1, 2]) and np.isnan(ours["packed"].values[1, 2])
            assert ours["time"].dtype == np.dtype("datetime64[ns]")
            assert ours["station"].values.tolist() == ["a", "bb", "ccc", "", "é", "f"]
        else:
            assert ours["tas"].values[1, 2] == -999 and ours["packed"].dtype == np.int16
        for name in ours.variables:
            mine, other = ours[name].encoding, theirs[name].encoding
            for key in ("dtype", "_FillValue", "scale_factor", "add_offset", "units", "calendar", "zlib"):
                assert (key in mine) == (key in other), (name, key)
                if key in mine:
                    np.testing.assert_equal(mine[key], other[key], err_msg=f"{name}: {key}")
            if other.get("chunksizes"):  # a contiguous HDF5 variable is one chunk in Zarr
                assert mine["chunksizes"] == other["chunksizes"]
        assert ours.encoding["unlimited_dims"] == theirs.encoding["unlimited_dims"] == {"time"}
        assert ours.encoding["source"] == str(zarr_store)


def test_storage_encoding(zarr_store: Path) -> None:
    with xr.open_dataset(zarr_store, engine="nczarr") as ds:
        tas = ds["tas"].encoding
        assert tas["chunksizes"] == (2, 3) and tas["preferred_chunks"] == {"time": 2, "lat": 3}
        assert tas["zlib"] is True and tas["contiguous"] is False and tas["original_shape"] == (4, 6)


def test_groups(nc_file: Path, zarr_store: Path) -> None:
    for group in ("forecast/deep", "/forecast/deep/"):
        with (
            xr.open_dataset(zarr_store, engine="nczarr", group=group) as ours,
            xr.open_dataset(nc_file, engine="netcdf4", group="forecast/deep") as theirs,
        ):
            xr.testing.assert_identical(ours, theirs)
            assert ours["spread"].values.tolist()[0] == 0.5 and np.isnan(ours["spread"].values[1])
    with pytest.raises(OSError, match="group not found"):
        xr.open_dataset(zarr_store, engine="nczarr", group="nowhere")


def test_an_empty_group(zarr_store: Path) -> None:
    with xr.open_dataset(zarr_store, engine="nczarr", group="forecast") as ds:
        assert dict(ds.sizes) == {} and not ds.data_vars


@pytest.mark.parametrize("group", [None, "forecast"])
def test_datatree_as_netcdf4_opens_it(nc_file: Path, zarr_store: Path, group: str | None) -> None:
    ours = xr.open_datatree(zarr_store, engine="nczarr", group=group)
    theirs = xr.open_datatree(nc_file, engine="netcdf4", group=group)
    with ours, theirs:
        xr.testing.assert_identical(ours, theirs)
    groups = xr.open_groups(zarr_store, engine="nczarr")
    assert list(groups) == ["/", "/forecast", "/forecast/deep"]
    for opened in groups.values():
        opened.close()


#: Where netcdf-c reads its own store otherwise than it was written, nczarr keeps what was
#: written (as the ``.nc`` original shows it): the attribute ``_Unsigned = "true"`` that it
#: stores as JSON ``true`` and reads back as "1" (which xarray no longer takes for unsigned);
#: in pure Zarr, char arrays it reads as strings of a new ``string1`` dimension and scalars it
#: gives a ``_scalar_`` dimension.
NETCDF_C_READS_OTHERWISE = {"nczarr": ["ubyte"], "zarr": ["code", "level"], "zarr,noxarray": ["code"]}


@pytest.mark.parametrize("mode", list(NETCDF_C_READS_OTHERWISE))
def test_same_as_netcdf4_on_netcdf_c_stores(nc_file: Path, tmp_path: Path, mode: str) -> None:
    """netcdf-c's own layouts, read by netcdf-c (xarray's netCDF4 engine on the URL) and by us."""
    url = f"file://{tmp_path}/c.zarr#mode={mode},file"
    with netCDF4.Dataset(nc_file) as src, netCDF4.Dataset(url, "w") as dst:
        _copy_group(src, dst)
    otherwise = NETCDF_C_READS_OTHERWISE[mode]
    with (
        xr.open_dataset(url, engine="netcdf4", drop_variables=otherwise) as theirs,
        xr.open_dataset(tmp_path / "c.zarr", engine="nczarr") as ours,
        xr.open_dataset(nc_file, engine="netcdf4", group="/") as original,
    ):
        xr.testing.assert_identical(ours.drop_vars(otherwise), theirs)
        for name in otherwise:
            np.testing.assert_array_equal(ours[name].values.squeeze(), original[name].values)
        if mode.endswith("noxarray"):
            assert ours["tas"].dims == ("_Anonymous_Dim_4", "_Anonymous_Dim_6")
    with xr.open_dataset(url, engine="nczarr") as by_url:  # netcdf-c's URL names the store too
        assert by_url["tas"].encoding["source"] == url and by_url["tas"].shape == (4, 6)


def test_netcdf_files_open_too(nc_file: Path) -> None:
    with xr.open_dataset(nc_file, engine="nczarr") as ours, xr.open_dataset(nc_file, engine="netcdf4") as theirs:
        xr.testing.assert_identical(ours, theirs)


def test_indexing_as_numpy(zarr_store: Path, nc_file: Path) -> None:
    """Outer indexing: slices with steps (also negative), lists, integers, on the lazy array."""
    keys = [
        {"time": slice(None, None, -2), "lat": [0, 2, 5]},
        {"time": 1, "lat": slice(1, 5, 3)},
        {"lat": np.array([5, 0, 3])},
        {"time": [3, 0], "lat": -1},
    ]
    with xr.open_dataset(zarr_store, engine="nczarr") as ours, xr.open_dataset(nc_file, engine="netcdf4") as theirs:
        for key in keys:
            xr.testing.assert_identical(ours["tas"].isel(key), theirs["tas"].isel(key))
        vectorized = {"time": xr.DataArray([0, 3], dims="p"), "lat": xr.DataArray([1, 4], dims="p")}
        xr.testing.assert_identical(ours["tas"].isel(vectorized), theirs["tas"].isel(vectorized))


def test_more_of_what_xarray_checks_of_its_backends(tmp_path: Path) -> None:
    """Read checks in the spirit of xarray's own backend tests: cftime calendars, timedeltas,
    global coordinates, empty selections, no loading on print, no caching with cache=False."""
    source = xr.Dataset(
        {
            "lag": ("t", pd.to_timedelta([1, 2, 36], unit="h")),
            "empty": (("t", "e"), np.zeros((3, 0), "f4")),
            "y": ("t", [1.5, 2.5, 3.5]),
        },
        coords={"t": xr.date_range("2000-02-28", periods=3, calendar="noleap", use_cftime=True), "z": 7},
    )
    source.to_netcdf(tmp_path / "more.nc", engine="netcdf4")
    assert main(["copy", str(tmp_path / "more.nc"), str(tmp_path / "more.zarr")]) == 0
    options = {"decode_times": xr.coders.CFDatetimeCoder(use_cftime=True), "decode_timedelta": True}
    with (
        xr.open_dataset(tmp_path / "more.zarr", engine="nczarr", **options) as ours,
        xr.open_dataset(tmp_path / "more.nc", engine="netcdf4", **options) as theirs,
    ):
        xr.testing.assert_identical(ours, theirs)
        xr.testing.assert_identical(ours, source)
        assert ours.isel(t=slice(0)).sizes["t"] == 0 and ours["empty"].values.shape == (3, 0)
    with xr.open_dataset(tmp_path / "more.zarr", engine="nczarr", cache=False) as lazy:
        repr(lazy)
        lazy["y"].isel(t=[0, 2]).values  # noqa: B018
        assert not lazy["y"].variable._in_memory  # neither printing nor reading loads it


def test_reads_from_threads(tmp_path: Path) -> None:
    """As dask's threaded scheduler reads: many selections at once, each with its own values."""
    data = np.arange(64 * 64, dtype="f8").reshape(64, 64)
    xr.Dataset({"v": (("y", "x"), data)}).to_netcdf(tmp_path / "t.nc", encoding={"v": {"chunksizes": (8, 8)}})
    assert main(["copy", str(tmp_path / "t.nc"), str(tmp_path / "t.zarr")]) == 0
    with xr.open_dataset(tmp_path / "t.zarr", engine="nczarr", cache=False) as ds, ThreadPoolExecutor(4) as pool:
        rows = list(pool.map(lambda i: ds["v"].isel(y=slice(i, i + 3), x=[i, 63 - i]).values, range(60)))
    for i, part in enumerate(rows):
        np.testing.assert_array_equal(part, data[i : i + 3][:, [i, 63 - i]])


def test_pickles_by_reference(zarr_store: Path) -> None:
    """As dask sends it to workers: the file manager reopens the store by name."""
    with xr.open_dataset(zarr_store, engine="nczarr") as ds:
        again = pickle.loads(pickle.dumps(ds))
        xr.testing.assert_identical(again.load(), ds.load())
        again.close()


# -- lazy ------------------------------------------------------------------------------------
@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys every store reads from now on."""
    keys: list[str] = []
    get, get_into, get_many = Store.get, Store.get_into, Store.get_many

    def counting_get(self: Store, key: str, byte_range: object = None) -> bytes:
        keys.append(key)
        return get(self, key, byte_range)  # type: ignore[arg-type]

    def counting_get_into(self: Store, key: str, buffer: memoryview | bytearray) -> bool:
        keys.append(key)
        return get_into(self, key, buffer)

    def counting_get_many(self: Store, wanted: Iterator[str], byte_range: object = None) -> dict[str, bytes]:
        wanted = list(wanted)
        keys.extend(wanted)
        return get_many(self, wanted, byte_range)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "get", counting_get)
    monkeypatch.setattr(Store, "get_into", counting_get_into)
    monkeypatch.setattr(Store, "get_many", counting_get_many)
    return keys


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_reads_only_the_chunks_a_selection_touches(tmp_path: Path, zarr_format: int, reads: list[str]) -> None:
    path = tmp_path / "big.zarr"
    data = np.arange(100 * 1000, dtype="i4").reshape(100, 1000)
    xr.Dataset({"v": (("y", "x"), data)}).to_zarr(
        path, zarr_format=zarr_format, encoding={"v": {"chunks": (10, 100)}}, consolidated=False
    )
    with xr.open_dataset(path, engine="nczarr") as ds:
        opened = len(reads)
        assert not any(re.search(r"(^|/)v/(c/)?\d", key) for key in reads)  # opening reads metadata only
        part = ds["v"].isel(y=slice(15, 25), x=[5, 250]).values
        np.testing.assert_array_equal(part, data[15:25][:, [5, 250]])
        chunk_keys = {key for key in reads[opened:] if re.search(r"(^|/)v/(c/)?\d", key)}
        assert len(chunk_keys) == 4  # rows 10-19 and 20-29, columns 0-99 and 200-299
        assert ds["v"].encoding["preferred_chunks"] == {"y": 10, "x": 100}


# -- stores xarray and zarr-python wrote -------------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_same_as_the_zarr_engine_on_xarray_stores(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "x.zarr"
    source = _cf_dataset().drop_vars("code")
    source["tas"].encoding.update(_FillValue=np.float32(-999), chunks=(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source.to_zarr(path, zarr_format=zarr_format, consolidated=zarr_format == 2)
        with xr.open_dataset(path, engine="zarr") as theirs, xr.open_dataset(path, engine="nczarr") as ours:
            xr.testing.assert_identical(ours, theirs)
            assert ours["tas"].encoding["chunksizes"] == (2, 3)
            assert np.isnan(ours["tas"].values[1, 2])


def test_does_not_claim_what_others_read(tmp_path: Path, nc_file: Path, zarr_store: Path) -> None:
    entry = NczarrBackendEntrypoint()
    xr.Dataset({"v": ("x", [1, 2])}).to_zarr(tmp_path / "pure.zarr", zarr_format=3, consolidated=False)
    assert entry.guess_can_open(zarr_store) and entry.guess_can_open(str(zarr_store))
    assert entry.guess_can_open(f"file://{zarr_store}#mode=nczarr,file")
    assert not entry.guess_can_open(tmp_path / "pure.zarr")  # xarray's zarr engine's
    assert not entry.guess_can_open(nc_file) and not entry.guess_can_open(tmp_path / "missing.zarr")
    assert not entry.guess_can_open(b"CDF\x01")
    with xr.open_dataset(zarr_store) as ds:  # no engine named: ours
        assert ds["tas"].encoding["source"] == str(zarr_store)


def test_zip_archives(nc_file: Path, tmp_path: Path) -> None:
    archive = tmp_path / "cf.zip"
    assert main(["copy", str(nc_file), str(archive)]) == 0
    assert NczarrBackendEntrypoint().guess_can_open(archive)
    with xr.open_dataset(archive) as ours, xr.open_dataset(nc_file, engine="netcdf4") as theirs:
        xr.testing.assert_identical(ours, theirs)


# -- stores from the wild, as dump and copy show them ------------------------------------------
def _dump_header(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[str, ...]]:
    """Each variable's dimensions in ``nczarr dump -h`` of the root group."""
    assert main(["dump", "-h", str(path)]) == 0
    out = capsys.readouterr().out.split("\n\ngroup:")[0]
    found = {}
    for match in re.finditer(r"^\t\S+ (\\?\S+?)(?:\(([^)]*)\))? ;$", out, re.MULTILINE):
        name = match.group(1).replace("\\", "")
        found[name] = tuple(d.strip() for d in match.group(2).split(",")) if match.group(2) else ()
    return found


def _check_like_dump_and_copy(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> xr.Dataset:
    """The engine's variables and dimensions are dump's; a copy to netCDF-4 reads the same."""
    ds = xr.open_dataset(path, engine="nczarr", decode_times=False)
    assert {name: v.dims for name, v in ds.variables.items()} == _dump_header(path, capsys)
    copied = tmp_path / "copy.nc"
    assert main(["copy", str(path), str(copied)]) == 0
    with xr.open_dataset(copied, engine="netcdf4", decode_times=False) as theirs:
        xr.testing.assert_equal(ds, theirs)
    return ds


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_unnamed_dimensions(tmp_path: Path, zarr_format: int, capsys: pytest.CaptureFixture[str]) -> None:
    root = zarr.open_group(tmp_path / "unnamed.zarr", mode="w", zarr_format=zarr_format)
    root.create_array("a", shape=(3, 4), dtype="i4", compressors=None, fill_value=-1)[:] = np.arange(12).reshape(3, 4)
    root.create_array("b", shape=(4,), dtype="f8", compressors=None)[:] = [0.5, 1.5, 2.5, 3.5]
    with _check_like_dump_and_copy(tmp_path / "unnamed.zarr", tmp_path, capsys) as ds:
        assert ds["a"].dims == ("_Anonymous_Dim_3", "_Anonymous_Dim_4") and ds["b"].dims == ("_Anonymous_Dim_4",)
        np.testing.assert_array_equal(ds["a"].values, np.arange(12).reshape(3, 4))
        np.testing.assert_array_equal(ds["b"].values, [0.5, 1.5, 2.5, 3.5])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_image_pyramid(tmp_path: Path, zarr_format: int, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "image.zarr"
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    root.attrs["multiscales"] = [{"version": "0.4", "datasets": [{"path": str(i)} for i in range(3)]}]
    for level in range(3):
        n = 8 >> level
        named = {"dimension_names": ["y", "x"]} if zarr_format == 3 else {"attributes": {"_ARRAY_DIMENSIONS": ["y", "x"]}}
        # a fill value not in the data: the engine masks a v2 fill_value (as xarray's zarr
        # engine does), a netCDF copy has no _FillValue attribute (as netcdf-c reads it)
        array = root.create_array(str(level), shape=(n, n), dtype="u2", compressors=None, fill_value=9, **named)
        array[:] = np.full((n, n), level)
    with _check_like_dump_and_copy(path, tmp_path, capsys) as ds:
        assert {name: v.dims for name, v in ds.variables.items()} == {
            "0": ("y", "x"),
            "1": ("y_2", "x_2"),
            "2": ("y_3", "x_3"),
        }
        assert ds["2"].values.tolist() == [[2, 2], [2, 2]]
        assert ds.attrs["multiscales"].startswith('[{"version":')  # JSON text, as netcdf-c shows it


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_data_types_netcdf_lacks(tmp_path: Path, zarr_format: int, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "types.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python: these types are not in the v2/v3 spec
        root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
        root.attrs.update({"mixed": [1, "a", 2.5], "nested": {"a": 1}, "flag": True})
        named = {"dimension_names": ["x"]} if zarr_format == 3 else {"attributes": {"_ARRAY_DIMENSIONS": ["x"]}}
        arrays = {
            "half": np.array([1.5, np.nan, 65504.0], "f2"),
            "wave": np.array([1 + 2j, 3 - 4j, 0j], "c16"),
            "when": np.array(["2020-01-01", "NaT", "2021-06-01T12:00"], "datetime64[s]"),
        }
        for name, values in arrays.items():
            root.create_array(name, shape=(3,), dtype=values.dtype, compressors=None, **named)[:] = values
    with _check_like_dump_and_copy(path, tmp_path, capsys) as ds:
        assert sorted(ds.variables) == ["half", "wave", "when"]
        assert ds["half"].dtype == np.float32 and ds["wave"].dtype.names == ("r", "i")  # netCDF4's default
        wave = ds["wave"].values
        np.testing.assert_array_equal(wave["r"] + 1j * wave["i"], arrays["wave"])
        assert ds.attrs["mixed"] == '[1,"a",2.5]' and ds.attrs["flag"] == 1
    with xr.open_dataset(path, engine="nczarr") as decoded:  # CF units: the times come back
        np.testing.assert_array_equal(decoded["when"].values, arrays["when"].astype("datetime64[ns]"))
        np.testing.assert_array_equal(decoded["half"].values, arrays["half"].astype("f4"))
