"""The same netCDF4-API scripts through the real netCDF4 (HDF5 files) and through nczarr.

Every script of ``differential.py`` runs with netCDF4 on a ``.nc`` file, then with nczarr on a
``.zarr`` store (default disk format, and NCZARR_V2 where the script only uses what NCZarr 2.0.0
holds); the two observation lists (values, masks, dtypes, attributes, shapes, reprs, exception
classes, warnings) must be equal.

``NCZARR_DIFF_NETCDF4_ONLY=1`` runs each script twice through netCDF4 instead, which checks the
scripts themselves (they run and observe deterministic things) while nczarr is unfinished.
"""

from __future__ import annotations

import difflib
import os
import pprint
import traceback
from pathlib import Path
from typing import Any

import netCDF4
import pytest
from differential import SCRIPTS, Recorder, Script, builtin_class

NETCDF4_ONLY = os.environ.get("NCZARR_DIFF_NETCDF4_ONLY", "") not in ("", "0")

_expected: dict[str, list[tuple[str, Any]]] = {}


def observe(module: Any, script: Script, path: Path, disk_format: str) -> list[tuple[str, Any]]:
    """The observations of one run; an unexpected exception ends the list as an observation."""
    rec = Recorder(format=disk_format)
    try:
        script.run(module, path, rec)
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        raised = f"{builtin_class(exc)}: {type(exc).__name__} at {where}: {exc}"
        rec.observations.append(("script raised", raised))
    return rec.observations


def expected(script: Script, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Any]]:
    """netCDF4's observations for ``script`` (one run per session)."""
    if script.name not in _expected:
        path = tmp_path_factory.mktemp(script.name) / "x.nc"
        _expected[script.name] = observe(netCDF4, script, path, "NETCDF4")
    return _expected[script.name]


def assert_same(got: list[tuple[str, Any]], want: list[tuple[str, Any]], who: str) -> None:
    """Fail with the first differing observation and a diff of the two lists."""
    if got == want:
        return
    first = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    where = want[first][0] if first < len(want) else got[first][0]
    diff = difflib.unified_diff(
        pprint.pformat(want, width=110).splitlines(),
        pprint.pformat(got, width=110).splitlines(),
        "netCDF4",
        who,
        lineterm="",
    )
    pytest.fail(f"first difference at observation {first} ({where!r}):\n" + "\n".join(diff), pytrace=False)


CASES = [
    pytest.param(script, disk_format, id=f"{script.name}-{disk_format}")
    for script in SCRIPTS
    for disk_format in script.formats
]


@pytest.mark.parametrize(("script", "disk_format"), CASES)
def test_same_observations(
    script: Script, disk_format: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    want = expected(script, tmp_path_factory)
    assert want, "the script observed nothing"
    assert want[-1][0] != "script raised", f"the script fails with netCDF4: {want[-1][1]}"
    if NETCDF4_ONLY:
        assert_same(observe(netCDF4, script, tmp_path / "x.nc", "NETCDF4"), want, "netCDF4 again")
        return
    import nczarr

    # nczarr's default disk format is NCZARR: netCDF4's own format name selects it
    fmt = "NETCDF4" if disk_format == "NCZARR" else disk_format
    assert_same(observe(nczarr, script, tmp_path / "x.zarr", fmt), want, f"nczarr {disk_format}")


def test_script_names_are_unique() -> None:
    names = [script.name for script in SCRIPTS]
    assert len(names) == len(set(names))
