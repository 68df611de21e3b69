#!/usr/bin/env bash
# CI: nczarr installed with its core dependencies only (no extras: no zarr-python, no crc32c
# package, nothing the test extra brings) compresses with ISA-L and decompresses with
# libdeflate (core dependencies), and reads a sharded store that zarr-python wrote, whose
# shard index, as zarr-python's default, ends with a crc32c checksum. A codec that only
# the test extra made work would fail here. Usage: .ci/minimal_install.sh WRITER_PYTHON, where
# WRITER_PYTHON has zarr-python (the test venv). Run from the repository root.
set -euo pipefail
writer=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pip's cache is kept, so the wheels the test venv downloaded are reused
python3 -m venv "$work/venv" && "$work/venv/bin/pip" install -q .

"$writer" - "$work" <<'EOF'
import sys
import warnings

import numpy as np
import zarr
import zarr.codecs as zc

work = sys.argv[1]
values = (np.arange(20 * 18, dtype="f4").reshape(20, 18) * 0.25 - 7).astype("f4")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    root = zarr.open_group(f"{work}/sharded.zarr", mode="w", zarr_format=3)
    for name, compressors in {"default": "auto", "zstd": [zc.ZstdCodec(level=3)],
                              "blosc": [zc.BloscCodec(cname="lz4", shuffle="shuffle")]}.items():
        array = root.create_array(name, shape=values.shape, chunks=(5, 6), shards=(10, 18),
                                  dtype="f4", fill_value=0, compressors=compressors,
                                  dimension_names=["y", "x"])
        array[...] = values
np.save(f"{work}/expected.npy", values)
EOF

"$work/venv/bin/python" - "$work" <<'EOF'
import importlib.util
import sys
import warnings

import numpy as np

warnings.simplefilter("error")  # e.g. numcodecs' deprecation of a CRC-32C package
import nczarr

work = sys.argv[1]
for extra in ("zarr", "crc32c", "pytest"):
    assert importlib.util.find_spec(extra) is None, f"{extra} is not a core dependency"
from nczarr.zarr.codecs import fastzlib

# the fast deflate libraries are core: a plain install compresses and decompresses with them
assert fastzlib.compressor_for(1).name == "isal", fastzlib.compressor_for(1)
assert fastzlib.decompressor().name == "libdeflate", fastzlib.decompressor()
expected = np.load(f"{work}/expected.npy")
with nczarr.Dataset(f"{work}/sharded.zarr") as dataset:
    for name in ("default", "zstd", "blosc"):
        got = dataset[name][:]
        assert np.array_equal(np.ma.getdata(got), expected), name
print("minimal install: zarr-python's sharded arrays (crc32c index) read correctly")
EOF
