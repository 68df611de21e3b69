"""The real netCDF-3, netCDF-4 and HDF5 files that installed packages ship as sample data:
the corpus nczarr must read as ncdump does (used in place, never copied into the repository).

The test extra installs every package named here, so a missing one fails loudly."""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: package -> the folders (inside it) holding its sample files, and their suffixes
SAMPLE_FOLDERS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "tables": (("tests", (".h5",)), ("nodes/tests", (".h5",))),
    "h5py": (("tests/data_files", (".h5",)),),
    "xarray": (("tests/data", (".nc",)),),
    "scipy": (("io/tests/data", (".nc",)),),
}


def package_folder(package: str) -> Path:
    """The installed folder of ``package`` (an error naming it when it is not installed)."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"the test extra's package {package!r} is not installed: pip install -e '.[test]'")
    return Path(spec.origin).parent


def sample_files() -> list[Path]:
    """Every sample file of every package in :data:`SAMPLE_FOLDERS`, sorted."""
    found: list[Path] = []
    for package, folders in SAMPLE_FOLDERS.items():
        root = package_folder(package)
        for folder, suffixes in folders:
            found += sorted(p for p in (root / folder).iterdir() if p.suffix in suffixes)
    return found
