"""Type scope: groups /g and /g/h each define types of the same shape; a variable in /g/h
declared with /g's type keeps it (CDL -> store -> CDL, .nc -> Zarr -> .nc, the API), and a
file that does not say which of two equal types a dataset has (ncgen's) reads as netcdf-c
reads it, side by side with Debian's ncgen/ncdump and the netCDF4 wheel."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import h5py
import netCDF4
import pytest
from peers import body, ncdump, ncgen, ours

import nczarr
from nczarr.cli import main

SCOPE_CDL = r"""netcdf scope {

group: g {
  types:
    opaque(4) op_t ;
    compound cmp_t {
      int i ;
      short s ;
    }; // cmp_t
    byte enum en_t {A = 1, B = 2} ;
    int(*) vl_t ;
  dimensions:
      x = 2 ;

  group: h {
    types:
      opaque(4) op2_t ;
      compound cmp2_t {
        int i ;
        short s ;
      }; // cmp2_t
      byte enum en2_t {A = 1, B = 2} ;
      int(*) vl2_t ;
    variables:
        /g/op_t o(x) ;
            /g/op_t o:att = 0XCAFEBABE ;
        /g/cmp_t c(x) ;
            /g/cmp_t c:att = {1, 2} ;
        /g/en_t e(x) ;
            /g/en_t e:att = /g/en_t.A ;
        /g/vl_t v(x) ;
            /g/vl_t v:att = {1, 2} ;
        op2_t o2(x) ;
        cmp2_t c2(x) ;
        en2_t e2(x) ;
        vl2_t v2(x) ;
    data:
     o = 0X01020304, 0X05060708 ;
     c = {1, 2}, {3, 4} ;
     e = /g/en_t.A, /g/en_t.B ;
     v = {1}, {2, 3} ;
     o2 = 0X01020304, 0X05060708 ;
     c2 = {1, 2}, {3, 4} ;
     e2 = A, B ;
     v2 = {1}, {2, 3} ;
    } // group h
  } // group g
}
"""

#: The declarations of /g/h as the CDL gives them (ncdump's plain names: both scopes are seen).
DECLARED = [
    "\top_t o(x) ;",
    "\t\top_t o:att = 0XCAFEBABE ;",
    "\tcmp_t c(x) ;",
    "\t\tcmp_t c:att = {1, 2} ;",
    "\ten_t e(x) ;",
    "\t\ten_t e:att = A ;",
    "\tvl_t v(x) ;",
    "\t\tvl_t v:att = {1, 2} ;",
    "\top2_t o2(x) ;",
    "\tcmp2_t c2(x) ;",
    "\ten2_t e2(x) ;",
    "\tvl2_t v2(x) ;",
]

#: Sibling groups: netcdf-c names the first equal type of the whole file, even a sibling's.
SIBLINGS_CDL = r"""netcdf sib {
types:
  opaque(2) r_t ;
dimensions:
    x = 1 ;
group: a {
  types:
    opaque(4) a_t ;
    compound ca_t { int i ; }; // ca_t
  variables:
      a_t va(x) ;
      ca_t ca(x) ;
  group: deep {
    types:
      opaque(2) d_t ;
    variables:
      d_t vd(x) ;
  }
  }
group: b {
  types:
    opaque(4) b_t ;
    compound cb_t { int i ; }; // cb_t
    opaque(2) r2_t ;
  variables:
      b_t vb(x) ;
      cb_t cb(x) ;
      r2_t vr(x) ;
  }
}
"""


def declarations(text: str) -> list[str]:
    """The variable lines of group h (indentation of the group removed)."""
    h = text.split("group: h {", 1)[1].split("variables:", 1)[1].split("data:", 1)[0].split("} // group h", 1)[0]
    return [line.strip(" ") for line in h.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def cdl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scope") / "scope.cdl"
    path.write_text(SCOPE_CDL)
    return path


def test_store_keeps_the_type_its_cdl_names(cdl, tmp_path, capsys):
    """CDL -> NCZarr store -> CDL: each variable and attribute keeps its type."""
    store = tmp_path / "scope.zarr"
    assert main(["gen", "-o", str(store), str(cdl)]) == 0
    assert declarations(ours(store, capsys)) == DECLARED


def test_file_nczarr_writes_names_its_types(cdl, tmp_path, capsys):
    """nczarr writes a dataset with its committed type, so the file says which type it has:
    nczarr reads each one back; netcdf-c (ncdump, netCDF4) still matches types by shape and
    names the first equal one, as it does for ncgen's file, and reads the same values."""
    nc = tmp_path / "scope.nc"
    assert main(["gen", "-k", "nc4", "-o", str(nc), str(cdl)]) == 0
    assert declarations(ours(nc, capsys)) == DECLARED
    with h5py.File(nc) as f:
        for name, type_ in [("o", "/g/op_t"), ("c", "/g/cmp_t"), ("v2", "/g/h/vl2_t"), ("e2", "/g/h/en2_t")]:
            tid = f["g/h"][name].id.get_type()
            assert tid.committed() and h5py.h5o.get_info(tid).addr == h5py.h5o.get_info(f[type_].id).addr
    assert "\tcmp_t c2(x) ;" in ncdump(nc)  # netcdf-c's matching by shape
    reference = tmp_path / "ncgen.nc"
    ncgen(cdl, reference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # netCDF4 passes over opaque variables
        with netCDF4.Dataset(nc) as mine, netCDF4.Dataset(reference) as theirs:
            for name in ("c", "e", "v", "c2", "e2", "v2"):
                assert str(mine["g/h"][name][:].tolist()) == str(theirs["g/h"][name][:].tolist())


def test_ncgen_file_reads_as_netcdf_c_reads_it(cdl, tmp_path, capsys):
    """ncgen's file does not say which of two equal types a dataset has: netcdf-c names the
    first equal type read, and so does nczarr (before: the nearest one, op2_t for o)."""
    nc = tmp_path / "ncgen.nc"
    ncgen(cdl, nc)
    assert ours(nc, capsys) == ncdump(nc)
    assert "\top_t o2(x) ;" in ncdump(nc)


@pytest.mark.filterwarnings("ignore:WARNING. variable")  # netCDF4 passes over opaque variables
def test_siblings_as_netcdf_c(tmp_path, capsys):
    cdl = tmp_path / "sib.cdl"
    cdl.write_text(SIBLINGS_CDL)
    nc = tmp_path / "sib.nc"
    ncgen(cdl, nc)
    expected = ncdump(nc, "-h")
    assert "\t/a/ca_t cb(x) ;" in expected and "\tr_t vd(x) ;" in expected
    assert ours(nc, capsys, "-h") == expected
    with netCDF4.Dataset(nc) as theirs, nczarr.Dataset(nc) as mine:
        assert theirs["b"]["cb"].datatype.name == mine["b"]["cb"].datatype.name == "ca_t"


def test_copies_keep_the_types(cdl, tmp_path, capsys):
    """.nc -> Zarr -> .nc -> Zarr, each dumps as the CDL declares."""
    nc = tmp_path / "scope.nc"
    assert main(["gen", "-k", "nc4", "-o", str(nc), str(cdl)]) == 0
    expected = body(ours(nc, capsys))
    chain = [nc, tmp_path / "a.zarr", tmp_path / "b.nc", tmp_path / "c.zarr"]
    for source, target in itertools.pairwise(chain):
        assert main(["copy", str(source), str(target)]) == 0
        assert body(ours(target, capsys)) == expected, target


def test_api_datatype_is_the_named_type(cdl, tmp_path):
    """Variable.datatype is the type object of the group that defines it; variables made
    through the API with the outer group's type keep it."""
    store = tmp_path / "scope.zarr"
    assert main(["gen", "-o", str(store), str(cdl)]) == 0
    with nczarr.Dataset(store) as ds:
        g, h = ds["g"], ds["g/h"]
        assert h["c"].datatype is g.cmptypes["cmp_t"] and h["c2"].datatype is h.cmptypes["cmp2_t"]
        assert h["e"].datatype is g.enumtypes["en_t"] and h["e2"].datatype is h.enumtypes["en2_t"]
        assert h["v"].datatype is g.vltypes["vl_t"] and h["v2"].datatype is h.vltypes["vl2_t"]
        written = tmp_path / "api.zarr"
        with nczarr.Dataset(written, "w") as out:
            og = out.createGroup("g")
            oh = og.createGroup("h")
            outer = og.createCompoundType(g.cmptypes["cmp_t"].dtype, "cmp_t")
            inner = oh.createCompoundType(g.cmptypes["cmp_t"].dtype, "cmp2_t")
            oh.createDimension("x", 2)
            oh.createVariable("c", outer, ("x",))[:] = h["c"][:]
            oh.createVariable("c2", inner, ("x",))[:] = h["c2"][:]
    with nczarr.Dataset(written) as back:
        assert back["g/h"]["c"].datatype is back["g"].cmptypes["cmp_t"]
        assert back["g/h"]["c2"].datatype is back["g/h"].cmptypes["cmp2_t"]


NESTED_CDL = r"""netcdf nest {

group: g {
  types:
    byte enum en_t {A = 1, B = 2} ;
    compound cmp_t {
      int i ;
    }; // cmp_t

  group: h {
    types:
      byte enum en2_t {A = 1, B = 2} ;
      compound cmp2_t {
        int i ;
      }; // cmp2_t
      compound k1_t {
        en_t f ;
      }; // k1_t
      compound k2_t {
        en2_t f ;
      }; // k2_t
      cmp_t(*) vl1_t ;
      cmp2_t(*) vl2_t ;
    variables:
      k1_t a ;
      k2_t b ;
      vl1_t c ;
      vl2_t d ;
    data:
     a = {/g/en_t.A} ;
     b = {A} ;
     c = {{1}} ;
     d = {{2}} ;
    } // group h
  } // group g
}
"""


def test_members_and_vlen_bases(tmp_path, capsys):
    """A store keeps the type of a compound's member and of a vlen's base; HDF5 keeps no
    name for those, so a netCDF-4 file (nczarr's or ncgen's) reads them as netcdf-c does:
    the first equal type (ncgen's file: every variable too)."""
    cdl = tmp_path / "nest.cdl"
    cdl.write_text(NESTED_CDL)
    store, mine, theirs = tmp_path / "nest.zarr", tmp_path / "nest.nc", tmp_path / "ncgen.nc"
    assert main(["gen", "-o", str(store), str(cdl)]) == 0
    text = ours(store, capsys)
    for line in ("en2_t f ;", "cmp2_t(*) vl2_t ;", "k2_t b ;", "vl2_t d ;"):
        assert line in text
    ncgen(cdl, theirs)
    assert ours(theirs, capsys) == ncdump(theirs)
    assert main(["gen", "-k", "nc4", "-o", str(mine), str(cdl)]) == 0
    text = ours(mine, capsys)
    assert "\tk2_t b ;" in text and "\tvl2_t d ;" in text and "cmp_t(*) vl2_t ;" in text
