"""The real peers side by side with nczarr in tests: ncgen and ncdump (Debian's netcdf-bin)
and ``nczarr dump``, with the text they print."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nczarr.cli import main


def ncdump(path: Path | str, *flags: str) -> str:
    return subprocess.run(["ncdump", *flags, str(path)], capture_output=True, check=True, text=True).stdout


def ncgen(cdl: Path, nc: Path) -> Path:
    """A netCDF-4 file made by ncgen from a CDL file."""
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(nc), str(cdl)], check=True, capture_output=True)
    return nc


def ours(path: Path | str, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    """What ``nczarr dump`` prints."""
    capsys.readouterr()
    assert main(["dump", *flags, str(path)]) == 0
    return capsys.readouterr().out


def body(text: str) -> str:
    """A dump without its first line (the dataset's name is the file's)."""
    return text.split("\n", 1)[1]


def cdl_and_file(folder: Path, name: str, text: str) -> tuple[Path, Path]:
    """``name``.cdl holding ``text`` in ``folder``, and the netCDF-4 file ncgen makes of it."""
    cdl = folder / f"{name}.cdl"
    cdl.write_text(text)
    return cdl, ncgen(cdl, folder / f"{name}.nc")
