"""The nczarr command as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import nczarr
from nczarr.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    # The console script is installed beside the interpreter running the tests.
    command = Path(sys.executable).parent / "nczarr"
    assert command.exists(), f"the nczarr command is not installed at {command}"
    return subprocess.run([str(command), *args], capture_output=True, text=True, timeout=120)


def test_version_from_the_installed_command():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"nczarr {nczarr.__version__}"


@pytest.mark.parametrize("asked", [None, "3"])
def test_the_command_runs_openblas_on_one_thread_unless_asked(asked: str | None, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """No command does linear algebra: numpy's OpenBLAS, started on one thread, does not
    spend a core spinning at every start; a setting of the user's is kept."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os, sys\nfrom nczarr.cli import command\nsys.argv = ['nczarr', '--version']\n"
                     "try:\n    command()\nexcept SystemExit:\n    pass\n"
                     "print(os.environ['OPENBLAS_NUM_THREADS'])\n")
    if asked is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", asked)
    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split()[-1] == (asked or "1")


def test_info_shows_the_sample_tree():
    result = run("info", str(SAMPLES / "ocean.zarr"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("ocean.zarr (Zarr v3)")
    assert "  analysis/" in lines
    assert any(
        line.startswith("  sst (time, lat, lon): 4x72x144 float32, chunks 1x72x144, codecs bytes, gzip")
        for line in lines
    )


def test_info_on_a_missing_store_is_a_clear_error(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nothing")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: nczarr" in capsys.readouterr().out


def test_the_grammars_ship_with_the_package():
    assert nczarr.grammar_path("model.lark").read_text(encoding="utf-8").strip()
    with pytest.raises(FileNotFoundError, match="grammar 'nope.lark' is not installed"):
        nczarr.grammar_path("nope.lark")


def test_validate_reports_a_valid_sample():
    result = run("validate", str(SAMPLES / "full.nczm"))
    assert (result.returncode, result.stdout) == (0, f"{SAMPLES / 'full.nczm'}: valid\n")


def test_dump_prints_what_ncdump_prints(tmp_path, capsysbinary):
    import subprocess

    import netCDF4

    path = tmp_path / "d.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f4", ("x",))
        v.units = "m"
        v[:] = [1.5, 2.5, 3.5]
        ds.title = "dumped"
    for options in ([], ["-h"], ["-s", "-h"], ["-k"], ["-v", "v"]):
        assert main(["dump", *options, str(path)]) == 0
        ours = capsysbinary.readouterr().out.decode()
        theirs = subprocess.run(["ncdump", *options, str(path)], capture_output=True, text=True, check=True).stdout
        strip = [line for line in theirs.splitlines() if "_NCProperties" not in line]
        assert [line for line in ours.splitlines() if "_NCProperties" not in line] == strip, options
    with nczarr.Dataset(path) as ds:
        assert ds.tocdl().startswith("netcdf d {") and "v:units" in ds.tocdl()
        assert "data:" in ds.tocdl(data=True)


def test_info_describes_netcdf_files(tmp_path, capsys):
    import netCDF4

    path = tmp_path / "f.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 2)
        ds.createVariable("v", "f4", ("t", "x"))[0] = [1, 2]
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{path} (NETCDF3_CLASSIC, NETCDF3)", "  t = UNLIMITED (1)", "  x = 2", "  v (t, x): float32"]
