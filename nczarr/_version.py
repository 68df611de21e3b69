"""nczarr's own version (netCDF4's API level that nczarr follows is 1.7.5; see docs/api.md)."""

__version__ = "0.1.0"
