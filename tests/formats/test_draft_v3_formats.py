"""The Zarr v3 draft layout as a netCDF format (``ZARR_V3_DRAFT``): zarr-python 2.18's stores
read as pure Zarr, datasets written in the layout, ``nczarr copy`` to and from it without loss,
the xarray engine and ``nczarr info`` / ``dump`` on it."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

import nczarr
from nczarr.cli import main
from nczarr.formats import detect
from nczarr.store import DirectoryStore

FIXTURES = Path(__file__).parent.parent / "fixtures" / "draft_v3"
ZARR218 = FIXTURES / "zarr218.zr3"


def _dump(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["dump", str(path)]) == 0
    text = capsys.readouterr().out
    return text.split("\n", 1)[1]  # without the first line, which names the dataset


def _write_sample(path: Path) -> None:
    with nczarr.Dataset(str(path), "w", format="ZARR_V3_DRAFT") as ds:
        ds.title = "draft sample"
        ds.createDimension("time", None)
        ds.createDimension("x", 3)
        t = ds.createVariable("t", "f4", ("time", "x"), zlib=True, complevel=2, fill_value=np.float32(-999))
        t.units = "K"
        t[0:2, :] = np.arange(6, dtype="f4").reshape(2, 3)
        n = ds.createVariable("n", "i2", ("x",), fill_value=False)
        n[:] = [1, 2, 3]
        s = ds.createVariable("s", str, ("x",))
        s[:] = np.array(["a", "bc", ""], dtype=object)
        ds.createVariable("scalar", "f8")[...] = 4.5
        g = ds.createGroup("sub")
        g.kind = "child"
        g.createVariable("b", "u1", ("x",))[:] = [7, 8, 9]


def test_zarr218_fixture_opens_as_pure_zarr() -> None:
    store = DirectoryStore(str(ZARR218), read_only=True)
    assert detect(store).name == "ZARR_V3_DRAFT"
    with nczarr.Dataset(str(ZARR218)) as ds:
        assert ds.title == "zarr-python 2.18 draft v3 fixture"
        values = ds["implicit/deeper/values"]
        assert values.dimensions == ("x",) and values.units == "m"
        assert ds["explicit/grid"].dimensions == ("y", "x")
        np.testing.assert_array_equal(ds["explicit/grid"][:], np.arange(12.0).reshape(3, 4))
        assert ds["codecs/blosc"].dimensions[0].startswith("_Anonymous_Dim_")
        np.testing.assert_array_equal(ds["layout/f_order"][:], ds["layout/c_order"][:])
        assert ds["layout/scalar"][...] == 42.5


def test_dataset_writes_the_draft_layout(tmp_path: Path) -> None:
    path = tmp_path / "d.zr3"
    _write_sample(path)
    entry = json.loads((path / "zarr.json").read_text())
    assert entry["zarr_format"] == "https://purl.org/zarr/spec/protocol/core/3.0"
    doc = json.loads((path / "meta/root/t.array.json").read_text())
    assert doc["attributes"]["_ARRAY_DIMENSIONS"] == ["time", "x"] and "_FillValue" not in doc["attributes"]
    assert doc["fill_value"] == -999.0 and doc["compressor"]["codec"].endswith("/gzip/1.0")
    assert json.loads((path / "meta/root/n.array.json").read_text())["fill_value"] is None  # no fill
    assert (path / "data/root/t/c0/0").exists() and (path / "meta/root/sub.group.json").exists()
    with nczarr.Dataset(str(path)) as ds:
        assert ds.data_model == "NETCDF4" and ds.title == "draft sample"
        np.testing.assert_array_equal(ds["t"][:], np.arange(6.0).reshape(2, 3))
        assert list(ds["s"][:]) == ["a", "bc", ""]
        assert ds["sub"].kind == "child" and list(ds["sub/b"][:]) == [7, 8, 9]
        assert ds["n"].chunking() is not None and not hasattr(ds["n"], "_FillValue")
        assert ds["scalar"][...] == 4.5


@pytest.mark.parametrize("middle", ["NCZARR", "ZARR", "NCZARR_V2"])
def test_copy_to_final_formats_and_back_is_lossless(tmp_path: Path, capsys: pytest.CaptureFixture[str], middle: str) -> None:
    draft = tmp_path / "draft.zr3"
    _write_sample(draft)
    there, back = tmp_path / "there.zarr", tmp_path / "back.zr3"
    assert main(["copy", "--format", middle, str(draft), str(there)]) == 0
    assert main(["copy", "--format", "ZARR_V3_DRAFT", str(there), str(back)]) == 0
    capsys.readouterr()
    assert _dump(there, capsys) == _dump(draft, capsys) == _dump(back, capsys)
    for doc in sorted(p.relative_to(draft) for p in draft.rglob("*.json")):
        ours, theirs = json.loads((back / doc).read_text()), json.loads((draft / doc).read_text())
        if middle == "ZARR" and doc.name == "n.array.json":
            # final v3 has no "no fill": pure Zarr v3 keeps the default fill (docs/zarr-v3-draft.md)
            assert (theirs.pop("fill_value"), ours.pop("fill_value")) == (None, -32767)
        assert ours == theirs, doc
    assert {p.relative_to(back) for p in back.rglob("*")} == {p.relative_to(draft) for p in draft.rglob("*")}


def test_zarr218_fixture_copies_to_final_v3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "final.zarr"
    assert main(["copy", "--format", "ZARR", str(ZARR218), str(target)]) == 0
    capsys.readouterr()
    assert _dump(target, capsys) == _dump(ZARR218, capsys)


def test_info_and_xarray_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "d.zr3"
    _write_sample(path)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Zarr v3 draft" in out and "t (time, x)" in out
    import xarray as xr

    ds = xr.open_dataset(path, engine="nczarr")
    assert ds["t"].dims == ("time", "x") and ds["t"].attrs["units"] == "K"
    np.testing.assert_array_equal(ds["t"].values, np.arange(6.0).reshape(2, 3))


def test_zarr218_reads_a_dataset_written_by_nczarr(tmp_path: Path) -> None:
    python = os.environ.get("NCZARR_ZARR218_PYTHON")
    if not python:
        pytest.skip("NCZARR_ZARR218_PYTHON names no zarr-python 2.18 interpreter (the committed fixtures are checked)")
    path = tmp_path / "d.zr3"
    _write_sample(path)
    reader = textwrap.dedent(
        """
        import json, sys, zarr
        from zarr._storage.v3 import DirectoryStoreV3
        g = zarr.open_group(DirectoryStoreV3(sys.argv[1]), mode="r", zarr_version=3)
        print(json.dumps({"title": g.attrs["title"], "t": g["t"][...].tolist(), "fill": float(g["t"].fill_value),
                          "dims": g["t"].attrs["_ARRAY_DIMENSIONS"], "s": g["s"][...].tolist(),
                          "n_fill": g["n"].fill_value, "b": g["sub/b"][...].tolist(), "kind": g["sub"].attrs["kind"],
                          "scalar": float(g["scalar"][...])}))
        """
    )
    result = subprocess.run([python, "-W", "ignore", "-c", reader, str(path)], capture_output=True, text=True,
                            env={**os.environ, "ZARR_V3_EXPERIMENTAL_API": "1"}, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "title": "draft sample", "t": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "fill": -999.0, "dims": ["time", "x"],
        "s": ["a", "bc", ""], "n_fill": None, "b": [7, 8, 9], "kind": "child", "scalar": 4.5,
    }
