"""Scripts written against the netCDF4-python API and the recorder of what they observe.

Each script is ``script(nc, path, rec)``: ``nc`` is a module (``netCDF4`` or ``nczarr``), ``path``
a dataset location to create, ``rec`` a :class:`Recorder`. A script creates its dataset with
``nc.Dataset(path, "w", format=rec.format)``, reopens it to check what was stored, and records
values, reprs, exception classes and warnings. ``test_differential.py`` runs every script
through both modules and compares the observation lists.
"""

from __future__ import annotations

import datetime
import math
import pickle
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ALL_FORMATS = ("NCZARR", "NCZARR_V2")
# User-defined types and vlen strings are not (faithfully) stored by NCZarr 2.0.0.
V3_ONLY = ("NCZARR",)

# netCDF4 names HDF5 on the root line; nczarr names its own disk format there.
_DISK_FORMAT = re.compile(r"(data model, file format )[^)]*\)")


def _normalise(x: Any) -> Any:
    """A comparable, printable form of an observed value."""
    if x is np.ma.masked:
        return ("masked",)
    if isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        flat = zip(x.data.ravel().tolist(), mask.ravel().tolist())
        values = [None if m else _normalise(v) for v, m in flat]
        return ("MaskedArray", x.dtype.str, x.shape, values, mask.ravel().tolist(), _normalise(x.fill_value))
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.shape, [_normalise(v) for v in x.ravel().tolist()])
    if isinstance(x, np.generic):
        return (type(x).__name__, x.dtype.str, _normalise(x.item()))
    if isinstance(x, float):
        return ("float", "NaN" if math.isnan(x) else x)
    if isinstance(x, bool | int):
        return (type(x).__name__, x)
    if isinstance(x, list | tuple):
        return type(x)(_normalise(v) for v in x)
    if isinstance(x, dict):
        return {k: _normalise(v) for k, v in x.items()}
    if isinstance(x, str | bytes) or x is None:
        return x
    # cftime dates and other plain values compare by equality; their repr is readable
    return (type(x).__name__, repr(x))


def builtin_class(exc: BaseException) -> str:
    """The first class in the exception's MRO that is a builtin."""
    return next(cls.__name__ for cls in type(exc).__mro__ if cls.__module__ == "builtins")


@dataclass
class Recorder:
    """Collects the observations of one script run, in order."""

    format: str = "NETCDF4"  # what a script passes as ``format=`` when it creates its dataset
    observations: list[tuple[str, Any]] = field(default_factory=list)

    def value(self, label: str, x: Any) -> None:
        self.observations.append((label, _normalise(x)))

    def error(self, label: str, call: Callable[[], Any]) -> None:
        """Record the builtin class of what ``call`` raises, or "no error"."""
        try:
            call()
        except Exception as exc:
            self.observations.append((label, builtin_class(exc)))
        else:
            self.observations.append((label, "no error"))

    def repr(self, label: str, obj: Any) -> None:
        self.observations.append((label, _DISK_FORMAT.sub(r"\1<disk format>)", repr(obj))))

    def warns(self, label: str, call: Callable[[], Any]) -> Any:
        """Run ``call`` and record the (category, message) of each UserWarning it emits.

        Other categories are left out: numpy's RuntimeWarnings (overflow in a cast...) are
        side effects of how a library computes, not part of netCDF4's behaviour.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call()
        seen = [(w.category.__name__, str(w.message)) for w in caught if issubclass(w.category, UserWarning)]
        self.observations.append((label, seen))
        return result


@dataclass(frozen=True)
class Script:
    """A registered script and the nczarr disk formats it runs with."""

    name: str
    run: Callable[[Any, Path, Recorder], None]
    formats: tuple[str, ...]


SCRIPTS: list[Script] = []


def script(formats: tuple[str, ...] = ALL_FORMATS) -> Callable[[Callable], Callable]:
    """Register a script for the nczarr disk ``formats`` it uses only features of."""

    def register(run: Callable[[Any, Path, Recorder], None]) -> Callable[[Any, Path, Recorder], None]:
        SCRIPTS.append(Script(run.__name__, run, formats))
        return run

    return register


def _quiet(call: Callable[[], Any]) -> Any:
    """Run ``call`` ignoring its warnings (where a script checks values, not warnings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


# -- dimensions ------------------------------------------------------------------------------


@script()
def dimensions_basic(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        t = ds.createDimension("t", None)
        u = ds.createDimension("u", 0)
        x = ds.createDimension("x", 5)
        rec.value("names", list(ds.dimensions))
        rec.value("same object", ds.dimensions["x"] is x)
        rec.value("lens", [len(t), len(u), len(x), x.size])
        rec.value("unlimited", [t.isunlimited(), u.isunlimited(), x.isunlimited()])
        rec.value("group is ds", x.group() is ds)
        rec.repr("repr fixed", x)
        rec.repr("repr unlimited", t)
        rec.error("duplicate", lambda: ds.createDimension("x", 3))
        rec.error("set size", lambda: setattr(x, "size", 3))
        rec.error("set name", lambda: setattr(x, "name", "z"))
        ds.createVariable("v", "f4", ("t", "x"))
        ds["v"][0:3] = np.ones((3, 5))
        rec.value("grown", [len(t), t.size])
    with nc.Dataset(path, "r") as ds:
        rec.value("names reopened", list(ds.dimensions))
        rec.value("sizes reopened", [len(d) for d in ds.dimensions.values()])
        rec.value("unlimited reopened", [d.isunlimited() for d in ds.dimensions.values()])
        rec.repr("repr reopened", ds.dimensions["t"])


@script()
def dimensions_lookup_in_parents(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        level = ds.createDimension("level", 3)
        g = ds.createGroup("g")
        g.createDimension("lat", 2)
        v = g.createVariable("v", "f8", ("level", "lat"))
        rec.value("dims", v.dimensions)
        rec.value("get_dims parent object", v.get_dims()[0] is level)
        rec.value("get_dims own object", v.get_dims()[1] is g.dimensions["lat"])
        rec.value("group dims", list(g.dimensions))
        w = g.createVariable("w", "i4", (level, g.dimensions["lat"]))
        rec.value("by objects", w.dimensions)
        s = ds.createVariable("s", "i4", "level")
        rec.value("single name", s.dimensions)
        rec.error("unknown", lambda: g.createVariable("bad", "f4", ("nope",)))
        rec.error("child dim from root", lambda: ds.createVariable("bad2", "f4", ("lat",)))
    with nc.Dataset(path, "r") as ds:
        v = ds["g/v"]
        rec.value("dims reopened", v.dimensions)
        rec.value("shape reopened", v.shape)
        rec.value("get_dims reopened", v.get_dims()[0] is ds.dimensions["level"])


@script()
def dimensions_rename(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        x = ds.createDimension("x", 2)
        ds.createDimension("y", 3)
        v = ds.createVariable("v", "i2", ("x", "y"))
        ds.renameDimension("x", "xx")
        rec.value("keys", list(ds.dimensions))
        rec.value("same object", ds.dimensions["xx"] is x)
        rec.value("dim name", x.name)
        rec.value("var dims", v.dimensions)
        rec.error("unknown", lambda: ds.renameDimension("nope", "z"))
        rec.error("in use", lambda: ds.renameDimension("xx", "y"))
    with nc.Dataset(path, "a") as ds:
        rec.value("keys reopened", list(ds.dimensions))
        rec.value("var dims reopened", ds["v"].dimensions)
        ds.renameDimension("y", "yy")
    with nc.Dataset(path, "r") as ds:
        rec.value("keys after append", list(ds.dimensions))
        rec.value("var dims after append", ds["v"].dimensions)


@script()
def dimensions_several_unlimited(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("s", None)
        ds.createDimension("x", 2)
        v = ds.createVariable("v", "i4", ("t", "s", "x"), fill_value=-9)
        rec.value("shape empty", v.shape)
        v[1, 2] = [5, 6]
        rec.value("shape", v.shape)
        rec.value("values", v[:])
        w = ds.createVariable("w", "i4", ("s",))
        rec.value("w shape follows dim", w.shape)
        rec.value("w values", w[:])
    with nc.Dataset(path, "r") as ds:
        rec.value("sizes", {k: len(d) for k, d in ds.dimensions.items()})
        rec.value("values reopened", ds["v"][:])
        rec.value("w reopened", ds["w"][:])


# -- variables and types ---------------------------------------------------------------------

PRIMITIVES = ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8")


@script()
def variables_every_primitive_type(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 4)
        for code in PRIMITIVES:
            v = ds.createVariable(f"v_{code}", code, ("x",))
            v[:] = np.array([0, 1, 2, 100], dtype=code)
            rec.value(f"{code} dtype", str(v.dtype))
            rec.value(f"{code} datatype", str(v.datatype))
        # the spellings numpy.dtype() accepts
        for i, spec in enumerate(("f", "d", "i", "h", "b", "B", int, float, np.uint8, np.dtype("i8"))):
            rec.value(f"spelling {spec!r}", str(ds.createVariable(f"s{i}", spec, ("x",)).dtype))
    with nc.Dataset(path, "r") as ds:
        rec.value("names", list(ds.variables))
        for code in PRIMITIVES:
            v = ds[f"v_{code}"]
            rec.value(f"{code} values", v[:])
            rec.value(f"{code} one", v[3])
            rec.value(f"{code} props", (v.shape, v.ndim, v.size, len(v), v.dimensions, v.name))


@script()
def variables_illegal_types(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        rec.error("float16", lambda: ds.createVariable("a", np.float16, ("x",)))
        rec.error("complex without auto_complex", lambda: ds.createVariable("b", "c8", ("x",)))
        rec.error("bool", lambda: ds.createVariable("c", np.bool_, ("x",)))
        rec.error("duplicate name", lambda: [ds.createVariable("d", "f4", ("x",)) for _ in range(2)])
        rec.value("names", list(ds.variables))
    with nc.Dataset(path, "r") as ds:
        rec.value("names reopened", list(ds.variables))


@script()
def variables_properties_and_identity(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f8", ("t", "x"))
        s = ds.createVariable("s", "i4", ())
        rec.value("empty shape", (v.shape, v.size, len(v), v.ndim))
        rec.value("scalar", (s.shape, s.size, s.ndim, s.dimensions))
        rec.error("len scalar", lambda: len(s))
        rec.value("same object", ds.variables["v"] is v and ds["v"] is v)
        rec.value("group", v.group() is ds)
        rec.value("flags", (v.mask, v.scale, v.always_mask, v.chartostring))
        rec.error("pickle variable", lambda: pickle.dumps(v))
        v[:] = np.arange(6.0).reshape(2, 3)
        rec.value("iterated", list(v))
        rec.value("array", _quiet(lambda: np.asarray(v)))
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        rec.value("reopened", (v.shape, v.size, len(v), v.dtype.str))
        rec.value("iterated reopened", list(v))


# -- characters and strings ------------------------------------------------------------------


@script()
def char_without_encoding(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("n", 3)
        ds.createDimension("len", 4)
        v = ds.createVariable("c", "S1", ("n", "len"))
        v[:] = nc.stringtochar(np.array(["ab", "abcd", ""], "S4"))
        w = ds.createVariable("w", "c", ("len",))
        w[0:2] = [b"x", b"y"]
        rec.value("dtype", str(v.dtype))
    with nc.Dataset(path, "r") as ds:
        v = ds["c"]
        rec.value("all", v[:])
        rec.value("row", v[1])
        rec.value("one", v[0, 1])
        rec.value("w", ds["w"][:])
        rec.value("chartostring", nc.chartostring(v[:].filled(b"")))
        rec.value("fill", v.get_fill_value())


@script()
def char_with_encoding(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("n", 3)
        ds.createDimension("len", 6)
        v = ds.createVariable("c", "S1", ("n", "len"))
        v._Encoding = "utf-8"
        v[:] = np.array(["ab", "café", ""], "U6")
        v[2] = "xyz"
        w = ds.createVariable("w", "S1", ("len",))
        w._Encoding = "ascii"
        w[:] = "hello"
    with nc.Dataset(path, "r") as ds:
        v = ds["c"]
        rec.value("strings", v[:])
        rec.value("one string", v[1])
        rec.value("partial last axis", v[:, 0:2])
        rec.value("one char", v[0, 0])
        rec.value("scalar string", ds["w"][:])
        v.set_auto_chartostring(False)
        rec.value("chartostring off", v[:])
        rec.value("flag", v.chartostring)
    with nc.Dataset(path, "a") as ds:
        ds["c"][0] = b"bytes"
        ds.set_auto_chartostring(False)
        rec.value("dataset switch", (ds["c"].chartostring, ds["w"].chartostring))
    with nc.Dataset(path, "r") as ds:
        rec.value("after append", ds["c"][:])


@script()
def string_helpers(nc, path, rec):
    rec.value("stringtochar U", nc.stringtochar(np.array(["ab", "", "déf"], "U3")))
    rec.value("stringtochar S 2-D", nc.stringtochar(np.array([["ab", "c"], ["", "xyz"]], "S3")))
    rec.value("stringtochar n_strlen", nc.stringtochar(np.array(["abcdef"], "U6"), n_strlen=3))
    chars = np.array([[b"a", b"b", b""], [b"c", b"", b""]], "S1")
    rec.value("chartostring", nc.chartostring(chars))
    rec.value("chartostring bytes", nc.chartostring(chars, encoding="bytes"))
    rec.value("stringtoarr", nc.stringtoarr("abc", 5))
    rec.value("stringtoarr U", nc.stringtoarr("abc", 4, dtype="U"))
    rec.error("chartostring of ints", lambda: nc.chartostring(np.arange(3)))
    rec.error("stringtoarr dtype", lambda: nc.stringtoarr("abc", 4, dtype="i"))
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("n", 2)
        ds.createDimension("len", 3)
        ds.createVariable("c", "S1", ("n", "len"))[:] = nc.stringtochar(np.array(["ab", "xyz"], "S3"))
    with nc.Dataset(path, "r") as ds:
        rec.value("round trip", nc.chartostring(ds["c"][:]))


@script(formats=V3_ONLY)
def vlen_strings(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 4)
        v = ds.createVariable("s", str, ("x",))
        rec.value("dtype", v.dtype is str)
        rec.value("vltypes", list(ds.vltypes))
        v[0] = "ab"
        v[np.int32(1)] = "café"
        v[2.0] = "x" * 40
        rec.error("int array", lambda: v.__setitem__(slice(0, 2), np.array([1, 2])))
        u = ds.createVariable("u", "U5", ("x",))
        u[:] = np.array(["a", "bb", "ccc", "dddd"], "U4")
        f = ds.createVariable("f", str, ("x",), fill_value="zz")
        f[0] = "set"
        sc = ds.createVariable("scalar", str, ())
        sc[...] = "foo"
    with nc.Dataset(path, "r") as ds:
        v = ds["s"]
        rec.value("all", v[:])
        rec.value("one", v[1])
        rec.value("selection", v[[0, 2]])
        rec.value("u dtype", ds["u"].dtype is str)
        rec.value("u", ds["u"][:])
        rec.value("fill string", ds["f"][:])
        rec.value("fill attr", ds["f"].getncattr("_FillValue"))
        rec.value("scalar", ds["scalar"][...])
        rec.value("scalar getValue", ds["scalar"].getValue())
        rec.value("get_fill_value", v.get_fill_value())
        rec.repr("repr", v)


@script(formats=V3_ONLY)
def vlen_strings_with_encoding(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        v = ds.createVariable("s", str, ("x",))
        v._Encoding = "latin-1"
        v[:] = np.array(["é", "ok"], object)
    with nc.Dataset(path, "r") as ds:
        rec.value("values", ds["s"][:])
        rec.value("encoding", ds["s"]._Encoding)


# -- user-defined types (NCZarr v3 only) -----------------------------------------------------


@script(formats=V3_ONLY)
def enum_type(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        cloud = ds.createEnumType(np.uint8, "cloud_t", {"clear": 0, "cumulus": 1, "missing": 255})
        ds.createDimension("x", 4)
        v = ds.createVariable("c", cloud, ("x",), fill_value=255)
        v[0:3] = np.array([0, 1, 1], "u1")
        rec.error("illegal value", lambda: v.__setitem__(3, 7))
        rec.error("float base", lambda: ds.createEnumType(np.float32, "bad_t", {"a": 1.0}))
        rec.repr("type repr", cloud)
        rec.value("datatype is type", v.datatype is cloud)
    with nc.Dataset(path, "r") as ds:
        rec.value("enumtypes", list(ds.enumtypes))
        t = ds.enumtypes["cloud_t"]
        rec.value("enum_dict", t.enum_dict)
        rec.value("type dtype", str(t.dtype))
        rec.value("name", t.name)
        v = ds["c"]
        rec.value("values", v[:])
        rec.value("dtype", str(v.dtype))
        rec.repr("var repr", v)
        rec.repr("type repr reopened", t)


@script(formats=V3_ONLY)
def compound_type(nc, path, rec):
    dt = np.dtype([("a", "i4"), ("b", "f8"), ("c", "u1")])
    with nc.Dataset(path, "w", format=rec.format) as ds:
        cmp = ds.createCompoundType(dt, "cmp_t")
        ds.createDimension("x", 2)
        v = ds.createVariable("v", cmp, ("x",))
        data = np.zeros(2, dt)
        data["a"] = [1, 2]
        data["b"] = [0.5, 1.5]
        data["c"] = [7, 8]
        v[:] = data
        rec.value("type dtype", str(cmp.dtype))
        rec.repr("type repr", cmp)
    with nc.Dataset(path, "r") as ds:
        rec.value("cmptypes", list(ds.cmptypes))
        v = ds["v"]
        got = v[:]
        rec.value("fields", {name: got[name] for name in ("a", "b", "c")})
        rec.value("dtype", str(v.dtype))
        rec.value("one", v[1]["b"])
        rec.repr("var repr", v)


@script(formats=V3_ONLY)
def vlen_of_ints(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        vl = ds.createVLType(np.int32, "ragged_t")
        ds.createDimension("x", 3)
        v = ds.createVariable("r", vl, ("x",))
        data = np.empty(3, object)
        data[:] = [np.arange(1, dtype="i4"), np.arange(3, dtype="i4"), np.arange(2, dtype="i4")]
        v[:] = data
        v[2] = np.array([9, 9, 9, 9], "i4")
        rec.repr("type repr", vl)
    with nc.Dataset(path, "r") as ds:
        rec.value("vltypes", list(ds.vltypes))
        v = ds["r"]
        rec.value("dtype", str(v.dtype))
        rec.value("values", [list(x) for x in v[:]])
        rec.value("one", v[1])
        rec.repr("var repr", v)


# -- attributes ------------------------------------------------------------------------------

ATTRIBUTE_VALUES = {
    "py_int": 1,
    "py_float": 1.5,
    "np_f4": np.float32(2.5),
    "np_i1": np.int8(-3),
    "np_i2": np.int16(3),
    "np_u2": np.uint16(4),
    "np_u4": np.uint32(7),
    "np_u8": np.uint64(5),
    "np_i8": np.int64(-6),
    "int_list": [1, 2, 3],
    "mixed_list": [1, 2.5],
    "u2_array": np.arange(3, dtype="u2"),
    "f4_array": np.array([0.5, 1.5], "f4"),
    "one_element": np.array([7], "i4"),
    "ascii": "abc",
    "unicode": "café",
    "bytes": b"xyz",
    "empty": "",
    "strings": ["a", "bb"],
    "one_string": ["only"],
}


@script()
def attribute_types(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        v = ds.createVariable("v", "f8", ("x",))
        for owner in (ds, v):
            for name, value in ATTRIBUTE_VALUES.items():
                setattr(owner, name, value)
        rec.value("written", ds.py_int)
    with nc.Dataset(path, "r") as ds:
        for label, owner in (("dataset", ds), ("variable", ds["v"])):
            rec.value(f"{label} names", owner.ncattrs())
            for name in ATTRIBUTE_VALUES:
                rec.value(f"{label} {name}", getattr(owner, name))
            rec.value(f"{label} getncattr", owner.getncattr("unicode"))


@script()
def attribute_illegal_values(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        illegal = {"a_bool": True, "a_none": None, "a_dict": {}, "a_f2": np.float16(1), "a_c": 1j}
        for name, value in illegal.items():
            rec.error(name, lambda: setattr(ds, name, value))
        rec.error("2-D", lambda: setattr(ds, "twod", [[1, 2], [3, 4]]))
        rec.value("names", ds.ncattrs())
    with nc.Dataset(path, "r") as ds:
        rec.value("names reopened", ds.ncattrs())


@script()
def attribute_strings(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.setncattr_string("s1", "abc")
        ds.setncattr_string("s2", ["a", "b"])
        ds.setncattr_string("s3", ["single"])
        ds.raw = "caf\xe9".encode("latin-1")
        ds.big5 = "中文".encode("big5")
        ds.createDimension("x", 1)
        v = ds.createVariable("v", "i4", ("x",))
        v.set_ncstring_attrs(True)
        v.units = "m"
    with nc.Dataset(path, "r") as ds:
        for name in ("s1", "s2", "s3", "raw"):
            rec.value(name, ds.getncattr(name))
        rec.value("big5", ds.getncattr("big5", encoding="big5"))
        rec.value("units", ds["v"].units)


@script()
def attribute_operations(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 1)
        v = ds.createVariable("v", "i4", ("x",))
        ds.setncatts({"b": 2, "a": "one", "c": [1.0, 2.0]})
        ds.setncattr("d", np.int16(4))
        v.setncatts({"units": "m", "scale": 3})
        rec.value("order", ds.ncattrs())
        rec.value("__dict__", list(ds.__dict__.items()))
        del ds.a
        ds.delncattr("c")
        ds.renameAttribute("b", "bb")
        ds.b2 = 5
        rec.value("after edits", ds.ncattrs())
        rec.error("missing read", lambda: ds.nope)
        rec.value("getattr default", getattr(ds, "nope", "dflt"))
        rec.error("missing getncattr", lambda: ds.getncattr("nope"))
        rec.error("missing delete", lambda: ds.delncattr("nope"))
        rec.error("missing del", lambda: delattr(ds, "nope"))
        rec.error("missing rename", lambda: ds.renameAttribute("nope", "z"))
        rec.error("rename onto existing", lambda: ds.renameAttribute("bb", "d"))
        rec.value("var __dict__", v.__dict__)
    with nc.Dataset(path, "r+") as ds:
        rec.value("order reopened", ds.ncattrs())
        rec.value("__dict__ reopened", list(ds.__dict__.items()))
        ds.d = "replaced"
        ds["v"].renameAttribute("units", "unit")
    with nc.Dataset(path, "r") as ds:
        # HDF5 moves an attribute to the end when a later session changes its type or renames
        # it: the order is not compared
        rec.value("replaced", (sorted(ds.ncattrs()), ds.d))
        rec.value("var attrs", sorted(ds["v"].__dict__.items()))


@script()
def attribute_reserved_names(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        v = ds.createVariable("v", "i2", ("x",))
        for name in ("path", "groups", "dimensions", "variables", "data_model", "parent", "name"):
            rec.error(f"rebind {name}", lambda: setattr(ds, name, "x"))
            rec.error(f"delete {name}", lambda: delattr(ds, name))
        for name in ("dtype", "ndim", "mask", "scale", "name", "always_mask", "chartostring"):
            rec.error(f"rebind variable {name}", lambda: setattr(v, name, 1))
        ds.setncattr("ndim", "three")
        ds.setncattr("file_format", "mine")
        v.setncattr("dtype", "attr")
        rec.value("python attributes unchanged", (ds.path, ds.data_model, str(v.dtype)))
        rec.error("_FillValue by attribute", lambda: setattr(v, "_FillValue", 1))
        rec.error("_FillValue by setncattr", lambda: v.setncattr("_FillValue", 1))
        rec.error("dunder", lambda: ds.__nope__)
    with nc.Dataset(path, "r") as ds:
        rec.value("names", ds.ncattrs())
        rec.value("values", [ds.getncattr("ndim"), ds.getncattr("file_format"), ds["v"].getncattr("dtype")])
        rec.value("variable attrs", ds["v"].ncattrs())


@script()
def attribute_valid_casts(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        v = ds.createVariable("v", "i2", ("x",))
        rec.warns("missing_value 5.0", lambda: setattr(v, "missing_value", 5.0))
        rec.warns("valid_min 1.5", lambda: setattr(v, "valid_min", 1.5))
        rec.warns("valid_range", lambda: setattr(v, "valid_range", [0.0, 100.0]))
        rec.warns("valid_max 2.5", lambda: setattr(v, "valid_max", np.float32(2.5)))
        v.setncattr("other", 5.0)
        f = ds.createVariable("f", "f4", ("x",))
        f.missing_value = 1.5
        rec.value("read back", [v.missing_value, v.valid_min, v.valid_range, v.valid_max, f.missing_value])
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        rec.value("reopened", [getattr(v, n) for n in v.ncattrs()])
        rec.value("f reopened", ds["f"].missing_value)


# -- groups and renames ----------------------------------------------------------------------


@script()
def groups_paths(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        c = ds.createGroup("/a/b/c")
        rec.value("c path", (c.path, c.name, c.parent.path, c.parent.parent.name))
        rec.value("idempotent", ds.createGroup("a") is ds.groups["a"] and ds.createGroup("/a/b/c") is c)
        rec.value("lookup", ds["a/b"] is c.parent and ds["/a/b/c"] is c)
        ds.createGroup("z")
        ds.createGroup("a/y")
        v = ds.createVariable("/g1/g2/v", "f8", ())
        rec.value("created groups", list(ds.groups))
        rec.value("v path", (v.group().path, v.name, ds["/g1/g2/v"] is v, ds["g1"]["g2/v"] is v))
        g2 = ds["g1/g2"]
        w = g2.createVariable("./data/w", "i4", ())
        rec.value("relative", (w.group().path, list(g2.groups)))
        rec.error("variable named like a group", lambda: ds["a"].createVariable("b", "i4", ()))
        rec.error("missing", lambda: ds["nope"])
        rec.error("missing nested", lambda: ds["a/nope"])
        rec.error("duplicate group name as variable", lambda: ds["a"].createVariable("y", "i4", ()))
        rec.value("root", (ds.path, ds.name, ds.parent))
        rec.error("group close", lambda: c.close())
        rec.value("filepath from group", c.filepath() == ds.filepath())
    with nc.Dataset(path, "r") as ds:
        seen = []

        def walk(group):
            for child in group.groups.values():
                seen.append(child.path)
                walk(child)

        walk(ds)
        rec.value("walk", seen)
        rec.value("variables", (list(ds["a"].variables), list(ds["g1/g2/data"].variables)))
        rec.value("data model", (ds["a/b"].data_model, ds["a/b"].file_format))


@script()
def groups_renames(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        g = ds.createGroup("g")
        ds.createGroup("h")
        g.createDimension("x", 2)
        g.createVariable("v", "i4", ("x",))[:] = [1, 2]
        g.createVariable("w", "i4", ())
    # HDF5 fails ("NetCDF: HDF error") on some renames in the session that defined the variables
    with nc.Dataset(path, "a") as ds:
        g = ds["g"]
        v = g["v"]
        g.renameVariable("v", "vv")
        rec.value("variables", list(g.variables))
        rec.value("variable name", (v.name, g["vv"] is v))
        rec.error("rename variable unknown", lambda: g.renameVariable("nope", "z"))
        rec.error("rename variable in use", lambda: g.renameVariable("vv", "w"))
        ds.renameGroup("g", "gg")
        rec.value("groups", list(ds.groups))
        # netCDF4 keeps the old name in Group.path until the file is reopened: not recorded
        rec.value("same group", (ds.groups["gg"] is g, g.name))
        rec.error("rename group unknown", lambda: ds.renameGroup("nope", "z"))
        rec.error("rename group in use", lambda: ds.renameGroup("gg", "h"))
    with nc.Dataset(path, "a") as ds:
        # the order after a rename on reopening is HDF5's storage order: compared sorted
        rec.value("reopened", (sorted(ds.groups), ds["gg"].path, sorted(ds["gg"].variables), ds["gg/vv"][:]))
        ds.renameGroup("h", "hh")
    with nc.Dataset(path, "r") as ds:
        rec.value("after append", sorted(ds.groups))


# -- reading: indexing -----------------------------------------------------------------------


def _cube(nc, path, rec):
    """A (t=unlimited 4, y=5, x=6) int32 variable holding arange."""
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("y", 5)
        ds.createDimension("x", 6)
        ds.createVariable("v", "i4", ("t", "y", "x"))[:] = np.arange(120).reshape(4, 5, 6)


@script()
def index_ints_and_slices(nc, path, rec):
    _cube(nc, path, rec)
    keys = {
        "int": 1,
        "negative": -1,
        "three ints": (1, 2, 3),
        "negative ints": (-1, -2, -6),
        "numpy ints": (np.int64(2), np.uint8(1)),
        "float ints": (0, 2.0, 0),
        "string ints": (0, "-1", "2"),
        "slice": slice(1, 3),
        "slices with steps": (slice(None, None, 2), slice(1, None, 3), slice(None, 4, 2)),
        "negative steps": (0, slice(None, None, -2), slice(4, 0, -1)),
        "negative bounds": (slice(-3, -1), slice(-2, None), 0),
        "clipped": (0, slice(3, 100), 0),
        "empty": (slice(2, 2), 0),
        "reversed empty": (slice(0, 3, -1),),
        "ellipsis last": (Ellipsis, 0),
        "ellipsis middle": (1, Ellipsis, 2),
        "ellipsis alone": Ellipsis,
        "full": slice(None),
        "empty tuple": (),
    }
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        for label, key in keys.items():
            rec.value(label, v[key])


@script()
def index_sequences_and_masks(nc, path, rec):
    _cube(nc, path, rec)
    keys = {
        "list first axis": [0, 1, 3],
        "orthogonal": ([0, 1], [1, 3], [0, 2]),
        "unsorted": (0, [3, 1], 0),
        "repeated": (slice(None), [1, 2, 2], 0),
        "numpy array": (np.array([3, 0]), 1),
        "negative in list": (0, [-1, 0], [-2]),
        "length-1 keeps axis": ([1], [2], [3]),
        "int drops axis": ([0, 1, 2], 4, 5),
        "evenly spaced": (0, 0, [0, 2, 4]),
        "bool": (np.array([True, False, True, False]), 0),
        "bool list": (0, [True, False, False, False, True]),
        "bool all false": (np.zeros(4, bool),),
        "bool and list": (np.array([False, True, True, False]), [4, 0], np.array([True] * 3 + [False] * 3)),
        "tuple first axis": ((0, 1, 3),),
    }
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        for label, key in keys.items():
            rec.value(label, v[key])


@script()
def index_errors(nc, path, rec):
    _cube(nc, path, rec)
    keys = {
        "int out of range": (4,),
        "negative out of range": (-5,),
        "int out of range on fixed": (0, 5),
        "sequence out of range": (0, [1, 5]),
        "two ellipses": (Ellipsis, 0, Ellipsis),
        "newaxis": (None,),
        "non-integral float": (2.5,),
        "object": ({},),
        "2-D index": (np.array([[0, 1], [1, 0]]),),
        "too many indices": (0, 0, 0, 0),
        "bool length": (np.array([True, False]),),
        "non-numeric string": ("a",),
    }
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        for label, key in keys.items():
            rec.error(label, lambda: v[key])
    with nc.Dataset(path, "a") as ds:
        ds.createDimension("one", 1)
        one = ds.createVariable("one", "i4", ("one",))
        one[0] = 3
        rec.error("-2 on a length-1 dimension", lambda: one[-2])
        rec.value("-1 on a length-1 dimension", one[-1])


@script()
def index_scalar_variables(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        s = ds.createVariable("s", "f8", ())
        rec.value("unwritten", s[...])
        s.assignValue(2.5)
        t = ds.createVariable("t", "i2", ())
        t[:] = 7
        u = ds.createVariable("u", "i4", ())
        u[()] = np.int32(-4)
        ds.createDimension("x", 2)
        x = ds.createVariable("x", "i4", ("x",))
        rec.error("getValue of array", lambda: x.getValue())
        rec.error("assignValue of array", lambda: x.assignValue(1))
    with nc.Dataset(path, "r") as ds:
        s = ds["s"]
        for label, key in (("ellipsis", Ellipsis), ("colon", slice(None)), ("empty tuple", ()), ("zero", 0)):
            rec.value(label, s[key])
        rec.value("getValue", s.getValue())
        rec.value("t", ds["t"][...])
        rec.value("u", ds["u"][:])
        rec.value("array", _quiet(lambda: np.array(s)))


# -- writing ---------------------------------------------------------------------------------


@script()
def write_growth_of_unlimited(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 2)
        u = ds.createVariable("u", "i4", ("t",))
        u[10:] = [1, 2]
        rec.value("open-ended slice", u.shape)
        u[14] = 5
        rec.value("int beyond", u.shape)
        u[[1, 17]] = [6, 7]
        rec.value("list beyond", u.shape)
        u[np.array([False] * 18 + [True, False, True])] = [8, 9]
        rec.value("bool beyond", u.shape)
        u[22:24] = [3, 4]
        rec.value("stop beyond", (u.shape, len(ds.dimensions["t"])))
        v = ds.createVariable("v", "f4", ("t", "x"))
        rec.value("shares dim", v.shape)
        c = ds.createVariable("c", "i4", ("t",))
        # (netcdf-c misplaces writes to a variable whose non-leading unlimited dimension was grown
        # by another variable: e has its own)
        ds.createDimension("s", None)
        e = ds.createVariable("e", "i8", ("x", "s"))
        e[:, 0:2] = 1
        e[1, 3] = 5
        e[0, 2:4] = [7, 8]
        rec.value("second axis", e.shape)
        f = ds.createVariable("f", "i4", ("x",))
        rec.error("fixed int beyond", lambda: f.__setitem__(2, 1))
        rec.error("fixed slice beyond", lambda: f.__setitem__(slice(0, 3), [1, 2, 3]))
        rec.value("c", c.shape)
    with nc.Dataset(path, "r") as ds:
        rec.value("u", ds["u"][:])
        rec.value("v", ds["v"][:])
        rec.value("e", ds["e"][:])
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        c = ds.createVariable("c", "i4", ("t",))
        c[:] = 1
        rec.value("scalar into empty unlimited", c[:])


@script()
def write_broadcasting(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("a", 2)
        ds.createDimension("b", 5)
        ds.createDimension("c", 4)
        v = ds.createVariable("v", "f8", ("a", "b", "c"))
        v[:] = 1.5
        v[0] = np.arange(4)
        v[1, :, 0:1] = np.arange(5).reshape(5, 1)
        v[1, 0:2] = np.ones((1, 2, 4)) * 9
        w = ds.createVariable("w", "i2", ("b", "c"))
        w[:] = np.arange(5).reshape(5, 1)
        data = np.arange(20, dtype="f8").reshape(4, 5)
        copy = data.copy()
        w[:] = data.T
        rec.value("caller unchanged", np.array_equal(data, copy))
        w[[0, 2], 1] = [-1.7, -2.9]
        rec.error("impossible shape", lambda: w.__setitem__(slice(None), np.ones((3, 2))))
        rec.error("too much data", lambda: w.__setitem__((0, slice(None)), np.arange(6)))
        rec.error("read-write type", lambda: w.__setitem__(0, "abc"))
    with nc.Dataset(path, "r") as ds:
        rec.value("v", ds["v"][:])
        rec.value("w", ds["w"][:])


@script()
def write_extra_unit_axes_and_strides(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        for name in "xyz":
            ds.createDimension(name, 5)
        v = ds.createVariable("v", "i4", ("x", "y", "z"), fill_value=0)
        v[:] = np.ones((5, 1, 5))
        rec.error("extra unit axis", lambda: v.__setitem__((slice(None), 0, slice(None)), np.ones((5, 1, 5))))
        # (netCDF4 fails on a negative step combined with an integer index: not recorded)
        v[::2, 1:2, ::-1] = np.arange(1, 16).reshape(3, 1, 5)
        v[1:4:2, ::-2, 3:4] = 7
        rec.error("sequences", lambda: v.__setitem__(([4, 0], 2, [1, 3]), [[1, 2], [3, 4]]))
        v[..., 4] = 8
    with nc.Dataset(path, "r") as ds:
        rec.value("v", ds["v"][:])


# -- mask, scale, unsigned -------------------------------------------------------------------


def _raw(ds, name):
    """The stored values of a variable, with the auto conversions off for this read only."""
    v = ds[name]
    v.set_auto_maskandscale(False)
    data = v[:]
    v.set_auto_maskandscale(True)
    return data


@script()
def maskscale_worked_example(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 6)
        v = ds.createVariable("v", "i2", ("x",), fill_value=-1)
        v.scale_factor = np.float32(0.5)
        v.add_offset = np.float32(10)
        v.missing_value = 99
        v.valid_range = [0, 50]
        v.set_auto_maskandscale(False)
        v[:] = [-1, 99, 0, 20, 60, 7]
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        rec.value("default", v[:])
        rec.value("element", v[3])
        rec.value("masked element", v[0])
        v.set_auto_scale(False)
        rec.value("scale off", v[:])
        v.set_auto_scale(True)
        v.set_auto_mask(False)
        rec.value("mask off", v[:])
        v.set_auto_maskandscale(False)
        rec.value("both off", v[:])
        rec.value("flags", (v.mask, v.scale))
    with nc.Dataset(path, "a") as ds:
        v = ds["v"]
        v[:] = np.ma.array([10.0, 11.0, 12.0, 13.0, 14.0, 15.0], mask=[0, 1, 0, 0, 0, 0])
        v[5] = 30.2
        rec.value("packed", _raw(ds, "v"))
        rec.value("unpacked", v[:])


@script()
def maskscale_unsigned(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 4)
        for name, flag in (("t", "true"), ("T", "True"), ("f", "false"), ("u", "TRUE")):
            v = ds.createVariable(name, "i1", ("x",))
            v._Unsigned = flag
            v.set_auto_maskandscale(False)
            v[:] = np.array([0, -1, 127, -127], "i1")
        s = ds.createVariable("s", "i2", ("x",), fill_value=-5)
        s._Unsigned = "true"
        s.set_auto_maskandscale(False)
        s[:] = np.array([-5, -32767, 1, -1], "i2")
    with nc.Dataset(path, "r") as ds:
        for name in ("t", "T", "f", "u", "s"):
            rec.value(name, ds[name][:])
        t = ds["t"]
        t.set_auto_mask(False)
        rec.value("mask off", t[:])
        t.set_auto_scale(False)
        rec.value("scale off", t[:])
    with nc.Dataset(path, "a") as ds:
        ds["t"][:] = np.array([200, 255, 1, 0], "u1")
        rec.value("written unsigned", _raw(ds, "t"))


@script()
def maskscale_valid_and_missing(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 6)
        data = np.array([-5, 0, 3, 7, 10, 99], "f4")
        specs = {
            "vmin": {"valid_min": np.float32(0)},
            "vmax": {"valid_max": np.float32(7)},
            "vboth": {"valid_min": np.float32(0), "valid_max": np.float32(7)},
            "vrange": {"valid_range": np.array([1, 9], "f4")},
            "vrange_wins": {"valid_range": np.array([1, 9], "f4"), "valid_min": np.float32(-10)},
            "miss_vector": {"missing_value": np.array([3, 99], "f4")},
            "miss_unsafe": {"missing_value": 1e300},
            "miss_string": {"missing_value": "x"},
        }
        for name, attrs in specs.items():
            v = ds.createVariable(name, "f4", ("x",))
            for key, value in attrs.items():
                v.setncattr(key, value)
            v[:] = data
        n = ds.createVariable("nanfill", "f8", ("x",), fill_value=np.nan)
        n[:] = [np.nan, 1.0, np.nan, 2.0, 3.0, 4.0]
        b = ds.createVariable("bytes", "i1", ("x",))
        b[:] = np.array([-127, 0, 1, 2, 3, 4], "i1")
        c = ds.createVariable("chars", "S1", ("x",))
        c.valid_min = b"b"
        c[:] = np.array([b"a", b"b", b"", b"c", b"d", b"z"], "S1")
    with nc.Dataset(path, "r") as ds:
        for name in ("vmin", "vmax", "vboth", "vrange", "vrange_wins", "miss_vector", "nanfill", "bytes"):
            rec.value(name, ds[name][:])
        rec.value("chars", rec.warns("chars warnings", lambda: ds["chars"][:]))
        rec.value("miss_unsafe", rec.warns("miss_unsafe warnings", lambda: ds["miss_unsafe"][:]))
        rec.value("miss_string", rec.warns("miss_string warnings", lambda: ds["miss_string"][:]))


@script()
def maskscale_scale_offset_types(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        cases = {
            "f4_attrs": (np.float32(2), np.float32(1)),
            "py_floats": (2.0, 1.0),
            "identity_f4": (np.float32(1), 0),
            "int_attrs": (np.int16(3), np.int16(2)),
            "only_scale": (np.float32(0.25), None),
            "only_offset": (None, 100.0),
        }
        for name, (scale, offset) in cases.items():
            v = ds.createVariable(name, "i2", ("x",))
            if scale is not None:
                v.scale_factor = scale
            if offset is not None:
                v.add_offset = offset
            v[:] = [1.2, 5.0, 9.9]
            rec.value(f"{name} raw", _raw(ds, name))
        bad = ds.createVariable("bad", "i2", ("x",))
        bad.scale_factor = "two"
        bad.set_auto_maskandscale(False)
        bad[:] = [1, 2, 3]
    with nc.Dataset(path, "r") as ds:
        for name in ("f4_attrs", "py_floats", "identity_f4", "int_attrs", "only_scale", "only_offset"):
            rec.value(name, ds[name][:])
        rec.value("bad", rec.warns("bad warnings", lambda: ds["bad"][:]))


@script()
def maskscale_switches_recursive(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        g = ds.createGroup("g")
        for owner in (ds, g):
            v = owner.createVariable("v", "i2", ("x",), fill_value=-1)
            v.scale_factor = 2.0
            v.set_auto_maskandscale(False)
            v[:] = [-1, 1, 2]
    with nc.Dataset(path, "r") as ds:
        ds.set_auto_mask(False)
        rec.value("flags after set_auto_mask", [(v.mask, v.scale) for v in (ds["v"], ds["g/v"])])
        rec.value("root", ds["v"][:])
        rec.value("child", ds["g/v"][:])
        ds.set_auto_maskandscale(True)
        ds.set_auto_scale(False)
        rec.value("scale off", ds["g/v"][:])
        ds.set_auto_maskandscale(False)
        rec.value("both off", ds["g/v"][:])
        ds.set_auto_maskandscale(True)
        ds["g"].set_always_mask(False)
        rec.value("always_mask flags", (ds["v"].always_mask, ds["g/v"].always_mask))
        rec.value("nothing masked plain", ds["g/v"][1:])
        rec.value("something masked", ds["g/v"][:])
        ds["v"].set_always_mask(False)
        rec.value("root always_mask off", ds["v"][1:])
    with nc.Dataset(path, "a") as ds:
        ds.set_auto_mask(False)
        w = ds.createVariable("w", "i4", ("x",))
        rec.value("new variable keeps defaults", (w.mask, w.scale, w.always_mask))
        rec.value("new variable unwritten", w[:])


@script()
def maskscale_masked_writes(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 4)
        a = ds.createVariable("a", "i2", ("x",))
        a.missing_value = np.int16(99)
        a[:] = np.ma.array([1, 2, 3, 4], mask=[1, 0, 0, 1])
        b = ds.createVariable("b", "f4", ("x",), fill_value=-9.0)
        b[:] = np.ma.array([1, 2, 3, 4], mask=[0, 1, 0, 0])
        c = ds.createVariable("c", "i4", ("x",))
        c[:] = np.ma.array([1, 2, 3, 4], mask=[0, 0, 1, 0])
        d = ds.createVariable("d", "i2", ("x",))
        d.missing_value = np.array([7, 8], "i2")
        masked = np.ma.array([1, 2, 3, 4], mask=[1, 0, 0, 0])
        rec.error("vector missing_value", lambda: d.__setitem__(slice(None), masked))
        d[:] = np.ma.array([7, 2, 8, 4], mask=[1, 0, 1, 0])
        s = ds.createVariable("s", "c", ())
        s[:] = np.ma.masked
        data = np.ma.array([5, 6, 7, 8], mask=[0, 1, 0, 0])
        keep = (data.data.copy(), data.mask.copy())
        a[:] = data
        unchanged = np.array_equal(keep[0], data.data) and np.array_equal(keep[1], data.mask)
        rec.value("caller unchanged", unchanged)
    with nc.Dataset(path, "r") as ds:
        for name in ("a", "b", "c", "d", "s"):
            rec.value(f"{name} raw", _raw(ds, name))
            rec.value(name, ds[name][:])


# -- fill values -----------------------------------------------------------------------------


@script()
def fill_value_defaults(nc, path, rec):
    rec.value("default_fillvals", nc.default_fillvals)
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        for code in (*PRIMITIVES, "S1"):
            v = ds.createVariable(f"v_{code}", code, ("x",))
            rec.value(f"{code} get_fill_value", v.get_fill_value())
            rec.value(f"{code} attrs", v.ncattrs())
    with nc.Dataset(path, "r") as ds:
        for code in (*PRIMITIVES, "S1"):
            v = ds[f"v_{code}"]
            v.set_auto_mask(False)
            rec.value(f"{code} unwritten raw", v[:])
            rec.value(f"{code} get_fill_value reopened", v.get_fill_value())


@script()
def fill_value_keywords(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        off = ds.createVariable("off", "i4", ("x",), fill_value=False)
        # netCDF4 stores 0.0 for an f4 variable with fill_value="default" (a bug not to copy): f8, i4
        dflt = ds.createVariable("dflt", "f8", ("x",), fill_value="default")
        dflt_int = ds.createVariable("dflt_int", "i4", ("x",), fill_value="default")
        given = ds.createVariable("given", "i2", ("x",), fill_value=7.0)
        char = ds.createVariable("char", "S1", ("x",), fill_value=b"Z")
        nan = ds.createVariable("nan", "f4", ("x",), fill_value=np.nan)
        for v in (off, dflt, dflt_int, given, char, nan):
            rec.value(f"{v.name} get_fill_value", v.get_fill_value())
            rec.value(f"{v.name} attrs", [(n, v.getncattr(n)) for n in v.ncattrs()])
        off[0] = 1
        given[0] = 1
        char[0] = b"a"
    with nc.Dataset(path, "r") as ds:
        for name in ("dflt", "dflt_int", "given", "char", "nan"):
            v = ds[name]
            rec.value(f"{name} _FillValue", v._FillValue)
            rec.value(f"{name} values", v[:])
        rec.value("off get_fill_value", ds["off"].get_fill_value())
        rec.value("off first", ds["off"][0])
        rec.repr("off repr", ds["off"])
        rec.repr("given repr", ds["given"])
        rec.repr("char repr", ds["char"])


@script()
def fill_mode_off(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        ds.set_fill_off()
        b = ds.createVariable("b", "i1", ("x",))
        u = ds.createVariable("u", "u1", ("x",))
        i = ds.createVariable("i", "i2", ("x",))
        b[:] = np.array([-127, 0, 1], "i1")
        u[:] = np.array([255, 0, 1], "u1")
        i[:] = np.array([-32767, 0, 1], "i2")
    with nc.Dataset(path, "r") as ds:
        # (netCDF4 reports "filling on" until the file is reopened; nczarr "filling off" at once)
        rec.repr("byte repr", ds["b"])
        rec.repr("short repr", ds["i"])
        for name in ("b", "u", "i"):
            rec.value(name, ds[name][:])
    with nc.Dataset(path, "a") as ds:
        ds.set_fill_on()
        ds.createVariable("later", "i1", ("x",))[0] = 5
    with nc.Dataset(path, "r") as ds:
        rec.value("later", ds["later"][:])


# -- storage keywords ------------------------------------------------------------------------


@script()
def compression_filters(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 40)
        ds.createDimension("y", 10)
        kinds = {
            "plain": {},
            "zlib": {"zlib": True},
            "zlib9_noshuffle": {"zlib": True, "complevel": 9, "shuffle": False},
            "zlib_fletcher": {"compression": "zlib", "fletcher32": True},
            "complevel0": {"zlib": True, "complevel": 0},
            "zstd": {"compression": "zstd", "complevel": 3},
            "bzip2": {"compression": "bzip2", "complevel": 5},
            "blosc_lz4": {"compression": "blosc_lz4", "blosc_shuffle": 2},
            "blosc_zstd": {"compression": "blosc_zstd", "blosc_shuffle": 0, "complevel": 2},
            "blosc_lz": {"compression": "blosc_lz"},
            "fletcher_only": {"fletcher32": True},
        }
        data = np.arange(400, dtype="f4").reshape(40, 10) / 7
        for name, kwargs in kinds.items():
            v = ds.createVariable(name, "f4", ("x", "y"), **kwargs)
            v[:] = data
            rec.value(f"{name} filters", v.filters())
        s = ds.createVariable("scalar", "f4", (), zlib=True)
        rec.value("scalar filters", s.filters())
        rec.error("bad compression", lambda: ds.createVariable("bad", "f4", ("x",), compression="lzma"))
        rec.value("has filters", (ds.has_zstd_filter(), ds.has_bzip2_filter(), ds.has_blosc_filter()))
    with nc.Dataset(path, "r") as ds:
        for name in kinds:
            rec.value(f"{name} filters reopened", ds[name].filters())
            rec.value(f"{name} data", np.array_equal(ds[name][:], data))


@script()
def chunking(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 30)
        ds.createDimension("y", 20)
        v = ds.createVariable("v", "f8", ("t", "x", "y"), chunksizes=(2, 10, 20))
        w = ds.createVariable("w", "i2", ("x", "y"), chunksizes=[7, 3], zlib=True)
        v[0:3] = 1.0
        w[:] = np.arange(600).reshape(30, 20)
        rec.value("v", v.chunking())
        rec.value("w", w.chunking())
        rec.error(
            "contiguous with chunksizes",
            lambda: ds.createVariable("a", "f4", ("x",), contiguous=True, chunksizes=(3,)),
        )
        rec.error("wrong length", lambda: ds.createVariable("b", "f4", ("x", "y"), chunksizes=(3,)))
        rec.error("too large", lambda: ds.createVariable("c", "f4", ("x",), chunksizes=(31,)))
        rec.error("contiguous unlimited", lambda: ds.createVariable("d", "f4", ("t",), contiguous=True))
        e = ds.createVariable("e", "f4", ("x",), contiguous=True)
        e[:] = 2.0
    with nc.Dataset(path, "r") as ds:
        rec.value("v reopened", ds["v"].chunking())
        rec.value("w reopened", ds["w"].chunking())
        rec.value("w data", ds["w"][3:9, 2:5])
        rec.value("e data", ds["e"][:])


@script()
def endianness(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        big = rec.warns("big warnings", lambda: ds.createVariable("big", "f4", ("x",), endian="big"))
        little = ds.createVariable("little", "i4", ("x",), endian="little")
        native = ds.createVariable("native", "i2", ("x",))
        big[:] = np.array([1.5, 2.5, 3.5], ">f4")
        little[:] = np.array([1, 2, 3], ">i4")
        native[:] = [4, 5, 6]
        rec.value("endian", [v.endian() for v in (big, little, native)])
        rec.error("bad endian", lambda: ds.createVariable("bad", "f4", ("x",), endian="middle"))
        # (until reopened, netCDF4's dtype keeps the byte order of the datatype argument)
        mismatch = rec.warns("mismatch warnings", lambda: ds.createVariable("mismatch", ">i8", ("x",)))
        mismatch[:] = [7, 8, 9]
        rec.value("mismatch", mismatch.endian())
    with nc.Dataset(path, "r") as ds:
        names = ("big", "little", "native", "mismatch")
        rec.value("endian reopened", [ds[n].endian() for n in names])
        rec.value("dtypes reopened", [ds[n].dtype.str for n in names])
        for name in names:
            rec.value(name, ds[name][:])


@script()
def least_significant_digit(nc, path, rec):
    data = np.array([1.23456, 2.71828, -3.14159, 1000.0001], "f8")
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 4)
        v = ds.createVariable("v", "f8", ("x",), least_significant_digit=2)
        w = ds.createVariable("w", "f4", ("x",), least_significant_digit=0, zlib=True)
        rec.value("attribute", (v.least_significant_digit, v.ncattrs()))
        v[:] = data
        w[:] = data
        m = ds.createVariable("m", "f4", ("x",), least_significant_digit=1, fill_value=-1)
        m[:] = np.ma.array(data, mask=[0, 1, 0, 0])
    with nc.Dataset(path, "r") as ds:
        for name in ("v", "w", "m"):
            rec.value(name, ds[name][:])
        rec.value("attribute reopened", ds["v"].least_significant_digit)


@script()
def quantization(nc, path, rec):
    rng = np.random.default_rng(5)
    data = (rng.standard_normal(50) * 1000).astype("f4")
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 50)
        for mode, nsd in (("BitGroom", 3), ("GranularBitRound", 2), ("BitRound", 9)):
            v = ds.createVariable(mode, "f4", ("x",), significant_digits=nsd, quantize_mode=mode)
            v[:] = data
            rec.value(f"{mode} quantization", v.quantization())
        d = ds.createVariable("double", "f8", ("x",), significant_digits=4)
        d[:] = data.astype("f8")
        plain = ds.createVariable("plain", "f4", ("x",))
        rec.value("plain", plain.quantization())
        bad = {"significant_digits": 3, "quantize_mode": "Nope"}
        rec.error("bad mode", lambda: ds.createVariable("bad", "f4", ("x",), **bad))
    with nc.Dataset(path, "r") as ds:
        for name in ("BitGroom", "GranularBitRound", "BitRound", "double"):
            v = ds[name]
            rec.value(f"{name} reopened", v.quantization())
            rec.value(f"{name} attrs", [(n, v.getncattr(n)) for n in v.ncattrs()])
            rec.value(f"{name} bits", v[:].data.view(f"u{v.dtype.itemsize}"))


# -- reprs -----------------------------------------------------------------------------------


@script()
def reprs(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.title = "hi"
        ds.version = np.int16(3)
        ds.createDimension("t", None)
        ds.createDimension("x", 5)
        ds.createDimension("y", 4)
        v = ds.createVariable("v", "i4", ("t", "x", "y"))
        v.units = "m"
        v.scale_factor = np.float32(0.5)
        v.valid_range = np.array([0, 10], "i4")
        ds.createVariable("s", "f8", ())
        g = ds.createGroup("g")
        g.note = "in g"
        g.createDimension("z", 2)
        w = g.createVariable("w", "i2", ("x", "z"), fill_value=-1)
        ds.createGroup("a")
        v[0:2] = 1
        rec.repr("dataset", ds)
        rec.repr("group", g)
        rec.repr("variable", v)
        rec.repr("group variable", w)
        rec.repr("scalar variable", ds["s"])
        rec.value("str is repr", str(ds) == repr(ds) and str(v) == repr(v))
    with nc.Dataset(path, "r") as ds:
        rec.repr("dataset reopened", ds)
        rec.repr("group reopened", ds["g"])
        rec.repr("variable reopened", ds["v"])
        rec.repr("group variable reopened", ds["g/w"])
        rec.repr("dimension", ds.dimensions["t"])
    with nc.Dataset(path, "w", format=rec.format) as ds:
        rec.repr("empty dataset", ds)


@script(formats=V3_ONLY)
def reprs_of_strings(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        ds.createDimension("n", 3)
        s = ds.createVariable("names", str, ("x",))
        s.long_name = "names"
        c = ds.createVariable("chars", "S1", ("x", "n"))
        c._Encoding = "ascii"
    with nc.Dataset(path, "r") as ds:
        rec.repr("dataset", ds)
        rec.repr("vlen", ds["names"])
        rec.repr("chars", ds["chars"])


# -- modes, states and errors ----------------------------------------------------------------


@script()
def read_only_refuses_writes(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        v = ds.createVariable("v", "i4", ("x",))
        v.units = "m"
        ds.title = "t"
        ds.createGroup("g")
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        rec.error("data", lambda: v.__setitem__(0, 1))
        rec.error("dataset attribute", lambda: setattr(ds, "title", "new"))
        rec.error("setncattr", lambda: ds.setncattr("title", "new"))
        rec.error("variable attribute", lambda: setattr(v, "units", "km"))
        rec.error("delete attribute", lambda: delattr(v, "units"))
        rec.error("delncattr", lambda: ds.delncattr("title"))
        rec.error("renameAttribute", lambda: ds.renameAttribute("title", "t2"))
        rec.error("createDimension", lambda: ds.createDimension("y", 3))
        rec.error("createVariable", lambda: ds.createVariable("w", "f4", ("x",)))
        rec.error("createGroup", lambda: ds.createGroup("h"))
        rec.error("renameVariable", lambda: ds.renameVariable("v", "vv"))
        rec.error("renameDimension", lambda: ds.renameDimension("x", "xx"))
        rec.error("renameGroup", lambda: ds.renameGroup("g", "gg"))
        rec.error("setncatts", lambda: ds.setncatts({"a": 1}))
        rec.value("unchanged", (ds.ncattrs(), v.ncattrs(), list(ds.variables), list(ds.groups), v[:]))


@script()
def closed_dataset(nc, path, rec):
    ds = nc.Dataset(path, "w", format=rec.format)
    ds.createDimension("x", 2)
    v = ds.createVariable("v", "i4", ("x",))
    v[:] = [1, 2]
    rec.value("open", ds.isopen())
    ds.close()
    rec.value("closed", ds.isopen())
    rec.error("close twice", ds.close)
    rec.error("ncattrs", ds.ncattrs)
    rec.error("createDimension", lambda: ds.createDimension("y", 1))
    rec.error("attribute", lambda: ds.title)
    rec.error("read variable", lambda: v[:])
    rec.error("sync", ds.sync)
    with nc.Dataset(path, "a") as ds:
        ds.sync()
        rec.value("in with", ds.isopen())
        kept = ds
    rec.value("after with", kept.isopen())
    with nc.Dataset(path, "r") as ds:
        rec.value("data", ds["v"][:])


@script()
def open_modes(nc, path, rec):
    missing = path.with_name("missing" + path.suffix)
    rec.error("r missing", lambda: nc.Dataset(missing, "r"))
    rec.error("bad mode", lambda: nc.Dataset(path, "z"))
    rec.error("bad format", lambda: nc.Dataset(path, "w", format="NETCDF5"))
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        ds.createVariable("v", "i4", ("x",))[:] = [1, 2]
        rec.value("filepath", ds.filepath() == str(path))
    rec.error("x on existing", lambda: nc.Dataset(path, "x"))
    rec.error("noclobber on existing", lambda: nc.Dataset(path, "w", clobber=False))
    with nc.Dataset(path, "r+") as ds:
        ds["v"][0] = 5
        ds.createVariable("w", "i2", ("x",))[:] = 3
    with nc.Dataset(path, "a") as ds:
        ds.added = "yes"
    with nc.Dataset(str(path), "r") as ds:
        rec.value("kept", (list(ds.variables), ds["v"][:], ds["w"][:], ds.added))
    created = path.with_name("created" + path.suffix)
    with nc.Dataset(created, "a") as ds:
        ds.createDimension("y", 1)
    with nc.Dataset(created, "r") as ds:
        rec.value("a creates", list(ds.dimensions))
    fresh = path.with_name("fresh" + path.suffix)
    with nc.Dataset(fresh, "x", format=rec.format) as ds:
        rec.value("x creates", ds.isopen())
    with nc.Dataset(path, "w", format=rec.format) as ds:
        rec.value("w clobbers", list(ds.variables))


@script()
def dataset_protocols(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 1)
        ds.createVariable("v", "i4", ("x",))
        rec.error("iterate", lambda: iter(ds))
        rec.error("contains", lambda: "v" in ds)
        rec.error("pickle", lambda: pickle.dumps(ds))
        rec.value("orthogonal", (ds.__orthogonal_indexing__, ds["v"].__orthogonal_indexing__))
        rec.value("keepweakref", ds.keepweakref)
        rec.value("data model", (ds.data_model, ds.file_format))
        rec.value("containers", [type(c).__name__ for c in (ds.dimensions, ds.variables, ds.groups)])
        rec.value("user type containers", (ds.cmptypes, ds.vltypes, ds.enumtypes))


@script()
def variables_by_attributes(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        coordinates = (("lon", "X", "degrees_east"), ("lat", "Y", "degrees_north"), ("t", "T", "days"))
        for name, axis, units in coordinates:
            v = ds.createVariable(name, "f8", ("x",))
            v.axis = axis
            v.units = units
        d = ds.createVariable("data", "f4", ("x",))
        d.grid_mapping = "crs"
        g = ds.createGroup("g")
        g.createVariable("inner", "f4", ("x",)).axis = "X"
    # netCDF4 caches results per argument set (stale after changes): each query is asked once
    with nc.Dataset(path, "r") as ds:

        def names(group, **conditions):
            return [v.name for v in group.get_variables_by_attributes(**conditions)]

        rec.value("by value", names(ds, axis="X"))
        rec.value("by callable", names(ds, axis=lambda a: a in ("X", "Y")))
        rec.value("not none", names(ds, grid_mapping=lambda a: a is not None))
        rec.value("two keys", names(ds, axis="T", units="days"))
        rec.value("nothing", ds.get_variables_by_attributes(units="furlongs"))
        rec.value("group", names(ds["g"], axis="X"))


@script(formats=V3_ONLY)  # it asks for its own data model: one nczarr run is enough
def classic_data_model(nc, path, rec):
    with nc.Dataset(path, "w", format="NETCDF4_CLASSIC") as ds:
        rec.value("model", (ds.data_model, ds.file_format))
        ds.createDimension("t", None)
        ds.createDimension("x", 2)
        rec.error("group", lambda: ds.createGroup("g"))
        rec.error("u8 variable", lambda: ds.createVariable("u8", "u8", ("x",)))
        rec.error("u1 variable", lambda: ds.createVariable("u1", "u1", ("x",)))
        rec.error("i8 variable", lambda: ds.createVariable("i8", "i8", ("x",)))
        rec.error("vlen string", lambda: ds.createVariable("s", str, ("x",)))
        rec.error("second unlimited", lambda: ds.createDimension("t2", None))
        rec.error("string attribute", lambda: ds.setncattr_string("s", "abc"))
        rec.error("string list attribute", lambda: setattr(ds, "names", ["a", "b"]))
        ds.py_int = 1
        ds.i8 = np.int64(5)  # (netCDF4 silently wraps 64-bit values that do not fit: not recorded)
        ds.text = "abc"
        v = ds.createVariable("v", "f4", ("t", "x"), zlib=True)
        v[0] = [1.0, 2.0]
        rec.value("filters", v.filters())
        rec.value("variables", list(ds.variables))
    with nc.Dataset(path, "r") as ds:
        rec.value("model reopened", (ds.data_model, ds.file_format))
        rec.value("attributes", [(n, ds.getncattr(n)) for n in ds.ncattrs()])
        rec.value("data", ds["v"][:])
        rec.repr("repr", ds)
    with nc.Dataset(path, "a") as ds:
        rec.error("group in append", lambda: ds.createGroup("g"))


@script()
def time_with_cftime(nc, path, rec):
    import cftime

    hours = datetime.timedelta(hours=1)
    units = "hours since 2000-01-01 00:00:00"
    dates = [cftime.DatetimeGregorian(2000, 1, 1) + 6 * i * hours for i in range(8)]
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("time", None)
        t = ds.createVariable("time", "f8", ("time",))
        t.units = units
        t.calendar = "standard"
        t[:] = nc.date2num(dates, units, calendar="standard")
        n = ds.createVariable("noleap", "i4", ("time",))
        n.units = "days since 1999-12-30"
        n.calendar = "noleap"
        n[:] = nc.date2num([cftime.DatetimeNoLeap(2000, 2, 28 - i % 2) for i in range(8)], n.units, "noleap")
    with nc.Dataset(path, "r") as ds:
        t = ds["time"]
        rec.value("numbers", t[:])
        back = nc.num2date(t[:], t.units, t.calendar)
        rec.value("dates", [d.isoformat() for d in back])
        rec.value("index", nc.date2index(dates[3], t, select="exact"))
        rec.value("index list", nc.date2index([dates[5], dates[1]], t))
        rec.value("index nearest", nc.date2index(dates[2] + 2 * hours, t, select="nearest"))
        rec.error("index missing", lambda: nc.date2index(dates[2] + hours, t))
        n = ds["noleap"]
        rec.value("noleap", [d.isoformat() for d in nc.num2date(n[:], n.units, n.calendar)])
        rec.value("same functions", (nc.num2date is cftime.num2date, nc.date2num is cftime.date2num))


# -- more corners ----------------------------------------------------------------------------


@script()
def index_across_chunks(nc, path, rec):
    data = np.arange(110, dtype="f8").reshape(10, 11)
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("y", 10)
        ds.createDimension("x", 11)
        v = ds.createVariable("v", "f8", ("y", "x"), chunksizes=(3, 4))
        v[:] = data
        v[2:8:3, [10, 0, 5]] = -1.0
        v[np.arange(10) % 4 == 1, -1] = -2.0
    keys = {
        "all": slice(None),
        "block": (slice(2, 9), slice(3, 10)),
        "stride": (slice(None, None, 4), slice(1, None, 5)),
        "backwards": (slice(None, None, -3), slice(9, 1, -2)),
        "scattered": ([9, 0, 4, 4], [10, 3, 7]),
        "bool": (np.arange(10) > 6, np.arange(11) % 2 == 0),
        "row": 7,
        "column": (Ellipsis, 8),
    }
    with nc.Dataset(path, "r") as ds:
        v = ds["v"]
        for label, key in keys.items():
            rec.value(label, v[key])


@script()
def attributes_special_values(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.nan = np.nan
        ds.nan_f4 = np.float32("nan")
        ds.infinities = [np.inf, -np.inf]
        ds.empty_list = []
        ds.big_u8 = np.uint64(2**64 - 1)
        ds.small_i8 = np.int64(-(2**63))
        ds.tiny = 5e-324
        ds.newline = "a\nb"
        ds.setncattr("with space", 1)
        g = ds.createGroup("g")
        g.inherited = "no"
        rec.value("group attrs", g.ncattrs())
    with nc.Dataset(path, "r") as ds:
        rec.value("attrs", list(ds.__dict__.items()))
        rec.value("group", ds["g"].__dict__)
        rec.value("with space", ds.getncattr("with space"))


@script()
def groups_direct_constructor_and_owners(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        g = nc.Group(ds, "g")
        rec.value("path", (g.path, g.name, g.parent is ds))
        gd = g.createDimension("r", 1)
        d = ds.createDimension("q", 3)
        rec.value("dimension groups", (gd.group() is g, d.group() is ds))
        v = g.createVariable("v", "u2", ("q", "r"))
        rec.value("variable group", v.group() is g)
        v[:] = 9
        h = g.createGroup("h")
        rec.value("nested", (h.path, h.parent is g, g.groups["h"] is h))
    with nc.Dataset(path, "r") as ds:
        rec.value("groups", list(ds.groups))
        rec.value("data", ds["g/v"][:])
        rec.value("dims", (ds["g/v"].dimensions, list(ds["g"].dimensions)))


@script()
def write_then_read_in_same_session(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f4", ("t", "x"), fill_value=-1.0)
        for i in range(4):
            v[i] = np.arange(3) * i
            rec.value(f"after record {i}", (v.shape, v[i]))
        v[1, 1] = np.ma.masked
        rec.value("masked write", v[1])
        ds.sync()
        rec.value("after sync", v[:])
        v.units = "m"
        rec.value("attribute in session", (v.units, v.ncattrs()))
    with nc.Dataset(path, "r") as ds:
        rec.value("reopened", ds["v"][:])


@script()
def char_masked_and_fill(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("n", 2)
        ds.createDimension("len", 3)
        c = ds.createVariable("c", "S1", ("n", "len"), fill_value=b"-")
        c._Encoding = "utf-8"
        c[0] = "ab"
        d = ds.createVariable("d", "S1", ("len",))
        d[:] = np.ma.array([b"a", b"b", b"c"], mask=[0, 1, 0])
        rec.value("get_fill_value", (c.get_fill_value(), d.get_fill_value()))
    with nc.Dataset(path, "r") as ds:
        rec.value("c", ds["c"][:])
        rec.value("c raw", _raw(ds, "c"))
        rec.value("d", ds["d"][:])
        rec.value("_FillValue type", ds["c"]._FillValue)


@script(formats=V3_ONLY)
def vlen_string_datatype_and_errors(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        v = ds.createVariable("s", str, ("x",))
        rec.repr("datatype", v.datatype)
        rec.error("masked", lambda: v.__setitem__(slice(None), np.ma.array(["a", "b", "c"], mask=[0, 1, 0])))
        rec.error("str to slice", lambda: v.__setitem__(slice(0, 2), "ab"))
        v[:] = np.array([b"x", b"yy", b"zzz"], "S3")
        rec.value("mask flag", v.mask)
        rec.value("get_fill_value", v.get_fill_value())
    with nc.Dataset(path, "r") as ds:
        rec.value("bytes written", ds["s"][:])
        rec.value("one", ds["s"][-1])
        rec.value("scalar key types", (ds["s"][np.int64(0)], ds["s"][1.0]))


@script()
def dataset_set_ncstring_attrs(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 1)
        g = ds.createGroup("g")
        v = g.createVariable("v", "i4", ("x",))
        ds.set_ncstring_attrs(True)
        v.units = "m"
        ds.note = "n"
        g.other = "o"
        rec.value("values", (v.units, ds.note, g.other))
    with nc.Dataset(path, "r") as ds:
        rec.value("reopened", (ds["g/v"].units, ds.note, ds["g"].other))


@script()
def append_across_sessions(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "i2", ("t", "x"), chunksizes=(2, 3))
        rec.value("empty read", v[:])
        rec.value("empty slice", v[0:5])
        v[0:3] = np.arange(9).reshape(3, 3)
    for session in range(2):
        with nc.Dataset(path, "a") as ds:
            v = ds["v"]
            n = len(ds.dimensions["t"])
            v[n : n + 2] = np.full((2, 3), 10 * (session + 1))
            rec.value(f"session {session} shape", (v.shape, len(ds.dimensions["t"])))
    with nc.Dataset(path, "r+") as ds:
        ds["v"][8, 1] = 99
        ds.renameDimension("t", "time")
    with nc.Dataset(path, "r") as ds:
        rec.value("data", ds["v"][:])
        rec.value("dims", (list(ds.dimensions), ds["v"].dimensions, ds.dimensions["time"].isunlimited()))


@script()
def unusual_names(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("dim with space", 2)
        ds.createDimension("café", 1)
        v = ds.createVariable("var with space", "i4", ("dim with space", "café"))
        v[:] = [[1], [2]]
        g = ds.createGroup("gröup")
        g.createVariable("ü", "f4", ())[...] = 1.5
        v.setncattr("attr with space", "yes")
    with nc.Dataset(path, "r") as ds:
        rec.value("dims", list(ds.dimensions))
        rec.value("vars", list(ds.variables))
        rec.value("data", ds["var with space"][:])
        rec.value("group", (list(ds.groups), ds["gröup/ü"][...], ds["gröup"].path))
        rec.value("attr", ds["var with space"].ncattrs())


@script()
def renamed_dimension_seen_from_subgroups(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        g = ds.createGroup("g")
        v = g.createVariable("v", "i4", ("x",))
        v[:] = [3, 4]
        # (renaming a coordinate variable with its dimension loses its data in netcdf-c/HDF5)
        ds.createVariable("xc", "f8", ("x",))[:] = [0.5, 1.5]
    with nc.Dataset(path, "a") as ds:
        ds.renameDimension("x", "lon")
        rec.value("in session", (ds["g/v"].dimensions, ds["xc"].dimensions))
    with nc.Dataset(path, "r") as ds:
        rec.value("reopened", (ds["g/v"].dimensions, ds["xc"].dimensions, list(ds.variables)))
        rec.value("data", (ds["g/v"][:], ds["xc"][:]))
        rec.value("dimension object", ds["g/v"].get_dims()[0] is ds.dimensions["lon"])


@script()
def unsigned_with_scale_and_valid(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 5)
        v = ds.createVariable("v", "i1", ("x",), fill_value=np.int8(-1))
        v._Unsigned = "true"
        v.scale_factor = np.float32(0.5)
        v.valid_min = np.int8(10)  # compared after the unsigned view: 10 and 250
        v.valid_max = np.int8(-6)
        v[:] = np.array([2.0, 100.0, 120.0, 126.0, 0.0])
        rec.value("raw", _raw(ds, "v"))
        u = ds.createVariable("u", "u1", ("x",))
        u.valid_min = np.uint8(200)
        u[:] = np.array([0, 199, 200, 254, 255], "u1")
    with nc.Dataset(path, "r") as ds:
        rec.value("v", ds["v"][:])
        rec.value("u", ds["u"][:])
        ds["v"].set_auto_scale(False)
        rec.value("v scale off", ds["v"][:])


@script()
def mask_off_writes(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f4", ("x",), fill_value=-9.0)
        v.set_auto_mask(False)
        v[:] = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
        w = ds.createVariable("w", "i2", ("x",))
        w.scale_factor = 0.1
        w.set_auto_scale(False)
        w[:] = [1.26, 2.0, 3.0]
    with nc.Dataset(path, "r") as ds:
        rec.value("v raw", _raw(ds, "v"))
        rec.value("w raw", _raw(ds, "w"))
        rec.value("w", ds["w"][:])


@script(formats=V3_ONLY)
def enum_type_used_in_subgroup(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        flag = ds.createEnumType("i2", "flag_t", {"off": 0, "on": 1})
        ds.createDimension("x", 3)
        v = ds.createVariable("f", flag, ("x",))
        v[:] = np.array([1, 0, 1], "i2")
        g = ds.createGroup("g")
        w = g.createVariable("f", flag, ("x",))
        w[1] = 1
        rec.value("type from parent", w.datatype is flag)
    with nc.Dataset(path, "r") as ds:
        rec.value("root", ds["f"][:])
        rec.value("group", ds["g/f"][:])
        rec.value("group enumtypes", (list(ds.enumtypes), list(ds["g"].enumtypes)))
        rec.value("type name", ds["g/f"].datatype.name)
        rec.value("fill", ds["f"].get_fill_value())


@script()
def write_casts(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 4)
        i = ds.createVariable("i", "i2", ("x",))
        i[:] = [1.9, -1.9, 2.5, 3.0]
        u = ds.createVariable("u", "u1", ("x",))
        u[:] = np.array([1, 2, 254, 3], "i8")
        f = ds.createVariable("f", "f4", ("x",))
        f[:] = [1, 2, 3, 2**24 + 1]
        d = ds.createVariable("d", "f8", ("x",))
        d[:] = np.array([1.5, 2.5, 3.5, 4.5], "f4")
        b = ds.createVariable("b", "i1", ("x",))
        b[:] = np.array([True, False, True, True])
        l8 = ds.createVariable("l8", "u8", ("x",))
        l8[:] = [0, 2**63, 2**64 - 2, 1]
    with nc.Dataset(path, "r") as ds:
        for name in ("i", "u", "f", "d", "b", "l8"):
            rec.value(name, ds[name][:])


@script()
def fill_value_extremes(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 2)
        cases = {
            "u8": np.uint64(2**64 - 1),
            "i8": np.int64(-(2**63)),
            "u1": 0,
            "f4": np.float32(-1e30),
            "f8": np.inf,
            "i1": -128,
        }
        for code, fill in cases.items():
            v = ds.createVariable(f"v_{code}", code, ("x",), fill_value=fill)
            v[0] = 1
            rec.value(f"{code} get_fill_value", v.get_fill_value())
    with nc.Dataset(path, "r") as ds:
        for code in cases:
            v = ds[f"v_{code}"]
            rec.value(f"{code} _FillValue", v._FillValue)
            rec.value(f"{code} values", v[:])


@script()
def caches_and_storage_switches(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format, diskless=True) as ds:
        ds.createDimension("x", np.int64(3))
        v = ds.createVariable("v", "i4", ("x",), chunk_cache=15000)
        rec.value("chunk_cache size", v.get_var_chunk_cache()[0])
        v.set_var_chunk_cache(20000, 200, 1.0)
        rec.value("set_var_chunk_cache", v.get_var_chunk_cache())
        rec.value("no-ops", (v.use_nc_get_vars(True), ds.dimensions["x"].size))
    rec.value("diskless leaves nothing", path.exists())
    with nc.Dataset(path, "w", format=rec.format, diskless=True, persist=True) as ds:
        ds.createDimension("x", 2)
        ds.createVariable("v", "i4", ("x",))[:] = [1, 2]
    with nc.Dataset(path, "r", keepweakref=True) as ds:
        rec.value("persisted", (ds.keepweakref, ds["v"][:], ds.filepath(encoding="utf-8") == str(path)))
    before = nc.get_chunk_cache()
    nc.set_chunk_cache(12345, 500, 0.5)
    rec.value("set_chunk_cache", nc.get_chunk_cache())
    nc.set_chunk_cache(*before)


@script()
def writes_across_chunks(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 10)
        v = ds.createVariable("v", "i4", ("t", "x"), chunksizes=(2, 3), fill_value=-1)
        v[0:5] = 0
        v[::2, ::3] = 1
        v[4:0:-2, 9:2:-3] = np.array([[2, 3, 4], [5, 6, 7]])
        v[[3, 0], [8, 1, 5]] = np.arange(6).reshape(2, 3) + 10
        v[np.array([False, True, False, False, True]), 2:4] = 9
        v[7, 5:] = 8
    with nc.Dataset(path, "r") as ds:
        rec.value("v", ds["v"][:])
        rec.value("rows read backwards", ds["v"][::-3, 1:9:4])


@script()
def shared_unlimited_across_sessions(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("t", None)
        ds.createVariable("a", "f8", ("t",))[0:2] = [1.0, 2.0]
        ds.createVariable("b", "i2", ("t",))
        g = ds.createGroup("g")
        g.createVariable("c", "i4", ("t",))
    with nc.Dataset(path, "a") as ds:
        ds["g/c"][4] = 7
        rec.value("shapes in session", (ds["a"].shape, ds["b"].shape, ds["g/c"].shape))
    with nc.Dataset(path, "r") as ds:
        rec.value("shapes", (ds["a"].shape, ds["b"].shape, ds["g/c"].shape, len(ds.dimensions["t"])))
        rec.value("a", ds["a"][:])
        rec.value("b", ds["b"][:])
        rec.value("c", ds["g/c"][:])


@script()
def small_edge_cases(nc, path, rec):
    with nc.Dataset(path, "w", format=rec.format) as ds:
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f4", ("x",), fill_value=1.0)
        # (HDF5 keeps the deleted fill value as the storage fill: the values are not recorded)
        del v._FillValue
        rec.value("_FillValue deleted", v.ncattrs())
        rec.error("delete again", lambda: v.delncattr("_FillValue"))
        ds.renameVariable("v", "w")
        rec.error("old name", lambda: ds["v"])
        rec.error("old name in dict", lambda: ds.variables["v"])
        s = ds.createVariable("s", "f4", ())
        s.set_always_mask(False)
        rec.value("unwritten scalar, always_mask off", s[...])
        e = ds.createVariable("e", "i4", ("x",))
        e[:] = [1, 2, 3]
        e.setncattr("_Unsigned", "true")
        rec.value("unsigned added later", e[:])
        z = ds.createVariable("z", "f8", ("x",))
        z[1] = np.nan
        rec.value("nan written", z[:])
    with nc.Dataset(path, "r") as ds:
        rec.value("reopened", (list(ds.variables), ds["w"].ncattrs()))
