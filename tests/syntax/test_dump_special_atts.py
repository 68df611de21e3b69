"""``dump -s``: the special virtual attributes, as ncdump 4.9.0 prints them for netCDF files
and as netcdf-c 4.10.1 (the netCDF4 wheel) sees NCZarr stores."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from nczarr.cli import main

# Every setting ncgen takes as a special attribute; every variable with dimensions chunked,
# so that the Zarr copy is laid out as the file is.
SPECIAL_CDL = r"""netcdf special {
dimensions:
	x = 6 ;
	u = UNLIMITED ;
variables:
	int a(x) ;
		a:_ChunkSizes = 3 ;
		a:_DeflateLevel = 5 ;
		a:_Shuffle = "true" ;
		a:_Fletcher32 = "true" ;
	short b(x) ;
		b:_ChunkSizes = 6 ;
		b:_Endianness = "big" ;
	double c(u, x) ;
		c:_ChunkSizes = 2, 3 ;
		c:_DeflateLevel = 1 ;
	byte keep(x) ;
		keep:_ChunkSizes = 6 ;
	float d(x) ;
		d:_ChunkSizes = 2 ;
		d:_Shuffle = "true" ;
	int scalar ;
data:
 a = 1, 2, 3, 4, 5, 6 ;
 b = 1, 2, 3, 4, 5, 6 ;
 c = 1, 2, 3, 4, 5, 6 ;
 keep = 1, 2, 3, 4, 5, 6 ;
 d = 1, 2, 3, 4, 5, 6 ;
 scalar = 7 ;
}
"""


def _ncgen(text: str, path: Path, *flags: str) -> Path:
    source = path.with_suffix(".cdl")
    source.write_text(text)
    subprocess.run(["ncgen", *flags, "-o", str(path), str(source)], check=True, capture_output=True)
    return path


def ncdump(path: Path | str, *flags: str) -> str:
    return subprocess.run(["ncdump", *flags, str(path)], capture_output=True, check=True, text=True).stdout


def ours(path: Path | str, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    capsys.readouterr()
    assert main(["dump", *flags, str(path)]) == 0
    return capsys.readouterr().out


def lines_of(text: str, name: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(f"{name}:_")]


@pytest.fixture(scope="module")
def special(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("special")
    nc = _ncgen(SPECIAL_CDL, root / "special.nc", "-k", "nc4")
    store = root / "special.zarr"
    assert main(["copy", str(nc), str(store)]) == 0
    return nc, store


@pytest.mark.parametrize("flags", [["-s"], ["-s", "-F"], ["-hs", "-F"], ["-s", "-Xp"]])
def test_netcdf4_file_as_ncdump(special, flags, capsys):
    nc, _ = special
    assert ours(nc, capsys, *flags) == ncdump(nc, *flags)


def test_zarr_copy_shows_the_file_s_settings(special, capsys):
    """The file's settings, and (netcdf-c shows them for every filtered NCZarr variable) the
    store's codecs in ``_Codecs`` right after the filters."""
    nc, store = special
    expected = [line for line in ncdump(nc, "-s").splitlines() if ":_NCProperties" not in line]
    got = ours(store, capsys, "-s").splitlines()
    assert [line for line in got if ":_NCProperties" not in line and ":_Codecs" not in line] == expected
    codecs = {line.split(":")[0].strip(): i for i, line in enumerate(got) if ":_Codecs = " in line}
    assert sorted(codecs) == ["a", "c", "d"]  # the filtered ones
    assert got[codecs["a"] - 1] == "\t\ta:_DeflateLevel = 5 ;"
    assert '\t\t:_NCProperties = "version=2,nczarr=2.0.0,nczarr-python=' in "\n".join(got)


def test_zarr_copy_shows_filters_in_chain_order_and_its_codecs(special, capsys):
    """-F on a store: the filters in the order of its codec chain (NCZarr keeps them so) and
    the codecs themselves in ``_Codecs`` (netcdf-c's JSON, quotes escaped)."""
    nc, store = special
    got = ours(store, capsys, "-s", "-F")
    assert lines_of(ncdump(nc, "-s", "-F"), "a")[2] == 'a:_Filter = "3|2,4|1,5" ;'
    a = lines_of(got, "a")
    assert a[2] == 'a:_Filter = "2,4|1,5|3" ;'
    codecs = json.loads(a[3].removeprefix("a:_Codecs = ").removesuffix(" ;")[1:-1].replace('\\"', '"'))
    assert [c["name"] for c in codecs] == ["numcodecs.shuffle", "gzip", "numcodecs.fletcher32"]
    assert lines_of(got, "keep") == ['keep:_Storage = "chunked" ;', "keep:_ChunkSizes = 6 ;"]


@pytest.mark.parametrize(
    "body,is_netcdf4",
    [("variables: int v ; data: v = 1 ;", 0), ("dimensions: d = 1 ;", 1), ("group: g { dimensions: d = 2 ; }", 1)],
)
def test_is_netcdf4_is_what_the_file_holds(tmp_path, body, is_netcdf4, capsys):
    """netcdf-c calls a netCDF-4 file without dimension scales "not netCDF-4"."""
    nc = _ncgen(f"netcdf t {{ {body} }}", tmp_path / "t.nc", "-k", "nc4")
    text = ncdump(nc, "-s")
    assert f":_IsNetcdf4 = {is_netcdf4} ;" in text
    assert ours(nc, capsys, "-s") == text


@pytest.mark.parametrize("kind", ["nc3", "nc6", "nc7"])
def test_other_kinds(tmp_path, kind, capsys):
    nc = _ncgen("netcdf k { dimensions: d = 2 ; variables: float v(d) ; data: v = 1, 2 ; }", tmp_path / "k.nc", "-k", kind)
    assert ours(nc, capsys, "-s") == ncdump(nc, "-s")


def test_keyword_variable_names_keep_no_space_in_specials(tmp_path, capsys):
    nc = _ncgen("netcdf kw { variables: int data ; data :_FillValue = 0 ; data: data = 1 ; }", tmp_path / "kw.nc", "-k", "nc4")
    text = ncdump(nc, "-s")
    assert "data :_FillValue" in text and "\t\tdata:_Storage" in text
    assert ours(nc, capsys, "-s") == text


@pytest.fixture(scope="module")
def wheel_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An NCZarr 2.0.0 store netcdf-c 4.10.1 wrote, with its codecs."""
    path = tmp_path_factory.mktemp("wheel") / "wheel.zarr"
    with netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "w") as ds:
        ds.createDimension("x", 400)  # Blosc refuses to write a chunk it cannot shrink
        a = ds.createVariable("a", "i4", ("x",), zlib=True, complevel=5, shuffle=True, fletcher32=True, chunksizes=(200,))
        z = ds.createVariable("z", "f4", ("x",), compression="zstd", complevel=3)
        b = ds.createVariable("b", "f8", ("x",), compression="blosc_lz4", complevel=2, blosc_shuffle=2)
        n = ds.createVariable("n", "i2", ("x",), fill_value=False)
        a[:] = np.arange(400)
        z[:] = 1
        b[:] = 2
        n[:] = 3
    return path


def test_store_of_the_wheel_as_the_wheel_sees_it(wheel_store, capsys):
    text = ours(wheel_store, capsys, "-s", "-h")
    with netCDF4.Dataset(f"file://{wheel_store}#mode=nczarr,file") as ds:
        for name, variable in ds.variables.items():
            filters, chunks = variable.filters(), variable.chunking()
            lines = lines_of(text, name)
            assert lines[:2] == [f'{name}:_Storage = "chunked" ;', f"{name}:_ChunkSizes = {', '.join(map(str, chunks))} ;"]
            assert (f'{name}:_Shuffle = "true" ;' in lines) == filters["shuffle"]
            assert (f'{name}:_Fletcher32 = "true" ;' in lines) == filters["fletcher32"]
            assert (f"{name}:_DeflateLevel = {filters['complevel']} ;" in lines) == filters["zlib"]
            assert f'{name}:_Endianness = "{variable.endian()}" ;' in lines
            assert (f'{name}:_NoFill = "true" ;' in lines) == (variable.get_fill_value() is None)
    assert lines_of(text, "z")[2] == 'z:_Filter = "32015,3" ;'


def test_codecs_of_the_wheel_s_store_are_its_own(wheel_store, capsys):
    text = ours(wheel_store, capsys, "-s", "-h", "-F")
    for name in ("a", "z", "b"):
        stored = json.loads((wheel_store / name / ".zarray").read_text())
        chain = [*(stored["filters"] or []), stored["compressor"]]
        codecs = next(line for line in lines_of(text, name) if line.startswith(f"{name}:_Codecs"))
        assert json.loads(codecs.split(" = ", 1)[1].removesuffix(" ;")[1:-1].replace('\\"', '"')) == chain
    assert lines_of(text, "a")[2] == 'a:_Filter = "2,0|1,5|3" ;'  # netcdf-c stores shuffle's elementsize 0


#: netCDF4's compression words, for every codec netcdf-c 4.10.1 writes to a Zarr store.
WHEEL_CODECS = ["zlib", "bzip2", "zstd", "blosc_lz4", "blosc_zstd", "szip"]


@pytest.mark.parametrize("mode", ["nczarr", "zarr"])
def test_codecs_of_every_codec_with_plain_s_as_the_wheel_sees_them(tmp_path, mode, capsys):
    """``_Codecs`` with plain ``-s`` for every codec (bzip2, zstd, blosc and szip as deflate):
    the text netcdf-c 4.10.1 gives for the variable's ``_Codecs`` attribute."""
    path = tmp_path / "codecs.zarr"
    with netCDF4.Dataset(f"file://{path}#mode={mode},file", "w") as ds:
        ds.createDimension("x", 400)
        for compression in WHEEL_CODECS:
            v = ds.createVariable(compression, "i4", ("x",), compression=compression, shuffle=compression == "zlib")
            v[:] = np.arange(400)
    text = ours(path, capsys, "-s", "-h")
    with netCDF4.Dataset(f"file://{path}#mode={mode},file") as ds:
        for compression in WHEEL_CODECS:
            wheel = ds[compression].getncattr("_Codecs")
            line = next(line for line in lines_of(text, compression) if ":_Codecs = " in line)
            assert json.loads(line.split(" = ", 1)[1].removesuffix(" ;")[1:-1].replace('\\"', '"')) == json.loads(wheel)


def test_filter_given_as_a_number_shows_its_codecs(tmp_path, capsys):
    """``_Filter = "307,9"`` (bzip2 by its HDF5 id) in CDL: ``_Filter`` and ``_Codecs``."""
    cdl = tmp_path / "f.cdl"
    cdl.write_text('netcdf f { dimensions: x = 4 ; variables: int v(x) ; v:_Filter = "307,9" ; data: v = 1, 2, 3, 4 ; }')
    assert main(["gen", "-o", str(tmp_path / "f.zarr"), str(cdl)]) == 0
    lines = lines_of(ours(tmp_path / "f.zarr", capsys, "-s"), "v")
    assert lines[2:4] == [
        'v:_Filter = "307,9" ;',
        'v:_Codecs = "[{\\"name\\": \\"numcodecs.bz2\\", \\"configuration\\": {\\"level\\": 9}}]" ;',
    ]
