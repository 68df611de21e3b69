"""The exception hierarchy: one base class, one subclass per room.

Where callers of netCDF4-python or zarr-python catch a builtin class (KeyError, ValueError,
PermissionError, ...), the nczarr class derives from that builtin too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


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


class StaleReferenceError(StoreError):
    """A reference into a source file that changed (size, modification time or ETag) since
    the references were made: its bytes may no longer be those referenced."""


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


# -- the zarr room's ZOM documents (nczarr.zarr.zom) ---------------------------------------


class DocumentError(MetadataError):
    """A ZOM document that nczarr cannot read: ``path`` is the JSON path of the problem,
    ``reason`` what is wrong there."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class SchemaUnavailableError(NCZarrError, ImportError):
    """Validation against the JSON Schemas needs the optional ``jsonschema`` package."""


# -- the model room: names, references and checks of a netCDF tree -------------------------


class Finding(Protocol):
    """What :class:`ValidationError` needs of a problem the model's checks report
    (``nczarr.model.Problem``)."""

    @property
    def severity(self) -> str: ...


class ModelError(NCZarrError, ValueError):
    """A model tree, name or reference that cannot be used as asked."""


class FQNError(ModelError):
    """A fully qualified name (or an escaped name) that is malformed."""


class ValidationError(ModelError):
    """A tree that has errors; ``problems`` lists all of them (warnings included)."""

    def __init__(self, problems: Sequence[Finding]) -> None:
        self.problems = list(problems)
        errors = [p for p in problems if p.severity == "error"]
        super().__init__(f"{len(errors)} error(s) in the model: " + "; ".join(map(str, errors)))


# -- the values and formats rooms: netCDF values and the conventions that store trees ------


class UnsizedTypeError(NCZarrError, ValueError):
    """A user type whose values have no fixed-size numpy layout (a compound field that
    does not resolve, or is a string or vlen)."""


class RecordDecodeError(NCZarrError, ValueError):
    """Stored bytes of a variable-length value (a compound with string or vlen fields, a
    vlen of such values) that do not hold a value of its type in the record encoding."""


class FormatError(NCZarrError, ValueError):
    """A dataset that a convention cannot hold, or a store that breaks its convention."""


class MissingNodeError(FormatError):
    """A group or array that its parent lists but whose document is absent (when read
    through a consolidated copy: a copy left stale by a program that does not keep it)."""


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


class MissingFolderError(DatasetNotFoundError, PermissionError):
    """A dataset created in a folder that does not exist: nczarr creates no parents, as
    netcdf-c does not (netCDF4 raises PermissionError, errno 13, from HDF5's failed create;
    this is also the FileNotFoundError it is, errno 2 where netCDF4 gives that)."""


class ValueRangeError(NCZarrError, OverflowError):
    """A value outside the range of the type it must be stored as, such as a ``_FillValue``
    of 300 for a ``u1`` variable (netCDF4 raises OverflowError)."""


class TextEncodeError(NCZarrError, UnicodeEncodeError):
    """Text that the encoding of a char value cannot hold (netCDF4: UnicodeEncodeError)."""


class NetCDF4MissingFeatureException(NCZarrError):
    """A feature the library lacks (netCDF4 raises its class of this name, a plain Exception,
    when netcdf-c lacks one); public as ``nczarr.NetCDF4MissingFeatureException``."""

    def __init__(self, feature: str, version: str) -> None:
        super().__init__(f"{feature} requires netcdf-c {version} or later")


# -- the convert room: netCDF-3 and netCDF-4/HDF5 files, copies ----------------------------


class ContainerError(NCZarrError, OSError):
    """A netCDF file nczarr cannot open or write the way asked."""


class Netcdf3Error(ContainerError):
    """A file that is not netCDF-3, whose header is corrupt or truncated, or that could
    not be created."""


class Hdf5Error(ContainerError):
    """A file that is not a netCDF-4/HDF5 file, that h5netcdf could not read, or that
    could not be created."""


class MissingExtraError(NCZarrError, ImportError):
    """An optional dependency that is not installed (h5netcdf for netCDF-4/HDF5 files)."""


class CopyError(NCZarrError, ValueError):
    """A copy that cannot be done as asked; nothing was written."""


class CombineError(NCZarrError, ValueError):
    """Sources that cannot be combined into one dataset (concatenated or merged): the file,
    the variable and the difference are named; nothing was written."""


class SourceChangedError(CombineError):
    """A source changed since the job that is being resumed started."""


class WorkerLostError(NCZarrError, RuntimeError):
    """A worker process running a job's tasks died (killed, or out of memory); the tasks
    finished are kept, and running the same job again does the others."""


# -- the syntax room: CDL and model text in and out ------------------------------------------


class ParseError(NCZarrError, ValueError):
    """Text that cannot be parsed, with where it went wrong and what was expected there.

    ``line`` and ``column`` count from 1; ``token`` is the offending text (``None`` at the
    end of the text); ``expected`` lists what could have stood there, in words.
    """

    def __init__(
        self,
        message: str,
        line: int,
        column: int,
        token: str | None = None,
        expected: tuple[str, ...] = (),
        filename: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.token = token
        self.expected = expected
        self.filename = filename

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: {self.message}"
        return f"{self.filename}:{where}" if self.filename else where


class CdlError(ParseError):
    """CDL text that ncgen would refuse: bad syntax, or a semantic problem."""


class DumpError(NCZarrError, ValueError):
    """An option or a dataset ncdump would refuse (e.g. an unknown ``-v`` name)."""


# -- the xarray engine (nczarr.xarray) ---------------------------------------------------------


class GroupNotFoundError(NCZarrError, OSError):
    """``group=`` names no group of the dataset (xarray's netCDF engines raise OSError)."""
