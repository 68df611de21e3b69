"""The exception hierarchy: one base class, one subclass per room.

Where callers of netCDF4-python or zarr-python catch a builtin class (KeyError, ValueError,
PermissionError, ...), the nczarr class derives from that builtin too.
"""

from __future__ import annotations


class NCZarrError(Exception):
    """Base class of every error nczarr raises on purpose."""


class StoreError(NCZarrError, OSError):
    """A key/value store could not do what was asked."""


class InvalidKeyError(StoreError, ValueError):
    """A key that could escape the store root or is malformed."""


class KeyNotFoundError(StoreError, KeyError):
    """A key that is not in the store."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ReadOnlyError(StoreError, PermissionError):
    """A write to a store, array or group opened read-only."""


class StoreLockedError(StoreError, BlockingIOError):
    """A local store another writer holds open for writing (its lock was not released in
    time)."""


class ForeignContentError(StoreError, FileExistsError):
    """A location that mode 'w' (or a copy) would replace holds something that is not a Zarr
    hierarchy: replacing it would delete what is not ours."""


class ConcurrentWriteError(StoreError):
    """Metadata that another writer changed since this one read it: writing it would lose
    their change."""


class InvalidModeError(NCZarrError, ValueError):
    """An open mode that is not one nczarr accepts."""


class MetadataError(NCZarrError, ValueError):
    """A metadata document that is corrupt, unsupported or inconsistent."""


class CodecError(NCZarrError, ValueError):
    """A codec that is unknown, misconfigured, or failed on a chunk."""


class ChunkTooLargeError(CodecError):
    """A chunk declared so much larger than the array that decoding or writing it would take
    far more memory than the data it holds (shape 10, chunks 10**9)."""


class NodeNotFoundError(NCZarrError, KeyError):
    """A group or array path that does not exist."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class NodeExistsError(NCZarrError, FileExistsError):
    """A group or array that already exists where a new one was asked for."""


class SelectionError(NCZarrError, IndexError):
    """An index or selection that does not fit the array."""


# -- the classes netCDF4-python code catches (nczarr.api raises these) ---------------------


class DatasetStateError(NCZarrError, RuntimeError):
    """An operation the dataset's state forbids: it is closed or read-only, a name is in
    use, an attribute to delete is missing (netCDF4 raises RuntimeError)."""


class ArgumentError(NCZarrError, ValueError):
    """An argument value netCDF4 refuses with ValueError (mode, format, compression...)."""


class InvalidNameError(ArgumentError, RuntimeError):
    """A name a dimension, variable, group or type may not have (netCDF4 raises RuntimeError;
    also a ValueError, as an argument nczarr refuses)."""


class DataTypeError(NCZarrError, TypeError):
    """A data type or value type that cannot be stored (netCDF4 raises TypeError)."""


class AttributeNotFoundError(NCZarrError, AttributeError):
    """A netCDF attribute that does not exist, or a Python attribute that may not be set."""


class NameNotFoundError(NCZarrError, KeyError):
    """A dimension, variable or group name that does not exist (renames)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class DatasetNotFoundError(StoreError, FileNotFoundError):
    """A dataset opened for reading where there is none (netCDF4: FileNotFoundError)."""


class ValueRangeError(NCZarrError, OverflowError):
    """A value outside the range of the type it must be stored as, such as a ``_FillValue``
    of 300 for a ``u1`` variable (netCDF4 raises OverflowError)."""


class TextEncodeError(NCZarrError, UnicodeEncodeError):
    """Text that the encoding of a char value cannot hold (netCDF4: UnicodeEncodeError)."""
