"""ncdump's ``_`` for values of user types equal to the variable's ``_FillValue`` (written
so, or never written), and compound fills whose char member is given as a string, side by
side with Debian's ncgen/ncdump."""

from __future__ import annotations

import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest
from peers import body, cdl_and_file, ncdump, ncgen, ours

import nczarr
from nczarr.cli import main

FILLS_CDL = r"""netcdf fills {
types:
  compound cmp_t {
    int i ;
    char c ;
    short s(2) ;
  }; // cmp_t
  opaque(4) op_t ;
  int(*) vl_t ;
  byte enum en_t {A = 1, B = 2, C = 3} ;
  compound in_t {
    char c ;
    short s ;
  }; // in_t
dimensions:
	x = 4 ;
	u = UNLIMITED ;
variables:
	cmp_t c(x) ;
		cmp_t c:_FillValue = {-99, "-", {-99, -98}} ;
	op_t o(x) ;
		op_t o:_FillValue = 0XCAFEBABE ;
	vl_t v(x) ;
		vl_t v:_FillValue = {-999} ;
	en_t e(x) ;
		en_t e:_FillValue = B ;
	cmp_t cn(x) ;
	op_t on(x) ;
	vl_t vn(x) ;
	cmp_t cu(u) ;
		cmp_t cu:_FillValue = {-99, '-', {-99, -98}} ;
	op_t ou(u) ;
		op_t ou:_FillValue = 0XCAFEBABE ;
	vl_t vu(u) ;
		vl_t vu:_FillValue = {-999} ;
	in_t m(x) ;
		in_t m:_FillValue = {'\055', 3} ;
	int n(u) ;
data:
 c = {1, 'a', {2, 3}}, {-99, '-', {-99, -98}}, _, {4, 'b', {5, 6}} ;
 o = 0X01020304, 0XCAFEBABE, _, 0X05060708 ;
 v = {1, 2}, {-999}, _, {} ;
 e = A, B, _, C ;
 cn = {1, 'a', {2, 3}}, _, _, {0, 'z', {0, 0}} ;
 on = 0X01020304, _, _, 0X00000000 ;
 vn = {1}, _, _, {} ;
 cu = {1, 'a', {2, 3}} ;
 ou = 0X01020304 ;
 vu = {7} ;
 m = {'-', 3}, {'-', 4}, _, _ ;
 n = 1, 2, 3 ;
}
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return cdl_and_file(tmp_path_factory.mktemp("fills"), "fills", FILLS_CDL)


def test_ncgen_s_file_as_ncdump(made, capsys):
    """``_`` for compound, opaque and vlen values equal to the fill, and the fill values of
    attributes on one line (ncdump counts no column for opaque and enum attributes)."""
    _, nc = made
    expected = ncdump(nc)
    assert " o = 0X01020304, _, _, 0X05060708 ;" in expected and " v = {1, 2}, _, _, {} ;" in expected
    assert ' c = {1, "a", {2, 3}}, _, _, {4, "b", {5, 6}} ;' in expected
    assert "\t\tvl_t vu:_FillValue = {-999} ;" in expected
    assert ours(nc, capsys) == expected


@pytest.mark.parametrize("target", ["fills.zarr", "fills.nc"])
def test_gen_writes_the_fills_ncgen_writes(made, tmp_path, target, capsys):
    """nczarr gen takes every fill ncgen takes (a char member as '-' or "-"), to a store and
    to a file; nczarr dump of the one and ncdump of the other print ncdump's text."""
    cdl, nc = made
    out = tmp_path / target
    assert main(["gen", *(["-k", "nc4"] if target.endswith(".nc") else []), "-o", str(out), str(cdl)]) == 0
    text = ncdump(out) if target.endswith(".nc") else ours(out, capsys)
    assert body(text) == body(ncdump(nc))


def test_copy_of_the_file_keeps_its_fills(made, tmp_path, capsys):
    _, nc = made
    for target in ("copy.zarr", "copy.nc"):
        assert main(["copy", str(nc), str(tmp_path / target)]) == 0
    assert body(ours(tmp_path / "copy.zarr", capsys)) == body(ncdump(nc))
    assert body(ncdump(tmp_path / "copy.nc")) == body(ncdump(nc))


@pytest.mark.parametrize("given,kept", [("'-'", '"-"'), ('"-"', '"-"'), ('"-x"', '"-"')])
def test_char_member_of_a_compound_fill(tmp_path, given, kept, capsys):
    """A compound fill's char member as a character or a string (its first character), as
    ncgen takes it."""
    cdl = tmp_path / "ch.cdl"
    cdl.write_text(
        "netcdf ch {\ntypes:\n  compound k_t { int i ; char c ; }; // k_t\ndimensions:\n\tx = 2 ;\n"
        f"variables:\n\tk_t k(x) ;\n\t\tk_t k:_FillValue = {{1, {given}}} ;\ndata:\n k = {{1, 'a'}}, {{1, {given}}} ;\n}}\n"
    )
    nc = tmp_path / "ch.nc"
    ncgen(cdl, nc)
    assert f"k_t k:_FillValue = {{1, {kept}}} ;" in ncdump(nc)
    assert main(["gen", "-o", str(tmp_path / "ch.zarr"), str(cdl)]) == 0
    text = ours(tmp_path / "ch.zarr", capsys)
    # ncgen 4.9.0 writes this record shifted ({65536, ""}); nczarr writes the fill, so "_"
    assert body(text).split("data:")[0] == body(ncdump(nc)).split("data:")[0]
    assert ' k = {1, "a"}, _ ;' in text


def test_a_number_for_a_char_member_is_refused_as_ncgen_refuses_it(tmp_path, capsys):
    cdl = tmp_path / "ch.cdl"
    cdl.write_text(
        "netcdf ch {\ntypes:\n  compound k_t { int i ; char c ; }; // k_t\n"
        "variables:\n\tk_t k ;\n\t\tk_t k:_FillValue = {1, 45} ;\n}\n"
    )
    done = subprocess.run(["ncgen", "-k", "nc4", "-o", str(tmp_path / "ch.nc"), str(cdl)], capture_output=True, text=True)
    assert done.returncode != 0 and "illegal conversion" in done.stderr
    assert main(["gen", "-o", str(tmp_path / "ch.zarr"), str(cdl)]) != 0
    assert "a char field takes a character or a string, not a number" in capsys.readouterr().err


NESTED_CDL = r"""netcdf nested {
types:
  compound in_t { char c ; short s ; }; // in_t
  compound out_t { in_t n ; char d ; }; // out_t
  out_t(*) vo_t ;
dimensions:
	x = 2 ;
variables:
	out_t k(x) ;
		out_t k:_FillValue = {{'-', 3}, '+'} ;
	vo_t v(x) ;
		vo_t v:_FillValue = {{{'-', 3}, '+'}} ;
data:
 k = {{'a', 1}, 'b'}, _ ;
 v = {{{'a', 1}, 'b'}}, _ ;
}
"""


def test_nested_and_vlen_of_compound_fills(tmp_path, capsys):
    """Fills of a nested compound and of a vlen of compounds (nczarr gen failed on the
    latter): a store as nczarr writes it dumps as ncdump shows the file nczarr writes (ncgen
    4.9.0 writes the nested record shifted, so it is no reference here)."""
    cdl = tmp_path / "nested.cdl"
    cdl.write_text(NESTED_CDL)
    assert main(["gen", "-k", "nc4", "-o", str(tmp_path / "nested.nc"), str(cdl)]) == 0
    assert main(["gen", "-o", str(tmp_path / "nested.zarr"), str(cdl)]) == 0
    expected = ncdump(tmp_path / "nested.nc")
    assert ' k = {{"a", 1}, "b"}, _ ;' in expected and ' v = {{{"a", 1}, "b"}}, _ ;' in expected
    assert ours(tmp_path / "nested.zarr", capsys) == expected


CHAR_ARRAYS_CDL = r"""netcdf catt {
types:
  compound k_t {
    short s ;
    char name(4) ;
    double d(2) ;
  }; // k_t
  compound in_t { char c ; short s ; }; // in_t
  compound out_t { in_t n ; int i ; }; // out_t
dimensions:
  x = 2 ;
variables:
  k_t w(x) ;
    k_t w:_FillValue = {-1, {"zz"}, {0, 0}} ;
    k_t w:recs = {1, {"ab"}, {1.5, 2.5}}, {-2, {"wxyz"}, {0, 1}} ;
    k_t w:one = {3, {"q"}, {9, 8}} ;
    out_t w:nest = {{'a', 1}, 2}, {{"b", 3}, 4} ;
data:
 w = {1, {"ab"}, {1, 2}}, {-1, {"zz"}, {0, 0}} ;
}
"""


@pytest.fixture(scope="module")
def char_arrays(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return cdl_and_file(tmp_path_factory.mktemp("chars"), "catt", CHAR_ARRAYS_CDL)


def test_char_array_members_of_compound_attributes(char_arrays, tmp_path, capsys):
    """A compound attribute or fill with a char array member: nczarr gen refused it ("value
    0x61 does not fit char"), copy of ncgen's file refused it ("value 'ab' does not fit
    char"); now every path prints ncdump's text."""
    cdl, nc = char_arrays
    expected = body(ncdump(nc))
    assert ' w = {1, {"ab"}, {1, 2}}, _ ;' in expected
    assert main(["gen", "-o", str(tmp_path / "gen.zarr"), str(cdl)]) == 0
    assert main(["gen", "-k", "nc4", "-o", str(tmp_path / "gen.nc"), str(cdl)]) == 0
    assert main(["copy", str(nc), str(tmp_path / "copy.zarr")]) == 0
    assert main(["copy", str(tmp_path / "copy.zarr"), str(tmp_path / "copy.nc")]) == 0
    assert body(ours(tmp_path / "gen.zarr", capsys)) == expected
    assert body(ours(tmp_path / "copy.zarr", capsys)) == expected
    assert body(ncdump(tmp_path / "gen.nc")) == expected
    assert body(ncdump(tmp_path / "copy.nc")) == expected


def test_api_compound_attributes_as_netcdf4(char_arrays, made, tmp_path):
    """A compound attribute (``_FillValue`` too) reads as netCDF4 reads it: a record of the
    type's dtype (``np.void``), several as a structured array, char arrays as one string;
    before: a tuple, or an array of texts (``['-', '3']``)."""
    cdl, nc = char_arrays
    store = tmp_path / "catt.zarr"
    assert main(["gen", "-o", str(store), str(cdl)]) == 0
    with netCDF4.Dataset(nc) as theirs, nczarr.Dataset(store) as mine, nczarr.Dataset(nc) as mine_nc:
        for name in ("_FillValue", "recs", "one", "nest"):
            expected = repr(theirs["w"].getncattr(name))
            assert repr(mine["w"].getncattr(name)) == repr(mine_nc["w"].getncattr(name)) == expected
    fills_cdl, fills_nc = made
    fills_store = tmp_path / "fills.zarr"
    assert main(["gen", "-o", str(fills_store), str(fills_cdl)]) == 0
    with netCDF4.Dataset(fills_nc) as theirs, nczarr.Dataset(fills_store) as mine:
        for name in ("c", "cu", "m"):
            assert repr(mine[name]._FillValue) == repr(theirs[name]._FillValue)
            assert isinstance(mine[name]._FillValue, np.void)
