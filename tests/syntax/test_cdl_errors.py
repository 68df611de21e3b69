"""CDL in: text that ncgen refuses gives one clear ParseError (file, line, column, message)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nczarr.errors import CdlError, NCZarrError
from nczarr.syntax import ParseError
from nczarr.syntax.cdl import normalize_kind, parse_cdl

NCGEN = "ncgen"  # netcdf-bin: .ci/run installs it

# (ncgen -k kind, CDL text, the full message of the error)
CASES = [
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = "abc ;\n}\n',
        "in.cdl:4:9: unterminated string; expected one of ',', ';', '{', NIL, "
        "a character constant, a name, a number, a path, a string"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  foo_t v ;\n}\n',
        "in.cdl:3:3: undefined type 'foo_t'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v(nodim) ;\n}\n',
        "in.cdl:3:9: undefined dimension 'nodim'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 256ub ;\n}\n',
        'in.cdl:4:9: value out of range for ubyte: 256ub'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 18446744073709551616 ;\n}\n',
        'in.cdl:4:9: integer constant out of range: 18446744073709551616'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = -1u ;\n}\n',
        'in.cdl:4:9: unsigned integer cannot be signed: -1u'
    ),
    (
        'nc4',
        'netcdf x {\ntypes:\n  compound c_t { int a ; } ;\nvariables:\n  c_t v ;\ndata:\n  '
        'v = {1, 2} ;\n}\n',
        "in.cdl:7:11: more values than the 1 fields of 'c_t'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:_FillValue = 1, 2 ;\n}\n',
        'in.cdl:4:5: _FillValue needs exactly one value'
    ),
    (
        'nc4',
        'netcdf x {\ndimensions:\n  d = 2, d = 3 ;\n}\n',
        "in.cdl:3:10: duplicate name 'd'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v, v ;\n}\n',
        "in.cdl:3:10: duplicate name 'v'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = "a\\12b" ;\n}\n',
        'in.cdl:4:9: bad octal escape in "a\\12b"'
    ),
    (
        'nc3',
        'netcdf x {\nvariables:\n  ubyte v ;\n}\n',
        'in.cdl:3:3: the type ubyte is not allowed in the NETCDF3_CLASSIC format'
    ),
    (
        'nc3',
        'netcdf x {\ngroup: g {\n}\n}\n',
        'in.cdl:2:8: a group is not allowed in the NETCDF3_CLASSIC format'
    ),
    (
        'nc3',
        'netcdf x {\ntypes:\n  int(*) vl_t ;\n}\n',
        'in.cdl:3:10: a vlen type is not allowed in the NETCDF3_CLASSIC format'
    ),
    (
        'nc3',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 3000000000 ;\n}\n',
        'in.cdl:4:5: the type uint is not allowed in the NETCDF3_CLASSIC format'
    ),
    (
        'nc3',
        'netcdf x {\ndimensions:\n  a = unlimited ;\n  b = unlimited ;\nvariables:\n  int '
        'v(a, b) ;\n}\n',
        "in.cdl:6:7: only the first dimension of 'v' may be unlimited in a classic-model "
        'format'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = {1} ;\n}\n',
        'in.cdl:4:5: non-simple list of values for an untyped attribute (give it a type)'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\ndata:\n  w = 1 ;\n}\n',
        "in.cdl:5:3: undefined variable 'w'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 1 2 ;\n}\n',
        "in.cdl:4:11: unexpected '2'; expected one of ',', ';'"
    ),
    (
        'nc4',
        'netcdf x {\ntypes:\n  ubyte enum e_t {a = 1} ;\nvariables:\n  e_t v ;\ndata:\n  v '
        '= b ;\n}\n',
        "in.cdl:7:7: 'b' is not a member of enum 'e_t'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 1 ;\n',
        "in.cdl:5:1: unexpected end of text; expected one of ':', 'byte', 'char', 'data:', "
        "'double', 'float', 'group:', 'int', 'int64', 'integer', 'long', 'real', 'short', "
        "'string', 'ubyte', 'uint', 'uint64', 'uinteger', 'ulong', 'ushort', '}', a name, "
        'a path'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  FLOAT v ;\n}\n',
        "in.cdl:3:3: undefined type 'FLOAT'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 1f ;\n}\n',
        "in.cdl:4:10: unexpected 'f'; expected one of ',', ';'"
    ),
    (
        'nc4',
        "netcdf x {\nvariables:\n  int v ;\n  v:a = 'é' ;\n}\n",
        'in.cdl:4:9: unexpected character "\'"; expected one of \',\', \';\', \'{\', NIL, '
        "a character constant, a name, a number, a path, a string"
    ),
    (
        'nc4',
        'variables: int v ;',
        "in.cdl:1:1: unexpected 'variables:'; expected 'netcdf'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:_ChunkSizes = 1 ;\n}\n',
        'in.cdl:4:5: _ChunkSizes needs one positive size per dimension (0)'
    ),
    (
        'nc4',
        'netcdf x {\ndimensions:\n  d = 2 ;\nvariables:\n  int v(d) ;\n  v:_Filter = "4,32,'
        '32" ;\n}\n',
        'in.cdl:6:5: _Filter: szip has no Zarr codec'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 1 ;\n  :_Format = "bogus" ;\n}\n',
        "in.cdl:5:4: unknown _Format 'bogus'"
    ),
    (
        'nc4',
        'netcdf x {\ntypes:\n  opaque(0) o_t ;\n}\n',
        'in.cdl:3:10: a size must be a positive integer'
    ),
    (
        'nc4',
        'netcdf x {\ndimensions:\n  d = -1 ;\n}\n',
        'in.cdl:3:7: a dimension size must be a non-negative integer'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = 1, "x" ;\n}\n',
        'in.cdl:4:12: non-simple list of values for an untyped attribute (give it a type)'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int א ;\n}\n',
        "in.cdl:3:7: unexpected character 'א'; expected one of ':', 'byte', 'char', "
        "'double', 'float', 'int', 'int64', 'integer', 'long', 'real', 'short', 'string', "
        "'ubyte', 'uint', 'uint64', 'uinteger', 'ulong', 'ushort', a name, a path"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\ndata:\n  v = 1, 2 ;\n}\n',
        "in.cdl:5:3: scalar variable 'v' has 2 values"
    ),
    (
        'nc4',
        'netcdf x {\ndimensions:\n  t = unlimited ;\n  u = unlimited ;\nvariables:\n  int '
        'v(t, u) ;\ndata:\n  v = 1, 2 ;\n}\n',
        'in.cdl:8:7: each instance of an unlimited dimension that is not the first needs '
        'braces'
    ),
    (
        'nc4',
        'netcdf x {\ndimensions:\n  d = 2 ;\nvariables:\n  int v(d) ;\n  v:_DeflateLevel = '
        '12 ;\n}\n',
        'in.cdl:6:5: _DeflateLevel must be from 0 to 9'
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:_Endianness = "middle" ;\n}\n',
        "in.cdl:4:5: unknown _Endianness 'middle'"
    ),
    (
        'nc4',
        'netcdf x {\ntypes:\n  float enum e_t {a = 1} ;\n}\n',
        'in.cdl:3:14: the base type of an enum must be an integer type, not float'
    ),
    (
        'nc4',
        'netcdf x {\ntypes:\n  ubyte enum e_t {a = 1, a = 2} ;\n}\n',
        "in.cdl:3:26: duplicate enum member 'a'"
    ),
    (
        'nc4',
        'netcdf x {\ntypes:\n  compound c_t { int a ; float a ; } ;\n}\n',
        "in.cdl:3:32: duplicate field 'a'"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  int v:a = ;\n}\n',
        "in.cdl:4:9: attribute 'a' has no values"
    ),
    (
        'nc4',
        'netcdf x {\nvariables:\n  int v ;\n  v:a = _ ;\n}\n',
        "in.cdl:4:9: '_' is not allowed in an attribute"
    ),
    (
        'nc4',
        'netcdf x {\ntypes:\n  opaque(2) o_t ;\nvariables:\n  o_t v ;\ndata:\n  v = 12 ;\n}\n',
        "in.cdl:7:7: expected an opaque constant (0x...) for 'o_t'"
    ),
]


@pytest.mark.parametrize(("kind", "text", "message"), CASES)
def test_message(kind: str, text: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_cdl(text, "in.cdl", kind=kind)
    assert str(caught.value) == message
    assert isinstance(caught.value, NCZarrError) and isinstance(caught.value, ValueError)
    assert caught.value.filename == "in.cdl"
    line, column = map(int, message.split(":")[1:3])
    assert (caught.value.line, caught.value.column) == (line, column)


@pytest.mark.parametrize(("kind", "text", "message"), CASES)
def test_ncgen_refuses_too(kind: str, text: str, message: str, tmp_path: Path) -> None:
    source = tmp_path / "in.cdl"
    source.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [NCGEN, "-k", kind, "-o", str(tmp_path / "out.nc"), str(source)],
        capture_output=True,
        text=True,
    )
    # ncgen 4.9.0 reports some refusals (enhanced constructs with a classic -k) with status 0
    assert done.returncode != 0 or "conflicts with enhanced" in done.stderr


def test_semantic_errors_are_cdl_errors() -> None:
    with pytest.raises(CdlError) as caught:
        parse_cdl("netcdf x {\nvariables:\n  foo_t v ;\n}\n")
    assert caught.value.token == "foo_t"
    assert str(caught.value) == "<cdl>:3:3: undefined type 'foo_t'"


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("1", "NETCDF3_CLASSIC"), ("classic", "NETCDF3_CLASSIC"), ("nc3", "NETCDF3_CLASSIC"),
        ("2", "NETCDF3_64BIT_OFFSET"), ("64-bit offset", "NETCDF3_64BIT_OFFSET"),
        ("5", "NETCDF3_64BIT_DATA"), ("64-bit data", "NETCDF3_64BIT_DATA"),
        ("3", "NETCDF4"), ("netCDF-4", "NETCDF4"), ("nc4", "NETCDF4"),
        ("4", "NETCDF4_CLASSIC"), ("netCDF-4 classic model", "NETCDF4_CLASSIC"),
        ("nc7", "NETCDF4_CLASSIC"), ("NETCDF4_CLASSIC", "NETCDF4_CLASSIC"),
    ],
)
def test_kind_spellings(kind: str, name: str) -> None:
    assert normalize_kind(kind) == name


def test_unknown_kind() -> None:
    with pytest.raises(ParseError, match="unknown kind 'nc9'"):
        parse_cdl("netcdf x { }", kind="nc9")


def test_classic_64bit_data_allows_unsigned_types_but_not_groups() -> None:
    text = "netcdf x {\nvariables:\n  ubyte v ;\n  uint64 w ;\n}\n"
    assert parse_cdl(text, kind="nc5").kind == "NETCDF3_64BIT_DATA"
    with pytest.raises(ParseError, match="a group is not allowed in the NETCDF3_64BIT_DATA"):
        parse_cdl("netcdf x {\ngroup: g {\n}\n}\n", kind="nc5")


def test_no_traceback_for_lexical_garbage() -> None:
    for text in ["netcdf x { variables: int v ; v:a = 1 $ ; }", "netcdf x { ^ }", "netcdf {"]:
        with pytest.raises(ParseError):
            parse_cdl(text)
