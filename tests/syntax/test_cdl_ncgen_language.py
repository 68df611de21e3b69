"""CDL as ncgen 4.9.0 reads it: char data with an unlimited dimension that is not the first,
strings and time() as numbers, names that are keywords, special attributes, enum constant
scope. Each text is made by ncgen and by nczarr gen, and both files are printed by ncdump."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nczarr.api.generate import generate
from nczarr.errors import ParseError

ACCEPTED = {
    "char_unlimited": """netcdf t {
dimensions: n = 2 ; u = unlimited ; v = unlimited ; s = 3 ;
variables: char c(n, u) ; char f(n, v, s) ;
data: c = {"ab", "cd"}, {'x', 'y', "z"} ; f = {"ab", "cdefg"}, {"x"} ;
}""",
    "char_fill": """netcdf t {
dimensions: n = 6 ; s = 3 ;
variables: char c(n) ; c:_FillValue = "*" ; char d(n, s) ; char e(s) ;
data: c = "ab", "", "c" ; d = "ab", "cdefg", _, "z" ; e = 'a', _, 'b', 65 ;
}""",
    "numbers_from_strings": """netcdf t {
dimensions: n = 4 ;
variables: double a(n) ; int i(n) ; ubyte b(n) ; float f(n) ;
data:
 a = time("2000-01-02"), time("1900-02-28 23:59:59.5"), time("2000-1-1T06:00"), "2001-01-01" ;
 i = "12abc", "-3.9", "0x10", "4294967297" ;
 b = "-3", " 7", "1e3", "x" ;
 f = "1.5e2x", "nan", "0x1p3", ".5" ;
}""",
    "keyword_names": """netcdf t {
dimensions: data = 1 ; variables = 2 ;
variables: int types(variables) ; types :group = 1 ; int Inf ;
data: types = 1, 2 ;
}""",
    "special_attributes": """netcdf t {
dimensions: d = 4 ; e = 3 ;
variables:
  int v(d) ; v:_ChunkSizes = 2, 3 ;
  int w(d, e) ; w:_ChunkSizes = 2 ; w:_DeflateLevel = -1 ;
  int x(d) ; x:_ChunkSizes = 2 ; x:_Storage = "contiguous" ;
:_SuperblockVersion = 2 ;
}""",
}

REFUSED = {
    "keyword_dimension": ("netcdf t {\ndimensions:\n int = 1 ;\n}\n", "3:6"),
    "keyword_attribute": ("netcdf t {\nvariables:\n int v ;\n v:float = 1 ;\n}\n", "4:4"),
    "fill_marker_name": ("netcdf t {\nvariables:\n int _ ;\n}\n", "3:6"),
    "global_storage": ('netcdf t {\n :_Storage = "chunked" ;\n}\n', "2:3"),
    "typed_special": ("netcdf t {\ndimensions: d = 2 ;\nvariables:\n int v(d) ;\n int v:_ChunkSizes = 1 ;\n}\n", "5:8"),
    "char_fill_number": ("netcdf t {\nvariables:\n char c ;\n c:_FillValue = 65 ;\n}\n", "4:17"),
    "char_fill_two": ('netcdf t {\nvariables:\n char c ;\n c:_FillValue = "ab" ;\n}\n', "4:4"),
    "unbraced_unlimited": (
        'netcdf t {\ndimensions: n = 2 ; u = unlimited ;\nvariables: char c(n, u) ;\ndata: c = "ab" ;\n}\n', "4:11"),
    "enum_scope": ("""netcdf t {
group: a { types: int enum e {x = 1, y = 2} ; }
group: b { types: int enum e {z = 3} ; variables: /a/e u ; data: u = e.y ; }
}
""", "3:70"),
    "nil_int": ("netcdf t {\nvariables:\n int v ;\ndata:\n v = NIL ;\n}\n", "5:6"),
}


def _ncdump(path: Path) -> str:
    return subprocess.run(["ncdump", path.name], capture_output=True, text=True, check=True, cwd=path.parent).stdout


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_same_data_as_ncgen(tmp_path: Path, name: str) -> None:
    cdl = tmp_path / "t.cdl"
    cdl.write_text(ACCEPTED[name])
    (tmp_path / "ref").mkdir()
    (tmp_path / "our").mkdir()
    subprocess.run(["ncgen", "-k", "nc4", "-o", "ref/t.nc", "t.cdl"], check=True, cwd=tmp_path, capture_output=True)
    generate(cdl, tmp_path / "our" / "t.nc", kind="nc4")
    assert _ncdump(tmp_path / "our" / "t.nc") == _ncdump(tmp_path / "ref" / "t.nc")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_ncgen_does(tmp_path: Path, name: str) -> None:
    text, where = REFUSED[name]
    cdl = tmp_path / "t.cdl"
    cdl.write_text(text)
    ncgen = subprocess.run(["ncgen", "-k", "nc4", "-o", "ref.nc", "t.cdl"], cwd=tmp_path, capture_output=True)
    assert ncgen.returncode != 0
    with pytest.raises(ParseError) as caught:
        generate(cdl, tmp_path / "our.nc", kind="nc4")
    assert str(caught.value).startswith(f"{cdl}:{where}:")


@pytest.mark.parametrize("kind", ["-3", "-6", "-7", "-5", "-4"])
@pytest.mark.parametrize("word", ["string", "int64", "ubyte", "uint"])
def test_type_words_are_names_where_the_format_lacks_the_type(tmp_path: Path, kind: str, word: str) -> None:
    """ncgen reads netCDF-4's type words as names in formats without those types (CDF5 has
    all but string), and refuses them as names in netCDF-4."""
    cdl = tmp_path / "words.cdl"
    cdl.write_text(f"netcdf words {{\ndimensions:\n  {word} = 2 ;\nvariables:\n  int {word}({word}) ;\n}}\n")
    theirs = subprocess.run(["ncgen", kind, "-o", str(tmp_path / "theirs.nc"), str(cdl)], capture_output=True)
    ours = subprocess.run(
        [sys.executable, "-m", "nczarr.cli", "gen", kind, "-o", str(tmp_path / "ours.nc"), str(cdl)], capture_output=True
    )
    assert (ours.returncode == 0) == (theirs.returncode == 0), ours.stderr
    if theirs.returncode == 0:
        dumps = [
            subprocess.run(["ncdump", "-n", "w", str(tmp_path / f)], capture_output=True, text=True).stdout
            for f in ("theirs.nc", "ours.nc")
        ]
        assert dumps[0] == dumps[1]


@pytest.mark.parametrize(
    "text",
    [
        "netcdf a {\ntypes:\n  ubyte enum e {A = 1} ;\nvariables:\n  e v ;\n  string s ;\n}\n",  # netCDF-4 CDL
        "netcdf b {\ndimensions:\n  string = 2 ;\nvariables:\n  int string(string) ;\n}\n",  # classic CDL
    ],
)
def test_without_a_kind_netcdf4_and_classic_cdl_both_make_a_dataset(tmp_path: Path, text: str) -> None:
    """ncgen without -k reads type words as classic names (and refuses netCDF-4 CDL with
    them as types); gen makes a netCDF-4 dataset then, so it reads netCDF-4 CDL first."""
    cdl = tmp_path / "nokind.cdl"
    cdl.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "nczarr.cli", "gen", "-o", str(tmp_path / "out.zarr"), str(cdl)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
