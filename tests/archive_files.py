"""Small archives made with ncgen for the combine and archive tests: monthly files of
different lengths, differing time units, packed and filled variables, groups."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from peers import body

#: the checkout, first on the path of the nczarr commands the tests run
ROOT = Path(__file__).resolve().parents[1]

MONTH = """netcdf m{month} {{
dimensions: time = UNLIMITED ; x = 3 ;
variables:
  double time(time) ; time:units = "days since 2000-{month:02d}-01" ; time:calendar = "standard" ;
  float x(x) ;
  float t(time, x) ; t:units = "K" ; t:comment = "month {month}" ; t:_FillValue = {fill}f ;
  short p(time, x) ; p:scale_factor = {scale} ; p:add_offset = 10. ;
  :title = "month {month}" ;
data:
  time = {time} ; x = 1, 2, 3 ; t = {t} ; p = {p} ;
group: g {{
  variables: int n(time) ;
  data: n = {n} ;
}}
}}
"""


def month_cdl(month: int, length: int, *, fill: float = -999.0, scale: float = 0.5) -> str:
    """A month of ``length`` records (days 0, 1, ... of that month); its last value of t is fill."""
    values = [str(month * 100 + i) for i in range(length * 3)]
    values[-1] = "_"
    return MONTH.format(
        month=month,
        fill=fill,
        scale=scale,
        n=", ".join(str(month * 10 + i) for i in range(length)),
        time=", ".join(str(i) for i in range(length)),
        t=", ".join(values),
        p=", ".join(str(month + i) for i in range(length * 3)),
    )


def ncgen(folder: Path, name: str, cdl: str, kind: str = "nc4") -> Path:
    """``cdl`` written by ncgen as ``folder/name``."""
    text = folder / (name + ".cdl")
    text.write_text(cdl)
    path = folder / name
    subprocess.run(["ncgen", "-k", kind, "-o", str(path), str(text)], check=True)
    return path


def monthly_archive(folder: Path, lengths: tuple[int, ...] = (3, 1, 4), **options: float) -> list[Path]:
    """One file per month, of these lengths, each in its own time units."""
    return [ncgen(folder, f"m{i + 1:02d}.nc", month_cdl(i + 1, n, **options)) for i, n in enumerate(lengths)]


def dump(path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "nczarr.cli", "dump", str(path)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    return body(run.stdout)


def ncrcat(files: Sequence[Path], out: Path) -> str:
    subprocess.run(["ncrcat", "-O", "-h", "--no_cll_mth", *map(str, files), str(out)], check=True)
    return body(subprocess.run(["ncdump", str(out)], capture_output=True, text=True, check=True).stdout)


def killable_job(folder: Path, chunking: str) -> tuple[Path, str, list[str]]:
    """An archive of 119 records, ncrcat's dump of it, and the command that copies it into
    ``out.zarr`` in many small tasks on 2 local workers."""
    files = monthly_archive(folder, (30, 28, 31, 30))
    expected = ncrcat(files, folder / "ncrcat.nc")
    out = folder / "out.zarr"
    command = [sys.executable, "-m", "nczarr.cli", "-q", "copy", *map(str, files), str(out),
               "-c", chunking, "-m", "1", "--workers", "2"]
    return out, expected, command
