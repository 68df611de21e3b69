"""Text in and out: model text (``*.nczm``) to a model tree and back, and reports of checks."""

from __future__ import annotations

from nczarr.errors import ParseError
from nczarr.syntax.modeltext import dump, parse, parse_file
from nczarr.syntax.report import format_problem, run_validate, validate_file

__all__ = [
    "ParseError",
    "dump",
    "format_problem",
    "parse",
    "parse_file",
    "run_validate",
    "validate_file",
]
