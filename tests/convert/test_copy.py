"""``nczarr copy``: files made by the real netCDF4 and ncgen, copied to each Zarr convention
and back, compared with the original through netCDF4."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pytest
import xarray as xr

import nczarr
from nczarr.cli import main
from nczarr.convert.copy import CopyOptions, copy
from nczarr.errors import CopyError
from nczarr.xarray import to_nczarr

CONVENTIONS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]


def netcdf4_file(path: Path) -> Path:
    """Every primitive type, strings, chars, groups, two unlimited dims, fills, compression."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.title = "matrix"
        ds.version = np.int16(3)
        ds.scales = np.array([1.5, 2.5], "f4")
        ds.createDimension("time", None)
        ds.createDimension("x", 5)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "days since 2000-01-01"
        time[:] = np.arange(4) * 0.5
        for code in ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"):
            v = ds.createVariable(f"v_{code}", code, ("time", "x"), zlib=True, complevel=2, fill_value=np.array(7, code).item())
            v.long_name = f"a {code}"
            v[:3] = (np.arange(15) % 50).reshape(3, 5).astype(code)  # one record left as fill
        c = ds.createVariable("chars", "S1", ("x",))
        c[:] = np.array(list("hello"), "S1")
        s = ds.createVariable("names", str, ("x",))
        s[:] = np.array(["a", "bb", "", "dddd", "é"], object)
        nofill = ds.createVariable("nofill", "i4", ("x",), fill_value=False)
        nofill[:] = np.arange(5)
        g = ds.createGroup("grp")
        g.createDimension("t2", None)
        w = g.createVariable("w", "f4", ("t2", "x"), chunksizes=(2, 5), shuffle=True, zlib=True)
        w[:3] = np.ones((3, 5), "f4")
        w.units = "m"
        g.setncattr_string("tags", ["x", "y"])
    return path


def describe(path: Any, *, pure: bool = False) -> dict[str, Any]:
    """What netCDF4 (or nczarr, for stores) sees: groups, dims, variables, attributes, data.

    ``pure``: as far as pure Zarr keeps it. xarray's convention has no place for netCDF
    attribute types, unlimited dimensions or the order of dimensions and attributes (the
    first array that uses a dimension declares it), and a list of strings reads back as the
    JSON text netcdf-c makes of it."""
    module = nczarr if not str(path).endswith(".nc") else netCDF4
    out: dict[str, Any] = {}
    with module.Dataset(path) as ds:
        ds.set_auto_maskandscale(False)

        def attrs(owner: Any) -> list[Any]:
            items = []
            for name in owner.ncattrs():
                value = owner.getncattr(name)
                kind = "" if pure else type(value).__name__ + str(getattr(value, "dtype", ""))
                value = np.asarray(value).tolist()
                if pure and isinstance(value, str) and value.startswith("["):
                    value = json.loads(value)
                items.append((name, kind, value))
            return sorted(items) if pure else items

        def walk(group: Any, prefix: str) -> None:
            dims = [(n, len(d), None if pure else d.isunlimited()) for n, d in group.dimensions.items()]
            out[prefix or "/"] = {"dims": sorted(dims) if pure else dims, "attrs": attrs(group)}
            for name, v in group.variables.items():
                data = v[...]
                out[f"{prefix}/{name}"] = {
                    "dtype": str(v.dtype),
                    "dims": v.dimensions,
                    "attrs": attrs(v),
                    "data": np.asarray(data).tolist(),
                }
            for name, child in group.groups.items():
                walk(child, f"{prefix}/{name}")

        walk(ds, "")
    return out


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return netcdf4_file(tmp_path_factory.mktemp("orig") / "orig.nc")


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_netcdf4_file_to_each_convention_and_back(original: Path, tmp_path: Path, convention: str) -> None:
    store = tmp_path / "copy.zarr"
    back = tmp_path / "back.nc"
    copy(original, store, CopyOptions(format=convention, max_memory=4096))
    copy(store, back)
    pure = convention.startswith("ZARR")
    want = describe(original, pure=pure)
    assert describe(store, pure=pure) == want
    assert describe(back, pure=pure) == want


CLASSIC_CDL = """netcdf classic {
dimensions:
    time = UNLIMITED ;
    lat = 3 ;
    name_len = 6 ;
variables:
    float temp(time, lat) ;
        temp:_FillValue = -1.f ;
        temp:units = "K" ;
    char station(lat, name_len) ;
    short flags(lat) ;
        flags:valid_range = 0s, 10s ;
    double scalar ;
// global attributes:
    :Conventions = "CF-1.8" ;
data:
 temp = 1, 2, 3, 4, _, 6 ;
 station = "alpha", "beta", "gamma" ;
 flags = 1, 2, 3 ;
 scalar = 3.5 ;
}
"""


@pytest.mark.parametrize("kind", ["nc3", "nc6", "nc5"])
def test_ncgen_netcdf3_files_round_trip(tmp_path: Path, kind: str) -> None:
    cdl = tmp_path / "classic.cdl"
    cdl.write_text(CLASSIC_CDL)
    original = tmp_path / "orig.nc"
    subprocess.run(["ncgen", "-k", kind, "-o", str(original), str(cdl)], check=True)
    store, back = tmp_path / "c.zarr", tmp_path / "back.nc"
    copy(original, store)
    copy(store, back, CopyOptions(kind={"nc3": "classic", "nc6": "64-bit offset", "nc5": "cdf5"}[kind]))
    assert describe(back) == describe(original)
    with netCDF4.Dataset(back) as ds:
        assert ds.data_model == {"nc3": "NETCDF3_CLASSIC", "nc6": "NETCDF3_64BIT_OFFSET", "nc5": "NETCDF3_64BIT_DATA"}[kind]
    ncdump = [subprocess.run(["ncdump", str(p)], capture_output=True, text=True, check=True).stdout for p in (original, back)]
    assert ncdump[0].splitlines()[1:] == ncdump[1].splitlines()[1:]  # the first line names the file


def test_what_the_target_cannot_hold_is_refused_before_writing(original: Path, tmp_path: Path) -> None:
    with pytest.raises(CopyError, match="netCDF-3 has no groups") as info:
        copy(original, tmp_path / "c.nc", CopyOptions(kind="classic"))
    assert "nothing was written" in str(info.value)
    assert not (tmp_path / "c.nc").exists()
    report = copy(original, tmp_path / "c.nc", CopyOptions(kind="classic", skip_unsupported=True))
    assert any("/grp" in s for s in report.skipped) and any("/names" in s for s in report.skipped)
    with netCDF4.Dataset(tmp_path / "c.nc") as ds:
        assert "grp" not in ds.groups and "names" not in ds.variables and ds["v_i2"][0, 1] == 1


def test_variable_and_group_selection(original: Path, tmp_path: Path) -> None:
    copy(original, tmp_path / "v.zarr", CopyOptions(variables=("time", "v_f4")))
    with nczarr.Dataset(tmp_path / "v.zarr") as ds:
        assert list(ds.variables) == ["time", "v_f4"] and ds["v_f4"][1, 1] == 6
    copy(original, tmp_path / "d.zarr", CopyOptions(data_variables=("time",)))
    with nczarr.Dataset(tmp_path / "d.zarr") as ds:
        assert "v_f4" in ds.variables and ds["v_f4"][...].mask.all() and ds["time"][1] == 0.5
    copy(original, tmp_path / "g.zarr", CopyOptions(groups=("grp",)))
    with nczarr.Dataset(tmp_path / "g.zarr") as ds:
        # as nccopy -G: the root group's variables stay, without data (so no records)
        assert ds["v_f4"].shape == (0, 5) and ds["nofill"][...].mask.all() and list(ds["grp"].variables) == ["w"]


def test_raw_values_are_copied_unchecked(tmp_path: Path) -> None:
    """An enum variable whose unwritten elements hold the fill value (no member of the enum)
    copies as it is (a copy written through the API's handles refused it as illegal)."""
    with netCDF4.Dataset(tmp_path / "e.nc", "w") as ds:
        ds.createDimension("x", 3)
        level = ds.createEnumType("u1", "level", {"low": 1, "high": 2})
        ds.createVariable("v", level, ("x",))[:2] = np.array([1, 2], "u1")
    copy(tmp_path / "e.nc", tmp_path / "e.zarr")
    with nczarr.Dataset(tmp_path / "e.zarr") as ds:
        assert ds["v"][:].tolist() == [1, 2, None]


def test_netcdf_c_urls_and_missing_sources(original: Path, tmp_path: Path) -> None:
    copy(original, tmp_path / "a.zarr", CopyOptions(format="NCZARR_V2"))
    copy(f"file://{tmp_path / 'a.zarr'}#mode=nczarr,file", tmp_path / "b.zarr")
    with nczarr.Dataset(tmp_path / "b.zarr") as ds:
        assert ds["v_u8"][2, 4] == 14
    with pytest.raises(FileNotFoundError, match="No such file or directory"):
        copy(tmp_path / "missing.zarr", tmp_path / "c.zarr")
    assert not (tmp_path / "c.zarr").exists()


def test_chunking_deflate_and_shuffle_options(original: Path, tmp_path: Path) -> None:
    copy(original, tmp_path / "c.zarr", CopyOptions(chunking="time/2,x/5", deflate=5, shuffle=True))
    with nczarr.Dataset(tmp_path / "c.zarr") as ds:
        v = ds["v_f8"]
        assert v.chunking() == [2, 5]
        assert v.filters()["zlib"] and v.filters()["complevel"] == 5 and v.filters()["shuffle"]
    copy(original, tmp_path / "p.zarr", CopyOptions(chunking="v_f4:1,5"))
    with nczarr.Dataset(tmp_path / "p.zarr") as ds:
        assert ds["v_f4"].chunking() == [1, 5]


def test_cli_copy_and_its_errors(original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["copy", str(original), str(tmp_path / "a.zip"), "--format", "NCZARR_V2", "-d", "1"]) == 0
    with nczarr.Dataset(tmp_path / "a.zip") as ds:
        assert ds["v_u8"][2, 4] == 14
    assert main(["copy", str(original), str(tmp_path / "b.nc"), "-3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nczarr: error: the target (NETCDF3_CLASSIC) cannot hold") and "/grp" in err
    assert not (tmp_path / "b.nc").exists()
    assert main(["copy", str(original), str(tmp_path / "x.zarr"), "-k", "nonsense"]) == 1
    assert "unknown output kind 'nonsense'" in capsys.readouterr().err


def test_nc_files_open_read_only_through_the_api(original: Path, tmp_path: Path) -> None:
    with nczarr.Dataset(original) as ds:
        assert ds.disk_format == "HDF5" and ds["grp/w"][0, 0] == 1
        with pytest.raises(RuntimeError, match="read only"):
            ds["v_f4"][0, 0] = 1


@pytest.mark.parametrize("fmt", ["NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA", "NETCDF4", "NETCDF4_CLASSIC"])
def test_the_api_writes_real_netcdf_files(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "w.nc"
    with nczarr.Dataset(path, "w", format=fmt) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "f4", ("t", "x"), fill_value=-9.0)
        v.units = "K"
        v[0:2] = [[1, 2, 3], [4, 5, 6]]
    with netCDF4.Dataset(path) as ds:
        assert ds.data_model == fmt and ds["v"].units == "K"
        assert ds["v"][:].tolist() == [[1, 2, 3], [4, 5, 6]] and ds.dimensions["t"].isunlimited()


def test_progress_bar_on_a_terminal_only() -> None:
    import io

    from nczarr.convert.copy import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        bar = ProgressBar(stream)
        bar(50_000_000, 200_000_000)
        bar(200_000_000, 200_000_000)
        bar.finish()
    assert "100.0%" in terminal.getvalue() and terminal.getvalue().endswith("\n")
    assert pipe.getvalue() == ""
    quiet = Terminal()
    ProgressBar(quiet, quiet=True)(1, 2)
    assert quiet.getvalue() == ""


def test_an_unknown_codec_is_named_with_its_variable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import zarr

    root = zarr.open_group(tmp_path / "odd.zarr", mode="w", zarr_format=3)
    root.create_array("ok", shape=(3,), dtype="i4")[:] = [1, 2, 3]
    root.create_array("odd", shape=(3,), dtype="i4")[:] = [4, 5, 6]
    document = tmp_path / "odd.zarr" / "odd" / "zarr.json"
    metadata = json.loads(document.read_text())
    metadata["codecs"].append({"name": "made-up-codec"})
    document.write_text(json.dumps(metadata))
    assert main(["copy", str(tmp_path / "odd.zarr"), str(tmp_path / "out.zarr")]) == 1
    assert "variable /odd: unknown codec 'made-up-codec'" in capsys.readouterr().err
    assert not (tmp_path / "out.zarr").exists()
    with nczarr.Dataset(str(tmp_path / "odd.zarr")) as ds:  # the other variable still reads
        assert ds["ok"][:].tolist() == [1, 2, 3]


# -- CDF-5 files keep their types ----------------------------------------------------------
_CDF5_TYPES = ("u1", "u2", "u4", "i8", "u8")


def _cdf5_file(path: Path) -> Path:
    """A CDF-5 file (NETCDF3_64BIT_DATA) holding each type CDF-5 adds to the classic model."""
    with netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_DATA") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        for code in _CDF5_TYPES:
            top = np.iinfo(code).max - 1
            v = ds.createVariable(f"v_{code}", code, ("t", "x"))
            v[:] = np.array([[1, 2, top], [3, 4, 5]], code)
            v.setncattr(f"a_{code}", np.array([top, 1], code))
        ds.createVariable("s_u8", "u8", ())[...] = np.uint64(2**63 + 5)
        ds.setncattr("g_i8", np.int64(-(2**40)))
    return path


def _netcdf4_view(url: str | Path) -> object:
    def attributes(owner: Any) -> dict[str, object]:
        return {a: (owner.getncattr(a).dtype, owner.getncattr(a).tolist()) for a in owner.ncattrs() if a != "_NCProperties"}

    with netCDF4.Dataset(url) as ds:
        variables = {name: (v.dtype, v.dimensions, v[...].tolist(), attributes(v)) for name, v in ds.variables.items()}
        return variables, attributes(ds)


@pytest.mark.parametrize("convention", ["NCZARR_V2", "ZARR_V2"])
@pytest.mark.parametrize("kind", [[], ["-k", "cdf5"], ["-k", "nc4"]])
def test_cdf5_types_reach_zarr_as_netcdf4_reads_them(tmp_path: Path, convention: str, kind: list[str]) -> None:
    """nccopy -k nc4 keeps CDF-5's types; nczarr copy keeps them without -k (or with -k cdf5)
    too, in the netCDF-4 data model, which netcdf-c records for every Zarr dataset."""
    source = _cdf5_file(tmp_path / "c5.nc")
    mode = "nczarr" if convention == "NCZARR_V2" else "zarr"
    url = f"{(tmp_path / 'out.file').as_uri()}#mode={mode},file"
    assert main(["copy", *kind, str(source), url]) == 0
    theirs = _netcdf4_view(url)
    variables, attributes = _netcdf4_view(source)
    if convention == "ZARR_V2":  # pure Zarr: attribute types inferred from their JSON, netcdf-c's [1] scalars
        def types_and_values(view: Any) -> dict[str, object]:
            return {name: (v[0], np.ravel(v[2]).tolist()) for name, v in view.items()}

        assert types_and_values(theirs[0]) == types_and_values(variables)  # type: ignore[index]
    else:
        assert theirs == (variables, attributes)
    with nczarr.Dataset(url) as ours:
        assert ours.data_model == netCDF4.Dataset(url).data_model == "NETCDF4"
        assert {name: v.dtype for name, v in ours.variables.items()} == {name: v[0] for name, v in variables.items()}


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_cdf5_file_copies_to_every_convention_and_back(tmp_path: Path, convention: str) -> None:
    source = _cdf5_file(tmp_path / "c5.nc")
    store = tmp_path / "c5.zarr"
    copy(source, store, CopyOptions(format=convention))
    back = tmp_path / "back.nc"
    assert main(["copy", "-k", "cdf5", str(store), str(back)]) == 0
    if convention.startswith("NCZARR"):
        assert _netcdf4_view(back) == _netcdf4_view(source)
    with netCDF4.Dataset(back) as ds:
        assert ds.data_model == "NETCDF3_64BIT_DATA"


def test_cdf5_format_makes_a_zarr_dataset_netcdf4_makes(tmp_path: Path) -> None:
    """netCDF4 creates a Zarr dataset asked for NETCDF3_64BIT_DATA in the netCDF-4 model,
    which holds CDF-5's types; so does nczarr, also through its xarray writer."""
    kept = {}
    for module in (netCDF4, nczarr):
        url = f"{(tmp_path / f'{module.__name__}.file').as_uri()}#mode=nczarr,file"
        with module.Dataset(url, "w", format="NETCDF3_64BIT_DATA") as ds:
            kept[module.__name__] = ds.data_model
            ds.createDimension("x", 2)
            ds.createVariable("u", "u8", ("x",))[:] = [1, 2**63]
    assert kept == {"netCDF4": "NETCDF4", "nczarr": "NETCDF4"}
    assert _netcdf4_view(f"{(tmp_path / 'nczarr.file').as_uri()}#mode=nczarr,file") == _netcdf4_view(
        f"{(tmp_path / 'netCDF4.file').as_uri()}#mode=nczarr,file"
    )
    data = xr.Dataset({"u": ("x", np.array([1, 2**63], "u8")), "i": ("x", np.array([-(2**40), 1], "i8"))})
    to_nczarr(data, tmp_path / "x.zarr", format="NETCDF3_64BIT_DATA")
    with nczarr.Dataset(tmp_path / "x.zarr") as ds:
        assert (ds.data_model, ds["u"].dtype, ds["i"].dtype) == ("NETCDF4", np.dtype("u8"), np.dtype("i8"))
        assert ds["u"][:].tolist() == [1, 2**63]
