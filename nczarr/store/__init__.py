"""Key/value stores: where the keys and values of a Zarr hierarchy live."""

from __future__ import annotations

from nczarr.errors import InvalidModeError
from nczarr.store._files import ANY_FILE, FileState, file_state, read_regular_file, remove_tree, replace_file, temp_beside
from nczarr.store.base import (
    ByteRange,
    Store,
    slice_range,
    validate_key,
    validate_prefix,
    validate_range,
)
from nczarr.store.directory import DirectoryStore
from nczarr.store.fsspec import FsspecStore
from nczarr.store.memory import MemoryStore
from nczarr.store.obstore import ObstoreStore
from nczarr.store.open import MODES, open_store
from nczarr.store.zip import ZipStore

__all__ = [
    "ANY_FILE",
    "MODES",
    "ByteRange",
    "DirectoryStore",
    "FileState",
    "FsspecStore",
    "InvalidModeError",
    "MemoryStore",
    "ObstoreStore",
    "Store",
    "ZipStore",
    "file_state",
    "open_store",
    "read_regular_file",
    "remove_tree",
    "replace_file",
    "slice_range",
    "temp_beside",
    "validate_key",
    "validate_prefix",
    "validate_range",
]
