"""netCDF4-python's remaining behaviours, each side by side with the real netCDF4 (netcdf-c
4.10.1) on the same data: complex numbers (``auto_complex``), text attributes holding NUL
or non-UTF-8 bytes, packing of vlen integers, fancy indexing after writes, and the JSON
netcdf-c writes (numbers such as ``02``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import h5py
import netCDF4
import numpy as np
import pytest

import nczarr

LIBRARIES = {"netCDF4": netCDF4, "nczarr": nczarr}
VALUES = np.array([[1 + 2j, 3 - 1j], [0.5j, -2.0]])


def _url(path: Path) -> str:
    return f"file://{os.path.abspath(path)}#mode=nczarr,file"


# -- complex numbers -----------------------------------------------------------------------------


def _write_complex(library: Any, path: str, dtype: str = "c16", **kwargs: Any) -> None:
    with library.Dataset(path, "w", auto_complex=True, **kwargs) as ds:
        ds.createDimension("x", 2)
        ds.createDimension("y", 2)
        var = ds.createVariable("z", dtype, ("x", "y"))
        var[:] = VALUES
        var[1, 1] = 7 + 7j


def _complex_view(library: Any, path: str) -> tuple[Any, ...]:
    """What the API shows of the complex variable ``z``."""
    with library.Dataset(path, auto_complex=True) as ds:
        z = ds["z"]
        return (
            z.dtype, z.shape, z.dimensions, z.ndim, sorted(ds.dimensions), sorted(ds.cmptypes),
            repr(z[:]), repr(z[1]), repr(z[0, 1]), repr(z[[0, 1], 1]),
        )  # fmt: skip


@pytest.mark.parametrize("fmt", ["NETCDF4", "NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET"])
def test_complex_files_read_and_written_alike(fmt: str, tmp_path: Path) -> None:
    """The compound {r, i} (netCDF-4) or the trailing ``_pfnc_complex`` dimension (netCDF-3):
    each library reads the other's file as netCDF4 reads its own."""
    paths = {name: str(tmp_path / f"{name}.nc") for name in LIBRARIES}
    for name, library in LIBRARIES.items():
        _write_complex(library, paths[name], format=fmt)
    expected = _complex_view(netCDF4, paths["netCDF4"])
    assert expected[0] == np.complex128 and expected[2] == ("x", "y")
    for reader in LIBRARIES.values():
        for path in paths.values():
            assert _complex_view(reader, path) == expected


def _write_scalar_and_record(library: Any, path: str, fmt: str) -> None:
    with library.Dataset(path, "w", auto_complex=True, format=fmt) as ds:
        ds.createVariable("s", "c16", ()).assignValue(1 + 2j)
        group = ds.createGroup("g") if fmt == "NETCDF4" else ds
        group.createDimension("t", None)
        group.createVariable("u", "c16", ("t",))[0:3] = [1j, 2, 3 + 3j]


@pytest.mark.parametrize("fmt", ["NETCDF4", "NETCDF3_CLASSIC"])
def test_complex_scalars_groups_and_records(fmt: str, tmp_path: Path) -> None:
    views = []
    for name, library in LIBRARIES.items():
        path = str(tmp_path / f"{name}.nc")
        _write_scalar_and_record(library, path, fmt)
        for reader in LIBRARIES.values():
            with reader.Dataset(path, auto_complex=True) as ds:
                group = ds["g"] if fmt == "NETCDF4" else ds
                u = group["u"]
                views.append((repr(ds["s"][...]), repr(ds["s"].getValue()), u.shape, u.dimensions, repr(u[:]), repr(u[1])))
    assert all(view == views[0] for view in views)


def test_complex64_is_the_float_compound(tmp_path: Path) -> None:
    """nczarr writes complex64 as nc-complex's float compound, which netCDF4 reads back as
    complex64 (netCDF4 1.7.5 itself writes complex64 data into the double compound)."""
    path = str(tmp_path / "c8.nc")
    _write_complex(nczarr, path, dtype="c8")
    with netCDF4.Dataset(path, auto_complex=True) as ds:
        assert ds["z"].dtype == np.complex64 and list(ds.cmptypes) == ["_PFNC_FLOAT_COMPLEX_TYPE"]
        np.testing.assert_array_equal(ds["z"][0], VALUES[0].astype("c8"))


@pytest.mark.parametrize("fmt", ["NCZARR", "ZARR", "ZARR_V2"])
def test_complex_on_zarr_stores(fmt: str, tmp_path: Path) -> None:
    """On Zarr stores: the compound (NCZARR) or Zarr's complex data type (pure Zarr), read as
    netCDF4 reads its own netCDF-4 file."""
    reference, store = str(tmp_path / "ref.nc"), str(tmp_path / "c.zarr")
    _write_complex(netCDF4, reference)
    _write_complex(nczarr, store, format=fmt)
    assert _complex_view(nczarr, store) == _complex_view(netCDF4, reference)


def test_complex_on_nczarr_v2_is_read_by_netcdf4(tmp_path: Path) -> None:
    """NCZARR_V2 holds no compound (netCDF4 itself fails there): nczarr writes nc-complex's
    ``_pfnc_complex`` dimension, which netCDF4 reads as it reads nczarr's reading."""
    store = tmp_path / "v2.zarr"
    _write_complex(nczarr, str(store), format="NCZARR_V2")
    assert _complex_view(netCDF4, _url(store)) == _complex_view(nczarr, str(store))
    with netCDF4.Dataset(_url(store)) as ds:  # without auto_complex: the float pairs
        assert ds["z"].dimensions == ("x", "y", "_pfnc_complex") and ds["z"].dtype == np.float64


def test_complex_without_auto_complex(tmp_path: Path) -> None:
    path = str(tmp_path / "c.nc")
    _write_complex(netCDF4, path)
    for library in LIBRARIES.values():
        with library.Dataset(path) as ds:
            assert ds["z"].dtype.names == ("r", "i") and ds["z"][1, 1].tolist() == (7.0, 7.0)
        with library.Dataset(str(tmp_path / f"{library.__name__}.nc"), "w") as ds:
            ds.createDimension("x", 1)
            with pytest.raises(Exception):
                ds.createVariable("z", "c16", ("x",))


def test_nc_complex_compound_names(tmp_path: Path) -> None:
    """nc-complex reads a compound of two floats named r... and i... as complex, others as
    compounds."""
    path = tmp_path / "names.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 2)
        for first, second in (("r", "i"), ("real", "imag"), ("Re", "Im"), ("x", "y")):
            dtype = np.dtype([(first, "<f4"), (second, "<f4")])
            compound = ds.createCompoundType(dtype, f"{first}_{second}_t")
            ds.createVariable(f"{first}_{second}", compound, ("x",))[:] = np.array([(1, 2), (3, 4)], dtype)
    views = {}
    for name, library in LIBRARIES.items():
        with library.Dataset(path, auto_complex=True) as ds:
            views[name] = {n: (str(v.dtype), repr(v[:])) for n, v in ds.variables.items()}
    assert views["nczarr"] == views["netCDF4"]
    assert views["netCDF4"]["real_imag"][0] == "complex64"


# -- text attributes -----------------------------------------------------------------------------


def test_text_attributes_with_nul_and_non_utf8_bytes(tmp_path: Path) -> None:
    """netCDF4 decodes text with errors='replace' and removes every NUL."""
    path = tmp_path / "text.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 1)
        var = ds.createVariable("v", "i4", ("x",))
        var.setncattr("trailing", "ab\x00")
        var.setncattr("inside", "a\x00b")
        var.setncattr_string("string", "s\x00t")
    with h5py.File(path, "a") as f:  # bytes that are not UTF-8, as other writers leave them
        f.attrs["latin1"] = np.bytes_(b"caf\xe9")
        f.attrs.create("ascii", b"x\xffy", dtype=h5py.string_dtype("ascii"))
        f.attrs.create("strings", np.array([b"p\xfe", b"ok"], dtype=object), dtype=h5py.string_dtype("utf-8"))
    views = {}
    for name, library in LIBRARIES.items():
        with library.Dataset(path) as ds:
            views[name] = (
                {k: ds.getncattr(k) for k in ds.ncattrs()},
                {k: ds["v"].getncattr(k) for k in ds["v"].ncattrs()},
            )
    assert views["nczarr"] == views["netCDF4"]
    assert views["netCDF4"][1]["inside"] == "ab" and views["netCDF4"][0]["latin1"] == "caf\ufffd"


# -- packing of vlen integers --------------------------------------------------------------------


def _write_vlen(library: Any, path: str) -> None:
    with library.Dataset(path, "w") as ds:
        ds.createDimension("x", 2)
        vlen = ds.createVLType(np.int16, "vi")
        var = ds.createVariable("v", vlen, ("x",))
        var.scale_factor = np.float32(0.5)
        var.add_offset = 1.0
        var.set_auto_maskandscale(False)
        data = np.empty(2, object)
        data[0], data[1] = np.array([1, 2], np.int16), np.array([3], np.int16)
        var[:] = data


@pytest.mark.parametrize("scale", [True, False])
def test_vlen_integers_are_unpacked(scale: bool, tmp_path: Path) -> None:
    paths = {name: str(tmp_path / f"{name}.nc") for name in LIBRARIES}
    for name, library in LIBRARIES.items():
        _write_vlen(library, paths[name])
    views = []
    for library in LIBRARIES.values():
        for path in paths.values():
            with library.Dataset(path) as ds:
                ds["v"].set_auto_scale(scale)
                views.append([(a.dtype, a.tolist()) for a in ds["v"][:]] + [repr(ds["v"][1])])
    assert all(view == views[0] for view in views)
    assert views[0][0] == ((np.float64, [1.5, 2.0]) if scale else (np.int16, [1, 2]))


def _write_scaled_vlen(library: Any, path: str, scale: bool) -> list[Any]:
    """netCDF4's test_vlen.py Vlen_ScaledInts: floats written to a vlen of small integers with
    ``scale_factor`` (and ``add_offset``) are packed, element by element."""
    with library.Dataset(path, "w") as ds:
        ds.createDimension("x", None)
        var = ds.createVariable("vl", ds.createVLType(np.uint8, "vltest"), ("x",))
        var.scale_factor = 1.0 / 254.0
        var.missing_value = np.array(255, np.uint8)
        offset = ds.createVariable("off", ds.createVLType(np.int16, "vi"), ("x",))
        offset.scale_factor, offset.add_offset = 0.5, 1.0
        var.set_auto_scale(scale)
        offset.set_auto_scale(scale)
        data = [np.array([0, 0.5, 1.0, 0.1234, 0.9]), np.array([0.3, 0.7]), np.array([2.0, -0.1])]
        outcome: list[Any] = []
        for i, item in enumerate(data):
            try:
                var[i] = item
            except TypeError as error:
                outcome.append(str(error))
        if scale:  # a list of numbers is one element too, when packed
            offset[0] = [1.6, 2.2, -7.3]
        offset[1] = np.array([5, 7], np.int16)
    with library.Dataset(path) as ds:
        for name in ("vl", "off"):
            ds[name].set_auto_maskandscale(False)
            outcome.append([(a.dtype, a.tolist()) for a in ds[name][:]])
            ds[name].set_auto_maskandscale(True)
            outcome.append([(a.dtype, a.tolist()) for a in ds[name][:]])
    return outcome


def test_vlen_floats_are_packed_as_netcdf4_packs_them(tmp_path: Path) -> None:
    got = {name: _write_scaled_vlen(library, str(tmp_path / f"{name}.nc"), True) for name, library in LIBRARIES.items()}
    assert got["nczarr"] == got["netCDF4"]
    assert got["nczarr"][0] == [(np.uint8, [0, 127, 254, 31, 229]), (np.uint8, [76, 178]), (np.uint8, [252, 231])]


def test_vlen_floats_unscaled_are_refused_as_netcdf4_refuses_them(tmp_path: Path) -> None:
    got = {name: _write_scaled_vlen(library, str(tmp_path / f"{name}.nc"), False) for name, library in LIBRARIES.items()}
    assert got["nczarr"] == got["netCDF4"]
    assert got["nczarr"][:3] == ["wrong data type: should be uint8, got float64"] * 3


# -- fancy indexing after writes -----------------------------------------------------------------


def _fancy(library: Any, path: str) -> list[Any]:
    """netCDF4's test_fancyslicing: integer and boolean selections written, then read back,
    and an empty selection assigned in a dataset open read-only (nothing is written)."""
    out: list[Any] = []
    with library.Dataset(path, "w") as ds:
        ds.createDimension("x", None)
        ds.createDimension("y", 4)
        var = ds.createVariable("data", "i2", ("x", "y"))
        var[0:5] = np.arange(20).reshape(5, 4)
        var[:, [1, 3]] = -100
        var[np.array([True, False, True, False, False])] = -200
        out += [var[[0, 2, 4], [1, 3]].tolist(), var[np.array([False, True, False, True, True]), 2].tolist()]
    with library.Dataset(path) as ds:
        var = ds["data"]
        var[np.zeros(5, bool)] = 0  # netCDF4 writes nothing, so a read-only dataset is no matter
        var[3:3] = 0
        out += [var[:].tolist(), var[[4, 1], :].tolist(), var[var[:, 0] > 10, 0].tolist()]
        with pytest.raises(Exception):
            var[np.array([True, False, False, False, False])] = 0
    return out


def test_fancy_indexing_after_writes(tmp_path: Path) -> None:
    assert _fancy(nczarr, str(tmp_path / "z.nc")) == _fancy(netCDF4, str(tmp_path / "n.nc"))
    assert _fancy(nczarr, str(tmp_path / "z.zarr")) == _fancy(netCDF4, str(tmp_path / "n2.nc"))


# -- netcdf-c's JSON -----------------------------------------------------------------------------

#: Char attributes netcdf-c writes to Zarr as the JSON they look like (its numbers as written,
#: which strict JSON refuses: ``02``, ``+3``, ``0x10``, ``2.``, a trailing comma).
JSON_LIKE = {
    "leading_zero": "[1, 02]",
    "object": '{"k": 02}',
    "nested": '{"k": [1, {"z": 007}]}',
    "float": "[1,2.]",
    "signs": "[0x10, +3, .5]",
    "special": "[true, NaN]",
    "trailing_comma": "[1, 2,]",
    "mixed": '["s", 3]',
}


def test_netcdf_c_lenient_json_read_as_netcdf_c_reads_it(tmp_path: Path) -> None:
    store = tmp_path / "json.zarr"
    with netCDF4.Dataset(_url(store), "w") as ds:
        ds.createDimension("x", 1)
        var = ds.createVariable("v", "i4", ("x",))
        for name, text in JSON_LIKE.items():
            var.setncattr(name, text)
    assert b"02]" in (store / "v" / ".zattrs").read_bytes()  # not JSON: netcdf-c's dialect
    views = {}
    for name, library in LIBRARIES.items():
        with library.Dataset(_url(store)) as ds:
            views[name] = {k: ds["v"].getncattr(k) for k in ds["v"].ncattrs()}
    assert views["nczarr"] == views["netCDF4"]
    assert views["netCDF4"]["leading_zero"] == "[1,02]" and views["netCDF4"]["special"] == "[true,NaN]"
