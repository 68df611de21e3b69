"""The names NCZarr gives its metadata: the ``_nczarr_*`` keys (and netcdf-c 4.8's upper-case
spellings), the attributes netcdf-c hides or reserves, and which names can be store keys.

Facts are from the reference notes on NCZarr (``nczarr-format.md``); sections are cited as §."""

from __future__ import annotations

from nczarr._version import __version__
from nczarr.model.resolve import ANONYMOUS_PREFIX as ANONYMOUS_PREFIX  # netcdf-c's (§4.2)
from nczarr.zarr.draft import ARRAY_DIMENSIONS as ARRAY_DIMENSIONS  # xarray's, read by the zarr layer too
from nczarr.zarr.metadata import ZARR_JSON, ZARRAY, ZATTRS, ZGROUP, ZMETADATA

SUPERBLOCK = "_nczarr_superblock"
GROUP = "_nczarr_group"
ARRAY = "_nczarr_array"
ATTR = "_nczarr_attr"  # v2 types map
ATTRS = "_nczarr_attrs"  # v3 types map (and the fork's v2 spelling)
MAXSTRLEN = "_nczarr_maxstrlen"
DEFAULT_MAXSTRLEN = "_nczarr_default_maxstrlen"
NCPROPERTIES = "_NCProperties"
#: The upper-case keys of netcdf-c 4.8.1–4.9.0 (§3.2).
OLD_UPPER = {
    SUPERBLOCK: "_NCZARR_SUPERBLOCK",
    GROUP: "_NCZARR_GROUP",
    ARRAY: "_NCZARR_ARRAY",
    ATTR: "_NCZARR_ATTR",
}
#: Attributes netcdf-c hides from the attribute API (§2.10.5); never part of a tree.
HIDDEN = frozenset(
    {
        SUPERBLOCK,
        GROUP,
        ARRAY,
        ATTR,
        ATTRS,
        NCPROPERTIES,
        ARRAY_DIMENSIONS,
        "_Netcdf4Coordinates",
        "_Netcdf4Dimid",
        "CLASS",
        "DIMENSION_LIST",
        "NAME",
        "REFERENCE_LIST",
        *OLD_UPPER.values(),
    }
)
#: Reserved names a user attribute may not have (netcdf-c refuses to write them).
RESERVED = HIDDEN - {"CLASS", "NAME"}
#: String length when neither ``_nczarr_maxstrlen`` nor ``_nczarr_default_maxstrlen`` says (§2.8.3).
DEFAULT_STRLEN = 128
#: What netcdf-c 4.10.1 (the netCDF4 1.7.5 wheel) writes as ``_NCProperties`` (§2.3).
NETCDF_C_NCPROPERTIES = "version=2,netcdf=4.10.1,nczarr=2.0.0"
#: What nczarr writes as ``_NCProperties`` unless byte-compatible output is asked for.
NCZARR_NCPROPERTIES = f"version=2,nczarr=2.0.0,nczarr-python={__version__}"
#: The superblock object of NCZarr 1.0.0 (netcdf-c 4.8.0 and 4.8.1-dev, §3.1).
V1_SUPERBLOCK = ".nczarr"
#: What is read at a store's root to detect its convention and read it.
ROOT_DOCUMENT_KEYS = (ZARR_JSON, ZGROUP, ZATTRS, ZARRAY, ZMETADATA, V1_SUPERBLOCK)
_DOCUMENT_NAMES = frozenset(k.casefold() for k in ROOT_DOCUMENT_KEYS)
#: The longest name of a variable, group or dimension in bytes of UTF-8: each can become a
#: file name in a directory store (255 bytes on ext4, XFS, APFS, NTFS...).
MAX_KEY_NAME_BYTES = 255


def key_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a variable, group or dimension (a store key, or the name of a
    coordinate variable) in any convention, or None: the same rules on every convention, so
    that a dataset can be copied to each. A name that is a metadata document's (in any case:
    some file systems fold case), that holds a backslash (a path separator on Windows,
    refused by the stores), or longer than a file name may be would make the store
    unreadable."""
    if not name or "/" in name or name.startswith("."):
        return f"name {name!r} cannot be a Zarr key (no '/', no leading '.')"
    if name.casefold() in _DOCUMENT_NAMES:
        return f"name {name!r} is the name of a Zarr metadata document"
    if "\\" in name:
        return f"name {name!r} cannot be a Zarr key (no backslash)"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_KEY_NAME_BYTES:
        return f"name {name[:20]!r}... is longer than {MAX_KEY_NAME_BYTES} bytes in UTF-8, the longest file name"
    return None


def join_path(path: str, name: str) -> str:
    """A store path or key below ``path`` (``""`` is the root)."""
    return f"{path}/{name}" if path else name
