"""How to store a dataset: the ``format`` argument of ``Dataset`` (where it is, the
``filename``, is parsed by :mod:`nczarr.formats.location`)."""

from __future__ import annotations

from nczarr.errors import ArgumentError
from nczarr.formats import DEFAULT_FORMAT
from nczarr.formats.location import Location
from nczarr.model import DataModel

#: netCDF4's format names and the data model each asks for (the Zarr convention is the default).
NETCDF4_FORMATS = {
    "NETCDF4": DataModel.ENHANCED,
    "NETCDF4_CLASSIC": DataModel.CLASSIC,
    "NETCDF3_CLASSIC": DataModel.CLASSIC,
    "NETCDF3_64BIT_OFFSET": DataModel.CLASSIC,
    "NETCDF3_64BIT": DataModel.CLASSIC,
    "NETCDF3_64BIT_DATA": DataModel.CLASSIC,
}
#: nczarr's own format names: the on-disk conventions (ZARR_V3_DRAFT: pure Zarr in the layout
#: of the Zarr v3 core-protocol draft, as zarr-python 2.18's experimental v3 API wrote it).
ZARR_FORMATS = ("NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2", "ZARR_V3_DRAFT")


def parse_format(format: str, location: Location) -> tuple[str, DataModel, str]:
    """The convention, data model and netCDF4 data model name a ``format=`` asks for:
    netCDF4's names choose the data model (with the URL's convention or the default), nczarr's
    choose the convention."""
    name = str(format).upper()
    if name in ZARR_FORMATS:
        return name, DataModel.ENHANCED, "NETCDF4"
    model = NETCDF4_FORMATS.get(name)
    if model is None:
        raise ArgumentError(
            f"unrecognized format requested: {format!r}; use one of "
            f"{', '.join([*NETCDF4_FORMATS, *ZARR_FORMATS])}"
        )
    data_model = "NETCDF3_64BIT_OFFSET" if name == "NETCDF3_64BIT" else name
    return location.convention or DEFAULT_FORMAT, model, data_model
