"""A format session as a DatasetSource and DatasetSink: raw netCDF values by hyperslab,
without API handles, in every convention."""

from __future__ import annotations

import numpy as np
import pytest

import nczarr
from nczarr.formats import convention, detect
from nczarr.formats.session import Session
from nczarr.store import MemoryStore
from nczarr.syntax import parse
from nczarr.values.source import DatasetSink, DatasetSource

TEXT = """
dataset zarr 3 enhanced {
    compound rec { field short a  field char tag(3) }
    vlen int ragged
    dimension x = 3
    dimension n = unlimited(0)
    variable short s(x) { attribute double scale_factor = 0.5 }
    variable char c(x)
    variable string t(x)
    variable rec r(x)
    variable ragged v(x)
    variable int grows(n)
    variable double scalar
}
"""
FORMATS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]


def _values(fmt: str) -> dict[str, np.ndarray]:
    rec = np.zeros(3, [("a", "i2"), ("tag", "S1", (3,))])
    rec["a"] = [1, 2, 3]
    rec["tag"] = [list(b"abc"), list(b"de\0"), list(b"f\0\0")]
    ragged = np.empty(3, object)
    ragged[:] = [np.arange(n, dtype="i4") for n in (0, 2, 3)]
    values = {
        "/s": np.array([2, 4, 6], "i2"),
        "/c": np.array([b"x", b"y", b"z"], "S1"),
        "/t": np.array(["é", "", "long text"], object),
        "/grows": np.array([7, 8], "i4"),
        "/scalar": np.array(1.5),
    }
    if fmt == "NCZARR":  # only NCZarr v3 stores user types
        values |= {"/r": rec, "/v": ragged}
    return values


def _tree(fmt: str):
    tree = parse(TEXT)
    if fmt != "NCZARR":
        tree.types.clear()
        tree.variables[:] = [v for v in tree.variables if v.name not in ("r", "v")]
    return tree


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_and_read_raw_values(fmt: str) -> None:
    store = MemoryStore()
    sink: DatasetSink = Session.create(store, _tree(fmt), convention(fmt))
    values = _values(fmt)
    for fqn, data in values.items():
        variable = next(v for v in sink.dataset.variables if v.fqn == fqn)
        sink.write(variable, tuple(slice(0, n) for n in data.shape), data)
    sink.close()

    source: DatasetSource = Session.open(store, detect(store), read_only=True)
    assert source.data_model == "NETCDF4"
    assert source.dataset.find_dimension("n").size == 2
    for fqn, data in values.items():
        variable = next(v for v in source.dataset.variables if v.fqn == fqn)
        got = source.read(variable, tuple(slice(0, n) for n in data.shape))
        assert got.shape == data.shape
        if fqn == "/v":
            assert [list(a) for a in got] == [list(a) for a in data]
        elif fqn == "/r":
            assert got.dtype.isalignedstruct
            assert all(np.array_equal(got[name], data[name]) for name in data.dtype.names)
        else:
            assert got.tolist() == data.tolist(), fqn
            assert got.dtype == data.dtype
    part = source.read(next(v for v in source.dataset.variables if v.name == "s"), (slice(1, 3),))
    assert part.tolist() == [4, 6]
    source.close()

    with nczarr.Dataset(store, "r") as api:  # the API reads the same values, unscaled
        api.set_auto_maskandscale(False)
        assert api["s"][:].tolist() == [2, 4, 6]
        assert api["t"][:].tolist() == ["é", "", "long text"]
