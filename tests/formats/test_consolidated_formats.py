"""Consolidated metadata at the netCDF dataset level: sessions write it after every change
(v3 inline in the root ``zarr.json``, v2 ``.zmetadata``), never leave a stale copy, and
every convention reads a whole dataset from it in one store read."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import netCDF4
import pytest
import xarray as xr
import zarr

from nczarr.formats import FormatError, NczarrV2, RootDocuments, convention, detect
from nczarr.formats.keys import ROOT_DOCUMENT_KEYS
from nczarr.formats.session import Session
from nczarr.model import AtomicType, Dataset
from nczarr.store import DirectoryStore, MemoryStore
from nczarr.syntax import parse

pytestmark = pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")

FORMATS = ["NCZARR", "NCZARR_V2", "ZARR", "ZARR_V2"]
COPY_KEY = {3: "zarr.json", 2: ".zmetadata"}

TEXT = """
dataset d zarr 3 enhanced {
    dimension x = 3
    variable float t(x) { attribute string units = "K" }
    variable char c(x)
    group g {
        dimension y = 2
        variable double v(x, y) { attribute double scale = 0.5 }
    }
    attribute string title = "consolidated"
}
"""


def many_variables(count: int) -> Dataset:
    """A dataset of ``count`` variables in three groups, ten attributes each."""
    dataset = Dataset("")
    dataset.add_dimension("x", 4)
    groups = [dataset.add_group(f"g{i}") for i in range(3)]
    for i in range(count):
        variable = groups[i % 3].add_variable(f"v{i}", AtomicType.FLOAT, ["/x"])
        for j in range(10):
            variable.add_attribute(f"a{j}", AtomicType.INT, [i * 10 + j])
    return dataset


def stored_copy(store: MemoryStore, zarr_format: int) -> dict | None:
    """The node documents in the stored consolidated metadata, by key, or None."""
    raw = store.get_many([COPY_KEY[zarr_format]])
    if not raw:
        return None
    doc = json.loads(raw[COPY_KEY[zarr_format]])
    if zarr_format == 3:
        inline = doc.get("consolidated_metadata")
        return None if inline is None else {f"{p}/zarr.json": d for p, d in inline["metadata"].items()}
    return {k: v for k, v in doc["metadata"].items() if "/" in k}


def node_documents(store: MemoryStore) -> dict[str, dict]:
    names = ("zarr.json", ".zarray", ".zgroup", ".zattrs")
    return {
        key: json.loads(store.get(key))
        for key in store.list_prefix("")
        if "/" in key and key.rpartition("/")[2] in names
    }


# -- reading ------------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "reads"), [("NCZARR", 1), ("NCZARR_V2", 3)])
def test_opening_a_thousand_variables_costs_one_read_of_metadata(recording_store, fmt, reads):
    store = recording_store()
    Session.create(store, many_variables(1000), convention(fmt)).close()
    store.reset()
    session = Session.open(store, convention(fmt))
    assert store.reads == reads  # v2: .zgroup, .zattrs and .zmetadata
    store.reset()
    plain = Session.open(store, convention(fmt), use_consolidated=False)
    assert store.reads > 1000
    assert session.dataset == plain.dataset
    assert session.stored.arrays == plain.stored.arrays
    assert session.stored.storage == plain.stored.storage


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_convention_reads_the_same_tree_from_the_copy(recording_store, fmt):
    store = recording_store()
    Session.create(store, parse(TEXT) if fmt.startswith("NCZARR") else _pure(), convention(fmt)).close()
    store.reset()
    root = RootDocuments.read(store)
    used = Session.open(store, detect(store, root), use_consolidated=True, root=root)
    gets = store.reads
    plain = Session.open(store, detect(store), use_consolidated=False)
    assert gets <= len(ROOT_DOCUMENT_KEYS)  # the root's documents, read once for both
    assert used.dataset == plain.dataset and used.stored.arrays == plain.stored.arrays


def _pure() -> Dataset:
    dataset = parse(TEXT)
    dataset.find_variable("c").type = AtomicType.STRING  # pure Zarr has no char arrays
    return dataset


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
def test_use_consolidated_true_without_a_copy_names_the_key(fmt):
    store = MemoryStore()
    conv = convention(fmt, consolidated=False)
    Session.create(store, parse(TEXT), conv).close()
    key = COPY_KEY[conv.zarr_format]
    with pytest.raises(FormatError, match=f"^{key}: the store holds no consolidated metadata"):
        Session.open(store, conv, use_consolidated=True)


@pytest.mark.parametrize("copy", [b'{"metadata": [], "zarr_consolidated_format": 1}', b"", b"{}", b'{"metadata": {}}'])
def test_a_broken_copy_is_left_aside_with_a_warning(copy, caplog):
    # as netcdf-c does; an error naming its key only when the copy is asked for
    store = MemoryStore()
    Session.create(store, parse(TEXT), NczarrV2()).close()
    store.set(".zmetadata", copy)
    with caplog.at_level(logging.WARNING):
        assert Session.open(store, NczarrV2()).dataset.find_variable("t") is not None
    assert ".zmetadata: " in caplog.text
    with pytest.raises(FormatError, match=r"^\.zmetadata: "):
        Session.open(store, NczarrV2(), use_consolidated=True)
    assert Session.open(store, NczarrV2(), use_consolidated=False).dataset.find_variable("t") is not None


# -- writing ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_sync_writes_a_copy_of_every_node_document(fmt):
    store = MemoryStore()
    conv = convention(fmt)
    Session.create(store, parse(TEXT) if fmt.startswith("NCZARR") else _pure(), conv).close()
    copy = stored_copy(store, conv.zarr_format)
    assert copy is not None
    if conv.zarr_format == 3:
        # zarr-python gives each group inside the copy an empty copy of its own
        copy = {k: {m: v for m, v in d.items() if m != "consolidated_metadata"} for k, d in copy.items()}
    assert copy == node_documents(store)


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
def test_a_change_drops_the_copy_first_and_writes_it_fresh_last(recording_store, fmt):
    store = recording_store()
    conv = convention(fmt)
    session = Session.create(store, parse(TEXT), conv)
    store.reset()
    session.dataset.find_group("g").add_variable("w", AtomicType.INT, ["y"])
    session.define(session.dataset.find_group("g").find_variable("w"))
    session.sync()
    key = COPY_KEY[conv.zarr_format]
    assert store.log[0] == (("set", "zarr.json") if key == "zarr.json" else ("delete", ".zmetadata"))
    assert store.log[-1] == ("set", key)
    assert ("set", "g/w/" + ("zarr.json" if key == "zarr.json" else ".zarray")) in store.log[1:-1]
    copy = stored_copy(store, conv.zarr_format)
    assert copy is not None and any(k.startswith("g/w/") for k in copy)
    assert Session.open(store, conv).dataset == Session.open(store, conv, use_consolidated=False).dataset


class FailingStore(MemoryStore):
    """Fails writing a node document below ``fail_below``."""

    fail_below = ""

    def _set_many(self, items):
        if self.fail_below and any(k.startswith(self.fail_below) for k in items):
            raise OSError("disk full")
        super()._set_many(items)


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
def test_a_sync_that_fails_midway_leaves_no_copy(fmt):
    store = FailingStore()
    conv = convention(fmt)
    session = Session.create(store, parse(TEXT), conv)
    session.dataset.find_group("g").find_variable("v").add_attribute("units", AtomicType.STRING, ["m"])
    store.fail_below = "g/"
    with pytest.raises(OSError):
        session.sync()
    assert stored_copy(store, conv.zarr_format) is None
    with pytest.raises(FormatError):
        Session.open(store, conv, use_consolidated=True)


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
def test_renaming_a_variable_rewrites_the_copy_at_once(fmt):
    store = MemoryStore()
    conv = convention(fmt)
    session = Session.create(store, parse(TEXT), conv)
    session.rename(session.dataset.find_variable("t"), "temperature")
    # a rename is written at once (data copied, documents, then the old place removed)
    copy = stored_copy(store, conv.zarr_format)
    assert copy is not None and not any(k.startswith("t/") for k in copy)
    assert not any(k.startswith("t/") for k in store.list())
    assert Session.open(store, conv, use_consolidated=True).dataset.find_variable("temperature") is not None


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
def test_a_sync_without_changes_leaves_the_copy_alone(recording_store, fmt):
    store = recording_store()
    Session.create(store, parse(TEXT), convention(fmt)).close()
    session = Session.open(store, detect(store))
    store.reset()
    session.close()
    assert store.log == []


def test_byte_compatible_v2_writes_no_zmetadata_as_netcdf_c():
    store = MemoryStore()
    Session.create(store, parse(TEXT), NczarrV2(byte_compatible=True)).close()
    assert store.get_many([".zmetadata"]) == {}
    assert NczarrV2(byte_compatible=True, consolidated=True).consolidated


@pytest.mark.parametrize("fmt", ["NCZARR", "NCZARR_V2"])
def test_consolidated_false_turns_the_copy_off_and_drops_a_stored_one(fmt):
    store = MemoryStore()
    conv = convention(fmt)
    Session.create(store, parse(TEXT), conv, consolidated=False).close()
    assert stored_copy(store, conv.zarr_format) is None
    Session.create(store, parse(TEXT), conv).close()
    session = Session.open(store, conv, consolidated=False)
    session.dataset.attributes.clear()
    session.close()
    assert stored_copy(store, conv.zarr_format) is None
    assert Session.open(store, conv).dataset.attributes == []


# -- other readers ------------------------------------------------------------------------


def test_zarr_python_and_xarray_read_the_v3_copy(tmp_path: Path):
    path = tmp_path / "d.zarr"
    Session.create(DirectoryStore(path), parse(TEXT), convention("NCZARR")).close()
    group = zarr.open_group(path, mode="r", use_consolidated=True)
    assert group.metadata.consolidated_metadata is not None
    assert sorted(name for name, _ in group.members(max_depth=None)) == ["c", "g", "g/v", "t"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_zarr(path, consolidated=True, zarr_format=3)
    assert sorted(ds.data_vars) == ["c", "t"] and ds["t"].attrs["units"] == "K"


def test_netcdf4_reads_the_zmetadata_in_consolidated_mode(tmp_path: Path):
    path = tmp_path / "d.zarr"
    Session.create(DirectoryStore(path), parse(TEXT), NczarrV2()).close()
    # a value only the .zmetadata holds shows that netcdf-c read it
    zmetadata = json.loads((path / ".zmetadata").read_bytes())
    zmetadata["metadata"]["t/.zattrs"]["units"] = "from .zmetadata"
    (path / ".zmetadata").write_text(json.dumps(zmetadata))
    ds = netCDF4.Dataset(f"file://{path}#mode=nczarr,file,consolidated", "r")
    try:
        assert list(ds.variables) == ["t", "c"] and ds["c"].dtype == "S1"
        assert ds["t"].units == "from .zmetadata" and ds.groups["g"]["v"].getncattr("scale") == 0.5
    finally:
        ds.close()
