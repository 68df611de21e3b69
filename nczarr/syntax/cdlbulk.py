"""Long runs of plain numbers of a CDL data list, read in one C pass as ncgen reads them.

:func:`run_values` parses a run (numbers, commas and blanks only: what the CDL scanner packs)
with :func:`numpy.fromstring`, and gives up (None) where that could differ from ncgen's own
reading: an integer in octal (a leading 0), 19 digits or more in a row, a fraction or exponent
for an integer type, anything numpy cannot read to the end. The caller then reads the run
token by token with the full grammar.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["run_values"]

_LONG_DIGITS = re.compile(r"[0-9]{19}")
#: after blanks and signs go, a number that starts with 0 and a digit (octal for ncgen)
_OCTAL = re.compile(r",0[0-9]")
_SQUEEZE = str.maketrans(dict.fromkeys(" \t\r\n+-"))


def run_values(run: str, dtype: np.dtype) -> np.ndarray | None:
    """The numbers of ``run`` (comma separated) as ``dtype`` (cast from int64 or float64 as
    C casts), or None when the run needs the full grammar."""
    integer = dtype.kind in "iu"
    if integer and any(mark in run for mark in ".eE"):
        return None
    if _OCTAL.search("," + run.translate(_SQUEEZE)):
        return None
    try:
        values = np.fromstring(run, dtype=np.int64 if integer else np.float64, sep=",")
    except ValueError:  # not plain numbers
        return None
    if len(values) != run.count(",") + 1:  # an empty element
        return None
    # 19 digits need a value of 1e18 at least (a leading 0 is octal, caught above): only
    # then look for them in the text
    if len(values) and (values.max() >= 10**18 or values.min() <= -(10**18)) and _LONG_DIGITS.search(run):
        return None
    return values.astype(dtype)
