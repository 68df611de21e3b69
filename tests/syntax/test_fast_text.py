"""The slab-at-a-time number printing of ``nczarr dump`` against real ncdump, byte for byte:
random values of every numeric type with NaN, infinities, fills, negative zero, subnormals and
extremes, in rows wider and narrower than a line, in slabs that split rows, with ``-p``, ``-l``
and a group's indentation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.api.generate import generate
from nczarr.convert.sources import open_source
from nczarr.syntax import cdldump
from nczarr.syntax.cdldump import DumpOptions, dump

TYPES = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]


def _values(dtype: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` (at least 16) values, the first ones the type's extremes and specials."""
    kind = np.dtype(dtype)
    if kind.kind in "iu":
        info = np.iinfo(kind)
        values = rng.integers(info.min, info.max, size, dtype=kind, endpoint=True)
        values[:4] = [info.min, info.max, 0, 1]
        values[4::7] = values[4::7] // 100 if info.max > 1000 else values[4::7] // 10
        return values
    info = np.finfo(kind)
    values = (rng.normal(size=size) * 10.0 ** rng.integers(-40 if kind.itemsize == 4 else -300, 30, size)).astype(kind)
    values[4::9] = rng.integers(-999, 999, len(values[4::9]))  # short texts that end rows
    values[:10] = [np.nan, np.inf, -np.inf, -0.0, info.smallest_subnormal, info.tiny, info.max, -info.max, 0.5, 1e-5]
    return values


def _make(path: Path) -> Path:
    rng = np.random.default_rng(18)
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("row", 7)
        ds.createDimension("wide", 53)
        ds.createDimension("long", 3001)
        ds.createDimension("one", 1)
        for dtype in TYPES:
            ds.createVariable(f"m_{dtype}", dtype, ("row", "wide"))[...] = _values(dtype, 7 * 53, rng).reshape(7, 53)
            ds.createVariable(f"v_{dtype}", dtype, ("long",))[...] = _values(dtype, 3001, rng)
            narrow = ds.createVariable(f"n_{dtype}", dtype, ("long", "one"), fill_value=_values(dtype, 16, rng)[5])
            data = np.ma.masked_array(_values(dtype, 3001, rng).reshape(3001, 1), mask=rng.random((3001, 1)) < 0.2)
            narrow[...] = data
            ds.createVariable(f"s_{dtype}", dtype, ())[...] = _values(dtype, 16, rng)[5]
        formatted = ds.createVariable("c_format", "f8", ("row", "wide"))
        formatted.C_format = "%9.3f"
        formatted[...] = rng.normal(size=(7, 53)) * 1e4
        commas = ds.createVariable("c_commas", "i4", ("row", "wide"))
        commas.C_format = "%d,"
        commas[...] = rng.integers(-5, 5, (7, 53))
        # a name so long that the first value already wraps
        ds.createVariable("n" * 72, "f8", ("long",))[...] = _values("f8", 3001, rng)
        group = ds.createGroup("inner").createGroup("deeper")
        group.createVariable("g", "f4", ("row", "wide"))[...] = _values("f4", 7 * 53, rng).reshape(7, 53)
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make(tmp_path_factory.mktemp("fast_text") / "numbers.nc")


def _ncdump(path: Path, *args: str) -> str:
    return subprocess.run(["ncdump", *args, str(path)], capture_output=True, check=True).stdout.decode()


def _ours(path: Path, options: DumpOptions) -> str:
    source = open_source(str(path))
    try:
        return "".join(dump(source, options, path=str(path)))
    finally:
        source.close()


@pytest.mark.parametrize(
    "args, options",
    [
        ([], DumpOptions()),
        (["-p", "9,17"], DumpOptions(precision=(9, 17))),
        (["-p", "3,5"], DumpOptions(precision=(3, 5))),
        (["-l", "30"], DumpOptions(line_length=30)),
        (["-d", "4,6"], DumpOptions(precision=(4, 6), c_format_wins=True)),
    ],
    ids=["default", "p9-17", "p3-5", "l30", "d4-6"],
)
@pytest.mark.parametrize("slab", [1 << 18, 100], ids=["whole", "slabs"])
def test_same_as_ncdump(dataset: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], options: DumpOptions, slab: int) -> None:
    monkeypatch.setattr(cdldump, "_SLAB_VALUES", slab)
    expected = _ncdump(dataset, *args)
    got = _ours(dataset, options)
    assert got.splitlines() == expected.splitlines()
    assert got == expected


# -- gen: long runs of plain numbers, read in bulk, against ncgen ---------------------------
_CDL_TYPES = {"i1": "byte", "u1": "ubyte", "i2": "short", "u2": "ushort", "i4": "int", "u4": "uint",
              "i8": "int64", "u8": "uint64", "f4": "float", "f8": "double"}


def _run_texts(dtype: str, rng: np.random.Generator) -> list[str]:
    """Texts of 200 numbers of the type, as people write them: signs, exponents, leading
    points, and a few that need ncgen's own reading (octal, out of range, 19 digits)."""
    values = _values(dtype, 200, rng)
    if dtype.startswith("f"):
        values = values[np.isfinite(values)]
        texts = [repr(float(v)) for v in values]
        texts[5:9] = ["+1.5", ".25", "5.", "-1E-3"]
        return texts
    texts = [str(int(v)) for v in values]
    texts[5] = "+7"
    return texts


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("twist", ["plain", "octal", "long", "wraps"])
def test_gen_same_values_as_ncgen(tmp_path: Path, dtype: str, twist: str) -> None:
    rng = np.random.default_rng(len(dtype) + len(twist))
    texts = _run_texts(dtype, rng)
    if twist == "octal":
        texts[3] = "017"
    elif twist == "long":
        texts[3] = "1000000000000000000" if dtype != "i1" else "1000000000000000000.5"
        if dtype.startswith(("i", "u")):
            texts[3] = "12"  # ncgen refuses 19-digit constants out of the type's range
            texts[4] = "-0012" if dtype[0] == "i" else "0012"
    elif twist == "wraps" and not dtype.startswith("f"):
        texts[3] = "300" if dtype in ("i1", "u1") else texts[3]
    cdl = tmp_path / "run.cdl"
    body = ",\n   ".join(", ".join(texts[i : i + 9]) for i in range(0, len(texts), 9))
    cdl.write_text(f"netcdf run {{\ndimensions:\n\tn = {len(texts)} ;\nvariables:\n"
                   f"\t{_CDL_TYPES[dtype]} v(n) ;\ndata:\n\n v = {body} ;\n}}\n")
    subprocess.run(["ncgen", "-4", "-o", str(tmp_path / "run.nc"), str(cdl)], check=True, capture_output=True)
    generate(str(cdl), str(tmp_path / "run.zarr"))
    with netCDF4.Dataset(tmp_path / "run.nc") as theirs:
        expected = theirs["v"][...].filled()
    with nczarr.Dataset(str(tmp_path / "run.zarr")) as ours:
        got = np.asarray(ours["v"][...])
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{got.itemsize}"))
