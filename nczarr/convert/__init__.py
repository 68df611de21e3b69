"""Other containers of netCDF data (netCDF-3 files natively, netCDF-4/HDF5 files through
h5netcdf) and copying any dataset to any other (``nczarr copy``). Every container is read as
a :class:`~nczarr.values.source.DatasetSource`; a Zarr dataset through its format session,
never through the API's handles."""
