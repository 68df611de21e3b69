"""Virtual datasets (nczarr.convert.virtual): files made by netCDF4 and h5py, every storage
case, read through the references and compared element for element with netCDF4 reading
the originals."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import h5py
import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.cli import main
from nczarr.convert.virtual import VirtualOptions, export_kerchunk, refresh, stale_sources, virtualize
from nczarr.errors import CodecError, NCZarrError, ReadOnlyError, StaleReferenceError
from nczarr.store import open_store, remove_tree
from nczarr.store.references import ReferenceStore

#: What ncrcat adds to the files it concatenates (the oracle of combined files).
NCRCAT_ATTRIBUTES = frozenset({"history", "nco_openmp_thread_number", "cell_methods", "NCO"})


def assert_same(virtual: str, original: str, *, ignore: frozenset[str] = frozenset()) -> None:
    """Every variable's values, mask and attributes (but those named in ``ignore``), every
    group, as netCDF4 reads the file."""
    with nczarr.Dataset(virtual) as ours, netCDF4.Dataset(original) as theirs:
        _same_group(ours, theirs, ignore)


def _attributes(node, ignore: frozenset[str]) -> dict:
    return {k: _attr(node.getncattr(k)) for k in node.ncattrs() if k not in ignore}


def _same_group(ours, theirs, ignore: frozenset[str] = frozenset()) -> None:
    assert sorted(ours.dimensions) == sorted(theirs.dimensions)
    for name, dim in theirs.dimensions.items():
        assert len(ours.dimensions[name]) == len(dim), name
        assert ours.dimensions[name].isunlimited() == dim.isunlimited()
    assert _attributes(theirs, ignore) == _attributes(ours, ignore)
    assert sorted(ours.variables) == sorted(theirs.variables)
    for name, variable in theirs.variables.items():
        mine = ours.variables[name]
        assert _attributes(variable, ignore) == _attributes(mine, ignore), name
        expected, got = variable[...], mine[...]
        if np.ma.isMaskedArray(expected) or np.ma.isMaskedArray(got):
            assert np.array_equal(np.ma.getmaskarray(expected), np.ma.getmaskarray(got)), name
        e, g = np.ma.getdata(expected), np.ma.getdata(got)
        if e.dtype.kind == "f":
            assert np.array_equal(e, g, equal_nan=True), name
        elif e.dtype.fields is not None:
            assert all(np.array_equal(e[f], np.asarray(g)[f]) for f in e.dtype.names), name
        elif e.dtype.kind == "O":
            assert [str(x) for x in e.ravel()] == [str(x) for x in np.asarray(g).ravel()], name
        else:
            assert e.tobytes() == np.asarray(g).astype(e.dtype).tobytes(), name
    assert sorted(ours.groups) == sorted(theirs.groups)
    for name, group in theirs.groups.items():
        _same_group(ours.groups[name], group, ignore)


def _attr(value):
    return np.asarray(value).tolist() if not isinstance(value, str) else value


@pytest.fixture
def netcdf4_file(tmp_path):
    """netCDF-4: chunks with deflate, shuffle, Fletcher-32; contiguous; big-endian; scalar;
    strings; groups; an unlimited dimension other variables grew; fills; user types."""
    path = str(tmp_path / "n4.nc")
    with netCDF4.Dataset(path, "w") as d:
        d.title = "virtual"
        d.createDimension("t", None)
        d.createDimension("x", 10)
        d.createDimension("y", 7)
        v = d.createVariable("v", "f4", ("t", "x", "y"), zlib=True, shuffle=True, fletcher32=True, chunksizes=(2, 4, 7))
        v[:] = np.arange(5 * 10 * 7, dtype="f4").reshape(5, 10, 7)
        v.units = "K"
        d.createVariable("c", "i2", ("x",), contiguous=True)[:] = np.arange(10)
        d.createVariable("big", ">i4", ("x", "y"), endian="big", zlib=True)[:] = np.arange(70).reshape(10, 7)
        d.createVariable("sc", "f8").assignValue(3.5)
        d.createVariable("s", str, ("x",))[:] = np.array([f"s{i}" for i in range(10)], object)
        short = d.createVariable("short", "f4", ("t", "x"), chunksizes=(2, 10), fill_value=-1.0)
        short[:3] = 1.0  # 3 of 5 records: the last chunk runs past the HDF5 dataset
        d.createVariable("nofill", "i8", ("t",), chunksizes=(2,))[0] = 4
        packed = d.createVariable("packed", "i2", ("x",), zlib=True)
        packed.scale_factor, packed.add_offset, packed.missing_value = 0.5, 10.0, np.int16(-99)
        packed.set_auto_maskandscale(False)
        packed[:] = np.array([1, 2, -99, 4, 5, 6, 7, 8, 9, 10], "i2")
        g = d.createGroup("g")
        g.createDimension("z", 3)
        g.createVariable("w", "u1", ("z",), fill_value=7)[:2] = [1, 2]
        compound = d.createCompoundType(np.dtype([("a", "<i4"), ("b", "<f8")]), "pair")
        g.createVariable("pairs", compound, ("z",))[:] = np.array([(1, 2.0), (3, 4.0), (5, 6.0)], compound.dtype)
        enum = d.createEnumType("u1", "colour", {"red": 0, "green": 1})
        d.createVariable("e", enum, ("x",), fill_value=1)[:4] = np.array([0, 1, 0, 1], "u1")
        vlen = d.createVLType("i4", "ragged")
        r = d.createVariable("r", vlen, ("y",))
        for i in range(7):
            r[i] = np.arange(i, dtype="i4")
    return path


@pytest.fixture
def h5py_file(tmp_path):
    """h5py's own: compact storage, a filter without a codec (lzf), HDF5 fill values
    without _FillValue, a dataset without dimension scales."""
    path = str(tmp_path / "h5.nc")
    with h5py.File(path, "w") as f:
        f.create_dataset("plain", data=np.arange(12, dtype="<f8").reshape(3, 4))
        f.create_dataset("filled", shape=(20,), dtype="f4", chunks=(5,), fillvalue=42.0)[:5] = 1
        f.create_dataset("zeros", shape=(20,), dtype="i2", chunks=(5,))[5:10] = 3
        f.create_dataset("be", data=np.arange(6, dtype=">f8"), chunks=(2,), compression="gzip", shuffle=True)
        space = h5py.h5s.create_simple((4,))
        plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        plist.set_layout(h5py.h5d.COMPACT)
        compact = h5py.h5d.create(f.id, b"compact", h5py.h5t.NATIVE_INT32, space, dcpl=plist)
        compact.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(4, dtype="i4"))
    return path


@pytest.fixture(params=["NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA"])
def netcdf3_file(tmp_path, request):
    path = str(tmp_path / "n3.nc")
    with netCDF4.Dataset(path, "w", format=request.param) as d:
        d.history = "made by netCDF4"
        d.createDimension("t", None)
        d.createDimension("x", 3)
        d.createDimension("n", 5)
        a = d.createVariable("a", "f8", ("t", "x"), fill_value=-9.0)
        a[:] = np.arange(12.0).reshape(4, 3)
        a[2, 1] = np.ma.masked
        d.createVariable("b", "i2", ("t",))[:] = [1, 2, 3, 4]
        d.createVariable("f", "S1", ("x",))[:] = np.array([b"a", b"b", b"c"])
        d.createVariable("z", "i4", ("x",))[:] = [5, 6, 7]
        d.createVariable("text", "S1", ("t", "n"))[:] = netCDF4.stringtochar(np.array(["ab", "cde", "", "fghij"], "S5"))
        d.createVariable("one", "f4", ("t",))[:2] = [1.5, 2.5]
        if request.param == "NETCDF3_64BIT_DATA":
            d.createVariable("u", "u8", ("x",))[:] = [1, 2, 2**63]
    return path


def test_netcdf4_every_case(netcdf4_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    report = virtualize([netcdf4_file], target)
    assert_same(target, netcdf4_file)
    assert report.referenced["/v"] == 9  # 3 x 3 chunks of (2, 4, 7) over (5, 10, 7)
    assert "/s" in report.copied and "/r" in report.copied  # strings and vlens have no fixed bytes
    assert "/short" in report.inlined  # the chunk past the end of its HDF5 dataset
    assert {"/e", "/big", "/sc", "/c", "/packed"} <= set(report.referenced)  # enum, big-endian, scalar
    assert "padding" in report.copied["/g/pairs"]  # HDF5 aligns the members: Zarr's records are packed
    with nczarr.Dataset(target) as d:
        assert d["v"].filters()["fletcher32"] and d["v"].filters()["zlib"]
        assert d["v"].chunking() == [2, 4, 7]


def test_netcdf4_chunk_keys_are_references(netcdf4_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    virtualize([netcdf4_file], target)
    store = open_store(target)
    assert isinstance(store, ReferenceStore)
    referenced = [key for key in store.references if key.startswith("v/")]
    assert len(referenced) == 9
    url, offset, length = store.references[referenced[0]]
    assert url == os.path.abspath(netcdf4_file) and offset > 0 and length > 0
    assert not os.path.exists(os.path.join(target, referenced[0]))  # nothing copied
    store.close()


def test_h5py_cases(h5py_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    report = virtualize([h5py_file], target)
    assert_same(target, h5py_file)
    assert "compact" in report.copied["/compact"]
    assert report.referenced["/be"] == 3
    assert "/zeros" in report.inlined or "/filled" in report.inlined  # HDF5 fills unlike the Zarr fill


def test_filter_without_codec_copied(tmp_path):
    path = str(tmp_path / "lzf.nc")
    with h5py.File(path, "w") as f:  # lzf: h5py's filter, which netcdf-c cannot read and Zarr has no codec for
        f.create_dataset("lzf", data=np.arange(100, dtype="i4"), compression="lzf", chunks=(10,))
    target = str(tmp_path / "v.zarr")
    report = virtualize([path], target)
    assert "32000" in report.copied["/lzf"]
    with nczarr.Dataset(target) as d, h5py.File(path) as f:
        assert d["lzf"][:].tolist() == f["lzf"][:].tolist()


def test_plugin_filters_referenced(tmp_path):
    path = str(tmp_path / "plugins.nc")
    data = np.arange(1000.0)
    # in a process of its own, without the HDF5_PLUGIN_PATH netCDF4 sets when imported: its
    # bundled Blosc plugin, found there first, fails where hdf5plugin's works
    script = """if True:
        import sys, h5py, hdf5plugin, numpy as np
        with h5py.File(sys.argv[1], "w") as f:
            data = np.arange(1000.0)
            f.create_dataset("zstd", data=data, chunks=(100,), **hdf5plugin.Zstd())
            f.create_dataset("blosc", data=data, chunks=(100,), **hdf5plugin.Blosc(cname="lz4", shuffle=hdf5plugin.Blosc.SHUFFLE))
            f.create_dataset("bzip2", data=data, chunks=(100,), **hdf5plugin.BZip2())
    """
    environment = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    subprocess.run([sys.executable, "-c", script, path], check=True, env=environment)
    for target, export in ((str(tmp_path / "v.zarr"), virtualize), (str(tmp_path / "k.json"), export_kerchunk)):
        report = export([path], target)
        assert report.referenced == {"/blosc": 10, "/bzip2": 10, "/zstd": 10} and not report.copied
        with nczarr.Dataset(target) as d:
            for name in ("zstd", "blosc", "bzip2"):
                assert np.array_equal(d[name][:], data), name


def test_netcdf3(netcdf3_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    report = virtualize([netcdf3_file], target)
    assert_same(target, netcdf3_file)
    assert report.referenced["/a"] == 4  # one record per chunk
    assert not report.copied
    with nczarr.Dataset(target) as d:
        assert d["a"].chunking() == [1, 3]


def test_contiguous_split_into_chunks(tmp_path):
    path = str(tmp_path / "big.nc")
    with netCDF4.Dataset(path, "w") as d:
        d.createDimension("x", 1000)
        d.createDimension("y", 30)
        d.createVariable("v", "f8", ("x", "y"), contiguous=True)[:] = np.arange(30000.0).reshape(1000, 30)
    target = str(tmp_path / "v.zarr")
    report = virtualize([path], target, VirtualOptions(contiguous_chunk_bytes=2400))  # 10 rows a chunk
    assert report.referenced["/v"] == 100
    assert_same(target, path)
    odd = str(tmp_path / "odd.zarr")
    report = virtualize([path], odd, VirtualOptions(contiguous_chunk_bytes=7 * 240))  # 7 rows: a tail of 6
    assert report.referenced["/v"] == 142 and "shorter than a chunk" in report.inlined["/v"]
    assert_same(odd, path)


def test_shuffled_checksum_of_wide_elements_copied(tmp_path):
    path = str(tmp_path / "f8.nc")
    with netCDF4.Dataset(path, "w") as d:
        d.createDimension("x", 100)
        d.createVariable("v", "f8", ("x",), zlib=True, shuffle=True, fletcher32=True, chunksizes=(10,))[:] = np.arange(100.0)
        d.createVariable("w", "i2", ("x",), shuffle=True, fletcher32=True, chunksizes=(10,))[:] = np.arange(100)
    target = str(tmp_path / "v.zarr")
    report = virtualize([path], target)
    assert "Fletcher-32" in report.copied["/v"] and report.referenced["/w"] == 10
    assert_same(target, path)


def test_fletcher32_is_checked(netcdf4_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    virtualize([netcdf4_file], target)
    store = open_store(target)
    _, offset, length = store.references["v/c.0.0.0"]
    store.close()
    stat = os.stat(netcdf4_file)
    with open(netcdf4_file, "r+b") as f:  # one byte of the chunk's deflated data
        f.seek(offset + length // 2)
        byte = f.read(1)
        f.seek(offset + length // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(netcdf4_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the identity stays: only the checksum tells
    with nczarr.Dataset(target) as d, pytest.raises(CodecError):
        d["v"][0]


def test_replaced_source_refused(netcdf3_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    virtualize([netcdf3_file], target)
    assert stale_sources(target) == []
    with netCDF4.Dataset(netcdf3_file, "a") as d:
        d["z"][:] = [0, 0, 0]
        d.createDimension("extra", 2)
    with nczarr.Dataset(target) as d, pytest.raises(StaleReferenceError, match="n3.nc"):
        d["z"][:]
    assert len(stale_sources(target)) == 1
    refresh(target)
    with nczarr.Dataset(target) as d:
        assert d["z"][:].tolist() == [0, 0, 0]


def test_virtual_dataset_is_read_only(netcdf3_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    virtualize([netcdf3_file], target)
    with pytest.raises(ReadOnlyError, match="virtual dataset"):
        nczarr.Dataset(target, "a")


def test_copy_materializes(netcdf4_file, tmp_path):
    target = str(tmp_path / "v.zarr")
    virtualize([netcdf4_file], target)
    copied = str(tmp_path / "copy.nc")
    assert main(["copy", target, copied]) == 0
    assert_same(copied, netcdf4_file)


def test_cli(netcdf3_file, tmp_path, capsys):
    target = str(tmp_path / "v.zarr")
    assert main(["virtualize", "--report", netcdf3_file, target]) == 0
    assert "referenced /a: 4 chunk(s)" in capsys.readouterr().out
    assert main(["virtualize", "--check", target]) == 0
    os.utime(netcdf3_file, (1, 1))
    assert main(["virtualize", "--check", target]) == 1
    assert "changed" in capsys.readouterr().out
    assert main(["dump", target]) == 1  # refused: stale
    assert "changed since" in capsys.readouterr().err
    assert main(["virtualize", "--refresh", target]) == 0
    assert main(["dump", target]) == 0
    out = str(tmp_path / "k.json")
    assert main(["virtualize", "--kerchunk", out, netcdf3_file]) == 0
    with open(out) as file:
        assert json.load(file)["version"] == 1


def test_refusals(tmp_path):
    not_netcdf = tmp_path / "x.nc"
    not_netcdf.write_bytes(b"hello")
    with pytest.raises(NCZarrError):
        virtualize([str(not_netcdf)], str(tmp_path / "v.zarr"))
    assert not (tmp_path / "v.zarr").exists()
    assert main(["virtualize", str(not_netcdf)]) != 0


def test_kerchunk_export_read_by_nczarr(netcdf4_file, netcdf3_file, tmp_path):
    out = str(tmp_path / "k.json")
    export_kerchunk([netcdf4_file], out, VirtualOptions(format="NCZARR"))
    assert_same(out, netcdf4_file)
    out = str(tmp_path / "k.parq")
    export_kerchunk([netcdf3_file], out, VirtualOptions(format="NCZARR_V2"))
    assert_same(out, netcdf3_file)
    with pytest.raises(NCZarrError, match="Zarr v2"):
        export_kerchunk([netcdf4_file], str(tmp_path / "v3.parq"), VirtualOptions(format="NCZARR"))


def _records_file(
    path: str, start: int, count: int, *, scale: float = 0.5, format: str = "NETCDF4", chunk: int = 2, level: int = 4
) -> str:
    with netCDF4.Dataset(path, "w", format=format) as d:
        d.createDimension("t", None)
        d.createDimension("x", 4)
        netcdf4 = format == "NETCDF4"
        d.createVariable("t", "f8", ("t",), **({"chunksizes": (1,)} if netcdf4 else {}))[:] = np.arange(start, start + count)
        storage = {"zlib": True, "complevel": level, "chunksizes": (chunk, 4)} if netcdf4 else {}
        v = d.createVariable("v", "i2", ("t", "x"), **storage)
        v.scale_factor = scale
        v[:] = np.arange(start * 4, (start + count) * 4).reshape(count, 4) * scale
        d.createVariable("lat", "f4", ("x",))[:] = [1, 2, 3, 4]
    return path


def _ncrcat(paths: list[str], out: str) -> str:
    subprocess.run(["ncrcat", "-O", *paths, out], check=True)
    return out


@pytest.mark.parametrize("format", ["NETCDF4", "NETCDF3_CLASSIC", "NETCDF3_64BIT_DATA"])
def test_many_files_along_the_record_dimension(tmp_path, format):
    counts = (2, 4, 1)  # every file but the last a whole number of chunks of 2
    paths, start = [], 0
    for i, count in enumerate(counts):  # deflate levels differ: the chunks decode alike
        paths.append(_records_file(str(tmp_path / f"f{i}.nc"), start, count, format=format, level=1 + i))
        start += count
    target = str(tmp_path / "v.zarr")
    # netCDF-4 files scanned in two local processes, as the archive copy runs its tasks
    report = virtualize(paths, target, VirtualOptions(workers=2 if format == "NETCDF4" else None))
    assert not report.copied and report.referenced["/lat"] == 1 and report.referenced["/v"] == 4 + (format != "NETCDF4") * 3
    assert_same(target, _ncrcat(paths, str(tmp_path / "all.nc")), ignore=NCRCAT_ATTRIBUTES)
    with nczarr.Dataset(target) as d:
        assert len(d.dimensions["t"]) == 7


def test_many_files_are_opened_once_to_plan(tmp_path, monkeypatch):
    """The archive copy's plan is made from the scans: no file is opened again to compare
    it (1,000 files: 13.3 s before, 5.1 s after, benchmarks/virtual.py)."""
    from nczarr.convert import combine

    def reopened(location, options):
        raise AssertionError(f"{location} opened again to plan")

    monkeypatch.setattr(combine, "scan_source", reopened)
    paths = [_records_file(str(tmp_path / f"f{i}.nc"), 2 * i, 2) for i in range(3)]
    report = virtualize(paths, str(tmp_path / "v.zarr"))
    assert report.referenced["/v"] == 3 and not report.copied
    assert_same(str(tmp_path / "v.zarr"), _ncrcat(paths, str(tmp_path / "all.nc")), ignore=NCRCAT_ATTRIBUTES)


def test_a_record_coordinate_copied_from_every_file_is_read_in_the_scan(tmp_path, monkeypatch):
    """netCDF's default chunks of a 1-D record variable hold hundreds of records: a file's
    one record cannot be referenced, so its value is copied, from what the scan read (no
    file opened again: 1,000 files took 5.1 s before, 2.9 s after)."""
    from nczarr.convert.virtual import FileScan

    paths = []
    for i in range(3):
        with netCDF4.Dataset(tmp_path / f"f{i}.nc", "w") as d:
            d.createDimension("t", None)
            d.createDimension("x", 4)
            d.createVariable("t", "f8", ("t",))[:] = [10.0 * i]
            d.createVariable("v", "f4", ("t", "x"), zlib=True, chunksizes=(1, 4))[:] = np.full((1, 4), i, "f4")
        paths.append(str(tmp_path / f"f{i}.nc"))

    def opened(scan):
        raise AssertionError(f"{scan.url} opened again")

    monkeypatch.setattr(FileScan, "source", property(opened))
    report = virtualize(paths, str(tmp_path / "v.zarr"))
    assert "/t" in report.copied and report.referenced["/v"] == 3
    assert_same(str(tmp_path / "v.zarr"), _ncrcat(paths, str(tmp_path / "all.nc")), ignore=NCRCAT_ATTRIBUTES)


def test_many_files_scanned_on_a_dask_cluster(tmp_path):
    """The archive copy's workers: a LocalCluster's processes scan the files, from Python
    (``client``) and from the command line (``--scheduler``); the result is the same."""
    import warnings

    from dask.distributed import Client, LocalCluster

    paths = [_records_file(str(tmp_path / f"f{i}.nc"), 2 * i, 2) for i in range(3)]
    expected = _ncrcat(paths, str(tmp_path / "all.nc"))
    with (
        warnings.catch_warnings(),
        LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as local,
        Client(local) as client,
    ):
        warnings.simplefilter("ignore")
        report = virtualize(paths, str(tmp_path / "python.zarr"), client=client)
        assert main(["-q", "virtualize", "--scheduler", local.scheduler_address, *paths, str(tmp_path / "cli.zarr")]) == 0
    assert report.referenced["/v"] == 3 and not report.copied
    for target in ("python.zarr", "cli.zarr"):
        assert_same(str(tmp_path / target), expected, ignore=NCRCAT_ATTRIBUTES)


def test_many_files_refused_before_anything_is_written(tmp_path):
    first = _records_file(str(tmp_path / "a.nc"), 0, 2)
    packed = _records_file(str(tmp_path / "b.nc"), 2, 2, scale=0.25)
    target = str(tmp_path / "v.zarr")
    with pytest.raises(NCZarrError, match=r"(?s)/v: its values must be converted \(repack\): .*b\.nc"):
        virtualize([first, packed], target, VirtualOptions(small_bytes=0))
    assert not os.path.exists(target)
    odd = _records_file(str(tmp_path / "c.nc"), 2, 3)
    last = _records_file(str(tmp_path / "d.nc"), 5, 2)
    with pytest.raises(NCZarrError, match=r"c\.nc holds 3 records.*regular chunk grid"):
        virtualize([first, odd, last], target, VirtualOptions(small_bytes=0))
    report = virtualize([first, odd, last], target)  # v holds a few bytes a file: copied, not refused
    assert "regular chunk grid" in report.copied["/v"]
    remove_tree(target)
    assert not os.path.exists(target)
    other = str(tmp_path / "e.nc")
    with netCDF4.Dataset(other, "w") as d:
        d.createDimension("t", None)
    with pytest.raises(NCZarrError, match=r"e\.nc"):
        virtualize([first, other], target)
    assert main(["virtualize", first, other, target]) != 0
    assert not os.path.exists(target)


def test_many_files_packed_otherwise_converted(tmp_path):
    """A file whose scale_factor differs: its values are unpacked and packed again as the
    first file packs them (the archive plan's conversion: to the nearest value the first
    file's packing holds), never referenced raw."""
    paths = [_records_file(str(tmp_path / "a.nc"), 0, 2), _records_file(str(tmp_path / "b.nc"), 2, 2, scale=0.25)]
    target = str(tmp_path / "v.zarr")
    report = virtualize(paths, target, VirtualOptions(copy_mismatched=True, small_bytes=0))
    assert "repack" in report.copied["/v"]
    expected = []
    for path in paths:
        with netCDF4.Dataset(path) as d:
            expected.append(d["v"][:])
    with nczarr.Dataset(target) as d:
        assert np.array_equal(d["v"][:], np.rint(np.concatenate(expected) / 0.5) * 0.5)


def test_many_files_mismatches_copied(tmp_path):
    paths = [_records_file(str(tmp_path / "a.nc"), 0, 2), _records_file(str(tmp_path / "b.nc"), 2, 3)]
    paths.append(_records_file(str(tmp_path / "c.nc"), 5, 2, chunk=1))
    target = str(tmp_path / "v.zarr")
    report = virtualize(paths, target, VirtualOptions(copy_mismatched=True, small_bytes=0))
    assert "c.nc stores /v in chunks (1, 4)" in report.copied["/v"] and "/t" in report.referenced
    assert_same(target, _ncrcat(paths, str(tmp_path / "all.nc")), ignore=NCRCAT_ATTRIBUTES)


def test_progress_bar(tmp_path, capsys):
    paths = [_records_file(str(tmp_path / f"f{i}.nc"), 2 * i, 2, format="NETCDF3_CLASSIC") for i in range(3)]
    virtualize(paths, str(tmp_path / "v.zarr"), VirtualOptions(progress=True))
    assert "3/3" in capsys.readouterr().err  # tqdm's count of files scanned


def test_references_that_decode_wrong_are_copied(netcdf3_file, tmp_path, monkeypatch):
    """The check after referencing: a variable whose chunk read through the references
    differs from the file is copied instead (here every comparison is made to fail)."""
    from nczarr.convert import virtual

    monkeypatch.setattr(virtual, "_same", lambda a, b: False)
    target = str(tmp_path / "v.zarr")
    report = virtualize([netcdf3_file], target)
    assert not report.referenced and "decode differently through references" in report.copied["/a"]
    monkeypatch.undo()
    assert_same(target, netcdf3_file)
    store = open_store(target)
    assert len(store.references) == 0
    store.close()
