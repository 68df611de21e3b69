"""``nczarr gen`` against ``ncgen``: for every CDL sample, ncdump of what ncgen makes and
``nczarr dump`` of what ``nczarr gen`` makes are the same text; a dump generates the same
dataset again; bad CDL leaves nothing behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import nczarr
from nczarr.cli import main
from nczarr.convert.sources import open_source
from nczarr.syntax.cdldump import dump

SAMPLES = sorted((Path(__file__).parents[2] / "samples" / "cdl").glob("*.cdl"))


def ncgen_flags(sample: Path) -> list[str]:
    first = sample.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("// ncgen:"), f"{sample.name} must say how ncgen makes it"
    return first.removeprefix("// ncgen:").split()


def without_properties(text: str) -> list[str]:
    return [line for line in text.splitlines() if "_NCProperties" not in line]


def nczarr_dump(store: Path, name: str) -> str:
    source = open_source(store)
    try:
        return "".join(dump(source, name=name))
    finally:
        source.close()


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.stem for s in SAMPLES])
def test_nczarr_gen_then_dump_equals_ncgen_then_ncdump(sample: Path, tmp_path: Path) -> None:
    nc = tmp_path / f"{sample.stem}.nc"
    subprocess.run(["ncgen", *ncgen_flags(sample), "-o", str(nc), str(sample)], check=True)
    theirs = subprocess.run(["ncdump", str(nc)], capture_output=True, text=True, check=True).stdout
    store = tmp_path / f"{sample.stem}.zarr"
    assert main(["gen", str(sample), "-o", str(store), *ncgen_flags(sample)]) == 0
    ours = nczarr_dump(store, sample.stem)
    assert without_properties(ours) == without_properties(theirs)
    # round trip: our dump generates the same dataset again, as ncgen makes it of that text
    # (CDL cannot say everything: ncgen reads a float "-0" as 0, say)
    again_cdl = tmp_path / "again.cdl"
    again_cdl.write_text(ours, encoding="utf-8")
    again_nc = tmp_path / "again.nc"
    subprocess.run(["ncgen", *ncgen_flags(sample), "-o", str(again_nc), str(again_cdl)], check=True)
    theirs_again = subprocess.run(["ncdump", str(again_nc)], capture_output=True, text=True, check=True).stdout
    again = tmp_path / "again.zarr"
    assert main(["gen", str(again_cdl), "-o", str(again), *ncgen_flags(sample)]) == 0
    assert without_properties(nczarr_dump(again, "again")) == without_properties(theirs_again)


def test_bad_cdl_is_one_clear_error_and_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.cdl"
    bad.write_text('netcdf bad {\ndimensions:\n  x = 2 ;\nvariables:\n  int v(y) ;\n}\n')
    assert main(["gen", str(bad), "-o", str(tmp_path / "out.zarr")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.cdl" in err and ":5:" in err and "y" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.zarr").exists()


def test_gen_writes_netcdf_files_and_fromcdl_opens_the_result(tmp_path: Path) -> None:
    cdl = tmp_path / "small.cdl"
    cdl.write_text(
        'netcdf small {\ndimensions:\n  x = 3 ;\nvariables:\n  short v(x) ;\n    v:units = "m" ;\ndata:\n v = 1, 2, 3 ;\n}\n'
    )
    assert main(["gen", str(cdl), "-o", str(tmp_path / "small.nc"), "-k", "classic"]) == 0
    import netCDF4

    with netCDF4.Dataset(tmp_path / "small.nc") as ds:
        assert ds.data_model == "NETCDF3_CLASSIC" and ds["v"][:].tolist() == [1, 2, 3]
    with nczarr.Dataset.fromcdl(cdl, tmp_path / "from.zarr", format="NCZARR") as ds:
        assert ds["v"].units == "m" and ds["v"][:].tolist() == [1, 2, 3]
