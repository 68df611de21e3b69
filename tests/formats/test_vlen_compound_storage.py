"""Compounds with string and vlen fields in the conventions: NCZarr v3 stores them (the
record encoding, read back as ncdump shows ncgen's file); NCZarr 2.0.0 and pure Zarr refuse
them, as netcdf-c refuses user types in Zarr, naming the type and the convention to use."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zarr

import nczarr
from nczarr.api.generate import generate
from nczarr.convert.sources import open_source
from nczarr.syntax.cdldump import dump

CDL = """netcdf v {
types:
  compound cmp { string name ; int val ; } ;
  int(*) vl ;
  compound c2 { vl v ; cmp c ; string names(3) ; } ;
  c2(*) many ;
dimensions:
  d = 3 ;
variables:
  cmp x(d) ;
    cmp x:_FillValue = {"fill", -1} ;
    c2 x:att = {{1}, {"a", 1}, {"b", "", "c"}} ;
  c2 y(d) ;
  many m(d) ;
  c2 w ;
  c2 never(d) ;
data:
  x = {"ab", 1}, {"", 2} ;
  y = {{1, 2}, {"q", 3}, {"a", "b", "c"}}, {{}, {"é", 4}, {"", "x", ""}} ;
  m = {{{5}, {"m", 6}, {"1", "2", "3"}}, {{}, {"n", 7}, {"4", "5", "6"}}}, {}, {} ;
  w = {{9, 8, 7}, {"w", -1}, {"p", "q", "r"}} ;
}
"""


def ncdump(path: Path, name: str = "v") -> str:
    text = subprocess.run(["ncdump", str(path)], capture_output=True, text=True, check=True).stdout
    return text.replace(f"netcdf {path.stem} {{", f"netcdf {name} {{", 1)


def our_dump(location: Path) -> str:
    source = open_source(location)
    try:
        return "".join(dump(source, name="v"))
    finally:
        source.close()


@pytest.fixture
def cdl(tmp_path: Path) -> Path:
    path = tmp_path / "v.cdl"
    path.write_text(CDL)
    return path


def test_nczarr_v3_stores_them_as_ncgen_and_ncdump_see_them(cdl: Path, tmp_path: Path) -> None:
    reference = tmp_path / "ref.nc"
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(reference), str(cdl)], check=True)
    store = tmp_path / "v.zarr"
    generate(cdl, store)
    assert our_dump(store) == ncdump(reference)
    assert "never = {{}, {NIL, 0}, {NIL, NIL, NIL}}," in our_dump(store)  # netCDF-4's zero fill
    doc = json.loads((store / "y" / "zarr.json").read_text())
    assert doc["data_type"] == "variable_length_bytes"
    assert doc["_nczarr_array"]["nczarr_type"] == "/c2"
    # plain Zarr v3 that zarr-python opens: one byte string per value, the record encoding
    values = zarr.open_array(store / "x", mode="r")[:]
    assert values[0] == b"\x02\x00\x00\x00ab\x01\x00\x00\x00"


def test_the_api_reads_and_writes_records(cdl: Path, tmp_path: Path) -> None:
    store = tmp_path / "v.zarr"
    generate(cdl, store)
    with nczarr.Dataset(str(store), "a") as ds:
        y = ds["y"]
        assert y.dtype["v"] == np.dtype(object) and y.dtype["c"]["name"] == np.dtype(object)
        values = y[:]
        assert values[1]["c"]["name"] == "é" and values[0]["v"].tolist() == [1, 2]
        values[2]["v"] = np.array([4, 5, 6], "i4")
        values[2]["c"]["name"] = "new"
        y[2] = values[2]
        m = ds["m"][0]
        assert [r["c"]["name"] for r in m] == ["m", "n"]
        assert ds["x"].att == ([1], ("a", 1), ["b", "", "c"])  # a record holding a vlen: a tuple
    with nczarr.Dataset(str(store)) as ds:
        assert ds["y"][2]["v"].tolist() == [4, 5, 6] and ds["y"][2]["c"]["name"] == "new"


@pytest.mark.parametrize(
    ("format", "words"),
    [
        ("NCZARR_V2", ["/cmp", "NCZARR_V2", "use NCZARR"]),
        ("ZARR", ["/cmp", "pure Zarr", "use NCZARR"]),
        ("ZARR_V2", ["/cmp", "pure Zarr", "use NCZARR"]),
    ],
)
def test_conventions_without_user_types_refuse_them_clearly(cdl: Path, tmp_path: Path, format: str, words: list[str]) -> None:
    with pytest.raises(Exception) as info:
        generate(cdl, tmp_path / "out.zarr", format=format)
    for word in words:
        assert word in str(info.value)
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize(
    "data",
    ['x = {NIL, 1}, {"", 2} ;', 'y = {{1}, {"q", 3}, {"a", NIL, "c"}} ;', "m = {{{}, {NIL, 1}, {\"\", \"\", \"\"}}} ;"],
)
def test_nil_inside_a_user_type_is_refused_as_ncgen_refuses_it(cdl: Path, tmp_path: Path, data: str) -> None:
    text = cdl.read_text()
    start = text.index("data:") + len("data:\n")
    bad = tmp_path / "bad.cdl"
    bad.write_text(text[:start] + "  " + data + "\n}\n")
    ncgen = subprocess.run(["ncgen", "-k", "nc4", "-o", str(tmp_path / "bad.nc"), str(bad)], capture_output=True, text=True)
    assert ncgen.returncode != 0 and "NIL data can only be assigned" in ncgen.stderr
    with pytest.raises(Exception, match="NIL data can only be assigned to variables or attributes of type string"):
        generate(bad, tmp_path / "bad.zarr")
