"""The API reference of nczarr: HTML made from the docstrings by pdoc.

    python docs/api_reference.py [OUTPUT]     # default: docs/api/ (built on demand, not kept in git)

It documents the netCDF4-python interface (``nczarr``: every name of ``nczarr.__all__``), the
xarray writer (``nczarr.xarray``), the errors, the stores and the conventions. A warning of
pdoc (a name that does not resolve, a docstring it cannot read) fails the build (exit 1);
``tests/docs/test_api_reference.py`` builds it so that it never breaks.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

#: The modules documented, each on its own page.
MODULES = ("nczarr", "nczarr.xarray", "nczarr.errors", "nczarr.store", "nczarr.formats")
#: Where the reference goes by default (docs/api.md links here).
DEFAULT_OUTPUT = Path(__file__).parent / "api"


def build(output: Path, *, search: bool = True) -> list[str]:
    """Render :data:`MODULES` into ``output`` (``search``: with pdoc's search index, most of
    the size and time); pdoc's warnings, empty when all is well (warnings of the libraries
    imported on the way are not pdoc's and are left out)."""
    import pdoc
    import pdoc.render

    import nczarr

    for name in nczarr.__all__:  # loaded on first use, and pdoc sees only what is loaded
        vars(nczarr).setdefault(name, getattr(nczarr, name))
    pdoc.render.configure(docformat="restructuredtext", footer_text=f"nczarr {nczarr.__version__}", search=search)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*MODULES, output_directory=output)
    pdoc_dir = str(Path(pdoc.__file__).parent)
    # run from a checkout beside a non-editable install (as CI does), pdoc notes that the name
    # 'nczarr' is both: that is the environment's, not the docstrings'
    return [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if w.filename.startswith(pdoc_dir) and "may refer to either the installed" not in str(w.message)
    ]


def main(argv: Sequence[str]) -> int:
    output = Path(argv[0]) if argv else DEFAULT_OUTPUT
    problems = build(output)
    for problem in problems:
        sys.stderr.write(f"{problem}\n")
    sys.stdout.write(f"API reference: {output / 'index.html'}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
