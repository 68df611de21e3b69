"""Cases found by checking nczarr on files built with ncgen/nccopy from netcdf-c's own CDL
test files: each reproduced here by a small CDL text of our own, built by Debian's ncgen and
checked against ncdump and the netCDF4 wheel on the same file.

- a variable in HDF5's compact layout: ``ncdump -s`` says ``_Storage = "compact"``;
- a variable whose dataset is shorter than its unlimited dimension (netCDF4 appended records
  to another variable) and has no HDF5 fill value of its own: netcdf-c reads the missing
  records as netCDF's default fill, not HDF5's zeros;
- root dimensions a file names ``_Anonymous_Dim_<n>`` itself (netcdf-c's names for unnamed
  dimensions), declared before others or used only in subgroups: they keep their place
  through Zarr and back, and a file holding them can be updated;
- an attribute of an enum type reads as numbers of the enum's base type;
- a scalar compound variable reads as a 0-d array, one of its records as a scalar;
- a big-endian scalar variable holds its number (not its bytes swapped) and reads, as netCDF4
  reads it, in native order (a scalar vlen still reads as its sequence);
- a char variable's ``_FillValue = ""`` reads as one NUL byte.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.cli import main
from nczarr.convert.copy import CopyOptions, copy

COMPACT_CDL = r"""netcdf compact {
dimensions:
	n = 3 ;
variables:
	int c(n) ;
		c:_Storage = "compact" ;
	short s ;
		s:_Storage = "compact" ;
	float k(n) ;
		k:_Storage = "contiguous" ;
data:
 c = 1, 2, 3 ;
 s = 4 ;
 k = 5, 6, 7 ;
}
"""

NO_FILL_CDL = r"""netcdf nofill {
dimensions:
	t = UNLIMITED ;
variables:
	int n(t) ;
	float g(t) ;
		g:_FillValue = -1.f ;
		g:_NoFill = "true" ;
	short h(t) ;
		h:_NoFill = "true" ;
	double d(t) ;
data:
 n = 1, 2 ;
 g = 1, 2 ;
 h = 3, 4 ;
 d = 5, 6 ;
}
"""

NAMED_ANONYMOUS_CDL = r"""netcdf named {
dimensions:
	_Anonymous_Dim_4 = 4 ;
	x = 2 ;
	_Anonymous_Dim_3 = 3 ;
variables:
	int top(x) ;
data:
 top = 1, 2 ;

group: inner {
  variables:
	int a(_Anonymous_Dim_3, _Anonymous_Dim_3) ;
	float b(_Anonymous_Dim_4) ;
  data:
   a = 1, 2, 3, 4, 5, 6, 7, 8, 9 ;
   b = 1, 2, 3, 4 ;
  }
}
"""

TYPED_VALUES_CDL = r"""netcdf typed {
types:
  ubyte enum mood_t {calm = 0, busy = 1, lost = 255} ;
  compound pair_t {
    int first ;
    double second ;
  }; // pair_t
dimensions:
	n = 2 ;
variables:
	mood_t m(n) ;
		mood_t m:_FillValue = lost ;
		mood_t m:usual = busy ;
	pair_t one ;
	pair_t two(n) ;
	mood_t :g_mood = calm, busy ;
data:
 m = calm, busy ;
 one = {7, 0.5} ;
 two = {1, 1.5}, {2, 2.5} ;
}
"""


Make = Callable[[str, str], Path]


@pytest.fixture(scope="module")
def ncgen(tmp_path_factory: pytest.TempPathFactory) -> Make:
    """``ncgen(cdl, name)``: the netCDF-4 file Debian's ncgen makes of ``cdl``."""
    assert shutil.which("ncgen") and shutil.which("ncdump"), "Debian's netcdf-bin (ncgen, ncdump) is needed"
    folder = tmp_path_factory.mktemp("ncgen")

    def make(cdl: str, name: str) -> Path:
        source, path = folder / f"{name}.cdl", folder / f"{name}.nc"
        source.write_text(cdl)
        subprocess.run(["ncgen", "-k", "nc4", "-o", str(path), str(source)], check=True)
        return path

    return make


def _ncdump(path: Path, *flags: str) -> bytes:
    done = subprocess.run(["ncdump", *flags, str(path)], capture_output=True, check=True)
    return done.stdout


def _ours(path: Path | str, flags: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> bytes:
    capsysbinary.readouterr()
    assert main(["dump", *flags, str(path)]) == 0
    return capsysbinary.readouterr().out


def _body(text: bytes) -> bytes:
    """ncdump's text without its first line (the dataset name)."""
    return text.split(b"\n", 1)[1]


def test_compact_layout_is_named_by_dump_s(ncgen: Make, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = ncgen(COMPACT_CDL, "compact")
    expected = _ncdump(path, "-s")
    assert b'c:_Storage = "compact"' in expected and b's:_Storage = "compact"' in expected
    assert _ours(path, ["-s"], capsysbinary) == expected


def test_missing_records_without_hdf5_fill_read_as_netcdf_c_reads_them(
    ncgen: Make, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """netCDF4 appends a record to ``n`` only: the datasets of the others stay two long."""
    path = tmp_path / "grown.nc"
    shutil.copy(ncgen(NO_FILL_CDL, "nofill"), path)
    with netCDF4.Dataset(path, "a") as ds:
        ds["n"][2] = 3
    expected = _ncdump(path)
    assert b"9.96921e+36" in expected  # netCDF's default fill, not the _FillValue -1
    assert _ours(path, [], capsysbinary) == expected
    with netCDF4.Dataset(path) as theirs, nczarr.Dataset(str(path)) as ours:
        for name in ("n", "g", "h", "d"):
            theirs[name].set_auto_mask(False)
            ours[name].set_auto_mask(False)
            np.testing.assert_array_equal(ours[name][:], theirs[name][:])


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
def test_named_anonymous_dimensions_keep_their_place(ncgen: Make, tmp_path: Path, fmt: str) -> None:
    source = ncgen(NAMED_ANONYMOUS_CDL, "named")
    store, back = tmp_path / "out.zarr", tmp_path / "back.nc"
    copy(str(source), str(store), CopyOptions(format=fmt))
    copy(str(store), str(back))
    assert _body(_ncdump(back)) == _body(_ncdump(source))


def test_file_with_named_anonymous_dimensions_updates_as_netcdf4_does(ncgen: Make, tmp_path: Path) -> None:
    source = ncgen(NAMED_ANONYMOUS_CDL, "named")
    ours, theirs = tmp_path / "ours.nc", tmp_path / "theirs.nc"
    shutil.copy(source, ours)
    shutil.copy(source, theirs)
    for module, path in ((nczarr, ours), (netCDF4, theirs)):
        with module.Dataset(str(path), "a") as ds:
            ds.setncattr("history", "updated")
            ds["inner"].createVariable("c", "i2", ("_Anonymous_Dim_3",))[:] = [1, 2, 3]
    assert _body(_ncdump(ours)) == _body(_ncdump(theirs))


def test_enum_attributes_and_scalar_compounds_read_as_netcdf4_reads_them(ncgen: Make) -> None:
    path = ncgen(TYPED_VALUES_CDL, "typed")
    with netCDF4.Dataset(path) as theirs, nczarr.Dataset(str(path)) as ours:
        for owner_theirs, owner_ours in ((theirs["m"], ours["m"]), (theirs, ours)):
            for name in owner_theirs.ncattrs():
                want, got = owner_theirs.getncattr(name), owner_ours.getncattr(name)
                assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype, name
                np.testing.assert_array_equal(got, want)
        for key in (Ellipsis, ()):
            want, got = theirs["one"][key], ours["one"][key]
            assert type(got) is type(want) is np.ndarray and got.shape == want.shape == ()
            assert got.tolist() == want.tolist()
        want, got = theirs["two"][0], ours["two"][0]
        assert type(got) is type(want) is np.void and got.tolist() == want.tolist()


BIG_ENDIAN_CDL = r"""netcdf big {
types:
  int(*) seq_t ;
dimensions:
	n = 2 ;
variables:
	int one ;
		one:_Endianness = "big" ;
	double two ;
		two:_Endianness = "big" ;
	short row(n) ;
		row:_Endianness = "big" ;
	char label(n) ;
		label:_FillValue = "" ;
	seq_t seq ;
data:
 one = 1 ;
 two = 2.5 ;
 row = 3, 4 ;
 label = "a" ;
 seq = {5, 6, 7} ;
}
"""


def test_big_endian_scalars_and_char_fill_read_as_netcdf4_reads_them(
    ncgen: Make, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = ncgen(BIG_ENDIAN_CDL, "big")
    assert _ours(path, [], capsysbinary) == _ncdump(path)
    with netCDF4.Dataset(path) as theirs, nczarr.Dataset(str(path)) as ours:
        for name in ("one", "two", "row", "label"):
            want, got = theirs[name][...], ours[name][...]
            assert got.dtype == want.dtype, name
            np.testing.assert_array_equal(got, want)
        want, got = theirs["seq"][...], ours["seq"][...]  # a scalar vlen: its sequence
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
        assert ours["label"].getncattr("_FillValue") == theirs["label"].getncattr("_FillValue") == b"\x00"
