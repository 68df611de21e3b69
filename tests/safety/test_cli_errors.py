"""The ``nczarr`` command on bad input: one line ``nczarr: error: ...`` on stderr and a
non-zero status, never a traceback; ``--debug`` (or NCZARR_DEBUG=1) shows the traceback
instead; Ctrl-C exits 130 with one line and leaves no partial output.

Bad input of every kind issue 14 names: HDF5 signatures with garbage after them, truncated
netCDF-4 and netCDF-3 files, netCDF-3 headers declaring absurd counts and sizes, text named
``.nc``, directories and special files where files are expected, symlink loops, targets that
cannot be created, malformed and hostile CDL. Run in-process through ``main(argv)``; the Ctrl-C
cases run the command in a subprocess and interrupt it while it writes.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from nczarr.cli import main
from nczarr.convert.hdf5 import Hdf5Reader
from nczarr.convert.netcdf3 import Netcdf3Reader
from nczarr.errors import Hdf5Error, NCZarrError, Netcdf3Error


def fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command; it must fail with one ``nczarr: error:`` line (returned)."""
    status = main(argv)
    captured = capsys.readouterr()
    assert status != 0, captured
    assert "Traceback" not in captured.err
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nczarr: error: "), captured.err
    return lines[0]


# -- files to feed it ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bad")
    made: dict[str, Path] = {}

    good4 = folder / "good4.nc"
    with netCDF4.Dataset(good4, "w") as ds:
        ds.createDimension("x", 2000)
        ds.createVariable("v", "f8", ("x",))[:] = np.arange(2000.0)
    good3 = folder / "good3.nc"
    with netCDF4.Dataset(good3, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("x", 2000)
        ds.createVariable("v", "f8", ("x",))[:] = np.arange(2000.0)
        ds.title = "three"

    def write(name: str, data: bytes) -> None:
        made[name] = folder / name
        made[name].write_bytes(data)

    write("hdf5_garbage.nc", b"\x89HDF\r\n\x1a\n" + b"garbage!" * 64)
    write("hdf5_truncated.nc", good4.read_bytes()[:3000])
    write("text.nc", b"this is not a netCDF file\n")
    write("cdf_header_truncated.nc", good3.read_bytes()[:40])
    write("cdf_data_truncated.nc", good3.read_bytes()[:1000])
    write("cdf_garbage.nc", b"CDF\x01" + b"\xff" * 60)
    # a header declaring 2**31-1 attributes of 2**31-1 doubles each, in a 64-byte file
    write("cdf_huge_counts.nc", b"CDF\x01" + struct.pack(">IIIII", 0, 0, 0, 0x0C, 2**31 - 1) + b"\x00" * 44)
    # one attribute whose name is declared 4 GB long
    write("cdf_huge_name.nc", b"CDF\x01" + struct.pack(">IIIIII", 0, 0, 0, 0x0C, 1, 2**32 - 1) + b"abcd")
    # a CDF-5 dimension of 2**62 values and a variable declared over it, data absent
    header = b"CDF\x05" + struct.pack(">Q", 0)
    header += struct.pack(">IQ", 0x0A, 1) + struct.pack(">Q", 1) + b"x\x00\x00\x00" + struct.pack(">Q", 2**62)
    header += struct.pack(">IQ", 0, 0)  # no global attributes
    header += struct.pack(">IQ", 0x0B, 1) + struct.pack(">Q", 1) + b"v\x00\x00\x00"
    header += struct.pack(">QQ", 1, 0) + struct.pack(">IQ", 0, 0) + struct.pack(">IQQ", 6, 0, 200)
    write("cdf_huge_dimension.nc", header)

    made["directory"] = folder / "directory.nc"
    made["directory"].mkdir()
    made["loop"] = folder / "loop"
    made["loop"].symlink_to("loop")
    made["fifo.nc"] = folder / "fifo.nc"
    os.mkfifo(made["fifo.nc"])  # never opened: it would block
    made["good3"], made["good4"] = good3, good4
    return made


BAD_FILES = [
    "hdf5_garbage.nc",
    "hdf5_truncated.nc",
    "text.nc",
    "cdf_header_truncated.nc",
    "cdf_garbage.nc",
    "cdf_huge_counts.nc",
    "cdf_huge_name.nc",
    "directory",
    "loop",
    "fifo.nc",
]


@pytest.mark.parametrize("name", BAD_FILES)
@pytest.mark.parametrize("command", ["info", "dump", "copy", "virtualize"])
def test_a_bad_file_is_one_line(command: str, name: str, files: dict[str, Path], tmp_path: Path, capsys) -> None:
    argv = [command, str(files[name])]
    if command in ("copy", "virtualize"):
        argv.append(str(tmp_path / "out.zarr"))
    line = fails(argv, capsys)
    assert files[name].name in line or "does not exist" in line, line
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize("command", ["dump", "copy", "virtualize"])
def test_missing_data_is_one_line(command: str, files: dict[str, Path], tmp_path: Path, capsys) -> None:
    for name in ("cdf_data_truncated.nc", "cdf_huge_dimension.nc"):
        argv = [command, str(files[name])] + ([str(tmp_path / "out.nc")] if command in ("copy", "virtualize") else [])
        assert "truncated" in fails(argv, capsys)
        assert not list(tmp_path.iterdir())


def test_the_readers_raise_nczarr_errors_that_are_os_errors(files: dict[str, Path]) -> None:
    """As netCDF4.Dataset raises OSError for these files, so do nczarr's readers."""
    for name in ("cdf_header_truncated.nc", "cdf_garbage.nc", "cdf_huge_counts.nc", "cdf_huge_name.nc"):
        with pytest.raises(Netcdf3Error) as caught:
            Netcdf3Reader(files[name])
        assert isinstance(caught.value, OSError) and str(files[name]) in str(caught.value)
        with pytest.raises(OSError):
            netCDF4.Dataset(files[name])
    with pytest.raises(Netcdf3Error, match="2147483647 attributes declared at byte 24, more than the file's"):
        Netcdf3Reader(files["cdf_huge_counts.nc"])  # refused before looping over them
    for name in ("hdf5_garbage.nc", "hdf5_truncated.nc"):
        with pytest.raises(Hdf5Error) as caught:
            Hdf5Reader(files[name])
        assert isinstance(caught.value, OSError) and str(files[name]) in str(caught.value)


def test_a_special_file_that_fails_to_read_is_one_line(capsys) -> None:
    line = fails(["dump", "/proc/self/mem"], capsys)  # reading it fails with EIO
    assert "/proc/self/mem" in line


def test_a_target_that_cannot_be_created_is_one_line(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    # /sys refuses new files even to root
    for target in ("/sys/nczarr-test.nc", "/sys/nczarr-test.zarr"):
        line = fails(["copy", str(files["good3"]), target], capsys)
        assert "nczarr-test" in line
    cdl = tmp_path / "x.cdl"
    cdl.write_text("netcdf x { dimensions: d = 1 ; variables: int v(d) ; }")
    assert "nczarr-test" in fails(["gen", str(cdl), "-o", "/sys/nczarr-test.nc"], capsys)


def test_a_directory_as_cdl_is_one_line(tmp_path: Path, capsys) -> None:
    assert str(tmp_path) in fails(["gen", str(tmp_path)], capsys)


@pytest.mark.parametrize("command", ["gen", "validate"])
def test_texts_that_are_no_regular_files_are_refused_unread(tmp_path: Path, capsys, command: str) -> None:
    """/dev/zero would be read until memory runs out, a FIFO without a writer for ever."""
    fifo = tmp_path / "fifo.cdl"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        argv = [command, path, *(["-o", str(tmp_path / "out.zarr")] if command == "gen" else [])]
        status = main(argv)
        captured = capsys.readouterr()
        assert status == 1 and "not a regular file" in captured.out + captured.err
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize(
    "text, where",
    [
        ("netcdf d {\n" + "group: g {\n" * 5000 + "}\n" * 5000 + "}\n", ":101:"),
        ("netcdf d {\ndimensions: x = 2;\nvariables: int v(x);\ndata: v = " + "{" * 5000 + "1" + "}" * 5000 + ";\n}\n", ":4:"),
        ("netcdf d {\ntypes:\n compound t0 { int a; };\n"
         + "".join(f" compound t{i} {{ t{i - 1} a; }};\n" for i in range(1, 3000)) + "}\n", ":103:"),
        ("netcdf d {\ntypes:\n opaque(4000000000) o;\n}\n", ":3:"),
        ("netcdf d {\ndimensions: x = 10 ;\nvariables: byte v(x) ; v:_ChunkSizes = 1000000000 ;\n}\n", ":3:"),
        ("netcdf d {\ndimensions: x = 99999999999999999999 ;\n}\n", ":2:"),
        ("netcdf d {\n:a = \"never closed ;\n}\n", ":2:"),
        ("\ufeff\x00\x01\x02", ":1:"),
        ("netcdf d {\ndimensions: x = 1 ;\nvariables: int v(" + ", ".join(["x"] * 65) + ") ;\n}\n", ":3:"),
        # each string fills rows of 2**31 characters: 6 GB for three words
        (
            'netcdf d {\ndimensions: r = 0 ; c = 2147483648 ;\nvariables: char a(r, c) ;\ndata: a = "1", "two", "three" ;\n}\n',
            ":4:",
        ),
    ],
    ids=["groups", "braces", "compounds", "opaque", "chunks", "dimension", "string", "binary", "rank", "char rows"],
)
def test_bad_cdl_is_one_line_with_a_position(text: str, where: str, tmp_path: Path, capsys) -> None:
    cdl = tmp_path / "bad.cdl"
    cdl.write_text(text, encoding="utf-8")
    line = fails(["gen", str(cdl), "-o", str(tmp_path / "out.zarr")], capsys)
    assert f"bad.cdl{where}" in line
    assert not (tmp_path / "out.zarr").exists()


def test_a_huge_dimension_without_data_costs_nothing(tmp_path: Path, capsys) -> None:
    cdl = tmp_path / "huge.cdl"
    cdl.write_text("netcdf huge {\ndimensions: x = 2000000000 ; y = 2000000000 ;\nvariables: double v(x, y) ;\n}\n")
    started = time.monotonic()
    assert main(["gen", str(cdl), "-o", str(tmp_path / "huge.zarr")]) == 0, capsys.readouterr().err
    assert time.monotonic() - started < 30
    assert sum(f.stat().st_size for f in (tmp_path / "huge.zarr").rglob("*") if f.is_file()) < 1 << 20


@pytest.mark.parametrize(
    "error, words",
    [
        (MemoryError(), "out of memory"),
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
        (PermissionError(13, "Permission denied", "/some/file"), "/some/file: Permission denied"),
        (KeyError("x"), "KeyError: 'x'"),
    ],
)
def test_any_failure_is_one_line(error: Exception, words: str, monkeypatch, capsys) -> None:
    def fail(args: object) -> int:
        raise error

    monkeypatch.setattr("nczarr.cli.validate.run", fail)  # the command, failing in any way
    assert words in fails(["validate", "x.nczm"], capsys)


def test_debug_shows_the_traceback(files: dict[str, Path], monkeypatch, capsys) -> None:
    with pytest.raises(NCZarrError):
        main(["--debug", "info", str(files["hdf5_garbage.nc"])])
    monkeypatch.setenv("NCZARR_DEBUG", "1")
    with pytest.raises(NCZarrError):
        main(["info", str(files["cdf_garbage.nc"])])
    monkeypatch.setenv("NCZARR_DEBUG", "0")
    fails(["info", str(files["cdf_garbage.nc"])], capsys)


def test_a_broken_pipe_is_quiet(files: dict[str, Path]) -> None:
    command = [sys.executable, "-m", "nczarr.cli", "dump", str(files["good3"])]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # what head does after its lines
        assert process.stderr.read() == b""
        assert process.wait(timeout=60) == 0


# -- Ctrl-C ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slow_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A netCDF-3 file whose copy with zlib level 9 takes a few seconds."""
    path = tmp_path_factory.mktemp("slow") / "slow.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_OFFSET") as ds:
        ds.createDimension("x", 2000)
        ds.createDimension("y", 2000)
        ds.createVariable("v", "f8", ("x", "y"))[:] = np.random.default_rng(0).random((2000, 2000))
    return path


@pytest.mark.parametrize("target", ["out.zarr", "out.nc"])
def test_ctrl_c_exits_130_and_leaves_nothing(target: str, slow_source: Path, tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    kind = ["-k", "nc4"] if target.endswith(".nc") else []
    command = [sys.executable, "-m", "nczarr.cli", "copy", "-d", "9", *kind, str(slow_source), target]
    # one thread and the standard library's zlib: the fast deflate libraries on every core
    # finish the copy before it can be interrupted
    slow = {**os.environ, "NCZARR_THREADS": "1", "NCZARR_DEFLATE": "zlib"}
    process = subprocess.Popen(command, cwd=folder, stderr=subprocess.PIPE, text=True, env=slow)
    deadline = time.monotonic() + 60
    while not any(folder.iterdir()) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # until it writes
    time.sleep(0.3)
    assert process.poll() is None, "the copy ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert err == "nczarr: error: interrupted\n"
    assert list(folder.iterdir()) == []


def test_an_existing_target_is_not_removed_on_failure(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    """What existed before the command is not the command's to remove."""
    target = tmp_path / "keep.nc"
    target.write_bytes(b"the user's bytes")
    fails(["copy", str(files["cdf_data_truncated.nc"]), str(target)], capsys)
    assert target.read_bytes() == b"the user's bytes"
    assert os.listdir(tmp_path) == ["keep.nc"]


def _read_everything(reader: Netcdf3Reader | Hdf5Reader) -> None:
    with reader:
        for group in reader.dataset.walk():
            for variable in group.variables:
                shape = tuple(reader.dataset.find_dimension(d).size for d in variable.dimensions)
                reader.read(variable, tuple(slice(0, min(n, 4)) for n in shape))


def test_every_cut_and_many_flips_of_a_netcdf3_file_are_netcdf3_errors(files: dict[str, Path], tmp_path: Path) -> None:
    """Truncated at every byte of its header and beyond, and with bytes of the header
    changed: a netCDF-3 file opens and reads, or raises an NCZarrError that is an OSError."""
    data = files["good3"].read_bytes()
    rng = np.random.default_rng(14)
    blobs = [data[:n] for n in range(200)]
    for _ in range(400):
        blob = bytearray(data[:600])
        for position in rng.integers(4, 120, size=rng.integers(1, 4)):
            blob[position] = rng.choice([0, 0x7F, 0x80, 0xFF, int(rng.integers(256))])
        blobs.append(bytes(blob))
    path = tmp_path / "mutant.nc"
    for blob in blobs:
        path.write_bytes(blob)
        try:
            _read_everything(Netcdf3Reader(path))
        except NCZarrError as error:
            assert isinstance(error, OSError), error


def test_cuts_of_a_netcdf4_file_are_hdf5_errors(files: dict[str, Path], tmp_path: Path) -> None:
    data = files["good4"].read_bytes()
    path = tmp_path / "mutant.nc"
    for size in [*range(8, 2048, 97), len(data) - 1000, len(data) - 8]:
        path.write_bytes(data[:size])
        try:
            _read_everything(Hdf5Reader(path))
        except NCZarrError as error:
            assert isinstance(error, OSError), error
