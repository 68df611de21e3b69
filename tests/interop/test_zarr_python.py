"""Interoperability with zarr-python 3: every array nczarr writes opens in zarr-python with
equal values, fill value and attributes, and every array zarr-python writes opens in nczarr
the same way. Both libraries work on one directory (``LocalStore`` / ``DirectoryStore``).

One table of cases drives both directions; a case names the array neutrally (data type,
shape, codecs as v3 JSON or numcodecs JSON, order, shards, chunk key encoding, fill value,
the region written) and is translated into each library's arguments.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.core.dtype import VariableLengthBytes
from zarr.storage import LocalStore

from nczarr.store import DirectoryStore
from nczarr.zarr import Array, Group, create_array, create_group, open_array, open_group

STR = np.dtypes.StringDType()
#: zarr-python's variable-length bytes (nczarr: object dtype with string_kind="bytes").
VLEN_BYTES = VariableLengthBytes()
STRUCT = np.dtype([("a", "<i4"), ("b", "<f8")])
STRUCT_S = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")])
#: Attributes every array and root group gets: unicode, nesting, lists, NaN, big ints.
ATTRS = {
    "title": "ünïcödé ☃ 測試",
    "nested": {"a": [1, 2, {"b": None}], "c": {"d": "e"}},
    "list": [1.5, "x", True, None],
    "nan": float("nan"),
    "big": 2**40,
    "inf": [float("inf"), float("-inf")],
}



def _v2(codec_id: str, **configuration: Any) -> dict[str, Any]:
    return {"id": codec_id, **configuration}


VLEN_UTF8_V2 = _v2("vlen-utf8")


def _v3(name: str, **configuration: Any) -> dict[str, Any]:
    return {"name": name, "configuration": configuration} if configuration else {"name": name}


def _nc(codec_id: str, **configuration: Any) -> dict[str, Any]:
    """A numcodecs codec in v3 JSON, always with a configuration (zarr-python requires one)."""
    return {"name": f"numcodecs.{codec_id}", "configuration": configuration}


def _blosc3(cname: str, clevel: int, shuffle: str, typesize: int) -> dict[str, Any]:
    return _v3("blosc", cname=cname, clevel=clevel, shuffle=shuffle, typesize=typesize, blocksize=0)


def _transpose(ndim: int) -> dict[str, Any]:
    return _v3("transpose", order=list(range(ndim))[::-1])


INT32 = np.dtype("int32")


@dataclass(frozen=True)
class Case:
    """An array described independently of either library."""

    id: str
    fmt: int
    dtype: Any = INT32
    shape: tuple[int, ...] = (7, 5)
    chunks: tuple[int, ...] = (3, 2)
    #: v3: array->array codecs (JSON); v2: numcodecs filter configurations.
    filters: tuple[dict[str, Any], ...] = ()
    #: v3 only: the array->bytes codec (None: each library's default ``bytes``/``vlen-utf8``).
    serializer: dict[str, Any] | None = None
    #: v3: bytes->bytes codecs; v2: at most one numcodecs compressor.
    compressors: tuple[dict[str, Any], ...] = ()
    order: str = "C"
    shards: tuple[int, ...] | None = None
    fill_value: Any = None
    #: v3 chunk key encoding name (None: "default").
    key_encoding: str | None = None
    #: v3 key separator / v2 dimension separator (None: the format's default).
    separator: str | None = None
    dimension_names: tuple[str | None, ...] | None = None
    #: The part written (None: everything); the rest must read as the fill value.
    region: tuple[slice, ...] | None = None
    #: Where the array lives ("": the store's root is the array; else below a root group).
    path: str = "grp/x"

    @property
    def variable(self) -> bool:
        """Variable-length strings or bytes: compared as lists of Python objects."""
        return self.dtype is STR or self.dtype is VLEN_BYTES

    @property
    def numpy_dtype(self) -> np.dtype:
        """The dtype of the values written and expected."""
        return np.dtype(object) if self.dtype is VLEN_BYTES else np.dtype(self.dtype)

    @property
    def names(self) -> tuple[str | None, ...] | None:
        if self.fmt == 2 or not self.shape:
            return None
        return self.dimension_names or tuple(f"dim{i}" for i in range(len(self.shape)))

    @property
    def key_separator(self) -> str:
        if self.separator is not None:
            return self.separator
        return "/" if self.fmt == 3 and self.key_encoding in (None, "default") else "."



# -- data and expectations ---------------------------------------------------------------------


def sample(dtype: np.dtype, shape: tuple[int, ...], vlen_bytes: bool = False) -> np.ndarray:
    """Deterministic values of ``dtype`` that differ from element to element (and from the
    default fill in most places), exactly representable after bitround/quantize."""
    n = math.prod(shape)
    i = np.arange(n)
    if dtype.kind in "TO":
        texts = [f"é{k}" + "xyz"[: k % 4] for k in range(n)]
        flat = np.array([t.encode() for t in texts] if vlen_bytes else texts, dtype=dtype)
    elif dtype.fields is not None:
        flat = np.zeros(n, dtype)
        for name in dtype.names:
            flat[name] = sample(dtype.fields[name][0], (n,))
    elif dtype.kind == "V":
        flat = np.frombuffer(bytes((k * 7 + j) % 256 for k in range(n) for j in range(dtype.itemsize)), dtype)
    elif dtype.kind in "SU":
        length = dtype.itemsize // np.dtype(dtype.kind + "1").itemsize
        flat = np.array([f"b{k}{k % 3 * 'z'}"[:length] for k in range(n)])
    elif dtype.kind == "b":
        flat = i % 3 == 0
    elif dtype.kind in "iumM":
        info = np.iinfo(dtype) if dtype.kind in "iu" else np.iinfo(np.int64)
        flat = (i * 37 % 251 - 100).clip(info.min, info.max) if dtype.kind != "u" else i * 37 % 251
    elif dtype.kind == "f":
        flat = i * 0.25 - 3
    else:
        flat = (i * 0.5 - 1) + 1j * (n - i)
    return np.asarray(flat).astype(dtype).reshape(shape)


def data_of(case: Case) -> np.ndarray:
    return sample(case.numpy_dtype, case.shape, vlen_bytes=case.dtype is VLEN_BYTES)


def fill_of(case: Case) -> Any:
    if case.fill_value is not None:
        return case.fill_value
    if case.variable:
        return b"" if case.dtype is VLEN_BYTES else ""
    if case.numpy_dtype.kind in "mM":
        return np.array("NaT", case.numpy_dtype)[()]
    return np.zeros((), case.numpy_dtype)[()]


def expected_of(case: Case, data: np.ndarray) -> np.ndarray:
    if case.region is None:
        return data
    out = np.full(case.shape, fill_of(case), dtype=case.numpy_dtype)
    out[case.region] = data[case.region]
    return out


def assert_same_values(actual: Any, expected: np.ndarray, case: Case) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    if case.variable:  # object arrays here, numpy StringDType for zarr-python's strings
        assert actual.tolist() == expected.tolist()
        return
    assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (actual.dtype, expected.dtype)
    if expected.dtype.kind == "V" and expected.dtype.fields is None:
        assert actual.tobytes() == expected.astype(actual.dtype).tobytes()
    else:
        np.testing.assert_array_equal(actual, expected, strict=False)


def assert_same_fill(actual: Any, case: Case) -> None:
    expected = fill_of(case)
    if case.variable:
        assert type(actual) is type(expected) and actual == expected, (actual, expected)
    else:
        dtype = case.numpy_dtype
        assert np.array(actual, dtype).tobytes() == np.array(expected, dtype).tobytes(), (actual, expected)


def assert_same_attrs(actual: Any, expected: dict[str, Any]) -> None:
    # JSON text compares NaN equal to NaN.
    assert json.dumps(dict(actual), sort_keys=True) == json.dumps(expected, sort_keys=True)


# -- each library's arguments ----------------------------------------------------------------


def nczarr_options(case: Case) -> dict[str, Any]:
    options: dict[str, Any] = {
        "shape": case.shape,
        "dtype": case.numpy_dtype,
        "chunks": case.chunks,
        "fill_value": case.fill_value,
        "attributes": ATTRS,
    }
    if case.dtype is VLEN_BYTES:
        options["string_kind"] = "bytes"
    if case.fmt == 2:
        options.update(
            filters=list(case.filters),
            compressor=case.compressors[0] if case.compressors else None,
            order=case.order,
            dimension_separator=case.separator,
        )
        return options
    if case.serializer is None:
        options.update(filters=list(case.filters), compressors=list(case.compressors), order=case.order)
    else:
        head = [_transpose(len(case.shape))] if case.order == "F" else []
        options["codecs"] = [*head, *case.filters, case.serializer, *case.compressors]
    options.update(
        shards=case.shards,
        chunk_key_encoding=case.key_encoding,
        dimension_separator=case.separator,
        dimension_names=case.names,
    )
    return options


def _with_configuration(codec: dict[str, Any]) -> dict[str, Any]:
    """zarr-python 3.1.6 needs a ``configuration`` member in numcodecs.* codec JSON."""
    return {"configuration": {}, **codec}


def zarr_options(case: Case) -> dict[str, Any]:
    options: dict[str, Any] = {
        "shape": case.shape,
        "dtype": case.dtype,
        "chunks": case.chunks,
        "attributes": ATTRS,
    }
    if case.fill_value is not None:  # zarr-python writes a v2 fill_value of None as null
        options["fill_value"] = case.fill_value
    if case.fmt == 2:
        options.update(
            filters=[numcodecs.get_codec(f) for f in case.filters] or None,
            compressors=numcodecs.get_codec(case.compressors[0]) if case.compressors else None,
            order=case.order,
            chunk_key_encoding={"name": "v2", "separator": case.key_separator},
        )
        return options
    head = [_transpose(len(case.shape))] if case.order == "F" else []  # v3 "order" is memory-only
    options.update(
        filters=[*head, *map(_with_configuration, case.filters)] or None,
        compressors=[*map(_with_configuration, case.compressors)] or None,
        serializer=case.serializer or "auto",
        shards=case.shards,
        chunk_key_encoding={"name": case.key_encoding or "default", "separator": case.key_separator},
        dimension_names=case.names,
    )
    return options


# -- the cases ---------------------------------------------------------------------------------

F4, F8 = np.dtype("float32"), np.dtype("float64")
BIG = _v3("bytes", endian="big")
GZIP = _v3("gzip", level=1)
ZLIB = _v2("zlib", level=1)
NUMERIC = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]
DTYPE_CASES = [
    *(Case(f"v{fmt}-{name}", fmt, np.dtype(name)) for fmt in (2, 3) for name in NUMERIC),
    Case("v3-string", 3, STR),
    Case("v2-string", 2, STR, filters=(VLEN_UTF8_V2,)),
    Case("v3-vlen-bytes", 3, VLEN_BYTES),
    Case("v2-vlen-bytes", 2, VLEN_BYTES, filters=(_v2("vlen-bytes"),)),
    *(Case(f"v{fmt}-{t}", fmt, np.dtype(t)) for fmt in (2, 3) for t in ("<M8[s]", "<m8[ms]", "<U4")),
    Case("v3-S5-null_terminated_bytes", 3, np.dtype("S5")),
    Case("v2-S5", 2, np.dtype("S5")),
    Case("v3-V4-raw_bytes", 3, np.dtype("V4")),
    Case("v2-V4", 2, np.dtype("V4")),
    Case("v3-structured", 3, STRUCT),
    # zarr-python's default v2 fill for this type has b"0" in the "c" field: give zeros.
    Case("v2-structured", 2, STRUCT_S, fill_value=np.zeros((), STRUCT_S)[()]),
    Case("v2-structured-mixed-endian", 2, np.dtype([("a", "<i4"), ("b", ">f8")])),
    Case("v2-big-endian-i4", 2, np.dtype(">i4")),
    Case("v2-big-endian-f8", 2, np.dtype(">f8")),
    Case("v2-big-endian-c16", 2, np.dtype(">c16")),
    Case("v2-big-endian-u2-zlib", 2, np.dtype(">u2"), compressors=(ZLIB,)),
]

V3_CODEC_CASES = [
    Case("v3-bytes-big-i4", 3, serializer=BIG),
    Case("v3-bytes-big-c16", 3, np.dtype("complex128"), serializer=BIG),
    Case("v3-bytes-little-f8", 3, F8, serializer=_v3("bytes", endian="little")),
    Case("v3-order-F-3d", 3, F4, shape=(7, 5, 3), chunks=(3, 2, 2), order="F"),
    Case("v3-order-F-big-gzip", 3, shape=(6, 5), order="F", serializer=BIG, compressors=(GZIP,)),
    Case("v3-transpose-explicit", 3, shape=(4, 5, 6), chunks=(2, 3, 4),
         filters=(_v3("transpose", order=[1, 2, 0]),)),
    Case("v3-gzip", 3, compressors=(_v3("gzip", level=5),)),
    Case("v3-zstd-checksum", 3, F8, compressors=(_v3("zstd", level=3, checksum=True),)),
    Case("v3-blosc-lz4-shuffle", 3, F4, compressors=(_blosc3("lz4", 5, "shuffle", 4),)),
    Case("v3-blosc-zstd-bitshuffle", 3, compressors=(_blosc3("zstd", 3, "bitshuffle", 4),)),
    Case("v3-blosc-zlib-noshuffle", 3, F8, compressors=(_blosc3("zlib", 1, "noshuffle", 8),)),
    Case("v3-crc32c", 3, compressors=(_v3("crc32c"),)),
    Case("v3-gzip-crc32c", 3, F8, compressors=(GZIP, _v3("crc32c"))),
    Case("v3-numcodecs-shuffle-zlib", 3, compressors=(_nc("shuffle", elementsize=4), _nc("zlib", level=4))),
    Case("v3-numcodecs-delta", 3, np.dtype("int64"), filters=(_nc("delta", dtype="<i8"),)),
    Case("v3-numcodecs-fletcher32", 3, compressors=(_nc("fletcher32"),)),
    # zarr-python needs "configuration" in numcodecs.* JSON: nczarr must write it though not given.
    Case("v3-numcodecs-no-configuration", 3, compressors=({"name": "numcodecs.fletcher32"},)),
    Case("v3-numcodecs-bitround", 3, F4, filters=(_nc("bitround", keepbits=10),)),
    Case("v3-numcodecs-quantize", 3, F8, filters=(_nc("quantize", digits=3, dtype="<f8"),)),
    Case("v3-numcodecs-bz2", 3, compressors=(_nc("bz2", level=5),)),
    Case("v3-numcodecs-lz4", 3, compressors=(_nc("lz4", acceleration=1),)),
    Case("v3-numcodecs-zstd", 3, compressors=(_nc("zstd", level=2),)),
    Case("v3-numcodecs-crc32-adler32", 3, compressors=(_nc("crc32"), _nc("adler32"))),
    Case("v3-numcodecs-packbits", 3, np.dtype("bool"), filters=(_nc("packbits"),)),
    Case("v3-vlen-utf8-gzip", 3, STR, serializer=_v3("vlen-utf8"), compressors=(GZIP,)),
    Case("v3-shard-inner-gzip-edge-shards", 3, chunks=(2, 2), shards=(4, 4), compressors=(GZIP,)),
    Case("v3-shard-bigger-than-array", 3, F8, shape=(5,), chunks=(2,), shards=(8,)),
    Case("v3-shard-partial-write", 3, shape=(9, 8), chunks=(2, 2), shards=(4, 4),
         region=(slice(1, 3), slice(0, 5))),
    Case("v3-shard-3d-F-big-crc", 3, F4, shape=(5, 6, 7), chunks=(2, 3, 2), shards=(4, 3, 4),
         order="F", serializer=BIG, compressors=(_v3("crc32c"),)),
    Case("v3-shard-string", 3, STR, chunks=(2, 2), shards=(4, 2), region=(slice(0, 3), slice(None))),
    Case("v3-shard-explicit-index-start", 3, chunks=(4, 4), region=(slice(0, 6), slice(1, 5)), serializer=_v3(
        "sharding_indexed", chunk_shape=[2, 2], codecs=[BIG, GZIP], index_codecs=[_v3("bytes", endian="little")],
        index_location="start",
    )),
]

V2_CODEC_CASES = [
    Case("v2-zlib", 2, compressors=(_v2("zlib", level=5),)),
    Case("v2-gzip", 2, F8, compressors=(_v2("gzip", level=1),)),
    Case("v2-zstd", 2, compressors=(_v2("zstd", level=3),)),
    Case("v2-blosc-lz4-shuffle", 2, F4, compressors=(_v2("blosc", cname="lz4", clevel=5, shuffle=1, blocksize=0),)),
    Case("v2-blosc-zstd-bitshuffle", 2, compressors=(_v2("blosc", cname="zstd", clevel=3, shuffle=2, blocksize=0),)),
    Case("v2-lz4", 2, compressors=(_v2("lz4", acceleration=1),)),
    Case("v2-bz2", 2, F8, compressors=(_v2("bz2", level=9),)),
    Case("v2-shuffle-zlib", 2, filters=(_v2("shuffle", elementsize=4),), compressors=(ZLIB,)),
    Case("v2-fletcher32", 2, F8, filters=(_v2("fletcher32"),)),
    Case("v2-delta", 2, np.dtype("int64"), filters=(_v2("delta", dtype="<i8"),)),
    Case("v2-quantize", 2, F8, filters=(_v2("quantize", digits=3, dtype="<f8"),)),
    Case("v2-bitround", 2, F4, filters=(_v2("bitround", keepbits=10),), compressors=(_v2("zstd", level=1),)),
    Case("v2-string-zlib", 2, STR, filters=(VLEN_UTF8_V2,), compressors=(ZLIB,)),
    Case("v2-order-F-3d", 2, F4, shape=(7, 5, 3), chunks=(3, 2, 2), order="F", compressors=(ZLIB,)),
    Case("v2-order-F-big-endian", 2, np.dtype(">i8"), order="F"),
]

LAYOUT_CASES = [
    # chunk key encodings
    Case("v3-default-slash", 3, separator="/"),
    Case("v3-default-dot", 3, separator="."),
    Case("v3-v2-keys-dot", 3, key_encoding="v2", separator="."),
    Case("v3-v2-keys-slash", 3, F4, shape=(4, 5, 3), chunks=(2, 2, 2), key_encoding="v2", separator="/"),
    Case("v2-dot", 2, separator="."),
    Case("v2-slash", 2, F4, shape=(4, 5, 3), chunks=(2, 2, 2), separator="/"),
    # fill values and chunks never written
    *(
        case
        for fmt in (2, 3)
        for case in (
            Case(f"v{fmt}-missing-chunks-default-fill", fmt, shape=(9, 8), region=(slice(2, 5), slice(1, 3))),
            Case(f"v{fmt}-missing-chunks-custom-fill", fmt, np.dtype("int16"), shape=(9, 8), fill_value=-7,
                 region=(slice(0, 4), slice(3, 8))),
            Case(f"v{fmt}-missing-chunks-nan-fill", fmt, F8, shape=(9, 8), fill_value=float("nan"),
                 region=(slice(4, 9), slice(0, 1))),
            Case(f"v{fmt}-inf-fill", fmt, F4, shape=(6,), chunks=(4,), fill_value=float("-inf"),
                 region=(slice(0, 2),)),
            Case(f"v{fmt}-missing-chunks-string-fill", fmt, STR, shape=(9,), chunks=(2,), fill_value="∅ missing",
                 filters=(VLEN_UTF8_V2,) if fmt == 2 else (), region=(slice(3, 5),)),
            Case(f"v{fmt}-missing-chunks-bytes-fill", fmt, np.dtype("S3"), shape=(9,), chunks=(2,), fill_value=b"zz",
                 region=(slice(0, 3),)),
            Case(f"v{fmt}-missing-chunks-datetime-nat", fmt, np.dtype("<M8[ms]"), shape=(9,), chunks=(2,),
                 region=(slice(2, 5),)),
            Case(f"v{fmt}-complex-fill", fmt, np.dtype("complex64"), shape=(5,), chunks=(2,), fill_value=1 + 2j,
                 region=(slice(1, 2),)),
            Case(f"v{fmt}-bool-fill-true", fmt, np.dtype("bool"), shape=(5,), chunks=(2,), fill_value=True,
                 region=(slice(0, 1),)),
            # shapes
            Case(f"v{fmt}-scalar", fmt, F8, shape=(), chunks=()),
            Case(f"v{fmt}-scalar-compressed", fmt, F8, shape=(), chunks=(),
                 compressors=(ZLIB if fmt == 2 else GZIP,)),
            Case(f"v{fmt}-1d", fmt, np.dtype("uint16"), shape=(11,), chunks=(4,)),
            Case(f"v{fmt}-root-array", fmt, F8, shape=(6, 4), chunks=(4, 3), path="", region=(slice(0, 3),)),
            Case(f"v{fmt}-deep-path", fmt, shape=(3,), chunks=(2,), path="a/b/c/x"),
            Case(f"v{fmt}-3d-edge-chunks", fmt, shape=(5, 7, 3), chunks=(2, 3, 2)),
            Case(f"v{fmt}-zero-length", fmt, F4, shape=(0, 4), chunks=(2, 2)),
        )
    ),
    Case("v3-dimension-names-partial", 3, dimension_names=(None, "y")),
]

CASES = [pytest.param(case, id=case.id) for case in [*DTYPE_CASES, *V3_CODEC_CASES, *V2_CODEC_CASES, *LAYOUT_CASES]]


@pytest.fixture(autouse=True)
def _quiet_zarr_warnings():
    """zarr-python warns about numcodecs codecs and unstable data types in v3; not our concern."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _region(case: Case) -> Any:
    return case.region if case.region is not None else Ellipsis


# -- nczarr writes, zarr-python reads ----------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_nczarr_writes_zarr_python_reads(case: Case, tmp_path: Path) -> None:
    data = data_of(case)
    store = DirectoryStore(tmp_path)
    if case.path:
        create_group(store, zarr_format=case.fmt, attributes=ATTRS)
    array = create_array(store, case.path, zarr_format=case.fmt, **nczarr_options(case))
    array[_region(case)] = data[_region(case)]
    array.flush()

    zstore = LocalStore(tmp_path, read_only=True)
    if case.path:
        assert_same_attrs(zarr.open_group(zstore, mode="r", zarr_format=case.fmt).attrs, ATTRS)
    z = zarr.open_array(zstore, path=case.path, mode="r", zarr_format=case.fmt)
    assert z.shape == case.shape
    assert (z.shards or z.chunks) == (case.shards or case.chunks)
    assert_same_attrs(z.attrs, ATTRS)
    assert_same_fill(z.fill_value, case)
    if case.fmt == 3:
        names = z.metadata.dimension_names
        assert (None if names is None else tuple(names)) == case.names
    assert_same_values(z[...], expected_of(case, data), case)


# -- zarr-python writes, nczarr reads ----------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_zarr_python_writes_nczarr_reads(case: Case, tmp_path: Path) -> None:
    data = data_of(case)
    zstore = LocalStore(tmp_path)
    if case.path:
        zarr.create_group(zstore, zarr_format=case.fmt, attributes=ATTRS)
    z = zarr.create_array(zstore, name=case.path or None, zarr_format=case.fmt, **zarr_options(case))
    z[_region(case)] = data[_region(case)]

    store = DirectoryStore(tmp_path, read_only=True)
    if case.path:
        root = open_group(store, mode="r")
        assert root.zarr_format == case.fmt
        assert_same_attrs(root.attrs, ATTRS)
        assert isinstance(root[case.path], Array)
    array = open_array(store, case.path, mode="r")
    assert array.zarr_format == case.fmt
    assert array.shape == case.shape
    assert array.chunks == (case.shards or case.chunks)
    assert_same_attrs(array.attrs, ATTRS)
    assert_same_fill(array.fill_value, case)
    assert array.dimension_names == case.names
    assert_same_values(array[...], expected_of(case, data), case)


# -- consolidated metadata ---------------------------------------------------------------------

#: The hierarchy of the consolidation tests: path -> (shape or None for a group).
HIERARCHY = {"g1": None, "g1/x": (4, 3), "g1/g2": None, "g1/g2/z": (5,), "y": (6,)}


class CountingStore(DirectoryStore):
    """A DirectoryStore that records every read and listing made through it (the ``_``
    methods every public read goes through)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: list[tuple[str, Any]] = []


def _counting(name: str) -> Any:
    def method(self: CountingStore, *args: Any, **kwargs: Any) -> Any:
        self.reads.append((name, args[:1]))
        return getattr(DirectoryStore, name)(self, *args, **kwargs)

    return method


for _name in ("_get", "_get_into", "_get_many", "_exists", "_getsize", "_list_prefix", "_list_dir"):
    setattr(CountingStore, _name, _counting(_name))


def _walk_paths(group: Group) -> dict[str, Any]:
    """path -> shape (None for groups) of every node below ``group``, via members()."""
    return {node.path: node.shape if isinstance(node, Array) else None for node in group.walk()}


@pytest.mark.parametrize("fmt", [2, 3])
def test_nczarr_consolidated_read_by_zarr_python(fmt: int, tmp_path: Path) -> None:
    root = create_group(DirectoryStore(tmp_path), zarr_format=fmt, attributes=ATTRS)
    for path, shape in HIERARCHY.items():
        if shape is None:
            root.create_group(path, attributes={"path": path})
        else:
            chunks = (2,) * len(shape)
            array = root.create_array(path, shape=shape, dtype="i4", chunks=chunks, attributes={"path": path})
            array[...] = np.arange(math.prod(shape)).reshape(shape)
            array.flush()
    root.consolidate()
    # Only the consolidated metadata can describe nodes whose own documents are gone.
    for path in HIERARCHY:
        for doc in ("zarr.json",) if fmt == 3 else (".zarray", ".zgroup", ".zattrs"):
            (tmp_path / path / doc).unlink(missing_ok=True)

    group = zarr.open_consolidated(LocalStore(tmp_path, read_only=True), mode="r", zarr_format=fmt)
    assert group.metadata.consolidated_metadata is not None
    assert_same_attrs(group.attrs, ATTRS)
    members = dict(group.members(max_depth=None))
    assert {path: node.shape if isinstance(node, zarr.Array) else None for path, node in members.items()} == HIERARCHY
    for path, node in members.items():
        assert node.attrs["path"] == path
    np.testing.assert_array_equal(group["g1/x"][...], np.arange(12).reshape(4, 3))


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_consolidated_read_by_nczarr(fmt: int, tmp_path: Path) -> None:
    zroot = zarr.create_group(LocalStore(tmp_path), zarr_format=fmt, attributes=ATTRS)
    for path, shape in HIERARCHY.items():
        if shape is None:
            zroot.create_group(path, attributes={"path": path})
        else:
            chunks = (2,) * len(shape)
            z = zroot.create_array(path, shape=shape, dtype="i4", chunks=chunks, attributes={"path": path})
            z[...] = np.arange(math.prod(shape)).reshape(shape)
    zarr.consolidate_metadata(LocalStore(tmp_path), zarr_format=fmt)

    # Listing reads nothing when the consolidated metadata is used (the default), and does
    # read the store when it is not (so the counting works).
    for use_consolidated, reads_expected in ((None, False), (True, False), (False, True)):
        store = CountingStore(tmp_path, read_only=True)
        root = open_group(store, mode="r", use_consolidated=use_consolidated)
        store.reads.clear()
        found = _walk_paths(root)
        attrs = {path: dict(root[path].attrs) for path in HIERARCHY}
        assert bool(store.reads) is reads_expected, store.reads
        assert found == HIERARCHY
        assert attrs == {path: {"path": path} for path in HIERARCHY}
        assert_same_attrs(root.attrs, ATTRS)
        np.testing.assert_array_equal(root["g1/g2/z"][...], np.arange(5))
