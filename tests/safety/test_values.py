"""Typed attribute values, side by side with the real netCDF4: a ``_FillValue`` given to
``createVariable`` and ``missing_value`` / ``valid_*`` set through attribute syntax are cast to
the variable's type. Where netCDF4 raises, nczarr raises the same class (and an
``NCZarrError``); where it stores a value, nczarr stores the same, on every convention; where
netCDF4 would store another value without a word (300 as 44, NaN as INT_MIN, 1e40 as
infinity), nczarr refuses.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest

from nczarr.api import Dataset
from nczarr.errors import NCZarrError

CONVENTIONS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]

NAN, INF = float("nan"), float("inf")
CASES: list[tuple[str, Any]] = [
    # out of range for the integer type
    ("u1", 300), ("u1", -1), ("i1", 128), ("i1", -129), ("i2", 70000), ("i4", 2**31),
    ("u4", -1), ("u8", -1), ("i8", 2**63), ("u8", 2**64), ("i4", 1e20), ("u1", 300.0),
    # NaN and infinities for integer types
    ("i4", NAN), ("i4", INF), ("i2", -INF),
    # in range: kept, floats truncated as numpy does
    ("u1", 255), ("i1", -128), ("u8", 2**64 - 1), ("i4", 1.5), ("u1", 255.9), ("i4", True),
    # floats
    ("f4", 3.4e38), ("f4", NAN), ("f4", INF), ("f8", -INF), ("f4", 1e-50),
    # text for numbers
    ("i4", "5"), ("i4", "abc"), ("f4", "1.5"), ("f8", "x"), ("u1", "300"),
    # char fill values
    ("S1", "a"), ("S1", b"b"), ("S1", "ab"), ("S1", 5), ("S1", "é"),
    # numpy values
    ("u2", np.uint8(3)), ("i2", np.float64(7.0)),
    # several values
    ("i4", [1, 2]),
]
#: What netCDF4 stores changed without a word (numpy casts numpy scalars unchecked, and
#: float32 overflows to infinity): nczarr refuses these fill values with this class.
CHANGED_SILENTLY: list[tuple[str, Any, type[Exception]]] = [
    ("u1", np.int64(300), OverflowError),
    ("u1", np.float64(300.0), OverflowError),
    ("i4", np.float32(NAN), ValueError),
    ("i8", np.float64(INF), OverflowError),
    ("f4", 1e40, OverflowError),
    ("f4", -1e40, OverflowError),
    ("f4", np.float64(-1e39), OverflowError),
    ("f4", 3.5e38, OverflowError),
]
VALID_ATTRIBUTES = ["valid_min", "valid_max", "missing_value", "valid_range"]
VALID_CASES = [*CASES, ("i4", None), ("u1", [1, 300])]


def _outcome(call: Any) -> Any:
    """What ``call()`` returns, or the exception it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call()
        except Exception as exc:  # compared by class
            return exc


def _same_value(expected: Any, actual: Any, typed: bool) -> bool:
    if isinstance(expected, (bytes, str)) or isinstance(actual, (bytes, str)):
        return expected == actual
    expected, actual = np.asarray(expected), np.asarray(actual)
    if typed and expected.dtype != actual.dtype:
        return False
    return bool(np.array_equal(expected.astype("f8"), actual.astype("f8"), equal_nan=True)) or bool(
        np.array_equal(expected, actual)
    )


def _is_default_fill(dtype: str, value: Any) -> bool:
    default = netCDF4.default_fillvals[dtype]
    return (default.encode() if dtype == "S1" else default) == value


def _assert_same_error(expected: Exception, actual: Any, case: Any) -> None:
    assert isinstance(actual, Exception), f"{case}: netCDF4 raises {expected!r}, nczarr gave {actual!r}"
    assert isinstance(actual, NCZarrError), f"{case}: {actual!r} is not an NCZarrError"
    assert isinstance(actual, type(expected)), f"{case}: netCDF4 raises {expected!r}, nczarr {actual!r}"


def _fill_values_of(create: Any, cases: list[tuple[str, Any]]) -> list[Any]:
    """Create one variable per case with that fill value; the outcome of each creation."""
    return [_outcome(lambda i=i, c=c: create(f"v{i}", c[0], c[1])) for i, c in enumerate(cases)]


@pytest.fixture(scope="module")
def netcdf4_fills(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    path = tmp_path_factory.mktemp("nc4") / "fills.nc"
    with netCDF4.Dataset(path, "w") as ds:
        outcomes = _fill_values_of(lambda name, dt, value: ds.createVariable(name, dt, (), fill_value=value), CASES)
    with netCDF4.Dataset(path) as ds:
        return [o if isinstance(o, Exception) else ds[f"v{i}"].getncattr("_FillValue") for i, o in enumerate(outcomes)]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_fill_values_as_netcdf4(convention: str, netcdf4_fills: list[Any], tmp_path: Path) -> None:
    path = tmp_path / "fills.zarr"
    with Dataset(path, "w", format=convention) as ds:
        outcomes = _fill_values_of(lambda name, dt, value: ds.createVariable(name, dt, (), fill_value=value), CASES)
    with Dataset(path) as ds:  # the refused variables left nothing behind
        assert sorted(ds.variables) == sorted(f"v{i}" for i, o in enumerate(outcomes) if not isinstance(o, Exception))
        for i, (case, expected, outcome) in enumerate(zip(CASES, netcdf4_fills, outcomes)):
            if isinstance(expected, Exception):
                _assert_same_error(expected, outcome, case)
                continue
            assert not isinstance(outcome, Exception), f"{case}: netCDF4 stores {expected!r}, nczarr raised {outcome!r}"
            stored = ds[f"v{i}"].getncattr("_FillValue")
            assert _same_value(expected, stored, typed=True), f"{case}: netCDF4 {expected!r}, nczarr {stored!r}"


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_fill_values_netcdf4_would_change_are_refused(convention: str, tmp_path: Path) -> None:
    nc4_path = tmp_path / "changed.nc"
    with netCDF4.Dataset(nc4_path, "w") as ds:
        for i, (dtype, value, _) in enumerate(CHANGED_SILENTLY):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                stored = ds.createVariable(f"v{i}", dtype, (), fill_value=value).getncattr("_FillValue")
            changed = not _same_value(np.asarray(value), stored, typed=False)
            assert changed, f"netCDF4 now keeps {value!r} as {dtype}: drop the case"
    path = tmp_path / "changed.zarr"
    with Dataset(path, "w", format=convention) as ds:
        for dtype, value, error in CHANGED_SILENTLY:
            with pytest.raises(error) as raised:
                ds.createVariable("v", dtype, (), fill_value=value)
            assert isinstance(raised.value, NCZarrError)
            assert "_FillValue of variable 'v'" in str(raised.value)
            assert "v" not in ds.variables
    with Dataset(path) as ds:
        assert list(ds.variables) == []


def _valid_outcomes(ds: Any, attribute: str) -> list[Any]:
    outcomes = []
    for i, (dtype, value) in enumerate(VALID_CASES):
        variable = ds.createVariable(f"v{i}", dtype, ())
        outcomes.append(_outcome(lambda v=variable, value=value: setattr(v, attribute, value)))
    return outcomes


@pytest.fixture(scope="module")
def netcdf4_valid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    found = {}
    for attribute in VALID_ATTRIBUTES:
        path = tmp_path_factory.mktemp("nc4") / f"{attribute}.nc"
        with netCDF4.Dataset(path, "w") as ds:
            outcomes = _valid_outcomes(ds, attribute)
        with netCDF4.Dataset(path) as ds:
            found[attribute] = [
                o if isinstance(o, Exception) else ds[f"v{i}"].getncattr(attribute) for i, o in enumerate(outcomes)
            ]
    return found


@pytest.mark.parametrize("attribute", VALID_ATTRIBUTES)
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_valid_attributes_as_netcdf4(
    convention: str, attribute: str, netcdf4_valid: dict[str, list[Any]], tmp_path: Path
) -> None:
    path = tmp_path / "valid.zarr"
    with Dataset(path, "w", format=convention) as ds:
        outcomes = _valid_outcomes(ds, attribute)
    typed = convention.startswith("NCZARR")  # pure Zarr keeps no attribute types
    with Dataset(path) as ds:
        for i, (case, expected, outcome) in enumerate(zip(VALID_CASES, netcdf4_valid[attribute], outcomes)):
            if isinstance(expected, Exception):
                _assert_same_error(expected, outcome, case)
                assert attribute not in ds[f"v{i}"].ncattrs()
                continue
            assert outcome is None, f"{case}: netCDF4 stores {expected!r}, nczarr raised {outcome!r}"
            stored = ds[f"v{i}"].getncattr(attribute)
            assert _same_value(expected, stored, typed), f"{case}: netCDF4 {expected!r}, nczarr {stored!r}"


def test_out_of_range_fill_value_is_refused_before_anything_changes(tmp_path: Path) -> None:
    # the reported cases: 300 for u1 stored 44, NaN for i4 stored INT_MIN
    path = tmp_path / "s.zarr"
    with Dataset(path, "w") as ds:
        ds.createDimension("x", 3)
        with pytest.raises(OverflowError, match="300"):
            ds.createVariable("b", "u1", ("x",), fill_value=300)
        with pytest.raises(ValueError, match="NaN"):
            ds.createVariable("b", "i4", ("x",), fill_value=math.nan)
        b = ds.createVariable("b", "u1", ("x",), fill_value=200)
        b[0] = 1
    with Dataset(path) as ds:
        assert ds["b"].getncattr("_FillValue") == 200
        assert ds["b"][:].tolist() == [1, None, None]


ODD_ATTRIBUTES: list[tuple[str, str, Any]] = [
    ("i2", "scale_factor", "NaN"),
    ("i2", "scale_factor", np.array([1.0, 2.0])),
    ("i2", "add_offset", "abc"),
    ("i1", "_Unsigned", np.array([1, 2], "i1")),
    ("i1", "_Unsigned", 1),
    ("i2", "valid_min", np.array([1, 2], "i2")),
    ("i2", "valid_max", np.array([1, 2, 5], "i2")),
    ("i2", "valid_range", np.array([1, 2, 3], "i2")),
    ("i2", "missing_value", "x"),
]


@pytest.mark.parametrize(("dtype", "name", "value"), ODD_ATTRIBUTES)
def test_odd_attributes_written_by_netcdf4_leave_the_data_readable(
    tmp_path: Path, dtype: str, name: str, value: Any
) -> None:
    """Attributes another tool wrote with an odd type or length (netCDF4 writes them all)
    never make the data unreadable: at worst the attribute is not used, with a warning."""
    path = tmp_path / "odd.nc"
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("x", 3)
        variable = nc.createVariable("v", dtype, ("x",))
        variable.set_auto_maskandscale(False)
        variable[:] = [1, 2, 3]
        variable.setncattr(name, value)
    with Dataset(path) as ds, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.asarray(ds["v"][:]).tolist() == [1, 2, 3]
