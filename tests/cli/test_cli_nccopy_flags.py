"""``nczarr copy`` with every nccopy flag, side by side with Debian's nccopy: the netCDF-4
files both write must show the same ``ncdump -hs`` (apart from the first line and
``_NCProperties``); Zarr targets get the same filters as codecs; hostile specs are refused in
one line, with nothing written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import netCDF4
import pytest

from nczarr.cli import main

CDL = """netcdf specs {
dimensions:
  time = UNLIMITED ;
  lat = 6 ;
  lon = 8 ;
  y = 50 ;
  x = 60 ;
variables:
  float t(time, lat, lon) ;
    t:units = "K" ;
  int v(lat, lon) ;
  double lat(lat) ;
  short s(time) ;
  char c(lat) ;
  float big(y, x) ;
  int scalar ;
data:
  t = %(t)s ;
  v = %(v)s ;
  lat = 1, 2, 3, 4, 5, 6 ;
  s = 1, 2, 3, 4 ;
  c = "abcdef" ;
  big = %(big)s ;
  scalar = 7 ;

group: g {
  dimensions:
    n = 5 ;
  variables:
    int gv(n) ;
    float gt(time, n) ;
  data:
    gv = 1, 2, 3, 4, 5 ;
    gt = %(gt)s ;
  }
}
"""


def _values(count: int) -> str:
    return ", ".join(str(i % 97) for i in range(count))


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("nccopy")
    cdl = folder / "specs.cdl"
    cdl.write_text(CDL % {"t": _values(4 * 6 * 8), "v": _values(48), "big": _values(3000), "gt": _values(20)})
    subprocess.run(["ncgen", "-4", "-o", str(folder / "specs.nc"), str(cdl)], check=True)
    return folder / "specs.nc"


@pytest.fixture(scope="module")
def classic_source(source: Path) -> Path:
    """The root group of the source as a netCDF-3 file."""
    cdl = source.with_name("classic.cdl")
    text = CDL % {"t": _values(4 * 6 * 8), "v": _values(48), "big": _values(3000), "gt": _values(20)}
    cdl.write_text(text[: text.index("group: g")] + "}\n")
    subprocess.run(["ncgen", "-3", "-o", str(source.with_name("classic.nc")), str(cdl)], check=True)
    return source.with_name("classic.nc")


def _header(path: Path | str) -> list[str]:
    text = subprocess.run(["ncdump", "-hs", str(path)], check=True, capture_output=True, text=True).stdout
    return [line for line in text.splitlines()[1:] if "_NCProperties" not in line]


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["-F", "v,1,5"],
        ["-F", "*,2"],
        ["-F", "v&lat,1,3|2"],
        ["-F", "/g/gv,3", "-F", "big,1,9"],
        ["-F", "lat,1,3", "-F", "lat,1,7"],
        ["-F", "v,none", "-d", "2"],
        ["-F", "none", "-d", "0"],
        ["-c", "lat/3"],
        ["-c", "lat/3,lon/4"],
        ["-c", "time/2,lat/3"],
        ["-c", "lat/3", "-c", "lon/4"],
        ["-c", "v:3,4"],
        ["-c", "v:3,4", "-M", "10"],
        ["-c", "v:3,4", "-c", "v:2,2", "-M0"],
        ["-c", "v:0,4", "-M", "0"],
        ["-c", "/g/n/2", "-M", "0"],
        ["-c", "big:10,20"],
        ["-c", "y/25"],
        ["-c", "lat/3", "-M", "24"],
        ["-c", "lat/3", "-M", "25"],
        ["-d", "1"],
        ["-d", "4", "-s"],
        ["-s"],
        ["-u"],
        ["-u", "-c", "lat/3"],
        ["-4"],
        ["-k", "nc4"],
        ["-k", "netCDF-4"],
        ["-V", "v,lat"],
        ["-V", "gv"],
        ["-v", "v"],
        ["-G", "g"],
        ["-g", "g"],
        ["-m", "1k", "-h", "1M", "-e", "10", "-r", "-w"],
        ["-m", "1.5M"],
    ],
    ids=lambda flags: " ".join(flags) or "none",
)
def test_netcdf4_output_matches_nccopy(source: Path, tmp_path: Path, flags: list[str]) -> None:
    ours, theirs = tmp_path / "ours.nc", tmp_path / "theirs.nc"
    assert main(["copy", *flags, str(source), str(ours)]) == 0
    subprocess.run(["nccopy", *flags, str(source), str(theirs)], check=True, capture_output=True)
    assert _header(ours) == _header(theirs)


@pytest.mark.parametrize(
    "flags",
    [[], ["-d", "1"], ["-s"], ["-c", "lat/3"], ["-c", "time/2"], ["-F", "v,1,2"], ["-7"], ["-u", "-7"], ["-6"],
     ["-4", "-c", "v:3,4", "-M", "0"]],
    ids=lambda flags: " ".join(flags) or "none",
)
def test_netcdf3_sources_as_nccopy(classic_source: Path, tmp_path: Path, flags: list[str]) -> None:
    """-d, -s and -c make netCDF-4 classic model files of a netCDF-3 source; -F netCDF-4."""
    ours, theirs = tmp_path / "ours.nc", tmp_path / "theirs.nc"
    assert main(["copy", *flags, str(classic_source), str(ours)]) == 0
    subprocess.run(["nccopy", *flags, str(classic_source), str(theirs)], check=True, capture_output=True)
    assert _header(ours) == _header(theirs)
    assert ours.read_bytes()[:4] == theirs.read_bytes()[:4]


def test_log_level_is_accepted(source: Path, tmp_path: Path) -> None:
    # Debian's nccopy lacks logging and refuses -L; nczarr takes it and has nothing to log there
    assert main(["copy", "-L", "2", "-F", "v,1,5", str(source), str(tmp_path / "a.nc")]) == 0
    assert main(["copy", "-L3", str(source), str(tmp_path / "b.nc")]) == 0
    subprocess.run(["nccopy", "-F", "v,1,5", str(source), str(tmp_path / "c.nc")], check=True)
    assert _header(tmp_path / "a.nc") == _header(tmp_path / "c.nc")


def test_zarr_targets_get_the_filters_as_codecs(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "z.zarr"
    flags = ["-F", "v,1,5|2", "-F", "lat,zstd,7", "-F", "t,32001,0,0,0,0,4,2,1", "-F", "s,fletcher32", "-c", "big:10,20"]
    assert main(["copy", *flags, "--format", "NCZARR_V2", str(source), f"file://{store}#mode=nczarr,file"]) == 0
    capsys.readouterr()
    assert main(["dump", "-hs", str(store)]) == 0
    header = capsys.readouterr().out
    for line in ('v:_Shuffle = "true" ;', "v:_DeflateLevel = 5 ;", 'lat:_Filter = "32015,7" ;',
                 's:_Fletcher32 = "true" ;', "big:_ChunkSizes = 10, 20 ;"):
        assert line in header
    with netCDF4.Dataset(f"file://{store}#mode=nczarr,file") as ds:  # netcdf-c reads them
        assert ds["v"].filters()["zlib"] and ds["v"].filters()["complevel"] == 5 and ds["v"].filters()["shuffle"]
        assert ds["lat"].filters()["zstd"] and ds["big"].chunking() == [10, 20]
        assert ds["v"][2, 3] == 19 and ds["t"][1, 0, 0] == 48


def test_filters_need_netcdf4(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["copy", "-F", "v,1,5", "-3", str(source), str(tmp_path / "c.nc")]) == 1
    assert "-F filters need a netCDF-4 target, not NETCDF3_CLASSIC" in capsys.readouterr().err
    assert not (tmp_path / "c.nc").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["-F", "nosuch,1,5"], "no variable /nosuch"),
        (["-F", "gv,1,5"], "no variable /gv"),  # a bare name is a root variable, as nccopy
        (["-F", "v,99999"], "unknown filter 99999"),
        (["-F", "v,foo"], "unknown filter 'foo'"),
        (["-F", "v,4,32,32"], "szip"),
        (["-F", "v"], "no filter given"),
        (["-F", "v,1,0x5"], "bad filter parameter '0x5'"),
        (["-F", "v,1,-1"], "level 4294967295"),
        (["-c", "lat/100"], "exceeds its dimension /lat"),
        (["-c", "v:100,100"], "exceeds its dimension"),
        (["-c", "v:3"], "1 chunk lengths given"),
        (["-c", "lat/-1"], "bad chunk length '-1'"),
        (["-c", "lat/0"], "must be positive"),
        (["-c", "v:3,4,lat/2"], "not both"),
        (["-c", "nosuch:3"], "no variable /nosuch"),
        (["-c", "nosuch/3"], "no dimension /nosuch"),
        (["-d", "10"], "-d 10"),
        (["-d", "x"], "-d 'x'"),
        (["-M-5"], "-M '-5'"),
        (["-m", "1x"], "-m '1x'"),
        (["-h-1"], "-h '-1'"),
        (["-V", "nosuch"], "nosuch: no such variable"),
        (["-G", "nosuch"], "nosuch: no such group"),
        (["-k", "bogus"], "unknown output kind 'bogus'"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_hostile_specs_fail_cleanly(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    for target in (tmp_path / "out.nc", tmp_path / "out.zarr"):
        assert main(["copy", *flags, str(source), str(target)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("nczarr: error: ") and message in err and "Traceback" not in err
        assert err.count("\n") == 1 and not target.exists()
