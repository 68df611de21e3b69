"""Run the test suites of programs written for netCDF4-python with nczarr in netCDF4's place,
and compare per test with the real netCDF4 (issue 30: "real programs run unchanged").

The programs (cfdm, compliance-checker, Iris, ...) live in a separate virtual environment
with the real netCDF4; their suites are the ones their wheels ship. Three modes:

- ``netcdf4``: the real netCDF4 (the baseline);
- ``nczarr``: ``sys.modules["netCDF4"] = nczarr`` before anything imports netCDF4 (a
  ``sitecustomize`` on ``PYTHONPATH``, so subprocesses get it too), paths as given;
- ``stores``: as ``nczarr``, and every ``.nc`` path a program creates is an NCZarr (Zarr v3)
  store at that path, read back through the same name (``Dataset.__init__`` maps the name).

Usage (from the repository's top folder)::

    python benchmarks/clients.py run --python /work/venvs/clients/bin/python \\
        --program cfdm --mode nczarr --out /tmp/clients
    python benchmarks/clients.py compare --out /tmp/clients

``run`` writes ``<out>/<program>-<mode>.xml`` (JUnit XML); ``compare`` prints, per program
and mode, how many of the tests that pass on netCDF4 (and ran) pass, how many did not run,
and lists those that fail.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
MODES = ("netcdf4", "nczarr", "stores")


@dataclass(frozen=True)
class Program:
    """A program's suite: the package folder holding it, the parts run (relative to the
    installed package), and whether it runs in a copy (suites that write beside themselves)."""

    package: str
    parts: tuple[str, ...]
    copy: str | None = None  # the folder copied to a scratch folder and run there
    ignore: tuple[str, ...] = ()  # parts that test no netCDF (code style) or need missing tools
    setup: tuple[str, ...] = ()  # scripts making the suite's datasets, run first in the copy


PROGRAMS = {
    "cfdm": Program("cfdm", ("test",), copy="test", ignore=("test/test_style.py", "test/test_docstring.py")),
    # cf-python (built on cfdm's reader and writer): its netCDF reading and writing files
    "cf-python": Program(
        "cf",
        tuple(
            f"test/test_{name}.py"
            for name in (
                "read_write", "dsg", "geometry", "gathering", "groups", "CFA", "UGRID", "formula_terms",
                "external", "subsampling", "zarr", "aggregate",
            )
        ),
        copy="test",
        # what cf-python's run_tests.py runs first (cfdm's conftest does it for cfdm)
        setup=("test/create_test_files.py", "test/create_test_files_2.py", "test/setup_create_field.py"),
    ),
    # test_cli runs nc-config, which Debian's netcdf-bin lacks
    "compliance-checker": Program("compliance_checker", ("tests",), ignore=("tests/test_cli.py",)),
    # Iris: its netCDF loader and saver (every part of its suite that reads or writes netCDF)
    "iris": Program(
        "iris",
        (
            "tests/integration/netcdf",
            "tests/integration/test_netcdf__loadsaveattrs.py",
            "tests/unit/fileformats/netcdf",
            "tests/unit/fileformats/cf",
            "tests/unit/fileformats/nc_load_rules",
            "tests/test_netcdf.py",
        ),
    ),
}

# sitecustomize for the nczarr modes: nczarr is netCDF4 for everything the interpreter runs.
_SWAP = """
import sys
sys.path.insert(0, {repository!r})
import nczarr
sys.modules["netCDF4"] = nczarr
"""

# ... and, for the stores mode, every .nc path a program creates is an NCZarr v3 store.
_STORES = """
import os
import shutil
from nczarr.api.dataset import Dataset

_SUFFIXES = (".nc", ".nc4", ".cdf")
_open = Dataset.__init__
_remove = os.remove
_stores = set()  # the .nc paths made stores here: the program's own datasets


def _as_store(filename, mode, kwargs):
    if kwargs.get("memory") is not None or (kwargs.get("diskless") and not kwargs.get("persist")):
        return filename
    if not isinstance(filename, (str, os.PathLike)):
        return filename
    path = os.fspath(filename)
    if "://" in path or not path.lower().endswith(_SUFFIXES):
        return filename
    mode = (mode or "r").rstrip("s") or "r"
    if os.path.isfile(path):
        if mode not in ("w", "x"):
            return filename  # a real file the program did not create: read as given
        _remove(path)  # 'w' replaces it (clobber)
    _stores.add(os.path.abspath(path))
    return "file://" + os.path.abspath(path) + "#mode=nczarr,v3,file"


def _remove_dataset(path, *args, **kwargs):
    # a program removing the x.nc it made removes the store made in its place; nothing else
    if not args and not kwargs and isinstance(path, (str, os.PathLike)):
        made = os.path.abspath(os.fspath(path))
        if made in _stores and os.path.isdir(made):
            shutil.rmtree(made)
            _stores.discard(made)
            return
    _remove(path, *args, **kwargs)


os.remove = os.unlink = _remove_dataset


def _init(self, filename, mode="r", *args, **kwargs):
    given = filename
    _open(self, _as_store(filename, mode, kwargs), mode, *args, **kwargs)
    if isinstance(given, (str, os.PathLike)):
        self._shared.filename = os.fspath(given)  # filepath() gives the name the program gave


Dataset.__init__ = _init
"""


def _environment(mode: str, scratch: Path, tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if mode != "netcdf4":
        site = scratch / "site"
        site.mkdir()
        code = _SWAP.format(repository=str(tree)) + (_STORES if mode == "stores" else "")
        (site / "sitecustomize.py").write_text(code)
        env["PYTHONPATH"] = str(site)
    env["MPLBACKEND"] = "Agg"
    return env


def run(python: str, program_name: str, mode: str, out: Path, extra: list[str], tree: Path = REPOSITORY) -> int:
    """Run one program's suite in one mode; the JUnit XML goes to ``out``."""
    program = PROGRAMS[program_name]
    found = subprocess.run(
        [python, "-c", f"import {program.package}, os; print(os.path.dirname({program.package}.__file__))"],
        capture_output=True, text=True, check=True,
    )
    package = Path(found.stdout.strip())
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"clients-{program_name}-{mode}-"))
    try:
        env = _environment(mode, scratch, tree)
        # the swap must have happened: a sitecustomize that fails is only a warning to Python
        swapped = subprocess.run(
            [python, "-c", "import netCDF4, sys; sys.stdout.write(netCDF4.__name__)"],
            env=env, capture_output=True, text=True, check=True,
        ).stdout
        if swapped != ("netCDF4" if mode == "netcdf4" else "nczarr"):
            raise SystemExit(f"netCDF4 is {swapped!r} in mode {mode}: is {tree} an nczarr tree?")
        root = package
        if program.copy is not None:  # a fresh copy: files of another mode's run do not leak in
            root = scratch / "suite"
            shutil.copytree(package / program.copy, root / program.copy)
        targets = [str(root / part) for part in program.parts if (root / part).exists()]
        targets += [f"--ignore={root / part}" for part in program.ignore]
        report = out / f"{program_name}-{mode}.xml"
        command = [
            python, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider", "-n0", "--continue-on-collection-errors",
            f"--junitxml={report}", "-o", "junit_family=xunit1", "--basetemp", str(scratch / "tmp"), *extra,
        ]
        log = out / f"{program_name}-{mode}.log"
        with log.open("w") as stream:
            # never in the package's folder: its modules (iris/warnings.py) would shadow others
            folder = root / program.copy if program.copy is not None else scratch
            for script in program.setup:  # in the mode's environment: stores mode makes stores
                subprocess.run([python, str(root / script)], cwd=folder, env=env, stdout=stream, stderr=subprocess.STDOUT)
            done = subprocess.run(command, cwd=folder, env=env, stdout=stream, stderr=subprocess.STDOUT)
        return done.returncode
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def outcomes(report: Path) -> dict[str, str]:
    """Each test's outcome in a JUnit XML report: passed, failed, error or skipped."""
    results: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
        results[name] = outcome
    return results


def compare(out: Path, show: int) -> None:
    """Per program and mode: of the tests that pass on netCDF4, how many pass here."""
    for program in PROGRAMS:
        baseline_report = out / f"{program}-netcdf4.xml"
        if not baseline_report.exists():
            continue
        baseline = outcomes(baseline_report)
        passing = {name for name, outcome in baseline.items() if outcome == "passed"}
        print(f"{program}: {len(passing)} of {len(baseline)} pass on netCDF4")
        for mode in MODES[1:]:
            report = out / f"{program}-{mode}.xml"
            if not report.exists():
                continue
            results = outcomes(report)
            ran = passing & results.keys()  # a run of part of the suite (-k) counts what it ran
            lost = sorted(name for name in ran if results[name] != "passed")
            not_run = f" ({len(passing - ran)} not run)" if passing - ran else ""
            print(f"  {mode}: {len(ran) - len(lost)} of {len(ran)}{not_run}")
            for name in lost[:show]:
                print(f"    {results[name]}: {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run", help="run one program's suite in one mode")
    runner.add_argument("--python", required=True, help="the interpreter of the programs' environment")
    runner.add_argument("--program", choices=sorted(PROGRAMS), required=True)
    runner.add_argument("--mode", choices=MODES, required=True)
    runner.add_argument("--out", type=Path, required=True)
    runner.add_argument("--nczarr", type=Path, default=REPOSITORY, help="the nczarr source tree to use (default: this one)")
    runner.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    comparer = commands.add_parser("compare", help="compare the reports in --out")
    comparer.add_argument("--out", type=Path, required=True)
    comparer.add_argument("--show", type=int, default=50, help="how many lost tests to list per mode")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.python, args.program, args.mode, args.out, args.pytest_args, args.nczarr)
    compare(args.out, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
