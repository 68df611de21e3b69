"""The API reference (docs/api_reference.py, pdoc) builds without a warning and documents
every public name: each name of ``nczarr.__all__`` has its entry, each class and function a
docstring, and the pages docs/api.md names exist. pdoc is a test requirement."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path
from types import ModuleType

import pdoc  # noqa: F401  (missing, these tests fail at import)

import nczarr

DOCS = Path(__file__).parent.parent.parent / "docs"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_reference", DOCS / "api_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reference_builds_and_documents_every_public_name(tmp_path: Path) -> None:
    builder = _builder()
    assert builder.build(tmp_path, search=False) == []  # no pdoc warning
    page = (tmp_path / "nczarr.html").read_text(encoding="utf-8")
    undocumented = []
    for name in nczarr.__all__:
        assert f'id="{name}"' in page, f"{name} has no entry in the API reference"
        value = getattr(nczarr, name)
        if (inspect.isclass(value) or inspect.isroutine(value)) and not inspect.getdoc(value):
            undocumented.append(name)
    assert undocumented == [], f"public names without a docstring: {undocumented}"
    for module in builder.MODULES[1:]:
        assert (tmp_path / (module.replace(".", "/") + ".html")).exists()
    assert re.search(r'id="to_nczarr"', (tmp_path / "nczarr" / "xarray.html").read_text(encoding="utf-8"))


def test_api_doc_links_to_the_reference() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    assert "python docs/api_reference.py" in text and "api/index.html" in text
