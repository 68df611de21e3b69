"""``nczarr dump`` takes ncdump's flags and prints what ncdump 4.9.0 prints, byte for byte: for
the netCDF-4 file ncgen makes of a CDL text, and for the Zarr store ``nczarr copy`` makes of it."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from nczarr.cli import main

# Groups, an unlimited dimension, char rows, a scalar, fill values, strings, a user type, and
# a second unlimited dimension (CDL's braces in the data).
GROUPS_CDL = r"""netcdf flags {
types:
  int(*) ragged ;
dimensions:
	t = UNLIMITED ;
	u = UNLIMITED ;
	x = 3 ;
	n = 4 ;
	w = 25 ;
variables:
	int t(t) ;
	float v(t, x) ;
		v:units = "m" ;
	char c(x, n) ;
	double s ;
	short sv(x) ;
	string st(x) ;
	ragged r(x) ;
	double wide(x, w) ;
		wide:C_format = "%.3f" ;
	float f3(t, x, u) ;
	char cu(x, u) ;
// global attributes:
		:title = "flags" ;
data:
 t = 1, 2 ;
 v = 1.5, 2, 3, 4, 5, 6.25 ;
 c = "ab", "cde\n", "f" ;
 s = 3.5 ;
 sv = 1, _, 3 ;
 st = "x", "y y", "" ;
 r = {1, 2}, {}, {3} ;
 wide = 1.23456, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
   26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
   51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75 ;
 f3 = {1, 2}, {3}, {4}, {5, 6}, {7}, {} ;
 cu = {"ab"}, {"c"}, {""} ;
group: g1 {
  variables:
    int gv(x) ;
  data:
   gv = 7, 8, 9 ;
  group: g2 {
   variables:
    int gw ;
    double time(x) ;
      time:units = "hours since 2000-01-01 00:00" ;
   data:
    gw = 3 ;
    time = 0, 1.5, 36 ;
  }
}
group: h {
  variables:
    int hv ;
    char hc ;
  data:
    hv = 1 ;
    hc = "z" ;
}
}
"""

CLASSIC_CDL = """netcdf classic {
dimensions:
	d = 2 ;
variables:
	float a(d) ;
		a:long_name = "a <&> b" ;
		a:valid = 1.f, 2.f ;
	int b ;
// global attributes:
		:history = "made" ;
data:
 a = 1, 2 ;
 b = 4 ;
}
"""

FLAG_SETS = [
    "",
    "-h",
    "-c",
    "-hs",
    "-b c",
    "-bf",
    "-f c",
    "-ff",
    "-bc -ff",
    "-l 30 -bF",
    "-l 0x20 -fc",
    "-g g1",
    "-g g2",
    "-g /g1/g2",
    "-g h,g1",
    "-g /",
    "-v gv",
    "-v g1/gv,s",
    "-v /h/hv -bc",
    "-p 3,4",
    "-p 3",
    "-p ,4",
    "-d 3,4",
    "-t",
    "-i -ff",
    "-Xp -L0 -w",
    "-n other",
    "-k",
]


def _ncgen(cdl: str, path: Path, kind: str) -> Path:
    source = path.with_suffix(".cdl")
    source.write_text(cdl)
    subprocess.run(["ncgen", "-k", kind, "-o", str(path), str(source)], check=True, capture_output=True)
    return path


def ncdump(path: Path, flags: str) -> bytes:
    done = subprocess.run(["ncdump", *shlex.split(flags), str(path)], capture_output=True, check=True)
    return done.stdout


def ours(path: Path | str, flags: str, capsysbinary: pytest.CaptureFixture[bytes]) -> bytes:
    capsysbinary.readouterr()
    assert main(["dump", *shlex.split(flags), str(path)]) == 0
    return capsysbinary.readouterr().out


def without_properties(text: bytes) -> bytes:
    return b"".join(line for line in text.splitlines(keepends=True) if b":_NCProperties = " not in line)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ncdump_flags")
    files = {"groups": _ncgen(GROUPS_CDL, root / "flags.nc", "nc4"), "classic": _ncgen(CLASSIC_CDL, root / "classic.nc", "nc3")}
    for key, nc in list(files.items()):
        store = root / "zarr" / f"{nc.stem}.zarr"
        assert main(["copy", str(nc), str(store)]) == 0
        files[f"{key} zarr"] = store
    return files


@pytest.mark.parametrize("flags", FLAG_SETS)
def test_netcdf4_file_as_ncdump(made, flags, capsysbinary):
    assert ours(made["groups"], flags, capsysbinary) == ncdump(made["groups"], flags)


@pytest.mark.parametrize("flags", [f for f in FLAG_SETS if f not in ("-k", "-hs")])
def test_zarr_copy_as_ncdump_of_the_file(made, flags, capsysbinary):
    assert ours(made["groups zarr"], flags, capsysbinary) == ncdump(made["groups"], flags)


@pytest.mark.parametrize("flags", ["", "-x", "-x -Xp", "-x -h", "-x -v a", "-s", "-k", "-c -bc", "-ff"])
def test_classic_file_and_copy_as_ncdump(made, flags, capsysbinary):
    expected = ncdump(made["classic"], flags)
    assert ours(made["classic"], flags, capsysbinary) == expected
    if not {"-x", "-s", "-k"} & set(flags.split()):  # NcML names the location; a store is not of a classic kind
        assert without_properties(ours(made["classic zarr"], flags, capsysbinary)) == without_properties(expected)


def test_urls_with_modes_are_locations(made, tmp_path, capsysbinary):
    url = f"file://{tmp_path / 'classic.zarr'}#mode=nczarr,file"
    assert main(["copy", str(made["classic"]), url]) == 0
    expected = without_properties(ncdump(made["classic"], "-bc"))
    assert without_properties(ours(url, "-bc", capsysbinary)) == expected


@pytest.mark.parametrize(
    "flags,message",
    [
        ("-b x", "invalid value for -b option: x"),
        ("-f x", "invalid value for -f option: x"),
        ("-l 9", "unreasonably small line length specified: 9"),
        ("-p 0", "unreasonable value for float significant digits: 0"),
        ("-p 3,x", "unreasonable value for double significant digits: 0"),
        ("-X q", "invalid value for -X option: q"),
        ("-Q", "unrecognized arguments: -Q"),
    ],
)
def test_bad_flags_are_refused_as_ncdump_refuses_them(made, flags, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["dump", *shlex.split(flags), str(made["groups"])])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("flags,message", [("-v nope", "nope: No such variable"), ("-g nope", "nope: No such group")])
def test_missing_names_fail_as_ncdump(made, flags, message, capsys):
    theirs = subprocess.run(["ncdump", *shlex.split(flags), str(made["groups"])], capture_output=True)
    assert theirs.returncode == 1 and message in theirs.stderr.decode()
    assert main(["dump", *shlex.split(flags), str(made["groups"])]) == 1
    assert message in capsys.readouterr().err


def test_groups_are_refused_for_the_classic_model(made, capsys):
    theirs = subprocess.run(["ncdump", "-g", "g", str(made["classic"])], capture_output=True)
    assert theirs.returncode == 1 and not theirs.stdout
    assert main(["dump", "-g", "g", str(made["classic"])]) == 1
    assert "-g" in capsys.readouterr().err


TIME_ATTRIBUTES_CDL = r"""netcdf times {
dimensions:
  t = 2 ;
variables:
  double t(t) ;
    t:units = "hours since 1900-01-01 06:00" ;
    t:calendar = "noleap" ;
    t:one = 12. ;
    t:two = 24., 36.5 ;
    t:three = 48., 60.25, 72. ;
    t:many = 0., 1., 2.5, 3., 4., 5.75, 6., 7., 8., 9., 10., 11., 12., 13., 14., 15. ;
data:
  t = 1, 2 ;
group: g {
  variables:
    float s ;
      s:units = "days since 2001-02-28" ;
      s:span = 0., 1., 2., 3., 4., 5., 6., 7., 8., 9. ;
  }
}
"""


@pytest.mark.parametrize("flags", ["-t", "-t -l 50", "-i -l 120", "-t -h"])
def test_time_comments_of_attributes_wrap_as_ncdump_wraps_them(
    tmp_path: Path, flags: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """One or two times stay on the attribute's line; more go on lines of their own, wrapped
    at the line length."""
    nc = _ncgen(TIME_ATTRIBUTES_CDL, tmp_path / "times.nc", "nc4")
    assert ours(nc, flags, capsysbinary) == ncdump(nc, flags)
