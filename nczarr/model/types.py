"""The twelve atomic types of netCDF-4 and the two data models."""

from __future__ import annotations

from enum import Enum


class DataModel(Enum):
    """Which netCDF data model a dataset follows; the classic one forbids the netCDF-4 extras."""

    CLASSIC = "classic"
    ENHANCED = "enhanced"


#: The netCDF file kinds by netCDF4's names, with the other spellings ncgen's and nccopy's
#: ``-k`` accept (case-insensitive).
KIND_SPELLINGS: dict[str, tuple[str, ...]] = {
    "NETCDF3_CLASSIC": ("1", "classic", "nc3"),
    "NETCDF3_64BIT_OFFSET": ("2", "64-bit offset", "64-bit-offset", "nc6", "NETCDF3_64BIT"),
    "NETCDF3_64BIT_DATA": ("5", "64-bit data", "64-bit-data", "cdf5", "nc5", "cdf-5"),
    "NETCDF4": ("3", "netCDF-4", "netcdf4", "hdf5", "enhanced", "nc4"),
    "NETCDF4_CLASSIC": (
        "4", "netCDF-4 classic model", "netcdf4-classic", "netCDF-4-classic", "netCDF-4_classic", "hdf5-nc3",
        "enhanced-nc3", "nc7",
    ),
}
_KIND_OF_SPELLING = {s.lower(): kind for kind, spellings in KIND_SPELLINGS.items() for s in (kind, *spellings)}


def netcdf_kind(spelling: str) -> str | None:
    """netCDF4's name of a file kind given in any of its spellings, or None."""
    return _KIND_OF_SPELLING.get(str(spelling).strip().lower())


class AtomicType(Enum):
    """An atomic netCDF-4 type; its value is the type's name in CDL and in model text."""

    size: int | None  # bytes; None for the variable-length string
    low: int | None  # inclusive integer range; None for non-integer types
    high: int | None
    in_classic_model: bool
    is_integer: bool  # the eight integer types
    is_float: bool  # float and double
    is_fixed_size: bool  # every type but string

    def __new__(
        cls, name: str, size: int | None, low: int | None, high: int | None, classic: bool
    ) -> AtomicType:
        member = object.__new__(cls)
        member._value_ = name
        member.size = size
        member.low = low
        member.high = high
        member.in_classic_model = classic
        member.is_integer = low is not None
        member.is_float = name in ("float", "double")
        member.is_fixed_size = size is not None
        return member

    BYTE = ("byte", 1, -(2**7), 2**7 - 1, True)
    UBYTE = ("ubyte", 1, 0, 2**8 - 1, False)
    SHORT = ("short", 2, -(2**15), 2**15 - 1, True)
    USHORT = ("ushort", 2, 0, 2**16 - 1, False)
    INT = ("int", 4, -(2**31), 2**31 - 1, True)
    UINT = ("uint", 4, 0, 2**32 - 1, False)
    INT64 = ("int64", 8, -(2**63), 2**63 - 1, False)
    UINT64 = ("uint64", 8, 0, 2**64 - 1, False)
    FLOAT = ("float", 4, None, None, True)
    DOUBLE = ("double", 8, None, None, True)
    CHAR = ("char", 1, None, None, True)
    STRING = ("string", None, None, None, False)

    def __str__(self) -> str:
        return str(self.value)
