"""Other containers of netCDF data (netCDF-3 files natively, netCDF-4/HDF5 files through
h5netcdf) and copying any dataset to any other (``nczarr copy``)."""
