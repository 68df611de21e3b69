"""The netCDF value rules, each fact once: types and dtypes, fills, stored and user values,
block plans, and the DatasetSource / DatasetSink protocols.

Rooms import the submodules directly (``nczarr.values.types``...): this package imports
nothing."""
