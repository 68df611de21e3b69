"""Text in and out: model text (``*.nczm``) to a model tree and back, and reports of checks."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from nczarr.errors import ParseError

if TYPE_CHECKING:
    from nczarr.syntax.modeltext import dump, parse, parse_file
    from nczarr.syntax.report import format_problem, run_validate, validate_file

#: Where each name lives: imported on first use, so the CDL modules (nczarr dump) start
#: without the model-text parser and Lark.
_LAZY = {
    "dump": "nczarr.syntax.modeltext",
    "parse": "nczarr.syntax.modeltext",
    "parse_file": "nczarr.syntax.modeltext",
    "format_problem": "nczarr.syntax.report",
    "run_validate": "nczarr.syntax.report",
    "validate_file": "nczarr.syntax.report",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

__all__ = [
    "ParseError",
    "dump",
    "format_problem",
    "parse",
    "parse_file",
    "run_validate",
    "validate_file",
]
