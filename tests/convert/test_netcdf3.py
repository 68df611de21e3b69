"""netCDF-3 files (CDF-1, CDF-2, CDF-5) read natively and written, against netCDF4, ncgen and
ncdump."""

from __future__ import annotations

import math
import os
import subprocess
import tracemalloc
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from nczarr import NCZarrError
from nczarr.convert.netcdf3 import Netcdf3Reader, problems, write_netcdf3
from nczarr.errors import Netcdf3Error
from nczarr.formats import FormatError
from nczarr.model import AtomicType, DataModel, Dataset, Variable
from nczarr.values.storage import VariableStorage

KINDS = ["NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA"]
NCGEN_KIND = {"NETCDF3_CLASSIC": "nc3", "NETCDF3_64BIT_OFFSET": "nc6", "NETCDF3_64BIT_DATA": "nc5"}
CLASSIC_TYPES = ["i1", "S1", "i2", "i4", "f4", "f8"]
CDF5_TYPES = ["u1", "u2", "u4", "i8", "u8"]


class MemorySource:
    """A DatasetSource over a tree and a dict of arrays by FQN."""

    def __init__(self, dataset: Dataset, arrays: dict[str, np.ndarray]) -> None:
        self.dataset = dataset
        self.arrays = arrays
        self.storage: dict[str, VariableStorage] = {}
        self.data_model = "NETCDF3_CLASSIC"

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        return self.arrays[variable.fqn][selection]

    def close(self) -> None:
        pass


def values_of(kind: str, code: str, shape: tuple[int, ...]) -> np.ndarray:
    count = math.prod(shape)
    if code == "S1":
        return np.array([b"abcdefg"[i % 7 : i % 7 + 1] for i in range(count)], "S1").reshape(shape)
    data = np.arange(count) % 100 + 3
    return data.astype(code).reshape(shape)


def make_netcdf4_file(path: Path, kind: str, codes: list[str] | None = None) -> None:
    """Every type of the kind; fixed, scalar and several record variables; odd sizes; a
    partly written record variable; UTF-8 names; attributes of every type."""
    if codes is None:
        codes = CLASSIC_TYPES + (CDF5_TYPES if kind == "NETCDF3_64BIT_DATA" else [])
    with netCDF4.Dataset(path, "w", format=kind) as ds:
        ds.set_auto_maskandscale(False)
        ds.set_auto_chartostring(False)
        ds.createDimension("time", None)
        ds.createDimension("x", 3)
        ds.createDimension("température", 5)
        ds.title = "netCDF-3 sample, ünïcode"
        for code in codes:
            if code != "S1":
                ds.setncattr(f"att_{code}", np.array([1, 2, 3], code))
        ds.setncattr("one_double", np.float64(2.5))
        variables = {}
        for code in codes:
            variables[f"fixed_{code}"] = ds.createVariable(f"fixed_{code}", code, ("x", "température"))
            variables[f"rec_{code}"] = ds.createVariable(f"rec_{code}", code, ("time", "x"))
        variables["scalar"] = ds.createVariable("scalar", "f8", ())
        variables["filled"] = ds.createVariable("filled", "i2", ("time",), fill_value=-5)
        variables["filled"].units = "m"
        variables["filled"].valid_range = np.array([0, 10], "i2")
        for name, var in variables.items():
            if name == "filled":
                var[0] = 7  # records 1 and 2 keep the fill value
            elif name.startswith("rec_"):
                var[0:3] = values_of(kind, var.dtype.str[1:], (3, 3))
            else:
                var[...] = values_of(kind, var.dtype.str[1:], var.shape)


CDL = """netcdf sample {{
dimensions:
  t = UNLIMITED ; // (2 currently)
  n = 3 ;
  odd = 7 ;
variables:
  {types}
  short single(t, odd) ;
    single:_FillValue = -1s ;
  char name(n, odd) ;
  int scalar ;
    scalar:comment = "a scalar" ;
  double d(n) ;
    d:range = 1.5, -2.25 ;
  float größe(t) ;
    größe:long_name = "Größe" ;

// global attributes:
  :bytes = 1b, -2b ;
  :shorts = 3s ;
  :ints = 4, 5, 6 ;
  :floats = 1.5f ;
  :doubles = 1e300 ;
  :text = "héllo" ;
  {attributes}
data:
  {data}
  single = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 ;
  name = "abc", "de", "fghijkl" ;
  scalar = 42 ;
  d = 1, 2, 3 ;
  größe = 0.5, _ ;
}}
"""


def make_ncgen_file(tmp_path: Path, kind: str, name: str = "sample.nc") -> Path:
    cdf5 = kind == "NETCDF3_64BIT_DATA"
    cdl = CDL.format(
        types="ubyte ub(n) ; ushort us(n) ; uint ui(n) ; int64 i64(n) ; uint64 u64(n) ;" if cdf5 else "",
        attributes=":ubytes = 255UB ; :ushorts = 65535US ; :uints = 4294967295U ; :int64s = -9223372036854775807LL ; "
        ":uint64s = 18446744073709551615ULL ;"
        if cdf5
        else "",
        data="ub = 1, 2, 255 ; us = 1, 2, 65535 ; ui = 1, 2, 4294967295 ; i64 = -1, 2, 9223372036854775807 ; "
        "u64 = 1, 2, 18446744073709551615 ;"
        if cdf5
        else "",
    )
    (tmp_path / "sample.cdl").write_text(cdl, encoding="utf-8")
    path = tmp_path / name
    subprocess.run(["ncgen", "-k", NCGEN_KIND[kind], "-o", str(path), str(tmp_path / "sample.cdl")], check=True)
    return path


def full(variable: Variable, reader: Netcdf3Reader) -> tuple[slice, ...]:
    sizes = {d.name: d.size for d in reader.dataset.dimensions}
    return tuple(slice(0, sizes[name]) for name in variable.dimensions)  # type: ignore[index]


def assert_same_as_netcdf4(path: Path) -> None:
    """The reader's tree and values are what netCDF4 reads from ``path``."""
    with Netcdf3Reader(path) as reader, netCDF4.Dataset(path) as ds:
        ds.set_auto_maskandscale(False)
        ds.set_auto_chartostring(False)
        tree = reader.dataset
        assert reader.data_model == ds.data_model
        assert tree.data_model is DataModel.CLASSIC
        assert [(d.name, d.size, d.unlimited) for d in tree.dimensions] == [
            (d.name, len(d), d.isunlimited()) for d in ds.dimensions.values()
        ]
        assert_attributes(tree, ds)
        assert [v.name for v in tree.variables] == list(ds.variables)
        for variable in tree.variables:
            theirs = ds.variables[variable.name]
            assert variable.dimensions == list(theirs.dimensions)
            assert_attributes(variable, theirs)
            ours = reader.read(variable, full(variable, reader))
            expected = theirs[...]
            assert ours.dtype == expected.dtype.newbyteorder("=") and ours.dtype.isnative
            np.testing.assert_array_equal(ours, expected)
            assert reader.storage[variable.fqn] == VariableStorage()
            if variable.dimensions and ours.size:  # a hyperslab
                selection = tuple(slice(n // 2, n) for n in ours.shape)
                np.testing.assert_array_equal(reader.read(variable, selection), expected[selection])


def assert_attributes(owner, theirs) -> None:
    assert [a.name for a in owner.attributes] == theirs.ncattrs()
    for attribute in owner.attributes:
        value = theirs.getncattr(attribute.name)
        if attribute.type is AtomicType.CHAR:
            assert attribute.values == value
        else:
            expected = np.atleast_1d(value)
            assert np.dtype(numpy_code(attribute.type)) == expected.dtype
            assert attribute.values == expected.tolist()


def numpy_code(type: AtomicType) -> str:
    return {"byte": "i1", "ubyte": "u1", "short": "i2", "ushort": "u2", "int": "i4", "uint": "u4",
            "int64": "i8", "uint64": "u8", "float": "f4", "double": "f8"}[type.value]


def ncdump(path: Path) -> str:
    return subprocess.run(["ncdump", str(path)], check=True, capture_output=True, text=True).stdout


def rewrite(path: Path, tmp_path: Path, kind: str | None = None, **options) -> Path:
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    target = out_dir / path.name
    with Netcdf3Reader(path) as reader:
        write_netcdf3(target, reader, kind or reader.data_model, **options)
    return target


@pytest.mark.parametrize("kind", KINDS)
def test_netcdf4_files_read_and_rewritten_byte_for_byte(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "sample.nc"
    make_netcdf4_file(path, kind)
    assert_same_as_netcdf4(path)
    copy = rewrite(path, tmp_path)
    assert copy.read_bytes() == path.read_bytes()
    assert_same_as_netcdf4(copy)


@pytest.mark.parametrize("kind", KINDS)
def test_ncgen_files_read_and_rewritten(tmp_path: Path, kind: str) -> None:
    path = make_ncgen_file(tmp_path, kind)
    assert_same_as_netcdf4(path)
    copy = rewrite(path, tmp_path)
    assert ncdump(copy) == ncdump(path)
    assert copy.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_rewritten_netcdf4_file_dumps_identically(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "sample.nc"
    make_netcdf4_file(path, kind)
    text = ncdump(rewrite(path, tmp_path))
    assert text == ncdump(path)
    assert "température = 5" in text and ":title = \"netCDF-3 sample, ünïcode\"" in text


def test_single_record_variable_has_no_padding(tmp_path: Path) -> None:
    path = tmp_path / "single.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        ds.createVariable("r", "i1", ("t", "x"))[0:4] = np.arange(12).reshape(4, 3)
    with Netcdf3Reader(path) as reader:
        np.testing.assert_array_equal(reader.read(reader.dataset.variables[0], (slice(1, 4), slice(0, 3))),
                                      np.arange(3, 12).reshape(3, 3))
    copy = rewrite(path, tmp_path)
    assert copy.read_bytes() == path.read_bytes()
    assert os.path.getsize(copy) == 96 + 4 * 3  # the header, then 4 records of 3 bytes, not 4


def test_empty_unlimited_dimension(tmp_path: Path) -> None:
    path = tmp_path / "empty.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 2)
        ds.createVariable("a", "f4", ("t", "x"))
        ds.createVariable("b", "i4", ("t",))
        ds.createVariable("c", "f8", ("x",))[:] = [1, 2]
    assert_same_as_netcdf4(path)
    assert rewrite(path, tmp_path).read_bytes() == path.read_bytes()


def test_streaming_numrecs_counts_records_from_the_file_size(tmp_path: Path) -> None:
    path = tmp_path / "stream.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("t", None)
        ds.createVariable("a", "i4", ("t",))[0:5] = np.arange(5)
        ds.createVariable("b", "i2", ("t",))[0:5] = np.arange(5)
    data = bytearray(path.read_bytes())
    data[4:8] = b"\xff\xff\xff\xff"
    path.write_bytes(bytes(data))
    with Netcdf3Reader(path) as reader:
        assert reader.dataset.dimensions[0].size == 5
        np.testing.assert_array_equal(reader.read(reader.dataset.variables[1], (slice(0, 5),)), np.arange(5))


def test_not_netcdf3_is_a_clear_error(tmp_path: Path) -> None:
    hdf5 = tmp_path / "four.nc"
    with netCDF4.Dataset(hdf5, "w", format="NETCDF4"):
        pass
    with pytest.raises(Netcdf3Error, match=r"four\.nc: not a netCDF-3 file: it starts with b'\\x89HDF'") as info:
        Netcdf3Reader(hdf5)
    assert isinstance(info.value, NCZarrError) and isinstance(info.value, OSError)
    with pytest.raises(FileNotFoundError):
        Netcdf3Reader(tmp_path / "missing.nc")
    empty = tmp_path / "empty.nc"
    empty.write_bytes(b"")
    with pytest.raises(Netcdf3Error, match="starts with b''"):
        Netcdf3Reader(empty)


def test_truncated_header_and_data(tmp_path: Path) -> None:
    path = tmp_path / "t.nc"
    make_netcdf4_file(path, "NETCDF3_CLASSIC")
    data = path.read_bytes()
    (tmp_path / "head.nc").write_bytes(data[:40])
    with pytest.raises(Netcdf3Error, match="truncated"):
        Netcdf3Reader(tmp_path / "head.nc")
    (tmp_path / "body.nc").write_bytes(data[:-10])
    with Netcdf3Reader(tmp_path / "body.nc") as reader:
        last = reader.dataset.variables[-1]
        with pytest.raises(Netcdf3Error, match="truncated"):
            reader.read(last, full(last, reader))


def test_written_from_a_memory_source_netcdf4_reads_it(tmp_path: Path) -> None:
    tree = Dataset()
    tree.add_dimension("t", 4, unlimited=True)
    tree.add_dimension("x", 5)
    tree.add_attribute("ok", AtomicType.UINT64, [2**64 - 1])
    arrays = {}
    for code in [*CDF5_TYPES, "f4"]:
        variable = tree.add_variable(f"v{code}", AtomicType(_type_name(code)), ["t", "x"])
        arrays[variable.fqn] = np.arange(20).reshape(4, 5).astype(code)
    path = tmp_path / "five.nc"
    write_netcdf3(path, MemorySource(tree, arrays), "NETCDF3_64BIT_DATA")
    with netCDF4.Dataset(path) as ds:
        assert ds.data_model == "NETCDF3_64BIT_DATA"
        assert ds.ok == 2**64 - 1
        for code in [*CDF5_TYPES, "f4"]:
            assert ds[f"v{code}"].dtype == np.dtype(code)
            np.testing.assert_array_equal(ds[f"v{code}"][:], arrays[f"/v{code}"])


def _type_name(code: str) -> str:
    return {"u1": "ubyte", "u2": "ushort", "u4": "uint", "i8": "int64", "u8": "uint64", "f4": "float"}[code]


def test_problems_name_every_node_the_kind_cannot_hold(tmp_path: Path) -> None:
    tree = Dataset()
    tree.add_dimension("t", 0, unlimited=True)
    tree.add_dimension("u", 0, unlimited=True)
    tree.add_dimension("x", 2)
    tree.add_group("g")
    tree.add_opaque("blob", 4)
    tree.add_variable("s", AtomicType.STRING, ["x"])
    tree.add_variable("late", AtomicType.INT, ["x", "t"])
    tree.add_variable("anon", AtomicType.INT, [3])
    tree.add_variable("big", AtomicType.UINT, ["x"]).add_attribute("a", AtomicType.INT64, [1])
    found = problems(tree, "NETCDF3_CLASSIC")
    assert found == [
        "/g: netCDF-3 has no groups",
        "/blob: netCDF-3 has no user-defined types",
        "/u: a second unlimited dimension; netCDF-3 has only one",
        "/s: type string has no netCDF-3 equivalent",
        "/late: unlimited dimension 't' is not the first; netCDF-3 needs it first",
        "/anon: dimension 3 is not a named dimension of the root group",
        "/big: type uint needs NETCDF3_64BIT_DATA (CDF-5)",
        "/big:a: type int64 needs NETCDF3_64BIT_DATA (CDF-5)",
    ]
    assert not any("uint" in p or "int64" in p for p in problems(tree, "NETCDF3_64BIT_DATA"))
    target = tmp_path / "never.nc"
    with pytest.raises(FormatError, match="/g: netCDF-3 has no groups") as info:
        write_netcdf3(target, MemorySource(tree, {}))
    assert isinstance(info.value, ValueError)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FormatError, match="unknown netCDF-3 data model 'NETCDF4'"):
        problems(Dataset(), "NETCDF4")


def test_size_limits_of_cdf1_and_cdf2() -> None:
    tree = Dataset()
    tree.add_dimension("huge", 2**30)
    tree.add_variable("first", AtomicType.DOUBLE, ["huge"])  # 8 GiB, not last
    tree.add_variable("second", AtomicType.DOUBLE, ["huge"])
    classic = problems(tree, "NETCDF3_CLASSIC")
    assert classic[0].startswith("/first: 8589934592 bytes do not fit NETCDF3_CLASSIC")
    assert classic[1].startswith("/second: starts at byte 8589934") and "2 GiB" in classic[1]
    assert problems(tree, "NETCDF3_64BIT_OFFSET") == [
        "/first: 8589934592 bytes do not fit NETCDF3_64BIT_OFFSET (at most 4294967292 unless it is the last "
        "fixed-size variable)"
    ]
    assert problems(tree, "NETCDF3_64BIT_DATA") == []
    tree.add_dimension("toolong", 2**31)
    assert "/toolong: length 2147483648 does not fit NETCDF3_CLASSIC" in problems(tree, "NETCDF3_CLASSIC")[0]


class FailingSource(MemorySource):
    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        if variable.name == "b":
            raise RuntimeError("source broke")
        return super().read(variable, selection)


def test_a_failure_leaves_nothing_behind(tmp_path: Path) -> None:
    tree = Dataset()
    tree.add_dimension("x", 4)
    tree.add_variable("a", AtomicType.INT, ["x"])
    tree.add_variable("b", AtomicType.INT, ["x"])
    arrays = {"/a": np.arange(4, dtype="i4"), "/b": np.arange(4, dtype="i4")}
    target = tmp_path / "broken.nc"
    with pytest.raises(RuntimeError, match="source broke"):
        write_netcdf3(target, FailingSource(tree, arrays))
    assert list(tmp_path.iterdir()) == []
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        write_netcdf3(target, FailingSource(tree, arrays))
    assert target.read_bytes() == b"old"


class SyntheticSource(MemorySource):
    """Values computed on demand: the source itself holds nothing."""

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        grids = np.meshgrid(*(np.arange(s.start, s.stop) for s in selection), indexing="ij", sparse=True)
        total = sum(grids, np.zeros((), "f8"))
        return np.broadcast_to(total, tuple(s.stop - s.start for s in selection)).astype(
            "f8" if variable.name == "fixed" else "f4"
        )


@pytest.mark.parametrize("kind", ["NETCDF3_CLASSIC", "NETCDF3_64BIT_DATA"])
def test_streaming_keeps_memory_bounded(tmp_path: Path, kind: str) -> None:
    tree = Dataset()
    tree.add_dimension("t", 200, unlimited=True)
    tree.add_dimension("y", 100)
    tree.add_dimension("x", 101)
    tree.add_dimension("n", 100)
    tree.add_variable("fixed", AtomicType.DOUBLE, ["n", "y", "x"])  # 8 MB
    tree.add_variable("r1", AtomicType.FLOAT, ["t", "y", "x"])  # 8 MB
    tree.add_variable("r2", AtomicType.FLOAT, ["t", "x"])
    written: list[int] = []
    max_memory = 256 << 10
    path = tmp_path / "big.nc"
    tracemalloc.start()
    try:
        write_netcdf3(path, SyntheticSource(tree, {}), kind, progress=written.append, max_memory=max_memory)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    data_bytes = 100 * 100 * 101 * 8 + 200 * (100 * 101 * 4 + 101 * 4)
    assert os.path.getsize(path) > 16 * max_memory
    assert sum(written) == data_bytes
    assert peak < 3 * max_memory
    with netCDF4.Dataset(path) as ds:
        assert ds.data_model == kind
        np.testing.assert_array_equal(ds["fixed"][99, 5, :], 99 + 5 + np.arange(101))
        np.testing.assert_array_equal(ds["r1"][199, 99, :3], 199 + 99 + np.arange(3))
        np.testing.assert_array_equal(ds["r2"][150, :], 150 + np.arange(101))


def test_records_larger_than_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "sample.nc"
    make_netcdf4_file(path, "NETCDF3_CLASSIC")
    copy = rewrite(path, tmp_path, max_memory=7)
    assert copy.read_bytes() == path.read_bytes()


def test_cross_kind_conversion(tmp_path: Path) -> None:
    path = tmp_path / "sample.nc"
    make_netcdf4_file(path, "NETCDF3_CLASSIC")
    copy = rewrite(path, tmp_path, "NETCDF3_64BIT_DATA")
    expected = tmp_path / "expected.nc"
    make_netcdf4_file(expected, "NETCDF3_64BIT_DATA", CLASSIC_TYPES)
    assert copy.read_bytes() == expected.read_bytes()
    with netCDF4.Dataset(copy) as ds:
        assert ds.data_model == "NETCDF3_64BIT_DATA"


def test_char_attributes_keep_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "raw.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.setncattr("raw", b"\xff\xfeab")
        ds.setncattr("nul", "a\x00b")  # netCDF4 reads this back as 'ab'
    with Netcdf3Reader(path) as reader:
        assert [(a.name, a.values) for a in reader.dataset.attributes] == [("raw", "\udcff\udcfeab"), ("nul", "a\x00b")]
    assert rewrite(path, tmp_path).read_bytes() == path.read_bytes()
