"""The markers xarray's own backend tests carry (test_xarray_suite.py runs them here)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    for marker in ("flaky", "network", "slow", "asyncio", "skip_if_param", "skip_with_dask_array"):
        config.addinivalue_line("markers", f"{marker}: xarray's backend tests use it")
