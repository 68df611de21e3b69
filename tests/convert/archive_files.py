"""Small archives made with ncgen for the combine and archive tests: monthly files of
different lengths, differing time units, packed and filled variables, groups."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
