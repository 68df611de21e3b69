"""Hostile names for dimensions, variables, groups and attributes, on every convention: each
is refused up front with an error that names it (the class netCDF4 raises, and an
``NCZarrError``), or it round-trips; either way the store reopens with everything else intact.

A variable, group or dimension name becomes a store key (or the key of a coordinate
variable): names of metadata documents (``zarr.json`` in any case, ``.zarray``...), names with
a backslash and names longer than a file name (255 bytes) are refused on every convention,
though netCDF4 accepts some of them in an HDF5 file.
"""

from __future__ import annotations

import unicodedata
import warnings
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest

from nczarr.api import Dataset
from nczarr.errors import NCZarrError

CONVENTIONS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]

REFUSED = [
    ".", "..", "", ".hidden", "a\x00b", "a\x01", "\x7f", "a\n", " a", "a ", "-a", "~", "\ud800",
    # metadata documents of the conventions, in any case (some file systems fold case)
    "zarr.json", "ZARR.JSON", "Zarr.Json", ".zarray", ".zattrs", ".zgroup", ".zmetadata", ".nczarr",
    ".nczgroup", ".nczarray",
    # not a store key on every store and file system
    "a\\b", "\\", "x" * 256, "é" * 128,
]
ACCEPTED = [
    # next to chunk keys: groups hold no chunks, and an array's chunks sit below its own key
    "c", "c0", "0", "0.0", "0.0.0", "1.2",
    "zarr", "zarr.jsonx", "nczarr.json", "a.zarray", "attributes", "a..b", "a.",
    "x" * 255, "é" * 127, "日本語", "a b", "a:b", "_", "_nczarr", "_NCZARR_ARRAY", "_ARRAY_DIMENSIONS",
    "NUL", "con", "a\u200bb", "a\x85b",
    "e\u0301",  # NFD: kept as NFC 'é', as netcdf-c keeps names
]


def _outcome(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call()
        except Exception as exc:
            return exc


def _nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def _assert_refused_clearly(name: str, outcome: Any, netcdf4_class: type[Exception] | None = None) -> None:
    assert isinstance(outcome, NCZarrError), f"{name!r} was not refused: {outcome!r}"
    assert isinstance(outcome, RuntimeError), f"{name!r}: netCDF4 raises RuntimeError, nczarr {outcome!r}"
    if netcdf4_class is not None and netcdf4_class is not UnicodeEncodeError:
        assert isinstance(outcome, netcdf4_class), (name, outcome)
    assert repr(_nfc(name)[:20])[:-1] in str(outcome), f"the error does not name {name!r}: {outcome}"


def _build(ds: Any, kind: str, index: int, name: str) -> None:
    """Make a node of ``kind`` named ``name`` holding the value ``index``."""
    if kind == "variable":
        ds.createVariable(name, "i4", ("d",))[:] = [index, -index]
    elif kind == "group":
        ds.createGroup(name).createVariable("inner", "i4")[...] = index
    elif kind == "dimension":
        ds.createDimension(name, 3)
        # a coordinate-like variable in a subgroup: a root variable of that name would be
        # checked as a variable
        ds.createGroup(f"g{index}").createVariable("w", "i4", (name,))[:] = [index] * 3
    elif kind == "renamed variable":
        ds.createVariable(f"old{index}", "i4", ("d",))[:] = [index, -index]
        ds.renameVariable(f"old{index}", name)
    elif kind == "renamed group":
        ds.createGroup(f"old{index}").createVariable("inner", "i4")[...] = index
        ds.renameGroup(f"old{index}", name)
    elif kind == "renamed dimension":
        ds.createDimension(f"old{index}", 3)
        ds.createGroup(f"g{index}").createVariable("w", "i4", (f"old{index}",))[:] = [index] * 3
        ds.renameDimension(f"old{index}", name)
    elif kind == "variable in a group":
        ds.createGroup("sub").createVariable(name, "i4", ("d",))[:] = [index, -index]


def _check(ds: Any, kind: str, index: int, name: str, convention: str) -> None:
    """The node :func:`_build` made, read back."""
    if kind in ("variable", "renamed variable"):
        assert ds.variables[name][:].tolist() == [index, -index]
    elif kind in ("group", "renamed group"):
        assert ds.groups[name].variables["inner"][...] == index
    elif kind in ("dimension", "renamed dimension"):
        if convention.startswith("NCZARR"):  # pure Zarr keeps a dimension with its arrays
            assert len(ds.dimensions[name]) == 3
        assert ds[f"g{index}/w"].dimensions == (name,)
        assert ds[f"g{index}/w"][:].tolist() == [index] * 3
    elif kind == "variable in a group":
        assert ds["sub"].variables[name][:].tolist() == [index, -index]


KINDS = ["variable", "group", "dimension", "renamed variable", "renamed group", "renamed dimension", "variable in a group"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_hostile_names_are_refused_or_round_trip(convention: str, kind: str, tmp_path: Path) -> None:
    path = tmp_path / "names.zarr"
    with Dataset(path, "w", format=convention) as ds:
        ds.createDimension("d", 2)
        ds.createVariable("keep", "f8", ("d",))[:] = [1.5, 2.5]
        for index, name in enumerate(REFUSED):
            _assert_refused_clearly(name, _outcome(lambda: _build(ds, kind, index, name)))
        for index, name in enumerate(ACCEPTED, start=len(REFUSED)):
            outcome = _outcome(lambda: _build(ds, kind, index, name))
            assert outcome is None, f"{kind} {name!r}: {outcome!r}"
    with Dataset(path) as ds:  # the store reopens, with everything that was accepted
        assert ds["keep"][:].tolist() == [1.5, 2.5]
        for index, name in enumerate(ACCEPTED, start=len(REFUSED)):
            _check(ds, kind, index, _nfc(name), convention)


def test_names_netcdf4_refuses_are_refused_with_its_class(tmp_path: Path) -> None:
    nc4 = netCDF4.Dataset(tmp_path / "n.nc", "w")
    try:
        expected = {name: _outcome(lambda: nc4.createVariable(name, "i4")) for name in REFUSED}
        accepted = {name: _outcome(lambda: nc4.createVariable(name, "i4")) for name in ACCEPTED}
    finally:
        nc4.close()
    assert not [n for n, o in accepted.items() if isinstance(o, Exception)], "netCDF4 refuses a name nczarr keeps"
    with Dataset(tmp_path / "n.zarr", "w") as ds:
        for name, netcdf4_outcome in expected.items():
            netcdf4_class = type(netcdf4_outcome) if isinstance(netcdf4_outcome, Exception) else None
            _assert_refused_clearly(name, _outcome(lambda: ds.createVariable(name, "i4")), netcdf4_class)


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_unicode_spellings_of_one_name_are_one_name(convention: str, tmp_path: Path) -> None:
    path = tmp_path / "nfc.zarr"
    with Dataset(path, "w", format=convention) as ds:
        ds.createDimension("e\u0301", 2)  # NFD
        ds.createVariable("\u00e9", "i4", ("e\u0301",))[:] = [1, 2]  # NFC variable, NFD dimension
        with pytest.raises(RuntimeError, match="in use"):
            ds.createVariable("e\u0301", "i4")
        ds.createGroup("o\u0308")
        assert ds.createGroup("\u00f6") is ds.groups["\u00f6"]
    with Dataset(path) as ds:
        assert list(ds.dimensions) == ["\u00e9"] and list(ds.groups) == ["\u00f6"]
        assert ds["\u00e9"].dimensions == ("\u00e9",) and ds["\u00e9"][:].tolist() == [1, 2]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_a_variable_cannot_be_renamed_onto_a_group(convention: str, tmp_path: Path) -> None:
    # both are keys of the same folder: one would overwrite the other
    path = tmp_path / "clash.zarr"
    with Dataset(path, "w", format=convention) as ds:
        ds.createGroup("g").createVariable("inner", "i4")[...] = 7
        ds.createVariable("v", "i4")[...] = 3
        with pytest.raises(RuntimeError, match="in use"):
            ds.renameVariable("v", "g")
        with pytest.raises(RuntimeError, match="in use"):
            ds.renameGroup("g", "v")
    with Dataset(path) as ds:
        assert ds["g/inner"][...] == 7 and ds["v"][...] == 3


BAD_ATTRIBUTE_NAMES = ["", "a/b", ".x", "a\x01", "x" * 257, "a "]
RESERVED_ATTRIBUTE_NAMES = [
    "_NCProperties", "_Netcdf4Dimid", "_Netcdf4Coordinates", "_nczarr_attr", "_nczarr_array", "_nczarr_group",
    "_nczarr_superblock", "_NCZARR_ATTR", "_NCZARR_ARRAY", "_NCZARR_GROUP", "_ARRAY_DIMENSIONS",
]
ODD_ATTRIBUTE_NAMES = ["zarr.json", ".zarray"[1:], "c", "0.0", "a\\b", "x" * 256, "_nczarr", "_FillValueX"]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_attribute_names(convention: str, tmp_path: Path) -> None:
    nc4 = netCDF4.Dataset(tmp_path / "a.nc", "w")
    try:
        nc4_var = nc4.createVariable("v", "i4")
        refused_by_netcdf4 = [
            n for n in BAD_ATTRIBUTE_NAMES if isinstance(_outcome(lambda: nc4_var.setncattr(n, 1)), AttributeError)
        ]
    finally:
        nc4.close()
    assert refused_by_netcdf4 == BAD_ATTRIBUTE_NAMES
    path = tmp_path / "a.zarr"
    with Dataset(path, "w", format=convention) as ds:
        ds.createDimension("d", 2)
        v = ds.createVariable("v", "i4", ("d",))
        v[:] = [1, 2]
        # the reserved names: netCDF4 refuses those of netcdf-c 4.10 (AttributeError), nczarr
        # also those older netcdf-c wrote, which it would read as metadata
        for name in BAD_ATTRIBUTE_NAMES + RESERVED_ATTRIBUTE_NAMES:
            for owner in (v, ds):
                outcome = _outcome(lambda: owner.setncattr(name, 1))
                assert isinstance(outcome, AttributeError) and isinstance(outcome, NCZarrError), (name, outcome)
        with pytest.raises(AttributeError):
            v.setncattr("ok", 1)
            v.renameAttribute("ok", "_ARRAY_DIMENSIONS")
        for index, name in enumerate(ODD_ATTRIBUTE_NAMES):
            v.setncattr(name, index)
            ds.setncattr(name, float(index))
    with Dataset(path) as ds:
        v = ds["v"]
        assert v[:].tolist() == [1, 2] and v.dimensions == ("d",)
        for index, name in enumerate(ODD_ATTRIBUTE_NAMES):
            assert v.getncattr(name) == index and ds.getncattr(name) == float(index)
        assert np.array_equal(v.getncattr("ok"), 1)
