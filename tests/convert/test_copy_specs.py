"""nccopy's option texts (-F filter specs, -c chunk specs, sizes) and what they make of a
variable's storage, as netcdf-c's nccopy and its filters.md define them."""

from __future__ import annotations

import struct

import pytest

from nczarr.convert.specs import (
    DimensionChunks,
    FilterOption,
    FilterSpec,
    Shape,
    StorageRequest,
    VariableChunks,
    parse_chunk_spec,
    parse_filter_option,
    parse_parameter,
    parse_size,
)
from nczarr.errors import ArgumentError
from nczarr.values.storage import VariableStorage


def test_filter_options_in_netcdf_c_syntax() -> None:
    assert parse_filter_option("v,1,5") == FilterOption(("/v",), (FilterSpec(1, (5,)),))
    assert parse_filter_option("v&/g/w,307,9|2") == FilterOption(("/v", "/g/w"), (FilterSpec(307, (9,)), FilterSpec(2)))
    assert parse_filter_option("*,2").variables == ("*",)
    assert parse_filter_option("none") == parse_filter_option("*,none") == FilterOption(("*",), none=True)
    assert parse_filter_option("v,NONE") == FilterOption(("/v",), none=True)
    assert parse_filter_option("v,zstd,3").filters == (FilterSpec(32015, (3,)),)
    assert parse_filter_option(r"a\&b,1,1").variables == ("/a&b",)  # nccopy's escape


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("77", [77]),
        ("-77", [(-77) % 2**32]),
        ("93U", [93]),
        ("-17b", [0xEF]),
        ("23ub", [23]),
        ("-25S", [(-25) % 2**16]),
        ("27US", [27]),
        ("789f", [struct.unpack("<I", struct.pack("<f", 789.0))[0]]),
        ("1.5d", list(struct.unpack("<II", struct.pack("<d", 1.5)))),
        ("-9223372036854775807L", [1, 0x80000000]),
        ("18446744073709551615UL", [0xFFFFFFFF, 0xFFFFFFFF]),
    ],
)
def test_parameters_are_netcdf_c_constants(text: str, words: list[int]) -> None:
    assert parse_parameter(text) == words


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("v", "no filter given"),
        ("v,", "no filter given"),
        (",1,5", "no variable named"),
        ("v,foo", "unknown filter 'foo'"),
        ("v,1,0x5", "bad filter parameter '0x5'"),
        ("v,1,5.5", "bad filter parameter"),
        ("v,1,4294967296", "out of range"),
        ("v,1,300b", "out of range"),
        ("v,1,", "empty filter parameter"),
        ("v,4294967296", "not a 32-bit unsigned integer"),
    ],
)
def test_hostile_filter_specs_are_refused(text: str, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        parse_filter_option(text)


def test_chunk_specs_in_both_forms() -> None:
    assert parse_chunk_spec("v:3,4") == VariableChunks("/v", (3, 4))
    assert parse_chunk_spec("/g/v:0,4") == VariableChunks("/g/v", (0, 4))
    assert parse_chunk_spec("lat/3, /g/x/2") == DimensionChunks({"/lat": 3, "/g/x": 2})
    for bad, message in [
        ("v:3,lat/2", "not both"),
        ("lat/0", "must be positive"),
        ("lat/-1", "bad chunk length '-1'"),
        ("lat", "expected dim/N"),
        ("/", "expected dim/N"),
        ("v:a,b", "bad chunk length 'a'"),
    ]:
        with pytest.raises(ArgumentError, match=message):
            parse_chunk_spec(bad)


def test_sizes_take_nccopys_suffixes() -> None:
    assert parse_size("5000000", "-m") == 5_000_000
    assert parse_size("1k", "-m") == 1000 and parse_size("1.5M", "-h") == 1_500_000 and parse_size("2G", "-e") == 2 * 10**9
    for bad in ("1x", "-5", "k", ""):
        with pytest.raises(ArgumentError, match="-m"):
            parse_size(bad, "-m")


SHAPE = Shape(("/lat", "/lon"), (6, 8), (False, False), 4)
RECORDS = Shape(("/time", "/lat"), (4, 6), (True, False), 4)


def request(filters: tuple[str, ...] = (), chunks: tuple[str, ...] = (), deflate: int | None = None,
            shuffle: bool = False, minimum: int = 8192) -> StorageRequest:
    return StorageRequest.parse(filters, chunks, deflate, shuffle, minimum)


def test_filters_replace_the_sources_and_none_removes_them() -> None:
    zstd = VariableStorage(chunks=(6, 8), compression="zstd", complevel=1, fletcher32=True)
    got = request(("v,1,5|2",)).filtered("/v", zstd)
    assert (got.compression, got.complevel, got.shuffle, got.fletcher32) == ("zlib", 5, True, False)
    assert request(("w,1,5",)).filtered("/v", zstd) == zstd  # not named: the source's stay
    assert request(("v,none",)).filtered("/v", zstd).compression is None
    assert not request(("none",)).filtered("/v", zstd).fletcher32
    assert request(("*,1,1", "v,1,7")).filtered("/v", VariableStorage()).complevel == 7  # the later wins
    blosc = request(("v,32001,0,0,0,0,4,2,1",)).filtered("/v", VariableStorage())
    assert (blosc.compression, blosc.complevel, blosc.blosc_shuffle) == ("blosc_lz4", 4, 2)
    # -d: level n (shuffled with -s) whatever -F says; -d 0 keeps only Fletcher32
    assert request(("v,307,9",), deflate=3, shuffle=True).filtered("/v", zstd).compression == "zlib"
    plain = request(deflate=0).filtered("/v", zstd)
    assert plain.compression is None and plain.fletcher32


@pytest.mark.parametrize(
    ("spec", "message"),
    [("v,4", "szip"), ("v,99999", "unknown filter 99999"), ("v,1,10", "level 10"), ("v,1,1|307,9", "one compressor"),
     ("v,32001,0,0,0,0,5,1,3", "no Blosc setting")],
)
def test_filters_nczarr_cannot_write_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        request((spec,)).filtered("/v", VariableStorage())


def test_chunking_follows_nccopy() -> None:
    contiguous = VariableStorage()
    assert request(("v,1,5",)).chunked("/v", SHAPE, contiguous, filtered=True) == (6, 8)  # netCDF's default
    assert request().chunked("/v", SHAPE, contiguous, filtered=False) is None
    assert request(chunks=("v:3,4",)).chunked("/v", SHAPE, contiguous, False) is None  # 48 bytes < -M 8192
    assert request(chunks=("v:3,4",), minimum=48).chunked("/v", SHAPE, contiguous, False) == (3, 4)
    assert request(chunks=("v:0,4",), minimum=0).chunked("/v", SHAPE, contiguous, False) == (6, 4)
    assert request(chunks=("v:3,4", "v:2,2"), minimum=0).chunked("/v", SHAPE, contiguous, False) == (3, 4)
    assert request(chunks=("lat/3", "lon/4"), minimum=0).chunked("/v", SHAPE, contiguous, False) == (6, 4)  # the last dim list
    assert request(chunks=("lat/3",)).chunked("/t", RECORDS, contiguous, False) == (1, 3)  # unlimited: never contiguous
    assert request(chunks=("time/2",)).chunked("/t", RECORDS, VariableStorage(chunks=(1, 6)), False) == (2, 6)
    with pytest.raises(ArgumentError, match="exceeds its dimension /lat"):
        request(chunks=("lat/100",)).chunked("/v", SHAPE, contiguous, False)
    with pytest.raises(ArgumentError, match="1 chunk lengths given"):
        request(chunks=("v:3",)).chunked("/v", SHAPE, contiguous, False)


def test_unknown_names_are_listed() -> None:
    found = request(("nosuch,1,1", "*,2"), ("w:1", "x/2", "lat/1")).unknown_names(["/v"], ["/lat"])
    assert found == ["-F: no variable /nosuch", "-c: no variable /w", "-c: no dimension /x"]
    for bad in ((), ("lat/1",)):
        assert request(chunks=bad).unknown_names(["/v"], ["/lat"]) == []
    with pytest.raises(ArgumentError, match="-d 10"):
        request(deflate=10)
