"""What `nczarr validate FILE` prints, through run_validate."""

import io
from pathlib import Path

from nczarr.model import Problem
from nczarr.syntax import format_problem, run_validate, validate_file


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.nczm"
    path.write_text(text, encoding="utf-8")
    return path


def run(path: Path) -> tuple[int, str]:
    out = io.StringIO()
    status = run_validate(path, out)
    return status, out.getvalue()


def test_a_valid_file(tmp_path: Path) -> None:
    path = write(tmp_path, "dataset zarr 3 { dimension x = 1 }")
    assert run(path) == (0, f"{path}: valid\n")


def test_every_problem_is_printed_in_line_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "dataset zarr 3 {\n"
        "    variable int v(x) {\n"
        "        attribute byte b = 300\n"
        "    }\n"
        "    variable int V\n"
        "    dimension d = 0\n"
        "}\n",
    )
    status, output = run(path)
    assert status == 1
    assert output == (
        f"{path}:2:18: error: /v: dimension reference 'x' does not resolve\n"
        f"{path}:3:24: error: /v:b: value 300 does not fit byte\n"
        f"{path}:5:18: warning: /V: name 'V' differs only in case from variable /v\n"
        f"{path}:6:15: error: /d: dimension size must be at least 1, not 0\n"
        f"{path}: invalid: 3 errors, 1 warning\n"
    )


def test_warnings_alone_leave_the_file_valid(tmp_path: Path) -> None:
    path = write(tmp_path, "dataset zarr 3 { variable int a variable int A }")
    assert run(path) == (
        0,
        f"{path}:1:46: warning: /A: name 'A' differs only in case from variable /a\n"
        f"{path}: valid (1 warning)\n",
    )


def test_a_syntax_error_is_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "dataset zarr 3 {\n  dimension x 3\n}\n")
    assert validate_file(path) == [Problem("error", "", "unexpected '3'; expected '='", 2, 15)]
    assert run(path) == (
        1,
        f"{path}:2:15: error: unexpected '3'; expected '='\n{path}: invalid: 1 error, 0 warnings\n",
    )


def test_an_unreadable_file_is_a_problem(tmp_path: Path) -> None:
    missing = tmp_path / "missing.nczm"
    status, output = run(missing)
    assert status == 1
    assert output.startswith(f"{missing}: error: cannot read {str(missing)!r}: No such file or directory")
    assert output.endswith(f"{missing}: invalid: 1 error, 0 warnings\n")
    binary = tmp_path / "binary.nczm"
    binary.write_bytes(b"\xff\xfe")
    (problem,) = validate_file(binary)
    assert problem.message.startswith("cannot read the file: 'utf-8' codec can't decode")


def test_format_problem() -> None:
    problem = Problem("error", "/g", "bad", 1, 2)
    assert format_problem(problem) == "1:2: error: /g: bad"
    assert format_problem(problem, "f.nczm") == "f.nczm:1:2: error: /g: bad"
    assert format_problem(Problem("warning", "/g", "odd"), "f.nczm") == "f.nczm: warning: /g: odd"
