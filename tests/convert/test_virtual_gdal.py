"""GDAL reads nczarr's kerchunk export without nczarr: its Zarr driver (GDAL >= 3.11) opens the
JSON references through ``/vsikerchunk_json_ref/``. The GDAL is the one pyogrio's wheel
bundles (3.12, with the Zarr driver; Debian's gdal-bin is 3.6 and rasterio's wheels for
Python 3.11 bundle 3.10, both too old), called through its C API."""

from __future__ import annotations

import ctypes
import glob
import os

import netCDF4
import numpy as np
import pyogrio
import pytest

from nczarr.convert.virtual import export_kerchunk

GDAL_OF_RASTER = 0x02
GDT_FLOAT32 = 6
GF_READ = 0


@pytest.fixture(scope="module")
def gdal() -> ctypes.CDLL:
    """The libgdal of pyogrio's wheel (loaded by importing pyogrio), its Zarr driver there."""
    found = glob.glob(os.path.join(os.path.dirname(pyogrio.__file__), os.pardir, "pyogrio.libs", "libgdal*"))
    assert found, "pyogrio's wheel bundles no libgdal"
    lib = ctypes.CDLL(found[0])
    lib.GDALAllRegister()
    lib.GDALVersionInfo.restype = ctypes.c_char_p
    lib.GDALGetDriverByName.restype = ctypes.c_void_p
    lib.GDALOpenEx.restype = ctypes.c_void_p
    lib.GDALOpenEx.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.GDALGetRasterBand.restype = ctypes.c_void_p
    lib.GDALGetRasterBand.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.GDALGetRasterXSize.argtypes = lib.GDALGetRasterYSize.argtypes = [ctypes.c_void_p]
    lib.GDALRasterIO.argtypes = [ctypes.c_void_p, *[ctypes.c_int] * 5, ctypes.c_void_p, *[ctypes.c_int] * 5]
    lib.GDALClose.argtypes = [ctypes.c_void_p]
    lib.CPLGetLastErrorMsg.restype = ctypes.c_char_p
    version = tuple(int(n) for n in lib.GDALVersionInfo(b"RELEASE_NAME").split(b".")[:2])
    assert version >= (3, 11), f"GDAL {version} reads no kerchunk references"
    assert lib.GDALGetDriverByName(b"Zarr"), "this GDAL has no Zarr driver"
    return lib


def _read(gdal: ctypes.CDLL, references: str, variable: str) -> np.ndarray:
    """``variable`` of the kerchunk JSON ``references`` as GDAL's Zarr driver reads it."""
    name = f'ZARR:"/vsikerchunk_json_ref/{references}":/{variable}'.encode()
    dataset = gdal.GDALOpenEx(name, GDAL_OF_RASTER, None, None, None)
    assert dataset, gdal.CPLGetLastErrorMsg().decode()
    try:
        band = gdal.GDALGetRasterBand(dataset, 1)
        width, height = gdal.GDALGetRasterXSize(dataset), gdal.GDALGetRasterYSize(dataset)
        out = np.empty((height, width), "f4")
        failed = gdal.GDALRasterIO(band, GF_READ, 0, 0, width, height, out.ctypes.data, width, height, GDT_FLOAT32, 0, 0)
        assert not failed, gdal.CPLGetLastErrorMsg().decode()
        return out
    finally:
        gdal.GDALClose(dataset)


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF3_CLASSIC", "NETCDF3_64BIT_DATA"])
def test_gdal_reads_the_kerchunk_export(gdal, tmp_path, format):
    path = str(tmp_path / "a.nc")
    with netCDF4.Dataset(path, "w", format=format) as d:
        d.createDimension("y", 9)
        d.createDimension("x", 11)
        storage = {"zlib": True, "shuffle": True, "chunksizes": (4, 5)} if format == "NETCDF4" else {}
        d.createVariable("v", "f4", ("y", "x"), **storage)[:] = np.random.default_rng(3).random((9, 11), "f4")
        d.createVariable("w", "f4", ("y", "x"), fill_value=-1)[2:5, 3:] = 7.5  # partly unwritten: fill values
    out = str(tmp_path / "refs.json")
    export_kerchunk([path], out)
    with netCDF4.Dataset(path) as d:
        d.set_auto_mask(False)
        for name in ("v", "w"):
            assert np.array_equal(_read(gdal, out, name), d[name][:]), name
