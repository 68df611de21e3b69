"""Files from the wild, small: HDF5 files h5py writes the way other writers (PyTables, older
netcdf-c, plain h5py users) lay them out, and netCDF-3 files as odd writers leave them, each
printed by ``nczarr dump`` exactly as Debian's ncdump prints it.

One file per cause the real-file corpus showed: HDF5 types netCDF-4 cannot name (netcdf-c
passes over the dataset or attribute), dimension scales without ``_Netcdf4Dimid``, attributes
in stored order, netcdf-c's phony dimensions, numbers HDF5 converts (half floats, 128-bit
integers), NULL strings, NUL-padded netCDF-3 names, and text escaping.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io

from nczarr.cli import main


def ncdump(path: Path, *flags: str) -> bytes:
    return subprocess.run(["ncdump", *flags, str(path)], capture_output=True, check=True).stdout


def ours(path: Path, flags: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> bytes:
    capsysbinary.readouterr()
    code = main(["dump", *flags, str(path)])
    out, err = capsysbinary.readouterr()
    assert code == 0, err.decode(errors="replace")
    return out


def unnamed_types(path: Path) -> None:
    """PyTables' layout: a table is a dataset of an uncommitted compound type; bool, complex
    and enum values have uncommitted types too. netcdf-c shows everything else."""
    with h5py.File(path, "w") as f:
        f.attrs["TITLE"] = np.bytes_("a table file")
        f.attrs["flag"] = True
        f.attrs["z"] = np.complex64(1 + 2j)
        f.attrs["VERSION"] = np.bytes_("1.0")
        table = f.create_dataset("table", data=np.zeros(3, [("a", "i4"), ("b", "f8")]), maxshape=(None,))
        table.attrs["CLASS"] = np.bytes_("TABLE")
        f["bools"] = np.array([True, False])
        f["complex"] = np.ones(2, np.complex128)
        f.create_dataset("enum", data=np.array([0, 1], "u1"), dtype=h5py.enum_dtype({"off": 0, "on": 1}, "u1"))
        f["kept"] = np.arange(4, dtype="i2")
        f["kept"].attrs["valid"] = np.array([True])
        f["kept"].attrs["units"] = np.bytes_("m")
        group = f.create_group("group")
        group["kept"] = np.arange(3.0)


def odd_numbers(path: Path) -> None:
    """Numbers of sizes netCDF has no type for: HDF5 converts them to the native type it
    picks (a 128-bit integer to 64 bits, a half float to float); a float wider than double
    has none (the attribute is passed over)."""
    with h5py.File(path, "w") as f:
        wide = h5py.h5t.STD_U64BE.copy()
        wide.set_size(16)
        space = h5py.h5s.create(h5py.h5s.SCALAR)
        attribute = h5py.h5a.create(f.id, b"ref_time", wide, space)
        attribute.write(np.frombuffer((7).to_bytes(16, "big"), "V16").reshape(()), mtype=wide)
        f.attrs["half"] = np.float16(1.5)
        f.attrs["long"] = np.longdouble(2.5)
        f["halves"] = np.array([0.5, 1.25, -2.0], np.float16)
        f["pi"] = np.array([3.1415927], "f4")
        f.attrs["tie"] = np.float32(35784.945)  # its shortest decimal is a tie at 7 digits


def scales_without_ids(path: Path) -> None:
    """Dimension scales as h5py (and netcdf-c before 4.x's _Netcdf4Dimid) makes them: the
    dimension takes the dataset's name, ids in reading order; a growable one is UNLIMITED."""
    with h5py.File(path, "w") as f:
        x = f.create_dataset("x", data=np.arange(3.0))
        x.make_scale()
        t = f.create_dataset("t", data=np.arange(2.0), maxshape=(None,))
        t.make_scale("time")  # the NAME is not the dimension's name
        data = f.create_dataset("data", data=np.zeros((2, 3)), maxshape=(None, 3))
        data.dims[0].attach_scale(t)
        data.dims[1].attach_scale(x)
        f["other"] = np.zeros((3, 4))  # no scales: its 3 is x, its 4 a phony dimension
        g = f.create_group("g")
        g["inner"] = np.zeros(3)


def stored_order(path: Path) -> None:
    """Attributes (and links) of a file that does not track creation order: netcdf-c lists
    attributes as HDF5 stores them and objects by name; one that tracks it, by creation."""
    with h5py.File(path, "w") as f:
        for name in ("zeta", "alpha", "mid"):
            f.attrs[name] = np.bytes_(name)
        v = f.create_dataset("b_var", data=np.arange(2))
        for name in ("units", "long_name", "axis"):
            v.attrs[name] = np.bytes_(name)
        f["a_var"] = np.arange(2)
        tracked = f.create_group("tracked", track_order=True)
        tracked.create_dataset("zz", data=np.arange(2), track_order=True).attrs["second"] = 2
        tracked["zz"].attrs["first"] = 1
        tracked["aa"] = np.arange(2)
        tracked.attrs["z"] = 1
        tracked.attrs["a"] = 2


def phony_dimensions(path: Path) -> None:
    """netcdf-c's invented dimensions: numbered by its dimension ids after every real one,
    subgroups first; shared by same-size axes of a group, never twice by one variable; a
    growable axis is UNLIMITED and only matches growable ones."""
    with h5py.File(path, "w") as f:
        f["square"] = np.zeros((5, 5))
        f["row"] = np.zeros(5)
        f.create_dataset("grows", data=np.zeros(5), maxshape=(None,))
        f.create_dataset("grows_too", data=np.zeros((5, 2)), maxshape=(None, 2))
        scalar = f.create_dataset("scalar", data=1.5)
        scalar.attrs["note"] = np.bytes_("no dimensions")
        deep = f.create_group("a/b")
        deep["cube"] = np.zeros((2, 2, 2), "i1")
        f["a"]["row"] = np.zeros(5)


def null_strings(path: Path) -> None:
    """A variable-length string attribute holding NULL (netcdf-c's never-written string;
    ncdump shows NIL) next to an empty one."""
    with h5py.File(path, "w") as f:
        f["v"] = np.arange(2)
        text = h5py.h5t.string_dtype()
        space = h5py.h5s.create_simple((2,))
        kind = h5py.h5t.py_create(text, logical=True)
        attribute = h5py.h5a.create(f["v"].id, b"notes", kind, space)
        attribute.write(np.zeros(2, np.uintp), mtype=kind)  # two NULL pointers
        f["v"].attrs["empty"] = np.array([""], dtype=text)


def reserved_names(path: Path) -> None:
    """Attributes named as netcdf-c's own (hidden by it, all but ``_nczarr_attr``), and a
    ``_FillValue`` of another type than its variable's (shown in its own type)."""
    with h5py.File(path, "w") as f:
        data = f.create_dataset("a", data=np.arange(3.0, dtype="f4"))
        for owner, value in ((data, 1), (f, 2)):
            for name in ("_ARRAY_DIMENSIONS", "_NCZARR_ATTR", "_nczarr_attr", "_Codecs", "_Format", "_IsNetcdf4",
                         "_SuperblockVersion", "_QuantizeBitRoundNumberOfSignificantBits", "_FillValue", "keep"):
                owner.attrs[name] = np.int32(value)


def committed_types(path: Path) -> None:
    """Committed types read in link order with the datasets: a dataset (by name) before the
    type it uses is passed over, as netcdf-c does not know the type yet; an attribute of it
    is shown (attributes are read last)."""
    with h5py.File(path, "w") as f:
        f["cmp"] = np.dtype([("a", "i4"), ("b", "f8")])
        f.create_dataset("c", data=np.zeros(2, f["cmp"].dtype), dtype=f["cmp"])
        f.create_dataset("d", data=np.ones(2, [("a", "i4"), ("b", "f8")]))  # after: an equal type
        f.attrs["ca"] = np.zeros(1, [("a", "i4"), ("b", "f8")])


HDF5_CASES: dict[str, Callable[[Path], None]] = {
    "committed_types": committed_types,
    "reserved_names": reserved_names,
    "unnamed_types": unnamed_types,
    "odd_numbers": odd_numbers,
    "scales_without_ids": scales_without_ids,
    "stored_order": stored_order,
    "phony_dimensions": phony_dimensions,
    "null_strings": null_strings,
}


@pytest.mark.parametrize("flags", [["-h"], [], ["-s", "-h"]], ids=["header", "full", "special"])
@pytest.mark.parametrize("case", HDF5_CASES)
def test_h5py_file_as_ncdump(
    case: str, flags: list[str], tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / f"{case}.h5"
    HDF5_CASES[case](path)
    assert ours(path, flags, capsysbinary) == ncdump(path, *flags)


def test_wider_than_double_floats_fail_clearly(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """A dataset of floats wider than double: ncdump -h shows it as string and cannot read
    it; nczarr shows the same header and refuses its data with a clear error."""
    path = tmp_path / "long.h5"
    with h5py.File(path, "w") as f:
        f["long"] = np.array([1.5, 2.5], np.longdouble)
        f["fine"] = np.array([1, 2], "i4")
    assert ours(path, ["-h"], capsysbinary) == ncdump(path, "-h")
    assert ours(path, ["-v", "fine"], capsysbinary) == ncdump(path, "-v", "fine")
    capsysbinary.readouterr()
    assert main(["dump", str(path)]) != 0
    err = capsysbinary.readouterr().err
    assert b"cannot read /long: its floats of 16 bytes have no netCDF type" in err and b"Traceback" not in err


def test_netcdf3_names_padded_with_nuls(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """A netCDF-3 writer that counts a name's NUL padding in its length: netcdf-c's names end
    at the first NUL."""
    path = tmp_path / "plain.nc"
    with scipy.io.netcdf_file(path, "w") as f:
        f.createDimension("xy", 3)
        v = f.createVariable("vv", "i", ("xy",))
        v[:] = [1, 2, 3]
        v.ab = b"text"
    raw = bytearray(path.read_bytes())
    for name in (b"xy", b"vv", b"ab"):  # length 2 -> 4: the two padding NULs join the name
        at = raw.index(b"\x00\x00\x00\x02" + name)
        raw[at : at + 4] = b"\x00\x00\x00\x04"
    padded = tmp_path / "padded.nc"
    padded.write_bytes(bytes(raw))
    assert ours(padded, [], capsysbinary) == ncdump(padded)
    assert b"\0" not in ours(padded, [], capsysbinary)


def test_classic_text_escapes(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """A backslash followed by n is text, not a line break; real newlines break the line as
    ncdump breaks it in a classic file; quotes, tabs and control bytes escaped as ncdump
    escapes them."""
    path = tmp_path / "text.nc"
    with scipy.io.netcdf_file(path, "w") as f:
        f.backslash = b"back\\nslash"
        f.lines = b"one\ntwo\n"
        f.both = b"x\\n\n\\\\"
        f.other = b'tab\there "q" \x01 end'
    assert ours(path, [], capsysbinary) == ncdump(path)


def test_netcdf3_fill_value_of_another_type(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """A netCDF-3 file's ``_FillValue`` shows in the type it is stored in."""
    path = tmp_path / "fill.nc"
    with scipy.io.netcdf_file(path, "w") as f:
        f.createDimension("x", 2)
        v = f.createVariable("v", "f", ("x",))
        v[:] = [1, 2]
        v._FillValue = np.int32(-9)
    assert ours(path, [], capsysbinary) == ncdump(path)
