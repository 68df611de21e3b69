"""netcdf-c's quantization, bit for bit: data written through netCDF4 with
``significant_digits``/``quantize_mode`` and read back raw against ``quantize``."""

from __future__ import annotations

import netCDF4
import numpy as np
import pytest

from nczarr.errors import ArgumentError, DatasetStateError
from nczarr.values.quantize import QUANTIZE_ATTRIBUTES, check_quantize, quantize

DEFAULT_FILL = 9.969209968386869e36


def _data(dtype: str, seed: int, fill: float | None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    special = [np.nan, 0.0, -0.0, DEFAULT_FILL, -DEFAULT_FILL, np.inf, -np.inf, info.max, -info.max,
               info.tiny, info.smallest_subnormal, 1.0, 10.0, 100.0, 1000.0, 1e-3, 0.1, 1e5, 1e-7,
               -1e30, 1e30, 5e-30, 2.0**-10, 0.999999, 9.99999]
    if fill is not None:
        special += [fill, fill]
    random = np.concatenate([
        rng.normal(0, 1, 150),
        rng.normal(0, 1e6, 50),
        10.0 ** rng.uniform(-30, 30, 100) * rng.choice([-1, 1], 100),
        rng.integers(-1000, 1000, 50).astype(float),
    ])
    with np.errstate(over="ignore"):
        values = np.concatenate([special, random]).astype(dtype)
    rng.shuffle(values)
    return values


CASES = [
    (dtype, mode, nsd)
    for dtype, limits in [("f4", {"BitGroom": 6, "GranularBitRound": 6, "BitRound": 23}),
                          ("f8", {"BitGroom": 15, "GranularBitRound": 15, "BitRound": 52})]
    for mode, top in limits.items()
    for nsd in sorted({1, 2, 3, top // 2, top - 1, top})
]


@pytest.mark.parametrize("fill", [None, -999.0])
@pytest.mark.parametrize(("dtype", "mode", "nsd"), CASES)
def test_quantize_bit_identical_with_netcdf_c(dtype, mode, nsd, fill, tmp_path) -> None:
    data = _data(dtype, nsd * 7 + len(mode), fill)
    with netCDF4.Dataset(tmp_path / "q.nc", "w") as ds:
        ds.createDimension("x", data.size)
        v = ds.createVariable("v", dtype, ("x",), significant_digits=nsd, quantize_mode=mode,
                              fill_value=fill)
        v.set_auto_maskandscale(False)
        v[:] = data
    with netCDF4.Dataset(tmp_path / "q.nc") as ds:  # netcdf-c shows the attribute on reopen
        v = ds["v"]
        attribute = v.getncattr(QUANTIZE_ATTRIBUTES[mode])
        assert (attribute, attribute.dtype) == (nsd, np.dtype("i4"))
        v.set_auto_maskandscale(False)
        stored = v[:]
    actual = quantize(data, nsd, mode, fill_value=fill)
    bits = f"u{np.dtype(dtype).itemsize}"
    assert actual.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(actual.view(bits), stored.view(bits))
    full_precision = nsd == np.finfo(dtype).nmant and mode == "BitRound"
    assert np.array_equal(data.view(bits), actual.view(bits)) == full_precision


def test_quantize_positions_count_within_the_write_and_keep_byte_order(tmp_path) -> None:
    data = _data("f4", 1, None)[:240].reshape(20, 12)
    with netCDF4.Dataset(tmp_path / "q.nc", "w") as ds:
        ds.createDimension("x", 20)
        ds.createDimension("y", 12)
        v = ds.createVariable("v", "f4", ("x", "y"), significant_digits=2)
        v.set_auto_maskandscale(False)
        v[3:7, :] = data[3:7]
        stored = v[3:7, :]
    actual = quantize(data[3:7], 2, "BitGroom")
    np.testing.assert_array_equal(actual.view("u4"), stored.view("u4"))
    big = quantize(data[3:7].astype(">f4"), 2, "BitGroom")
    assert big.dtype == np.dtype(">f4")
    np.testing.assert_array_equal(big.astype("f4").view("u4"), stored.view("u4"))


@pytest.mark.parametrize("mode", ["bitgroom", "Bad", ""])
def test_bad_mode_error_matches_netcdf4(mode, tmp_path) -> None:
    with netCDF4.Dataset(tmp_path / "q.nc", "w") as ds, pytest.raises(ValueError) as expected:
        ds.createVariable("v", "f4", (), significant_digits=2, quantize_mode=mode)
    with pytest.raises(ArgumentError) as actual:
        check_quantize(mode, 2, np.dtype("f4"))
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("dtype", ["f4", "f8", "i4"])
@pytest.mark.parametrize("mode", list(QUANTIZE_ATTRIBUTES))
@pytest.mark.parametrize("nsd", [-1, 0, 1, 6, 7, 15, 16, 23, 24, 52, 53])
def test_digit_limits_match_netcdf_c(dtype, mode, nsd, tmp_path) -> None:
    with netCDF4.Dataset(tmp_path / "q.nc", "w") as ds:
        try:
            ds.createVariable("v", dtype, (), significant_digits=nsd, quantize_mode=mode)
            expected = None
        except RuntimeError as exc:
            expected = str(exc)
    where = "(variable 'v', group '/')"
    if expected is None:
        assert check_quantize(mode, nsd, np.dtype(dtype), where) == QUANTIZE_ATTRIBUTES[mode]
    else:
        with pytest.raises(DatasetStateError) as actual:
            check_quantize(mode, nsd, np.dtype(dtype), where)
        assert str(actual.value) == expected
