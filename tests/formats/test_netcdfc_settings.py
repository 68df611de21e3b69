"""netcdf-c's settings that change what is written or read, honoured as netcdf-c 4.10.1 (the
netCDF4 wheel) honours them, side by side: ``NCZARR_CONSOLIDATED``, the ``.ncrc`` key
``ZARR.DIMENSION_SEPARATOR`` (and ``NCRCENV_RC`` / ``NCRCENV_HOME`` / ``NCRCENV_IGNORE``, which
say where it is read), ``NCZARRFORMAT``. The mode words are in test_netcdfc_urls.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import netCDF4
import pytest

import nczarr
from nczarr.config import netcdf_c_consolidated, netcdf_c_rc


@pytest.fixture(autouse=True)
def _no_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting of the machine's own (environment, ~/.ncrc) leaks in."""
    for name in ("NCZARR_CONSOLIDATED", "NCZARRFORMAT", "NCRCENV_RC", "NCRCENV_HOME", "NCRCENV_IGNORE"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)


def _write(module: object, url: str) -> None:
    with module.Dataset(url, "w") as dataset:  # type: ignore[attr-defined]
        dataset.createDimension("x", 4)
        dataset.createDimension("y", 4)
        v = dataset.createVariable("v", "i4", ("x", "y"), chunksizes=(2, 2))
        v[:] = 1
        v.note = "fresh"


# -- NCZARR_CONSOLIDATED ----------------------------------------------------------------------
@pytest.mark.parametrize("setting", [None, "TRUE", "true", "yes", "1", "2", "FALSE", "0", "no", "on"])
@pytest.mark.parametrize("words", ["nczarr,file", "zarr,file"])
def test_consolidated_setting_writes_zmetadata_as_netcdf_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, words: str
) -> None:
    if setting is not None:
        monkeypatch.setenv("NCZARR_CONSOLIDATED", setting)
    written = {}
    for module in (netCDF4, nczarr):
        path = tmp_path / f"{module.__name__}.file"
        _write(module, f"{path.as_uri()}#mode={words}")
        written[module.__name__] = (path / ".zmetadata").exists()
    assert written["nczarr"] == written["netCDF4"] == bool(netcdf_c_consolidated())
    assert netcdf_c_consolidated() is (None if setting is None else setting.lower() in ("true", "yes", "1", "2"))


@pytest.mark.parametrize(("setting", "copy"), [(None, True), ("TRUE", True), ("FALSE", False)])
def test_consolidated_setting_decides_for_plain_paths_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, copy: bool
) -> None:
    """Unset, a plain path keeps the conventions' default (consolidated); set, it decides."""
    if setting is not None:
        monkeypatch.setenv("NCZARR_CONSOLIDATED", setting)
    _write(nczarr, str(tmp_path / "p.zarr"))
    assert ("consolidated_metadata" in json.loads((tmp_path / "p.zarr" / "zarr.json").read_text())) is copy
    with nczarr.Dataset(tmp_path / "v2.zarr", "w", format="ZARR_V2") as dataset:
        dataset.createDimension("x", 1)
    assert (tmp_path / "v2.zarr" / ".zmetadata").exists() is copy


@pytest.mark.parametrize("mode", ["zarr", "nczarr"])
@pytest.mark.parametrize("consolidated", ["", ",consolidated"])
@pytest.mark.parametrize("setting", [None, "TRUE", "FALSE"])
def test_reading_uses_zmetadata_when_netcdf_c_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, consolidated: str, setting: str | None
) -> None:
    """A stale copy (an attribute changed in .zmetadata only) shows which one is read:
    the copy with ``consolidated`` or ``NCZARR_CONSOLIDATED=TRUE``, else the nodes."""
    path = tmp_path / "s.file"
    _write(netCDF4, f"{path.as_uri()}#mode={mode},file,consolidated")
    copy = json.loads((path / ".zmetadata").read_text())
    copy["metadata"]["v/.zattrs"]["note"] = "stale"
    (path / ".zmetadata").write_text(json.dumps(copy))
    if setting is not None:
        monkeypatch.setenv("NCZARR_CONSOLIDATED", setting)
    url = f"{path.as_uri()}#mode={mode},file{consolidated}"
    with netCDF4.Dataset(url) as theirs, nczarr.Dataset(url) as ours:
        assert ours["v"].note == theirs["v"].note == ("stale" if consolidated or setting == "TRUE" else "fresh")


def test_an_update_without_consolidated_drops_the_copy(tmp_path: Path) -> None:
    """netcdf-c would leave the copy stale; nczarr removes it rather than keep a wrong one."""
    path = tmp_path / "s.file"
    _write(netCDF4, f"{path.as_uri()}#mode=nczarr,file,consolidated")
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,file", "a") as dataset:
        dataset["v"].note = "changed"
    assert not (path / ".zmetadata").exists()
    with netCDF4.Dataset(f"{path.as_uri()}#mode=nczarr,file") as theirs:
        assert theirs["v"].note == "changed"


# -- ZARR.DIMENSION_SEPARATOR in .ncrc ------------------------------------------------------------
def _netcdf4_writes(url: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    """netcdf-c reads .ncrc once, when the library starts: a process of its own."""
    script = (
        "import netCDF4, sys\n"
        "with netCDF4.Dataset(sys.argv[1], 'w') as d:\n"
        "    d.createDimension('x', 4); d.createDimension('y', 4)\n"
        "    v = d.createVariable('v', 'i4', ('x', 'y'), chunksizes=(2, 2)); v[:] = 1; v.note = 'fresh'\n"
    )
    subprocess.run([sys.executable, "-c", script, url], cwd=cwd, env={**os.environ, **(env or {})}, check=True)


@pytest.mark.parametrize("mode", ["nczarr", "zarr"])
@pytest.mark.parametrize("where", ["cwd", "home", "NCRCENV_HOME", "NCRCENV_RC"])
def test_dimension_separator_from_ncrc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, where: str) -> None:
    work = Path.cwd()
    folder = {"cwd": work, "home": tmp_path / "home", "NCRCENV_HOME": tmp_path / "rc", "NCRCENV_RC": tmp_path / "rc"}[where]
    folder.mkdir(exist_ok=True)
    name = "myrc" if where == "NCRCENV_RC" else ".ncrc"
    (folder / name).write_text("# netcdf-c settings\nZARR.DIMENSION_SEPARATOR=/\n")
    env = {where: str(folder / name) if where == "NCRCENV_RC" else str(folder)} if where.startswith("NCRCENV") else {}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    theirs, ours = tmp_path / "theirs.file", tmp_path / "ours.file"
    _netcdf4_writes(f"{theirs.as_uri()}#mode={mode},file", work, env)
    _write(nczarr, f"{ours.as_uri()}#mode={mode},file")
    for path in (theirs, ours):
        assert sorted(p.name for p in (path / "v").iterdir()) == [".zarray", ".zattrs", "0", "1"]
        assert json.loads((path / "v" / ".zarray").read_text())["dimension_separator"] == "/"
    if mode == "nczarr":  # the same bytes
        assert (ours / "v" / ".zarray").read_bytes() == (theirs / "v" / ".zarray").read_bytes()
    with netCDF4.Dataset(f"{ours.as_uri()}#mode={mode},file") as dataset:
        assert dataset["v"][:].tolist() == [[1] * 4] * 4


@pytest.mark.parametrize(
    "text",
    [
        "ZARR.DIMENSION_SEPARATOR = /\n",  # blanks around '=': not the key
        "  ZARR.DIMENSION_SEPARATOR=/\n",
        "ZARR.DIMENSION_SEPARATOR=/  \n",  # a value of three characters
        "zarr.dimension_separator=/\n",  # keys are case-sensitive
        "[file://**]ZARR.DIMENSION_SEPARATOR=/\n",  # limited to some URLs: not read
        "ZARR.DIMENSION_SEPARATOR=x\n",  # no separator
    ],
)
def test_ncrc_lines_netcdf_c_does_not_take(tmp_path: Path, text: str) -> None:
    (Path.cwd() / ".ncrc").write_text(text)
    theirs, ours = tmp_path / "theirs.file", tmp_path / "ours.file"
    _netcdf4_writes(f"{theirs.as_uri()}#mode=zarr,file", Path.cwd())
    _write(nczarr, f"{ours.as_uri()}#mode=zarr,file")
    for path in (theirs, ours):
        assert sorted(p.name for p in (path / "v").iterdir()) == [".zarray", ".zattrs", "0.0", "0.1", "1.0", "1.1"]


def test_where_ncrc_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Home then current folder, .ncrc/.daprc/.dodsrc, the later winning; NCRCENV_RC alone;
    none with NCRCENV_IGNORE (each checked against the wheel by hand, and above)."""
    (tmp_path / "home" / ".ncrc").write_text("K=home\n")
    assert netcdf_c_rc("K") == "home"
    (Path.cwd() / ".dodsrc").write_text("K=cwd\n")
    assert netcdf_c_rc("K") == "cwd"
    (tmp_path / "only").write_text("K=only\n")
    monkeypatch.setenv("NCRCENV_RC", str(tmp_path / "only"))
    assert netcdf_c_rc("K") == "only"
    monkeypatch.setenv("NCRCENV_IGNORE", "1")
    assert netcdf_c_rc("K") is None


def test_an_updated_array_keeps_its_separator(tmp_path: Path) -> None:
    """An array netcdf-c wrote with '/' keys, rewritten by nczarr without the setting."""
    path = tmp_path / "s.file"
    (Path.cwd() / ".ncrc").write_text("ZARR.DIMENSION_SEPARATOR=/\n")
    _netcdf4_writes(f"{path.as_uri()}#mode=nczarr,file", Path.cwd())
    (Path.cwd() / ".ncrc").unlink()
    with nczarr.Dataset(f"{path.as_uri()}#mode=nczarr,file", "a") as dataset:
        dataset.createDimension("t", None)
        dataset["v"][0, 0] = 5
    assert json.loads((path / "v" / ".zarray").read_text())["dimension_separator"] == "/"
    with netCDF4.Dataset(f"{path.as_uri()}#mode=nczarr,file") as theirs:
        assert theirs["v"][0, :2].tolist() == [5, 1]


# -- NCZARRFORMAT ---------------------------------------------------------------------------------
def test_nczarrformat_3_asks_for_zarr_v3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """netcdf-c with Zarr v3 writes v3; the netCDF4 wheel's 4.10.1 is built without it and
    writes v2 (as for the mode word v3); a URL naming v2 stays v2."""
    monkeypatch.setenv("NCZARRFORMAT", "3")
    _write(nczarr, f"{(tmp_path / 'ours.file').as_uri()}#mode=nczarr,file")
    assert (tmp_path / "ours.file" / "zarr.json").exists()
    _write(nczarr, f"{(tmp_path / 'v2.file').as_uri()}#mode=nczarr,file,v2")
    assert (tmp_path / "v2.file" / ".zgroup").exists()
    _write(netCDF4, f"{(tmp_path / 'theirs.file').as_uri()}#mode=nczarr,file")
    assert (tmp_path / "theirs.file" / ".zgroup").exists()
