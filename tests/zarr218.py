"""The zarr-python 2.18 interpreter the draft-layout interop tests run, named by
``NCZARR_ZARR218_PYTHON`` (zarr-python 2 and 3 cannot share one environment): where none is
named these tests skip, and the committed fixtures are what every run checks."""

from __future__ import annotations

import os

import pytest


def zarr218_python() -> str:
    """The interpreter's path, or skip the calling test."""
    python = os.environ.get("NCZARR_ZARR218_PYTHON")
    if not python:
        pytest.skip("NCZARR_ZARR218_PYTHON names no zarr-python 2.18 interpreter (the committed fixtures are checked)")
    return python
