"""NCZARR_V2 against the real netCDF4 wheel (netcdf-c 4.10.1), both directions.

One dataset uses every feature the issue lists; netCDF4 writes it through its API and nczarr
writes it from model text with the same storage settings and data. Then:

* nczarr reads netCDF4's store into exactly the tree of the model text, with equal data;
* netCDF4 sees nczarr's store exactly as it sees its own (types, attributes, dimensions,
  groups, filters, chunking, byte order, fill values, data);
* with ``byte_compatible`` every metadata document nczarr writes equals netcdf-c's.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest

from nczarr.formats.nczarr2 import NczarrV2
from nczarr.formats.session import Session
from nczarr.model import AtomicType, Variable
from nczarr.store import DirectoryStore
from nczarr.syntax import parse
from nczarr.values.storage import VariableStorage

assert netCDF4.__netcdf4libversion__.startswith("4.10"), netCDF4.__netcdf4libversion__

MODEL = r"""
dataset zarr 2 enhanced {
    dimension x = 4
    dimension y = 3
    dimension time = unlimited(2)
    dimension step = unlimited(3)
    dimension sp\ ace = 2
    dimension n = 256
    variable byte v_byte(x)
    variable ubyte v_ubyte(x)
    variable short v_short(x)
    variable ushort v_ushort(x)
    variable int v_int(x)
    variable uint v_uint(x)
    variable int64 v_int64(x)
    variable uint64 v_uint64(x)
    variable float v_float(x)
    variable double v_double(x)
    variable char v_char(x, y)
    variable string v_string(x) {
        attribute string sattr = "s1", ""
    }
    variable string short_s(y) {
        attribute int _nczarr_maxstrlen = 8
        attribute string label = "l"
    }
    variable double scalar_d {
        attribute char units = "m"
    }
    variable int scalar_i
    variable float tas(time, y) {
        attribute float _FillValue = -999.0
        attribute char long_name = "air temperature"
    }
    variable double both(time, step)
    variable int big(n)
    variable float nanfill(x, sp\ ace) {
        attribute float _FillValue = nan
    }
    variable ubyte nofill(x)
    variable short ünïcode_vär(y) {
        attribute char ätt = "text"
        attribute string s_ünï = "café ☃"
    }
    attribute char title = "golden"
    attribute char empty = ""
    attribute string s_one = "a string"
    attribute string s_multi = "one", "two", ""
    attribute byte a_byte = -5
    attribute ubyte a_ubyte = 250, 1
    attribute short a_short = -300
    attribute ushort a_ushort = 60000
    attribute int a_int = -70000, 5, 7
    attribute uint a_uint = 4000000000
    attribute int64 a_int64 = -5000000000
    attribute uint64 a_uint64 = 18000000000000000000
    attribute float a_float = 0.1
    attribute float a_float_nan = nan
    attribute double a_double = 1.0, 2.5, 1e300, 1.5e-05
    attribute double a_inf = inf, -inf, nan
    group g\ 1 {
        dimension z = 2
        variable int gv(x, z) {
            attribute int valid = 0, 100
        }
        group g2 {
            dimension w = 2
            group g3 {
                variable float deep(time, n, z, w)
                variable short flat(sp\ ace, w)
            }
        }
    }
}
"""

#: Storage settings by variable FQN (netCDF4 createVariable keywords).
SETTINGS: dict[str, dict[str, Any]] = {
    "/tas": {"compression": "zlib", "complevel": 4, "shuffle": True},
    "/both": {"compression": "zstd", "complevel": 3},
    "/big": {"endian": "big", "compression": "blosc_lz4", "blosc_shuffle": 2},
    "/nanfill": {"fletcher32": True},
    "/nofill": {"fill": False},
    "/g\\ 1/gv": {"compression": "zlib", "complevel": 1, "fletcher32": True},
    "/g\\ 1/g2/g3/deep": {"compression": "blosc_zstd", "complevel": 5, "blosc_shuffle": 1},
}


def storage_of(fqn: str) -> VariableStorage:
    return VariableStorage(**SETTINGS.get(fqn, {}))


def data_of(variable: Variable, shape: tuple[int, ...]) -> np.ndarray:
    """Deterministic values for a variable of this shape (strings as Python str)."""
    count = math.prod(shape)
    if variable.type is AtomicType.STRING:
        words = ["one", "", "three ü", "a longer string than eight"]
        return np.array([words[i % 4] for i in range(count)], dtype=object).reshape(shape)
    if variable.type is AtomicType.CHAR:
        return np.array([bytes([97 + i % 26]) for i in range(count)], "S1").reshape(shape)
    values = np.arange(count) % 100 + 1
    if variable.type.is_float:
        values = values / 4
    return values.astype(_np(variable.type)).reshape(shape)


def _shape(variable: Variable) -> tuple[int, ...]:
    from nczarr.model import resolve_dimension

    return tuple(
        ref if isinstance(ref, int) else resolve_dimension(variable.group, ref).size  # type: ignore[union-attr]
        for ref in variable.dimensions
    )


def _variables(group):
    for g in group.walk():
        yield from g.variables


def write_with_netcdf4(path: Path) -> None:
    """The model, written through netCDF4's API: everything defined first, then data."""
    tree = parse(MODEL)
    ds = netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "w")
    groups = {"/": ds}
    for group in tree.walk():
        nc = groups[group.fqn] if group is tree else groups[group.parent.fqn].createGroup(group.name)
        groups[group.fqn] = nc
        for dim in group.dimensions:
            nc.createDimension(dim.name, None if dim.unlimited else dim.size)
        for attribute in group.attributes:
            _set_attribute(nc, attribute)
        for variable in group.variables:
            settings = dict(SETTINGS.get(variable.fqn, {}))
            fill = variable.find_attribute("_FillValue")
            kwargs: dict[str, Any] = {"shuffle": settings.pop("shuffle", False)}
            if settings.pop("fill", True) is False:
                kwargs["fill_value"] = False
            elif fill is not None:
                kwargs["fill_value"] = np.array(fill.values, "f4")[0]
            kwargs.update(settings)
            type = str if variable.type is AtomicType.STRING else _np(variable.type)
            dims = tuple(d.split("/")[-1].replace("\\ ", " ") for d in variable.dimensions)
            v = nc.createVariable(variable.name, type, dims, **kwargs)
            for attribute in variable.attributes:
                if attribute.name != "_FillValue":
                    _set_attribute(v, attribute)
    for variable in _variables(tree):
        v = groups[variable.group.fqn].variables[variable.name]
        data = data_of(variable, _shape(variable))
        if variable.dimensions:
            v[tuple(slice(0, n) for n in data.shape)] = data
        else:
            v.assignValue(data.item())
    ds.close()


def _np(type: AtomicType) -> str:
    return {
        "byte": "i1",
        "ubyte": "u1",
        "short": "i2",
        "ushort": "u2",
        "int": "i4",
        "uint": "u4",
        "int64": "i8",
        "uint64": "u8",
        "float": "f4",
        "double": "f8",
        "char": "S1",
    }[type.value]


def _set_attribute(owner: Any, attribute: Any) -> None:
    if attribute.type is AtomicType.CHAR:
        owner.setncattr(attribute.name, attribute.values)
    elif attribute.type is AtomicType.STRING:
        owner.setncattr_string(attribute.name, list(attribute.values))
    else:
        owner.setncattr(attribute.name, np.array(attribute.values, _np(attribute.type)))


def write_with_nczarr(path: Path, convention: NczarrV2) -> None:
    tree = parse(MODEL)
    storage = {v.fqn: storage_of(v.fqn) for v in _variables(tree)}
    session = Session.create(DirectoryStore(path), tree, convention, storage)
    for variable in _variables(tree):
        data = data_of(variable, _shape(variable))
        if variable.type is AtomicType.STRING:
            data = np.array([s.encode() for s in data.ravel()], object).reshape(data.shape)
        session.array(variable)[...] = data.reshape(data.shape or (1,))
    session.close()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nc4")
    paths = {
        "netcdf4": root / "netcdf4.zarr",
        "nczarr": root / "nczarr.zarr",
        "compat": root / "compat.zarr",
    }
    write_with_netcdf4(paths["netcdf4"])
    write_with_nczarr(paths["nczarr"], NczarrV2())
    write_with_nczarr(paths["compat"], NczarrV2(byte_compatible=True))
    return paths


def test_nczarr_reads_netcdf4_tree(stores: dict[str, Path]) -> None:
    stored = NczarrV2().read(DirectoryStore(stores["netcdf4"], read_only=True))
    assert stored.dataset == parse(MODEL)
    for variable in _variables(stored.dataset):
        settings = replace(stored.storage[variable.fqn], chunks=None)
        assert settings == storage_of(variable.fqn), variable.fqn


def test_nczarr_reads_netcdf4_data(stores: dict[str, Path]) -> None:
    store = DirectoryStore(stores["netcdf4"], read_only=True)
    session = Session.open(store, NczarrV2(), read_only=True)
    for variable in _variables(session.dataset):
        expected = data_of(variable, _shape(variable))
        got = session.array(variable)[...]
        if variable.type is AtomicType.STRING:
            # netcdf-c stores fixed-length strings: truncated at _nczarr_maxstrlen
            strlen = got.dtype.itemsize
            expected = np.array([s.encode()[:strlen] for s in expected.ravel()], object)
            got = np.array(list(got.ravel()), object)
        np.testing.assert_array_equal(got.reshape(expected.shape), expected, err_msg=variable.fqn)


def describe(path: Path) -> dict[str, Any]:
    """What netCDF4 sees of a store: every group, dimension, variable (type, dimensions,
    attributes with types, filters, chunking, byte order, fill value, data)."""
    ds = netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "r")
    ds.set_auto_mask(False)
    out: dict[str, Any] = {}

    def attrs(owner: Any) -> list[tuple[str, str, str]]:
        items = []
        for name in owner.ncattrs():
            value = owner.getncattr(name)
            dtype = getattr(value, "dtype", None)
            items.append((name, type(value).__name__, f"{dtype}", repr(np.asarray(value).tolist())))
        return items

    def walk(group: Any, fqn: str) -> None:
        out[fqn] = {
            "dims": [(d.name, len(d), d.isunlimited()) for d in group.dimensions.values()],
            "attrs": attrs(group),
            "groups": list(group.groups),
        }
        for v in group.variables.values():
            data = v[...]
            out[f"{fqn}/{v.name}"] = {
                "dtype": str(v.dtype),
                "dims": v.dimensions,
                "shape": v.shape,
                "attrs": attrs(v),
                "filters": v.filters(),
                "chunking": v.chunking(),
                "endian": v.endian(),
                "fill": repr(v.get_fill_value()) if hasattr(v, "get_fill_value") else None,
                "data": repr(np.asarray(data).tolist()),
            }
        for name, child in group.groups.items():
            walk(child, f"{fqn}/{name}")

    walk(ds, "")
    ds.close()
    return out


@pytest.mark.parametrize("which", ["nczarr", "compat"])
def test_netcdf4_reads_nczarr(stores: dict[str, Path], which: str) -> None:
    theirs, ours = describe(stores["netcdf4"]), describe(stores[which])
    assert list(ours) == list(theirs)
    if which == "nczarr":
        # netcdf-c writes the default double fill rounded to 6 digits (§2.9); nczarr exactly
        exact = [k for k in theirs if theirs[k].get("fill") == "array(9.96921e+36)"]
        assert exact == ["/v_double", "/scalar_d", "/both"]
        for key in exact:
            assert ours[key].pop("fill") == "array(9.96920997e+36)"
            del theirs[key]["fill"]
    for key in theirs:
        assert ours[key] == theirs[key], key


def _metadata_files(path: Path) -> dict[str, bytes]:
    found = {}
    for root, _dirs, files in os.walk(path):
        for name in files:
            if name.startswith(".z"):
                full = Path(root, name)
                found[str(full.relative_to(path))] = full.read_bytes()
    return found


def test_byte_compatible_documents(stores: dict[str, Path]) -> None:
    theirs, ours = _metadata_files(stores["netcdf4"]), _metadata_files(stores["compat"])
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert ours[key] == theirs[key], key


def test_default_documents_differ_only_where_documented(stores: dict[str, Path]) -> None:
    """Exact floats, a real shuffle element size, nczarr's _NCProperties and .zmetadata."""
    theirs, ours = _metadata_files(stores["netcdf4"]), _metadata_files(stores["nczarr"])
    assert sorted(ours) == sorted([*theirs, ".zmetadata"])
    assert b'"a_double": [1.0,2.5,1e+300,1.5e-05]' in ours[".zattrs"]
    assert b"nczarr-python=" in ours[".zattrs"]
    assert b'{"id": "shuffle", "elementsize": 4}' in ours["tas/.zarray"]
    assert b'{"id": "shuffle", "elementsize": 0}' in theirs["tas/.zarray"]
    same = [k for k in theirs if ours[k] == theirs[k]]
    assert "g 1/g2/g3/deep/.zarray" in same and len(same) > len(theirs) // 2


def test_unlimited_growth_is_seen_by_netcdf4(tmp_path: Path) -> None:
    """Growing an unlimited dimension rewrites the shape of every array that uses it."""
    path = tmp_path / "grow.zarr"
    write_with_nczarr(path, NczarrV2())
    session = Session.open(DirectoryStore(path), NczarrV2())
    tree = session.dataset
    session.grow(tree.find_dimension("time"), 5)
    tas = tree.find_variable("tas")
    session.array(tas)[2:5, :] = np.full((3, 3), 7.5, "f4")
    session.close()
    ds = netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "r")
    try:
        assert len(ds.dimensions["time"]) == 5 and ds.dimensions["time"].isunlimited()
        assert ds["tas"].shape == (5, 3) and ds["both"].shape == (5, 3)
        assert ds["g 1/g2/g3/deep"].shape == (5, 256, 2, 2)
        np.testing.assert_array_equal(ds["tas"][2:5, :], np.full((3, 3), 7.5))
        assert not np.ma.getmaskarray(ds["tas"][:])[2:].any()
        assert np.ma.getmaskarray(ds["both"][:])[2:].all()
    finally:
        ds.close()


def test_nczarr_reads_netcdf4_pure_zarr(tmp_path: Path) -> None:
    """netcdf-c's mode=zarr: no NCZarr keys; dimensions from _ARRAY_DIMENSIONS (§4)."""
    path = tmp_path / "pure.zarr"
    ds = netCDF4.Dataset(f"file://{path}#mode=zarr,file", "w")
    ds.title = "pure"
    ds.setncattr("ratio", 2.5)
    ds.createDimension("x", 3)
    v = ds.createVariable("v", "i2", ("x",), fill_value=np.int16(-1))
    v.units = "m"
    c = ds.createVariable("c", "S1", ("x",))
    s = ds.createVariable("s", "f8")
    g = ds.createGroup("g")
    w = g.createVariable("w", "f4", ("x",))
    v[:] = [1, 2, 3]
    c[:] = np.array([b"a", b"b", b"c"])
    s.assignValue(4.5)
    w[:] = [0.5, 1.5, 2.5]
    ds.close()
    store = DirectoryStore(path, read_only=True)
    from nczarr.formats import detect

    found = detect(store)
    assert found.name == "ZARR_V2"
    session = Session.open(store, found, read_only=True)
    assert session.dataset == parse(
        r"""dataset zarr 2 {
            dimension x = 3
            variable char c(x)
            variable double s
            variable short v(x) {
                attribute short _FillValue = -1
                attribute char units = "m"
            }
            attribute char title = "pure"
            attribute double ratio = 2.5
            group g {
                variable float w(x)
            }
        }"""
    )
    tree = session.dataset
    assert session.array(tree.find_variable("c"))[...].tobytes() == b"abc"
    assert session.array(tree.find_variable("s"))[...].tolist() == [4.5]
    np.testing.assert_array_equal(session.array(tree.groups[0].variables[0])[...], [0.5, 1.5, 2.5])


def test_netcdf4_reads_unicode_char_attributes(tmp_path: Path) -> None:
    """netCDF4 cannot write non-ASCII char attributes (bytes are cut at the first non-ASCII
    byte, str becomes a string attribute) but reads the raw UTF-8 nczarr writes."""
    path = tmp_path / "u.zarr"
    tree = parse('dataset zarr 2 { attribute char a = "café ☃"  attribute char ctl = "tab\\there" }')
    Session.create(DirectoryStore(path), tree, NczarrV2()).close()
    ds = netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "r")
    try:
        assert ds.getncattr("a") == "café ☃" and ds.getncattr("ctl") == "tab\there"
    finally:
        ds.close()


def test_changes_are_seen_by_netcdf4(tmp_path: Path) -> None:
    """New, renamed and deleted nodes and attributes in an existing store."""
    path = tmp_path / "changed.zarr"
    write_with_nczarr(path, NczarrV2())
    session = Session.open(DirectoryStore(path), NczarrV2())
    tree = session.dataset
    session.rename(tree.find_variable("v_int"), "renamed int")
    session.rename(tree.find_group("g 1"), "group one")
    session.rename(tree.find_dimension("y"), "why")
    for group in tree.walk():  # references follow the renamed dimension
        for variable in group.variables:
            variable.dimensions = ["why" if ref == "y" else ref for ref in variable.dimensions]
    tree.attributes.remove(tree.find_attribute("a_short"))
    tree.add_attribute("added", AtomicType.USHORT, [7, 8])
    new = tree.find_group("group one").add_variable("new", AtomicType.DOUBLE, ["/x", "z"])
    new.add_attribute("note", AtomicType.STRING, ["fresh"])
    session.define(new)
    session.array(new)[...] = np.arange(8.0).reshape(4, 2)
    session.close()
    ds = netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "r")
    try:
        assert "renamed int" in ds.variables and "v_int" not in ds.variables
        np.testing.assert_array_equal(ds["renamed int"][:], [1, 2, 3, 4])
        assert list(ds.groups) == ["group one"]
        assert ds["tas"].dimensions == ("time", "why") and len(ds.dimensions["why"]) == 3
        assert "a_short" not in ds.ncattrs() and list(ds.getncattr("added")) == [7, 8]
        new_nc = ds["group one"]["new"]
        assert new_nc.dimensions == ("x", "z") and new_nc.getncattr("note") == "fresh"
        np.testing.assert_array_equal(new_nc[:], np.arange(8.0).reshape(4, 2))
        np.testing.assert_array_equal(ds["group one/g2/g3/deep"][0, 0, :, :], [[0.25, 0.5], [0.75, 1.0]])
    finally:
        ds.close()
