"""CDL in: parse_cdl gives the tree and data that the real ncgen writes (read back by netCDF4)."""

from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nczarr.model import AtomicType, CompoundType, EnumType, OpaqueType, VlenType
from nczarr.syntax.cdl import CdlDataset, parse_cdl

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "cdl"
NCGEN = "ncgen"  # netcdf-bin: .ci/run installs it
_FLAGS = re.compile(r"^// ncgen: (.*)$", re.M)
_KIND_OF_FLAGS = {"-4": "nc4", "-k nc3": "nc3", "-k nc7": "nc7", "-k nc6": "nc6", "-k nc5": "nc5"}
_ATOMIC = {
    "i1": AtomicType.BYTE, "u1": AtomicType.UBYTE, "i2": AtomicType.SHORT,
    "u2": AtomicType.USHORT, "i4": AtomicType.INT, "u4": AtomicType.UINT,
    "i8": AtomicType.INT64, "u8": AtomicType.UINT64, "f4": AtomicType.FLOAT,
    "f8": AtomicType.DOUBLE, "S1": AtomicType.CHAR,
}


def ncgen(text: str, tmp_path: Path, flags: str = "-4") -> Path:
    source = tmp_path / "in.cdl"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "out.nc"
    subprocess.run([NCGEN, *flags.split(), "-o", str(out), str(source)], check=True,
                   capture_output=True)
    return out


def ncdump_header(path: Path) -> str:
    return subprocess.run(["ncdump", "-h", str(path)], check=True, capture_output=True,
                          text=True).stdout


def same(ours, theirs) -> bool:
    """Values equal, NaN equal to NaN, element by element (nested lists and arrays too)."""
    if isinstance(theirs, np.ndarray) and theirs.dtype.fields is None and theirs.dtype.kind != "O":
        ours = np.asarray(ours)
        if ours.shape != theirs.shape:
            return False
        if theirs.dtype.kind == "f":
            return bool(np.array_equal(ours.astype(theirs.dtype), theirs, equal_nan=True))
        return bool(np.array_equal(ours, theirs))
    if isinstance(theirs, (list, tuple, np.ndarray)):
        return len(ours) == len(theirs) and all(map(same, ours, theirs))
    if isinstance(theirs, float) and math.isnan(theirs):
        return isinstance(ours, float) and math.isnan(ours)
    return ours == theirs


def compare_group(ours, theirs, header: str, result: CdlDataset) -> None:
    assert [g.name for g in ours.groups] == list(theirs.groups)
    assert {d.name: (d.size, d.unlimited) for d in ours.dimensions} == {
        name: (len(d), d.isunlimited()) for name, d in theirs.dimensions.items()
    }
    their_types = {**theirs.cmptypes, **theirs.vltypes, **theirs.enumtypes}
    # netCDF4-python shows neither opaque types nor vlens of compounds.
    hidden = [t.name for t in ours.types if t.name not in their_types]
    assert all(isinstance(t, (OpaqueType, VlenType)) for t in ours.types if t.name in hidden)
    assert sorted(t.name for t in ours.types if t.name not in hidden) == sorted(their_types)
    for t in ours.types:
        if t.name not in hidden:
            compare_type(t, their_types[t.name], result)
    compare_attributes(ours, theirs, header, "")
    # netCDF4-python hides variables of opaque types and of vlens of compounds: compare
    # those with ncdump's data text.
    shown = [v.name for v in ours.variables if v.name in theirs.variables]
    assert shown == list(theirs.variables)
    for variable in ours.variables:
        if variable.name not in shown:
            compare_dumped_data(variable, result)
            continue
        nc = theirs.variables[variable.name]
        nc.set_auto_maskandscale(False)
        nc.set_auto_chartostring(False)
        assert [ref.rsplit("/", 1)[-1] for ref in variable.dimensions] == list(nc.dimensions)
        compare_variable_type(variable, nc)
        compare_attributes(variable, nc, header, variable.name)
        data = result.data[variable.fqn]
        # netCDF4-python finds a variable's dimensions by name, so it gets the shape of
        # `int outer(/x)` wrong where the group has its own x: slice by the real dimensions.
        expected = nc[tuple(slice(0, n) for n in data.shape)] if data.shape else nc[...]
        if isinstance(expected, np.ma.MaskedArray):
            expected = expected.data
        if data.shape == () and data.dtype.kind == "O":  # netCDF4 gives the element itself
            expected, element = np.empty((), dtype=object), expected
            expected[()] = element
        assert data.shape == np.shape(expected), variable.fqn
        if data.dtype.fields is not None or data.dtype.kind == "O":
            assert data.dtype == expected.dtype, variable.fqn
            assert same(data.tolist() if data.dtype.kind != "O" else list(data.flat),
                        expected.tolist() if data.dtype.kind != "O" else list(expected.flat)), (
                variable.fqn)
        else:  # in native byte order, whatever _Endianness says
            assert data.dtype == expected.dtype.newbyteorder("="), variable.fqn
            assert same(data, expected), variable.fqn
    for group in ours.groups:
        compare_group(group, theirs.groups[group.name], header, result)


def compare_dumped_data(variable, result: CdlDataset) -> None:
    data = result.data[variable.fqn]
    dumped = result_dump(result.dataset.name, variable)
    line = re.search(rf"^ +{re.escape(variable.name)} = (.*?) ;$", dumped, re.M | re.S)
    assert line, variable.fqn
    assert re.sub(r"\s+", " ", line.group(1)) == ", ".join(_dumped(v) for v in data.flat)


def _dumped(value) -> str:
    if isinstance(value, bytes):
        return "0X" + value.hex().upper()
    if isinstance(value, np.ndarray) and value.dtype.fields is None:
        return "{" + ", ".join(map(_dumped, value.flat)) + "}"
    if isinstance(value, np.ndarray):
        return _dumped(value.tolist()) if value.shape == () else \
            "{" + ", ".join(map(_dumped, value)) + "}"
    if isinstance(value, (tuple, np.void)):
        return "{" + ", ".join(map(_dumped, tuple(value))) + "}"
    if isinstance(value, (float, np.floating)):
        return f"{value:.15g}" if np.asarray(value).dtype.itemsize == 8 else f"{value:.7g}"
    return str(value)


_DUMPS: dict[str, str] = {}


def result_dump(name: str, variable) -> str:
    return _DUMPS[name]


def compare_type(ours, theirs, result: CdlDataset) -> None:
    if isinstance(ours, CompoundType):
        assert isinstance(theirs, netCDF4.CompoundType)
        assert [f.name for f in ours.fields] == list(theirs.dtype.names)
    elif isinstance(ours, EnumType):
        assert {m.name: m.value for m in ours.members} == theirs.enum_dict
        assert np.dtype(theirs.dtype) == np.dtype(_code(ours.base))
    elif isinstance(ours, VlenType):
        assert isinstance(theirs, netCDF4.VLType)


def _code(type: AtomicType) -> str:
    return next(code for code, t in _ATOMIC.items() if t is type)


def compare_variable_type(variable, nc) -> None:
    if isinstance(variable.type, AtomicType):
        if variable.type is AtomicType.STRING:
            assert nc.dtype is str
        else:
            assert _ATOMIC[np.dtype(nc.dtype).str[1:]] is variable.type
    else:
        assert variable.type.rsplit("/", 1)[-1] == nc.datatype.name


def compare_attributes(owner, nc, header: str, where: str) -> None:
    names = [a.name for a in owner.attributes]
    assert names == list(nc.ncattrs()), where
    for attribute in owner.attributes:
        if isinstance(attribute.type, str) and "opaque" in header.split(
            attribute.type.rsplit("/", 1)[-1] + " ;")[0].rsplit("\n", 1)[-1]:
            # netCDF4 cannot read opaque attributes: compare with ncdump's text
            shown = ", ".join("0X" + v.hex().upper() for v in attribute.values)
            assert f"{where}:{attribute.name} = {shown} ;" in header, (where, attribute.name)
            continue
        value = nc.getncattr(attribute.name)
        if attribute.type is AtomicType.CHAR:
            if attribute.name == "_FillValue":  # netCDF4 gives a char fill value as bytes
                value = value.decode()
            assert isinstance(value, str), (where, attribute.name)
            assert attribute.values == value
            continue
        if attribute.type is AtomicType.STRING:
            typed = re.search(rf"string {re.escape(where)} ?:{re.escape(attribute.name)} =",
                              header) or re.search(
                rf"string {re.escape(where)}:{re.escape(attribute.name)} =", header)
            assert typed, (where, attribute.name)
            assert attribute.values == ([value] if isinstance(value, str) else list(value))
            continue
        if isinstance(attribute.type, AtomicType):
            array = np.atleast_1d(value)
            assert _ATOMIC[array.dtype.str[1:]] is attribute.type, (where, attribute.name)
            assert same(np.array(attribute.values, array.dtype), array), (where, attribute.name)
            continue
        array = np.atleast_1d(value)
        if array.dtype.fields is not None:
            assert same([tuple(v) for v in attribute.values],
                        [tuple(x.tolist() if isinstance(x, np.ndarray) else x for x in v)
                         for v in array.tolist()])
        else:
            assert same(attribute.values, array.tolist()), (where, attribute.name)


def _sample_ids() -> list[str]:
    return sorted(p.name for p in SAMPLES.glob("*.cdl"))


@pytest.mark.filterwarnings("ignore:.*unsupported:UserWarning")  # netCDF4 skips opaque types
@pytest.mark.parametrize("name", _sample_ids())
def test_sample_matches_ncgen(name: str, tmp_path: Path) -> None:
    text = (SAMPLES / name).read_text(encoding="utf-8")
    flags = _FLAGS.search(text).group(1).strip()
    path = ncgen(text, tmp_path, flags)
    result = parse_cdl(text, name, kind=_KIND_OF_FLAGS[flags])
    _DUMPS[result.dataset.name] = subprocess.run(
        ["ncdump", str(path)], check=True, capture_output=True, text=True).stdout
    with netCDF4.Dataset(path) as nc:
        compare_group(result.dataset, nc, ncdump_header(path), result)


def test_sample_kinds_and_models() -> None:
    classic = parse_cdl((SAMPLES / "classic.cdl").read_text(), kind="classic")
    assert classic.kind == "NETCDF3_CLASSIC"
    assert classic.dataset.data_model.value == "classic"
    special = parse_cdl((SAMPLES / "special.cdl").read_text())
    assert special.kind == "NETCDF4"  # from _Format
    assert special.dataset.data_model.value == "enhanced"
    assert parse_cdl("netcdf x { }").kind is None


def test_special_attributes_become_storage() -> None:
    result = parse_cdl((SAMPLES / "special.cdl").read_text())
    storage = result.storage
    assert storage["/chunked"].chunks == (1, 5)
    assert (storage["/chunked"].compression, storage["/chunked"].complevel) == ("zlib", 4)
    assert storage["/chunked"].shuffle is True
    assert storage["/contiguous"].chunks == (10,)
    assert storage["/big"].endian == "big" and storage["/big"].fletcher32 is True
    assert storage["/nofill"].fill is False
    little = storage["/little"]
    assert (little.chunks, little.compression, little.complevel, little.shuffle) == (
        (5, 2), "zlib", 1, False)
    assert little.endian == "little"
    # Specials are settings, not attributes; ordinary attributes stay.
    variable = result.dataset.find_variable("little")
    assert [a.name for a in variable.attributes] == ["units"]


def test_special_attributes_as_ncgen_applies_them(tmp_path: Path) -> None:
    text = (SAMPLES / "special.cdl").read_text()
    result = parse_cdl(text)
    with netCDF4.Dataset(ncgen(text, tmp_path)) as nc:
        for name in ("chunked", "little"):
            filters = nc[name].filters()
            storage = result.storage[f"/{name}"]
            assert tuple(nc[name].chunking()) == storage.chunks
            assert filters["complevel"] == storage.complevel
            assert filters["shuffle"] == storage.shuffle
        assert nc["contiguous"].chunking() == "contiguous"
        assert nc["big"].endian() == "big"
        assert nc["big"].filters()["fletcher32"] is True


def test_filter_and_codecs_attributes() -> None:
    text = """netcdf f { dimensions: x = 4 ; variables:
      int a(x) ; a:_Filter = "32015,5" ;
      int b(x) ; b:_Filter = "1,3|2" ;
      int c(x) ; c:_Codecs = "[{\\"name\\": \\"gzip\\", \\"configuration\\": {\\"level\\": 2}}]" ;
    }"""
    storage = parse_cdl(text).storage
    assert (storage["/a"].compression, storage["/a"].complevel) == ("zstd", 5)
    assert (storage["/b"].compression, storage["/b"].complevel, storage["/b"].shuffle) == (
        "zlib", 3, True)
    assert storage["/c"].codecs == [{"name": "gzip", "configuration": {"level": 2}}]


@pytest.mark.parametrize(
    ("cdl", "type", "values"),
    [
        (":a = 1, 2b", AtomicType.INT, [1, 2]),
        (":a = 1ub, -1b", AtomicType.BYTE, [1, -1]),
        (":a = -1b, 1ub", AtomicType.UBYTE, [255, 1]),
        (":a = 4294967295, 1", AtomicType.INT, [-1, 1]),
        (":a = 18446744073709551615", AtomicType.INT, [-1]),
        (":a = 9223372036854775808", AtomicType.INT64, [-(2**63)]),
        (":a = 0x7ffs", AtomicType.UINT, [0x7FF]),
        (":a = 0xabcdabcdabcdabcdL", AtomicType.UINT, [4294967295]),
        (":a = 09, 08", AtomicType.INT, [0, 0]),
        (":a = 'a', 'b'", AtomicType.BYTE, [97, 98]),
        (r":a = '\0', '\101', '\n', '\''", AtomicType.BYTE, [0, 65, 10, 39]),
        (":a = 1, 0.5f", AtomicType.FLOAT, [1.0, 0.5]),
        ("short :a = 65535", AtomicType.SHORT, [-1]),
        ("double :a = 0.1f", AtomicType.DOUBLE, [float(np.float32(0.1))]),
        (":a = \"x\", \"y\"", AtomicType.CHAR, "xy"),
        (":a = ", AtomicType.CHAR, ""),
        (":a = -Infinityf", AtomicType.FLOAT, [-math.inf]),
    ],
)
def test_untyped_and_typed_attributes(cdl: str, type: AtomicType, values) -> None:
    attribute = parse_cdl(f"netcdf x {{ variables: {cdl} ; }}").dataset.attributes[0]
    assert (attribute.type, attribute.values) == (type, values)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("netcdf my data\tset {\n}", "mydataset"),
        ("\ufeff// comment\n/* c */ netCDF x{}", "x"),
        ("NETCDF   a.b  \n { }", "a.b"),
    ],
)
def test_dataset_name(text: str, name: str) -> None:
    assert parse_cdl(text).dataset.name == name


def test_lexing_corner_cases() -> None:
    text = r"""netcdf x {
    dimensions: data = 2 ;
    variables:
      int data(data), nanny, e5, variables ;   // names that start like keywords/constants
      data :units = "m" ;                        // "data :" is not the section keyword
      int Infinityx ;
      float f(data) ;
    data:
      data = 1, -2 ; nanny = 010 ; e5 = +5 ; variables = -0 ; Infinityx = 0x1 ;
      f = 1.e1f, -.5e-1 ;
    }"""
    result = parse_cdl(text)
    names = [v.name for v in result.dataset.variables]
    assert names == ["data", "nanny", "e5", "variables", "Infinityx", "f"]
    assert result.dataset.variables[0].attributes[0].values == "m"
    data = result.data
    assert data["/data"].tolist() == [1, -2]
    assert (data["/nanny"], data["/e5"], data["/variables"], data["/Infinityx"]) == (8, 5, 0, 1)
    assert data["/f"].tolist() == [10.0, np.float32(-0.05)]


def test_char_rules() -> None:
    text = """netcdf x { dimensions: r = 4 ; c = 5 ; u = unlimited ;
      variables: char a(r, c) ; char b(u) ; char f(r, c) ; f:_FillValue = "-" ; char s ;
      data: a = "1", "two", "three" ; b = "hello", "world" ; f = "ab" ; s = "xyz" ; }"""
    result = parse_cdl(text)
    rows = [b"".join(row).decode() for row in result.data["/a"]]
    assert rows == ["1", "two", "three", ""]
    assert b"".join(result.data["/b"]) == b"helloworld"
    assert result.dataset.dimensions[2].size == 10
    assert b"".join(result.data["/f"].reshape(-1)) == b"ab" + b"-" * 18
    assert result.data["/s"].shape == () and result.data["/s"][()] == b"x"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=20))
def test_int_data_round_trips(values: list[int]) -> None:
    text = f"netcdf x {{ dimensions: n = {len(values)} ; variables: int v(n) ; data: v = " \
        f"{', '.join(map(str, values))} ; }}"
    data = parse_cdl(text).data["/v"]
    assert data.dtype == np.int32 and data.tolist() == values


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20))
def test_double_data_round_trips(values: list[float]) -> None:
    text = f"netcdf x {{ dimensions: n = {len(values)} ; variables: double v(n) ; data: v = " \
        f"{', '.join(map(repr, values))} ; }}"
    assert parse_cdl(text).data["/v"].tolist() == values


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_characters='"\\\x00'), max_size=20))
def test_string_escapes_round_trip(value: str) -> None:
    escaped = value.replace("\n", "\\n").replace("\t", "\\t")
    text = f'netcdf x {{ variables: string s ; data: s = "{escaped}" ; }}'
    assert parse_cdl(text).data["/s"][()] == value


def test_opaque_padding_and_vlen_attribute() -> None:
    text = """netcdf x { types: opaque(3) o_t ; int(*) v_t ;
      variables: o_t o(x) ; v_t :va = {1, 2}, {} ;
      dimensions: x = 2 ; }"""
    with pytest.raises(Exception):  # sections out of order: dimensions after variables
        parse_cdl(text)
    text = """netcdf x { types: opaque(3) o_t ; int(*) v_t ; dimensions: x = 2 ;
      variables: o_t o(x) ; v_t :va = {1, 2}, {} ; data: o = 0xabc, 0x12345678 ; }"""
    result = parse_cdl(text)
    assert list(result.data["/o"]) == [b"\xab\xc0\x00", b"\x12\x34\x56"]
    assert result.dataset.attributes[0].values == [[1, 2], []]
    assert isinstance(result.dataset.types[0], OpaqueType)


def _assert_same_data(ours: np.ndarray, theirs: np.ndarray, where: str) -> None:
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, where
    if ours.dtype.kind == "f":  # ncdump prints floats with 7 and doubles with 15 digits
        np.testing.assert_allclose(ours, theirs, rtol=1e-6 if ours.itemsize == 4 else 1e-14,
                                   equal_nan=True, err_msg=where)
    elif ours.dtype.fields is not None:
        for name in ours.dtype.names:
            _assert_same_data(ours[name], theirs[name], f"{where}.{name}")
    elif ours.dtype.kind == "O":
        assert same(list(ours.flat), list(theirs.flat)), where
    else:
        assert np.array_equal(ours, theirs), where


def _round_floats(dataset) -> None:
    """Float attribute values to ncdump's precision; types in name order (ncgen reorders)."""
    for group in dataset.walk():
        group.types.sort(key=lambda t: t.name)
        for owner in (group, *group.variables):
            for attribute in owner.attributes:
                if attribute.type in (AtomicType.FLOAT, AtomicType.DOUBLE):
                    attribute.values = [float(f"{v:.6g}") for v in attribute.values]


@pytest.mark.parametrize("name", _sample_ids())
def test_ncdump_output_parses_to_the_same_dataset(name: str, tmp_path: Path) -> None:
    text = (SAMPLES / name).read_text(encoding="utf-8")
    flags = _FLAGS.search(text).group(1).strip()
    path = ncgen(text, tmp_path, flags)
    dumped = subprocess.run(["ncdump", "-n", name[:-4], str(path)], check=True,
                            capture_output=True, text=True).stdout
    ours = parse_cdl(text, name, kind=_KIND_OF_FLAGS[flags])
    again = parse_cdl(dumped, "dumped", kind=_KIND_OF_FLAGS[flags])
    _round_floats(ours.dataset)
    _round_floats(again.dataset)
    assert again.dataset == ours.dataset
    assert list(again.data) == list(ours.data)
    for fqn, data in ours.data.items():
        _assert_same_data(data, again.data[fqn], fqn)


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["byte", "ushort", "int", "uint64", "float", "double"]),
    st.lists(
        st.sampled_from(["0", "7", "-7", "010", "1.9", "-1.9", "1e3", "255", "-129", "65536",
                         "4294967296", "123456789012345678", "9223372036854775807", ".5"]),
        min_size=70,
        max_size=120,
    ),
)
def test_long_lists_read_like_short_ones(type: str, values: list[str]) -> None:
    """Long lists take numpy's path; short ones ncgen's rules for each constant."""
    def read(items: list[str]) -> list:
        text = f"netcdf x {{ dimensions: n = {len(items)} ; variables: {type} v(n) ; " \
            f"data: v = {', '.join(items)} ; }}"
        return parse_cdl(text).data["/v"].tolist()

    short = [value for start in range(0, len(values), 10)
             for value in read(values[start:start + 10])]
    assert same(read(values), short)


def test_time_function_and_64bit_data_kind() -> None:
    text = """netcdf x { variables: double t ; uint64 big ;
      data: t = time("2000-01-01 12:00:00") ; big = 18446744073709551615ULL ; }"""
    result = parse_cdl(text, kind="64-bit data")
    assert result.data["/t"][()] == 262980.0  # hours since 1970, as ncgen computes it
    assert result.data["/big"][()] == 2**64 - 1
    assert result.kind == "NETCDF3_64BIT_DATA"


def test_long_lists_inside_strings_and_comments_stay_text() -> None:
    values = ", ".join(map(str, range(100)))
    text = (f'netcdf x {{ dimensions: n = 100 ; variables: int a\\"b ; int v(n) ;\n'
            f'v:s = "= {values} ;" ; // = {values} ;\n'
            f'data: v = {values} ; }}')
    result = parse_cdl(text)
    assert result.dataset.variables[0].name == 'a"b'
    assert result.dataset.variables[1].attributes[0].values == f"= {values} ;"
    assert result.data["/v"].tolist() == list(range(100))


def test_repeated_attribute_and_data_the_last_counts(tmp_path: Path) -> None:
    text = """netcdf x { dimensions: d = 3 ; variables: int v(d) ;
      v:a = 1 ; v:b = 3 ; v:a = 2, 5 ; data: v = 1 ; v = 2, 3 ; }"""
    result = parse_cdl(text)
    variable = result.dataset.variables[0]
    assert [(a.name, a.values) for a in variable.attributes] == [("a", [2, 5]), ("b", [3])]
    assert result.data["/v"].tolist() == [2, 3, -2147483647]
    with netCDF4.Dataset(ncgen(text, tmp_path)) as nc:  # ncgen does the same
        assert nc["v"].ncattrs() == ["a", "b"] and nc["v"].a.tolist() == [2, 5]
        nc.set_auto_mask(False)
        assert nc["v"][:].tolist() == [2, 3, -2147483647]
