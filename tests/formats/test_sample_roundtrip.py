""".nc → Zarr → .nc without loss, on the real-file corpus and on small files made by the
real tools for each case a corpus file showed (names with spaces, a char attribute ending in
NUL, char coordinates, typed attributes, compound types).

For every file ncdump reads and every Zarr convention, ``copy(F, out.zarr)`` then
``copy(out.zarr, back.nc)`` must give ncdump's text of F back (the dataset name line aside),
and the netCDF4 wheel (netcdf-c 4.10.1) must read the NCZARR_V2 copy as it reads F. Pure Zarr
has no UNLIMITED dimension and no order of arrays: there the text may differ in those only,
and xarray must read the copy as it reads its own ``to_zarr`` copy of F. What still fails is
marked xfail(strict=True) with the reason.
"""

from __future__ import annotations

import functools
import os
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest
import xarray as xr
from samplefiles import sample_files

import nczarr
from nczarr.convert.copy import CopyOptions, copy

FORMATS = ("NCZARR", "NCZARR_V2", "ZARR")

# -- files made by the real tools, one per case ------------------------------------------------

SPACES_CDL = r"""netcdf spaces {
dimensions:
	a\ b = 2 ;
	t\ x = UNLIMITED ;
variables:
	int v\ 1(a\ b) ;
		v\ 1:x\ y = "q" ;
	float r\ s(t\ x) ;
	:g\ a = 1.5f ;
data:
 v\ 1 = 1, 2 ;
 r\ s = 3, 4, 5 ;
group: g\ 1 {
  dimensions:
	c\ d = 3 ;
  variables:
	float w\ x(c\ d, a\ b) ;
		w\ x:u\ v = 2 ;
  data:
   w\ x = 1, 2, 3, 4, 5, 6 ;
  }
}
"""

CHAR_COORDINATES_CDL = r"""netcdf chars {
dimensions:
	c = 4 ;
	t = UNLIMITED ;
	s = 3 ;
variables:
	char c(c) ;
	char s(s) ;
	int t(t) ;
	char lbl(t, s) ;
		lbl:note = "two\nlines" ;
data:
 c = "abcd" ;
 s = "xy" ;
 t = 1, 2 ;
 lbl = "ab", "cd" ;
}
"""

TYPED_ATTRIBUTES_CDL = r"""netcdf typed {
dimensions:
	n = 2 ;
variables:
	short q(n) ;
		q:scale_factor = 0.01f ;
		q:add_offset = 20.f ;
		q:pair = 0.1f, 1.e30f ;
		q:not_a_number = NaN ;
		q:sh = 3s ;
		q:by = 1b, 2b ;
		q:u = 7u ;
		q:i64 = 8LL ;
		q:d = 1.5 ;
		q:c = "txt" ;
		string q:st = "a", "b" ;
		string q:one = "one" ;
	:g = 2.5f ;
data:
 q = 1, 2 ;
}
"""

COMPOUND_CDL = r"""netcdf compound {
types:
  compound pt {
    int x ;
    float y ;
  }; // pt
dimensions:
	n = 2 ;
variables:
	pt p(n) ;
		pt p:ca = {1, 2.5f} ;
	int q(n) ;
		q:sf = 0.5f ;
	pt :gca = {3, 4.5f} ;
data:
 p = {1, 1.5}, {2, 2.5} ;
 q = 1, 2 ;
}
"""


def _ncgen(cdl: str, kind: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        source = path.with_suffix(".cdl")
        source.write_text(cdl)
        subprocess.run(["ncgen", "-k", kind, "-o", str(path), str(source)], check=True)

    return make


def _trailing_nul(path: Path) -> None:
    """A char attribute ending in NUL (C programs write strlen + 1), as netCDF4 writes it."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 2)
        var = ds.createVariable("v", "i4", ("x",))
        var[:] = [1, 2]
        var.setncattr("units", "m\x00")
        ds.setncattr("title", "t\x00")


#: file name -> how the real tools make it
MADE: dict[str, Callable[[Path], None]] = {
    "spaces.nc": _ncgen(SPACES_CDL, "nc4"),
    "spaces_classic.nc": _ncgen(SPACES_CDL.split("group:")[0] + "}\n", "classic"),
    "chars.nc": _ncgen(CHAR_COORDINATES_CDL, "nc4"),
    "chars_classic.nc": _ncgen(CHAR_COORDINATES_CDL, "classic"),
    "typed.nc": _ncgen(TYPED_ATTRIBUTES_CDL, "nc4"),
    "compound.nc": _ncgen(COMPOUND_CDL, "nc4"),
    "trailing_nul.nc": _trailing_nul,
}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("made")
    for name, make in MADE.items():
        make(folder / name)
    return folder


# -- what still fails ---------------------------------------------------------------------------

#: Pure Zarr holds no UNLIMITED dimension, no order of arrays and no netCDF-3 data model.
PURE_ZARR_LOSES = "pure Zarr keeps no UNLIMITED dimension, array order or netCDF-3 data model"
PURE_ZARR_TEXT_DIFFERS = {
    "bears.nc", "example_1.nc", "idx-std-1.x.h5", "smpl_SDSextendible.h5", "test_filenode_v1.h5",
    "attr-u16.h5", "spaces.nc", "spaces_classic.nc", "chars.nc", "chars_classic.nc",
}
#: The compound type of a pure Zarr array is named after it (``p_t``), as xarray reads it.
PURE_ZARR_COMPOUND = (
    "pure Zarr holds compounds as xarray does: arrays as structured arrays (their type named "
    "<array>_t), attributes as lists of field values"
)
#: NCZARR_V2 holds no user-defined type (netcdf-c 4.10.1 reads none there).
V2_HAS_NO_USER_TYPES = {"compound.nc"}

#: The HDF5 reader's side (convert/hdf5.py, another helper's work).
READER_FAILURES: dict[str, str] = {}

#: netcdf-c 4.10.1 reads these PyTables files otherwise than 4.9.0's ncdump (the corpus's
#: reference): it shows the tables' unnamed compounds and enums, and numbers the phony
#: dimensions after them. NCZARR_V2 holds no user-defined type, so its copy is what 4.9.0 reads.
NETCDF_C_410_DIFFERS = {
    "Table2_1_lzo_nrv2e_shuffle.h5", "Tables_lzo1.h5", "Tables_lzo1_shuffle.h5", "Tables_lzo2.h5",
    "Tables_lzo2_shuffle.h5", "bug-idx.h5", "flavored_vlarrays-format1.6.h5", "idx-std-1.x.h5", "itemsize.h5",
    "non-chunked-table.h5", "oldflavor_numeric.h5", "python2.h5", "python3.h5", "smpl_enum.h5",
    "smpl_unsupptype.h5", "vlunicode_endian.h5", "compound-dtype-complex.h5",
}
#: netCDF4 1.7.5 aborts the process (heap corruption in netcdf-c) reading these originals.
NETCDF4_ABORTS_ON = {"out_of_order_types.h5", "smpl_compound_chunked.h5"}


# -- the corpus ---------------------------------------------------------------------------------


def _ncdump(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ncdump", str(path)], capture_output=True, text=True, check=False)


@functools.cache
def _readable_samples() -> tuple[Path, ...]:
    """The sample files ncdump reads, data included (some need HDF5 filters it lacks)."""
    return tuple(p for p in sample_files() if _ncdump(p).returncode == 0)


def _file_ids() -> list[tuple[str, str]]:
    """(kind, name) of every file of the round trip: ('sample', path) or ('made', name)."""
    return [("sample", str(p)) for p in _readable_samples()] + [("made", name) for name in MADE]


def _source(kind: str, name: str, made: Path) -> Path:
    return Path(name) if kind == "sample" else made / name


def _id(kind: str, name: str) -> str:
    return f"{Path(name).parent.name}/{Path(name).name}" if kind == "sample" else f"made/{name}"


def _body(path: Path) -> str:
    """ncdump's text of ``path`` without the first line (it names the dataset)."""
    done = _ncdump(path)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n", 1)[1]


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, str], Path]:
    """``round_trip(F, fmt)``: the .nc file copied back from F's copy in ``fmt``, made once."""
    done: dict[tuple[Path, str], Path] = {}

    def make(source: Path, fmt: str) -> Path:
        if (source, fmt) not in done:
            folder = tmp_path_factory.mktemp("trip")
            copy(str(source), str(folder / "out.zarr"), CopyOptions(format=fmt))
            copy(str(folder / "out.zarr"), str(folder / "back.nc"))
            done[source, fmt] = folder / "back.nc"
        return done[source, fmt]

    return make


def _round_trip_cases() -> list[Any]:
    cases = []
    for kind, name in _file_ids():
        base = Path(name).name
        for fmt in FORMATS:
            if fmt == "NCZARR_V2" and base in V2_HAS_NO_USER_TYPES:
                continue
            reason = READER_FAILURES.get(base)
            if reason is None and fmt == "ZARR" and base in PURE_ZARR_TEXT_DIFFERS:
                reason = PURE_ZARR_LOSES
            if reason is None and fmt == "ZARR" and base == "compound.nc":
                reason = PURE_ZARR_COMPOUND
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(kind, name, fmt, marks=marks, id=f"{_id(kind, name)}-{fmt}"))
    return cases


def test_corpus_is_there() -> None:
    names = {p.name for p in _readable_samples()}
    assert {"bears.nc", "example_1.nc", "smpl_i32le.h5", "vlen_string_dset.h5", "python3.h5"} <= names


@pytest.mark.parametrize(("kind", "name", "fmt"), _round_trip_cases())
def test_round_trip_gives_ncdump_text_back(
    kind: str, name: str, fmt: str, made: Path, round_trip: Callable[[Path, str], Path]
) -> None:
    source = _source(kind, name, made)
    assert _body(round_trip(source, fmt)) == _body(source)


def test_v2_refuses_user_types_and_names_them(made: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="pt"):
        copy(str(made / "compound.nc"), str(tmp_path / "v2.zarr"), CopyOptions(format="NCZARR_V2"))
    assert not (tmp_path / "v2.zarr").exists()


# -- pure Zarr: everything but UNLIMITED and order, and what xarray keeps --------------------------


def _netcdf4_view(ds: Any, *, unlimited: bool = True) -> list[tuple[Any, ...]]:
    """Everything netCDF4's API returns about a dataset: dimensions, attributes (values with
    their types), variables and their raw data, group by group."""
    out: list[tuple[Any, ...]] = []
    groups = [("", ds)]
    while groups:
        path, group = groups.pop()
        out += [("dim", path, n, len(d), unlimited and d.isunlimited()) for n, d in group.dimensions.items()]
        out += [("att", path, a, repr(group.getncattr(a))) for a in group.ncattrs()]
        for name, var in group.variables.items():
            var.set_auto_maskandscale(False)
            out.append(("var", path, name, str(var.dtype), var.dimensions))
            out += [("att", path, name, a, repr(var.getncattr(a))) for a in var.ncattrs()]
            data = var[...]
            out.append(("data", path, name, repr(data.tolist() if isinstance(data, np.ndarray) else data)))
        groups += [(f"{path}/{n}", g) for n, g in group.groups.items()]
    return out


def _pure_cases() -> list[Any]:
    cases = []
    for kind, name in _file_ids():
        base = Path(name).name
        reason = READER_FAILURES.get(base) or (PURE_ZARR_COMPOUND if base == "compound.nc" else None)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        cases.append(pytest.param(kind, name, marks=marks, id=_id(kind, name)))
    return cases


@pytest.mark.parametrize(("kind", "name"), _pure_cases())
def test_pure_zarr_keeps_all_but_unlimited_and_order(
    kind: str, name: str, made: Path, round_trip: Callable[[Path, str], Path]
) -> None:
    """Types, values and attributes (typed by the hint netcdf-c reads) come back through pure
    Zarr as through NCZARR (whose copy gives ncdump's text back); only UNLIMITED and the
    order of arrays do not. (netCDF4 reads the .nc files: netcdf-c 4.10.1 reads some HDF5
    originals otherwise than 4.9.0, see NETCDF_C_410_DIFFERS.)"""
    source = _source(kind, name, made)
    pure, nczarr_copy = round_trip(source, "ZARR"), round_trip(source, "NCZARR")
    with netCDF4.Dataset(nczarr_copy) as reference, netCDF4.Dataset(pure) as ours:
        assert sorted(_netcdf4_view(ours, unlimited=False), key=repr) == sorted(
            _netcdf4_view(reference, unlimited=False), key=repr
        )


def _xarray_view(path: Path, **kwargs: Any) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(path, consolidated=None, decode_cf=False, **kwargs).load()
    return {
        "attrs": repr(ds.attrs),
        **{
            name: (var.dims, var.dtype.str if var.dtype.fields is None else var.dtype.descr, var.values.tolist(),
                   repr({k: v for k, v in var.attrs.items() if k != "_FillValue"}))
            for name, var in ds.variables.items()
        },
    }


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", ["compound.nc", "typed.nc"])
def test_xarray_reads_our_pure_zarr_as_its_own(name: str, zarr_format: int, made: Path, tmp_path: Path) -> None:
    """Compound variables (structured arrays) and attributes (lists of field values) and
    float32 attributes (their exact values) as xarray's own round trip keeps them."""
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    copy(str(made / name), str(ours), CopyOptions(format="ZARR" if zarr_format == 3 else "ZARR_V2"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with xr.open_dataset(made / name, decode_cf=False) as ds:
            ds.to_zarr(theirs, zarr_format=zarr_format, consolidated=False)
    assert _xarray_view(ours) == _xarray_view(theirs)


@pytest.mark.parametrize("fmt", ["ZARR", "ZARR_V2"])
def test_float32_scale_factor_decodes_as_in_the_original(fmt: str, made: Path, tmp_path: Path) -> None:
    """A float32 scale_factor stays float32 (netCDF4 on the .nc file and nczarr on the copy
    unpack to the same float32 values) and its value exact (xarray unpacks our copy as its
    own round trip)."""
    store, theirs = tmp_path / "typed.zarr", tmp_path / "theirs.zarr"
    copy(str(made / "typed.nc"), str(store), CopyOptions(format=fmt))
    with netCDF4.Dataset(made / "typed.nc") as nc, nczarr.Dataset(str(store)) as ours:
        assert ours["q"].scale_factor.dtype == np.float32
        assert ours["q"][:].dtype == nc["q"][:].dtype == np.float32
        np.testing.assert_array_equal(ours["q"][:], nc["q"][:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with xr.open_dataset(made / "typed.nc") as ds:
            ds.to_zarr(theirs, zarr_format=3 if fmt == "ZARR" else 2, consolidated=False)
        with xr.open_zarr(store) as zarr, xr.open_zarr(theirs, consolidated=False) as own:
            np.testing.assert_array_equal(zarr["q"].values, own["q"].values)


def test_netcdf4_reads_pure_zarr_v2_attribute_types(made: Path, tmp_path: Path) -> None:
    """netcdf-c 4.10.1 reads the type hint in pure Zarr v2 too (and xarray hides it)."""
    store = tmp_path / "typed.zarr"
    copy(str(made / "typed.nc"), str(store), CopyOptions(format="ZARR_V2"))
    with netCDF4.Dataset(made / "typed.nc") as nc, netCDF4.Dataset(f"file://{store}#mode=zarr,file") as zarr:
        for name in nc["q"].ncattrs():
            want, got = nc["q"].getncattr(name), zarr["q"].getncattr(name)
            assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype, name
            np.testing.assert_array_equal(got, want)
        assert zarr.getncattr("g").dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert "_nczarr_attr" not in xr.open_zarr(store)["q"].attrs


# -- netCDF4 (netcdf-c 4.10.1) reads our NCZARR_V2 copy as it reads the file ------------------------


def _netcdf4_cases() -> list[Any]:
    cases = []
    for kind, name in _file_ids():
        base = Path(name).name
        if base in NETCDF4_ABORTS_ON or base in V2_HAS_NO_USER_TYPES:
            continue  # netCDF4 aborts the process on the original / the copy is refused
        reason = READER_FAILURES.get(base)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        cases.append(pytest.param(kind, name, marks=marks, id=_id(kind, name)))
    return cases


@pytest.mark.parametrize(("kind", "name"), _netcdf4_cases())
def test_netcdf4_reads_our_nczarr_v2_copy_as_the_file(kind: str, name: str, made: Path, tmp_path: Path) -> None:
    """As it reads the file; where netcdf-c 4.10.1 reads the file otherwise than 4.9.0 (see
    NETCDF_C_410_DIFFERS), as it reads the netCDF-4 file written back from the copy (which
    gives 4.9.0's ncdump text of the file, see the round trip above)."""
    source = _source(kind, name, made)
    store = tmp_path / "v2.zarr"
    copy(str(source), str(store), CopyOptions(format="NCZARR_V2"))
    if Path(name).name in NETCDF_C_410_DIFFERS:
        copy(str(store), str(tmp_path / "back.nc"))
        source = tmp_path / "back.nc"
    with netCDF4.Dataset(source) as reference:
        expected = _netcdf4_view(reference)
    with netCDF4.Dataset(f"file://{os.path.abspath(store)}#mode=nczarr,file") as ours:
        assert _netcdf4_view(ours) == expected


def test_trailing_nul_is_written_as_netcdf_c_writes_it(made: Path, tmp_path: Path) -> None:
    """netcdf-c ends a char attribute at its NUL; an escaped NUL it reads as the text u0000."""
    store = tmp_path / "v2.zarr"
    copy(str(made / "trailing_nul.nc"), str(store), CopyOptions(format="NCZARR_V2"))
    assert b"u0000" not in (store / "v" / ".zattrs").read_bytes()
    with netCDF4.Dataset(f"file://{store}#mode=nczarr,file") as ds:
        assert ds["v"].units == "m" and ds.title == "t"
