"""Zarr codec metadata for netCDF-4's compression settings and back: the filter chain
netcdf-c writes in NCZarr (§2.12, numcodecs' JSON, also the v2 ``filters`` and
``compressor``), the standard v3 codecs other Zarr readers know, and the settings a chain
read from a store stands for."""

from __future__ import annotations

from typing import Any

import numpy as np

from nczarr.values.storage import BLOSC_CNAMES, VariableStorage
from nczarr.zarr.codecs.compress import BLOSC_SHUFFLES
from nczarr.zarr.codecs.serialize import dtype_endian
from nczarr.zarr.jsonvalue import JSON, JSONObject

#: The codec of each compression but Blosc's: its numcodecs id (v2, netcdf-c's chain) and
#: its v3 name (the core ``gzip`` codec for zlib, which every implementation reads).
_CODECS = {"zlib": ("zlib", "gzip"), "zstd": ("zstd", "zstd"), "bzip2": ("bz2", "numcodecs.bz2")}
_COMPRESSION_OF_CODEC = {
    name.removeprefix("numcodecs."): compression for compression, names in _CODECS.items() for name in names
}
_COMPRESSION_OF_CNAME = {cname: name for name, cname in BLOSC_CNAMES.items()}


def _level(storage: VariableStorage) -> int:
    return max(storage.complevel, 1) if storage.compression == "bzip2" else storage.complevel  # bz2: 1..9


def netcdf_chain(storage: VariableStorage, itemsize: int, byte_compatible: bool) -> list[JSONObject]:
    """The filter chain netcdf-c builds for these settings, in netcdf-c's codec JSON (§2.12):
    shuffle, the compressor, fletcher32."""
    chain: list[JSONObject] = []
    if storage.shuffle:
        # netcdf-c writes elementsize 0, which numcodecs takes as "no shuffle" (§8.4)
        chain.append({"id": "shuffle", "elementsize": 0 if byte_compatible else itemsize})
    compression = storage.compression
    if compression in _CODECS:
        chain.append({"id": _CODECS[compression][0], "level": _level(storage)})
    elif compression is not None:
        chain.append(
            {
                "id": "blosc",
                "clevel": storage.complevel,
                "blocksize": 0,
                "cname": BLOSC_CNAMES[compression],
                "shuffle": storage.blosc_shuffle,
            }
        )
    if storage.fletcher32:
        chain.append({"id": "fletcher32"})
    return chain


def v3_codecs(dtype: np.dtype, storage: VariableStorage, string_kind: str = "string") -> list[JSONObject]:
    """Standard v3 codecs for netCDF settings: ``bytes`` (big-endian when asked) or
    ``vlen-utf8`` / ``vlen-bytes`` (``string_kind``) for object arrays, then
    ``numcodecs.shuffle``, the compressor (``gzip`` for zlib, ``zstd``, ``blosc``,
    ``numcodecs.bz2``) and ``numcodecs.fletcher32`` as asked."""
    codecs: list[JSONObject] = [_serializer(dtype, storage, string_kind)]
    if dtype.hasobject:
        dtype = np.dtype(object)
    elif storage.shuffle and dtype.itemsize > 1:
        codecs.append({"name": "numcodecs.shuffle", "configuration": {"elementsize": dtype.itemsize}})
    compression = storage.compression
    if compression in _CODECS:
        config: JSONObject = {"level": _level(storage)}
        if compression == "zstd":
            config["checksum"] = False
        codecs.append({"name": _CODECS[compression][1], "configuration": config})
    elif compression is not None:
        blosc: JSONObject = {
            "cname": BLOSC_CNAMES[compression],
            "clevel": storage.complevel,
            "shuffle": BLOSC_SHUFFLES[storage.blosc_shuffle],
            "blocksize": 0,
            "typesize": dtype.itemsize,
        }
        codecs.append({"name": "blosc", "configuration": blosc})
    if storage.fletcher32:
        codecs.append({"name": "numcodecs.fletcher32", "configuration": {}})
    return codecs


def _serializer(dtype: np.dtype, storage: VariableStorage, string_kind: str) -> JSONObject:
    """The array -> bytes codec: little-endian unless big is asked (and the type has a byte
    order); none for one-byte and structured types; vlen codecs for object arrays."""
    if dtype.hasobject:
        return {"name": "vlen-bytes" if string_kind == "bytes" else "vlen-utf8", "configuration": {}}
    if dtype_endian(dtype) is None:
        return {"name": "bytes"}
    big = storage.endian == "big" and dtype.fields is None
    return {"name": "bytes", "configuration": {"endian": "big" if big else "little"}}


def storage_from_chain(
    chain: list[JSONObject], chunks: tuple[int, ...], endian: str, fill: bool, raw: JSON
) -> VariableStorage:
    """The netCDF settings a filter chain (v2 numcodecs JSON or v3 codecs) stands for;
    codecs it cannot name are kept in ``codecs`` only."""
    settings: dict[str, Any] = {}
    for codec in chain:
        name = str(codec.get("id", codec.get("name", ""))).removeprefix("numcodecs.")
        config = codec.get("configuration", codec)
        if not isinstance(config, dict):
            continue
        if name == "shuffle":
            settings["shuffle"] = True
        elif name == "fletcher32":
            settings["fletcher32"] = True
        elif name in _COMPRESSION_OF_CODEC and "level" in config:
            settings["compression"] = _COMPRESSION_OF_CODEC[name]
            settings["complevel"] = int(config["level"])  # type: ignore[arg-type]
        elif name == "blosc" and config.get("cname") in _COMPRESSION_OF_CNAME:
            settings["compression"] = _COMPRESSION_OF_CNAME[config["cname"]]  # type: ignore[index]
            settings["complevel"] = int(config.get("clevel", 5))  # type: ignore[arg-type]
            shuffle = config.get("shuffle", 1)
            settings["blosc_shuffle"] = BLOSC_SHUFFLES.index(shuffle) if shuffle in BLOSC_SHUFFLES else int(shuffle)  # type: ignore[arg-type]
    return VariableStorage(chunks=chunks, endian=endian, fill=fill, codecs=raw, **settings)  # type: ignore[arg-type]


def stored_v3_codecs(storage: VariableStorage) -> list[JSONObject] | None:
    """The v3 ``codecs`` a variable's storage kept from a store (each a copy), or None."""
    codecs = storage.codecs
    if isinstance(codecs, list) and all(isinstance(codec, dict) for codec in codecs):
        return [dict(codec) for codec in codecs]  # type: ignore[arg-type]
    return None


def stored_v2_codecs(storage: VariableStorage) -> tuple[list[JSONObject] | None, JSONObject | None] | None:
    """The v2 ``filters`` and ``compressor`` a variable's storage kept from a store, or None."""
    codecs = storage.codecs
    if not isinstance(codecs, dict) or "compressor" not in codecs:
        return None
    filters, compressor = codecs.get("filters"), codecs.get("compressor")
    if isinstance(filters, list) and all(isinstance(f, dict) for f in filters):
        kept: list[JSONObject] | None = [dict(f) for f in filters]  # type: ignore[arg-type]
    else:
        kept = None
    return kept, compressor if isinstance(compressor, dict) else None
