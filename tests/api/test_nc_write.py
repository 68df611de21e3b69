"""``nczarr.Dataset('x.nc', 'w')``: netCDF-4 files written as netCDF4 writes them, read back
by the real netCDF4 (netcdf-c 4.10.1) and ncdump; and files netCDF4 and ncgen wrote, carried
through nczarr's writer. Also file images in memory (``memory=``) and ``diskless``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import h5py
import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.convert.hdf5 import Hdf5Reader
from nczarr.convert.hdf5write import problems, write_hdf5
from nczarr.errors import ArgumentError, ContainerError
from nczarr.formats import FormatError
from nczarr.values.storage import VariableStorage

#: Names netCDF allows that no Zarr key or HDF5 path trick may mangle.
ODD_NAMES = ("a b", "a.b", "ünï", "1x", "_x", "x-y+z", "€ (%)")


def ncdump(*args: str | Path) -> str:
    return subprocess.run(["ncdump", *map(str, args)], check=True, capture_output=True, text=True).stdout


def build(module: ModuleType, path: Path, format: str) -> None:
    """The same dataset through ``module``'s API: every storage option netCDF4 has."""
    netcdf4 = format == "NETCDF4"
    with module.Dataset(path, "w", format=format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 4)
        ds.createDimension("s", 3)
        ds.title = "same"
        ds.createVariable("t", "f8", ("t",))[0:2] = [0, 1]
        ds.createVariable("x", "i4", ("x",))[:] = [1, 2, 3, 4]
        ds.createVariable("a", "f4", ("t", "x"), zlib=True, complevel=2, shuffle=True, fletcher32=True)[0:2] = 1
        ds.createVariable("b", ">i2", ("x",), endian="big", fill_value=5)[:2] = [1, 2]
        ds.createVariable("c", "i4", ("x",), chunksizes=(2,))[:] = 7
        ds.createVariable("d", "f8", ("x",), fill_value=False)[:] = 3
        ds.createVariable("e", "S1", ("x", "s"))[:] = np.array([list(b"abc")] * 4, "u1").view("S1")
        ds.createVariable("f", "f4", ("x",), contiguous=True)[:] = 2
        ds.createVariable("scalar", "i1", ())[...] = 3
        if netcdf4:
            ds.createVariable("u", "u8", ("x",))[:] = 2**63
            ds.createVariable("st", str, ("x",))[0] = "hï"
            group = ds.createGroup("g")
            group.createDimension("y", 2)
            group.createVariable("gy", "i4", ("y", "x"))[:] = 1
            group.setncattr_string("strings", ["a", "b"])


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF4_CLASSIC"])
def test_written_as_netcdf4_writes(tmp_path: Path, format: str) -> None:
    """The same calls through nczarr and through netCDF4 give files ``ncdump -s`` prints
    alike: data, types, layout (contiguous, chunks), filters, fill, byte order."""
    ours, theirs = tmp_path / "ours.nc", tmp_path / "theirs.nc"
    build(nczarr, ours, format)
    build(netCDF4, theirs, format)

    def dump(path: Path) -> list[str]:
        return [line for line in ncdump("-s", path).splitlines()[1:] if "_NCProperties" not in line]

    assert dump(ours) == dump(theirs)


def test_char_data_in_a_classic_file(tmp_path: Path) -> None:
    """netCDF-4 classic: char data (a coordinate too) is kept, not read back as fill."""
    path = tmp_path / "classic.nc"
    words = np.array([list(b"foo"), list(b"bar"), list(b"baz")], "u1").view("S1")
    with nczarr.Dataset(path, "w", format="NETCDF4_CLASSIC") as ds:
        ds.createDimension("x", 3)
        ds.createDimension("n", 3)
        ds.createVariable("x", "S1", ("x", "n"))[:] = words  # a char coordinate variable
        ds.createVariable("c", "S1", ("n",))[:] = np.array([b"a", b"b", b"c"])
    with netCDF4.Dataset(path) as ds:
        assert ds.data_model == "NETCDF4_CLASSIC"
        assert ds["x"][:].tolist() == words.tolist()
        assert ds["c"][:].tolist() == [b"a", b"b", b"c"]
    assert 'x =\n  "foo",\n  "bar",\n  "baz" ;' in ncdump(path)


def test_odd_names(tmp_path: Path) -> None:
    path = tmp_path / "names.nc"
    with nczarr.Dataset(path, "w") as ds:
        ds.createDimension("d im", 2)
        group = ds.createGroup("g r.p")
        for i, name in enumerate(ODD_NAMES):
            ds.createVariable(name, "i4", ("d im",))[:] = [i, i + 1]
            group.createVariable(name, "f8", ())[...] = i / 2
            ds.setncattr(f"{name} att", i)
    with netCDF4.Dataset(path) as ds:
        assert list(ds.variables) == list(ODD_NAMES)
        for i, name in enumerate(ODD_NAMES):
            assert ds[name][:].tolist() == [i, i + 1]
            assert ds["g r.p"][name][...] == i / 2
            assert ds.getncattr(f"{name} att") == i
    with nczarr.Dataset(path) as ds:
        assert list(ds.variables) == list(ODD_NAMES)
        assert ds["g r.p"]["a b"][...] == 0


@pytest.mark.parametrize("dims", [("t", "x"), ("t",), ()])
def test_variable_named_after_a_dimension_it_is_not_the_coordinate_of(tmp_path: Path, dims: tuple[str, ...]) -> None:
    """``x(t, x)``, ``x(t)`` and scalar ``x`` where dimension x exists: netCDF4 stores them as
    ``_nc4_non_coord_x``, next to the dimension scale ``x``; nczarr does the same."""
    ours, theirs = tmp_path / "ours.nc", tmp_path / "theirs.nc"
    shape = {"t": 2, "x": 3}
    values = np.arange(int(np.prod([shape[d] for d in dims]))).reshape([shape[d] for d in dims]).astype("f4")
    for module, path in ((nczarr, ours), (netCDF4, theirs)):
        with module.Dataset(path, "w") as ds:
            ds.createDimension("t", 2)
            ds.createDimension("x", 3)
            ds.createVariable("x", "f4", dims)[...] = values
            ds.createVariable("y", "i2", ("x",))[:] = [1, 2, 3]
    with h5py.File(ours) as f, h5py.File(theirs) as g:
        assert sorted(f) == sorted(g) == ["_nc4_non_coord_x", "t", "x", "y"]
    assert ncdump(ours).replace("netcdf ours", "netcdf theirs") == ncdump(theirs)
    for path in (ours, theirs):
        with netCDF4.Dataset(path) as ds, nczarr.Dataset(path) as mine:
            assert ds["x"].dimensions == mine["x"].dimensions == dims
            assert np.array_equal(ds["x"][...], values) and np.array_equal(mine["x"][...], values)
            assert mine["y"][:].tolist() == [1, 2, 3]


@pytest.mark.parametrize("compression", ["zstd", "bzip2", "blosc_lz4", "blosc_zstd", "zlib"])
def test_compression_through_hdf5_plugins(tmp_path: Path, compression: str) -> None:
    """zstd, bzip2 and Blosc through hdf5plugin's filters: netCDF4 (whose wheel has the
    plugins) reads the values and the same filter settings back, and ncdump -s shows the
    settings it shows for netCDF4's own file."""
    path = tmp_path / f"{compression}.nc"
    values = np.arange(200, dtype="f4").reshape(10, 20)
    script = (
        "import sys, numpy as np, nczarr\n"
        "with nczarr.Dataset(sys.argv[1], 'w') as ds:\n"
        "    ds.createDimension('y', 10)\n"
        "    ds.createDimension('x', 20)\n"
        "    v = ds.createVariable('v', 'f4', ('y', 'x'), compression=sys.argv[2], complevel=5, shuffle=True)\n"
        "    v[:] = np.arange(200, dtype='f4').reshape(10, 20)\n"
    )
    # Blosc's HDF5 filter calls HDF5 back when a dataset is made, and resolves that to the
    # HDF5 library loaded first: netCDF4's, once netcdf-c has loaded its own plugins in this
    # process (other tests read NCZarr through netCDF4). A fresh process writes as users do.
    subprocess.run([sys.executable, "-c", script, str(path), compression], check=True)
    theirs = tmp_path / "theirs.nc"
    with netCDF4.Dataset(theirs, "w") as ds:
        ds.createDimension("y", 10)
        ds.createDimension("x", 20)
        ds.createVariable("v", "f4", ("y", "x"), compression=compression, complevel=5, shuffle=True)[:] = values
        expected = ds["v"].filters()
    with netCDF4.Dataset(path) as ds:
        assert np.array_equal(ds["v"][:], values)
        assert ds["v"].filters() == expected
    with nczarr.Dataset(path) as ds:
        assert np.array_equal(ds["v"][:], values)
        assert ds["v"].filters() == expected

    def settings(path: Path) -> list[str]:
        lines = [line.strip() for line in ncdump("-s", "-h", path).splitlines() if line.strip().startswith("v:")]
        # Blosc's filter writes its own revision and format numbers first: hdf5plugin's
        # are 2, 2, netcdf-c's plugin leaves 0, 0 (either reads the other's data)
        return [re.sub(r'"32001,\d+,\d+,', '"32001,_,_,', line) for line in lines]

    assert settings(path) == settings(theirs)


def test_missing_hdf5_plugins_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without hdf5plugin (and no filter in HDF5), the error names the package to install,
    and nothing is written."""
    import nczarr.convert.hdf5write as hdf5write

    monkeypatch.setitem(sys.modules, "hdf5plugin", None)
    monkeypatch.setattr(hdf5write, "_REGISTERED", set())
    available = h5py.h5z.filter_avail

    def without(code: int) -> bool:
        return code == 1 and available(code)

    monkeypatch.setattr(h5py.h5z, "filter_avail", without)
    with Hdf5Reader(_one_variable(tmp_path / "in.nc")) as reader:
        storage = {"/v": VariableStorage(chunks=(4,), compression="zstd", complevel=3)}
        assert problems(reader.dataset, storage=storage) == [
            "/v: HDF5 has no zstd filter here; install the HDF5 plugins: pip install hdf5plugin"
        ]
        with pytest.raises(FormatError, match="pip install hdf5plugin"):
            write_hdf5(tmp_path / "out.nc", reader, storage=storage)
    assert sorted(os.listdir(tmp_path)) == ["in.nc"]


def _one_variable(path: Path) -> Path:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 4)
        ds.createVariable("v", "i4", ("x",))[:] = [1, 2, 3, 4]
    return path


@pytest.mark.parametrize("fill", [None, "zz", False])
def test_vlen_strings_with_and_without_fill_values(tmp_path: Path, fill: str | bool | None) -> None:
    path = tmp_path / "strings.nc"
    with nczarr.Dataset(path, "w") as ds:
        ds.createDimension("x", 3)
        v = ds.createVariable("s", str, ("x",), fill_value=fill)
        v[1] = "écrit"
    with netCDF4.Dataset(path) as ds:
        expected = {None: "", "zz": "zz", False: ""}[fill]
        assert ds["s"][:].tolist() == [expected, "écrit", expected]


@pytest.mark.filterwarnings("ignore:WARNING. variable 'blob' has unsupported datatype")  # netCDF4-python's
def test_dimensions_and_types_of_other_groups_and_opaque_types(tmp_path: Path) -> None:
    """What h5netcdf could not write, written through h5py as netcdf-c lays it out: a parent's
    dimension hidden by the group's own (netcdf-c's scope case), a type of another branch,
    opaque types: ncdump shows the copy as it shows ncgen's file."""
    cdl = tmp_path / "scope.cdl"
    cdl.write_text(
        "netcdf scope {\ndimensions: x = 2 ;\n"
        "group: g1 {\n types: compound c_t { int a ; } ; opaque(3) op_t ;\n dimensions: x = 3 ;\n"
        " variables: int outer(/x) ; int inner(x) ; op_t blob(x) ;\n  blob:kind = \"raw\" ;\n"
        " data: outer = 4, 5 ; inner = 1, 2, 3 ; blob = 0XAABBCC, 0X010203, 0X040506 ;\n}\n"
        "group: h {\n variables: c_t anywhere ;\n data: anywhere = {9} ;\n}\n}\n"
    )
    original, copy = tmp_path / "scope.nc", tmp_path / "copy.nc"
    subprocess.run(["ncgen", "-4", "-o", str(original), str(cdl)], check=True)
    with Hdf5Reader(original) as reader:
        assert problems(reader.dataset) == []
        write_hdf5(copy, reader)
    assert ncdump(copy).replace("netcdf copy", "netcdf scope") == ncdump(original)
    with netCDF4.Dataset(copy) as ds:
        assert ds["/g1/outer"].dimensions == ("x",) and len(ds.dimensions["x"]) == 2
        assert ds["/h/anywhere"][...].tolist() == (9,)


def test_compound_fields_of_enum_opaque_and_compound_types(tmp_path: Path) -> None:
    cdl = tmp_path / "fields.cdl"
    cdl.write_text(
        "netcdf fields {\ntypes:\n byte enum e_t {a = 1, b = 2} ;\n opaque(2) o_t ;\n"
        " compound in_t { e_t e ; short s ; } ;\n compound c_t { e_t f ; int g ; o_t o ; in_t n ; e_t arr(2) ; } ;\n"
        "dimensions: x = 2 ;\nvariables:\n c_t v(x) ;\n  c_t v:att = {b, 4, 0X0102, {a, 7}, {a, b}} ;\n"
        "data:\n v = {a, 3, 0XAABB, {b, 5}, {b, a}}, {b, 9, 0XCCDD, {a, 6}, {a, a}} ;\n}\n"
    )
    original, copy = tmp_path / "fields.nc", tmp_path / "copy.nc"
    subprocess.run(["ncgen", "-4", "-o", str(original), str(cdl)], check=True)
    with Hdf5Reader(original) as reader:
        write_hdf5(copy, reader)
    assert ncdump(copy).replace("netcdf copy", "netcdf fields") == ncdump(original)


def test_refused_before_anything_is_written(tmp_path: Path) -> None:
    """Vlens of vlens (h5py fails on their values, and crashes on a scalar's): refused by
    name, no file left behind."""
    subprocess.run(["ncgen", "-4", "-o", str(tmp_path / "in.nc"), str(vlens_of_vlens(tmp_path))], check=True)
    with Hdf5Reader(tmp_path / "in.nc") as reader, pytest.raises(FormatError, match="/vv_t: h5py cannot write vlens of vlens"):
        write_hdf5(tmp_path / "out.nc", reader)
    assert sorted(os.listdir(tmp_path)) == ["in.nc", "vv.cdl"]


def vlens_of_vlens(folder: Path) -> Path:
    cdl = folder / "vv.cdl"
    cdl.write_text("netcdf vv {\ntypes:\n int(*) v_t ;\n v_t(*) vv_t ;\nvariables:\n vv_t s ;\ndata:\n s = {{1, 2}, {3}} ;\n}\n")
    return cdl


# -- file images in memory and diskless datasets --------------------------------------------


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF4_CLASSIC", "NETCDF3_CLASSIC", "NETCDF3_64BIT_DATA"])
def test_file_images_in_memory(tmp_path: Path, format: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mode='w', memory=N`` gives the file image at close (a memoryview, as netCDF4), which
    ``memory=`` opens read-only, in netCDF4 as in nczarr; nothing touches the disk."""
    monkeypatch.chdir(tmp_path)
    ds = nczarr.Dataset("image", "w", memory=1024, format=format)
    ds.createDimension("x", 3)
    ds.createVariable("v", "i2", ("x",))[:] = [1, 2, 3]
    ds.title = "in memory"
    image = ds.close()
    assert isinstance(image, memoryview)
    assert os.listdir(tmp_path) == []
    for module in (netCDF4, nczarr):
        with module.Dataset("image", memory=image) as opened:
            assert opened["v"][:].tolist() == [1, 2, 3] and opened.title == "in memory"
            assert opened.data_model == format
            assert opened.disk_format == ("NETCDF3" if format.startswith("NETCDF3") else "HDF5")
            with pytest.raises((AttributeError, RuntimeError)):
                opened.history = "no"  # read-only, as netCDF4's
    theirs = netCDF4.Dataset("theirs", "w", memory=1024, format=format)
    theirs.createDimension("x", 2)
    with nczarr.Dataset("theirs", memory=bytes(theirs.close())) as opened:
        assert list(opened.dimensions) == ["x"]


def test_memory_is_refused_clearly() -> None:
    with pytest.raises(ArgumentError, match="mode must be 'r' or 'w'"):
        nczarr.Dataset("image", "a", memory=b"CDF\x01")
    with pytest.raises(ContainerError, match="no netCDF-3 or netCDF-4 file image"):
        nczarr.Dataset("image", memory=b"not a netCDF file")
    with pytest.raises(ArgumentError, match="bytes-like"):
        nczarr.Dataset("image", memory=12)


def test_diskless_and_persist(tmp_path: Path) -> None:
    """As netCDF4: diskless writes nothing, unless persist; an update in diskless mode is
    lost unless persist."""
    gone, kept = tmp_path / "gone.nc", tmp_path / "kept.nc"
    for path, persist in ((gone, False), (kept, True)):
        with nczarr.Dataset(path, "w", diskless=True, persist=persist) as ds:
            ds.createDimension("x", 2)
    assert not gone.exists()
    with nczarr.Dataset(kept, "a", diskless=True) as ds:
        ds.createDimension("lost", 1)
    with nczarr.Dataset(kept, "a", diskless=True, persist=True) as ds:
        ds.createDimension("y", 3)
    with netCDF4.Dataset(kept) as ds:
        assert list(ds.dimensions) == ["x", "y"]
    assert sorted(os.listdir(tmp_path)) == ["kept.nc"]
