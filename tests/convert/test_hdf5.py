"""netCDF-4 files through h5netcdf: the reader against netCDF4 and ncdump on files netCDF4
wrote, and files the writer makes read back by netCDF4 and ncdump as the same dataset."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import h5py
import netCDF4
import numpy as np
import pytest

from nczarr import NCZarrError
from nczarr.convert.hdf5 import Hdf5Reader
from nczarr.convert.hdf5write import problems, write_hdf5
from nczarr.errors import Hdf5Error, MissingExtraError
from nczarr.formats import FormatError
from nczarr.model import AtomicType, DataModel, Group, Resolver, Variable, VlenType
from nczarr.values.storage import VariableStorage
from nczarr.values.types import compound_dtype, dtype_of

PRIMITIVES = ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8")


def make_sample(path: Path) -> None:
    """A netCDF-4 file with a bit of everything netCDF4 can write."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 4)
        ds.createDimension("rec", None)
        ds.createDimension("n", 32)
        ds.createDimension("strlen", 3)
        # attributes of every type
        for code in PRIMITIVES:
            ds.setncattr(f"att_{code}", np.array([1, 2, 100], code))
        ds.att_u8_big = np.uint64(2**63 + 5)
        ds.att_f4_one = np.float32(0.1)
        ds.att_nan = np.array([np.nan, np.inf, -1.5])
        ds.att_char = "hello"
        ds.att_empty = ""
        ds.att_unicode = "héllo"  # netCDF4 stores non-ASCII text as NC_STRING
        ds.setncattr_string("att_string", ["one", "two"])
        ds.setncattr_string("att_string1", "single")
        for code in PRIMITIVES:
            v = ds.createVariable(f"v_{code}", code, ("time", "x"))
            v[0:3] = np.arange(12).reshape(3, 4).astype(code)
            v.valid_min = np.array(0, code)
        ds["v_f4"].units = "K"
        # fill values
        ds.createVariable("fill_int", "i4", ("x",), fill_value=-99)[:2] = [1, 2]
        ds.createVariable("fill_nan", "f4", ("x",), fill_value=np.nan)[1:] = 1.5
        nofill = ds.createVariable("fill_off", "f8", ("x",), fill_value=False)
        nofill[:] = 3.0
        ds.createVariable("fill_default", "u2", ("x",))[0] = 4
        # text
        c = ds.createVariable("chars", "S1", ("x", "strlen"))
        c._Encoding = "utf-8"
        c[:] = netCDF4.stringtochar(np.array(["ab", "cde", "", "f"], "S3"))
        s = ds.createVariable("strings", str, ("x",))
        s[:] = np.array(["a", "héllo", "", "longer text"], dtype=object)
        # storage settings
        z = ds.createVariable("deflated", "f8", ("time", "x"), zlib=True, complevel=7, shuffle=True,
                              fletcher32=True, chunksizes=(2, 2))
        z[0:3] = np.arange(12.0).reshape(3, 4)
        ds.createVariable("contiguous", "i2", ("x",), contiguous=True)[:] = [1, 2, 3, 4]
        ds.createVariable("big", ">i4", ("x",), endian="big")[:] = [1, -2, 3, -4]
        sz = ds.createVariable("szipped", "f8", ("n",), compression="szip", szip_coding="nn",
                               szip_pixels_per_block=8)
        sz[:] = np.arange(32.0)
        # a second unlimited dimension, one variable shorter than the dimension
        ds.createVariable("long", "i4", ("rec",))[0:5] = np.arange(5)
        ds.createVariable("short", "i4", ("rec", "x"), fill_value=-1)[0:2] = 9
        ds.createVariable("scalar", "f8").assignValue(2.5)
        # user types
        enum = ds.createEnumType(np.int16, "level_t", {"low": -1, "mid": 0, "high": 300})
        ev = ds.createVariable("levels", enum, ("x",), fill_value=0)
        ev[:] = [-1, 0, 300, 0]
        rec = ds.createCompoundType(np.dtype([("a", "i2"), ("b", "f8"), ("c", "S1", (3,)), ("d", "u1", (2,))]),
                                    "rec_t")
        cv = ds.createVariable("records", rec, ("x",))
        data = np.zeros(4, rec.dtype)
        data["a"], data["b"] = [1, 2, 3, 4], [0.5, 1.5, 2.5, 3.5]
        data["c"] = [[b"x", b"y", b"z"]] * 4
        data["d"] = [[1, 2]] * 4
        cv[:] = data
        vl = ds.createVLType(np.int32, "ragged_t")
        vv = ds.createVariable("ragged", vl, ("x",))
        for i in range(4):
            vv[i] = np.arange(i, dtype="i4")
        # groups: dimensions and types of ancestors
        g = ds.createGroup("g")
        g.createDimension("y", 2)
        g.title = "group g"
        genum = g.createEnumType(np.uint8, "flag_t", {"off": 0, "on": 1})
        h = g.createGroup("h")
        hv = h.createVariable("hv", "u8", ("y", "x"))
        hv[:] = 2**63 + 1
        hv.comment = "uses /x and /g/y"
        h.createVariable("flags", genum, ("y",))[:] = [1, 0]
        h.setncattr_string("names", ["p", "q"])


def make_classic(path: Path) -> None:
    """A NETCDF4_CLASSIC file."""
    with netCDF4.Dataset(path, "w", format="NETCDF4_CLASSIC") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        ds.title = "classic"
        ds.factor = np.float32(2.0)
        v = ds.createVariable("v", "i2", ("t", "x"), zlib=True, fill_value=-5)
        v[0:2] = [[1, 2, 3], [4, 5, 6]]
        v.units = "m"
        c = ds.createVariable("c", "S1", ("x",))
        c[:] = np.array([b"a", b"b", b"c"])


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hdf5") / "sample.nc"
    make_sample(path)
    return path


@pytest.fixture(scope="module")
def classic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hdf5") / "classic.nc"
    make_classic(path)
    return path


@pytest.fixture(scope="module")
def written(sample: Path) -> Path:
    """The sample read by Hdf5Reader and written by write_hdf5."""
    out = sample.with_name("written.nc")
    with Hdf5Reader(sample) as reader:
        write_hdf5(out, reader)
    return out


# -- what netCDF4 and ncdump say --------------------------------------------------------


def raw(variable: Any) -> Any:
    variable.set_auto_maskandscale(False)
    variable.set_auto_chartostring(False)
    return variable[...]


def netcdf4_groups(group: Any) -> list[Any]:
    found = [group]
    for child in group.groups.values():
        found += netcdf4_groups(child)
    return found


def ncdump(*args: str | Path) -> str:
    text = subprocess.run(["ncdump", *map(str, args)], capture_output=True, text=True, check=True).stdout
    return text.split("\n", 1)[1]  # the first line names the file


def describe(path: Path, exclude_filters: tuple[str, ...] = ()) -> dict[str, Any]:
    """Everything netCDF4 shows of a file, data included, as plain comparable values."""
    out: dict[str, Any] = {}
    with netCDF4.Dataset(path) as ds:
        out["data_model"] = ds.data_model
        for group in netcdf4_groups(ds):
            out[group.path] = {
                "dimensions": [(d.name, len(d), d.isunlimited()) for d in group.dimensions.values()],
                "types": {name: repr(t) for name, t in {**group.cmptypes, **group.enumtypes, **group.vltypes}.items()},
                "attributes": [(name, repr(group.getncattr(name))) for name in group.ncattrs()],
            }
            for name, v in group.variables.items():
                data = raw(v)
                out[f"{group.path}:{name}"] = {
                    "dims": v.dimensions,
                    "dtype": repr(v.datatype),
                    "attributes": [(a, repr(v.getncattr(a))) for a in v.ncattrs()],
                    "filters": None if name in exclude_filters else v.filters(),
                    "chunking": None if name in exclude_filters else v.chunking(),
                    "endian": v.endian(),
                    "data": repr(data.tolist() if isinstance(data, np.ndarray) and data.dtype != object else data),
                }
    return out


def string_attributes(header: str) -> list[str]:
    """The attributes ncdump shows as NC_STRING, in order (``var:name`` or ``:name``)."""
    return re.findall(r"^\s*string (\S*:\S+) =", header, re.MULTILINE)


# -- the reader --------------------------------------------------------------------------


def test_tree_is_what_netcdf4_shows(sample: Path) -> None:
    with Hdf5Reader(sample) as reader, netCDF4.Dataset(sample) as ds:
        assert reader.data_model == ds.data_model == "NETCDF4"
        assert reader.dataset.data_model is DataModel.ENHANCED
        groups = list(reader.dataset.walk())
        assert [g.fqn for g in groups] == [g.path for g in netcdf4_groups(ds)]
        resolver = Resolver()
        for node, group in zip(groups, netcdf4_groups(ds)):
            assert [(d.name, d.size, d.unlimited) for d in node.dimensions] == [
                (d.name, len(d), d.isunlimited()) for d in group.dimensions.values()
            ]
            assert [v.name for v in node.variables] == list(group.variables)
            assert [a.name for a in node.attributes] == group.ncattrs()
            for variable in node.variables:
                nc = group[variable.name]
                dims = [resolver.dimension(node, ref) for ref in variable.dimensions]
                assert tuple(d.name for d in dims) == nc.dimensions
                assert [a.name for a in variable.attributes] == nc.ncattrs()
                if variable.type is AtomicType.STRING:
                    assert nc.dtype is str
                elif isinstance(variable.type, AtomicType):
                    assert dtype_of(variable.type).str[1:] == nc.dtype.str[1:]
                else:
                    assert variable.type == nc.datatype.name
                for attribute in variable.attributes:
                    check_attribute(attribute.type, attribute.values, nc.getncattr(attribute.name))
            for attribute in node.attributes:
                check_attribute(attribute.type, attribute.values, group.getncattr(attribute.name))


def check_attribute(type: Any, values: Any, shown: Any) -> None:
    if type is AtomicType.CHAR:
        assert values == shown
    elif type is AtomicType.STRING:
        assert values == ([shown] if isinstance(shown, str) else shown)
    elif isinstance(type, AtomicType):
        shown = np.atleast_1d(shown)
        assert shown.dtype == dtype_of(type)
        expected = np.array(values, dtype_of(type))
        np.testing.assert_array_equal(expected, shown)
    else:
        np.testing.assert_array_equal(np.array(values), np.atleast_1d(shown))


def test_char_and_string_attributes_as_ncdump_shows_them(sample: Path) -> None:
    with Hdf5Reader(sample) as reader:
        strings = [
            f"{'' if isinstance(owner, Group) else owner.name}:{a.name}"
            for group in reader.dataset.walk()
            for owner in [*group.variables, group]
            for a in owner.attributes
            if a.type is AtomicType.STRING
        ]
        assert reader.dataset.find_attribute("att_char").type is AtomicType.CHAR
        assert reader.dataset.find_attribute("att_empty").values == ""
    assert strings == string_attributes(ncdump("-h", sample))
    assert ":att_unicode" in strings and ":att_string1" in strings


def test_text_attributes_other_writers_make(tmp_path: Path) -> None:
    import h5netcdf

    path = tmp_path / "h5netcdf.nc"
    with h5netcdf.File(path, "w") as f:
        f.dimensions = {"x": 3}
        f.create_variable("v", ("x",), "f4", fillvalue=np.float32(-1))[:] = [1, 2, 3]
        f.attrs["plain"] = "text"
        f.attrs["number"] = 5
    with h5py.File(path, "a") as f:  # fixed-length strings, as h5py writes byte arrays
        f.attrs["fixed"] = np.array([b"ab", b"cde"], "S3")
        f.attrs["fixed_one"] = np.array([b"ab"], "S2")
        f["v"].attrs["fixed_scalar"] = np.bytes_(b"abc")
    with Hdf5Reader(path) as reader, netCDF4.Dataset(path) as ds:
        for attribute in reader.dataset.attributes:
            check_attribute(attribute.type, attribute.values, ds.getncattr(attribute.name))
        assert reader.dataset.find_variable("v").find_attribute("fixed_scalar").type is AtomicType.CHAR
        strings = [f":{a.name}" for a in reader.dataset.attributes if a.type is AtomicType.STRING]
    assert strings == string_attributes(ncdump("-h", path)) == [":plain", ":fixed", ":fixed_one"]


def test_user_types_are_what_netcdf4_shows(sample: Path) -> None:
    with Hdf5Reader(sample) as reader, netCDF4.Dataset(sample) as ds:
        root = reader.dataset
        enum = root.find_type("level_t")
        assert {m.name: m.value for m in enum.members} == ds.enumtypes["level_t"].enum_dict
        assert dtype_of(enum.base) == ds.enumtypes["level_t"].dtype
        record = root.find_type("rec_t")
        assert compound_dtype(record) == ds.cmptypes["rec_t"].dtype
        assert [(f.name, f.type, f.shape) for f in record.fields][2] == ("c", AtomicType.CHAR, (3,))
        assert dtype_of(root.find_type("ragged_t").base) == ds.vltypes["ragged_t"].dtype
        flags = root.find_group("g").find_group("h").find_variable("flags")
        assert flags.type == "flag_t"  # defined in the parent group, found by its plain name
        assert root.find_group("g").find_type("flag_t") is not None


def expected_filters(storage: VariableStorage) -> dict[str, Any]:
    compression = storage.compression
    blosc = compression is not None and compression.startswith("blosc")
    return {
        "zlib": compression == "zlib",
        "szip": False,
        "zstd": compression == "zstd",
        "bzip2": compression == "bzip2",
        "blosc": {"compressor": compression, "shuffle": storage.blosc_shuffle} if blosc else False,
        "shuffle": storage.shuffle,
        "complevel": storage.complevel,
        "fletcher32": storage.fletcher32,
    }


def test_storage_is_what_netcdf4_reports(sample: Path) -> None:
    with Hdf5Reader(sample) as reader, netCDF4.Dataset(sample) as ds:
        checked = 0
        for group in reader.dataset.walk():
            nc_group = ds[group.fqn] if group.fqn != "/" else ds
            for variable in group.variables:
                nc = nc_group[variable.name]
                storage = reader.storage[variable.fqn]
                chunking = "contiguous" if storage.chunks is None else list(storage.chunks)
                assert chunking == nc.chunking(), variable.fqn
                assert storage.endian == nc.endian(), variable.fqn
                if variable.fqn == "/szipped":
                    assert nc.filters()["szip"] == {"coding": "nn", "pixels_per_block": 8}
                    assert reader.unsupported == {"/szipped": "szip compression"}
                else:
                    assert expected_filters(storage) == nc.filters(), variable.fqn
                checked += 1
        assert checked == sum(len(g.variables) for g in netcdf4_groups(ds))
        assert reader.storage["/deflated"] == VariableStorage(
            chunks=(2, 2), compression="zlib", complevel=7, shuffle=True, fletcher32=True, endian="little"
        )
        assert reader.storage["/big"].endian == "big"
        no_fill = {fqn for fqn, s in reader.storage.items() if not s.fill}
    # ncdump -s shows netcdf-c's no-fill flag
    shown = set(re.findall(r"^\s*(\S+):_NoFill = \"true\"", ncdump("-s", "-h", sample), re.MULTILINE))
    assert {fqn.rsplit("/", 1)[1] for fqn in no_fill} == shown == {"fill_off"}


def assert_same_data(mine: np.ndarray, theirs: Any) -> None:
    theirs = np.asarray(theirs)
    assert mine.shape == theirs.shape
    if mine.dtype == object:
        for a, b in zip(mine.ravel(), theirs.ravel()):
            np.testing.assert_array_equal(a, b)
    elif mine.dtype.fields is not None:
        assert mine.dtype.itemsize == theirs.dtype.itemsize and mine.dtype.names == theirs.dtype.names
        for name in mine.dtype.names:  # netCDF4 shows char fields as strings: compare bytes
            assert mine.dtype.fields[name][1] == theirs.dtype.fields[name][1]
            assert np.ascontiguousarray(mine[name]).tobytes() == np.ascontiguousarray(theirs[name]).tobytes()
    else:
        assert mine.dtype == theirs.dtype or mine.dtype.kind == "S"
        np.testing.assert_array_equal(mine, theirs)


def test_data_is_what_netcdf4_reads(sample: Path) -> None:
    with Hdf5Reader(sample) as reader, netCDF4.Dataset(sample) as ds:
        resolver = Resolver()
        for group in reader.dataset.walk():
            nc_group = ds[group.fqn] if group.fqn != "/" else ds
            for variable in group.variables:
                shape = [resolver.dimension(group, ref).size for ref in variable.dimensions]
                data = reader.read(variable, tuple(slice(0, n) for n in shape))
                assert_same_data(data, raw(nc_group[variable.name]))
        # a hyperslab, and the part of a variable beyond what it holds (fill values)
        short = reader.dataset.find_variable("short")
        assert_same_data(reader.read(short, (slice(1, 5), slice(1, 3))), raw(ds["short"])[1:5, 1:3])
        assert reader.read(short, (slice(3, 5), slice(0, 4))).tolist() == [[-1] * 4] * 2
        assert reader.read(reader.dataset.find_variable("big"), (slice(0, 4),)).dtype == np.dtype(">i4")
        assert reader.read(reader.dataset.find_variable("scalar"), ()).shape == ()


def test_padding_of_user_types_and_strings(tmp_path: Path) -> None:
    path = tmp_path / "padded.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("r", None)
        ds.createVariable("a", "i4", ("r",))[0:3] = 1  # the dimension grows to 3
        ds.createVariable("v", ds.createVLType(np.int32, "vl_t"), ("r",))[0] = np.array([1, 2], "i4")
        ds.createVariable("s", str, ("r",))[0] = "x"
        rec = ds.createCompoundType(np.dtype([("a", "i2"), ("b", "f8")]), "c_t")
        ds.createVariable("c", rec, ("r",))[0] = np.array((1, 2.0), rec.dtype)
    with Hdf5Reader(path) as reader, netCDF4.Dataset(path) as ds:
        for name in ("v", "s", "c"):
            assert_same_data(reader.read(reader.dataset.find_variable(name), (slice(0, 3),)), raw(ds[name]))


def test_classic_data_model(classic: Path) -> None:
    with Hdf5Reader(classic) as reader, netCDF4.Dataset(classic) as ds:
        assert reader.data_model == ds.data_model == "NETCDF4_CLASSIC"
        assert reader.dataset.data_model is DataModel.CLASSIC
        assert reader.dataset.find_attribute("title").type is AtomicType.CHAR
        assert reader.storage["/v"].compression == "zlib"


def test_dimensions_and_types_of_other_groups(tmp_path: Path) -> None:
    """A parent's dimension that the variable's own group hides (h5netcdf names dimensions
    only) and a type of another branch (ncgen allows it) read as ncdump shows them; what
    nczarr writes back (dimension scales attached by reference) dumps as netcdf-c's file."""
    cdl = tmp_path / "g.cdl"
    cdl.write_text(
        "netcdf g {\ndimensions: x = 2 ;\n"
        "group: g1 {\n types: compound c_t { int a ; } ;\n dimensions: x = 3 ;\n"
        " variables: int outer(/x) ; int inner(x) ;\n data: outer = 4, 5 ; inner = 1, 2, 3 ;\n}\n"
        "group: h {\n variables: c_t anywhere ;\n data: anywhere = {9} ;\n}\n}\n"
    )
    subprocess.run(["ncgen", "-4", "-o", str(tmp_path / "g.nc"), str(cdl)], check=True)
    with Hdf5Reader(tmp_path / "g.nc") as reader:
        variables = {v.fqn: v for g in reader.dataset.walk() for v in g.variables}
        assert variables["/g1/outer"].dimensions == ["/x"] and variables["/g1/inner"].dimensions == ["x"]
        assert variables["/h/anywhere"].type == "/g1/c_t"
        assert reader.read(variables["/g1/outer"], (slice(0, 2),)).tolist() == [4, 5]
        assert problems(reader.dataset) == []
        write_hdf5(tmp_path / "g2.nc", reader)
    assert ncdump(tmp_path / "g2.nc").replace("netcdf g2 {", "netcdf g {") == ncdump(tmp_path / "g.nc")


def test_errors_for_files_that_are_not_hdf5(tmp_path: Path) -> None:
    text = tmp_path / "text.nc"
    text.write_text("netcdf x {}")
    with pytest.raises(Hdf5Error, match="not a netCDF-4") as caught:
        Hdf5Reader(text)
    assert isinstance(caught.value, OSError) and isinstance(caught.value, NCZarrError)
    with pytest.raises(FileNotFoundError):
        Hdf5Reader(tmp_path / "missing.nc")


def test_filters_h5py_cannot_decode(tmp_path: Path) -> None:
    path = tmp_path / "zstd.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 4096)
        ds.createVariable("z", "f8", ("x",), compression="zstd", complevel=3)[:] = np.arange(4096.0)
        ds.createVariable("b", "f4", ("x",), compression="blosc_zstd", complevel=2, blosc_shuffle=2)[:] = 1
        ds.createVariable("q", "i4", ("x",), compression="bzip2", complevel=9)[:] = 2
        filters = {name: v.filters() for name, v in ds.variables.items()}
    with Hdf5Reader(path) as reader:
        for variable in reader.dataset.variables:
            assert expected_filters(reader.storage[variable.fqn]) == filters[variable.name]
        if not h5py.h5z.filter_avail(32015):
            with pytest.raises(Hdf5Error, match="cannot read /z"):
                reader.read(reader.dataset.find_variable("z"), (slice(0, 4096),))
            with pytest.raises(FormatError, match="no zstd filter"):
                write_hdf5(tmp_path / "out.nc", reader)
            assert sorted(p.name for p in tmp_path.iterdir()) == ["zstd.nc"]


# -- the writer --------------------------------------------------------------------------


def test_written_file_reads_the_same_in_netcdf4(sample: Path, written: Path) -> None:
    # szip has no writer here: the copy is not compressed (see Hdf5Reader.unsupported)
    assert describe(written, ("szipped",)) == describe(sample, ("szipped",))
    with netCDF4.Dataset(written) as ds:
        assert ds["szipped"].filters()["szip"] is False
        assert ds["deflated"].filters()["fletcher32"] is True


def test_written_file_dumps_the_same(sample: Path, written: Path) -> None:
    assert ncdump(written) == ncdump(sample)  # header and data
    special = ncdump("-s", "-h", sample).splitlines()
    mine = ncdump("-s", "-h", written).splitlines()
    # What differs: the library that wrote it, szip (not written), and vlen variables, for which
    # h5py cannot set an HDF5 fill value (netcdf-c then reports no fill).
    assert [line.strip() for line in sorted(set(special) - set(mine))] == [
        ':_NCProperties = "version=2,netcdf=4.10.1,hdf5=2.2.0" ;',
        'szipped:_Filter = "4,32,8" ;',
    ]
    extra = sorted(line.strip() for line in set(mine) - set(special))
    assert extra[0].startswith(":_NCProperties = \"version=2,nczarr=")
    assert extra[1:] == ['ragged:_NoFill = "true" ;']


def test_classic_round_trip(classic: Path, tmp_path: Path) -> None:
    out = tmp_path / "classic.nc"
    with Hdf5Reader(classic) as reader:
        write_hdf5(out, reader, "NETCDF4_CLASSIC")
    assert describe(out) == describe(classic)
    assert ncdump(out) == ncdump(classic)
    kind = subprocess.run(["ncdump", "-k", str(out)], capture_output=True, text=True, check=True).stdout
    assert kind.strip() == "netCDF-4 classic model"


def test_classic_refuses_what_the_classic_model_lacks(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "refused.nc"
    with Hdf5Reader(sample) as reader, pytest.raises(FormatError, match="classic data model"):
        write_hdf5(out, reader, "NETCDF4_CLASSIC")
    assert list(tmp_path.iterdir()) == []


def test_refuses_before_writing_what_h5netcdf_cannot_write(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "refused.nc"
    with Hdf5Reader(sample) as reader:
        reader.dataset.add(VlenType("strings_t", AtomicType.STRING))
        assert problems(reader.dataset) == ["/strings_t: h5py cannot write vlens of strings (NCZARR stores them)"]
        with pytest.raises(FormatError, match="/strings_t: h5py cannot write vlens of strings"):
            write_hdf5(out, reader)
    assert list(tmp_path.iterdir()) == []


class Recorder:
    """A source that passes everything through and records the blocks read."""

    def __init__(self, source: Hdf5Reader, fail_on: str | None = None) -> None:
        self.source, self.fail_on = source, fail_on
        self.dataset, self.storage, self.data_model = source.dataset, source.storage, source.data_model
        self.blocks: list[tuple[str, int]] = []

    def read(self, variable: Variable, selection: tuple[slice, ...]) -> np.ndarray:
        if variable.name == self.fail_on:
            raise RuntimeError("the source broke")
        data = self.source.read(variable, selection)
        self.blocks.append((variable.name, data.nbytes))
        return data

    def close(self) -> None:
        self.source.close()


def test_streams_in_blocks_with_progress(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "blocks.nc"
    done: list[int] = []
    with Hdf5Reader(sample) as reader:
        recorder = Recorder(reader)
        write_hdf5(out, recorder, progress=done.append, max_memory=16,
                   chunking=lambda v: {"v_i4": (1, 2), "fill_int": (100,)}.get(v.name))
        total = sum(
            int(np.prod([Resolver().dimension(g, r).size for r in v.dimensions]))
            for g in reader.dataset.walk() for v in g.variables
        )
    assert sum(done) == total
    fixed = [nbytes for name, nbytes in recorder.blocks if name.startswith("v_")]
    assert len(fixed) > 10 and max(fixed) <= 16
    assert describe(out, ("szipped", "v_i4", "fill_int")) == describe(sample, ("szipped", "v_i4", "fill_int"))
    with netCDF4.Dataset(out) as ds:
        assert ds["v_i4"].chunking() == [1, 2]
        assert ds["fill_int"].chunking() == [4]  # no larger than its fixed dimension


def test_a_failure_leaves_nothing(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "broken.nc"
    with Hdf5Reader(sample) as reader, pytest.raises(RuntimeError, match="the source broke"):
        write_hdf5(out, Recorder(reader, fail_on="records"))
    assert list(tmp_path.iterdir()) == []
    out.write_bytes(b"old")  # an existing file stays as it was
    with Hdf5Reader(sample) as reader, pytest.raises(RuntimeError):
        write_hdf5(out, Recorder(reader, fail_on="records"))
    assert out.read_bytes() == b"old" and len(list(tmp_path.iterdir())) == 1


def test_missing_extra_names_it(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "h5netcdf", None)
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'nczarr[hdf5]'")) as caught:
        Hdf5Reader(sample)
    assert isinstance(caught.value, ImportError) and isinstance(caught.value, NCZarrError)
    with pytest.raises(ImportError, match=re.escape("nczarr[hdf5]")):
        write_hdf5(tmp_path / "x.nc", object())  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


NETCDF_C_QUIRKS_CDL = r"""netcdf quirks {
types:
  opaque(3) blob ;
dimensions:
  n = 2 ;
variables:
  blob b(n) ;
  char c ;
    c:inner = "x\000y" ;
    c:trailing = "x\000" ;
data:
  b = 0xa1b2c3, 0x010203 ;
group: g {
  types:
    opaque(2) pair ;
  variables:
    pair p ;
  data:
    p = 0xbeef ;
  }
}
"""


def test_files_ncgen_writes_with_opaque_types_and_nul_bytes_read_as_ncdump_shows_them(tmp_path: Path) -> None:
    """h5netcdf alone fails on a committed opaque type, and HDF5's string conversion stops at
    a char attribute's first NUL: the reader passes over both as netcdf-c does."""
    (tmp_path / "quirks.cdl").write_text(NETCDF_C_QUIRKS_CDL)
    subprocess.run(["ncgen", "-k", "nc4", "-o", "quirks.nc", "quirks.cdl"], cwd=tmp_path, check=True)
    ours = subprocess.run(
        [sys.executable, "-m", "nczarr.cli", "dump", "quirks.nc"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert ours.split("\n", 1)[1] == ncdump(tmp_path / "quirks.nc")
