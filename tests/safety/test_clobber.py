"""Attacks on clobbering: mode 'w' (and ``nczarr gen`` / ``copy``) replaces a Zarr dataset
and nothing else. A user's files beside or inside a store, links out of it and hostile
dataset names in CDL must all survive; a real hierarchy of every kind is still replaced."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import zarr

import nczarr
from nczarr.cli import main
from nczarr.errors import ForeignContentError, NCZarrError, StoreError
from nczarr.store import FsspecStore, open_store
from nczarr.store.open import foreign_keys

CONVENTIONS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]


def make_dataset(path: Path | str, convention: str = "NCZARR") -> None:
    with nczarr.Dataset(path, "w", format=convention) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 4)
        ds.createVariable("scalar", "f8")[...] = 1.5
        group = ds.createGroup("g")
        variable = group.createVariable("v", "i4", ("t", "x"), chunksizes=(1, 2))
        variable[0:2] = np.arange(8).reshape(2, 4)


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(call: Callable[[], object], *named: str) -> ForeignContentError:
    with pytest.raises(ForeignContentError) as info:
        call()
    for name in named:
        assert repr(name) in str(info.value)
    return info.value


# -- what mode 'w' refuses -------------------------------------------------------------------


def test_w_in_the_current_folder_keeps_the_users_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dataset(tmp_path)
    (tmp_path / "thesis.tex").write_text("years of work")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "raw.csv").write_text("1,2,3")
    before = files(tmp_path)
    monkeypatch.chdir(tmp_path)
    error = refused(lambda: nczarr.Dataset(".", "w").close(), "thesis.tex", "data/raw.csv")
    assert isinstance(error, OSError) and "Zarr dataset" in str(error)
    assert files(tmp_path) == before
    with nczarr.Dataset(".") as ds:  # the dataset is untouched too
        assert ds["g/v"][1].tolist() == [4, 5, 6, 7]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_w_refuses_stray_files_anywhere_in_a_store(tmp_path: Path, convention: str) -> None:
    store = tmp_path / "store"
    make_dataset(store, convention)
    (store / "g" / "notes.txt").write_text("mine")
    array_folder = store / "g" / "v"
    (array_folder / "README").write_text("mine too")
    chunk_folder = next(p for p in array_folder.rglob("*") if p.is_dir()) if convention == "ZARR" else array_folder
    (chunk_folder / "backup.bin").write_bytes(b"\0")
    stray = ["g/notes.txt", "g/v/README", str((chunk_folder / "backup.bin").relative_to(store))]
    before = files(store)
    refused(lambda: nczarr.Dataset(store, "w", format=convention).close(), *stray)
    refused(lambda: open_store(store, "w"), *stray)
    assert files(store) == before


def test_w_refuses_a_folder_without_a_dataset_at_its_top(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    make_dataset(folder / "old.zarr")  # a store inside is not a store at the top
    (folder / "plan.txt").write_text("x")
    before = files(folder)
    error = refused(lambda: nczarr.Dataset(folder, "w").close(), "old.zarr/", "plan.txt")
    assert "holds no Zarr dataset" in str(error)
    assert files(folder) == before


def test_the_error_names_a_few_of_many_stray_files(tmp_path: Path) -> None:
    make_dataset(tmp_path / "s")
    for i in range(40):
        (tmp_path / "s" / f"photo{i:02}.jpg").write_bytes(b"jpg")
    error = refused(lambda: open_store(tmp_path / "s", "w"), "photo00.jpg")
    assert "and 35 more" in str(error) and len(str(error)) < 600


def test_w_refuses_stray_keys_on_an_fsspec_store() -> None:
    memory_url = f"memory://clobber-{uuid.uuid4().hex}"
    make_dataset(memory_url, "ZARR")
    FsspecStore(memory_url).set("g/v/notes.txt", b"mine")
    refused(lambda: nczarr.Dataset(memory_url, "w").close(), "g/v/notes.txt")
    assert FsspecStore(memory_url).get("g/v/notes.txt") == b"mine"


# -- what mode 'w' replaces ------------------------------------------------------------------


def _zarr_python(path: Path, zarr_format: int, encoding: dict[str, str], sharded: bool) -> None:
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    root.attrs["title"] = "made by zarr-python"
    array = root.create_group("sub").create_array(
        "a", shape=(4, 4), chunks=(2, 2), dtype="i4", chunk_key_encoding=encoding
    )
    array[:] = np.arange(16).reshape(4, 4)
    root.create_array("s", shape=(), dtype="f4")[()] = 1
    if sharded:
        root.create_array("sh", shape=(8,), chunks=(2,), shards=(4,), dtype="i4")[:] = 1


def _ncgen(path: Path, mode: str) -> None:
    cdl = path.parent / "small.cdl"
    cdl.write_text(
        "netcdf small {\ndimensions: d = 4 ; t = 2 ;\n"
        "variables: int v(t, d) ; v:_ChunkSizes = 1, 2 ;\ndata: v = 1,2,3,4,5,6,7,8 ;\n"
        "group: sub { variables: float w(d) ; data: w = 1, 2, 3, 4 ; }\n}\n"
    )
    subprocess.run(["ncgen", "-k", "nc4", "-o", f"file://{path}#mode={mode},file", str(cdl)], check=True)


def _nczarr(convention: str) -> Callable[[Path], None]:
    return lambda path: make_dataset(path, convention)


MAKERS: dict[str, Callable[[Path], None]] = {
    **{f"nczarr {convention}": _nczarr(convention) for convention in CONVENTIONS},
    "zarr-python v2 '.'": lambda p: _zarr_python(p, 2, {"name": "v2", "separator": "."}, False),
    "zarr-python v2 '/'": lambda p: _zarr_python(p, 2, {"name": "v2", "separator": "/"}, False),
    "zarr-python v3": lambda p: _zarr_python(p, 3, {"name": "default", "separator": "/"}, True),
    "zarr-python v3 '.'": lambda p: _zarr_python(p, 3, {"name": "default", "separator": "."}, False),
    "zarr-python v3 v2 keys": lambda p: _zarr_python(p, 3, {"name": "v2", "separator": "."}, False),
    "netcdf-c nczarr": lambda p: _ncgen(p, "nczarr"),
    "netcdf-c zarr": lambda p: _ncgen(p, "zarr"),
}


@pytest.mark.parametrize("maker", MAKERS)
def test_w_replaces_every_kind_of_zarr_hierarchy(tmp_path: Path, maker: str) -> None:
    store = tmp_path / "store"
    MAKERS[maker](store)
    assert foreign_keys(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file()) == []
    with nczarr.Dataset(store, "w", format="ZARR") as ds:
        ds.createDimension("y", 1)
    assert sorted(files(store)) == ["zarr.json"]


def test_w_replaces_a_store_whose_root_is_a_link_and_keeps_the_link(tmp_path: Path) -> None:
    make_dataset(tmp_path / "real")
    (tmp_path / "real-neighbour.txt").write_text("beside the store")
    (tmp_path / "link").symlink_to("real")
    with nczarr.Dataset(tmp_path / "link", "w", format="ZARR") as ds:
        ds.createDimension("y", 1)
    assert (tmp_path / "link").is_symlink()
    assert sorted(files(tmp_path / "real")) == ["zarr.json"]
    assert (tmp_path / "real-neighbour.txt").read_text() == "beside the store"
    # a link to a folder of the user's is refused like the folder
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "letter.txt").write_text("x")
    (tmp_path / "home-link").symlink_to("home")
    refused(lambda: nczarr.Dataset(tmp_path / "home-link", "w").close(), "letter.txt")
    assert (tmp_path / "home" / "letter.txt").read_text() == "x"


def test_w_never_follows_a_link_out_of_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_dataset(store, "ZARR_V2")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0").write_bytes(b"sentinel")
    # links named like chunks (a folder and a file) are removed, never followed
    (store / "g" / "v" / "9").symlink_to(outside)
    (store / "g" / "v" / "8.0").symlink_to(outside / "0")
    nczarr.Dataset(store, "w").close()
    assert not os.path.lexists(store / "g")
    assert (outside / "0").read_bytes() == b"sentinel"
    # a link named otherwise is in the way, like any stray file
    (store / "mine").symlink_to(outside)
    refused(lambda: nczarr.Dataset(store, "w").close(), "mine")
    assert (outside / "0").read_bytes() == b"sentinel"


# -- clobber=False and mode 'x' --------------------------------------------------------------

TARGETS: dict[str, Callable[[Path], None]] = {
    "empty folder": lambda p: p.mkdir(),
    "dataset": lambda p: nczarr.Dataset(p, "w", format="NETCDF3_CLASSIC").close() if p.suffix else make_dataset(p),
    "regular file": lambda p: p.write_bytes(b"x"),
    "dangling link": lambda p: p.symlink_to(p.parent / "nowhere"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["store", "file.nc"])
def test_no_clobber_refuses_any_existing_target(tmp_path: Path, target: str, name: str) -> None:
    path = tmp_path / name
    TARGETS[target](path)
    before = files(tmp_path)
    for open_it in (lambda: nczarr.Dataset(path, "w", clobber=False), lambda: nczarr.Dataset(path, "x")):
        with pytest.raises(OSError) as info:
            open_it().close()
        assert isinstance(info.value, NCZarrError) and "File exists" in str(info.value)
    assert files(tmp_path) == before and os.path.lexists(path)
    fresh = tmp_path / f"fresh-{name}"
    nczarr.Dataset(fresh, "w", clobber=False).close()
    assert fresh.exists()


# -- nczarr gen and nczarr copy ----------------------------------------------------------------

HOSTILE_NAMES = ["{outside}/abs", "../up", "a/b", "..", "."]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_gen_names_its_output_after_the_cdl_file_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "abs.zarr").mkdir()
    (outside / "abs.zarr" / "zarr.json").write_text("{}")  # a store the text names: not touched
    before = files(tmp_path)
    cdl = tmp_path / "hostile.cdl"
    cdl.write_text(f"netcdf {name.format(outside=outside)} {{\ndimensions: d = 1 ;\nvariables: int v(d) ;\ndata: v = 7 ;\n}}\n")
    monkeypatch.chdir(work)
    assert main(["gen", str(cdl)]) == 0
    assert sorted(os.listdir(work)) == ["hostile.zarr"]
    with nczarr.Dataset(work / "hostile.zarr") as ds:
        assert ds["v"][:].tolist() == [7]
    after = files(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("work/") and k != "hostile.cdl"} == {
        k: v for k, v in before.items() if k != "hostile.cdl"
    }


def test_gen_and_copy_never_delete_a_folder_that_is_no_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    cdl = tmp_path / "results.cdl"
    cdl.write_text("netcdf results {\ndimensions: d = 1 ;\nvariables: int v(d) ;\n}\n")
    (tmp_path / "results.zarr").mkdir()
    (tmp_path / "results.zarr" / "figure.png").write_bytes(b"png")
    assert main(["gen", str(cdl)]) == 1
    assert "figure.png" in capsys.readouterr().err
    make_dataset(tmp_path / "src.zarr")
    assert main(["copy", "src.zarr", "results.zarr"]) == 1
    assert "figure.png" in capsys.readouterr().err
    assert files(tmp_path / "results.zarr") == {"figure.png": b"png"}
    # an existing store is replaced, as ncgen replaces an existing file
    assert main(["copy", "src.zarr", "copy.zarr"]) == 0
    assert main(["gen", str(cdl), "-o", "copy.zarr"]) == 0
    with nczarr.Dataset(tmp_path / "copy.zarr") as ds:
        assert list(ds.variables) == ["v"]


def test_a_failed_copy_removes_only_what_it_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dataset(tmp_path / "src.zarr")
    existing = tmp_path / "existing.zarr"
    make_dataset(existing)
    from nczarr.convert import copy as copy_module

    def fail(*args: object, **kwargs: object) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(copy_module, "_fill_zarr", fail)
    for target in (tmp_path / "new.zarr", existing):
        with pytest.raises(StoreError, match="disk full"):
            copy_module.copy(str(tmp_path / "src.zarr"), str(target))
    assert not (tmp_path / "new.zarr").exists()
    assert existing.is_dir()  # an existing store is never removed, even half replaced


def test_w_keeps_the_folder_itself(tmp_path: Path) -> None:
    """mode 'w' empties the folder rather than removing it: it may be the current folder,
    and its permissions and owner are the user's."""
    make_dataset(tmp_path / "s")
    os.chmod(tmp_path / "s", 0o750)
    inode = (tmp_path / "s").stat().st_ino
    nczarr.Dataset(tmp_path / "s", "w").close()
    assert (tmp_path / "s").stat().st_ino == inode and (tmp_path / "s").stat().st_mode & 0o777 == 0o750


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_w_replaces_what_a_killed_writer_left(tmp_path: Path, convention: str) -> None:
    """A writer stores chunks before the documents that make them visible: a kill in between
    leaves chunks of arrays (in groups) that have no document yet. They are ours: 'w' must
    replace them, or every crash would leave a store that can only be removed by hand."""
    make_dataset(tmp_path / "s", convention)
    chunk = "c/0/0" if convention in ("NCZARR", "ZARR") else "0.0"
    for orphan in (f"new/{chunk}", f"newgroup/v/{chunk}"):
        (tmp_path / "s" / orphan).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "s" / orphan).write_bytes(b"\0" * 8)
    nczarr.Dataset(tmp_path / "s", "w", format=convention).close()
    assert not (tmp_path / "s" / "new").exists() and not (tmp_path / "s" / "newgroup").exists()


def test_w_replaces_a_store_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    """nczarr writes and reads group trees a thousand deep; replacing one must not end in
    RecursionError halfway through the removal."""
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group"}')
    deepest = folder
    for _ in range(1100):  # not os.makedirs: it recurses once per level
        deepest = deepest / "g"
        deepest.mkdir()
        (deepest / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group"}')
    open_store(folder, "w").close()
    assert os.listdir(folder) == []
