"""The worked example of docs/xarray.md runs as written (a CF netCDF-4 file to NCZarr in S3,
moto's server standing in), and makes the figure the page shows (docs/xarray_example.png)."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _example_code() -> list[str]:
    """The python blocks of the page's worked example, in order."""
    page = (DOCS / "xarray.md").read_text(encoding="utf-8")
    section = page.split("## A worked example", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def test_the_worked_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _example_code()
    assert len(blocks) == 5
    monkeypatch.chdir(tmp_path)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    namespace: dict[str, object] = {"__name__": "docs_xarray_example"}
    try:
        for block in blocks:
            exec(compile(block, "docs/xarray.md", "exec"), namespace)  # the page's own code
    finally:
        server = namespace.get("server")
        if server is not None and server._server_ready_event.is_set():  # type: ignore[attr-defined]  # the example failed
            server.stop()  # type: ignore[attr-defined]
    figure = tmp_path / "xarray_example.png"
    data = figure.read_bytes()
    assert data.startswith(b"\x89PNG") and 5_000 < len(data) < 150_000
    shipped = DOCS / "xarray_example.png"
    if not shipped.exists() or shipped.read_bytes() != data:
        shutil.copyfile(figure, shipped)
