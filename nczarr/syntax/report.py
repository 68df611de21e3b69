"""Reports of the checks for a model-text file: what ``nczarr validate FILE`` prints."""

from __future__ import annotations

from os import PathLike
from typing import TextIO

from nczarr.errors import ParseError, StoreError
from nczarr.model import Problem, validate
from nczarr.store import read_regular_file
from nczarr.syntax.modeltext import parse


def format_problem(problem: Problem, filename: str | None = None) -> str:
    """One line per problem: ``file:line:col: error: /g/v: message``."""
    if filename is None:
        return str(problem)
    separator = ":" if problem.line is not None else ": "
    return f"{filename}{separator}{problem}"


def validate_file(path: str | PathLike[str]) -> list[Problem]:
    """Every problem of a model-text file; a syntax error or an unreadable file is one."""
    try:
        text = read_regular_file(path).decode("utf-8")
    except StoreError as exc:  # it names the file and why
        return [Problem("error", "", str(exc))]
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem("error", "", f"cannot read the file: {exc}")]
    try:
        tree = parse(text, filename=str(path))
    except ParseError as exc:
        return [Problem("error", "", exc.message, exc.line, exc.column)]
    return validate(tree)


def run_validate(path: str | PathLike[str], out: TextIO) -> int:
    """Print the problems of a file in line order, or that it is valid; the exit status."""
    problems = sorted(validate_file(path), key=lambda p: (p.line or 0, p.column or 0))
    for problem in problems:
        out.write(format_problem(problem, str(path)) + "\n")
    errors = sum(problem.severity == "error" for problem in problems)
    warnings = len(problems) - errors
    counts = f"{_count(errors, 'error')}, {_count(warnings, 'warning')}"
    if errors:
        out.write(f"{path}: invalid: {counts}\n")
        return 1
    out.write(f"{path}: valid" + (f" ({_count(warnings, 'warning')})" if warnings else "") + "\n")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
