"""Compounds with string and vlen fields in netCDF-4 files: read from files ncgen and
h5netcdf wrote, written by ``gen -o x.nc`` and ``copy`` so that ncdump shows the same
(also vlens of such compounds, which h5py fails on when one is empty)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import h5netcdf
import h5py
import numpy as np

from nczarr.api.generate import generate
from nczarr.convert.copy import copy
from nczarr.convert.hdf5 import Hdf5Reader
from nczarr.convert.sources import open_source
from nczarr.syntax.cdldump import dump

CDL = """netcdf v {
types:
  compound cmp { string name ; int val ; } ;
  int(*) vl ;
  compound c2 { vl v ; cmp c ; string names(3) ; } ;
  cmp(*) many ;
  compound withfill { string s ; vl v ; } ;
dimensions:
  d = 3 ;
variables:
  cmp x(d) ;
    cmp x:att = {"a", 1}, {"é", 2} ;
  c2 y(d) ;
  many m(d) ;
  withfill f(d) ;
    withfill f:_FillValue = {"fill", {7}} ;
  c2 :gatt = {{3}, {"g", 3}, {"x", "y", "z"}} ;
data:
  x = {"ab", 1}, {"", 2} ;
  m = {{"a", 1}, {"b", 2}}, {}, {{"c", 3}} ;
  f = {"one", {1, 2}} ;
  y = {{1, 2}, {"q", 3}, {"a", "b", "c"}}, {{}, {"é", 4}, {"", "x", ""}} ;

group: g {
  variables:
    cmp z ;
  data:
    z = {"in a group", 5} ;
  }
}
"""


def ncdump(path: Path) -> str:
    text = subprocess.run(["ncdump", str(path)], capture_output=True, text=True, check=True).stdout
    return text.replace(f"netcdf {path.stem} {{", "netcdf v {", 1)


def our_dump(location: Path) -> str:
    source = open_source(location)
    try:
        return "".join(dump(source, name="v"))
    finally:
        source.close()


def made_by_ncgen(tmp_path: Path) -> tuple[Path, Path]:
    cdl = tmp_path / "v.cdl"
    cdl.write_text(CDL)
    reference = tmp_path / "ref.nc"
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(reference), str(cdl)], check=True)
    return cdl, reference


def test_read_from_a_file_ncgen_wrote(tmp_path: Path) -> None:
    _cdl, reference = made_by_ncgen(tmp_path)
    assert our_dump(reference) == ncdump(reference)
    with Hdf5Reader(reference) as reader:
        y = next(v for v in reader.dataset.variables if v.name == "y")
        values = reader.read(y, (slice(0, 3),))
    assert values[1]["c"]["name"] == "é"  # text, not h5py's bytes
    assert values[0]["v"].tolist() == [1, 2] and values[0]["names"].tolist() == ["a", "b", "c"]


def test_gen_and_copy_write_files_ncdump_reads_as_ncgen_s(tmp_path: Path) -> None:
    cdl, reference = made_by_ncgen(tmp_path)
    generate(cdl, tmp_path / "gen.nc")
    assert ncdump(tmp_path / "gen.nc") == ncdump(reference)
    generate(cdl, tmp_path / "v.zarr")
    copy(tmp_path / "v.zarr", tmp_path / "copy.nc")
    assert ncdump(tmp_path / "copy.nc") == ncdump(reference)
    copy(reference, tmp_path / "back.zarr")
    assert our_dump(tmp_path / "back.zarr") == ncdump(reference)


def test_read_from_a_file_h5netcdf_wrote(tmp_path: Path) -> None:
    path = tmp_path / "h5.nc"
    point = np.dtype([("label", h5py.string_dtype()), ("xy", "<f8", (2,))])
    with h5netcdf.File(path, "w") as nc:
        nc.dimensions["n"] = 2
        ptype = nc.create_cmptype(point, "point")
        variable = nc.create_variable("p", ("n",), dtype=ptype)
        variable[...] = np.array([("one", (1.0, 2.0)), ("two", (3.0, 4.5))], point)
    text = our_dump(path)
    assert ncdump(path) == text
    assert 'p = {"one", {1, 2}}, {"two", {3, 4.5}} ;' in text


def test_empty_vlens_of_records_inside_records_read(tmp_path: Path) -> None:
    """h5py fails on a block holding one; the reader reads it field by field. (ncdump shows
    the NULL strings of never-written records as NIL; h5py gives them as empty strings.)"""
    cdl = tmp_path / "n.cdl"
    cdl.write_text(
        "netcdf n {\ntypes:\n  compound pt { string label ; double xy(2) ; } ;\n  pt(*) pts ;\n"
        "  compound trk { pts p ; ubyte flag ; } ;\ndimensions:\n  n = 2 ;\nvariables:\n  trk t(n) ;\n"
        "  pts v(n) ;\ndata:\n  v = {{\"one\", {1, 1}}}, {} ;\n}\n"
    )
    path = tmp_path / "n.nc"
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(path), str(cdl)], check=True)
    with Hdf5Reader(path) as reader:
        t, v = (next(x for x in reader.dataset.variables if x.name == name) for name in ("t", "v"))
        records = reader.read(t, (slice(0, 2),))
        vlens = reader.read(v, (slice(0, 2),))
    assert [len(r["p"]) for r in records] == [0, 0] and records["flag"].tolist() == [0, 0]
    assert [len(x) for x in vlens] == [1, 0] and vlens[0][0]["label"] == "one"
