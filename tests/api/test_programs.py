"""What programs written for netCDF4-python (cfdm, compliance-checker, Iris) rely on, each
side by side with the real netCDF4 on the same calls (issue 30; the programs' own suites run
with benchmarks/clients.py)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest

import nczarr

LIBRARIES = {"netCDF4": netCDF4, "nczarr": nczarr}


def _url(path: Path) -> str:
    return f"file://{os.path.abspath(path)}#mode=nczarr,v3,file"


# -- stringtochar of a masked array --------------------------------------------------------------


def test_stringtochar_of_a_masked_array_as_netcdf4() -> None:
    # a CF writer's string data with missing values: they become the array's fill value
    strings = np.ma.masked_array(np.array([["ab", "cde", ""], ["x", "", "z"]], "S5"), mask=[[0, 1, 0], [1, 0, 0]])
    ours = nczarr.stringtochar(strings)
    theirs = netCDF4.stringtochar(strings)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape == (2, 3, 5)
    assert (ours == theirs).all()
    utf8 = nczarr.stringtochar(strings.astype("U5"), encoding="utf-8", n_strlen=3)  # netCDF4 fails here
    assert utf8[0, 1].tolist() == [b"N", b"/", b"A"] and utf8[1, 2].tolist() == [b"z", b"", b""]


# -- _FillValue through setncatts ----------------------------------------------------------------


def _fill_after_creation(library: Any, path: str, format: str) -> tuple[Any, ...]:
    with library.Dataset(path, "w", format=format) as ds:
        ds.createDimension("x", 3)
        var = ds.createVariable("v", "f4", ("x",))
        var.setncatts({"units": "m", "_FillValue": np.float32(-1)})
        with pytest.raises(AttributeError, match="_FillValue attribute must be set when variable is created"):
            var.setncattr("_FillValue", np.float32(-2))
        with pytest.raises(AttributeError, match="_FillValue attribute must be set when variable is created"):
            var._FillValue = np.float32(-2)
        var[0] = 5
        late: str | None = None
        try:
            var.setncatts({"_FillValue": np.float32(-3)})
        except AttributeError as error:
            late = str(error)
        attributes = dict(var.__dict__)
    with library.Dataset(path) as ds:
        values = ds["v"][:]
        return attributes, late, values.tolist(fill_value=None), list(ds["v"].ncattrs())


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF3_CLASSIC"])
def test_setncatts_sets_the_fill_value_as_netcdf4(tmp_path: Path, format: str) -> None:
    """netCDF4 refuses ``_FillValue`` in setncattr and attribute assignment only; netcdf-c
    then refuses a new fill value once netCDF-4 data are written (netCDF-3 takes it)."""
    theirs = _fill_after_creation(netCDF4, str(tmp_path / "theirs.nc"), format)
    ours = _fill_after_creation(nczarr, str(tmp_path / "ours.nc"), format)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert sorted(ours[3]) == sorted(theirs[3]) == ["_FillValue", "units"]
    if format == "NETCDF4":
        assert ours[2] == theirs[2] == [5.0, None, None]
        store = _fill_after_creation(nczarr, _url(tmp_path / "ours.zarr"), format)
        assert store[:2] == theirs[:2] and store[2] == [5.0, None, None]


# -- storage settings netCDF-3 lacks -------------------------------------------------------------


@pytest.mark.parametrize("library", LIBRARIES)
def test_netcdf3_ignores_storage_settings(tmp_path: Path, library: str) -> None:
    path = str(tmp_path / "classic.nc")
    with LIBRARIES[library].Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        contiguous = ds.createVariable("c", "f4", ("t", "x"), contiguous=True)
        chunked = ds.createVariable("k", "f4", ("t", "x"), chunksizes=(1,))  # even a wrong length
        assert contiguous.chunking() is None and chunked.chunking() is None
        contiguous[0:2] = np.arange(6).reshape(2, 3)
    with netCDF4.Dataset(path) as ds:
        assert ds.data_model == "NETCDF3_CLASSIC"
        assert ds["c"][:].tolist() == [[0, 1, 2], [3, 4, 5]]


# -- what programs read of variables -------------------------------------------------------------


def test_variable_name_attribute_and_canonical_dtypes(tmp_path: Path) -> None:
    path = str(tmp_path / "types.nc")
    codes = ["f4", "f8", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"]
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 2)
        for code in codes:
            ds.createVariable(f"v{code}", code, ("x",))
        ds.createVariable("little", "f4", ("x",), endian="little")
    for library in LIBRARIES.values():
        with library.Dataset(path) as ds:
            for name, var in ds.variables.items():
                assert var._name == var.name == name
                # programs test dtypes with `is`: netCDF4 hands out numpy's own instances
                assert var.dtype is np.dtype(var.dtype.str), (library.__name__, name)
                assert var[:].dtype is np.dtype(var.dtype.str)
    with nczarr.Dataset(_url(tmp_path / "types.zarr"), "w") as ds:
        ds.createDimension("x", 2)
        assert ds.createVariable("v", "f4", ("x",), endian="little").dtype is np.dtype("float32")


# -- a dataset in a folder that does not exist ---------------------------------------------------


@pytest.mark.parametrize("name", ["x.zarr", "url"])
def test_no_store_in_a_missing_folder(tmp_path: Path, name: str) -> None:
    """netcdf-c creates no parent folders; nczarr raises an error that is a FileNotFoundError
    (and the PermissionError netCDF4 raises for a file there)."""
    missing = tmp_path / "missing" / "deeper"
    path = _url(missing / "x.zarr") if name == "url" else str(missing / name)
    for mode in ("w", "a", "r+"):
        with pytest.raises(FileNotFoundError) as caught:
            nczarr.Dataset(path, mode)
        assert isinstance(caught.value, PermissionError) and isinstance(caught.value, nczarr.NCZarrError)
        assert caught.value.errno == 2 and "missing/deeper" in str(caught.value)
    assert not (tmp_path / "missing").exists()
    with nczarr.Dataset(path, "w", diskless=True) as ds:  # nothing is written: no folder needed
        ds.createDimension("x", 1)


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF4_CLASSIC", "NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET"])
@pytest.mark.parametrize("mode", ["w", "x", "a", "r+"])
def test_no_file_in_a_missing_folder_as_netcdf4(tmp_path: Path, format: str, mode: str) -> None:
    """A .nc file in a folder that does not exist fails with netCDF4's errno and message
    (Iris matches "Permission denied"): EACCES from HDF5's failed create and from an
    update, ENOENT from netcdf-c's own create of a netCDF-3 file."""
    path = str(tmp_path / "missing" / "x.nc")
    kwargs = {"format": format} if mode in ("w", "x") else {}
    errors = []
    for library in (netCDF4, nczarr):
        with pytest.raises(OSError) as caught:
            library.Dataset(path, mode, **kwargs)
        errors.append((caught.value.errno, caught.value.strerror, caught.value.filename))
    assert errors[0] == errors[1]
    assert not (tmp_path / "missing").exists()


# -- a dataset dropped unclosed --------------------------------------------------------------


def _drop(dataset: Any) -> None:
    """Leave ``dataset`` unclosed to the garbage collector (a reference cycle holds it)."""
    cycle: list[Any] = [dataset]
    cycle.append(cycle)


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF3_64BIT_OFFSET"])
def test_a_dropped_dataset_never_replaces_a_newer_file(tmp_path: Path, format: str, caplog: Any) -> None:
    """A ``.nc`` dataset never closed is written when collected, but only over the file it
    opened: not over one written at the same path meanwhile (here by netCDF4 and by hand;
    nczarr's own writers wait for its lock, which collects the dropped dataset first)."""
    path = str(tmp_path / "x.nc")
    dropped = nczarr.Dataset(path, "w", format=format)
    dropped.createDimension("x", 1000)
    dropped.createVariable("old", "f8", ("x",))[:] = 1
    _drop(dropped)
    del dropped
    with netCDF4.Dataset(path, "w", format=format) as newer:
        newer.createDimension("y", 2)
        newer.createVariable("new", "i4", ("y",))[:] = [7, 8]
    gc.collect()
    nczarr.Dataset(path).close()  # nczarr closes what the collector found before it opens
    with netCDF4.Dataset(path) as ds:
        assert list(ds.variables) == ["new"] and ds.data_model == format
    assert "replaced or changed since this dataset opened it" in caplog.text
    dropped = nczarr.Dataset(path, "a")
    dropped.createVariable("later", "i4", ("y",))
    _drop(dropped)
    del dropped
    Path(path).write_bytes(b"not nczarr's")
    gc.collect()
    with nczarr.Dataset(str(tmp_path / "other.nc"), "w"):
        pass
    assert Path(path).read_bytes() == b"not nczarr's"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".nczarr-lock")) == ["other.nc", "x.nc"]


def test_an_unclosed_dataset_is_still_written(tmp_path: Path) -> None:
    path = str(tmp_path / "x.nc")
    dropped = nczarr.Dataset(path, "w")
    dropped.createDimension("x", 2)
    dropped.createVariable("v", "i4", ("x",))[:] = [1, 2]
    del dropped
    gc.collect()  # a dataset is in reference cycles (its variables know it): collected here
    # ... but not closed inside the collector, which may run within non-re-entrant C code
    # (numpy's errstate: a finalizer entering it there crashes the interpreter)
    assert not os.path.exists(path)
    with nczarr.Dataset(path) as ds:  # closed before this opens (a safe point), so written
        assert ds["v"][:].tolist() == [1, 2]
    with netCDF4.Dataset(path) as ds:
        assert ds["v"][:].tolist() == [1, 2]


def test_datasets_left_open_are_written_at_exit(tmp_path: Path) -> None:
    script = tmp_path / "leave_open.py"
    script.write_text(
        "import sys, nczarr\n"
        "kept = nczarr.Dataset(sys.argv[1], 'w')\n"
        "kept.createDimension('x', 2)\n"
        "kept.createVariable('v', 'i4', ('x',))[:] = [3, 4]\n"
        "dropped = nczarr.Dataset(sys.argv[2], 'w', format='NETCDF3_CLASSIC')\n"
        "dropped.createDimension('x', 1)\n"
        "cycle = [dropped]; cycle.append(cycle); del dropped, cycle\n"
        "import gc; gc.collect()\n"
    )
    kept, dropped = str(tmp_path / "kept.nc"), str(tmp_path / "dropped.nc")
    env = dict(os.environ, PYTHONPATH=str(Path(nczarr.__file__).parent.parent))
    subprocess.run([sys.executable, str(script), kept, dropped], check=True, env=env)
    with netCDF4.Dataset(kept) as ds:
        assert ds["v"][:].tolist() == [3, 4]
    with netCDF4.Dataset(dropped) as ds:
        assert ds.data_model == "NETCDF3_CLASSIC" and list(ds.dimensions) == ["x"]


# -- unwritten data in a netCDF-4 file -----------------------------------------------------------


def _unwritten(library: Any, path: str, kind: str) -> None:
    with library.Dataset(path, "w") as ds:
        ds.createDimension("y", 400)
        ds.createDimension("x", 500)
        ds.createDimension("t", None)
        chunks = {} if kind == "contiguous" else {"chunksizes": (100, 100)}
        var = ds.createVariable("v", "f8", ("y", "x"), **chunks)
        records = ds.createVariable("r", "i4", ("t", "x"), fill_value=-1)
        records[3, 0:10] = 7  # four records: three never written
        if kind == "partial":
            var[0:100, 0:100] = 1.5
            var[399, 499] = 2.5


@pytest.mark.parametrize("kind", ["contiguous", "chunked", "partial"])
def test_unwritten_values_take_no_room_as_with_netcdf4(tmp_path: Path, kind: str) -> None:
    """netCDF-4 allocates no chunk never written (nor a contiguous variable never written):
    a .nc file nczarr writes is as small as netCDF4's, and reads the same."""
    theirs, ours = str(tmp_path / "theirs.nc"), str(tmp_path / "ours.nc")
    _unwritten(netCDF4, theirs, kind)
    _unwritten(nczarr, ours, kind)
    assert os.path.getsize(ours) <= os.path.getsize(theirs) * 1.05 + 2048
    with netCDF4.Dataset(theirs) as expected, netCDF4.Dataset(ours) as got:
        for name in ("v", "r"):
            assert got[name].chunking() == expected[name].chunking()
            values, wanted = got[name][:], expected[name][:]
            assert np.array_equal(np.ma.getmaskarray(values), np.ma.getmaskarray(wanted))
            assert np.array_equal(values.filled(0), wanted.filled(0))


@pytest.mark.parametrize("mode", ["a", "r+"])
def test_unwritten_chunks_stay_unallocated_in_an_update_as_with_netcdf4(tmp_path: Path, mode: str) -> None:
    """A .nc file (made by netCDF4) updated in 'a'/'r+': a variable added and never written,
    and the chunks of a variable never written, take no room, as netCDF4 leaves them."""
    sizes, read = {}, {}
    for name, library in LIBRARIES.items():
        path = str(tmp_path / f"{name}.nc")
        _unwritten(netCDF4, path, "chunked")
        with library.Dataset(path, mode) as ds:
            ds.createVariable("added", "f8", ("y", "x"), chunksizes=(100, 100))  # never written
            ds["v"][0, 0] = 4.5  # one chunk of v written
        sizes[name] = os.path.getsize(path)
        with netCDF4.Dataset(path) as ds:
            read[name] = [ds[v][:] for v in ("v", "added", "r")]
    assert sizes["nczarr"] <= sizes["netCDF4"] * 1.05 + 2048
    for got, expected in zip(read["nczarr"], read["netCDF4"], strict=True):
        assert np.array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(expected))
        assert np.array_equal(got.filled(0), expected.filled(0))


def test_contiguous_in_a_zarr_store_is_one_chunk_as_netcdf4_says(tmp_path: Path) -> None:
    """netCDF4 (netcdf-c) on an NCZarr store reports the one chunk of a variable created
    contiguous, while open and after; in a .nc file it is contiguous."""
    reports = {}
    for name, library in LIBRARIES.items():
        url = f"file://{tmp_path / name}.zarr#mode=nczarr,file"
        with library.Dataset(url, "w") as ds:
            ds.createDimension("x", 10)
            var = ds.createVariable("v", "f4", ("x",), contiguous=True)
            var[:] = 1
            open_report = var.chunking()
        with library.Dataset(url) as ds:
            reports[name] = (open_report, ds["v"].chunking())
        with library.Dataset(str(tmp_path / f"{name}.nc"), "w") as ds:
            ds.createDimension("x", 10)
            assert ds.createVariable("v", "f4", ("x",), contiguous=True).chunking() == "contiguous"
    assert reports["nczarr"] == reports["netCDF4"] == ([10], [10])
