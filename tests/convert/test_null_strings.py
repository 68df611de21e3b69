"""NULL strings (CDL's ``NIL``, distinct from ``""``) through every path: CDL in and out, the
netCDF-4 file read and written, every Zarr convention, ``nczarr copy`` and the API, side by
side with ncgen/ncdump (Debian's netcdf-bin) and netCDF4 (netcdf-c 4.10.1)."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import netCDF4
import numpy as np
import pytest
from peers import body, cdl_and_file, ncdump, ours

import nczarr
from nczarr.cli import main

# NULL strings in data (a vector, a scalar) and in attributes of every place: a variable's,
# the root's, a group's, alone and among other strings (netCDF4-python's test_gold.nc holds
# such attributes), beside "" which is not NULL.
NIL_CDL = r"""netcdf nil {
dimensions:
	x = 4 ;
variables:
	string s(x) ;
		string s:alone = NIL ;
		string s:among = "one", NIL, "" ;
	string t ;
	int n ;
		string n:note = NIL, NIL ;

// global attributes:
		string :g = NIL, "x" ;
		string :e = "" ;
data:

 s = "a", NIL, "", _ ;

 t = NIL ;

 n = 1 ;

group: sub {
	variables:
		string u(x) ;
			string u:units = NIL ;

	// group attributes:
			string :h = "y", NIL ;
	data:

		u = NIL, NIL, "z", NIL ;
	} // group sub
}
"""

ZARR_FORMATS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2", "ZARR_V3_DRAFT"]
#: The conventions whose attributes are JSON of Zarr v3 (null holds a NULL string there);
#: netcdf-c 4.10.1 writes NIL as "" to its Zarr v2 (NCZARR_V2, ZARR_V2), and so does nczarr.
KEEPS_NULL_ATTRIBUTES = {"NCZARR", "ZARR", "ZARR_V3_DRAFT"}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return cdl_and_file(tmp_path_factory.mktemp("nil"), "nil", NIL_CDL)


def test_ncgen_s_file_dumps_nil_as_ncdump(made, capsys):
    _, nc = made
    expected = ncdump(nc)
    assert 's = "a", NIL, _, _ ;' in expected and 'string s:among = "one", NIL, "" ;' in expected
    assert ours(nc, capsys) == expected


def test_gen_writes_nil_to_a_file_as_ncgen(made, tmp_path, capsys):
    cdl, nc = made
    ours_nc = tmp_path / "nil.nc"
    assert main(["gen", "-k", "nc4", "-o", str(ours_nc), str(cdl)]) == 0
    assert body(ncdump(ours_nc)) == body(ncdump(nc))


def test_copy_of_a_file_keeps_nil(made, tmp_path):
    _, nc = made
    copied = tmp_path / "copied.nc"
    assert main(["copy", str(nc), str(copied)]) == 0
    assert body(ncdump(copied)) == body(ncdump(nc))


@pytest.mark.parametrize("fmt", ZARR_FORMATS)
def test_copy_to_every_zarr_convention(made, tmp_path, fmt, capsys):
    """A file with NULL string attributes copies to every convention (it was refused: "value
    None does not fit string"); NULL string data is "" in Zarr (its string arrays have no
    NULL; netcdf-c 4.10.1 writes "" too), so ncdump's ``_`` for it."""
    _, nc = made
    store = tmp_path / "nil.zarr"
    assert main(["copy", "--format", fmt, str(nc), str(store)]) == 0
    expected = body(ncdump(nc)).replace('"a", NIL, _, _', '"a", _, _, _').replace("t = NIL", "t = _")
    expected = expected.replace('u = NIL, NIL, "z", NIL', 'u = _, _, "z", _')
    if fmt not in KEEPS_NULL_ATTRIBUTES:
        expected = expected.replace("NIL", '""')
    got = body(ours(store, capsys))
    if fmt.startswith("ZARR"):  # pure Zarr keeps no order of variables
        got, expected = sorted(got.splitlines()), sorted(expected.splitlines())  # type: ignore[assignment]
    assert got == expected


@pytest.mark.parametrize("fmt", ZARR_FORMATS)
def test_gen_to_every_zarr_convention_as_its_copy(made, tmp_path, fmt, capsys):
    cdl, nc = made
    generated, copied = tmp_path / "gen.zarr", tmp_path / "copy.zarr"
    assert main(["gen", "--format", fmt, "-o", str(generated), str(cdl)]) == 0
    assert main(["copy", "--format", fmt, str(nc), str(copied)]) == 0
    assert body(ours(generated, capsys)) == body(ours(copied, capsys))


def test_nczarr_attributes_hold_null_in_json(made, tmp_path):
    _, nc = made
    store = tmp_path / "nil.zarr"
    assert main(["copy", str(nc), str(store)]) == 0
    attributes = json.loads((store / "s" / "zarr.json").read_text())["attributes"]
    assert attributes["alone"] is None and attributes["among"] == ["one", None, ""]


def _api_view(library: object, path: str) -> list[object]:
    with library.Dataset(path) as ds:  # type: ignore[attr-defined]
        sub = ds["sub"]
        return [
            ds["s"][:].tolist(),
            ds["t"][...].tolist() if np.ndim(ds["t"][...]) else ds["t"][...],
            ds["s"][1],
            ds["s"].__dict__,
            ds["n"].__dict__,
            {k: ds.getncattr(k) for k in ds.ncattrs()},
            sub["u"][:].tolist(),
            sub["u"].__dict__,
            {k: sub.getncattr(k) for k in sub.ncattrs()},
        ]


def test_api_reads_null_strings_as_netcdf4_does(made, tmp_path):
    """netCDF4 1.7.5 gives "" for a NULL string, in data and in attributes alike."""
    _, nc = made
    wheel = _api_view(netCDF4, str(nc))
    assert wheel[:3] == [["a", "", "", ""], "", ""]
    assert _api_view(nczarr, str(nc)) == wheel
    store = tmp_path / "nil.zarr"
    assert main(["copy", str(nc), str(store)]) == 0
    assert _api_view(nczarr, str(store)) == wheel


def test_api_append_keeps_null_string_attributes_of_a_file(made, tmp_path):
    """An update keeps NULL string attributes; NULL string data becomes "" (the update goes
    through a Zarr store in memory, whose string arrays have no NULL: docs/api.md)."""
    _, nc = made
    kept = tmp_path / "kept.nc"
    kept.write_bytes(nc.read_bytes())
    with nczarr.Dataset(kept, "a") as ds:
        ds.title = "appended"
    expected = body(ncdump(nc)).replace('"a", NIL, _, _', '"a", _, _, _').replace("t = NIL", "t = _")
    expected = expected.replace('u = NIL, NIL, "z", NIL', 'u = _, _, "z", _')
    assert body(ncdump(kept)).replace('\t\t:title = "appended" ;\n', "") == expected


def _wheel_library() -> ctypes.CDLL:
    libs = sorted((Path(netCDF4.__file__).parent.parent / "netcdf4.libs").glob("libnetcdf*.so*"))
    assert libs, "the netCDF4 wheel's libnetcdf is missing"
    return ctypes.CDLL(str(libs[0]))


@pytest.mark.parametrize("mode", ["nczarr", "zarr"])
def test_netcdf_c_writes_null_strings_to_zarr_as_empty(tmp_path, mode, capsys):
    """What netcdf-c 4.10.1 writes for NULL strings (nc_put_att_string, nc_put_var_string with
    NULL pointers) in its Zarr: "", which nczarr reads as netCDF4 reads it."""
    lib = _wheel_library()
    path = tmp_path / "c.zarr"
    url = f"file://{path}#mode={mode},file".encode()

    def ok(status: int) -> None:
        assert status == 0, status

    ncid, dim, var = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    ok(lib.nc_create(url, 0x1000, ctypes.byref(ncid)))  # NC_NETCDF4
    ok(lib.nc_def_dim(ncid, b"x", ctypes.c_size_t(3), ctypes.byref(dim)))
    ok(lib.nc_def_var(ncid, b"s", 12, 1, ctypes.byref(dim), ctypes.byref(var)))  # NC_STRING
    texts = (ctypes.c_char_p * 3)(b"one", None, b"")
    ok(lib.nc_put_att_string(ncid, var, b"a", ctypes.c_size_t(3), texts))
    ok(lib.nc_enddef(ncid))
    ok(lib.nc_put_var_string(ncid, var, texts))
    ok(lib.nc_close(ncid))
    assert json.loads((path / "s" / ".zarray").read_text())["dtype"] == "|S128"
    with netCDF4.Dataset(f"file://{path}#mode={mode},file") as ds:
        wheel = [ds["s"][:].tolist(), ds["s"].getncattr("a")]
    assert wheel[0] == ["one", "", ""]  # pure Zarr: the attribute is JSON text, read as char
    assert wheel[1] == (["one", "", ""] if mode == "nczarr" else '["one","",""]')
    with nczarr.Dataset(path) as ds:
        assert [ds["s"][:].tolist(), ds["s"].getncattr("a")] == wheel
