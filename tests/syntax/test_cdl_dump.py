"""``nczarr dump`` against the real ncdump: the same datasets made with netCDF4 as ``.nc``
files and copied into nczarr stores, dumped with many option combinations."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import netCDF4
import numpy as np
import pytest

import nczarr
from nczarr.convert.sources import open_source
from nczarr.errors import DumpError
from nczarr.syntax import cdldump
from nczarr.syntax.cdldump import DumpOptions, dump, kind_text
from nczarr.values.source import DatasetSource

h5py = pytest.importorskip("h5py")


# -- a netCDF4 -> nczarr copier (test code only) ----------------------------------------
def _copy_types(src, dst):
    """Enums, compounds, vlens: netCDF4-python does not tell the order they were defined."""
    for name, t in src.enumtypes.items():
        dst.createEnumType(t.dtype, name, t.enum_dict)
    for name, t in src.cmptypes.items():
        dst.createCompoundType(t.dtype, name)
    for name, t in src.vltypes.items():
        dst.createVLType(t.dtype, name)


def _datatype(var, dst_group):
    dt = var.datatype
    if dt is str or (isinstance(dt, netCDF4.VLType) and dt.dtype is str):
        return str
    if isinstance(dt, (netCDF4.CompoundType, netCDF4.VLType, netCDF4.EnumType)):
        group = dst_group
        while True:
            for table in (group.cmptypes, group.vltypes, group.enumtypes):
                if dt.name in table:
                    return table[dt.name]
            group = group.parent
            if group is None:  # a type of a group that is not an ancestor
                return _find_type(dst_group, dt.name)
    return dt


def _find_type(group, name):
    while group.parent is not None:
        group = group.parent
    stack = [group]
    while stack:
        current = stack.pop()
        for table in (current.cmptypes, current.vltypes, current.enumtypes):
            if name in table:
                return table[name]
        stack.extend(current.groups.values())
    raise KeyError(name)


def _copy_group(src, dst, h5group):
    _copy_types(src, dst)
    for name, dim in src.dimensions.items():
        dst.createDimension(name, None if dim.isunlimited() else len(dim))
    strings = _string_attributes(h5group)
    for name in src.ncattrs():
        _set_attribute(src, dst, name, strings)
    for name, child in src.groups.items():
        _copy_group(child, dst.createGroup(name), h5group[name])
    for name, var in src.variables.items():
        var.set_auto_maskandscale(False)
        var.set_auto_chartostring(False)
        filters = var.filters() or {}
        chunking = var.chunking()
        compression = next((c for c in ("zlib", "zstd", "bzip2") if filters.get(c)), None)
        if filters.get("blosc"):
            compression = filters["blosc"]["compressor"]
            kwargs_blosc = {"blosc_shuffle": filters["blosc"]["shuffle"]}
        else:
            kwargs_blosc = {}
        kwargs = dict(
            compression=compression,
            **kwargs_blosc,
            complevel=filters.get("complevel", 4) or 4,
            shuffle=filters.get("shuffle", False),
            fletcher32=filters.get("fletcher32", False),
            endian=var.endian(),
        )
        if isinstance(chunking, list):
            kwargs["chunksizes"] = chunking
        fill = var.getncattr("_FillValue") if "_FillValue" in var.ncattrs() else None
        no_fill = var.get_fill_value() is None if hasattr(var, "get_fill_value") else False
        dims = _dimensions(var, dst, h5group[name].shape)
        fill_value = False if no_fill and fill is None else fill
        new = dst.createVariable(name, _datatype(var, dst), dims, fill_value=fill_value, **kwargs)
        new.set_auto_maskandscale(False)
        new.set_auto_chartostring(False)
        strings = _string_attributes(h5group[name])
        for att in var.ncattrs():  # _FillValue is set by createVariable, so it comes first
            if att != "_FillValue":
                _set_attribute(var, new, att, strings)
    for name, var in src.variables.items():
        h5var = h5group[name]
        if h5var.shape != var.shape:  # netCDF4-python took the nearest dimension of that name
            dst.variables[name][...] = h5var[...]
        elif var.size and all(var.shape):
            dst.variables[name][...] = var[...]


def _dimensions(var, dst, shape):
    """The destination's dimensions: by name up the groups, skipping ones of another length
    (netCDF4-python reports the nearest dimension of that name, not the one used)."""
    found = []
    for name, size in zip(var.dimensions, shape):
        group = dst
        while group is not None:
            dim = group.dimensions.get(name)
            if dim is not None and (dim.isunlimited() or len(dim) == size):
                found.append(dim)
                break
            group = group.parent
    return tuple(found)


def _set_attribute(src_obj, dst_obj, name, strings):
    value = src_obj.getncattr(name)
    if isinstance(value, str):
        if name in strings:
            dst_obj.setncattr_string(name, value)
        else:
            dst_obj.setncattr(name, value.encode("utf-8"))
    else:
        dst_obj.setncattr(name, value)


def _string_attributes(h5obj):
    """Names of the attributes of an HDF5 object that are netCDF strings (not char)."""
    names = set()
    for name in h5obj.attrs:
        dtype = h5obj.attrs.get_id(name).dtype
        info = h5py.check_string_dtype(dtype)
        if info is not None and info.length is None:
            names.add(name)
    return names


def nczarr_copy(nc_path: Path, store: Path) -> None:
    with (
        netCDF4.Dataset(nc_path) as src,
        h5py.File(nc_path, "r") as h5,
        nczarr.Dataset(store, "w", format=src.data_model) as dst,
    ):
        _copy_group(src, dst, h5)


def ncdump(path: Path, *args: str) -> str:
    done = subprocess.run(["ncdump", *args, str(path)], capture_output=True, check=True)
    return done.stdout.decode("utf-8", "surrogateescape")


@contextlib.contextmanager
def source_of(store: Path) -> Iterator[DatasetSource]:
    source = open_source(store)
    try:
        yield source
    finally:
        source.close()


def ours(store: Path, options: DumpOptions | None = None, name: str | None = None) -> str:
    with source_of(store) as source:
        return "".join(dump(source, options or DumpOptions(), name, path=str(store)))


def _drop_properties(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if ":_NCProperties = " not in line)


def compare(tmp_path: Path, nc: Path, args: list[str], options: DumpOptions) -> None:
    store = tmp_path / (nc.stem + ".zarr")
    if not store.exists():
        nczarr_copy(nc, store)
    expected = _drop_properties(ncdump(nc, *args))
    # a store's filtered variables show their codecs too (as netcdf-c shows NCZarr's); a file has none
    got = "".join(line for line in _drop_properties(ours(store, options)).splitlines(keepends=True) if ":_Codecs = " not in line)
    assert got == expected


# -- datasets ----------------------------------------------------------------------------
def make_basic(path: Path) -> Path:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("lat", 3)
        ds.createDimension("len", 5)
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t.calendar = "standard"
        v = ds.createVariable("t", "f4", ("time", "lat"), fill_value=-999.0)
        v.valid_range = np.array([0, 400], "f4")
        v.small = np.float32(1e-5)
        d = ds.createVariable("d", "f8", ("lat",))
        d.tiny = 1e-20
        d.big = 1.23456789012346e17
        name = ds.createVariable("name", "S1", ("lat", "len"))
        name.note = "tab\there \"quoted\" back\\slash 'single'\n"
        s = ds.createVariable("s", str, ("lat",))
        enc = ds.createVariable("enc", "S1", ("lat", "len"))
        enc._Encoding = "utf-8"
        raw = ds.createVariable("raw", "S1", ("len",))
        for typ in ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"):
            x = ds.createVariable(f"x_{typ}", typ, ("lat",))
            info = np.iinfo(typ)
            x.lo = np.array([info.min, info.max], typ)
        ds.n = np.array([1, 2, 3], "i4")
        ds.x = 1.5
        ds.f = np.float32(1.5)
        ds.specials = np.array([np.nan, np.inf, -np.inf, -0.0], "f8")
        ds.fspecials = np.array([np.nan, np.inf, -np.inf, 1e-5], "f4")
        ds.title = "a long title " * 10
        ds.empty = ""
        t[:] = [0.0, 1.5]
        v[:] = np.array([[1, 2, 3], [4, -999, 6]], "f4")
        d[:] = [0.1, 1e300, -0.3333333333333333]
        name[:] = netCDF4.stringtochar(np.array(["abc", "de", "fghij"], "S5"))
        s[:] = np.array(["x", "y\tz", 'q"uote'], object)
        enc.set_auto_chartostring(False)
        enc[:] = np.frombuffer("é".encode() + b"abc" + b"\x01\x7f\x80\xff\0" + b"\\'\"\v\0", "S1").reshape(3, 5)
        raw[:] = np.frombuffer(b"\xc3\xa9\n\tz", "S1")
        for typ in ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"):
            info = np.iinfo(typ)
            ds[f"x_{typ}"][:] = np.array([info.min, info.max, 0], typ)
    return path


def make_wrapping(path: Path) -> Path:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("r", 3)
        ds.createDimension("c", 30)
        ds.createDimension("n", 40)
        a = ds.createVariable("v2", "i4", ("r", "c"))
        a[:] = np.arange(90).reshape(3, 30)
        a[2, 5:] = netCDF4.default_fillvals["i4"]
        f = ds.createVariable("f", "f4", ("n",))
        f[:] = np.linspace(-1e10, 3e38, 40).astype("f4")
        g = ds.createVariable("g", "f8", ("n",))
        g[:] = np.geomspace(1e-300, 1e300, 40)
        ds.createVariable("unwritten", "i2", ("n",))  # never written: dumped as fill
        b = ds.createVariable("bytes", "i1", ("n",))
        b[:10] = np.arange(10)
        c = ds.createVariable("cf", "f8", ("r",))
        c.C_format = "%.2f"
        c[:] = [2.718281828, 1, -3.5]
    return path


def make_groups(path: Path) -> Path:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("d", 2)
        top = ds.createVariable("top", "i4", ("d",))
        top[:] = [1, 2]
        ds.title = "root"
        sub = ds.createGroup("sub")
        sub.createDimension("e", 3)
        sub.createDimension("d", 4)
        m = sub.createVariable("m", "f4", ("e",))
        m.units = "m"
        b = sub.createVariable("b", "i4", ("d",))
        mm = sub.createVariable("mm", "f4", ("e", "e"))
        mm[:] = np.arange(9).reshape(3, 3)
        sub.title = "sub"
        m[:] = [1, 2, 3]
        b[:] = [1, 2, 3, 4]
        inner = sub.createGroup("inner")
        s = inner.createVariable("s", str, ())
        s[0] = "x"
        w = inner.createVariable("wide", "f8", ("e",))
        w[:] = [1e100, 2e100, 3e100]
        other = ds.createGroup("other")
        o = other.createVariable("o", "i4", ("d",))
        o[:] = [5, 6]
    return path


def make_user_types(path: Path) -> Path:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("n", 3)
        cloud = ds.createEnumType("u1", "cloud_t", {"Clear": 0, "Cumulonimbus": 1, "Stratus": 2})
        cmp = ds.createCompoundType(np.dtype([("i", "i4"), ("f", "f4", (2,)), ("d", "f8")]), "cmp_t")
        vl = ds.createVLType("i4", "vl_t")
        e = ds.createVariable("e", cloud, ("n",), fill_value=0)
        e[:] = np.array([0, 2, 1], "u1")
        v = ds.createVariable("v", vl, ("n",))
        data = np.empty(3, object)
        data[:] = [np.array([1, 2], "i4"), np.array([], "i4"), np.arange(30, dtype="i4")]
        v[:] = data
        c = ds.createVariable("c", cmp, ("n",))
        rec = np.zeros(3, cmp.dtype)
        rec["i"] = [1, 2, 3]
        rec["f"] = [[1.5, 2], [3, 4], [5, 6]]
        rec["d"] = [0.1, 0.2, 0.3]
        c[:] = rec
        g = ds.createGroup("g")
        gv = g.createVariable("gv", vl, ("n",))
        gv[:] = data
    return path


def make_classic(path: Path) -> Path:
    with netCDF4.Dataset(path, "w", format="NETCDF4_CLASSIC") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 4)
        v = ds.createVariable("v", "f4", ("t", "x"), zlib=True, complevel=3, shuffle=True, chunksizes=(1, 4))
        v[:] = np.arange(8, dtype="f4").reshape(2, 4) / 3
        v.history = "line1\nline2\n"
        c = ds.createVariable("c", "S1", ("x",))
        c[:] = np.array(list(b"a\nb\x01"), "S1").view("S1") if False else netCDF4.stringtochar(np.array([b"a\nb\x01"], "S4"))[0]
        ds.comment = "first\nsecond"
    return path


def make_coords(path: Path) -> Path:
    with netCDF4.Dataset(path, "w") as ds:
        for name, size in (("x", 2), ("y", 3)):
            ds.createDimension(name, size)
            ds.createVariable(name, "i4", (name,))[:] = np.arange(size) + 1
        ds.createVariable("a", "i4", ("x",))[:] = [5, 6]
        ds.createVariable("b", "i4", ("y",))[:] = [7, 8, 9]
        g = ds.createGroup("g")
        g.createVariable("x", "f4", ("y",))[:] = [0.5, 1, 2]  # named like a dimension of the root
        g.createVariable("c", "f4", ("x", "y"))
    return path


MAKERS = {
    "coords": make_coords,
    "basic": make_basic,
    "wrapping": make_wrapping,
    "groups": make_groups,
    "usertypes": make_user_types,
    "classic": make_classic,
}

OPTION_SETS = [
    ([], DumpOptions()),
    (["-h"], DumpOptions(header_only=True)),
    (["-c"], DumpOptions(coordinates=True)),
    (["-l", "40"], DumpOptions(line_length=40)),
    (["-p", "3,5"], DumpOptions(precision=(3, 5))),
    (["-p", "4"], DumpOptions(precision=(4, None))),
    (["-n", "other"], DumpOptions(name="other")),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cdl_dump")
    return {key: maker(root / f"{key}.nc") for key, maker in MAKERS.items()}


@pytest.mark.parametrize("key", list(MAKERS))
@pytest.mark.parametrize("args,options", OPTION_SETS, ids=[" ".join(a) or "plain" for a, _ in OPTION_SETS])
def test_same_as_ncdump(files, tmp_path, key, args, options):
    compare(tmp_path, files[key], args, options)


def make_special(path: Path) -> Path:
    """Every variable chunked (Zarr has no contiguous layout) with each filter setting."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("d", 4)
        ds.createDimension("u", None)
        a = ds.createVariable("a", "i4", ("d",), zlib=True, complevel=5, shuffle=True, fletcher32=True, chunksizes=(2,))
        b = ds.createVariable("b", "i2", ("d",), fill_value=False, chunksizes=(4,))
        c = ds.createVariable("c", "f8", ("u", "d"), chunksizes=(1, 4))
        e = ds.createVariable("e", ">i1", ("d",), endian="big", chunksizes=(4,))
        f = ds.createVariable("f", ">f4", ("d",), endian="big", chunksizes=(2,), zlib=True, complevel=1)
        a[:] = [1, 2, 3, 4]
        b[:] = [5, 6, 7, 8]
        c[0] = [1.0, 2.0, 3.0, 4.0]
        e[:] = [1, 2, 3, 4]
        f[:] = [0.5, 1.5, 2.5, 3.5]
        ds.createDimension("n", 400)
        for compression in ("zstd", "bzip2", "blosc_lz4", "blosc_zstd"):
            z = ds.createVariable(compression, "f4", ("n",), compression=compression, complevel=3, chunksizes=(200,),
                                  blosc_shuffle=2)
            z[:] = np.zeros(400, "f4")
        g = ds.createGroup("g")
        h = g.createVariable("h", "u8", ("d",), chunksizes=(3,))
        h[:] = [1, 2, 3, 4]
    return path


@pytest.mark.parametrize(
    "args,options", [(["-s"], DumpOptions(special=True)), (["-s", "-h"], DumpOptions(special=True, header_only=True))]
)
def test_special_attributes(tmp_path, args, options):
    compare(tmp_path, make_special(tmp_path / "special.nc"), args, options)


def test_special_attributes_classic_model(tmp_path):
    nc = tmp_path / "cspecial.nc"
    with netCDF4.Dataset(nc, "w", format="NETCDF4_CLASSIC") as ds:
        ds.createDimension("d", 4)
        ds.createVariable("a", "f8", ("d",), zlib=True, complevel=9, chunksizes=(4,))[:] = [1, 2, 3, 4]
        ds.createVariable("s", "i2", (), fill_value=False).assignValue(7)
        ds.title = "classic"
    compare(tmp_path, nc, ["-s"], DumpOptions(special=True))


@pytest.mark.parametrize(
    "key,args,options",
    [
        ("basic", ["-v", "t,s"], DumpOptions(variables=("t", "s"))),
        ("groups", ["-v", "b"], DumpOptions(variables=("b",))),
        ("groups", ["-v", "/sub/m,top"], DumpOptions(variables=("/sub/m", "top"))),
        ("groups", ["-c", "-v", "/other/o"], DumpOptions(coordinates=True, variables=("/other/o",))),
        ("coords", ["-c", "-v", "a,y"], DumpOptions(coordinates=True, variables=("a", "y"))),
        ("coords", ["-c"], DumpOptions(coordinates=True)),
    ],
)
def test_selected_variables(files, tmp_path, key, args, options):
    compare(tmp_path, files[key], args, options)


def test_unknown_variable(files, tmp_path):
    store = tmp_path / "basic.zarr"
    nczarr_copy(files["basic"], store)
    with source_of(store) as source, pytest.raises(DumpError):
        list(dump(source, DumpOptions(variables=("nope",))))


@pytest.mark.parametrize("key", ["basic", "classic"])
def test_kind(files, tmp_path, key):
    store = tmp_path / "k.zarr"
    nczarr_copy(files[key], store)
    with source_of(store) as source:
        assert kind_text(source) + "\n" == ncdump(files[key], "-k")
        assert "".join(dump(source, DumpOptions(kind=True))) == ncdump(files[key], "-k")


# -- CDL made into files by ncgen -----------------------------------------------------------
CDL = {
    "escapes": r"""netcdf escapes {
types:
  short enum long_t {Cumulonimbus = 1, Stratus = 2, Stratocumulus = 3, Cumulus = 4, Altostratus = 5,
    Nimbostratus = 6, Altocumulus = 7, Cirrostratus = 8, Cirrocumulus = 9, Cirrus = 10, Missing = 127} ;
dimensions:
  d = 3 ; u = UNLIMITED ; w = 12 ;
variables:
  long_t cl(d) ;
  string s(d) ;
    string s:sa = "v\vt", "\303\251 \303\274", "a'b" ;
  char c(d, w) ;
    c:ca = "bell\007 del\177 high\303\251" ;
  char one(w) ;
  char scalar ;
  float f(u) ;
  double g(u) ;
  int data ;
  int \1name\ with\ space(d) ;
  ushort types(d) ;
    types :units = "x" ;
  :gs = "a\tb\\c" ;
data:
  cl = Cumulus, Missing, Stratus ;
  s = "v\vt", "", "tab\tnl\n" ;
  c = "bell\007 x", "high\303\251", "\n\r" ;
  one = "x\ny" ;
  scalar = "q" ;
  f = NaN, Infinity, -Infinity, 3.4028235e+38, 1.4e-45, 0.1, -0.0, 9.96921e+36 ;
  g = NaN, Infinity, -Infinity, 1.79769313486232e+300, 4.94065645841247e-324, 0.1, -0.0, 9.969209968386869e+36 ;
  data = 7 ;
  \1name\ with\ space = 1, 2, 3 ;
  types = 1, 65535, 3 ;
}
""",
    "nested": r"""netcdf nested {
dimensions:
  d = 3 ;
variables:
  int top(d) ;
data:
  top = 1, 2, 3 ;
group: g1 {
  types:
    compound pair_t { int a ; double b ; } ;
  dimensions:
    d = 2 ;
  variables:
    pair_t p(d) ;
    int sh(/d) ;
    int own(d) ;
  data:
    p = {1, 2.5}, {3, 4.5} ;
    sh = 1, 2, 3 ;
    own = 4, 5 ;
  group: g2 {
    variables:
      pair_t q ;
      int m(d, /d) ;
      double wide(/d, d) ;
    data:
      q = {7, 8} ;
      m = 1, 2, 3, 4, 5, 6 ;
      wide = 1e100, 2e100, 3e100, 4e100, 5e100, 6e100 ;
  }
}
group: h {
  variables:
    /g1/pair_t hv ;
  data:
    hv = {9, 10} ;
}
}
""",
    "unlimited": r"""netcdf mu {
dimensions: F = 2 ; R = UNLIMITED ; S = UNLIMITED ; x = 3 ;
variables:
  int fr(F, R) ;
  int rs(R, S) ;
  int rsx(R, S, x) ;
  int frx(F, R, x) ;
  int r1(R) ; char cuuu(R, S, x) ; char cfs(F, S, x); int rst(R, S, F, S);
data:
  fr = {1, 2}, {3, 4} ;
  rs = {1, 2}, {3, 4} ;
  rsx = {1,2,3,4,5,6}, {7,8,9,10,11,12} ;
  frx = {1,2,3,4,5,6}, {7,8,9,10,11,12} ;
  r1 = 1, 2 ;
  cuuu = {"ab", "cde"}, {"x", "yz"} ;
 cfs = {"ab", "cde"}, {"x", "yz"} ;
}
""",
    "times": r"""netcdf times {
dimensions: time = UNLIMITED ; bnds = 2 ;
variables:
  double time(time) ; time:units = "days since 2000-01-01 00:00:00" ; time:bounds = "time_bnds" ;
    time:valid_min = 0., 1.5 ; time:calendar = "noleap" ;
  double time_bnds(time, bnds) ;
  float t2(time) ; t2:_FillValue = -1.f ; t2:units = "hours since 1999-12-31 12:00" ; t2:other = 5 ;
  int t3(time) ; t3:units = "seconds since 2000-01-01" ;
  double t4 ; t4:units = "days since 2000-01-01"; t4:calendar = "360_day" ;
  double t5(time) ; t5:units = "minutes since 1582-10-01" ; t5:calendar = "julian" ;
  double notime(time) ; notime:units = "m" ;
  double mixed(time) ; mixed:units = "days since 1582-10-01" ;
  double before(time) ; before:units = "hours since 1582-10-20T06:00" ; before:calendar = "gregorian" ;
  double prolep(time) ; prolep:units = "seconds since 1600-02-28 23:59:30" ; prolep:calendar = "proleptic_gregorian" ;
  float d360(time) ; d360:units = "days since 0001-01-01" ; d360:calendar = "360_day" ;
  short leap(time) ; leap:units = "weeks since 1900-01-01" ; leap:calendar = "all_leap" ;
data:
  time = 0, 1.5, 59.25, 365.0006944444 ;
  time_bnds = 0, 1, 1, 2, 2, 3, 3, 4 ;
  t2 = 0, 12.5, _, 36 ;
  t3 = 0, 61, 3601, 86399 ;
  t4 = 59 ;
  t5 = 0, 1, 14400, 1e7 ;
  notime = 1, 2, 3, 4 ;
  mixed = 0, 3, 4, 5000.5 ;
  before = 0, -240, -241, -1e6 ;
  prolep = 29.5, 30, 86400.25, -1 ;
  d360 = 0, 359.75, 720000, 12345.678 ;
  leap = 0, 52, 100, -3 ;
}
""",
}


@pytest.fixture(scope="module")
def cdl_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cdl_ncgen")
    made = {}
    for key, text in CDL.items():
        (root / f"{key}.cdl").write_text(text, encoding="utf-8")
        subprocess.run(["ncgen", "-4", "-o", str(root / f"{key}.nc"), str(root / f"{key}.cdl")], check=True)
        made[key] = root / f"{key}.nc"
    return made


@pytest.mark.parametrize("key", list(CDL))
@pytest.mark.parametrize("args,options", OPTION_SETS[:4], ids=[" ".join(a) or "plain" for a, _ in OPTION_SETS[:4]])
def test_cdl_from_ncgen(cdl_files, tmp_path, key, args, options):
    compare(tmp_path, cdl_files[key], args, options)


@pytest.mark.parametrize("key", ["wrapping", "groups", "coords"])
def test_small_slabs(files, tmp_path, monkeypatch, key):
    """Data read a few values at a time gives the same text."""
    monkeypatch.setattr(cdldump, "_SLAB_VALUES", 7)
    compare(tmp_path, files[key], [], DumpOptions())


def test_small_slabs_unlimited(cdl_files, tmp_path, monkeypatch):
    monkeypatch.setattr(cdldump, "_SLAB_VALUES", 5)
    compare(tmp_path, cdl_files["unlimited"], [], DumpOptions())


@pytest.mark.parametrize("args,options", [(["-t"], DumpOptions(times="t")), (["-i"], DumpOptions(times="i")),
                                          (["-t", "-l", "30"], DumpOptions(times="t", line_length=30))])
def test_times(cdl_files, tmp_path, args, options):
    compare(tmp_path, cdl_files["times"], args, options)


USER_ATTRIBUTES_CDL = r"""netcdf ua {
types:
  ubyte enum col_t {red = 0, \1blue = 1, green = 2} ;
  int(*) vl_t ;
  compound pt { float x ; double y ; } ;
variables:
  int v ;
    col_t v:ea = red, \1blue ;
    vl_t v:va = {1, 2, 3}, {4} ;
    pt v:pa = {1.5, 2.5}, {3, 4} ;
  :title = "long long long long long long long long long long long long long" ;
  vl_t :gva = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23},
    {24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40} ;
data:
  v = 1 ;
}
"""


def test_user_typed_attributes(tmp_path):
    """netCDF4-python cannot write (or read) every user-typed attribute: the store gets them
    through its model tree."""
    (tmp_path / "ua.cdl").write_text(USER_ATTRIBUTES_CDL)
    subprocess.run(["ncgen", "-4", "-o", str(tmp_path / "ua.nc"), str(tmp_path / "ua.cdl")], check=True)
    store = tmp_path / "ua.zarr"
    with nczarr.Dataset(store, "w") as ds:
        ds.createEnumType("u1", "col_t", {"red": 0, "1blue": 1, "green": 2})
        ds.createVLType("i4", "vl_t")
        ds.createCompoundType(np.dtype([("x", "f4"), ("y", "f8")]), "pt")
        v = ds.createVariable("v", "i4", ())
        v[...] = 1
        v._node.add_attribute("ea", "col_t", [0, 1])
        v._node.add_attribute("va", "vl_t", [[1, 2, 3], [4]])
        v._node.add_attribute("pa", "pt", [(1.5, 2.5), (3.0, 4.0)])
        ds.title = "long " * 12 + "long"
        ds._node.add_attribute("gva", "vl_t", [list(range(1, 24)), list(range(24, 41))])
    expected = ncdump(tmp_path / "ua.nc")
    assert ours(store) == expected
    assert ours(store, DumpOptions(line_length=50)) == ncdump(tmp_path / "ua.nc", "-l", "50")


NCML_CDL = r"""netcdf x3 {
dimensions: t = UNLIMITED ; x = 3 ; s = 4 ;
variables:
  float v(t, x) ; v:units = "K & <m> \"q\"\n\t\r\001" ; v:vr = 1.f, 2.5f ; v:b = 1b, -2b ; v:sh = 3s ;
    v:d = 1e300, 0.1 ;
  char c(x, s) ;
  int sc ;
  double nodata(x) ;
  :title = "x" ;
  :n = 1, 2 ;
data:
  v = 1, 2, 3 ;
  sc = 1 ;
}
"""


@pytest.mark.parametrize("args,options", [
    (["-x"], DumpOptions(ncml=True)),
    (["-x", "-h"], DumpOptions(ncml=True, header_only=True)),
    (["-x", "-v", "v"], DumpOptions(ncml=True, variables=("v",))),
    (["-x", "-c"], DumpOptions(ncml=True, coordinates=True)),
])
def test_ncml(tmp_path, args, options):
    (tmp_path / "x3.cdl").write_text(NCML_CDL)
    nc = tmp_path / "x3.nc"
    subprocess.run(["ncgen", "-k", "nc7", "-o", str(nc), str(tmp_path / "x3.cdl")], check=True)
    store = tmp_path / "x3.zarr"
    nczarr_copy(nc, store)
    expected = ncdump(nc, *args).replace(f'location="{nc}"', 'location="LOCATION"')
    got = ours(store, options).replace(f'location="{store}"', 'location="LOCATION"')
    assert got == expected


def test_ncml_refused_for_enhanced_model(files, tmp_path):
    store = tmp_path / "basic.zarr"
    nczarr_copy(files["basic"], store)
    with source_of(store) as source, pytest.raises(DumpError, match="classic model"):
        list(dump(source, DumpOptions(ncml=True)))


def test_dimension_of_another_group(tmp_path):
    """A dimension of a group that is not an ancestor prints as its full name (netCDF4-python
    cannot open such a file, so the store is made directly)."""
    cdl = "netcdf na {\ngroup: g1 {\n dimensions: e = 2 ;\n}\ngroup: h {\n variables: int x(/g1/e) ;\n data: x = 1, 2 ;\n}\n}\n"
    (tmp_path / "na.cdl").write_text(cdl)
    subprocess.run(["ncgen", "-4", "-o", str(tmp_path / "na.nc"), str(tmp_path / "na.cdl")], check=True)
    store = tmp_path / "na.zarr"
    with nczarr.Dataset(store, "w") as ds:
        e = ds.createGroup("g1").createDimension("e", 2)
        ds.createGroup("h").createVariable("x", "i4", (e,))[:] = [1, 2]
    assert ours(store) == ncdump(tmp_path / "na.nc")


def test_tocdl_leaves_the_open_handles_as_they_were(tmp_path):
    """A dump reads the raw values of the dataset: the user's handles keep scaling,
    masking and char-to-string on (it used to switch them off)."""
    with nczarr.Dataset(tmp_path / "t.zarr", "w") as ds:
        ds.createDimension("x", 3)
        ds.createDimension("n", 2)
        v = ds.createVariable("v", "i2", ("x",))
        v.scale_factor = 0.5
        v[:] = [1, 2, 3]
        c = ds.createVariable("c", "S1", ("x", "n"))
        c._Encoding = "ascii"
        c[:] = np.array(["ab", "cd", "ef"], dtype="S2")
        text = ds.tocdl(data=True)
        assert " v = 2, 4, 6 ;" in text and '"ab",' in text
        assert "v:_ChunkSizes = 3 ;" in text  # the chunks the format chose
        np.testing.assert_array_equal(v[:], [1, 2, 3])
        assert list(c[:]) == ["ab", "cd", "ef"]
        assert v.scale and v.mask and c.chartostring
