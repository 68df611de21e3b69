"""The Zarr v3 draft layout as a new user meets it: stores replaced in place, copied to a
netCDF-4 file and back, as zarr-python 2.18 writes object arrays; and, where
NCZARR_ZARR218_PYTHON names a zarr-python 2.18 interpreter, stores of shapes the committed
fixtures lack (implicit groups several levels deep, empty and 0-d arrays, unicode
attributes) written by it and read by us, and the other way round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import netCDF4
import numpy as np
import pytest
from zarr218 import zarr218_python

import nczarr
from nczarr.store import DirectoryStore
from nczarr.zarr import Array, open_group

FIXTURES = Path(__file__).parent.parent / "fixtures" / "draft_v3"


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own (a crash of HDF5 fails the test, not the run; and
    no filter plugin is loaded before it needs one: netCDF4, imported here, points HDF5 at its
    own plugins through the environment)."""
    env = {key: value for key, value in os.environ.items() if key != "HDF5_PLUGIN_PATH"}
    return subprocess.run(
        [sys.executable, "-m", "nczarr.cli", "-q", *map(str, args)], capture_output=True, text=True, check=False, env=env
    )


def _write_draft(path: Path, fill: float) -> None:
    with nczarr.Dataset(path, "w", format="ZARR_V3_DRAFT") as ds:
        ds.createDimension("x", 3)
        ds.createVariable("v", "f8", ("x",), fill_value=fill)[:] = [1.0, 2.0, 3.0]


def test_mode_w_replaces_a_draft_store(tmp_path: Path) -> None:
    """Its ``meta/`` and ``data/`` keys were taken for foreign files: 'refusing to replace'."""
    target = tmp_path / "d.zr3"
    _write_draft(target, -1.0)
    _write_draft(target, -2.0)
    with nczarr.Dataset(target) as ds:
        assert ds["v"]._FillValue == -2.0
    text_form = tmp_path / "text.zr3"  # the draft text's own chunk keys (``0.0``)
    _cli("copy", "--format", "ZARR_V3_DRAFT", FIXTURES / "draft_text.zr3", text_form)
    (text_form / "data" / "root" / "extra").mkdir()
    (text_form / "data" / "root" / "extra" / "0.0").write_bytes(b"")
    _write_draft(text_form, -3.0)
    assert not (text_form / "data" / "root" / "foo").exists()


def test_mode_w_still_refuses_foreign_files_beside_a_draft_store(tmp_path: Path) -> None:
    target = tmp_path / "d.zr3"
    _write_draft(target, -1.0)
    (target / "notes.txt").write_text("mine")
    (target / "meta" / "notes.json").write_text("{}")
    with pytest.raises(nczarr.NCZarrError, match="notes"):
        _write_draft(target, -2.0)
    assert (target / "notes.txt").read_text() == "mine"


def test_nofill_file_with_fill_value_copies_to_draft_with_it(tmp_path: Path) -> None:
    """nccopy's output (``_NoFill`` with a ``_FillValue``) lost its ``_FillValue`` in the draft,
    whose ``fill_value`` is the only place for it."""
    source = tmp_path / "nofill.nc"
    with netCDF4.Dataset(source, "w") as ds:
        ds.createDimension("x", 4)
        v = ds.createVariable("v", "f4", ("x",), fill_value=np.float32(-5.0))
        v.set_auto_mask(False)
        ds.set_fill_off()
        v[:2] = [1.0, 2.0]
        ds.createVariable("t", "i8", ("x",), fill_value=np.int64(-(2**63)))[:] = [1, 2, 3, 4]
    result = _cli("copy", "--format", "ZARR_V3_DRAFT", source, tmp_path / "d.zr3")
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "d.zr3" / "meta" / "root" / "v.array.json").read_text())
    assert doc["fill_value"] == -5.0
    with nczarr.Dataset(tmp_path / "d.zr3") as ds:
        assert ds["v"]._FillValue == -5.0
        assert ds["t"]._FillValue == -(2**63)


def test_zarr218_fixture_to_netcdf4_and_back(tmp_path: Path) -> None:
    """zarr-python's Blosc on string arrays crashed HDF5 (SIGFPE) writing the .nc; reading
    the .nc's Blosc chunks back failed until hdf5plugin was loaded by hand."""
    netcdf = tmp_path / "zarr218.nc"
    result = _cli("copy", FIXTURES / "zarr218.zr3", netcdf)
    assert result.returncode == 0, result.stderr
    with netCDF4.Dataset(netcdf) as ds:
        assert ds["types/S4"][:].size == 5
        assert ds["codecs/blosc"].filters()["blosc"]  # fixed-size data keeps Blosc
    back = tmp_path / "back.zr3"
    result = _cli("copy", "--format", "ZARR_V3_DRAFT", netcdf, back)
    assert result.returncode == 0, result.stderr
    original, copied = _open(FIXTURES / "zarr218.zr3"), _open(back)
    for path in ("codecs/blosc", "types/S4", "types/le_U3", "fills/nan", "layout/f_order"):
        want, got = original[path], copied[path]
        assert isinstance(want, Array) and isinstance(got, Array)
        values = want[...]
        if values.dtype.kind in "SU":  # fixed-size strings are netCDF strings, as netcdf-c reads them
            values = np.array([v.decode() if isinstance(v, bytes) else str(v) for v in values], object)
        np.testing.assert_array_equal(got[...], values)
        if values.dtype.kind not in "OSU":
            assert np.array_equal(got.fill_value, want.fill_value, equal_nan=True), path


def _open(root: Path) -> object:
    return open_group(DirectoryStore(str(root), read_only=True))


def test_object_array_fill_zero_as_zarr218_writes_it(tmp_path: Path) -> None:
    """zarr-python 2.18 writes ``"fill_value": 0`` for its vlen-utf8 object arrays: it read as
    'fill value 0 does not fit data type string'."""
    target = tmp_path / "s.zr3"
    with nczarr.Dataset(target, "w", format="ZARR_V3_DRAFT") as ds:
        ds.createDimension("x", 3)
        ds.createVariable("s", str, ("x",))[:] = np.array(["a", "bé", ""], object)
    key = target / "meta" / "root" / "s.array.json"
    doc = json.loads(key.read_text())
    doc["fill_value"] = 0
    key.write_text(json.dumps(doc))
    with nczarr.Dataset(target) as ds:
        assert list(ds["s"][:]) == ["a", "bé", ""]
    doc["fill_value"] = [1, 2]
    key.write_text(json.dumps(doc))
    assert "fill value" in _cli("info", target).stderr


_MAKE = textwrap.dedent(
    """
    import sys
    import numcodecs, numpy as np, zarr
    from zarr._storage.v3 import DirectoryStoreV3
    root = zarr.group(store=DirectoryStoreV3(sys.argv[1]), zarr_version=3, path="/")
    root.attrs.update({"title": "ünïcödé ☃", "emoji": "🌍"})
    x = root.create_dataset("deep/er/est/x", shape=(7, 5), chunks=(3, 2), dtype="f4", fill_value=np.nan)
    x[:] = np.arange(35, dtype="f4").reshape(7, 5)
    x.attrs.update({"_ARRAY_DIMENSIONS": ["y", "x"], "units": "°C"})
    root.create_dataset("empty", shape=(0,), chunks=(4,), dtype="i4")
    root.create_dataset("scalar", shape=(), dtype="i8", fill_value=-1)[...] = 42
    root.create_dataset("partial", shape=(10,), chunks=(3,), dtype="i2", fill_value=-7)[4:6] = [1, 2]
    root.create_dataset("nested/sep", shape=(4, 4), chunks=(2, 2), dtype="i4", dimension_separator=".")[:] = (
        np.arange(16).reshape(4, 4))
    s = root.create_dataset("strs", shape=(3,), dtype=object, object_codec=numcodecs.VLenUTF8())
    s[:] = np.array(["a", "bé", ""], dtype=object)
    """
)

_READ = textwrap.dedent(
    """
    import json, sys
    import zarr
    from zarr._storage.v3 import DirectoryStoreV3
    g = zarr.open_group(DirectoryStoreV3(sys.argv[1]), zarr_version=3, mode="r", path="/")
    out = {"/": dict(g.attrs)}
    for path in ("a/b/v", "e", "s", "st"):
        a = g[path]
        fill = a.fill_value.item() if hasattr(a.fill_value, "item") else a.fill_value
        out[path] = {"shape": list(a.shape), "values": a[...].tolist(), "fill": fill,
                     "attrs": {k: v for k, v in a.attrs.items() if k != "filters"}}
    out["a/b"] = dict(g["a/b"].attrs)
    print(json.dumps(out))
    """
)


def _run(python: str, script: str, path: Path) -> str:
    result = subprocess.run(
        [python, "-W", "ignore", "-c", script, str(path)],
        capture_output=True, text=True, env={**os.environ, "ZARR_V3_EXPERIMENTAL_API": "1"}, check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_zarr218_stores_of_other_shapes_read(tmp_path: Path) -> None:
    python = zarr218_python()
    store = tmp_path / "a.zr3"
    _run(python, _MAKE, store)
    with nczarr.Dataset(store) as ds:
        assert ds.title == "ünïcödé ☃" and ds.emoji == "🌍"
        x = ds["deep/er/est/x"]
        assert x.dimensions == ("y", "x") and x.units == "°C"
        np.testing.assert_array_equal(x[:], np.arange(35, dtype="f4").reshape(7, 5))
        assert ds["empty"].shape == (0,)
        assert ds["scalar"][...] == 42
        partial = ds["partial"][:]
        assert list(partial.filled(-7)) == [-7, -7, -7, -7, 1, 2, -7, -7, -7, -7]
        np.testing.assert_array_equal(ds["nested/sep"][:], np.arange(16).reshape(4, 4))
        assert list(ds["strs"][:]) == ["a", "bé", ""]


def test_zarr218_reads_what_we_write_of_other_shapes(tmp_path: Path) -> None:
    python = zarr218_python()
    store = tmp_path / "w.zr3"
    with nczarr.Dataset(store, "w", format="ZARR_V3_DRAFT") as ds:
        ds.title = "ünïcödé ☃"
        ds.createDimension("x", 4)
        ds.createDimension("t", 0)
        group = ds.createGroup("a").createGroup("b")
        group.emoji = "🌍"
        v = group.createVariable("v", "f4", ("x",), fill_value=-9.5, chunksizes=(3,))
        v[1:3] = [1.0, 2.0]
        ds.createVariable("e", "f8", ("t",))
        ds.createVariable("s", "i8", (), fill_value=7).assignValue(5)
        ds.createVariable("st", str, ("x",))[:] = np.array(["a", "bé", "", "z"], object)
    read = json.loads(_run(python, _READ, store))
    assert read["/"]["title"] == "ünïcödé ☃" and read["a/b"]["emoji"] == "🌍"
    assert read["a/b/v"] == {"shape": [4], "values": [-9.5, 1.0, 2.0, -9.5], "fill": -9.5, "attrs": {"_ARRAY_DIMENSIONS": ["x"]}}
    assert read["e"]["shape"] == [0] and read["e"]["values"] == []
    assert read["s"]["values"] == 5 and read["s"]["fill"] == 7
    assert read["st"]["values"] == ["a", "bé", "", "z"]


def test_every_command_on_the_fixtures_gives_one_line_or_output(tmp_path: Path) -> None:
    """info, dump, zom export read both fixtures; validate (model-text files only) says what
    checks a store instead of 'not a regular file' and a second summary line."""
    for fixture in ("zarr218.zr3", "draft_text.zr3"):
        store = FIXTURES / fixture
        for command in (("info",), ("dump", "-h"), ("zom", "export")):
            result = _cli(*command, store)
            assert result.returncode == 0 and result.stdout, (command, result.stderr)
        result = _cli("validate", store)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.count("\n") == 1 and "zom check" in result.stderr
