"""Codec metadata for netCDF-4's compression settings: what the engine can run, and the
settings read back from it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nczarr.errors import FormatError
from nczarr.formats.codecs import netcdf_chain, storage_from_chain, v3_codecs
from nczarr.values.storage import COMPRESSIONS, VariableStorage
from nczarr.zarr.chunkspec import ChunkSpec
from nczarr.zarr.codecs import pipeline_from_v2, pipeline_from_v3

OPTIONS: list[dict[str, Any]] = [
    {},
    {"compression": "zlib", "shuffle": True, "complevel": 1},
    {"compression": "zstd", "fletcher32": True},
    {"compression": "bzip2"},
    {"compression": "blosc_lz4", "blosc_shuffle": 2},
    {"compression": "blosc_zstd", "endian": "big"},
]


@pytest.mark.parametrize("dtype", ["f4", "i2", "u1", "O"])
@pytest.mark.parametrize("options", OPTIONS)
def test_codecs_round_trip(dtype: str, options: dict[str, Any]) -> None:
    storage = VariableStorage(**options)
    data = np.arange(30, dtype="i2").reshape(6, 5).astype(dtype)
    if dtype == "O":
        data = np.array([f"v{i}" for i in range(30)], object).reshape(6, 5)
    spec = ChunkSpec(data.shape, data.dtype, "" if dtype == "O" else 0)
    v3 = pipeline_from_v3(v3_codecs(data.dtype, storage), spec)
    chain = netcdf_chain(storage, 1 if dtype == "O" else data.dtype.itemsize, False)  # as purezarr does
    filters = [{"id": "vlen-utf8"}] if dtype == "O" else []
    v2 = pipeline_from_v2([*filters, *chain[:-1]] or None, chain[-1] if chain else None, spec)
    for pipeline in (v3, v2):
        assert pipeline.decode(pipeline.encode(data)).tolist() == data.tolist()
    for codecs in (v3.to_json(), chain):
        back = storage_from_chain(list(codecs), (6, 5), storage.endian, True, None)
        assert (back.compression, back.fletcher32) == (storage.compression, storage.fletcher32)
        assert back.shuffle == (storage.shuffle and (codecs is chain or dtype in ("f4", "i2")))


def test_every_compression_has_codecs() -> None:
    for compression in COMPRESSIONS:
        storage = VariableStorage(compression=compression, complevel=3)
        assert storage_from_chain(v3_codecs(np.dtype("f8"), storage), (1,), "native", True, None).compression == compression
        assert storage_from_chain(netcdf_chain(storage, 8, False), (1,), "native", True, None).compression == compression


def test_szip_is_refused() -> None:
    with pytest.raises(FormatError, match="szip compression has no Zarr codec"):
        VariableStorage(compression="szip")
