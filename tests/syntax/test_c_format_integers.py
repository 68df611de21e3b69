"""A variable's ``C_format`` prints its integers as ncdump's printf does: the conversion reads
the bits its length modifier says from the value as passed (a 32-bit int for types of 32
bits or less), so ``%d`` shows a large uint negative, ``%ld`` a negative int unsigned, and
``%lld`` (which Python's ``%`` refuses) works. Compared with Debian's ncdump, run live."""

from __future__ import annotations

import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from nczarr.cli import main

FORMATS = ("%d", "%i", "%u", "%x", "%o", "%5d", "%hd", "%hhu", "%ld", "%lu", "%lld", "%llx", "%jd")
TYPES = ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8")


@pytest.fixture(scope="module")
def formatted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cformat") / "cformat.nc"
    rng = np.random.default_rng(7)
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 6)
        for t in TYPES:
            info = np.iinfo(t)
            values = rng.integers(info.min, info.max, size=6, endpoint=True, dtype=t)
            values[:2] = (info.min, info.max)
            for k, fmt in enumerate(FORMATS):
                v = ds.createVariable(f"v_{t}_{k}", t, ("x",), fill_value=False)
                v.C_format = fmt
                v[:] = values
    return path


def test_integers_print_as_ncdumps_printf(formatted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = subprocess.run(["ncdump", str(formatted)], capture_output=True, text=True, check=True).stdout
    assert main(["dump", str(formatted)]) == 0
    assert capsys.readouterr().out == expected
