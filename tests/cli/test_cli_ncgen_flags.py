"""``nczarr gen`` takes ncgen's flags with ncgen's meanings: what it makes reads back as what
ncgen 4.9.0 makes of the same CDL text (compared through the real ncdump)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from nczarr.cli import main

CDL = r"""netcdf gen {
dimensions:
	t = UNLIMITED ;
	x = 3 ;
variables:
	int t(t) ;
	float v(t, x) ;
		v:units = "m" ;
	short s ;
// global attributes:
		:title = "gen" ;
data:
 t = 1, 2 ;
 v = 1, 2, 3, 4, 5, 6 ;
 s = 7 ;
}
"""

GROUPS_CDL = """netcdf grouped {
group: g {
  dimensions:
    d = 2 ;
  variables:
    ubyte u(d) ;
  data:
    u = 1, 2 ;
}
}
"""


@pytest.fixture
def cdl(tmp_path: Path) -> Path:
    path = tmp_path / "gen.cdl"
    path.write_text(CDL)
    return path


def ncgen(*args: str) -> None:
    subprocess.run(["ncgen", *args], check=True, capture_output=True)


def ncdump(*args: str | Path) -> str:
    return subprocess.run(["ncdump", *map(str, args)], capture_output=True, check=True, text=True).stdout


def body(text: str) -> str:
    """CDL without its first line (the name comes from the file name)."""
    return text.split("\n", 1)[1]


@pytest.mark.parametrize(
    "flags",
    ["-b", "-lb", "-k nc4", "-4", "-7", "-k classic", "-3", "-6", "-5", "-1 -b", "-v 3", "-k netCDF-4"],
)
def test_kinds_and_binary_output_as_ncgen(cdl, tmp_path, flags):
    theirs, ours = tmp_path / "theirs.nc", tmp_path / "ours.nc"
    ncgen(*shlex.split(flags), "-o", str(theirs), str(cdl))
    assert main(["gen", *shlex.split(flags), "-o", str(ours), str(cdl)]) == 0
    assert ncdump("-k", ours) == ncdump("-k", theirs)
    assert body(ncdump(ours)) == body(ncdump(theirs))


def test_no_fill_and_header_only_as_ncgen(cdl, tmp_path):
    theirs, ours = tmp_path / "theirs.nc", tmp_path / "ours.nc"
    ncgen("-k", "nc4", "-x", "-H", "-o", str(theirs), str(cdl))
    assert main(["gen", "-k", "nc4", "-x", "-H", "-o", str(ours), str(cdl)]) == 0
    # no data was written: the unlimited dimension is empty, the scalar has no value
    header = body(ncdump("-s", "-h", theirs))
    assert ':_NoFill = "true" ;' in header and "UNLIMITED ; // (0 currently)" in header
    strip = "\n".join(line for line in header.splitlines() if ":_NCProperties" not in line)
    assert "\n".join(line for line in body(ncdump("-s", "-h", ours)).splitlines() if ":_NCProperties" not in line) == strip


def test_header_only_writes_fill_values(cdl, tmp_path, capsys):
    theirs = tmp_path / "theirs.nc"
    ncgen("-k", "nc4", "-H", "-o", str(theirs), str(cdl))
    assert main(["gen", "-H", "-o", str(tmp_path / "ours.zarr"), str(cdl)]) == 0
    capsys.readouterr()
    assert main(["dump", "-n", "theirs", str(tmp_path / "ours.zarr")]) == 0
    assert capsys.readouterr().out == ncdump(theirs)


@pytest.mark.parametrize("flags", ["-N other", "-M main2", "-d", "-D 1", "-L 0", "-L0", "-P", "-W 100", "-B 1000", "-bx"])
def test_flags_without_effect_on_a_dataset_are_accepted(cdl, tmp_path, flags, capsys):
    theirs = tmp_path / "theirs.nc"
    ncgen("-k", "nc4", *([] if flags in ("-P",) else shlex.split(flags)), "-o", str(theirs), str(cdl))  # ncgen -P crashes
    ours = tmp_path / "ours.zarr"
    assert main(["gen", *shlex.split(flags), "-o", str(ours), str(cdl)]) == 0
    capsys.readouterr()
    assert main(["dump", "-n", "theirs", str(ours)]) == 0
    assert capsys.readouterr().out == ncdump(theirs)


def test_default_output_names(cdl, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["gen", str(cdl)]) == 0
    assert (tmp_path / "gen.zarr").is_dir()
    assert main(["gen", "-n", str(cdl)]) == 0  # ncgen's old -b: ".cdf"
    ncgen("-n", "-o", "theirs.cdf", str(cdl))
    assert ncdump("-k", "gen.cdf") == ncdump("-k", "theirs.cdf")


def test_output_url_goes_through_the_location_parser(tmp_path, capsys):
    cdl = tmp_path / "grouped.cdl"
    cdl.write_text(GROUPS_CDL)
    theirs = tmp_path / "theirs.nc"
    ncgen("-k", "nc4", "-o", str(theirs), str(cdl))
    url = f"file://{tmp_path / 'grouped.zarr'}#mode=nczarr,file"
    assert main(["gen", "-k", "nc4", "-o", url, str(cdl)]) == 0
    assert (tmp_path / "grouped.zarr" / ".zgroup").is_file()  # mode nczarr: NCZarr 2.0.0 (Zarr v2)
    capsys.readouterr()
    assert main(["dump", "-n", "theirs", url]) == 0
    assert capsys.readouterr().out == ncdump(theirs)


@pytest.mark.parametrize("language", ["c", "C", "f77", "fortran77", "java", "j"])
def test_source_languages_are_refused_in_one_line(cdl, tmp_path, language, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["gen", f"-l{language}", str(cdl)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "output language" in err and "Traceback" not in err
    assert not list(tmp_path.glob("gen.*z*"))


@pytest.mark.parametrize(
    "flags,message",
    [
        ("-lx", "output language x not implemented"),
        ("-b -lb", "Please specify only one language"),
        ("-Q", "unrecognized arguments: -Q"),
        ("-k", "the following arguments are required: cdl"),
    ],
)
def test_bad_flags_are_refused_clearly(cdl, flags, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["gen", *shlex.split(flags), str(cdl)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_h_is_help_as_in_ncgen(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["gen", "-h"])
    assert exit_.value.code == 0
    assert "-l b|c|f77|java" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "made"),
    [(["-4", "-lb"], "named.nc"), (["-b"], "named.nc"), (["-3"], "named.nc"), (["-n"], "named.cdf"), ([], "named.zarr")],
)
def test_the_default_output_is_where_ncgen_puts_it(tmp_path: Path, flags: list[str], made: str) -> None:
    """ncgen writes ``<cdl name>.nc`` in the current folder when a flag asks for a file; the
    dataset name in the text does not choose it. With no such flag nczarr makes a store."""
    cdl = tmp_path / "named.cdl"
    cdl.write_text("netcdf other { dimensions: x = 2 ; variables: int v(x) ; }\n")
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "nczarr.cli", "gen", *flags, str(cdl)], cwd=work, check=True)
    assert [p.name for p in work.iterdir()] == [made]
    if made.endswith((".nc", ".cdf")) and flags != ["-n"]:
        reference = tmp_path / "reference"
        reference.mkdir()
        subprocess.run(["ncgen", *flags, str(cdl)], cwd=reference, check=True)
        assert [p.name for p in reference.iterdir()] == [made]
