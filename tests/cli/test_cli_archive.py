"""``nczarr copy SRC... DST``: sources as paths, globs and lists; errors without a traceback;
the single-file copy unchanged."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from archive_files import month_cdl, monthly_archive, ncgen

from nczarr.cli import main


def ncrcat_dump(files: list[Path], out: Path) -> str:
    subprocess.run(["ncrcat", "-O", "-h", "--no_cll_mth", *map(str, files), str(out)], check=True)
    return subprocess.run(["ncdump", str(out)], capture_output=True, text=True, check=True).stdout.split("\n", 1)[1]


def dump(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    capsys.readouterr()
    assert main(["dump", str(path)]) == 0
    return capsys.readouterr().out.split("\n", 1)[1]


@pytest.mark.parametrize("form", ["paths", "glob", "list"])
def test_sources_as_paths_globs_and_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str) -> None:
    files = monthly_archive(tmp_path)
    expected = ncrcat_dump(files, tmp_path / "ncrcat.nc")
    listing = tmp_path / "files.txt"
    listing.write_text("\n".join(map(str, files)))
    given = {"paths": list(map(str, files)), "glob": [str(tmp_path / "m*.nc")], "list": [f"@{listing}"]}[form]
    assert main(["-q", "copy", *given, str(tmp_path / "out.zarr"), "--verify", "--workers", "2"]) == 0
    assert dump(capsys, tmp_path / "out.zarr") == expected


def test_mismatch_is_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = ncgen(tmp_path, "m01.nc", month_cdl(1, 2))
    b = ncgen(tmp_path, "m02.nc", month_cdl(2, 1).replace("float x(x) ;", "").replace("x = 1, 2, 3 ;", ""))
    assert main(["copy", str(a), str(b), str(tmp_path / "out.zarr")]) != 0
    err = capsys.readouterr().err
    assert "m02.nc: variable /x: missing (it is in" in err and "Traceback" not in err
    assert not (tmp_path / "out.zarr").exists()


def test_single_file_copy_is_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (one,) = monthly_archive(tmp_path, (2,))
    assert main(["copy", str(one), str(tmp_path / "one.zarr")]) == 0
    assert not (tmp_path / "one.zarr" / ".nczarr_archive").exists()
    expected = subprocess.run(["ncdump", str(one)], capture_output=True, text=True, check=True).stdout.split("\n", 1)[1]
    assert dump(capsys, tmp_path / "one.zarr") == expected
