"""nczarr: the netCDF data model on Zarr, in pure Python."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from nczarr.errors import NCZarrError

__version__ = "0.1.0"

__all__ = ["NCZarrError", "__version__", "grammar_path"]


def grammar_path(name: str) -> Path:
    """Path of a grammar file such as ``model.lark``, in a wheel or in a source checkout."""
    installed = resources.files("nczarr") / "grammar" / name
    if installed.is_file():
        return Path(str(installed))
    checkout = Path(__file__).resolve().parent.parent / "grammar" / name
    if checkout.is_file():
        return checkout
    raise FileNotFoundError(f"grammar {name!r} is not installed with nczarr")
