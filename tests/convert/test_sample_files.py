"""The real-file corpus (``tests/samplefiles.py``: the netCDF-3, netCDF-4 and HDF5 files that
installed packages ship) printed as Debian's ncdump prints it.

For every sample file, ``nczarr dump`` must print byte for byte what ``ncdump`` prints,
with and without ``-h``, wherever ncdump reads the file; where ncdump fails (a crash, an HDF5
error, a filter it has no plugin for), nczarr must either read the file or fail with a clear
error, never a traceback. ncdump runs here, on the files in place: nothing is stored.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from samplefiles import sample_files

from nczarr.cli import main

FILES = sample_files()


def ncdump(path: Path, *flags: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["ncdump", *flags, str(path)], capture_output=True, timeout=120)


def ours(path: Path, flags: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[int, bytes, bytes]:
    capsysbinary.readouterr()
    code = main(["dump", *flags, str(path)])
    out, err = capsysbinary.readouterr()
    return code, out, err


@pytest.mark.parametrize("flags", [["-h"], []], ids=["header", "full"])
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_dump_as_ncdump(path: Path, flags: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    expected = ncdump(path, *flags)
    code, out, err = ours(path, flags, capsysbinary)
    if expected.returncode == 0:
        assert code == 0, err.decode(errors="replace")
        assert out == expected.stdout
    else:  # ncdump cannot: nczarr reads it or says clearly why not
        assert code == 0 or (b"error: " in err and b"Traceback" not in err), err.decode(errors="replace")


def test_corpus_is_the_packages_files() -> None:
    """The corpus holds every package's sample files (a package that moved its folder would
    silently shrink it)."""
    names = {p.name for p in FILES}
    assert len(FILES) >= 56
    assert {"attr-u16.h5", "compound-dtype-complex.h5", "vlen_string_s390x.h5", "example_1.nc"} <= names
